#define _GNU_SOURCE
#include "store/t_stream.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "store/lpack.h"
#include "store/t_stream_cg.h"

#define LISTPACK_MAX_SIZE (1u << 30) /* Redis's STREAM_LISTPACK_MAX_SIZE */

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

/* ---- the size of a node as Redis's listpack ----
 * Redis closes a stream node by its listpack's bytes too (stream-node-max-bytes), so where
 * approximate trimming cuts depends on how Redis would encode the node: each node keeps the
 * listpack size of its entries and of the master entry (the first entry's fields), and the two
 * counts at its head are added as they are now. */

/* Bytes of a listpack element whose encoding takes n bytes (its back-length included). */
static uint64_t lp_elem(uint64_t n)
{
    return n + (n <= 127 ? 1 : n < 16383 ? 2 : n < 2097151 ? 3 : n < 268435455 ? 4 : 5);
}

static uint64_t lp_int(int64_t v)
{
    if (v >= 0 && v <= 127)
        return lp_elem(1);
    if (v >= -4096 && v <= 4095)
        return lp_elem(2);
    if (v >= -32768 && v <= 32767)
        return lp_elem(3);
    if (v >= -8388608 && v <= 8388607)
        return lp_elem(4);
    if (v >= INT32_MIN && v <= INT32_MAX)
        return lp_elem(5);
    return lp_elem(9);
}

/* A string element: stored as an integer when it reads as one exactly (Redis's
 * lpStringToInt64: no sign but "-", no leading zero, within int64). */
static uint64_t lp_str(const char *p, size_t n)
{
    if (n > 0 && n < 21) {
        size_t i = p[0] == '-';
        uint64_t v = 0, lim = i ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        int ok = i < n && (n == 1 || p[i] != '0') && !(i && p[i] == '0');
        for (; ok && i < n; i++) {
            unsigned d = (unsigned char)p[i] - '0';
            if (d > 9 || v > (lim - d) / 10)
                ok = 0;
            else
                v = v * 10 + d;
        }
        if (ok)
            return lp_int(p[0] == '-' ? (int64_t)(0 - v) : (int64_t)v);
    }
    return lp_elem(n < 64 ? 1 + n : n < 4096 ? 2 + n : 5 + n);
}

