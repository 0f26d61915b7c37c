/* Sorted set commands with Redis 7.0 semantics (blocking BZPOP* come with the blocking issue):
 * members (ZADD ZINCRBY ZREM ZSCORE ZMSCORE ZCARD ZRANK ZREVRANK), pops, ZRANDMEMBER, ZSCAN.
 * Ranges are in cmd_zset_range.c, ZUNION/ZINTER/ZDIFF in cmd_zset_setop.c (zset_int.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/propagate.h"
#include "cmd/zset_int.h"
#include "store/t_set.h"

#define NAN_ERR "ERR resulting score is not a number (NaN)"

static const char *zset_encoding(struct item *it)
{
    return tzset_encoding_name(item_ptr(it));
}

/* ---- ZADD / ZINCRBY ---- */

static void zadd_generic(struct conn *c, int flags)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int si = 2, ch = 0, wrong, processed = 0;
    long long added = 0, updated = 0;
    double scores_small[32], *scores = scores_small, score = 0;

    if (!(flags & ZADD_INCR) || c->argc != 4) {
        for (; si < c->argc; si++) {
            if (arg_is(c, si, "nx"))
                flags |= ZADD_NX;
            else if (arg_is(c, si, "xx"))
                flags |= ZADD_XX;
            else if (arg_is(c, si, "ch"))
                ch = 1;
            else if (arg_is(c, si, "incr"))
                flags |= ZADD_INCR;
            else if (arg_is(c, si, "gt"))
                flags |= ZADD_GT;
            else if (arg_is(c, si, "lt"))
                flags |= ZADD_LT;
            else
                break;
        }
    }
    int elements = c->argc - si;
    if (elements % 2 || !elements) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    elements /= 2;
    if ((flags & ZADD_NX) && (flags & ZADD_XX)) {
        reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return;
    }
    if (((flags & ZADD_GT) && (flags & ZADD_NX)) || ((flags & ZADD_LT) && (flags & ZADD_NX)) ||
        ((flags & ZADD_GT) && (flags & ZADD_LT))) {
        reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if ((flags & ZADD_INCR) && elements > 1) {
        reply_error(c, "ERR INCR option supports a single increment-element pair");
        return;
    }
    if (elements > 32 && !(scores = malloc(sizeof(double) * (size_t)elements))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int j = 0; j < elements; j++)
        if (arg_double(c, si + j * 2, &scores[j], NULL))
            goto out_free;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (flags & ZADD_XX)
            goto reply;
        struct tzset *z = tzset_create(0, c->argv[si + 1].n);
        if (!z) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        if (!(it = coll_put(c, &k, OBJ_ZSET, z)))
            goto out;
    }
    size_t before = item_value_mem(it);
    for (int j = 0; j < elements; j++) {
        int of;
        double ns = 0;
        const struct slice *m = &c->argv[si + 1 + j * 2];
        int r = tzset_add(zset_of(it), scores[j], m->p, m->n, flags, &of, &ns);
        if (r <= 0) {
            int empty = tzset_len(zset_of(it)) == 0;
            coll_done(c, &k, it, before, empty);
            if (added || updated)
                cmd_modified(c, &k, empty ? NULL : it);
            reply_error(c, r == 0 ? NAN_ERR : "ERR out of memory");
            goto out;
        }
        if (of & ZADD_OUT_ADDED)
            added++;
        if (of & ZADD_OUT_UPDATED)
            updated++;
        if (!(of & ZADD_OUT_NOP))
            processed++;
        score = ns;
    }
    coll_done(c, &k, it, before, 0);
    if (added || updated) {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_ZSET, (flags & ZADD_INCR) ? "zincr" : "zadd", &k);
    }
reply:
    if (flags & ZADD_INCR) {
        if (processed)
            reply_double(c, score);
        else
            reply_null(c);
    } else {
        reply_int(c, ch ? added + updated : added);
    }
out:
    store_unlock(s, k.stripe);
out_free:
    if (scores != scores_small)
        free(scores);
}

static void zadd_command(struct conn *c)
{
    zadd_generic(c, 0);
}

