#include "core/alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#ifdef TC_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

void alloc_stats(struct alloc_stats *st)
{
    memset(st, 0, sizeof(*st));
#ifdef TC_HAVE_JEMALLOC
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mallctl("epoch", &epoch, &sz, &epoch, sz);
    sz = sizeof(size_t);
    mallctl("stats.allocated", &st->allocated, &sz, NULL, 0);
    sz = sizeof(size_t);
    mallctl("stats.active", &st->active, &sz, NULL, 0);
    sz = sizeof(size_t);
    mallctl("stats.resident", &st->resident, &sz, NULL, 0);
    sz = sizeof(size_t);
    mallctl("stats.retained", &st->retained, &sz, NULL, 0);
#endif
}

size_t alloc_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;

    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return (size_t)rss * (size_t)sysconf(_SC_PAGESIZE);
}

const char *alloc_name(void)
{
#ifdef TC_HAVE_JEMALLOC
    return "jemalloc";
#else
    return "libc";
#endif
}

#ifdef TC_HAVE_JEMALLOC
static void stats_write(void *arg, const char *s)
{
    struct buf *b = arg;
    buf_append(b, s, strlen(s));
}
#endif

void alloc_malloc_stats(struct buf *b)
{
#ifdef TC_HAVE_JEMALLOC
    malloc_stats_print(stats_write, b, NULL);
#else
    static const char msg[] = "Stats not supported for the current allocator";
    buf_append(b, msg, sizeof(msg) - 1);
#endif
}

void alloc_purge(void)
{
#ifdef TC_HAVE_JEMALLOC
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "arena.%d.purge", MALLCTL_ARENAS_ALL);
    mallctl(cmd, NULL, NULL, NULL, 0);
#endif
}

#ifdef TC_HAVE_JEMALLOC
static unsigned table_arena; /* 0: not created (arena 0 is jemalloc's first automatic one) */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_arena_init(void)
{
    unsigned a;
    size_t sz = sizeof(a);
    if (mallctl("arenas.create", &a, &sz, NULL, 0) != 0)
        return;
    char cmd[64];
    ssize_t zero = 0;
    snprintf(cmd, sizeof(cmd), "arena.%u.dirty_decay_ms", a);
    if (mallctl(cmd, NULL, NULL, &zero, sizeof(zero)) != 0)
        return;
    snprintf(cmd, sizeof(cmd), "arena.%u.muzzy_decay_ms", a);
    if (mallctl(cmd, NULL, NULL, &zero, sizeof(zero)) != 0)
        return;
    table_arena = a;
}
#endif

void *alloc_table(size_t n)
{
#ifdef TC_HAVE_JEMALLOC
    pthread_once(&table_once, table_arena_init);
    if (table_arena && n)
        return mallocx(n, MALLOCX_ARENA(table_arena) | MALLOCX_TCACHE_NONE | MALLOCX_ZERO);
#endif
    return calloc(1, n);
}

size_t alloc_table_size(size_t n)
{
#ifdef TC_HAVE_JEMALLOC
    size_t r = n ? nallocx(n, MALLOCX_TCACHE_NONE) : 0;
    if (r >= n)
        return r;
#endif
    return n;
}

void alloc_table_free(void *p, size_t n)
{
#ifdef TC_HAVE_JEMALLOC
    if (p && n && table_arena) {
        dallocx(p, MALLOCX_TCACHE_NONE);
        return;
    }
#endif
    (void)n;
    free(p);
}
