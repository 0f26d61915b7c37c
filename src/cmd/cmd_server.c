/* Server commands: INFO CONFIG DBSIZE FLUSHDB FLUSHALL TIME SHUTDOWN MEMORY SLOWLOG DEBUG. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd/tracking.h"
#include "cmd/acl.h"
#include "cmd/cmd.h"
#include "cmd/persist.h"
#include "cmd/propagate.h"
#include "cmd/blocking.h"
#include "cmd/multi.h"
#include "cmd/repl.h"
#include "cmd/pubsub.h"
#include "cmd/slowlog.h"
#include "core/alloc.h"
#include "core/config.h"
#include "core/oom.h"
#include "persist/aof.h"
#include "persist/persist.h"
#include "store/lazyfree.h"
#include "persist/snapshot.h"
#include "store/slab.h"
#include "core/log.h"
#include "core/supervise.h"
#include "store/strval.h"

#define TWINCACHE_VERSION "0.1.0"

/* CONFIG SET maxclients N: as Redis, raise the fd limit to fit N clients plus the server's own
 * fds (64 + 4 per worker, as at start-up), or refuse. Returns 0 when it fits. */
static int maxclients_fit(const char *val, char *err, size_t cap)
{
    long long n;
    struct rlimit rl;
    rlim_t reserve = 64 + 4 * (rlim_t)cfg.threads, want;

    if (!util_str2ll(val, strlen(val), &n) || n < 1 || n > UINT_MAX)
        return 0; /* config_set reports the bad value (its range first, as Redis) */
    want = (rlim_t)n + reserve;
    if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
        return 0;
    rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= want)
        return 0;
    snprintf(err, cap, "CONFIG SET failed (possibly related to argument 'maxclients') - The "
             "operating system is not able to handle the specified number of clients, try "
             "with %lld", rl.rlim_cur > reserve ? (long long)(rl.rlim_cur - reserve) : 1LL);
    return -1;
}

/* CONFIG RESETSTAT keeps the totals it saw as a baseline: the counters themselves have one
 * writer each (their worker) and are never written by another thread. */
static pthread_mutex_t stat_base_lock = PTHREAD_MUTEX_INITIALIZER;
static struct worker_stats stat_base;

/* Sum of the workers' counters since the last RESETSTAT (racy reads, each one atomic). */
static void stats_sum(struct srv *srv, struct worker_stats *out)
{
    struct worker_stats t = {0};

    for (int i = 0; i < srv->nworkers; i++) {
        struct worker_stats *st = &srv->workers[i].st;
        t.commands += STAT_GET(st->commands);
        t.net_in += STAT_GET(st->net_in);
        t.net_out += STAT_GET(st->net_out);
        t.net_repl_out += STAT_GET(st->net_repl_out);
        t.conns_received += STAT_GET(st->conns_received);
        t.rejected += STAT_GET(st->rejected);
        t.reads += STAT_GET(st->reads);
        t.writes += STAT_GET(st->writes);
        t.reply_expands += STAT_GET(st->reply_expands);
        t.reply_shrinks += STAT_GET(st->reply_shrinks);
    }
    pthread_mutex_lock(&stat_base_lock);
    t.commands -= stat_base.commands;
    t.net_in -= stat_base.net_in;
    t.net_out -= stat_base.net_out;
    t.net_repl_out -= stat_base.net_repl_out;
    t.conns_received -= stat_base.conns_received;
    t.rejected -= stat_base.rejected;
    t.reads -= stat_base.reads;
    t.writes -= stat_base.writes;
    t.reply_expands -= stat_base.reply_expands;
    t.reply_shrinks -= stat_base.reply_shrinks;
    pthread_mutex_unlock(&stat_base_lock);
    *out = t;
}

static void dbsize_command(struct conn *c)
{
    reply_int(c, (long long)store_dbsize(conn_store(c), c->db));
}

/* 1: free in the background (ASYNC, or no argument with lazyfree-lazy-user-flush), 0: at
 * once, -1: a syntax error was answered. */
static int flush_args(struct conn *c)
{
    if (c->argc > 2 || (c->argc == 2 && !arg_is(c, 1, "async") && !arg_is(c, 1, "sync"))) {
        reply_error(c, ERR_SYNTAX);
        return -1;
    }
    if (c->argc == 2)
        return arg_is(c, 1, "async");
    return cfg.lazyfree_lazy_user_flush != 0;
}

static void flushdb_command(struct conn *c)
{
    int lazy = flush_args(c);
    if (lazy < 0)
        return;
    store_flush_lazy(conn_store(c), c->db, lazy);
    tracking_flush();
    block_signal_flush(c->db);
    reply_ok(c);
}

static void flushall_command(struct conn *c)
{
    int lazy = flush_args(c);
    if (lazy < 0)
        return;
    store_flush_lazy(conn_store(c), -1, lazy);
    tracking_flush();
    block_signal_flush(-1);
    /* as Redis: the change counts before the save with save rules, which resets the counter */
    STAT_INC(c->w->st.dirty);
    cmd_dirty_counted = 1;
    persist_flushall();
    reply_ok(c);
}

/* WAIT numreplicas timeout: the replicas that acknowledged the offset of this client's last
 * write; blocks (asking them for ACKs) until numreplicas do or the timeout (ms, 0 = forever)
 * passes, then answers how many did. */
static int wait_try(struct conn *c)
{
    long long n;
    if (!util_str2ll(c->argv[1].p, c->argv[1].n, &n))
        return 0;
    int got = repl_count_acks(c->woff);
    if (got >= n) {
        reply_int(c, got);
        return 1;
    }
    return 0;
}

static void wait_timeout(struct conn *c)
{
    reply_int(c, repl_count_acks(c->woff));
}

static const struct block_spec wait_block_spec = {.try_fn = wait_try, .timeout_fn = wait_timeout,
                                                  .acks = 1};

static void wait_command(struct conn *c)
{
    long long n, ms;

    if (atomic_load(&repl_is_replica)) {
        reply_error(c, "ERR WAIT cannot be used with replica instances. Please also note that "
                       "since Redis 4.0 if a replica is configured to be writable (which is not "
                       "the default) writes to replicas are just local and are not propagated.");
        return;
    }
    if (arg_ll(c, 1, &n, NULL))
        return;
    if (block_arg_ms(c, 2, &ms))
        return;
    int got = repl_count_acks(c->woff);
    if (got >= n || (c->tx && tx_active(c)) || store_held) {
        reply_int(c, got); /* inside MULTI or a script: no blocking, as Redis */
        return;
    }
    repl_ask_acks();
    block_until(c, cmd_current, ms > 0 ? util_now_ms() + ms : 0);
}

