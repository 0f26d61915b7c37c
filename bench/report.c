/* Text, JSON and HTML reports, see report.h. */
#define _GNU_SOURCE
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

void report_init(struct report *r, struct target *targets, int ntargets)
{
    memset(r, 0, sizeof(*r));
    r->targets = targets;
    r->ntargets = ntargets;
    r->info = tb_xcalloc((size_t)ntargets, sizeof(char *));
    r->scale = 1;
    sbuf_init(&r->text);
    sbuf_init(&r->cmdline);
    sbuf_init(&r->settings);
}

void report_deinit(struct report *r)
{
    for (int i = 0; i < r->ntargets; i++) free(r->info[i]);
    free(r->info);
    for (int i = 0; i < r->nruns; i++) {
        run_result_deinit(&r->runs[i]->r);
        free(r->runs[i]);
    }
    free(r->runs);
    sbuf_deinit(&r->text);
    sbuf_deinit(&r->cmdline);
    sbuf_deinit(&r->settings);
}

void rep_out(struct report *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sbuf_reserve(&r->text, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(r->text.p + r->text.len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (!r->quiet) fwrite(r->text.p + r->text.len, 1, (size_t)n, stdout);
    r->text.len += (size_t)n;
}

struct bench_run *report_add(struct report *r, int target, const char *group, int warmup,
                             int chart, struct run_result *res)
{
    if (r->nruns == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->runs = realloc(r->runs, (size_t)r->cap * sizeof(*r->runs));
        if (!r->runs) { perror("realloc"); exit(2); }
    }
    struct bench_run *b = tb_xcalloc(1, sizeof(*b));
    r->runs[r->nruns++] = b;
    b->target = target;
    snprintf(b->group, sizeof(b->group), "%s", group);
    b->warmup = warmup;
    b->chart = chart;
    b->r = *res;
    memset(res, 0, sizeof(*res));
    return b;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* Per-host figures of one target summed over its measured runs (sharded targets). */
struct host_dist {
    uint64_t reqs[TARGET_MAX_HOSTS], keys[TARGET_MAX_HOSTS], space[TARGET_MAX_HOSTS];
    uint64_t total_reqs, total_keys, total_space;
};

static void host_dist_add(struct host_dist *d, const struct target *tg, const struct run_result *x)
{
    for (uint32_t h = 0; h < tg->nhosts; h++) {
        d->reqs[h] += x->host_reqs[h];
        d->keys[h] += x->host_keys[h];
        d->space[h] += x->host_keyspace[h];
        d->total_reqs += x->host_reqs[h];
        d->total_keys += x->host_keys[h];
        d->total_space += x->host_keyspace[h];
    }
}

static void target_host_dist(const struct report *r, int t, struct host_dist *d)
{
    memset(d, 0, sizeof(*d));
    for (int i = 0; i < r->nruns; i++) {
        const struct bench_run *b = r->runs[i];
        if (b->target != t || b->warmup || b->detail) continue;
        host_dist_add(d, &r->targets[t], &b->r);
    }
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "name (host:port)" or "host:port" */
static void host_label(char *out, size_t len, const struct target *tg, uint32_t h)
{
    if (tg->names[h][0]) snprintf(out, len, "%s (%s)", tg->names[h], tg->hosts[h]);
    else snprintf(out, len, "%s", tg->hosts[h]);
}

void report_run_line(struct report *r, const struct bench_run *b)
{
    const struct run_result *x = &b->r;
    const struct hist *h = &x->hist;
    rep_out(r, "%-10s %-22s %11.0f ops/s  p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f ms"
               "  hits %llu misses %llu errors %llu timeouts %llu%s\n",
            r->targets[b->target].name, x->label, x->ops_per_sec, ms(hist_percentile(h, 50)),
            ms(hist_percentile(h, 99)), ms(hist_percentile(h, 99.9)), ms(h->max),
            (unsigned long long)x->hits, (unsigned long long)x->misses,
            (unsigned long long)x->errors, (unsigned long long)(x->timeouts + x->conn_errors),
            b->warmup ? "  (warm-up, not counted)" : "");
}

void report_summary(struct report *r)
{
    rep_out(r, "\n%-12s %-20s %12s %10s %10s %9s %9s %9s %9s %9s %9s %9s %8s %8s %10s\n", "Target",
            "Run", "Ops/sec", "Hits/sec", "Misses/sec", "Avg ms", "p50 ms", "p90 ms", "p99 ms",
            "p99.9 ms", "p99.99", "Max ms", "Errors", "Timeouts", "Req/CPU-s");
    for (int i = 0; i < r->nruns; i++) {
        const struct bench_run *b = r->runs[i];
        if (b->warmup || b->detail) continue;
        const struct run_result *x = &b->r;
        const struct hist *h = &x->hist;
        double el = x->elapsed_s > 0 ? x->elapsed_s : 1;
        rep_out(r, "%-12s %-20.20s %12.2f %10.2f %10.2f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %8llu %8llu %10.0f\n",
                r->targets[b->target].name, x->label, x->ops_per_sec, (double)x->hits / el,
                (double)x->misses / el, hist_mean(h) / 1e6, ms(hist_percentile(h, 50)),
                ms(hist_percentile(h, 90)), ms(hist_percentile(h, 99)),
                ms(hist_percentile(h, 99.9)), ms(hist_percentile(h, 99.99)), ms(h->max),
                (unsigned long long)x->errors, (unsigned long long)(x->timeouts + x->conn_errors),
                x->client_cpu_s > 0 ? (double)x->ops / x->client_cpu_s : 0.0);
    }
    for (int t = 0; t < r->ntargets; t++) {
        const struct target *tg = &r->targets[t];
        if (tg->nhosts < 2) continue;
        struct host_dist d;
        target_host_dist(r, t, &d);
        rep_out(r, "\nPer-node distribution of %s (ketama, measured runs):\n%-36s %12s %8s %12s %8s %10s\n",
                tg->name, "Node", "Requests", "%", "Keys", "%", "Keyspace %");
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            char lab[200];
            host_label(lab, sizeof(lab), tg, h);
            rep_out(r, "%-36.36s %12llu %8.2f %12llu %8.2f %10.2f\n", lab, (unsigned long long)d.reqs[h],
                    pct(d.reqs[h], d.total_reqs), (unsigned long long)d.keys[h],
                    pct(d.keys[h], d.total_keys), pct(d.space[h], d.total_space));
        }
    }
}

/* ---- machine ------------------------------------------------------------ */

void machine_info(struct sbuf *out)
{
    char line[512], model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof(model), "%s", c + 2);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        }
        fclose(f);
    }
    long memkb = 0;
    f = fopen("/proc/meminfo", "r");
    if (f) {
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "MemTotal: %ld kB", &memkb) == 1) break;
        fclose(f);
    }
    struct utsname u;
    uname(&u);
    sbuf_printf(out, "cpu_model: %s\n", model);
    sbuf_printf(out, "cpu_cores: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
    sbuf_printf(out, "memory_total_kb: %ld\n", memkb);
    sbuf_printf(out, "kernel: %s %s %s %s\n", u.sysname, u.release, u.version, u.machine);
    sbuf_printf(out, "hostname: %s\n", u.nodename);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_str(struct sbuf *o, const char *s)
{
    sbuf_add(o, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': sbuf_adds(o, "\\\""); break;
        case '\\': sbuf_adds(o, "\\\\"); break;
        case '\n': sbuf_adds(o, "\\n"); break;
        case '\r': sbuf_adds(o, "\\r"); break;
        case '\t': sbuf_adds(o, "\\t"); break;
        default:
            if (*p < 0x20) sbuf_printf(o, "\\u%04x", *p);
            else sbuf_add(o, p, 1);
        }
    }
    sbuf_add(o, "\"", 1);
}

