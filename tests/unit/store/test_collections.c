/* Unit tests of the collection structures (lpack, dict, lists, sets, hashes, sorted sets,
 * streams): long random operation sequences checked against simple models, with tiny
 * encoding thresholds so that every conversion and chunk split happens many times. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "store/dict.h"
#include "store/lpack.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_stream.h"
#include "store/t_zset.h"
#include "tap.h"

static unsigned long long seed = 12345;
static unsigned rnd(unsigned n)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((seed >> 33) % n);
}

#define MAXM 4000
static char model[MAXM][160];
static size_t mlen[MAXM];
static int mn;

static void rand_elem(char *buf, size_t *n)
{
    static const int lens[] = {0, 1, 3, 8, 20, 70, 127, 128, 150};
    *n = (size_t)lens[rnd(9)];
    for (size_t i = 0; i < *n; i++)
        buf[i] = (char)('a' + rnd(4));
}

static void test_lpack(void)
{
    struct lpack *lp = lp_create(16);
    int bad = 0;

    mn = 0;
    for (int op = 0; op < 20000 && !bad; op++) {
        int k = (int)rnd(10);
        if (k < 5 && mn < MAXM) {
            int at = (int)rnd((unsigned)mn + 1);
            char b[160];
            size_t n;
            rand_elem(b, &n);
            uint32_t off = at == mn ? lp_end(lp) : lp_seek(lp, at);
            if (lp_insert(&lp, off, b, n))
                bad = 1;
            memmove(model[at + 1], model[at], sizeof(model[0]) * (size_t)(mn - at));
            memmove(mlen + at + 1, mlen + at, sizeof(mlen[0]) * (size_t)(mn - at));
            memcpy(model[at], b, n);
            mlen[at] = n;
            mn++;
        } else if (k < 8 && mn) {
            int at = (int)rnd((unsigned)mn);
            lp_delete(lp, lp_seek(lp, at), 1);
            memmove(model[at], model[at + 1], sizeof(model[0]) * (size_t)(mn - at - 1));
            memmove(mlen + at, mlen + at + 1, sizeof(mlen[0]) * (size_t)(mn - at - 1));
            mn--;
            if (rnd(8) == 0)
                lp_fit(&lp);
        } else if (mn) {
            int at = (int)rnd((unsigned)mn);
            char b[160];
            size_t n;
            rand_elem(b, &n);
            if (lp_replace(&lp, lp_seek(lp, -(long)(mn - at)), b, n))
                bad = 1;
            memcpy(model[at], b, n);
            mlen[at] = n;
        }
        if (op % 97 == 0 || op > 19990) {
            uint32_t off = 0;
            bad |= (int)lp->count != mn;
            for (int i = 0; i < mn && !bad; i++, off = lp_next(lp, off)) {
                size_t n;
                const char *p = lp_get(lp, off, &n);
                bad |= n != mlen[i] || memcmp(p, model[i], n) != 0;
            }
            bad |= off != lp_end(lp);
            for (int i = mn - 1; i >= 0 && !bad; i--) {
                size_t n;
                off = lp_prev(lp, off);
                lp_get(lp, off, &n);
                bad |= n != mlen[i];
            }
        }
    }
    ok(!bad, "lpack: random inserts, deletes, replaces match the model both ways");
    lp_destroy(&lp);
}

struct kv {
    struct dentry d;
    char key[16];
};

static void count_cb(struct dentry *e, void *arg)
{
    int *seen = arg;
    seen[atoi(((struct kv *)e)->key)]++;
}

static void test_dict(void)
{
    struct dict *d = dict_create(offsetof(struct kv, key), 0);
    static char present[5000];
    int bad = 0;

    memset(present, 0, sizeof(present));
    for (int op = 0; op < 30000; op++) {
        int x = (int)rnd(5000);
        char k[16];
        int n = snprintf(k, sizeof(k), "%d", x);
        if (rnd(3)) {
            if (!dict_find(d, k, (size_t)n)) {
                struct kv *e = calloc(1, sizeof(*e));
                e->d.klen = (uint32_t)n;
                memcpy(e->key, k, (size_t)n);
                dict_add(d, &e->d);
                present[x] = 1;
            }
        } else {
            struct dentry *e = dict_unlink(d, k, (size_t)n);
            bad |= (e != NULL) != present[x];
            free(e);
            present[x] = 0;
        }
    }
    uint64_t cnt = 0;
    for (int i = 0; i < 5000; i++)
        cnt += present[i];
    ok(!bad && cnt == d->count, "dict: adds and unlinks match the model (%llu entries)",
       (unsigned long long)cnt);
    /* a scan sees every entry present for the whole scan, even while the table resizes */
    static int seen[5000];
    memset(seen, 0, sizeof(seen));
    uint64_t cur = 0;
    int steps = 0;
    do {
        cur = dict_scan(d, cur, count_cb, seen);
        if (++steps % 50 == 0) {
            /* grow the table in between with keys outside the checked range */
            for (int j = 0; j < 200; j++) {
                struct kv *e = calloc(1, sizeof(*e));
                e->d.klen = (uint32_t)snprintf(e->key, sizeof(e->key), "x%d", steps * 1000 + j);
                dict_add(d, &e->d);
            }
        }
    } while (cur);
    bad = 0;
    for (int i = 0; i < 5000; i++)
        bad |= present[i] && !seen[i];
    ok(!bad, "dict: a scan across resizes returns every stable entry");
    dict_destroy(&d, 1);
}

