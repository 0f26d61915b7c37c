/* SORT and SORT_RO (Redis 7.0): BY, LIMIT, GET, ASC/DESC, ALPHA, STORE; and LCS.
 *
 * Locking: the BY and GET patterns name keys known only while sorting, so no stripe set can be
 * taken up front. The elements of the source key are copied out under its lock, then every
 * pattern key is looked up under its own stripe lock, one at a time, and STORE's destination
 * is written under its lock last. No two stripes are ever held together, so nothing can
 * deadlock, and every value read is copied before its lock is released. Inside MULTI/EXEC or
 * with the AOF on, the command (movable keys) runs with every stripe held, so it is atomic
 * there as in Redis. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/acl.h"
#include "cmd/notify.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "core/config.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_zset.h"

struct sort_elem {
    char *p;      /* the element, NUL-terminated copy */
    size_t n;
    double score; /* numeric sort key */
    char *cmp;    /* ALPHA with BY: the BY value (NUL-terminated copy), NULL when missing */
    size_t cmpn;
};

struct sort_opts {
    int desc, alpha, dontsort, store; /* store: argv index of the destination, or 0 */
    int by;                           /* argv index of the BY pattern, or 0 */
    long long lstart, lcount;         /* LIMIT, lcount -1: none */
    int *gets;                        /* argv indexes of the GET patterns */
    int ngets;
};

/* ---- sorting ---- */

/* strcoll in the C locale: compare as C strings (up to the first NUL). */
static int cmp_cstr(const char *a, const char *b)
{
    int r = strcmp(a, b);
    return r < 0 ? -1 : r > 0;
}

