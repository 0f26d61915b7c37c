/* util: Redis-strict number parsing and formatting, glob matching (checked against a verbatim
 * copy of Redis 7.0's stringmatchlen), memory sizes. */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "tap.h"

static int s2ll(const char *s, long long *v)
{
    return util_str2ll(s, strlen(s), v);
}

static void test_str2ll(void)
{
    static const char *bad[] = {
        "",   "-",    "+1",  " 1",  "1 ",   "01",  "00",  "-0",  "-01", "1a",
        "a1", "0x10", "1.0", "1e3", "--1",  "+0",  "\t1", "1\n", "9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616",
        "99999999999999999999", "123456789012345678901", "-00000000000000000001",
    };
    long long v;

    v = 42;
    ok(s2ll("0", &v) && v == 0, "str2ll 0");
    ok(s2ll("1", &v) && v == 1, "str2ll 1");
    ok(s2ll("-1", &v) && v == -1, "str2ll -1");
    ok(s2ll("10", &v) && v == 10, "str2ll 10");
    ok(s2ll("9223372036854775807", &v) && v == LLONG_MAX, "str2ll LLONG_MAX");
    ok(s2ll("-9223372036854775808", &v) && v == LLONG_MIN, "str2ll LLONG_MIN");
    ok(s2ll("-9223372036854775807", &v) && v == -LLONG_MAX, "str2ll -LLONG_MAX");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 777;
        ok(!s2ll(bad[i], &v) && v == 777, "str2ll rejects bad[%zu] and leaves out alone", i);
    }
    ok(util_str2ll("123xyz", 3, &v) && v == 123, "str2ll honours the length, not a NUL");
    ok(!util_str2ll("12\0", 3, &v), "str2ll rejects an embedded NUL");
    ok(!util_str2ll("5", 0, &v), "str2ll rejects length 0");
}

static void test_str2ull(void)
{
    unsigned long long u;

    ok(util_str2ull("0", 1, &u) && u == 0, "str2ull 0");
    ok(util_str2ull("18446744073709551615", 20, &u) && u == ULLONG_MAX, "str2ull ULLONG_MAX");
    ok(!util_str2ull("18446744073709551616", 20, &u), "str2ull overflow");
    ok(!util_str2ull("28446744073709551615", 20, &u), "str2ull overflow in the last digit");
    ok(!util_str2ull("-1", 2, &u), "str2ull rejects '-'");
    ok(!util_str2ull("+1", 2, &u), "str2ull rejects '+'");
    ok(!util_str2ull("", 0, &u), "str2ull rejects empty");
    ok(!util_str2ull("1 ", 2, &u), "str2ull rejects trailing space");
}

/* memcached's number rules: strtoull's scan, then the number must end the token or be
 * followed by white space; safe_strtoull's treatment of '-'. */
static void test_mc_numbers(void)
{
    uint64_t u, mag;
    int neg;

    ok(util_mc_str2u64("42", 2, &u) && u == 42, "mc 42");
    ok(util_mc_str2u64(" \t7 ", 4, &u) && u == 7, "mc leading and trailing white space");
    ok(util_mc_str2u64("+3", 2, &u) && u == 3, "mc '+'");
    ok(util_mc_str2u64("18446744073709551615", 20, &u) && u == UINT64_MAX, "mc 2^64-1");
    ok(!util_mc_str2u64("18446744073709551616", 20, &u), "mc overflow");
    ok(!util_mc_str2u64("-1", 2, &u), "mc refuses a negative result");
    ok(util_mc_str2u64("-0", 2, &u) && u == 0, "mc -0");
    ok(!util_mc_str2u64("12a", 3, &u), "mc junk after the digits");
    ok(!util_mc_str2u64("", 0, &u) && !util_mc_str2u64("  ", 2, &u), "mc no digits");
    ok(util_mc_str2u64("123xyz", 3, &u) && u == 123, "mc honours the length");
    is_int(util_mc_scan_num("-5", 2, &mag, &neg), 1, "scan -5");
    ok(mag == 5 && neg == 1, "scan magnitude and sign");
    is_int(util_mc_scan_num("99999999999999999999", 20, &mag, &neg), -1, "scan overflow");
    is_int(util_mc_scan_num("x", 1, &mag, &neg), 0, "scan malformed");
}

