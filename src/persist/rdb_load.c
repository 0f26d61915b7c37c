/* RDB loader: every encoding Redis 2.x to 7.0 writes (format: see rdb.h and Redis's rdb.h). */
#define _GNU_SOURCE
#include "persist/rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "persist/crc64.h"
#include "persist/rdb_int.h"
#include "persist/rdb_read.h"
#include "store/item.h"
#include "store/lpack.h"
#include "store/store.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_stream.h"
#include "store/t_stream_cg.h"
#include "store/t_zset.h"

/* ---- building items ---- */

struct mcmeta {
    int set;
    uint32_t flags;
    uint64_t cas;
};

int rdb_load_no_replace;
void (*rdb_load_tick)(size_t done, size_t total);
int rdb_load_preamble;

/* -1: out of memory (it is released); -2: the key exists and rdb_load_no_replace is set. */
static int put_key(struct store *s, int db, const struct rstr *key, int type, const char *v,
                   size_t vn, void *ptr, int64_t exp, const struct mcmeta *mc)
{
    uint8_t bits = item_ttl_bits(exp);
    struct skey k;
    struct item *it;

    if (mc->set && mc->flags)
        bits |= IT_FLAGS;
    if (mc->set && mc->cas)
        bits |= IT_CAS;
    it = item_create((uint8_t)type, key->p, key->n, type == OBJ_STRING ? vn : sizeof(void *),
                     bits);
    if (!it)
        return -1;
    if (type == OBJ_STRING)
        memcpy(item_value(it), v, vn);
    else
        memcpy(item_value(it), &ptr, sizeof(ptr));
    if (exp)
        item_set_expire_field(it, exp);
    if (bits & IT_FLAGS)
        memcpy(item_opt(it, IT_FLAGS), &mc->flags, 4);
    if (bits & IT_CAS)
        memcpy(item_opt(it, IT_CAS), &mc->cas, 8);
    store_key(s, &k, db, key->p, key->n);
    store_lock(s, k.stripe);
    if (rdb_load_no_replace && store_lookup_notouch_locked(s, &k, util_now_ms())) {
        store_unlock(s, k.stripe);
        item_release(it);
        return -2;
    }
    if (mc->set && mc->cas > s->stripes[k.stripe].cas)
        s->stripes[k.stripe].cas = mc->cas;
    int rc = store_put_locked(s, &k, it);
    store_unlock(s, k.stripe);
    return rc;
}

void rdb_free_value(int type, void *ptr)
{
    if (!ptr)
        return;
    switch (type) {
    case OBJ_LIST:
        tlist_destroy(ptr);
        break;
    case OBJ_SET:
        tset_destroy(ptr);
        break;
    case OBJ_HASH:
        thash_destroy(ptr);
        break;
    case OBJ_ZSET:
        tzset_destroy(ptr);
        break;
    case OBJ_STREAM:
        tstream_destroy(ptr);
        break;
    }
}

/* The element adders count what they add (r->nel): a payload whose collection ends up
 * smaller than the elements read held duplicates. */
static int set_add(struct rd *r, struct tset **sp, const char *p, size_t n)
{
    r->nel++;
    if (!*sp && !(*sp = tset_create(p, n)))
        return -1;
    return tset_add(*sp, p, n) < 0 ? -1 : 0;
}

static int zset_add(struct rd *r, struct tzset *z, const char *p, size_t n, double sc)
{
    int out;
    double ns;
    r->nel++;
    if (isnan(sc)) {
        if (r->strict)
            return -1;
        sc = 0;
    }
    return tzset_add(z, sc, p, n, 0, &out, &ns) < 0 ? -1 : 0;
}

static int hash_set(struct rd *r, struct thash *h, const char *f, size_t fn, const char *v,
                    size_t vn)
{
    r->nel++;
    return thash_set(h, f, fn, v, vn) < 0 ? -1 : 0;
}

static int r_raw_id(struct rd *r, struct sid *id)
{
    if (rd_need(r, 16))
        return -1;
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = (id->ms << 8) | r->p[i];
        id->seq = (id->seq << 8) | r->p[8 + i];
    }
    r->p += 16;
    return 0;
}

