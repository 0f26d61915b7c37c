/* Presets replaying the four source articles (shared/seeds/README.md), each
 * printed in its article's own format. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench.h"

static uint64_t scaled(const struct config *cfg, double n)
{
    double v = floor(n * cfg->scale + 0.5);
    return v < 1 ? 1 : (uint64_t)v;
}

static uint32_t os_threads(const struct config *cfg, uint32_t conns)
{
    uint32_t t = (cfg->set_flags & SET_THREADS) ? cfg->threads : (uint32_t)cfg->ncpu;
    if (t < 1) t = 1;
    return t > conns ? conns : t;
}

struct bench_run *bench_run_one(struct report *rep, const struct config *cfg, int t,
                                const struct workload *wl, const char *label, const char *group,
                                uint32_t conns, uint32_t threads, uint32_t pipeline,
                                uint64_t per_conn, uint64_t total, double duration, int warmup,
                                int chart)
{
    struct run_spec sp = {0};
    sp.tgt = &cfg->targets[t];
    sp.wl = wl;
    sp.threads = threads;
    sp.conns = conns;
    sp.pipeline = pipeline;
    sp.pipeline_batch = cfg->pipeline_batch;
    sp.conn_init = cfg->conn_init;
    sp.no_uring = cfg->no_uring;
    sp.requests_per_conn = per_conn;
    sp.total_requests = total;
    sp.duration = duration;
    sp.rate = cfg->rate;
    sp.poisson = cfg->poisson;
    sp.timeout_ms = cfg->timeout_ms;
    sp.progress = cfg->progress;
    sp.seed = cfg->seed + (uint64_t)rep->nruns * 7919;
    char lab[128];
    snprintf(lab, sizeof(lab), "%s %s", cfg->targets[t].name, label);
    sp.label = lab;
    struct run_result res;
    int rc = engine_run(&sp, &res);
    snprintf(res.label, sizeof(res.label), "%s", label);
    if (rc) {
        fprintf(stderr, "twinbench: %s: run '%s' failed: %s\n", cfg->targets[t].name, label,
                res.error);
        if (res.ops == 0) { run_result_deinit(&res); return NULL; }
    }
    return report_add(rep, t, group, warmup, chart, &res);
}

int bench_preload(struct report *rep, const struct config *cfg, int t, const struct workload *wl)
{
    struct workload pw = *wl;
    pw.mode = WL_MIXED;
    pw.ratio_set = 1;
    pw.ratio_get = 0;
    pw.pattern = KEY_SEQ;
    uint64_t n = wl->key_max - wl->key_min + 1;
    uint32_t th = (uint32_t)cfg->ncpu;
    struct run_spec sp = {0};
    sp.tgt = &cfg->targets[t];
    sp.wl = &pw;
    sp.threads = th;
    sp.conns = th * 4;
    sp.pipeline = cfg->preload_pipeline ? cfg->preload_pipeline : 64;
    sp.total_requests = n;
    sp.progress = cfg->progress;
    sp.seed = cfg->seed;
    char lab[96];
    snprintf(lab, sizeof(lab), "%s preload", cfg->targets[t].name);
    sp.label = lab;
    struct run_result res;
    int rc = engine_run(&sp, &res);
    if (rc) fprintf(stderr, "twinbench: %s: preload failed: %s\n", cfg->targets[t].name, res.error);
    else
        fprintf(stderr, "twinbench: %s: preloaded %llu keys in %.2f s (%.0f ops/s, %llu errors)\n",
                cfg->targets[t].name, (unsigned long long)res.ops, res.elapsed_s, res.ops_per_sec,
                (unsigned long long)res.errors);
    run_result_deinit(&res);
    (void)rep;
    return rc;
}

/* ---- seed 000: bucket table and console histograms -------------------- */

static const char *num(const struct report *rep, char *buf, size_t len, const char *fmt, double v)
{
    snprintf(buf, len, fmt, v);
    if (rep->decimal_comma)
        for (char *p = buf; *p; p++) if (*p == '.') *p = ',';
    return buf;
}

