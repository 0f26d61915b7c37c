/* The Lua debugger's command parser (see ldb_parse.h). */
#include "script/ldb_parse.h"

#include <string.h>

/* The decimal number at p as atoi reads it (leading white space, an optional sign, digits up
 * to the first non-digit; 0 when there are none), or -1 when it is past every limit. */
static long read_num(const char *p, const char *end)
{
    long v = 0;
    int neg = 0;

    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        p++;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (v > 100000000)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return neg ? -v : v;
}

static const char *find_crlf(const char *p, const char *end)
{
    for (; p + 1 < end; p++)
        if (p[0] == '\r' && p[1] == '\n')
            return p;
    return NULL;
}

int ldb_parse(const char *b, size_t n, struct ldb_cmd *cmd)
{
    const char *end = b + n, *p, *nl;
    long count;

    cmd->argc = 0;
    if (n == 0)
        return 0;
    p = memchr(b, '*', n);
    if (!p)
        return -1;
    if (!(nl = find_crlf(p, end)))
        return 0;
    count = read_num(p + 1, nl);
    if (count <= 0 || count > LDB_ARG_MAX)
        return -1;
    p = nl + 2;
    while (cmd->argc < count) {
        long len;
        if (p >= end)
            return 0;
        if (*p != '$')
            return -1;
        if (!(nl = find_crlf(p, end)))
            return 0;
        len = read_num(p + 1, nl);
        if (len <= 0 || len > LDB_ARG_MAX)
            return -1;
        p = nl + 2;
        if (end - p < len + 2)
            return 0;
        cmd->argv[cmd->argc] = p;
        cmd->argl[cmd->argc++] = (size_t)len;
        p += len;
        if (p[0] != '\r' || p[1] != '\n')
            return -1;
        p += 2;
    }
    cmd->used = (size_t)(p - b);
    return cmd->argc;
}
