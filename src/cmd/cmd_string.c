/* String commands with Redis 7.0 semantics. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/propagate.h"
#include "cmd/cmd.h"
#include "cmd/keyset.h"
#include "core/config.h"
#include "store/strval.h"

/* Reply WRONGTYPE and return 1 when it holds something other than a string. */
static int not_string(struct conn *c, struct item *it)
{
    if (it && it->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return 1;
    }
    return 0;
}

/* Parse an expire argument: unit_ms 1000 for seconds; absolute for EXAT/PXAT. Sets *when to
 * an absolute unix time in ms. Replies the error and returns -1 on failure. */
static int parse_expire(struct conn *c, int i, int unit_ms, int absolute, const char *cmdname,
                        int64_t *when)
{
    long long v;

    if (arg_ll(c, i, &v, NULL))
        return -1;
    if (v <= 0 || (unit_ms == 1000 && v > LLONG_MAX / 1000)) {
        reply_errorf(c, "ERR invalid expire time in '%s' command", cmdname);
        return -1;
    }
    v *= unit_ms;
    if (!absolute) {
        if (v > LLONG_MAX - conn_now(c)) {
            reply_errorf(c, "ERR invalid expire time in '%s' command", cmdname);
            return -1;
        }
        v += conn_now(c);
    }
    *when = v;
    return 0;
}

#define SET_NX 1
#define SET_XX 2
#define SET_GET 4
#define SET_KEEPTTL 8
#define SET_EXPIRE 16

/* The body of SET and its variants once options are parsed. */
static void set_generic(struct conn *c, int flags, int64_t when, int ki, int vi, int reply_int_)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *old;
    const struct slice *v = &c->argv[vi];
    uint32_t pos;
    int64_t exp;

    arg_key(c, ki, &k);
    store_lock(s, k.stripe);
    old = store_lookup_pos_locked(s, &k, conn_now(c), &pos);
    if ((flags & SET_GET) && old && old->type != OBJ_STRING) {
        store_unlock(s, k.stripe);
        reply_error(c, ERR_WRONGTYPE);
        return;
    }
    if (flags & SET_GET) {
        if (old)
            reply_item_value(c, old);
        else
            reply_null(c);
    }
    if (((flags & SET_NX) && old) || ((flags & SET_XX) && !old)) {
        store_unlock(s, k.stripe);
        if (reply_int_)
            reply_int(c, 0);
        else if (!(flags & SET_GET))
            reply_null(c);
        return;
    }
    exp = (flags & SET_EXPIRE) ? when : ((flags & SET_KEEPTTL) && old) ? item_expire(old) : 0;
    struct item *it = strval_set_locked(s, &k, old, pos, v->p, v->n, 0, exp, 0, 1);
    if (!it) {
        store_unlock(s, k.stripe);
        if (!(flags & SET_GET))
            reply_error(c, "ERR out of memory");
        return;
    }
    cmd_modified(c, &k, it);
    /* SET ... KEEPTTL goes as it came, as Redis propagates it (the state form otherwise) */
    if ((flags & (SET_KEEPTTL | SET_GET)) == SET_KEEPTTL && !item_mcflags(it) &&
        !item_cas_field(it))
        cmd_propagate(c, c->argc, c->argv);
    if (!old)
        notify_event(NOTIFY_NEW, "new", &k);
    notify_event(NOTIFY_STRING, "set", &k);
    if (flags & SET_EXPIRE)
        notify_event(NOTIFY_GENERIC, "expire", &k);
    store_unlock(s, k.stripe);
    if (reply_int_)
        reply_int(c, 1);
    else if (!(flags & SET_GET))
        reply_ok(c);
}

