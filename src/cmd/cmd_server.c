/* Server commands: INFO CONFIG DBSIZE FLUSHDB FLUSHALL TIME SHUTDOWN MEMORY SLOWLOG DEBUG. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmd/tracking.h"
#include "cmd/cmd.h"
#include "cmd/propagate.h"
#include "cmd/blocking.h"
#include "cmd/pubsub.h"
#include "cmd/slowlog.h"
#include "core/alloc.h"
#include "core/config.h"
#include "persist/persist.h"
#include "store/slab.h"
#include "core/log.h"

#define TC_VERSION "7.0.15"
#define TWINCACHE_VERSION "0.1.0"

/* CONFIG SET maxclients N: as Redis, raise the fd limit to fit N clients plus the server's own
 * fds (64 + 4 per worker, as at start-up), or refuse. Returns 0 when it fits. */
static int maxclients_fit(const char *val, char *err, size_t cap)
{
    long long n;
    struct rlimit rl;
    rlim_t reserve = 64 + 4 * (rlim_t)cfg.threads, want;

    if (!util_str2ll(val, strlen(val), &n) || n < 1)
        return 0; /* config_set reports the bad value */
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
        t.conns_received += STAT_GET(st->conns_received);
        t.rejected += STAT_GET(st->rejected);
    }
    pthread_mutex_lock(&stat_base_lock);
    t.commands -= stat_base.commands;
    t.net_in -= stat_base.net_in;
    t.net_out -= stat_base.net_out;
    t.conns_received -= stat_base.conns_received;
    t.rejected -= stat_base.rejected;
    pthread_mutex_unlock(&stat_base_lock);
    *out = t;
}

static void dbsize_command(struct conn *c)
{
    reply_int(c, (long long)store_dbsize(conn_store(c), c->db));
}