/* "49.650" -> "49,65", "0.400" -> "0,4", "0.000" -> "0" (the article's table cells). */
static const char *pct_cell(const struct report *rep, char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.3f", v);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *e = buf + strlen(buf) - 1;
        while (e > dot && *e == '0') *e-- = 0;
        if (e == dot) *e = 0;
        else if (rep->decimal_comma) *dot = ',';
    }
    return buf;
}

static uint64_t nice_step(double want_ns)
{
    static const double steps[] = {1e3, 2e3, 2.5e3, 5e3, 1e4, 1.2e4, 2.5e4, 5e4, 1e5, 2.5e5, 5e5,
                                   1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7, 1e8, 2.5e8, 5e8, 1e9, 2.5e9,
                                   5e9, 1e10};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (steps[i] >= want_ns) return (uint64_t)steps[i];
    return (uint64_t)1e10;
}

static void hist_row(struct report *rep, uint64_t lo, uint64_t hi, uint64_t n, uint64_t total)
{
    char bar[32], a[32], b[32], p[32];
    double density = (double)total / 25.0;
    int plus = density > 0 ? (int)floor((double)n / density + 0.5) : 0;
    if (plus > 25) plus = 25;
    memset(bar, ' ', 26);
    memset(bar, '+', (size_t)plus);
    bar[26] = 0;
    rep_out(rep, " |%s|%s ms -%s ms |%7llu (%s%%)\n", bar, num(rep, a, sizeof(a), "%9.2f", (double)lo / 1e6),
            num(rep, b, sizeof(b), "%9.2f", (double)hi / 1e6), (unsigned long long)n,
            num(rep, p, sizeof(p), "%6.2f", total ? 100.0 * (double)n / (double)total : 0));
}

static const char *SEP = "-----------------------------------------------------------------\n";

/* One "Histogram data:" block: [min, lo) | lo..hi by dx | [hi, max]. */
static void hist_block(struct report *rep, const struct hist *h, uint64_t lo, uint64_t hi, uint64_t dx)
{
    char a[48], b[48], c[48];
    rep_out(rep, "Histogram data:\n        elements: %llu\n", (unsigned long long)h->count);
    rep_out(rep, "        min: %s ms, max: %s ms\n", num(rep, a, sizeof(a), "%f", (double)h->min / 1e6),
            num(rep, b, sizeof(b), "%f", (double)h->max / 1e6));
    rep_out(rep, "        max x steps: 25, density per x step: %s\n",
            num(rep, c, sizeof(c), "%f", (double)h->count / 25.0));
    rep_out(rep, "        dx: %llu\n%s", (unsigned long long)dx, SEP);
    hist_row(rep, h->min, lo, lo > h->min ? hist_count_range(h, 0, lo) : 0, h->count);
    rep_out(rep, "%s", SEP);
    for (uint64_t x = lo; x < hi; x += dx) hist_row(rep, x, x + dx, hist_count_range(h, x, x + dx), h->count);
    rep_out(rep, "%s", SEP);
    uint64_t rest = hist_count_range(h, hi, UINT64_MAX / 2);
    hist_row(rep, hi, h->max > hi ? h->max : hi, rest, h->count);
    rep_out(rep, "%s", SEP);
}

static void console_hists(struct report *rep, const struct hist *h)
{
    if (!h->count) return;
    /* whole distribution: from min, at most 20 steps up to p99 (all if they fit) */
    uint64_t p99 = hist_percentile(h, 99);
    uint64_t dx = nice_step((double)(p99 - h->min) / 20.0);
    uint64_t upper = (h->max - h->min) / dx <= 20 ? h->max : p99;
    uint64_t nb = (upper - h->min) / dx + 1;
    hist_block(rep, h, h->min, h->min + nb * dx, dx);
    /* zoom on the peak: p1 .. p90 in at most 16 steps */
    uint64_t a = hist_percentile(h, 1), b = hist_percentile(h, 90);
    uint64_t zdx = nice_step((double)(b - a) / 16.0);
    uint64_t zlo = a / zdx * zdx, zhi = (b + zdx - 1) / zdx * zdx;
    if (zhi <= zlo) zhi = zlo + zdx;
    rep_out(rep, "расшифровка диапазона\n");
    hist_block(rep, h, zlo < h->min ? h->min : zlo, zhi, zdx);
    rep_out(rep, "\n");
}

