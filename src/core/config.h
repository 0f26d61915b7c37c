/* The server configuration: one global, written at startup by the config file and command
 * line, and afterwards only by CONFIG SET (fields that may change at runtime are read by
 * workers with relaxed loads; a torn read of an int is impossible on our targets). The table
 * of settings (names as in Redis) serves the parser, CONFIG GET/SET and INFO. */
#ifndef TC_CONFIG_H
#define TC_CONFIG_H

#include <stddef.h>

enum maxmem_policy {
    MM_NOEVICTION = 0,
    MM_ALLKEYS_LRU,
    MM_ALLKEYS_LFU,
    MM_ALLKEYS_RANDOM,
    MM_VOLATILE_LRU,
    MM_VOLATILE_LFU,
    MM_VOLATILE_RANDOM,
    MM_VOLATILE_TTL,
};

struct config {
    int port;               /* RESP TCP port, 0 = off */
    int memcache_port;      /* memcached TCP port, 0 = off */
    int memcache_port_given; /* memcache-port was set at start-up (else a busy 11211 is skipped) */
    char bind[256];         /* space-separated addresses */
    char unixsocket[256];   /* RESP unix socket path or "" */
    int unixsocketperm;
    int threads;            /* worker threads */
    int databases;
    int stripes;            /* store stripes (power of two) */
    char requirepass[512];
    char aclfile[1024];     /* ACL users file (ACL SAVE / LOAD), "" none */
    int acllog_max_len;     /* ACL LOG entries kept */
    int acl_pubsub_default; /* 0 resetchannels, 1 allchannels: new users' channels */
    int timeout;            /* idle client timeout in seconds, 0 = never */
    int tcp_keepalive;
    int tcp_backlog;
    int maxclients;
    int loglevel;
    char logfile[1024];
    char dir[1024];
    char dbfilename[256];
    char pidfile[1024];
    char save[256];
    int appendonly;
    int rdbcompression;     /* LZF-compress strings in RDB snapshots */
    int rdbchecksum;        /* CRC64 trailer on RDB snapshots */
    int rdb_key_save_delay; /* tests, as Redis's: us the snapshot thread sleeps per key */
    int snapshot_fork;      /* 1: BGSAVE & co. fork; 0 (default): a snapshot thread (snapshot.h) */
    int stop_writes_on_bgsave_error;
    char appendfilename[256];
    int appendfsync;        /* 0 no, 1 everysec, 2 always */
    char appenddirname[256];         /* AOF directory (multi-part AOF), under dir */
    int auto_aof_rewrite_percentage; /* growth over the base size that triggers a rewrite */
    long long auto_aof_rewrite_min_size;
    int aof_load_truncated;          /* load an AOF whose last command is cut short */
    int aof_use_rdb_preamble;        /* base file as RDB (yes) or RESP commands (no) */
    int no_appendfsync_on_rewrite;   /* no fsync while a rewrite child runs */
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    long long maxmemory;
    int maxmemory_policy;
    int maxmemory_samples;
    int lfu_log_factor;
    int lfu_decay_time;
    int hz;
    long long item_size_max;
    long long slowlog_log_slower_than;
    int slowlog_max_len;
    long long latency_monitor_threshold; /* ms; 0: the latency monitor is off */
    int latency_tracking;                 /* per-command latency histograms (INFO latencystats) */
    char latency_tracking_info_percentiles[128];
    long long busy_reply_threshold; /* ms a script runs before others get -BUSY (lua-time-limit) */
    int lua_enable_deprecated_api;  /* scripts keep getfenv, setfenv and newproxy (Debian's
                                     * redis 7.0.15 setting, immutable, hidden) */
    int daemonize;               /* detach (server/daemon.c); ignored when supervised */
    int protected_mode;
    long long client_output_buffer_limit_normal; /* hard limit in bytes, 0 = none */
    /* client-output-buffer-limit per class (0 normal, 1 replica, 2 pubsub): hard bytes, soft
     * bytes, soft seconds; 0 = no limit */
    long long cobl[3][3];
    /* collection encodings (Redis names and defaults) */
    int hash_max_listpack_entries;
    int hash_max_listpack_value;
    int set_max_intset_entries;
    int set_max_listpack_entries;
    int set_max_listpack_value;
    int zset_max_listpack_entries;
    int zset_max_listpack_value;
    int list_max_listpack_size; /* <0: -1..-5 = 4..64 KiB per chunk; >0: entries per chunk */
    int list_compress_depth;    /* accepted, not used (chunks are not compressed) */
    long long stream_node_max_bytes;   /* a stream node's listpack size limit (0: 1 GiB) */
    long long stream_node_max_entries; /* entries of a stream node, deleted too (0: none) */
    int memcache_sasl;          /* memcached binary protocol: SASL PLAIN required (memcached -S) */
    char memcache_auth_file[1024]; /* "user:password" lines for SASL PLAIN (memcached -Y) */
    int notify_keyspace_events; /* NOTIFY_* classes (read relaxed by every write) */
    int enable_debug_command;  /* DEBUG allowed: 0 no (default), 1 yes, 2 from local clients */
    int enable_module_command; /* MODULE LOAD / LOADEX / UNLOAD allowed: the same */
    int enable_protected_configs; /* CONFIG SET dir / dbfilename allowed: the same */
    int tracking_table_max_keys; /* keys the CLIENT TRACKING table remembers, 0 = no limit */
    int io_uring;               /* batch each loop turn's socket reads and writes in io_uring */
    /* TLS (Redis's names; net/tls.c reads the strings under the string lock) */
    int tls_port;               /* RESP over TLS, 0 = off */
    int tls_memcache_port;      /* memcached protocol over TLS, 0 = off (memcached -Z) */
    char tls_cert_file[1024];
    char tls_key_file[1024];
    char tls_key_file_pass[256];
    char tls_client_cert_file[1024]; /* outgoing links (replication) */
    char tls_client_key_file[1024];
    char tls_client_key_file_pass[256];
    char tls_ca_cert_file[1024];
    char tls_ca_cert_dir[1024];
    char tls_dh_params_file[1024];
    int tls_auth_clients;       /* 0 no, 1 yes (default), 2 optional */
    char tls_protocols[128];    /* "TLSv1.2 TLSv1.3"; empty: both */
    char tls_ciphers[1024];
    char tls_ciphersuites[1024];
    int tls_prefer_server_ciphers;
    int tls_session_caching;
    int tls_session_cache_size;
    int tls_session_cache_timeout;
    int tls_replication;        /* replication links use TLS (read by src/repl) */
    int tls_cluster;            /* accepted and stored (no cluster bus) */
    int tls_handshake_timeout;  /* ms a TLS handshake may take before the connection closes */
    /* replication (Redis's names and defaults; src/cmd/repl*.c) */
    long long repl_backlog_size;
    int repl_backlog_ttl;        /* s without replicas before the backlog is freed, 0 never */
    int repl_diskless_sync;      /* full sync: RDB straight to the replica sockets */
    int repl_diskless_sync_delay; /* s to wait for more replicas before such a sync */
    int repl_diskless_sync_max_replicas; /* start at once when this many wait, 0: no limit */
    int repl_diskless_load;      /* accepted: disabled, on-empty-db, swapdb (loads from disk) */
    int repl_ping_replica_period; /* s between PINGs in the stream */
    int repl_timeout;            /* s of silence before a link is dropped */
    int repl_disable_tcp_nodelay;
    int min_replicas_to_write;   /* -NOREPLICAS below this many good replicas, 0: off */
    int min_replicas_max_lag;    /* s since a replica's last ACK for it to count */
    char masterauth[512];
    char masteruser[128];
    int replica_read_only;
    int replica_serve_stale_data;
    int replica_priority;
    int replica_announced;
    char replica_announce_ip[64];
    int replica_announce_port;
    int replica_lazy_flush;
    int replica_ignore_maxmemory;
    char replicaof[300];         /* "host port" at start-up (config file), "" none */
    /* Redis 7.0's other settings. Each is accepted, shown and rewritten as Redis's; the
     * comment says what it does here, "inert" where it has no meaning on this design
     * (docs/config.md lists them). */
    int always_show_logo;        /* inert: no ASCII logo is printed */
    int set_proc_title;          /* the process title from proc-title-template (proctitle.c) */
    char proc_title_template[256]; /* {title} {listen-addr} ...: core/proctitle.h */
    int rdb_del_sync_files;      /* persistence off: a disk sync's RDB file is removed */
    /* costly values freed by the lazy free thread (store/lazyfree.c) when dropped by: */
    int lazyfree_lazy_eviction;  /* eviction (store/evict.c) */
    int lazyfree_lazy_expire;    /* expiry */
    int lazyfree_lazy_server_del; /* the server's own deletes (a SET over a key, RENAME...) */
    int lazyfree_lazy_user_del;  /* DEL (as UNLINK) */
    int lazyfree_lazy_user_flush; /* FLUSHALL / FLUSHDB without SYNC or ASYNC */
    int oom_score_adj;           /* 0 no, 1 yes, 2 relative, 3 absolute: /proc/self/oom_score_adj */
    char oom_score_adj_values[64]; /* "master replica bgchild" */
    int disable_thp;             /* prctl(PR_SET_THP_DISABLE) at start-up */
    int aof_timestamp_enabled;   /* "#TS:<unix s>" lines in the AOF (aof.c) */
    long long hll_sparse_max_bytes; /* a sparse HLL growing past it becomes dense */
    int activerehashing;         /* inert: hash tables rehash incrementally on access */
    int dynamic_hz;              /* the timers' rate grows with the clients (config_hz_for) */
    int aof_rewrite_incremental_fsync; /* an AOF rewrite to disk every 4 MB written */
    int rdb_save_incremental_fsync; /* an RDB file to disk every 4 MB written */
    int jemalloc_bg_thread;      /* inert */
    int propagation_error_behavior; /* 0 ignore, 1 panic, 2 panic-on-replicas (repl.h) */
    int replica_ignore_disk_write_errors; /* inert */
    long long maxmemory_clients; /* client eviction; <0: percent of maxmemory (inert) */
    int maxmemory_clients_pct;   /* maxmemory-clients was given as a percentage */
    int maxmemory_eviction_tenacity; /* inert: eviction runs until under maxmemory */
    int active_expire_effort;    /* inert */
    int shutdown_timeout;        /* s SHUTDOWN waits for replicas to catch up */
    int shutdown_on_sigint;      /* SHUTDOWN_* flags for SIGINT */
    int shutdown_on_sigterm;     /* SHUTDOWN_* flags for SIGTERM */
    int sanitize_dump_payload;   /* 0 no, 1 yes, 2 clients: payloads are always checked deeply */
    int key_load_delay;          /* tests: us slept per key loaded (negative: per n keys) */
    long long loading_process_events_interval_bytes; /* bytes between event checks loading */
    char bind_source_addr[64];   /* address outgoing (replication) connections bind to */
    int crash_log_enabled;       /* a crash report in the log on a fatal signal */
    int use_exit_on_panic;       /* tests: a crash ends with exit(1), not the signal */
    int watchdog_period;         /* inert: no watchdog stack traces are logged */
    int crash_memcheck_enabled;  /* inert */
    int aof_disable_auto_gc;     /* keep history AOF files after a rewrite */
    int io_threads_do_reads;     /* inert: every worker reads its own sockets */
    int activedefrag;            /* only "no": refused as by a Redis built on system jemalloc */
    int active_defrag_cycle_min, active_defrag_cycle_max;
    int active_defrag_threshold_lower, active_defrag_threshold_upper;
    long long active_defrag_ignore_bytes, active_defrag_max_scan_fields;
    int syslog_enabled;          /* log lines also go to syslog(3) */
    char syslog_ident[64];
    int syslog_facility;         /* index into user, local0..local7 */
    int supervised;              /* 0 no, 1 upstart, 2 systemd, 3 auto (core/supervise.h) */
    char server_cpulist[128], bio_cpulist[128], aof_rewrite_cpulist[128], bgsave_cpulist[128];
    long long socket_mark_id;        /* SO_MARK on listening sockets (inert) */
    char ignore_warnings[128];   /* inert */
    /* Redis Cluster's names (the cluster bus is not built: cluster-enabled only takes no) */
    int cluster_enabled;
    char cluster_config_file[256];
    long long cluster_node_timeout;
    int cluster_port, cluster_announce_port, cluster_announce_bus_port;
    int cluster_announce_tls_port;
    char cluster_announce_ip[64], cluster_announce_hostname[256];
    int cluster_preferred_endpoint_type; /* 0 ip, 1 hostname, 2 unknown-endpoint */
    int cluster_migration_barrier, cluster_replica_validity_factor;
    int cluster_require_full_coverage, cluster_replica_no_failover;
    int cluster_allow_reads_when_down, cluster_allow_pubsubshard_when_down;
    int cluster_allow_replica_migration;
    long long cluster_link_sendbuf_limit;
    int metrics_port;            /* Prometheus endpoint (src/server/metrics.c), 0 = off */
};
/* shutdown-on-sigint / shutdown-on-sigterm flags (as SHUTDOWN's arguments) */
enum { SHUTDOWN_ON_SIG_SAVE = 1, SHUTDOWN_ON_SIG_NOSAVE = 2, SHUTDOWN_ON_SIG_NOW = 4,
       SHUTDOWN_ON_SIG_FORCE = 8 };
