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
#include "store/item.h"
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
        for (int id = 1; id < MC_CLASSES; id++)
            for (int f = 0; f < MC_CLS_NFIELDS; f++)
                t->cls[id][f] += __atomic_load_n(&mc_wstats[i].cls[id][f], __ATOMIC_RELAXED);
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
    uint64_t rejected = 0, swept_m, swept_c;
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
    STAT_U(c, "conn_yields", t.conn_yields);
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
    /* the active expire cycle is twincache's background reaper: memcached's LRU maintainer
     * (which counts in reclaimed) when it runs, else its crawler */
    swept_m = mc_cfg.lru_maintainer ? st.expired_swept : 0;
    swept_c = mc_cfg.lru_maintainer ? 0 : st.expired_swept;
    for (size_t i = 0; i < sizeof(zeros2) / sizeof(zeros2[0]); i++) {
        if (!mc_cfg.lru_maintainer && i >= 4) /* moves_to_cold on: the maintainer's */
            continue;
        STAT_U(c, zeros2[i], i == 0 ? t.reclaimed + swept_m : i == 1 ? swept_c : 0);
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

/* ---- slab classes ---- */

uint32_t mc_class_size[MC_CLASSES];
int mc_nclasses = 1;

/* Evictions and expiry sweeps per class: the store's hook runs on whichever thread removes. */
enum { EV_EVICTED, EV_NONZERO, EV_UNFETCHED, EV_SWEPT, EV_SWEPT_UNFETCHED, EV_N };
struct cls_evict {
    _Atomic uint64_t n[EV_N]; /* evicted (with a TTL, never fetched), swept (never fetched) */
    _Atomic uint32_t time;    /* idle seconds of the last one evicted */
};
static struct cls_evict g_evict[MC_CLASSES];
static uint64_t g_evict_base[MC_CLASSES][EV_N]; /* "stats reset", under g_base_lock */
static uint32_t g_cls_pages[MC_CLASSES];     /* pages a class has had (memcached keeps them) */

/* memcached's slabs_init: from the 48-byte item header plus -n, growing by -f, 8-byte
 * aligned, while below slab_chunk_max / factor; the last class is slab_chunk_max. */
void mc_classes_setup(void)
{
    double factor = atof(mc_cfg.growth_factor);
    uint32_t max = mc_cfg.slab_chunk_max > 0 ? (uint32_t)mc_cfg.slab_chunk_max
                                             : (uint32_t)(cfg.item_size_max / 2);
    double size = 48.0 + (mc_cfg.chunk_size > 0 ? mc_cfg.chunk_size : 48);
    int i = 1;

    if (factor <= 1.0)
        factor = 1.25;
    if (max < 96)
        max = 96;
    for (; i < MC_CLASSES - 1 && size < (double)max / factor; i++) {
        uint32_t sz = (uint32_t)size;
        if (sz % 8)
            sz += 8 - sz % 8;
        mc_class_size[i] = sz;
        size = (double)sz * factor;
    }
    mc_class_size[i] = max;
    mc_nclasses = i;
}

static void removed_hook(int why, int db, struct item *it)
{
    struct cls_evict *e;

    if (db != MC_DB || it->type != OBJ_STRING)
        return;
    e = &g_evict[mc_class_of(mc_it_total(it))];
    if (why == STORE_GONE_EXPIRED) { /* the sweep: memcached's LRU crawler */
        atomic_fetch_add_explicit(&e->n[EV_SWEPT], 1, memory_order_relaxed);
        if (!it->fetched)
            atomic_fetch_add_explicit(&e->n[EV_SWEPT_UNFETCHED], 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&e->n[EV_EVICTED], 1, memory_order_relaxed);
    if (item_expire(it))
        atomic_fetch_add_explicit(&e->n[EV_NONZERO], 1, memory_order_relaxed);
    if (!it->fetched)
        atomic_fetch_add_explicit(&e->n[EV_UNFETCHED], 1, memory_order_relaxed);
    atomic_store_explicit(&e->time, store_idle_seconds(it), memory_order_relaxed);
}

void mc_stats_setup(void)
{
    mc_classes_setup();
    store_removed_hook = removed_hook;
}

/* What "stats items" and "stats slabs" count by walking database 0: memcached keeps these
 * per class as it allocates; twincache has no slab classes, so the walk sorts each string
 * item into the class memcached would have put it in (one stripe lock at a time). */
struct cls_walk {
    uint64_t number[MC_CLASSES], requested[MC_CLASSES];
    uint32_t age[MC_CLASSES]; /* idle seconds of the least recently used item */
};

static int cls_walk_one(struct item *it, void *arg)
{
    struct cls_walk *w = arg;
    size_t total;
    int id;
    uint32_t idle;

    if (it->type != OBJ_STRING)
        return 0;
    total = mc_it_total(it);
    id = mc_class_of(total);
    w->number[id]++;
    w->requested[id] += total;
    idle = store_idle_seconds(it);
    if (idle > w->age[id])
        w->age[id] = idle;
    return 0;
}

static void sum_cls(uint64_t t[MC_CLASSES][MC_CLS_NFIELDS])
{
    memset(t, 0, sizeof(uint64_t) * MC_CLASSES * MC_CLS_NFIELDS);
    for (int i = 0; i < mc_srv->nworkers; i++)
        for (int id = 1; id <= mc_nclasses; id++)
            for (int f = 0; f < MC_CLS_NFIELDS; f++)
                t[id][f] += __atomic_load_n(&mc_wstats[i].cls[id][f], __ATOMIC_RELAXED);
}

static void stats_items(struct conn *c, int slabs)
{
    struct store *s = mc_store(c);
    struct cls_walk *w = calloc(1, sizeof(*w));
    uint64_t (*cls)[MC_CLS_NFIELDS] = calloc(MC_CLASSES, sizeof(*cls));
    uint64_t ev[MC_CLASSES][EV_N];
    struct store_totals st;
    int active = 0, maint = mc_cfg.lru_maintainer; /* who reclaims expired items: see below */
    char name[64];

    if (!w || !cls) {
        free(w);
        free(cls);
        mc_out_line(c, "SERVER_ERROR out of memory writing stats");
        return;
    }
    for (uint32_t i = 0; i < s->nstripes; i++)
        store_visit_stripe(s, MC_DB, i, mc_now(c), cls_walk_one, w);
    store_totals(s, &st);
    sum_cls(cls);
    pthread_mutex_lock(&g_base_lock); /* "stats reset" zeroes the class counters too */
    for (int id = 1; id <= mc_nclasses; id++) {
        for (int f = 0; f < MC_CLS_NFIELDS; f++)
            cls[id][f] -= g_base.cls[id][f];
        for (int f = 0; f < EV_N; f++)
            ev[id][f] = atomic_load(&g_evict[id].n[f]) - g_evict_base[id][f];
        if (slabs) { /* memcached keeps a class's pages once it has had items */
            uint32_t per = (uint32_t)((uint64_t)cfg.item_size_max / mc_class_size[id]);
            uint64_t pages = per ? (w->number[id] + per - 1) / per : w->number[id];
            if (pages > g_cls_pages[id])
                g_cls_pages[id] = (uint32_t)pages;
            if (!g_cls_pages[id] && (cls[id][MC_CLS_CMD_SET] || ev[id][EV_EVICTED]))
                g_cls_pages[id] = 1;
        }
    }
    pthread_mutex_unlock(&g_base_lock);
    for (int id = 1; id <= mc_nclasses; id++) {
        uint64_t n = w->number[id];
        if (slabs) {
            uint32_t size = mc_class_size[id];
            uint64_t per = (uint64_t)cfg.item_size_max / size, pages = g_cls_pages[id];
            if (!pages)
                continue;
            if (!per)
                per = 1;
            active++;
#define SLAB_STAT(f, v)                                                                        \
    do {                                                                                       \
        snprintf(name, sizeof(name), "%d:%s", id, f);                                          \
        STAT_U(c, name, v);                                                                    \
    } while (0)
            SLAB_STAT("chunk_size", size);
            SLAB_STAT("chunks_per_page", per);
            SLAB_STAT("total_pages", pages);
            SLAB_STAT("total_chunks", pages * per);
            SLAB_STAT("used_chunks", n < pages * per ? n : pages * per);
            SLAB_STAT("free_chunks", n < pages * per ? pages * per - n : 0);
            SLAB_STAT("free_chunks_end", 0);
            SLAB_STAT("get_hits", cls[id][MC_CLS_GET_HITS]);
            SLAB_STAT("cmd_set", cls[id][MC_CLS_CMD_SET]);
            SLAB_STAT("delete_hits", cls[id][MC_CLS_DELETE_HITS]);
            SLAB_STAT("incr_hits", cls[id][MC_CLS_INCR_HITS]);
            SLAB_STAT("decr_hits", cls[id][MC_CLS_DECR_HITS]);
            SLAB_STAT("cas_hits", cls[id][MC_CLS_CAS_HITS]);
            SLAB_STAT("cas_badval", cls[id][MC_CLS_CAS_BADVAL]);
            SLAB_STAT("touch_hits", cls[id][MC_CLS_TOUCH_HITS]);
#undef SLAB_STAT
            continue;
        }
        if (!n)
            continue;
#define ITEM_STAT(f, v)                                                                        \
    do {                                                                                       \
        snprintf(name, sizeof(name), "items:%d:%s", id, f);                                    \
        STAT_U(c, name, v);                                                                    \
    } while (0)
        ITEM_STAT("number", n);
        if (mc_cfg.lru_maintainer) { /* no hot/warm segments: every item is cold */
            ITEM_STAT("number_hot", 0);
            ITEM_STAT("number_warm", 0);
            ITEM_STAT("number_cold", n);
            ITEM_STAT("age_hot", 0);
            ITEM_STAT("age_warm", 0);
        }
        ITEM_STAT("age", w->age[id]);
        ITEM_STAT("mem_requested", w->requested[id]);
        ITEM_STAT("evicted", ev[id][EV_EVICTED]);
        ITEM_STAT("evicted_nonzero", ev[id][EV_NONZERO]);
        ITEM_STAT("evicted_time", atomic_load(&g_evict[id].time));
        ITEM_STAT("outofmemory", cls[id][MC_CLS_OOM]);
        ITEM_STAT("tailrepairs", 0);
        ITEM_STAT("reclaimed", cls[id][MC_CLS_RECLAIMED] + (maint ? ev[id][EV_SWEPT] : 0));
        ITEM_STAT("expired_unfetched", ev[id][EV_SWEPT_UNFETCHED]);
        ITEM_STAT("evicted_unfetched", ev[id][EV_UNFETCHED]);
        if (mc_cfg.lru_maintainer)
            ITEM_STAT("evicted_active", 0);
        ITEM_STAT("crawler_reclaimed", maint ? 0 : ev[id][EV_SWEPT]);
        ITEM_STAT("crawler_items_checked", 0);
        ITEM_STAT("lrutail_reflocked", 0);
        if (mc_cfg.lru_maintainer) {
            ITEM_STAT("moves_to_cold", 0);
            ITEM_STAT("moves_to_warm", 0);
            ITEM_STAT("moves_within_lru", 0);
            ITEM_STAT("direct_reclaims", 0);
            ITEM_STAT("hits_to_hot", 0);
            ITEM_STAT("hits_to_warm", 0);
            ITEM_STAT("hits_to_cold", cls[id][MC_CLS_GET_HITS] + cls[id][MC_CLS_TOUCH_HITS]);
            ITEM_STAT("hits_to_temp", 0);
        }
#undef ITEM_STAT
    }
    if (slabs) {
        STAT_U(c, "active_slabs", active);
        /* the keyspace's bytes: twincache allocates and frees them per item, not by page */
        STAT_U(c, "total_malloced", (uint64_t)(st.mem > 0 ? st.mem : 0) +
                                        (uint64_t)store_mem_reserved);
    }
    mc_out_line(c, "END");
    free(w);
    free(cls);
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
    for (int id = 1; id < MC_CLASSES; id++) {
        for (int f = 0; f < EV_N; f++)
            g_evict_base[id][f] = atomic_load(&g_evict[id].n[f]);
    }
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

void mc_stats_visit(void (*fn)(const char *name, uint64_t v, void *arg), void *arg)
{
    struct mc_stats *t = malloc(sizeof(*t));

    if (!t || !mc_srv) {
        free(t);
        return;
    }
    sum_stats(t);
    pthread_mutex_lock(&g_base_lock);
#define X(f) t->f -= g_base.f;
    MC_STAT_FIELDS(X)
#undef X
    pthread_mutex_unlock(&g_base_lock);
#define X(f) fn(#f, t->f, arg);
    MC_STAT_FIELDS(X)
#undef X
    free(t);
}

int mc_stats_curr_conns(void)
{
    return atomic_load(&mc_curr_conns);
}