static int seed000(struct report *rep, const struct config *cfg)
{
    static const uint32_t thr[] = {1, 10, 50, 100, 500};
    static const double req[] = {10000, 100, 100, 100, 100};
    const int nr = 5;
    struct workload wl = cfg->wl;
    uint64_t nrec = (cfg->set_flags & SET_KEYMAX) ? cfg->wl.key_max - cfg->wl.key_min + 1 : scaled(cfg, 1e6);
    if (!(cfg->set_flags & SET_KEYMAX)) { wl.key_min = 0; wl.key_max = nrec - 1; }
    if (!(cfg->set_flags & SET_SIZE)) { wl.size_kind = SIZE_RECORD; wl.size_min = 48 + 50; wl.size_max = 48 + 400; }
    wl.mode = WL_MIXED;
    wl.ratio_set = 0;
    wl.ratio_get = 1;
    if (!(cfg->set_flags & SET_PATTERN)) wl.pattern = KEY_UNIFORM;
    wl_values_setup(wl_max_size(&wl));
    rep_out(rep, "# twinbench preset seed000: %llu records (48 + 50..400 bytes) preloaded, synchronous "
                 "reads, threads x requests: 1x%llu 10x%llu 50x%llu 100x%llu 500x%llu\n\n",
            (unsigned long long)nrec, (unsigned long long)scaled(cfg, req[0]), (unsigned long long)scaled(cfg, req[1]),
            (unsigned long long)scaled(cfg, req[2]), (unsigned long long)scaled(cfg, req[3]),
            (unsigned long long)scaled(cfg, req[4]));
    struct bench_run **cols = tb_xcalloc((size_t)cfg->ntargets * nr, sizeof(*cols));
    for (int t = 0; t < cfg->ntargets; t++) {
        if (bench_preload(rep, cfg, t, &wl)) continue;
        /* the Java article counted the second run: warm up, not counted */
        bench_run_one(rep, cfg, t, &wl, "warm-up 10x100", "seed000", 10, os_threads(cfg, 10), 1,
                      scaled(cfg, 100), 0, 0, 1, 0);
        for (int i = 0; i < nr; i++) {
            char lab[64];
            uint64_t per = scaled(cfg, req[i]);
            snprintf(lab, sizeof(lab), "%s_%u_%llu", cfg->targets[t].name, thr[i], (unsigned long long)per);
            cols[t * nr + i] = bench_run_one(rep, cfg, t, &wl, lab, "seed000", thr[i],
                                             os_threads(cfg, thr[i]), 1, per, 0, 0, 0, 1);
        }
    }
    /* the 0.025 ms bucket table */
    rep_out(rep, "Интервал, мс");
    for (int c = 0; c < cfg->ntargets * nr; c++)
        if (cols[c]) rep_out(rep, "\t%s", cols[c]->r.label);
    rep_out(rep, "\n");
    for (int row = 0; row <= 40; row++) {
        char b[32];
        rep_out(rep, "%s", pct_cell(rep, b, sizeof(b), row * 0.025)); /* 0,025 0,05 ... */
        uint64_t hi = (uint64_t)row * 25000, lo = row ? hi - 25000 : 0;
        for (int c = 0; c < cfg->ntargets * nr; c++) {
            if (!cols[c]) continue;
            const struct hist *h = &cols[c]->r.hist;
            double v = row && h->count ? 100.0 * (double)hist_count_range(h, lo, hi) / (double)h->count : 0;
            v = floor(v * 100 + 0.5) / 100; /* the article's two decimals */
            rep_out(rep, "\t%s", pct_cell(rep, b, sizeof(b), v));
        }
        rep_out(rep, "\n");
    }
    rep_out(rep, "\n");
    /* console histograms per target and run */
    for (int t = 0; t < cfg->ntargets; t++) {
        rep_out(rep, "%s\n\n", cfg->targets[t].name);
        for (int i = 0; i < nr; i++) {
            struct bench_run *b = cols[t * nr + i];
            if (!b) continue;
            uint64_t per = b->r.requests_per_conn;
            if (thr[i] == 1) rep_out(rep, "1 thread - %llu requests\n", (unsigned long long)per);
            else rep_out(rep, "%u threads - %llu requests (by %llu)\n", thr[i],
                         (unsigned long long)per * thr[i], (unsigned long long)per);
            console_hists(rep, &b->r.hist);
        }
    }
    free(cols);
    return 0;
}

