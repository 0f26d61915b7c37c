#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/util.h"
#include "proto/resp.h"

static int add_prefixed(struct buf *b, char c, const char *s, size_t n)
{
    char *w;

    if (buf_reserve(b, n + 3))
        return -1;
    w = b->data + b->wpos;
    w[0] = c;
    memcpy(w + 1, s, n);
    w[n + 1] = '\r';
    w[n + 2] = '\n';
    b->wpos += n + 3;
    return 0;
}

int resp_add_status(struct buf *b, const char *s)
{
    return add_prefixed(b, '+', s, strlen(s));
}

int resp_add_error(struct buf *b, const char *msg)
{
    char tmp[512];
    size_t n = strlen(msg);
    /* newlines would break the protocol: Redis replaces them with spaces */
    if (memchr(msg, '\r', n) || memchr(msg, '\n', n)) {
        if (n >= sizeof(tmp))
            n = sizeof(tmp) - 1;
        for (size_t i = 0; i < n; i++)
            tmp[i] = (msg[i] == '\r' || msg[i] == '\n') ? ' ' : msg[i];
        return add_prefixed(b, '-', tmp, n);
    }
    return add_prefixed(b, '-', msg, n);
}

int resp_add_errorf(struct buf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    return resp_add_error(b, tmp);
}

static int add_num(struct buf *b, char c, long long v)
{
    char *w;
    int n;

    if (buf_reserve(b, 24))
        return -1;
    w = b->data + b->wpos;
    w[0] = c;
    n = util_ll2str(w + 1, v);
    w[n + 1] = '\r';
    w[n + 2] = '\n';
    b->wpos += (size_t)n + 3;
    return 0;
}

int resp_add_int(struct buf *b, long long v)
{
    return add_num(b, ':', v);
}

int resp_add_bulk_hdr(struct buf *b, size_t n)
{
    return add_num(b, '$', (long long)n);
}

int resp_add_bulk(struct buf *b, const char *p, size_t n)
{
    char *w;
    int h;

    if (buf_reserve(b, n + 26))
        return -1;
    w = b->data + b->wpos;
    w[0] = '$';
    h = util_ull2str(w + 1, n);
    w[h + 1] = '\r';
    w[h + 2] = '\n';
    memcpy(w + h + 3, p, n);
    w[h + 3 + n] = '\r';
    w[h + 4 + n] = '\n';
    b->wpos += n + (size_t)h + 5;
    return 0;
}

int resp_add_bulk_ll(struct buf *b, long long v)
{
    char tmp[24];
    int n = util_ll2str(tmp, v);
    return resp_add_bulk(b, tmp, (size_t)n);
}

int resp_add_null(struct buf *b, int proto)
{
    return proto == 3 ? buf_append(b, "_\r\n", 3) : buf_append(b, "$-1\r\n", 5);
}

int resp_add_null_array(struct buf *b, int proto)
{
    return proto == 3 ? buf_append(b, "_\r\n", 3) : buf_append(b, "*-1\r\n", 5);
}

int resp_add_array(struct buf *b, long long n)
{
    return add_num(b, '*', n);
}

int resp_add_map(struct buf *b, long long n, int proto)
{
    return proto == 3 ? add_num(b, '%', n) : add_num(b, '*', n * 2);
}

int resp_add_set(struct buf *b, long long n, int proto)
{
    return add_num(b, proto == 3 ? '~' : '*', n);
}

int resp_add_push(struct buf *b, long long n, int proto)
{
    return add_num(b, proto == 3 ? '>' : '*', n);
}

int resp_add_double(struct buf *b, double d, int proto)
{
    char tmp[64];
    int n = util_d2str(tmp, sizeof(tmp), d);

    if (proto == 3)
        return add_prefixed(b, ',', tmp, (size_t)n);
    return resp_add_bulk(b, tmp, (size_t)n);
}

int resp_add_bool(struct buf *b, int v, int proto)
{
    if (proto == 3)
        return buf_append(b, v ? "#t\r\n" : "#f\r\n", 4);
    return buf_append(b, v ? ":1\r\n" : ":0\r\n", 4);
}

int resp_add_verbatim(struct buf *b, const char *p, size_t n, int proto)
{
    if (proto != 3)
        return resp_add_bulk(b, p, n);
    if (add_num(b, '=', (long long)n + 4) || buf_append(b, "txt:", 4) || buf_append(b, p, n))
        return -1;
    return buf_append(b, "\r\n", 2);
}
