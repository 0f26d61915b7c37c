/* Set commands with Redis 7.0 semantics. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/propagate.h"
#include "store/t_set.h"

static struct tset *set_of(struct item *it)
{
    return it ? item_ptr(it) : NULL;
}

static const char *set_encoding(struct item *it)
{
    return tset_encoding_name(item_ptr(it));
}

static void sadd_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    long long added = 0;
    size_t before;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_SET, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        struct tset *t = tset_create(c->argv[2].p, c->argv[2].n);
        if (!t) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        if (!(it = coll_put(c, &k, OBJ_SET, t)))
            goto out;
    }
    before = item_value_mem(it);
    for (int i = 2; i < c->argc; i++) {
        int r = tset_add(set_of(it), c->argv[i].p, c->argv[i].n);
        if (r < 0) {
            if (added)
                cmd_modified(c, &k, tset_len(set_of(it)) ? it : NULL);
            coll_done(c, &k, it, before, tset_len(set_of(it)) == 0);
            reply_error(c, "ERR out of memory");
            goto out;
        }
        added += r;
    }
    if (added) {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_SET, "sadd", &k);
    }
    coll_done(c, &k, it, before, 0);
    reply_int(c, added);
out:
    store_unlock(s, k.stripe);
}

static unsigned long srem_len(struct item *it)
{
    return tset_len(set_of(it));
}

static int srem_del(struct item *it, const char *p, size_t n)
{
    return tset_remove(set_of(it), p, n);
}

static void srem_command(struct conn *c)
{
    coll_remove_members(c, OBJ_SET, srem_len, srem_del);
}

static void sismember_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_SET, &wrong);
    if (!wrong)
        reply_int(c, it && tset_contains(set_of(it), c->argv[2].p, c->argv[2].n));
    store_unlock(s, k.stripe);
}

static void smismember_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_SET, &wrong);
    if (!wrong) {
        reply_array(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++)
            reply_int(c, it && tset_contains(set_of(it), c->argv[i].p, c->argv[i].n));
    }
    store_unlock(s, k.stripe);
}

static void scard_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_SET, &wrong);
    if (!wrong)
        reply_int(c, it ? (long long)tset_len(set_of(it)) : 0);
    store_unlock(s, k.stripe);
}

/* Reply every member of t as a set (or array). */
static void reply_members(struct conn *c, const struct tset *t, int as_set)
{
    struct tset_iter ti;
    const char *p;
    size_t n;

    if (as_set)
        reply_set(c, t ? (long long)tset_len(t) : 0);
    else
        reply_array(c, t ? (long long)tset_len(t) : 0);
    if (!t)
        return;
    tset_iter_init(&ti, t);
    while (tset_next(&ti, &p, &n))
        reply_bulk(c, p, n);
}

static void smembers_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_SET, &wrong);
    if (!wrong)
        reply_members(c, set_of(it), 1);
    store_unlock(s, k.stripe);
}

static void spop_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    long long count = -1;
    char buf[24];
    const char *p;
    size_t n;

    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3 && arg_positive(c, 2, &count, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_SET, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (count >= 0)
            reply_set(c, 0);
        else
            reply_null(c);
        goto out;
    }
    if (count == 0) {
        reply_set(c, 0);
        goto out;
    }
    struct tset *t = set_of(it);
    size_t before = item_value_mem(it);
    if (count < 0) {
        tset_random(t, buf, &p, &n);
        reply_bulk(c, p, n);
        if (cmd_prop_begin(c, 3)) { /* replayed as SREM of what was popped */
            cmd_prop_arg(c, "SREM", 4);
            cmd_prop_arg(c, c->argv[1].p, c->argv[1].n);
            cmd_prop_arg(c, p, n);
            cmd_prop_end(c);
        }
        tset_remove(t, p, n);
        cmd_modified(c, &k, tset_len(t) ? it : NULL);
        notify_coll(NOTIFY_SET, "spop", &k, tset_len(t) == 0);
    } else {
        long long len = (long long)tset_len(t);
        if (count > len)
            count = len;
        reply_set(c, count);
        if (count == len) {
            if (cmd_prop_begin(c, 2)) { /* everything: replayed as DEL */
                cmd_prop_arg(c, "DEL", 3);
                cmd_prop_arg(c, c->argv[1].p, c->argv[1].n);
                cmd_prop_end(c);
            }
            struct tset_iter ti;
            tset_iter_init(&ti, t);
            while (tset_next(&ti, &p, &n))
                reply_bulk(c, p, n);
            cmd_modified(c, &k, NULL);
            notify_coll(NOTIFY_SET, "spop", &k, 1);
            coll_done(c, &k, it, before, 1);
            goto out;
        }
        int prop = cmd_prop_begin(c, (int)count + 2);
        if (prop) {
            cmd_prop_arg(c, "SREM", 4);
            cmd_prop_arg(c, c->argv[1].p, c->argv[1].n);
        }
        while (count--) {
            char tmp[256];
            tset_random(t, buf, &p, &n);
            reply_bulk(c, p, n);
            if (prop)
                cmd_prop_arg(c, p, n);
            /* removing may move the bytes p points to: copy small members first */
            if (n <= sizeof(tmp)) {
                memcpy(tmp, p, n);
                p = tmp;
            }
            tset_remove(t, p, n);
        }
        if (prop)
            cmd_prop_end(c);
        cmd_modified(c, &k, tset_len(t) ? it : NULL);
        notify_coll(NOTIFY_SET, "spop", &k, tset_len(t) == 0);
    }
    coll_done(c, &k, it, before, tset_len(t) == 0);
