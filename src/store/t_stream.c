#define _GNU_SOURCE
#include "store/t_stream.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "store/lpack.h"
#include "store/t_stream_cg.h"

#define NODE_MAX_ENTRIES 100 /* Redis's stream-node-max-entries default */

static size_t usable(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

/* ---- varints (LEB128) ---- */

static size_t vsize(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static unsigned char *vput(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

static const unsigned char *vget(const unsigned char *p, uint64_t *v)
{
    uint64_t x = 0;
    int shift = 0;
    while (*p & 0x80) {
        x |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    x |= (uint64_t)*p++ << shift;
    *v = x;
    return p;
}

size_t sfield_size(size_t n)
{
    return vsize(n) + n;
}

unsigned char *sfield_put(unsigned char *p, const char *v, size_t n)
{
    p = vput(p, n);
    memcpy(p, v, n);
    return p + n;
}

/* ---- nodes ---- */

struct tstream *tstream_create(void)
{
    struct tstream *s = calloc(1, sizeof(*s));
    if (s)
        s->mem = usable(s);
    return s;
}

static void node_free(struct snode *nd)
{
    free(nd->lp);
    free(nd);
}

void tstream_destroy(void *p)
{
    struct tstream *s = p;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        node_free(tstream_node(s, i));
    free(s->nodes);
    scg_free_all(s);
    free(s);
}

size_t tstream_mem(void *p)
{
    return ((struct tstream *)p)->mem;
}

static size_t node_mem(const struct snode *nd)
{
    return usable(nd) + lp_mem(nd->lp);
}

/* Resize the ring to cap (a power of two >= n). */
static int ring_resize(struct tstream *s, size_t cap)
{
    struct snode **v = malloc(sizeof(*v) * cap);

    if (!v)
        return -1;
    for (size_t i = 0; i < s->n; i++)
        v[i] = tstream_node(s, i);
    s->mem -= usable(s->nodes);
    free(s->nodes);
    s->nodes = v;
    s->head = 0;
    s->cap = cap;
    s->mem += usable(v);
    return 0;
}

/* Remove node i from the ring (freed). */
static void ring_remove(struct tstream *s, size_t i)
{
    struct snode *nd = tstream_node(s, i);

    s->mem -= node_mem(nd);
    node_free(nd);
    if (i == 0) {
        s->head = (s->head + 1) & (s->cap - 1);
    } else {
        for (size_t j = i; j + 1 < s->n; j++)
            s->nodes[(s->head + j) & (s->cap - 1)] = tstream_node(s, j + 1);
    }
    s->n--;
    if (s->cap > 16 && s->n * 4 < s->cap)
        ring_resize(s, s->cap / 2);
}

/* Decode the record at off of node nd. */
static void decode(const struct snode *nd, uint32_t off, struct sent *e)
{
    size_t len;
    const unsigned char *p = (const unsigned char *)lp_get(nd->lp, off, &len), *end = p + len;
    uint64_t d, seq, nf;

    p = vget(p, &d);
    p = vget(p, &seq);
    p = vget(p, &nf);
    e->id.ms = nd->base_ms + d;
    e->id.seq = seq;
    e->nfields = (uint32_t)nf;
    e->f = p;
    e->end = end;
}

static struct sid rec_id(const struct snode *nd, uint32_t off)
{
    struct sent e;
    decode(nd, off, &e);
    return e.id;
}

int sentry_next(struct sent *e, const char **p, size_t *n)
{
    uint64_t l;

    if (e->f >= e->end)
        return 0;
    e->f = vget(e->f, &l);
    *p = (const char *)e->f;
    *n = (size_t)l;
    e->f += l;
    return 1;
}

void tstream_get(const struct tstream *s, const struct spos *pos, struct sent *e)
{
    decode(tstream_node(s, pos->ni), pos->off, e);
}

unsigned char *tstream_append(struct tstream *s, const struct sid *id, uint32_t nfields,
                              size_t fbytes)
{
    struct snode *nd = s->n ? tstream_node(s, s->n - 1) : NULL;
    int fresh = 0;

    /* the last node takes it while it has room (deleted entries count), as in Redis */
    if (!nd || nd->added >= NODE_MAX_ENTRIES) {
        if (s->n == s->cap && ring_resize(s, s->cap ? s->cap * 2 : 4))
            return NULL;
        nd = calloc(1, sizeof(*nd));
        if (!nd || !(nd->lp = lp_create(256))) {
            free(nd);
            return NULL;
        }
        nd->base_ms = id->ms;
        fresh = 1;
    }
    size_t hdr = vsize(id->ms - nd->base_ms) + vsize(id->seq) + vsize(nfields);
    size_t before = fresh ? 0 : node_mem(nd);
    uint32_t off = lp_end(nd->lp);
    /* reserve the record as an entry of the right size, then write it in place */
    if (hdr + fbytes > UINT32_MAX - 64 || lp_insert(&nd->lp, off, NULL, hdr + fbytes)) {
        if (fresh)
            node_free(nd);
        return NULL;
    }
    size_t len;
    unsigned char *p = (unsigned char *)lp_get(nd->lp, off, &len);
    p = vput(p, id->ms - nd->base_ms);
    p = vput(p, id->seq);
    p = vput(p, nfields);
    if (fresh) {
        s->nodes[(s->head + s->n) & (s->cap - 1)] = nd;
        s->n++;
    }
    nd->live++;
    nd->added++;
    nd->last_added = *id;
    s->mem += node_mem(nd) - before;
    s->len++;
    s->last_id = *id;
    s->entries_added++;
    return p;
}

/* Index of the last node whose first live entry is <= id, or -1. */
static long node_floor(const struct tstream *s, const struct sid *id)
{
    long lo = 0, hi = (long)s->n - 1, ans = -1;

    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        struct sid f = rec_id(tstream_node(s, (size_t)mid), 0);
        if (sid_cmp(&f, id) <= 0) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return ans;
}

int tstream_seek(const struct tstream *s, const struct sid *id, struct spos *pos)
{
    long ni = node_floor(s, id);

    if (ni < 0) {
        if (!s->n)
            return 0;
        pos->ni = 0;
        pos->off = 0;
        return 1;
    }
    const struct snode *nd = tstream_node(s, (size_t)ni);
    for (uint32_t off = 0; off < lp_end(nd->lp); off = lp_next(nd->lp, off)) {
        struct sid x = rec_id(nd, off);
        if (sid_cmp(&x, id) >= 0) {
            pos->ni = (size_t)ni;
            pos->off = off;
            return 1;
        }
    }
    if ((size_t)ni + 1 >= s->n)
        return 0;
    pos->ni = (size_t)ni + 1;
    pos->off = 0;
    return 1;
}

int tstream_seek_rev(const struct tstream *s, const struct sid *id, struct spos *pos)
{
    long ni = node_floor(s, id);
    uint32_t best = UINT32_MAX;

    if (ni < 0)
        return 0;
    const struct snode *nd = tstream_node(s, (size_t)ni);
    for (uint32_t off = 0; off < lp_end(nd->lp); off = lp_next(nd->lp, off)) {
        struct sid x = rec_id(nd, off);
        if (sid_cmp(&x, id) > 0)
            break;
        best = off;
    }
    pos->ni = (size_t)ni;
    pos->off = best; /* the node's first entry is <= id, so best is set */
    return 1;
}

int tstream_next(const struct tstream *s, struct spos *pos)
{
    const struct snode *nd = tstream_node(s, pos->ni);

    pos->off = lp_next(nd->lp, pos->off);
    if (pos->off < lp_end(nd->lp))
        return 1;
    if (pos->ni + 1 >= s->n)
        return 0;
    pos->ni++;
    pos->off = 0;
    return 1;
}

int tstream_prev(const struct tstream *s, struct spos *pos)
{
    if (pos->off > 0) {
        pos->off = lp_prev(tstream_node(s, pos->ni)->lp, pos->off);
        return 1;
    }
    if (pos->ni == 0)
        return 0;
    pos->ni--;
    const struct snode *nd = tstream_node(s, pos->ni);
    pos->off = lp_prev(nd->lp, lp_end(nd->lp));
    return 1;
}

/* Delete the record at off of node ni (removing the node when it empties). */
static void delete_at(struct tstream *s, size_t ni, uint32_t off)
{
    struct snode *nd = tstream_node(s, ni);

    s->len--;
    if (--nd->live == 0) {
        ring_remove(s, ni);
        return;
    }
    size_t before = node_mem(nd);
    lp_delete(nd->lp, off, 1);
    if ((nd->live & 15) == 0)
        lp_fit(&nd->lp);
    s->mem += node_mem(nd) - before;
}

int tstream_delete(struct tstream *s, const struct sid *id)
{
    struct spos pos;
    struct sent e;

    if (!tstream_seek(s, id, &pos))
        return 0;
    tstream_get(s, &pos, &e);
    if (sid_cmp(&e.id, id) != 0)
        return 0;
    /* only XDEL moves it: trimming leaves no tombstone behind the first entry (Redis) */
    if (sid_cmp(id, &s->max_deleted_id) > 0)
        s->max_deleted_id = *id;
    delete_at(s, pos.ni, pos.off);
    return 1;
}

int64_t tstream_trim(struct tstream *s, long long maxlen, const struct sid *minid, int approx,
                     long long limit)
{
    int64_t deleted = 0;

    while (s->n) {
        struct snode *nd = tstream_node(s, 0);
        if (!minid && (long long)s->len <= maxlen)
            break;
        /* the work limit counts whole nodes, as in Redis */
        if (limit && deleted + (int64_t)nd->live > limit)
            break;
        int whole;
        if (!minid)
            whole = (long long)(s->len - nd->live) >= maxlen;
        else
            whole = sid_cmp(&nd->last_added, minid) < 0;
        if (whole) {
            s->len -= nd->live;
            deleted += nd->live;
            ring_remove(s, 0);
            continue;
        }
        if (approx)
            break;
        /* exact: remove entries from the head of this node */
        while (s->len) {
            if (!minid && (long long)s->len <= maxlen)
                break;
            struct sid x = rec_id(nd, 0);
            if (minid && sid_cmp(&x, minid) >= 0)
                break;
            int last = nd->live == 1;
            delete_at(s, 0, 0);
            deleted++;
            if (last)
                break;
        }
        break;
    }
    return deleted;
}

void *tstream_copy(void *p)
{
    struct tstream *s = p, *c = tstream_create();

    if (!c)
        return NULL;
    if (s->n && ring_resize(c, s->cap)) {
        tstream_destroy(c);
        return NULL;
    }
    for (size_t i = 0; i < s->n; i++) {
        const struct snode *nd = tstream_node(s, i);
        struct snode *m = malloc(sizeof(*m));
        if (!m || !(*m = *nd, m->lp = lp_dup(nd->lp))) {
            free(m);
            tstream_destroy(c);
            return NULL;
        }
        c->nodes[i] = m;
        c->n++;
        c->mem += node_mem(m);
    }
    c->len = s->len;
    c->last_id = s->last_id;
    c->max_deleted_id = s->max_deleted_id;
    c->entries_added = s->entries_added;
    if (scg_copy(c, s)) {
        tstream_destroy(c);
        return NULL;
    }
    return c;
}