/* ---- seed 001: the redis-benchmark suite ------------------------------- */

struct rb_test {
    const char *name, *title, *cmd;
    int inline_cmd, modern, mc;  /* mc: 0 none, 1 set, 2 get, 3 incr */
};

static const struct rb_test rb_tests[] = {
    {"PING_INLINE", "PING_INLINE", "PING", 1, 0, 0},
    {"PING_BULK", "PING_BULK", "PING", 0, 0, 0},
    {"SET", "SET", "SET key:__rand_int__ __data__", 0, 0, 1},
    {"GET", "GET", "GET key:__rand_int__", 0, 0, 2},
    {"INCR", "INCR", "INCR counter:__rand_int__", 0, 0, 3},
    {"LPUSH", "LPUSH", "LPUSH mylist __data__", 0, 0, 0},
    {"RPUSH", "RPUSH", "RPUSH mylist __data__", 0, 1, 0},
    {"LPOP", "LPOP", "LPOP mylist", 0, 0, 0},
    {"RPOP", "RPOP", "RPOP mylist", 0, 1, 0},
    {"SADD", "SADD", "SADD myset element:__rand_int__", 0, 0, 0},
    {"HSET", "HSET", "HSET myhash element:__rand_int__ __data__", 0, 1, 0},
    {"SPOP", "SPOP", "SPOP myset", 0, 0, 0},
    {"ZADD", "ZADD", "ZADD myzset 0 element:__rand_int__", 0, 1, 0},
    {"ZPOPMIN", "ZPOPMIN", "ZPOPMIN myzset", 0, 1, 0},
    {"LPUSH", "LPUSH (needed to benchmark LRANGE)", "LPUSH mylist __data__", 0, 0, 0},
    {"LRANGE_100", "LRANGE_100 (first 100 elements)", "LRANGE mylist 0 99", 0, 0, 0},
    {"LRANGE_300", "LRANGE_300 (first 300 elements)", "LRANGE mylist 0 299", 0, 0, 0},
    {"LRANGE_500", "LRANGE_500 (first 450 elements)", "LRANGE mylist 0 449", 0, 0, 0},
    {"LRANGE_600", "LRANGE_600 (first 600 elements)", "LRANGE mylist 0 599", 0, 0, 0},
    {"MSET", "MSET (10 keys)",
     "MSET key:__rand_int__ __data__ key:__rand_int__ __data__ key:__rand_int__ __data__ "
     "key:__rand_int__ __data__ key:__rand_int__ __data__ key:__rand_int__ __data__ "
     "key:__rand_int__ __data__ key:__rand_int__ __data__ key:__rand_int__ __data__ "
     "key:__rand_int__ __data__",
     0, 0, 0},
    {"XADD", "XADD", "XADD mystream * myfield __data__", 0, 1, 0},
};
#define RB_NTESTS (int)(sizeof(rb_tests) / sizeof(rb_tests[0]))

static int rb_selected(const struct config *cfg, int i)
{
    const struct rb_test *t = &rb_tests[i];
    if (!cfg->tests) return !t->modern;
    if (!strcasecmp(cfg->tests, "all")) return 1;
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", cfg->tests);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcasecmp(tok, t->name)) return 1;
        if (!strcasecmp(tok, "lrange") && (!strncmp(t->name, "LRANGE", 6) || strstr(t->title, "LRANGE"))) return 1;
        if (!strcasecmp(tok, "ping") && !strncmp(t->name, "PING", 4)) return 1;
        if (!strcasecmp(tok, "PING_MBULK") && !strcmp(t->name, "PING_BULK")) return 1;
    }
    return 0;
}