static void set_command(struct conn *c)
{
    int flags = 0;
    int64_t when = 0;

    for (int i = 3; i < c->argc; i++) {
        int has_next = i + 1 < c->argc;
        if (arg_is(c, i, "nx") && !(flags & SET_XX)) {
            flags |= SET_NX;
        } else if (arg_is(c, i, "xx") && !(flags & SET_NX)) {
            flags |= SET_XX;
        } else if (arg_is(c, i, "get")) {
            flags |= SET_GET;
        } else if (arg_is(c, i, "keepttl") && !(flags & SET_EXPIRE)) {
            flags |= SET_KEEPTTL;
        } else if (has_next && !(flags & (SET_EXPIRE | SET_KEEPTTL)) &&
                   (arg_is(c, i, "ex") || arg_is(c, i, "px") || arg_is(c, i, "exat") ||
                    arg_is(c, i, "pxat"))) {
            /* Redis checks the syntax of every option before parsing the number */
            flags |= SET_EXPIRE;
            i++;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (flags & SET_EXPIRE) {
        for (int i = 3; i < c->argc; i++) {
            if (arg_is(c, i, "ex") || arg_is(c, i, "px") || arg_is(c, i, "exat") ||
                arg_is(c, i, "pxat")) {
                int unit = (c->argv[i].p[0] | 0x20) == 'e' ? 1000 : 1;
                int abs = c->argv[i].n == 4;
                if (parse_expire(c, i + 1, unit, abs, "set", &when))
                    return;
                break;
            }
        }
    }
    set_generic(c, flags, when, 1, 2, 0);
}

static void setnx_command(struct conn *c)
{
    set_generic(c, SET_NX, 0, 1, 2, 1);
}

static void setex_command(struct conn *c)
{
    int64_t when;
    int ms = c->argv[0].n == 6; /* psetex */

    if (parse_expire(c, 2, ms ? 1 : 1000, 0, ms ? "psetex" : "setex", &when))
        return;
    set_generic(c, SET_EXPIRE, when, 1, 3, 0);
}

static void getset_command(struct conn *c)
{
    set_generic(c, SET_GET, 0, 1, 2, 0);
}

static void get_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!it)
        reply_null(c);
    else if (it->type != OBJ_STRING)
        reply_error(c, ERR_WRONGTYPE);
    else
        reply_item_value(c, it);
    store_unlock(s, k.stripe);
}

static void getdel_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!it) {
        reply_null(c);
    } else if (!not_string(c, it)) {
        reply_item_value(c, it);
        store_delete_locked(s, &k, conn_now(c));
        cmd_modified(c, &k, NULL);
        notify_event(NOTIFY_GENERIC, "del", &k);
    }
    store_unlock(s, k.stripe);
}

static void getex_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int64_t when = 0;
    int persist = 0, have = 0;

    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "persist") && !have) {
            persist = have = 1;
        } else if (i + 1 < c->argc && !have &&
                   (arg_is(c, i, "ex") || arg_is(c, i, "px") || arg_is(c, i, "exat") ||
                    arg_is(c, i, "pxat"))) {
            int unit = (c->argv[i].p[0] | 0x20) == 'e' ? 1000 : 1;
            int abs = c->argv[i].n == 4;
            if (parse_expire(c, i + 1, unit, abs, "getex", &when))
                return;
            have = 1;
            i++;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!it) {
        reply_null(c);
    } else if (!not_string(c, it)) {
        reply_item_value(c, it);
        if (when && when <= conn_now(c)) {
            store_delete_locked(s, &k, conn_now(c));
            cmd_modified(c, &k, NULL);
            notify_event(NOTIFY_GENERIC, "del", &k);
        } else if (when || (persist && item_expire(it))) {
            struct item *n = store_set_expire_locked(s, &k, it, when);
            if (n) {
                cmd_modified(c, &k, n);
                notify_event(NOTIFY_GENERIC, when ? "expire" : "persist", &k);
            }
        }
    }
    store_unlock(s, k.stripe);
}

static void mget_command(struct conn *c)
{
    struct store *s = conn_store(c);
    int n = c->argc - 1;
    struct skey *keys = keyset_resolve(c, 1, 1, n);

    if (!keys)
        return;
    store_lock_keys(s, keys, n);
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        struct item *it = store_lookup_read_locked(s, &keys[i], conn_now(c));
        if (!it || it->type != OBJ_STRING)
            reply_null(c);
        else
            reply_item_value(c, it);
    }
    store_unlock_keys(s, keys, n);
}

static void mset_generic(struct conn *c, int nx)
{
    struct store *s = conn_store(c);
    int n = (c->argc - 1) / 2;
    struct skey *keys;
    int ok = 1;

    if ((c->argc - 1) % 2) {
        reply_arity_error(c, nx ? "msetnx" : "mset");
        return;
    }
    keys = keyset_resolve(c, 1, 2, n);
    if (!keys)
        return;
    store_lock_keys(s, keys, n);
    if (nx) {
        for (int i = 0; i < n && ok; i++)
            if (store_lookup_write_locked(s, &keys[i], conn_now(c)))
                ok = 0;
    }
    for (int i = 0; i < n && ok; i++) {
        const struct slice *v = &c->argv[2 + i * 2];
        int isnew = TC_UNLIKELY(cfg.notify_keyspace_events & NOTIFY_NEW) &&
                    !store_lookup_write_locked(s, &keys[i], conn_now(c));
        struct item *it = strval_put_locked(s, &keys[i], NULL, v->p, v->n);
        if (!it) {
            store_unlock_keys(s, keys, n);
            reply_error(c, "ERR out of memory");
            return;
        }
        cmd_modified(c, &keys[i], it);
        if (isnew)
            notify_event(NOTIFY_NEW, "new", &keys[i]);
        notify_event(NOTIFY_STRING, "set", &keys[i]);
    }
    store_unlock_keys(s, keys, n);
    if (nx)
        reply_int(c, ok);
    else
        reply_ok(c);
}

