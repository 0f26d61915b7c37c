/* Log-linear histogram, see hist.h. */
#include "hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->counts = calloc(HIST_NBUCKETS, sizeof(uint64_t));
    if (!h->counts) return -1;
    h->min = UINT64_MAX;
    return 0;
}

void hist_deinit(struct hist *h)
{
    free(h->counts);
    h->counts = NULL;
}

void hist_reset(struct hist *h)
{
    memset(h->counts, 0, HIST_NBUCKETS * sizeof(uint64_t));
    h->count = h->max = h->clamped = 0;
    h->sum = 0;
    h->min = UINT64_MAX;
}

uint32_t hist_index(uint64_t v)
{
    if (v < HIST_SUB_COUNT) return (uint32_t)v;
    if (v > HIST_MAX_NS) v = HIST_MAX_NS;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= HIST_SUB_BITS */
    unsigned shift = e - (HIST_SUB_BITS - 1);
    return HIST_SUB_COUNT + (e - HIST_SUB_BITS) * HIST_HALF +
           (uint32_t)((v >> shift) - HIST_HALF);
}

uint64_t hist_bucket_lo(uint32_t idx)
{
    if (idx < HIST_SUB_COUNT) return idx;
    uint32_t k = idx - HIST_SUB_COUNT;
    unsigned e = HIST_SUB_BITS + k / HIST_HALF;
    unsigned shift = e - (HIST_SUB_BITS - 1);
    return (uint64_t)(HIST_HALF + k % HIST_HALF) << shift;
}

uint64_t hist_bucket_hi(uint32_t idx)
{
    if (idx < HIST_SUB_COUNT) return idx;
    uint32_t k = idx - HIST_SUB_COUNT;
    unsigned e = HIST_SUB_BITS + k / HIST_HALF;
    unsigned shift = e - (HIST_SUB_BITS - 1);
    return hist_bucket_lo(idx) + ((uint64_t)1 << shift) - 1;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (!src->count) return;
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++) dst->counts[i] += src->counts[i];
    dst->count += src->count;
    dst->sum += src->sum;
    dst->clamped += src->clamped;
    if (src->min < dst->min) dst->min = src->min;
    if (src->max > dst->max) dst->max = src->max;
}

uint64_t hist_percentile(const struct hist *h, double p)
{
    if (!h->count) return 0;
    if (p <= 0) return h->min;
    if (p >= 100) return h->max;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
    if (rank < 1) rank = 1;
    uint64_t acc = 0;
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++) {
        acc += h->counts[i];
        if (acc >= rank) {
            uint64_t v = hist_bucket_hi(i);
            if (v > h->max) v = h->max;
            if (v < h->min) v = h->min;
            return v;
        }
    }
    return h->max;
}

double hist_mean(const struct hist *h)
{
    return h->count ? h->sum / (double)h->count : 0.0;
}

uint64_t hist_count_range(const struct hist *h, uint64_t lo, uint64_t hi)
{
    uint64_t n = 0;
    if (hi <= lo) return 0;
    uint32_t a = hist_index(lo), b = hist_index(hi > HIST_MAX_NS ? HIST_MAX_NS : hi);
    for (uint32_t i = a; i <= b && i < HIST_NBUCKETS; i++) {
        uint64_t blo = hist_bucket_lo(i);
        if (blo >= lo && blo < hi) n += h->counts[i];
    }
    return n;
}

uint64_t hist_count_le(const struct hist *h, uint64_t v)
{
    return hist_count_range(h, 0, v + 1);
}
