/* Key-space commands: DEL UNLINK EXISTS TYPE EXPIRE* TTL PTTL PERSIST RENAME(NX) KEYS SCAN
 * RANDOMKEY TOUCH COPY MOVE OBJECT. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/keyset.h"
#include "core/config.h"

static const char *type_name(int t)
{
    static const char *names[] = {"string", "list", "set", "zset", "hash", "stream"};
    return t >= 0 && t <= 5 ? names[t] : "none";
}

static void del_command(struct conn *c)
{
    struct store *s = conn_store(c);
    int n = c->argc - 1, deleted = 0;
    struct skey *keys = keyset_resolve(c, 1, 1, n);
    /* UNLINK frees costly values in the background, DEL as lazyfree-lazy-user-del says */
    int lazy = c->argv[0].n == 6 ? 1 : cfg.lazyfree_lazy_user_del; /* "unlink" */

    if (!keys)
        return;
    store_lock_keys(s, keys, n);
    for (int i = 0; i < n; i++)
        if (store_delete_lazy_locked(s, &keys[i], conn_now(c), lazy)) {
            cmd_modified(c, &keys[i], NULL);
            notify_event(NOTIFY_GENERIC, "del", &keys[i]);
            deleted++;
        }
    store_unlock_keys(s, keys, n);
    reply_int(c, deleted);
}

/* EXISTS leaves the keys' access time alone (as Redis); TOUCH sets it */
static void exists_generic(struct conn *c, int touch)
{
    struct store *s = conn_store(c);
    int n = c->argc - 1, found = 0;
    struct skey *keys = keyset_resolve(c, 1, 1, n);

    if (!keys)
        return;
    store_lock_keys(s, keys, n);
    for (int i = 0; i < n; i++)
        found += (touch ? store_lookup_read_locked(s, &keys[i], conn_now(c))
                        : store_lookup_notouch_locked(s, &keys[i], conn_now(c))) != NULL;
    store_unlock_keys(s, keys, n);
    reply_int(c, found);
}

static void exists_command(struct conn *c)
{
    exists_generic(c, 0);
}

static void touch_command(struct conn *c)
{
    exists_generic(c, 1);
}

static void type_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_notouch_locked(s, &k, conn_now(c)); /* a miss is a keymiss event */
    reply_status(c, it ? type_name(it->type) : "none");
    store_unlock(s, k.stripe);
}

#define EXP_NX 1
#define EXP_XX 2
#define EXP_GT 4
#define EXP_LT 8

/* EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT */
static void expire_generic(struct conn *c, int unit_ms, int absolute)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long when;
    int flags = 0;
    int64_t now = conn_now(c), cur;
    char name[16];

    for (int i = 3; i < c->argc; i++) {
        if (arg_is(c, i, "nx"))
            flags |= EXP_NX;
        else if (arg_is(c, i, "xx"))
            flags |= EXP_XX;
        else if (arg_is(c, i, "gt"))
            flags |= EXP_GT;
        else if (arg_is(c, i, "lt"))
            flags |= EXP_LT;
        else {
            char opt[128];
            arg_cstr(c, i, opt, sizeof(opt));
            reply_errorf(c, "ERR Unsupported option %s", opt);
            return;
        }
    }
    if ((flags & EXP_NX) && (flags & (EXP_XX | EXP_GT | EXP_LT))) {
        reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EXP_GT) && (flags & EXP_LT)) {
        reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    if (arg_ll(c, 2, &when, NULL))
        return;
    arg_cstr(c, 0, name, sizeof(name));
    for (char *p = name; *p; p++)
        *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
    if (unit_ms == 1000 && (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000)) {
        reply_errorf(c, "ERR invalid expire time in '%s' command", name);
        return;
    }
    when *= unit_ms;
    if (!absolute) {
        if ((when > 0 && now > LLONG_MAX - when) || (when < 0 && now < LLONG_MIN - when)) {
            reply_errorf(c, "ERR invalid expire time in '%s' command", name);
            return;
        }
        when += now;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, now);
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    cur = item_expire(it); /* 0: persistent, i.e. infinite */
    if (((flags & EXP_NX) && cur) || ((flags & EXP_XX) && !cur) ||
        ((flags & EXP_GT) && (!cur || when <= cur)) || ((flags & EXP_LT) && cur && when >= cur)) {
        reply_int(c, 0);
        goto out;
    }
    if (when <= now && !store_no_expire) { /* loading the AOF: the TTL is set all the same */
        store_delete_locked(s, &k, now);
        cmd_modified(c, &k, NULL);
        notify_event(NOTIFY_GENERIC, "del", &k);
        reply_int(c, 1);
        goto out;
    }
    if (!(it = store_set_expire_locked(s, &k, it, when))) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    cmd_modified(c, &k, it);
    notify_event(NOTIFY_GENERIC, "expire", &k);
    reply_int(c, 1);
out:
    store_unlock(s, k.stripe);
}

