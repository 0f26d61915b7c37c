/* Item memory in classes every 4 bytes from 20 to 1024 bytes, with a small per-thread cache
 * per class so the shared per-class lock is taken once per batch. jemalloc's classes are 16
 * bytes apart up to 128 and 32, 64 and 128 bytes apart above: an item (a 12-byte header, key
 * and value, of any length) loses 7.5 bytes on average to that rounding and 1.5 here. Chunks
 * are 4-byte aligned (every item field is at most 4 bytes; the wider optional fields are read
 * with memcpy).
 *
 * A class's chunks come from 64 KiB pages (aligned, so a chunk finds its page by masking its
 * address). A page whose chunks are all free again goes back to a shared pool, its memory
 * returned to the OS, and any class may take it: when the sizes written change (every item
 * evicted from one class while another grows), the memory follows, and RSS stays near
 * maxmemory. Any thread may allocate or free.
 *
 * Every page lies in one range of address space reserved at the first allocation (64 GiB,
 * or less when the system refuses that much; regions are made accessible as they are
 * used), so a chunk is named by its offset there: 34 bits at 4-byte granularity. The
 * keyspace index stores that instead of a pointer and spends the bits saved on its tags. */
#ifndef TC_SLAB_H
#define TC_SLAB_H

#include <stddef.h>
#include <stdint.h>

#define SLAB_MIN 17   /* smaller sizes: jemalloc's 8- and 16-byte classes fit them */
#define SLAB_MAX 1024
#define SLAB_STEP 4

#define SLAB_ARENA_BITS 36 /* at most 64 GiB of slab pages; items past that are malloc'd */

/* The start of the reserved range (NULL before the first slab_alloc). */
extern char *slab_arena;

/* The offset, in 4-byte units, of a chunk (< 2^(SLAB_ARENA_BITS - 2)), and back. */
static inline uint64_t slab_off(const void *chunk)
{
    return (uint64_t)((const char *)chunk - slab_arena) >> 2;
}

static inline void *slab_at(uint64_t off)
{
    return slab_arena + (off << 2);
}

/* Size actually reserved for a request of n bytes (n in [SLAB_MIN, SLAB_MAX]). */
static inline size_t slab_round(size_t n)
{
    return (n + SLAB_STEP - 1) & ~(size_t)(SLAB_STEP - 1);
}
/* A chunk of slab_round(n) bytes, or NULL when out of memory. */
void *slab_alloc(size_t n);
/* Return a chunk of slab_round(n) bytes (n as given to slab_alloc, or any n of the class). */
void slab_free(void *p, size_t n);
/* Bytes held in slabs: not part of the allocator's figures, added to them for maxmemory. */
size_t slab_bytes(void);
/* Bytes of chunks handed out to callers (not those in the per-thread caches), within 4 KiB
 * per thread: what counts as used; the rest of the slabs is free space, like an allocator's
 * fragmentation. */
size_t slab_used_bytes(void);
/* Publish this thread's pending used-bytes delta and give its cached chunks back to their
 * classes (a thread that only frees, as the lazy free thread, calls it after each job). */
void slab_thread_flush(void);

#endif
