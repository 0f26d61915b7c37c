#define _GNU_SOURCE
#include "core/util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

int util_str2ll(const char *s, size_t n, long long *out)
{
    const char *p = s;
    size_t left = n;
    int neg = 0;
    unsigned long long v;

    if (n == 0 || n > 20)
        return 0;
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    if (*p == '-') {
        neg = 1;
        p++;
        left--;
        if (left == 0)
            return 0;
    }
    if (*p < '1' || *p > '9')
        return 0;
    v = (unsigned long long)(*p - '0');
    p++;
    left--;
    while (left--) {
        if (*p < '0' || *p > '9')
            return 0;
        if (v > ULLONG_MAX / 10)
            return 0;
        v *= 10;
        if (v > ULLONG_MAX - (unsigned long long)(*p - '0'))
            return 0;
        v += (unsigned long long)(*p - '0');
        p++;
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1)
            return 0;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    } else {
        if (v > LLONG_MAX)
            return 0;
        *out = (long long)v;
    }
    return 1;
}

int util_str2ull(const char *s, size_t n, unsigned long long *out)
{
    unsigned long long v = 0;

    if (n == 0 || n > 20)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9)
            return 0;
        if (v > ULLONG_MAX / 10 || v * 10 > ULLONG_MAX - d)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

static int mc_isspace(int c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

int util_mc_scan_num_any(const char *s, size_t n, uint64_t *mag, int *neg)
{
    size_t i = 0;
    uint64_t v = 0;
    int digits = 0, ovf = 0;

    while (i < n && mc_isspace((unsigned char)s[i]))
        i++;
    *neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        *neg = s[i] == '-';
        i++;
    }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        digits = 1;
        if (v > (UINT64_MAX - d) / 10)
            ovf = 1;
        else
            v = v * 10 + d;
    }
    if (!digits)
        return 0;
    if (ovf)
        return -1;
    if (i < n && !mc_isspace((unsigned char)s[i]))
        return 0;
    *mag = v;
    return 1;
}

int util_str2ld(const char *s, size_t n, long double *out)
{
    char buf[5120];
    char *end;
    long double v;

    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (isspace((unsigned char)buf[0]))
        return 0;
    errno = 0;
    v = strtold(buf, &end);
    if ((size_t)(end - buf) != n || (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) ||
        isnan(v))
        return 0;
    *out = v;
    return 1;
}

int util_str2d(const char *s, size_t n, double *out)
{
    char buf[5120];
    char *end;
    double v;

    if (n == 0 || n >= sizeof(buf))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (isspace((unsigned char)buf[0]))
        return 0;
    errno = 0;
    v = strtod(buf, &end);
    if ((size_t)(end - buf) != n || (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) ||
        isnan(v))
        return 0;
    *out = v;
    return 1;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                      "25262728293031323334353637383940414243444546474849"
                                      "50515253545556575859606162636465666768697071727374"
                                      "75767778798081828384858687888990919293949596979899";

int util_ull2str(char *buf, unsigned long long v)
{
    unsigned long long t = v;
    int n = 1;
    char *p;

    /* reply headers are mostly 1..3 digits: count, then write two digits per division */
    while (t >= 10000) {
        n += 4;
        t /= 10000;
    }
    n += (t >= 10) + (t >= 100) + (t >= 1000);
    buf[n] = '\0';
    p = buf + n;
    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + i, 2);
    }
    if (v >= 10)
        memcpy(p - 2, digit_pairs + v * 2, 2);
    else
        p[-1] = (char)('0' + v);
    return n;
}

int util_ll2str(char *buf, long long v)
{
    if (v < 0) {
        buf[0] = '-';
        return 1 + util_ull2str(buf + 1, (unsigned long long)(-(v + 1)) + 1);
    }
    return util_ull2str(buf, (unsigned long long)v);
}

int util_ld2str(char *buf, size_t cap, long double v)
{
    int n;

    if (isinf(v))
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    n = snprintf(buf, cap, "%.17Lf", v);
    if (n < 0 || (size_t)n >= cap)
        return snprintf(buf, cap, "%.17Lg", v);
    if (strchr(buf, '.')) {
        char *p = buf + n - 1;
        while (*p == '0') {
            p--;
            n--;
        }
        if (*p == '.')
            n--;
        buf[n] = '\0';
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        buf[1] = '\0';
        n = 1;
    }
    return n;
}

