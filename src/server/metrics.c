/* The Prometheus endpoint's content (metrics.h). Everything is read the way INFO reads it:
 * per-worker and per-stripe counters with relaxed loads (no lock a worker takes on its
 * request path), the command statistics through their readers' mutex, the allocator's totals.
 * Counter families end in _total; each family has one HELP and one TYPE line. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "cmd/blocking.h"
#include "cmd/cmd.h"
#include "cmd/repl.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/util.h"
#include "mc/mc_cmd.h"
#include "net/http_srv.h"
#include "net/worker.h"
#include "server/metrics.h"
#include "store/store.h"

#define TWINCACHE_VERSION "0.1.0"
#define MC_DB 0 /* the memcached protocol's database (mc_int.h) */

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void family(struct buf *b, const char *name, const char *type, const char *help)
{
    put(b, "# HELP twincache_%s %s\n# TYPE twincache_%s %s\n", name, help, name, type);
}

/* one family with one unlabelled sample */
static void one_u(struct buf *b, const char *name, const char *type, const char *help,
                  uint64_t v)
{
    family(b, name, type, help);
    put(b, "twincache_%s %llu\n", name, (unsigned long long)v);
}

static void one_d(struct buf *b, const char *name, const char *type, const char *help, double v)
{
    family(b, name, type, help);
    put(b, "twincache_%s %.6f\n", name, v);
}

