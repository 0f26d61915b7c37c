#include "core/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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