static void mset_command(struct conn *c)
{
    mset_generic(c, 0);
}

static void msetnx_command(struct conn *c)
{
    mset_generic(c, 1);
}

static void incr_generic(struct conn *c, long long delta)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long v = 0;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out;
    int isnew = !it;
    switch (strval_incr_locked(s, &k, &it, delta, &v)) {
    case STRVAL_OK:
        cmd_modified(c, &k, it);
        if (isnew)
            notify_event(NOTIFY_NEW, "new", &k);
        notify_event(NOTIFY_STRING, "incrby", &k);
        reply_int(c, v);
        break;
    case STRVAL_NOT_NUMBER:
        reply_error(c, ERR_NOTINT);
        break;
    case STRVAL_OVERFLOW:
        reply_error(c, ERR_OVERFLOW);
        break;
    default:
        reply_error(c, "ERR out of memory");
        break;
    }
out:
    store_unlock(s, k.stripe);
}

static void incr_command(struct conn *c)
{
    incr_generic(c, 1);
}

static void decr_command(struct conn *c)
{
    incr_generic(c, -1);
}

static void incrby_command(struct conn *c)
{
    long long d;
    if (arg_ll(c, 2, &d, NULL))
        return;
    incr_generic(c, d);
}

static void decrby_command(struct conn *c)
{
    long long d;
    if (arg_ll(c, 2, &d, NULL))
        return;
    if (d == LLONG_MIN) {
        reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -d);
}

static void incrbyfloat_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long double v = 0, d;
    char buf[5200];
    int n;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out; /* as Redis: the type, then the value, then the increment */
    if ((it && !util_str2ld(item_value(it), item_vlen(it), &v)) ||
        !util_str2ld(c->argv[2].p, c->argv[2].n, &d)) {
        reply_error(c, ERR_NOTFLOAT);
        goto out;
    }
    v += d;
    if (isnan(v) || isinf(v)) {
        reply_error(c, "ERR increment would produce NaN or Infinity");
        goto out;
    }
    n = util_ld2str(buf, sizeof(buf), v);
    int isnew = !it;
    if (!(it = strval_put_locked(s, &k, it, buf, (size_t)n))) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    cmd_modified(c, &k, it);
    if (!item_mcflags(it) && !item_cas_field(it) && cmd_prop_begin(c, 4)) {
        /* as Redis 7.0: SET key <result> KEEPTTL (a memcached item's flags and CAS value
         * go by its table rule's TC.MCSET instead) */
        cmd_prop_arg(c, "SET", 3);
        cmd_prop_arg(c, k.p, k.n);
        cmd_prop_arg(c, buf, (size_t)n);
        cmd_prop_arg(c, "KEEPTTL", 7);
        cmd_prop_end(c);
    }
    if (isnew)
        notify_event(NOTIFY_NEW, "new", &k);
    notify_event(NOTIFY_STRING, "incrbyfloat", &k);
    reply_bulk(c, buf, (size_t)n);
out:
    store_unlock(s, k.stripe);
}

static void append_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    const struct slice *v = &c->argv[2];
    size_t total;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out;
    if (!it) {
        if ((it = strval_put_locked(s, &k, NULL, v->p, v->n))) {
            cmd_modified(c, &k, it);
            notify_event(NOTIFY_NEW, "new", &k);
            notify_event(NOTIFY_STRING, "append", &k);
            reply_int(c, (long long)v->n);
        } else {
            reply_error(c, "ERR out of memory");
        }
        goto out;
    }
    total = (size_t)item_vlen(it) + v->n;
    if ((long long)total > cfg.proto_max_bulk_len) {
        reply_error(c, ERR_BIGSTR);
        goto out;
    }
    if (strval_concat_locked(s, &k, &it, v->p, v->n, 0)) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    cmd_modified(c, &k, it);
    notify_event(NOTIFY_STRING, "append", &k);
    reply_int(c, (long long)total);
out:
    store_unlock(s, k.stripe);
}

static void strlen_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!not_string(c, it))
        reply_int(c, it ? (long long)item_vlen(it) : 0);
    store_unlock(s, k.stripe);
}

static void getrange_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long start, end, len;

    if (arg_ll(c, 2, &start, NULL) || arg_ll(c, 3, &end, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out;
    len = it ? item_vlen(it) : 0;
    if (start < 0 && end < 0 && start > end) {
        reply_bulk(c, "", 0);
        goto out;
    }
    if (start < 0)
        start += len;
    if (end < 0)
        end += len;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= len)
        end = len - 1;
    if (start > end || len == 0)
        reply_bulk(c, "", 0);
    else
        reply_bulk(c, item_value(it) + start, (size_t)(end - start + 1));
out:
    store_unlock(s, k.stripe);
}