/* Binary comparison (memcmp, then the shorter first). */
static int cmp_bin(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    if (r)
        return r < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

static int elem_cmp(const struct sort_opts *o, const struct sort_elem *x, const struct sort_elem *y)
{
    int r;

    if (!o->alpha) {
        if (x->score > y->score)
            r = 1;
        else if (x->score < y->score)
            r = -1;
        else
            r = cmp_bin(x->p, x->n, y->p, y->n);
    } else if (o->by) {
        if (!x->cmp || !y->cmp)
            r = x->cmp == y->cmp ? 0 : !x->cmp ? -1 : 1;
        else if (o->store)
            r = cmp_bin(x->cmp, x->cmpn, y->cmp, y->cmpn);
        else
            r = cmp_cstr(x->cmp, y->cmp);
    } else {
        r = o->store ? cmp_bin(x->p, x->n, y->p, y->n) : cmp_cstr(x->p, y->p);
    }
    return o->desc ? -r : r;
}

/* Stable merge sort of a[0..n) using tmp (n slots): the order of equal elements is kept, as
 * glibc's qsort (a merge sort) keeps it for Redis. */
static void msort(const struct sort_opts *o, struct sort_elem **a, struct sort_elem **tmp, size_t n)
{
    size_t h = n / 2, i = 0, j = h, k = 0;

    if (n < 2)
        return;
    msort(o, a, tmp, h);
    msort(o, a + h, tmp, n - h);
    while (i < h && j < n)
        tmp[k++] = elem_cmp(o, a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, k * sizeof(*a));
}

/* ---- BY / GET patterns ---- */

/* The key a pattern names for element e, into *kb (grown as needed): the first '*' replaced by
 * e, and the field after "->" (following the '*') into *f. Returns 1 with the key built, 0
 * when the pattern has no '*' (nothing to look up), -1 out of memory. As Redis, the '*' and
 * "->" are searched in the pattern as a C string. */
static int pattern_key(const char *pat, size_t plen, const char *e, size_t en, char **kb,
                       size_t *kcap, size_t *kn, const char **f, size_t *fn)
{
    size_t clen = strnlen(pat, plen), star, post, need;
    const char *s = memchr(pat, '*', clen), *arrow = NULL;

    if (!s)
        return 0;
    star = (size_t)(s - pat);
    for (size_t i = star + 1; i + 1 < clen; i++)
        if (pat[i] == '-' && pat[i + 1] == '>') {
            arrow = pat + i;
            break;
        }
    *f = NULL;
    *fn = 0;
    if (arrow && (size_t)(arrow - pat) + 2 < clen) {
        *f = arrow + 2;
        *fn = plen - (size_t)(arrow - pat) - 2;
        post = (size_t)(arrow - pat) - star - 1;
    } else {
        post = plen - star - 1;
    }
    need = star + en + post;
    if (need < en)
        return -1;
    if (need + 1 > *kcap) {
        char *nb = realloc(*kb, need + 1);
        if (!nb)
            return -1;
        *kb = nb;
        *kcap = need + 1;
    }
    memcpy(*kb, pat, star);
    memcpy(*kb + star, e, en);
    memcpy(*kb + star + en, s + 1, post);
    *kn = need;
    return 1;
}

/* What a pattern lookup found, valid while the stripe lock is held. */
typedef void pattern_fn(const char *v, size_t vn, struct item *str, void *arg);

struct lookup {
    struct conn *c;
    char *kb; /* key scratch */
    size_t kcap;
};

/* Look up pattern argv[pi] for element e and call fn with the value under the key's lock
 * (str: the string item when the value is a whole string key, else NULL). "#" gives the
 * element itself. Returns 1 when found, 0 when missing (or not a string / hash field), -1
 * out of memory. */
static int pattern_lookup(struct lookup *l, int pi, const char *e, size_t en, pattern_fn *fn,
                          void *arg)
{
    struct conn *c = l->c;
    struct store *s = conn_store(c);
    const char *pat = c->argv[pi].p, *f, *v;
    size_t plen = c->argv[pi].n, kn, fn_, vn;
    struct skey k;
    struct item *it;
    int r, found = 0;

    if (plen >= 1 && pat[0] == '#' && (plen == 1 || pat[1] == '\0')) {
        fn(e, en, NULL, arg);
        return 1;
    }
    r = pattern_key(pat, plen, e, en, &l->kb, &l->kcap, &kn, &f, &fn_);
    if (r <= 0)
        return r;
    store_key(s, &k, c->db, l->kb, kn);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (it && f && it->type == OBJ_HASH) {
        if (thash_get(item_ptr(it), f, fn_, &v, &vn)) {
            fn(v, vn, NULL, arg);
            found = 1;
        }
    } else if (it && !f && it->type == OBJ_STRING) {
        fn(item_value(it), item_vlen(it), it, arg);
        found = 1;
    }
    store_unlock(s, k.stripe);
    return found;
}

/* ---- loading the elements ---- */

struct elems {
    struct sort_elem *v;
    size_t n, cap;
};

static int elems_add(struct elems *es, const char *p, size_t n)
{
    struct sort_elem *e;

    if (es->n == es->cap) {
        size_t cap = es->cap ? es->cap * 2 : 16;
        struct sort_elem *nv = realloc(es->v, cap * sizeof(*nv));
        if (!nv)
            return -1;
        es->v = nv;
        es->cap = cap;
    }
    e = &es->v[es->n];
    memset(e, 0, sizeof(*e));
    if (!(e->p = malloc(n + 1)))
        return -1;
    memcpy(e->p, p, n);
    e->p[n] = '\0';
    e->n = n;
    es->n++;
    return 0;
}

static void elems_free(struct elems *es)
{
    for (size_t i = 0; i < es->n; i++) {
        free(es->v[i].p);
        free(es->v[i].cmp);
    }
    free(es->v);
}

/* Copy the elements of the source (under its lock) into es. For a list or sorted set that is
 * not sorted, only ranks [start, end] of the native order (reversed with DESC) are copied.
 * Returns 0, -1 out of memory. */
static int load_elems(struct item *it, const struct sort_opts *o, long long start, long long end,
                      struct elems *es)
{
    if (it->type == OBJ_LIST) {
        struct tlist *l = item_ptr(it);
        struct lpos pos;
        long long i = 0, last = (long long)l->len - 1;
        if (o->dontsort) {
            i = start;
            last = end;
        }
        if (i > last)
            return 0;
        if (tlist_seek(l, o->dontsort && o->desc ? -1 - (long)i : (long)i, &pos))
            return 0;
        for (;;) {
            size_t n;
            const char *p = tlist_get(&pos, &n);
            if (elems_add(es, p, n))
                return -1;
            if (++i > last)
                break;
            if ((o->dontsort && o->desc ? tlist_prev(l, &pos) : tlist_next(l, &pos)))
                break;
        }
    } else if (it->type == OBJ_SET) {
        struct tset_iter ti;
        const char *p;
        size_t n;
        tset_iter_init(&ti, item_ptr(it));
        while (tset_next(&ti, &p, &n))
            if (elems_add(es, p, n))
                return -1;
    } else {
        struct tzset *z = item_ptr(it);
        unsigned long len = tzset_len(z);
        long long i = 0, last = (long long)len - 1;
        struct zit zi;
        if (o->dontsort) {
            i = start;
            last = end;
        }
        if (i > last || len == 0)
            return 0;
        zit_seek(&zi, z, o->dontsort && o->desc ? len - 1 - (unsigned long)i : (unsigned long)i);
        for (;;) {
            size_t n;
            double sc;
            const char *p = zit_get(&zi, &n, &sc);
            if (elems_add(es, p, n))
                return -1;
            if (++i > last)
                break;
            if (o->dontsort && o->desc)
                zit_prev(&zi);
            else
                zit_next(&zi);
        }
    }
    return 0;
}

/* ---- the command ---- */

/* Parse the options from argv[2]. Returns 0, or -1 after replying the error. */
static int parse_opts(struct conn *c, int readonly, struct sort_opts *o, int *gets)
{
    memset(o, 0, sizeof(*o));
    o->lcount = -1;
    o->gets = gets;
    for (int j = 2; j < c->argc; j++) {
        int left = c->argc - j - 1;
        if (arg_is(c, j, "asc")) {
            o->desc = 0;
        } else if (arg_is(c, j, "desc")) {
            o->desc = 1;
        } else if (arg_is(c, j, "alpha")) {
            o->alpha = 1;
        } else if (arg_is(c, j, "limit") && left >= 2) {
            if (arg_ll(c, j + 1, &o->lstart, NULL) || arg_ll(c, j + 2, &o->lcount, NULL))
                return -1;
            j += 2;
        } else if (arg_is(c, j, "store") && left >= 1 && !readonly) {
            o->store = ++j;
        } else if (arg_is(c, j, "by") && left >= 1) {
            o->by = ++j;
            /* no '*' (as a C string): no sorting at all */
            o->dontsort = memchr(c->argv[j].p, '*', strnlen(c->argv[j].p, c->argv[j].n)) == NULL;
            if (!o->dontsort && !acl_full_key_access(c, cmd_current)) {
                reply_error(c, "ERR BY option of SORT denied due to insufficient ACL permissions.");
                return -1;
            }
        } else if (arg_is(c, j, "get") && left >= 1) {
            if (!acl_full_key_access(c, cmd_current)) {
                reply_error(c, "ERR GET option of SORT denied due to insufficient ACL permissions.");
                return -1;
            }
            o->gets[o->ngets++] = ++j;
        } else {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

struct by_arg {
    struct sort_elem *e;
    int alpha;
    int bad;  /* not a double */
    int oom;
};

static void by_value(const char *v, size_t vn, struct item *str, void *arg)
{
    struct by_arg *a = arg;
    (void)str;
    if (a->alpha) {
        if (!(a->e->cmp = malloc(vn + 1))) {
            a->oom = 1;
            return;
        }
        memcpy(a->e->cmp, v, vn);
        a->e->cmp[vn] = '\0';
        a->e->cmpn = vn;
        return;
    }
    char small[64], *t = vn < sizeof(small) ? small : malloc(vn + 1), *end;
    if (!t) {
        a->oom = 1;
        return;
    }
    memcpy(t, v, vn);
    t[vn] = '\0';
    errno = 0;
    a->e->score = strtod(t, &end);
    if (*end != '\0' || errno == ERANGE || isnan(a->e->score))
        a->bad = 1;
    if (t != small)
        free(t);
}

struct out_arg {
    struct conn *c;
    struct tlist *l; /* STORE: the list built, else NULL (reply) */
    int oom;
};

static void out_value(const char *v, size_t vn, struct item *str, void *arg)
{
    struct out_arg *a = arg;
    if (a->l) {
        if (tlist_push(a->l, 1, v, vn))
            a->oom = 1;
    } else if (str) {
        reply_item_value(a->c, str);
    } else {
        reply_bulk(a->c, v, vn);
    }
}

static void sort_generic(struct conn *c, int readonly)
{
    struct store *s = conn_store(c);
    struct sort_opts o;
    struct skey k;
    struct item *it;
    struct elems es = {0};
    struct sort_elem **vec = NULL, **tmp = NULL;
    struct lookup lk = {c, NULL, 0};
    struct tlist *dst = NULL;
    long long len, start, end, outlen;
    int oom = 0, bad = 0;

    /* at most one GET per two arguments */
    int *gets = malloc(sizeof(int) * (size_t)(c->argc / 2 + 1));
    if (!gets) {
        reply_error(c, "ERR out of memory");
        return;
    }
    if (parse_opts(c, readonly, &o, gets)) {
        free(gets);
        return;
    }

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (it && it->type != OBJ_LIST && it->type != OBJ_SET && it->type != OBJ_ZSET) {
        store_unlock(s, k.stripe);
        reply_error(c, ERR_WRONGTYPE);
        goto done;
    }
    /* an unsorted set written somewhere or seen by a script is sorted ALPHA so the result is
     * deterministic (Redis: STORE or CLIENT_SCRIPT) */
    if (it && it->type == OBJ_SET && o.dontsort && (o.store || c->in_script)) {
        o.dontsort = 0;
        o.alpha = 1;
        o.by = 0;
    }
    len = !it ? 0
        : it->type == OBJ_LIST ? (long long)((struct tlist *)item_ptr(it))->len
        : it->type == OBJ_SET ? (long long)tset_len(item_ptr(it))
        : (long long)tzset_len(item_ptr(it));
    /* LIMIT clamped to the length first, so nothing can overflow */
    start = o.lstart < 0 ? 0 : o.lstart > len ? len : o.lstart;
    {
        long long cnt = o.lcount < -1 ? -1 : o.lcount > len ? len : o.lcount;
        end = cnt < 0 ? len - 1 : start + cnt - 1;
    }
    if (start >= len) {
        start = len - 1;
        end = len - 2;
    }
    if (end >= len)
        end = len - 1;
    if (it && load_elems(it, &o, start, end, &es))
        oom = 1;
    int native = it && it->type != OBJ_SET; /* read under the lock: it may go once released */
    store_unlock(s, k.stripe);
    if (oom)
        goto oom;
    if (o.dontsort && native) {
        /* the native range was loaded */
        end -= start;
        start = 0;
    }
    /* it is not used past this point: the lock is released */
    it = NULL;
    if (end >= (long long)es.n)
        end = (long long)es.n - 1; /* never past what was copied */

    if (es.n && (!(vec = malloc(es.n * sizeof(*vec))) || !(tmp = malloc(es.n * sizeof(*tmp)))))
        goto oom;
    for (size_t i = 0; i < es.n; i++)
        vec[i] = &es.v[i];
    if (!o.dontsort) {
        for (size_t i = 0; i < es.n; i++) {
            struct sort_elem *e = &es.v[i];
            struct by_arg a = {e, o.alpha, 0, 0};
            if (o.by) {
                if (pattern_lookup(&lk, o.by, e->p, e->n, by_value, &a) < 0)
                    goto oom;
            } else if (!o.alpha) {
                by_value(e->p, e->n, NULL, &a);
            }
            if (a.oom)
                goto oom;
            bad |= a.bad;
        }
        if (bad) {
            reply_error(c, "ERR One or more scores can't be converted into double");
            goto done;
        }
        msort(&o, vec, tmp, es.n);
    }

    outlen = end - start + 1;
    if (outlen < 0)
        outlen = 0;
    if (o.ngets)
        outlen *= o.ngets;
    if (o.store && outlen && !(dst = tlist_create()))
        goto oom;
    if (!o.store)
        reply_array(c, outlen);
    for (long long j = start; j <= end && j >= 0; j++) {
        struct sort_elem *e = vec[j];
        struct out_arg a = {c, dst, 0};
        if (!o.ngets) {
            out_value(e->p, e->n, NULL, &a);
        } else {
            for (int g = 0; g < o.ngets; g++) {
                int r = pattern_lookup(&lk, o.gets[g], e->p, e->n, out_value, &a);
                if (r < 0)
                    goto oom_mid;
                if (r == 0) {
                    if (dst)
                        out_value("", 0, NULL, &a);
                    else
                        reply_null(c);
                }
            }
        }
        if (a.oom)
            goto oom_mid;
    }
    if (o.store) {
        struct skey dk;
        arg_key(c, o.store, &dk);
        store_lock(s, dk.stripe);
        if (dst) {
            struct tlist *l = dst;
            dst = NULL;
            if (coll_put(c, &dk, OBJ_LIST, l)) {
                notify_event(NOTIFY_LIST, "sortstore", &dk);
                reply_int(c, outlen);
            }
        } else {
            if (store_delete_locked(s, &dk, conn_now(c)))
                notify_event(NOTIFY_GENERIC, "del", &dk);
            reply_int(c, 0);
        }
        store_unlock(s, dk.stripe);
    }
    goto done;
oom_mid:
    if (!o.store) {
        /* part of the array was sent: the reply cannot be completed */
        c->flags |= CONN_CLOSE_ASAP;
        goto done;
    }
oom:
    reply_error(c, "ERR out of memory");
done:
    if (dst)
        tlist_destroy(dst);
    free(vec);
    free(tmp);
    free(lk.kb);
    free(o.gets);
    elems_free(&es);
}

static void sort_command(struct conn *c)
{
    sort_generic(c, 0);
}

static void sort_ro_command(struct conn *c)
{
    sort_generic(c, 1);
}


/* ---- LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN] ---- */

/* Copy the string value of k (missing: empty) into *out (malloc'd, NULL when empty). Under
 * the key's lock. Returns 0, -1 out of memory. */
static int lcs_copy(struct item *it, char **out, size_t *n)
{
    *out = NULL;
    *n = it ? item_vlen(it) : 0;
    if (!*n)
        return 0;
    if (!(*out = malloc(*n)))
        return -1;
    memcpy(*out, item_value(it), *n);
    return 0;
}

/* One matching range found walking back: a[as..ae] == b[bs..be]. */
static void lcs_range(struct conn *c, int withlen, long long as, long long ae, long long bs,
                      long long be)
{
    reply_array(c, 2 + withlen);
    reply_array(c, 2);
    reply_int(c, as);
    reply_int(c, ae);
    reply_array(c, 2);
    reply_int(c, bs);
    reply_int(c, be);
    if (withlen)
        reply_int(c, ae - as + 1);
}

static void lcs_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey *keys = keyset_resolve(c, 1, 1, 2);
    struct item *ia, *ib;
    char *a = NULL, *b = NULL, *res = NULL;
    size_t alen, blen;
    uint32_t *dp = NULL;
    long long minlen = 0;
    int getidx = 0, getlen = 0, withlen = 0, oom;

    if (!keys)
        return;
    store_lock_keys(s, keys, 2);
    ia = store_lookup_read_locked(s, &keys[0], conn_now(c));
    ib = store_lookup_read_locked(s, &keys[1], conn_now(c));
    if ((ia && ia->type != OBJ_STRING) || (ib && ib->type != OBJ_STRING)) {
        store_unlock_keys(s, keys, 2);
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    oom = lcs_copy(ia, &a, &alen) || lcs_copy(ib, &b, &blen);
    store_unlock_keys(s, keys, 2);
    if (oom)
        goto oom;
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(c, j, "idx")) {
            getidx = 1;
        } else if (arg_is(c, j, "len")) {
            getlen = 1;
        } else if (arg_is(c, j, "withmatchlen")) {
            withlen = 1;
        } else if (arg_is(c, j, "minmatchlen") && j + 1 < c->argc) {
            if (arg_ll(c, ++j, &minlen, NULL))
                goto done;
            if (minlen < 0)
                minlen = 0;
        } else {
            reply_error(c, ERR_SYNTAX);
            goto done;
        }
    }
    if (getidx && getlen) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        goto done;
    }
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        goto done;
    }
    /* the table: (alen+1) x (blen+1) lengths, bounded before allocating */
    {
        unsigned long long cells = (unsigned long long)(alen + 1) * (blen + 1);
        if (cells > (unsigned long long)cfg.proto_max_bulk_len / sizeof(uint32_t) ||
            cells * sizeof(uint32_t) > (unsigned long long)cfg.proto_max_bulk_len) {
            reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds "
                           "proto-max-bulk-len");
            goto done;
        }
        if (!(dp = malloc((size_t)cells * sizeof(uint32_t))))
            goto oom;
    }
