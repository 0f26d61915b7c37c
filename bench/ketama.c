/* Ketama continuum, see ketama.h. Point naming follows libmemcached's
 * update_continuum() and twemproxy's nc_ketama.c (node names, weights). */
#include "ketama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md5.h"

static uint32_t md5_word(const char *s, size_t len, unsigned alignment)
{
    uint8_t d[16];
    md5_digest(s, len, d);
    return (uint32_t)d[3 + alignment * 4] << 24 | (uint32_t)d[2 + alignment * 4] << 16 |
           (uint32_t)d[1 + alignment * 4] << 8 | d[alignment * 4];
}

/* Bob Jenkins' one-at-a-time, libmemcached's MEMCACHED_HASH_DEFAULT. */
static uint32_t oaat_hash(const char *s, size_t len)
{
    uint32_t h = 0;
    for (size_t i = 0; i < len; i++) {
        h += (unsigned char)s[i];
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

static int point_cmp(const void *a, const void *b)
{
    const struct ketama_point *x = a, *y = b;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return 0;
}

int ketama_layout_parse(const char *name)
{
    if (!strcmp(name, "libmemcached")) return KETAMA_LIBMEMCACHED;
    if (!strcmp(name, "libmemcached-md5")) return KETAMA_LIBMEMCACHED_MD5;
    if (!strcmp(name, "ketama") || !strcmp(name, "twemproxy") || !strcmp(name, "weighted"))
        return KETAMA_WEIGHTED;
    if (!strcmp(name, "spy") || !strcmp(name, "spymemcached")) return KETAMA_SPY;
    return -1;
}

/* Points of one server: twemproxy's (and libmemcached's KETAMA_WEIGHTED) float
 * formula, kept in float so the rounding matches theirs. */
static uint32_t weighted_points(uint32_t weight, uint32_t total, uint32_t nservers)
{
    float pct = (float)weight / (float)total;
    return (uint32_t)(floorf((float)(pct * 160 / 4 * (float)nservers + 0.0000000001))) * 4;
}

int ketama_init_servers(struct ketama *k, enum ketama_layout layout,
                        const struct ketama_server *servers, uint32_t nservers)
{
    int lm = layout == KETAMA_LIBMEMCACHED || layout == KETAMA_LIBMEMCACHED_MD5;
    uint32_t per_hash = lm ? 1 : 4;
    uint32_t total_weight = 0;
    size_t cap = 1;
    for (uint32_t h = 0; h < nservers; h++) {
        total_weight += servers[h].weight ? servers[h].weight : 1;
    }
    uint32_t *per_server = calloc(nservers ? nservers : 1, sizeof(*per_server));
    if (!per_server) return -1;
    for (uint32_t h = 0; h < nservers; h++) {
        uint32_t w = servers[h].weight ? servers[h].weight : 1;
        per_server[h] = lm ? 100 : layout == KETAMA_WEIGHTED ? weighted_points(w, total_weight, nservers) : 160;
        cap += per_server[h];
    }
    k->npoints = 0;
    k->oaat = layout == KETAMA_LIBMEMCACHED;
    k->points = calloc(cap, sizeof(*k->points));
    if (!k->points) { free(per_server); return -1; }
    for (uint32_t h = 0; h < nservers; h++) {
        char name[300];
        if (servers[h].name && servers[h].name[0]) {
            snprintf(name, sizeof(name), "%s", servers[h].name);
        } else {
            snprintf(name, sizeof(name), "%s", servers[h].hostport);
            size_t nl = strlen(name);
            if (layout != KETAMA_SPY && nl > 6 && !strcmp(name + nl - 6, ":11211"))
                name[nl - 6] = 0; /* libmemcached/twemproxy compatibility quirk */
        }
        for (uint32_t i = 0; i < per_server[h] / per_hash; i++) {
            char buf[340];
            int n = layout == KETAMA_SPY ? snprintf(buf, sizeof(buf), "/%s-%u", name, i)
                                         : snprintf(buf, sizeof(buf), "%s-%u", name, i);
            for (uint32_t x = 0; x < per_hash; x++) {
                k->points[k->npoints].value =
                    k->oaat ? oaat_hash(buf, (size_t)n) : md5_word(buf, (size_t)n, x);
                k->points[k->npoints].host = h;
                k->npoints++;
            }
        }
    }
    free(per_server);
    qsort(k->points, k->npoints, sizeof(*k->points), point_cmp);
    return 0;
}

int ketama_init(struct ketama *k, enum ketama_layout layout, const char *const *hosts,
                uint32_t nhosts)
{
    struct ketama_server *s = calloc(nhosts ? nhosts : 1, sizeof(*s));
    if (!s) return -1;
    for (uint32_t h = 0; h < nhosts; h++) s[h].hostport = hosts[h];
    int rc = ketama_init_servers(k, layout, s, nhosts);
    free(s);
    return rc;
}

void ketama_deinit(struct ketama *k)
{
    free(k->points);
    k->points = NULL;
    k->npoints = 0;
}

uint32_t ketama_pick(const struct ketama *k, const char *key, size_t len)
{
    if (k->npoints == 0) return 0;
    uint32_t hash = k->oaat ? oaat_hash(key, len) : md5_word(key, len, 0);
    uint32_t lo = 0, hi = k->npoints;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (k->points[mid].value < hash) lo = mid + 1;
        else hi = mid;
    }
    if (lo == k->npoints) lo = 0;
    return k->points[lo].host;
}