/* Set by net/tls.c: applies the tls-* settings after CONFIG SET changed some (certificate
 * reload). 0, or -1 with err set; NULL before TLS is set up. */
extern int (*config_tls_apply)(char *err, size_t errcap);
/* Set by src/server once the listeners are up: listen as port, tls-port, memcache-port,
 * tls-memcache-port and bind now say (after CONFIG SET changed one). 0; -1 a socket could not
 * be bound (nothing changed); -2 the TLS context could not be set up; err says why. */
extern int (*config_listen_apply)(char *err, size_t errcap);

extern struct config cfg;
/* `user` lines of the config file and --user arguments, in order (the ACL module applies them
 * at start-up): each the words after "user" joined by single spaces */
extern char **config_user_lines;
extern int config_user_nlines;

/* 1 while the configuration is read at start-up (the file, then the command line): the
 * first save line replaces the default list, the next ones add to it, as Redis 7.0. */
extern int config_reading;
/* Fill cfg with the defaults (threads = number of cores). */
void config_defaults(void);
/* Apply one setting. argv are the value words (usually one). At startup (boot=1) every
 * setting may be set; at runtime only mutable ones. Returns 0, or -1 with err set to the
 * text after "ERR " (Redis's CONFIG SET wording is built by the caller). */
int config_set(const char *name, const char **argv, int argc, int boot, char *err, size_t errcap);
/* A setting by name (any case): 0 with *id (equal for a name and its aliases) and whether
 * CONFIG SET may change it, or -1 when there is none. */
