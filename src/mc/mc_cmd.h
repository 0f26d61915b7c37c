/* The memcached room: the text and meta commands of memcached 1.6 on the shared store
 * (database 0), for connections accepted on the memcached port (PROTO_MC). The server wires
 * these hooks; everything else of the room is internal (mc_int.h). */
#ifndef TC_MC_CMD_H
#define TC_MC_CMD_H

#include <stdint.h>

struct conn;
struct srv;

/* memcached's own settings (its command line, src/server/mc_cmdline.c): written by the main
 * thread before the workers start, read-only afterwards. Those with a twincache counterpart
 * (port, maxmemory, maxclients, threads, item-size-max, bind) live in cfg instead; the
 * rest are either honoured by the memcached room or only reported by "stats settings". */
struct mc_settings {
    int flush_enabled;    /* -F clears: flush_all answers CLIENT_ERROR flush_all not allowed */
    int cas_enabled;      /* -C clears: cas uniques read 0 and compares fail */
    int shutdown_enabled; /* -A: "shutdown" and "shutdown graceful" stop the server */
    int udp_port;         /* -U: text protocol over UDP (0: off) */
    int tcpport;          /* -p as given (reported even when -s replaces it) */
    int reqs_per_event;   /* -R */
    int chunk_size;       /* -n (reported) */
    int umask;            /* -a (reported, octal) */
    int hashpower;        /* -o hashpower (reported) */
    int idle_timeout;     /* -o idle_timeout: idle connections are closed after it (seconds) */
    int lru_crawler;      /* -o lru_crawler / no_lru_crawler (no_modern clears) */
    int lru_maintainer;   /* -o lru_maintainer / no_lru_maintainer (no_modern clears):
                           * which LRU counters "stats" shows, as memcached does */
    int slab_reassign;    /* -o slab_reassign / no_slab_reassign (no_modern clears; reported) */
    int track_sizes;      /* -o track_sizes (reported) */
    int dump_enabled;     /* -X clears: lru_crawler metadump and stats cachedump refused */
    int watch_enabled;    /* -W clears */
    int maxconns_fast;
    int slab_chunk_max;
    int evictions;        /* -M clears (maxmemory-policy noeviction) */
    int sasl;             /* -S (reported; the binary protocol's SASL uses memcache-sasl) */
    int verbose;          /* -v, -vv: the initial verbosity */
    int memcached_cmdline; /* started with a memcached command line */
    char binding[8];      /* -B: auto, ascii or binary */
    char growth_factor[16]; /* -f (reported) */
    char domain_socket[256]; /* -s (reported) */
    char inter[256];      /* -l as given ("NULL" when absent) */
};
extern struct mc_settings mc_cfg;

/* Allocate the per-worker memcached counters (main thread, after srv->nworkers is set and
 * before workers start). Returns 0 or -1 when out of memory. */
int mc_cmd_setup(struct srv *srv);
/* Input hook for PROTO_MC connections: parse and run everything complete in c->rbuf, answering
 * into c's output (the worker writes it once per read). Owner worker only. */
void mc_cmd_input(struct conn *c);
/* A worker's end of turn (srv->before_sleep): run the input of the connections that yielded
 * under -R (requests per event). Owner worker only. */
struct worker;
void mc_before_sleep(struct worker *w);
/* Open hook: a new connection's state (as a RESP one's: RESP2, authenticated unless a password
 * is set; the memcached state itself is created on first input). Owner worker only. */
void mc_cmd_open(struct conn *c);
/* Close hook: free the connection's memcached state and arguments. Owner worker only. */
void mc_cmd_close(struct conn *c);
/* Worker tick hook (every 1000/hz ms, on worker w): deliver "watch" log lines to w's
 * watchers. */
struct worker;
void mc_cmd_tick(struct worker *w);
/* Idle-timeout hook: 1 when -o idle_timeout is set (the worker then applies cfg.timeout). */
int mc_cmd_may_time_out(struct conn *c);
/* The metrics endpoint (src/server/metrics.c): fn(name, value) for each of the memcached
 * counters "stats" reports from them (MC_STAT_FIELDS: get_cmds, get_hits, ...), since the last
 * "stats reset"; and the open memcached connections. Any thread; racy sums, as "stats". */
void mc_stats_visit(void (*fn)(const char *name, uint64_t v, void *arg), void *arg);
int mc_stats_curr_conns(void);

#endif
