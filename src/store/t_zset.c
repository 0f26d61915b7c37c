#define _GNU_SOURCE
#include "store/t_zset.h"

#include <malloc.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "store/lpack.h"

#define ZSL_MAXLEVEL 32

struct zlevel {
    struct znode *forward;
    unsigned long span;
};

struct znode {
    struct dentry d;         /* dict chain, klen = member length, vlen = levels */
    double score;
    struct znode *backward;
    char ele[];              /* member bytes, then the levels (8-aligned) */
};

#define KOFF ((uint32_t)offsetof(struct znode, ele))

static size_t usable(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

static inline struct zlevel *zlv(const struct znode *n)
{
    size_t off = (KOFF + n->d.klen + 7) & ~(size_t)7;
    return (struct zlevel *)((char *)n + off);
}

static struct znode *node_new(int level, double score, const char *p, size_t n)
{
    size_t off = (KOFF + n + 7) & ~(size_t)7;
    struct znode *x = malloc(off + sizeof(struct zlevel) * (size_t)level);
    if (!x)
        return NULL;
    x->d.next = NULL;
    x->d.klen = (uint32_t)n;
    x->d.vlen = (uint32_t)level;
    x->score = score;
    x->backward = NULL;
    memcpy(x->ele, p, n);
    memset(zlv(x), 0, sizeof(struct zlevel) * (size_t)level);
    return x;
}

/* sdscmp order: bytes, then length */
static inline int elecmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c)
        return c;
    return an < bn ? -1 : an > bn;
}

/* (score, member) order */
static inline int before(const struct znode *x, double score, const char *p, size_t n)
{
    return x->score < score || (x->score == score && elecmp(x->ele, x->d.klen, p, n) < 0);
}

static int random_level(void)
{
    int level = 1;
    uint64_t r = rnd_next();
    /* P = 1/4 per level: two random bits per step */
    while ((r & 3) == 0 && level < ZSL_MAXLEVEL) {
        level++;
        r >>= 2;
        if (!r)
            r = rnd_next();
    }
    return level;
}

static int zsl_init(struct zsl *zsl)
{
    zsl->header = node_new(ZSL_MAXLEVEL, 0, "", 0);
    if (!zsl->header)
        return -1;
    zsl->tail = NULL;
    zsl->length = 0;
    zsl->level = 1;
    return 0;
}

