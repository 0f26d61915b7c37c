/* A one-header TAP producer for unit tests. Each check prints "ok N - name" or "not ok N -
 * name" plus a diagnostic on stderr; tap_done() prints the plan and returns the exit status
 * (0 when every check passed). Single-threaded: make checks from the main thread only (worker
 * threads of a test report through their own variables). */
#ifndef TC_TAP_H
#define TC_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count;  /* checks made */
static int tap_failed; /* checks that failed */

static inline int tap_check(int pass, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int tap_check(int pass, const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    tap_count++;
    printf("%sok %d - ", pass ? "" : "not ", tap_count);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!pass) {
        tap_failed++;
        printf("#   failed at %s:%d\n", file, line);
    }
    fflush(stdout);
    return pass;
}

/* Print a byte string for diagnostics, escaping what is not printable. */
static inline void tap_dump(const char *label, const void *p, size_t n)
{
    const unsigned char *s = p;

    printf("#   %s (%zu): \"", label, n);
    for (size_t i = 0; i < n && i < 200; i++) {
        if (s[i] >= 32 && s[i] < 127 && s[i] != '"' && s[i] != '\\')
            putchar(s[i]);
        else
            printf("\\x%02x", s[i]);
    }
    printf(n > 200 ? "\"...\n" : "\"\n");
}

#define ok(cond, ...) tap_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                                     \
    do {                                                                                           \
        long long tap_g_ = (long long)(got), tap_w_ = (long long)(want);                         \
        if (!tap_check(tap_g_ == tap_w_, __FILE__, __LINE__, __VA_ARGS__))                        \
            printf("#   got %lld, want %lld\n", tap_g_, tap_w_);                                   \
    } while (0)

#define is_mem(got, glen, want, wlen, ...)                                                         \
    do {                                                                                           \
        const void *tap_g_ = (got), *tap_w_ = (want);                                              \
        size_t tap_gl_ = (size_t)(glen), tap_wl_ = (size_t)(wlen);                                 \
        if (!tap_check(tap_gl_ == tap_wl_ && (tap_gl_ == 0 || !memcmp(tap_g_, tap_w_, tap_gl_)),  \
                       __FILE__, __LINE__, __VA_ARGS__)) {                                         \
            tap_dump("got ", tap_g_, tap_gl_);                                                     \
            tap_dump("want", tap_w_, tap_wl_);                                                     \
        }                                                                                          \
    } while (0)

#define is_str(got, want, ...)                                                                     \
    do {                                                                                           \
        const char *tap_gs_ = (got), *tap_ws_ = (want);                                            \
        if (!tap_gs_)                                                                              \
            tap_gs_ = "(null)";                                                                    \
        is_mem(tap_gs_, strlen(tap_gs_), tap_ws_, strlen(tap_ws_), __VA_ARGS__);                   \
    } while (0)

#define diag(...)                                                                                  \
    do {                                                                                           \
        printf("# ");                                                                              \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
    } while (0)

/* Print the plan; returns the process exit status. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_count);
    if (tap_failed)
        printf("# %d of %d checks failed\n", tap_failed, tap_count);
    return tap_failed ? 1 : 0;
}

#endif