static void json_num(struct sbuf *o, double v)
{
    if (!isfinite(v)) sbuf_adds(o, "null");
    else sbuf_printf(o, "%.6g", v);
}

static void json_latency(struct sbuf *o, const struct hist *h)
{
    static const double ps[] = {50, 90, 99, 99.9, 99.99};
    static const char *pn[] = {"p50", "p90", "p99", "p99.9", "p99.99"};
    sbuf_printf(o, "{\"min\":%.6f,\"mean\":%.6f", h->count ? ms(h->min) : 0.0, hist_mean(h) / 1e6);
    for (int i = 0; i < 5; i++) sbuf_printf(o, ",\"%s\":%.6f", pn[i], ms(hist_percentile(h, ps[i])));
    sbuf_printf(o, ",\"max\":%.6f}", ms(h->max));
}

/* [{"host","name","weight","requests","requests_pct","keys","keys_pct","keyspace_keys",
 *   "keyspace_pct"}, ...] in target host order */
static void json_host_dist(struct sbuf *o, const struct target *tg, const struct host_dist *d)
{
    sbuf_adds(o, "[");
    for (uint32_t h = 0; h < tg->nhosts; h++) {
        sbuf_adds(o, h ? ",{\"host\":" : "{\"host\":");
        json_str(o, tg->hosts[h]);
        sbuf_adds(o, ",\"name\":");
        json_str(o, tg->names[h]);
        sbuf_printf(o, ",\"weight\":%u,\"requests\":%llu,\"requests_pct\":", tg->weights[h],
                    (unsigned long long)d->reqs[h]);
        json_num(o, pct(d->reqs[h], d->total_reqs));
        sbuf_printf(o, ",\"keys\":%llu,\"keys_pct\":", (unsigned long long)d->keys[h]);
        json_num(o, pct(d->keys[h], d->total_keys));
        sbuf_printf(o, ",\"keyspace_keys\":%llu,\"keyspace_pct\":", (unsigned long long)d->space[h]);
        json_num(o, pct(d->space[h], d->total_space));
        sbuf_adds(o, "}");
    }
    sbuf_adds(o, "]");
}