static void expire_command(struct conn *c)
{
    expire_generic(c, 1000, 0);
}
static void pexpire_command(struct conn *c)
{
    expire_generic(c, 1, 0);
}
static void expireat_command(struct conn *c)
{
    expire_generic(c, 1000, 1);
}
static void pexpireat_command(struct conn *c)
{
    expire_generic(c, 1, 1);
}

/* TTL PTTL EXPIRETIME PEXPIRETIME */
static void ttl_generic(struct conn *c, int ms, int absolute)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int64_t exp;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_notouch_locked(s, &k, conn_now(c));
    if (!it) {
        reply_int(c, -2);
    } else if (!(exp = item_expire(it))) {
        reply_int(c, -1);
    } else if (absolute) {
        reply_int(c, ms ? exp : exp / 1000);
    } else {
        int64_t left = exp - conn_now(c);
        if (left < 0)
            left = 0;
        reply_int(c, ms ? left : (left + 500) / 1000);
    }
    store_unlock(s, k.stripe);
}

static void ttl_command(struct conn *c)
{
    ttl_generic(c, 0, 0);
}
static void pttl_command(struct conn *c)
{
    ttl_generic(c, 1, 0);
}
static void expiretime_command(struct conn *c)
{
    ttl_generic(c, 0, 1);
}
static void pexpiretime_command(struct conn *c)
{
    ttl_generic(c, 1, 1);
}

static void persist_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (it && item_expire(it)) {
        if ((it = store_set_expire_locked(s, &k, it, 0))) {
            cmd_modified(c, &k, it);
            notify_event(NOTIFY_GENERIC, "persist", &k);
        }
        reply_int(c, 1);
    } else {
        reply_int(c, 0);
    }
    store_unlock(s, k.stripe);
}

/* A copy of it under a new key (deep for strings; collections move their pointer when move
 * is set, otherwise they need the type's copier). NULL when out of memory. */
static struct item *item_with_key(struct item *it, const struct skey *nk)
{
    struct item *n = item_create(it->type, nk->p, nk->n, item_vlen(it),
                                 (uint8_t)(it->bits & (IT_TTL | IT_FLAGS)));
    if (!n)
        return NULL;
    n->fetched = it->fetched;
    n->lru = it->lru;
    if (it->bits & IT_TTL)
        item_set_expire_field(n, item_expire(it));
    if (it->bits & IT_FLAGS)
        memcpy(item_opt(n, IT_FLAGS), item_opt(it, IT_FLAGS), 4);
    memcpy(item_value(n), item_value(it), item_vlen(it));
    return n;
}