int config_describe(const char *name, const void **id, int *mutable_);
/* CONFIG REWRITE's `user` lines (the ACL layer sets it at start-up): appends one
 * "user <name> <rules>\n" line per user to out. With it set and no aclfile, the file's own
 * `user` lines are replaced by these, as Redis does; NULL: they are kept as they are. */
struct buf;
extern void (*config_users_hook)(struct buf *out);
/* CONFIG REWRITE as Redis 7.0's (config_rewrite.c): path's comments, blank lines and order
 * are kept, a setting's lines get its current value in place, a setting not in the file is
 * added after "# Generated by CONFIG REWRITE" when Redis would write it (not at its default,
 * or always: save, dir, latency-tracking-info-percentiles, users), its other lines go; then
 * path is replaced atomically. force_all (DEBUG CONFIG-REWRITE-FORCE-ALL): every setting is
 * written, defaults too. 0, or -1 with err set. */
int config_rewrite(const char *path, int force_all, char *err, size_t errcap);
/* The start-up configuration as redis-server 7.0 reads it: the file at path (or none), then
 * options (the command line's "--name value" turned into lines, or NULL) as more lines of the
 * same text, so their line numbers follow the file's. Comments and blank lines are skipped,
 * lines split as sdssplitargs, repeated save lines add up, include reads a file (or a glob)
 * relative to the working directory (dir changes it). Then, as Redis, the log file must
 * open. 0; -1 with err in the form that follows "*** FATAL CONFIG FILE ERROR ***" ("Reading
 * the configuration file, at line N
>>> 'line'
reason"); -2 with err a plain log line
 * (Redis logs it and exits: a file that cannot be opened, a module directive). */
