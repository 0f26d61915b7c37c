/* Sorted set commands with Redis 7.0 semantics (blocking BZPOP* come with the blocking issue). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "store/t_set.h"
#include "store/t_zset.h"

#define NAN_ERR "ERR resulting score is not a number (NaN)"

static struct tzset *zs(struct item *it)
{
    return it ? item_ptr(it) : NULL;
}

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
        int r = tzset_add(zs(it), scores[j], m->p, m->n, flags, &of, &ns);
        if (r <= 0) {
            coll_done(c, &k, it, before, tzset_len(zs(it)) == 0);
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
    return tzset_len(zs(it));
}

static int zrem_del(struct item *it, const char *p, size_t n)
{
    return tzset_del(zs(it), p, n);
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
        if (it && tzset_score(zs(it), c->argv[2].p, c->argv[2].n, &score))
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
            if (it && tzset_score(zs(it), c->argv[i].p, c->argv[i].n, &score))
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
        reply_int(c, it ? (long long)tzset_len(zs(it)) : 0);
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
        long r = it ? tzset_rank(zs(it), c->argv[2].p, c->argv[2].n) : -1;
        if (r < 0)
            reply_null(c);
        else
            reply_int(c, rev ? (long long)tzset_len(zs(it)) - 1 - r : r);
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

/* ---- ranges ---- */

struct srange {
    double min, max;
    int minex, maxex;
};

static int parse_score_bound(const struct slice *a, double *v, int *ex)
{
    char buf[128];
    const char *p = a->p;
    size_t n = a->n;
    char *end;

    *ex = 0;
    if (n && p[0] == '(') {
        *ex = 1;
        p++;
        n--;
    }
    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    errno = 0;
    *v = strtod(buf, &end);
    if (*end != '\0' || isnan(*v))
        return -1;
    return 0;
}

static int parse_srange(struct conn *c, int mini, int maxi, struct srange *r)
{
    if (parse_score_bound(&c->argv[mini], &r->min, &r->minex) ||
        parse_score_bound(&c->argv[maxi], &r->max, &r->maxex)) {
        reply_error(c, "ERR min or max is not a float");
        return -1;
    }
    return 0;
}

struct lbound {
    int inf;         /* -1: '-', +1: '+', 0: a member */
    int ex;          /* '(' */
    const char *p;
    size_t n;
};

static int parse_lbound(const struct slice *a, struct lbound *b)
{
    b->inf = b->ex = 0;
    b->p = NULL;
    b->n = 0;
    if (a->n == 1 && a->p[0] == '+') {
        b->inf = 1;
        return 0;
    }
    if (a->n == 1 && a->p[0] == '-') {
        b->inf = -1;
        return 0;
    }
    if (a->n >= 1 && (a->p[0] == '(' || a->p[0] == '[')) {
        b->ex = a->p[0] == '(';
        b->p = a->p + 1;
        b->n = a->n - 1;
        return 0;
    }
    return -1;
}

static int parse_lrange(struct conn *c, int mini, int maxi, struct lbound *lo, struct lbound *hi)
{
    if (parse_lbound(&c->argv[mini], lo) || parse_lbound(&c->argv[maxi], hi)) {
        reply_error(c, "ERR min or max not valid string range item");
        return -1;
    }
    return 0;
}

/* Rank range [*a, *b) of members within a score / lex range. */
static void score_ranks(const struct tzset *z, const struct srange *r, unsigned long *a,
                        unsigned long *b)
{
    *a = tzset_count_below_score(z, r->min, r->minex);
    *b = tzset_count_below_score(z, r->max, !r->maxex);
    if (*b < *a)
        *b = *a;
}

static unsigned long lex_rank(const struct tzset *z, const struct lbound *x, int is_min)
{
    if (x->inf < 0)
        return 0;
    if (x->inf > 0)
        return tzset_len(z);
    /* min: skip members below (or equal, when exclusive); max: count members up to it */
    return tzset_count_below_lex(z, x->p, x->n, is_min ? x->ex : !x->ex);
}