int util_d2str(char *buf, size_t cap, double v)
{
    if (isinf(v))
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    if (v == 0)
        return snprintf(buf, cap, "%s", signbit(v) ? "-0" : "0");
    return snprintf(buf, cap, "%.17g", v);
}

/* *skip is set once a '*' found that the rest of the pattern matches nowhere in the rest of
 * the string: then no earlier '*' can succeed by matching more, and trying would take time
 * exponential in the number of stars (Redis's fix for CVE-2022-36021). */
static int glob_match(const char *p, size_t pl, const char *s, size_t sl, int nocase, int *skip,
                      int depth)
{
    if (depth > 1000)
        return 0;
    while (pl && sl) {
        switch (*p) {
        case '*':
            while (pl > 1 && p[1] == '*') {
                p++;
                pl--;
            }
            if (pl == 1)
                return 1;
            while (sl) {
                if (glob_match(p + 1, pl - 1, s, sl, nocase, skip, depth + 1))
                    return 1;
                if (*skip)
                    return 0;
                s++;
                sl--;
            }
            *skip = 1;
            return 0;
        case '?':
            s++;
            sl--;
            break;
        case '[': {
            int neg, match = 0;
            p++;
            pl--;
            neg = pl && *p == '^';
            if (neg) {
                p++;
                pl--;
            }
            while (1) {
                if (pl == 0)
                    break;
                if (*p == '\\' && pl >= 2) {
                    p++;
                    pl--;
                    if (*p == *s)
                        match = 1;
                } else if (*p == ']') {
                    break;
                } else if (pl >= 3 && p[1] == '-') {
                    int a = (unsigned char)p[0], b = (unsigned char)p[2], c = (unsigned char)*s;
                    if (a > b) {
                        int t = a;
                        a = b;
                        b = t;
                    }
                    if (nocase) {
                        a = tolower(a);
                        b = tolower(b);
                        c = tolower(c);
                    }
                    p += 2;
                    pl -= 2;
                    if (c >= a && c <= b)
                        match = 1;
                } else if (nocase ? tolower((unsigned char)*p) == tolower((unsigned char)*s)
                                  : *p == *s) {
                    match = 1;
                }
                p++;
                pl--;
            }
            if (pl == 0) {
                /* unterminated class: Redis treats the end as the class end */
                p--;
                pl++;
            }
            if (neg)
                match = !match;
            if (!match)
                return 0;
            s++;
            sl--;
            break;
        }
        case '\\':
            if (pl >= 2) {
                p++;
                pl--;
            }
            /* fall through */
        default:
            if (nocase ? tolower((unsigned char)*p) != tolower((unsigned char)*s) : *p != *s)
                return 0;
            s++;
            sl--;
            break;
        }
        p++;
        pl--;
        if (sl == 0) {
            while (pl && *p == '*') {
                p++;
                pl--;
            }
            break;
        }
    }
    return pl == 0 && sl == 0;
}

int util_glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase)
{
    int skip = 0;

    return glob_match(pat, plen, s, slen, nocase, &skip, 0);
}

int64_t util_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t util_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t util_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t util_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int util_tsc;
uint64_t util_tsc_mult;
double util_tsc_per_us;

/* The TSC counts at a constant rate in every state, and the kernel, which checked that the
 * cores' counters agree, keeps its own time with it. */