static void setrange_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long off;
    const struct slice *v = &c->argv[3];
    size_t total;

    if (arg_ll(c, 2, &off, NULL))
        return;
    if (off < 0) {
        reply_error(c, "ERR offset is out of range");
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out;
    if (v->n == 0) {
        reply_int(c, it ? (long long)item_vlen(it) : 0);
        goto out;
    }
    if ((unsigned long long)off + v->n > (unsigned long long)cfg.proto_max_bulk_len) {
        reply_error(c, ERR_BIGSTR);
        goto out;
    }
    total = (size_t)off + v->n;
    if (it && total <= item_vlen(it) && item_writable(it)) {
        strval_overwrite(it, (size_t)off, v->p, v->n);
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_STRING, "setrange", &k);
        total = item_vlen(it);
    } else {
        size_t oldlen = it ? item_vlen(it) : 0;
        if (total < oldlen)
            total = oldlen;
        struct item *n = strval_create_like(&k, it, NULL, total, 0);
        if (!n) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        memset(item_value(n), 0, total);
        if (it)
            memcpy(item_value(n), item_value(it), oldlen);
        memcpy(item_value(n) + off, v->p, v->n);
        if (store_put_locked(s, &k, n)) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        cmd_modified(c, &k, n);
        if (!it)
            notify_event(NOTIFY_NEW, "new", &k);
        notify_event(NOTIFY_STRING, "setrange", &k);
    }
    reply_int(c, (long long)total);
out:
    store_unlock(s, k.stripe);
}

static struct cmd cmds[] = {
    {"get", get_command, 2, "readonly fast", "@string", "RO,access index:1 range:0,1,0", "string", "Get the value of a key"},
    {"set", set_command, -3, "write denyoom tc:prop-argv3 tc:signals", "@string", "RW,access,update,variable_flags index:1 range:0,1,0", "string", "Set the string value of a key", NULL, cmd_getkeys_set},
    {"setnx", setnx_command, 3, "write denyoom fast tc:signals", "@string", "OW,insert index:1 range:0,1,0", "string", "Set the value of a key, only if the key does not exist"},
    {"setex", setex_command, 4, "write denyoom tc:prop-state tc:signals", "@string", "OW,update index:1 range:0,1,0", "string", "Set the value and expiration of a key"},
    {"psetex", setex_command, 4, "write denyoom tc:prop-state tc:signals", "@string", "OW,update index:1 range:0,1,0", "string", "Set the value and expiration in milliseconds of a key"},
    {"getset", getset_command, 3, "write denyoom fast tc:prop-state tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Set the string value of a key and return its old value"},
    {"getdel", getdel_command, 2, "write fast tc:prop-state tc:signals", "@string", "RW,access,delete index:1 range:0,1,0", "string", "Get the value of a key and delete the key"},
    {"getex", getex_command, -2, "write fast tc:prop-expire tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Get the value of a key and optionally set its expiration"},
    {"mget", mget_command, -2, "readonly fast", "@string", "RO,access index:1 range:-1,1,0", "string", "Get the values of all the given keys"},
    {"mset", mset_command, -3, "write denyoom tc:signals", "@string", "OW,update index:1 range:-1,2,0", "string", "Set multiple keys to multiple values"},
    {"msetnx", msetnx_command, -3, "write denyoom tc:signals", "@string", "OW,insert index:1 range:-1,2,0", "string", "Set multiple keys to multiple values, only if none of the keys exist"},
    {"incr", incr_command, 2, "write denyoom fast tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Increment the integer value of a key by one"},
    {"decr", decr_command, 2, "write denyoom fast tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Decrement the integer value of a key by one"},
    {"incrby", incrby_command, 3, "write denyoom fast tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Increment the integer value of a key by the given amount"},
    {"decrby", decrby_command, 3, "write denyoom fast tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Decrement the integer value of a key by the given number"},
    {"incrbyfloat", incrbyfloat_command, 3, "write denyoom fast tc:prop-state tc:signals", "@string", "RW,access,update index:1 range:0,1,0", "string", "Increment the float value of a key by the given amount"},
    {"append", append_command, 3, "write denyoom fast tc:signals", "@string", "RW,insert index:1 range:0,1,0", "string", "Append a value to a key"},
    {"strlen", strlen_command, 2, "readonly fast", "@string", "RO index:1 range:0,1,0", "string", "Get the length of the value stored in a key"},
    {"getrange", getrange_command, 4, "readonly", "@string", "RO,access index:1 range:0,1,0", "string", "Get a substring of the string stored at a key"},
    {"substr", getrange_command, 4, "readonly", "@string", "RO,access index:1 range:0,1,0", "string", "Get a substring of the string stored at a key"},
    {"setrange", setrange_command, 4, "write denyoom tc:signals", "@string", "RW,update index:1 range:0,1,0", "string", "Overwrite part of a string at key starting at the specified offset"},
};

void cmd_string_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
