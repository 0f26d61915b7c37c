/* Fuzz target: memcached's UDP frame (src/proto/mc_udp.c) as the server uses it. A datagram
 * is parsed with mc_udp_parse (in an allocation of exactly its size, so ASan catches a read
 * past it); an accepted one has its payload run through mc_parse until it is consumed or
 * incomplete, as one UDP request. The datagram's bytes then also stand for a response: its
 * datagram count and headers must cover it exactly, in order, within MC_UDP_DGRAM each. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mc.h"
#include "proto/mc_udp.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_mc_udp: check failed: %s (line %d)\n", #c, __LINE__);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *dg = malloc(size ? size : 1);
    struct mc_udp_frame f;
    int off;

    memcpy(dg, data, size);
    off = mc_udp_parse(dg, size, &f);
    if (off >= 0) {
        struct mc_parser p;
        struct mc_req *r = malloc(sizeof(*r));
        size_t pos = (size_t)off;
        CHECK(off == MC_UDP_HDR && size > MC_UDP_HDR && f.count == 1);
        CHECK(f.id == (uint16_t)(dg[0] << 8 | dg[1]) && f.seq == (uint16_t)(dg[2] << 8 | dg[3]));
        memset(&p, 0, sizeof(p));
        for (int guard = 0; pos < size && guard < 100000; guard++) {
            size_t used = 0;
            int st = mc_parse(&p, (const char *)dg + pos, size - pos, 1024 * 1024, r, &used);
            CHECK(used <= size - pos);
            pos += used;
            if (st != MC_OK || (used == 0 && st == MC_OK))
                break;
        }
        free(r);
    } else {
        CHECK(size <= MC_UDP_HDR || (uint16_t)(dg[4] << 8 | dg[5]) != 1);
    }
    {
        size_t count = mc_udp_count(size), covered = 0;
        CHECK((size == 0) == (count == 0));
        for (size_t i = 0; i < count; i++) {
            unsigned char h[MC_UDP_HDR];
            struct mc_udp_frame g;
            size_t len = i + 1 < count ? MC_UDP_PER : size - i * MC_UDP_PER;
            mc_udp_header(h, 0xbeef, (uint16_t)i, (uint16_t)count);
            CHECK(len > 0 && len + MC_UDP_HDR <= MC_UDP_DGRAM);
            CHECK(h[0] == 0xbe && h[1] == 0xef && h[6] == 0 && h[7] == 0);
            g.count = (uint16_t)(h[4] << 8 | h[5]);
            g.seq = (uint16_t)(h[2] << 8 | h[3]);
            CHECK(g.count == count && g.seq == i);
            covered += len;
        }
        CHECK(covered == size);
    }
    free(dg);
    return 0;
}