static void lex_ranks(const struct tzset *z, const struct lbound *lo, const struct lbound *hi,
                      unsigned long *a, unsigned long *b)
{
    *a = lex_rank(z, lo, 1);
    *b = lex_rank(z, hi, 0);
    if (*b < *a)
        *b = *a;
}

/* Where a range goes: the client, or a zset being built for ZRANGESTORE. */
struct emit {
    struct conn *c;
    int withscores;
    struct tzset *dst; /* store mode when set */
};

static void emit_one(struct emit *e, const char *p, size_t n, double score)
{
    if (e->dst) {
        int of;
        double ns;
        tzset_add(e->dst, score, p, n, 0, &of, &ns);
        return;
    }
    if (e->withscores && e->c->resp == 3)
        reply_array(e->c, 2);
    reply_bulk(e->c, p, n);
    if (e->withscores)
        reply_double(e->c, score);
}

static void emit_header(struct emit *e, unsigned long n)
{
    if (!e->dst)
        reply_array(e->c, (long long)n * (e->withscores && e->c->resp == 2 ? 2 : 1));
}

/* Emit ranks [a, b) forward, or backward from b-1 when rev. */
static void emit_ranks(struct emit *e, const struct tzset *z, unsigned long a, unsigned long b,
                       int rev)
{
    struct zit it;

    emit_header(e, b - a);
    if (a >= b)
        return;
    zit_seek(&it, z, rev ? b - 1 : a);
    for (unsigned long i = a; i < b; i++) {
        size_t n;
        double s;
        const char *p = zit_get(&it, &n, &s);
        emit_one(e, p, n, s);
        if (i + 1 < b) {
            if (rev)
                zit_prev(&it);
            else
                zit_next(&it);
        }
    }
}

/* Apply LIMIT offset count to the rank range [*a, *b) walked in direction rev. */
static void apply_limit(unsigned long *a, unsigned long *b, long long offset, long long limit,
                        int rev)
{
    unsigned long n = *b - *a;

    if (offset < 0 || (unsigned long long)offset >= n) {
        *b = *a;
        return;
    }
    n -= (unsigned long)offset;
    if (limit >= 0 && (unsigned long long)limit < n)
        n = (unsigned long)limit;
    if (rev) {
        *b -= (unsigned long)offset;
        *a = *b - n;
    } else {
        *a += (unsigned long)offset;
        *b = *a + n;
    }
}

enum { RT_AUTO, RT_RANK, RT_SCORE, RT_LEX };
enum { DIR_AUTO, DIR_FWD, DIR_REV };

/* ZRANGE and every variant. ki: argv index of the source key; store: ZRANGESTORE (argv[1] is
 * the destination). */
