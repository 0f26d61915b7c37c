/* MD5 (RFC 1321), used only for ketama point and key hashes. */
#ifndef TB_MD5_H
#define TB_MD5_H

#include <stddef.h>
#include <stdint.h>

/* Write the 16-byte MD5 digest of data[0..len) into out. Never allocates. */
void md5_digest(const void *data, size_t len, uint8_t out[16]);

#endif