/* a label value as the text format wants it: \\ \" \n escaped */
static void label_value(char *out, size_t cap, const char *v)
{
    size_t o = 0;

    for (; *v && o + 3 < cap; v++) {
        if (*v == '\\' || *v == '"') {
            out[o++] = '\\';
            out[o++] = *v;
        } else if (*v == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else {
            out[o++] = *v;
        }
    }
    out[o] = '\0';
}

/* ---- per command ---- */

struct cmd_pass {
    struct buf *b;
    int field; /* 0 calls, 1 seconds, 2 rejected, 3 failed */
};

static void cmd_sample(const struct cmd *cmd, const struct cmdstat *st, void *arg)
{
    struct cmd_pass *p = arg;
    char name[160];
    static const char *const fam[] = {"commands_total", "commands_duration_seconds_total",
                                      "commands_rejected_calls_total",
                                      "commands_failed_calls_total"};

    label_value(name, sizeof(name), cmd->name);
    if (p->field == 1)
        put(p->b, "twincache_%s{cmd=\"%s\"} %.6f\n", fam[1], name, (double)st->usec / 1e6);
    else
        put(p->b, "twincache_%s{cmd=\"%s\"} %llu\n", fam[p->field], name,
            (unsigned long long)(p->field == 0 ? st->calls
                                 : p->field == 2 ? st->rejected : st->failed));
}

static void commands(struct buf *b)
{
    static const struct {
        const char *name, *help;
    } f[] = {
        {"commands_total", "Calls of each command that ran (INFO commandstats calls)"},
        {"commands_duration_seconds_total", "Time spent running each command (INFO commandstats usec)"},
        {"commands_rejected_calls_total",
         "Calls refused before they ran: arity, ACL, OOM, MISCONF, BUSY (rejected_calls)"},
        {"commands_failed_calls_total", "Calls that ran and answered an error (failed_calls)"},
    };

    for (int i = 0; i < 4; i++) {
        struct cmd_pass p = {b, i};
        family(b, f[i].name, "counter", f[i].help);
        cmdstats_visit(cmd_sample, &p);
    }
    one_u(b, "error_replies_total", "counter", "Error replies sent (total_error_replies)",
          cmdstats_error_replies());
}

/* ---- memcached protocol ---- */

/* the counters under the names memcached's "stats" gives them */
static void mc_sample(const char *field, uint64_t v, void *arg)
{
    static const char *const rename[][2] = {
        {"get_cmds", "cmd_get"},      {"set_cmds", "cmd_set"},
        {"flush_cmds", "cmd_flush"},  {"touch_cmds", "cmd_touch"},
        {"meta_cmds", "cmd_meta"},    {"too_large", "store_too_large"},
        {"no_memory", "store_no_memory"}, {"conns_total", "total_connections"},
    };
    struct buf *b = arg;
    const char *name = field;

    for (size_t i = 0; i < sizeof(rename) / sizeof(rename[0]); i++)
        if (!strcmp(field, rename[i][0]))
            name = rename[i][1];
    put(b, "# HELP twincache_memcached_%s_total memcached \"stats\" %s (since \"stats reset\")\n"
           "# TYPE twincache_memcached_%s_total counter\ntwincache_memcached_%s_total %llu\n",
        name, name, name, name, (unsigned long long)v);
}

static void memcached(struct buf *b, struct srv *srv)
{
    one_u(b, "memcached_connections", "gauge", "Open memcached-protocol connections",
          (uint64_t)mc_stats_curr_conns());
    one_u(b, "memcached_items", "gauge",
          "Items the memcached protocol sees (keys of database 0, curr_items)",
          store_dbsize(srv->store, MC_DB));
    mc_stats_visit(mc_sample, b);
}

int metrics_render(struct buf *b, void *arg)
{
    struct srv *srv = arg;
    struct alloc_stats as;
    struct store_totals t;
    struct rusage ru;
    size_t rss = alloc_rss(), used;
    uint64_t cmds = 0, in = 0, out = 0, conns = 0, rejected = 0, off = 0;
    int64_t now = util_now_ms();
    char id[41];
    int replica = atomic_load(&repl_is_replica), ncl, nrepl;

    family(b, "info", "gauge", "Constant 1, labelled with the server's versions");
    put(b, "twincache_info{version=\"%s\",redis_version=\"%s\"} 1\n", TWINCACHE_VERSION,
        TC_VERSION);
    one_d(b, "uptime_seconds", "gauge", "Seconds since the server started",
          (double)(now - srv->start_ms) / 1000.0);
    one_d(b, "start_time_seconds", "gauge", "When the server started (Unix time)",
          (double)srv->start_ms / 1000.0);

    commands(b);

    /* memory */
    used = cmd_used_memory(&as, rss);
    one_u(b, "memory_used_bytes", "gauge", "Memory maxmemory is enforced on (used_memory)",
          used);
    one_u(b, "memory_used_peak_bytes", "gauge", "Peak of used_memory (used_memory_peak)",
          cmd_used_memory_peak(used));
    one_u(b, "memory_rss_bytes", "gauge", "Resident set size (used_memory_rss)", rss);
    {
        int64_t ds = store_mem_used();
        one_u(b, "memory_dataset_bytes", "gauge", "Bytes of the keyspace (used_memory_dataset)",
              ds > 0 ? (uint64_t)ds : 0);
    }
    one_u(b, "memory_max_bytes", "gauge", "maxmemory (0: no limit)",
          cfg.maxmemory > 0 ? (uint64_t)cfg.maxmemory : 0);
    one_u(b, "memory_allocator_allocated_bytes", "gauge", "Allocator: bytes allocated",
          as.allocated);
    one_u(b, "memory_allocator_active_bytes", "gauge", "Allocator: bytes in active pages",
          as.active);
    one_u(b, "memory_allocator_resident_bytes", "gauge", "Allocator: bytes resident",
          as.resident);
    /* the workers' own sums (relaxed loads), not INFO's walk of every connection under each
     * worker's list lock */
    one_u(b, "memory_clients_normal_bytes", "gauge",
          "Memory of normal and Pub/Sub clients (mem_clients_normal)", srv_clients_mem(srv));

    /* keyspace */
    store_totals(srv->store, &t);
    family(b, "db_keys", "gauge", "Keys in each database (non-empty ones, as INFO keyspace)");
    for (int d = 0; d < cfg.databases; d++) {
        uint64_t k = store_dbsize(srv->store, d);
        if (k || d == 0)
            put(b, "twincache_db_keys{db=\"db%d\"} %llu\n", d, (unsigned long long)k);
    }
    family(b, "db_keys_expiring", "gauge", "Keys with a time to live in each database");
    for (int d = 0; d < cfg.databases; d++) {
        uint64_t k = store_dbsize(srv->store, d);
        if (k || d == 0)
            put(b, "twincache_db_keys_expiring{db=\"db%d\"} %llu\n", d,
                (unsigned long long)store_db_expires(srv->store, d));
    }
    one_u(b, "expired_keys_total", "counter", "Keys removed because their TTL passed",
          t.expired);
    one_u(b, "evicted_keys_total", "counter", "Keys evicted under maxmemory", t.evicted);
    one_u(b, "keyspace_hits_total", "counter", "Key look-ups that found the key", t.hits);
    one_u(b, "keyspace_misses_total", "counter", "Key look-ups that did not", t.misses);

    /* connections and workers */
    /* replication's chain mutex only while replication is on (it is a leaf that writing
     * workers take then) */
    nrepl = atomic_load(&repl_on) ? repl_online_replicas() : 0;
    ncl = atomic_load(&srv->nclients) - nrepl;
    one_u(b, "connected_clients", "gauge", "Client connections, both protocols, less replicas",
          ncl > 0 ? (uint64_t)ncl : 0);
    one_u(b, "blocked_clients", "gauge", "Clients blocked in BLPOP, XREAD, WAIT...",
          (uint64_t)block_nclients());
    one_u(b, "max_clients", "gauge", "maxclients", (uint64_t)cfg.maxclients);
    family(b, "worker_connections", "gauge", "Connections owned by each worker thread");
    for (int i = 0; i < srv->nworkers; i++)
        put(b, "twincache_worker_connections{worker=\"%d\"} %d\n", i,
            atomic_load(&srv->workers[i].load));
    family(b, "worker_commands_total", "counter", "Commands run by each worker thread");
    for (int i = 0; i < srv->nworkers; i++) {
        uint64_t v = STAT_GET(srv->workers[i].st.commands);
        cmds += v;
        put(b, "twincache_worker_commands_total{worker=\"%d\"} %llu\n", i, (unsigned long long)v);
    }
    family(b, "worker_net_input_bytes_total", "counter", "Bytes read by each worker thread");
    for (int i = 0; i < srv->nworkers; i++) {
        uint64_t v = STAT_GET(srv->workers[i].st.net_in);
        in += v;
        put(b, "twincache_worker_net_input_bytes_total{worker=\"%d\"} %llu\n", i,
            (unsigned long long)v);
    }
    family(b, "worker_net_output_bytes_total", "counter", "Bytes written by each worker thread (not to replicas)");
    for (int i = 0; i < srv->nworkers; i++) {
        uint64_t v = STAT_GET(srv->workers[i].st.net_out);
        out += v;
        put(b, "twincache_worker_net_output_bytes_total{worker=\"%d\"} %llu\n", i,
            (unsigned long long)v);
    }
    for (int i = 0; i < srv->nworkers; i++) {
        conns += STAT_GET(srv->workers[i].st.conns_received);
        rejected += STAT_GET(srv->workers[i].st.rejected);
    }
    one_u(b, "commands_processed_total", "counter", "Commands run, every worker", cmds);
    one_u(b, "net_input_bytes_total", "counter", "Bytes read from clients", in);
    one_u(b, "net_output_bytes_total", "counter", "Bytes written to clients (not replicas)", out);
    {
        uint64_t ro = 0;
        for (int i = 0; i < srv->nworkers; i++)
            ro += STAT_GET(srv->workers[i].st.net_repl_out);
        one_u(b, "net_repl_output_bytes_total", "counter", "Bytes written to replicas", ro);
        one_u(b, "net_repl_input_bytes_total", "counter", "Bytes read from the primary",
              atomic_load_explicit(&repl_link_net_in, memory_order_relaxed));
    }
    one_u(b, "connections_received_total", "counter", "Connections accepted", conns);
    one_u(b, "rejected_connections_total", "counter", "Connections refused at maxclients",
          rejected);

    /* replication */
    family(b, "replication_role", "gauge", "1 for the server's replication role");
    put(b, "twincache_replication_role{role=\"master\"} %d\n", !replica);
    put(b, "twincache_replication_role{role=\"slave\"} %d\n", replica);
    if (nrepl || replica || atomic_load(&repl_on))
        repl_get_id(id, &off);
    one_u(b, "replication_offset", "gauge", "Replication offset (master_repl_offset)", off);
    one_u(b, "connected_replicas", "gauge", "Replicas online (connected_slaves)",
          (uint64_t)nrepl);

    /* process */
    getrusage(RUSAGE_SELF, &ru);
    one_d(b, "cpu_user_seconds_total", "counter", "User CPU time (used_cpu_user)",
          (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6);
    one_d(b, "cpu_sys_seconds_total", "counter", "System CPU time (used_cpu_sys)",
          (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);

    memcached(b, srv);
    return 0;
}

int metrics_start(struct srv *srv, char *why, size_t cap)
{
    char bind[sizeof(cfg.bind)];

    if (!cfg.metrics_port)
        return 0;
    config_str(cfg.bind, bind, sizeof(bind));
    return http_srv_start(cfg.metrics_port, bind, "/metrics", metrics_render, srv, why, cap);
}

void metrics_stop(void)
{
    http_srv_stop();
}