/* One stream node (a listpack) appended to s. */
static int r_stream_node(struct tstream *s, const struct sid *master, const char *blob, size_t bn)
{
    struct lpr l, mf, e;
    int64_t count, deleted, nmaster, v;
    const char *p;
    size_t n;

    if (lpr_init(&l, blob, bn) || lpr_int(&l, &count) || lpr_int(&l, &deleted) ||
        lpr_int(&l, &nmaster) || nmaster < 0 || count < 0 || deleted < 0 ||
        count > (int64_t)bn || deleted > (int64_t)bn || nmaster > (int64_t)bn)
        return -1;
    mf = l;
    for (int64_t i = 0; i < nmaster; i++)
        if (lpr_next(&l, &p, &n, NULL, NULL) != 1)
            return -1;
    if (lpr_int(&l, &v) || v != 0) /* master terminator */
        return -1;
    for (int64_t i = 0; i < count + deleted; i++) {
        int64_t flags, dms, dseq, nf;
        struct sid id;
        size_t fbytes = 0, raw = 0;
        if (lpr_int(&l, &flags) || lpr_int(&l, &dms) || lpr_int(&l, &dseq))
            return -1;
        id.ms = master->ms + (uint64_t)dms;
        id.seq = master->seq + (uint64_t)dseq;
        int same = (flags & 2) != 0;
        if (same) {
            nf = nmaster;
        } else if (lpr_int(&l, &nf) || nf < 0) {
            return -1;
        }
        /* pass 1: sizes */
        e = l;
        struct lpr f = mf;
        for (int64_t j = 0; j < nf; j++) {
            if (same) {
                if (lpr_next(&f, &p, &n, NULL, NULL) != 1)
                    return -1;
                fbytes += sfield_size(n);
            } else {
                if (lpr_next(&e, &p, &n, NULL, NULL) != 1)
                    return -1;
                fbytes += sfield_size(n);
            }
            raw += n;
            if (lpr_next(&e, &p, &n, NULL, NULL) != 1)
                return -1;
            fbytes += sfield_size(n);
            raw += n;
        }
        if (!(flags & 1)) {
            if (s->len && sid_cmp(&id, &s->last_id) <= 0)
                return -1;
            unsigned char *w = tstream_append(s, &id, (uint32_t)nf, fbytes, raw);
            if (!w)
                return -1;
            /* pass 2: copy */
            e = l;
            f = mf;
            for (int64_t j = 0; j < nf; j++) {
                lpr_next(same ? &f : &e, &p, &n, NULL, NULL);
                w = sfield_put(w, p, n);
                lpr_next(&e, &p, &n, NULL, NULL);
                w = sfield_put(w, p, n);
            }
            if (tstream_append_done(s))
                return -1;
        }
        l = e;
        /* lp-count: the entry's own elements (flags, ID, values; fields and their count too
         * when they are not the master's), as Redis checks it */
        if (lpr_int(&l, &v) || v != nf + 3 + (same ? 0 : nf + 1))
            return -1;
    }
    if (lpr_next(&l, &p, &n, NULL, NULL) != 0)
        return -1; /* elements after the last entry */
    return 0;
}

/* A pending entry read from a group's global PEL, until its consumer claims it. */
struct rnack {
    struct sid id;
    int64_t dtime;
    uint64_t dcount;
    int owned;
};

/* One consumer group of s (Redis 7.0 layout, see rdb.c w_groups). Memory grows with what
 * the file holds, never with the counts it claims. */
