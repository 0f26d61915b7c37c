/* LZF (the compression of Redis RDB strings). A stream of runs:
 *   000LLLLL + L+1 literal bytes (1..32);
 *   LLLOOOOO oooooooo: copy L+2 bytes (L 1..6) from offset O:o + 1 back;
 *   111OOOOO llllllll oooooooo: copy l+9 bytes from offset O:o + 1 back.
 * Pure functions, any thread. */
#ifndef TC_LZF_H
#define TC_LZF_H

#include <stddef.h>

/* Compress in[0..n) into out (cap bytes). Returns the compressed size, or 0 when it does not
 * fit in cap (the caller then stores the bytes plain). */
size_t lzf_compress(const void *in, size_t n, void *out, size_t cap);
/* Decompress in[0..n) into out, which must receive exactly outn bytes. Returns outn, or 0 on
 * corrupt input (never reads or writes out of bounds). */
size_t lzf_decompress(const void *in, size_t n, void *out, size_t outn);

#endif