static void zincrby_command(struct conn *c)
{
    zadd_generic(c, ZADD_INCR);
}

static unsigned long zrem_len(struct item *it)
{
    return tzset_len(zset_of(it));
}

static int zrem_del(struct item *it, const char *p, size_t n)
{
    return tzset_del(zset_of(it), p, n);
}

static void zrem_command(struct conn *c)
{
    coll_remove_members(c, OBJ_ZSET, zrem_len, zrem_del);
}

static void zscore_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    double score;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong) {
        if (it && tzset_score(zset_of(it), c->argv[2].p, c->argv[2].n, &score))
            reply_double(c, score);
        else
            reply_null(c);
    }
    store_unlock(s, k.stripe);
}

static void zmscore_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    double score;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong) {
        reply_array(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            if (it && tzset_score(zset_of(it), c->argv[i].p, c->argv[i].n, &score))
                reply_double(c, score);
            else
                reply_null(c);
        }
    }
    store_unlock(s, k.stripe);
}

static void zcard_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong)
        reply_int(c, it ? (long long)tzset_len(zset_of(it)) : 0);
    store_unlock(s, k.stripe);
}

static void zrank_generic(struct conn *c, int rev)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong) {
        long r = it ? tzset_rank(zset_of(it), c->argv[2].p, c->argv[2].n) : -1;
        if (r < 0)
            reply_null(c);
        else
            reply_int(c, rev ? (long long)tzset_len(zset_of(it)) - 1 - r : r);
    }
    store_unlock(s, k.stripe);
}

static void zrank_command(struct conn *c)
{
    zrank_generic(c, 0);
}
static void zrevrank_command(struct conn *c)
{
    zrank_generic(c, 1);
}

/* ---- pops ---- */

#define POP_MIN 0
#define POP_MAX 1

/* Pop from the first non-empty zset of keys (locked): Redis's genericZpopCommand. */
static void zpop_generic(struct conn *c, struct skey *keys, int nkeys, int where, int emitkey,
                         long long count, int nested, int nil_when_empty)
{
    struct item *it = NULL;
    struct skey *k = NULL;
    int wrong;

    for (int i = 0; i < nkeys; i++) {
        it = coll_write(c, &keys[i], OBJ_ZSET, &wrong);
        if (wrong)
            return;
        if (it) {
            k = &keys[i];
            break;
        }
    }
    if (!it) {
        if (nil_when_empty)
            reply_null_array(c);
        else
            reply_array(c, 0);
        return;
    }
    if (count == 0) {
        reply_array(c, 0);
        return;
    }
    if (count == -1)
        count = 1;
    struct tzset *z = zset_of(it);
    long long len = (long long)tzset_len(z), n = count > len ? len : count;
    if (!nested && !emitkey) {
        reply_array(c, n * 2);
    } else if (nested && !emitkey) {
        reply_array(c, n);
    } else if (!nested && emitkey) {
        reply_array(c, n * 2 + 1);
        reply_bulk(c, k->p, k->n);
    } else {
        reply_array(c, 2);
        reply_bulk(c, k->p, k->n);
        reply_array(c, n);
    }
    size_t before = item_value_mem(it);
    struct zit zi;
    unsigned long a = where == POP_MIN ? 0 : (unsigned long)(len - n);
    zit_seek(&zi, z, where == POP_MIN ? 0 : (unsigned long)len - 1);
    for (long long i = 0; i < n; i++) {
        size_t mn;
        double sc;
        const char *p = zit_get(&zi, &mn, &sc);
        if (nested)
            reply_array(c, 2);
        reply_bulk(c, p, mn);
        reply_double(c, sc);
        if (i + 1 < n) {
            if (where == POP_MIN)
                zit_next(&zi);
            else
                zit_prev(&zi);
        }
    }
    tzset_del_range(z, a, a + (unsigned long)n);
    if (emitkey && cmd_prop_begin(c, 3)) { /* ZMPOP: replayed as ZPOPMIN/ZPOPMAX key n */
        char num[24];
        cmd_prop_arg(c, where == POP_MIN ? "ZPOPMIN" : "ZPOPMAX", 7);
        cmd_prop_arg(c, k->p, k->n);
        cmd_prop_arg(c, num, (size_t)util_ll2str(num, n));
        cmd_prop_end(c);
    }
    {
        int empty = tzset_len(z) == 0;
        coll_done(c, k, it, before, empty);
        cmd_modified(c, k, empty ? NULL : it); /* a zset here holds at least one member */
        notify_coll(NOTIFY_ZSET, where == POP_MIN ? "zpopmin" : "zpopmax", k, empty);
    }
}