/* SWAPDB: every stripe held, so no client sees the databases half swapped; clients blocked
 * on keys of either database look again; a WATCH of a key in either sees another item (or
 * none) where it watched one, so EXEC fails as in Redis. */
static void swapdb_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long a, b;
    int nested = store_held != NULL;

    if (arg_ll(c, 1, &a, "ERR invalid first DB index") ||
        arg_ll(c, 2, &b, "ERR invalid second DB index"))
        return;
    if (a < INT_MIN || a > INT_MAX || b < INT_MIN || b > INT_MAX) {
        reply_error(c, a < INT_MIN || a > INT_MAX ? "ERR invalid first DB index"
                                                   : "ERR invalid second DB index");
        return;
    }
    if (a < 0 || a >= s->ndb || b < 0 || b >= s->ndb) {
        reply_error(c, "ERR DB index is out of range");
        return;
    }
    if (a != b) {
        if (!nested)
            store_hold_set(s, s->all);
        store_swapdb_locked(s, (int)a, (int)b);
        if (!nested)
            store_release_set(s, s->all);
        block_signal_flush((int)a);
        block_signal_flush((int)b);
    }
    STAT_INC(c->w->st.dirty);
    reply_ok(c);
}

#define CONFIG_SET_MAX 64

/* CONFIG SET name value [name value ...], as Redis 7.0: every name is checked first (unknown,
 * immutable, the same name given twice), then the values are applied in
 * order; when one is refused, those applied before it get their old values back, so the
 * settings change all together or not at all. */
static void config_set_many(struct conn *c)
{
    int n = (c->argc - 2) / 2, applied = 0, aof_was = -1, oom_named = 0;
    int tls_applied = 0, listen_named = 0;
    const void *ids[CONFIG_SET_MAX];
    char name[128], err[512], (*old)[1024];

    if (n > CONFIG_SET_MAX) {
        reply_error(c, "ERR too many parameters for CONFIG SET");
        return;
    }
    /* Redis's DENY_LOADING_CONFIG settings while the dataset loads: -LOADING first */
    for (int i = 0; i < n && atomic_load(&persist_loading); i++) {
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        if (!strcasecmp(name, "dir") || !strcasecmp(name, "appendonly") ||
            !strcasecmp(name, "repl-diskless-load")) {
            reply_error(c, "LOADING Redis is loading the dataset in memory");
            return;
        }
    }
    for (int i = 0; i < n; i++) {
        int mut;
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        if (config_describe(name, &ids[i], &mut)) {
            reply_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - '%s'",
                         name);
            return;
        }
        if (!mut) {
            reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - can't "
                            "set immutable config", name);
            return;
        }
        /* Redis 7.0's protected configs: where the server writes files */
        if ((!strcasecmp(name, "dir") || !strcasecmp(name, "dbfilename")) &&
            !cmd_protected_allowed(c, cfg.enable_protected_configs)) {
            reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - can't "
                            "set protected config", name);
            return;
        }
        for (int j = 0; j < i; j++)
            if (util_eq_nocase(c->argv[2 + 2 * j].p, c->argv[2 + 2 * j].n, name)) {
                reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - "
                                "duplicate parameter", name);
                return;
            }
    }
    old = malloc(sizeof(*old) * (size_t)n);
    if (!old) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int i = 0; i < n; i++) {
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        config_format(name, old[i], sizeof(old[i]));
    }
    for (; applied < n; applied++) {
        char val[1024];
        const char *v[1] = {val};
        int i = applied;
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        arg_cstr(c, 3 + 2 * i, val, sizeof(val));
        if (!strcasecmp(name, "appendonly") && (!strcasecmp(val, "yes") || !strcasecmp(val, "no"))) {
            int on = !strcasecmp(val, "yes");
            if (aof_set_enabled(c->w->idx, on, err, sizeof(err)))
                goto fail;
            aof_was = !strcasecmp(old[i], "yes");
            continue;
        }
        if (!strcasecmp(name, "maxclients") && maxclients_fit(val, err, sizeof(err)))
            goto fail;
        if (!strncasecmp(name, "oom-score-adj", 13))
            oom_named = i + 1;
        if (config_set(name, v, 1, 0, err, sizeof(err)))
            goto fail;
        if (!strcasecmp(name, "requirepass")) /* every byte, a NUL included */
            acl_requirepass_set(c->argv[3 + 2 * i].p, c->argv[3 + 2 * i].n);
        if (!strcasecmp(name, "masterauth"))
            repl_masterauth_set(c->argv[3 + 2 * i].p, c->argv[3 + 2 * i].n);
    }
    /* tls-* settings take effect together (a new certificate with its key): one reload */
    for (int i = 0; i < n && config_tls_apply; i++) {
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        if (strncasecmp(name, "tls-", 4))
            continue;
        if (config_tls_apply(err, sizeof(err))) {
            snprintf(err, sizeof(err), "CONFIG SET failed (possibly related to argument '%s') "
                     "- Unable to update TLS configuration. Check server logs.", name);
            goto fail;
        }
        tls_applied = 1;
        break;
    }
    if (oom_named && oom_score_apply(atomic_load(&repl_is_replica) ? OOM_CLASS_REPLICA
                                                                   : OOM_CLASS_MASTER)) {
        arg_cstr(c, 2 + 2 * (oom_named - 1), name, sizeof(name));
        snprintf(err, sizeof(err), "CONFIG SET failed (possibly related to argument '%s') - "
                 "Failed to set current oom_score_adj. Check server logs.", name);
        goto fail;
    }
    /* the listeners last (new sockets bound before the old ones close; on failure the old
     * ones stay), as Redis's applyPort / applyBind / applyTLSPort */
    for (int i = 0; i < n && !listen_named; i++) {
        char now[1024];
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        if ((!strcasecmp(name, "port") || !strcasecmp(name, "tls-port") ||
             !strcasecmp(name, "memcache-port") || !strcasecmp(name, "tls-memcache-port") ||
             !strcasecmp(name, "bind")) &&
            !config_format(name, now, sizeof(now)) && strcmp(now, old[i]))
            listen_named = i + 1; /* the same value again changes nothing, as in Redis */
    }
    if (listen_named && config_listen_apply) {
        int r = config_listen_apply(err, sizeof(err));
        if (r) {
            arg_cstr(c, 2 + 2 * (listen_named - 1), name, sizeof(name));
            snprintf(err, sizeof(err), "CONFIG SET failed (possibly related to argument '%s') "
                     "- %s", name,
                     r == -2 ? "Unable to update TLS configuration. Check server logs."
                     : !strcasecmp(name, "bind") ? "Failed to bind to specified addresses."
                                                 : "Unable to listen on this port. Check server "
                                                   "logs.");
            goto fail;
        }
    }
    free(old);
    repl_update_gate();
    for (int i = 0; i < n; i++) {
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        if (!strcasecmp(name, "maxmemory-clients") || !strcasecmp(name, "maxmemory")) {
            cmd_evict_clients_now(c); /* as Redis's applyClientMaxMemoryUsage */
            break;
        }
    }
    reply_ok(c);
    return;
