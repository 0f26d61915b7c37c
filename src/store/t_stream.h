/* Streams (the basics: XADD XLEN XRANGE XREVRANGE XDEL XTRIM): entries sorted by ID in a
 * deque of pointers, each entry one allocation holding its ID and field/value pairs. Redis's
 * radix-tree nodes are emulated only as numbers (an entry remembers the node it would be in,
 * stream-node-max-entries = 100 per node) so that approximate trimming (~) removes the same
 * whole nodes as Redis. Not thread-safe: used under the key's stripe lock. */
#ifndef TC_T_STREAM_H
#define TC_T_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct sid {
    uint64_t ms, seq;
};

struct sentry {
    struct sid id;
    uint32_t node;    /* emulated radix-tree node number */
    uint32_t nfields; /* field/value pairs */
    uint32_t bytes;   /* bytes of data */
    char data[];      /* [u32 len][bytes] for each field and value */
};

struct tstream {
    struct sentry **v; /* ring of entry pointers, sorted by ID */
    size_t head, len, cap;
    struct sid last_id;        /* last ID ever added */
    struct sid max_deleted_id; /* largest deleted ID (for XINFO later) */
    uint64_t entries_added;
    uint32_t tail_node;        /* node the next entry goes to, if it still exists */
    uint32_t tail_count;       /* entries ever added to tail_node */
    size_t mem;                /* bytes held */
};

static inline int sid_cmp(const struct sid *a, const struct sid *b)
{
    if (a->ms != b->ms)
        return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return 0;
}

static inline struct sentry *tstream_at(const struct tstream *s, size_t i)
{
    return s->v[(s->head + i) % s->cap];
}

struct tstream *tstream_create(void);
void tstream_destroy(void *s);
size_t tstream_mem(void *s);
void *tstream_copy(void *s);

/* A new entry for n field/value pairs taking bytes of data (the sum of 4 + length of each
 * field and value), filled with sentry_put. NULL when out of memory. */
struct sentry *sentry_create(const struct sid *id, uint32_t n, size_t bytes);
static inline void sentry_put(struct sentry *e, uint32_t *off, const char *p, size_t n)
{
    uint32_t l = (uint32_t)n;
    __builtin_memcpy(e->data + *off, &l, 4);
    __builtin_memcpy(e->data + *off + 4, p, n);
    *off += 4 + l;
}
/* Append e (its ID greater than last_id; ownership taken). Returns 0 or -1 (OOM: e freed). */
int tstream_append(struct tstream *s, struct sentry *e);
/* Index of the first entry with ID >= id (len when none). */
size_t tstream_lower_bound(const struct tstream *s, const struct sid *id);
/* Delete the entry with this ID: 1, or 0 when absent. */
int tstream_delete(struct tstream *s, const struct sid *id);
/* Trim: keep at most maxlen entries (minid NULL) or drop entries below *minid. approx: only
 * whole nodes; limit: at most this many entries (0 = no limit). Returns entries removed. */
int64_t tstream_trim(struct tstream *s, long long maxlen, const struct sid *minid, int approx,
                     long long limit);

/* Field/value iteration over an entry: off starts at 0; returns 0 at the end. */
static inline int sentry_next(const struct sentry *e, uint32_t *off, const char **p, size_t *n)
{
    uint32_t l;
    if (*off >= e->bytes)
        return 0;
    __builtin_memcpy(&l, e->data + *off, 4);
    *p = e->data + *off + 4;
    *n = l;
    *off += 4 + l;
    return 1;
}

#endif