int config_load(const char *path, const char *options, char *err, size_t errcap);
/* A file alone, or text alone (tests, fuzzing): as config_load, without the log file
 * check; 0 or -1 with err. */
int config_load_file(const char *path, char *err, size_t errcap);
int config_load_string(const char *text, char *err, size_t errcap);
/* rename-command lines read: pairs (from, to), for the command table to apply; where[i/2]
 * is the pair's "Reading the configuration file, at line N\n>>> 'line'" for its error */
extern char **config_renames;
extern int config_nrenames;
extern char **config_rename_where;
/* Iterate settings matching a glob: cb(name, value) for each. */
typedef void config_visit_fn(const char *name, const char *value, void *arg);
int config_get(const char *pattern, config_visit_fn *cb, void *arg);
/* Format one setting's value; returns 0 or -1 if unknown. */
int config_format(const char *name, char *out, size_t cap);
/* String settings CONFIG SET may change while workers run (requirepass, dir, dbfilename, save)
 * are written under a lock: read them through these (field is e.g. cfg.requirepass). */
void config_str(const char *field, char *out, size_t cap);
int config_str_empty(const char *field);
const char *config_policy_name(int policy);
/* dynamic-hz, as Redis's serverCron: the timers' rate for this many connected clients, hz
 * doubled while clients / rate > 200 (at most 500); hz itself with dynamic-hz no. Remembers
 * it for config_hz_now (INFO's hz, the expiry cycle's budget per tick). Any thread. */
