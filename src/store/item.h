/* An item is one allocation holding a compact header, optional fields, the key and the value.
 * Optional fields cost bytes only when present:
 *   [refcnt u32 if IT_REF][mcflags u32 if IT_FLAGS]
 *   [expire if IT_TTL: u48 ms, or i64 with IT_TTL8][cas u64 if IT_CAS]
 *   [klen u32 if IT_KLONG][vlen u32 if IT_VLONG] key value
 * Strings keep their bytes inline; other types keep a pointer to their structure as value.
 * Items are owned by the stripe table that holds them; the stripe lock protects every field
 * except the refcount (atomic, only for large values read without the lock). */
#ifndef TC_ITEM_H
#define TC_ITEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum obj_type { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 5 };

#define IT_REF 0x01   /* has an atomic reference count (large values) */
#define IT_FLAGS 0x02 /* has memcached client flags */
#define IT_TTL 0x04   /* has an expire time field (0 = persistent) */
#define IT_CAS 0x08   /* has a CAS value */
#define IT_KLONG 0x10 /* key length > 255, stored as u32 */
#define IT_TTL8 0x40  /* with IT_TTL: the expire time is outside 0..2^48-1 ms, stored as i64 */
#define IT_VLONG 0x80 /* value length >= ITEM_VLONG, stored as u32 after the optional fields */
#define IT_OPT_MASK (IT_REF | IT_FLAGS | IT_TTL | IT_CAS | IT_KLONG | IT_TTL8)
#define IT_KEY_MASK (IT_OPT_MASK | IT_VLONG) /* the bits that place the key */

/* A marker bit of it->bits (no field behind it), kept by item_recreate: memcached meta state
 * (with it->mc_won). */
#define IT_MC_STALE 0x20 /* marked stale (md I, ms I): mg answers X */

/* Values at least this large are refcounted and written to sockets without a copy. */
#define ITEM_REF_MIN 16384

struct item {
    uint32_t lru;         /* LRU: store clock in ms (wraps in 49 days); LFU: minutes << 8 | counter */
    uint8_t bits;         /* IT_* */
    uint8_t klen8;        /* key length when !IT_KLONG */
    uint16_t type : 3;    /* enum obj_type */
    uint16_t fetched : 1; /* read since stored (memcached's "fetched") */
    uint16_t slab : 1;    /* allocated from src/store/slab.c, not malloc */
    uint16_t mc_won : 1;  /* a recache token (mg W) was handed out: others see Z */
    uint16_t vlen10 : 10; /* value length when !IT_VLONG */
    char data[];          /* optional fields, [vlen u32], key, value */
};

#define ITEM_VLONG 1024 /* values of this many bytes or more keep their length in a u32 */
#define ITEM_TTL6_MAX ((int64_t)1 << 48) /* expire times in 0..this-1 ms take 6 bytes */
_Static_assert(sizeof(struct item) == 8, "the item header is 8 bytes");

extern const uint8_t item_opt_size[256]; /* bytes before the key, by it->bits & IT_KEY_MASK */

/* An item's id: 35 bits the keyspace index stores instead of its address. A slab item is
 * its chunk's offset in the slab's reserved range (src/store/slab.h); any other (malloc'd:
 * large values, and every item in sanitizer builds) has ITEM_ID_MALLOC set and a number
 * that indexes a table of their addresses, kept in 8 bytes in front of the item. */
#define ITEM_ID_BITS 35
#define ITEM_ID_MALLOC ((uint64_t)1 << 34)
#define ITEM_MTAB_BITS 20 /* the table: 2^20 arrays of 2^12 addresses, allocated as needed */
extern struct item **item_mtab[1u << ITEM_MTAB_BITS];
extern char *slab_arena;

static inline uint64_t item_id(const struct item *it)
{
    if (it->slab)
        return (uint64_t)((const char *)it - slab_arena) >> 2;
    uint64_t n;
    memcpy(&n, (const char *)it - 8, 8);
    return ITEM_ID_MALLOC | n;
}

static inline struct item *item_by_id(uint64_t id)
{
    if (!(id & ITEM_ID_MALLOC))
        return (struct item *)(void *)(slab_arena + (id << 2));
    uint32_t n = (uint32_t)id;
    return item_mtab[n >> 12][n & 0xfff];
}

static inline char *item_opt(struct item *it, int which)
{
    size_t off = 0;
    if (which == IT_REF)
        return it->data;
    if (it->bits & IT_REF)
        off += 4;
    if (which == IT_FLAGS)
        return it->data + off;
    if (it->bits & IT_FLAGS)
        off += 4;
    if (which == IT_TTL)
        return it->data + off;
    if (it->bits & IT_TTL)
        off += (it->bits & IT_TTL8) ? 8 : 6;
    if (which == IT_CAS)
        return it->data + off;
    if (it->bits & IT_CAS)
        off += 8;
    return it->data + off; /* IT_KLONG */
}

/* Bytes before the key: the optional fields, then the long value length when there is one. */
static inline size_t item_key_off(const struct item *it)
{
    return item_opt_size[it->bits & IT_KEY_MASK];
}

static inline size_t item_vlen(const struct item *it)
{
    if (!(it->bits & IT_VLONG))
        return it->vlen10;
    uint32_t n;
    memcpy(&n, it->data + item_opt_size[it->bits & IT_OPT_MASK], 4);
    return n;
}