static int flush_args(struct conn *c)
{
    if (c->argc > 2 || (c->argc == 2 && !arg_is(c, 1, "async") && !arg_is(c, 1, "sync"))) {
        reply_error(c, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

static void flushdb_command(struct conn *c)
{
    if (flush_args(c))
        return;
    store_flush(conn_store(c), c->db);
    tracking_flush();
    block_signal_flush(c->db);
    reply_ok(c);
}

static void flushall_command(struct conn *c)
{
    if (flush_args(c))
        return;
    store_flush(conn_store(c), -1);
    tracking_flush();
    block_signal_flush(-1);
    persist_flushall();
    reply_ok(c);
}

static void time_command(struct conn *c)
{
    int64_t us = util_now_us();
    reply_array(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

static void shutdown_command(struct conn *c)
{
    int save = 0, nosave = 0, force = 0;

    for (int i = 1; i < c->argc; i++) {
        if (!arg_is(c, i, "nosave") && !arg_is(c, i, "save") && !arg_is(c, i, "now") &&
            !arg_is(c, i, "force") && !arg_is(c, i, "abort")) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (arg_is(c, i, "abort")) {
            reply_error(c, "ERR No shutdown in progress.");
            return;
        }
        save |= arg_is(c, i, "save");
        nosave |= arg_is(c, i, "nosave");
        force |= arg_is(c, i, "force");
    }
    if (save && nosave) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    log_warn("User requested shutdown...");
    /* saved here so that a failure can be answered, as Redis does (FORCE exits anyway) */
    if (persist_shutdown(save, nosave) && !force) {
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    srv_request_shutdown(c->w->srv, 0);
    /* like Redis, the client gets no reply: the connection closes */
    c->flags |= CONN_CLOSE_ASAP;
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

#define P(...) do { int _n = snprintf(line, sizeof(line), __VA_ARGS__); buf_append(&b, line, (size_t)_n); } while (0)

void (*cmd_info_memory_hook)(struct buf *b);

static void info_command(struct conn *c)
{
    struct srv *srv = c->w->srv;
    struct buf b = {0};
    char line[1024], sec[64] = "", h1[32], h2[32];
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
    for (int a = 1; a < (c->argc > 1 ? c->argc : 2); a++) {
        if (c->argc > 1)
            arg_cstr(c, a, sec, sizeof(sec));
        if (want(sec, "server", 1)) {
            struct utsname u;
            uname(&u);
            P("# Server\r\n");
            P("redis_version:%s\r\n", TC_VERSION);
            P("twincache_version:%s\r\n", TWINCACHE_VERSION);
            P("redis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\n");
            P("redis_mode:standalone\r\n");
            P("os:%s %s %s\r\n", u.sysname, u.release, u.machine);
            P("arch_bits:%d\r\n", (int)sizeof(void *) * 8);
            P("monotonic_clock:POSIX clock_gettime\r\n");
            P("multiplexing_api:epoll\r\n");
            P("atomicvar_api:c11-builtin\r\n");
            P("gcc_version:%d.%d.%d\r\n", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
            P("process_id:%d\r\n", (int)getpid());
            P("process_supervised:no\r\n");
            P("run_id:%016llx%016llx%08x\r\n", (unsigned long long)srv->start_ms * 2654435761ULL,
              (unsigned long long)getpid() * 40503ULL, 0u);
            P("tcp_port:%d\r\n", cfg.port);
            P("memcache_port:%d\r\n", cfg.memcache_port);
            P("server_time_usec:%lld\r\n", (long long)util_now_us());
            P("uptime_in_seconds:%lld\r\n", (long long)((now - srv->start_ms) / 1000));
            P("uptime_in_days:%lld\r\n", (long long)((now - srv->start_ms) / 86400000));
            P("hz:%d\r\nconfigured_hz:%d\r\n", cfg.hz, cfg.hz);
            P("lru_clock:%u\r\n", store_lru_now());
            P("executable:%s\r\n", srv->executable ? srv->executable : "");
            P("config_file:%s\r\n", srv->config_file ? srv->config_file : "");
            P("io_threads_active:%d\r\n", srv->nworkers > 1);
            P("threads:%d\r\n", srv->nworkers);
            /* workers whose socket I/O goes through io_uring batches (io-uring yes and a
             * kernel that allows it); the others use read/writev */
            P("io_uring_workers:%d\r\n", atomic_load(&srv->uring_workers));
            P("\r\n");
        }
        if (want(sec, "clients", 1)) {
            P("# Clients\r\n");
            P("connected_clients:%d\r\n", atomic_load(&srv->nclients));
            P("cluster_connections:0\r\n");
            P("maxclients:%d\r\n", cfg.maxclients);
            P("client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n");
            P("blocked_clients:%ld\r\ntracking_clients:%ld\r\nclients_in_timeout_table:0\r\n", block_nclients(), (long)atomic_load(&tracking_nclients));
            P("\r\n");
        }
        if (want(sec, "memory", 1)) {
            struct alloc_stats as;
            size_t rss = alloc_rss(), used;
            int64_t dataset = store_mem_used();
            /* used_memory is the figure maxmemory is enforced on: the keyspace bytes plus the
             * overhead the timer measured from the allocator (refreshed 10 times a second) */
            store_mem_flush();
            alloc_stats(&as);
            used = (size_t)store_used_for_limit();
            {
                static _Atomic size_t peak;
                size_t p = atomic_load(&peak);
                while (used > p && !atomic_compare_exchange_weak(&peak, &p, used))
                    ;
                if (used > p)
                    p = used;
                bytes_human(h2, sizeof(h2), (double)p);
                bytes_human(h1, sizeof(h1), (double)used);
                P("# Memory\r\n");
                P("used_memory:%zu\r\n", used);
                P("used_memory_human:%s\r\n", h1);
                P("used_memory_peak:%zu\r\n", p);
                P("used_memory_peak_human:%s\r\n", h2);
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
            P("allocator_frag_ratio:%.2f\r\n", as.allocated ? (double)as.active / (double)as.allocated : 0.0);
            bytes_human(h1, sizeof(h1), (double)cfg.maxmemory);
            P("maxmemory:%lld\r\n", cfg.maxmemory);
            P("maxmemory_human:%s\r\n", h1);
            P("maxmemory_policy:%s\r\n", config_policy_name(cfg.maxmemory_policy));
            P("mem_fragmentation_ratio:%.2f\r\n", used ? (double)rss / (double)used : 0.0);
            P("mem_allocator:%s\r\n", alloc_name());
            if (cmd_info_memory_hook)
                cmd_info_memory_hook(&b);
            P("\r\n");
        }
        if (want(sec, "persistence", 1)) {
            persist_info(&b);
        }
        if (want(sec, "stats", 1)) {
            P("# Stats\r\n");
            P("total_connections_received:%llu\r\n", (unsigned long long)conns);
            P("total_commands_processed:%llu\r\n", (unsigned long long)cmds);
            P("instantaneous_ops_per_sec:%lld\r\n", (long long)ops);
            P("total_net_input_bytes:%llu\r\n", (unsigned long long)net_in);
            P("total_net_output_bytes:%llu\r\n", (unsigned long long)net_out);
            P("rejected_connections:%llu\r\n", (unsigned long long)rejected);
            P("expired_keys:%llu\r\n", (unsigned long long)t.expired);
            P("expired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\n");
            P("evicted_keys:%llu\r\n", (unsigned long long)t.evicted);
            P("evicted_clients:0\r\n");
            P("keyspace_hits:%llu\r\n", (unsigned long long)t.hits);
            P("keyspace_misses:%llu\r\n", (unsigned long long)t.misses);
            P("pubsub_channels:%ld\r\npubsub_patterns:%ld\r\n", pubsub_nchannels(), pubsub_npatterns());
            P("tracking_total_keys:%ld\r\ntracking_total_items:%ld\r\ntracking_total_prefixes:%ld\r\n",
              tracking_total_keys(), tracking_total_items(), tracking_total_prefixes());
            P("total_error_replies:0\r\n");
            P("\r\n");
        }
        if (want(sec, "replication", 1)) {
            P("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n");
            P("master_failover_state:no-failover\r\nmaster_replid:0000000000000000000000000000000000000000\r\n");
            P("master_repl_offset:0\r\nrepl_backlog_active:0\r\n\r\n");
        }
        if (want(sec, "cpu", 1)) {
            getrusage(RUSAGE_SELF, &ru);
            P("# CPU\r\n");
            P("used_cpu_sys:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
            P("used_cpu_user:%ld.%06ld\r\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
            P("\r\n");
        }
        if (want(sec, "keyspace", 1)) {
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
    char name[128], err[512];

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
        if (c->argc < 4 || (c->argc - 2) % 2) {
            reply_arity_error(c, "config|set");
            return;
        }
        for (int i = 2; i < c->argc; i += 2) {
            char val[1024];
            const char *v[1] = {val};
            arg_cstr(c, i, name, sizeof(name));
            arg_cstr(c, i + 1, val, sizeof(val));
            if (util_eq_nocase(name, strlen(name), "appendonly") &&
                (util_eq_nocase(val, strlen(val), "yes") || util_eq_nocase(val, strlen(val), "no"))) {
                if (aof_set_enabled(c->w->idx, util_eq_nocase(val, strlen(val), "yes"), err, sizeof(err))) {
                    reply_errorf(c, "ERR %s", err);
                    return;
                }
                continue;
            }
            if (util_eq_nocase(name, strlen(name), "maxclients") && maxclients_fit(val, err, sizeof(err))) {
                reply_errorf(c, "ERR %s", err);
                return;
            }
            if (config_set(name, v, 1, 0, err, sizeof(err))) {
                reply_errorf(c, "ERR %s", err);
                return;
            }
        }
        reply_ok(c);
    } else if (arg_is(c, 1, "resetstat") && c->argc == 2) {
        struct srv *srv = c->w->srv;
        store_reset_stats(srv->store);
        struct worker_stats now;
        stats_sum(srv, &now);
        pthread_mutex_lock(&stat_base_lock); /* now is relative to the old baseline */
        stat_base.commands += now.commands;
        stat_base.net_in += now.net_in;
        stat_base.net_out += now.net_out;
        stat_base.conns_received += now.conns_received;
        stat_base.rejected += now.rejected;
        pthread_mutex_unlock(&stat_base_lock);
        reply_ok(c);
    } else if (arg_is(c, 1, "rewrite") && c->argc == 2) {
        reply_error(c, "ERR The server is running without a config file");
    } else if (arg_is(c, 1, "help")) {
        static const char *help[] = {
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>", "    Set the configuration <directive> to <value>.",
            "RESETSTAT", "    Reset statistics reported by the INFO command.",
            "REWRITE", "    Rewrite the configuration file.",
            "HELP", "    Print this help."};
        reply_array(c, sizeof(help) / sizeof(help[0]));
        for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
            reply_status(c, help[i]);
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
        reply_verbatim(c, "Hi Sam, I can't find any memory issue in your instance. I can only "
                          "account for what occurs on this base.", 97);
    } else if (arg_is(c, 1, "purge") && c->argc == 2) {
        reply_ok(c);
    } else if (arg_is(c, 1, "help")) {
        static const char *help[] = {
            "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR", "    Return memory problems reports.",
            "PURGE", "    Attempt to purge dirty pages for reclamation by the allocator.",
            "USAGE <key> [SAMPLES <count>]", "    Return memory in bytes used by <key> and its value.",
            "HELP", "    Print this help."};
        reply_array(c, sizeof(help) / sizeof(help[0]));
        for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
            reply_status(c, help[i]);
    } else {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%s'. Try MEMORY HELP.", sub);
    }
}

static void debug_command(struct conn *c)
{
    if (arg_is(c, 1, "sleep") && c->argc == 3) {
        char v[64];
        arg_cstr(c, 2, v, sizeof(v));
        double secs = atof(v);
        if (secs > 0)
            usleep((useconds_t)(secs * 1e6));
        reply_ok(c);
    } else if (arg_is(c, 1, "set-active-expire") && c->argc == 3) {
        reply_ok(c);
    } else if (arg_is(c, 1, "jmap") || arg_is(c, 1, "quicklist-packed-threshold")) {
        reply_ok(c);
    } else {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand '%s'. Try DEBUG HELP.", sub);
    }
}

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
    {"time", time_command, 1, "loading stale fast", "", NULL, "server", "Return the current server time"},
    {"shutdown", shutdown_command, -1, "admin noscript loading stale no_multi allow_busy", "", NULL, "server", "Synchronously save the dataset to disk and then shut down the server"},
    {"memory", memory_command, -2, "", "", NULL, "server", "A container for memory diagnostics commands", memory_subs},
    {"slowlog", slowlog_command, -2, "", "", NULL, "server", "A container for slow log commands", slowlog_subs},
    {"debug", debug_command, -2, "admin noscript loading stale", "", NULL, "server", "A container for debugging commands"},
};

void cmd_server_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
