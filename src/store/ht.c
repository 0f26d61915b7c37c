#define _GNU_SOURCE
#include "store/ht.h"

#include <malloc.h>
#include <stdlib.h>
/* a slot is never 0 when used: a slab item's id is past its page's header, and every other
 * id has ITEM_ID_MALLOC */
#include <string.h>

#include "core/alloc.h"
#include "core/util.h"
#include "store/item.h"

/* 9 hash bits (the top ones; the home slot uses bits 20..51) above the item id */
#define TAG(h) (((h) >> 55) << ITEM_ID_BITS)
#define TAG_MASK (0x1ffULL << ITEM_ID_BITS)
_Static_assert(ITEM_ID_BITS + 9 == 48, "a slot is 48 bits");
/* multiply-shift: 32 hash bits above the stripe bits scaled to [0, size) */
#define HOME(h, size) ((uint32_t)(((uint64_t)(uint32_t)((h) >> HT_SLOT_BITS) * (size)) >> 32))
#define NEXT(i, size) ((i) + 1 == (size) ? 0 : (i) + 1)

static inline void put(uint8_t *slots, uint32_t i, uint64_t v)
{
    memcpy(slots + (size_t)i * HT_SLOT, &v, HT_SLOT);
}

static inline size_t array_bytes(uint32_t nslots)
{
    return (size_t)nslots * HT_SLOT + 2;
}

void ht_prefetch_slot(const struct ht *t, uint64_t hash)
{
    uint8_t *slots = __atomic_load_n(&t->slots, __ATOMIC_RELAXED);
    uint32_t size = __atomic_load_n(&t->size, __ATOMIC_RELAXED);

    /* slots and size may come from two different resizes: the address is then wrong, which
     * a prefetch tolerates (it never faults) */
    if (slots)
        __builtin_prefetch(slots + (size_t)HOME(hash, size) * HT_SLOT);
}

void ht_prefetch(const struct ht *t, uint64_t hash)
{
    uint64_t tag = TAG(hash);
    uint32_t i;

    if (!t->slots)
        return;
    i = HOME(hash, t->size);
    for (;;) {
        uint64_t s = ht_slot(t->slots, i);
        if (s == 0)
            return;
        if ((s & TAG_MASK) == tag) {
            /* header, key and a short value usually straddle two lines */
            __builtin_prefetch(ht_slot_item(s), 1);
            __builtin_prefetch((char *)ht_slot_item(s) + 64, 1);
            return;
        }
        i = NEXT(i, t->size);
    }
}

static inline uint64_t item_hash(struct item *it)
{
    return util_hash(item_key(it), item_klen(it));
}

struct item *ht_find(struct ht *t, uint64_t hash, const char *key, size_t klen, uint32_t *pos)
{
    uint64_t tag = TAG(hash);
    uint32_t i;

    if (!t->slots)
        return NULL;
    i = HOME(hash, t->size);
    for (;;) {
        uint64_t s = ht_slot(t->slots, i);
        if (s == 0)
            return NULL;
        if ((s & TAG_MASK) == tag) {
            struct item *it = ht_slot_item(s);
            if (item_klen(it) == klen && memcmp(item_key(it), key, klen) == 0) {
                *pos = i;
                return it;
            }
        }
        i = NEXT(i, t->size);
    }
}

static void place(uint8_t *slots, uint32_t size, uint64_t hash, uint64_t s)
{
    uint32_t i = HOME(hash, size);
    while (ht_slot(slots, i))
        i = NEXT(i, size);
    put(slots, i, s);
}

/* slots and size are read without the lock by ht_prefetch_slot: atomic stores (plain moves) */
static void set_array(struct ht *t, uint8_t *slots, uint32_t size)
{
    __atomic_store_n(&t->slots, slots, __ATOMIC_RELAXED);
    __atomic_store_n(&t->size, size, __ATOMIC_RELAXED);
    t->sweep = 0;
}

static int resize(struct ht *t, uint32_t nslots)
{
    uint8_t *ns = alloc_table(array_bytes(nslots));
    uint32_t old = ht_size(t);

    if (!ns)
        return -1;
    for (uint32_t i = 0; i < old; i++) {
        uint64_t s = ht_slot(t->slots, i);
        if (s) {
            uint64_t h = item_hash(ht_slot_item(s));
            place(ns, nslots, h, s);
        }
    }
    if (t->slots)
        alloc_table_free(t->slots, array_bytes(old));
    set_array(t, ns, nslots);
    return 0;
}

int ht_insert(struct ht *t, uint64_t hash, struct item *it)
{
    uint32_t size = ht_size(t);

    if ((uint64_t)(t->count + 1) * 5 > (uint64_t)size * 4) {
        if (resize(t, size ? size + size / 2 : 4))
            return -1;
    }
    place(t->slots, t->size, hash, TAG(hash) | item_id(it));
    COUNTER_ADD(t->count, 1);
    return 0;
}

void ht_replace_at(struct ht *t, uint32_t pos, struct item *it)
{
    put(t->slots, pos, (ht_slot(t->slots, pos) & TAG_MASK) | item_id(it));
}

void ht_delete_at(struct ht *t, uint32_t pos)
{
    uint32_t size = t->size, hole = pos, i = pos;

    put(t->slots, pos, 0);
    COUNTER_ADD(t->count, -1);
    /* Backward shift: move back every later entry of the cluster whose home slot is not
     * cyclically within (hole, i]. */
    for (;;) {
        uint64_t s;
        uint32_t home;
        i = NEXT(i, size);
        s = ht_slot(t->slots, i);
        if (s == 0)
            break;
        home = HOME(item_hash(ht_slot_item(s)), size);
        if ((i + size - home) % size >= (i + size - hole) % size) {
            put(t->slots, hole, s);
            put(t->slots, i, 0);
            hole = i;
        }
    }
}

void ht_maybe_shrink(struct ht *t)
{
    uint32_t size = ht_size(t);

    if (t->count == 0 && size) {
        alloc_table_free(t->slots, array_bytes(size));
        set_array(t, NULL, 0);
    } else if (size > 16 && (uint64_t)t->count * 4 < size) {
        /* under 25% full: shrink to about 50% */
        uint32_t n = t->count * 2;
        resize(t, n < 8 ? 8 : n);
    }
}

void ht_deinit(struct ht *t)
{
    if (t->slots)
        alloc_table_free(t->slots, array_bytes(t->size));
    set_array(t, NULL, 0);
    COUNTER_ADD(t->count, -t->count);
    COUNTER_ADD(t->nvolatile, -t->nvolatile);
}

size_t ht_mem(const struct ht *t)
{
    return t->slots ? malloc_usable_size(t->slots) : 0;
}