static void json_run(struct sbuf *o, const struct target *tg, const struct bench_run *b)
{
    const struct run_result *x = &b->r;
    sbuf_adds(o, "{\"label\":");
    json_str(o, x->label);
    sbuf_adds(o, ",\"group\":");
    json_str(o, b->group);
    sbuf_printf(o, ",\"warmup\":%s,\"detail\":%s,\"threads\":%u,\"connections\":%u,\"pipeline\":%u",
                b->warmup ? "true" : "false", b->detail ? "true" : "false",
                x->threads, x->conns, x->pipeline);
    sbuf_printf(o, ",\"requests_per_connection\":%llu,\"rate\":", (unsigned long long)x->requests_per_conn);
    json_num(o, x->rate);
    sbuf_printf(o, ",\"ops\":%llu,\"sets\":%llu,\"gets\":%llu,\"hits\":%llu,\"misses\":%llu,\"errors\":%llu,"
                   "\"timeouts\":%llu,\"connection_errors\":%llu",
                (unsigned long long)x->ops, (unsigned long long)x->sets, (unsigned long long)x->gets,
                (unsigned long long)x->hits, (unsigned long long)x->misses,
                (unsigned long long)x->errors, (unsigned long long)x->timeouts,
                (unsigned long long)x->conn_errors);
    sbuf_adds(o, ",\"elapsed_s\":");
    json_num(o, x->elapsed_s);
    sbuf_adds(o, ",\"ops_per_sec\":");
    json_num(o, x->ops_per_sec);
    sbuf_adds(o, ",\"client_cpu_s\":");
    json_num(o, x->client_cpu_s);
    sbuf_adds(o, ",\"client_requests_per_cpu_s\":");
    json_num(o, x->client_cpu_s > 0 ? (double)x->ops / x->client_cpu_s : 0);
    sbuf_adds(o, ",\"server_cpu_s\":");
    if (x->server_cpu_s >= 0) json_num(o, x->server_cpu_s); else sbuf_adds(o, "null");
    sbuf_adds(o, ",\"server_cpu_us_per_op\":");
    if (x->server_cpu_s >= 0 && x->ops) json_num(o, x->server_cpu_s * 1e6 / (double)x->ops);
    else sbuf_adds(o, "null");
    if (x->error[0]) { sbuf_adds(o, ",\"error\":"); json_str(o, x->error); }
    if (tg->nhosts > 1) {
        struct host_dist d;
        memset(&d, 0, sizeof(d));
        host_dist_add(&d, tg, x);
        sbuf_adds(o, ",\"per_host\":");
        json_host_dist(o, tg, &d);
    }
    sbuf_adds(o, ",\"latency_ms\":");
    json_latency(o, &x->hist);
    /* whole histogram: non-empty buckets as [low_ns, high_ns, count] */
    sbuf_adds(o, ",\"histogram_ns\":[");
    int first = 1;
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++) {
        if (!x->hist.counts[i]) continue;
        sbuf_printf(o, "%s[%llu,%llu,%llu]", first ? "" : ",", (unsigned long long)hist_bucket_lo(i),
                    (unsigned long long)hist_bucket_hi(i), (unsigned long long)x->hist.counts[i]);
        first = 0;
    }
    sbuf_adds(o, "]}");
}

