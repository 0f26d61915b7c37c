#define _GNU_SOURCE
#include "store/ht.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/util.h"
#include "store/item.h"

/* A used slot: the item id (bits 0..34), 2 tag bits (35, 36: hash bits 62..63; the home
 * slot uses bits 20..51) and the entry's distance from its home slot (37..39; DMAX means
 * DMAX or more: the exact figure then comes from the item's hash). Robin Hood order: along
 * a probe sequence no entry is nearer its home than the key looked for would be at that
 * slot, so a miss stops at the first entry nearer its home than that, after a few slots at
 * 85% full (linear probing without that order scans ~23). An entry the key could be at has
 * the key's home (its distance equals the probe's) and tag: ~1 in 4 of those at most.
 * A used slot is never 0: a slab item's id is past its page's header, and every other id
 * has ITEM_ID_MALLOC. */
#define TAG_SHIFT ITEM_ID_BITS
#define TAG(h) (((h) >> 62) << TAG_SHIFT)
#define DIST_SHIFT (ITEM_ID_BITS + 2)
#define DMAX 7u
#define DIST(s) ((uint32_t)((s) >> DIST_SHIFT))
#define WITH_DIST(s, d) \
    (((s) & ~(7ULL << DIST_SHIFT)) | ((uint64_t)((d) < DMAX ? (d) : DMAX) << DIST_SHIFT))
_Static_assert(ITEM_ID_BITS + 5 == 8 * HT_SLOT, "a slot is 40 bits");
/* multiply-shift: 32 hash bits above the stripe bits scaled to [0, size) */
#define HOME(h, size) ((uint32_t)(((uint64_t)(uint32_t)((h) >> HT_SLOT_BITS) * (size)) >> 32))
/* grow past HT_LOAD_NUM / HT_LOAD_DEN full */
#define HT_LOAD_NUM 17
#define HT_LOAD_DEN 20
#define NEXT(i, size) ((i) + 1 == (size) ? 0 : (i) + 1)
#define RESIZE_AHEAD 16 /* slots whose items a resize prefetches ahead of the one it moves */

/* n entries would pass the load limit of a table of size slots. */
static inline int over_load(uint64_t n, uint32_t size)
{
    return n * HT_LOAD_DEN > (uint64_t)size * HT_LOAD_NUM;
}

static inline void put(uint8_t *slots, uint32_t i, uint64_t v)
{
    memcpy(slots + (size_t)i * HT_SLOT, &v, HT_SLOT);
}

static inline size_t array_bytes(uint32_t nslots)
{
    return (size_t)nslots * HT_SLOT + 3;
}

static inline uint64_t item_hash(struct item *it)
{
    return util_hash(item_key(it), item_klen(it));
}

