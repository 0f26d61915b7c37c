#define _GNU_SOURCE
#include "store/t_hash.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "store/lpack.h"

#define KOFF ((uint32_t)sizeof(struct dentry))

static size_t usable(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

static struct dentry *entry_new(const char *f, size_t fn, const char *v, size_t vn)
{
    struct dentry *e = malloc(sizeof(*e) + fn + vn);
    if (!e)
        return NULL;
    e->next = NULL;
    e->klen = (uint32_t)fn;
    e->vlen = (uint32_t)vn;
    memcpy((char *)(e + 1), f, fn);
    memcpy((char *)(e + 1) + fn, v, vn);
    return e;
}

static const char *entry_val(const struct dentry *e)
{
    return (const char *)(e + 1) + e->klen;
}

struct thash *thash_create(void)
{
    struct thash *h = calloc(1, sizeof(*h));

    if (!h)
        return NULL;
    if (cfg.hash_max_listpack_entries > 0) {
        h->enc = THASH_LISTPACK;
        h->u.lp = lp_create(64);
    } else {
        h->enc = THASH_HT;
        h->u.d = dict_create(KOFF, 0);
    }
    if (!h->u.lp) {
        free(h);
        return NULL;
    }
    return h;
}

void thash_destroy(void *p)
{
    struct thash *h = p;
    if (!h)
        return;
    if (h->enc == THASH_HT)
        dict_destroy(&h->u.d, 1);
    else
        free(h->u.lp);
    free(h);
}

size_t thash_mem(void *p)
{
    struct thash *h = p;
    if (h->enc == THASH_HT)
        return usable(h) + dict_mem(h->u.d) + h->emem;
    return usable(h) + lp_mem(h->u.lp);
}

const char *thash_encoding_name(const struct thash *h)
{
    return h->enc == THASH_HT ? "hashtable" : "listpack";
}

uint64_t thash_len(const struct thash *h)
{
    return h->enc == THASH_HT ? h->u.d->count : h->u.lp->count / 2;
}

static int to_dict(struct thash *h)
{
    struct dict *d = dict_create(KOFF, thash_len(h) + 1);
    struct thash_iter it;
    const char *f, *v;
    size_t fn, vn, emem = 0;

    if (!d)
        return -1;
    thash_iter_init(&it, h);
    while (thash_next(&it, &f, &fn, &v, &vn)) {
        struct dentry *e = entry_new(f, fn, v, vn);
        if (!e || dict_add(d, e)) {
            free(e);
            dict_destroy(&d, 1);
            return -1;
        }
        emem += usable(e);
    }
    free(h->u.lp);
    h->u.d = d;
    h->enc = THASH_HT;
    h->emem = emem;
    return 0;
}

int thash_convert_for(struct thash *h, size_t maxlen)
{
    if (h->enc == THASH_LISTPACK && maxlen > (size_t)cfg.hash_max_listpack_value)
        return to_dict(h);
    return 0;
}

int thash_get(const struct thash *h, const char *f, size_t fn, const char **v, size_t *vn)
{
    if (h->enc == THASH_LISTPACK) {
        uint32_t off = lp_find(h->u.lp, f, fn, 2);
        if (off == UINT32_MAX)
            return 0;
        *v = lp_get(h->u.lp, lp_next(h->u.lp, off), vn);
        return 1;
    }
    struct dentry *e = dict_find(h->u.d, f, fn);
    if (!e)
        return 0;
    *v = entry_val(e);
    *vn = e->vlen;
    return 1;
}

int thash_set(struct thash *h, const char *f, size_t fn, const char *v, size_t vn)
{
    if (h->enc == THASH_LISTPACK) {
        uint32_t off = lp_find(h->u.lp, f, fn, 2);
        if (off != UINT32_MAX && vn <= (size_t)cfg.hash_max_listpack_value)
            return lp_replace(&h->u.lp, lp_next(h->u.lp, off), v, vn) ? -1 : 0;
        if (off == UINT32_MAX && h->u.lp->count / 2 < (uint32_t)cfg.hash_max_listpack_entries &&
            fn <= (size_t)cfg.hash_max_listpack_value && vn <= (size_t)cfg.hash_max_listpack_value) {
            if (lp_append(&h->u.lp, f, fn))
                return -1;
            if (lp_append(&h->u.lp, v, vn)) {
                lp_delete(h->u.lp, lp_prev(h->u.lp, lp_end(h->u.lp)), 1);
                return -1;
            }
            return 1;
        }
        if (to_dict(h))
            return -1;
    }
    struct dentry *old = dict_find(h->u.d, f, fn);
    if (old && old->vlen == vn) {
        memcpy((char *)(old + 1) + fn, v, vn);
        return 0;
    }
    struct dentry *e = entry_new(f, fn, v, vn);
    if (!e)
        return -1;
    if (old) {
        dict_replace(h->u.d, old, e);
        h->emem += usable(e) - usable(old);
        free(old);
        return 0;
    }
    if (dict_add(h->u.d, e)) {
        free(e);
        return -1;
    }
    h->emem += usable(e);
    return 1;
}

int thash_del(struct thash *h, const char *f, size_t fn)
{
    if (h->enc == THASH_LISTPACK) {
        uint32_t off = lp_find(h->u.lp, f, fn, 2);
        if (off == UINT32_MAX)
            return 0;
        lp_delete(h->u.lp, off, 2);
        if ((h->u.lp->count & 15) == 0)
            lp_fit(&h->u.lp);
        return 1;
    }
    struct dentry *e = dict_unlink(h->u.d, f, fn);
    if (!e)
        return 0;
    h->emem -= usable(e);
    free(e);
    return 1;
}

void thash_iter_init(struct thash_iter *it, const struct thash *h)
{
    it->h = h;
    it->off = 0;
    if (h->enc == THASH_HT)
        dict_iter_init(&it->di, h->u.d);
}

int thash_next(struct thash_iter *it, const char **f, size_t *fn, const char **v, size_t *vn)
{
    const struct thash *h = it->h;

    if (h->enc == THASH_LISTPACK) {
        if (it->off >= lp_end(h->u.lp))
            return 0;
        *f = lp_get(h->u.lp, it->off, fn);
        it->off = lp_next(h->u.lp, it->off);
        *v = lp_get(h->u.lp, it->off, vn);
        it->off = lp_next(h->u.lp, it->off);
        return 1;
    }
    struct dentry *e = dict_iter_next(&it->di);
    if (!e)
        return 0;
    *f = (const char *)(e + 1);
    *fn = e->klen;
    *v = entry_val(e);
    *vn = e->vlen;
    return 1;
}

void thash_random(const struct thash *h, const char **f, size_t *fn, const char **v, size_t *vn)
{
    uint64_t r = rnd_next();

    if (h->enc == THASH_LISTPACK) {
        uint32_t off = lp_seek(h->u.lp, (long)(r % (h->u.lp->count / 2)) * 2);
        *f = lp_get(h->u.lp, off, fn);
        *v = lp_get(h->u.lp, lp_next(h->u.lp, off), vn);
        return;
    }
    struct dentry *e = dict_random(h->u.d, r);
    *f = (const char *)(e + 1);
    *fn = e->klen;
    *v = entry_val(e);
    *vn = e->vlen;
}

struct scan_arg {
    thash_scan_fn *fn;
    void *arg;
};

static void scan_cb(struct dentry *e, void *arg)
{
    struct scan_arg *a = arg;
    a->fn((const char *)(e + 1), e->klen, entry_val(e), e->vlen, a->arg);
}

uint64_t thash_scan(const struct thash *h, uint64_t cursor, long count, thash_scan_fn *fn,
                    void *arg)
{
    if (h->enc == THASH_LISTPACK) {
        struct thash_iter it;
        const char *f, *v;
        size_t fl, vl;
        thash_iter_init(&it, h);
        while (thash_next(&it, &f, &fl, &v, &vl))
            fn(f, fl, v, vl, arg);
        return 0;
    }
    struct scan_arg a = {fn, arg};
    do {
        cursor = dict_scan(h->u.d, cursor, scan_cb, &a);
    } while (cursor && count-- > 0);
    return cursor;
}

void *thash_copy(void *p)
{
    struct thash *h = p, *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->enc = h->enc;
    if (h->enc == THASH_LISTPACK) {
        c->u.lp = lp_dup(h->u.lp);
    } else {
        struct thash_iter it;
        const char *f, *v;
        size_t fl, vl;
        c->u.d = dict_create(KOFF, h->u.d->count);
        thash_iter_init(&it, h);
        while (c->u.d && thash_next(&it, &f, &fl, &v, &vl)) {
            struct dentry *e = entry_new(f, fl, v, vl);
            if (!e || dict_add(c->u.d, e)) {
                free(e);
                dict_destroy(&c->u.d, 1);
                break;
            }
            c->emem += usable(e);
        }
    }
    if (!c->u.lp) {
        free(c);
        return NULL;
    }
    return c;
}
