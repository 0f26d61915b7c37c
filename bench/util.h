/* twinbench: small shared helpers (string builder, clocks). Header-only. */
#ifndef TB_UTIL_H
#define TB_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Growable string. Owned by whoever called sbuf_init; free with sbuf_deinit.
 * Never used on the request hot path (reports and setup only). */
struct sbuf {
    char *p;     /* NUL-terminated contents, or NULL when empty */
    size_t len;  /* bytes used, without the NUL */
    size_t cap;  /* bytes allocated */
};

static inline void sbuf_init(struct sbuf *b) { b->p = NULL; b->len = b->cap = 0; }
static inline void sbuf_deinit(struct sbuf *b) { free(b->p); sbuf_init(b); }

static inline void sbuf_reserve(struct sbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t ncap = b->cap ? b->cap * 2 : 256;
    while (ncap < b->len + extra + 1) ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (!np) { perror("realloc"); exit(2); }
    b->p = np;
    b->cap = ncap;
}

static inline void sbuf_add(struct sbuf *b, const void *s, size_t n)
{
    sbuf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static inline void sbuf_adds(struct sbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3)))
static inline void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sbuf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static inline const char *sbuf_str(const struct sbuf *b) { return b->p ? b->p : ""; }

/* Monotonic clock in nanoseconds. Safe from any thread. */
static inline uint64_t tb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time (user+sys) of this process in nanoseconds. */
static inline uint64_t tb_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void *tb_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) { perror("calloc"); exit(2); }
    return p;
}

#endif