out:
    store_unlock(s, k.stripe);
}

static void srandmember_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    long long count = LLONG_MIN;
    char buf[24];
    const char *p;
    size_t n;

    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3 && arg_range(c, 2, -LLONG_MAX, LLONG_MAX, &count, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_SET, &wrong);
    if (wrong)
        goto out;
    if (count == LLONG_MIN) {
        if (!it) {
            reply_null(c);
        } else {
            tset_random(set_of(it), buf, &p, &n);
            reply_bulk(c, p, n);
        }
        goto out;
    }
    if (!it || count == 0) {
        reply_array(c, 0);
        goto out;
    }
    struct tset *t = set_of(it);
    long long len = (long long)tset_len(t);
    if (count < 0) {
        reply_array(c, -count);
        for (long long i = 0; i < -count && !reply_unbounded_stop(c); i++) {
            tset_random(t, buf, &p, &n);
            reply_bulk(c, p, n);
        }
    } else if (count >= len) {
        reply_members(c, t, 0);
    } else {
        reply_array(c, count);
        if (count * 3 > len) {
            /* a large share: one pass selecting each member with probability
             * needed/remaining (Knuth's algorithm S) */
            struct tset_iter ti;
            long long need = count, left = len;
            tset_iter_init(&ti, t);
            while (need && tset_next(&ti, &p, &n)) {
                if ((long long)(rnd_next() % (uint64_t)left) < need) {
                    reply_bulk(c, p, n);
                    need--;
                }
                left--;
            }
        } else {
            /* a small share: random picks, skipping repeats */
            struct tset *pick = NULL;
            long long got = 0;
            while (got < count) {
                tset_random(t, buf, &p, &n);
                if (!pick && !(pick = tset_create(p, n)))
                    break;
                int r = tset_add(pick, p, n);
                if (r < 0)
                    break;
                if (r) {
                    reply_bulk(c, p, n);
                    got++;
                }
            }
            tset_destroy(pick);
            if (got < count)
                c->flags |= CONN_CLOSE_ASAP; /* out of memory mid-reply */
        }
    }
out:
    store_unlock(s, k.stripe);
}

static void smove_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k[2];
    struct item *src, *dst;
    int64_t now = conn_now(c);

    arg_key(c, 1, &k[0]);
    arg_key(c, 2, &k[1]);
    store_lock_keys(s, k, 2);
    src = store_lookup_write_locked(s, &k[0], now);
    dst = store_lookup_write_locked(s, &k[1], now);
    if (!src) {
        reply_int(c, 0);
        goto out;
    }
    if (src->type != OBJ_SET || (dst && dst->type != OBJ_SET)) {
        reply_error(c, ERR_WRONGTYPE);
        goto out;
    }
    const struct slice *m = &c->argv[3];
    if (src == dst) {
        reply_int(c, tset_contains(set_of(src), m->p, m->n));
        goto out;
    }
    size_t sb = item_value_mem(src);
    if (!tset_remove(set_of(src), m->p, m->n)) {
        reply_int(c, 0);
        goto out;
    }
    cmd_modified(c, &k[0], tset_len(set_of(src)) ? src : NULL);
    notify_coll(NOTIFY_SET, "srem", &k[0], tset_len(set_of(src)) == 0);
    coll_done(c, &k[0], src, sb, tset_len(set_of(src)) == 0);
    if (!dst) {
        struct tset *t = tset_create(m->p, m->n);
        if (!t) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        if (!(dst = coll_put(c, &k[1], OBJ_SET, t)))
            goto out;
    }
    size_t db = item_value_mem(dst);
    if (tset_add(set_of(dst), m->p, m->n) > 0) {
        cmd_modified(c, &k[1], dst);
        notify_event(NOTIFY_SET, "sadd", &k[1]);
    }
    coll_done(c, &k[1], dst, db, 0);
    reply_int(c, 1);
out:
    store_unlock_keys(s, k, 2);
}

/* ---- SINTER / SUNION / SDIFF and their STORE forms, SINTERCARD ---- */

