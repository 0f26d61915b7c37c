/* Allocator introspection (jemalloc when linked, otherwise zeros) and process RSS. */
#ifndef TC_ALLOC_H
#define TC_ALLOC_H

#include <stddef.h>

struct alloc_stats {
    size_t allocated; /* bytes the application holds (0 when unknown) */
    size_t active;    /* bytes in active pages */
    size_t resident;  /* bytes the allocator keeps resident */
    size_t retained;  /* bytes retained (virtual, not returned to the OS) */
};

/* Refresh and read the allocator's totals. Takes the allocator's stats lock: call from timers
 * and INFO, not per request. */
void alloc_stats(struct alloc_stats *st);
/* Resident set size of the process in bytes. */
size_t alloc_rss(void);
/* Name of the allocator for INFO. */
const char *alloc_name(void);
struct buf;
/* The allocator's own statistics report (jemalloc's malloc_stats_print), appended to b. */
void alloc_malloc_stats(struct buf *b);
/* Return the allocator's dirty pages to the OS (MEMORY PURGE). */
void alloc_purge(void);
/* Zeroed memory for rarely resized tables (the keyspace index): with jemalloc, from an arena
 * that returns freed pages to the OS at once, so the array a table outgrew does not stay
 * resident while the server idles (jemalloc decays dirty pages only as it allocates, and the
 * items, from src/store/slab.c, never reuse the general arena's freed pages). Small arrays
 * too: a load grows 1024 stripes' tables through every small size, and each size's freed
 * arrays would stay behind as whole free runs of the general arena. Free with
 * alloc_table_free and the same n. Not for hot paths. */
void *alloc_table(size_t n);
/* The bytes alloc_table(n) actually provides (its size class): a table sized to use them
 * wastes nothing to rounding. */
size_t alloc_table_size(size_t n);
void alloc_table_free(void *p, size_t n);

#endif
