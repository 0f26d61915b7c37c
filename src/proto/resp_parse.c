#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "proto/resp.h"

void resp_parser_reset(struct resp_parser *rp)
{
    rp->argc = 0;
    rp->mbulk = -1;
    rp->bulklen = -1;
    rp->pos = 0;
}

void resp_parser_deinit(struct resp_parser *rp)
{
    free(rp->argv);
    rp->argv = NULL;
    rp->argv_cap = 0;
}

size_t resp_want(const struct resp_parser *rp)
{
    if (rp->bulklen >= 0)
        return rp->pos + (size_t)rp->bulklen + 2;
    return 0;
}

static int push_arg(struct resp_parser *rp, size_t off, size_t len)
{
    if ((size_t)rp->argc == rp->argv_cap) {
        size_t cap = rp->argv_cap ? rp->argv_cap * 2 : 16;
        struct resp_arg *a = realloc(rp->argv, cap * sizeof(*a));
        if (!a)
            return -1;
        rp->argv = a;
        rp->argv_cap = cap;
    }
    rp->argv[rp->argc].off = off;
    rp->argv[rp->argc].len = len;
    rp->argc++;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* isspace() in the C locale, as sdssplitargs uses between arguments and after a closing
 * quote (inside an unquoted argument only space, tab, CR and LF separate). */
static inline int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v';
}

/* Split an inline line like sdssplitargs, unescaping in place. */
static int split_inline(struct resp_parser *rp, char *p, size_t len)
{
    size_t i = 0;
    char *nul = memchr(p, '\0', len);

    /* Redis splits a C string: a NUL ends the line */
    if (nul)
        len = (size_t)(nul - p);

    while (1) {
        while (i < len && is_space(p[i]))
            i++;
        if (i >= len)
            return 0;
        size_t start = i, w = i;
        int inq = 0, insq = 0, done = 0;
        while (!done) {
            if (inq) {
                if (i >= len)
                    return RESP_ERR_QUOTES;
                if (p[i] == '\\' && i + 3 < len && p[i + 1] == 'x' && hexval(p[i + 2]) >= 0 &&
                    hexval(p[i + 3]) >= 0) {
                    p[w++] = (char)(hexval(p[i + 2]) * 16 + hexval(p[i + 3]));
                    i += 4;
                } else if (p[i] == '\\' && i + 1 < len) {
                    char c;
                    i++;
                    switch (p[i]) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: c = p[i]; break;
                    }
                    p[w++] = c;
                    i++;
                } else if (p[i] == '"') {
                    /* closing quote must be followed by a space or nothing */
                    if (i + 1 < len && !is_space(p[i + 1]))
                        return RESP_ERR_QUOTES;
                    done = 1;
                    i++;
                } else {
                    p[w++] = p[i++];
                }
            } else if (insq) {
                if (i >= len)
                    return RESP_ERR_QUOTES;
                if (p[i] == '\\' && i + 1 < len && p[i + 1] == '\'') {
                    p[w++] = '\'';
                    i += 2;
                } else if (p[i] == '\'') {
                    if (i + 1 < len && !is_space(p[i + 1]))
                        return RESP_ERR_QUOTES;
                    done = 1;
                    i++;
                } else {
                    p[w++] = p[i++];
                }
            } else {
                if (i >= len) {
                    done = 1;
                } else {
                    switch (p[i]) {
                    case ' ': case '\n': case '\r': case '\t':
                        done = 1;
                        break;
                    case '"':
                        inq = 1;
                        i++;
                        break;
                    case '\'':
                        insq = 1;
                        i++;
                        break;
                    default:
                        p[w++] = p[i++];
                        break;
                    }
                }
            }
        }
        if (push_arg(rp, start, w - start))
            return RESP_ERR_NOMEM;
    }
}

