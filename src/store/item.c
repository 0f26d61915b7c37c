#define _GNU_SOURCE
#include "store/item.h"
#include "store/slab.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "core/forksafe.h"

#define O(b) ((((b) & IT_REF) ? 4 : 0) + (((b) & IT_FLAGS) ? 4 : 0) + \
              (((b) & IT_TTL) == IT_TTL4   ? 4                                              \
               : ((b) & IT_TTL) == IT_TTL6 ? 6                                              \
               : ((b) & IT_TTL)            ? 8                                              \
                                           : 0) +                                           \
              (((b) & IT_CAS) ? 8 : 0) + (((b) & IT_KLONG) ? 4 : 0) + (((b) & IT_VLONG) ? 4 : 0))
#define O4(b) O(b), O(b + 1), O(b + 2), O(b + 3)
#define O16(b) O4(b), O4(b + 4), O4(b + 8), O4(b + 12)
#define O64(b) O16(b), O16(b + 16), O16(b + 32), O16(b + 48)
const uint8_t item_opt_size[256] = {O64(0), O64(64), O64(128), O64(192)};

struct item **item_mtab[1u << ITEM_MTAB_BITS];
int64_t item_ttl_base;

/* Before any item exists, and never changed after: the clock an hour ago. */
__attribute__((constructor)) static void ttl_base_init(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    item_ttl_base = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - 3600 * 1000;
}

/* The id table of malloc'd items: a free entry holds the next free number, shifted left by
 * one with the low bit set (an item address is even). */
#define MTAB_CHUNK (1u << ITEM_MTAB_SHIFT) /* 32 KiB: one large value stored pays that */
static pthread_mutex_t mtab_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t mtab_free = UINT32_MAX; /* first free number (UINT32_MAX: none) */
static uint32_t mtab_next;              /* numbers below this were handed out */

static pthread_once_t mtab_once = PTHREAD_ONCE_INIT;

/* A fork child (SCRIPT DEBUG YES, a fork snapshot) never finds the table's lock held by a
 * thread it does not have: a leaf lock (nothing is allocated under it), registered at the
 * first malloc'd item, after the allocator's own handlers. */
static void mtab_init(void)
{
    fork_protect(&mtab_lock);
}

/* A number for it, stored in the table and in front of it; -1 when out of memory. */
static int mtab_add(struct item *it)
{
    struct item **spare = NULL;
    uint32_t n;

    pthread_once(&mtab_once, mtab_init);
    for (;;) {
        pthread_mutex_lock(&mtab_lock);
        if (mtab_free != UINT32_MAX) {
            n = mtab_free;
            mtab_free = (uint32_t)((uintptr_t)*item_mtab_entry(n) >> 1);
            break;
        }
        n = mtab_next;
        struct item ***array = &item_mtab[n >> ITEM_MTAB_SHIFT];
        if (!*array && spare) {
            *array = spare;
            spare = NULL;
        }
        if (*array) {
            mtab_next++;
            break;
        }
        /* a new array of numbers, allocated outside the lock */
        pthread_mutex_unlock(&mtab_lock);
        if (n >> ITEM_MTAB_SHIFT >= (1u << ITEM_MTAB_BITS) - 1)
            return -1;
        if (!(spare = calloc(MTAB_CHUNK, sizeof(*spare))))
            return -1;
    }
    *item_mtab_entry(n) = it;
    pthread_mutex_unlock(&mtab_lock);
    free(spare); /* another thread added the array meanwhile */
    uint64_t v = n;
    memcpy((char *)it - 8, &v, 8);
    return 0;
}

static void mtab_del(struct item *it)
{
    uint64_t v;
    memcpy(&v, (char *)it - 8, 8);
    uint32_t n = (uint32_t)v;
    pthread_mutex_lock(&mtab_lock);
    *item_mtab_entry(n) = (struct item *)(uintptr_t)(((uintptr_t)mtab_free << 1) | 1);
    mtab_free = n;
    pthread_mutex_unlock(&mtab_lock);
}

static item_free_fn *destructors[8];
static item_size_fn *sizers[8];

void item_set_destructor(int type, item_free_fn *fn)
{
    destructors[type & 7] = fn;
}

void item_set_sizer(int type, item_size_fn *fn)
{
    sizers[type & 7] = fn;
}

struct item *item_create(uint8_t type, const char *key, size_t klen, size_t vlen, uint8_t bits)
{
    struct item *it;
    size_t opt;
    int slab = 0;

