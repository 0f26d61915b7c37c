#define _GNU_SOURCE
#include "store/lpack.h"

#include <malloc.h>
#include <stdlib.h>

struct lpack *lp_create(size_t cap)
{
    struct lpack *lp = malloc(sizeof(*lp) + cap);
    if (!lp)
        return NULL;
    lp->bytes = 0;
    lp->count = 0;
    lp->pad = 0;
    lp->cap = (uint32_t)(malloc_usable_size(lp) - sizeof(*lp));
    return lp;
}

void lp_destroy(struct lpack **lpp)
{
    free(*lpp);
    *lpp = NULL;
}

struct lpack *lp_dup(const struct lpack *lp)
{
    struct lpack *n = lp_create(lp->bytes);
    if (!n)
        return NULL;
    memcpy(n->data, lp->data, lp->bytes);
    n->bytes = lp->bytes;
    n->count = lp->count;
    return n;
}

size_t lp_mem(const struct lpack *lp)
{
    return lp ? malloc_usable_size((void *)lp) : 0;
}

uint32_t lp_seek(const struct lpack *lp, long idx)
{
    uint32_t off;

    if (idx < 0)
        idx += lp->count;
    if (idx < 0 || idx >= (long)lp->count)
        return UINT32_MAX;
    if (idx <= (long)lp->count / 2) {
        off = 0;
        while (idx--)
            off = lp_next(lp, off);
    } else {
        off = lp->bytes;
        for (long i = lp->count - idx; i > 0; i--)
            off = lp_prev(lp, off);
    }
    return off;
}

static int lp_grow(struct lpack **lpp, size_t need)
{
    struct lpack *lp = *lpp;
    size_t cap;

    if (need <= lp->cap)
        return 0;
    if (need > UINT32_MAX - 64)
        return -1;
    /* grow by at least an eighth so a run of pushes does not realloc every time */
    cap = need + (need >> 3);
    lp = realloc(lp, sizeof(*lp) + cap);
    if (!lp)
        return -1;
    lp->cap = (uint32_t)(malloc_usable_size(lp) - sizeof(*lp));
    *lpp = lp;
    return 0;
}

static void write_entry(char *d, const char *p, size_t n)
{
    unsigned char *q = (unsigned char *)d;
    if (n < 0x80) {
        q[0] = (unsigned char)n;
        if (p)
            memcpy(q + 1, p, n);
        q[n + 1] = (unsigned char)n;
    } else {
        uint32_t l = (uint32_t)n;
        q[0] = 0x80;
        memcpy(q + 1, &l, 4);
        if (p)
            memcpy(q + 5, p, n);
        memcpy(q + 5 + n, &l, 4);
        q[n + 9] = 0x80;
    }
}

int lp_insert(struct lpack **lpp, uint32_t off, const char *p, size_t n)
{
    size_t es = lp_entry_size(n);
    struct lpack *lp;

    if (lp_grow(lpp, (*lpp)->bytes + es))
        return -1;
    lp = *lpp;
    memmove(lp->data + off + es, lp->data + off, lp->bytes - off);
    write_entry(lp->data + off, p, n);
    lp->bytes += (uint32_t)es;
    lp->count++;
    return 0;
}

int lp_replace(struct lpack **lpp, uint32_t off, const char *p, size_t n)
{
    struct lpack *lp = *lpp;
    size_t old, es = lp_entry_size(n);

    lp_get(lp, off, &old);
    old = lp_entry_size(old);
    if (es > old) {
        if (lp_grow(lpp, lp->bytes + es - old))
            return -1;
        lp = *lpp;
    }
    memmove(lp->data + off + es, lp->data + off + old, lp->bytes - off - old);
    write_entry(lp->data + off, p, n);
    lp->bytes = (uint32_t)(lp->bytes + es - old);
    return 0;
}

void lp_delete(struct lpack *lp, uint32_t off, uint32_t cnt)
{
    uint32_t end = off;

    for (uint32_t i = 0; i < cnt && end < lp->bytes; i++) {
        end = lp_next(lp, end);
        lp->count--;
    }
    memmove(lp->data + off, lp->data + end, lp->bytes - end);
    lp->bytes -= end - off;
}

void lp_fit(struct lpack **lpp)
{
    struct lpack *lp = *lpp;

    if (lp->cap > 64 && lp->bytes < lp->cap - lp->cap / 4) {
        struct lpack *n = realloc(lp, sizeof(*lp) + lp->bytes + (lp->bytes >> 3));
        if (n) {
            n->cap = (uint32_t)(malloc_usable_size(n) - sizeof(*n));
            *lpp = n;
        }
    }
}

uint32_t lp_find(const struct lpack *lp, const char *p, size_t n, int step)
{
    uint32_t off = 0;

    while (off < lp->bytes) {
        size_t l;
        const char *e = lp_get(lp, off, &l);
        if (l == n && memcmp(e, p, n) == 0)
            return off;
        off += (uint32_t)lp_entry_size(l);
        for (int i = 1; i < step; i++)
            off = lp_next(lp, off);
    }
    return UINT32_MAX;
}