/* Totals of one target over its measured runs. */
static void target_totals(const struct report *r, int t, struct hist *h, double *ops, double *el,
                          uint64_t c[4])
{
    *ops = *el = 0;
    memset(c, 0, 4 * sizeof(uint64_t));
    for (int i = 0; i < r->nruns; i++) {
        const struct bench_run *b = r->runs[i];
        if (b->target != t || b->warmup || b->detail) continue;
        if (h) hist_merge(h, &b->r.hist);
        *ops += (double)b->r.ops;
        *el += b->r.elapsed_s;
        c[0] += b->r.hits;
        c[1] += b->r.misses;
        c[2] += b->r.errors;
        c[3] += b->r.timeouts + b->r.conn_errors;
    }
}

int report_json(struct report *r, const char *path)
{
    struct sbuf o;
    sbuf_init(&o);
    sbuf_adds(&o, "{\"tool\":\"twinbench\",\"version\":\"0.1\",\"command_line\":");
    json_str(&o, sbuf_str(&r->cmdline));
    sbuf_adds(&o, ",\"preset\":");
    if (r->preset) json_str(&o, r->preset); else sbuf_adds(&o, "null");
    sbuf_printf(&o, ",\"scale\":%g,\"timestamp\":%lld,\"settings\":", r->scale, (long long)time(NULL));
    json_str(&o, sbuf_str(&r->settings));
    struct sbuf m;
    sbuf_init(&m);
    machine_info(&m);
    sbuf_adds(&o, ",\"machine\":{");
    char *save = NULL, *dup = strdup(sbuf_str(&m));
    int first = 1;
    for (char *ln = strtok_r(dup, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        char *c = strstr(ln, ": ");
        if (!c) continue;
        *c = 0;
        sbuf_adds(&o, first ? "" : ",");
        json_str(&o, ln);
        sbuf_adds(&o, ":");
        json_str(&o, c + 2);
        first = 0;
    }
    free(dup);
    sbuf_deinit(&m);
    sbuf_adds(&o, "},\"targets\":[");
    for (int t = 0; t < r->ntargets; t++) {
        const struct target *tg = &r->targets[t];
        sbuf_adds(&o, t ? ",{\"name\":" : "{\"name\":");
        json_str(&o, tg->name);
        sbuf_adds(&o, ",\"url\":");
        json_str(&o, tg->url);
        sbuf_printf(&o, ",\"protocol\":\"%s\",\"hosts\":[", tg->proto == PROTO_RESP ? "redis" : "memcache");
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            if (h) sbuf_adds(&o, ",");
            json_str(&o, tg->hosts[h]);
        }
        sbuf_adds(&o, "],\"server_info\":");
        if (r->info[t]) json_str(&o, r->info[t]); else sbuf_adds(&o, "null");
        struct hist h;
        hist_init(&h);
        double ops, el;
        uint64_t c[4];
        target_totals(r, t, &h, &ops, &el, c);
        sbuf_adds(&o, ",\"ops\":");
        json_num(&o, ops);
        sbuf_adds(&o, ",\"ops_per_sec\":");
        json_num(&o, el > 0 ? ops / el : 0);
        sbuf_printf(&o, ",\"hits\":%llu,\"misses\":%llu,\"errors\":%llu,\"timeouts\":%llu,\"latency_ms\":",
                    (unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2],
                    (unsigned long long)c[3]);
        json_latency(&o, &h);
        hist_deinit(&h);
        if (tg->nhosts > 1) {
            struct host_dist d;
            target_host_dist(r, t, &d);
            sbuf_adds(&o, ",\"per_host\":");
            json_host_dist(&o, tg, &d);
        }
        sbuf_adds(&o, ",\"runs\":[");
        int fr = 1;
        for (int i = 0; i < r->nruns; i++) {
            if (r->runs[i]->target != t) continue;
            if (!fr) sbuf_adds(&o, ",");
            json_run(&o, tg, r->runs[i]);
            fr = 0;
        }
        sbuf_adds(&o, "]}");
    }
    sbuf_adds(&o, "],\"text\":");
    json_str(&o, sbuf_str(&r->text));
    sbuf_adds(&o, "}\n");
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); sbuf_deinit(&o); return -1; }
    fwrite(o.p, 1, o.len, f);
    fclose(f);
    sbuf_deinit(&o);
    return 0;
}