static void test_list(void)
{
    struct tlist *l = tlist_create();
    int bad = 0;
    struct lpos pos;

    cfg.list_max_listpack_size = 3;
    mn = 0;
    for (int op = 0; op < 20000 && !bad; op++) {
        int k = (int)rnd(12);
        char b[160];
        size_t n;
        rand_elem(b, &n);
        if (k < 4 && mn < MAXM) {
            int where = (int)rnd(2);
            tlist_push(l, where, b, n);
            int at = where ? mn : 0;
            memmove(model[at + 1], model[at], sizeof(model[0]) * (size_t)(mn - at));
            memmove(mlen + at + 1, mlen + at, sizeof(mlen[0]) * (size_t)(mn - at));
            memcpy(model[at], b, n);
            mlen[at] = n;
            mn++;
        } else if (k < 6 && mn) {
            int where = (int)rnd(2);
            tlist_pop(l, where);
            int at = where ? mn - 1 : 0;
            memmove(model[at], model[at + 1], sizeof(model[0]) * (size_t)(mn - at - 1));
            memmove(mlen + at, mlen + at + 1, sizeof(mlen[0]) * (size_t)(mn - at - 1));
            mn--;
        } else if (k < 8 && mn && mn < MAXM) {
            int at = (int)rnd((unsigned)mn), after = (int)rnd(2);
            tlist_seek(l, at, &pos);
            tlist_insert(l, &pos, after, b, n);
            at += after;
            memmove(model[at + 1], model[at], sizeof(model[0]) * (size_t)(mn - at));
            memmove(mlen + at + 1, mlen + at, sizeof(mlen[0]) * (size_t)(mn - at));
            memcpy(model[at], b, n);
            mlen[at] = n;
            mn++;
        } else if (k < 9 && mn) {
            int at = (int)rnd((unsigned)mn);
            tlist_seek(l, at, &pos);
            tlist_delete(l, &pos);
            memmove(model[at], model[at + 1], sizeof(model[0]) * (size_t)(mn - at - 1));
            memmove(mlen + at, mlen + at + 1, sizeof(mlen[0]) * (size_t)(mn - at - 1));
            mn--;
        } else if (k < 10 && mn) {
            int at = (int)rnd((unsigned)mn);
            tlist_seek(l, -(long)(mn - at), &pos);
            tlist_replace(l, &pos, b, n);
            memcpy(model[at], b, n);
            mlen[at] = n;
        } else if (k < 11 && mn > 4 && rnd(10) == 0) {
            int a = (int)rnd((unsigned)mn / 2), e = a + (int)rnd((unsigned)(mn - a));
            tlist_trim(l, a, e);
            memmove(model[0], model[a], sizeof(model[0]) * (size_t)(e - a + 1));
            memmove(mlen, mlen + a, sizeof(mlen[0]) * (size_t)(e - a + 1));
            mn = e - a + 1;
        }
        if (op % 101 == 0) {
            bad |= (int)l->len != mn;
            int more = mn && tlist_seek(l, 0, &pos) == 0;
            for (int i = 0; i < mn && more && !bad; i++) {
                const char *p = tlist_get(&pos, &n);
                bad |= n != mlen[i] || memcmp(p, model[i], n) != 0;
                if (i + 1 < mn)
                    bad |= tlist_next(l, &pos) != 0;
            }
        }
    }
    ok(!bad, "list: pushes, pops, inserts, deletes, replaces, trims over 3-entry chunks");
    cfg.list_max_listpack_size = -2;
    void *c = tlist_copy(l);
    ok(c && ((struct tlist *)c)->len == l->len, "list: copy");
    tlist_destroy(c);
    tlist_destroy(l);
}