#define DP(i, j) dp[(size_t)(i) * (blen + 1) + (j)]
    for (size_t i = 0; i <= alen; i++)
        for (size_t j = 0; j <= blen; j++) {
            if (!i || !j)
                DP(i, j) = 0;
            else if (a[i - 1] == b[j - 1])
                DP(i, j) = DP(i - 1, j - 1) + 1;
            else
                DP(i, j) = DP(i - 1, j) > DP(i, j - 1) ? DP(i - 1, j) : DP(i, j - 1);
        }
    uint32_t total = DP(alen, blen);
    if (getlen) {
        reply_int(c, total);
        goto done;
    }
    if (!getidx && !(res = malloc(total ? total : 1)))
        goto oom;
    /* Walk back from the end. With IDX the walk runs twice: counting the ranges (the array
     * length comes first), then replying them. */
    long long nranges = 0;
    for (int out = getidx ? 0 : 1; out < 2; out++) {
        size_t i = alen, j = blen, k = total;
        long long as = -1, ae = 0, bs = 0, be = 0;
        if (getidx && out == 1) {
            reply_map(c, 2);
            reply_lit(c, "$7\r\nmatches\r\n");
            reply_array(c, nranges);
        }
        while (i > 0 && j > 0) {
            int close = 0;
            if (a[i - 1] == b[j - 1]) {
                if (res)
                    res[k - 1] = a[i - 1];
                if (as < 0) {
                    as = ae = (long long)i - 1;
                    bs = be = (long long)j - 1;
                } else if (as == (long long)i && bs == (long long)j) {
                    as--;
                    bs--;
                } else {
                    close = 1;
                }
                if (as == 0 || bs == 0)
                    close = 1;
                k--;
                i--;
                j--;
            } else {
                if (DP(i - 1, j) > DP(i, j - 1))
                    i--;
                else
                    j--;
                if (as >= 0)
                    close = 1;
            }
            if (close) {
                if (getidx && (minlen == 0 || ae - as + 1 >= minlen)) {
                    if (out == 0)
                        nranges++;
                    else
                        lcs_range(c, withlen, as, ae, bs, be);
                }
                as = -1;
            }
        }
    }
    if (getidx) {
        reply_lit(c, "$3\r\nlen\r\n");
        reply_int(c, total);
    } else {
        reply_bulk(c, res, total);
    }
#undef DP
    goto done;
oom:
    reply_error(c, "ERR out of memory");
done:
    free(a);
    free(b);
    free(res);
    free(dp);
}

static struct cmd cmds[] = {
    {"sort", sort_command, -2, "write denyoom", "@set @sortedset @list @dangerous", "RO,access index:1 range:0,1,0; RO,access unknown unknown; OW,update unknown unknown", "generic", "Sort the elements in a list, set or sorted set", NULL, cmd_getkeys_sort},
    {"sort_ro", sort_ro_command, -2, "readonly", "@set @sortedset @list @dangerous", "RO,access index:1 range:0,1,0; RO,access unknown unknown", "generic", "Sort the elements in a list, set or sorted set. Read-only variant of SORT.", NULL, cmd_getkeys_sort_ro},
    {"lcs", lcs_command, -3, "readonly", "@string", "RO,access index:1 range:1,1,0", "string", "Find longest common substring"},
};

void cmd_sort_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
