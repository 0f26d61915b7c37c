/* Hash commands with Redis 7.0 semantics. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/coll.h"
#include "store/t_hash.h"

static struct thash *hash_of(struct item *it)
{
    return it ? item_ptr(it) : NULL;
}

static const char *hash_encoding(struct item *it)
{
    return thash_encoding_name(item_ptr(it));
}

/* The hash at argv[1] for writing, created when missing. NULL after an error reply. */
static struct item *hash_for_write(struct conn *c, const struct skey *k)
{
    int wrong;
    struct item *it = coll_write(c, k, OBJ_HASH, &wrong);

    if (wrong || it)
        return it;
    struct thash *h = thash_create();
    if (!h) {
        reply_error(c, "ERR out of memory");
        return NULL;
    }
    return coll_put(c, k, OBJ_HASH, h);
}

static void hset_generic(struct conn *c, int hmset)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long created = 0;
    size_t before, maxlen = 0;

    if (c->argc % 2) {
        reply_arity_error(c, hmset ? "hmset" : "hset");
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (!(it = hash_for_write(c, &k)))
        goto out;
    before = item_value_mem(it);
    for (int i = 2; i < c->argc; i++)
        if (c->argv[i].n > maxlen)
            maxlen = c->argv[i].n;
    thash_convert_for(hash_of(it), maxlen);
    for (int i = 2; i < c->argc; i += 2) {
        int r = thash_set(hash_of(it), c->argv[i].p, c->argv[i].n, c->argv[i + 1].p,
                          c->argv[i + 1].n);
        if (r < 0) {
            int empty = thash_len(hash_of(it)) == 0;
            coll_done(c, &k, it, before, empty);
            if (i > 2)
                cmd_modified(c, &k, empty ? NULL : it);
            reply_error(c, "ERR out of memory");
            goto out;
        }
        created += r;
    }
    coll_done(c, &k, it, before, 0);
    cmd_modified(c, &k, it);
    notify_event(NOTIFY_HASH, "hset", &k);
    if (hmset)
        reply_ok(c);
    else
        reply_int(c, created);
out:
    store_unlock(s, k.stripe);
}

static void hset_command(struct conn *c)
{
    hset_generic(c, 0);
}
static void hmset_command(struct conn *c)
{
    hset_generic(c, 1);
}

static void hsetnx_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    const char *v;
    size_t vn;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (!(it = hash_for_write(c, &k)))
        goto out;
    if (thash_get(hash_of(it), c->argv[2].p, c->argv[2].n, &v, &vn)) {
        reply_int(c, 0);
        goto out;
    }
    size_t before = item_value_mem(it);
    size_t maxlen = c->argv[2].n > c->argv[3].n ? c->argv[2].n : c->argv[3].n;
    thash_convert_for(hash_of(it), maxlen);
    int r = thash_set(hash_of(it), c->argv[2].p, c->argv[2].n, c->argv[3].p, c->argv[3].n);
    coll_done(c, &k, it, before, thash_len(hash_of(it)) == 0);
    if (r < 0) {
        reply_error(c, "ERR out of memory");
    } else {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_HASH, "hset", &k);
        reply_int(c, 1);
    }
out:
    store_unlock(s, k.stripe);
}

static void hget_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    const char *v;
    size_t vn;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (!wrong) {
        if (it && thash_get(hash_of(it), c->argv[2].p, c->argv[2].n, &v, &vn))
            reply_bulk(c, v, vn);
        else
            reply_null(c);
    }
    store_unlock(s, k.stripe);
}

static void hmget_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    const char *v;
    size_t vn;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (!wrong) {
        reply_array(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            if (it && thash_get(hash_of(it), c->argv[i].p, c->argv[i].n, &v, &vn))
                reply_bulk(c, v, vn);
            else
                reply_null(c);
        }
    }
    store_unlock(s, k.stripe);
}

#define WANT_KEYS 1
#define WANT_VALS 2

