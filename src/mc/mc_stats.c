/* memcached stats: general, settings, items, slabs, sizes, conns, detail, cachedump and reset,
 * with memcached 1.6's field names. Counters are the workers' own (summed racily when read)
 * and the store's totals; fields we have no counterpart for read 0. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "mc/mc_cmd.h"
#include "mc/mc_int.h"

/* Store totals that "stats reset" zeroes (kept as a baseline, the store is shared). */
struct mc_store_base {
    uint64_t stored, evicted, expired_unfetched, evicted_unfetched, expired_swept;
};

static struct mc_stats g_base; /* subtracted after "stats reset", under g_base_lock */
static struct mc_store_base g_store_base;
static pthread_mutex_t g_base_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- "stats detail": per-prefix counters (the key up to its first ':'), as memcached keeps
 * them: text get/gets/gat (lookups and hits), storage commands and deletes. Only while
 * "stats detail on": then every counted command takes g_detail_lock (memcached's own
 * design for this debugging aid); off, a relaxed load is all it costs. ---- */
#define DETAIL_BUCKETS 256
#define DETAIL_MAX 65536 /* prefixes tracked at most */

struct prefix_stat {
    struct prefix_stat *next;  /* bucket chain */
    struct prefix_stat *older; /* every prefix, newest first */
    uint64_t get, hit, set, del;
    size_t n;
    char p[];
};

_Atomic int mc_detail_on;
static pthread_mutex_t g_detail_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prefix_stat *g_detail_tab[DETAIL_BUCKETS]; /* under g_detail_lock */
static struct prefix_stat *g_detail_newest;
static int g_detail_n;

void mc_detail_count(const char *key, size_t klen, int what, int hit)
{
    const char *colon = memchr(key, ':', klen);
    struct prefix_stat *ps;
    uint32_t h = 2166136261u;
    size_t n;

    if (!colon)
        return;
    n = (size_t)(colon - key);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)key[i]) * 16777619u;
    pthread_mutex_lock(&g_detail_lock);
    for (ps = g_detail_tab[h % DETAIL_BUCKETS]; ps; ps = ps->next)
        if (ps->n == n && memcmp(ps->p, key, n) == 0)
            break;
    if (!ps && g_detail_n < DETAIL_MAX && (ps = calloc(1, sizeof(*ps) + n + 1)) != NULL) {
        memcpy(ps->p, key, n);
        ps->n = n;
        ps->next = g_detail_tab[h % DETAIL_BUCKETS];
        g_detail_tab[h % DETAIL_BUCKETS] = ps;
        ps->older = g_detail_newest;
        g_detail_newest = ps;
        g_detail_n++;
    }
    if (ps) {
        if (what == MC_DETAIL_GET) {
            ps->get++;
            ps->hit += hit != 0;
        } else if (what == MC_DETAIL_SET) {
            ps->set++;
        } else {
            ps->del++;
        }
    }
    pthread_mutex_unlock(&g_detail_lock);
}

static void detail_dump(struct conn *c)
{
    pthread_mutex_lock(&g_detail_lock);
    for (struct prefix_stat *ps = g_detail_newest; ps; ps = ps->older) {
        char line[64];
        int n = snprintf(line, sizeof(line), " get %llu hit %llu set %llu del %llu\r\n",
                         (unsigned long long)ps->get, (unsigned long long)ps->hit,
                         (unsigned long long)ps->set, (unsigned long long)ps->del);
        mc_check(c, buf_append(&c->wbuf, "PREFIX ", 7));
        mc_check(c, buf_append(&c->wbuf, ps->p, ps->n));
        mc_check(c, buf_append(&c->wbuf, line, (size_t)n));
    }
    pthread_mutex_unlock(&g_detail_lock);
    mc_out_line(c, "END");
}

static void detail_reset(void)
{
    pthread_mutex_lock(&g_detail_lock);
    while (g_detail_newest) {
        struct prefix_stat *ps = g_detail_newest;
        g_detail_newest = ps->older;
        free(ps);
    }
    memset(g_detail_tab, 0, sizeof(g_detail_tab));
    g_detail_n = 0;
    pthread_mutex_unlock(&g_detail_lock);
}

static void sum_stats(struct mc_stats *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < mc_srv->nworkers; i++) {
#define X(f) t->f += __atomic_load_n(&mc_wstats[i].f, __ATOMIC_RELAXED);
        MC_STAT_FIELDS(X)
#undef X
    }
}

