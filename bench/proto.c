/* Encoders and reply parsers, see proto.h. */
#include "proto.h"

#include <stdio.h>
#include <stdlib.h>

int iobuf_init(struct iobuf *b, size_t cap)
{
    b->data = malloc(cap);
    b->off = b->len = 0;
    b->cap = b->data ? cap : 0;
    return b->data ? 0 : -1;
}

void iobuf_deinit(struct iobuf *b)
{
    free(b->data);
    b->data = NULL;
    b->off = b->len = b->cap = 0;
}

void iobuf_reserve(struct iobuf *b, size_t n)
{
    if (b->cap - b->len >= n) return;
    if (b->off) {
        memmove(b->data, b->data + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->cap - b->len >= n) return;
    }
    size_t ncap = b->cap ? b->cap : 4096;
    while (ncap - b->len < n) ncap *= 2;
    char *nd = realloc(b->data, ncap);
    if (!nd) { perror("realloc"); exit(2); }
    b->data = nd;
    b->cap = ncap;
}

uint32_t put_u64(struct iobuf *b, uint64_t v)
{
    char tmp[24];
    uint32_t n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (uint32_t i = 0; i < n; i++) b->data[b->len + i] = tmp[n - 1 - i];
    b->len += n;
    return n;
}

void resp_put_header(struct iobuf *b, uint32_t nargs)
{
    b->data[b->len++] = '*';
    put_u64(b, nargs);
    resp_put_crlf(b);
}

void resp_put_arg_len(struct iobuf *b, size_t len)
{
    b->data[b->len++] = '$';
    put_u64(b, len);
    resp_put_crlf(b);
}

void resp_put_arg(struct iobuf *b, const char *p, size_t len)
{
    resp_put_arg_len(b, len);
    iobuf_put(b, p, len);
    resp_put_crlf(b);
}

/* Find the end of a line: returns the index of '\n' or -1. */
static inline long find_lf(const char *p, size_t n)
{
    const char *q = memchr(p, '\n', n);
    return q ? (long)(q - p) : -1;
}

static int parse_int(const char *p, const char *end, long long *out)
{
    int neg = 0;
    long long v = 0;
    if (p < end && *p == '-') { neg = 1; p++; }
    if (p >= end) return -1;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > (1ll << 50)) return -1;
    }
    *out = neg ? -v : v;
    return 0;
}

#define RESP_MAX_DEPTH 32

int resp_parse_reply(const char *p, size_t n, size_t *used, struct reply_info *ri)
{
    long long remain[RESP_MAX_DEPTH]; /* elements still to read per open aggregate */
    int depth = 0;
    size_t pos = 0;
    memset(ri, 0, sizeof(*ri));
    for (;;) {
        if (pos >= n) return REPLY_NEED_MORE;
        long lf = find_lf(p + pos, n - pos);
        if (lf < 0) return REPLY_NEED_MORE;
        if (lf < 1 || p[pos + (size_t)lf - 1] != '\r') return REPLY_ERR_PROTO;
        const char *line = p + pos + 1, *lend = p + pos + (size_t)lf - 1;
        char type = p[pos];
        size_t next = pos + (size_t)lf + 1;
        int nil = 0;
        long long v = 0;
        switch (type) {
        case '+': case ':': case ',': case '#': case '(':
            break;
        case '-':
            if (depth == 0) ri->error = 1;
            break;
        case '_':
            nil = 1;
            break;
        case '$': case '=': case '!':
            if (parse_int(line, lend, &v)) return REPLY_ERR_PROTO;
            if (v < 0) { nil = 1; break; }
            if (n - next < (size_t)v + 2) return REPLY_NEED_MORE;
            next += (size_t)v + 2;
            if (type == '!' && depth == 0) ri->error = 1;
            break;
        case '*': case '~': case '>': case '%': case '|':
            if (parse_int(line, lend, &v)) return REPLY_ERR_PROTO;
            if (v < 0) { nil = 1; break; }
            if (type == '%' || type == '|') v *= 2;
            if (depth == 0) { ri->is_array = 1; ri->elems = (uint32_t)v; }
            if (v > 0) {
                if (depth == RESP_MAX_DEPTH) return REPLY_ERR_PROTO;
                /* this aggregate counts as one element of its parent once complete */
                remain[depth++] = v;
                pos = next;
                continue;
            }
            break;
        default:
            return REPLY_ERR_PROTO;
        }
        pos = next;
        if (nil && depth <= 1) ri->nils++;
        /* one value completed: pop finished aggregates */
        while (depth > 0) {
            if (--remain[depth - 1] > 0) break;
            depth--;
        }
        if (depth == 0) { *used = pos; return REPLY_OK; }
    }
}

