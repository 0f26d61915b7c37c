/* memcached's UDP frame header (mc_udp.h). */
#include "proto/mc_udp.h"

int mc_udp_parse(const unsigned char *p, size_t n, struct mc_udp_frame *f)
{
    if (n <= MC_UDP_HDR)
        return -1;
    f->id = (uint16_t)(p[0] << 8 | p[1]);
    f->seq = (uint16_t)(p[2] << 8 | p[3]);
    f->count = (uint16_t)(p[4] << 8 | p[5]);
    if (f->count != 1)
        return -1; /* memcached checks only the count (not the sequence number) */
    return MC_UDP_HDR;
}

size_t mc_udp_count(size_t n)
{
    size_t count = (n + MC_UDP_PER - 1) / MC_UDP_PER;

    return count > 65535 ? 0 : count;
}

void mc_udp_header(unsigned char out[MC_UDP_HDR], uint16_t id, uint16_t seq, uint16_t count)
{
    out[0] = (unsigned char)(id >> 8);
    out[1] = (unsigned char)id;
    out[2] = (unsigned char)(seq >> 8);
    out[3] = (unsigned char)seq;
    out[4] = (unsigned char)(count >> 8);
    out[5] = (unsigned char)count;
    out[6] = 0;
    out[7] = 0;
}
