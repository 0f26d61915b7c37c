/* Open-addressing hash table of items for one stripe and one database: linear probing in
 * Robin Hood order, 5-byte slots holding the item's 35-bit id (src/store/item.h), 2 hash bits
 * as a tag and the entry's distance from its home slot (3 bits; see ht.c), backward-shift
 * deletion (no tombstones). Sizes are not powers of two (home slot by multiply-shift): the
 * array grows to the allocator's next size class (about 1.2x; every byte of it is slots) and
 * stays between ~70% and 85% full, so a slot costs ~6.5 bytes per item.
 * Not thread-safe: the caller holds the stripe lock (hence no _locked suffix here). */
#ifndef TC_HT_H
#define TC_HT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store/item.h"

struct ht {
    uint8_t *slots;     /* 5-byte tagged item ids (0 = empty) and 3 bytes of padding;
                         * NULL until first insert */
    uint32_t size;      /* number of slots (0 when slots == NULL) */
    uint32_t count;     /* items held */
    uint32_t nvolatile; /* items with an expire time */
    uint32_t sweep;     /* active-expire cursor (slot index) */
};

#define HT_SLOT_BITS 20

/* Counters written under the stripe lock and read without it (INFO, DBSIZE, samplers): a
 * relaxed atomic store keeps those reads well-defined (and ThreadSanitizer quiet) at the cost
 * of a plain store. */
#define COUNTER_ADD(x, d) __atomic_store_n(&(x), (x) + (d), __ATOMIC_RELAXED) /* hash bits below this pick the stripe; the slot uses the rest */

#define HT_SLOT 5
#define HT_ID_MASK ((1ULL << ITEM_ID_BITS) - 1)

/* The 40 bits of slot i (an 8-byte load: the array has 3 bytes of padding). */
static inline uint64_t ht_slot(const uint8_t *slots, uint32_t i)
{
    uint64_t v;
    memcpy(&v, slots + (size_t)i * HT_SLOT, 8);
    return v & 0xffffffffffULL;
}

static inline struct item *ht_slot_item(uint64_t s)
{
    return item_by_id(s & HT_ID_MASK);
}

/* The item in slot i of t, or NULL when the slot is empty. */
static inline struct item *ht_item_at(const struct ht *t, uint32_t i)
{
    uint64_t s = ht_slot(t->slots, i);
    return s ? ht_slot_item(s) : NULL;
}

static inline uint32_t ht_size(const struct ht *t)
{
    return t->size;
}

/* The slot after i, wrapping. */
static inline uint32_t ht_next(const struct ht *t, uint32_t i)
{
    return i + 1 == t->size ? 0 : i + 1;
}

/* A slot index from 32 random bits. */
static inline uint32_t ht_reduce(const struct ht *t, uint32_t r)
{
    return (uint32_t)(((uint64_t)r * t->size) >> 32);
}

/* Find key; returns the item and sets *pos, or NULL. */
struct item *ht_find(struct ht *t, uint64_t hash, const char *key, size_t klen, uint32_t *pos);
/* Prefetch the home slot of hash. The only function that may be called WITHOUT the lock
 * (a pipelined batch, before it runs): it reads just the array pointer and size, with atomic
 * loads, and never dereferences them. */
void ht_prefetch_slot(const struct ht *t, uint64_t hash);
/* Prefetch the item ht_find would compare first for hash (reads the slots). */
void ht_prefetch(const struct ht *t, uint64_t hash);
/* Insert an item whose key is not present. Grows first when needed. Returns 0 or -1 (OOM). */
int ht_insert(struct ht *t, uint64_t hash, struct item *it);
/* Grow (never shrink) so that n entries fit without another resize: a loader that knows how
 * many keys come saves the rehashes of growing one eighth at a time. Returns 0 or -1 (OOM). */
int ht_reserve(struct ht *t, uint64_t n);
/* Put it in place of the item at pos (same key). */
void ht_replace_at(struct ht *t, uint32_t pos, struct item *it);
/* Remove the item at pos (not freed). Entries after it may move back by one slot. */
void ht_delete_at(struct ht *t, uint32_t pos);
/* Shrink when mostly empty (call after deletions). */
void ht_maybe_shrink(struct ht *t);
/* Free the slot array (not the items). */
void ht_deinit(struct ht *t);
/* Leave t empty without freeing its slot array or items (a copy of *t taken before owns
 * them now: lazyfree_tables). */
void ht_forget(struct ht *t);
/* Bytes used by the slot array. */
size_t ht_mem(const struct ht *t);

#endif