fail:
    /* put back what was applied, newest first */
    for (int i = applied - 1; i >= 0; i--) {
        char e2[256];
        const char *v[1] = {old[i]};
        arg_cstr(c, 2 + 2 * i, name, sizeof(name));
        if (!strcasecmp(name, "appendonly")) {
            if (aof_was >= 0)
                aof_set_enabled(c->w->idx, aof_was, e2, sizeof(e2));
            continue;
        }
        config_set(name, v, 1, 1, e2, sizeof(e2));
        if (oom_named)
            oom_score_apply(atomic_load(&repl_is_replica) ? OOM_CLASS_REPLICA : OOM_CLASS_MASTER);
        if (!strcasecmp(name, "requirepass"))
            acl_requirepass_set(old[i], strlen(old[i]));
        if (!strcasecmp(name, "masterauth"))
            repl_masterauth_set(old[i], strlen(old[i]));
    }
    if (tls_applied && config_tls_apply) {
        char e2[256];
        config_tls_apply(e2, sizeof(e2)); /* the restored certificate settings */
    }
    free(old);
    reply_errorf(c, "ERR %s", err);
}

static void time_command(struct conn *c)
{
    int64_t us = util_now_us();
    reply_array(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

/* A SHUTDOWN waiting for the replicas (repl_shutdown.c): it answers only when that shutdown
 * failed or was aborted; otherwise the server exits and its connection closes. */
static int shutdown_try(struct conn *c)
{
    if (!repl_shutdown_blocked_done())
        return 0;
    reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
    return 1;
}

/* (it waits with no deadline: called only where it cannot block) */
static void shutdown_timeout(struct conn *c)
{
    reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
}

static const struct block_spec shutdown_block_spec = {.try_fn = shutdown_try,
                                                      .timeout_fn = shutdown_timeout, .acks = 1};

static void shutdown_command(struct conn *c)
{
    int flags = 0, abort_ = 0;

    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, "nosave"))
            flags |= REPL_SHUT_NOSAVE;
        else if (arg_is(c, i, "save"))
            flags |= REPL_SHUT_SAVE;
        else if (arg_is(c, i, "now"))
            flags |= REPL_SHUT_NOW;
        else if (arg_is(c, i, "force"))
            flags |= REPL_SHUT_FORCE;
        else if (arg_is(c, i, "abort"))
            abort_ = 1;
        else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if ((abort_ && flags) || ((flags & REPL_SHUT_SAVE) && (flags & REPL_SHUT_NOSAVE))) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (abort_) {
        if (repl_shutdown_abort())
            reply_error(c, "ERR No shutdown in progress.");
        else
            reply_ok(c);
        return;
    }
    if (atomic_load_explicit(&cmd_script_busy, memory_order_relaxed) &&
        !(flags & REPL_SHUT_NOSAVE)) {
        /* a script is past busy-reply-threshold: only SHUTDOWN NOSAVE, as Redis */
        reply_error(c, cmd_busy_error());
        return;
    }
    switch (repl_shutdown_begin(flags, 0)) {
    case REPL_SHUT_DONE:
        /* like Redis, the client gets no reply: the connection closes */
        c->flags |= CONN_CLOSE_ASAP;
        return;
    case REPL_SHUT_FAILED:
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    default:
        block_until(c, cmd_current, 0); /* until the shutdown fails or is aborted */
    }
}

/* ---- INFO ---- */

static void bytes_human(char *out, size_t cap, double n)
{
    const char *u = "B";
    if (n >= 1024.0 * 1024 * 1024) {
        n /= 1024.0 * 1024 * 1024;
        u = "G";
    } else if (n >= 1024.0 * 1024) {
        n /= 1024.0 * 1024;
        u = "M";
    } else if (n >= 1024.0) {
        n /= 1024.0;
        u = "K";
    }
    snprintf(out, cap, "%.2f%s", n, u);
}

static int want(const char *sec, const char *name, int dflt)
{
    if (!sec[0] || !strcasecmp(sec, "default"))
        return dflt;
    if (!strcasecmp(sec, "all") || !strcasecmp(sec, "everything"))
        return 1;
    return !strcasecmp(sec, name);
}

/* Whether any of INFO's arguments asks for the section name (none: the default ones). */
static int want_any(struct conn *c, const char *name, int dflt)
{
    char sec[64];

    if (c->argc < 2)
        return dflt;
    for (int a = 1; a < c->argc; a++) {
        arg_cstr(c, a, sec, sizeof(sec));
        if (want(sec, name, dflt))
            return 1;
    }
    return 0;
}

#define P(...) do { int _n = snprintf(line, sizeof(line), __VA_ARGS__); buf_append(&b, line, (size_t)_n); } while (0)

/* ---- MEMORY ---- */

static _Atomic size_t peak_used, startup_used;

/* The largest used_memory seen (INFO, MEMORY STATS), with used taken into account. */
static size_t memory_peak(size_t used)
{
    size_t p = atomic_load(&peak_used);
    while (used > p && !atomic_compare_exchange_weak(&peak_used, &p, used))
        ;
    return used > p ? used : p;
}

static void stat_int(struct conn *c, const char *name, long long v)
{
    reply_bulk(c, name, strlen(name));
    reply_int(c, v);
}

static void stat_double(struct conn *c, const char *name, double v)
{
    reply_bulk(c, name, strlen(name));
    reply_double(c, v);
}