/* The exact distance of the entry s in slot i from its home slot. */
static inline uint32_t dist_of(uint64_t s, uint32_t i, uint32_t size)
{
    uint32_t d = DIST(s);
    if (d < DMAX)
        return d;
    uint32_t home = HOME(item_hash(ht_slot_item(s)), size);
    return i >= home ? i - home : i + size - home;
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

/* The probe of a key: its next slot and what an entry there must carry in the 5 bits above
 * its id (distance capped at DMAX, then the tag) to be a candidate. One compare finds a
 * candidate, and one the entry that ends the search. */
struct probe {
    uint32_t i, want;
};

static inline struct probe probe_start(const struct ht *t, uint64_t hash)
{
    return (struct probe){HOME(hash, t->size), (uint32_t)(hash >> 62)};
}

/* Past a slot that does not hold the key. */
static inline void probe_skip(const struct ht *t, struct probe *p)
{
    p->i = NEXT(p->i, t->size);
    p->want += (p->want >> 2) < DMAX ? 4 : 0;
}

/* Advance p to the next slot that may hold the key; 0 when none does (an empty slot, or an
 * entry nearer its home than the key would be there: Robin Hood order). */
static inline int probe_next(const struct ht *t, struct probe *p)
{
    for (;;) {
        uint64_t s = ht_slot(t->slots, p->i);
        uint32_t hi = (uint32_t)(s >> TAG_SHIFT);
        if (hi == p->want && s)
            return 1;
        if (!s || (hi >> 2) < (p->want >> 2))
            return 0;
        probe_skip(t, p);
    }
}

void ht_prefetch(const struct ht *t, uint64_t hash)
{
    if (!t->slots)
        return;
    struct probe p = probe_start(t, hash);
    if (probe_next(t, &p)) {
        struct item *it = ht_slot_item(ht_slot(t->slots, p.i));
        /* header, key and a short value usually straddle two lines */
        __builtin_prefetch(it, 1);
        __builtin_prefetch((char *)it + 64, 1);
    }
}

struct item *ht_find(struct ht *t, uint64_t hash, const char *key, size_t klen, uint32_t *pos)
{
    if (!t->slots)
        return NULL;
    struct probe p = probe_start(t, hash);
    while (probe_next(t, &p)) {
        struct item *it = ht_slot_item(ht_slot(t->slots, p.i));
        if (item_klen(it) == klen && memcmp(item_key(it), key, klen) == 0) {
            *pos = p.i;
            return it;
        }
        probe_skip(t, &p);
    }
    return NULL;
}

/* Robin Hood insertion of s (its distance bits ignored) with home slot home: it takes the
 * first slot whose entry is nearer its own home, and that entry moves on the same way. */
static void place(uint8_t *slots, uint32_t size, uint32_t home, uint64_t s)
{
    uint32_t i = home, d = 0;
    for (;;) {
        uint64_t r = ht_slot(slots, i);
        if (r == 0) {
            put(slots, i, WITH_DIST(s, d));
            return;
        }
        uint32_t rd = dist_of(r, i, size);
        if (rd < d) {
            put(slots, i, WITH_DIST(s, d));
            s = r;
            d = rd;
        }
        i = NEXT(i, size);
        d++;
    }
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
    /* each entry's home comes from its key's hash, so every item is read: prefetch the
     * items RESIZE_AHEAD slots ahead, and their cache misses overlap instead of coming one
     * at a time */
    uint32_t pf = 0;
    for (uint32_t i = 0; i < old; i++) {
        for (; pf < old && pf < i + RESIZE_AHEAD; pf++) {
            uint64_t a = ht_slot(t->slots, pf);
            if (a) {
                const char *it = (const char *)ht_slot_item(a);
                __builtin_prefetch(it);
                __builtin_prefetch(it + 63); /* a key that crosses into the next line */
            }
        }
        uint64_t s = ht_slot(t->slots, i);
        if (s) {
            uint64_t h = item_hash(ht_slot_item(s));
            place(ns, nslots, HOME(h, nslots), s);
        }
    }
    if (t->slots)
        alloc_table_free(t->slots, array_bytes(old));
    set_array(t, ns, nslots);
    return 0;
}

/* The slot count of the smallest table with at least n slots whose array fills its
 * allocation's size class. */
static uint32_t fit_slots(uint64_t n)
{
    size_t bytes = alloc_table_size(array_bytes((uint32_t)n));
    uint64_t slots = (bytes - 3) / HT_SLOT;
    return (uint32_t)(slots > UINT32_MAX - 1 ? UINT32_MAX - 1 : slots);
}

int ht_insert(struct ht *t, uint64_t hash, struct item *it)
{
    uint32_t size = ht_size(t);

    if (over_load((uint64_t)t->count + 1, size)) {
        /* the next size class at least an eighth larger, and with room for this item */
        uint64_t want = (uint64_t)size + size / 8 + 1;
        uint64_t need = (uint64_t)(t->count + 1) * HT_LOAD_DEN / HT_LOAD_NUM + 1;
        if (resize(t, fit_slots(want > need ? want : need)))
            return -1;
    }
    place(t->slots, t->size, HOME(hash, t->size), TAG(hash) | item_id(it));
    COUNTER_ADD(t->count, 1);
    return 0;
}

int ht_reserve(struct ht *t, uint64_t n)
{
    uint64_t need;

    if (n > UINT32_MAX)
        n = UINT32_MAX; /* a table's limit; the products below stay in 64 bits */
    need = n * HT_LOAD_DEN / HT_LOAD_NUM + 1;
    if (n == 0 || !over_load(n, ht_size(t)))
        return 0;
    return resize(t, fit_slots(need > UINT32_MAX - 1 ? UINT32_MAX - 1 : need));
}

void ht_replace_at(struct ht *t, uint32_t pos, struct item *it)
{
    put(t->slots, pos, (ht_slot(t->slots, pos) & ~HT_ID_MASK) | item_id(it));
}

void ht_delete_at(struct ht *t, uint32_t pos)
{
    uint32_t size = t->size, hole = pos, i = NEXT(pos, size);

    COUNTER_ADD(t->count, -1);
    /* Backward shift: every following entry away from its home moves back one slot, until
     * an empty slot or an entry at its home. */
    for (;;) {
        uint64_t s = ht_slot(t->slots, i);
        uint32_t d;
        if (s == 0 || (d = dist_of(s, i, size)) == 0)
            break;
        put(t->slots, hole, WITH_DIST(s, d - 1));
        hole = i;
        i = NEXT(i, size);
    }
    put(t->slots, hole, 0);
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
        resize(t, fit_slots(n < 8 ? 8 : n));
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

void ht_forget(struct ht *t)
{
    set_array(t, NULL, 0);
    COUNTER_ADD(t->count, -t->count);
    COUNTER_ADD(t->nvolatile, -t->nvolatile);
}

size_t ht_mem(const struct ht *t)
{
    return t->slots ? malloc_usable_size(t->slots) : 0;
}
