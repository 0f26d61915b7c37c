#include "store/slab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FIRST_CLASS 20 /* slab_round(SLAB_MIN) */
#define NCLASSES ((SLAB_MAX - FIRST_CLASS) / SLAB_STEP + 1) /* 20, 24, ..., 1024 */
/* Pages come straight from mmap (the reserved range), in regions carved into aligned pages:
 * through malloc a large block carries jemalloc's extra page (cache-oblivious placement), 6%
 * on 64 KiB. */
#define PAGE_BYTES ((size_t)64 * 1024)
#define REGION_PAGES 64 /* 4 MiB */
#define HDR 64          /* struct page, at the start of its page */
#define CACHE_MAX 32
#define BATCH 16

/* A free chunk holds the next one's address in its first bytes, stored with memcpy: a chunk
 * is only 4-byte aligned. */
struct chunk;

static inline struct chunk *chunk_next(const struct chunk *ch)
{
    struct chunk *n;
    memcpy(&n, ch, sizeof(n));
    return n;
}

static inline void chunk_set_next(struct chunk *ch, struct chunk *n)
{
    memcpy(ch, &n, sizeof(n));
}

/* The header of a page; its chunks follow. Under its class's lock (or the pool's, while in
 * the pool). */
struct page {
    struct page *prev, *next; /* the class's pages with a chunk to give; or the pool */
    struct chunk *free;       /* chunks returned to this page */
    uint32_t nfree;           /* chunks on free */
    uint32_t carved;          /* chunks handed out at least once (the rest was never used) */
    uint32_t cap;             /* chunks the page holds */
    uint32_t listed;          /* on its class's list */
};
_Static_assert(sizeof(struct page) <= HDR, "page header");

struct class {
    pthread_mutex_t lock;
    struct page *avail; /* pages with a free or never used chunk */
} __attribute__((aligned(64)));

struct cache {
    struct chunk *head;
    int n;
};

static struct class classes[NCLASSES];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct page *pool;   /* empty pages, their memory returned to the OS */
static char *region;        /* never used pages of the newest region */
static size_t region_left;  /* pages left there */
static _Atomic size_t total;  /* bytes of pages held by classes */
static _Atomic int64_t in_use; /* bytes of chunks handed out, summed from per-thread deltas */
static _Thread_local int64_t in_use_pending; /* this thread's delta not yet in in_use */
static _Thread_local struct cache caches[NCLASSES];
static pthread_once_t once = PTHREAD_ONCE_INIT;
char *slab_arena;               /* the reserved range every page comes from */
static size_t arena_bytes;      /* its size */
static size_t arena_used;       /* bytes of it carved into regions (under pool_lock) */

/* A fork child (SCRIPT DEBUG YES runs scripts that allocate items in one) never finds a lock
 * held by a thread it does not have: fork waits for the holders (each holds a class lock, and
 * inside it the pool's, only for a few list operations). */
static void fork_prepare(void)
{
    for (int i = 0; i < NCLASSES; i++)
        pthread_mutex_lock(&classes[i].lock);
    pthread_mutex_lock(&pool_lock);
}

static void fork_done(void)
{
    pthread_mutex_unlock(&pool_lock);
    for (int i = NCLASSES - 1; i >= 0; i--)
        pthread_mutex_unlock(&classes[i].lock);
}

/* Reserve the range: inaccessible and uncommitted until a region is carved from it. Asks
 * for 64 GiB, then less (a strict overcommit policy or an address-space limit may refuse);
 * without any, slab_alloc fails and items are malloc'd. */