/* Link node x (level preset) at its place. */
static void zsl_insert_node(struct zsl *zsl, struct znode *x)
{
    struct znode *update[ZSL_MAXLEVEL], *h = zsl->header;
    unsigned long rank[ZSL_MAXLEVEL];
    int level = (int)x->d.vlen;

    for (int i = zsl->level - 1; i >= 0; i--) {
        rank[i] = i == zsl->level - 1 ? 0 : rank[i + 1];
        while (zlv(h)[i].forward && before(zlv(h)[i].forward, x->score, x->ele, x->d.klen)) {
            rank[i] += zlv(h)[i].span;
            h = zlv(h)[i].forward;
        }
        update[i] = h;
    }
    if (level > zsl->level) {
        for (int i = zsl->level; i < level; i++) {
            rank[i] = 0;
            update[i] = zsl->header;
            zlv(update[i])[i].span = zsl->length;
        }
        zsl->level = level;
    }
    for (int i = 0; i < level; i++) {
        zlv(x)[i].forward = zlv(update[i])[i].forward;
        zlv(update[i])[i].forward = x;
        zlv(x)[i].span = zlv(update[i])[i].span - (rank[0] - rank[i]);
        zlv(update[i])[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = level; i < zsl->level; i++)
        zlv(update[i])[i].span++;
    x->backward = update[0] == zsl->header ? NULL : update[0];
    if (zlv(x)[0].forward)
        zlv(x)[0].forward->backward = x;
    else
        zsl->tail = x;
    zsl->length++;
}

/* Unlink node x (not freed). */
static void zsl_unlink_node(struct zsl *zsl, struct znode *x)
{
    struct znode *update[ZSL_MAXLEVEL], *h = zsl->header;

    for (int i = zsl->level - 1; i >= 0; i--) {
        while (zlv(h)[i].forward && before(zlv(h)[i].forward, x->score, x->ele, x->d.klen))
            h = zlv(h)[i].forward;
        update[i] = h;
    }
    for (int i = 0; i < zsl->level; i++) {
        if (zlv(update[i])[i].forward == x) {
            zlv(update[i])[i].span += zlv(x)[i].span - 1;
            zlv(update[i])[i].forward = zlv(x)[i].forward;
        } else {
            zlv(update[i])[i].span -= 1;
        }
    }
    if (zlv(x)[0].forward)
        zlv(x)[0].forward->backward = x->backward;
    else
        zsl->tail = x->backward;
    while (zsl->level > 1 && !zlv(zsl->header)[zsl->level - 1].forward)
        zsl->level--;
    zsl->length--;
}

/* The node of 1-based rank. */
static struct znode *zsl_by_rank(const struct zsl *zsl, unsigned long rank)
{
    struct znode *x = zsl->header;
    unsigned long traversed = 0;

    for (int i = zsl->level - 1; i >= 0; i--) {
        while (zlv(x)[i].forward && traversed + zlv(x)[i].span <= rank) {
            traversed += zlv(x)[i].span;
            x = zlv(x)[i].forward;
        }
        if (traversed == rank)
            return x;
    }
    return NULL;
}

/* ---- listpack helpers ---- */

/* A score entry: 8 bytes are the double itself; 0..7 bytes a little-endian two's-complement
 * integer of that many bytes (0 bytes: 0), used for integral scores of magnitude below 2^53,
 * which a double holds exactly (as Redis's listpack keeps them as integers). */
static double lp_score_at(const struct lpack *lp, uint32_t off)
{
    size_t n;
    const unsigned char *p = (const unsigned char *)lp_get(lp, off, &n);
    if (n == 8) {
        double d;
        memcpy(&d, p, sizeof(d));
        return d;
    }
    if (n == 0)
        return 0;
    uint64_t u = 0;
    for (size_t i = 0; i < n; i++)
        u |= (uint64_t)p[i] << (8 * i);
    if (p[n - 1] & 0x80)
        u |= ~0ULL << (8 * n); /* sign-extend */
    return (double)(int64_t)u;
}

/* The bytes of score's entry into out[8]; returns their count (see lp_score_at). */
static size_t score_bytes(double score, char out[8])
{
    if (score > -9007199254740992.0 && score < 9007199254740992.0 &&
        score == (double)(int64_t)score) {
        int64_t v = (int64_t)score;
        size_t n = 0;
        if (v != 0) { /* the fewest bytes whose sign-extension gives v back (7 always do) */
            n = 1;
            while (n < 7 && (v < -(1LL << (8 * n - 1)) || v >= (1LL << (8 * n - 1))))
                n++;
        }
        for (size_t i = 0; i < n; i++)
            out[i] = (char)(uint8_t)((uint64_t)v >> (8 * i));
        return n;
    }
    memcpy(out, &score, 8);
    return 8;
}

/* Insert keeping (score, member) order. */
static int lpz_insert(struct lpack **lpp, double score, const char *p, size_t n)
{
    struct lpack *lp = *lpp;
    uint32_t off = 0;

    if (score == 0)
        score = 0.0; /* Redis's listpack keeps -0 as the integer 0 */
    while (off < lp_end(lp)) {
        size_t en;
        const char *e = lp_get(lp, off, &en);
        uint32_t soff = lp_next(lp, off);
        double s = lp_score_at(lp, soff);
        if (s > score || (s == score && elecmp(e, en, p, n) > 0))
            break;
        off = lp_next(lp, soff);
    }
    char sb[8];
    size_t sn = score_bytes(score, sb);
    if (lp_insert(lpp, off, sb, sn))
        return -1;
    if (lp_insert(lpp, off, p, n)) {
        lp_delete(*lpp, off, 1);
        return -1;
    }
    return 0;
}

/* ---- the zset ---- */

struct tzset *tzset_create(size_t n, size_t maxlen)
{
    struct tzset *z = calloc(1, sizeof(*z));

    if (!z)
        return NULL;
    if (n <= (size_t)cfg.zset_max_listpack_entries && maxlen <= (size_t)cfg.zset_max_listpack_value &&
        cfg.zset_max_listpack_entries > 0) {
        z->enc = TZSET_LISTPACK;
        z->lp = lp_create(64);
        if (!z->lp)
            goto fail;
        return z;
    }
    z->enc = TZSET_SKIPLIST;
    z->d = dict_create(KOFF, n);
    if (!z->d || zsl_init(&z->zsl)) {
        dict_destroy(&z->d, 0);
        goto fail;
    }
    z->emem = usable(z->zsl.header);
    return z;
fail:
    free(z);
    return NULL;
}

void tzset_destroy(void *p)
{
    struct tzset *z = p;

    if (!z)
        return;
    if (z->enc == TZSET_LISTPACK) {
        free(z->lp);
    } else {
        dict_destroy(&z->d, 0);
        struct znode *x = z->zsl.header, *next;
        while (x) {
            next = zlv(x)[0].forward;
            free(x);
            x = next;
        }
    }
    free(z);
}

size_t tzset_mem(void *p)
{
    struct tzset *z = p;
    if (z->enc == TZSET_LISTPACK)
        return usable(z) + lp_mem(z->lp);
    return usable(z) + dict_mem(z->d) + z->emem;
}

const char *tzset_encoding_name(const struct tzset *z)
{
    return z->enc == TZSET_LISTPACK ? "listpack" : "skiplist";
}

unsigned long tzset_len(const struct tzset *z)
{
    return z->enc == TZSET_LISTPACK ? z->lp->count / 2 : z->zsl.length;
}

static int to_skiplist(struct tzset *z)
{
    struct tzset *n = NULL;
    struct dict *d = dict_create(KOFF, tzset_len(z) + 1);
    struct zsl zsl;
    size_t emem;

    (void)n;
    if (!d || zsl_init(&zsl)) {
        dict_destroy(&d, 0);
        return -1;
    }
    emem = usable(zsl.header);
    for (uint32_t off = 0; off < lp_end(z->lp);) {
        size_t en;
        const char *e = lp_get(z->lp, off, &en);
        off = lp_next(z->lp, off);
        struct znode *x = node_new(random_level(), lp_score_at(z->lp, off), e, en);
        off = lp_next(z->lp, off);
        if (!x || dict_add(d, &x->d)) {
            free(x);
            struct znode *y = zsl.header, *next;
            while (y) {
                next = zlv(y)[0].forward;
                free(y);
                y = next;
            }
            dict_destroy(&d, 0);
            return -1;
        }
        zsl_insert_node(&zsl, x);
        emem += usable(x);
    }
    free(z->lp);
    z->lp = NULL;
    z->d = d;
    z->zsl = zsl;
    z->emem = emem;
    z->enc = TZSET_SKIPLIST;
    return 0;
}

int tzset_score(const struct tzset *z, const char *p, size_t n, double *score)
{
    if (z->enc == TZSET_LISTPACK) {
        uint32_t off = lp_find(z->lp, p, n, 2);
        if (off == UINT32_MAX)
            return 0;
        *score = lp_score_at(z->lp, lp_next(z->lp, off));
        return 1;
    }
    struct dentry *e = dict_find(z->d, p, n);
    if (!e)
        return 0;
    *score = ((struct znode *)e)->score;
    return 1;
}

long tzset_rank(const struct tzset *z, const char *p, size_t n)
{
    if (z->enc == TZSET_LISTPACK) {
        long rank = 0;
        for (uint32_t off = 0; off < lp_end(z->lp); rank++) {
            size_t en;
            const char *e = lp_get(z->lp, off, &en);
            if (en == n && memcmp(e, p, n) == 0)
                return rank;
            off = lp_next(z->lp, lp_next(z->lp, off));
        }
        return -1;
    }
    struct znode *t = (struct znode *)dict_find(z->d, p, n);
    if (!t)
        return -1;
    struct znode *x = z->zsl.header;
    unsigned long rank = 0;
    for (int i = z->zsl.level - 1; i >= 0; i--) {
        while (zlv(x)[i].forward && (zlv(x)[i].forward == t ||
                                     before(zlv(x)[i].forward, t->score, p, n))) {
            rank += zlv(x)[i].span;
            x = zlv(x)[i].forward;
        }
        if (x == t)
            return (long)rank - 1;
    }
    return -1;
}

int tzset_add(struct tzset *z, double score, const char *p, size_t n, int flags, int *outflags,
              double *newscore)
{
    double cur;

    *outflags = 0;
    if (isnan(score))
        return 0;
    if (tzset_score(z, p, n, &cur)) {
        if (flags & ZADD_NX) {
            *outflags = ZADD_OUT_NOP;
            return 1;
        }
        if (flags & ZADD_INCR) {
            score += cur;
            if (isnan(score))
                return 0;
        }
        if (((flags & ZADD_LT) && score >= cur) || ((flags & ZADD_GT) && score <= cur)) {
            *outflags = ZADD_OUT_NOP;
            return 1;
        }
        *newscore = score;
        if (score != cur) {
            if (z->enc == TZSET_LISTPACK) {
                uint32_t off = lp_find(z->lp, p, n, 2);
                lp_delete(z->lp, off, 2);
                if (lpz_insert(&z->lp, score, p, n))
                    return -1;
            } else {
                struct znode *x = (struct znode *)dict_find(z->d, p, n);
                zsl_unlink_node(&z->zsl, x);
                x->score = score;
                zsl_insert_node(&z->zsl, x);
            }
            *outflags = ZADD_OUT_UPDATED;
        }
        return 1;
    }
    if (flags & ZADD_XX) {
        *outflags = ZADD_OUT_NOP;
        return 1;
    }
    if (z->enc == TZSET_LISTPACK &&
        (tzset_len(z) + 1 > (size_t)cfg.zset_max_listpack_entries ||
         n > (size_t)cfg.zset_max_listpack_value)) {
        if (to_skiplist(z))
            return -1;
    }
    if (z->enc == TZSET_LISTPACK) {
        if (lpz_insert(&z->lp, score, p, n))
            return -1;
    } else {
        struct znode *x = node_new(random_level(), score, p, n);
        if (!x || dict_add(z->d, &x->d)) {
            free(x);
            return -1;
        }
        zsl_insert_node(&z->zsl, x);
        z->emem += usable(x);
    }
    *newscore = score;
    *outflags = ZADD_OUT_ADDED;
    return 1;
}

int tzset_del(struct tzset *z, const char *p, size_t n)
{
    if (z->enc == TZSET_LISTPACK) {
        uint32_t off = lp_find(z->lp, p, n, 2);
        if (off == UINT32_MAX)
            return 0;
        lp_delete(z->lp, off, 2);
        if ((z->lp->count & 31) == 0)
            lp_fit(&z->lp);
        return 1;
    }
    struct znode *x = (struct znode *)dict_unlink(z->d, p, n);
    if (!x)
        return 0;
    zsl_unlink_node(&z->zsl, x);
    z->emem -= usable(x);
    free(x);
    return 1;
}

unsigned long tzset_count_below_score(const struct tzset *z, double v, int incl)
{
    unsigned long rank = 0;

    if (z->enc == TZSET_LISTPACK) {
        for (uint32_t off = 0; off < lp_end(z->lp); rank++) {
            off = lp_next(z->lp, off);
            double s = lp_score_at(z->lp, off);
            if (!(s < v || (incl && s == v)))
                break;
            off = lp_next(z->lp, off);
        }
        return rank;
    }
    struct znode *x = z->zsl.header;
    for (int i = z->zsl.level - 1; i >= 0; i--) {
        while (zlv(x)[i].forward && (zlv(x)[i].forward->score < v ||
                                     (incl && zlv(x)[i].forward->score == v))) {
            rank += zlv(x)[i].span;
            x = zlv(x)[i].forward;
        }
    }
    return rank;
}

unsigned long tzset_count_below_lex(const struct tzset *z, const char *p, size_t n, int incl)
{
    unsigned long rank = 0;

    if (z->enc == TZSET_LISTPACK) {
        for (uint32_t off = 0; off < lp_end(z->lp); rank++) {
            size_t en;
            const char *e = lp_get(z->lp, off, &en);
            int c = elecmp(e, en, p, n);
            if (!(c < 0 || (incl && c == 0)))
                break;
            off = lp_next(z->lp, lp_next(z->lp, off));
        }
        return rank;
    }
    struct znode *x = z->zsl.header;
    for (int i = z->zsl.level - 1; i >= 0; i--) {
        for (;;) {
            struct znode *f = zlv(x)[i].forward;
            if (!f)
                break;
            int c = elecmp(f->ele, f->d.klen, p, n);
            if (!(c < 0 || (incl && c == 0)))
                break;
            rank += zlv(x)[i].span;
            x = f;
        }
    }
    return rank;
}

void tzset_del_range(struct tzset *z, unsigned long start, unsigned long end)
{
    if (start >= end)
        return;
    if (z->enc == TZSET_LISTPACK) {
        lp_delete(z->lp, lp_seek(z->lp, (long)start * 2), (uint32_t)(end - start) * 2);
        lp_fit(&z->lp);
        return;
    }
    struct znode *x = zsl_by_rank(&z->zsl, start + 1);
    for (unsigned long i = start; i < end && x; i++) {
        struct znode *next = zlv(x)[0].forward;
        dict_unlink(z->d, x->ele, x->d.klen);
        zsl_unlink_node(&z->zsl, x);
        z->emem -= usable(x);
        free(x);
        x = next;
    }
}

void zit_seek(struct zit *it, const struct tzset *z, unsigned long rank)
{
    it->z = z;
    if (z->enc == TZSET_LISTPACK) {
        it->off = lp_seek(z->lp, (long)rank * 2);
        it->node = NULL;
    } else {
        it->node = zsl_by_rank(&z->zsl, rank + 1);
    }
}

void zit_next(struct zit *it)
{
    if (it->z->enc == TZSET_LISTPACK)
        it->off = lp_next(it->z->lp, lp_next(it->z->lp, it->off));
    else
        it->node = zlv(it->node)[0].forward;
}

void zit_prev(struct zit *it)
{
    if (it->z->enc == TZSET_LISTPACK) {
        if (it->off > 0)
            it->off = lp_prev(it->z->lp, lp_prev(it->z->lp, it->off));
    } else {
        it->node = it->node->backward;
    }
}

const char *zit_get(const struct zit *it, size_t *n, double *score)
{
    if (it->z->enc == TZSET_LISTPACK) {
        const char *p = lp_get(it->z->lp, it->off, n);
        *score = lp_score_at(it->z->lp, lp_next(it->z->lp, it->off));
        return p;
    }
    *n = it->node->d.klen;
    *score = it->node->score;
    return it->node->ele;
}

struct scan_arg {
    tzset_scan_fn *fn;
    void *arg;
};

static void scan_cb(struct dentry *e, void *arg)
{
    struct scan_arg *a = arg;
    struct znode *x = (struct znode *)e;
    a->fn(x->ele, x->d.klen, x->score, a->arg);
}

uint64_t tzset_scan(const struct tzset *z, uint64_t cursor, long count, tzset_scan_fn *fn,
                    void *arg)
{
    if (z->enc == TZSET_LISTPACK) {
        struct zit it;
        unsigned long len = tzset_len(z);
        if (!len)
            return 0;
        zit_seek(&it, z, 0);
        for (unsigned long i = 0; i < len; i++, zit_next(&it)) {
            size_t n;
            double s;
            const char *p = zit_get(&it, &n, &s);
            fn(p, n, s, arg);
        }
        return 0;
    }
    struct scan_arg a = {fn, arg};
    do {
        cursor = dict_scan(z->d, cursor, scan_cb, &a);
    } while (cursor && count-- > 0);
    return cursor;
}

void *tzset_copy(void *p)
{
    struct tzset *z = p, *c;
    unsigned long len = tzset_len(z);

    if (z->enc == TZSET_LISTPACK) {
        c = calloc(1, sizeof(*c));
        if (!c || !(c->lp = lp_dup(z->lp))) {
            free(c);
            return NULL;
        }
        return c;
    }
    c = tzset_create(len, (size_t)-1);
    if (!c)
        return NULL;
    struct zit it;
    if (len)
        zit_seek(&it, z, 0);
    for (unsigned long i = 0; i < len; i++, zit_next(&it)) {
        size_t n;
        double s, ns;
        int of;
        const char *m = zit_get(&it, &n, &s);
        if (tzset_add(c, s, m, n, 0, &of, &ns) < 0) {
            tzset_destroy(c);
            return NULL;
        }
    }
    return c;
}

int tzset_shrink_if_small(struct tzset *z, size_t maxlen)
{
    unsigned long len = tzset_len(z);

    if (z->enc != TZSET_SKIPLIST || len > (unsigned long)cfg.zset_max_listpack_entries ||
        maxlen > (size_t)cfg.zset_max_listpack_value)
        return 0;
    struct lpack *lp = lp_create(len * 16 + 16);
    if (!lp)
        return -1;
    for (struct znode *x = zlv(z->zsl.header)[0].forward; x; x = zlv(x)[0].forward) {
        double sc = x->score == 0 ? 0.0 : x->score; /* -0 becomes 0, as in Redis */
        char sb[8];
        size_t sn = score_bytes(sc, sb);
        if (lp_append(&lp, x->ele, x->d.klen) || lp_append(&lp, sb, sn)) {
            free(lp);
            return -1;
        }
    }
    dict_destroy(&z->d, 0);
    struct znode *x = z->zsl.header, *next;
    while (x) {
        next = zlv(x)[0].forward;
        free(x);
        x = next;
    }
    memset(&z->zsl, 0, sizeof(z->zsl));
    z->lp = lp;
    z->emem = 0;
    z->enc = TZSET_LISTPACK;
    return 0;
}
