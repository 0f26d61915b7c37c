#include "persist/crc64.h"

/* Slicing-by-8 tables over the reflected polynomial. */
static uint64_t tab[8][256];
static int ready;

void crc64_setup(void)
{
    const uint64_t poly = 0x95ac9329ac4bc9b5ULL; /* 0xad93d23594c935a9 bit-reversed */

    if (ready)
        return;
    for (int i = 0; i < 256; i++) {
        uint64_t c = (uint64_t)i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        tab[0][i] = c;
    }
    for (int i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xff];
    ready = 1;
}

uint64_t crc64(uint64_t crc, const void *p, size_t n)
{
    const unsigned char *s = p;

    if (!ready)
        crc64_setup();
    while (n >= 8) {
        uint64_t w = crc ^ ((uint64_t)s[0] | (uint64_t)s[1] << 8 | (uint64_t)s[2] << 16 |
                            (uint64_t)s[3] << 24 | (uint64_t)s[4] << 32 | (uint64_t)s[5] << 40 |
                            (uint64_t)s[6] << 48 | (uint64_t)s[7] << 56);
        crc = tab[7][w & 0xff] ^ tab[6][(w >> 8) & 0xff] ^ tab[5][(w >> 16) & 0xff] ^
              tab[4][(w >> 24) & 0xff] ^ tab[3][(w >> 32) & 0xff] ^ tab[2][(w >> 40) & 0xff] ^
              tab[1][(w >> 48) & 0xff] ^ tab[0][w >> 56];
        s += 8;
        n -= 8;
    }
    while (n--)
        crc = tab[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
    return crc;
}
