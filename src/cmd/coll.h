/* Helpers shared by the collection command families (lists, hashes, sets, sorted sets,
 * streams): typed lookups that reply WRONGTYPE, creating a collection key, accounting in-place
 * size changes and deleting a key its last element left, and argument parsing with Redis's
 * exact messages. All run on the connection's worker with the key's stripe locked. */
#ifndef TC_COLL_H
#define TC_COLL_H

#include "cmd/cmd.h"

/* Find k for a command on a collection of type: the item, or NULL when missing (*wrong = 0)
 * or holding another type (*wrong = 1, WRONGTYPE replied). _read counts hits/misses. */
struct item *coll_read(struct conn *c, const struct skey *k, int type, int *wrong);
struct item *coll_write(struct conn *c, const struct skey *k, int type, int *wrong);
/* Register a type's destructor, sizer, COPY copier and OBJECT ENCODING name (setup). */
void coll_type_setup(int type, item_free_fn *destroy, item_size_fn *sizer, value_copy_fn *copier,
                     encoding_fn *encoder);
/* Store a new key of type holding ptr (ownership taken). Returns the item, or NULL after
 * replying an out-of-memory error (ptr is freed). */
struct item *coll_put(struct conn *c, const struct skey *k, int type, void *ptr);
/* After changing it's structure in place: account the size change against before (its
 * item_value_mem() before the change) and delete the key when empty is set. */
void coll_done(struct conn *c, const struct skey *k, struct item *it, size_t before, int empty);

/* Argument parsing; each replies the error and returns -1 on failure. */
/* A long in [min, max]; msg replaces both "not an integer" and "out of range" when given,
 * otherwise ERR_NOTINT / "value is out of range, value must between .. and ..". */
int arg_range(struct conn *c, int i, long long min, long long max, long long *v, const char *msg);
/* getPositiveLongFromObjectOrReply: 0..LLONG_MAX, msg default "value is out of range, must be
 * positive". */
int arg_positive(struct conn *c, int i, long long *v, const char *msg);
/* A double (accepts inf, rejects nan); msg defaults to ERR_NOTFLOAT. */
int arg_double(struct conn *c, int i, double *v, const char *msg);

/* Case-insensitive equality of two byte strings (for option words). */
static inline int arg_eq(struct conn *c, int i, int j)
{
    return c->argv[i].n == c->argv[j].n && memcmp(c->argv[i].p, c->argv[j].p, c->argv[i].n) == 0;
}


/* SSCAN/HSCAN/ZSCAN arguments: the cursor (before the key lookup, "ERR invalid cursor") and
 * the MATCH/COUNT options from argv[first] on (after it, as Redis does). */
int coll_scan_cursor(struct conn *c, int i, uint64_t *cursor);
struct scan_opts {
    long count;      /* COUNT, default 10 */
    const char *pat; /* MATCH pattern or NULL */
    size_t plen;
};
int coll_scan_opts(struct conn *c, int first, struct scan_opts *o);
/* 1 when p[0..n) passes the MATCH filter. */
int coll_scan_match(const struct scan_opts *o, const char *p, size_t n);
/* The reply of a scan: the next cursor and n elements already composed in out. */
void coll_scan_reply(struct conn *c, uint64_t cursor, long long n, struct buf *out);
/* One step of a type's scan from cursor: composes matching elements into a[1] (a struct buf),
 * counts them in *(long long *)a[2], filters with a[0] (struct scan_opts); returns the next
 * cursor. */
typedef uint64_t coll_scan_step_fn(struct item *it, uint64_t cursor, long count, void **a);
/* HDEL/SREM/ZREM key member...: remove each member with del while len says the collection is
 * not empty; replies the number removed and deletes an emptied key. */
typedef unsigned long coll_len_fn(struct item *it);
typedef int coll_del_fn(struct item *it, const char *p, size_t n);
void coll_remove_members(struct conn *c, int type, coll_len_fn *len, coll_del_fn *del);
/* SSCAN/HSCAN/ZSCAN key cursor [MATCH p] [COUNT n] for a collection of type. */
void coll_scan_command(struct conn *c, int type, coll_scan_step_fn *step);

#endif
