#define _GNU_SOURCE
#include "core/config.h"
#include "core/config_int.h"

#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/proctitle.h"
#include "core/util.h"

struct config cfg;
char **config_user_lines;
int config_user_nlines;

/* A `user` line at start-up: kept for the ACL module (CONFIG SET has no such setting). */
static int add_user_line(const char **argv, int argc, char *err, size_t errcap)
{
    size_t len = 1;
    char *line, **nl;

    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    if (argc < 1 || config_user_nlines >= 100000) {
        snprintf(err, errcap, "wrong number of arguments");
        return -1;
    }
    if (!(line = malloc(len)) ||
        !(nl = realloc(config_user_lines, sizeof(*nl) * (size_t)(config_user_nlines + 1)))) {
        free(line);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    line[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i)
            strcat(line, " ");
        strcat(line, argv[i]);
    }
    config_user_lines = nl;
    nl[config_user_nlines++] = line;
    return 0;
}
int (*config_tls_apply)(char *err, size_t errcap);
int (*config_listen_apply)(char *err, size_t errcap);

static pthread_mutex_t str_lock = PTHREAD_MUTEX_INITIALIZER; /* string settings (leaf lock) */
static int save_loaded;  /* a save line was read: the next ones add to it */
int config_save_reading; /* Redis's reading_config_file (config_int.h) */

void config_str(const char *field, char *out, size_t cap)
{
    pthread_mutex_lock(&str_lock);
    snprintf(out, cap, "%s", field);
    pthread_mutex_unlock(&str_lock);
}

int config_str_empty(const char *field)
{
    pthread_mutex_lock(&str_lock);
    int r = field[0] == '\0';
    pthread_mutex_unlock(&str_lock);
    return r;
}

static const char *const policies[] = {"noeviction", "allkeys-lru", "allkeys-lfu",
                                        "allkeys-random", "volatile-lru", "volatile-lfu",
                                        "volatile-random", "volatile-ttl", NULL};
static const char *const fsyncs[] = {"no", "everysec", "always", NULL};
static const char *const protected_actions[] = {"no", "yes", "local", NULL};
static const char *const tls_auth[] = {"no", "yes", "optional", NULL};
static const char *const diskless_loads[] = {"disabled", "on-empty-db", "swapdb", NULL};
static const char *const acl_pubsub[] = {"resetchannels", "allchannels", NULL};
static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", NULL};
static const char *const oom_adj[] = {"no", "yes", "relative", "absolute", NULL};
static const char *const prop_err[] = {"ignore", "panic", "panic-on-replicas", NULL};
static const char *const sanitize[] = {"no", "yes", "clients", NULL};
static const char *const supervised_modes[] = {"no", "upstart", "systemd", "auto", NULL};
static const char *const facilities[] = {"user", "local0", "local1", "local2", "local3",
                                         "local4", "local5", "local6", "local7", NULL};
static const char *const endpoint_types[] = {"ip", "hostname", "unknown-endpoint", NULL};
/* shutdown-on-sig*: "default" is no flag; the others are SHUTDOWN_ON_SIG_* bits in order */
static const char *const shutdown_sig[] = {"default", "save", "nosave", "now", "force", NULL};
static const char no_defrag[] =
    "Active defragmentation cannot be enabled: it requires a Redis server compiled with a "
    "modified Jemalloc like the one shipped by default with the Redis source distribution";
static const char no_cluster[] =
    "cluster mode is not supported by this server yet (the cluster bus is not built)";

