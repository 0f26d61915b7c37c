/* Sorted set ranges with Redis 7.0 semantics: ZRANGE and its variants (ZRANGESTORE,
 * ZREVRANGE, ZRANGEBYSCORE, ZRANGEBYLEX...), ZCOUNT, ZLEXCOUNT, ZREMRANGEBY*, and the emitter
 * of member ranges the other sorted-set files share (zset_int.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/coll.h"
#include "cmd/zset_int.h"

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

void zset_emit_one(struct zset_emit *e, const char *p, size_t n, double score)
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

void zset_emit_header(struct zset_emit *e, unsigned long n)
{
    if (!e->dst)
        reply_array(e->c, (long long)n * (e->withscores && e->c->resp == 2 ? 2 : 1));
}

/* Emit ranks [a, b) forward, or backward from b-1 when rev. */
void zset_emit_ranks(struct zset_emit *e, const struct tzset *z, unsigned long a,
                     unsigned long b, int rev)
{
    struct zit it;

    zset_emit_header(e, b - a);
    if (a >= b)
        return;
    zit_seek(&it, z, rev ? b - 1 : a);
    for (unsigned long i = a; i < b; i++) {
        size_t n;
        double s;
        const char *p = zit_get(&it, &n, &s);
        zset_emit_one(e, p, n, s);
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
    struct tzset *z = zset_of(it);
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
    struct zset_emit e = {c, withscores, NULL};
    if (!store) {
        zset_emit_ranks(&e, z, a, b, rev);
        goto out;
    }
    if (a >= b) {
        if (store_delete_locked(s, &keys[1], conn_now(c)))
            notify_event(NOTIFY_GENERIC, "del", &keys[1]);
        reply_int(c, 0);
        goto out;
    }
    e.dst = tzset_create(b - a, 0);
    if (!e.dst) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    zset_emit_ranks(&e, z, a, b, rev);
    unsigned long n = tzset_len(e.dst);
    if (coll_put(c, &keys[1], OBJ_ZSET, e.dst)) {
        notify_event(NOTIFY_ZSET, "zrangestore", &keys[1]);
        reply_int(c, (long long)n);
    }
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
            lex_ranks(zset_of(it), &lo, &hi, &a, &b);
        else if (it)
            score_ranks(zset_of(it), &sr, &a, &b);
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
    struct tzset *z = zset_of(it);
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
    {
        int empty = tzset_len(z) == 0;
        coll_done(c, &k, it, before, empty);
        if (b > a) {
            cmd_modified(c, &k, empty ? NULL : it);
            notify_coll(NOTIFY_ZSET, type == RT_RANK ? "zremrangebyrank" : type == RT_SCORE ?
                        "zremrangebyscore" : "zremrangebylex", &k, empty);
        }
    }
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

static struct cmd cmds[] = {
    {"zcount", zcount_command, 4, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Count the members in a sorted set with scores within the given values"},
    {"zlexcount", zlexcount_command, 4, "readonly fast", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Count the number of members in a sorted set between a given lexicographical range"},
    {"zrange", zrange_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set"},
    {"zrangestore", zrangestore_command, -5, "write denyoom", "@sortedset", "OW,update index:1 range:0,1,0; RO,access index:2 range:0,1,0", "sorted-set", "Store a range of members from sorted set into another key"},
    {"zrevrange", zrevrange_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by index, with scores ordered from high to low"},
    {"zrangebyscore", zrangebyscore_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by score"},
    {"zrevrangebyscore", zrevrangebyscore_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by score, with scores ordered from high to low"},
    {"zrangebylex", zrangebylex_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by lexicographical range"},
    {"zrevrangebylex", zrevrangebylex_command, -4, "readonly", "@sortedset", "RO,access index:1 range:0,1,0", "sorted-set", "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings."},
    {"zremrangebyrank", zremrangebyrank_command, 4, "write tc:signals", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove all members in a sorted set within the given indexes"},
    {"zremrangebyscore", zremrangebyscore_command, 4, "write tc:signals", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove all members in a sorted set within the given scores"},
    {"zremrangebylex", zremrangebylex_command, 4, "write tc:signals", "@sortedset", "RW,delete index:1 range:0,1,0", "sorted-set", "Remove all members in a sorted set between the given lexicographical range"},
};

void cmd_zset_range_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
