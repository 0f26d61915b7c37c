/* DEBUG: the subcommands operators and test tools use, as Redis 7.0 answers them. POPULATE,
 * RELOAD (save, empty, load the RDB file again), OBJECT (a key's internals in Redis's line),
 * DIGEST / DIGEST-VALUE (a fingerprint of the dataset or of values: equal data gives equal
 * digests whatever the history, encoding or worker count; twincache's own function, so the
 * hex differs from Redis's), PROTOCOL (each RESP type, for client tests), SLEEP,
 * SET-ACTIVE-EXPIRE, ERROR, LOG. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/blocking.h"
#include "cmd/cmd.h"
#include "cmd/persist.h"
#include "cmd/repl.h"
#include "cmd/tracking.h"
#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "store/lpack.h"
#include "store/strval.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_zset.h"

_Atomic int cmd_script_deny_off;

/* DEBUG POPULATE count [prefix] [size]: keys prefix:N with "value:N" (padded with zero bytes
 * or cut to size when given); existing keys are left alone, as Redis. */

static void debug_populate(struct conn *c)
{
    struct store *s = conn_store(c);
    long long count, size = -1;
    char prefix[128] = "key", key[192], val[64];

    if (!util_str2ll(c->argv[2].p, c->argv[2].n, &count) || count < 0) {
        reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    if (c->argc > 3)
        arg_cstr(c, 3, prefix, sizeof(prefix));
    if (c->argc > 4) {
        if (!util_str2ll(c->argv[4].p, c->argv[4].n, &size) || size < 0) {
            reply_error(c, "ERR value is out of range, must be positive");
            return;
        }
        if (size > (1LL << 30)) {
            reply_error(c, "ERR value is out of range");
            return;
        }
    }
    char *pad = size > 0 ? calloc(1, (size_t)size) : NULL;
    if (size > 0 && !pad) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (long long i = 0; i < count; i++) {
        struct skey k;
        struct item *it;
        int kn = snprintf(key, sizeof(key), "%s:%lld", prefix, i);
        int vn = snprintf(val, sizeof(val), "value:%lld", i);
        const char *v = val;
        size_t vlen = (size_t)vn;
        if (size >= 0) {
            memcpy(pad, val, (size_t)vn < (size_t)size ? (size_t)vn : (size_t)size);
            v = pad;
            vlen = (size_t)size;
        }
        store_key(s, &k, c->db, key, (size_t)kn);
        store_lock(s, k.stripe);
        it = store_lookup_write_locked(s, &k, conn_now(c));
        if (!it && (it = strval_put_locked(s, &k, NULL, v, vlen)) != NULL)
            cmd_modified(c, &k, it);
        store_unlock(s, k.stripe);
        if (size > 0)
            memset(pad, 0, (size_t)size);
    }
    free(pad);
    reply_ok(c);
}

/* ---- DIGEST ---- */

/* A digest: 160 bits kept as three 64-bit words (the last one's high half printed). */
struct dg {
    uint64_t w[3];
};

struct dgs {
    XXH3_state_t a, b;
};

static void dgs_init(struct dgs *s, uint64_t tag)
{
    memset(s, 0, sizeof(*s));
    XXH3_128bits_reset_withSeed(&s->a, tag);
    XXH3_64bits_reset_withSeed(&s->b, tag ^ 0x5bd1e9955bd1e995ULL);
}

static void dgs_feed(struct dgs *s, const void *p, size_t n)
{
    XXH3_128bits_update(&s->a, p, n);
    XXH3_64bits_update(&s->b, p, n);
}

/* an element: its length first, so ("ab","c") and ("a","bc") differ */
static void dgs_elem(struct dgs *s, const void *p, size_t n)
{
    uint64_t l = n;
    dgs_feed(s, &l, sizeof(l));
    dgs_feed(s, p, n);
}

static struct dg dgs_end(struct dgs *s)
{
    XXH128_hash_t h = XXH3_128bits_digest(&s->a);
    struct dg d = {{h.low64, h.high64, XXH3_64bits_digest(&s->b)}};
    return d;
}

static void dg_add(struct dg *acc, const struct dg *d)
{
    for (int i = 0; i < 3; i++)
        acc->w[i] += d->w[i];
}

static int dg_zero(const struct dg *d)
{
    return !d->w[0] && !d->w[1] && !d->w[2];
}

static void dg_hex(const struct dg *d, char out[41])
{
    snprintf(out, 41, "%016llx%016llx%08llx", (unsigned long long)d->w[0],
             (unsigned long long)d->w[1], (unsigned long long)(d->w[2] >> 32));
}

/* Members of a set or fields of a hash: the sum of their digests, so the order they are
 * stored in does not matter. */
static struct dg dg_pair(const char *f, size_t fn, const char *v, size_t vn)
{
    struct dgs s;
    dgs_init(&s, 1);
    dgs_elem(&s, f, fn);
    if (v)
        dgs_elem(&s, v, vn);
    return dgs_end(&s);
}

/* The value of it: its type, then its contents (under its stripe lock). */
static struct dg value_digest(struct item *it)
{
    struct dgs s;
    struct dg acc = {{0, 0, 0}};
    uint64_t n = 0;
    void *ptr = it->type == OBJ_STRING ? NULL : item_ptr(it);

    dgs_init(&s, 0);
    dgs_feed(&s, &(uint8_t){(uint8_t)it->type}, 1);
    switch (it->type) {
    case OBJ_STRING:
        dgs_elem(&s, item_value(it), item_vlen(it));
        break;
    case OBJ_LIST: {
        struct tlist *l = ptr;
        for (struct qnode *q = l->head; q; q = q->next) {
            for (uint32_t off = 0; off < lp_end(q->lp); off = lp_next(q->lp, off)) {
                size_t ln;
                const char *p = lp_get(q->lp, off, &ln);
                dgs_elem(&s, p, ln);
            }
        }
        break;
    }
    case OBJ_SET: {
        struct tset_iter si;
        const char *p;
        size_t ln;
        tset_iter_init(&si, ptr);
        while (tset_next(&si, &p, &ln)) {
            struct dg d = dg_pair(p, ln, NULL, 0);
            dg_add(&acc, &d);
            n++;
        }
        dgs_feed(&s, &n, sizeof(n));
        dgs_feed(&s, acc.w, sizeof(acc.w));
        break;
    }
    case OBJ_HASH: {
        struct thash_iter hi;
        const char *f, *v;
        size_t fn, vn;
        thash_iter_init(&hi, ptr);
        while (thash_next(&hi, &f, &fn, &v, &vn)) {
            struct dg d = dg_pair(f, fn, v, vn);
            dg_add(&acc, &d);
            n++;
        }
        dgs_feed(&s, &n, sizeof(n));
        dgs_feed(&s, acc.w, sizeof(acc.w));
        break;
    }
    case OBJ_ZSET: {
        struct tzset *z = ptr;
        unsigned long len = tzset_len(z);
        struct zit zi;
        if (len)
            zit_seek(&zi, z, 0);
        for (unsigned long i = 0; i < len; i++, zit_next(&zi)) {
            size_t ln;
            double sc;
            char num[64];
            const char *p = zit_get(&zi, &ln, &sc);
            int k = snprintf(num, sizeof(num), "%.17g", sc);
            dgs_elem(&s, p, ln);
            dgs_elem(&s, num, (size_t)k);
        }
        break;
    }
    default: {
        /* streams: their serialization (entries, groups and pending lists in ID order) */
        char *out;
        size_t on;
        if (rdb_dump(it, &out, &on) == 0) {
            dgs_elem(&s, out, on > 10 ? on - 10 : on);
            free(out);
        }
        break;
    }
    }
    return dgs_end(&s);
}

struct digest_walk {
    struct dg acc;
    int db;
};

static int digest_visit(struct item *it, void *arg)
{
    struct digest_walk *w = arg;
    struct dg v = value_digest(it);
    int64_t exp = item_expire(it);
    struct dgs s;

    dgs_init(&s, 2);
    dgs_feed(&s, &w->db, sizeof(w->db));
    dgs_elem(&s, item_key(it), item_klen(it));
    dgs_feed(&s, v.w, sizeof(v.w));
    dgs_feed(&s, &exp, sizeof(exp));
    struct dg k = dgs_end(&s);
    dg_add(&w->acc, &k);
    return 0;
}

static void debug_digest(struct conn *c)
{
    struct store *s = conn_store(c);
    struct digest_walk w = {{{0, 0, 0}}, 0};
    uint64_t keys = 0;
    char hex[41];

    for (w.db = 0; w.db < s->ndb; w.db++) {
        if (!store_dbsize(s, w.db))
            continue;
        for (uint32_t i = 0; i < s->nstripes; i++)
            store_visit_stripe(s, w.db, i, conn_now(c), digest_visit, &w);
        keys += store_dbsize(s, w.db);
    }
    if (!keys || dg_zero(&w.acc))
        memset(hex, '0', 40), hex[40] = 0;
    else
        dg_hex(&w.acc, hex);
    reply_status(c, hex);
}

static void debug_digest_value(struct conn *c)
{
    struct store *s = conn_store(c);

    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        struct skey k;
        char hex[41];
        arg_key(c, i, &k);
        store_lock(s, k.stripe);
        /* the key as the table holds it, expired or not, no stats (Redis: a plain dictFind) */
    struct item *it = store_lookup_write_locked(s, &k, 0);
        if (it) {
            struct dg d = value_digest(it);
            dg_hex(&d, hex);
        } else {
            memset(hex, '0', 40);
            hex[40] = 0;
        }
        store_unlock(s, k.stripe);
        reply_status(c, hex);
    }
}