#define stat_line(c, name, ...) mc_check((c), mc_compose_stat(&(c)->wbuf, (name), __VA_ARGS__))

#define STAT_U(c, name, v) mc_check((c), mc_compose_stat_u64(&(c)->wbuf, (name), (uint64_t)(v)))

static uint64_t limit_maxbytes(void)
{
    if (cfg.maxmemory > 0)
        return (uint64_t)cfg.maxmemory;
    return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void stats_general(struct conn *c)
{
    struct srv *srv = c->w->srv;
    struct mc_stats t;
    struct store_totals st;
    struct rusage ru;
    uint64_t rejected = 0;
    int64_t now = mc_now(c);
    int curr = atomic_load(&mc_curr_conns);
    static const char *const zeros1[] = {
        "slab_reassign_rescues", "slab_reassign_chunk_rescues", "slab_reassign_evictions_nomem",
        "slab_reassign_inline_reclaim", "slab_reassign_busy_items", "slab_reassign_busy_deletes",
        "slab_reassign_running", "slabs_moved", "lru_crawler_running", "lru_crawler_starts",
        "lru_maintainer_juggles", "malloc_fails", "log_worker_dropped", "log_worker_written",
        "log_watcher_skipped", "log_watcher_sent", "log_watchers", "unexpected_napi_ids",
        "round_robin_fallback"};
    static const char *const zeros2[] = {
        "reclaimed", "crawler_reclaimed", "crawler_items_checked", "lrutail_reflocked",
        "moves_to_cold", "moves_to_warm", "moves_within_lru", "direct_reclaims",
        "lru_bumps_dropped"};

    sum_stats(&t);
    store_totals(srv->store, &st);
    for (int i = 0; i < srv->nworkers; i++)
        rejected += __atomic_load_n(&srv->workers[i].st.rejected, __ATOMIC_RELAXED);
    pthread_mutex_lock(&g_base_lock);
#define X(f) t.f -= g_base.f;
    MC_STAT_FIELDS(X)
#undef X
    st.stored -= g_store_base.stored;
    st.evicted -= g_store_base.evicted;
    st.expired_unfetched -= g_store_base.expired_unfetched;
    st.evicted_unfetched -= g_store_base.evicted_unfetched;
    st.expired_swept -= g_store_base.expired_swept;
    pthread_mutex_unlock(&g_base_lock);
    getrusage(RUSAGE_SELF, &ru);

    STAT_U(c, "pid", getpid());
    STAT_U(c, "uptime", (now - srv->start_ms) / 1000);
    STAT_U(c, "time", now / 1000);
    stat_line(c, "version", "%s", MC_VERSION_STR);
    stat_line(c, "libevent", "%s", "none");
    STAT_U(c, "pointer_size", sizeof(void *) * 8);
    stat_line(c, "rusage_user", "%ld.%06ld", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
    stat_line(c, "rusage_system", "%ld.%06ld", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    STAT_U(c, "max_connections", cfg.maxclients);
    STAT_U(c, "curr_connections", curr);
    STAT_U(c, "total_connections", t.conns_total);
    if (mc_cfg.maxconns_fast) /* as memcached: only while maxconns_fast is on */
        STAT_U(c, "rejected_connections", rejected);
    STAT_U(c, "connection_structures", curr);
    STAT_U(c, "response_obj_oom", 0);
    STAT_U(c, "response_obj_count", 0);
    STAT_U(c, "response_obj_bytes", 0);
    STAT_U(c, "read_buf_count", 0);
    STAT_U(c, "read_buf_bytes", 0);
    STAT_U(c, "read_buf_bytes_free", 0);
    STAT_U(c, "read_buf_oom", 0);
    STAT_U(c, "reserved_fds", 0);
    STAT_U(c, "cmd_get", t.get_cmds);
    STAT_U(c, "cmd_set", t.set_cmds);
    STAT_U(c, "cmd_flush", t.flush_cmds);
    STAT_U(c, "cmd_touch", t.touch_cmds);
    STAT_U(c, "cmd_meta", t.meta_cmds);
    STAT_U(c, "get_hits", t.get_hits);
    STAT_U(c, "get_misses", t.get_misses);
    STAT_U(c, "get_expired", t.get_expired);
    STAT_U(c, "get_flushed", t.get_flushed);
    STAT_U(c, "delete_misses", t.delete_misses);
    STAT_U(c, "delete_hits", t.delete_hits);
    STAT_U(c, "incr_misses", t.incr_misses);
    STAT_U(c, "incr_hits", t.incr_hits);
    STAT_U(c, "decr_misses", t.decr_misses);
    STAT_U(c, "decr_hits", t.decr_hits);
    STAT_U(c, "cas_misses", t.cas_misses);
    STAT_U(c, "cas_hits", t.cas_hits);
    STAT_U(c, "cas_badval", t.cas_badval);
    STAT_U(c, "touch_hits", t.touch_hits);
    STAT_U(c, "touch_misses", t.touch_misses);
    STAT_U(c, "store_too_large", t.too_large);
    STAT_U(c, "store_no_memory", t.no_memory);
    STAT_U(c, "auth_cmds", t.auth_cmds);
    STAT_U(c, "auth_errors", t.auth_errors);
    STAT_U(c, "bytes_read", t.bytes_read);
    STAT_U(c, "bytes_written", t.bytes_written);
    STAT_U(c, "limit_maxbytes", limit_maxbytes());
    STAT_U(c, "accepting_conns", 1);
    STAT_U(c, "listen_disabled_num", 0);
    STAT_U(c, "time_in_listen_disabled_us", 0);
    STAT_U(c, "threads", srv->nworkers);
    STAT_U(c, "conn_yields", 0);
    if (mc_cfg.idle_timeout > 0) /* as memcached: only with -o idle_timeout */
        STAT_U(c, "idle_kicks", t.idle_kicks);
    STAT_U(c, "hash_power_level", 0);
    STAT_U(c, "hash_bytes", 0);
    STAT_U(c, "hash_is_expanding", 0);
    for (size_t i = 0; i < sizeof(zeros1) / sizeof(zeros1[0]); i++) {
        /* as memcached: the crawler's and the maintainer's counters only while configured */
        if ((!mc_crawler_on() && !strncmp(zeros1[i], "lru_crawler_", 12)) ||
            (!mc_cfg.lru_maintainer && !strcmp(zeros1[i], "lru_maintainer_juggles")) ||
            (!mc_cfg.slab_reassign && !strncmp(zeros1[i], "slab", 4)))
            continue;
        STAT_U(c, zeros1[i], 0);
    }
    STAT_U(c, "bytes", st.mem > 0 ? st.mem : 0);
    STAT_U(c, "curr_items", store_dbsize(srv->store, MC_DB));
    STAT_U(c, "total_items", st.stored);
    STAT_U(c, "slab_global_page_pool", 0);
    STAT_U(c, "expired_unfetched", st.expired_unfetched);
    STAT_U(c, "evicted_unfetched", st.evicted_unfetched);
    if (mc_cfg.lru_maintainer)
        STAT_U(c, "evicted_active", 0);
    STAT_U(c, "evictions", st.evicted);
    for (size_t i = 0; i < sizeof(zeros2) / sizeof(zeros2[0]); i++) {
        if (!mc_cfg.lru_maintainer && i >= 4) /* moves_to_cold on: the maintainer's */
            continue;
        /* the active expire cycle is twincache's background reaper: memcached's crawler */
        STAT_U(c, zeros2[i], i == 1 ? st.expired_swept : 0);
    }
    mc_out_line(c, "END");
}

static void stats_settings(struct conn *c)
{
    struct srv *srv = c->w->srv;

    STAT_U(c, "maxbytes", limit_maxbytes());
    STAT_U(c, "maxconns", cfg.maxclients);
    STAT_U(c, "tcpport", mc_cfg.tcpport ? mc_cfg.tcpport : cfg.memcache_port);
    STAT_U(c, "udpport", mc_cfg.udp_port);
    stat_line(c, "inter", "%s", mc_cfg.memcached_cmdline ? mc_cfg.inter : cfg.bind);
    STAT_U(c, "verbosity", atomic_load(&mc_verbosity));
    STAT_U(c, "oldest", 0);
    stat_line(c, "evictions", "%s", cfg.maxmemory_policy == MM_NOEVICTION ? "off" : "on");
    stat_line(c, "domain_socket", "%s", mc_cfg.domain_socket);
    stat_line(c, "umask", "%o", (unsigned)mc_cfg.umask);
    stat_line(c, "shutdown_command", "%s", mc_cfg.shutdown_enabled ? "yes" : "no");
    stat_line(c, "growth_factor", "%s", mc_cfg.growth_factor);
    STAT_U(c, "chunk_size", mc_cfg.chunk_size);
    STAT_U(c, "num_threads", srv->nworkers);
    STAT_U(c, "num_threads_per_udp", srv->nworkers);
    stat_line(c, "stat_key_prefix", "%s", ":");
    stat_line(c, "detail_enabled", "%s", atomic_load(&mc_detail_on) ? "yes" : "no");
    STAT_U(c, "reqs_per_event", mc_cfg.reqs_per_event);
    stat_line(c, "cas_enabled", "%s", mc_cfg.cas_enabled ? "yes" : "no");
    STAT_U(c, "tcp_backlog", cfg.tcp_backlog);
    stat_line(c, "binding_protocol", "%s",
              strcmp(mc_cfg.binding, "auto") ? mc_cfg.binding : "auto-negotiate");
    stat_line(c, "auth_enabled_sasl", "%s", mc_cfg.sasl ? "yes" : "no");
    stat_line(c, "auth_enabled_ascii", "%s", "no");
    STAT_U(c, "item_size_max", cfg.item_size_max);
    stat_line(c, "maxconns_fast", "%s", mc_cfg.maxconns_fast ? "yes" : "no");
    STAT_U(c, "hashpower_init", mc_cfg.hashpower);
    stat_line(c, "slab_reassign", "%s", mc_cfg.slab_reassign ? "yes" : "no");
    STAT_U(c, "slab_automove", 0);
    stat_line(c, "slab_automove_ratio", "%s", "0.80");
    STAT_U(c, "slab_automove_window", 30);
    STAT_U(c, "slab_chunk_max",
           mc_cfg.slab_chunk_max ? mc_cfg.slab_chunk_max : cfg.item_size_max / 2);
    stat_line(c, "lru_crawler", "%s", mc_crawler_on() ? "yes" : "no");
    STAT_U(c, "lru_crawler_sleep", 100);
    STAT_U(c, "lru_crawler_tocrawl", 0);
    STAT_U(c, "tail_repair_time", 0);
    stat_line(c, "flush_enabled", "%s", mc_cfg.flush_enabled ? "yes" : "no");
    stat_line(c, "dump_enabled", "%s", mc_cfg.dump_enabled ? "yes" : "no");
    stat_line(c, "hash_algorithm", "%s", "xxh3");
    stat_line(c, "lru_maintainer_thread", "%s", mc_cfg.lru_maintainer ? "yes" : "no");
    stat_line(c, "lru_segmented", "%s", "no");
    STAT_U(c, "hot_lru_pct", 20);
    STAT_U(c, "warm_lru_pct", 40);
    stat_line(c, "hot_max_factor", "%s", "0.20");
    stat_line(c, "warm_max_factor", "%s", "2.00");
    stat_line(c, "temp_lru", "%s", "no");
    STAT_U(c, "temporary_ttl", 61);
    STAT_U(c, "idle_timeout", mc_cfg.idle_timeout);
    STAT_U(c, "watcher_logbuf_size", 262144);
    STAT_U(c, "worker_logbuf_size", 65536);
    STAT_U(c, "read_buf_mem_limit", 0);
    stat_line(c, "track_sizes", "%s", mc_cfg.track_sizes ? "yes" : "no");
    stat_line(c, "inline_ascii_response", "%s", "no");
    STAT_U(c, "ext_item_size", 512);
    STAT_U(c, "ext_item_age", 4294967295u);
    STAT_U(c, "ext_low_ttl", 0);
    STAT_U(c, "ext_recache_rate", 2000);
    STAT_U(c, "ext_wbuf_size", 4194304);
    STAT_U(c, "ext_compact_under", 0);
    STAT_U(c, "ext_drop_under", 0);
    STAT_U(c, "ext_max_sleep", 1000000);
    stat_line(c, "ext_max_frag", "%s", "0.80");
    stat_line(c, "slab_automove_freeratio", "%s", "0.010");
    stat_line(c, "ext_drop_unread", "%s", "no");
    stat_line(c, "ssl_enabled", "%s", "no");
    stat_line(c, "ssl_chain_cert", "%s", "(null)");
    stat_line(c, "ssl_key", "%s", "(null)");
    STAT_U(c, "ssl_verify_mode", 0);
    STAT_U(c, "ssl_keyformat", 1);
    stat_line(c, "ssl_ciphers", "%s", "NULL");
    stat_line(c, "ssl_ca_cert", "%s", "NULL");
    STAT_U(c, "ssl_wbuf_size", 16384);
    stat_line(c, "ssl_session_cache", "%s", "no");
    stat_line(c, "ssl_kernel_tls", "%s", "no");
    stat_line(c, "ssl_min_version", "%s", "tlsv1.2");
    stat_line(c, "num_napi_ids", "%s", "(null)");
    stat_line(c, "memory_file", "%s", "(null)");
    mc_out_line(c, "END");
}

/* The chunk size of the smallest memcached slab class holding an item of size bytes: the
 * classes memcached's slabs_init makes from -n (plus its 48-byte item header), -f and
 * slab_chunk_max, 8-byte aligned; the last one is slab_chunk_max itself. */
static uint64_t class_chunk(uint64_t size)
{
    double factor = atof(mc_cfg.growth_factor);
    uint64_t max = mc_cfg.slab_chunk_max > 0 ? (uint64_t)mc_cfg.slab_chunk_max : 524288;
    double cur = 48.0 + (mc_cfg.chunk_size > 0 ? mc_cfg.chunk_size : 48);

    if (factor <= 1.0)
        factor = 1.25;
    for (int i = 1; i < 63 && cur < (double)max / factor; i++) {
        uint64_t sz = (uint64_t)cur;
        if (sz % 8)
            sz += 8 - sz % 8;
        if (sz >= size)
            return sz;
        cur = (double)sz * factor;
    }
    return max;
}

/* items and slabs: the whole keyspace of database 0 as one class, "1", whose chunk is the
 * memcached class that holds the average item. */
static void stats_items(struct conn *c, int slabs)
{
    struct srv *srv = c->w->srv;
    uint64_t n = store_dbsize(srv->store, MC_DB);
    struct mc_stats t;
    struct store_totals st;
    char name[64];
    static const char *const item_fields[] = {
        "number", "number_hot", "number_warm", "number_cold", "age_hot", "age_warm", "age",
        "mem_requested", "evicted", "evicted_nonzero", "evicted_time", "outofmemory",
        "tailrepairs", "reclaimed", "expired_unfetched", "evicted_unfetched", "evicted_active",
        "crawler_reclaimed", "crawler_items_checked", "lrutail_reflocked", "moves_to_cold",
        "moves_to_warm", "moves_within_lru", "direct_reclaims", "hits_to_hot", "hits_to_warm",
        "hits_to_cold", "hits_to_temp"};

    sum_stats(&t);
    store_totals(srv->store, &st);
    pthread_mutex_lock(&g_base_lock); /* "stats reset" zeroes the item counters too */
#define X(f) t.f -= g_base.f;
    MC_STAT_FIELDS(X)
#undef X
    st.evicted -= g_store_base.evicted;
    st.expired_unfetched -= g_store_base.expired_unfetched;
    st.evicted_unfetched -= g_store_base.evicted_unfetched;
    st.expired_swept -= g_store_base.expired_swept;
    pthread_mutex_unlock(&g_base_lock);
    if (slabs) {
        /* memcached lists a class once it has pages, even when emptied since */
        if (n || st.stored) {
            uint64_t mem = st.mem > 0 ? (uint64_t)st.mem : 0;
            uint64_t chunk = class_chunk(n ? (mem + n - 1) / n : 0);
            uint64_t per = 1048576 / chunk, pages = (n + per - 1) / per;
            if (!pages)
                pages = 1;
            STAT_U(c, "1:chunk_size", chunk);
            STAT_U(c, "1:chunks_per_page", per);
            STAT_U(c, "1:total_pages", pages);
            STAT_U(c, "1:total_chunks", pages * per);
            STAT_U(c, "1:used_chunks", n);
            STAT_U(c, "1:free_chunks", pages * per - n);
            STAT_U(c, "1:free_chunks_end", 0);
            STAT_U(c, "1:get_hits", t.get_hits);
            STAT_U(c, "1:cmd_set", t.set_cmds);
            STAT_U(c, "1:delete_hits", t.delete_hits);
            STAT_U(c, "1:incr_hits", t.incr_hits);
            STAT_U(c, "1:decr_hits", t.decr_hits);
            STAT_U(c, "1:cas_hits", t.cas_hits);
            STAT_U(c, "1:cas_badval", t.cas_badval);
            STAT_U(c, "1:touch_hits", t.touch_hits);
        }
        STAT_U(c, "active_slabs", n ? 1 : 0);
        STAT_U(c, "total_malloced", st.mem > 0 ? st.mem : 0);
        mc_out_line(c, "END");
        return;
    }
    if (n) {
        for (size_t i = 0; i < sizeof(item_fields) / sizeof(item_fields[0]); i++) {
            const char *f = item_fields[i];
            uint64_t v = 0;
            if (!strcmp(f, "number") || !strcmp(f, "number_cold"))
                v = n;
            else if (!strcmp(f, "mem_requested"))
                v = st.mem > 0 ? (uint64_t)st.mem : 0;
            else if (!strcmp(f, "evicted"))
                v = st.evicted;
            else if (!strcmp(f, "outofmemory"))
                v = t.no_memory;
            else if (!strcmp(f, "expired_unfetched"))
                v = st.expired_unfetched;
            else if (!strcmp(f, "evicted_unfetched"))
                v = st.evicted_unfetched;
            else if (!strcmp(f, "hits_to_cold"))
                v = t.get_hits;
            else if (!strcmp(f, "crawler_reclaimed"))
                v = st.expired_swept;
            snprintf(name, sizeof(name), "items:1:%s", f);
            STAT_U(c, name, v);
        }
    }
    mc_out_line(c, "END");
}

/* A socket's own address as memcached shows it: tcp:ip:port, tcp6:[ip]:port, udp:..., or
 * unix:path. */
static void sock_name(int fd, const char *kind, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char ip[INET6_ADDRSTRLEN] = "";

    if (getsockname(fd, (struct sockaddr *)&ss, &len)) {
        snprintf(out, cap, "?:<unknown>");
    } else if (ss.ss_family == AF_UNIX) {
        snprintf(out, cap, "unix:%s", ((struct sockaddr_un *)&ss)->sun_path);
    } else if (ss.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
        snprintf(out, cap, "%s:%s:%u", kind, ip, ntohs(a->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
        snprintf(out, cap, "%s6:[%s]:%u", kind, ip, ntohs(a->sin6_port));
    } else {
        snprintf(out, cap, "?:<AF %d>", (int)ss.ss_family);
    }
}

/* "stats conns": the memcached listeners (TCP or unix socket, then UDP), then every memcached
 * connection of every worker, as memcached lists its connection table. */
static void stats_conns(struct conn *c)
{
    struct srv *srv = c->w->srv;
    uint64_t up = (uint64_t)(mc_now(c) - srv->start_ms) / 1000;
    char name[64], addr[160];
    int lfd[SRV_MAX_LISTEN];
    uint8_t lproto[SRV_MAX_LISTEN];
    int nl = srv_listeners(srv, lfd, lproto, SRV_MAX_LISTEN);

    for (int i = 0; i < nl; i++) {
        if ((lproto[i] & 0x3f) != PROTO_MC)
            continue;
        sock_name(lfd[i], "tcp", addr, sizeof(addr));
        snprintf(name, sizeof(name), "%d:addr", lfd[i]);
        stat_line(c, name, "%s", addr);
        snprintf(name, sizeof(name), "%d:state", lfd[i]);
        stat_line(c, name, "%s", "conn_listening");
        snprintf(name, sizeof(name), "%d:secs_since_last_cmd", lfd[i]);
        STAT_U(c, name, up);
    }
    for (int i = 0; i < srv->nudp; i++) {
        if (srv->udp_proto[i] != PROTO_MC)
            continue;
        sock_name(srv->udp_fd[i], "udp", addr, sizeof(addr));
        snprintf(name, sizeof(name), "%d:UDP", srv->udp_fd[i]);
        stat_line(c, name, "%s", "UDP");
        snprintf(name, sizeof(name), "%d:addr", srv->udp_fd[i]);
        stat_line(c, name, "%s", addr);
        snprintf(name, sizeof(name), "%d:state", srv->udp_fd[i]);
        stat_line(c, name, "%s", "conn_read");
        snprintf(name, sizeof(name), "%d:secs_since_last_cmd", srv->udp_fd[i]);
        STAT_U(c, name, up);
    }
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *o = w->conns; o; o = o->next) {
            /* o->mc stays valid while o is listed (unlinked before its close hook) */
            struct mc_conn *m = __atomic_load_n((struct mc_conn **)&o->mc, __ATOMIC_ACQUIRE);
            const char *state = "conn_waiting";
            if (o->proto != PROTO_MC)
                continue;
            if (o == c)
                state = "conn_parse_cmd";
            else if (m && __atomic_load_n(&m->nread, __ATOMIC_RELAXED))
                state = "conn_nread";
            snprintf(name, sizeof(name), "%d:addr", o->fd);
            if (o->flags & CONN_UNIX)
                stat_line(c, name, "%s", "?:<AF 0>"); /* memcached's text for a unix peer */
            else
                stat_line(c, name, "tcp:%s", o->addr);
            snprintf(name, sizeof(name), "%d:listen_addr", o->fd);
            if (o->flags & CONN_UNIX)
                stat_line(c, name, "unix:%s", mc_cfg.domain_socket);
            else
                stat_line(c, name, "tcp:%s", o->laddr);
            snprintf(name, sizeof(name), "%d:state", o->fd);
            stat_line(c, name, "%s", state);
            snprintf(name, sizeof(name), "%d:secs_since_last_cmd", o->fd);
            STAT_U(c, name, (mc_now(c) - o->last_ms) / 1000);
        }
        pthread_mutex_unlock(&w->list_lock);
    }
    mc_out_line(c, "END");
}

static void stats_reset(struct conn *c)
{
    struct store_totals st;

    store_totals(c->w->srv->store, &st);
    pthread_mutex_lock(&g_base_lock);
    sum_stats(&g_base);
    g_store_base.stored = st.stored;
    g_store_base.evicted = st.evicted;
    g_store_base.expired_unfetched = st.expired_unfetched;
    g_store_base.evicted_unfetched = st.evicted_unfetched;
    g_store_base.expired_swept = st.expired_swept;
    pthread_mutex_unlock(&g_base_lock);
    detail_reset();
}

static int tok_eq(const struct mc_tok *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0;
}

void mc_stats_command(struct conn *c, struct mc_req *r)
{
    const struct mc_tok *sub = &r->tok[1];

    if (r->ntok == 2) {
        stats_general(c);
    } else if (tok_eq(sub, "reset")) {
        stats_reset(c);
        mc_out_line(c, "RESET");
    } else if (tok_eq(sub, "detail")) {
        if (r->ntok >= 4 && tok_eq(&r->tok[2], "on")) {
            atomic_store(&mc_detail_on, 1);
            mc_out_line(c, "OK");
        } else if (r->ntok >= 4 && tok_eq(&r->tok[2], "off")) {
            atomic_store(&mc_detail_on, 0);
            mc_out_line(c, "OK");
        } else if (r->ntok >= 4 && tok_eq(&r->tok[2], "dump")) {
            detail_dump(c);
        } else {
            mc_out_line(c, "CLIENT_ERROR usage: stats detail on|off|dump");
        }
    } else if (tok_eq(sub, "settings")) {
        stats_settings(c);
    } else if (tok_eq(sub, "items")) {
        stats_items(c, 0);
    } else if (tok_eq(sub, "slabs")) {
        stats_items(c, 1);
    } else if (tok_eq(sub, "sizes")) {
        mc_out_line(c, "STAT sizes_status disabled");
        mc_out_line(c, "END");
    } else if (tok_eq(sub, "conns")) {
        stats_conns(c);
    } else if (tok_eq(sub, "cachedump")) {
        uint32_t id, limit;
        if (r->ntok < 5)
            mc_out_line(c, "CLIENT_ERROR bad command line");
        else if (!mc_tok_u32(&r->tok[2], &id) || !mc_tok_u32(&r->tok[3], &limit))
            mc_out_line(c, MC_ERR_FORMAT);
        else if (id >= 64)
            mc_out_line(c, "CLIENT_ERROR Illegal slab id");
        else if (!mc_cfg.dump_enabled)
            mc_out_line(c, "CLIENT_ERROR stats cachedump not allowed");
        else
            mc_cachedump(c, id, limit);
    } else {
        mc_out_line(c, MC_ERROR);
    }
}
