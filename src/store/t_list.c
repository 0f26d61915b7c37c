#define _GNU_SOURCE
#include "store/t_list.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "store/lpack.h"

static size_t usable(void *p)
{
    return p ? malloc_usable_size(p) : 0;
}

struct tlist *tlist_create(void)
{
    struct tlist *l = calloc(1, sizeof(*l));
    if (l)
        l->mem = usable(l);
    return l;
}

void tlist_destroy(void *p)
{
    struct tlist *l = p;
    struct qnode *n, *next;

    if (!l)
        return;
    for (n = l->head; n; n = next) {
        next = n->next;
        free(n->lp);
        free(n);
    }
    free(l);
}

size_t tlist_mem(void *p)
{
    return ((struct tlist *)p)->mem;
}

void *tlist_copy(void *p)
{
    struct tlist *l = p, *c = tlist_create();

    if (!c)
        return NULL;
    for (struct qnode *n = l->head; n; n = n->next) {
        struct qnode *m = malloc(sizeof(*m));
        if (!m || !(m->lp = lp_dup(n->lp))) {
            free(m);
            tlist_destroy(c);
            return NULL;
        }
        m->next = NULL;
        m->prev = c->tail;
        if (c->tail)
            c->tail->next = m;
        else
            c->head = m;
        c->tail = m;
        c->mem += usable(m) + lp_mem(m->lp);
    }
    c->len = l->len;
    return c;
}

_Atomic size_t tlist_packed_threshold = TLIST_PACKED_DEFAULT;

/* Would a chunk with lp accept one more entry of es bytes? An entry over the packed
 * threshold lives alone in its chunk (Redis's plain quicklist node). */
static int node_fits(const struct lpack *lp, size_t es)
{
    long lim = cfg.list_max_listpack_size;
    size_t big = atomic_load_explicit(&tlist_packed_threshold, memory_order_relaxed);

    if (lp->count == 0)
        return 1;
    if (es > big || lp->bytes > big)
        return 0;
    if (lim > 0)
        return lp->count < (uint32_t)lim && lp->bytes + es <= 8192;
    if (lim < -5)
        lim = -5;
    return lp->bytes + es <= (size_t)(4096 << (-lim - 1));
}

static struct qnode *node_new(struct tlist *l, struct qnode *after, struct qnode *before,
                              size_t cap)
{
    struct qnode *n = malloc(sizeof(*n));

    if (!n)
        return NULL;
    n->lp = lp_create(cap);
    if (!n->lp) {
        free(n);
        return NULL;
    }
    n->prev = after;
    n->next = before;
    if (after)
        after->next = n;
    else
        l->head = n;
    if (before)
        before->prev = n;
    else
        l->tail = n;
    l->mem += usable(n) + lp_mem(n->lp);
    return n;
}

static void node_free(struct tlist *l, struct qnode *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
    l->mem -= usable(n) + lp_mem(n->lp);
    free(n->lp);
    free(n);
}

/* Run op on n->lp keeping mem right (the lpack may move). */
#define LP_CHANGE(l, n, stmt)                                                                  \
    do {                                                                                       \
        size_t before_ = lp_mem((n)->lp);                                                      \
        stmt;                                                                                  \
        (l)->mem = (l)->mem - before_ + lp_mem((n)->lp);                                       \
    } while (0)

int tlist_push(struct tlist *l, int where, const char *p, size_t n)
{
    struct qnode *q = where ? l->tail : l->head;
    size_t es = lp_entry_size(n);
    int r;

    if (!q || !node_fits(q->lp, es)) {
        q = where ? node_new(l, l->tail, NULL, es < 256 ? 256 : es)
                  : node_new(l, NULL, l->head, es < 256 ? 256 : es);
        if (!q)
            return -1;
    }
    LP_CHANGE(l, q, r = where ? lp_append(&q->lp, p, n) : lp_insert(&q->lp, 0, p, n));
    if (r) {
        if (q->lp->count == 0)
            node_free(l, q);
        return -1;
    }
    l->len++;
    return 0;
}

const char *tlist_peek(struct tlist *l, int where, size_t *n)
{
    if (!l->len)
        return NULL;
    if (where)
        return lp_get(l->tail->lp, lp_prev(l->tail->lp, lp_end(l->tail->lp)), n);
    return lp_get(l->head->lp, 0, n);
}

void tlist_pop(struct tlist *l, int where)
{
    struct qnode *q = where ? l->tail : l->head;

    if (!q)
        return;
    lp_delete(q->lp, where ? lp_prev(q->lp, lp_end(q->lp)) : 0, 1);
    l->len--;
    if (q->lp->count == 0)
        node_free(l, q);
    else if ((q->lp->count & 63) == 0)
        LP_CHANGE(l, q, lp_fit(&q->lp));
}

