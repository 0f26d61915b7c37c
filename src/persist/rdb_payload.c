/* DUMP / RESTORE payloads (rdb.h): the footer check and the decoder, on the RDB loader's
 * value reader (rdb_read_value, strict: as Redis's deep sanitization). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "persist/crc64.h"
#include "persist/rdb.h"
#include "persist/rdb_int.h"
#include "persist/rdb_read.h"
#include "store/item.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_zset.h"

_Atomic int rdb_skip_checksum;

int rdb_payload_check(const char *p, size_t n)
{
    const unsigned char *f;
    uint64_t want = 0;

    if (n < 10)
        return -1;
    f = (const unsigned char *)p + n - 10;
    if ((unsigned)(f[0] | f[1] << 8) > RDB_VERSION)
        return -1;
    if (atomic_load_explicit(&rdb_skip_checksum, memory_order_relaxed))
        return 0;
    for (int i = 7; i >= 0; i--)
        want = (want << 8) | f[2 + i];
    return crc64(0, p, n - 8) == want ? 0 : -1;
}

int rdb_value_empty(int type, void *ptr)
{
    switch (type) {
    case OBJ_LIST:
        return ((struct tlist *)ptr)->len == 0;
    case OBJ_SET:
        return tset_len(ptr) == 0;
    case OBJ_HASH:
        return thash_len(ptr) == 0;
    case OBJ_ZSET:
        return tzset_len(ptr) == 0;
    }
    return 0;
}

static uint64_t value_len(int type, void *ptr)
{
    switch (type) {
    case OBJ_SET:
        return tset_len(ptr);
    case OBJ_HASH:
        return thash_len(ptr);
    case OBJ_ZSET:
        return tzset_len(ptr);
    }
    return 0;
}

/* Redis's words for an empty collection or one with duplicates, per RDB type. */
static const char *dup_why(unsigned t, int dup)
{
    switch (t) {
    case T_HASH_ZIPMAP:
        return "Zipmap integrity check failed.";
    case T_HASH_ZIPLIST:
        return "Hash ziplist integrity check failed.";
    case T_ZSET_ZIPLIST:
        return "Zset ziplist integrity check failed.";
    case T_ZSET_LISTPACK:
        return "Zset listpack integrity check failed.";
    case T_HASH_LISTPACK:
        return dup ? "Hash listpack with dup elements" : "Hash listpack integrity check failed.";
    case T_SET_INTSET:
        return "Intset integrity check failed.";
    case T_SET:
        return dup ? "Duplicate set members detected" : "empty collection";
    case T_HASH:
        return dup ? "Duplicate hash fields detected" : "empty collection";
    case T_ZSET:
    case T_ZSET_2:
        return dup ? "Duplicate zset fields detected" : "empty collection";
    default:
        return dup ? "empty collection or duplicate elements" : "empty collection";
    }
}

int rdb_payload_decode(const char *p, size_t n, struct rdb_value *v, const char **why)
{
    struct rd r = {0};
    struct rstr str = {0};
    unsigned t;
    int otype = OBJ_STRING;
    void *ptr = NULL;

    memset(v, 0, sizeof(*v));
    *why = "Bad data format";
    if (n < 11)
        return -1;
    r.p = (const unsigned char *)p;
    r.end = r.p + n - 10;
    r.strict = 1;
    if (rd_byte(&r, &t) || t == T_MODULE || t == T_MODULE_2 || t >= OP_FUNCTION2)
        return -1;
    if (rdb_read_value(&r, t, &otype, &ptr, &str)) {
        rdb_free_value(otype, ptr);
        if (r.why)
            *why = r.why;
        return -1;
    }
    if (otype != OBJ_STRING &&
        (!ptr || rdb_value_empty(otype, ptr) ||
         (otype != OBJ_LIST && otype != OBJ_STREAM && value_len(otype, ptr) != r.nel))) {
        rdb_free_value(otype, ptr);
        *why = dup_why(t, ptr != NULL);
        return -1;
    }
    v->type = otype;
    v->ptr = ptr;
    if (otype == OBJ_STRING) {
        v->str = malloc(str.n ? str.n : 1);
        if (!v->str) {
            rstr_free(&str);
            *why = "out of memory";
            return -1;
        }
        memcpy(v->str, str.p, str.n);
        v->strn = str.n;
        rstr_free(&str);
    }
    return 0;
}

void rdb_value_free(struct rdb_value *v)
{
    free(v->str);
    v->str = NULL;
    rdb_free_value(v->type, v->ptr);
    v->ptr = NULL;
}