static void rb_report(struct report *rep, const struct rb_test *tt, const struct bench_run *b,
                      uint32_t clients, uint32_t payload)
{
    const struct run_result *x = &b->r;
    const struct hist *h = &x->hist;
    rep_out(rep, "====== %s ======\n", tt->title);
    rep_out(rep, "  %llu requests completed in %.2f seconds\n", (unsigned long long)x->ops, x->elapsed_s);
    rep_out(rep, "  %u parallel clients\n  %u bytes payload\n  keep alive: 1\n", clients, payload);
    if (x->pipeline > 1) rep_out(rep, "  pipeline: %u\n", x->pipeline);
    rep_out(rep, "\n");
    /* redis-benchmark 2.x-4.x: a line whenever the whole-ms latency changes,
     * with the share up to and including that request, then 100% */
    uint64_t n = h->count, cum = 0, last_printed = UINT64_MAX;
    long long cur = 0, last_group = 0;
    for (uint32_t i = 0; i < HIST_NBUCKETS && cum < n; i++) {
        uint64_t c = h->counts[i];
        if (!c) continue;
        long long g = (long long)(hist_bucket_lo(i) / 1000000);
        if (g != cur) {
            rep_out(rep, "%.2f%% <= %lld milliseconds\n", (double)(cum + 1) * 100.0 / (double)n, g);
            cur = g;
            last_printed = cum;
        }
        last_group = g;
        cum += c;
    }
    if (n && last_printed != n - 1) rep_out(rep, "100.00%% <= %lld milliseconds\n", last_group);
    rep_out(rep, "%.2f requests per second\n\n", x->ops_per_sec);
}

static int seed001(struct report *rep, const struct config *cfg)
{
    uint32_t clients = (cfg->set_flags & SET_CLIENTS) ? cfg->clients : 50;
    uint64_t nreq = (cfg->set_flags & SET_REQUESTS) ? cfg->requests : scaled(cfg, 10000);
    uint32_t payload = (cfg->set_flags & SET_SIZE) ? cfg->wl.size : 3;
    uint32_t P = (cfg->set_flags & SET_PIPELINE) ? cfg->pipeline : 1;
    struct bench_run **res = tb_xcalloc((size_t)cfg->ntargets * RB_NTESTS, sizeof(*res));
    wl_values_setup(payload);
    for (int t = 0; t < cfg->ntargets; t++) {
        const struct target *tg = &cfg->targets[t];
        rep_out(rep, "Target %s (%s) :\n\n", tg->name, tg->url);
        for (int i = 0; i < RB_NTESTS; i++) {
            const struct rb_test *tt = &rb_tests[i];
            if (!rb_selected(cfg, i)) continue;
            struct workload wl = cfg->wl;
            wl.size_kind = SIZE_FIXED;
            wl.size = payload;
            wl.rand_max = (cfg->set_flags & SET_KEYMAX) ? cfg->wl.key_max : 0;
            if (tg->proto == PROTO_RESP) {
                char err[128];
                wl.mode = WL_CMD;
                if (tpl_parse(&wl.tpl, tt->cmd, err, sizeof(err))) return -1;
                wl.tpl.inline_cmd = tt->inline_cmd;
                snprintf(wl.cmd_text, sizeof(wl.cmd_text), "%s", tt->cmd);
            } else {
                if (!tt->mc) continue; /* RESP-only test */
                wl.mode = tt->mc == 3 ? WL_INCR : WL_MIXED;
                wl.ratio_set = tt->mc == 1;
                wl.ratio_get = tt->mc == 2;
                wl.pattern = KEY_UNIFORM;
                wl.key_min = 0;
                wl.key_max = wl.rand_max;
                snprintf(wl.key_prefix, sizeof(wl.key_prefix), "%s", tt->mc == 3 ? "counter:" : "key:");
            }
            struct bench_run *b = bench_run_one(rep, cfg, t, &wl, tt->name, "seed001", clients,
                                                os_threads(cfg, clients), P, 0, nreq, 0, 0, 1);
            tpl_deinit(&wl.tpl);
            if (!b) continue;
            res[t * RB_NTESTS + i] = b;
            rb_report(rep, tt, b, clients, payload);
        }
    }
    rep_out(rep, " requests per second \\ Target");
    for (int t = 0; t < cfg->ntargets; t++) rep_out(rep, " %s", cfg->targets[t].name);
    rep_out(rep, "\n");
    for (int i = 0; i < RB_NTESTS; i++) {
        if (!rb_selected(cfg, i)) continue;
        rep_out(rep, "%s", rb_tests[i].name);
        for (int t = 0; t < cfg->ntargets; t++) {
            struct bench_run *b = res[t * RB_NTESTS + i];
            if (b) rep_out(rep, " %.2f", b->r.ops_per_sec);
            else rep_out(rep, " n/a");
        }
        rep_out(rep, "\n");
    }
    free(res);
    return 0;
}

