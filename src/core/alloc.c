#include "core/alloc.h"

#include <stdint.h>
#include <stdio.h>
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