/* ---- HTML --------------------------------------------------------------- */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                      "#8c564b", "#e377c2", "#17becf"};

static void html_esc(struct sbuf *o, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sbuf_adds(o, "&lt;"); break;
        case '>': sbuf_adds(o, "&gt;"); break;
        case '&': sbuf_adds(o, "&amp;"); break;
        case '"': sbuf_adds(o, "&quot;"); break;
        default: sbuf_add(o, s, 1);
        }
    }
}

#define CW 720
#define CH 320
#define ML 70
#define MR 40
#define MT 30
#define MB 50

/* Log-scale latency chart: mode 0 = % of requests per bin, 1 = CDF %. */
static void svg_latency(struct sbuf *o, struct report *r, struct hist *hs, int mode)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int t = 0; t < r->ntargets; t++) {
        if (!hs[t].count) continue;
        if (hs[t].min < lo) lo = hs[t].min;
        if (hs[t].max > hi) hi = hs[t].max;
    }
    if (!hi) return;
    double lx0 = floor(log10((double)(lo > 1000 ? lo : 1000))), lx1 = ceil(log10((double)hi + 1));
    if (lx1 <= lx0) lx1 = lx0 + 1;
    const int per_dec = 20;
    int nb = (int)((lx1 - lx0) * per_dec);
    double ymax = mode ? 100 : 0;
    double *ys = tb_xcalloc((size_t)r->ntargets * (size_t)(nb + 1), sizeof(double));
    for (int t = 0; t < r->ntargets; t++) {
        if (!hs[t].count) continue;
        for (int i = 0; i <= nb; i++) {
            double e0 = pow(10, lx0 + (double)(i - 1) / per_dec), e1 = pow(10, lx0 + (double)i / per_dec);
            double v = mode ? (double)hist_count_le(&hs[t], (uint64_t)e1)
                            : (double)hist_count_range(&hs[t], i ? (uint64_t)e0 : 0, (uint64_t)e1);
            v = 100.0 * v / (double)hs[t].count;
            ys[t * (nb + 1) + i] = v;
            if (!mode && v > ymax) ymax = v;
        }
    }
    if (!mode) ymax = ceil(ymax / 5) * 5;
    if (ymax <= 0) ymax = 1;
    int pw = CW - ML - MR, ph = CH - MT - MB;
    sbuf_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" class=\"chart\">\n", CW, CH);
    sbuf_printf(o, "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", ML,
                mode ? "Latency CDF (% of requests at or below)" : "Latency histogram (% of requests per bin, 20 bins/decade)");
    for (int d = 0; d <= (int)(lx1 - lx0); d++) {
        double x = ML + (double)pw * d / (lx1 - lx0);
        double v = pow(10, lx0 + d) / 1e6;
        sbuf_printf(o, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>", x, MT, x, MT + ph);
        sbuf_printf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%g ms</text>\n", x,
                    MT + ph + 15, v);
    }
    for (int k = 0; k <= 5; k++) {
        double y = MT + ph - (double)ph * k / 5;
        sbuf_printf(o, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", ML, y, ML + pw, y);
        sbuf_printf(o, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g%%</text>\n", ML - 5,
                    y + 4, ymax * k / 5);
    }
    sbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n", ML, MT, pw, ph);
    sbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">latency (log scale)</text>\n",
                ML + pw / 2, CH - 8);
    for (int t = 0; t < r->ntargets; t++) {
        if (!hs[t].count) continue;
        sbuf_printf(o, "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" points=\"",
                    palette[t % 8]);
        for (int i = 0; i <= nb; i++) {
            double x = ML + (double)pw * i / nb;
            double y = MT + ph - ph * ys[t * (nb + 1) + i] / ymax;
            sbuf_printf(o, "%.1f,%.1f ", x, y);
        }
        sbuf_adds(o, "\"/>\n");
        sbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", ML + pw - 150,
                    MT + 8 + 18 * t, palette[t % 8]);
        sbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", ML + pw - 132, MT + 18 + 18 * t);
        html_esc(o, r->targets[t].name);
        sbuf_adds(o, "</text>\n");
    }
    sbuf_adds(o, "</svg>\n");
    free(ys);
}