/* ---- seed 002: xmemcached-style tps lines ----------------------------- */

static void seed002_line(struct report *rep, const struct bench_run *b, uint32_t thr, uint64_t rep_n,
                         uint32_t vlen)
{
    const struct run_result *x = &b->r;
    uint64_t fail = x->errors + x->timeouts + x->conn_errors;
    double rate = x->hits + x->misses ? (double)x->hits / (double)(x->hits + x->misses) : 0;
    rep_out(rep, "threads=%u,repeats=%llu,valueLength=%u,tps=%.0f,miss=%llu,fail=%llu,hit=%llu,all=%llu,hitRate=%.2f\n",
            thr, (unsigned long long)rep_n, vlen, x->ops_per_sec, (unsigned long long)x->misses,
            (unsigned long long)fail, (unsigned long long)x->hits, (unsigned long long)x->ops, rate);
}

static int seed002(struct report *rep, const struct config *cfg)
{
    static const uint32_t thr[] = {1, 10, 50, 100, 300};
    uint64_t repeats = (cfg->set_flags & SET_REQUESTS) ? cfg->requests : scaled(cfg, 40000);
    struct workload wl = cfg->wl;
    if (!(cfg->set_flags & SET_SIZE)) { wl.size_kind = SIZE_FIXED; wl.size = 64; }
    if (!(cfg->set_flags & SET_RATIO)) { wl.ratio_set = 1; wl.ratio_get = 4; }
    if (!(cfg->set_flags & SET_KEYMAX)) { wl.key_min = 0; wl.key_max = 9999; }
    if (!(cfg->set_flags & SET_PATTERN)) wl.pattern = KEY_UNIFORM;
    wl.mode = WL_MIXED;
    wl_values_setup(wl_max_size(&wl));
    uint32_t P = (cfg->set_flags & SET_PIPELINE) ? cfg->pipeline : 1;
    for (int t = 0; t < cfg->ntargets; t++) {
        rep_out(rep, "%s:\n", cfg->targets[t].name);
        if (bench_preload(rep, cfg, t, &wl)) continue;
        rep_out(rep, "warm up\n");
        bench_run_one(rep, cfg, t, &wl, "warm-up", "seed002", 10, os_threads(cfg, 10), P,
                      scaled(cfg, 1000), 0, 0, 1, 0);
        for (int i = 0; i < 5; i++) {
            char lab[64];
            snprintf(lab, sizeof(lab), "threads=%u", thr[i]);
            struct bench_run *b = bench_run_one(rep, cfg, t, &wl, lab, "seed002", thr[i],
                                                os_threads(cfg, thr[i]), P, repeats, 0, 0, 0, 1);
            if (b) seed002_line(rep, b, thr[i], repeats, wl.size_kind == SIZE_FIXED ? wl.size : wl_max_size(&wl));
        }
    }
    return 0;
}

/* ---- seed 003: elapsed microseconds table ----------------------------- */