static void test_ll2str(void)
{
    static const struct {
        long long v;
        const char *s;
    } cases[] = {
        {0, "0"},
        {1, "1"},
        {-1, "-1"},
        {10, "10"},
        {-10, "-10"},
        {1234567890123LL, "1234567890123"},
        {LLONG_MAX, "9223372036854775807"},
        {LLONG_MIN, "-9223372036854775808"},
        {LLONG_MIN + 1, "-9223372036854775807"},
    };
    char buf[32];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(buf, 'x', sizeof(buf));
        int n = util_ll2str(buf, cases[i].v);
        is_int(n, strlen(cases[i].s), "ll2str %s length", cases[i].s);
        is_str(buf, cases[i].s, "ll2str %s (NUL-terminated)", cases[i].s);
    }
    memset(buf, 'x', sizeof(buf));
    is_int(util_ull2str(buf, ULLONG_MAX), 20, "ull2str ULLONG_MAX length");
    is_str(buf, "18446744073709551615", "ull2str ULLONG_MAX");
}

/* INCRBYFLOAT: value and increment parsed as long doubles, the sum formatted for humans. */
static const char *incrbyfloat(const char *a, const char *b, char *out, size_t cap)
{
    long double x, y;

    if (!util_str2ld(a, strlen(a), &x) || !util_str2ld(b, strlen(b), &y))
        return "parse error";
    util_ld2str(out, cap, x + y);
    return out;
}

static void test_ld2str(void)
{
    char buf[5200];
    int n;

    is_str(incrbyfloat("10.50", "0.1", buf, sizeof(buf)), "10.6", "INCRBYFLOAT 10.50 + 0.1");
    is_str(incrbyfloat("10.5", "5.0e3", buf, sizeof(buf)), "5010.5", "INCRBYFLOAT 10.5 + 5.0e3");
    is_str(incrbyfloat("1", "1.1", buf, sizeof(buf)), "2.1", "INCRBYFLOAT 1 + 1.1");
    is_str(incrbyfloat("0", "1", buf, sizeof(buf)), "1", "INCRBYFLOAT 0 + 1");
    is_str(incrbyfloat("1", "0.25", buf, sizeof(buf)), "1.25", "INCRBYFLOAT 1 + 0.25");
    is_str(incrbyfloat("1.5", "-1.5", buf, sizeof(buf)), "0", "INCRBYFLOAT to zero");
    is_str(incrbyfloat("-1.5", "1", buf, sizeof(buf)), "-0.5", "INCRBYFLOAT negative");
    is_str(incrbyfloat("3.0e3", "0", buf, sizeof(buf)), "3000", "INCRBYFLOAT exponent input");

    n = util_ld2str(buf, sizeof(buf), 3.0L);
    ok(n == 1 && !strcmp(buf, "3"), "ld2str 3 has no trailing '.' or zeros");
    n = util_ld2str(buf, sizeof(buf), 100.0L);
    ok(n == 3 && !strcmp(buf, "100"), "ld2str 100 keeps integer zeros");
    n = util_ld2str(buf, sizeof(buf), -0.0L);
    ok(n == 1 && !strcmp(buf, "0"), "ld2str -0 prints 0");
    n = util_ld2str(buf, sizeof(buf), -1e-20L);
    ok(n == 1 && !strcmp(buf, "0"), "ld2str tiny negative prints 0 (17 decimals)");
    n = util_ld2str(buf, sizeof(buf), 1e20L);
    is_str(buf, "100000000000000000000", "ld2str 1e20 is not in exponent form");
    is_int(n, 21, "ld2str 1e20 length");
    n = util_ld2str(buf, sizeof(buf), 0.1L);
    is_str(buf, "0.1", "ld2str 0.1L");
    n = util_ld2str(buf, sizeof(buf), 1.0L / 3);
    is_str(buf, "0.33333333333333333", "ld2str 1/3 keeps 17 decimals");
    n = util_ld2str(buf, sizeof(buf), INFINITY);
    ok(n == 3 && !strcmp(buf, "inf"), "ld2str inf");
    n = util_ld2str(buf, sizeof(buf), -INFINITY);
    ok(n == 4 && !strcmp(buf, "-inf"), "ld2str -inf");
    /* INCRBYFLOAT's buffer holds any long double in plain notation, as Redis's does */
    n = util_ld2str(buf, sizeof(buf), 1e4000L);
    long double back = 0;
    ok(n > 3990 && !strchr(buf, 'e') && !strchr(buf, '.') &&
           util_str2ld(buf, (size_t)n, &back) && back == 1e4000L,
       "ld2str 1e4000 in full digits (%d) reads back exactly", n);
    /* a huge value does not fit %.17Lf in a small buffer: falls back to %.17Lg */
    n = util_ld2str(buf, 64, 1e300L);
    is_str(buf, "1e+300", "ld2str falls back to %%.17Lg when too long");
    ok(n > 0 && (size_t)n < 64, "ld2str fallback fits the buffer");
}