static int r_group(struct rd *r, unsigned t, struct tstream *s)
{
    struct rstr name;
    struct sid last;
    uint64_t er = (uint64_t)SCG_INVALID_ENTRIES_READ, npel, ncons, x;
    struct rnack *pel = NULL;
    size_t n = 0, cap = 0;
    struct sgroup *g;
    int rc = -1;

    if (rd_str(r, &name))
        return -1;
    if (rd_len(r, &last.ms) || rd_len(r, &last.seq))
        goto out_name;
    if (t >= T_STREAM_LISTPACKS_2 && rd_len(r, &er))
        goto out_name;
    if (scg_find(s, name.p, name.n)) {
        rd_fail(r, "Duplicated consumer group name");
        goto out_name;
    }
    g = scg_create(s, name.p, name.n, &last, (long long)er);
    if (!g) {
        rd_fail(r, "Out of memory loading RDB");
        goto out_name;
    }
    if (rd_len(r, &npel))
        goto out_name;
    for (uint64_t j = 0; j < npel; j++) {
        struct rnack nk = {{0, 0}, 0, 0, 0};
        if (r_raw_id(r, &nk.id) || rd_u64le(r, &x) || rd_len(r, &nk.dcount))
            goto out;
        nk.dtime = (int64_t)x;
        if (n && sid_cmp(&pel[n - 1].id, &nk.id) >= 0) {
            rd_fail(r, "Duplicated or unsorted global PEL entry loading stream consumer group");
            goto out;
        }
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 16;
            struct rnack *v = realloc(pel, sizeof(*v) * nc);
            if (!v) {
                rd_fail(r, "Out of memory loading RDB");
                goto out;
            }
            pel = v;
            cap = nc;
        }
        pel[n++] = nk;
    }
    if (rd_len(r, &ncons))
        goto out;
    for (uint64_t j = 0; j < ncons; j++) {
        struct rstr cn;
        uint64_t seen, cpel;
        struct scons *c;
        if (rd_str(r, &cn))
            goto out;
        if (rd_u64le(r, &seen) || (t >= T_STREAM_LISTPACKS_3 && rd_u64le(r, &x))) {
            rstr_free(&cn);
            goto out;
        }
        if (scg_cons_find(g, cn.p, cn.n)) {
            rstr_free(&cn);
            rd_fail(r, "Duplicate stream consumer detected.");
            goto out;
        }
        c = scg_cons_create(s, g, cn.p, cn.n, (int64_t)seen);
        rstr_free(&cn);
        if (!c) {
            rd_fail(r, "Out of memory loading RDB");
            goto out;
        }
        if (rd_len(r, &cpel))
            goto out;
        for (uint64_t k = 0; k < cpel; k++) {
            struct sid id;
            size_t lo = 0, hi = n;
            if (r_raw_id(r, &id))
                goto out;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (sid_cmp(&pel[mid].id, &id) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == n || sid_cmp(&pel[lo].id, &id) != 0 || pel[lo].owned) {
                rd_fail(r, "Consumer entry not found in group global PEL");
                goto out;
            }
            pel[lo].owned = 1;
            if (!scg_pel_add(s, g, c, &id, pel[lo].dtime, pel[lo].dcount)) {
                rd_fail(r, "Out of memory loading RDB");
                goto out;
            }
        }
    }
    for (size_t j = 0; j < n; j++)
        if (!pel[j].owned) {
            rd_fail(r, "Stream PEL entry without a consumer");
            goto out;
        }
    rc = 0;
out:
    free(pel);
out_name:
    rstr_free(&name);
    return rc;
}

/* A stream of Redis < 7 has no entries-read per group: estimated from the group's last ID
 * as Redis 7 does when it loads one (every entry counted, nothing deleted before 7.0 knew). */
static void v1_entries_read(struct tstream *s)
{
    struct sid first = {0, 0}, zero = {0, 0};
    struct spos pos;
    struct sent e;

    if (s->len && tstream_seek(s, &zero, &pos)) {
        tstream_get(s, &pos, &e);
        first = e.id;
    }
    for (size_t i = 0; i < s->ngroups; i++) {
        struct sgroup *g = s->groups[i];
        const struct sid *id = &g->last_id;
        long long er = SCG_INVALID_ENTRIES_READ;
        int cl = sid_cmp(id, &s->last_id);
        if (!s->entries_added)
            er = 0;
        else if ((!s->len && cl <= 0) || cl == 0)
            er = (long long)s->entries_added;
        else if (cl < 0 && sid_cmp(id, &first) < 0)
            er = (long long)(s->entries_added - s->len);
        else if (cl < 0 && sid_cmp(id, &first) == 0)
            er = (long long)(s->entries_added - s->len + 1);
        g->entries_read = er;
    }
}

static int r_stream(struct rd *r, unsigned t, void **ptr)
{
    struct tstream *s = tstream_create();
    uint64_t nodes, len, a, b, ngroups;
    struct sid last, maxdel = {0, 0};
    uint64_t added = 0;

    if (!s)
        return rd_fail(r, "Out of memory loading RDB");
    *ptr = s;
    if (rd_len(r, &nodes))
        return -1;
    for (uint64_t i = 0; i < nodes; i++) {
        struct rstr k, blob;
        struct sid master = {0, 0};
        if (rd_str(r, &k))
            return -1;
        if (k.n != 16) {
            rstr_free(&k);
            return rd_fail(r, "Stream node key entry is not the size of a stream ID");
        }
        for (int j = 0; j < 8; j++) {
            master.ms = (master.ms << 8) | (unsigned char)k.p[j];
            master.seq = (master.seq << 8) | (unsigned char)k.p[8 + j];
        }
        rstr_free(&k);
        if (rd_str(r, &blob))
            return -1;
        int rc = r_stream_node(s, &master, blob.p, blob.n);
        rstr_free(&blob);
        if (rc)
            return rd_fail(r, "Stream listpack integrity check failed.");
    }
    if (rd_len(r, &len) || rd_len(r, &last.ms) || rd_len(r, &last.seq))
        return -1;
    if (t >= T_STREAM_LISTPACKS_2) {
        if (rd_len(r, &a) || rd_len(r, &b) || rd_len(r, &maxdel.ms) || rd_len(r, &maxdel.seq) ||
            rd_len(r, &added))
            return -1;
    } else {
        added = len;
    }
    if (rd_len(r, &ngroups))
        return -1;
    for (uint64_t g = 0; g < ngroups; g++)
        if (r_group(r, t, s))
            return -1;
    if (s->len != len)
        return rd_fail(r, "Stream length does not match its entries");
    if (s->len && sid_cmp(&last, &s->last_id) < 0)
        return rd_fail(r, "Stream last ID is smaller than its last entry's");
    s->last_id = last;
    s->max_deleted_id = maxdel;
    s->entries_added = added;
    if (t == T_STREAM_LISTPACKS)
        v1_entries_read(s);
    return 0;
}