int tlist_seek(struct tlist *l, long idx, struct lpos *pos)
{
    struct qnode *q;

    if (idx < 0)
        idx += (long)l->len;
    if (idx < 0 || idx >= (long)l->len)
        return -1;
    if (idx < (long)l->len / 2) {
        for (q = l->head; idx >= (long)q->lp->count; q = q->next)
            idx -= q->lp->count;
    } else {
        long back = (long)l->len - 1 - idx; /* index from the tail */
        for (q = l->tail; back >= (long)q->lp->count; q = q->prev)
            back -= q->lp->count;
        idx = (long)q->lp->count - 1 - back;
    }
    pos->n = q;
    pos->off = lp_seek(q->lp, idx);
    return 0;
}

const char *tlist_get(const struct lpos *pos, size_t *n)
{
    return lp_get(pos->n->lp, pos->off, n);
}

int tlist_next(struct tlist *l, struct lpos *pos)
{
    (void)l;
    pos->off = lp_next(pos->n->lp, pos->off);
    if (pos->off < lp_end(pos->n->lp))
        return 0;
    if (!pos->n->next)
        return -1;
    pos->n = pos->n->next;
    pos->off = 0;
    return 0;
}

int tlist_prev(struct tlist *l, struct lpos *pos)
{
    (void)l;
    if (pos->off > 0) {
        pos->off = lp_prev(pos->n->lp, pos->off);
        return 0;
    }
    if (!pos->n->prev)
        return -1;
    pos->n = pos->n->prev;
    pos->off = lp_prev(pos->n->lp, lp_end(pos->n->lp));
    return 0;
}

int tlist_delete(struct tlist *l, struct lpos *pos)
{
    struct qnode *q = pos->n;

    lp_delete(q->lp, pos->off, 1);
    l->len--;
    if (q->lp->count == 0) {
        struct qnode *next = q->next;
        node_free(l, q);
        pos->n = next;
        pos->off = 0;
        return next ? 0 : -1;
    }
    if (pos->off >= lp_end(q->lp)) {
        if (!q->next)
            return -1;
        pos->n = q->next;
        pos->off = 0;
    }
    return 0;
}

int tlist_replace(struct tlist *l, struct lpos *pos, const char *p, size_t n)
{
    int r;
    LP_CHANGE(l, pos->n, r = lp_replace(&pos->n->lp, pos->off, p, n));
    return r;
}

int tlist_insert(struct tlist *l, struct lpos *pos, int after, const char *p, size_t n)
{
    struct qnode *q = pos->n;
    uint32_t off = after ? lp_next(q->lp, pos->off) : pos->off;
    size_t es = lp_entry_size(n);
    int r;

    if (!node_fits(q->lp, es)) {
        /* a full chunk: use the neighbour's free end when inserting at an edge, else split */
        if (off == lp_end(q->lp) && (!q->next || !node_fits(q->next->lp, es))) {
            q = node_new(l, q, q->next, es < 256 ? 256 : es);
            if (!q)
                return -1;
            off = 0;
        } else if (off == lp_end(q->lp)) {
            q = q->next;
            off = 0;
        } else if (off == 0 && q->prev && node_fits(q->prev->lp, es)) {
            q = q->prev;
            off = lp_end(q->lp);
        } else if (off > 0) {
            struct qnode *m = node_new(l, q, q->next, q->lp->bytes - off);
            uint32_t moved = 0;
            if (!m)
                return -1;
            memcpy(m->lp->data, q->lp->data + off, q->lp->bytes - off);
            m->lp->bytes = q->lp->bytes - off;
            for (uint32_t o = off; o < q->lp->bytes; o = lp_next(q->lp, o))
                moved++;
            m->lp->count = moved;
            q->lp->count -= moved;
            q->lp->bytes = off;
            LP_CHANGE(l, q, lp_fit(&q->lp));
        }
    }
    LP_CHANGE(l, q, r = lp_insert(&q->lp, off, p, n));
    if (r)
        return -1;
    l->len++;
    return 0;
}

void tlist_trim(struct tlist *l, long start, long end)
{
    long ltrim = start, rtrim = (long)l->len - 1 - end;

    while (ltrim > 0) {
        struct qnode *q = l->head;
        if ((long)q->lp->count <= ltrim) {
            ltrim -= q->lp->count;
            l->len -= q->lp->count;
            node_free(l, q);
        } else {
            lp_delete(q->lp, 0, (uint32_t)ltrim);
            l->len -= (size_t)ltrim;
            LP_CHANGE(l, q, lp_fit(&q->lp));
            ltrim = 0;
        }
    }
    while (rtrim > 0) {
        struct qnode *q = l->tail;
        if ((long)q->lp->count <= rtrim) {
            rtrim -= q->lp->count;
            l->len -= q->lp->count;
            node_free(l, q);
        } else {
            uint32_t off = lp_seek(q->lp, (long)q->lp->count - rtrim);
            lp_delete(q->lp, off, (uint32_t)rtrim);
            l->len -= (size_t)rtrim;
            LP_CHANGE(l, q, lp_fit(&q->lp));
            rtrim = 0;
        }
    }
}