static void zpopminmax(struct conn *c, int where)
{
    struct store *s = conn_store(c);
    struct skey k;
    long long count = -1;

    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3 && arg_positive(c, 2, &count, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    zpop_generic(c, &k, 1, where, 0, count, c->resp > 2 && count != -1, 0);
    store_unlock(s, k.stripe);
}

static void zpopmin_command(struct conn *c)
{
    zpopminmax(c, POP_MIN);
}
static void zpopmax_command(struct conn *c)
{
    zpopminmax(c, POP_MAX);
}

static void zmpop_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long numkeys, count = -1;
    int where;
    struct skey *keys;

    if (arg_range(c, 1, 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0"))
        return;
    if (numkeys >= c->argc - 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int wi = 2 + (int)numkeys;
    if (arg_is(c, wi, "min"))
        where = POP_MIN;
    else if (arg_is(c, wi, "max"))
        where = POP_MAX;
    else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    for (int j = wi + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(c, j, "count") && j + 1 < c->argc) {
            if (arg_range(c, ++j, 1, LLONG_MAX, &count, "ERR count should be greater than 0"))
                return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1)
        count = 1;
    if (!(keys = keyset_resolve(c, 2, 1, (int)numkeys)))
        return;
    store_lock_keys(s, keys, (int)numkeys);
    zpop_generic(c, keys, (int)numkeys, where, 1, count, 1, 1);
    store_unlock_keys(s, keys, (int)numkeys);
}

/* ---- ZRANDMEMBER ---- */

static void zrandmember_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong, withscores = 0;
    long long count = 0;
    struct zit zi;
    size_t n;
    double sc;
    const char *p;

    if (c->argc >= 3) {
        if (arg_range(c, 2, -LLONG_MAX, LLONG_MAX, &count, NULL))
            return;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(c, 3, "withscores"))) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (c->argc == 4) {
            withscores = 1;
            if (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2) {
                reply_error(c, "ERR value is out of range");
                return;
            }
        }
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    struct tzset *z = zset_of(it);
    if (c->argc < 3) {
        if (!z) {
            reply_null(c);
        } else {
            zit_seek(&zi, z, (unsigned long)(rnd_next() % tzset_len(z)));
            p = zit_get(&zi, &n, &sc);
            reply_bulk(c, p, n);
        }
        goto out;
    }
    if (!z || count == 0) {
        reply_array(c, 0);
        goto out;
    }
    unsigned long len = tzset_len(z);
    struct zset_emit e = {c, withscores, NULL};
    if (count < 0 || count == 1) {
        unsigned long cnt = count < 0 ? (unsigned long)-count : 1;
        zset_emit_header(&e, cnt);
        while (cnt-- && !reply_unbounded_stop(c)) {
            zit_seek(&zi, z, (unsigned long)(rnd_next() % len));
            p = zit_get(&zi, &n, &sc);
            zset_emit_one(&e, p, n, sc);
        }
    } else if ((unsigned long long)count >= len) {
        zset_emit_ranks(&e, z, 0, len, 1); /* Redis walks the whole zset from its tail here */
    } else if ((unsigned long long)count * 3 > len) {
        /* a large share: one selection-sampling pass over ranks (Knuth's algorithm S) */
        unsigned long need = (unsigned long)count, left = len;
        zset_emit_header(&e, need);
        zit_seek(&zi, z, 0);
        for (unsigned long i = 0; need && i < len; i++) {
            if (rnd_next() % left < need) {
                p = zit_get(&zi, &n, &sc);
                zset_emit_one(&e, p, n, sc);
                need--;
            }
            left--;
            if (i + 1 < len)
                zit_next(&zi);
        }
    } else {
        /* a small share: random ranks, skipping repeats (kept in an integer set) */
        struct tset *pick = tset_create("0", 1);
        unsigned long got = 0;
        zset_emit_header(&e, (unsigned long)count);
        while (pick && got < (unsigned long)count) {
            char buf[24];
            unsigned long rank = (unsigned long)(rnd_next() % len);
            int bn = util_ll2str(buf, (long long)rank), r = tset_add(pick, buf, (size_t)bn);
            if (r < 0)
                break;
            if (!r)
                continue;
            zit_seek(&zi, z, rank);
            p = zit_get(&zi, &n, &sc);
            zset_emit_one(&e, p, n, sc);
            got++;
        }
        tset_destroy(pick);
        if (got < (unsigned long)count)
            c->flags |= CONN_CLOSE_ASAP;
    }
out:
    store_unlock(s, k.stripe);
}

/* ---- ZSCAN ---- */

static void scan_add(const char *p, size_t n, double score, void *arg)
{
    void **a = arg;
    char buf[64];
    int len;

    if (!coll_scan_match(a[0], p, n))
        return;
    len = util_d2str(buf, sizeof(buf), score);
    if (resp_add_bulk(a[1], p, n) == 0 && resp_add_bulk(a[1], buf, (size_t)len) == 0)
        *(long long *)a[2] += 2;
}

static uint64_t zscan_step(struct item *it, uint64_t cursor, long count, void **a)
{
    return tzset_scan(zset_of(it), cursor, count, scan_add, a);
}

static void zscan_command(struct conn *c)
{
    coll_scan_command(c, OBJ_ZSET, zscan_step);
}

static struct cmd cmds[] = {
    {"zadd", zadd_command, -4, "write denyoom fast tc:signals", "@sortedset", "RW,update index:1 range:0,1,0", "sorted-set", "Add one or more members to a sorted set, or update its score if it already exists"},
    {"zincrby", zincrby_command, 4, "write denyoom fast tc:signals", "@sortedset", "RW,access,update index:1 range:0,1,0", "sorted-set", "Increment the score of a member in a sorted set"},
    {"zrem", zrem_command, -3, "write fast tc:signals", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove one or more members from a sorted set"},
    {"zscore", zscore_command, 3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Get the score associated with the given member in a sorted set"},
    {"zmscore", zmscore_command, -3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Get the score associated with the given members in a sorted set"},
    {"zcard", zcard_command, 2, "readonly fast", "@sortedset", "RO index:1 range:0,1,0", "sorted-set", "Get the number of members in a sorted set"},
    {"zrank", zrank_command, 3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Determine the index of a member in a sorted set"},
    {"zrevrank", zrevrank_command, 3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Determine the index of a member in a sorted set, with scores ordered from high to low"},
    {"zpopmin", zpopmin_command, -2, "write fast tc:signals", "@sortedset", "RW,access,delete index:1 range:0,1,0", "sorted-set", "Remove and return members with the lowest scores in a sorted set"},
    {"zpopmax", zpopmax_command, -2, "write fast tc:signals", "@sortedset", "RW,access,delete index:1 range:0,1,0", "sorted-set", "Remove and return members with the highest scores in a sorted set"},
    {"zmpop", zmpop_command, -4, "write tc:signals", "@sortedset", "RW,access,delete index:1 keynum:0,1,1", "sorted-set", "Remove and return members with scores in a sorted set"},
    {"zrandmember", zrandmember_command, -2, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Get one or multiple random elements from a sorted set"},
    {"zscan", zscan_command, -3, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Incrementally iterate sorted sets elements and associated scores"},
};

void cmd_zset_setup(void)
{
    coll_type_setup(OBJ_ZSET, tzset_destroy, tzset_mem, tzset_copy, zset_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
    cmd_zset_range_setup();
    cmd_zset_setop_setup();
}