#define S(n, p, mut) {n, C_STR, cfg.p, sizeof(cfg.p), 0, 0, mut, NULL}
/* a string whose "" is unset (F_NULLSTR) */
#define SN(n, p, mut) {n, C_STR, cfg.p, sizeof(cfg.p), 0, 0, mut, NULL, F_NULLSTR, NULL}
/* flags and deny_msg are left out where they are 0 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
struct setting config_settings[] = {
    {"port", C_INT, &cfg.port, 0, 0, 65535, 1, NULL},
    {"memcache-port", C_INT, &cfg.memcache_port, 0, 0, 65535, 1, NULL},
    /* the Prometheus endpoint: set at start-up only (docs/metrics.md) */
    {"metrics-port", C_INT, &cfg.metrics_port, 0, 0, 65535, 0, NULL, F_HIDDEN, NULL},
    S("bind", bind, 1),
    SN("unixsocket", unixsocket, 0),
    {"unixsocketperm", C_OCTAL, &cfg.unixsocketperm, 0, 0, 0777, 0, NULL},
    /* twincache's own settings fixed at start-up are hidden from CONFIG GET * (as Redis hides
     * some of its own): a client that sets back every listed value finds none it cannot set */
    {"io-threads", C_INT, &cfg.threads, 0, 1, 128, 0, NULL},
    {"threads", C_INT, &cfg.threads, 0, 1, 128, 0, NULL, F_HIDDEN, NULL},
    {"databases", C_INT, &cfg.databases, 0, 1, 1024, 0, NULL},
    {"stripes", C_INT, &cfg.stripes, 0, 1, 65536, 0, NULL, F_HIDDEN, NULL},
    SN("requirepass", requirepass, 1),
    S("aclfile", aclfile, 0),
    {"acllog-max-len", C_INT, &cfg.acllog_max_len, 0, 0, LONG_MAX, 1, NULL},
    {"acl-pubsub-default", C_ENUM, &cfg.acl_pubsub_default, 0, 0, 0, 1, acl_pubsub},
    {"timeout", C_INT, &cfg.timeout, 0, 0, 0x7fffffff, 1, NULL},
    {"tcp-keepalive", C_INT, &cfg.tcp_keepalive, 0, 0, 0x7fffffff, 1, NULL},
    {"tcp-backlog", C_INT, &cfg.tcp_backlog, 0, 0, 0x7fffffff, 0, NULL},
    {"maxclients", C_INT, &cfg.maxclients, 0, 1, UINT_MAX, 1, NULL},
    {"loglevel", C_LOGLEVEL, &cfg.loglevel, 0, 0, 0, 1, loglevels},
    S("logfile", logfile, 0),
    S("dir", dir, 1),
    S("dbfilename", dbfilename, 1),
    SN("pidfile", pidfile, 0),
    S("save", save, 1),
    {"appendonly", C_BOOL, &cfg.appendonly, 0, 0, 1, 1, NULL},
    {"rdbcompression", C_BOOL, &cfg.rdbcompression, 0, 0, 1, 1, NULL},
    {"rdbchecksum", C_BOOL, &cfg.rdbchecksum, 0, 0, 1, 0, NULL},
    {"snapshot-fork", C_BOOL, &cfg.snapshot_fork, 0, 0, 1, 1, NULL},
    {"rdb-key-save-delay", C_INT, &cfg.rdb_key_save_delay, 0, INT_MIN, INT_MAX, 1, NULL, F_HIDDEN, NULL},
    {"stop-writes-on-bgsave-error", C_BOOL, &cfg.stop_writes_on_bgsave_error, 0, 0, 1, 1, NULL},
    S("appendfilename", appendfilename, 0),
    {"appendfsync", C_ENUM, &cfg.appendfsync, 0, 0, 0, 1, fsyncs},
    S("appenddirname", appenddirname, 0),
    {"auto-aof-rewrite-percentage", C_INT, &cfg.auto_aof_rewrite_percentage, 0, 0, 0x7fffffff, 1, NULL},
    {"auto-aof-rewrite-min-size", C_MEM, &cfg.auto_aof_rewrite_min_size, 0, 0, LLONG_MAX, 1, NULL},
    {"aof-load-truncated", C_BOOL, &cfg.aof_load_truncated, 0, 0, 1, 1, NULL},
    {"aof-use-rdb-preamble", C_BOOL, &cfg.aof_use_rdb_preamble, 0, 0, 1, 1, NULL},
    {"no-appendfsync-on-rewrite", C_BOOL, &cfg.no_appendfsync_on_rewrite, 0, 0, 1, 1, NULL},
    {"proto-max-bulk-len", C_MEM, &cfg.proto_max_bulk_len, 0, 1024 * 1024, LONG_MAX, 1, NULL},
    {"client-query-buffer-limit", C_MEM, &cfg.client_query_buffer_limit, 0, 1024 * 1024,
     LONG_MAX, 1, NULL},
    {"maxmemory", C_MEM, &cfg.maxmemory, 0, 0, LLONG_MAX, 1, NULL},
    {"maxmemory-policy", C_ENUM, &cfg.maxmemory_policy, 0, 0, 0, 1, policies},
    {"maxmemory-samples", C_INT, &cfg.maxmemory_samples, 0, 1, 0x7fffffff, 1, NULL},
    {"lfu-log-factor", C_INT, &cfg.lfu_log_factor, 0, 0, 0x7fffffff, 1, NULL},
    {"lfu-decay-time", C_INT, &cfg.lfu_decay_time, 0, 0, 0x7fffffff, 1, NULL},
    {"hz", C_INT, &cfg.hz, 0, 0, 0x7fffffff, 1, NULL},
    {"memcache-sasl", C_BOOL, &cfg.memcache_sasl, 0, 0, 1, 0, NULL, F_HIDDEN, NULL},
    S("memcache-auth-file", memcache_auth_file, 1),
    {"item-size-max", C_MEM, &cfg.item_size_max, 0, 1024, 1LL << 30, 1, NULL},
    {"slowlog-log-slower-than", C_LL, &cfg.slowlog_log_slower_than, 0, -1, 1LL << 62, 1, NULL},
    {"latency-monitor-threshold", C_LL, &cfg.latency_monitor_threshold, 0, 0, LLONG_MAX, 1, NULL},
    {"latency-tracking", C_BOOL, &cfg.latency_tracking, 0, 0, 1, 1, NULL},
    S("latency-tracking-info-percentiles", latency_tracking_info_percentiles, 1),
    {"busy-reply-threshold", C_LL, &cfg.busy_reply_threshold, 0, 0, LLONG_MAX, 1, NULL},
    {"lua-time-limit", C_LL, &cfg.busy_reply_threshold, 0, 0, LLONG_MAX, 1, NULL},
    {"lua-enable-deprecated-api", C_BOOL, &cfg.lua_enable_deprecated_api, 0, 0, 1, 0, NULL,
     F_HIDDEN, NULL},
    {"slowlog-max-len", C_INT, &cfg.slowlog_max_len, 0, 0, LONG_MAX, 1, NULL},
    {"client-output-buffer-limit", C_COBL, cfg.cobl, 0, 0, 0, 1, NULL},
    {"repl-backlog-size", C_MEM, &cfg.repl_backlog_size, 0, 1, LLONG_MAX, 1, NULL},
    {"repl-backlog-ttl", C_INT, &cfg.repl_backlog_ttl, 0, 0, LONG_MAX, 1, NULL},
    {"repl-diskless-sync", C_BOOL, &cfg.repl_diskless_sync, 0, 0, 1, 1, NULL},
    {"repl-diskless-sync-delay", C_INT, &cfg.repl_diskless_sync_delay, 0, 0, 0x7fffffff, 1, NULL},
    {"repl-diskless-sync-max-replicas", C_INT, &cfg.repl_diskless_sync_max_replicas, 0, 0, 0x7fffffff, 1, NULL},
    {"repl-diskless-load", C_ENUM, &cfg.repl_diskless_load, 0, 0, 0, 1, diskless_loads},
    {"repl-ping-replica-period", C_INT, &cfg.repl_ping_replica_period, 0, 1, 0x7fffffff, 1, NULL},
    {"repl-ping-slave-period", C_INT, &cfg.repl_ping_replica_period, 0, 1, 0x7fffffff, 1, NULL},
    {"repl-timeout", C_INT, &cfg.repl_timeout, 0, 1, 0x7fffffff, 1, NULL},
    {"repl-disable-tcp-nodelay", C_BOOL, &cfg.repl_disable_tcp_nodelay, 0, 0, 1, 1, NULL},
    {"min-replicas-to-write", C_INT, &cfg.min_replicas_to_write, 0, 0, 0x7fffffff, 1, NULL},
    {"min-slaves-to-write", C_INT, &cfg.min_replicas_to_write, 0, 0, 0x7fffffff, 1, NULL},
    {"min-replicas-max-lag", C_INT, &cfg.min_replicas_max_lag, 0, 0, 0x7fffffff, 1, NULL},
    {"min-slaves-max-lag", C_INT, &cfg.min_replicas_max_lag, 0, 0, 0x7fffffff, 1, NULL},
    SN("masterauth", masterauth, 1),
    SN("masteruser", masteruser, 1),
    {"replica-read-only", C_BOOL, &cfg.replica_read_only, 0, 0, 1, 1, NULL},
    {"slave-read-only", C_BOOL, &cfg.replica_read_only, 0, 0, 1, 1, NULL},
    {"replica-serve-stale-data", C_BOOL, &cfg.replica_serve_stale_data, 0, 0, 1, 1, NULL},
    {"slave-serve-stale-data", C_BOOL, &cfg.replica_serve_stale_data, 0, 0, 1, 1, NULL},
    {"replica-priority", C_INT, &cfg.replica_priority, 0, 0, 0x7fffffff, 1, NULL},
    {"slave-priority", C_INT, &cfg.replica_priority, 0, 0, 0x7fffffff, 1, NULL},
    {"replica-announced", C_BOOL, &cfg.replica_announced, 0, 0, 1, 1, NULL},
    SN("replica-announce-ip", replica_announce_ip, 1),
    SN("slave-announce-ip", replica_announce_ip, 1),
    {"replica-announce-port", C_INT, &cfg.replica_announce_port, 0, 0, 65535, 1, NULL},
    {"slave-announce-port", C_INT, &cfg.replica_announce_port, 0, 0, 65535, 1, NULL},
    {"replica-lazy-flush", C_BOOL, &cfg.replica_lazy_flush, 0, 0, 1, 1, NULL},
    {"slave-lazy-flush", C_BOOL, &cfg.replica_lazy_flush, 0, 0, 1, 1, NULL},
    {"replica-ignore-maxmemory", C_BOOL, &cfg.replica_ignore_maxmemory, 0, 0, 1, 1, NULL},
    {"slave-ignore-maxmemory", C_BOOL, &cfg.replica_ignore_maxmemory, 0, 0, 1, 1, NULL},
    S("replicaof", replicaof, 0),
    S("slaveof", replicaof, 0),
    {"daemonize", C_BOOL, &cfg.daemonize, 0, 0, 1, 0, NULL},
    {"io-uring", C_BOOL, &cfg.io_uring, 0, 0, 1, 0, NULL, F_HIDDEN, NULL},
    {"protected-mode", C_BOOL, &cfg.protected_mode, 0, 0, 1, 1, NULL},
    {"hash-max-listpack-entries", C_INT, &cfg.hash_max_listpack_entries, 0, 0, LONG_MAX, 1, NULL},
    {"hash-max-listpack-value", C_INT, &cfg.hash_max_listpack_value, 0, 0, LONG_MAX, 1, NULL, F_MEM, NULL},
    {"hash-max-ziplist-entries", C_INT, &cfg.hash_max_listpack_entries, 0, 0, LONG_MAX, 1, NULL},
    {"hash-max-ziplist-value", C_INT, &cfg.hash_max_listpack_value, 0, 0, LONG_MAX, 1, NULL, F_MEM, NULL},
    {"set-max-intset-entries", C_INT, &cfg.set_max_intset_entries, 0, 0, LONG_MAX, 1, NULL},
    {"set-max-listpack-entries", C_INT, &cfg.set_max_listpack_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"set-max-listpack-value", C_INT, &cfg.set_max_listpack_value, 0, 0, LONG_MAX, 1, NULL, F_MEM, NULL},
    {"zset-max-listpack-entries", C_INT, &cfg.zset_max_listpack_entries, 0, 0, LONG_MAX, 1, NULL},
    {"zset-max-listpack-value", C_INT, &cfg.zset_max_listpack_value, 0, 0, LONG_MAX, 1, NULL, F_MEM, NULL},
    {"zset-max-ziplist-entries", C_INT, &cfg.zset_max_listpack_entries, 0, 0, LONG_MAX, 1, NULL},
    {"zset-max-ziplist-value", C_INT, &cfg.zset_max_listpack_value, 0, 0, LONG_MAX, 1, NULL, F_MEM, NULL},
    {"list-max-listpack-size", C_INT, &cfg.list_max_listpack_size, 0, INT_MIN, INT_MAX, 1, NULL},
    {"list-max-ziplist-size", C_INT, &cfg.list_max_listpack_size, 0, INT_MIN, INT_MAX, 1, NULL},
    {"list-compress-depth", C_INT, &cfg.list_compress_depth, 0, 0, 0x7fffffff, 1, NULL},
    {"stream-node-max-bytes", C_MEM, &cfg.stream_node_max_bytes, 0, 0, LONG_MAX, 1, NULL},
    {"stream-node-max-entries", C_LL, &cfg.stream_node_max_entries, 0, 0, LLONG_MAX, 1, NULL},
    {"notify-keyspace-events", C_NOTIFY, &cfg.notify_keyspace_events, 0, 0, 0, 1, NULL},
    {"tracking-table-max-keys", C_INT, &cfg.tracking_table_max_keys, 0, 0, LONG_MAX, 1, NULL},
    {"tls-port", C_INT, &cfg.tls_port, 0, 0, 65535, 1, NULL},
    {"tls-memcache-port", C_INT, &cfg.tls_memcache_port, 0, 0, 65535, 1, NULL},
    SN("tls-cert-file", tls_cert_file, 1),
    SN("tls-key-file", tls_key_file, 1),
    SN("tls-key-file-pass", tls_key_file_pass, 1),
    SN("tls-client-cert-file", tls_client_cert_file, 1),
    SN("tls-client-key-file", tls_client_key_file, 1),
    SN("tls-client-key-file-pass", tls_client_key_file_pass, 1),
    SN("tls-ca-cert-file", tls_ca_cert_file, 1),
    SN("tls-ca-cert-dir", tls_ca_cert_dir, 1),
    SN("tls-dh-params-file", tls_dh_params_file, 1),
    {"tls-auth-clients", C_ENUM, &cfg.tls_auth_clients, 0, 0, 0, 1, tls_auth},
    SN("tls-protocols", tls_protocols, 1),
    SN("tls-ciphers", tls_ciphers, 1),
    SN("tls-ciphersuites", tls_ciphersuites, 1),
    {"tls-prefer-server-ciphers", C_BOOL, &cfg.tls_prefer_server_ciphers, 0, 0, 1, 1, NULL},
    {"tls-session-caching", C_BOOL, &cfg.tls_session_caching, 0, 0, 1, 1, NULL},
    {"tls-session-cache-size", C_INT, &cfg.tls_session_cache_size, 0, 0, 0x7fffffff, 1, NULL},
    {"tls-session-cache-timeout", C_INT, &cfg.tls_session_cache_timeout, 0, 0, 0x7fffffff, 1, NULL},
    {"tls-replication", C_BOOL, &cfg.tls_replication, 0, 0, 1, 1, NULL},
    {"tls-cluster", C_BOOL, &cfg.tls_cluster, 0, 0, 1, 1, NULL},
    {"tls-handshake-timeout", C_INT, &cfg.tls_handshake_timeout, 0, 1, 0x7fffffff, 1, NULL},
    {"enable-debug-command", C_ENUM, &cfg.enable_debug_command, 0, 0, 0, 0, protected_actions},
    {"enable-module-command", C_ENUM, &cfg.enable_module_command, 0, 0, 0, 0, protected_actions},
    {"enable-protected-configs", C_ENUM, &cfg.enable_protected_configs, 0, 0, 0, 0, protected_actions},
    /* Redis 7.0's other settings (config.h says what each does here) */