/* A zipmap length: one byte below 254, or 254 and 4 bytes little-endian. */
static int zm_len(const unsigned char **p, const unsigned char *end, size_t *len)
{
    if (*p >= end)
        return -1;
    if (**p < 254) {
        *len = *(*p)++;
        return 0;
    }
    if (**p != 254 || end - *p < 5)
        return -1;
    *len = (size_t)(*p)[1] | (size_t)(*p)[2] << 8 | (size_t)(*p)[3] << 16 |
           (size_t)(*p)[4] << 24;
    *p += 5;
    return 0;
}

/* RDB_TYPE_HASH_ZIPMAP: zmlen, then key-len key value-len free value (free bytes), 0xff. */
static int r_zipmap(struct rd *r, const struct rstr *a, void **ptr)
{
    const unsigned char *p = (const unsigned char *)a->p, *end = p + a->n;
    struct thash *h = thash_create();

    if (!h)
        return -1;
    *ptr = h;
    if (a->n < 2 || end[-1] != 0xff)
        return -1;
    p++;
    end--;
    while (p < end) {
        size_t kn, vn, fr;
        const unsigned char *k, *v;
        if (zm_len(&p, end, &kn) || (size_t)(end - p) < kn)
            return -1;
        k = p;
        p += kn;
        if (zm_len(&p, end, &vn) || p >= end)
            return -1;
        fr = *p++;
        if ((size_t)(end - p) < vn || (size_t)(end - p) - vn < fr)
            return -1;
        v = p;
        p += vn + fr;
        if (hash_set(r, h, (const char *)k, kn, (const char *)v, vn))
            return -1;
    }
    return 0;
}

/* Read one value of rdb type t; *otype and *ptr (collections) or the string. */
/* Redis's words for a corrupt packed collection of RDB type t (its log says which). */
static const char *pack_why(unsigned t, int zl)
{
    if (zl) /* read as a listpack of the same kind: say which it was */
        t = t == T_HASH_LISTPACK ? T_HASH_ZIPLIST : T_ZSET_ZIPLIST;
    switch (t) {
    case T_HASH_ZIPLIST:
        return "Hash ziplist integrity check failed.";
    case T_ZSET_ZIPLIST:
        return "Zset ziplist integrity check failed.";
    case T_HASH_LISTPACK:
        return "Hash listpack integrity check failed.";
    case T_ZSET_LISTPACK:
        return "Zset listpack integrity check failed.";
    default:
        return "Listpack integrity check failed.";
    }
}