int config_hz_for(int clients);
/* The rate config_hz_for last computed (hz before any). Any thread. */
int config_hz_now(void);

/* Keyspace notification classes (notify-keyspace-events), Redis's letters in comments. */
#define NOTIFY_KEYSPACE (1 << 0)  /* K */
#define NOTIFY_KEYEVENT (1 << 1)  /* E */
#define NOTIFY_GENERIC (1 << 2)   /* g */
#define NOTIFY_STRING (1 << 3)    /* $ */
#define NOTIFY_LIST (1 << 4)      /* l */
#define NOTIFY_SET (1 << 5)       /* s */
#define NOTIFY_HASH (1 << 6)      /* h */
#define NOTIFY_ZSET (1 << 7)      /* z */
#define NOTIFY_EXPIRED (1 << 8)   /* x */
#define NOTIFY_EVICTED (1 << 9)   /* e */
#define NOTIFY_STREAM (1 << 10)   /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m */
#define NOTIFY_MODULE (1 << 13)   /* d */
#define NOTIFY_NEW (1 << 14)      /* n */
#define NOTIFY_ALL (NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | \
                    NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)
/* The classes of a notify-keyspace-events string, or -1 for a character not a class. */
int config_notify_parse(const char *v);
/* The canonical string of classes f, as CONFIG GET shows it. */
void config_notify_format(int f, char *out, size_t cap);

#endif