#define B(n, f, mut) {n, C_BOOL, &cfg.f, 0, 0, 1, mut, NULL}
#define I(n, f, lo, hi, mut) {n, C_INT, &cfg.f, 0, lo, hi, mut, NULL}
#define E(n, f, mut, e) {n, C_ENUM, &cfg.f, 0, 0, 0, mut, e}
    B("always-show-logo", always_show_logo, 0),
    B("set-proc-title", set_proc_title, 0),
    S("proc-title-template", proc_title_template, 1),
    B("rdb-del-sync-files", rdb_del_sync_files, 1),
    B("lazyfree-lazy-eviction", lazyfree_lazy_eviction, 1),
    B("lazyfree-lazy-expire", lazyfree_lazy_expire, 1),
    B("lazyfree-lazy-server-del", lazyfree_lazy_server_del, 1),
    B("lazyfree-lazy-user-del", lazyfree_lazy_user_del, 1),
    B("lazyfree-lazy-user-flush", lazyfree_lazy_user_flush, 1),
    E("oom-score-adj", oom_score_adj, 1, oom_adj),
    S("oom-score-adj-values", oom_score_adj_values, 1),
    B("disable-thp", disable_thp, 0),
    B("aof-timestamp-enabled", aof_timestamp_enabled, 1),
    {"hll-sparse-max-bytes", C_MEM, &cfg.hll_sparse_max_bytes, 0, 0, LONG_MAX, 1, NULL},
    B("activerehashing", activerehashing, 1),
    B("dynamic-hz", dynamic_hz, 1),
    B("aof-rewrite-incremental-fsync", aof_rewrite_incremental_fsync, 1),
    B("rdb-save-incremental-fsync", rdb_save_incremental_fsync, 1),
    B("jemalloc-bg-thread", jemalloc_bg_thread, 1),
    E("propagation-error-behavior", propagation_error_behavior, 1, prop_err),
    B("replica-ignore-disk-write-errors", replica_ignore_disk_write_errors, 1),
    {"maxmemory-clients", C_MEMPCT, &cfg.maxmemory_clients, 0, -100, LLONG_MAX, 1, NULL},
    I("maxmemory-eviction-tenacity", maxmemory_eviction_tenacity, 0, 100, 1),
    I("active-expire-effort", active_expire_effort, 1, 10, 1),
    I("shutdown-timeout", shutdown_timeout, 0, INT_MAX, 1),
    {"shutdown-on-sigint", C_FLAGS, &cfg.shutdown_on_sigint, 0, 0, 0, 1, shutdown_sig},
    {"shutdown-on-sigterm", C_FLAGS, &cfg.shutdown_on_sigterm, 0, 0, 0, 1, shutdown_sig},
    E("sanitize-dump-payload", sanitize_dump_payload, 1, sanitize),
    {"key-load-delay", C_INT, &cfg.key_load_delay, 0, INT_MIN, INT_MAX, 1, NULL, F_HIDDEN, NULL},
    {"loading-process-events-interval-bytes", C_LL, &cfg.loading_process_events_interval_bytes,
     0, 1024, INT_MAX, 1, NULL, F_HIDDEN, NULL},
    SN("bind-source-addr", bind_source_addr, 1),
    B("crash-log-enabled", crash_log_enabled, 1),
    B("crash-memcheck-enabled", crash_memcheck_enabled, 1),
    B("aof-disable-auto-gc", aof_disable_auto_gc, 1),
    B("io-threads-do-reads", io_threads_do_reads, 0),
    {"activedefrag", C_BOOL, &cfg.activedefrag, 0, 0, 1, 1, NULL, F_ONLY_NO, no_defrag},
    I("active-defrag-cycle-min", active_defrag_cycle_min, 1, 99, 1),
    I("active-defrag-cycle-max", active_defrag_cycle_max, 1, 99, 1),
    I("active-defrag-threshold-lower", active_defrag_threshold_lower, 0, 1000, 1),
    I("active-defrag-threshold-upper", active_defrag_threshold_upper, 0, 1000, 1),
    {"active-defrag-ignore-bytes", C_MEM, &cfg.active_defrag_ignore_bytes, 0, 1, LLONG_MAX, 1, NULL},
    {"active-defrag-max-scan-fields", C_LL, &cfg.active_defrag_max_scan_fields, 0, 1, LONG_MAX, 1, NULL},
    B("syslog-enabled", syslog_enabled, 0),
    S("syslog-ident", syslog_ident, 0),
    E("syslog-facility", syslog_facility, 0, facilities),
    E("supervised", supervised, 0, supervised_modes),
    SN("server_cpulist", server_cpulist, 0),
    SN("bio_cpulist", bio_cpulist, 0),
    SN("aof_rewrite_cpulist", aof_rewrite_cpulist, 0),
    SN("bgsave_cpulist", bgsave_cpulist, 0),
    {"socket-mark-id", C_LL, &cfg.socket_mark_id, 0, 0, UINT_MAX, 0, NULL},
    S("ignore-warnings", ignore_warnings, 1),
    {"cluster-enabled", C_BOOL, &cfg.cluster_enabled, 0, 0, 1, 0, NULL, F_ONLY_NO, no_cluster},
    S("cluster-config-file", cluster_config_file, 0),
    {"cluster-node-timeout", C_LL, &cfg.cluster_node_timeout, 0, 0, LLONG_MAX, 1, NULL},
    I("cluster-port", cluster_port, 0, 65535, 0),
    I("cluster-announce-port", cluster_announce_port, 0, 65535, 1),
    I("cluster-announce-bus-port", cluster_announce_bus_port, 0, 65535, 1),
    I("cluster-announce-tls-port", cluster_announce_tls_port, 0, 65535, 1),
    SN("cluster-announce-ip", cluster_announce_ip, 1),
    SN("cluster-announce-hostname", cluster_announce_hostname, 1),
    E("cluster-preferred-endpoint-type", cluster_preferred_endpoint_type, 1, endpoint_types),
    I("cluster-migration-barrier", cluster_migration_barrier, 0, INT_MAX, 1),
    I("cluster-replica-validity-factor", cluster_replica_validity_factor, 0, INT_MAX, 1),
    I("cluster-slave-validity-factor", cluster_replica_validity_factor, 0, INT_MAX, 1),
    B("cluster-require-full-coverage", cluster_require_full_coverage, 1),
    B("cluster-replica-no-failover", cluster_replica_no_failover, 1),
    B("cluster-slave-no-failover", cluster_replica_no_failover, 1),
    B("cluster-allow-reads-when-down", cluster_allow_reads_when_down, 1),
    B("cluster-allow-pubsubshard-when-down", cluster_allow_pubsubshard_when_down, 1),
    B("cluster-allow-replica-migration", cluster_allow_replica_migration, 1),
    {"cluster-link-sendbuf-limit", C_MEM, &cfg.cluster_link_sendbuf_limit, 0, 0, LLONG_MAX, 1, NULL},
    /* persistence tests (Redis's hidden settings) */
    {"use-exit-on-panic", C_BOOL, &cfg.use_exit_on_panic, 0, 0, 1, 1, NULL, F_HIDDEN, NULL},
    {"watchdog-period", C_INT, &cfg.watchdog_period, 0, 0, INT_MAX, 1, NULL, F_HIDDEN, NULL},
