#define _GNU_SOURCE
#include "store/t_set.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "store/lpack.h"

static size_t usable(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

/* ---- intset ---- */

static int64_t is_get(const struct intset *is, uint32_t i)
{
    switch (is->width) {
    case 2: {
        int16_t v;
        memcpy(&v, is->data + i * 2, 2);
        return v;
    }
    case 4: {
        int32_t v;
        memcpy(&v, is->data + i * 4, 4);
        return v;
    }
    default: {
        int64_t v;
        memcpy(&v, is->data + (size_t)i * 8, 8);
        return v;
    }
    }
}

static void is_set(struct intset *is, uint32_t i, int64_t v)
{
    if (is->width == 2) {
        int16_t x = (int16_t)v;
        memcpy(is->data + i * 2, &x, 2);
    } else if (is->width == 4) {
        int32_t x = (int32_t)v;
        memcpy(is->data + i * 4, &x, 4);
    } else {
        memcpy(is->data + (size_t)i * 8, &v, 8);
    }
}

static uint32_t width_of(int64_t v)
{
    if (v >= INT16_MIN && v <= INT16_MAX)
        return 2;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 4;
    return 8;
}

/* Binary search: 1 and *pos when found, else 0 and *pos where it would go. */
static int is_search(const struct intset *is, int64_t v, uint32_t *pos)
{
    uint32_t lo = 0, hi = is->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t x = is_get(is, mid);
        if (x == v) {
            *pos = mid;
            return 1;
        }
        if (x < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *pos = lo;
    return 0;
}

static struct intset *is_new(uint32_t width, uint32_t cap)
{
    struct intset *is = malloc(sizeof(*is) + (size_t)width * cap);
    if (is) {
        is->width = width;
        is->count = 0;
    }
    return is;
}

/* Insert v (not present). Returns 0 or -1 (OOM). */
static int is_insert(struct intset **isp, int64_t v)
{
    struct intset *is = *isp;
    uint32_t w = width_of(v), pos;

    if (w > is->width) {
        struct intset *n = is_new(w, is->count + 1);
        if (!n)
            return -1;
        n->count = is->count + 1;
        /* a wider value is either below or above every current one */
        int front = v < 0;
        for (uint32_t i = 0; i < is->count; i++)
            is_set(n, i + (uint32_t)front, is_get(is, i));
        is_set(n, front ? 0 : is->count, v);
        free(is);
        *isp = n;
        return 0;
    }
    is_search(is, v, &pos);
    size_t need = sizeof(*is) + (size_t)is->width * (is->count + 1);
    if (need > usable(is)) {
        struct intset *n = realloc(is, need + (need >> 3));
        if (!n)
            return -1;
        is = *isp = n;
    }
    memmove(is->data + (size_t)(pos + 1) * is->width, is->data + (size_t)pos * is->width,
            (size_t)(is->count - pos) * is->width);
    is_set(is, pos, v);
    is->count++;
    return 0;
}

static void is_delete(struct intset *is, uint32_t pos)
{
    memmove(is->data + (size_t)pos * is->width, is->data + (size_t)(pos + 1) * is->width,
            (size_t)(is->count - pos - 1) * is->width);
    is->count--;
}

/* ---- dict entries ---- */

#define KOFF ((uint32_t)sizeof(struct dentry))

static struct dentry *entry_new(const char *p, size_t n)
{
    struct dentry *e = malloc(sizeof(*e) + n);
    if (!e)
        return NULL;
    e->next = NULL;
    e->klen = (uint32_t)n;
    e->vlen = 0;
    memcpy(e + 1, p, n);
    return e;
}

static int as_int(const char *p, size_t n, int64_t *v)
{
    long long x;
    if (n > 20 || !util_str2ll(p, n, &x))
        return 0;
    *v = x;
    return 1;
}

struct tset *tset_create(const char *p, size_t n)
{
    struct tset *s = calloc(1, sizeof(*s));
    int64_t v;

    if (!s)
        return NULL;
    if (as_int(p, n, &v) && cfg.set_max_intset_entries > 0) {
        s->enc = TSET_INTSET;
        s->u.is = is_new(2, 4);
    } else if (n <= (size_t)cfg.set_max_listpack_value && cfg.set_max_listpack_entries > 0) {
        s->enc = TSET_LISTPACK;
        s->u.lp = lp_create(64);
    } else {
        s->enc = TSET_HT;
        s->u.d = dict_create(KOFF, 0);
    }
    if (!s->u.is) {
        free(s);
        return NULL;
    }
    return s;
}

void tset_destroy(void *p)
{
    struct tset *s = p;
    if (!s)
        return;
    if (s->enc == TSET_HT)
        dict_destroy(&s->u.d, 1);
    else
        free(s->u.is);
    free(s);
}

size_t tset_mem(void *p)
{
    struct tset *s = p;
    if (s->enc == TSET_HT)
        return usable(s) + dict_mem(s->u.d) + s->emem;
    return usable(s) + usable(s->u.is);
}

const char *tset_encoding_name(const struct tset *s)
{
    static const char *names[] = {"intset", "listpack", "hashtable"};
    return names[s->enc];
}

uint64_t tset_len(const struct tset *s)
{
    switch (s->enc) {
    case TSET_INTSET:
        return s->u.is->count;
    case TSET_LISTPACK:
        return s->u.lp->count;
    default:
        return s->u.d->count;
    }
}

/* Move every member into a dict. Returns 0 or -1 (OOM, unchanged). */
static int to_dict(struct tset *s)
{
    struct dict *d = dict_create(KOFF, tset_len(s) + 1);
    struct tset_iter it;
    const char *p;
    size_t n, emem = 0;

    if (!d)
        return -1;
    tset_iter_init(&it, s);
    while (tset_next(&it, &p, &n)) {
        struct dentry *e = entry_new(p, n);
        if (!e || dict_add(d, e)) {
            free(e);
            dict_destroy(&d, 1);
            return -1;
        }
        emem += usable(e);
    }
    free(s->u.is);
    s->u.d = d;
    s->enc = TSET_HT;
    s->emem = emem;
    return 0;
}

static int intset_to_listpack(struct tset *s)
{
    struct intset *is = s->u.is;
    struct lpack *lp = lp_create((size_t)is->count * 8 + 64);
    char buf[24];

    if (!lp)
        return -1;
    for (uint32_t i = 0; i < is->count; i++) {
        int n = util_ll2str(buf, is_get(is, i));
        if (lp_append(&lp, buf, (size_t)n)) {
            free(lp);
            return -1;
        }
    }
    free(is);
    s->u.lp = lp;
    s->enc = TSET_LISTPACK;
    return 0;
}

int tset_add(struct tset *s, const char *p, size_t n)
{
    int64_t v;
    uint32_t pos;

    if (s->enc == TSET_INTSET) {
        if (as_int(p, n, &v)) {
            if (is_search(s->u.is, v, &pos))
                return 0;
            if (s->u.is->count < (uint32_t)cfg.set_max_intset_entries)
                return is_insert(&s->u.is, v) ? -1 : 1;
            if (to_dict(s))
                return -1;
        } else if (s->u.is->count + 1 <= (uint32_t)cfg.set_max_listpack_entries &&
                   n <= (size_t)cfg.set_max_listpack_value) {
            if (intset_to_listpack(s))
                return -1;
        } else if (to_dict(s)) {
            return -1;
        }
    }
    if (s->enc == TSET_LISTPACK) {
        if (lp_find(s->u.lp, p, n, 1) != UINT32_MAX)
            return 0;
        if (s->u.lp->count + 1 <= (uint32_t)cfg.set_max_listpack_entries &&
            n <= (size_t)cfg.set_max_listpack_value)
            return lp_append(&s->u.lp, p, n) ? -1 : 1;
        if (to_dict(s))
            return -1;
    }
    if (dict_find(s->u.d, p, n))
        return 0;
    struct dentry *e = entry_new(p, n);
    if (!e || dict_add(s->u.d, e)) {
        free(e);
        return -1;
    }
    s->emem += usable(e);
    return 1;
}

int tset_remove(struct tset *s, const char *p, size_t n)
{
    int64_t v;
    uint32_t pos;

    switch (s->enc) {
    case TSET_INTSET:
        if (!as_int(p, n, &v) || !is_search(s->u.is, v, &pos))
            return 0;
        is_delete(s->u.is, pos);
        return 1;
    case TSET_LISTPACK:
        pos = lp_find(s->u.lp, p, n, 1);
        if (pos == UINT32_MAX)
            return 0;
        lp_delete(s->u.lp, pos, 1);
        if ((s->u.lp->count & 15) == 0)
            lp_fit(&s->u.lp);
        return 1;
    default: {
        struct dentry *e = dict_unlink(s->u.d, p, n);
        if (!e)
            return 0;
        s->emem -= usable(e);
        free(e);
        return 1;
    }
    }
}

int tset_contains(const struct tset *s, const char *p, size_t n)
{
    int64_t v;
    uint32_t pos;

    switch (s->enc) {
    case TSET_INTSET:
        return as_int(p, n, &v) && is_search(s->u.is, v, &pos);
    case TSET_LISTPACK:
        return lp_find(s->u.lp, p, n, 1) != UINT32_MAX;
    default:
        return dict_find(s->u.d, p, n) != NULL;
    }
}

void tset_iter_init(struct tset_iter *it, const struct tset *s)
{
    it->s = s;
    it->i = 0;
    it->off = 0;
    if (s->enc == TSET_HT)
        dict_iter_init(&it->di, s->u.d);
}

int tset_next(struct tset_iter *it, const char **p, size_t *n)
{
    const struct tset *s = it->s;

    switch (s->enc) {
    case TSET_INTSET:
        if (it->i >= s->u.is->count)
            return 0;
        *n = (size_t)util_ll2str(it->buf, is_get(s->u.is, (uint32_t)it->i++));
        *p = it->buf;
        return 1;
    case TSET_LISTPACK:
        if (it->off >= lp_end(s->u.lp))
            return 0;
        *p = lp_get(s->u.lp, it->off, n);
        it->off = lp_next(s->u.lp, it->off);
        return 1;
    default: {
        struct dentry *e = dict_iter_next(&it->di);
        if (!e)
            return 0;
        *p = dict_key(s->u.d, e);
        *n = e->klen;
        return 1;
    }
    }
}

void tset_random(const struct tset *s, char *buf, const char **p, size_t *n)
{
    uint64_t r = rnd_next();

    switch (s->enc) {
    case TSET_INTSET:
        *n = (size_t)util_ll2str(buf, is_get(s->u.is, (uint32_t)(r % s->u.is->count)));
        *p = buf;
        break;
    case TSET_LISTPACK:
        *p = lp_get(s->u.lp, lp_seek(s->u.lp, (long)(r % s->u.lp->count)), n);
        break;
    default: {
        struct dentry *e = dict_random(s->u.d, r);
        *p = dict_key(s->u.d, e);
        *n = e->klen;
    }
    }
}

struct scan_arg {
    tset_scan_fn *fn;
    void *arg;
    const struct dict *d;
};

static void scan_cb(struct dentry *e, void *arg)
{
    struct scan_arg *a = arg;
    a->fn(dict_key(a->d, e), e->klen, a->arg);
}

uint64_t tset_scan(const struct tset *s, uint64_t cursor, long count, tset_scan_fn *fn, void *arg)
{
    if (s->enc != TSET_HT) {
        struct tset_iter it;
        const char *p;
        size_t n;
        tset_iter_init(&it, s);
        while (tset_next(&it, &p, &n))
            fn(p, n, arg);
        return 0;
    }
    struct scan_arg a = {fn, arg, s->u.d};
    long maxiter = count * 10;
    do {
        cursor = dict_scan(s->u.d, cursor, scan_cb, &a);
    } while (cursor && --maxiter && count-- > 0);
    return cursor;
}

void *tset_copy(void *p)
{
    struct tset *s = p, *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->enc = s->enc;
    if (s->enc == TSET_INTSET) {
        size_t sz = sizeof(struct intset) + (size_t)s->u.is->width * s->u.is->count;
        c->u.is = malloc(sz);
        if (c->u.is)
            memcpy(c->u.is, s->u.is, sz);
    } else if (s->enc == TSET_LISTPACK) {
        c->u.lp = lp_dup(s->u.lp);
    } else {
        c->u.d = dict_create(KOFF, s->u.d->count);
        struct tset_iter it;
        const char *m;
        size_t n;
        tset_iter_init(&it, s);
        while (c->u.d && tset_next(&it, &m, &n)) {
            struct dentry *e = entry_new(m, n);
            if (!e || dict_add(c->u.d, e)) {
                free(e);
                dict_destroy(&c->u.d, 1);
                break;
            }
            c->emem += usable(e);
        }
    }
    if (!c->u.is) {
        free(c);
        return NULL;
    }
    return c;
}
