/* Fuzz target: FUNCTION RESTORE's payload reader and the library metadata line
 * (src/script/func_payload.c), on hostile bytes from a client. The payload's trailer is
 * checked first (version, CRC64): the fuzzer would rarely get a CRC right, so the input's
 * first byte chooses whether the trailer is fixed up before the call (then the records are
 * walked: opcodes, lengths, LZF strings). Each record's code goes through the metadata
 * parser. Properties: no read outside the input (ASan), a name found is a valid library name
 * and the metadata line ends within the code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "persist/crc64.h"
#include "script/script_func.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_funcpayload: check failed: %s (line %d)\n", #c, __LINE__);     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static int each(void *arg, const char *code, size_t n)
{
    char *name = NULL, err[256];
    size_t skip = 0;
    char *copy = malloc(n ? n : 1); /* its own allocation: ASan sees an overread */

    (void)arg;
    if (!copy)
        return -1;
    memcpy(copy, code, n);
    if (func_parse_meta(copy, n, &name, &skip, err, sizeof(err)) == 0) {
        CHECK(name && func_name_ok(name, strlen(name)));
        CHECK(skip <= n);
        free(name);
    } else {
        CHECK(name == NULL && err[0]);
    }
    free(copy);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    unsigned char *p;
    size_t n;

    if (size < 1)
        return 0;
    n = size - 1;
    p = malloc(n + 10);
    if (!p)
        return 0;
    memcpy(p, data + 1, n);
    if (data[0] & 1) {
        /* a valid trailer: RDB version 10 and the CRC64 of what precedes it */
        uint64_t crc;
        p[n] = 10;
        p[n + 1] = 0;
        crc = crc64(0, p, n + 2);
        for (int i = 0; i < 8; i++)
            p[n + 2 + i] = (unsigned char)(crc >> (8 * i));
        n += 10;
    }
    err[0] = '\0';
    if (func_payload_split((const char *)p, n, each, NULL, err, sizeof(err)))
        CHECK(err[0]);
    free(p);
    return 0;
}
