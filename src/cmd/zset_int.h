/* Internal to the sorted-set family (cmd_zset.c, cmd_zset_range.c, cmd_zset_setop.c): the
 * emitter that sends a range of members to the client or into a zset being built, and the
 * per-file setups. Everything runs on the connection's worker with the keys' stripes held. */
#ifndef TC_ZSET_INT_H
#define TC_ZSET_INT_H

#include "cmd/cmd.h"
#include "store/t_zset.h"

/* The sorted set it holds (borrowed), or NULL when it is NULL. */
static inline struct tzset *zset_of(struct item *it)
{
    return it ? item_ptr(it) : NULL;
}

/* Where a range goes: the client, or a zset being built for ZRANGESTORE. */
struct zset_emit {
    struct conn *c;
    int withscores;
    struct tzset *dst; /* store mode when set */
};

/* Emit one member p[0..n) (copied into dst in store mode), with its score when withscores. */
void zset_emit_one(struct zset_emit *e, const char *p, size_t n, double score);
/* The reply header of n members (nothing in store mode). */
void zset_emit_header(struct zset_emit *e, unsigned long n);
/* Emit the header, then ranks [a, b) of z forward, or backward from b-1 when rev. */
void zset_emit_ranks(struct zset_emit *e, const struct tzset *z, unsigned long a,
                     unsigned long b, int rev);

/* Register the commands of cmd_zset_range.c / cmd_zset_setop.c (from cmd_zset_setup). */
void cmd_zset_range_setup(void);
void cmd_zset_setop_setup(void);

#endif
