/* twinbench latency histogram: log-linear (HdrHistogram-like), values in
 * nanoseconds, exact below 2048 ns and within 1/1024 (3 significant digits)
 * above, up to 60 s; larger values are clamped into the last bucket and
 * counted in `clamped`. One histogram per thread: no locking; merge at the end. */
#ifndef TB_HIST_H
#define TB_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 11                        /* 2048 linear sub-buckets */
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)
#define HIST_HALF (HIST_SUB_COUNT / 2)
#define HIST_MAX_NS 60000000000ull              /* 60 s */
#define HIST_MAX_EXP 35                         /* floor(log2(HIST_MAX_NS)) */
#define HIST_NBUCKETS (HIST_SUB_COUNT + (HIST_MAX_EXP - HIST_SUB_BITS + 1) * HIST_HALF)

struct hist {
    uint64_t count;     /* number of recorded values */
    uint64_t min;       /* exact smallest value (ns), UINT64_MAX when empty */
    uint64_t max;       /* exact largest value (ns) */
    double sum;         /* sum of values (ns), for the mean */
    uint64_t clamped;   /* values above HIST_MAX_NS */
    uint64_t *counts;   /* HIST_NBUCKETS counters, owned */
};

/* Allocate counters. Returns 0, or -1 when out of memory. */
int hist_init(struct hist *h);
/* Free counters; safe on a zeroed or already deinit'ed hist. */
void hist_deinit(struct hist *h);
void hist_reset(struct hist *h);

/* Bucket index of a value; and the lowest / highest value of a bucket. */
uint32_t hist_index(uint64_t v);
uint64_t hist_bucket_lo(uint32_t idx);
uint64_t hist_bucket_hi(uint32_t idx);

/* Record one value (ns). Never allocates. */
static inline void hist_record(struct hist *h, uint64_t v)
{
    if (v > HIST_MAX_NS) {
        h->clamped++;
        h->counts[HIST_NBUCKETS - 1]++;
    } else {
        h->counts[hist_index(v)]++;
    }
    h->count++;
    h->sum += (double)v;
    if (v < h->min) h->min = v;
    if (v > h->max) h->max = v;
}

/* Add all of src into dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* Value at percentile p (0..100): the highest value equivalent to the bucket
 * holding the ceil(p/100*count)-th value, clamped to [min, max]. 0 if empty. */
uint64_t hist_percentile(const struct hist *h, double p);
double hist_mean(const struct hist *h);
/* Number of recorded values <= v (within bucket precision: a bucket counts
 * when its lowest value is <= v). */
uint64_t hist_count_le(const struct hist *h, uint64_t v);
/* Number of values in [lo, hi) (bucket precision, by bucket lowest value). */
uint64_t hist_count_range(const struct hist *h, uint64_t lo, uint64_t hi);

#endif
