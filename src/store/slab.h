/* Item memory for sizes jemalloc would round up coarsely (129..1024 bytes: its classes there
 * are 32, 64 and 128 bytes apart): classes every 16 bytes carved from 64 KiB slabs, with a
 * small per-thread cache per class so the shared per-class lock is taken once per batch.
 * Memory of a class is reused only by that class (like memcached's slabs); slabs are never
 * returned. Any thread may allocate or free. */
#ifndef TC_SLAB_H
#define TC_SLAB_H

#include <stddef.h>

#define SLAB_MIN 129  /* smaller sizes: jemalloc's 16-byte classes are already fine */
#define SLAB_MAX 1024

/* Size actually reserved for a request of n bytes (n in [SLAB_MIN, SLAB_MAX]). */
static inline size_t slab_round(size_t n)
{
    return (n + 15) & ~(size_t)15;
}
/* A chunk of slab_round(n) bytes, or NULL when out of memory. */
void *slab_alloc(size_t n);
/* Return a chunk of slab_round(n) bytes (n as given to slab_alloc, or any n of the class). */
void slab_free(void *p, size_t n);
/* Bytes held in slabs: not part of the allocator's figures, added to them for maxmemory. */
size_t slab_bytes(void);
/* Bytes of chunks handed out (items plus the per-thread caches): what counts as used; the
 * rest of the slabs is free space, like an allocator's fragmentation. */
size_t slab_used_bytes(void);

#endif
