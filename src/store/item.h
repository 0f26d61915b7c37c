/* An item is one allocation holding a compact header, optional fields, the key and the value.
 * Optional fields cost bytes only when present:
 *   [refcnt u32 if IT_REF][mcflags u32 if IT_FLAGS]
 *   [expire if IT_TTL: u32, u48 or i64 ms, see below][cas u64 if IT_CAS]
 *   [klen u32 if IT_KLONG][vlen u32 if IT_VLONG] key value
 * Strings keep their bytes inline; other types keep a pointer to their structure as value.
 * Items are owned by the stripe table that holds them; the stripe lock protects every field
 * except the refcount (atomic, only for large values read without the lock). */
#ifndef TC_ITEM_H
#define TC_ITEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store/slab.h"

enum obj_type { OBJ_STRING = 0, OBJ_LIST = 1, OBJ_SET = 2, OBJ_ZSET = 3, OBJ_HASH = 4, OBJ_STREAM = 5 };

#define IT_REF 0x01   /* has an atomic reference count (large values) */
#define IT_FLAGS 0x02 /* has memcached client flags */
#define IT_CAS 0x08   /* has a CAS value */
#define IT_KLONG 0x10 /* key length > 255, stored as u32 */
#define IT_VLONG 0x80 /* value length >= ITEM_VLONG, stored as u32 after the optional fields */
/* The expire time field (0 = persistent) in one of three forms, two bits (0x04, 0x40):
 * IT_TTL4 a u32 of ms since item_ttl_base (times within ~49.7 days of the process's start;
 * 0 is no expire time),
 * IT_TTL6 a u48 of ms since the epoch (to the year 10889), IT_TTL8 an i64 (any other). Each
 * form's range holds the one before. it->bits & IT_TTL: the item has an expire field. */
#define IT_TTL4 0x40
#define IT_TTL6 0x04
#define IT_TTL8 0x44
#define IT_TTL 0x44
#define IT_OPT_MASK (IT_REF | IT_FLAGS | IT_TTL | IT_CAS | IT_KLONG)
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
#define ITEM_TTL6_MAX ((int64_t)1 << 48) /* expire times in 0..this-1 ms fit IT_TTL6 */
/* The start of IT_TTL4's range: an hour before the process started, in ms since the epoch. */
extern int64_t item_ttl_base;
_Static_assert(sizeof(struct item) == 8, "the item header is 8 bytes");

extern const uint8_t item_opt_size[256]; /* bytes before the key, by it->bits & IT_KEY_MASK */

/* An item's id: 35 bits the keyspace index stores instead of its address. A slab item is
 * its chunk's offset in the slab's reserved range (src/store/slab.h); any other (malloc'd:
 * large values, and every item in sanitizer builds) has ITEM_ID_MALLOC set and a number
 * that indexes a table of their addresses, kept in 8 bytes in front of the item. */
#define ITEM_ID_BITS 35
#define ITEM_ID_MALLOC ((uint64_t)1 << 34)
#define ITEM_MTAB_BITS 20 /* the table: 2^20 arrays of 2^12 addresses, allocated as needed */
#define ITEM_MTAB_SHIFT 12
extern struct item **item_mtab[1u << ITEM_MTAB_BITS];

/* The table's entry for number n (its array exists). */
static inline struct item **item_mtab_entry(uint32_t n)
{
    return &item_mtab[n >> ITEM_MTAB_SHIFT][n & ((1u << ITEM_MTAB_SHIFT) - 1)];
}

static inline uint64_t item_id(const struct item *it)
{
    if (it->slab)
        return slab_off(it);
    uint64_t n;
    memcpy(&n, (const char *)it - 8, 8);
    return ITEM_ID_MALLOC | n;
}

static inline struct item *item_by_id(uint64_t id)
{
    if (!(id & ITEM_ID_MALLOC))
        return (struct item *)slab_at(id);
    return *item_mtab_entry((uint32_t)id);
}

/* Bytes of the expire field for the bits of an item (0, 4, 6 or 8). */
static inline size_t item_ttl_size(uint8_t bits)
{
    switch (bits & IT_TTL) {
    case IT_TTL4:
        return 4;
    case IT_TTL6:
        return 6;
    case IT_TTL8:
        return 8;
    default:
        return 0;
    }
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
    off += item_ttl_size(it->bits);
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
    switch (it->bits & IT_TTL) {
    case IT_TTL4: {
        uint32_t v;
        memcpy(&v, item_opt(it, IT_TTL), 4);
        return v ? item_ttl_base + v : 0;
    }
    case IT_TTL6: {
        uint64_t v = 0;
        memcpy(&v, item_opt(it, IT_TTL), 6);
        return (int64_t)v;
    }
    case IT_TTL8: {
        int64_t v;
        memcpy(&v, item_opt(it, IT_TTL), 8);
        return v;
    }
    default:
        return 0;
    }
}

/* The expire field form an expire time ms needs (0 for none): the smallest that holds it. */
static inline uint8_t item_ttl_bits(int64_t ms)
{
    if (!ms)
        return 0;
    if ((uint64_t)ms - (uint64_t)item_ttl_base - 1 < ((uint64_t)1 << 32) - 1)
        return IT_TTL4;
    return (ms >= 0 && ms < ITEM_TTL6_MAX) ? IT_TTL6 : IT_TTL8;
}

/* The wider of two expire field forms (each form's range holds the smaller ones'). */
static inline uint8_t item_ttl_wider(uint8_t a, uint8_t b)
{
    return item_ttl_size(a) >= item_ttl_size(b) ? (uint8_t)(a & IT_TTL) : (uint8_t)(b & IT_TTL);
}

/* Whether an item with an expire field can hold expire time ms in it. */
static inline int item_expire_fits(const struct item *it, int64_t ms)
{
    return item_ttl_size(it->bits) >= item_ttl_size(item_ttl_bits(ms));
}

/* Store ms in the expire field; the item has one and item_expire_fits(it, ms). */
static inline void item_set_expire_field(struct item *it, int64_t ms)
{
    if ((it->bits & IT_TTL) == IT_TTL4) {
        uint32_t v = ms ? (uint32_t)((uint64_t)ms - (uint64_t)item_ttl_base) : 0; /* 0: none */
        memcpy(item_opt(it, IT_TTL), &v, 4);
    } else {
        memcpy(item_opt(it, IT_TTL), &ms, item_ttl_size(it->bits));
    }
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
/* The destructor of a type (NULL for strings), for lazyfree.c. */
item_free_fn *item_destructor(int type);
/* Free the item's own allocation only, not the structure its pointer value names (lazyfree.c
 * frees that later); no reference count is looked at. Any thread. */
void item_free_shell(struct item *it);
/* Bytes held by the type structure behind a pointer value (for MEMORY USAGE / accounting). */
typedef size_t item_size_fn(void *ptr);
void item_set_sizer(int type, item_size_fn *fn);
size_t item_value_mem(struct item *it);
/* 1 when the value may be modified in place (no reader holds a reference). Under the lock. */
int item_writable(struct item *it);

#endif