static void test_str2ld_str2d(void)
{
    long double ld;
    double d;

    ok(util_str2ld("1.5", 3, &ld) && ld == 1.5L, "str2ld 1.5");
    ok(util_str2ld("-2e3", 4, &ld) && ld == -2000.0L, "str2ld -2e3");
    ok(util_str2ld("inf", 3, &ld) && isinf(ld), "str2ld accepts inf (INCRBYFLOAT rejects later)");
    ok(!util_str2ld("nan", 3, &ld), "str2ld rejects nan");
    ok(!util_str2ld(" 1", 2, &ld), "str2ld rejects a leading space");
    ok(!util_str2ld("1 ", 2, &ld), "str2ld rejects a trailing space");
    ok(!util_str2ld("1.5x", 4, &ld), "str2ld rejects junk");
    ok(!util_str2ld("", 0, &ld), "str2ld rejects empty");
    ok(!util_str2ld("1e99999", 7, &ld), "str2ld rejects overflow");
    ok(!util_str2ld("1e-99999", 8, &ld), "str2ld rejects underflow to zero");
    ok(util_str2ld("1.5junk", 3, &ld) && ld == 1.5L, "str2ld honours the length");

    ok(util_str2d("1.5", 3, &d) && d == 1.5, "str2d 1.5");
    ok(util_str2d("-inf", 4, &d) && isinf(d) && d < 0, "str2d -inf");
    ok(util_str2d("+inf", 4, &d) && isinf(d) && d > 0, "str2d +inf");
    ok(!util_str2d("nan", 3, &d), "str2d rejects nan");
    ok(!util_str2d("1e400", 5, &d), "str2d rejects overflow");
    ok(!util_str2d(" 1", 2, &d), "str2d rejects a leading space");
    ok(!util_str2d("0x", 2, &d), "str2d rejects junk");
}

static void test_d2str(void)
{
    char buf[64];

    util_d2str(buf, sizeof(buf), 1.5);
    is_str(buf, "1.5", "d2str 1.5");
    util_d2str(buf, sizeof(buf), 0.1);
    is_str(buf, "0.10000000000000001", "d2str 0.1 is %%.17g");
    util_d2str(buf, sizeof(buf), 0.0);
    is_str(buf, "0", "d2str 0");
    util_d2str(buf, sizeof(buf), -0.0);
    is_str(buf, "-0", "d2str -0");
    util_d2str(buf, sizeof(buf), INFINITY);
    is_str(buf, "inf", "d2str inf");
    util_d2str(buf, sizeof(buf), -INFINITY);
    is_str(buf, "-inf", "d2str -inf");
    util_d2str(buf, sizeof(buf), 1e300);
    is_str(buf, "1.0000000000000001e+300", "d2str 1e300");
    util_d2str(buf, sizeof(buf), 42);
    is_str(buf, "42", "d2str 42");
}