static void rename_generic(struct conn *c, int nx)
{
    struct store *s = conn_store(c);
    struct skey k[2];
    struct item *it, *n;
    int64_t now = conn_now(c);

    arg_key(c, 1, &k[0]);
    arg_key(c, 2, &k[1]);
    store_lock_keys(s, k, 2);
    it = store_lookup_write_locked(s, &k[0], now);
    if (!it) {
        reply_error(c, ERR_NOKEY);
        goto out;
    }
    if (k[0].n == k[1].n && !memcmp(k[0].p, k[1].p, k[0].n)) {
        if (nx)
            reply_int(c, 0);
        else
            reply_ok(c);
        goto out;
    }
    if (nx && store_lookup_write_locked(s, &k[1], now)) {
        reply_int(c, 0);
        goto out;
    }
    n = item_with_key(it, &k[1]);
    if (!n) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    /* the value structure (collections) moves to n: unlink the old shell without freeing it */
    it = store_unlink_locked(s, &k[0], now);
    it->type = OBJ_STRING;
    item_release(it);
    cmd_modified(c, &k[0], NULL);
    if (store_put_locked(s, &k[1], n)) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    cmd_modified(c, &k[1], n);
    notify_event(NOTIFY_NEW, "new", &k[1]);
    notify_event(NOTIFY_GENERIC, "rename_from", &k[0]);
    notify_event(NOTIFY_GENERIC, "rename_to", &k[1]);
    if (nx)
        reply_int(c, 1);
    else
        reply_ok(c);
out:
    store_unlock_keys(s, k, 2);
}

static void rename_command(struct conn *c)
{
    rename_generic(c, 0);
}
static void renamenx_command(struct conn *c)
{
    rename_generic(c, 1);
}

static value_copy_fn *copiers[8];
void cmd_keys_set_copier(int type, value_copy_fn *fn)
{
    copiers[type & 7] = fn;
}

static void copy_move(struct conn *c, int move)
{
    struct store *s = conn_store(c);
    struct skey k[2];
    struct item *it, *n;
    long long db = c->db;
    int replace = 0;
    int64_t now = conn_now(c);

    if (move) {
        if (arg_ll(c, 2, &db, NULL))
            return;
        if (db < 0 || db >= cfg.databases) {
            reply_error(c, ERR_DBRANGE);
            return;
        }
        if (db == c->db) {
            reply_error(c, "ERR source and destination objects are the same");
            return;
        }
    } else {
        for (int i = 3; i < c->argc; i++) {
            if (arg_is(c, i, "replace")) {
                replace = 1;
            } else if (arg_is(c, i, "db") && i + 1 < c->argc) {
                if (arg_ll(c, ++i, &db, NULL))
                    return;
                if (db < 0 || db >= cfg.databases) {
                    reply_error(c, ERR_DBRANGE);
                    return;
                }
            } else {
                reply_error(c, ERR_SYNTAX);
                return;
            }
        }
    }
    arg_key(c, 1, &k[0]);
    store_key(s, &k[1], (int)db, c->argv[move ? 1 : 2].p, c->argv[move ? 1 : 2].n);
    if (!move && db == c->db && k[0].n == k[1].n && !memcmp(k[0].p, k[1].p, k[0].n)) {
        reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    store_lock_keys(s, k, 2);
    it = store_lookup_write_locked(s, &k[0], now);
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    if (store_lookup_write_locked(s, &k[1], now) && !replace) {
        reply_int(c, 0);
        goto out;
    }
    n = item_with_key(it, &k[1]);
    if (!n) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    if (move) {
        it = store_unlink_locked(s, &k[0], now);
        it->type = OBJ_STRING; /* the structure moved to n */
        item_release(it);
        cmd_modified(c, &k[0], NULL);
    } else if (n->type != OBJ_STRING) {
        void *copy = copiers[n->type & 7] ? copiers[n->type & 7](item_ptr(it)) : NULL;
        if (!copy) {
            n->type = OBJ_STRING;
            item_release(n);
            reply_error(c, "ERR out of memory");
            goto out;
        }
        memcpy(item_value(n), &copy, sizeof(copy));
    }
    if (store_put_locked(s, &k[1], n)) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    cmd_modified(c, &k[1], n);
    notify_event(NOTIFY_NEW, "new", &k[1]);
    if (move) {
        notify_event(NOTIFY_GENERIC, "move_from", &k[0]);
        notify_event(NOTIFY_GENERIC, "move_to", &k[1]);
    } else {
        notify_event(NOTIFY_GENERIC, "copy_to", &k[1]);
    }
    reply_int(c, 1);
out:
    store_unlock_keys(s, k, 2);
}

static void copy_command(struct conn *c)
{
    copy_move(c, 0);
}
static void move_command(struct conn *c)
{
    copy_move(c, 1);
}

/* ---- KEYS / SCAN ---- */

struct collect {
    struct conn *c;
    struct buf out;     /* bulk replies, built while the stripe is locked */
    long long n;
    const char *pat;
    size_t plen;
    int type;           /* -1: any */
};

static int collect_key(struct item *it, void *arg)
{
    struct collect *a = arg;
    const char *k = item_key(it);
    size_t kl = item_klen(it);

    if (a->type >= 0 && it->type != a->type)
        return 0;
    if (a->pat && !(a->plen == 1 && a->pat[0] == '*') &&
        !util_glob_match(a->pat, a->plen, k, kl, 0))
        return 0;
    if (resp_add_bulk(&a->out, k, kl))
        return 1;
    a->n++;
    return 0;
}

static void keys_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct collect a = {c, {0}, 0, c->argv[1].p, c->argv[1].n, -1};

    for (uint32_t i = 0; i < s->nstripes; i++)
        store_visit_stripe(s, c->db, i, conn_now(c), collect_key, &a);
    reply_array(c, a.n);
    reply_raw(c, a.out.data ? a.out.data : "", buf_len(&a.out));
    buf_deinit(&a.out);
}

