#include "persist/lzf.h"

#include <stdint.h>
#include <string.h>

#define HBITS 14
#define MAX_OFF 8192
#define MAX_REF (255 + 8 + 1) /* longest back reference: 264 bytes */

static inline uint32_t h3(const unsigned char *p, int hbits)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - hbits);
}

size_t lzf_compress(const void *in, size_t n, void *out, size_t cap)
{
    const unsigned char *s = in, *ip = s, *end = s + n;
    unsigned char *o = out, *oend = o + cap, *lit; /* lit: control byte of the open literal run */
    uint32_t htab[1 << HBITS];

    if (n == 0 || cap < 2)
        return 0;
    /* a table sized to the input: clearing 64 KiB for a 50-byte value would cost more than
     * compressing it */
    int hbits = 6;
    while (hbits < HBITS && ((size_t)1 << hbits) < n)
        hbits++;
    memset(htab, 0, sizeof(htab[0]) << hbits); /* positions + 1, 0 = none */
    lit = o++;
    *lit = 0xff; /* no literal yet: encoded as count - 1, so 0xff means "empty" here */
    int litn = 0;
    while (ip < end) {
        if (ip + 2 < end) {
            uint32_t hv = h3(ip, hbits), cand = htab[hv];
            htab[hv] = (uint32_t)(ip - s) + 1;
            if (cand) {
                const unsigned char *ref = s + cand - 1;
                size_t off = (size_t)(ip - ref);
                if (off > 0 && off <= MAX_OFF && ref[0] == ip[0] && ref[1] == ip[1] &&
                    ref[2] == ip[2]) {
                    size_t len = 3, maxlen = (size_t)(end - ip);
                    if (maxlen > MAX_REF)
                        maxlen = MAX_REF;
                    while (len < maxlen && ref[len] == ip[len])
                        len++;
                    /* close the literal run */
                    if (litn == 0)
                        o--; /* drop the unused control byte */
                    else
                        *lit = (unsigned char)(litn - 1);
                    size_t l = len - 2;
                    off--;
                    if (l < 7) {
                        if (o + 2 > oend)
                            return 0;
                        *o++ = (unsigned char)((l << 5) | (off >> 8));
                    } else {
                        if (o + 3 > oend)
                            return 0;
                        *o++ = (unsigned char)((7 << 5) | (off >> 8));
                        *o++ = (unsigned char)(l - 7);
                    }
                    *o++ = (unsigned char)(off & 0xff);
                    /* index the positions inside the match (cheaply: the last two) */
                    ip += len;
                    if (ip + 2 < end) {
                        htab[h3(ip - 1, hbits)] = (uint32_t)(ip - 1 - s) + 1;
                        htab[h3(ip - 2, hbits)] = (uint32_t)(ip - 2 - s) + 1;
                    }
                    if (o >= oend)
                        return 0;
                    lit = o++;
                    litn = 0;
                    continue;
                }
            }
        }
        if (o >= oend)
            return 0;
        *o++ = *ip++;
        if (++litn == 32) {
            *lit = 31;
            if (o >= oend)
                return 0;
            lit = o++;
            litn = 0;
        }
    }
    if (litn == 0)
        o--;
    else
        *lit = (unsigned char)(litn - 1);
    return (size_t)(o - (unsigned char *)out);
}

size_t lzf_decompress(const void *in, size_t n, void *out, size_t outn)
{
    const unsigned char *ip = in, *iend = ip + n;
    unsigned char *o = out, *oend = o + outn;

    while (ip < iend) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) {
            size_t len = ctrl + 1;
            if ((size_t)(iend - ip) < len || (size_t)(oend - o) < len)
                return 0;
            memcpy(o, ip, len);
            o += len;
            ip += len;
        } else {
            size_t len = ctrl >> 5;
            if (len == 7) {
                if (ip >= iend)
                    return 0;
                len += *ip++;
            }
            len += 2;
            if (ip >= iend)
                return 0;
            size_t off = ((size_t)(ctrl & 0x1f) << 8 | *ip++) + 1;
            if (off > (size_t)(o - (unsigned char *)out) || (size_t)(oend - o) < len)
                return 0;
            const unsigned char *ref = o - off;
            for (size_t i = 0; i < len; i++) /* may overlap: byte by byte */
                o[i] = ref[i];
            o += len;
        }
    }
    return o == oend ? outn : 0;
}
