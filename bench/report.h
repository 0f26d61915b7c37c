/* twinbench reports: the collected runs of one invocation, printed as text
 * (generic summary or the presets' article formats), JSON and HTML. */
#ifndef TB_REPORT_H
#define TB_REPORT_H

#include <stdio.h>

#include "engine.h"
#include "util.h"

struct bench_run {
    int target;              /* index into report targets */
    char group[32];          /* "main", "seed002", a redis-benchmark test name... */
    int warmup;              /* 1: reported separately, not counted */
    int chart;               /* 1: a point of the throughput chart */
    int detail;              /* 1: part of a combined run; JSON only, not in totals */
    struct run_result r;     /* owned */
};

struct report {
    struct target *targets;  /* borrowed */
    int ntargets;
    char **info;             /* per target INFO/stats text, owned */
    struct bench_run **runs; /* owned; each run has a stable address */
    int nruns, cap;
    struct sbuf text;        /* everything printed with rep_out */
    struct sbuf cmdline;
    struct sbuf settings;    /* workload/settings summary lines */
    const char *preset;
    double scale;
    int decimal_comma;       /* article 000 prints 0,025 */
    int quiet;               /* no stdout copy */
};

void report_init(struct report *r, struct target *targets, int ntargets);
void report_deinit(struct report *r);
/* Print to stdout and keep a copy for the HTML report. */
__attribute__((format(printf, 2, 3))) void rep_out(struct report *r, const char *fmt, ...);
/* Take ownership of res (moved; res is zeroed). Returns the stored run. */
struct bench_run *report_add(struct report *r, int target, const char *group, int warmup,
                             int chart, struct run_result *res);

/* Generic summary table of all non-warm-up runs, one row per run. */
void report_summary(struct report *r);
/* One line per run with the main figures (used after each generic run). */
void report_run_line(struct report *r, const struct bench_run *b);

int report_json(struct report *r, const char *path);
int report_html(struct report *r, const char *path);

/* Machine description (CPU model, cores, memory, kernel) as "key: value" lines. */
void machine_info(struct sbuf *out);

#endif