static int type_from_name(struct conn *c, int i)
{
    static const char *names[] = {"string", "list", "set", "zset", "hash", "stream"};
    for (int t = 0; t < 6; t++)
        if (arg_is(c, i, names[t]))
            return t;
    return 99; /* unknown types match nothing, like Redis */
}

static void scan_command(struct conn *c)
{
    struct store *s = conn_store(c);
    unsigned long long cursor;
    long long count = 10;
    struct collect a = {c, {0}, 0, NULL, 0, -1};

    if (!util_str2ull(c->argv[1].p, c->argv[1].n, &cursor)) {
        reply_error(c, "ERR invalid cursor");
        return;
    }
    for (int i = 2; i < c->argc; i += 2) {
        if (i + 1 >= c->argc) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (arg_is(c, i, "count")) {
            if (arg_ll(c, i + 1, &count, NULL))
                return;
            if (count < 1) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
        } else if (arg_is(c, i, "match")) {
            a.pat = c->argv[i + 1].p;
            a.plen = c->argv[i + 1].n;
        } else if (arg_is(c, i, "type")) {
            a.type = type_from_name(c, i + 1);
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    /* The cursor is a stripe index; each stripe is visited whole under its lock, so every key
     * present for the whole scan is returned. Visiting at least count keys' worth of stripes
     * per call keeps calls cheap and bounded. */
    uint32_t st = cursor >= s->nstripes ? s->nstripes : (uint32_t)cursor;
    long long visited = 0;
    while (st < s->nstripes && visited < count) {
        uint32_t n = __atomic_load_n(&s->stripes[st].db[c->db].count, __ATOMIC_RELAXED);
        /* an empty stripe costs one load: a small keyspace comes whole in one call, as from
         * Redis's table sized to the keyspace */
        if (n) {
            visited += n;
            store_expire_stripe(s, c->db, st, conn_now(c)); /* as Redis's SCAN: met, expired */
            store_visit_stripe(s, c->db, st, conn_now(c), collect_key, &a);
        }
        st++;
    }
    if (st >= s->nstripes)
        st = 0;
    reply_array(c, 2);
    reply_bulk_ll(c, st);
    reply_array(c, a.n);
    reply_raw(c, a.out.data ? a.out.data : "", buf_len(&a.out));
    buf_deinit(&a.out);
}

static void randomkey_command(struct conn *c)
{
    struct buf k = {0};

    if (store_random_key(conn_store(c), c->db, conn_now(c), &k))
        reply_null(c);
    else
        reply_bulk(c, k.data, buf_len(&k));
    buf_deinit(&k);
}

/* ---- OBJECT ---- */

static encoding_fn *encoders[8];
void cmd_keys_set_encoder(int type, encoding_fn *fn)
{
    encoders[type & 7] = fn;
}

static const char *string_encoding(struct item *it)
{
    long long v;
    if (item_vlen(it) <= 20 && util_str2ll(item_value(it), item_vlen(it), &v))
        return "int";
    return item_vlen(it) <= 44 ? "embstr" : "raw";
}

static int lfu_policy(void)
{
    return cfg.maxmemory_policy == MM_ALLKEYS_LFU || cfg.maxmemory_policy == MM_VOLATILE_LFU;
}

const char *cmd_object_encoding(struct item *it)
{
    return it->type == OBJ_STRING ? string_encoding(it)
           : encoders[it->type & 7] ? encoders[it->type & 7](it) : "unknown";
}

/* As Redis: integers 0..9999 are one shared object, reported with refcount INT_MAX, unless
 * maxmemory evicts by LRU or LFU (each value then has its own). */
int cmd_object_refcount(struct item *it)
{
    long long v;
    int lru_lfu = cfg.maxmemory_policy != MM_NOEVICTION &&
                  cfg.maxmemory_policy != MM_ALLKEYS_RANDOM &&
                  cfg.maxmemory_policy != MM_VOLATILE_RANDOM &&
                  cfg.maxmemory_policy != MM_VOLATILE_TTL;
    int shared = it->type == OBJ_STRING && !strcmp(string_encoding(it), "int") &&
                 util_str2ll(item_value(it), item_vlen(it), &v) && v >= 0 && v < 10000 &&
                 (cfg.maxmemory == 0 || !lru_lfu);
    return shared ? 2147483647 : 1;
}

static void object_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    if (arg_is(c, 1, "help")) {
        static const char *help[] = {
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>", "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>", "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>", "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>", "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP", "    Print this help."};
        reply_help(c, help);
        return;
    }
    if (c->argc != 3 || !(arg_is(c, 1, "encoding") || arg_is(c, 1, "freq") ||
                          arg_is(c, 1, "idletime") || arg_is(c, 1, "refcount"))) {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try OBJECT HELP.", sub);
        return;
    }
    arg_key(c, 2, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (!it) {
        reply_null(c);
    } else if (arg_is(c, 1, "encoding")) {
        reply_cstr(c, cmd_object_encoding(it));
    } else if (arg_is(c, 1, "freq")) {
        if (!lfu_policy())
            reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not "
                           "tracked. Please note that when switching between policies at runtime "
                           "LRU and LFU data will take some time to adjust.");
        else
            reply_int(c, store_lfu_freq(it));
    } else if (arg_is(c, 1, "idletime")) {
        if (lfu_policy()) {
            reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. "
                           "Please note that when switching between policies at runtime LRU and "
                           "LFU data will take some time to adjust.");
        } else {
            reply_int(c, store_idle_seconds(it));
        }
    } else {
        reply_int(c, cmd_object_refcount(it));
    }
    store_unlock(s, k.stripe);
}

static struct cmd object_subs[] = {
    {"object|encoding", object_command, 3, "readonly", "@keyspace", "RO index:2 range:0,1,0", "generic", "Internal representation of a key's value"},
    {"object|freq", object_command, 3, "readonly", "@keyspace", "RO index:2 range:0,1,0", "generic", "A key's LFU access counter"},
    {"object|idletime", object_command, 3, "readonly", "@keyspace", "RO index:2 range:0,1,0", "generic", "Seconds since a key was last accessed"},
    {"object|refcount", object_command, 3, "readonly", "@keyspace", "RO index:2 range:0,1,0", "generic", "Reference count of a key's value"},
    {"object|help", object_command, 2, "loading stale", "@keyspace", NULL, "generic", "List the OBJECT subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"del", del_command, -2, "write tc:signals", "@keyspace", "RM,delete index:1 range:-1,1,0", "generic", "Delete a key"},
    {"unlink", del_command, -2, "write fast tc:signals", "@keyspace", "RM,delete index:1 range:-1,1,0", "generic", "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking."},
    {"exists", exists_command, -2, "readonly fast", "@keyspace", "RO index:1 range:-1,1,0", "generic", "Determine if a key exists"},
    {"touch", touch_command, -2, "readonly fast", "@keyspace", "RO index:1 range:-1,1,0", "generic", "Alters the last access time of a key(s). Returns the number of existing keys specified."},
    {"type", type_command, 2, "readonly fast", "@keyspace", "RO index:1 range:0,1,0", "generic", "Determine the type stored at key"},
    {"expire", expire_command, -3, "write fast tc:prop-expire tc:signals", "@keyspace", "RW,update index:1 range:0,1,0", "generic", "Set a key's time to live in seconds"},
    {"pexpire", pexpire_command, -3, "write fast tc:prop-expire tc:signals", "@keyspace", "RW,update index:1 range:0,1,0", "generic", "Set a key's time to live in milliseconds"},
    {"expireat", expireat_command, -3, "write fast tc:prop-expire tc:signals", "@keyspace", "RW,update index:1 range:0,1,0", "generic", "Set the expiration for a key as a UNIX timestamp"},
    {"pexpireat", pexpireat_command, -3, "write fast tc:prop-expire tc:signals", "@keyspace", "RW,update index:1 range:0,1,0", "generic", "Set the expiration for a key as a UNIX timestamp specified in milliseconds"},
    {"ttl", ttl_command, 2, "readonly fast", "@keyspace", "RO,access index:1 range:0,1,0", "generic", "Get the time to live for a key in seconds"},
    {"pttl", pttl_command, 2, "readonly fast", "@keyspace", "RO,access index:1 range:0,1,0", "generic", "Get the time to live for a key in milliseconds"},
    {"expiretime", expiretime_command, 2, "readonly fast", "@keyspace", "RO,access index:1 range:0,1,0", "generic", "Get the expiration Unix timestamp for a key"},
    {"pexpiretime", pexpiretime_command, 2, "readonly fast", "@keyspace", "RO,access index:1 range:0,1,0", "generic", "Get the expiration Unix timestamp for a key in milliseconds"},
    {"persist", persist_command, 2, "write fast tc:signals", "@keyspace", "RW,update index:1 range:0,1,0", "generic", "Remove the expiration from a key"},
    {"rename", rename_command, 3, "write tc:signals", "@keyspace", "RW,access,delete index:1 range:0,1,0; OW,update index:2 range:0,1,0", "generic", "Rename a key"},
    {"renamenx", renamenx_command, 3, "write fast tc:signals", "@keyspace", "RW,access,delete index:1 range:0,1,0; OW,insert index:2 range:0,1,0", "generic", "Rename a key, only if the new key does not exist"},
    {"copy", copy_command, -3, "write denyoom tc:signals", "@keyspace", "RO,access index:1 range:0,1,0; OW,update index:2 range:0,1,0", "generic", "Copy a key"},
    {"move", move_command, 3, "write fast tc:signals", "@keyspace", "RW,access,update index:1 range:0,1,0", "generic", "Move a key to another database"},
    {"keys", keys_command, 2, "readonly", "@keyspace @dangerous", NULL, "generic", "Find all keys matching the given pattern"},
    {"scan", scan_command, -2, "readonly", "@keyspace", NULL, "generic", "Incrementally iterate the keys space"},
    {"randomkey", randomkey_command, 1, "readonly", "@keyspace", NULL, "generic", "Return a random key from the keyspace"},
    {"object", object_command, -2, "", "", NULL, "generic", "A container for object introspection commands", object_subs},
};

void cmd_keys_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