/* Grouped bars: ops/s per chart run label, one bar per target. */
static void svg_throughput(struct sbuf *o, struct report *r)
{
    char labels[64][96];
    int nl = 0;
    double ymax = 0;
    for (int i = 0; i < r->nruns; i++) {
        const struct bench_run *b = r->runs[i];
        if (b->warmup || b->detail || !b->chart) continue;
        int found = 0;
        for (int k = 0; k < nl; k++) if (!strcmp(labels[k], b->r.label)) found = 1;
        if (!found && nl < 64) snprintf(labels[nl++], 96, "%s", b->r.label);
        if (b->r.ops_per_sec > ymax) ymax = b->r.ops_per_sec;
    }
    if (!nl || ymax <= 0) return;
    double mag = pow(10, floor(log10(ymax)));
    ymax = ceil(ymax / mag) * mag;
    int pw = CW - ML - MR, ph = CH - MT - MB;
    sbuf_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" class=\"chart\">\n", CW, CH);
    sbuf_printf(o, "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">Throughput (ops/s) per run / thread count</text>\n", ML);
    for (int k = 0; k <= 5; k++) {
        double y = MT + ph - (double)ph * k / 5;
        sbuf_printf(o, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>", ML, y, ML + pw, y);
        sbuf_printf(o, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%.0f</text>\n", ML - 5,
                    y + 4, ymax * k / 5);
    }
    double gw = (double)pw / nl, bw = gw * 0.8 / (r->ntargets ? r->ntargets : 1);
    for (int k = 0; k < nl; k++) {
        sbuf_printf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">", ML + gw * (k + 0.5),
                    MT + ph + 14);
        html_esc(o, labels[k]);
        sbuf_adds(o, "</text>\n");
        for (int i = 0; i < r->nruns; i++) {
            const struct bench_run *b = r->runs[i];
            if (b->warmup || b->detail || !b->chart || strcmp(b->r.label, labels[k])) continue;
            double h = ph * b->r.ops_per_sec / ymax;
            sbuf_printf(o, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>",
                        ML + gw * k + gw * 0.1 + bw * b->target, MT + ph - h, bw, h, palette[b->target % 8]);
            html_esc(o, r->targets[b->target].name);
            sbuf_adds(o, " ");
            html_esc(o, b->r.label);
            sbuf_printf(o, ": %.0f ops/s</title></rect>\n", b->r.ops_per_sec);
        }
    }
    for (int t = 0; t < r->ntargets; t++) {
        sbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", ML + 10,
                    MT + 8 + 18 * t, palette[t % 8]);
        sbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"12\">", ML + 28, MT + 18 + 18 * t);
        html_esc(o, r->targets[t].name);
        sbuf_adds(o, "</text>\n");
    }
    sbuf_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n</svg>\n", ML, MT, pw, ph);
}

/* Per-node distribution of each sharded target: a table and horizontal bars (share of
 * requests, of keys sent and of the key range per node). */