int rdb_read_value(struct rd *r, unsigned t, int *otype, void **ptr, struct rstr *str)
{
    uint64_t len;
    struct rstr a, b;
    struct lpr lp;
    const char *p, *q;
    size_t n, m;
    int zl = 0;

    *ptr = NULL;
    switch (t) {
    case T_LIST_ZIPLIST:   /* Redis < 3.2: one ziplist */
    case T_LIST_QUICKLIST: { /* Redis 3.2 to 6.2: ziplist nodes */
        struct tlist *l = tlist_create();
        *otype = OBJ_LIST;
        if (!l)
            return rd_fail(r, "Out of memory loading RDB");
        *ptr = l;
        len = 1;
        if (t == T_LIST_QUICKLIST && rd_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            int k;
            if (rd_str(r, &a))
                return -1;
            if (lpr_init_zl(&lp, a.p, a.n)) {
                rstr_free(&a);
                return rd_fail(r, "Ziplist integrity check failed.");
            }
            while ((k = lpr_next(&lp, &p, &n, NULL, NULL)) == 1) {
                if (tlist_push(l, 1, p, n)) {
                    rstr_free(&a);
                    return rd_fail(r, "Out of memory loading RDB");
                }
            }
            rstr_free(&a);
            if (k < 0)
                return rd_fail(r, "Ziplist integrity check failed.");
        }
        return 0;
    }
    case T_HASH_ZIPMAP: /* Redis < 2.6 */
        *otype = OBJ_HASH;
        if (rd_str(r, &a))
            return -1;
        if (r_zipmap(r, &a, ptr)) {
            rstr_free(&a);
            return rd_fail(r, "Zipmap integrity check failed.");
        }
        rstr_free(&a);
        return 0;
    case T_STRING:
        *otype = OBJ_STRING;
        return rd_str(r, str);
    case T_LIST: {
        struct tlist *l = tlist_create();
        *otype = OBJ_LIST;
        if (!l || rd_len(r, &len))
            goto fail_list;
        *ptr = l;
        for (uint64_t i = 0; i < len; i++) {
            if (rd_str(r, &a))
                return -1;
            int rc = tlist_push(l, 1, a.p, a.n);
            rstr_free(&a);
            if (rc)
                return rd_fail(r, "Out of memory loading RDB");
        }
        return 0;
    fail_list:
        if (l)
            tlist_destroy(l);
        return rd_fail(r, "Out of memory loading RDB");
    }
    case T_LIST_QUICKLIST_2: {
        struct tlist *l = tlist_create();
        *otype = OBJ_LIST;
        if (!l)
            return rd_fail(r, "Out of memory loading RDB");
        *ptr = l;
        if (rd_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            uint64_t container;
            if (rd_len(r, &container))
                return -1;
            if (container != 1 && container != 2)
                return rd_fail(r, "Quicklist integrity check failed.");
            if (rd_str(r, &a))
                return -1;
            if (a.n == 0) { /* neither container is ever empty */
                rstr_free(&a);
                return rd_fail(r, "Quicklist integrity check failed.");
            }
            if (container == 1) { /* PLAIN: one element */
                int rc = tlist_push(l, 1, a.p, a.n);
                rstr_free(&a);
                if (rc)
                    return rd_fail(r, "Out of memory loading RDB");
                continue;
            }
            if (lpr_init(&lp, a.p, a.n)) {
                rstr_free(&a);
                return rd_fail(r, "Listpack integrity check failed.");
            }
            int k;
            while ((k = lpr_next(&lp, &p, &n, NULL, NULL)) == 1) {
                if (tlist_push(l, 1, p, n)) {
                    rstr_free(&a);
                    return rd_fail(r, "Out of memory loading RDB");
                }
            }
            rstr_free(&a);
            if (k < 0)
                return rd_fail(r, "Listpack integrity check failed.");
        }
        return 0;
    }
    case T_SET: {
        struct tset *s = NULL;
        *otype = OBJ_SET;
        if (rd_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            if (rd_str(r, &a))
                return -1;
            int rc = set_add(r, &s, a.p, a.n);
            *ptr = s;
            rstr_free(&a);
            if (rc)
                return rd_fail(r, "Out of memory loading RDB");
        }
        *ptr = s;
        return 0;
    }
    case T_SET_INTSET: {
        struct tset *s = NULL;
        *otype = OBJ_SET;
        if (rd_str(r, &a))
            return -1;
        const unsigned char *u = (const unsigned char *)a.p;
        uint32_t w = 0, cnt = 0;
        if (a.n >= 8) {
            w = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
            cnt = (uint32_t)u[4] | (uint32_t)u[5] << 8 | (uint32_t)u[6] << 16 |
                  (uint32_t)u[7] << 24;
        }
        if ((w != 2 && w != 4 && w != 8) || a.n != 8 + (size_t)w * cnt) {
            rstr_free(&a);
            return rd_fail(r, "Intset integrity check failed.");
        }
        for (uint32_t i = 0; i < cnt; i++) {
            uint64_t v = 0;
            const unsigned char *e = u + 8 + (size_t)i * w;
            for (int j = (int)w - 1; j >= 0; j--)
                v = (v << 8) | e[j];
            if (w < 8 && (v >> (8 * w - 1)) & 1)
                v |= ~0ULL << (8 * w);
            char num[24];
            int k = snprintf(num, sizeof(num), "%lld", (long long)(int64_t)v);
            int rc = set_add(r, &s, num, (size_t)k);
            *ptr = s;
            if (rc) {
                rstr_free(&a);
                return rd_fail(r, "Out of memory loading RDB");
            }
        }
        rstr_free(&a);
        return 0;
    }
    case T_HASH_ZIPLIST: /* Redis < 7: as the listpacks, in a ziplist */
    case T_ZSET_ZIPLIST:
        t = t == T_HASH_ZIPLIST ? T_HASH_LISTPACK : T_ZSET_LISTPACK;
        zl = 1;
        /* fall through */
    case T_SET_LISTPACK:
    case T_HASH_LISTPACK:
    case T_ZSET_LISTPACK: {
        void *o = NULL;
        *otype = t == T_SET_LISTPACK ? OBJ_SET : t == T_HASH_LISTPACK ? OBJ_HASH : OBJ_ZSET;
        if (rd_str(r, &a))
            return -1;
        if (zl ? lpr_init_zl(&lp, a.p, a.n) : lpr_init(&lp, a.p, a.n)) {
            rstr_free(&a);
            return rd_fail(r, pack_why(t, zl));
        }
        if (t == T_HASH_LISTPACK)
            o = thash_create();
        else if (t == T_ZSET_LISTPACK)
            o = tzset_create(0, 0);
        if (t != T_SET_LISTPACK && !o) {
            rstr_free(&a);
            return rd_fail(r, "Out of memory loading RDB");
        }
        *ptr = o;
        int k, rc = 0;
        while (rc == 0 && (k = lpr_next(&lp, &p, &n, NULL, NULL)) == 1) {
            if (t == T_SET_LISTPACK) {
                struct tset *s = o;
                rc = set_add(r, &s, p, n);
                *ptr = o = s;
                continue;
            }
            char key[64];
            const char *kp = p;
            /* the first element may be formatted into lp.num, which the next call reuses */
            if (kp == lp.num) {
                memcpy(key, p, n);
                kp = key;
            }
            k = lpr_next(&lp, &q, &m, NULL, NULL);
            if (k != 1) {
                rstr_free(&a);
                return rd_fail(r, pack_why(t, zl));
            }
            if (t == T_HASH_LISTPACK) {
                rc = hash_set(r, o, kp, n, q, m);
            } else {
                char num[64];
                size_t c = m < sizeof(num) - 1 ? m : sizeof(num) - 1;
                memcpy(num, q, c);
                num[c] = '\0';
                rc = zset_add(r, o, kp, n, strtod(num, NULL));
            }
        }
        rstr_free(&a);
        if (rc)
            return rd_fail(r, "Out of memory loading RDB");
        if (k < 0)
            return rd_fail(r, pack_why(t, zl));
        return 0;
    }
    case T_HASH: {
        struct thash *h = thash_create();
        *otype = OBJ_HASH;
        if (!h)
            return rd_fail(r, "Out of memory loading RDB");
        *ptr = h;
        if (rd_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            if (rd_str(r, &a))
                return -1;
            if (rd_str(r, &b)) {
                rstr_free(&a);
                return -1;
            }
            thash_convert_for(h, a.n > b.n ? a.n : b.n);
            int rc = hash_set(r, h, a.p, a.n, b.p, b.n);
            rstr_free(&a);
            rstr_free(&b);
            if (rc < 0)
                return rd_fail(r, "Out of memory loading RDB");
        }
        return 0;
    }
    case T_ZSET:
    case T_ZSET_2: {
        struct tzset *z;
        *otype = OBJ_ZSET;
        if (rd_len(r, &len))
            return -1;
        /* a size hint no larger than the bytes left can hold (9 per member at least) */
        z = tzset_create(len < (uint64_t)(r->end - r->p) / 9 ? (size_t)len
                                                             : (size_t)(r->end - r->p) / 9,
                         0);
        if (!z)
            return rd_fail(r, "Out of memory loading RDB");
        *ptr = z;
        for (uint64_t i = 0; i < len; i++) {
            double sc;
            if (rd_str(r, &a))
                return -1;
            if (t == T_ZSET_2 ? rd_double_bin(r, &sc) : rd_double_text(r, &sc)) {
                rstr_free(&a);
                return -1;
            }
            int rc = zset_add(r, z, a.p, a.n, sc);
            rstr_free(&a);
            if (rc)
                return rd_fail(r, "Out of memory loading RDB");
        }
        return 0;
    }
    case T_STREAM_LISTPACKS:
    case T_STREAM_LISTPACKS_2:
    case T_STREAM_LISTPACKS_3:
        *otype = OBJ_STREAM;
        return r_stream(r, t, ptr);
    }
    return rd_fail(r, "Unsupported RDB object type (modules)");
}