static void zrange_generic(struct conn *c, int ki, int store, int type, int dir)
{
    struct store *s = conn_store(c);
    int mini = ki + 1, maxi = ki + 2, withscores = 0, wrong;
    long long offset = 0, limit = -1, start = 0, end = 0;
    struct srange sr;
    struct lbound lo, hi;
    struct skey keys[2];
    int nkeys = store ? 2 : 1;

    for (int j = ki + 3; j < c->argc; j++) {
        int left = c->argc - j - 1;
        if (!store && arg_is(c, j, "withscores")) {
            withscores = 1;
        } else if (arg_is(c, j, "limit") && left >= 2) {
            if (arg_ll(c, j + 1, &offset, NULL) || arg_ll(c, j + 2, &limit, NULL))
                return;
            j += 2;
        } else if (dir == DIR_AUTO && arg_is(c, j, "rev")) {
            dir = DIR_REV;
        } else if (type == RT_AUTO && arg_is(c, j, "bylex")) {
            type = RT_LEX;
        } else if (type == RT_AUTO && arg_is(c, j, "byscore")) {
            type = RT_SCORE;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (dir == DIR_AUTO)
        dir = DIR_FWD;
    if (type == RT_AUTO)
        type = RT_RANK;
    if (limit != -1 && type == RT_RANK) {
        reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either "
                       "BYSCORE or BYLEX");
        return;
    }
    if (withscores && type == RT_LEX) {
        reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    if (dir == DIR_REV && type != RT_RANK) {
        int t = mini;
        mini = maxi;
        maxi = t;
    }
    if (type == RT_RANK) {
        if (arg_ll(c, mini, &start, NULL) || arg_ll(c, maxi, &end, NULL))
            return;
    } else if (type == RT_SCORE) {
        if (parse_srange(c, mini, maxi, &sr))
            return;
    } else if (parse_lrange(c, mini, maxi, &lo, &hi)) {
        return;
    }
    if (store)
        arg_key(c, 1, &keys[1]);
    arg_key(c, ki, &keys[0]);
    store_lock_keys(s, keys, nkeys);
    struct item *it = coll_read(c, &keys[0], OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    struct tzset *z = zs(it);
    unsigned long len = z ? tzset_len(z) : 0, a = 0, b = 0;
    int rev = dir == DIR_REV;
    if (!z) {
        /* empty */
    } else if (type == RT_RANK) {
        if (start < 0)
            start += (long long)len;
        if (end < 0)
            end += (long long)len;
        if (start < 0)
            start = 0;
        if (!(start > end || start >= (long long)len)) {
            if (end >= (long long)len)
                end = (long long)len - 1;
            /* ranks count from the end when reversed */
            a = rev ? len - 1 - (unsigned long)end : (unsigned long)start;
            b = rev ? len - (unsigned long)start : (unsigned long)end + 1;
        }
    } else {
        if (type == RT_SCORE)
            score_ranks(z, &sr, &a, &b);
        else
            lex_ranks(z, &lo, &hi, &a, &b);
        apply_limit(&a, &b, offset, limit, rev);
    }
    struct emit e = {c, withscores, NULL};
    if (!store) {
        emit_ranks(&e, z, a, b, rev);
        goto out;
    }
    if (a >= b) {
        store_delete_locked(s, &keys[1], conn_now(c));
        reply_int(c, 0);
        goto out;
    }
    e.dst = tzset_create(b - a, 0);
    if (!e.dst) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    emit_ranks(&e, z, a, b, rev);
    unsigned long n = tzset_len(e.dst);
    if (coll_put(c, &keys[1], OBJ_ZSET, e.dst))
        reply_int(c, (long long)n);
out:
    store_unlock_keys(s, keys, nkeys);
}

static void zrange_command(struct conn *c)
{
    zrange_generic(c, 1, 0, RT_AUTO, DIR_AUTO);
}
static void zrangestore_command(struct conn *c)
{
    zrange_generic(c, 2, 1, RT_AUTO, DIR_AUTO);
}
static void zrevrange_command(struct conn *c)
{
    zrange_generic(c, 1, 0, RT_RANK, DIR_REV);
}
static void zrangebyscore_command(struct conn *c)
{
    zrange_generic(c, 1, 0, RT_SCORE, DIR_FWD);
}
static void zrevrangebyscore_command(struct conn *c)
{
    zrange_generic(c, 1, 0, RT_SCORE, DIR_REV);
}
static void zrangebylex_command(struct conn *c)
{
    zrange_generic(c, 1, 0, RT_LEX, DIR_FWD);
}
static void zrevrangebylex_command(struct conn *c)
{
    zrange_generic(c, 1, 0, RT_LEX, DIR_REV);
}

static void zcount_generic(struct conn *c, int lex)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    struct srange sr;
    struct lbound lo, hi;
    unsigned long a = 0, b = 0;

    if (lex ? parse_lrange(c, 2, 3, &lo, &hi) : parse_srange(c, 2, 3, &sr))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong) {
        if (it && lex)
            lex_ranks(zs(it), &lo, &hi, &a, &b);
        else if (it)
            score_ranks(zs(it), &sr, &a, &b);
        reply_int(c, (long long)(b - a));
    }
    store_unlock(s, k.stripe);
}

static void zcount_command(struct conn *c)
{
    zcount_generic(c, 0);
}
static void zlexcount_command(struct conn *c)
{
    zcount_generic(c, 1);
}

static void zremrange_generic(struct conn *c, int type)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    struct srange sr;
    struct lbound lo, hi;
    long long start = 0, end = 0;
    unsigned long a = 0, b = 0;

    if (type == RT_RANK) {
        if (arg_ll(c, 2, &start, NULL) || arg_ll(c, 3, &end, NULL))
            return;
    } else if (type == RT_SCORE ? parse_srange(c, 2, 3, &sr) : parse_lrange(c, 2, 3, &lo, &hi)) {
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    struct tzset *z = zs(it);
    long long len = (long long)tzset_len(z);
    if (type == RT_RANK) {
        if (start < 0)
            start += len;
        if (end < 0)
            end += len;
        if (start < 0)
            start = 0;
        if (start > end || start >= len) {
            reply_int(c, 0);
            goto out;
        }
        if (end >= len)
            end = len - 1;
        a = (unsigned long)start;
        b = (unsigned long)end + 1;
    } else if (type == RT_SCORE) {
        score_ranks(z, &sr, &a, &b);
    } else {
        lex_ranks(z, &lo, &hi, &a, &b);
    }
    size_t before = item_value_mem(it);
    tzset_del_range(z, a, b);
    coll_done(c, &k, it, before, tzset_len(z) == 0);
    reply_int(c, (long long)(b - a));
out:
    store_unlock(s, k.stripe);
}

static void zremrangebyrank_command(struct conn *c)
{
    zremrange_generic(c, RT_RANK);
}
static void zremrangebyscore_command(struct conn *c)
{
    zremrange_generic(c, RT_SCORE);
}
static void zremrangebylex_command(struct conn *c)
{
    zremrange_generic(c, RT_LEX);
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
    struct tzset *z = zs(it);
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
    coll_done(c, k, it, before, tzset_len(z) == 0);
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
    struct tzset *z = zs(it);
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
    struct emit e = {c, withscores, NULL};
    if (count < 0 || count == 1) {
        unsigned long cnt = count < 0 ? (unsigned long)-count : 1;
        emit_header(&e, cnt);
        while (cnt--) {
            zit_seek(&zi, z, (unsigned long)(rnd_next() % len));
            p = zit_get(&zi, &n, &sc);
            emit_one(&e, p, n, sc);
        }
    } else if ((unsigned long long)count >= len) {
        emit_ranks(&e, z, 0, len, 1); /* Redis walks the whole zset from its tail here */
    } else if ((unsigned long long)count * 3 > len) {
        /* a large share: one selection-sampling pass over ranks (Knuth's algorithm S) */
        unsigned long need = (unsigned long)count, left = len;
        emit_header(&e, need);
        zit_seek(&zi, z, 0);
        for (unsigned long i = 0; need && i < len; i++) {
            if (rnd_next() % left < need) {
                p = zit_get(&zi, &n, &sc);
                emit_one(&e, p, n, sc);
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
        emit_header(&e, (unsigned long)count);
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
            emit_one(&e, p, n, sc);
            got++;
        }
        tset_destroy(pick);
        if (got < (unsigned long)count)
            c->flags |= CONN_CLOSE_ASAP;
    }
out:
    store_unlock(s, k.stripe);
}

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
        struct emit e = {c, withscores, NULL};
        emit_ranks(&e, res, 0, len, 0);
        tzset_destroy(res);
    } else if (len == 0) {
        tzset_destroy(res);
        store_delete_locked(s, &all[0], conn_now(c));
        reply_int(c, 0);
    } else if (coll_put(c, &all[0], OBJ_ZSET, res)) {
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
    return tzset_scan(zs(it), cursor, count, scan_add, a);
}

static void zscan_command(struct conn *c)
{
    coll_scan_command(c, OBJ_ZSET, zscan_step);
}

static struct cmd cmds[] = {
    {"zadd", zadd_command, -4, "write denyoom fast", "@sortedset", "RW,update index:1 range:0,1,0", "sorted-set", "Add one or more members to a sorted set, or update its score if it already exists"},
    {"zincrby", zincrby_command, 4, "write denyoom fast", "@sortedset", "RW,access,update index:1 range:0,1,0", "sorted-set", "Increment the score of a member in a sorted set"},
    {"zrem", zrem_command, -3, "write fast tc:signals", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove one or more members from a sorted set"},
    {"zscore", zscore_command, 3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Get the score associated with the given member in a sorted set"},
    {"zmscore", zmscore_command, -3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Get the score associated with the given members in a sorted set"},
    {"zcard", zcard_command, 2, "readonly fast", "@sortedset", "RO index:1 range:0,1,0", "sorted-set", "Get the number of members in a sorted set"},
    {"zcount", zcount_command, 4, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Count the members in a sorted set with scores within the given values"},
    {"zlexcount", zlexcount_command, 4, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Count the number of members in a sorted set between a given lexicographical range"},
    {"zrank", zrank_command, 3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Determine the index of a member in a sorted set"},
    {"zrevrank", zrevrank_command, 3, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Determine the index of a member in a sorted set, with scores ordered from high to low"},
    {"zrange", zrange_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set"},
    {"zrangestore", zrangestore_command, -5, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 range:0,1,0", "sorted-set", "Store a range of members from sorted set into another key"},
    {"zrevrange", zrevrange_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by index, with scores ordered from high to low"},
    {"zrangebyscore", zrangebyscore_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by score"},
    {"zrevrangebyscore", zrevrangebyscore_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by score, with scores ordered from high to low"},
    {"zrangebylex", zrangebylex_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by lexicographical range"},
    {"zrevrangebylex", zrevrangebylex_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings."},
    {"zremrangebyrank", zremrangebyrank_command, 4, "write", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove all members in a sorted set within the given indexes"},
    {"zremrangebyscore", zremrangebyscore_command, 4, "write", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove all members in a sorted set within the given scores"},
    {"zremrangebylex", zremrangebylex_command, 4, "write", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove all members in a sorted set between the given lexicographical range"},
    {"zpopmin", zpopmin_command, -2, "write fast", "@sortedset", "RW,access,delete index:1 range:0,1,0", "sorted-set", "Remove and return members with the lowest scores in a sorted set"},
    {"zpopmax", zpopmax_command, -2, "write fast", "@sortedset", "RW,access,delete index:1 range:0,1,0", "sorted-set", "Remove and return members with the highest scores in a sorted set"},
    {"zmpop", zmpop_command, -4, "write", "@sortedset", "RW,access,delete index:1 keynum:0,1,1", "sorted-set", "Remove and return members with scores in a sorted set"},
    {"zrandmember", zrandmember_command, -2, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Get one or multiple random elements from a sorted set"},
    {"zunionstore", zunionstore_command, -4, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1", "sorted-set", "Add multiple sorted sets and store the resulting sorted set in a new key"},
    {"zinterstore", zinterstore_command, -4, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1", "sorted-set", "Intersect multiple sorted sets and store the resulting sorted set in a new key"},
    {"zdiffstore", zdiffstore_command, -4, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1", "sorted-set", "Subtract multiple sorted sets and store the resulting sorted set in a new key"},
    {"zunion", zunion_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Add multiple sorted sets"},
    {"zinter", zinter_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Intersect multiple sorted sets"},
    {"zdiff", zdiff_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Subtract multiple sorted sets"},
    {"zintercard", zintercard_command, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1", "sorted-set", "Intersect multiple sorted sets and return the cardinality of the result"},
    {"zscan", zscan_command, -3, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Incrementally iterate sorted sets elements and associated scores"},
};

void cmd_zset_setup(void)
{
    coll_type_setup(OBJ_ZSET, tzset_destroy, tzset_mem, tzset_copy, zset_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