static int parse_inline(struct resp_parser *rp, char *p, size_t n, size_t *used)
{
    char *nl = memchr(p, '\n', n);
    size_t linelen;

    if (!nl) {
        if (n > RESP_INLINE_MAX)
            return RESP_ERR_BIG_INLINE;
        return RESP_NEED_MORE;
    }
    linelen = (size_t)(nl - p);
    /* Like Redis, the 64 KiB limit applies while no newline has arrived: a longer line that
     * is complete in the buffer is accepted (Redis 7.0 answers a 70 kB inline ECHO). */
    *used = linelen + 1;
    if (linelen && p[linelen - 1] == '\r')
        linelen--;
    rp->argc = 0;
    int r = split_inline(rp, p, linelen);
    if (r) {
        rp->argc = 0;
        return r;
    }
    rp->mbulk = -1;
    rp->bulklen = -1;
    rp->pos = 0;
    return RESP_OK;
}

/* Read a "<c>123\r\n" header at p+pos. Returns 1 with *v and pos advanced, 0 if incomplete,
 * -1 if the number is malformed. */
static int read_len(const char *p, size_t n, size_t *pos, long long *v, int *toolong)
{
    const char *start = p + *pos + 1;

    /* Fast path: 1..18 digits without a leading zero, then CRLF (what every client sends). */
    if (TC_LIKELY(n - *pos > 3) && start[0] >= '1' && start[0] <= '9') {
        const char *q = start, *end = p + n;
        long long x = 0;
        while (q < end && *q >= '0' && *q <= '9' && q - start < 18)
            x = x * 10 + (*q++ - '0');
        if (q + 1 < end && q[0] == '\r') {
            *toolong = 0;
            *v = x;
            *pos = (size_t)(q - p) + 2;
            return 1;
        }
    }
    size_t avail = n - *pos - 1;
    const char *cr = memchr(start, '\r', avail);

    *toolong = 0;
    if (!cr || (size_t)(cr - p) + 1 >= n) {
        if (avail > RESP_INLINE_MAX)
            *toolong = 1;
        return 0;
    }
    /* had the bytes come in smaller reads, the check above would have fired */
    if ((size_t)(cr - start) + 1 > RESP_INLINE_MAX) {
        *toolong = 1;
        return 0;
    }
    if (!util_str2ll(start, (size_t)(cr - start), v))
        return -1;
    *pos = (size_t)(cr - p) + 2;
    return 1;
}

/* Read decimal digits at *q (below end): 1..15 of them without a leading zero, or a lone
 * "0". Returns the value, or -1 (no digits, leading zero, too long or at end); *q is moved past
 * the digits. */
static inline long long fast_num(const char **q, const char *end)
{
    const char *d = *q, *lim = end - d > 15 ? d + 15 : end;
    unsigned c;
    long long v;

    if (d >= end)
        return -1;
    c = (unsigned)(unsigned char)*d - '0';
    if (c > 9)
        return -1;
    v = c;
    d++;
    if (v == 0) {
        *q = d;
        return 0;
    }
    while (d < lim && (c = (unsigned)(unsigned char)*d - '0') <= 9) {
        v = v * 10 + c;
        d++;
    }
    if (d == lim && lim != end)
        return -1;
    *q = d;
    return v;
}

/* A whole "*N\r\n$L\r\n...\r\n" frame already in the buffer, in one pass with no state
 * kept between arguments (what pipelining clients send). Accepts exactly what the general
 * path below accepts, with the same result; returns 0 (for the general path to take over from
 * the frame start, the parser untouched) on anything else: an incomplete frame, an error,
 * unusual lengths, too few argv slots. */
static long long parse_fast(const struct resp_parser *rp, const char *p, size_t n,
                            struct resp_arg *argv, size_t cap, size_t *used)
{
    const char *q = p + 1, *end = p + n;
    long long m, i;

    if (n == 0 || p[0] != '*')
        return 0;
    m = fast_num(&q, end);
    /* the general path skips the byte after CR unchecked: so does this one */
    if (m <= 0 || (size_t)m > cap || end - q < 2 || q[0] != '\r')
        return 0;
    q += 2;
    for (i = 0; i < m; i++) {
        long long len;
        if (q >= end || q[0] != '$')
            return 0;
        q++;
        len = fast_num(&q, end);
        if (len < 0 || len > rp->max_bulk || end - q < 2 || q[0] != '\r')
            return 0;
        q += 2;
        if ((size_t)(end - q) < (size_t)len + 2)
            return 0;
        argv[i].off = (size_t)(q - p);
        argv[i].len = (size_t)len;
        q += len + 2;
    }
    *used = (size_t)(q - p);
    return m;
}