static void getall_generic(struct conn *c, int what)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    struct thash_iter hi;
    const char *f, *v;
    size_t fn, vn;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (wrong)
        goto out;
    long long len = it ? (long long)thash_len(hash_of(it)) : 0;
    if (what == (WANT_KEYS | WANT_VALS))
        reply_map(c, len);
    else
        reply_array(c, len);
    if (!it)
        goto out;
    thash_iter_init(&hi, hash_of(it));
    while (thash_next(&hi, &f, &fn, &v, &vn)) {
        if (what & WANT_KEYS)
            reply_bulk(c, f, fn);
        if (what & WANT_VALS)
            reply_bulk(c, v, vn);
    }
out:
    store_unlock(s, k.stripe);
}

static void hgetall_command(struct conn *c)
{
    getall_generic(c, WANT_KEYS | WANT_VALS);
}
static void hkeys_command(struct conn *c)
{
    getall_generic(c, WANT_KEYS);
}
static void hvals_command(struct conn *c)
{
    getall_generic(c, WANT_VALS);
}

static unsigned long hdel_len(struct item *it)
{
    return thash_len(hash_of(it));
}

static int hdel_del(struct item *it, const char *p, size_t n)
{
    return thash_del(hash_of(it), p, n);
}

static void hdel_command(struct conn *c)
{
    coll_remove_members(c, OBJ_HASH, hdel_len, hdel_del);
}

static void hexists_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    const char *v;
    size_t vn;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (!wrong)
        reply_int(c, it && thash_get(hash_of(it), c->argv[2].p, c->argv[2].n, &v, &vn));
    store_unlock(s, k.stripe);
}

static void hlen_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (!wrong)
        reply_int(c, it ? (long long)thash_len(hash_of(it)) : 0);
    store_unlock(s, k.stripe);
}

static void hstrlen_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    const char *v;
    size_t vn;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (!wrong)
        reply_int(c, it && thash_get(hash_of(it), c->argv[2].p, c->argv[2].n, &v, &vn)
                         ? (long long)vn : 0);
    store_unlock(s, k.stripe);
}

static void hincrby_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long incr, val = 0;
    const char *v;
    size_t vn;
    char buf[24];

    if (arg_ll(c, 3, &incr, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (!(it = hash_for_write(c, &k)))
        goto out;
    if (thash_get(hash_of(it), c->argv[2].p, c->argv[2].n, &v, &vn) &&
        !util_str2ll(v, vn, &val)) {
        reply_error(c, "ERR hash value is not an integer");
        goto out_empty;
    }
    if ((incr < 0 && val < 0 && incr < LLONG_MIN - val) ||
        (incr > 0 && val > 0 && incr > LLONG_MAX - val)) {
        reply_error(c, ERR_OVERFLOW);
        goto out_empty;
    }
    val += incr;
    int n = util_ll2str(buf, val);
    size_t before = item_value_mem(it);
    thash_convert_for(hash_of(it), c->argv[2].n);
    int r = thash_set(hash_of(it), c->argv[2].p, c->argv[2].n, buf, (size_t)n);
    coll_done(c, &k, it, before, thash_len(hash_of(it)) == 0);
    if (r < 0) {
        reply_error(c, "ERR out of memory");
    } else {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_HASH, "hincrby", &k);
        reply_int(c, val);
    }
    goto out;
out_empty:
    /* a hash created just now for this failed command must not stay */
    if (thash_len(hash_of(it)) == 0)
        store_delete_locked(s, &k, conn_now(c));
out:
    store_unlock(s, k.stripe);
}

