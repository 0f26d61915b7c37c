#include "store/slab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FIRST_CLASS 20 /* slab_round(SLAB_MIN) */
#define NCLASSES ((SLAB_MAX - FIRST_CLASS) / SLAB_STEP + 1) /* 20, 24, ..., 1024 */
/* Slabs come straight from mmap: through malloc a large block carries jemalloc's extra page
 * (cache-oblivious placement), 6% on 64 KiB, which is what this allocator exists to avoid. */
#define SLAB_BYTES (1024 * 1024)
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

struct class {
    pthread_mutex_t lock;
    struct chunk *free;  /* shared free list */
    char *cur;           /* unused tail of the newest slab */
    size_t left;         /* bytes left at cur */
} __attribute__((aligned(64)));

struct cache {
    struct chunk *head;
    int n;
};

static struct class classes[NCLASSES];
static _Atomic size_t total;
static _Atomic size_t in_use; /* bytes of chunks outside the class free lists */
static _Thread_local struct cache caches[NCLASSES];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* A fork child (SCRIPT DEBUG YES runs scripts that allocate items in one) never finds a class
 * locked by a thread it does not have: fork waits for the holders (each holds a class lock
 * only for a few list operations, and never while waiting for another lock). */
static void fork_prepare(void)
{
    for (int i = 0; i < NCLASSES; i++)
        pthread_mutex_lock(&classes[i].lock);
}

static void fork_done(void)
{
    for (int i = NCLASSES - 1; i >= 0; i--)
        pthread_mutex_unlock(&classes[i].lock);
}

static void init(void)
{
    for (int i = 0; i < NCLASSES; i++)
        pthread_mutex_init(&classes[i].lock, NULL);
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

/* Move up to BATCH chunks from the class into the cache. Returns 0 or -1 (OOM). */
static int refill(int c)
{
    struct class *k = &classes[c];
    struct cache *ca = &caches[c];
    size_t sz = class_size(c);

    pthread_mutex_lock(&k->lock);
    while (ca->n < BATCH) {
        struct chunk *ch = k->free;
        if (ch) {
            k->free = chunk_next(ch);
        } else {
            if (k->left < sz) {
                char *slab = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (slab == MAP_FAILED)
                    break;
                atomic_fetch_add_explicit(&total, SLAB_BYTES, memory_order_relaxed);
                k->cur = slab;
                k->left = SLAB_BYTES;
            }
            ch = (struct chunk *)(void *)k->cur;
            k->cur += sz;
            k->left -= sz;
        }
        chunk_set_next(ch, ca->head);
        ca->head = ch;
        ca->n++;
        atomic_fetch_add_explicit(&in_use, sz, memory_order_relaxed);
    }
    pthread_mutex_unlock(&k->lock);
    return ca->n ? 0 : -1;
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
    return ch;
}

void slab_free(void *p, size_t n)
{
    int c = class_of(n);
    struct cache *ca = &caches[c];
    struct chunk *ch = p;

    chunk_set_next(ch, ca->head);
    ca->head = ch;
    if (++ca->n > CACHE_MAX) {
        /* give half back to the class */
        struct class *k = &classes[c];
        struct chunk *first = ca->head, *last = first;
        for (int i = 1; i < BATCH; i++)
            last = chunk_next(last);
        ca->head = chunk_next(last);
        ca->n -= BATCH;
        pthread_once(&once, init);
        pthread_mutex_lock(&k->lock);
        chunk_set_next(last, k->free);
        k->free = first;
        pthread_mutex_unlock(&k->lock);
        atomic_fetch_sub_explicit(&in_use, class_size(c) * BATCH, memory_order_relaxed);
    }
}

size_t slab_bytes(void)
{
    return atomic_load_explicit(&total, memory_order_relaxed);
}

size_t slab_used_bytes(void)
{
    return atomic_load_explicit(&in_use, memory_order_relaxed);
}
