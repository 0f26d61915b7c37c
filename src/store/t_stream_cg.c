#define _GNU_SOURCE
#include "store/t_stream_cg.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static size_t usable(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

/* Byte order of names, as Redis's radix tree sorts them. */
static int name_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    if (r)
        return r;
    return an < bn ? -1 : an > bn;
}

/* ---- sorted pointer arrays ---- */

/* Grow a pointer array to hold one more. 0 or -1. */
static int grow(void ***v, size_t n, size_t *cap)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    void **nv = realloc(*v, sizeof(void *) * nc);
    if (!nv)
        return -1;
    *v = nv;
    *cap = nc;
    return 0;
}

static void arr_insert(void **v, size_t *n, size_t at, void *x)
{
    memmove(v + at + 1, v + at, sizeof(void *) * (*n - at));
    v[at] = x;
    (*n)++;
}

static void arr_remove(void **v, size_t *n, size_t at)
{
    memmove(v + at, v + at + 1, sizeof(void *) * (*n - at - 1));
    (*n)--;
}

size_t spel_seek(const struct spel *pel, const struct sid *id)
{
    size_t lo = 0, hi = pel->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sid_cmp(&pel->v[mid]->id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Make room for one more at the end of pel: compact the front gap away, growing when that
 * would leave less than half free (so compactions cost O(1) per insertion). 0 or -1. */
static int spel_room(struct tstream *s, struct spel *pel)
{
    size_t front = (size_t)(pel->v - pel->base);

    if (front + pel->n < pel->cap)
        return 0;
    if (front && pel->n * 2 <= pel->cap) {
        memmove(pel->base, pel->v, sizeof(*pel->v) * pel->n);
        pel->v = pel->base;
        return 0;
    }
    size_t nc = pel->cap ? pel->cap * 2 : 4, before = usable(pel->base);
    struct snack **nb = malloc(sizeof(*nb) * nc);
    if (!nb)
        return -1;
    if (pel->n)
        memcpy(nb, pel->v, sizeof(*nb) * pel->n);
    free(pel->base);
    pel->base = pel->v = nb;
    pel->cap = nc;
    s->mem += usable(nb) - before;
    return 0;
}

static int spel_insert(struct tstream *s, struct spel *pel, struct snack *nk)
{
    if (spel_room(s, pel))
        return -1;
    size_t at = pel->n && sid_cmp(&pel->v[pel->n - 1]->id, &nk->id) < 0
                    ? pel->n
                    : spel_seek(pel, &nk->id);
    memmove(pel->v + at + 1, pel->v + at, sizeof(*pel->v) * (pel->n - at));
    pel->v[at] = nk;
    pel->n++;
    return 0;
}

/* Remove id from pel, moving the shorter side (acknowledging the oldest is O(1)). */
static void spel_remove(struct spel *pel, const struct sid *id)
{
    size_t at = spel_seek(pel, id);

    if (at >= pel->n || sid_cmp(&pel->v[at]->id, id) != 0)
        return;
    if (at < pel->n / 2) {
        memmove(pel->v + 1, pel->v, sizeof(*pel->v) * at);
        pel->v++;
    } else {
        memmove(pel->v + at, pel->v + at + 1, sizeof(*pel->v) * (pel->n - at - 1));
    }
    if (--pel->n == 0)
        pel->v = pel->base;
}

/* ---- groups ---- */

static size_t group_index(const struct tstream *s, const char *name, size_t n, int *found)
{
    size_t lo = 0, hi = s->ngroups;

    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = name_cmp(s->groups[mid]->name, s->groups[mid]->nlen, name, n);
        if (r == 0) {
            *found = 1;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct sgroup *scg_find(const struct tstream *s, const char *name, size_t n)
{
    int found;
    size_t i = group_index(s, name, n, &found);
    return found ? s->groups[i] : NULL;
}

static size_t cons_index(const struct sgroup *g, const char *name, size_t n, int *found)
{
    size_t lo = 0, hi = g->ncons;

    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = name_cmp(g->cons[mid]->name, g->cons[mid]->nlen, name, n);
        if (r == 0) {
            *found = 1;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct scons *scg_cons_find(const struct sgroup *g, const char *name, size_t n)
{
    int found;
    size_t i = cons_index(g, name, n, &found);
    return found ? g->cons[i] : NULL;
}

struct sgroup *scg_create(struct tstream *s, const char *name, size_t n, const struct sid *id,
                          long long entries_read)
{
    int found;
    size_t at = group_index(s, name, n, &found);
    size_t before = usable(s->groups);
    struct sgroup *g;

    if (found || grow((void ***)&s->groups, s->ngroups, &s->gcap))
        return NULL;
    s->mem += usable(s->groups) - before;
    g = calloc(1, sizeof(*g));
    if (!g || !(g->name = malloc(n ? n : 1))) {
        free(g);
        return NULL;
    }
    memcpy(g->name, name, n);
    g->nlen = n;
    g->last_id = *id;
    g->entries_read = entries_read;
    arr_insert((void **)s->groups, &s->ngroups, at, g);
    s->mem += usable(g) + usable(g->name);
    return g;
}

struct scons *scg_cons_create(struct tstream *s, struct sgroup *g, const char *name, size_t n,
                              int64_t now)
{
    int found;
    size_t at = cons_index(g, name, n, &found);
    size_t before = usable(g->cons);
    struct scons *c;

    if (found || grow((void ***)&g->cons, g->ncons, &g->ccap))
        return NULL;
    s->mem += usable(g->cons) - before;
    c = calloc(1, sizeof(*c));
    if (!c || !(c->name = malloc(n ? n : 1))) {
        free(c);
        return NULL;
    }
    memcpy(c->name, name, n);
    c->nlen = n;
    c->seen = now;
    arr_insert((void **)g->cons, &g->ncons, at, c);
    s->mem += usable(c) + usable(c->name);
    return c;
}

static size_t cons_free(struct scons *c)
{
    size_t m = usable(c->pel.base) + usable(c->name) + usable(c);
    free(c->pel.base);
    free(c->name);
    free(c);
    return m;
}

static size_t group_free(struct sgroup *g)
{
    size_t m = 0;
    for (size_t i = 0; i < g->pel.n; i++) {
        m += usable(g->pel.v[i]);
        free(g->pel.v[i]);
    }
    for (size_t i = 0; i < g->ncons; i++)
        m += cons_free(g->cons[i]);
    m += usable(g->pel.base) + usable(g->cons) + usable(g->name) + usable(g);
    free(g->pel.base);
    free(g->cons);
    free(g->name);
    free(g);
    return m;
}

void scg_destroy(struct tstream *s, struct sgroup *g)
{
    int found;
    size_t at = group_index(s, g->name, g->nlen, &found);
    if (found)
        arr_remove((void **)s->groups, &s->ngroups, at);
    s->mem -= group_free(g);
}

size_t scg_cons_delete(struct tstream *s, struct sgroup *g, struct scons *c)
{
    int found;
    size_t n = c->pel.n;
    size_t at = cons_index(g, c->name, c->nlen, &found);

    for (size_t i = 0; i < c->pel.n; i++) {
        struct snack *nk = c->pel.v[i];
        spel_remove(&g->pel, &nk->id);
        s->mem -= usable(nk);
        free(nk);
    }
    if (found)
        arr_remove((void **)g->cons, &g->ncons, at);
    s->mem -= cons_free(c);
    return n;
}

void scg_free_all(struct tstream *s)
{
    for (size_t i = 0; i < s->ngroups; i++)
        s->mem -= group_free(s->groups[i]);
    s->mem -= usable(s->groups);
    free(s->groups);
    s->groups = NULL;
    s->ngroups = s->gcap = 0;
}

int scg_copy(struct tstream *dst, const struct tstream *src)
{
    for (size_t i = 0; i < src->ngroups; i++) {
        const struct sgroup *g = src->groups[i];
        struct sgroup *h = scg_create(dst, g->name, g->nlen, &g->last_id, g->entries_read);
        if (!h)
            return -1;
        for (size_t j = 0; j < g->ncons; j++)
            if (!scg_cons_create(dst, h, g->cons[j]->name, g->cons[j]->nlen, g->cons[j]->seen))
                return -1;
        for (size_t j = 0; j < g->pel.n; j++) {
            const struct snack *nk = g->pel.v[j];
            struct scons *o = scg_cons_find(h, nk->owner->name, nk->owner->nlen);
            if (!o || !scg_pel_add(dst, h, o, &nk->id, nk->dtime, nk->dcount))
                return -1;
        }
    }
    return 0;
}

/* ---- pending entries ---- */

struct snack *scg_pel_find(const struct sgroup *g, const struct sid *id)
{
    size_t at = spel_seek(&g->pel, id);
    return at < g->pel.n && sid_cmp(&g->pel.v[at]->id, id) == 0 ? g->pel.v[at] : NULL;
}

struct snack *scg_pel_add(struct tstream *s, struct sgroup *g, struct scons *c,
                          const struct sid *id, int64_t dtime, uint64_t dcount)
{
    struct snack *nk = malloc(sizeof(*nk));

    if (!nk)
        return NULL;
    nk->id = *id;
    nk->dtime = dtime;
    nk->dcount = dcount;
    nk->owner = c;
    if (spel_insert(s, &g->pel, nk)) {
        free(nk);
        return NULL;
    }
    if (spel_insert(s, &c->pel, nk)) {
        spel_remove(&g->pel, id);
        free(nk);
        return NULL;
    }
    s->mem += usable(nk);
    return nk;
}

int scg_pel_move(struct tstream *s, struct snack *nk, struct scons *to)
{
    if (nk->owner == to)
        return 0;
    if (spel_insert(s, &to->pel, nk))
        return -1;
    spel_remove(&nk->owner->pel, &nk->id);
    nk->owner = to;
    return 0;
}

void scg_pel_del(struct tstream *s, struct sgroup *g, struct snack *nk)
{
    spel_remove(&nk->owner->pel, &nk->id);
    spel_remove(&g->pel, &nk->id);
    s->mem -= usable(nk);
    free(nk);
}

/* ---- lag bookkeeping ---- */

int tstream_first_id(const struct tstream *s, struct sid *id)
{
    struct sid zero = {0, 0};
    struct spos pos;
    struct sent e;

    if (!s->len || !tstream_seek(s, &zero, &pos))
        return 0;
    tstream_get(s, &pos, &e);
    *id = e.id;
    return 1;
}

int tstream_last_valid_id(const struct tstream *s, struct sid *id)
{
    struct sid max = {UINT64_MAX, UINT64_MAX};
    struct spos pos;
    struct sent e;

    if (!s->len || !tstream_seek_rev(s, &max, &pos))
        return 0;
    tstream_get(s, &pos, &e);
    *id = e.id;
    return 1;
}

int scg_range_has_tombstones(const struct tstream *s, const struct sid *start)
{
    struct sid first;

    if (!s->len || (s->max_deleted_id.ms == 0 && s->max_deleted_id.seq == 0))
        return 0;
    tstream_first_id(s, &first);
    if (sid_cmp(&first, &s->max_deleted_id) > 0)
        return 0;
    return sid_cmp(start, &s->max_deleted_id) <= 0;
}

long long scg_estimate_distance(const struct tstream *s, const struct sid *id)
{
    struct sid first;

    if (!s->entries_added)
        return 0;
    if (!s->len && sid_cmp(id, &s->last_id) < 1)
        return (long long)s->entries_added;
    int cmp_last = sid_cmp(id, &s->last_id);
    if (cmp_last == 0)
        return (long long)s->entries_added;
    if (cmp_last > 0)
        return SCG_INVALID_ENTRIES_READ;
    tstream_first_id(s, &first);
    int cmp_first = sid_cmp(id, &first);
    int zero_del = s->max_deleted_id.ms == 0 && s->max_deleted_id.seq == 0;
    if (zero_del || sid_cmp(&s->max_deleted_id, &first) < 0) {
        if (cmp_first < 0)
            return (long long)(s->entries_added - s->len);
        if (cmp_first == 0)
            return (long long)(s->entries_added - s->len + 1);
    }
    return SCG_INVALID_ENTRIES_READ;
}

int scg_lag(const struct tstream *s, const struct sgroup *g, long long *lag)
{
    if (!s->entries_added) {
        *lag = 0;
        return 1;
    }
    if (g->entries_read != SCG_INVALID_ENTRIES_READ && !scg_range_has_tombstones(s, &g->last_id)) {
        *lag = (long long)(s->entries_added - (uint64_t)g->entries_read);
        return 1;
    }
    long long er = scg_estimate_distance(s, &g->last_id);
    if (er == SCG_INVALID_ENTRIES_READ)
        return 0;
    *lag = (long long)(s->entries_added - (uint64_t)er);
    return 1;
}