int rdb_load(struct store *s, const char *path, int64_t now, struct rdb_load_info *info,
             char *err, size_t errcap)
{
    int prc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    void *map = NULL;
    struct rd r = {0};
    struct mcmeta mc = {0};
    int db = 0, rc = -1;
    int64_t exp = 0;

    memset(info, 0, sizeof(*info));
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errcap, "%s", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) < 0) {
        snprintf(err, errcap, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (st.st_size > 0) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            snprintf(err, errcap, "%s", strerror(errno));
            close(fd);
            return -1;
        }
    }
    close(fd);
    r.p = map;
    r.end = r.p + st.st_size;
    if (rdb_load_tick)
        rdb_load_tick(0, (size_t)st.st_size); /* INFO loading_total_bytes from the start */
    if (st.st_size < 9 || memcmp(r.p, "REDIS", 5) != 0) {
        snprintf(err, errcap, "Wrong signature trying to load DB from file");
        goto out_unmap;
    }
    {
        char v[5];
        memcpy(v, r.p + 5, 4);
        v[4] = '\0';
        info->version = atoi(v);
        if (info->version < 1 || info->version > 11) {
            snprintf(err, errcap, "Can't handle RDB format version %d", info->version);
            goto out_unmap;
        }
    }
    /* the trailer: CRC64 of everything before it, 0 when the writer had rdbchecksum off */
    if (info->version >= 5 && st.st_size >= 9 + 9 && !rdb_load_preamble) {
        const unsigned char *t = r.end - 8;
        uint64_t want = 0;
        for (int i = 7; i >= 0; i--)
            want = (want << 8) | t[i];
        if (want != 0 && crc64(0, r.p, (size_t)st.st_size - 8) != want) {
            snprintf(err, errcap, "Wrong RDB checksum. Aborting now.");
            goto out_unmap;
        }
        r.end -= 8;
    }
    r.p += 9;
    for (;;) {
        unsigned t;
        struct rstr key, str = {0};
        void *ptr = NULL;
        int otype = OBJ_STRING;

        if (rd_byte(&r, &t))
            break;
        if (t == OP_EOF) {
            rc = 0;
            if (rdb_load_preamble && info->version >= 5) {
                /* an AOF's RDB part: its checksum follows EOF, the AOF's commands after it */
                const unsigned char *base = map;
                uint64_t want = 0;
                if (r.end - r.p < 8) {
                    rc = -1;
                    break;
                }
                for (int i = 7; i >= 0; i--)
                    want = (want << 8) | r.p[i];
                if (want != 0 && crc64(0, base, (size_t)(r.p - base)) != want) {
                    snprintf(err, errcap, "Wrong RDB checksum. Aborting now.");
                    goto out_unmap;
                }
                r.p += 8;
            }
            info->end_off = (uint64_t)(r.p - (const unsigned char *)map);
            break;
        }
        if (t == OP_EXPIRETIME_MS) {
            uint64_t v;
            if (rd_u64le(&r, &v))
                break;
            exp = (int64_t)v;
            continue;
        }
        if (t == OP_EXPIRETIME) {
            if (rd_need(&r, 4))
                break;
            exp = (int64_t)((uint32_t)r.p[0] | (uint32_t)r.p[1] << 8 | (uint32_t)r.p[2] << 16 |
                            (uint32_t)r.p[3] << 24) *
                  1000;
            r.p += 4;
            continue;
        }
        if (t == OP_FREQ) {
            unsigned b;
            if (rd_byte(&r, &b))
                break;
            continue;
        }
        if (t == OP_IDLE) {
            uint64_t v;
            if (rd_len(&r, &v))
                break;
            continue;
        }
        if (t == OP_SELECTDB) {
            uint64_t v;
            if (rd_len(&r, &v))
                break;
            if (v >= (uint64_t)s->ndb) {
                snprintf(err, errcap, "FATAL: Data file was created with a Redis server "
                         "configured to handle more than %d databases. Exiting", s->ndb);
                goto out_unmap;
            }
            db = (int)v;
            continue;
        }
        if (t == OP_RESIZEDB) {
            uint64_t a, b;
            if (rd_len(&r, &a) || rd_len(&r, &b))
                break;
            /* the key count of this database, as Redis's loader expands its dict: believed
             * only as far as the bytes left could hold keys (3 bytes each at the least: type,
             * empty name, empty value), so a hostile count allocates nothing */
            uint64_t left = (uint64_t)(r.end - r.p);
            store_reserve_locked(s, db, a < left / 3 ? a : left / 3);
            continue;
        }
        if (t == OP_AUX) {
            struct rstr k, v;
            if (rd_str(&r, &k))
                break;
            if (rd_str(&r, &v)) {
                rstr_free(&k);
                break;
            }
            if (k.n == 7 && !memcmp(k.p, "repl-id", 7) && v.n == 40) {
                memcpy(info->repl_id, v.p, 40);
                info->repl_id[40] = 0;
                info->has_repl |= 1;
            } else if (k.n == 14 && !memcmp(k.p, "repl-stream-db", 14) && v.n && v.n < 12) {
                char num[12];
                memcpy(num, v.p, v.n);
                num[v.n] = 0;
                info->repl_stream_db = atoi(num) > 0 ? atoi(num) : 0;
            } else if (k.n == 11 && !memcmp(k.p, "repl-offset", 11) && v.n < 24) {
                char num[24];
                memcpy(num, v.p, v.n);
                num[v.n] = 0;
                char *end;
                unsigned long long off = strtoull(num, &end, 10);
                if (v.n && !*end) {
                    info->repl_offset = off;
                    info->has_repl |= 2;
                }
            }
            if (k.n == strlen(MCMETA_AUX) && memcmp(k.p, MCMETA_AUX, k.n) == 0) {
                char buf[64];
                size_t c = v.n < sizeof(buf) - 1 ? v.n : sizeof(buf) - 1;
                unsigned long long fl = 0, cas = 0;
                memcpy(buf, v.p, c);
                buf[c] = '\0';
                if (sscanf(buf, "%llu %llu", &fl, &cas) == 2) {
                    mc.set = 1;
                    mc.flags = (uint32_t)fl;
                    mc.cas = cas;
                }
            }
            rstr_free(&k);
            rstr_free(&v);
            continue;
        }
        if (t == OP_FUNCTION2) {
            struct rstr code;
            char ferr[256];
            if (!rdb_funcs.load) {
                log_warn("RDB: skipping a function library (functions are not supported)");
                if (rd_skip_str(&r))
                    break;
                continue;
            }
            if (rd_str(&r, &code))
                break;
            if (rdb_funcs.load(code.p, code.n, ferr, sizeof(ferr))) {
                rstr_free(&code);
                snprintf(err, errcap, "Failed loading library: %s", ferr);
                goto out_unmap;
            }
            rstr_free(&code);
            continue;
        }
        if (t == OP_MODULE_AUX || t == OP_FUNCTION_PRE_GA || t == T_MODULE || t == T_MODULE_2) {
            rd_fail(&r, "RDB file holds module data or pre-GA functions (not supported)");
            break;
        }
        /* a key */
        if (rd_str(&r, &key))
            break;
        if (rdb_read_value(&r, t, &otype, &ptr, &str)) {
            rdb_free_value(otype, ptr);
            rstr_free(&key);
            break;
        }
        if (exp && exp <= now && !rdb_load_preamble) {
            info->expired++;
            rdb_free_value(otype, ptr);
        } else if (otype != OBJ_STRING && (!ptr || rdb_value_empty(otype, ptr))) {
            /* an empty collection (a corrupt file): skipped as Redis skips it */
            if (info->empty++ < 10)
                log_notice("rdbLoadObject skipping empty key: %.*s", (int)key.n, key.p);
            rdb_free_value(otype, ptr);
        } else if ((prc = put_key(s, db, &key, otype, str.p, str.n, ptr, exp, &mc)) != 0) {
            rstr_free(&key);
            rstr_free(&str);
            rd_fail(&r, prc == -2 ? "Duplicate key found in the RDB file" : "Out of memory loading RDB");
            break;
        } else {
            if (rdb_load_tick)
                rdb_load_tick((size_t)(r.p - (const unsigned char *)map), (size_t)st.st_size);
            if (++info->keys % 1000000 == 0)
                log_notice("Loading RDB: %llu keys, %.0f%% of the file",
                           (unsigned long long)info->keys,
                           100.0 * (double)(r.p - (const unsigned char *)map) /
                               (double)st.st_size);
        }
        rstr_free(&key);
        rstr_free(&str);
        exp = 0;
        mc.set = 0;
    }
    if (rc && r.why)
        snprintf(err, errcap, "%s", r.why);
    else if (rc)
        snprintf(err, errcap, "Short read or OOM loading DB. Unrecoverable error, aborting now.");
out_unmap:
    if (map)
        munmap(map, (size_t)st.st_size);
    return rc;
}