static void hincrbyfloat_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long double incr, val = 0;
    const char *v;
    size_t vn;
    char buf[512];

    if (!util_str2ld(c->argv[3].p, c->argv[3].n, &incr)) {
        reply_error(c, ERR_NOTFLOAT);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (!(it = hash_for_write(c, &k)))
        goto out;
    if (thash_get(hash_of(it), c->argv[2].p, c->argv[2].n, &v, &vn) &&
        !util_str2ld(v, vn, &val)) {
        reply_error(c, "ERR hash value is not a float");
        goto out_empty;
    }
    val += incr;
    if (isnan(val) || isinf(val)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        goto out_empty;
    }
    int n = util_ld2str(buf, sizeof(buf), val);
    size_t before = item_value_mem(it);
    thash_convert_for(hash_of(it), c->argv[2].n > (size_t)n ? c->argv[2].n : (size_t)n);
    int r = thash_set(hash_of(it), c->argv[2].p, c->argv[2].n, buf, (size_t)n);
    coll_done(c, &k, it, before, thash_len(hash_of(it)) == 0);
    if (r < 0) {
        reply_error(c, "ERR out of memory");
    } else {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_HASH, "hincrbyfloat", &k);
        reply_bulk(c, buf, (size_t)n);
    }
    goto out;
out_empty:
    if (thash_len(hash_of(it)) == 0)
        store_delete_locked(s, &k, conn_now(c));
out:
    store_unlock(s, k.stripe);
}

/* One field (and value) of a random-field reply. pairs: RESP3 [field, value] arrays. */
static void reply_pair(struct conn *c, const char *f, size_t fn, const char *v, size_t vn,
                       int withvalues)
{
    if (withvalues && c->resp == 3)
        reply_array(c, 2);
    reply_bulk(c, f, fn);
    if (withvalues)
        reply_bulk(c, v, vn);
}

static void hrandfield_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong, withvalues = 0;
    long long count = 0;
    const char *f, *v;
    size_t fn, vn;

    if (c->argc >= 3) {
        if (arg_range(c, 2, -LLONG_MAX, LLONG_MAX, &count, NULL))
            return;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(c, 3, "withvalues"))) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (c->argc == 4) {
            withvalues = 1;
            if (count < -LLONG_MAX / 2 || count > LLONG_MAX / 2) {
                reply_error(c, "ERR value is out of range");
                return;
            }
        }
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_HASH, &wrong);
    if (wrong)
        goto out;
    struct thash *h = hash_of(it);
    if (c->argc < 3) {
        if (!h) {
            reply_null(c);
        } else {
            thash_random(h, &f, &fn, &v, &vn);
            reply_bulk(c, f, fn);
        }
        goto out;
    }
    if (!h || count == 0) {
        reply_array(c, 0);
        goto out;
    }
    long long len = (long long)thash_len(h);
    int mult = withvalues && c->resp == 2 ? 2 : 1;
    if (count < 0 || count == 1) {
        long long n = count < 0 ? -count : 1;
        reply_array(c, n * mult);
        while (n-- && !reply_unbounded_stop(c)) {
            thash_random(h, &f, &fn, &v, &vn);
            reply_pair(c, f, fn, v, vn, withvalues);
        }
    } else if (count >= len) {
        struct thash_iter hi;
        reply_array(c, len * mult);
        thash_iter_init(&hi, h);
        while (thash_next(&hi, &f, &fn, &v, &vn))
            reply_pair(c, f, fn, v, vn, withvalues);
    } else if (count * 3 > len) {
        /* a large share: one selection-sampling pass (Knuth's algorithm S) */
        struct thash_iter hi;
        long long need = count, left = len;
        reply_array(c, count * mult);
        thash_iter_init(&hi, h);
        while (need && thash_next(&hi, &f, &fn, &v, &vn)) {
            if ((long long)(rnd_next() % (uint64_t)left) < need) {
                reply_pair(c, f, fn, v, vn, withvalues);
                need--;
            }
            left--;
        }
    } else {
        /* a small share: random picks, skipping repeats */
        struct thash *pick = thash_create();
        long long got = 0;
        reply_array(c, count * mult);
        while (pick && got < count) {
            const char *pv;
            size_t pn;
            thash_random(h, &f, &fn, &v, &vn);
            if (thash_get(pick, f, fn, &pv, &pn))
                continue;
            thash_convert_for(pick, fn);
            if (thash_set(pick, f, fn, "", 0) < 0)
                break;
            reply_pair(c, f, fn, v, vn, withvalues);
            got++;
        }
        thash_destroy(pick);
        if (got < count)
            c->flags |= CONN_CLOSE_ASAP;
    }
