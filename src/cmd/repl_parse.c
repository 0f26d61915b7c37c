/* The replica's stream parser (repl_parse.h). */
#include "cmd/repl_parse.h"

#include <stdlib.h>
#include <string.h>

/* The decimal after a '*' or '$' at s (s[0] is the type byte), up to its CRLF: 1 with *v and
 * *next (after the CRLF) set, 0 incomplete, -1 malformed. Redis's strictness: digits only,
 * no sign, no leading zero, at most 18 digits (every limit checked here is far lower). */
static inline __attribute__((always_inline)) int header_num(const char *s, const char *e,
                                                           long long *v, const char **next)
{
    const char *d = s + 1, *q = d;
    long long x = 0;

    /* one to three digits, the first not 0, and the CRLF all here: the stream's usual case */
    if (e - d >= 5 && (unsigned)(d[0] - '1') < 9u) {
        x = d[0] - '0';
        if (d[1] == '\r' && d[2] == '\n') {
            *v = x;
            *next = d + 3;
            return 1;
        }
        if ((unsigned)(d[1] - '0') < 10u) {
            x = x * 10 + (d[1] - '0');
            if (d[2] == '\r' && d[3] == '\n') {
                *v = x;
                *next = d + 4;
                return 1;
            }
            if ((unsigned)(d[2] - '0') < 10u && d[3] == '\r' && d[4] == '\n') {
                *v = x * 10 + (d[2] - '0');
                *next = d + 5;
                return 1;
            }
        }
        x = 0;
    }
    while (q < e && *q >= '0' && *q <= '9') {
        if (q - d >= 18)
            return -1;
        x = x * 10 + (*q - '0');
        q++;
    }
    if (q + 1 >= e)
        return (size_t)(e - s) > 32 ? -1 : 0; /* a header never runs this long */
    if (q == d || q[0] != '\r' || q[1] != '\n' || (*d == '0' && q - d > 1))
        return -1;
    *v = x;
    *next = q + 2;
    return 1;
}

static int grow(struct repl_args *a, long long need)
{
    long long cap = a->cap ? a->cap : 16;
    while (cap < need)
        cap *= 2;
    const char **na = realloc(a->argv, sizeof(*na) * (size_t)cap);
    if (!na)
        return -1;
    a->argv = na;
    size_t *nl = realloc(a->lens, sizeof(*nl) * (size_t)cap);
    if (!nl)
        return -1;
    a->lens = nl;
    a->cap = (int)cap;
    return 0;
}

int repl_parse_at(const char *p, size_t n, long long max_bulk, struct repl_args *a, int base,
                  int *argc, size_t *used)
{
    const char *s = p, *e = p + n;
    long long cnt;
    int r;

    if (s == e)
        return 0;
    if (*s != '*') {
        if (*s == '\n') { /* a keep-alive newline between commands */
            *argc = 0;
            *used = 1;
            return 1;
        }
        return -1;
    }
    if ((r = header_num(s, e, &cnt, &s)) <= 0)
        return r;
    if (cnt < 1 || cnt > REPL_MAX_ARGS)
        return -1;
    if (base + cnt > a->cap && grow(a, base + cnt))
        return -1;
    for (long long i = 0; i < cnt; i++) {
        long long l;
        if (s >= e)
            return 0;
        if (*s != '$')
            return -1;
        if ((r = header_num(s, e, &l, &s)) <= 0)
            return r;
        if (l > max_bulk)
            return -1;
        if ((unsigned long long)(e - s) < (unsigned long long)l + 2)
            return 0;
        if (s[l] != '\r' || s[l + 1] != '\n')
            return -1;
        a->argv[base + i] = s;
        a->lens[base + i] = (size_t)l;
        s += l + 2;
    }
    *argc = (int)cnt;
    *used = (size_t)(s - p);
    return 1;
}

int repl_parse(const char *p, size_t n, long long max_bulk, struct repl_args *a, int *argc,
               size_t *used)
{
    return repl_parse_at(p, n, max_bulk, a, 0, argc, used);
}

void repl_args_free(struct repl_args *a)
{
    free(a->argv);
    free(a->lens);
    a->argv = NULL;
    a->lens = NULL;
    a->cap = 0;
}