    bits &= IT_FLAGS | IT_TTL | IT_CAS;
    if (klen > 255)
        bits |= IT_KLONG;
    if (vlen >= ITEM_REF_MIN)
        bits |= IT_REF;
    opt = item_opt_size[bits];
    if (vlen >= ITEM_VLONG)
        bits |= IT_VLONG;
    size_t total = sizeof(*it) + item_opt_size[bits] + klen + vlen;
#ifndef TC_NO_SLAB
    if (total >= SLAB_MIN && total <= SLAB_MAX) {
#else
    /* sanitizer builds: every item is its own allocation so ASan sees each one */
    if (0) {
#endif
        it = slab_alloc(total);
        slab = 1;
    } else {
        it = NULL;
    }
    if (!it) {
        /* its own allocation, the id's 8 bytes in front (also when the slab has no room) */
        char *m = malloc(8 + total);
        slab = 0;
        if (!m)
            return NULL;
        it = (struct item *)(void *)(m + 8);
        if (mtab_add(it)) {
            free(m);
            return NULL;
        }
    }
    it->lru = 0;
    it->bits = bits;
    it->klen8 = (uint8_t)(klen > 255 ? 0 : klen);
    it->type = type & 7;
    it->fetched = 0;
    it->slab = (uint16_t)(slab & 1);
    it->mc_won = 0;
    it->vlen10 = (bits & IT_VLONG) ? 0 : (uint16_t)vlen;
    memset(it->data, 0, opt);
    if (bits & IT_VLONG) {
        uint32_t v = (uint32_t)vlen;
        memcpy(it->data + opt, &v, 4);
    }
    if (bits & IT_REF) {
        uint32_t one = 1;
        memcpy(it->data, &one, 4);
    }
    if (bits & IT_KLONG) {
        uint32_t k = (uint32_t)klen;
        memcpy(item_opt(it, IT_KLONG), &k, 4);
    }
    memcpy(item_key(it), key, klen);
    return it;
}

struct item *item_recreate(struct item *it, uint8_t bits)
{
    size_t vlen = item_vlen(it);
    if ((bits & IT_TTL) && (it->bits & IT_TTL)) /* room for the expire time kept */
        bits = (uint8_t)((bits & ~IT_TTL) | item_ttl_wider(bits, item_ttl_bits(item_expire(it))));
    struct item *n = item_create(it->type, item_key(it), item_klen(it), vlen, bits);
    if (!n)
        return NULL;
    n->lru = it->lru;
    n->fetched = it->fetched;
    n->bits |= (uint8_t)(it->bits & IT_MC_STALE);
    n->mc_won = it->mc_won;
    if ((bits & IT_FLAGS) && (it->bits & IT_FLAGS))
        memcpy(item_opt(n, IT_FLAGS), item_opt(it, IT_FLAGS), 4);
    if ((n->bits & IT_TTL) && (it->bits & IT_TTL))
        item_set_expire_field(n, item_expire(it));
    if ((bits & IT_CAS) && (it->bits & IT_CAS))
        memcpy(item_opt(n, IT_CAS), item_opt(it, IT_CAS), 8);
    memcpy(item_value(n), item_value(it), vlen);
    if (it->type != OBJ_STRING) {
        /* the structure now belongs to n: free only the old shell */
        it->type = OBJ_STRING;
    }
    return n;
}

size_t item_alloc_size(struct item *it)
{
    if (it->slab)
        return slab_round(item_total_size(it));
    return malloc_usable_size((char *)it - 8);
}

size_t item_room(struct item *it)
{
    return item_alloc_size(it) - (it->slab ? 0 : 8); /* the id's 8 bytes are in front */
}

size_t item_value_mem(struct item *it)
{
    if (it->type != OBJ_STRING && sizers[it->type & 7])
        return sizers[it->type & 7](item_ptr(it));
    return 0;
}

void item_ref(struct item *it)
{
    atomic_fetch_add_explicit((_Atomic uint32_t *)(void *)it->data, 1, memory_order_relaxed);
}

item_free_fn *item_destructor(int type)
{
    return destructors[type & 7];
}

void item_release(struct item *it)
{
    if (!it)
        return;
    if (it->bits & IT_REF) {
        if (atomic_fetch_sub_explicit((_Atomic uint32_t *)(void *)it->data, 1,
                                      memory_order_acq_rel) != 1)
            return;
    }
    if (it->type != OBJ_STRING && destructors[it->type & 7])
        destructors[it->type & 7](item_ptr(it));
    item_free_shell(it);
}

void item_free_shell(struct item *it)
{
    if (it->slab) {
        slab_free(it, item_total_size(it));
    } else {
        mtab_del(it);
        free((char *)it - 8);
    }
}

void item_unref(void *it)
{
    item_release(it);
}

int item_writable(struct item *it)
{
    if (!(it->bits & IT_REF))
        return 1;
    return atomic_load_explicit((_Atomic uint32_t *)(void *)it->data, memory_order_acquire) == 1;
}
