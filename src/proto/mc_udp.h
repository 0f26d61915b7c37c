/* memcached's UDP frame: every datagram starts with an 8-byte header of four big-endian
 * 16-bit fields: request id, sequence number, datagram count, reserved (0). A request must be
 * one datagram (count 1); a response of n bytes goes out as mc_udp_count(n) datagrams of at
 * most MC_UDP_DGRAM bytes, header included, numbered 0..count-1. No I/O, no allocation. */
#ifndef TC_MC_UDP_H
#define TC_MC_UDP_H

#include <stddef.h>
#include <stdint.h>

#define MC_UDP_HDR 8
#define MC_UDP_DGRAM 1400 /* memcached's UDP_MAX_PAYLOAD_SIZE */
#define MC_UDP_PER (MC_UDP_DGRAM - MC_UDP_HDR)

struct mc_udp_frame {
    uint16_t id, seq, count;
};

/* Parse a request datagram of n bytes. Returns the payload's offset (MC_UDP_HDR), or -1 when
 * memcached drops it: no payload, or a request spread over several datagrams. */
int mc_udp_parse(const unsigned char *p, size_t n, struct mc_udp_frame *f);
/* Datagrams a response of n bytes needs; 0 when none (n == 0) or more than 65535. */
size_t mc_udp_count(size_t n);
/* Write the header of datagram seq of count for request id. */
void mc_udp_header(unsigned char out[MC_UDP_HDR], uint16_t id, uint16_t seq, uint16_t count);

#endif