/* ---- OBJECT ---- */

static void debug_object(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    char line[512], *out = NULL;
    size_t on = 0;
    int n;

    arg_key(c, 2, &k);
    store_lock(s, k.stripe);
    /* the key as the table holds it, expired or not, no stats (Redis: a plain dictFind) */
    struct item *it = store_lookup_write_locked(s, &k, 0);
    if (!it) {
        store_unlock(s, k.stripe);
        reply_error(c, "ERR no such key");
        return;
    }
    uint32_t idle = store_idle_seconds(it);
    long long lru = ((long long)(conn_now(c) / 1000) - idle) & 0xffffff;
    size_t ser = rdb_dump(it, &out, &on) == 0 && on >= 11 ? on - 11 : 0;
    free(out);
    n = snprintf(line, sizeof(line),
                 "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%lld "
                 "lru_seconds_idle:%u",
                 (void *)it, cmd_object_refcount(it), cmd_object_encoding(it), ser, lru, idle);
    if (it->type == OBJ_LIST) {
        struct tlist *l = item_ptr(it);
        unsigned long nodes = 0, bytes = 0;
        for (struct qnode *q = l->head; q; q = q->next) {
            nodes++;
            bytes += q->lp->bytes;
        }
        n += snprintf(line + n, sizeof(line) - (size_t)n,
                      " ql_nodes:%lu ql_avg_node:%.2f ql_listpack_max:%d ql_compressed:%d "
                      "ql_uncompressed_size:%lu",
                      nodes, nodes ? (double)l->len / (double)nodes : 0.0,
                      cfg.list_max_listpack_size, cfg.list_compress_depth != 0, bytes);
    }
    store_unlock(s, k.stripe);
    reply_status(c, line);
}