enum { OP_UNION, OP_DIFF, OP_INTER };

/* Look up n set keys (locked). Missing keys give NULL. Returns -1 after a WRONGTYPE reply. */
static int lookup_sets(struct conn *c, struct skey *keys, int n, struct tset **sets)
{
    for (int i = 0; i < n; i++) {
        struct item *it = store_lookup_read_locked(conn_store(c), &keys[i], conn_now(c));
        if (it && it->type != OBJ_SET) {
            reply_error(c, ERR_WRONGTYPE);
            return -1;
        }
        sets[i] = set_of(it);
    }
    return 0;
}

static int by_len(const void *a, const void *b)
{
    uint64_t x = tset_len(*(struct tset *const *)a), y = tset_len(*(struct tset *const *)b);
    return x < y ? -1 : x > y;
}

/* Add p to *res (created on first use). -1 when out of memory. */
static int res_add(struct tset **res, const char *p, size_t n)
{
    if (!*res && !(*res = tset_create(p, n)))
        return -1;
    return tset_add(*res, p, n) < 0 ? -1 : 0;
}

/* Compute op over sets (NULL = empty) into *res (NULL when empty). With limit > 0 for an
 * intersection, only count up to limit into *card. Returns 0 or -1 (OOM). */
static int set_op(struct tset **sets, int n, int op, long long limit, long long *card,
                  struct tset **res)
{
    struct tset_iter ti;
    const char *p;
    size_t len;

    *res = NULL;
    *card = 0;
    if (op == OP_INTER) {
        for (int i = 0; i < n; i++)
            if (!sets[i] || tset_len(sets[i]) == 0)
                return 0;
        qsort(sets, (size_t)n, sizeof(*sets), by_len);
        tset_iter_init(&ti, sets[0]);
        while (tset_next(&ti, &p, &len)) {
            int j = 1;
            while (j < n && (sets[j] == sets[0] || tset_contains(sets[j], p, len)))
                j++;
            if (j < n)
                continue;
            if (limit >= 0) {
                if (++*card == limit && limit)
                    return 0;
            } else if (res_add(res, p, len)) {
                return -1;
            }
        }
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (!sets[i] || (op == OP_DIFF && i > 0))
            continue;
        if (op == OP_DIFF && !sets[0])
            break;
        tset_iter_init(&ti, sets[i]);
        while (tset_next(&ti, &p, &len)) {
            if (op == OP_DIFF) {
                int j = 1;
                while (j < n && !(sets[j] && (sets[j] == sets[0] || tset_contains(sets[j], p, len))))
                    j++;
                if (j < n)
                    continue;
            }
            if (res_add(res, p, len))
                return -1;
        }
    }
    return 0;
}