static void html_host_dist(struct sbuf *o, struct report *r)
{
    int any = 0;
    for (int t = 0; t < r->ntargets; t++) {
        const struct target *tg = &r->targets[t];
        if (tg->nhosts < 2) continue;
        if (!any) {
            sbuf_adds(o, "<h2>Per-node distribution</h2>\n<p>Sharded targets (ketama): requests and "
                         "keys twinbench sent to each node over the measured runs, and the share "
                         "of the key range the ring gives each node.</p>\n");
            any = 1;
        }
        struct host_dist d;
        target_host_dist(r, t, &d);
        sbuf_adds(o, "<h3>");
        html_esc(o, tg->name);
        sbuf_adds(o, "</h3>\n<table class=\"nodes\" id=\"nodes-");
        html_esc(o, tg->name);
        sbuf_adds(o, "\"><tr><th>Node</th><th>Host</th><th>Weight</th><th>Requests</th><th>% requests</th>"
                     "<th>Keys</th><th>% keys</th><th>% key range</th></tr>\n");
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            sbuf_adds(o, "<tr><td class=\"l\">");
            html_esc(o, tg->names[h][0] ? tg->names[h] : tg->hosts[h]);
            sbuf_adds(o, "</td><td class=\"l\">");
            html_esc(o, tg->hosts[h]);
            sbuf_printf(o, "</td><td>%u</td><td>%llu</td><td>%.2f</td><td>%llu</td><td>%.2f</td><td>%.2f</td></tr>\n",
                        tg->weights[h], (unsigned long long)d.reqs[h], pct(d.reqs[h], d.total_reqs),
                        (unsigned long long)d.keys[h], pct(d.keys[h], d.total_keys),
                        pct(d.space[h], d.total_space));
        }
        sbuf_adds(o, "</table>\n");
        /* bars: three per node, 0..100 % scaled to the largest share */
        double mx = 0;
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            double v[3] = {pct(d.reqs[h], d.total_reqs), pct(d.keys[h], d.total_keys),
                           pct(d.space[h], d.total_space)};
            for (int k = 0; k < 3; k++) if (v[k] > mx) mx = v[k];
        }
        if (mx <= 0) continue;
        mx = ceil(mx / 10) * 10;
        const int lw = 200, bh = 10, gh = 3 * bh + 12, pw = CW - lw - MR;
        int hgt = MT + gh * (int)tg->nhosts + 30;
        sbuf_printf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" class=\"chart nodes\">\n",
                    CW, hgt);
        sbuf_printf(o, "<text x=\"%d\" y=\"18\" font-size=\"14\" font-weight=\"bold\">Share per node (%%)</text>\n", lw);
        static const char *what[3] = {"requests", "keys", "key range"};
        for (int k = 0; k < 3; k++) {
            sbuf_printf(o, "<rect x=\"%d\" y=\"6\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                           "<text x=\"%d\" y=\"15\" font-size=\"11\">%s</text>\n",
                        CW - MR - 300 + 100 * k, palette[k], CW - MR - 286 + 100 * k, what[k]);
        }
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            double v[3] = {pct(d.reqs[h], d.total_reqs), pct(d.keys[h], d.total_keys),
                           pct(d.space[h], d.total_space)};
            int y0 = MT + gh * (int)h;
            sbuf_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"end\">", lw - 6,
                        y0 + 3 * bh / 2 + 4);
            char lab[200];
            host_label(lab, sizeof(lab), tg, h);
            html_esc(o, lab);
            sbuf_adds(o, "</text>\n");
            for (int k = 0; k < 3; k++) {
                double wdt = pw * v[k] / mx;
                sbuf_printf(o, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                               "<title>%s: %.2f%%</title></rect>", lw, y0 + bh * k, wdt, bh - 1,
                            palette[k], what[k], v[k]);
                sbuf_printf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\">%.1f%%</text>\n", lw + wdt + 3,
                            y0 + bh * k + bh - 2, v[k]);
            }
        }
        int ya = MT + gh * (int)tg->nhosts;
        sbuf_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>", lw, MT - 4, lw, ya);
        for (int k = 0; k <= 5; k++) {
            double x = lw + (double)pw * k / 5;
            sbuf_printf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%g%%</text>", x,
                        ya + 14, mx * k / 5);
        }
        sbuf_adds(o, "\n</svg>\n");
    }
}

