/* twinbench command-line configuration and the preset runners. The config
 * is filled by main() and read-only afterwards. */
#ifndef TB_BENCH_H
#define TB_BENCH_H

#include "engine.h"
#include "report.h"
#include "workload.h"

#define MAX_TARGETS 16

/* Flags the user gave explicitly (presets keep their own values otherwise). */
enum {
    SET_THREADS = 1 << 0, SET_CLIENTS = 1 << 1, SET_PIPELINE = 1 << 2, SET_REQUESTS = 1 << 3,
    SET_SIZE = 1 << 4, SET_KEYMAX = 1 << 5, SET_RATIO = 1 << 6, SET_PATTERN = 1 << 7,
};

struct config {
    struct target targets[MAX_TARGETS];
    int ntargets;
    uint32_t threads, clients, pipeline;  /* per memtier: clients are per thread */
    int pipeline_batch;                   /* pipeline as redis-benchmark: P out, P back */
    int no_uring;                         /* --io-uring no */
    uint64_t requests;                    /* per client; 0 with test_time */
    double test_time;                     /* seconds */
    double rate;                          /* open loop, total requests/s */
    int poisson;
    double warmup;                        /* seconds of unmeasured load before each run */
    int preload;                          /* write every key once first */
    uint32_t preload_pipeline;            /* requests in flight per connection while preloading (64) */
    int flush;                            /* FLUSHALL / flush_all each target first */
    const char *conn_init;                /* RESP command line sent on each connection first */
    double timeout_ms;
    struct workload wl;
    const char *json_path, *html_path, *preset, *tests;
    double scale;
    enum ketama_layout layout;
    uint64_t seed;
    int decimal_point;                    /* seed000 with '.' instead of ',' */
    int progress;
    unsigned set_flags;                   /* SET_* */
    int ncpu;
};

/* Run one measured run and store it in rep. Returns the run or NULL (error printed). */
struct bench_run *bench_run_one(struct report *rep, const struct config *cfg, int t,
                                const struct workload *wl, const char *label, const char *group,
                                uint32_t conns, uint32_t threads, uint32_t pipeline,
                                uint64_t per_conn, uint64_t total, double duration, int warmup,
                                int chart);
/* Write keys [wl->key_min, wl->key_max] once with the workload's value sizes. */
int bench_preload(struct report *rep, const struct config *cfg, int t, const struct workload *wl);

int preset_run(struct report *rep, const struct config *cfg);

#endif
