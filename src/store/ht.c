#define _GNU_SOURCE
#include "store/ht.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "store/item.h"

#define TAG(h) ((h) & 0xffff000000000000ULL)
#define HOME(h, mask) ((uint32_t)((h) >> HT_SLOT_BITS) & (mask))

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
    i = HOME(hash, t->mask);
    for (;;) {
        uint64_t s = t->slots[i];
        if (s == 0)
            return NULL;
        if ((s & 0xffff000000000000ULL) == tag) {
            struct item *it = ht_slot_item(s);
            if (item_klen(it) == klen && memcmp(item_key(it), key, klen) == 0) {
                *pos = i;
                return it;
            }
        }
        i = (i + 1) & t->mask;
    }
}

static void place(uint64_t *slots, uint32_t mask, uint64_t hash, uint64_t s)
{
    uint32_t i = HOME(hash, mask);
    while (slots[i])
        i = (i + 1) & mask;
    slots[i] = s;
}

static int resize(struct ht *t, uint32_t nslots)
{
    uint64_t *ns = calloc(nslots, sizeof(*ns));
    uint32_t old = ht_size(t);

    if (!ns)
        return -1;
    for (uint32_t i = 0; i < old; i++) {
        uint64_t s = t->slots[i];
        if (s) {
            uint64_t h = item_hash(ht_slot_item(s));
            place(ns, nslots - 1, h, s);
        }
    }
    free(t->slots);
    t->slots = ns;
    t->mask = nslots - 1;
    t->sweep = 0;
    return 0;
}

int ht_insert(struct ht *t, uint64_t hash, struct item *it)
{
    uint32_t size = ht_size(t);

    if ((uint64_t)(t->count + 1) * 5 > (uint64_t)size * 4) {
        if (resize(t, size ? size * 2 : 8))
            return -1;
    }
    place(t->slots, t->mask, hash, TAG(hash) | (uint64_t)(uintptr_t)it);
    t->count++;
    return 0;
}

void ht_replace_at(struct ht *t, uint32_t pos, struct item *it)
{
    t->slots[pos] = (t->slots[pos] & 0xffff000000000000ULL) | (uint64_t)(uintptr_t)it;
}

void ht_delete_at(struct ht *t, uint32_t pos)
{
    uint32_t mask = t->mask, hole = pos, i = pos;

    t->slots[pos] = 0;
    t->count--;
    /* Backward shift: move back every later entry of the cluster whose home slot is not
     * cyclically within (hole, i]. */
    for (;;) {
        uint64_t s;
        uint32_t home;
        i = (i + 1) & mask;
        s = t->slots[i];
        if (s == 0)
            break;
        home = HOME(item_hash(ht_slot_item(s)), mask);
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            t->slots[hole] = s;
            t->slots[i] = 0;
            hole = i;
        }
    }
}

void ht_maybe_shrink(struct ht *t)
{
    uint32_t size = ht_size(t);

    if (size > 8 && (uint64_t)t->count * 8 < size) {
        uint32_t n = size;
        while (n > 8 && (uint64_t)t->count * 4 < n / 2 * 1)
            n /= 2;
        if (n < 8)
            n = 8;
        resize(t, n);
    } else if (t->count == 0 && size) {
        free(t->slots);
        t->slots = NULL;
        t->mask = 0;
        t->sweep = 0;
    }
}

void ht_deinit(struct ht *t)
{
    free(t->slots);
    memset(t, 0, sizeof(*t));
}

size_t ht_mem(const struct ht *t)
{
    return t->slots ? malloc_usable_size(t->slots) : 0;
}
