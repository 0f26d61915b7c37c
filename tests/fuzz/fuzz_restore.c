/* Fuzz target: the RESTORE payload decoder (src/persist rdb_payload_decode), with deep
 * validation: any bytes must give a value or an error, never a crash, a leak or a value
 * that cannot be dumped again. The input is a payload without its footer (type byte and
 * value): the target appends the version and CRC64, so the fuzzer need not find checksums.
 * A decoded value is dumped (rdb_dump), the dump decoded and dumped again: both dumps must
 * pass rdb_payload_check and have the same size (identical bytes but for sets, hashes and
 * sorted sets: see below). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "persist/crc64.h"
#include "persist/rdb.h"
#include "store/item.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_restore: check failed: %s (line %d)\n", #c, __LINE__);          \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Dump v under a throwaway item; v is freed. Returns the malloc'd payload (or NULL: OOM). */
static char *redump(struct rdb_value *v, size_t *n)
{
    uint8_t type = (uint8_t)v->type;
    struct item *it = item_create(type, "k", 1, type == OBJ_STRING ? v->strn : sizeof(void *), 0);
    char *out = NULL;

    CHECK(it);
    if (type == OBJ_STRING)
        memcpy(item_value(it), v->str, v->strn);
    else
        memcpy(item_value(it), &v->ptr, sizeof(v->ptr));
    if (rdb_dump(it, &out, n))
        out = NULL;
    free(v->str);
    v->str = NULL;
    it->type = OBJ_STRING; /* the structure is freed below, not by a destructor */
    item_release(it);
    rdb_value_free(v);
    return out;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    config_defaults(); /* the collections size their nodes by the defaults */
    crc64_setup();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rdb_value v;
    const char *why;
    unsigned char *p;
    size_t n = size + 10, n1, n2;

    if (size > 1 << 20)
        return 0;
    p = malloc(n);
    CHECK(p);
    memcpy(p, data, size);
    p[size] = 10;
    p[size + 1] = 0;
    uint64_t crc = crc64(0, p, size + 2);
    for (int i = 0; i < 8; i++)
        p[size + 2 + i] = (unsigned char)(crc >> (8 * i));
    CHECK(rdb_payload_check((const char *)p, n) == 0);
    if (rdb_payload_decode((const char *)p, n, &v, &why)) {
        CHECK(why && v.ptr == NULL && v.str == NULL);
        free(p);
        return 0;
    }
    free(p);
    char *d1 = redump(&v, &n1);
    CHECK(d1);
    CHECK(rdb_payload_check(d1, n1) == 0);
    CHECK(rdb_payload_decode(d1, n1, &v, &why) == 0);
    char *d2 = redump(&v, &n2);
    CHECK(d2);
    /* the same elements, each encoded the same way (hash tables may iterate in another
     * order after re-insertion, and a zset score of -0 may come back as 0, so the bytes are
     * compared only for the rest) */
    CHECK(n1 == n2);
    CHECK(d1[0] == 2 || d1[0] == 4 || d1[0] == 5 || d1[0] == 17 || memcmp(d1, d2, n1) == 0);
    free(d1);
    free(d2);
    return 0;
}