int resp_parse_ahead(const struct resp_parser *rp, const char *p, size_t n,
                     struct resp_arg *argv, size_t cap, size_t *used)
{
    if (rp->unauth || rp->mbulk >= 0)
        return 0;
    return (int)parse_fast(rp, p, n, argv, cap, used);
}

int resp_parse(struct resp_parser *rp, char *p, size_t n, size_t *used)
{
    int toolong, r;

    rp->fast = 0;
    if (rp->mbulk < 0) {
        if (n == 0)
            return RESP_NEED_MORE;
        if (p[0] != '*') {
            return parse_inline(rp, p, n, used);
        }
        if (!rp->unauth && (rp->argc = parse_fast(rp, p, n, rp->argv, rp->argv_cap, used)) > 0) {
            rp->fast = 1;
            return RESP_OK; /* mbulk, bulklen and pos are still reset */
        }
        rp->pos = 0;
        r = read_len(p, n, &rp->pos, &rp->mbulk, &toolong);
        if (r == 0) {
            rp->mbulk = -1;
            rp->pos = 0;
            return toolong ? RESP_ERR_BIG_MBULK : RESP_NEED_MORE;
        }
        if (r < 0 || rp->mbulk > INT_MAX) {
            rp->mbulk = -1;
            return RESP_ERR_MBULK;
        }
        if (rp->mbulk > 10 && rp->unauth) {
            rp->mbulk = -1;
            return RESP_ERR_UNAUTH_MBULK;
        }
        rp->argc = 0;
        rp->bulklen = -1;
        if (rp->mbulk <= 0) {
            *used = rp->pos;
            resp_parser_reset(rp);
            return RESP_OK;
        }
    }
    while (rp->argc < rp->mbulk) {
        if (rp->bulklen < 0) {
            long long len;
            if (rp->pos >= n)
                return RESP_NEED_MORE;
            if (p[rp->pos] != '$') {
                rp->bad = p[rp->pos];
                return RESP_ERR_DOLLAR;
            }
            r = read_len(p, n, &rp->pos, &len, &toolong);
            if (r == 0)
                return toolong ? RESP_ERR_BIG_BULK : RESP_NEED_MORE;
            if (r < 0 || len < 0 || len > rp->max_bulk)
                return RESP_ERR_BULK;
            if (len > 16384 && rp->unauth)
                return RESP_ERR_UNAUTH_BULK;
            rp->bulklen = len;
        }
        if (n - rp->pos < (size_t)rp->bulklen + 2)
            return RESP_NEED_MORE;
        if (push_arg(rp, rp->pos, (size_t)rp->bulklen))
            return RESP_ERR_NOMEM;
        rp->pos += (size_t)rp->bulklen + 2;
        rp->bulklen = -1;
    }
    *used = rp->pos;
    rp->mbulk = -1;
    rp->bulklen = -1;
    rp->pos = 0;
    return RESP_OK;
}

const char *resp_strerror(int status, char bad, char *tmp, size_t cap)
{
    switch (status) {
    case RESP_ERR_MBULK:
        return "ERR Protocol error: invalid multibulk length";
    case RESP_ERR_BULK:
        return "ERR Protocol error: invalid bulk length";
    case RESP_ERR_DOLLAR:
        snprintf(tmp, cap, "ERR Protocol error: expected '$', got '%c'", bad);
        return tmp;
    case RESP_ERR_BIG_MBULK:
        return "ERR Protocol error: too big mbulk count string";
    case RESP_ERR_BIG_BULK:
        return "ERR Protocol error: too big bulk count string";
    case RESP_ERR_BIG_INLINE:
        return "ERR Protocol error: too big inline request";
    case RESP_ERR_QUOTES:
        return "ERR Protocol error: unbalanced quotes in request";
    case RESP_ERR_UNAUTH_MBULK:
        return "ERR Protocol error: unauthenticated multibulk length";
    case RESP_ERR_UNAUTH_BULK:
        return "ERR Protocol error: unauthenticated bulk length";
    default:
        return "ERR Protocol error: out of memory";
    }
}
