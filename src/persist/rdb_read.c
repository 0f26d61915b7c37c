/* The RDB loader's reader: lengths, strings (integer and LZF encodings), doubles, and the
 * listpack/intset blobs inside values (see rdb_read.h). */
#define _GNU_SOURCE
#include "persist/rdb_read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "persist/lzf.h"
#include "persist/rdb_int.h"

void rstr_free(struct rstr *s)
{
    free(s->own);
    s->own = NULL;
}

int rd_fail(struct rd *r, const char *why)
{
    if (!r->why)
        r->why = why;
    return -1;
}

int rd_need(struct rd *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return rd_fail(r, "Unexpected EOF reading RDB file");
    return 0;
}

int rd_byte(struct rd *r, unsigned *b)
{
    if (rd_need(r, 1))
        return -1;
    *b = *r->p++;
    return 0;
}

/* A length, or (enc set) a special string encoding in *len. */
int rd_len_enc(struct rd *r, uint64_t *len, int *enc)
{
    unsigned b;

    *enc = 0;
    if (rd_byte(r, &b))
        return -1;
    switch (b >> 6) {
    case LEN_6:
        *len = b & 0x3f;
        return 0;
    case LEN_14:
        if (rd_need(r, 1))
            return -1;
        *len = ((uint64_t)(b & 0x3f) << 8) | *r->p++;
        return 0;
    case LEN_ENCVAL:
        *enc = 1;
        *len = b & 0x3f;
        return 0;
    }
    if (b == LEN_32 || b == LEN_64) {
        int k = b == LEN_32 ? 4 : 8;
        uint64_t v = 0;
        if (rd_need(r, (size_t)k))
            return -1;
        for (int i = 0; i < k; i++)
            v = (v << 8) | *r->p++;
        *len = v;
        return 0;
    }
    return rd_fail(r, "Unknown length encoding in RDB file");
}

int rd_len(struct rd *r, uint64_t *len)
{
    int enc;
    if (rd_len_enc(r, len, &enc))
        return -1;
    if (enc)
        return rd_fail(r, "Unexpected encoded length in RDB file");
    return 0;
}