#undef B
#undef I
#undef E
};
#pragma GCC diagnostic pop
const size_t config_nsettings = sizeof(config_settings) / sizeof(config_settings[0]);
#define NSETTINGS config_nsettings

struct config config_default_values; /* as config_defaults left them (CONFIG REWRITE) */

void config_defaults(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    for (int i = 0; i < config_user_nlines; i++) /* `user` lines read before go too */
        free(config_user_lines[i]);
    free(config_user_lines);
    config_user_lines = NULL;
    config_user_nlines = 0;
    memset(&cfg, 0, sizeof(cfg));
    save_loaded = 0;
    cfg.port = 6379;
    cfg.memcache_port = 11211;
    strcpy(cfg.bind, "* -::*"); /* Redis 7.0: every IPv4 address, IPv6 when there is some */
    cfg.unixsocketperm = 0;
    cfg.threads = n > 0 ? (int)n : 1;
    cfg.databases = 16;
    cfg.stripes = 1024;
    cfg.tcp_keepalive = 300;
    cfg.tcp_backlog = 511;
    cfg.maxclients = 10000;
    cfg.loglevel = LOG_NOTICE;
    strcpy(cfg.dir, ".");
    strcpy(cfg.dbfilename, "dump.rdb");
    strcpy(cfg.appendfilename, "appendonly.aof");
    strcpy(cfg.save, "3600 1 300 100 60 10000"); /* Redis 7.0's */
    cfg.acllog_max_len = 128;
    cfg.appendfsync = 1;
    strcpy(cfg.appenddirname, "appendonlydir");
    cfg.auto_aof_rewrite_percentage = 100;
    cfg.auto_aof_rewrite_min_size = 64LL << 20;
    cfg.aof_load_truncated = 1;
    cfg.aof_use_rdb_preamble = 1;
    cfg.rdbcompression = 1;
    cfg.rdbchecksum = 1;
    cfg.snapshot_fork = 0; /* forkless: bench/results/2026-12-04-09-snapshot.md */
    cfg.stop_writes_on_bgsave_error = 1;
    cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    cfg.client_query_buffer_limit = 1024LL * 1024 * 1024;
    cfg.maxmemory_policy = MM_NOEVICTION; /* Redis's default; memcached's command line: LRU */
    cfg.maxmemory_samples = 5;
    cfg.lfu_log_factor = 10;
    cfg.lfu_decay_time = 1;
    cfg.hz = 10;
    cfg.io_uring = 1;
    cfg.item_size_max = 1024 * 1024;
    cfg.slowlog_log_slower_than = 10000;
    cfg.slowlog_max_len = 128;
    cfg.busy_reply_threshold = 5000;
    cfg.latency_tracking = 1;
    strcpy(cfg.latency_tracking_info_percentiles, "50 99 99.9");
    cfg.tracking_table_max_keys = 1000000;
    cfg.cobl[1][0] = 256LL << 20;
    cfg.cobl[1][1] = 64LL << 20;
    cfg.cobl[1][2] = 60;
    cfg.cobl[2][0] = 32LL << 20;
    cfg.cobl[2][1] = 8LL << 20;
    cfg.cobl[2][2] = 60;
    cfg.protected_mode = 1;
    cfg.tls_auth_clients = 1;
    cfg.tls_session_caching = 1;
    cfg.tls_session_cache_size = 20480;
    cfg.tls_session_cache_timeout = 300;
    cfg.tls_handshake_timeout = 10000;
    cfg.repl_backlog_size = 1024 * 1024;
    cfg.repl_backlog_ttl = 3600;
    cfg.repl_diskless_sync = 1;
    cfg.repl_diskless_sync_delay = 5;
    cfg.repl_ping_replica_period = 10;
    cfg.repl_timeout = 60;
    cfg.min_replicas_max_lag = 10;
    cfg.replica_read_only = 1;
    cfg.replica_serve_stale_data = 1;
    cfg.replica_priority = 100;
    cfg.replica_announced = 1;
    cfg.replica_ignore_maxmemory = 1;
    cfg.hash_max_listpack_entries = 512; /* redis-server 7.0 compiled default */
    cfg.hash_max_listpack_value = 64;
    cfg.set_max_intset_entries = 512;
    cfg.set_max_listpack_entries = 0; /* Redis 7.0 has no listpack sets: opt-in (128 in 7.2) */
    cfg.set_max_listpack_value = 64;
    cfg.zset_max_listpack_entries = 128;
    cfg.zset_max_listpack_value = 64;
    cfg.list_max_listpack_size = -2;
    cfg.list_compress_depth = 0;
    cfg.stream_node_max_bytes = 4096;
    cfg.stream_node_max_entries = 100;
    strcpy(cfg.proc_title_template, "{title} {listen-addr} {server-mode}");
    strcpy(cfg.oom_score_adj_values, "0 200 800");
    cfg.set_proc_title = 1;
    cfg.disable_thp = 1;
    cfg.hll_sparse_max_bytes = 3000;
    cfg.activerehashing = 1;
    cfg.dynamic_hz = 1;
    cfg.aof_rewrite_incremental_fsync = 1;
    cfg.rdb_save_incremental_fsync = 1;
    cfg.jemalloc_bg_thread = 1;
    cfg.maxmemory_eviction_tenacity = 10;
    cfg.active_expire_effort = 1;
    cfg.shutdown_timeout = 10;
    cfg.loading_process_events_interval_bytes = 2 * 1024 * 1024;
    cfg.crash_log_enabled = 1;
    cfg.crash_memcheck_enabled = 1;
    cfg.active_defrag_cycle_min = 1;
    cfg.active_defrag_cycle_max = 25;
    cfg.active_defrag_threshold_lower = 10;
    cfg.active_defrag_threshold_upper = 100;
    cfg.active_defrag_ignore_bytes = 100LL << 20;
    cfg.active_defrag_max_scan_fields = 1000;
    strcpy(cfg.syslog_ident, "redis");
    cfg.syslog_facility = 1; /* local0 */
    strcpy(cfg.cluster_config_file, "nodes.conf");
    cfg.cluster_node_timeout = 15000;
    cfg.cluster_migration_barrier = 1;
    cfg.cluster_replica_validity_factor = 10;
    cfg.cluster_require_full_coverage = 1;
    cfg.cluster_allow_replica_migration = 1;
    cfg.cluster_allow_pubsubshard_when_down = 1;
    config_default_values = cfg;
}

