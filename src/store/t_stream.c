#define _GNU_SOURCE
#include "store/t_stream.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>


#define NODE_MAX_ENTRIES 100 /* Redis's stream-node-max-entries default */

static size_t usable(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

struct tstream *tstream_create(void)
{
    struct tstream *s = calloc(1, sizeof(*s));
    if (s)
        s->mem = usable(s);
    return s;
}

void tstream_destroy(void *p)
{
    struct tstream *s = p;
    if (!s)
        return;
    for (size_t i = 0; i < s->len; i++)
        free(tstream_at(s, i));
    free(s->v);
    free(s);
}

size_t tstream_mem(void *p)
{
    return ((struct tstream *)p)->mem;
}

static int grow(struct tstream *s)
{
    size_t cap = s->cap ? s->cap * 2 : 8;
    struct sentry **v = malloc(sizeof(*v) * cap);

    if (!v)
        return -1;
    for (size_t i = 0; i < s->len; i++)
        v[i] = tstream_at(s, i);
    s->mem -= usable(s->v);
    free(s->v);
    s->v = v;
    s->head = 0;
    s->cap = cap;
    s->mem += usable(v);
    return 0;
}

struct sentry *sentry_create(const struct sid *id, uint32_t n, size_t bytes)
{
    struct sentry *e;

    if (bytes > UINT32_MAX)
        return NULL;
    e = malloc(sizeof(*e) + bytes);
    if (!e)
        return NULL;
    e->id = *id;
    e->node = 0;
    e->nfields = n;
    e->bytes = (uint32_t)bytes;
    return e;
}

int tstream_append(struct tstream *s, struct sentry *e)
{
    if (s->len == s->cap && grow(s)) {
        free(e);
        return -1;
    }
    /* a new node when the tail one is full or was removed (all its entries deleted) */
    if (s->len == 0 || tstream_at(s, s->len - 1)->node != s->tail_node ||
        s->tail_count >= NODE_MAX_ENTRIES) {
        s->tail_node++;
        s->tail_count = 0;
    }
    e->node = s->tail_node;
    s->tail_count++;
    s->v[(s->head + s->len) % s->cap] = e;
    s->len++;
    s->last_id = e->id;
    s->entries_added++;
    s->mem += usable(e);
    return 0;
}

size_t tstream_lower_bound(const struct tstream *s, const struct sid *id)
{
    size_t lo = 0, hi = s->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sid_cmp(&tstream_at(s, mid)->id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void remove_at(struct tstream *s, size_t i)
{
    struct sentry *e = tstream_at(s, i);

    if (sid_cmp(&e->id, &s->max_deleted_id) > 0)
        s->max_deleted_id = e->id;
    s->mem -= usable(e);
    free(e);
    if (i == 0) {
        s->head = (s->head + 1) % s->cap;
    } else {
        for (size_t j = i; j + 1 < s->len; j++)
            s->v[(s->head + j) % s->cap] = tstream_at(s, j + 1);
    }
    s->len--;
}

int tstream_delete(struct tstream *s, const struct sid *id)
{
    size_t i = tstream_lower_bound(s, id);

    if (i >= s->len || sid_cmp(&tstream_at(s, i)->id, id) != 0)
        return 0;
    remove_at(s, i);
    return 1;
}

int64_t tstream_trim(struct tstream *s, long long maxlen, const struct sid *minid, int approx,
                     long long limit)
{
    int64_t deleted = 0;

    while (s->len) {
        if (!minid && (long long)s->len <= maxlen)
            break;
        /* the head node: entries [0, n) share its number */
        uint32_t node = tstream_at(s, 0)->node;
        size_t n = 1;
        while (n < s->len && tstream_at(s, n)->node == node)
            n++;
        /* the work limit counts whole nodes, as in Redis */
        if (limit && deleted + (int64_t)n > limit)
            break;
        int whole;
        if (!minid)
            whole = (long long)(s->len - n) >= maxlen;
        else
            whole = sid_cmp(&tstream_at(s, n - 1)->id, minid) < 0;
        if (whole) {
            for (size_t i = 0; i < n; i++)
                remove_at(s, 0);
            deleted += (int64_t)n;
            continue;
        }
        if (approx)
            break;
        /* exact: remove entries from within the head node */
        while (s->len && tstream_at(s, 0)->node == node) {
            if (!minid && (long long)s->len <= maxlen)
                break;
            if (minid && sid_cmp(&tstream_at(s, 0)->id, minid) >= 0)
                break;
            remove_at(s, 0);
            deleted++;
        }
        break;
    }
    if (s->len * 4 < s->cap && s->cap > 64) {
        /* give back most of a mostly empty ring */
        size_t cap = s->cap;
        while (cap > 8 && s->len * 2 < cap / 2)
            cap /= 2;
        struct sentry **v = malloc(sizeof(*v) * cap);
        if (v) {
            for (size_t i = 0; i < s->len; i++)
                v[i] = tstream_at(s, i);
            s->mem -= usable(s->v);
            free(s->v);
            s->v = v;
            s->head = 0;
            s->cap = cap;
            s->mem += usable(v);
        }
    }
    return deleted;
}

void *tstream_copy(void *p)
{
    struct tstream *s = p, *c = tstream_create();

    if (!c)
        return NULL;
    c->v = malloc(sizeof(*c->v) * (s->cap ? s->cap : 1));
    if (!c->v) {
        free(c);
        return NULL;
    }
    c->cap = s->cap ? s->cap : 1;
    c->mem += usable(c->v);
    for (size_t i = 0; i < s->len; i++) {
        struct sentry *e = tstream_at(s, i), *n = malloc(sizeof(*e) + e->bytes);
        if (!n) {
            tstream_destroy(c);
            return NULL;
        }
        memcpy(n, e, sizeof(*e) + e->bytes);
        c->v[i] = n;
        c->len++;
        c->mem += usable(n);
    }
    c->last_id = s->last_id;
    c->max_deleted_id = s->max_deleted_id;
    c->entries_added = s->entries_added;
    c->tail_node = s->tail_node;
    c->tail_count = s->tail_count;
    return c;
}
