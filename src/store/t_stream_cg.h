/* Stream consumer groups (Redis 7.0 semantics): the groups of a stream sorted by name, each
 * with its last-delivered ID, its entries-read counter, its consumers sorted by name and its
 * pending entries list (PEL) sorted by ID. A pending entry (snack) is owned by the group's
 * PEL; its consumer's PEL holds a second pointer to it. PELs are sorted pointer arrays
 * (binary search; appends and removals of the oldest are O(1) amortized). Memory is accounted in the stream's mem.
 * Not thread-safe: used under the key's stripe lock, like the stream. */
#ifndef TC_T_STREAM_CG_H
#define TC_T_STREAM_CG_H

#include <stddef.h>
#include <stdint.h>

#include "store/t_stream.h"

#define SCG_INVALID_ENTRIES_READ (-1LL)

struct scons;

struct snack {
    struct sid id;
    int64_t dtime;           /* last delivery, unix ms */
    uint64_t dcount;         /* deliveries */
    struct scons *owner;
};

struct spel {
    struct snack **v;        /* the n entries, sorted by id (inside base) */
    struct snack **base;     /* the allocation of cap slots; v - base slots free in front */
    size_t n, cap;
};

struct scons {
    char *name;
    size_t nlen;
    int64_t seen;            /* last interaction, unix ms */
    struct spel pel;         /* borrowed pointers into the group's PEL */
};

struct sgroup {
    char *name;
    size_t nlen;
    struct sid last_id;      /* last delivered */
    long long entries_read;  /* SCG_INVALID_ENTRIES_READ when unknown */
    struct spel pel;         /* owns the snacks */
    struct scons **cons;     /* sorted by name */
    size_t ncons, ccap;
};

/* Lookups: the group / consumer named name[0..n), or NULL. */
struct sgroup *scg_find(const struct tstream *s, const char *name, size_t n);
struct scons *scg_cons_find(const struct sgroup *g, const char *name, size_t n);
/* Create a group (the name must be new) / consumer (new). NULL when out of memory. */
struct sgroup *scg_create(struct tstream *s, const char *name, size_t n, const struct sid *id,
                          long long entries_read);
struct scons *scg_cons_create(struct tstream *s, struct sgroup *g, const char *name, size_t n,
                              int64_t now);
/* Remove and free a group with everything in it. */
void scg_destroy(struct tstream *s, struct sgroup *g);
/* Remove a consumer, dropping its pending entries from the group. Returns how many. */
size_t scg_cons_delete(struct tstream *s, struct sgroup *g, struct scons *c);
/* Free every group (stream destruction). */
void scg_free_all(struct tstream *s);
/* Deep copy of src's groups into dst (which has none). 0, or -1 out of memory. */
int scg_copy(struct tstream *dst, const struct tstream *src);

/* Index of the first entry of pel with ID >= id (pel->n when none). */
size_t spel_seek(const struct spel *pel, const struct sid *id);
/* The pending entry id of g, or NULL. */
struct snack *scg_pel_find(const struct sgroup *g, const struct sid *id);
/* Add a pending entry (id must not be pending) owned by c. NULL when out of memory. */
struct snack *scg_pel_add(struct tstream *s, struct sgroup *g, struct scons *c,
                          const struct sid *id, int64_t dtime, uint64_t dcount);
/* Give a pending entry to consumer to. Returns 0, or -1 out of memory (unchanged). */
int scg_pel_move(struct tstream *s, struct snack *nk, struct scons *to);
/* Acknowledge: remove and free a pending entry. */
void scg_pel_del(struct tstream *s, struct sgroup *g, struct snack *nk);

/* Group bookkeeping of Redis 7.0 (lag and entries-read). */
/* The first entry's ID: 1, or 0 when the stream is empty. */
int tstream_first_id(const struct tstream *s, struct sid *id);
/* The last entry's ID: 1, or 0 when the stream is empty. */
int tstream_last_valid_id(const struct tstream *s, struct sid *id);
/* streamRangeHasTombstones(start, +inf) */
int scg_range_has_tombstones(const struct tstream *s, const struct sid *start);
/* streamEstimateDistanceFromFirstEverEntry */
long long scg_estimate_distance(const struct tstream *s, const struct sid *id);
/* The lag of g: 1 and *lag, or 0 when it can't be known (XINFO answers nil). */
int scg_lag(const struct tstream *s, const struct sgroup *g, long long *lag);

#endif