static int hz_now; /* config_hz_for's last rate, 0 before (relaxed atomics) */

int config_hz_for(int clients)
{
    int hz = __atomic_load_n(&cfg.hz, __ATOMIC_RELAXED);

    if (hz < 1)
        hz = 1;
    if (__atomic_load_n(&cfg.dynamic_hz, __ATOMIC_RELAXED)) {
        while (clients / hz > 200) { /* Redis's MAX_CLIENTS_PER_CLOCK_TICK */
            hz *= 2;
            if (hz > 500) { /* CONFIG_MAX_HZ */
                hz = 500;
                break;
            }
        }
    }
    __atomic_store_n(&hz_now, hz, __ATOMIC_RELAXED);
    return hz;
}

int config_hz_now(void)
{
    int hz = __atomic_load_n(&hz_now, __ATOMIC_RELAXED);
    return hz ? hz : __atomic_load_n(&cfg.hz, __ATOMIC_RELAXED);
}

const char *config_policy_name(int policy)
{
    return policies[policy];
}

struct setting *config_find(const char *name)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (!strcasecmp(config_settings[i].name, name))
            return &config_settings[i];
    return NULL;
}

int config_describe(const char *name, const void **id, int *mutable_)
{
    struct setting *s = config_find(name);

    if (!s)
        return -1;
    *id = s->ptr; /* aliases share their value: the same id */
    *mutable_ = s->mutable_;
    return 0;
}

static int parse_bool(const char *v)
{
    if (!strcasecmp(v, "yes"))
        return 1;
    if (!strcasecmp(v, "no"))
        return 0;
    return -1;
}

/* Event classes, in the order CONFIG GET writes them (A stands for the first ten). */
static const struct {
    char ch;
    int flag;
} notify_classes[] = {
    {'g', NOTIFY_GENERIC}, {'$', NOTIFY_STRING}, {'l', NOTIFY_LIST}, {'s', NOTIFY_SET},
    {'h', NOTIFY_HASH}, {'z', NOTIFY_ZSET}, {'x', NOTIFY_EXPIRED}, {'e', NOTIFY_EVICTED},
    {'t', NOTIFY_STREAM}, {'d', NOTIFY_MODULE}, {'n', NOTIFY_NEW}, {'K', NOTIFY_KEYSPACE},
    {'E', NOTIFY_KEYEVENT}, {'m', NOTIFY_KEY_MISS},
};

int config_notify_parse(const char *v)
{
    int f = 0;

    for (; *v; v++) {
        size_t i;
        if (*v == 'A') {
            f |= NOTIFY_ALL;
            continue;
        }
        for (i = 0; i < sizeof(notify_classes) / sizeof(notify_classes[0]); i++)
            if (notify_classes[i].ch == *v)
                break;
        if (i == sizeof(notify_classes) / sizeof(notify_classes[0]))
            return -1;
        f |= notify_classes[i].flag;
    }
    return f;
}

void config_notify_format(int f, char *out, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < sizeof(notify_classes) / sizeof(notify_classes[0]) && n + 2 < cap;
         i++) {
        int fl = notify_classes[i].flag;
        /* as Redis: A replaces the classes it covers, and also hides n */
        if ((f & NOTIFY_ALL) == NOTIFY_ALL && !(fl & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT | NOTIFY_KEY_MISS))) {
            if (i == 0)
                out[n++] = 'A';
            continue;
        }
        if (f & fl)
            out[n++] = notify_classes[i].ch;
    }
    out[n] = '\0';
}

int config_reading;