/* Redis 7.0 util.c stringmatchlen, verbatim but for names: the reference for util_glob_match.
 * It reads pattern[patternLen] in places, so callers pass NUL-terminated patterns. */
static int redis_match_impl(const char *pattern, int patternLen, const char *string,
                            int stringLen, int nocase, int *skipLongerMatches, int nesting)
{
    if (nesting > 1000)
        return 0;
    while (patternLen && stringLen) {
        switch (pattern[0]) {
        case '*':
            while (patternLen && pattern[1] == '*') {
                pattern++;
                patternLen--;
            }
            if (patternLen == 1)
                return 1;
            while (stringLen) {
                if (redis_match_impl(pattern + 1, patternLen - 1, string, stringLen, nocase,
                                     skipLongerMatches, nesting + 1))
                    return 1;
                if (*skipLongerMatches)
                    return 0;
                string++;
                stringLen--;
            }
            *skipLongerMatches = 1;
            return 0;
        case '?':
            string++;
            stringLen--;
            break;
        case '[': {
            int not, match;
            pattern++;
            patternLen--;
            not = pattern[0] == '^';
            if (not) {
                pattern++;
                patternLen--;
            }
            match = 0;
            while (1) {
                if (pattern[0] == '\\' && patternLen >= 2) {
                    pattern++;
                    patternLen--;
                    if (pattern[0] == string[0])
                        match = 1;
                } else if (pattern[0] == ']') {
                    break;
                } else if (patternLen == 0) {
                    pattern--;
                    patternLen++;
                    break;
                } else if (patternLen >= 3 && pattern[1] == '-') {
                    int start = pattern[0];
                    int end = pattern[2];
                    int c = string[0];
                    if (start > end) {
                        int t = start;
                        start = end;
                        end = t;
                    }
                    if (nocase) {
                        start = tolower(start);
                        end = tolower(end);
                        c = tolower(c);
                    }
                    pattern += 2;
                    patternLen -= 2;
                    if (c >= start && c <= end)
                        match = 1;
                } else {
                    if (!nocase) {
                        if (pattern[0] == string[0])
                            match = 1;
                    } else {
                        if (tolower((int)pattern[0]) == tolower((int)string[0]))
                            match = 1;
                    }
                }
                pattern++;
                patternLen--;
            }
            if (not)
                match = !match;
            if (!match)
                return 0;
            string++;
            stringLen--;
            break;
        }
        case '\\':
            if (patternLen >= 2) {
                pattern++;
                patternLen--;
            }
            /* fall through */
        default:
            if (!nocase) {
                if (pattern[0] != string[0])
                    return 0;
            } else {
                if (tolower((int)pattern[0]) != tolower((int)string[0]))
                    return 0;
            }
            string++;
            stringLen--;
            break;
        }
        pattern++;
        patternLen--;
        if (stringLen == 0) {
            while (*pattern == '*') {
                pattern++;
                patternLen--;
            }
            break;
        }
    }
    if (patternLen == 0 && stringLen == 0)
        return 1;
    return 0;
}

static int redis_match(const char *pat, const char *s, int nocase)
{
    int skip = 0;
    return redis_match_impl(pat, (int)strlen(pat), s, (int)strlen(s), nocase, &skip, 0);
}

static int glob(const char *pat, const char *s, int nocase)
{
    return util_glob_match(pat, strlen(pat), s, strlen(s), nocase);
}