/* ---- RELOAD ---- */

static void debug_reload(struct conn *c)
{
    int save = 1, flush = 1, merge = 0;
    char err[256];

    for (int i = 2; i < c->argc; i++) {
        if (arg_is(c, i, "merge")) {
            merge = 1;
        } else if (arg_is(c, i, "noflush")) {
            flush = 0;
        } else if (arg_is(c, i, "nosave")) {
            save = 0;
        } else {
            reply_error(c, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    int rc = persist_reload(save, flush, merge, err, sizeof(err));
    if (flush) {
        tracking_flush();
        block_signal_flush(-1);
    }
    if (rc == PERSIST_OK)
        reply_ok(c);
    else if (err[0])
        reply_error(c, "ERR Error trying to load the RDB dump");
    else
        reply_error(c, "ERR");
}

/* ---- PROTOCOL ---- */

static void debug_protocol(struct conn *c)
{
    int r3 = c->resp >= 3;

    if (arg_is(c, 2, "string")) {
        reply_lit(c, "$11\r\nHello World\r\n");
    } else if (arg_is(c, 2, "integer")) {
        reply_lit(c, ":12345\r\n");
    } else if (arg_is(c, 2, "double")) {
        if (r3)
            reply_lit(c, ",3.141\r\n");
        else
            reply_lit(c, "$5\r\n3.141\r\n");
    } else if (arg_is(c, 2, "bignum")) {
        if (r3)
            reply_lit(c, "(1234567999999999999999999999999999999\r\n");
        else
            reply_lit(c, "$37\r\n1234567999999999999999999999999999999\r\n");
    } else if (arg_is(c, 2, "null")) {
        reply_null(c);
    } else if (arg_is(c, 2, "array")) {
        reply_lit(c, "*3\r\n:0\r\n:1\r\n:2\r\n");
    } else if (arg_is(c, 2, "set")) {
        if (r3)
            reply_lit(c, "~3\r\n:0\r\n:1\r\n:2\r\n");
        else
            reply_lit(c, "*3\r\n:0\r\n:1\r\n:2\r\n");
    } else if (arg_is(c, 2, "map")) {
        if (r3)
            reply_lit(c, "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n");
        else
            reply_lit(c, "*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n");
    } else if (arg_is(c, 2, "attrib")) {
        if (r3)
            reply_lit(c, "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n");
        reply_lit(c, "$39\r\nSome real reply following the attribute\r\n");
    } else if (arg_is(c, 2, "push")) {
        if (!r3) {
            reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        reply_lit(c, ">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n");
        reply_lit(c, "$40\r\nSome real reply following the push reply\r\n");
    } else if (arg_is(c, 2, "verbatim")) {
        reply_verbatim(c, "This is a verbatim\nstring", 25);
    } else if (arg_is(c, 2, "true")) {
        reply_bool(c, 1);
    } else if (arg_is(c, 2, "false")) {
        reply_bool(c, 0);
    } else {
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|"
                       "true|false");
    }
}

static void debug_command(struct conn *c)
{
    if (!cmd_protected_allowed(c, cfg.enable_debug_command)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is "
                       "set to \"local\", you can run it from a local connection, otherwise you "
                       "need to set this option in the configuration file, and then restart the "
                       "server.");
        return;
    }
    if (arg_is(c, 1, "replicate") && c->argc >= 3) {
        /* the rest as one command to the replicas alone (tests: a divergence on purpose) */
        repl_feed_argv(c->argc - 2, c->argv + 2);
        reply_ok(c);
    } else if (arg_is(c, 1, "sleep") && c->argc == 3) {
        char v[64];
        arg_cstr(c, 2, v, sizeof(v));
        double secs = atof(v);
        if (secs > 0)
            srv_freeze(c->w, (int64_t)(secs * 1e6)); /* the whole server, as in Redis */
        reply_ok(c);
    } else if (arg_is(c, 1, "quicklist-packed-threshold") && c->argc == 3) {
        char v[64];
        long long sz;
        arg_cstr(c, 2, v, sizeof(v));
        if (!util_parse_memsize(v, &sz) || sz < 0 || sz > (1LL << 32) - (1 << 20)) {
            reply_error(c, "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
            return;
        }
        atomic_store(&tlist_packed_threshold, sz ? (size_t)sz : TLIST_PACKED_DEFAULT);
        reply_ok(c);
    } else if (arg_is(c, 1, "set-disable-deny-scripts") && c->argc == 3) {
        long long on;
        if (arg_ll(c, 2, &on, NULL))
            return;
        atomic_store(&cmd_script_deny_off, on != 0);
        reply_ok(c);
    } else if (arg_is(c, 1, "set-active-expire") && c->argc == 3) {
        long long on;
        if (arg_ll(c, 2, &on, NULL))
            return;
        atomic_store(&store_active_expire, on != 0);
        reply_ok(c);
    } else if (arg_is(c, 1, "pause-cron") && c->argc == 3) {
        long long on;
        if (arg_ll(c, 2, &on, NULL))
            return;
        __atomic_store_n(&net_pause_cron, on != 0, __ATOMIC_RELAXED);
        reply_ok(c);
    } else if (arg_is(c, 1, "replybuffer") && c->argc == 4) {
        if (arg_is(c, 2, "peak-reset-time")) {
            long long ms;
            if (arg_is(c, 3, "never")) {
                ms = -1;
            } else if (arg_is(c, 3, "reset")) {
                ms = 5000;
            } else if (arg_ll(c, 3, &ms, NULL)) {
                return;
            }
            __atomic_store_n(&net_reply_peak_reset_ms, ms, __ATOMIC_RELAXED);
        } else if (arg_is(c, 2, "resizing")) {
            long long on;
            if (arg_ll(c, 3, &on, NULL))
                return;
            __atomic_store_n(&net_reply_resizing, on != 0, __ATOMIC_RELAXED);
        } else {
            reply_error(c, "ERR Wrong option");
            return;
        }
        reply_ok(c);
    } else if (arg_is(c, 1, "populate") && c->argc >= 3 && c->argc <= 5) {
        debug_populate(c);
    } else if (arg_is(c, 1, "reload")) {
        debug_reload(c);
    } else if (arg_is(c, 1, "config-rewrite-force-all") && c->argc == 2) {
        char err[512];
        const char *path = c->w->srv->config_file;
        if (!path || config_rewrite(path, 1, err, sizeof(err)))
            reply_errorf(c, "ERR CONFIG-REWRITE-FORCE-ALL failed: %s",
                         path ? err : "The server is running without a config file");
        else
            reply_ok(c);
    } else if (arg_is(c, 1, "object") && c->argc == 3) {
        debug_object(c);
    } else if (arg_is(c, 1, "digest") && c->argc == 2) {
        debug_digest(c);
    } else if (arg_is(c, 1, "digest-value") && c->argc >= 2) {
        debug_digest_value(c);
    } else if (arg_is(c, 1, "protocol") && c->argc == 3) {
        debug_protocol(c);
    } else if (arg_is(c, 1, "error") && c->argc == 3) {
        char m[512];
        arg_cstr(c, 2, m, sizeof(m));
        reply_error(c, m);
    } else if (arg_is(c, 1, "log") && c->argc == 3) {
        char m[512];
        arg_cstr(c, 2, m, sizeof(m));
        log_warn("DEBUG LOG: %s", m);
        reply_ok(c);
    } else if (arg_is(c, 1, "help") && c->argc == 2) {
        static const char *help[] = {
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DIGEST",
            "    Output a hex signature representing the current DB content.",
            "DIGEST-VALUE <key> [<key> ...]",
            "    Output a hex signature of the values of all the specified keys.",
            "ERROR <string>",
            "    Return a Redis protocol error with <string> as message. Useful for clients",
            "    unit tests to simulate Redis errors.",
            "LOG <message>",
            "    Write <message> to the server log.",
            "OBJECT <key>",
            "    Show low level info about the `key` and associated value.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
            "    it is used instead of the 'key' prefix.",
            "PAUSE-CRON <0|1>",
            "    Stop periodic cron job processing.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type. <type> can be: string,",
            "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
            "    true, false.",
            "RELOAD [option ...]",
            "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
            "    * MERGE: conflicting keys will be loaded from RDB.",
            "    * NOFLUSH: the existing database will not be removed before load, but",
            "      conflicting keys will generate an exception and kill the server.",
            "    * NOSAVE: the database will be loaded from an existing RDB file.",
            "    Examples:",
            "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
            "      the database.",
            "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
            "      existing RDB file.",
            "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
            "      file to the database.",
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
            "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
            "    In case NEVER is provided the last observed peak will never be reset",
            "    In case RESET is provided the peak reset time will be restored to the default value",
            "REPLYBUFFER RESIZING <0|1>",
            "    Enable or disable the replay buffer resize cron job",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
            "    default.",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
            "HELP",
            "    Prints this help.",
        };
        reply_help(c, help);
    } else if (!cmd_persist_debug(c)) { /* cmd_persist.c: LOADAOF and others */
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.", sub);
    }
}

static struct cmd cmds[] = {
    {"debug", debug_command, -2, "admin noscript loading stale", "", NULL, "server", "A container for debugging commands"},
};

void cmd_debug_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
