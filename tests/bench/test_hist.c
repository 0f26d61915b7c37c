/* Unit test of the twinbench latency histogram (TAP output): bucket layout,
 * percentiles against known distributions within the stated precision
 * (3 significant digits), merge, and the RESP / memcached reply parsers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "proto.h"

static int ntest, nfail;

static void ok(int cond, const char *what)
{
    ntest++;
    if (!cond) nfail++;
    printf("%s %d - %s\n", cond ? "ok" : "not ok", ntest, what);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* exact percentile by the same rank rule: the ceil(p*n)-th smallest value */
static uint64_t exact_pct(const uint64_t *v, size_t n, double p)
{
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    return v[rank - 1];
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xr(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static double ur(void) { return (double)(xr() >> 11) / 9007199254740992.0; }

static int check_dist(const char *name, uint64_t *v, size_t n)
{
    struct hist h;
    hist_init(&h);
    for (size_t i = 0; i < n; i++) hist_record(&h, v[i]);
    qsort(v, n, sizeof(*v), cmp_u64);
    static const double ps[] = {1, 10, 50, 90, 99, 99.9, 99.99};
    int good = h.count == n && h.min == v[0] && h.max == v[n - 1];
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        uint64_t e = exact_pct(v, n, ps[i]), got = hist_percentile(&h, ps[i]);
        double rel = e ? fabs((double)got - (double)e) / (double)e : (double)got;
        /* 3 significant digits: within 1/1024 of the exact value */
        if (rel > 1.0 / 1024 + 1e-12) {
            printf("# %s p%g: exact %llu got %llu rel %g\n", name, ps[i], (unsigned long long)e,
                   (unsigned long long)got, rel);
            good = 0;
        }
    }
    double mean = 0;
    for (size_t i = 0; i < n; i++) mean += (double)v[i];
    mean /= (double)n;
    if (fabs(hist_mean(&h) - mean) > 1e-6 * mean) good = 0;
    hist_deinit(&h);
    ok(good, name);
    return good;
}

int main(void)
{
    printf("TAP version 13\n");
    /* layout: every bucket's range contains the values mapped to it */
    int good = 1;
    for (uint64_t v = 0; v < 5000000; v += (v < 10000 ? 1 : 97)) {
        uint32_t i = hist_index(v);
        if (v < hist_bucket_lo(i) || v > hist_bucket_hi(i)) { good = 0; break; }
    }
    for (int e = 11; e < 36; e++) {
        uint64_t v = (1ull << e) - 1, w = 1ull << e;
        uint32_t i = hist_index(v), j = hist_index(w);
        if (j != i + 1 || hist_bucket_lo(j) != w) good = 0;
        if ((double)(hist_bucket_hi(j) - hist_bucket_lo(j) + 1) / (double)w > 1.0 / 1024 + 1e-12) good = 0;
    }
    ok(good, "bucket layout is contiguous, relative width <= 1/1024");
    ok(hist_index(HIST_MAX_NS) < HIST_NBUCKETS, "60 s fits");
    ok(hist_bucket_lo(hist_index(1000)) == 1000 && hist_bucket_hi(hist_index(1000)) == 1000,
       "values below 2048 ns are exact");

    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    for (size_t i = 0; i < n; i++) v[i] = 1000 + xr() % 999000000ull; /* uniform 1 us .. 1 s */
    check_dist("uniform 1 us..1 s", v, n);
    for (size_t i = 0; i < n; i++) v[i] = (uint64_t)(-log(1 - ur()) * 250000.0) + 1000; /* exp, mean 0.25 ms */
    check_dist("exponential mean 250 us", v, n);
    for (size_t i = 0; i < n; i++) {
        double u1 = ur(), u2 = ur();
        if (u1 < 1e-300) u1 = 1e-300;
        double z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        v[i] = (uint64_t)exp(log(200000.0) + 0.8 * z); /* log-normal around 0.2 ms */
    }
    check_dist("log-normal median 200 us", v, n);
    for (size_t i = 0; i < n; i++) v[i] = i < n * 999 / 1000 ? 150000 + xr() % 1000 : 1000000000ull; /* 0.1% at 1 s */
    check_dist("bimodal with 0.1% at 1 s", v, n);
    for (size_t i = 0; i < n; i++) v[i] = 1 + xr() % 60000000000ull;
    check_dist("uniform 1 ns..60 s", v, n);

    /* merge equals recording everything in one */
    struct hist a, b, all;
    hist_init(&a); hist_init(&b); hist_init(&all);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = 1000 + xr() % 5000000;
        hist_record(i % 3 ? &a : &b, x);
        hist_record(&all, x);
    }
    hist_merge(&a, &b);
    ok(a.count == all.count && a.min == all.min && a.max == all.max &&
           !memcmp(a.counts, all.counts, HIST_NBUCKETS * sizeof(uint64_t)),
       "merge of per-thread histograms equals one histogram");
    ok(hist_percentile(&a, 99.9) == hist_percentile(&all, 99.9), "merged p99.9");
    struct hist big;
    hist_init(&big);
    hist_record(&big, 120000000000ull);
    ok(big.clamped == 1 && big.max == 120000000000ull && hist_percentile(&big, 50) == 120000000000ull,
       "values above 60 s are clamped but max stays exact");
    hist_deinit(&a); hist_deinit(&b); hist_deinit(&all); hist_deinit(&big);
    free(v);

    /* reply parsers */
    struct reply_info ri;
    size_t used;
    const char *r1 = "$-1\r\n";
    ok(resp_parse_reply(r1, strlen(r1), &used, &ri) == REPLY_OK && ri.nils == 1 && used == 5, "RESP nil");
    const char *r2 = "*3\r\n$1\r\na\r\n$-1\r\n*2\r\n:1\r\n:2\r\n+x\r\n";
    ok(resp_parse_reply(r2, strlen(r2), &used, &ri) == REPLY_OK && ri.elems == 3 && ri.nils == 1 &&
           used == strlen(r2) - 4, "RESP nested array");
    ok(resp_parse_reply(r2, 12, &used, &ri) == REPLY_NEED_MORE, "RESP partial");
    const char *r3 = "-ERR unknown command\r\n";
    ok(resp_parse_reply(r3, strlen(r3), &used, &ri) == REPLY_OK && ri.error, "RESP error");
    const char *m1 = "VALUE k 0 5\r\nhello\r\nVALUE k2 0 2 77\r\nhi\r\nEND\r\nSTORED\r\n";
    ok(mc_parse_reply(m1, strlen(m1), &used, &ri) == REPLY_OK && ri.elems == 2 &&
           used == strlen(m1) - 8, "memcached multi-get");
    ok(mc_parse_reply(m1, 20, &used, &ri) == REPLY_NEED_MORE, "memcached partial value");
    const char *m2 = "SERVER_ERROR out of memory storing object\r\n";
    ok(mc_parse_reply(m2, strlen(m2), &used, &ri) == REPLY_OK && ri.error, "memcached error");
    const char *m3 = "END\r\n";
    ok(mc_parse_reply(m3, 5, &used, &ri) == REPLY_OK && ri.elems == 0, "memcached miss");

    printf("1..%d\n", ntest);
    return nfail ? 1 : 0;
}