static int tsc_trusted(void)
{
    char line[4096], src[32] = "";
    int constant = 0, nonstop = 0;
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

    if (!f)
        return 0;
    if (!fgets(src, sizeof(src), f))
        src[0] = 0;
    fclose(f);
    if (strncmp(src, "tsc", 3) != 0 || (src[3] != '\n' && src[3] != 0))
        return 0;
    if (!(f = fopen("/proc/cpuinfo", "r")))
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        constant = strstr(line, " constant_tsc") != NULL;
        nonstop = strstr(line, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
}

void util_ticks_init(void)
{
#if defined(__x86_64__)
    if (util_tsc || getenv("TWINCACHE_NO_TSC") || !tsc_trusted())
        return;
    /* 2 ms against CLOCK_MONOTONIC: the read jitter (well under a microsecond) makes the
     * rate's error a few parts in 10^4, plenty for statistics */
    util_tsc = 1;
    int64_t m0 = util_mono_ns(), c0 = util_ticks();
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    int64_t m1 = util_mono_ns(), c1 = util_ticks();
    if (c1 <= c0 || m1 - m0 < 1000000) {
        util_tsc = 0;
        return;
    }
    double per_us = (double)(c1 - c0) * 1000.0 / (double)(m1 - m0); /* half-cycles per us */
    util_tsc_per_us = per_us * 2;
    util_tsc_mult = (uint64_t)(4294967296.0 / per_us);
#endif
}

uint64_t util_hash(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

uint64_t util_hash_seeded(const void *p, size_t n, uint64_t seed)
{
    return XXH3_64bits_withSeed(p, n, seed);
}

int util_parse_memsize(const char *s, long long *out)
{
    char *end;
    long long v, mul = 1;

    /* digits then a unit, as Redis's memtoull: strtoll alone would take " 1", "+1" */
    if (!isdigit((unsigned char)s[0]))
        return 0;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || errno || v < 0)
        return 0;
    if (!strcasecmp(end, "") || !strcasecmp(end, "b"))
        mul = 1;
    else if (!strcasecmp(end, "k"))
        mul = 1000;
    else if (!strcasecmp(end, "kb"))
        mul = 1024;
    else if (!strcasecmp(end, "m"))
        mul = 1000 * 1000;
    else if (!strcasecmp(end, "mb"))
        mul = 1024 * 1024;
    else if (!strcasecmp(end, "g"))
        mul = 1000LL * 1000 * 1000;
    else if (!strcasecmp(end, "gb"))
        mul = 1024LL * 1024 * 1024;
    else
        return 0;
    if (v > LLONG_MAX / mul)
        return 0;
    *out = v * mul;
    return 1;
}

int util_eq_nocase(const char *s, size_t n, const char *w)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (w[i] == '\0' || (char)tolower((unsigned char)s[i]) != w[i])
            return 0;
    }
    return w[i] == '\0';
}

/* Split a line into words as Redis's sdssplitargs does (config files, AOF manifests) (double quotes with \n \r \t
 * \b \a \\ \" \xHH escapes, single quotes with \'). Words are written into out, NUL-separated,
 * and w[] points at them. Returns the word count, or -1 (unbalanced quotes, or too many). */
int util_split_args(const char *p, char *out, size_t cap, char **w, int maxw)
{
    size_t o = 0;
    int n = 0;

    for (;;) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == '\f' || *p == '\v')
            p++;
        if (!*p)
            return n;
        if (n == maxw)
            return -1;
        w[n++] = out + o;
        int inq = 0, insq = 0;
        for (;;) {
            char c = 0;
            if (inq) {
                if (!*p)
                    return -1;
                if (p[0] == '\\' && p[1] == 'x' && isxdigit((unsigned char)p[2]) &&
                    isxdigit((unsigned char)p[3])) {
                    char hx[3] = {p[2], p[3], 0};
                    c = (char)strtol(hx, NULL, 16);
                    p += 3;
                } else if (p[0] == '\\' && p[1]) {
                    p++;
                    c = *p == 'n' ? '\n' : *p == 'r' ? '\r' : *p == 't' ? '\t' :
                        *p == 'b' ? '\b' : *p == 'a' ? '\a' : *p;
                } else if (*p == '"') {
                    /* closing quote must be followed by a space or nothing at all */
                    if (p[1] && !strchr(" \n\r\t\f\v", p[1]))
                        return -1;
                    p++;
                    break;
                } else {
                    c = *p;
                }
            } else if (insq) {
                if (!*p)
                    return -1;
                if (p[0] == '\\' && p[1] == '\'') {
                    p++;
                    c = '\'';
                } else if (*p == '\'') {
                    if (p[1] && !strchr(" \n\r\t\f\v", p[1]))
                        return -1;
                    p++;
                    break;
                } else {
                    c = *p;
                }
            } else {
                if (!*p || strchr(" \n\r\t", *p))
                    break;
                if (*p == '"') {
                    inq = 1;
                    p++;
                    continue;
                }
                if (*p == '\'') {
                    insq = 1;
                    p++;
                    continue;
                }
                c = *p;
            }
            if (o + 2 > cap)
                return -1;
            out[o++] = c;
            p++;
        }
        out[o++] = 0;
    }
}