/* first: argv index of the first source key; store: argv[1] is the destination. */
static void setop_generic(struct conn *c, int op, int store)
{
    struct store *s = conn_store(c);
    int first = store ? 2 : 1, n = c->argc - first;
    struct skey *keys = keyset_resolve(c, 1, 1, c->argc - 1);
    struct tset *sets_small[16], **sets = sets_small, *res = NULL;
    long long card;

    if (!keys)
        return;
    if (n > 16 && !(sets = malloc(sizeof(*sets) * (size_t)n))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    store_lock_keys(s, keys, c->argc - 1);
    if (lookup_sets(c, keys + (first - 1), n, sets))
        goto out;
    if (set_op(sets, n, op, -1, &card, &res)) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    if (!store) {
        reply_members(c, res, 1);
    } else if (!res || tset_len(res) == 0) {
        if (store_delete_locked(s, &keys[0], conn_now(c))) {
            cmd_modified(c, &keys[0], NULL);
            notify_event(NOTIFY_GENERIC, "del", &keys[0]);
        }
        reply_int(c, 0);
    } else {
        long long len = (long long)tset_len(res);
        struct tset *t = res;
        res = NULL;
        struct item *it = coll_put(c, &keys[0], OBJ_SET, t);
        if (it) {
            cmd_modified(c, &keys[0], it);
            notify_event(NOTIFY_SET, op == OP_INTER ? "sinterstore" : op == OP_UNION ? "sunionstore"
                                                                     : "sdiffstore", &keys[0]);
            reply_int(c, len);
        }
    }
out:
    tset_destroy(res);
    store_unlock_keys(s, keys, c->argc - 1);
    if (sets != sets_small)
        free(sets);
}

static void sinter_command(struct conn *c)
{
    setop_generic(c, OP_INTER, 0);
}
static void sinterstore_command(struct conn *c)
{
    setop_generic(c, OP_INTER, 1);
}
static void sunion_command(struct conn *c)
{
    setop_generic(c, OP_UNION, 0);
}
static void sunionstore_command(struct conn *c)
{
    setop_generic(c, OP_UNION, 1);
}
static void sdiff_command(struct conn *c)
{
    setop_generic(c, OP_DIFF, 0);
}
static void sdiffstore_command(struct conn *c)
{
    setop_generic(c, OP_DIFF, 1);
}

static void sintercard_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long numkeys, limit = 0, card;
    struct skey *keys;
    struct tset *sets_small[16], **sets = sets_small, *res = NULL;

    if (arg_range(c, 1, 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0"))
        return;
    if (numkeys > c->argc - 2) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (arg_is(c, j, "limit") && j + 1 < c->argc) {
            if (arg_positive(c, ++j, &limit, "ERR LIMIT can't be negative"))
                return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    int n = (int)numkeys;
    if (!(keys = keyset_resolve(c, 2, 1, n)))
        return;
    if (n > 16 && !(sets = malloc(sizeof(*sets) * (size_t)n))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    store_lock_keys(s, keys, n);
    if (lookup_sets(c, keys, n, sets) == 0) {
        set_op(sets, n, OP_INTER, limit, &card, &res);
        reply_int(c, card);
    }
    store_unlock_keys(s, keys, n);
    tset_destroy(res);
    if (sets != sets_small)
        free(sets);
}

static void scan_add(const char *p, size_t n, void *arg)
{
    void **a = arg;
    const struct scan_opts *o = a[0];
    if (!coll_scan_match(o, p, n))
        return;
    if (resp_add_bulk(a[1], p, n) == 0)
        (*(long long *)a[2])++;
}

static uint64_t sscan_step(struct item *it, uint64_t cursor, long count, void **a)
{
    return tset_scan(set_of(it), cursor, count, scan_add, a);
}

static void sscan_command(struct conn *c)
{
    coll_scan_command(c, OBJ_SET, sscan_step);
}

static struct cmd cmds[] = {
    {"sadd", sadd_command, -3, "write denyoom fast tc:signals", "@set", "RW,insert index:1 range:0,1,0", "set", "Add one or more members to a set"},
    {"srem", srem_command, -3, "write fast tc:signals", "@set", "RW,delete index:1 range:0,1,0", "set", "Remove one or more members from a set"},
    {"sismember", sismember_command, 3, "readonly fast", "@set", "RO index:1 range:0,1,0", "set", "Determine if a given value is a member of a set"},
    {"smismember", smismember_command, -3, "readonly fast", "@set", "RO,access index:1 range:0,1,0", "set", "Returns the membership associated with the given elements for a set"},
    {"smembers", smembers_command, 2, "readonly", "@set", "RO,access index:1 range:0,1,0", "set", "Get all the members in a set"},
    {"scard", scard_command, 2, "readonly fast", "@set", "RO index:1 range:0,1,0", "set", "Get the number of members in a set"},
    {"spop", spop_command, -2, "write fast tc:signals tc:prop-explicit", "@set", "RW,access,delete index:1 range:0,1,0", "set", "Remove and return one or multiple random members from a set"},
    {"srandmember", srandmember_command, -2, "readonly", "@set", "RO,access index:1 range:0,1,0", "set", "Get one or multiple random members from a set"},
    {"smove", smove_command, 4, "write fast tc:signals", "@set", "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0", "set", "Move a member from one set to another"},
    {"sinter", sinter_command, -2, "readonly", "@set", "RO,access index:1 range:-1,1,0", "set", "Intersect multiple sets"},
    {"sinterstore", sinterstore_command, -3, "write denyoom tc:signals", "@set", "RW,update index:1 range:0,1,0; RO,access index:2 range:-1,1,0", "set", "Intersect multiple sets and store the resulting set in a key"},
    {"sintercard", sintercard_command, -3, "readonly", "@set", "RO,access index:1 keynum:0,1,1", "set", "Intersect multiple sets and return the cardinality of the result"},
    {"sunion", sunion_command, -2, "readonly", "@set", "RO,access index:1 range:-1,1,0", "set", "Add multiple sets"},
    {"sunionstore", sunionstore_command, -3, "write denyoom tc:signals", "@set", "OW,update index:1 range:0,1,0; RO,access index:2 range:-1,1,0", "set", "Add multiple sets and store the resulting set in a key"},
    {"sdiff", sdiff_command, -2, "readonly", "@set", "RO,access index:1 range:-1,1,0", "set", "Subtract multiple sets"},
    {"sdiffstore", sdiffstore_command, -3, "write denyoom tc:signals", "@set", "OW,update index:1 range:0,1,0; RO,access index:2 range:-1,1,0", "set", "Subtract multiple sets and store the resulting set in a key"},
    {"sscan", sscan_command, -3, "readonly", "@set", "RO,access index:1 range:0,1,0", "set", "Incrementally iterate Set elements"},
};

void cmd_set_setup(void)
{
    coll_type_setup(OBJ_SET, tset_destroy, tset_mem, tset_copy, set_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