/* save: Redis's special case. While the configuration is read (file, then command line) the
 * first save line replaces the default and the later ones add their pairs; save "" empties
 * the list. CONFIG SET replaces it. Pairs: seconds >= 1, changes >= 0. */
static int set_save(const char *v, char *err, size_t errcap)
{
    char copy[1024], out[sizeof(cfg.save)], *words[128], *sv = NULL, *t;
    size_t n = 0;
    int nw = 0;

    snprintf(copy, sizeof(copy), "%s", v);
    for (t = strtok_r(copy, " ", &sv); t; t = strtok_r(NULL, " ", &sv)) {
        if (nw == 128)
            goto invalid;
        words[nw++] = t;
    }
    if (nw & 1)
        goto invalid;
    out[0] = '\0';
    if (config_save_reading && save_loaded && nw) { /* save "": none, whatever came before */
        pthread_mutex_lock(&str_lock);
        n = (size_t)snprintf(out, sizeof(out), "%s", cfg.save);
        pthread_mutex_unlock(&str_lock);
    }
    for (int j = 0; j < nw; j++) {
        char *end;
        long long ll;
        errno = 0;
        ll = strtoll(words[j], &end, 10);
        if (*end || errno || (j % 2 == 0 && ll < 1) || (j % 2 == 1 && ll < 0) ||
            (j % 2 == 1 && ll > INT_MAX))
            goto invalid;
        n += (size_t)snprintf(out + n, n < sizeof(out) ? sizeof(out) - n : 0, "%s%lld",
                              n ? " " : "", ll);
        if (n >= sizeof(out)) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument 'save') - "
                     "too many save parameters");
            return -1;
        }
    }
    if (config_save_reading)
        save_loaded = 1;
    pthread_mutex_lock(&str_lock);
    strcpy(cfg.save, out);
    pthread_mutex_unlock(&str_lock);
    return 0;
invalid:
    snprintf(err, errcap, "CONFIG SET failed (possibly related to argument 'save') - Invalid "
             "save parameters");
    return -1;
}

/* Redis's memtoull: digits and a unit (b, k, kb, m, mb, g, gb), "" is 0; 0 or -1. A value
 * past LLONG_MAX is -1, which the range check refuses as Redis's (wrapped) value is, except
 * for Redis's unsigned long long settings, which take it: LLONG_MAX here. */
static int mem_parse(const char *v, long long *out)
{
    const char *u = v;
    unsigned long long val, mul;
    char digits[128];

    if (*u == '-')
        return -1;
    while (*u >= '0' && *u <= '9')
        u++;
    if (!*u || !strcasecmp(u, "b"))
        mul = 1;
    else if (!strcasecmp(u, "k"))
        mul = 1000;
    else if (!strcasecmp(u, "kb"))
        mul = 1024;
    else if (!strcasecmp(u, "m"))
        mul = 1000 * 1000;
    else if (!strcasecmp(u, "mb"))
        mul = 1024 * 1024;
    else if (!strcasecmp(u, "g"))
        mul = 1000ULL * 1000 * 1000;
    else if (!strcasecmp(u, "gb"))
        mul = 1024ULL * 1024 * 1024;
    else
        return -1;
    if ((size_t)(u - v) >= sizeof(digits))
        return -1;
    memcpy(digits, v, (size_t)(u - v));
    digits[u - v] = '\0';
    errno = 0;
    val = strtoull(digits, NULL, 10);
    /* too large: Redis's value wraps and the range check refuses it; here it is refused */
    if (errno == ERANGE || (mul > 1 && val > ULLONG_MAX / mul) || val * mul > LLONG_MAX)
        *out = -1;
    else
        *out = (long long)(val * mul);
    return 0;
}

/* A file name that is no path (Redis's pathIsBaseName). */
static int base_name(const char *v)
{
    return !strchr(v, '/') && !strchr(v, '\\');
}

/* Redis's checks of dbfilename, appendfilename and appenddirname. 0, or -1 with err. */
static int str_check(const struct setting *s, const char *v, char *err, size_t errcap)
{
    const char *why = NULL;

    if (s->ptr == cfg.dbfilename && !base_name(v))
        why = "dbfilename can't be a path, just a filename";
    else if (s->ptr == cfg.appendfilename && !v[0])
        why = "appendfilename can't be empty";
    else if (s->ptr == cfg.appendfilename && !base_name(v))
        why = "appendfilename can't be a path, just a filename";
    else if (s->ptr == cfg.appenddirname && !v[0])
        why = "appenddirname can't be empty";
    else if (s->ptr == cfg.appenddirname && !base_name(v))
        why = "appenddirname can't be a path, just a dirname";
    if (!why)
        return 0;
    snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - %s",
             s->name, why);
    return -1;
}

/* dir: as Redis, the process's working directory becomes it (relative paths in the rest of
 * the configuration, include lines too, are then relative to it); kept absolute. */
static int set_dir(const char *v, char *err, size_t errcap)
{
    char now[sizeof(cfg.dir)];

    if (chdir(v) || !getcwd(now, sizeof(now))) {
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument 'dir') - %s",
                 strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&str_lock);
    strcpy(cfg.dir, now);
    pthread_mutex_unlock(&str_lock);
    return 0;
}

/* oom-score-adj-values: three numbers in -2000..2000 (master, replica, background child). */
static int set_oom_values(const char **argv, int argc, char *err, size_t errcap)
{
    char copy[256], *words[4], *sv = NULL, out[sizeof(cfg.oom_score_adj_values)];
    int n = 0, vals[3];

    if (argc == 1) { /* one word "a b c" (CONFIG SET): its words */
        snprintf(copy, sizeof(copy), "%s", argv[0]);
        for (char *t = strtok_r(copy, " ", &sv); t && n < 4; t = strtok_r(NULL, " ", &sv))
            words[n++] = t;
    } else {
        for (int i = 0; i < argc && n < 4; i++)
            words[n++] = (char *)argv[i];
        n = argc > 4 ? 4 : argc;
    }
    if (n != 3) {
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument "
                 "'oom-score-adj-values') - wrong number of arguments");
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        char *end;
        long long v = strtoll(words[i], &end, 10);
        if (*end || v < -2000 || v > 2000) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument "
                     "'oom-score-adj-values') - Invalid oom-score-adj-values, elements must be "
                     "between -2000 and 2000.");
            return -1;
        }
        vals[i] = (int)v;
    }
    snprintf(out, sizeof(out), "%d %d %d", vals[0], vals[1], vals[2]);
    pthread_mutex_lock(&str_lock);
    strcpy(cfg.oom_score_adj_values, out);
    pthread_mutex_unlock(&str_lock);
    return 0;
}