int rd_str(struct rd *r, struct rstr *s)
{
    uint64_t len;
    int enc;

    s->own = NULL;
    if (rd_len_enc(r, &len, &enc))
        return -1;
    if (!enc) {
        if (rd_need(r, len))
            return -1;
        s->p = (const char *)r->p;
        s->n = (size_t)len;
        r->p += len;
        return 0;
    }
    if (len <= ENC_INT32) {
        int k = 1 << len;
        int64_t v = 0;
        if (rd_need(r, (size_t)k))
            return -1;
        if (k == 1)
            v = (int8_t)r->p[0];
        else if (k == 2)
            v = (int16_t)(r->p[0] | r->p[1] << 8);
        else
            v = (int32_t)((uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                          (uint32_t)r->p[3] << 24);
        r->p += k;
        s->n = (size_t)snprintf(s->num, sizeof(s->num), "%lld", (long long)v);
        s->p = s->num;
        return 0;
    }
    if (len == ENC_LZF) {
        uint64_t clen, ulen;
        if (rd_len(r, &clen) || rd_len(r, &ulen) || rd_need(r, clen))
            return -1;
        /* LZF expands at most 264 bytes from 3 (a back reference): a longer length is a lie,
         * refused before it is allocated (FUNCTION RESTORE's payload comes from a client) */
        if (ulen > (1ULL << 32) || ulen == 0 || ulen > clen * 100 + 64)
            return rd_fail(r, "Invalid LZF compressed string");
        s->own = malloc(ulen);
        if (!s->own)
            return rd_fail(r, "Out of memory loading RDB");
        if (lzf_decompress(r->p, clen, s->own, ulen) != ulen) {
            rstr_free(s);
            return rd_fail(r, "Invalid LZF compressed string");
        }
        r->p += clen;
        s->p = s->own;
        s->n = (size_t)ulen;
        return 0;
    }
    return rd_fail(r, "Unknown RDB string encoding type");
}

int rd_skip_str(struct rd *r)
{
    struct rstr s;
    if (rd_str(r, &s))
        return -1;
    rstr_free(&s);
    return 0;
}

int rd_u64le(struct rd *r, uint64_t *v)
{
    if (rd_need(r, 8))
        return -1;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = (*v << 8) | r->p[i];
    r->p += 8;
    return 0;
}

int rd_double_bin(struct rd *r, double *d)
{
    uint64_t u;
    if (rd_u64le(r, &u))
        return -1;
    memcpy(d, &u, 8);
    return 0;
}

/* The old text double of RDB_TYPE_ZSET. */
int rd_double_text(struct rd *r, double *d)
{
    unsigned n;
    char buf[256];

    if (rd_byte(r, &n))
        return -1;
    if (n == 253) {
        *d = NAN;
        return 0;
    }
    if (n == 254) {
        *d = INFINITY;
        return 0;
    }
    if (n == 255) {
        *d = -INFINITY;
        return 0;
    }
    if (rd_need(r, n))
        return -1;
    memcpy(buf, r->p, n);
    buf[n] = '\0';
    r->p += n;
    *d = strtod(buf, NULL);
    return 0;
}

/* ---- listpack and intset blobs ---- */

/* A listpack's or ziplist's frame: at least min bytes, its total bytes (32-bit LE) equal to n,
 * ended by 0xff. */
static int blob_frame_ok(const unsigned char *b, size_t n, size_t min)
{
    if (n < min)
        return 0;
    uint32_t tot = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                   (uint32_t)b[3] << 24;
    return tot == n && b[n - 1] == 0xff;
}

int lpr_init(struct lpr *l, const char *blob, size_t n)
{
    const unsigned char *b = (const unsigned char *)blob;
    if (!blob_frame_ok(b, n, 7))
        return -1;
    l->p = b + 6;
    l->end = b + n - 1;
    l->zl = 0;
    return 0;
}

int lpr_init_zl(struct lpr *l, const char *blob, size_t n)
{
    const unsigned char *b = (const unsigned char *)blob;
    if (!blob_frame_ok(b, n, 11))
        return -1;
    l->p = b + 10;
    l->end = b + n - 1;
    l->zl = 1;
    l->prev = 0;
    l->base = b;
    l->last = NULL;
    l->tail = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
    l->count = (uint32_t)b[8] | (uint32_t)b[9] << 8;
    l->seen = 0;
    return 0;
}

/* One ziplist entry: prevlen (1 byte, or 0xfe and 4 bytes LE), the encoding, the data. */
static int zl_next(struct lpr *l, const char **p, size_t *n, int64_t *iv, int *isint)
{
    const unsigned char *e = l->p;
    size_t avail = (size_t)(l->end - e), pl, hdr, len = 0;
    int64_t v = 0;
    int in = 1;

    if (e >= l->end) { /* the header must agree: the tail offset, the count (unless 65535) */
        if ((l->last ? (size_t)(l->last - l->base) : 10) != l->tail ||
            (l->count != 65535 && l->count != l->seen))
            return -1;
        return 0;
    }
    if (e[0] < 0xfe) {
        pl = 1;
        if (e[0] != l->prev)
            return -1;
    } else if (e[0] == 0xfe) {
        if (avail < 5)
            return -1;
        pl = 5;
        if (((size_t)e[1] | (size_t)e[2] << 8 | (size_t)e[3] << 16 | (size_t)e[4] << 24) !=
            l->prev)
            return -1;
    } else {
        return -1;
    }
    if (avail < pl + 1)
        return -1;
    const unsigned char *c = e + pl;
    unsigned b = c[0];
    switch (b >> 6) {
    case 0:
        in = 0;
        len = b & 0x3f;
        hdr = 1;
        break;
    case 1:
        if (avail < pl + 2)
            return -1;
        in = 0;
        len = ((size_t)(b & 0x3f) << 8) | c[1];
        hdr = 2;
        break;
    case 2:
        if (b != 0x80 || avail < pl + 5)
            return -1;
        in = 0;
        len = (size_t)c[1] << 24 | (size_t)c[2] << 16 | (size_t)c[3] << 8 | c[4];
        hdr = 5;
        break;
    default: {
        int k;
        if (b == 0xc0)
            k = 2;
        else if (b == 0xd0)
            k = 4;
        else if (b == 0xe0)
            k = 8;
        else if (b == 0xf0)
            k = 3;
        else if (b == 0xfe)
            k = 1;
        else if (b >= 0xf1 && b <= 0xfd)
            k = 0;
        else
            return -1;
        if (avail < pl + 1 + (size_t)k)
            return -1;
        if (k == 0) {
            v = (int64_t)(b & 0x0f) - 1;
        } else {
            uint64_t u = 0;
            for (int i = k - 1; i >= 0; i--)
                u = (u << 8) | c[1 + i];
            if (k < 8 && (u >> (8 * k - 1)) & 1)
                u |= ~0ULL << (8 * k);
            v = (int64_t)u;
        }
        hdr = 1 + (size_t)k;
        break;
    }
    }
    size_t tot = pl + hdr + (in ? 0 : len);
    if (avail < tot || (!in && len > avail))
        return -1;
    if (in) {
        *n = (size_t)snprintf(l->num, sizeof(l->num), "%lld", (long long)v);
        *p = l->num;
    } else {
        *p = (const char *)c + hdr;
        *n = len;
    }
    if (iv)
        *iv = v;
    if (isint)
        *isint = in;
    l->prev = tot;
    l->last = e;
    l->seen++;
    l->p = e + tot;
    return 1;
}

static size_t backlen_size(size_t l)
{
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/* The back-length of an entry of l bytes, as listpack.c encodes it, is at b. */
static int backlen_ok(const unsigned char *b, size_t l)
{
    unsigned char want[5];
    size_t n = backlen_size(l);

    if (n == 1) {
        want[0] = (unsigned char)l;
    } else {
        /* most significant 7 bits first; every byte but the first has the high bit set */
        for (size_t i = 0; i < n; i++) {
            unsigned char part = (unsigned char)((l >> (7 * (n - 1 - i))) & 127);
            want[i] = i == 0 ? part : (unsigned char)(part | 128);
        }
    }
    return memcmp(b, want, n) == 0;
}

/* The next element as bytes (integers formatted into l->num). 1, 0 at the end, -1 corrupt. */
int lpr_next(struct lpr *l, const char **p, size_t *n, int64_t *iv, int *isint)
{
    const unsigned char *e = l->p;
    size_t hdr, len = 0;
    int64_t v = 0;
    int in = 1;

    if (l->zl)
        return zl_next(l, p, n, iv, isint);
    if (e >= l->end)
        return 0;
    unsigned b = e[0];
    size_t avail = (size_t)(l->end - e);
    if (b < 0x80) {
        v = b;
        hdr = 1;
    } else if ((b & 0xc0) == 0x80) {
        in = 0;
        len = b & 0x3f;
        hdr = 1;
    } else if ((b & 0xe0) == 0xc0) {
        if (avail < 2)
            return -1;
        uint64_t u = ((uint64_t)(b & 0x1f) << 8) | e[1];
        v = u >= (1 << 12) ? (int64_t)u - (1 << 13) : (int64_t)u;
        hdr = 2;
    } else if ((b & 0xf0) == 0xe0) {
        if (avail < 2)
            return -1;
        in = 0;
        len = ((size_t)(b & 0x0f) << 8) | e[1];
        hdr = 2;
    } else if (b == 0xf0) {
        if (avail < 5)
            return -1;
        in = 0;
        len = (size_t)e[1] | (size_t)e[2] << 8 | (size_t)e[3] << 16 | (size_t)e[4] << 24;
        hdr = 5;
    } else if (b >= 0xf1 && b <= 0xf4) {
        int k = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
        uint64_t u = 0;
        if (avail < (size_t)k + 1)
            return -1;
        for (int i = k - 1; i >= 0; i--)
            u = (u << 8) | e[1 + i];
        if (k < 8 && (u >> (8 * k - 1)) & 1)
            u |= ~0ULL << (8 * k);
        v = (int64_t)u;
        hdr = 1 + (size_t)k;
    } else {
        return -1;
    }
    size_t body = hdr + (in ? 0 : len);
    size_t tot = body + backlen_size(body);
    if (avail < tot || !backlen_ok(e + body, body))
        return -1; /* cut short, or its back-length (what reverse walks trust) is wrong */
    if (in) {
        *n = (size_t)snprintf(l->num, sizeof(l->num), "%lld", (long long)v);
        *p = l->num;
    } else {
        *p = (const char *)e + hdr;
        *n = len;
    }
    if (iv)
        *iv = v;
    if (isint)
        *isint = in;
    l->p = e + tot;
    return 1;
}


int lpr_int(struct lpr *l, int64_t *v)
{
    const char *p;
    size_t n;
    int isint;
    long long x;

    if (lpr_next(l, &p, &n, v, &isint) != 1)
        return -1;
    if (!isint) {
        if (!util_str2ll(p, n, &x))
            return -1;
        *v = x;
    }
    return 0;
}