static void test_glob_table(void)
{
    static const struct {
        const char *pat, *s;
        int nocase, want;
    } cases[] = {
        {"*", "anything", 0, 1},
        {"*", "", 0, 0}, /* stringmatchlen never matches an empty string (KEYS special-cases *) */
        {"", "", 0, 1},
        {"", "a", 0, 0},
        {"a*", "a", 0, 1},
        {"a**", "a", 0, 1},
        {"*a", "", 0, 0},
        {"h?llo", "hello", 0, 1},
        {"h?llo", "hllo", 0, 0},
        {"h*llo", "hllo", 0, 1},
        {"h*llo", "heeeello", 0, 1},
        {"h*llo", "heeeellox", 0, 0},
        {"h[ae]llo", "hello", 0, 1},
        {"h[ae]llo", "hallo", 0, 1},
        {"h[ae]llo", "hillo", 0, 0},
        {"h[^e]llo", "hallo", 0, 1},
        {"h[^e]llo", "hello", 0, 0},
        {"h[a-c]llo", "hbllo", 0, 1},
        {"h[a-c]llo", "hdllo", 0, 0},
        {"h[c-a]llo", "hbllo", 0, 1}, /* reversed range */
        {"[^a-c]", "d", 0, 1},
        {"[^a-c]", "b", 0, 0},
        {"[a-]", "-", 0, 0}, /* "a-]" is a range (']'..'a'), the class is unterminated */
        {"[a-]", "a", 0, 1},
        {"[]]", "]", 0, 0}, /* ']' closes at once: empty class */
        {"[\\]]", "]", 0, 1},
        {"[\\]a]", "a", 0, 1},
        {"h\\*llo", "h*llo", 0, 1},
        {"h\\*llo", "hello", 0, 0},
        {"h\\?llo", "h?llo", 0, 1},
        {"\\[a]", "[a]", 0, 1},
        {"a\\", "a\\", 0, 1}, /* a trailing backslash is literal */
        {"[abc", "a", 0, 1},  /* unterminated class ends at the pattern end */
        {"[abc", "ab", 0, 0},
        {"[", "a", 0, 0},
        {"[^", "a", 0, 1},
        {"HELLO", "hello", 0, 0},
        {"HELLO", "hello", 1, 1},
        {"h[A-C]llo", "hbllo", 1, 1},
        {"h[A-C]llo", "hbllo", 0, 0},
        {"h[^E]llo", "hello", 1, 0},
        {"*port", "memcache-port", 1, 1},
        {"max*", "maxmemory", 1, 1},
        {"user:*:name", "user:42:name", 0, 1},
        {"user:*:name", "user:42:age", 0, 0},
        {"*a*b*c", "xxaxxbxxc", 0, 1},
        {"*a*b*c", "xxaxxcxxb", 0, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int got = glob(cases[i].pat, cases[i].s, cases[i].nocase);
        int ref = redis_match(cases[i].pat, cases[i].s, cases[i].nocase);
        ok(got == cases[i].want && ref == cases[i].want, "glob '%s' vs '%s'%s -> %d (redis %d)",
           cases[i].pat, cases[i].s, cases[i].nocase ? " nocase" : "", got, ref);
    }
    ok(util_glob_match("a*", 2, "abc\0def", 7, 0), "glob is binary safe in the string");
    ok(!util_glob_match("a*f", 3, "abc\0de", 6, 0), "glob binary string mismatch");
    ok(util_glob_match("a?c", 3, "a\0c", 3, 0), "glob '?' matches a NUL byte");
}

static void rand_word(char *out, int maxlen, const char *alpha, unsigned *seed)
{
    int n = rand_r(seed) % (maxlen + 1);
    size_t na = strlen(alpha);
    for (int i = 0; i < n; i++)
        out[i] = alpha[(size_t)rand_r(seed) % na];
    out[n] = '\0';
}

/* Random patterns and strings over a small alphabet full of metacharacters. */
static void test_glob_differential(void)
{
    unsigned seed = 12345;
    char pat[16], s[16];
    int mismatches = 0, matches = 0;

    for (int i = 0; i < 300000; i++) {
        rand_word(pat, 9, "ab*?[]^-\\A", &seed);
        rand_word(s, 7, "abAB-]^\\*", &seed);
        int nocase = i & 1;
        int got = glob(pat, s, nocase), ref = redis_match(pat, s, nocase);
        matches += ref;
        if (got != ref && mismatches++ < 10)
            diag("mismatch: pattern '%s' string '%s' nocase %d: got %d redis %d", pat, s, nocase,
                 got, ref);
    }
    is_int(mismatches, 0, "glob agrees with Redis stringmatchlen on 300000 random cases");
    ok(matches > 1000, "the random cases include matches (%d)", matches);
}

/* CVE-2022-36021: nested '*' must not explore every split of the string. Without Redis's
 * "skip longer matches" cut this takes longer than the test timeout. */
static void test_glob_pathological(void)
{
    char s[80], pat[160];
    int n = 0;

    memset(s, 'a', 75);
    s[75] = '\0';
    for (int i = 0; i < 50; i++) {
        pat[n++] = 'a';
        pat[n++] = '*';
    }
    pat[n++] = 'b';
    pat[n] = '\0';
    int64_t t0 = util_mono_us();
    ok(!glob(pat, s, 0), "a*a*...*b does not match a run of 'a'");
    int64_t dt = util_mono_us() - t0;
    ok(dt < 2000000, "... and returns quickly (%lld us)", (long long)dt);
    ok(!glob("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", s, 1), "nocase variant returns too");
}

static void test_memsize(void)
{
    static const struct {
        const char *s;
        long long v;
    } good[] = {
        {"0", 0},
        {"42", 42},
        {"100b", 100},
        {"100B", 100},
        {"1k", 1000},
        {"1K", 1000},
        {"1kb", 1024},
        {"1KB", 1024},
        {"1m", 1000000},
        {"1mb", 1048576},
        {"512mb", 536870912},
        {"1g", 1000000000},
        {"1gb", 1073741824},
        {"2GB", 2147483648LL},
        {"9223372036854775807", LLONG_MAX},
    };
    static const char *bad[] = {"", "gb", "1x", "1kbb", "1 gb", "1.5gb", "-1",
                                "-1gb", "9223372036854775808", "9000000000gb", " 1", "+1",
                                "1tb", "0x10"};
    long long v;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        v = -1;
        ok(util_parse_memsize(good[i].s, &v) && v == good[i].v, "memsize '%s' = %lld (got %lld)",
           good[i].s, good[i].v, v);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ok(!util_parse_memsize(bad[i], &v), "memsize rejects '%s'", bad[i]);
}

static void test_misc(void)
{
    ok(util_eq_nocase("GET", 3, "get"), "eq_nocase GET get");
    ok(util_eq_nocase("gEt", 3, "get"), "eq_nocase gEt get");
    ok(!util_eq_nocase("GETX", 4, "get"), "eq_nocase longer");
    ok(!util_eq_nocase("GE", 2, "get"), "eq_nocase shorter");
    ok(util_eq_nocase("", 0, ""), "eq_nocase empty");
    ok(util_hash("abc", 3) == util_hash("abc", 3), "hash deterministic");
    ok(util_hash("abc", 3) != util_hash("abd", 3), "hash differs");
    ok(util_hash("a\0b", 3) != util_hash("a\0c", 3), "hash covers bytes after a NUL");
    int64_t ms = util_now_ms(), us = util_now_us();
    ok(ms > 1600000000000LL && us / 1000 - ms < 1000 && us / 1000 - ms >= 0, "wall clocks agree");
    int64_t m1 = util_mono_us(), m2 = util_mono_us();
    ok(m2 >= m1, "monotonic clock does not go back");
}

int main(void)
{
    test_str2ll();
    test_str2ull();
    test_mc_numbers();
    test_ll2str();
    test_ld2str();
    test_str2ld_str2d();
    test_d2str();
    test_glob_table();
    test_glob_differential();
    test_glob_pathological();
    test_memsize();
    test_misc();
    return tap_done();
}
