/* LZF and CRC64 (tc_persist): known CRC64 vectors, LZF round trips over random, repetitive and
 * mixed inputs of many sizes (offsets up to the 8 KiB window, runs past 264 bytes), outputs that
 * do not fit, and corrupt compressed input (no out-of-bounds access: run under ASan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "persist/crc64.h"
#include "persist/lzf.h"
#include "tap.h"

static uint64_t rnd_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void fill(unsigned char *p, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: p[i] = (unsigned char)rnd(); break;                  /* incompressible */
        case 1: p[i] = 'a'; break;                                   /* one long run */
        case 2: p[i] = (unsigned char)("abcdefgh"[i % 8]); break;    /* short period */
        case 3: p[i] = (unsigned char)(rnd() % 4 + 'a'); break;      /* small alphabet */
        default:                                                      /* far repeats */
            p[i] = i >= 8000 && rnd() % 8 ? p[i - 8000 + (rnd() % 100)] : (unsigned char)rnd();
        }
    }
}

int main(void)
{
    ok(crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL, "crc64 check value");
    {
        /* incremental equals one shot */
        unsigned char b[1000];
        fill(b, sizeof(b), 0);
        uint64_t one = crc64(0, b, sizeof(b));
        uint64_t inc = crc64(crc64(crc64(0, b, 3), b + 3, 500), b + 503, 497);
        ok(one == inc, "crc64 incremental");
    }
    size_t sizes[] = {1, 2, 3, 4, 20, 21, 31, 32, 33, 64, 100, 263, 264, 265, 1000, 8191, 8192,
                      8193, 20000, 100000};
    int bad = 0, sizes_n = (int)(sizeof(sizes) / sizeof(sizes[0]));
    for (int kind = 0; kind < 5; kind++) {
        for (int si = 0; si < sizes_n; si++) {
            size_t n = sizes[si];
            unsigned char *in = malloc(n), *c = malloc(n + n / 16 + 64), *out = malloc(n);
            fill(in, n, kind);
            size_t cn = lzf_compress(in, n, c, n + n / 16 + 64);
            if (cn == 0 || lzf_decompress(c, cn, out, n) != n || memcmp(in, out, n) != 0)
                bad++;
            if (kind == 1 && n >= 1000 && cn > n / 20)
                bad++; /* a run must compress well */
            /* a too-small output is refused, never overrun */
            if (cn > 1 && lzf_compress(in, n, c, cn - 1) != 0)
                bad++;
            /* truncated / corrupted input fails cleanly */
            if (cn > 1)
                (void)lzf_decompress(c, cn - 1, out, n);
            for (int k = 0; k < 20 && cn; k++) {
                c[rnd() % cn] ^= (unsigned char)(1u << (rnd() % 8));
                (void)lzf_decompress(c, cn, out, n);
            }
            free(in);
            free(c);
            free(out);
        }
    }
    ok(bad == 0, "lzf round trips (%d failures)", bad);
    {
        unsigned char junk[64];
        unsigned char out[16];
        fill(junk, sizeof(junk), 0);
        for (int k = 0; k < 10000; k++) {
            fill(junk, sizeof(junk), 0);
            (void)lzf_decompress(junk, rnd() % sizeof(junk), out, rnd() % sizeof(out) + 1);
        }
        ok(1, "lzf random input decodes without faults");
    }
    return tap_done();
}