int config_set(const char *name, const char **argv, int argc, int boot, char *err, size_t errcap)
{
    struct setting *s;
    char joined[1024];
    const char *v;
    long long ll;

    if (boot && !strcasecmp(name, "user"))
        return add_user_line(argv, argc, err, errcap);
    s = config_find(name);
    if (!s) {
        snprintf(err, errcap, "Unknown option or number of arguments for CONFIG SET - '%s'", name);
        return -1;
    }
    if (!boot && !s->mutable_) {
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", s->name);
        return -1;
    }
    /* Redis's MULTI_ARG_CONFIGs take several words; the others exactly one */
    if (argc != 1 && s->type != C_COBL && s->type != C_FLAGS && s->ptr != cfg.save &&
        s->ptr != cfg.bind && s->ptr != cfg.oom_score_adj_values &&
        s->ptr != cfg.latency_tracking_info_percentiles && s->ptr != cfg.replicaof) {
        snprintf(err, errcap, "wrong number of arguments");
        return -1;
    }
    if (s->ptr == cfg.replicaof && !(argc == 1 && (!argv[0][0] || strchr(argv[0], ' ')))) {
        /* ("": no primary; one word "host port": split later) */
        char *end;
        long port;
        if (argc != 2) {
            snprintf(err, errcap, "wrong number of arguments");
            return -1;
        }
        errno = 0;
        port = strtol(argv[1], &end, 10);
        if (strcasecmp(argv[0], "no") && (*end || port < 0 || port > 65535 || errno)) {
            snprintf(err, errcap, "Invalid master port");
            return -1;
        }
    }
    if (s->type == C_FLAGS && argc == 0)
        goto bad;
    /* multi-word values (save "900 1 300 10", bind "a b") are joined */
    joined[0] = '\0';
    for (int i = 0, len = 0; i < argc; i++) {
        int w = snprintf(joined + len, sizeof(joined) - (size_t)len, "%s%s", i ? " " : "",
                         argv[i]);
        /* a value that does not fit must fail, not be stored truncated */
        if (w < 0 || (size_t)w >= sizeof(joined) - (size_t)len)
            goto bad;
        len += w;
    }
    v = joined;
    if (s->ptr == cfg.save)
        return set_save(v, err, errcap);
    switch (s->type) {
    case C_INT:
    case C_LL:
        if ((s->flags & F_MEM) ? mem_parse(v, &ll) : !util_str2ll(v, strlen(v), &ll))
            goto bad;
        if (ll < s->min || ll > s->max) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - "
                     "argument must be between %lld and %lld inclusive", s->name,
                     (long long)s->min, (long long)s->max);
            return -1;
        }
        if (s->ptr == &cfg.hz)
            ll = ll < 1 ? 1 : ll > 500 ? 500 : ll; /* as Redis: kept within 1..500 */
        /* given in the configuration, or changed by CONFIG SET: a busy port is an error */
        if (s->ptr == &cfg.memcache_port && (config_reading || (!boot && ll != cfg.memcache_port)))
            cfg.memcache_port_given = 1;
        if (s->type == C_INT) /* (Redis's wider types: kept within an int here) */
            __atomic_store_n((int *)s->ptr, ll > INT_MAX ? INT_MAX : (int)ll, __ATOMIC_RELAXED);
        else
            __atomic_store_n((long long *)s->ptr, ll, __ATOMIC_RELAXED);
        break;
    case C_MEM:
        if (mem_parse(v, &ll))
            goto bad;
        if (ll < 0 && (s->ptr == &cfg.maxmemory || s->ptr == &cfg.cluster_link_sendbuf_limit))
            ll = LLONG_MAX;
        if (ll < s->min || ll > s->max) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - "
                     "argument must be between %lld and %lld inclusive", s->name,
                     (long long)s->min, (long long)s->max);
            return -1;
        }
        __atomic_store_n((long long *)s->ptr, ll, __ATOMIC_RELAXED);
        break;
    case C_STR:
        if (strlen(v) >= s->cap)
            goto bad;
        if (str_check(s, v, err, errcap))
            return -1;
        if (s->ptr == cfg.dir)
            return set_dir(v, err, errcap);
        if (s->ptr == cfg.oom_score_adj_values)
            return set_oom_values(argv, argc, err, errcap);
        if (s->ptr == cfg.latency_tracking_info_percentiles) {
            /* (conn) as Redis: numbers 0..100, kept as it prints doubles ("0.0" is "0") */
            char norm[sizeof(cfg.latency_tracking_info_percentiles)];
            size_t nl = 0;
            for (const char *q = v; *q;) {
                char *end;
                double d;
                while (*q == ' ')
                    q++;
                if (!*q)
                    break;
                d = strtod(q, &end);
                if (end == q || (*end && *end != ' ')) {
                    snprintf(err, errcap, "CONFIG SET failed (possibly related to argument "
                             "'%s') - Invalid latency-tracking-info-percentiles parameters",
                             s->name);
                    return -1;
                }
                if (d < 0 || d > 100) {
                    snprintf(err, errcap, "CONFIG SET failed (possibly related to argument "
                             "'%s') - latency-tracking-info-percentiles parameters should sit "
                             "between [0.0,100.0]", s->name);
                    return -1;
                }
                /* Redis prints "%f" without its trailing zeros (and dot): 99.9, 50 */
                char num[64];
                int k = snprintf(num, sizeof(num), "%f", d);
                while (k > 0 && strchr(num, '.') && (num[k - 1] == '0' || num[k - 1] == '.'))
                    if (num[--k] == '.') {
                        num[k] = '\0';
                        break;
                    } else {
                        num[k] = '\0';
                    }
                nl += (size_t)snprintf(norm + nl, sizeof(norm) - nl, "%s%s", nl ? " " : "", num);
                if (nl >= sizeof(norm))
                    goto bad;
                q = end;
            }
            norm[nl] = '\0';
            pthread_mutex_lock(&str_lock);
            strcpy((char *)s->ptr, norm);
            pthread_mutex_unlock(&str_lock);
            break;
        }
        if (s->ptr == cfg.proc_title_template && proctitle_validate(v)) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - "
                     "template format is invalid or contains unknown variables", s->name);
            return -1;
        }
        pthread_mutex_lock(&str_lock);
        strcpy((char *)s->ptr, v);
        pthread_mutex_unlock(&str_lock);
        if (s->ptr == cfg.proc_title_template)
            proctitle_apply(); /* CONFIG SET: at once (a no-op while the file is read) */
        break;
    case C_BOOL: {
        int b = parse_bool(v);
        if (b < 0)
            goto bad;
        if (b && (s->flags & F_ONLY_NO)) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - %s",
                     s->name, s->deny_msg);
            return -1;
        }
        __atomic_store_n((int *)s->ptr, b, __ATOMIC_RELAXED);
        break;
    }
    case C_OCTAL: {
        char *end;
        errno = 0;
        ll = strtoll(v, &end, 8);
        if (!*v || *end || errno)
            goto bad;
        if (ll < s->min || ll > s->max) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - "
                     "argument must be between %llo and %llo inclusive", s->name,
                     (unsigned long long)s->min, (unsigned long long)s->max);
            return -1;
        }
        __atomic_store_n((int *)s->ptr, (int)ll, __ATOMIC_RELAXED);
        break;
    }
    case C_MEMPCT: {
        size_t n = strlen(v);
        if (n > 1 && v[n - 1] == '%') {
            if (!util_str2ll(v, n - 1, &ll) || ll < 0)
                goto bad;
            if (ll > 100) {
                snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - "
                         "percentage argument must be less or equal to 100", s->name);
                return -1;
            }
            ll = -ll;
        } else if (mem_parse(v, &ll)) {
            goto bad;
        } else if (ll < 0) {
            ll = LLONG_MAX; /* (Redis: the ssize_t wraps to a percentage; kept unlimited) */
        }
        __atomic_store_n((long long *)s->ptr, ll, __ATOMIC_RELAXED);
        break;
    }
    case C_FLAGS: {
        /* words of s->enums; "default" (the first) alone means no flag; none is an error */
        int f = 0, words = 0;
        for (int i = 0; i < argc; i++) {
            char copy[256], *save = NULL;
            snprintf(copy, sizeof(copy), "%s", argv[i]);
            for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
                int k;
                for (k = 0; s->enums[k]; k++)
                    if (!strcasecmp(s->enums[k], t))
                        break;
                if (!s->enums[k])
                    goto bad;
                words++;
                if (k > 0)
                    f |= 1 << (k - 1);
            }
        }
        if (!words)
            goto bad;
        if ((f & SHUTDOWN_ON_SIG_SAVE) && (f & SHUTDOWN_ON_SIG_NOSAVE)) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - "
                     "shutdown options SAVE and NOSAVE can't be used simultaneously", s->name);
            return -1;
        }
        __atomic_store_n((int *)s->ptr, f, __ATOMIC_RELAXED);
        break;
    }
    case C_COBL: {
        /* "class hard soft seconds" repeated; every word checked before anything is set */
        char copy[1024], *words[64], *save = NULL, *t;
        long long vals[64];
        int nw = 0, cls[21];
        snprintf(copy, sizeof(copy), "%s", v);
        for (t = strtok_r(copy, " ", &save); t && nw < 64; t = strtok_r(NULL, " ", &save))
            words[nw++] = t;
        /* (conn) Redis's reasons in the error */
        const char *why = NULL;
        if (nw == 0 && !boot)
            return 0; /* CONFIG SET ... "": no class, no change (Redis's) */
        if (nw == 0 || nw % 4 || nw > 60)
            why = "Wrong number of arguments in buffer limit configuration.";
        for (int i = 0; !why && i < nw; i += 4) {
            const char *cn = words[i];
            cls[i / 4] = !strcasecmp(cn, "normal") ? 0
                         : (!strcasecmp(cn, "replica") || !strcasecmp(cn, "slave")) ? 1
                         : !strcasecmp(cn, "pubsub") ? 2 : -1;
            if (cls[i / 4] < 0)
                why = "Invalid client class specified in buffer limit configuration.";
            else if (!util_parse_memsize(words[i + 1], &vals[i + 1]) ||
                     !util_parse_memsize(words[i + 2], &vals[i + 2]) ||
                     !util_str2ll(words[i + 3], strlen(words[i + 3]), &vals[i + 3]) ||
                     vals[i + 1] < 0 || vals[i + 2] < 0 || vals[i + 3] < 0)
                why = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        }
        if (why) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - %s",
                     s->name, why);
            return -1;
        }
        for (int i = 0; i < nw; i += 4)
            for (int j = 0; j < 3; j++)
                __atomic_store_n(&cfg.cobl[cls[i / 4]][j], vals[i + 1 + j], __ATOMIC_RELAXED);
        cfg.client_output_buffer_limit_normal = cfg.cobl[0][0];
        break;
    }
    case C_NOTIFY: {
        int f = config_notify_parse(v);
        if (f < 0) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.", s->name);
            return -1;
        }
        __atomic_store_n((int *)s->ptr, f, __ATOMIC_RELAXED);
        break;
    }
    case C_ENUM:
    case C_LOGLEVEL:
        for (int i = 0; s->enums[i]; i++) {
            if (!strcasecmp(s->enums[i], v)) {
                __atomic_store_n((int *)s->ptr, i, __ATOMIC_RELAXED);
                if (s->type == C_LOGLEVEL)
                    log_setup(i, NULL);
                return 0;
            }
        }
        goto bad;
    }
    return 0;
