/* CRC-64 with the Jones polynomial (0xad93d23594c935a9, reflected, init 0, no final xor): the
 * checksum that closes a Redis RDB file. crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
 * Thread-safe after crc64_setup (main thread, once; crc64 calls it lazily otherwise). */
#ifndef TC_CRC64_H
#define TC_CRC64_H

#include <stddef.h>
#include <stdint.h>

void crc64_setup(void);
/* Continue crc over p[0..n). */
uint64_t crc64(uint64_t crc, const void *p, size_t n);

#endif