static void test_set_hash(void)
{
    static char in[2000];
    int bad = 0;
    struct tset *s = tset_create("1", 1);
    struct thash *h = thash_create();

    cfg.set_max_intset_entries = 8;
    cfg.set_max_listpack_entries = 8;
    cfg.hash_max_listpack_entries = 8;
    memset(in, 0, sizeof(in));
    for (int op = 0; op < 20000; op++) {
        int x = (int)rnd(op < 10000 ? 30 : 2000);
        char k[24];
        int n = rnd(3) ? snprintf(k, sizeof(k), "%d", x) : snprintf(k, sizeof(k), "%d", x);
        if (rnd(2)) {
            bad |= tset_add(s, k, (size_t)n) != !in[x];
            bad |= thash_set(h, k, (size_t)n, k, (size_t)n) != !in[x];
            in[x] = 1;
        } else {
            bad |= tset_remove(s, k, (size_t)n) != in[x];
            bad |= thash_del(h, k, (size_t)n) != in[x];
            in[x] = 0;
        }
        if (x % 7 == 0 && op > 15000 && !rnd(50)) {
            /* a non-integer member moves an intset along */
            bad |= tset_add(s, "word", 4) < 0;
            tset_remove(s, "word", 4);
        }
    }
    uint64_t cnt = 0;
    for (int i = 0; i < 2000; i++) {
        char k[24];
        int n = snprintf(k, sizeof(k), "%d", i);
        const char *v;
        size_t vn;
        cnt += in[i];
        bad |= tset_contains(s, k, (size_t)n) != in[i];
        bad |= thash_get(h, k, (size_t)n, &v, &vn) != in[i];
    }
    ok(!bad && tset_len(s) == cnt && thash_len(h) == cnt,
       "set and hash: random adds and removes through every encoding (%s, %s)",
       tset_encoding_name(s), thash_encoding_name(h));
    tset_destroy(s);
    thash_destroy(h);
    config_defaults();
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void test_zset(void)
{
    static double score[1000];
    static char in[1000];
    int bad = 0;
    struct tzset *z = tzset_create(0, 0);

    cfg.zset_max_listpack_entries = 6;
    memset(in, 0, sizeof(in));
    for (int op = 0; op < 20000 && !bad; op++) {
        int x = (int)rnd(op < 8000 ? 20 : 1000);
        char m[16];
        int n = snprintf(m, sizeof(m), "m%d", x), of;
        double sc = (double)rnd(100) / 4, ns;
        if (rnd(3)) {
            bad |= tzset_add(z, sc, m, (size_t)n, 0, &of, &ns) != 1;
            in[x] = 1;
            score[x] = sc;
        } else {
            bad |= tzset_del(z, m, (size_t)n) != in[x];
            in[x] = 0;
        }
        if (op % 211 == 0 || op == 19999) {
            double sorted[1000];
            int cnt = 0;
            for (int i = 0; i < 1000; i++)
                if (in[i])
                    sorted[cnt++] = score[i];
            qsort(sorted, (size_t)cnt, sizeof(double), dcmp);
            bad |= (int)tzset_len(z) != cnt;
            double v = (double)rnd(100) / 4;
            unsigned long below = 0, upto = 0;
            for (int i = 0; i < cnt; i++) {
                below += sorted[i] < v;
                upto += sorted[i] <= v;
            }
            bad |= tzset_count_below_score(z, v, 0) != below;
            bad |= tzset_count_below_score(z, v, 1) != upto;
            struct zit it;
            if (cnt) {
                zit_seek(&it, z, 0);
                for (int i = 0; i < cnt && !bad; i++) {
                    size_t mlen_;
                    double s2;
                    const char *p = zit_get(&it, &mlen_, &s2);
                    bad |= s2 != sorted[i] || tzset_rank(z, p, mlen_) != i;
                    if (i + 1 < cnt)
                        zit_next(&it);
                }
            }
        }
    }
    ok(!bad, "zset: adds, updates, deletes, ranks and score counts (%s)",
       tzset_encoding_name(z));
    unsigned long len = tzset_len(z);
    tzset_del_range(z, 1, len / 2);
    ok(tzset_len(z) == len - (len / 2 - 1), "zset: delete a rank range");
    void *c = tzset_copy(z);
    ok(c && tzset_len(c) == tzset_len(z), "zset: copy");
    tzset_destroy(c);
    tzset_destroy(z);
    config_defaults();
}

static void test_stream(void)
{
    struct tstream *s = tstream_create();
    int bad = 0;
    struct sid id = {1, 0};

    for (int i = 0; i < 1000; i++) {
        id.seq = (uint64_t)i;
        unsigned char *w = tstream_append(s, &id, 1, sfield_size(1) + sfield_size(3), 4);
        w = sfield_put(w, "f", 1);
        sfield_put(w, "abc", 3);
        tstream_append_done(s);
    }
    ok(s->len == 1000 && s->n == 10, "stream: 1000 entries in 10 nodes");
    for (int i = 0; i < 1000; i += 3) {
        struct sid x = {1, (uint64_t)i};
        bad |= tstream_delete(s, &x) != 1;
    }
    struct sid x = {1, 150}, y;
    struct spos pos;
    struct sent e;
    bad |= !tstream_seek(s, &x, &pos);
    tstream_get(s, &pos, &e);
    y = e.id;
    bad |= y.seq != 151; /* 150 was deleted (every third) */
    const char *p;
    size_t n;
    bad |= !sentry_next(&e, &p, &n) || n != 1 || !sentry_next(&e, &p, &n) || n != 3 ||
           memcmp(p, "abc", 3) != 0;
    bad |= !tstream_seek_rev(s, &x, &pos);
    tstream_get(s, &pos, &e);
    bad |= e.id.seq != 149;
    ok(!bad, "stream: deletes and seeks");
    int64_t before = (int64_t)s->len;
    int64_t d = tstream_trim(s, 500, NULL, 1, 0);
    ok(d > 0 && (int64_t)s->len == before - d && s->len >= 500, "stream: approximate trim");
    d = tstream_trim(s, 10, NULL, 0, 0);
    ok(s->len == 10, "stream: exact trim");
    tstream_destroy(s);
}

int main(void)
{
    config_defaults();
    test_lpack();
    test_dict();
    test_list();
    test_set_hash();
    test_zset();
    test_stream();
    return tap_done();
}