out:
    store_unlock(s, k.stripe);
}

static void scan_add(const char *f, size_t fn, const char *v, size_t vn, void *arg)
{
    void **a = arg;
    if (!coll_scan_match(a[0], f, fn))
        return;
    if (resp_add_bulk(a[1], f, fn) == 0 && resp_add_bulk(a[1], v, vn) == 0)
        *(long long *)a[2] += 2;
}

static uint64_t hscan_step(struct item *it, uint64_t cursor, long count, void **a)
{
    return thash_scan(hash_of(it), cursor, count, scan_add, a);
}

static void hscan_command(struct conn *c)
{
    coll_scan_command(c, OBJ_HASH, hscan_step);
}

static struct cmd cmds[] = {
    {"hset", hset_command, -4, "write denyoom fast tc:signals", "@hash", "RW,update index:1 range:0,1,0", "hash", "Set the string value of a hash field"},
    {"hmset", hmset_command, -4, "write denyoom fast tc:signals", "@hash", "RW,update index:1 range:0,1,0", "hash", "Set multiple hash fields to multiple values"},
    {"hsetnx", hsetnx_command, 4, "write denyoom fast tc:signals", "@hash", "RW,insert index:1 range:0,1,0", "hash", "Set the value of a hash field, only if the field does not exist"},
    {"hget", hget_command, 3, "readonly fast", "@hash", "RO,access index:1 range:0,1,0", "hash", "Get the value of a hash field"},
    {"hmget", hmget_command, -3, "readonly fast", "@hash", "RO,access index:1 range:0,1,0", "hash", "Get the values of all the given hash fields"},
    {"hgetall", hgetall_command, 2, "readonly", "@hash", "RO,access index:1 range:0,1,0", "hash", "Get all the fields and values in a hash"},
    {"hkeys", hkeys_command, 2, "readonly", "@hash", "RO,access index:1 range:0,1,0", "hash", "Get all the fields in a hash"},
    {"hvals", hvals_command, 2, "readonly", "@hash", "RO,access index:1 range:0,1,0", "hash", "Get all the values in a hash"},
    {"hdel", hdel_command, -3, "write fast tc:signals", "@hash", "RW,delete index:1 range:0,1,0", "hash", "Delete one or more hash fields"},
    {"hexists", hexists_command, 3, "readonly fast", "@hash", "RO index:1 range:0,1,0", "hash", "Determine if a hash field exists"},
    {"hlen", hlen_command, 2, "readonly fast", "@hash", "RO index:1 range:0,1,0", "hash", "Get the number of fields in a hash"},
    {"hstrlen", hstrlen_command, 3, "readonly fast", "@hash", "RO index:1 range:0,1,0", "hash", "Get the length of the value of a hash field"},
    {"hincrby", hincrby_command, 4, "write denyoom fast tc:signals", "@hash", "RW,access,update index:1 range:0,1,0", "hash", "Increment the integer value of a hash field by the given number"},
    {"hincrbyfloat", hincrbyfloat_command, 4, "write denyoom fast tc:signals", "@hash", "RW,access,update index:1 range:0,1,0", "hash", "Increment the float value of a hash field by the given amount"},
    {"hrandfield", hrandfield_command, -2, "readonly", "@hash", "RO,access index:1 range:0,1,0", "hash", "Get one or multiple random fields from a hash"},
    {"hscan", hscan_command, -3, "readonly", "@hash", "RO,access index:1 range:0,1,0", "hash", "Incrementally iterate hash fields and associated values"},
};

void cmd_hash_setup(void)
{
    coll_type_setup(OBJ_HASH, thash_destroy, thash_mem, thash_copy, hash_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
