#define _GNU_SOURCE
#include "store/dict.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

uint64_t dict_hash(const char *p, size_t n)
{
    return util_hash(p, n);
}

struct dict *dict_create(uint32_t koff, uint64_t expect)
{
    struct dict *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->koff = koff;
    if (expect && expect < (1ULL << 31)) {
        uint64_t sz = 4;
        while (sz < expect)
            sz <<= 1;
        d->tab = calloc(sz, sizeof(*d->tab));
        if (!d->tab) {
            free(d);
            return NULL;
        }
        d->mask = sz - 1;
    }
    return d;
}

void dict_destroy(struct dict **dp, int free_entries)
{
    struct dict *d = *dp;

    if (!d)
        return;
    if (free_entries && d->tab) {
        for (uint64_t i = 0; i <= d->mask; i++) {
            struct dentry *e = d->tab[i];
            while (e) {
                struct dentry *n = e->next;
                free(e);
                e = n;
            }
        }
    }
    free(d->tab);
    free(d);
    *dp = NULL;
}

size_t dict_mem(const struct dict *d)
{
    return malloc_usable_size((void *)d) + (d->tab ? malloc_usable_size(d->tab) : 0);
}

static inline uint64_t ehash(const struct dict *d, const struct dentry *e)
{
    return util_hash(dict_key(d, e), e->klen);
}

static void rehash(struct dict *d, uint64_t size)
{
    struct dentry **t = calloc(size, sizeof(*t));

    if (!t)
        return;
    if (d->tab) {
        for (uint64_t i = 0; i <= d->mask; i++) {
            struct dentry *e = d->tab[i];
            while (e) {
                struct dentry *n = e->next;
                uint64_t b = ehash(d, e) & (size - 1);
                e->next = t[b];
                t[b] = e;
                e = n;
            }
        }
        free(d->tab);
    }
    d->tab = t;
    d->mask = size - 1;
}

struct dentry *dict_find(const struct dict *d, const char *key, size_t n)
{
    if (!d->tab)
        return NULL;
    struct dentry *e = d->tab[util_hash(key, n) & d->mask];
    while (e) {
        if (e->klen == n && memcmp(dict_key(d, e), key, n) == 0)
            return e;
        e = e->next;
    }
    return NULL;
}

int dict_add(struct dict *d, struct dentry *e)
{
    uint64_t b;

    if (!d->tab) {
        rehash(d, 4);
        if (!d->tab)
            return -1;
    } else if (d->count >= d->mask + 1) {
        rehash(d, (d->mask + 1) * 2);
    }
    b = ehash(d, e) & d->mask;
    e->next = d->tab[b];
    d->tab[b] = e;
    d->count++;
    return 0;
}

struct dentry *dict_unlink(struct dict *d, const char *key, size_t n)
{
    struct dentry **pp, *e;

    if (!d->tab)
        return NULL;
    pp = &d->tab[util_hash(key, n) & d->mask];
    while ((e = *pp)) {
        if (e->klen == n && memcmp(dict_key(d, e), key, n) == 0) {
            *pp = e->next;
            d->count--;
            if (d->mask > 3 && d->count < (d->mask + 1) / 8) {
                uint64_t sz = 4;
                while (sz < d->count * 2)
                    sz <<= 1;
                rehash(d, sz);
            }
            return e;
        }
        pp = &e->next;
    }
    return NULL;
}

void dict_replace(struct dict *d, struct dentry *old, struct dentry *e)
{
    struct dentry **pp = &d->tab[ehash(d, e) & d->mask];

    while (*pp && *pp != old)
        pp = &(*pp)->next;
    if (*pp) {
        e->next = old->next;
        *pp = e;
    }
}

struct dentry *dict_random(const struct dict *d, uint64_t r)
{
    struct dentry *e;
    unsigned len, k = 4;

    /* Every entry equally likely (HRANDFIELD's and SRANDMEMBER's counts are tested for a
     * uniform spread): a random bucket and a random position below k, retried until the
     * position holds an entry. The table keeps 1/8 to 1 entry per bucket, so that is a few
     * tries; a chain longer than k (rare) raises k, so its tail is reachable too. */
    for (int tries = 0;; tries++) {
        e = d->tab[(r ^ (r >> 32)) & d->mask];
        r = rnd_next();
        if (!e)
            continue;
        len = 0;
        for (struct dentry *x = e; x; x = x->next)
            len++;
        if (len > k)
            k = len;
        unsigned at = (unsigned)((r >> 16) % k);
        r = rnd_next();
        if (at < len || tries > 1000) {
            for (at %= len; at > 0; at--)
                e = e->next;
            return e;
        }
    }
}

static uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return __builtin_bswap64(v);
}

uint64_t dict_scan(const struct dict *d, uint64_t v, dict_scan_fn *fn, void *arg)
{
    if (!d->tab)
        return 0;
    for (struct dentry *e = d->tab[v & d->mask]; e; e = e->next)
        fn(e, arg);
    v |= ~d->mask;
    v = rev64(v);
    v++;
    return rev64(v);
}

void dict_iter_init(struct dict_iter *it, struct dict *d)
{
    it->d = d;
    it->b = 0;
    it->e = NULL;
    it->next = d->tab ? d->tab[0] : NULL;
}

struct dentry *dict_iter_next(struct dict_iter *it)
{
    struct dict *d = it->d;

    if (!d->tab)
        return NULL;
    while (!it->next) {
        if (++it->b > d->mask)
            return NULL;
        it->next = d->tab[it->b];
    }
    it->e = it->next;
    it->next = it->e->next;
    return it->e;
}

static _Thread_local uint64_t rnd_state;

uint64_t rnd_next(void)
{
    uint64_t x = rnd_state;
    if (!x) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&rnd_state;
        if (!x)
            x = 88172645463325252ULL;
    }
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rnd_state = x;
    return x * 2685821657736338717ULL;
}