int report_html(struct report *r, const char *path)
{
    struct sbuf o;
    sbuf_init(&o);
    sbuf_adds(&o, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>twinbench report</title>\n"
                  "<style>body{font-family:sans-serif;margin:20px;max-width:1200px}"
                  "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
                  "th{background:#f4f4f4}td.l{text-align:left}pre{background:#f8f8f8;padding:8px;overflow-x:auto;font-size:12px}"
                  "details{margin:6px 0}</style></head><body>\n<h1>twinbench report</h1>\n");
    time_t now = time(NULL);
    char ts[64];
    strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S %z", localtime(&now));
    sbuf_printf(&o, "<p>Generated %s. Preset: <b>%s</b>, scale %g.</p>\n", ts, r->preset ? r->preset : "none", r->scale);
    sbuf_adds(&o, "<h2>Command line</h2><pre id=\"cmdline\">");
    html_esc(&o, sbuf_str(&r->cmdline));
    sbuf_adds(&o, "</pre>\n<h2>Settings</h2><pre>");
    html_esc(&o, sbuf_str(&r->settings));
    sbuf_adds(&o, "</pre>\n<h2>Summary</h2>\n<table id=\"summary\"><tr><th>Target</th><th>Run</th><th>Conns</th><th>Pipeline</th>"
                  "<th>Ops/s</th><th>Avg ms</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>Max</th>"
                  "<th>Hits</th><th>Misses</th><th>Errors</th><th>Timeouts</th><th>Server CPU &micro;s/op</th></tr>\n");
    for (int i = 0; i < r->nruns; i++) {
        const struct bench_run *b = r->runs[i];
        if (b->warmup || b->detail) continue;
        const struct run_result *x = &b->r;
        const struct hist *h = &x->hist;
        sbuf_adds(&o, "<tr><td class=\"l\">");
        html_esc(&o, r->targets[b->target].name);
        sbuf_adds(&o, "</td><td class=\"l\">");
        html_esc(&o, x->label);
        sbuf_printf(&o, "</td><td>%u</td><td>%u</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
                        "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%llu</td><td>%llu</td><td>%llu</td><td>%llu</td>",
                    x->conns, x->pipeline, x->ops_per_sec, hist_mean(h) / 1e6, ms(hist_percentile(h, 50)),
                    ms(hist_percentile(h, 90)), ms(hist_percentile(h, 99)), ms(hist_percentile(h, 99.9)),
                    ms(hist_percentile(h, 99.99)), ms(h->max), (unsigned long long)x->hits,
                    (unsigned long long)x->misses, (unsigned long long)x->errors,
                    (unsigned long long)(x->timeouts + x->conn_errors));
        if (x->server_cpu_s >= 0 && x->ops) sbuf_printf(&o, "<td>%.2f</td></tr>\n", x->server_cpu_s * 1e6 / (double)x->ops);
        else sbuf_adds(&o, "<td>-</td></tr>\n");
    }
    sbuf_adds(&o, "</table>\n");
    html_host_dist(&o, r);
    sbuf_adds(&o, "<h2>Charts</h2>\n<p>All measured runs of each target merged.</p>\n");
    struct hist *hs = tb_xcalloc((size_t)r->ntargets, sizeof(struct hist));
    for (int t = 0; t < r->ntargets; t++) {
        hist_init(&hs[t]);
        double ops, el;
        uint64_t c[4];
        target_totals(r, t, &hs[t], &ops, &el, c);
    }
    svg_latency(&o, r, hs, 0);
    svg_latency(&o, r, hs, 1);
    svg_throughput(&o, r);
    for (int t = 0; t < r->ntargets; t++) hist_deinit(&hs[t]);
    free(hs);
    sbuf_adds(&o, "<h2>Output (article format)</h2>\n<pre id=\"text\">");
    html_esc(&o, sbuf_str(&r->text));
    sbuf_adds(&o, "</pre>\n<h2>Environment</h2>\n<h3>Machine</h3><pre id=\"machine\">");
    struct sbuf m;
    sbuf_init(&m);
    machine_info(&m);
    html_esc(&o, sbuf_str(&m));
    sbuf_deinit(&m);
    sbuf_adds(&o, "</pre>\n");
    for (int t = 0; t < r->ntargets; t++) {
        sbuf_adds(&o, "<h3>Server: ");
        html_esc(&o, r->targets[t].name);
        sbuf_adds(&o, " (");
        html_esc(&o, r->targets[t].url);
        sbuf_adds(&o, ")</h3>\n<details><summary>INFO / stats / stats settings</summary><pre>");
        html_esc(&o, r->info[t] ? r->info[t] : "(not available)");
        sbuf_adds(&o, "</pre></details>\n");
    }
    sbuf_adds(&o, "</body></html>\n");
    FILE *f = fopen(path, "w");
    if (!f) { perror(path); sbuf_deinit(&o); return -1; }
    fwrite(o.p, 1, o.len, f);
    fclose(f);
    sbuf_deinit(&o);
    return 0;
}