/* Whether a value of n bytes keeps the item's layout (the same vlen form): it may then be
 * resized in place. */
static inline int item_vlen_same_form(const struct item *it, size_t n)
{
    return !(it->bits & IT_VLONG) == !(n >= ITEM_VLONG);
}

/* Set the value length; n must keep the form (item_vlen_same_form). */
static inline void item_set_vlen(struct item *it, size_t n)
{
    if (!(it->bits & IT_VLONG)) {
        it->vlen10 = (uint16_t)n;
    } else {
        uint32_t v = (uint32_t)n;
        memcpy(it->data + item_opt_size[it->bits & IT_OPT_MASK], &v, 4);
    }
}

static inline size_t item_klen(const struct item *it)
{
    if (it->bits & IT_KLONG) {
        uint32_t n;
        memcpy(&n, it->data + item_opt_size[it->bits & (IT_OPT_MASK & ~IT_KLONG)], 4);
        return n;
    }
    return it->klen8;
}

static inline char *item_key(struct item *it)
{
    return (char *)it->data + item_key_off(it);
}

static inline char *item_value(struct item *it)
{
    return item_key(it) + item_klen(it);
}

static inline int64_t item_expire(struct item *it)
{
    if (!(it->bits & IT_TTL))
        return 0;
    if (it->bits & IT_TTL8) {
        int64_t v;
        memcpy(&v, item_opt(it, IT_TTL), 8);
        return v;
    }
    uint64_t v = 0;
    memcpy(&v, item_opt(it, IT_TTL), 6);
    return (int64_t)v;
}

/* The optional-field bits an expire time ms needs (0 for none). */
static inline uint8_t item_ttl_bits(int64_t ms)
{
    if (!ms)
        return 0;
    return (ms >= 0 && ms < ITEM_TTL6_MAX) ? IT_TTL : IT_TTL | IT_TTL8;
}

/* Whether an item with IT_TTL can hold expire time ms in its field. */
static inline int item_expire_fits(const struct item *it, int64_t ms)
{
    return (it->bits & IT_TTL8) || (ms >= 0 && ms < ITEM_TTL6_MAX);
}

/* Store ms in the expire field; the item has IT_TTL and item_expire_fits(it, ms). */
static inline void item_set_expire_field(struct item *it, int64_t ms)
{
    memcpy(item_opt(it, IT_TTL), &ms, (it->bits & IT_TTL8) ? 8 : 6);
}

static inline uint32_t item_mcflags(struct item *it)
{
    uint32_t v;
    if (!(it->bits & IT_FLAGS))
        return 0;
    memcpy(&v, item_opt(it, IT_FLAGS), 4);
    return v;
}

static inline uint64_t item_cas_field(struct item *it)
{
    uint64_t v;
    if (!(it->bits & IT_CAS))
        return 0;
    memcpy(&v, item_opt(it, IT_CAS), 8);
    return v;
}

/* The item changed in place: forget its CAS value, so the next one handed out (gets, WATCH)
 * differs from every earlier one. Under the item's stripe lock. */
static inline void item_cas_invalidate(struct item *it)
{
    if (it->bits & IT_CAS)
        memset(item_opt(it, IT_CAS), 0, 8);
}

static inline void *item_ptr(struct item *it)
{
    void *p;
    memcpy(&p, item_value(it), sizeof(p));
    return p;
}

/* Allocate an item with room for the value (uninitialised). bits selects optional fields
 * (IT_REF and IT_KLONG are added automatically). Fields are zeroed, except the refcount = 1.
 * Returns NULL when out of memory. Any thread. */
struct item *item_create(uint8_t type, const char *key, size_t klen, size_t vlen, uint8_t bits);
/* Copy it into a new item with optional fields bits (values kept where both have them).
 * For non-string types the pointer value is moved, not deep-copied. */
struct item *item_recreate(struct item *it, uint8_t bits);
/* Usable size of the allocation (what memory accounting counts). */
size_t item_alloc_size(struct item *it);
/* Bytes from it to the end of its allocation (what a value may grow into in place). */
size_t item_room(struct item *it);
/* Bytes of header, optional fields, key and value (what was asked of the allocator). */
static inline size_t item_total_size(struct item *it)
{
    return sizeof(*it) + item_key_off(it) + item_klen(it) + item_vlen(it);
}
/* Drop one reference (or free when not refcounted); frees the value structure of non-string
 * types through the destructor table. */
void item_release(struct item *it);
/* Take one more reference of an IT_REF item. */
void item_ref(struct item *it);
/* item_release for a void pointer (the release callback of a connection's output reference,
 * conn_add_ref). */
void item_unref(void *it);
/* Destructor for the pointer value of a type, set by the type's module at setup. */
typedef void item_free_fn(void *ptr);
void item_set_destructor(int type, item_free_fn *fn);
/* Bytes held by the type structure behind a pointer value (for MEMORY USAGE / accounting). */
typedef size_t item_size_fn(void *ptr);
void item_set_sizer(int type, item_size_fn *fn);
size_t item_value_mem(struct item *it);
/* 1 when the value may be modified in place (no reader holds a reference). Under the lock. */
int item_writable(struct item *it);

#endif