/* The node's listpack bytes now (header, counts, master entry, every entry ever added). */
static uint64_t node_rbytes(const struct snode *nd)
{
    return nd->rfixed + lp_int(nd->live) + lp_int((int64_t)(nd->added - nd->live));
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
    free(nd->master);
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
    return usable(nd) + lp_mem(nd->lp) + usable(nd->master);
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
                              size_t fbytes, size_t raw)
{
    struct snode *nd = s->n ? tstream_node(s, s->n - 1) : NULL;
    int fresh = 0;
    long long max_entries = __atomic_load_n(&cfg.stream_node_max_entries, __ATOMIC_RELAXED);
    long long max_bytes = __atomic_load_n(&cfg.stream_node_max_bytes, __ATOMIC_RELAXED);

    if (max_bytes <= 0 || max_bytes > (long long)LISTPACK_MAX_SIZE)
        max_bytes = LISTPACK_MAX_SIZE;
    /* the last node takes it while it has room, as in Redis: by its listpack's bytes plus the
     * new fields and values, and by its entries (deleted ones count) */
    if (!nd || node_rbytes(nd) + raw >= (uint64_t)max_bytes ||
        (max_entries > 0 && nd->added >= (unsigned long long)max_entries)) {
        if (s->n == s->cap && ring_resize(s, s->cap ? s->cap * 2 : 4))
            return NULL;
        nd = calloc(1, sizeof(*nd));
        if (!nd || !(nd->lp = lp_create(256))) {
            free(nd);
            return NULL;
        }
        nd->base_ms = id->ms;
        nd->base_seq = id->seq;
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

int tstream_append_done(struct tstream *s)
{
    struct snode *nd = tstream_node(s, s->n - 1);
    uint32_t off = lp_prev(nd->lp, lp_end(nd->lp));
    struct sent e, m;
    const char *p, *q;
    size_t n, qn;
    int same = 1, rc = 0;
    uint64_t sz;

    decode(nd, off, &e);
    if (nd->added == 1) {
        /* the first entry: its fields become the master entry's */
        size_t mb = 0;
        struct sent f = e;
        while (sentry_next(&f, &p, &n)) {
            mb += sfield_size(n);
            sentry_next(&f, &q, &qn);
        }
        nd->master = malloc(mb ? mb : 1);
        if (!nd->master) {
            rc = -1;
        } else {
            unsigned char *w = nd->master;
            size_t got = usable(nd->master);
            f = e;
            while (sentry_next(&f, &p, &n)) {
                w = sfield_put(w, p, n);
                sentry_next(&f, &q, &qn);
            }
            s->mem += got;
        }
        nd->nmaster = e.nfields;
        nd->rfixed = 6 + 1 + lp_int(nd->nmaster) + lp_int(0); /* header, end, master entry */
        f = e;
        while (sentry_next(&f, &p, &n)) {
            nd->rfixed += lp_str(p, n);
            sentry_next(&f, &q, &qn);
        }
    } else if (e.nfields != nd->nmaster || !nd->master) {
        same = 0;
    } else {
        struct sent f = e;
        const unsigned char *mp = nd->master;
        for (uint32_t i = 0; i < e.nfields && same; i++) {
            uint64_t ml;
            sentry_next(&f, &p, &n);
            sentry_next(&f, &q, &qn);
            mp = vget(mp, &ml);
            same = ml == n && memcmp(mp, p, n) == 0;
            mp += ml;
        }
    }
    /* flags, ms and seq from the master ID, [field count], [fields and] values, lp-count */
    sz = lp_int(same ? 2 : 0) + lp_int((int64_t)(e.id.ms - nd->base_ms)) +
         lp_int((int64_t)(e.id.seq - nd->base_seq));
    if (!same)
        sz += lp_int(e.nfields);
    m = e;
    while (sentry_next(&m, &p, &n)) {
        if (!same)
            sz += lp_str(p, n);
        sentry_next(&m, &q, &qn);
        sz += lp_str(q, qn);
    }
    sz += lp_int(same ? (int64_t)e.nfields + 3 : (int64_t)e.nfields * 2 + 4);
    nd->rfixed += sz;
    return rc;
}

/* The index of the first node with entries: 1 when the head node is one an exact trim
 * emptied. Redis keeps such a node (its entries marked deleted) until a later trim removes it
 * or an XADD fills it, and it is never anywhere but at the head. */
static size_t first_live(const struct tstream *s)
{
    return s->n && tstream_node(s, 0)->live == 0;
}

/* Index of the last node whose first live entry is <= id, or -1. */
static long node_floor(const struct tstream *s, const struct sid *id)
{
    long lo = (long)first_live(s), hi = (long)s->n - 1, ans = -1;

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
        size_t f = first_live(s);
        if (f >= s->n)
            return 0;
        pos->ni = f;
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
    if (pos->ni <= first_live(s))
        return 0;
    pos->ni--;
    const struct snode *nd = tstream_node(s, pos->ni);
    pos->off = lp_prev(nd->lp, lp_end(nd->lp));
    return 1;
}

/* Delete the record at off of node ni, removing the node when it empties unless keep (an
 * exact trim: Redis marks the node's entries deleted and keeps it). */
static void delete_at(struct tstream *s, size_t ni, uint32_t off, int keep)
{
    struct snode *nd = tstream_node(s, ni);

    s->len--;
    if (--nd->live == 0 && !keep) {
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
    delete_at(s, pos.ni, pos.off, 0);
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
        /* exact: remove entries from the head of this node (which may empty it) */
        while (nd->live) {
            if (!minid && (long long)s->len <= maxlen)
                break;
            struct sid x = rec_id(nd, 0);
            if (minid && sid_cmp(&x, minid) >= 0)
                break;
            delete_at(s, 0, 0, 1);
            deleted++;
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
        if (!m || !(*m = *nd, m->master = NULL, m->lp = lp_dup(nd->lp))) {
            free(m);
            tstream_destroy(c);
            return NULL;
        }
        if (nd->master) {
            size_t mb = 0;
            const unsigned char *mp = nd->master;
            for (uint32_t f = 0; f < nd->nmaster; f++) {
                uint64_t l;
                const unsigned char *x = vget(mp, &l);
                mb += (size_t)(x - mp) + l;
                mp = x + l;
            }
            if (!(m->master = malloc(mb ? mb : 1))) {
                node_free(m);
                tstream_destroy(c);
                return NULL;
            }
            memcpy(m->master, nd->master, mb);
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
