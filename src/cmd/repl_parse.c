/* The replica's stream parser (repl_parse.h). */
#include "cmd/repl_parse.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

int repl_parse(const char *p, size_t n, long long max_bulk, struct repl_args *a, int *argc,
               size_t *used)
{
    const char *s = p, *e = p + n, *q;
    long long cnt;

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
    q = memchr(s, '\r', (size_t)(e - s));
    if (!q || q + 1 >= e)
        return (size_t)(e - s) > 32 ? -1 : 0; /* a header never runs this long */
    if (!util_str2ll(s + 1, (size_t)(q - s - 1), &cnt) || cnt < 1 || cnt > REPL_MAX_ARGS ||
        q[1] != '\n')
        return -1;
    if (cnt > a->cap) {
        const char **na = realloc(a->argv, sizeof(*na) * (size_t)cnt);
        if (!na)
            return -1;
        a->argv = na;
        size_t *nl = realloc(a->lens, sizeof(*nl) * (size_t)cnt);
        if (!nl)
            return -1;
        a->lens = nl;
        a->cap = (int)cnt;
    }
    s = q + 2;
    for (long long i = 0; i < cnt; i++) {
        long long l;
        if (s >= e)
            return 0;
        if (*s != '$')
            return -1;
        q = memchr(s, '\r', (size_t)(e - s));
        if (!q || q + 1 >= e)
            return (size_t)(e - s) > 32 ? -1 : 0;
        if (!util_str2ll(s + 1, (size_t)(q - s - 1), &l) || l < 0 || l > max_bulk ||
            q[1] != '\n')
            return -1;
        s = q + 2;
        if ((unsigned long long)(e - s) < (unsigned long long)l + 2)
            return 0;
        if (s[l] != '\r' || s[l + 1] != '\n')
            return -1;
        a->argv[i] = s;
        a->lens[i] = (size_t)l;
        s += l + 2;
    }
    *argc = (int)cnt;
    *used = (size_t)(s - p);
    return 1;
}

void repl_args_free(struct repl_args *a)
{
    free(a->argv);
    free(a->lens);
    a->argv = NULL;
    a->lens = NULL;
    a->cap = 0;
}
