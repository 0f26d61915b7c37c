/* slab: chunks of every class are distinct and keep their bytes, a class's pages go back to
 * the pool when all their chunks are free (slab_bytes drops), and another class reuses them.
 * Links only tc_store and tc_core. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/slab.h"
#include "tap.h"

#define N 40000
#define PAGE (64 * 1024)

static const size_t sizes[] = {17, 20, 21, 60, 61, 200, 333, 1024};
#define NS (sizeof(sizes) / sizeof(sizes[0]))

static char *chunks[NS][N];

int main(void)
{
    size_t peak, used_peak;
    int bad = 0;

    for (size_t s = 0; s < NS; s++) {
        for (int i = 0; i < N; i++) {
            chunks[s][i] = slab_alloc(sizes[s]);
            if (!chunks[s][i]) {
                bad++;
                break;
            }
            memset(chunks[s][i], (int)(s * 31 + (size_t)i) & 0xff, slab_round(sizes[s]));
        }
    }
    ok(bad == 0, "every allocation succeeds");
    for (size_t s = 0; s < NS && !bad; s++) {
        size_t r = slab_round(sizes[s]);
        for (int i = 0; i < N; i++) {
            unsigned char want = (unsigned char)((s * 31 + (size_t)i) & 0xff);
            const unsigned char *p = (const unsigned char *)chunks[s][i];
            if (p[0] != want || p[r - 1] != want || ((uintptr_t)p & 3))
                bad++;
        }
    }
    ok(bad == 0, "no chunk overlaps another (each keeps its pattern) and each is 4-byte aligned");
    peak = slab_bytes();
    used_peak = slab_used_bytes();
    size_t payload = 0;
    for (size_t s = 0; s < NS; s++)
        payload += slab_round(sizes[s]) * N;
    /* chunks in the thread's cache are not used; the count is published every 4 KiB */
    ok(used_peak + 4096 >= payload && used_peak <= payload + 4096,
           "used bytes %zu are the chunks handed out (%zu)", used_peak, payload);
    ok(peak >= payload && peak < payload + payload / 50 + NS * 2 * PAGE,
           "pages %zu hold the chunks with under 2%% lost (%zu)", peak, payload);

    /* free every class but the last: their pages go back (each thread's cache may keep up to
     * 32 chunks, and the class one page, pinned) */
    for (size_t s = 0; s + 1 < NS; s++)
        for (int i = N - 1; i >= 0; i--)
            slab_free(chunks[s][i], sizes[s]);
    size_t last = slab_round(sizes[NS - 1]) * N;
    size_t after = slab_bytes();
    ok(after < last + last / 50 + NS * 34 * (size_t)PAGE,
           "freeing all but one class returns their pages: %zu -> %zu", peak, after);
    ok(slab_used_bytes() < last + NS * 64 * 1024, "used bytes drop too (%zu)",
           slab_used_bytes());

    /* the freed pages serve another class: the total grows back by what it needs */
    for (int i = 0; i < N; i++) {
        chunks[0][i] = slab_alloc(500);
        if (!chunks[0][i]) {
            bad++;
            break;
        }
        memset(chunks[0][i], 0x5a, slab_round(500));
    }
    for (int i = 0; i < N && !bad; i++) {
        const unsigned char *p = (const unsigned char *)chunks[NS - 1][i];
        unsigned char want = (unsigned char)(((NS - 1) * 31 + (size_t)i) & 0xff);
        if (p[0] != want || p[1023] != want)
            bad++;
    }
    ok(bad == 0, "a new class's chunks do not touch the live class's");
    ok(slab_bytes() < after + (size_t)N * 500 + (size_t)N * 500 / 50 + 2 * PAGE,
           "the new class takes what it needs (%zu)", slab_bytes());
    return tap_done();
}