bad:
    if (s->type == C_BOOL)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument must be 'yes' or 'no'", s->name);
    else if (s->type == C_ENUM || s->type == C_LOGLEVEL || s->type == C_FLAGS) {
        char list[512];
        size_t n = 0;
        list[0] = '\0';
        for (int i = 0; s->enums[i] && n < sizeof(list); i++)
            n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
                                  s->enums[i]);
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument(s) must be one of the following: %s",
                 s->name, s->enums == policies ? "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"
                          : s->enums == fsyncs ? "everysec, always, no"
                          : s->enums == acl_pubsub ? "allchannels, resetchannels"
                                               : list);
    } else if (s->type == C_MEMPCT)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument must be a memory or percent value", s->name);
    else if (s->type == C_MEM || (s->flags & F_MEM))
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument must be a memory value", s->name);
    else if (s->type == C_STR)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - value is too long", s->name);
    else if (s->type == C_OCTAL)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument couldn't be parsed as an octal number", s->name);
    else if (s->type == C_COBL)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - Invalid argument", s->name);
    else
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument couldn't be parsed into an integer", s->name);
    return -1;
}

/* The value of setting s read from the config struct at base (cfg, or the defaults). */
void config_format_at(const struct setting *s, const struct config *base, char *out, size_t cap)
{
    const void *ptr = (const char *)base + ((const char *)s->ptr - (const char *)&cfg);

    switch (s->type) {
    case C_INT:
        snprintf(out, cap, "%d", *(const int *)ptr);
        break;
    case C_LL:
    case C_MEM:
        snprintf(out, cap, "%lld", *(const long long *)ptr);
        break;
    case C_STR:
        if (base == &cfg)
            config_str((const char *)ptr, out, cap);
        else
            snprintf(out, cap, "%s", (const char *)ptr);
        if (s->ptr == cfg.dir && out[0] != '/' && base == &cfg) /* as Redis: getcwd() */
            if (!getcwd(out, cap))
                out[0] = '\0';
        break;
    case C_BOOL:
        snprintf(out, cap, "%s", *(const int *)ptr ? "yes" : "no");
        break;
    case C_ENUM:
    case C_LOGLEVEL:
        snprintf(out, cap, "%s", s->enums[*(const int *)ptr]);
        break;
    case C_NOTIFY:
        config_notify_format(*(const int *)ptr, out, cap);
        break;
    case C_OCTAL:
        snprintf(out, cap, "%o", *(const int *)ptr);
        break;
    case C_MEMPCT: {
        long long v = *(const long long *)ptr;
        if (v < 0)
            snprintf(out, cap, "%lld%%", -v);
        else
            snprintf(out, cap, "%lld", v);
        break;
    }
    case C_FLAGS: {
        int f = *(const int *)ptr;
        size_t n = 0;
        out[0] = '\0';
        if (!f)
            snprintf(out, cap, "%s", s->enums[0]);
        for (int k = 1; s->enums[k] && n < cap; k++)
            if (f & (1 << (k - 1)))
                n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? " " : "", s->enums[k]);
        break;
    }
    case C_COBL:
        snprintf(out, cap, "normal %lld %lld %lld slave %lld %lld %lld pubsub %lld %lld %lld",
                 base->cobl[0][0], base->cobl[0][1], base->cobl[0][2], base->cobl[1][0],
                 base->cobl[1][1], base->cobl[1][2], base->cobl[2][0], base->cobl[2][1],
                 base->cobl[2][2]);
        break;
    }
}

int config_format(const char *name, char *out, size_t cap)
{
    struct setting *s = config_find(name);

    if (!s)
        return -1;
    config_format_at(s, &cfg, out, cap);
    return 0;
}

int config_get(const char *pattern, config_visit_fn *cb, void *arg)
{
    char val[1100];
    int n = 0;

    for (size_t i = 0; i < NSETTINGS; i++) {
        const struct setting *s = &config_settings[i];
        if (util_glob_match(pattern, strlen(pattern), s->name, strlen(s->name), 1)) {
            if ((s->flags & F_HIDDEN) && strcasecmp(pattern, s->name))
                continue;
            config_format(s->name, val, sizeof(val));
            cb(s->name, val, arg);
            n++;
        }
    }
    return n;
}