/* MEMORY STATS: Redis 7.0's fields, from the store's accounting and the allocator's. */
static void memory_stats(struct conn *c)
{
    struct srv *srv = c->w->srv;
    struct alloc_stats as;
    size_t used, rss = alloc_rss(), startup = atomic_load(&startup_used), peak;
    int64_t dataset;
    uint64_t keys = 0;
    int ndbs = 0;

    store_mem_flush();
    alloc_stats(&as);
    used = (size_t)store_used_for_limit();
    dataset = store_mem_used();
    peak = memory_peak(used);
    for (int d = 0; d < cfg.databases; d++) {
        uint64_t n = store_dbsize(srv->store, d);
        keys += n;
        ndbs += n != 0;
    }
    reply_map(c, 27 + ndbs);
    stat_int(c, "peak.allocated", (long long)peak);
    stat_int(c, "total.allocated", (long long)used);
    stat_int(c, "startup.allocated", (long long)startup);
    stat_int(c, "replication.backlog", 0); /* no replication yet */
    stat_int(c, "clients.slaves", 0);
    stat_int(c, "clients.normal",
             (long long)atomic_load(&srv->nclients) * (long long)sizeof(struct conn));
    stat_int(c, "cluster.links", 0);
    stat_int(c, "aof.buffer", 0);
    stat_int(c, "lua.caches", 0);
    stat_int(c, "functions.caches", 0);
    for (int d = 0; d < cfg.databases; d++) {
        char name[32];
        if (!store_dbsize(srv->store, d))
            continue;
        snprintf(name, sizeof(name), "db.%d", d);
        reply_bulk(c, name, strlen(name));
        reply_map(c, 3);
        stat_int(c, "overhead.hashtable.main", (long long)store_db_table_bytes(srv->store, d));
        stat_int(c, "overhead.hashtable.expires", 0); /* one table holds both */
        stat_int(c, "overhead.hashtable.slot-to-keys", 0);
    }
    stat_int(c, "overhead.total", (long long)used - (long long)dataset);
    stat_int(c, "keys.count", (long long)keys);
    stat_int(c, "keys.bytes-per-key",
             keys && used > startup ? (long long)((used - startup) / keys) : 0);
    stat_int(c, "dataset.bytes", (long long)dataset);
    stat_double(c, "dataset.percentage",
                used > startup ? 100.0 * (double)dataset / (double)(used - startup) : 0.0);
    stat_double(c, "peak.percentage", peak ? 100.0 * (double)used / (double)peak : 0.0);
    stat_int(c, "allocator.allocated", (long long)as.allocated);
    stat_int(c, "allocator.active", (long long)as.active);
    stat_int(c, "allocator.resident", (long long)as.resident);
    stat_double(c, "allocator-fragmentation.ratio",
                as.allocated ? (double)as.active / (double)as.allocated : 0.0);
    stat_int(c, "allocator-fragmentation.bytes", (long long)as.active - (long long)as.allocated);
    stat_double(c, "allocator-rss.ratio", as.active ? (double)as.resident / (double)as.active : 0.0);
    stat_int(c, "allocator-rss.bytes", (long long)as.resident - (long long)as.active);
    stat_double(c, "rss-overhead.ratio", as.resident ? (double)rss / (double)as.resident : 0.0);
    stat_int(c, "rss-overhead.bytes", (long long)rss - (long long)as.resident);
    stat_double(c, "fragmentation", used ? (double)rss / (double)used : 0.0);
    stat_int(c, "fragmentation.bytes", (long long)rss - (long long)used);
}

#define PUTS(b, lit) buf_append((b), (lit), sizeof(lit) - 1)

/* MEMORY DOCTOR: Redis's reply for an (almost) empty instance, else the checks that apply
 * here (a peak far above today's use, allocator fragmentation, RSS far above the allocator). */
static void memory_doctor(struct conn *c)
{
    struct alloc_stats as;
    size_t used, peak, rss = alloc_rss();
    struct buf b = {0};
    char t[256];
    int issues = 0, k;

    store_mem_flush();
    alloc_stats(&as);
    used = (size_t)store_used_for_limit();
    peak = memory_peak(used);
    if (used < (size_t)5 << 20) {
        PUTS(&b, "Hi Sam, this instance is empty or is using very little memory, my issues "
                 "detector can't be used in these conditions. Please, leave for your mission on "
                 "Earth and fill it with some data. The new Sam and I will be back to our "
                 "programming as soon as I finished rebooting.\n");
        reply_verbatim(c, b.data, buf_len(&b));
        buf_deinit(&b);
        return;
    }
    PUTS(&b, "Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    if ((double)peak > (double)used * 1.5) {
        PUTS(&b, " * Peak memory: In the past this instance used more than 150% the memory that "
                 "is currently using. The allocator is normally not able to release memory after "
                 "a peak, so you can expect to see a big fragmentation ratio, however this is "
                 "actually harmless and is only due to the memory peak, and if the Redis instance "
                 "Resident Set Size (RSS) is currently bigger than expected, the memory will be "
                 "used as soon as you fill the Redis instance with more data. If the memory peak "
                 "was only occasional and you want to try to reclaim memory, please try the "
                 "MEMORY PURGE command, otherwise the only other option is to shutdown and "
                 "restart the instance.\n\n");
        issues++;
    }
    if (as.allocated && (double)as.active / (double)as.allocated > 1.1 &&
        as.active - as.allocated > ((size_t)10 << 20)) {
        k = snprintf(t, sizeof(t), " * High allocator fragmentation: This instance has an "
                     "allocator external fragmentation greater than 1.1 (%.2f).\n\n",
                     (double)as.active / (double)as.allocated);
        buf_append(&b, t, (size_t)k);
        issues++;
    }
    if (as.resident && rss > as.resident && (double)rss / (double)as.resident > 1.1 &&
        rss - as.resident > ((size_t)10 << 20)) {
        k = snprintf(t, sizeof(t), " * High process RSS overhead: This instance has "
                     "non-allocator RSS memory overhead greater than 1.1 (%.2f).\n\n",
                     (double)rss / (double)as.resident);
        buf_append(&b, t, (size_t)k);
        issues++;
    }
    if (!issues) {
        b.rpos = b.wpos = 0;
        PUTS(&b, "Hi Sam, I can't find any memory issue in your instance. I can only account "
                 "for what occurs on this base.\n");
    } else {
        PUTS(&b, "I'm here to keep you safe, Sam. I want to help you.\n");
    }
    reply_verbatim(c, b.data, buf_len(&b));
    buf_deinit(&b);
}