static int seed003(struct report *rep, const struct config *cfg)
{
    static const uint32_t thr[] = {1, 2, 4, 8, 16, 32, 64, 128};
    uint64_t n = (cfg->set_flags & SET_REQUESTS) ? cfg->requests : scaled(cfg, 131072);
    struct workload wl = cfg->wl;
    if (!(cfg->set_flags & SET_SIZE)) { wl.size_kind = SIZE_FIXED; wl.size = 16; }
    wl.mode = WL_MIXED;
    wl.pattern = KEY_SEQ;
    wl.key_min = 0;
    wl.key_max = n - 1;
    wl_values_setup(wl_max_size(&wl));
    double *us = tb_xcalloc((size_t)cfg->ntargets * 8, sizeof(double));
    uint32_t P = (cfg->set_flags & SET_PIPELINE) ? cfg->pipeline : 1;
    for (int t = 0; t < cfg->ntargets; t++) {
        for (int i = 0; i < 8; i++) {
            char lab[64];
            struct workload w2 = wl, r2 = wl;
            w2.ratio_set = 1; w2.ratio_get = 0;
            r2.ratio_set = 0; r2.ratio_get = 1;
            snprintf(lab, sizeof(lab), "%u thread write", thr[i]);
            struct bench_run *bw = bench_run_one(rep, cfg, t, &w2, lab, "seed003", thr[i],
                                                 os_threads(cfg, thr[i]), P, 0, n, 0, 0, 0);
            snprintf(lab, sizeof(lab), "%u thread read", thr[i]);
            struct bench_run *br = bench_run_one(rep, cfg, t, &r2, lab, "seed003", thr[i],
                                                 os_threads(cfg, thr[i]), P, 0, n, 0, 0, 0);
            if (!bw || !br) { us[t * 8 + i] = -1; continue; }
            us[t * 8 + i] = (bw->r.elapsed_s + br->r.elapsed_s) * 1e6;
            /* one combined point per thread count for the throughput chart */
            struct run_result comb;
            memset(&comb, 0, sizeof(comb));
            hist_init(&comb.hist);
            hist_merge(&comb.hist, &bw->r.hist);
            hist_merge(&comb.hist, &br->r.hist);
            comb.ops = bw->r.ops + br->r.ops;
            comb.hits = br->r.hits;
            comb.misses = br->r.misses;
            comb.errors = bw->r.errors + br->r.errors;
            comb.timeouts = bw->r.timeouts + br->r.timeouts;
            comb.conn_errors = bw->r.conn_errors + br->r.conn_errors;
            comb.sets = bw->r.sets;
            comb.gets = br->r.gets;
            comb.elapsed_s = bw->r.elapsed_s + br->r.elapsed_s;
            comb.ops_per_sec = comb.elapsed_s > 0 ? (double)comb.ops / comb.elapsed_s : 0;
            comb.client_cpu_s = bw->r.client_cpu_s + br->r.client_cpu_s;
            comb.server_cpu_s = bw->r.server_cpu_s >= 0 && br->r.server_cpu_s >= 0
                                    ? bw->r.server_cpu_s + br->r.server_cpu_s : -1;
            comb.threads = bw->r.threads;
            comb.conns = thr[i];
            comb.pipeline = P;
            snprintf(comb.label, sizeof(comb.label), "%u thread", thr[i]);
            /* the separate write/read runs stay in the JSON as details */
            bw->detail = br->detail = 1;
            report_add(rep, t, "seed003", 0, 1, &comb);
        }
    }
    rep_out(rep, "# twinbench preset seed003: a %u-byte string written then read %llu times, elapsed "
                 "microseconds (write + read)\n\n", wl.size, (unsigned long long)n);
    rep_out(rep, "|  |");
    for (int t = 0; t < cfg->ntargets; t++) rep_out(rep, " %s |", cfg->targets[t].name);
    rep_out(rep, "\n|---|");
    for (int t = 0; t < cfg->ntargets; t++) rep_out(rep, "---|");
    rep_out(rep, "\n");
    for (int i = 0; i < 8; i++) {
        rep_out(rep, "| %u thread |", thr[i]);
        for (int t = 0; t < cfg->ntargets; t++) {
            if (us[t * 8 + i] < 0) rep_out(rep, " n/a |");
            else rep_out(rep, " %.0f |", us[t * 8 + i]);
        }
        rep_out(rep, "\n");
    }
    rep_out(rep, "| Ortalama |");
    for (int t = 0; t < cfg->ntargets; t++) {
        double s = 0;
        int k = 0;
        for (int i = 0; i < 8; i++) if (us[t * 8 + i] >= 0) { s += us[t * 8 + i]; k++; }
        if (k) rep_out(rep, " %.0f |", s / k);
        else rep_out(rep, " n/a |");
    }
    rep_out(rep, "\n");
    free(us);
    return 0;
}

int preset_run(struct report *rep, const struct config *cfg)
{
    if (!strcmp(cfg->preset, "seed000")) return seed000(rep, cfg);
    if (!strcmp(cfg->preset, "seed001")) return seed001(rep, cfg);
    if (!strcmp(cfg->preset, "seed002")) return seed002(rep, cfg);
    if (!strcmp(cfg->preset, "seed003")) return seed003(rep, cfg);
    fprintf(stderr, "twinbench: unknown preset '%s' (seed000, seed001, seed002, seed003)\n", cfg->preset);
    return -1;
}
