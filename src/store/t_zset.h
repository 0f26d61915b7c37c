/* Sorted sets: an lpack of member, score (8 raw bytes) pairs ordered by (score, member) while
 * small (zset-max-listpack-entries / -value), then a skip list with spans (O(log n) rank and
 * range) whose nodes are also the entries of a dict from member to node. Every range query is
 * reduced to a rank range [start, end) with the count_below functions. Not thread-safe: used
 * under the key's stripe lock. */
#ifndef TC_T_ZSET_H
#define TC_T_ZSET_H

#include <stddef.h>
#include <stdint.h>

#include "store/dict.h"

enum { TZSET_LISTPACK = 0, TZSET_SKIPLIST = 1 };

struct znode;
struct zsl {
    struct znode *header, *tail;
    unsigned long length;
    int level;
};

struct tzset {
    int enc;
    struct lpack *lp;  /* TZSET_LISTPACK */
    struct dict *d;    /* TZSET_SKIPLIST: member -> node (nodes are the dict entries) */
    struct zsl zsl;
    size_t emem;       /* bytes of skip list nodes */
};

/* ZADD flags in and out (as Redis's zsetAdd) */
#define ZADD_NX 1
#define ZADD_XX 2
#define ZADD_GT 4
#define ZADD_LT 8
#define ZADD_INCR 16
#define ZADD_OUT_NOP 1
#define ZADD_OUT_ADDED 2
#define ZADD_OUT_UPDATED 4

/* A new empty zset sized for about n members of at most maxlen bytes (picks the encoding). */
struct tzset *tzset_create(size_t n, size_t maxlen);
void tzset_destroy(void *z);
size_t tzset_mem(void *z);
void *tzset_copy(void *z);
const char *tzset_encoding_name(const struct tzset *z);
unsigned long tzset_len(const struct tzset *z);

/* Score of a member: 1 found, 0 absent. */
int tzset_score(const struct tzset *z, const char *p, size_t n, double *score);
/* 0-based rank of a member in ascending order, or -1. */
long tzset_rank(const struct tzset *z, const char *p, size_t n);
/* Add/update as ZADD with flags: returns 1 (outflags, *newscore set), 0 when the result would
 * be NaN, -1 out of memory. */
int tzset_add(struct tzset *z, double score, const char *p, size_t n, int flags, int *outflags,
              double *newscore);
/* Remove a member: 1, or 0 when absent. */
int tzset_del(struct tzset *z, const char *p, size_t n);
/* Members with score < v (incl: <= v). */
unsigned long tzset_count_below_score(const struct tzset *z, double v, int incl);
/* Members ordered before p (incl: before or equal), comparing members only (lex ranges). */
unsigned long tzset_count_below_lex(const struct tzset *z, const char *p, size_t n, int incl);
/* Remove members with ranks [start, end). */
void tzset_del_range(struct tzset *z, unsigned long start, unsigned long end);

/* Back to the listpack encoding when len and maxlen (the longest member) fit (results of
 * ZUNIONSTORE and friends, like Redis). Returns 0 or -1 (OOM, unchanged). */
int tzset_shrink_if_small(struct tzset *z, size_t maxlen);

/* Iteration by rank; the zset must not change while a position is held. */
struct zit {
    const struct tzset *z;
    struct znode *node;
    uint32_t off;
};
/* Position at rank (0-based, < len). */
void zit_seek(struct zit *it, const struct tzset *z, unsigned long rank);
void zit_next(struct zit *it);
void zit_prev(struct zit *it);
/* The member (borrowed) and score at the position. */
const char *zit_get(const struct zit *it, size_t *n, double *score);

/* ZSCAN: visit member/score pairs from cursor; returns the next cursor (0: done). */
typedef void tzset_scan_fn(const char *p, size_t n, double score, void *arg);
uint64_t tzset_scan(const struct tzset *z, uint64_t cursor, long count, tzset_scan_fn *fn,
                    void *arg);

#endif