static void arena_reserve(void)
{
    const size_t align = REGION_PAGES * PAGE_BYTES;
    for (int bits = SLAB_ARENA_BITS; bits >= 30 && !slab_arena; bits -= 2) {
        size_t want = (size_t)1 << bits;
        char *m = mmap(NULL, want + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (m == MAP_FAILED)
            continue;
        char *a = (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
        if (a > m)
            munmap(m, (size_t)(a - m));
        munmap(a + want, (size_t)(m + want + align - (a + want)));
        arena_bytes = want;
        slab_arena = a;
    }
}

static void init(void)
{
    for (int i = 0; i < NCLASSES; i++)
        pthread_mutex_init(&classes[i].lock, NULL);
    arena_reserve();
    pthread_atfork(fork_prepare, fork_done, fork_done);
}

static inline int class_of(size_t n)
{
    return (int)((slab_round(n) - FIRST_CLASS) / SLAB_STEP);
}

static inline size_t class_size(int c)
{
    return FIRST_CLASS + (size_t)c * SLAB_STEP;
}

static inline struct page *page_of(const void *chunk)
{
    return (struct page *)((uintptr_t)chunk & ~(uintptr_t)(PAGE_BYTES - 1));
}

/* An empty page from the pool or a new region. Under the class's lock. */
static struct page *page_get(void)
{
    struct page *p = NULL;

    pthread_mutex_lock(&pool_lock);
    if (pool) {
        p = pool;
        pool = p->next;
    } else {
        if (!region_left) {
            /* the next region of the reserved range, made accessible */
            size_t want = REGION_PAGES * PAGE_BYTES;
            if (slab_arena && arena_used + want <= arena_bytes &&
                mprotect(slab_arena + arena_used, want, PROT_READ | PROT_WRITE) == 0) {
                region = slab_arena + arena_used;
                region_left = REGION_PAGES;
                arena_used += want;
            }
        }
        if (region_left) {
            p = (struct page *)(void *)region;
            region += PAGE_BYTES;
            region_left--;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    if (p)
        atomic_fetch_add_explicit(&total, PAGE_BYTES, memory_order_relaxed);
    return p;
}

/* p's chunks are all back: its memory goes to the OS and the page to the pool. Under the
 * class's lock, p off the class's list. */
static void page_put(struct page *p)
{
    madvise(p, PAGE_BYTES, MADV_DONTNEED); /* zero pages when next touched */
    atomic_fetch_sub_explicit(&total, PAGE_BYTES, memory_order_relaxed);
    pthread_mutex_lock(&pool_lock);
    p->next = pool;
    pool = p;
    pthread_mutex_unlock(&pool_lock);
}

static void list_add(struct class *k, struct page *p)
{
    p->prev = NULL;
    p->next = k->avail;
    if (k->avail)
        k->avail->prev = p;
    k->avail = p;
    p->listed = 1;
}

static void list_del(struct class *k, struct page *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        k->avail = p->next;
    if (p->next)
        p->next->prev = p->prev;
    p->prev = p->next = NULL;
    p->listed = 0;
}

/* Move up to BATCH chunks from the class into the cache. Returns 0 or -1 (OOM). */
static int refill(int c)
{
    struct class *k = &classes[c];
    struct cache *ca = &caches[c];
    size_t sz = class_size(c);

    pthread_mutex_lock(&k->lock);
    while (ca->n < BATCH) {
        struct page *p = k->avail;
        struct chunk *ch;
        if (!p) {
            p = page_get();
            if (!p)
                break;
            p->free = NULL;
            p->nfree = p->carved = 0;
            p->cap = (uint32_t)((PAGE_BYTES - HDR) / sz);
            list_add(k, p);
        }
        if (p->free) {
            ch = p->free;
            p->free = chunk_next(ch);
            p->nfree--;
        } else {
            ch = (struct chunk *)(void *)((char *)p + HDR + (size_t)p->carved * sz);
            p->carved++;
        }
        if (!p->nfree && p->carved == p->cap)
            list_del(k, p); /* nothing more to give */
        chunk_set_next(ch, ca->head);
        ca->head = ch;
        ca->n++;
    }
    pthread_mutex_unlock(&k->lock);
    return ca->n ? 0 : -1;
}

/* Chunks count as used while a caller holds them, not while they wait in a thread's cache:
 * an evicted item's chunk is free memory at once (maxmemory is checked against this). The
 * delta is published every 4 KiB per thread. */
static inline void used_add(int64_t d)
{
    in_use_pending += d;
    if (in_use_pending > 4096 || in_use_pending < -4096) {
        atomic_fetch_add_explicit(&in_use, in_use_pending, memory_order_relaxed);
        in_use_pending = 0;
    }
}

void *slab_alloc(size_t n)
{
    int c = class_of(n);
    struct cache *ca = &caches[c];
    struct chunk *ch;

    pthread_once(&once, init);
    if (!ca->head && refill(c))
        return NULL;
    ch = ca->head;
    ca->head = chunk_next(ch);
    ca->n--;
    used_add((int64_t)class_size(c));
    return ch;
}

/* Return n chunks (linked from first) to their pages. A page whose chunks are all back is
 * released, unless it is the class's only page with room (a class that empties and refills
 * does not map and fault a page each time). */
static void give_back(int c, struct chunk *first, int n)
{
    struct class *k = &classes[c];

    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < n; i++) {
        struct chunk *ch = first;
        first = chunk_next(ch);
        struct page *p = page_of(ch);
        chunk_set_next(ch, p->free);
        p->free = ch;
        p->nfree++;
        if (!p->listed)
            list_add(k, p);
        if (p->nfree == p->carved && (k->avail != p || p->next)) {
            list_del(k, p);
            page_put(p);
        }
    }
    pthread_mutex_unlock(&k->lock);
}

void slab_free(void *p, size_t n)
{
    int c = class_of(n);
    struct cache *ca = &caches[c];
    struct chunk *ch = p;

    used_add(-(int64_t)class_size(c));
    chunk_set_next(ch, ca->head);
    ca->head = ch;
    if (++ca->n > CACHE_MAX) {
        /* give half back to the class */
        struct chunk *first = ca->head, *last = first;
        for (int i = 1; i < BATCH; i++)
            last = chunk_next(last);
        ca->head = chunk_next(last);
        ca->n -= BATCH;
        pthread_once(&once, init);
        give_back(c, first, BATCH);
    }
}

size_t slab_bytes(void)
{
    return atomic_load_explicit(&total, memory_order_relaxed);
}

size_t slab_used_bytes(void)
{
    int64_t u = atomic_load_explicit(&in_use, memory_order_relaxed);
    return u > 0 ? (size_t)u : 0;
}

void slab_thread_flush(void)
{
    if (in_use_pending) {
        atomic_fetch_add_explicit(&in_use, in_use_pending, memory_order_relaxed);
        in_use_pending = 0;
    }
    for (int c = 0; c < NCLASSES; c++) {
        struct cache *ca = &caches[c];
        if (ca->n) {
            give_back(c, ca->head, ca->n);
            ca->head = NULL;
            ca->n = 0;
        }
    }
}