static int starts(const char *p, const char *end, const char *s)
{
    size_t l = strlen(s);
    return (size_t)(end - p) >= l && !memcmp(p, s, l);
}

int mc_parse_reply(const char *p, size_t n, size_t *used, struct reply_info *ri)
{
    size_t pos = 0;
    memset(ri, 0, sizeof(*ri));
    for (;;) {
        if (pos >= n) return REPLY_NEED_MORE;
        long lf = find_lf(p + pos, n - pos);
        if (lf < 0) return REPLY_NEED_MORE;
        const char *line = p + pos, *lend = p + pos + (size_t)lf;
        if (lend > line && lend[-1] == '\r') lend--;
        size_t next = pos + (size_t)lf + 1;
        if (starts(line, lend, "VALUE ")) {
            /* VALUE <key> <flags> <bytes> [<cas>] */
            const char *q = line + 6;
            int field = 0;
            long long bytes = -1;
            while (q < lend) {
                while (q < lend && *q == ' ') q++;
                const char *s = q;
                while (q < lend && *q != ' ') q++;
                if (q > s && ++field == 3) {
                    if (parse_int(s, q, &bytes)) return REPLY_ERR_PROTO;
                    break;
                }
            }
            if (bytes < 0) return REPLY_ERR_PROTO;
            if (n - next < (size_t)bytes + 2) return REPLY_NEED_MORE;
            next += (size_t)bytes + 2;
            ri->elems++;
            pos = next;
            continue;
        }
        if (starts(line, lend, "END") && lend - line == 3) {
            *used = next;
            return REPLY_OK;
        }
        if (ri->elems) { /* an error line in the middle of a get */
            ri->error = 1;
            *used = next;
            return REPLY_OK;
        }
        if (starts(line, lend, "ERROR") || starts(line, lend, "CLIENT_ERROR") ||
            starts(line, lend, "SERVER_ERROR"))
            ri->error = 1;
        else if (starts(line, lend, "NOT_FOUND") || starts(line, lend, "EN"))
            ri->nils = 1; /* incr/delete/touch on a missing key; meta miss */
        *used = next;
        return REPLY_OK;
    }
}

/* ---- memcached binary protocol ---- */

static void be32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24), p[1] = (char)(v >> 16), p[2] = (char)(v >> 8), p[3] = (char)v;
}

static uint32_t rd32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static void mcbin_header(struct iobuf *b, uint8_t op, uint32_t kl, uint8_t extlen,
                         uint32_t bodylen)
{
    char h[24] = {0};
    h[0] = (char)0x80;
    h[1] = (char)op;
    h[2] = (char)(kl >> 8), h[3] = (char)kl;
    h[4] = (char)extlen;
    be32(h + 8, bodylen);
    iobuf_put(b, h, sizeof(h));
}

void mcbin_put_get(struct iobuf *b, const char *key, uint32_t kl)
{
    mcbin_header(b, 0x00, kl, 0, kl);
    iobuf_put(b, key, kl);
}

void mcbin_put_set(struct iobuf *b, const char *key, uint32_t kl, const char *v, uint32_t vl,
                   uint32_t exptime)
{
    char ext[8] = {0};
    be32(ext + 4, exptime);
    mcbin_header(b, 0x01, kl, 8, 8 + kl + vl);
    iobuf_put(b, ext, 8);
    iobuf_put(b, key, kl);
    iobuf_put(b, v, vl);
}

int mcbin_parse_reply(const char *p, size_t n, size_t *used, struct reply_info *ri)
{
    uint32_t body;
    uint16_t status;

    memset(ri, 0, sizeof(*ri));
    if (n < 24)
        return REPLY_NEED_MORE;
    if ((unsigned char)p[0] != 0x81)
        return REPLY_ERR_PROTO;
    body = rd32(p + 8);
    if (n - 24 < body)
        return REPLY_NEED_MORE;
    status = (uint16_t)((unsigned char)p[6] << 8 | (unsigned char)p[7]);
    if (status == 0)
        ri->elems = 1;
    else if (status == 1)
        ri->nils = 1;
    else
        ri->error = 1;
    *used = 24 + (size_t)body;
    return REPLY_OK;
}
