/* Sorted set algebra with Redis 7.0 semantics: ZUNION ZINTER ZDIFF, their STORE forms, and
 * ZINTERCARD, over sorted sets and plain sets (whose members score 1). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cmd/notify.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/zset_int.h"
#include "store/t_set.h"

/* ---- ZUNION / ZINTER / ZDIFF (and STORE), ZINTERCARD ---- */

enum { ZOP_UNION, ZOP_INTER, ZOP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

struct zsrc {
    struct item *it; /* zset or set, NULL when missing */
    double weight;
};

static unsigned long src_len(const struct zsrc *s)
{
    if (!s->it)
        return 0;
    return s->it->type == OBJ_ZSET ? tzset_len(item_ptr(s->it)) : tset_len(item_ptr(s->it));
}

static int src_find(const struct zsrc *s, const char *p, size_t n, double *score)
{
    if (!s->it)
        return 0;
    if (s->it->type == OBJ_ZSET)
        return tzset_score(item_ptr(s->it), p, n, score);
    *score = 1.0;
    return tset_contains(item_ptr(s->it), p, n);
}

/* Iterate the members of a source. */
struct src_iter {
    const struct zsrc *s;
    struct zit zi;
    unsigned long i, len;
    struct tset_iter ti;
};

static void src_iter_init(struct src_iter *si, const struct zsrc *s)
{
    si->s = s;
    si->i = 0;
    si->len = src_len(s);
    if (!si->len)
        return;
    if (s->it->type == OBJ_ZSET)
        zit_seek(&si->zi, item_ptr(s->it), 0);
    else
        tset_iter_init(&si->ti, item_ptr(s->it));
}

static int src_next(struct src_iter *si, const char **p, size_t *n, double *score)
{
    if (si->i >= si->len)
        return 0;
    if (si->s->it->type == OBJ_ZSET) {
        if (si->i)
            zit_next(&si->zi);
        *p = zit_get(&si->zi, n, score);
    } else {
        tset_next(&si->ti, p, n);
        *score = 1.0;
    }
    si->i++;
    return 1;
}

static void aggregate(double *target, double val, int agg)
{
    if (agg == AGG_SUM) {
        *target = *target + val;
        if (isnan(*target))
            *target = 0.0;
    } else if (agg == AGG_MIN) {
        *target = val < *target ? val : *target;
    } else {
        *target = val > *target ? val : *target;
    }
}

static int by_card(const void *a, const void *b)
{
    unsigned long x = src_len(a), y = src_len(b);
    return x > y ? 1 : x < y ? -1 : 0;
}

/* Compute op into a new zset (NULL on OOM). In card mode (ZINTERCARD) only count, up to limit
 * (0 = no limit). */
static struct tzset *zset_op(struct zsrc *src, int n, int op, int agg, int card_only,
                             long long limit, long long *card, int store)
{
    struct tzset *res = card_only ? NULL : tzset_create(SIZE_MAX, SIZE_MAX);
    struct src_iter si;
    const char *p;
    size_t len, maxlen = 0;
    double score, v;
    int of;

    *card = 0;
    if (!card_only && !res)
        return NULL;
    if (op != ZOP_DIFF)
        qsort(src, (size_t)n, sizeof(*src), by_card); /* the order Redis aggregates in */
    if (op == ZOP_INTER) {
        if (src_len(&src[0]) == 0)
            goto done;
        src_iter_init(&si, &src[0]);
        while (src_next(&si, &p, &len, &score)) {
            score *= src[0].weight;
            if (isnan(score))
                score = 0;
            int j;
            for (j = 1; j < n; j++) {
                if (!src_find(&src[j], p, len, &v))
                    break;
                aggregate(&score, v * src[j].weight, agg);
            }
            if (j < n)
                continue;
            if (card_only) {
                if (++*card == limit && limit)
                    break;
                continue;
            }
            if (tzset_add(res, score, p, len, 0, &of, &v) < 0)
                goto oom;
            if (len > maxlen)
                maxlen = len;
        }
    } else if (op == ZOP_UNION) {
        for (int i = 0; i < n; i++) {
            src_iter_init(&si, &src[i]);
            while (src_next(&si, &p, &len, &score)) {
                score *= src[i].weight;
                if (isnan(score))
                    score = 0;
                double old;
                if (tzset_score(res, p, len, &old)) {
                    v = old;
                    aggregate(&v, score, agg);
                    /* re-placed when the value changes, also from -0 to 0 (which ZADD's
                     * comparison would not see) */
                    if (v == old && signbit(v) == signbit(old))
                        continue;
                    tzset_del(res, p, len);
                } else {
                    v = score;
                }
                if (tzset_add(res, v, p, len, 0, &of, &v) < 0)
                    goto oom;
                if (len > maxlen)
                    maxlen = len;
            }
        }
    } else {
        src_iter_init(&si, &src[0]);
        while (src_next(&si, &p, &len, &score)) {
            int j;
            for (j = 1; j < n; j++)
                if (src_find(&src[j], p, len, &v))
                    break;
            if (j < n)
                continue;
            if (tzset_add(res, score, p, len, 0, &of, &v) < 0)
                goto oom;
            if (len > maxlen)
                maxlen = len;
        }
    }
done:
    /* a stored result goes back to a listpack when small (not a reply: -0 stays -0 there) */
    if (res && store && tzset_shrink_if_small(res, maxlen))
        goto oom;
    return res;
oom:
    tzset_destroy(res);
    return NULL;
}

/* ni: argv index of numkeys; store: argv[1] is the destination. */
static void zsetop_generic(struct conn *c, int ni, int store, int op, int card_only)
{
    struct store *s = conn_store(c);
    long long numkeys, limit = 0, card;
    int agg = AGG_SUM, withscores = 0, n;
    struct zsrc small[16], *src = small;
    struct skey *keys;
    static const char *names[2][3] = {{"zunion", "zinter", "zdiff"},
                                      {"zunionstore", "zinterstore", "zdiffstore"}};

    if (arg_ll(c, ni, &numkeys, NULL))
        return;
    if (numkeys < 1) {
        reply_errorf(c, "ERR at least 1 input key is needed for '%s' command",
                     card_only ? "zintercard" : names[store][op]);
        return;
    }
    if (numkeys > c->argc - ni - 1) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    n = (int)numkeys;
    /* keys: [the destination,] the sources (the numkeys slot is resolved, then replaced) */
    struct skey *all = keyset_resolve(c, store ? ni : ni + 1, 1, n + store);
    if (!all)
        return;
    if (store)
        arg_key(c, 1, &all[0]);
    keys = all + store;
    if (n > 16 && !(src = malloc(sizeof(*src) * (size_t)n))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    store_lock_keys(s, all, n + store);
    for (int i = 0; i < n; i++) {
        struct item *it = store_lookup_read_locked(s, &keys[i], conn_now(c));
        if (it && it->type != OBJ_ZSET && it->type != OBJ_SET) {
            reply_error(c, ERR_WRONGTYPE);
            goto out;
        }
        src[i].it = it;
        src[i].weight = 1.0;
    }
    int j = ni + 1 + n;
    while (j < c->argc) {
        int remaining = c->argc - j;
        if (op != ZOP_DIFF && !card_only && remaining >= n + 1 && arg_is(c, j, "weights")) {
            j++;
            for (int i = 0; i < n; i++, j++)
                if (arg_double(c, j, &src[i].weight, "ERR weight value is not a float"))
                    goto out;
        } else if (op != ZOP_DIFF && !card_only && remaining >= 2 && arg_is(c, j, "aggregate")) {
            j++;
            if (arg_is(c, j, "sum"))
                agg = AGG_SUM;
            else if (arg_is(c, j, "min"))
                agg = AGG_MIN;
            else if (arg_is(c, j, "max"))
                agg = AGG_MAX;
            else {
                reply_error(c, ERR_SYNTAX);
                goto out;
            }
            j++;
        } else if (!store && !card_only && arg_is(c, j, "withscores")) {
            j++;
            withscores = 1;
        } else if (card_only && remaining >= 2 && arg_is(c, j, "limit")) {
            if (arg_positive(c, j + 1, &limit, "ERR LIMIT can't be negative"))
                goto out;
            j += 2;
        } else {
            reply_error(c, ERR_SYNTAX);
            goto out;
        }
    }
    struct tzset *res = zset_op(src, n, op, agg, card_only, limit, &card, store);
    if (card_only) {
        reply_int(c, card);
        goto out;
    }
    if (!res) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    unsigned long len = tzset_len(res);
    if (!store) {
        struct zset_emit e = {c, withscores, NULL};
        zset_emit_ranks(&e, res, 0, len, 0);
        tzset_destroy(res);
    } else if (len == 0) {
        tzset_destroy(res);
        if (store_delete_locked(s, &all[0], conn_now(c)))
            notify_event(NOTIFY_GENERIC, "del", &all[0]);
        reply_int(c, 0);
    } else if (coll_put(c, &all[0], OBJ_ZSET, res)) {
        notify_event(NOTIFY_ZSET, op == ZOP_UNION ? "zunionstore" : op == ZOP_INTER ?
                     "zinterstore" : "zdiffstore", &all[0]);
        reply_int(c, (long long)len);
    }
out:
    store_unlock_keys(s, all, n + store);
    if (src != small)
        free(src);
}

static void zunionstore_command(struct conn *c)
{
    zsetop_generic(c, 2, 1, ZOP_UNION, 0);
}
static void zinterstore_command(struct conn *c)
{
    zsetop_generic(c, 2, 1, ZOP_INTER, 0);
}
static void zdiffstore_command(struct conn *c)
{
    zsetop_generic(c, 2, 1, ZOP_DIFF, 0);
}
static void zunion_command(struct conn *c)
{
    zsetop_generic(c, 1, 0, ZOP_UNION, 0);
}
static void zinter_command(struct conn *c)
{
    zsetop_generic(c, 1, 0, ZOP_INTER, 0);
}
static void zdiff_command(struct conn *c)
{
    zsetop_generic(c, 1, 0, ZOP_DIFF, 0);
}
static void zintercard_command(struct conn *c)
{
    zsetop_generic(c, 1, 0, ZOP_INTER, 1);
}

static struct cmd cmds[] = {
    {"zunionstore", zunionstore_command, -4, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1", "sorted-set", "Add multiple sorted sets and store the resulting sorted set in a new key"},
    {"zinterstore", zinterstore_command, -4, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1", "sorted-set", "Intersect multiple sorted sets and store the resulting sorted set in a new key"},
    {"zdiffstore", zdiffstore_command, -4, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1", "sorted-set", "Subtract multiple sorted sets and store the resulting sorted set in a new key"},
    {"zunion", zunion_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Add multiple sorted sets"},
    {"zinter", zinter_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Intersect multiple sorted sets"},
    {"zdiff", zdiff_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Subtract multiple sorted sets"},
    {"zintercard", zintercard_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Intersect multiple sorted sets and return the cardinality of the result"},
};

void cmd_zset_setop_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
