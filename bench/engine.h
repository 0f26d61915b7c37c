/* twinbench load engine: T threads with an epoll loop each, C clients per
 * thread, pipeline depth P, closed loop or open loop (--rate) with latency
 * measured from the intended send time. */
#ifndef TB_ENGINE_H
#define TB_ENGINE_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "hist.h"
#include "ketama.h"
#include "workload.h"

enum proto_kind { PROTO_RESP, PROTO_MC, PROTO_MCBIN };

#define TARGET_MAX_HOSTS 32

/* One server or one sharded group of servers (ketama). Read-only once set up. */
struct target {
    char name[64];                  /* label in reports */
    char url[512];                  /* as given */
    enum proto_kind proto;
    uint32_t nhosts;
    char hosts[TARGET_MAX_HOSTS][128];  /* "host:port" */
    char names[TARGET_MAX_HOSTS][64];   /* ketama node names ("" = host:port), as twemproxy's
                                           "host:port:weight name" */
    uint32_t weights[TARGET_MAX_HOSTS]; /* ketama weights (twemproxy layout), default 1 */
    struct sockaddr_storage addr[TARGET_MAX_HOSTS];
    socklen_t addrlen[TARGET_MAX_HOSTS];
    struct ketama ring;             /* when nhosts > 1 */
    int pids[TARGET_MAX_HOSTS];     /* server PIDs for CPU accounting, 0 = unknown */
    uint32_t npids;
};

/* Parse "NAME=redis://h:p[,h:p...]" or "memcache://..." (NAME optional). Each host may be
 * written as in twemproxy's servers list, "h:p[:weight][ nodename]"; the node name (and the
 * weight) then place the ketama points as twemproxy does. layout picks the ketama point
 * layout. Returns 0 or -1 with err set. */
int target_parse(struct target *t, const char *spec, enum ketama_layout layout, char *err,
                 size_t errlen);

/* One measured run. */
struct run_spec {
    const struct target *tgt;
    const struct workload *wl;
    uint32_t threads;          /* OS threads */
    uint32_t conns;            /* clients in total, spread over threads */
    uint32_t pipeline;         /* max requests in flight per client */
    const char *conn_init;     /* RESP: inline command each connection sends (and whose
                                * reply it reads) before the run, or NULL */
    int pipeline_batch;        /* closed loop: send pipeline requests only once all the
                                * previous ones were answered (redis-benchmark -P) */
    int no_uring;              /* 1: plain read/write per socket instead of one io_uring
                                * submission per loop turn for reads and one for writes */
    uint64_t requests_per_conn;/* 0 = not limited per client */
    uint64_t total_requests;   /* 0 = not limited in total (split per thread) */
    double duration;           /* seconds, 0 = until the request budget is used */
    double rate;               /* open loop: total requests/s; 0 = closed loop */
    int poisson;               /* open loop arrivals: 1 Poisson, 0 uniform */
    double timeout_ms;         /* per-request timeout, 0 = none */
    int progress;              /* draw a progress bar on stderr (tty only) */
    uint64_t seed;
    const char *label;         /* run label for reports */
};

struct run_result {
    struct hist hist;          /* merged latency histogram (ns) */
    uint64_t ops, hits, misses, errors, timeouts, conn_errors, sets, gets;
    double elapsed_s;          /* first send to last reply */
    double ops_per_sec;
    double client_cpu_s;       /* twinbench CPU time during the run */
    double server_cpu_s;       /* summed over target pids; < 0 if unknown */
    uint32_t threads, conns, pipeline;
    uint64_t requests_per_conn;
    double rate;
    char label[96];
    char error[256];           /* non-empty when the run failed */
    /* per host of a sharded target (index as target hosts; zero for one host): */
    uint64_t host_reqs[TARGET_MAX_HOSTS];     /* requests sent */
    uint64_t host_keys[TARGET_MAX_HOSTS];     /* keys sent (a multi-get counts each key) */
    uint64_t host_keyspace[TARGET_MAX_HOSTS]; /* keys of the workload's key range the ring
                                                 gives each host (sampled above 1M keys) */
    uint64_t keyspace_sampled;                /* keys looked up for host_keyspace */
};

/* Execute spec and fill res (res->hist is initialised here; release with
 * run_result_deinit). Returns 0, or -1 with res->error set. */
int engine_run(const struct run_spec *spec, struct run_result *res);
void run_result_deinit(struct run_result *res);

/* Fetch INFO (RESP) or stats + stats settings (memcached) from the first host
 * into out (malloc'ed, caller frees). Returns 0 or -1. Not on any hot path. */
int target_fetch_info(const struct target *t, char **out);
/* Send FLUSHALL / flush_all to every host. */
int target_flush(const struct target *t);

#endif