size_t cmd_used_memory(struct alloc_stats *as, size_t rss)
{
    size_t used;

    /* used_memory is the figure maxmemory is enforced on: the keyspace bytes plus the
     * overhead the timer measured from the allocator (refreshed 10 times a second) */
    store_mem_flush();
    alloc_stats(as);
    /* the figure a client reads is the one the next write is checked against (a
     * limit set from it, as Redis's tests do, is then not off by the timer's lag) */
    store_measure_overhead((int64_t)(as->allocated + slab_used_bytes()));
    used = (size_t)store_used_for_limit();
    /* a tiny keyspace whose bytes are not published yet (64 KiB steps per thread), with
     * the sampled overhead not positive, sums to 0: the allocator's figure then */
    if (used == 0)
        used = as->allocated;
    if (used == 0)
        used = rss; /* no allocator figures (the sanitizer builds run on libc malloc) */
    return used;
}

size_t cmd_used_memory_peak(size_t used)
{
    return memory_peak(used);
}

void (*cmd_info_memory_hook)(struct buf *b);

static void info_command(struct conn *c)
{
    struct srv *srv = c->w->srv;
    struct buf b = {0};
    char line[1024], h1[32], h2[32];
    struct store_totals t;
    uint64_t cmds = 0, net_in = 0, net_out = 0, conns = 0, rejected = 0;
    double ops = 0;
    int64_t now = conn_now(c);
    struct rusage ru;
    struct worker_stats ws;

    store_totals(srv->store, &t);
    stats_sum(srv, &ws);
    cmds = ws.commands;
    net_in = ws.net_in;
    net_out = ws.net_out;
    conns = ws.conns_received;
    rejected = ws.rejected;
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker_stats *st = &srv->workers[i].st;
        int cur = STAT_GET(st->ops_idx), old = (cur + 1) % 16;
        uint64_t c1 = STAT_GET(st->ops_sample[cur]), c0 = STAT_GET(st->ops_sample[old]);
        int64_t m1 = STAT_GET(st->ops_sample_ms[cur]), m0 = STAT_GET(st->ops_sample_ms[old]);
        if (m0 && m1 > m0 && c1 >= c0)
            ops += (double)(c1 - c0) * 1000.0 / (double)(m1 - m0);
    }
    /* as Redis's genInfoSectionDict: the sections asked for, each once, in the usual order */
    for (int once = 0; once < 1; once++) {
        if (want_any(c, "server", 1)) {
            struct utsname u;
            uname(&u);
            P("# Server\r\n");
            P("redis_version:%s\r\n", TC_VERSION);
            P("twincache_version:%s\r\n", TWINCACHE_VERSION);
            P("redis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\n");
            P("redis_mode:standalone\r\n");
            P("os:%s %s %s\r\n", u.sysname, u.release, u.machine);
            P("arch_bits:%d\r\n", (int)sizeof(void *) * 8);
            if (util_tsc)
                P("monotonic_clock:X86 TSC @ %.0f ticks/us\r\n", util_tsc_per_us);
            else
                P("monotonic_clock:POSIX clock_gettime\r\n");
            P("multiplexing_api:epoll\r\n");
            P("atomicvar_api:c11-builtin\r\n");
            P("gcc_version:%d.%d.%d\r\n", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
            P("process_id:%d\r\n", (int)getpid());
            P("process_supervised:%s\r\n",
              !supervise_active() ? "no"
              : supervise_mode() == SUPERVISE_UPSTART ? "upstart" : "systemd");
            P("run_id:%016llx%016llx%08x\r\n", (unsigned long long)srv->start_ms * 2654435761ULL,
              (unsigned long long)getpid() * 40503ULL, 0u);
            P("tcp_port:%d\r\n", cfg.port);
            P("memcache_port:%d\r\n", cfg.memcache_port);
            P("server_time_usec:%lld\r\n", (long long)util_now_us());
            P("uptime_in_seconds:%lld\r\n", (long long)((now - srv->start_ms) / 1000));
            P("uptime_in_days:%lld\r\n", (long long)((now - srv->start_ms) / 86400000));
            P("hz:%d\r\nconfigured_hz:%d\r\n", config_hz_now(), cfg.hz);
            P("lru_clock:%u\r\n", store_lru_now());
            P("executable:%s\r\n", srv->executable ? srv->executable : "");
            P("config_file:%s\r\n", srv->config_file ? srv->config_file : "");
            P("io_threads_active:%d\r\n", srv->nworkers > 1);
            int64_t sd_ms = repl_shutdown_in_ms();
            if (sd_ms >= 0)
                P("shutdown_in_milliseconds:%lld\r\n", (long long)sd_ms);
            P("threads:%d\r\n", srv->nworkers);
            {
                char wl[512];
                size_t o = 0;
                for (int i = 0; i < srv->nworkers && o + 16 < sizeof(wl); i++)
                    o += (size_t)snprintf(wl + o, sizeof(wl) - o, "%s%d", i ? "," : "",
                                          atomic_load(&srv->workers[i].load));
                wl[o] = 0;
                P("worker_clients:%s\r\n", wl);
            }
            /* workers whose socket I/O goes through io_uring batches (io-uring yes and a
             * kernel that allows it); the others use read/writev */
            P("io_uring_workers:%d\r\n", atomic_load(&srv->uring_workers));
            P("\r\n");
        }
        if (want_any(c, "clients", 1)) {
            P("# Clients\r\n");
            /* as Redis: the replicas' connections are not counted */
            int ncl = atomic_load(&srv->nclients) - repl_online_replicas();
            P("connected_clients:%d\r\n", ncl > 0 ? ncl : 0);
            P("cluster_connections:0\r\n");
            P("maxclients:%d\r\n", cfg.maxclients);
            P("client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n");
            P("blocked_clients:%ld\r\ntracking_clients:%ld\r\nclients_in_timeout_table:0\r\n", block_nclients(), (long)atomic_load(&tracking_nclients));
            P("\r\n");
        }
        if (want_any(c, "memory", 1)) {
            struct alloc_stats as;
            size_t rss = alloc_rss(), used;
            int64_t dataset = store_mem_used();
            used = cmd_used_memory(&as, rss);
            {
                size_t p = memory_peak(used);
                bytes_human(h2, sizeof(h2), (double)p);
                bytes_human(h1, sizeof(h1), (double)used);
                P("# Memory\r\n");
                P("used_memory:%zu\r\n", used);
                P("used_memory_human:%s\r\n", h1);
                P("used_memory_peak:%zu\r\n", p);
                P("used_memory_peak_human:%s\r\n", h2);
                P("used_memory_peak_perc:%.2f%%\r\n", p ? 100.0 * (double)used / (double)p : 0.0);
                P("used_memory_startup:%zu\r\n", atomic_load(&startup_used));
            }
            bytes_human(h2, sizeof(h2), (double)rss);
            P("used_memory_rss:%zu\r\n", rss);
            P("used_memory_rss_human:%s\r\n", h2);
            P("used_memory_dataset:%lld\r\n", (long long)dataset);
            P("used_memory_dataset_perc:%.2f%%\r\n", used ? 100.0 * (double)dataset / (double)used : 0.0);
            P("used_memory_overhead:%lld\r\n", (long long)used - (long long)dataset);
            P("allocator_allocated:%zu\r\n", as.allocated);
            P("item_slabs:%zu\r\n", slab_bytes());
            P("allocator_active:%zu\r\n", as.active);
            P("allocator_resident:%zu\r\n", as.resident);
            P("allocator_retained:%zu\r\n", as.retained);
            {
                long long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
                long long sysmem = pages > 0 && psize > 0 ? pages * psize : 0;
                bytes_human(h1, sizeof(h1), (double)sysmem);
                P("total_system_memory:%lld\r\ntotal_system_memory_human:%s\r\n", sysmem, h1);
            }
            P("allocator_frag_ratio:%.2f\r\n", as.allocated ? (double)as.active / (double)as.allocated : 0.0);
            P("allocator_frag_bytes:%lld\r\n", (long long)as.active - (long long)as.allocated);
            P("allocator_rss_ratio:%.2f\r\n", as.active ? (double)as.resident / (double)as.active : 0.0);
            P("allocator_rss_bytes:%lld\r\n", (long long)as.resident - (long long)as.active);
            P("rss_overhead_ratio:%.2f\r\n", as.resident ? (double)rss / (double)as.resident : 0.0);
            P("rss_overhead_bytes:%lld\r\n", (long long)rss - (long long)as.resident);
            bytes_human(h1, sizeof(h1), (double)cfg.maxmemory);
            P("maxmemory:%lld\r\n", cfg.maxmemory);
            P("maxmemory_human:%s\r\n", h1);
            P("maxmemory_policy:%s\r\n", config_policy_name(cfg.maxmemory_policy));
            P("mem_fragmentation_ratio:%.2f\r\n", used ? (double)rss / (double)used : 0.0);
            P("mem_fragmentation_bytes:%lld\r\n", (long long)rss - (long long)used);
            /* what maxmemory does not count: the replicas' output beyond the backlog (the
             * AOF's buffer is counted) */
            P("mem_not_counted_for_evict:%zu\r\n", repl_not_counted_bytes());
            P("mem_allocator:%s\r\n", alloc_name());
            P("mem_cluster_links:0\r\n"); /* no cluster bus */
            {
                struct aof_stats ast; /* the AOF's bytes appended and not written yet */
                aof_get_stats(&ast);
                P("mem_aof_buffer:%llu\r\n", (unsigned long long)(ast.appended > ast.written
                                                                   ? ast.appended - ast.written
                                                                   : 0));
            }
            repl_info_memory(&b);
            {
                size_t cn, cr;
                cmd_clients_mem(c->w->srv, &cn, &cr);
                P("mem_clients_slaves:%zu\r\nmem_clients_normal:%zu\r\n", cr, cn);
            }
            /* no defragmenter; values the lazy free thread has not freed yet, and those it did */
            P("active_defrag_running:0\r\nlazyfree_pending_objects:%llu\r\n",
              (unsigned long long)lazyfree_pending());
            P("lazyfreed_objects:%llu\r\n", (unsigned long long)lazyfree_freed());
            if (cmd_info_memory_hook)
                cmd_info_memory_hook(&b);
            P("\r\n");
        }
        if (want_any(c, "persistence", 1)) {
            persist_info(&b);
        }
        if (want_any(c, "stats", 1)) {
            P("# Stats\r\n");
            P("total_connections_received:%llu\r\n", (unsigned long long)conns);
            P("total_commands_processed:%llu\r\n", (unsigned long long)cmds);
            P("instantaneous_ops_per_sec:%lld\r\n", (long long)ops);
            P("total_net_input_bytes:%llu\r\n", (unsigned long long)net_in);
            P("total_net_output_bytes:%llu\r\n", (unsigned long long)net_out);
            P("total_net_repl_input_bytes:%llu\r\ntotal_net_repl_output_bytes:%llu\r\n",
              (unsigned long long)atomic_load(&repl_link_net_in),
              (unsigned long long)ws.net_repl_out);
            P("rejected_connections:%llu\r\n", (unsigned long long)rejected);
            P("expired_keys:%llu\r\n", (unsigned long long)t.expired);
            P("expired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\n");
            P("expire_cycle_cpu_milliseconds:%llu\r\n",
              (unsigned long long)(atomic_load(&store_expire_cycle_us) / 1000));
            P("evicted_keys:%llu\r\n", (unsigned long long)t.evicted);
            {
                uint64_t cur_ms, tot_ms;
                store_evict_exceeded(&cur_ms, &tot_ms);
                P("current_eviction_exceeded_time:%llu\r\ntotal_eviction_exceeded_time:%llu\r\n",
                  (unsigned long long)cur_ms, (unsigned long long)tot_ms);
            }
            P("evicted_clients:%llu\r\n", (unsigned long long)cmd_evicted_clients());
            P("slave_expires_tracked_keys:%llu\r\n",
              (unsigned long long)store_replica_tracked());
            /* no active defragmenter (activedefrag only takes no): nothing it did */
            P("active_defrag_hits:0\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0\r\n"
              "active_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\n"
              "current_active_defrag_time:0\r\n");
            repl_info_stats(&b);
            P("keyspace_hits:%llu\r\n", (unsigned long long)t.hits);
            P("keyspace_misses:%llu\r\n", (unsigned long long)t.misses);
            P("pubsub_channels:%ld\r\npubsub_patterns:%ld\r\npubsubshard_channels:%ld\r\n",
              pubsub_nchannels(), pubsub_npatterns(), pubsub_nshardchannels());
            P("latest_fork_usec:%lld\r\ntotal_forks:%lld\r\n",
              (long long)atomic_load(&snapshot_latest_held_us),
              (long long)atomic_load(&snapshot_total_started));
            P("migrate_cached_sockets:%d\r\n",
              atomic_load_explicit(&cmd_migrate_cached, memory_order_relaxed));
            P("tracking_total_keys:%ld\r\ntracking_total_items:%ld\r\ntracking_total_prefixes:%ld\r\n",
              tracking_total_keys(), tracking_total_items(), tracking_total_prefixes());
            uint64_t errs, rej;
            cmdstats_totals(&errs, &rej);
            P("unexpected_error_replies:%llu\r\n",
              (unsigned long long)atomic_load(&repl_unexpected_errors));
            P("dump_payload_sanitizations:%llu\r\n",
              (unsigned long long)atomic_load(&cmd_dump_sanitizations));
            P("total_reads_processed:%llu\r\ntotal_writes_processed:%llu\r\n",
              (unsigned long long)ws.reads, (unsigned long long)ws.writes);
            /* Redis's I/O threads hand what they read and write back to one main thread;
             * the workers do their own I/O: nothing is processed that way */
            P("io_threaded_reads_processed:0\r\nio_threaded_writes_processed:0\r\n");
            P("reply_buffer_shrinks:%llu\r\nreply_buffer_expands:%llu\r\n",
              (unsigned long long)ws.reply_shrinks, (unsigned long long)ws.reply_expands);
            P("total_error_replies:%llu\r\n", (unsigned long long)errs);
            P("\r\n");
        }
        if (want_any(c, "replication", 1)) {
            repl_info(&b);
            P("\r\n");
        }
        if (want_any(c, "cpu", 1)) {
            getrusage(RUSAGE_SELF, &ru);
            P("# CPU\r\n");
            P("used_cpu_sys:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
            P("used_cpu_user:%ld.%06ld\r\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
            getrusage(RUSAGE_CHILDREN, &ru); /* snapshot and rewrite children */
            P("used_cpu_sys_children:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
            P("used_cpu_user_children:%ld.%06ld\r\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
            /* Redis's main thread runs the commands: here, the worker answering */
            getrusage(RUSAGE_THREAD, &ru);
            P("used_cpu_sys_main_thread:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
            P("used_cpu_user_main_thread:%ld.%06ld\r\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
            P("\r\n");
        }
        if (want_any(c, "commandstats", 0)) {
            cmdstats_info_commands(&b);
            P("\r\n");
        }
        if (want_any(c, "errorstats", 1)) {
            cmdstats_info_errors(&b);
            P("\r\n");
        }
        if (want_any(c, "latencystats", 0)) {
            cmdstats_info_latency(&b);
            P("\r\n");
        }
        if (want_any(c, "cluster", 1)) {
            P("# Cluster\r\ncluster_enabled:0\r\n\r\n"); /* cluster-enabled only takes no */
        }
        if (want_any(c, "keyspace", 1)) {
            P("# Keyspace\r\n");
            for (int d = 0; d < cfg.databases; d++) {
                uint64_t keys = store_dbsize(srv->store, d);
                if (keys)
                    P("db%d:keys=%llu,expires=%llu,avg_ttl=0\r\n", d, (unsigned long long)keys,
                      (unsigned long long)store_db_expires(srv->store, d));
            }
        }
    }
    /* drop the blank line that ends the last section, like Redis */
    if (buf_len(&b) >= 4 && !memcmp(b.data + b.wpos - 4, "\r\n\r\n", 4))
        b.wpos -= 2;
    reply_verbatim(c, b.data ? b.data : "", buf_len(&b));
    buf_deinit(&b);
}

/* ---- CONFIG ---- */

struct get_arg {
    struct buf b;
    int n;
    char seen[64][64];
    int nseen;
};

static void collect_setting(const char *name, const char *value, void *arg)
{
    struct get_arg *a = arg;
    for (int i = 0; i < a->nseen; i++)
        if (!strcmp(a->seen[i], name))
            return;
    if (a->nseen < 64)
        snprintf(a->seen[a->nseen++], 64, "%s", name);
    resp_add_bulk(&a->b, name, strlen(name));
    resp_add_bulk(&a->b, value, strlen(value));
    a->n++;
}

static void config_command(struct conn *c)
{
    char name[128];

    if (arg_is(c, 1, "get")) {
        struct get_arg a;
        if (c->argc < 3) {
            reply_arity_error(c, "config|get");
            return;
        }
        memset(&a, 0, sizeof(a));
        for (int i = 2; i < c->argc; i++) {
            arg_cstr(c, i, name, sizeof(name));
            config_get(name, collect_setting, &a);
        }
        reply_map(c, a.n);
        reply_raw(c, a.b.data ? a.b.data : "", buf_len(&a.b));
        buf_deinit(&a.b);
    } else if (arg_is(c, 1, "set")) {
        if (c->argc < 4) {
            reply_arity_error(c, "config|set");
            return;
        }
        if ((c->argc - 2) % 2) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        config_set_many(c);
        return;
    } else if (arg_is(c, 1, "resetstat") && c->argc == 2) {
        struct srv *srv = c->w->srv;
        store_reset_stats(srv->store);
        cmdstats_reset();
        repl_reset_stats();
        cmd_evicted_clients_reset();
        atomic_store(&cmd_dump_sanitizations, 0);
        struct worker_stats now;
        stats_sum(srv, &now);
        pthread_mutex_lock(&stat_base_lock); /* now is relative to the old baseline */
        stat_base.commands += now.commands;
        stat_base.net_in += now.net_in;
        stat_base.net_out += now.net_out;
        stat_base.net_repl_out += now.net_repl_out;
        atomic_store(&repl_link_net_in, 0);
        stat_base.conns_received += now.conns_received;
        stat_base.rejected += now.rejected;
        stat_base.reads += now.reads;
        stat_base.writes += now.writes;
        stat_base.reply_expands += now.reply_expands;
        stat_base.reply_shrinks += now.reply_shrinks;
        pthread_mutex_unlock(&stat_base_lock);
        reply_ok(c);
    } else if (arg_is(c, 1, "rewrite") && c->argc == 2) {
        char err[512];
        const char *path = c->w->srv->config_file;
        if (!path) {
            reply_error(c, "ERR The server is running without a config file");
        } else if (config_rewrite(path, 0, err, sizeof(err))) {
            log_warn("CONFIG REWRITE failed: %s", err);
            reply_errorf(c, "ERR %s", err);
        } else {
            log_notice("CONFIG REWRITE executed with success.");
            reply_ok(c);
        }
    } else if (arg_is(c, 1, "help")) {
        static const char *help[] = {
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
            "RESETSTAT", "    Reset statistics reported by the INFO command.",
            "REWRITE", "    Rewrite the configuration file.",
            "HELP", "    Print this help."};
        reply_help(c, help);
    } else {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand '%s'. Try CONFIG HELP.", sub);
    }
}

/* ---- MEMORY ---- */

static void memory_command(struct conn *c)
{
    if (arg_is(c, 1, "usage") && c->argc >= 3) {
        struct store *s = conn_store(c);
        struct skey k;
        struct item *it;
        if (c->argc == 5 && arg_is(c, 3, "samples")) {
            long long n;
            if (arg_ll(c, 4, &n, NULL))
                return;
        } else if (c->argc != 3) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        arg_key(c, 2, &k);
        store_lock(s, k.stripe);
        it = store_lookup_write_locked(s, &k, conn_now(c));
        if (!it)
            reply_null(c);
        else
            reply_int(c, (long long)(item_alloc_size(it) + item_value_mem(it) + 8));
        store_unlock(s, k.stripe);
    } else if (arg_is(c, 1, "doctor") && c->argc == 2) {
        memory_doctor(c);
    } else if (arg_is(c, 1, "purge") && c->argc == 2) {
        alloc_purge();
        reply_ok(c);
    } else if (arg_is(c, 1, "stats") && c->argc == 2) {
        memory_stats(c);
    } else if (arg_is(c, 1, "malloc-stats") && c->argc == 2) {
        struct buf b = {0};
        alloc_malloc_stats(&b);
        reply_verbatim(c, b.data ? b.data : "", buf_len(&b));
        buf_deinit(&b);
    } else if (arg_is(c, 1, "help")) {
        static const char *help[] = {
            "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR", "    Return memory problems reports.",
            "MALLOC-STATS", "    Return internal statistics report from the memory allocator.",
            "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS", "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
            "HELP", "    Prints this help."};
        reply_help(c, help);
    } else {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try MEMORY HELP.", sub);
    }
}

/* ROLE: a master with no replica connected (replication is to come: issue 20), as Redis answers
 * then: its role, its replication offset (0 until a replica connects) and no replicas. */
static struct cmd config_subs[] = {
    {"config|get", config_command, -3, "admin noscript loading stale", "", NULL, "server", "Read settings matching patterns"},
    {"config|set", config_command, -4, "admin noscript loading stale", "", NULL, "server", "Change settings at run time"},
    {"config|resetstat", config_command, 2, "admin noscript loading stale", "", NULL, "server", "Zero the statistics INFO reports"},
    {"config|rewrite", config_command, 2, "admin noscript loading stale", "", NULL, "server", "Write the running settings back to the config file"},
    {"config|help", config_command, 2, "loading stale", "", NULL, "server", "List the CONFIG subcommands"},
    {NULL},
};

static struct cmd memory_subs[] = {
    {"memory|usage", memory_command, -3, "readonly", "", "RO index:2 range:0,1,0", "server", "Bytes a key and its value take"},
    {"memory|doctor", memory_command, 2, "", "", NULL, "server", "A short report on memory health"},
    {"memory|purge", memory_command, 2, "", "", NULL, "server", "Ask the allocator to return free pages"},
    {"memory|stats", memory_command, 2, "", "", NULL, "server", "Show memory usage details"},
    {"memory|malloc-stats", memory_command, 2, "", "", NULL, "server", "Show allocator internal stats"},
    {"memory|help", memory_command, 2, "loading stale", "", NULL, "server", "List the MEMORY subcommands"},
    {NULL},
};

static struct cmd slowlog_subs[] = {
    {"slowlog|get", slowlog_command, -2, "admin loading stale", "", NULL, "server", "The newest slow log entries"},
    {"slowlog|len", slowlog_command, 2, "admin loading stale", "", NULL, "server", "Number of entries in the slow log"},
    {"slowlog|reset", slowlog_command, 2, "admin loading stale", "", NULL, "server", "Empty the slow log"},
    {"slowlog|help", slowlog_command, 2, "loading stale", "", NULL, "server", "List the SLOWLOG subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"info", info_command, -1, "loading stale", "@dangerous", NULL, "server", "Get information and statistics about the server"},
    {"config", config_command, -2, "", "", NULL, "server", "A container for server configuration commands", config_subs},
    {"dbsize", dbsize_command, 1, "readonly fast", "@keyspace", NULL, "server", "Return the number of keys in the selected database"},
    {"flushdb", flushdb_command, -1, "write", "@keyspace @dangerous", NULL, "server", "Remove all keys from the current database"},
    {"flushall", flushall_command, -1, "write", "@keyspace @dangerous", NULL, "server", "Remove all keys from all databases"},
    {"wait", wait_command, 3, "noscript", "@connection", NULL, "generic", "Wait for the synchronous replication of all the write commands sent in the context of the current connection", NULL, NULL, &wait_block_spec},
    {"swapdb", swapdb_command, 3, "write fast tc:allstripes", "@keyspace @dangerous", NULL, "server", "Swaps two Redis databases"},
    {"time", time_command, 1, "loading stale fast", "", NULL, "server", "Return the current server time"},
    {"shutdown", shutdown_command, -1, "admin noscript loading stale no_multi allow_busy", "", NULL, "server", "Synchronously save the dataset to disk and then shut down the server", NULL, NULL, &shutdown_block_spec},
    {"memory", memory_command, -2, "", "", NULL, "server", "A container for memory diagnostics commands", memory_subs},
    {"slowlog", slowlog_command, -2, "", "", NULL, "server", "A container for slow log commands", slowlog_subs},
};

void cmd_server_setup(void)
{
    store_mem_flush();
    atomic_store(&startup_used, (size_t)store_used_for_limit());
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
