/* Small pure helpers shared by every layer: number parsing/formatting the way Redis does it,
 * glob matching, clocks, hashing. No allocation, thread-safe. */
#ifndef TC_UTIL_H
#define TC_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define TC_LIKELY(x) __builtin_expect(!!(x), 1)
#define TC_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Counters with one writer and racy readers (INFO, stats): the owner adds with a relaxed
 * load+store (no locked instruction), readers use STAT_GET. Plain ++ would be a data race. */
#define STAT_ADD(x, n) __atomic_store_n(&(x), (x) + (n), __ATOMIC_RELAXED)
#define STAT_INC(x) STAT_ADD(x, 1)
#define STAT_SET(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define STAT_GET(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Parse s[0..n) as a signed 64-bit decimal with Redis's strictness (no spaces, no '+',
 * no leading zeros, fits in int64). Returns 1 on success, 0 otherwise. */
int util_str2ll(const char *s, size_t n, long long *out);
/* Parse an unsigned 64-bit decimal (memcached numbers). Returns 1 on success. */
int util_str2ull(const char *s, size_t n, unsigned long long *out);
/* memcached's number rules (C's strtoull/strtol, then memcached's checks), shared by its
 * request parser and its incr/decr on stored values. util_mc_scan_num scans s[0..n) (leading
 * white space, a sign, digits) and requires the number to end s or be followed by white space:
 * 1 with the magnitude and sign, 0 when malformed, -1 on overflow (plain digits inline, the
 * general case in util_mc_scan_num_any). util_mc_str2u64 is memcached's safe_strtoull:
 * unsigned 64-bit, with a '-' accepted only when the negated result still reads as
 * non-negative in signed 64 bits (as memcached). Returns 1 on success. */
int util_mc_scan_num_any(const char *s, size_t n, uint64_t *mag, int *neg);
static inline int util_mc_scan_num(const char *s, size_t n, uint64_t *mag, int *neg)
{
    /* what clients send: 1..19 plain digits (no overflow possible), the whole token; inline,
     * as every memcached storage command parses three numbers */
    if (n - 1 < 19) {
        uint64_t v = 0;
        size_t i;
        for (i = 0; i < n; i++) {
            unsigned d = (unsigned)(unsigned char)s[i] - '0';
            if (d > 9)
                break;
            v = v * 10 + d;
        }
        if (i == n) {
            *neg = 0;
            *mag = v;
            return 1;
        }
    }
    return util_mc_scan_num_any(s, n, mag, neg);
}
static inline int util_mc_str2u64(const char *s, size_t n, uint64_t *out)
{
    uint64_t mag;
    int neg;

    if (util_mc_scan_num(s, n, &mag, &neg) != 1)
        return 0;
    if (neg)
        mag = (uint64_t)0 - mag;
    if ((int64_t)mag < 0 && neg)
        return 0;
    *out = mag;
    return 1;
}
/* Parse a long double like Redis's string2ld (no spaces, not nan). Returns 1 on success. */
int util_str2ld(const char *s, size_t n, long double *out);
/* Parse a double like Redis's getDoubleFromObject (accepts inf, rejects nan). */
int util_str2d(const char *s, size_t n, double *out);
/* Format v into buf (>= 21 bytes); returns length. */
int util_ll2str(char *buf, long long v);
int util_ull2str(char *buf, unsigned long long v);
/* Format a long double the way INCRBYFLOAT replies (%.17Lg, trailing zeros trimmed). */
int util_ld2str(char *buf, size_t cap, long double v);
/* Format a double as Redis does for RESP (%.17g, inf/-inf). */
int util_d2str(char *buf, size_t cap, double v);

/* Redis-compatible glob match ('*', '?', '[...]', '\\' escapes). nocase: ASCII fold. */
int util_glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase);

/* Wall clock in milliseconds / microseconds since the epoch. */
int64_t util_now_ms(void);
int64_t util_now_us(void);
/* Monotonic clock in microseconds / nanoseconds. */
int64_t util_mono_us(void);
int64_t util_mono_ns(void);

/* A cheap clock for timing commands (commandstats, slowlog, latency): the processor's
 * time-stamp counter where the kernel keeps time with it too (an invariant TSC, clocksource
 * tsc), else util_mono_us. Only a difference means something: util_ticks_us turns one into
 * microseconds. util_ticks_init picks and calibrates, once, before the first reading. */
extern int util_tsc;            /* 1: ticks are TSC cycles */
extern uint64_t util_tsc_mult;  /* microseconds per cycle, times 2^32 */
extern double util_tsc_per_us;  /* cycles per microsecond (for INFO) */
void util_ticks_init(void);

static inline int64_t util_ticks(void)
{
#if defined(__x86_64__)
    if (util_tsc) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return (int64_t)(((uint64_t)hi << 32 | lo) >> 1); /* >> 1: never negative */
    }
#endif
    return util_mono_us();
}

static inline int64_t util_ticks_us(int64_t d)
{
    if (d <= 0)
        return 0; /* a thread that moved to a core whose counter is a little behind */
    if (!util_tsc)
        return d;
    return (int64_t)(((unsigned __int128)(uint64_t)d * util_tsc_mult) >> 32);
}

/* The key hash used everywhere (xxh3 64-bit). */
uint64_t util_hash(const void *p, size_t n);
/* The same with a seed (a secret one makes collisions impossible to choose). */
uint64_t util_hash_seeded(const void *p, size_t n, uint64_t seed);

/* Parse a memory size like "1gb", "512mb", "100k", "42". Returns 1 on success. */
int util_parse_memsize(const char *s, long long *out);

/* Case-insensitive equality of s[0..n) with the NUL-terminated lowercase word w. */
int util_eq_nocase(const char *s, size_t n, const char *w);

/* Split p into words as Redis's sdssplitargs does ("double quotes" with \n \r \t \b \a \\ \"
 * \xHH, 'single quotes' with \', a closing quote followed by a space or the end). The words
 * go into out (cap bytes), NUL-terminated, w[] pointing at them. Returns the word count, or -1
 * (unbalanced quotes, more than maxw words, or out too small). */
int util_split_args(const char *p, char *out, size_t cap, char **w, int maxw);

#endif
