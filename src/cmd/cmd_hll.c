/* HyperLogLog commands: PFADD PFCOUNT PFMERGE (Redis 7.0's HYLL string encoding).
 *
 * An HLL is a plain string value laid out exactly as Redis lays it out, so GET, DUMP and
 * snapshots carry the same bytes and either server reads the other's HLLs:
 *   "HYLL" | encoding (0 dense, 1 sparse) | 3 unused | 8-byte LE cached cardinality (top bit
 *   of the last byte set: cache invalid) | registers
 * Dense: 16384 registers of 6 bits, little-endian bit order (12288 bytes). Sparse: a run
 * list of opcodes ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx yyyyyyyy (1..16384
 * zero registers), VAL 1vvvvvxx (1..4 registers of value 1..32). Every update follows the
 * same steps as Redis (splits, merges of adjacent VALs, promotion to dense past
 * hll-sparse-max-bytes or for a value > 32) so the bytes stay identical. Values are
 * validated on every access: corrupt input gives INVALIDOBJ, never an out-of-bounds access. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "core/config.h"
#include "cmd/keyset.h"
#include "store/strval.h"

#define HLL_P 14
#define HLL_Q (64 - HLL_P)
#define HLL_REGS (1 << HLL_P)
#define HLL_HDR 16
#define HLL_DENSE_LEN (HLL_HDR + (HLL_REGS * 6 + 7) / 8)
#define HLL_ENC_DENSE 0
#define HLL_ENC_SPARSE 1
#define HLL_VAL_MAX 32
#define HLL_VAL_MAXLEN 4
#define HLL_ZERO_MAXLEN 64
#define HLL_XZERO_MAXLEN 16384
#define HLL_CACHE_BYTE 15 /* its top bit: cached cardinality invalid */

#define ERR_HLL_TYPE "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_HLL_BAD "INVALIDOBJ Corrupted HLL object detected"

/* Per-thread work areas: a mutable copy of a sparse value (or of a dense one that cannot be
 * written in place), a dense value being built, and the register maxima of a merge. tl_work
 * holds the longest valid sparse value (2 bytes per register) and its growth by an update,
 * whatever hll-sparse-max-bytes says; only a longer, corrupt, value is copied to the heap. */
#define HLL_SPARSE_LONGEST (HLL_HDR + 2 * HLL_REGS)
#define WORK_CAP (HLL_SPARSE_LONGEST + 8)
#define HLL_OOM (-2) /* sparse_set / hll_add: no memory to grow the copy */
static _Thread_local uint8_t tl_work[WORK_CAP];
static _Thread_local uint8_t tl_dense[HLL_DENSE_LEN];
static _Thread_local uint8_t tl_max[HLL_REGS];

/* An HLL value being read or changed: p[0..len) with room for cap bytes. A sparse copy also
 * keeps p[len], the byte Redis's sds string holds past its end: its terminator, except where
 * hllSparseSet's split of a truncated final XZERO wrote that XZERO's second byte there, which
 * later reads of that XZERO in the same command see (only corrupt values end that way).
 * Stored values have no such byte: where Redis keeps it for the next command, twincache's
 * next command reads 0, as Redis's does after a reload (a known difference). */
struct hll {
    uint8_t *p;
    size_t len;
    size_t cap;
    uint8_t *heap; /* p when malloc'd (sparse values too big for tl_work), else NULL */
    size_t max;    /* hll-sparse-max-bytes, read once per command */
};

/* Give h room for need bytes, growing as Redis's sds strings grow (twice what is needed, by
 * at most 1 MB). Returns 0, or -1 when out of memory (h unchanged). */
static int hll_reserve(struct hll *h, size_t need)
{
    uint8_t *p;

    if (need <= h->cap)
        return 0;
    need += need < (1u << 20) ? need : (1u << 20);
    if (!(p = realloc(h->heap, need)))
        return -1;
    if (!h->heap)
        memcpy(p, h->p, h->len);
    h->heap = h->p = p;
    h->cap = need;
    return 0;
}

/* ---- hashing ---- */

/* MurmurHash64A with the seed Redis uses for HLLs, blocks read little-endian. */
static uint64_t hll_hash(const uint8_t *d, size_t len)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    uint64_t h = 0xadc83b19ULL ^ ((uint64_t)len * m);
    size_t nb = len & ~(size_t)7;

    for (size_t i = 0; i < nb; i += 8) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--)
            k = (k << 8) | d[i + (size_t)b];
        k *= m;
        k ^= k >> 47;
        k *= m;
        h ^= k;
        h *= m;
    }
    if (len & 7) {
        for (int b = (int)(len & 7) - 1; b >= 0; b--)
            h ^= (uint64_t)d[nb + (size_t)b] << (8 * b);
        h *= m;
    }
    h ^= h >> 47;
    h *= m;
    h ^= h >> 47;
    return h;
}

/* Register index of an element and its run length: 1 + trailing zeros of the upper 50 bits. */
static int hll_patlen(const uint8_t *e, size_t n, int *reg)
{
    uint64_t h = hll_hash(e, n);

    *reg = (int)(h & (HLL_REGS - 1));
    h >>= HLL_P;
    h |= 1ULL << HLL_Q;
    return __builtin_ctzll(h) + 1;
}

/* ---- dense registers ---- */

static inline int dense_get(const uint8_t *r, long i)
{
    unsigned long bit = (unsigned long)i * 6, byte = bit >> 3, fb = bit & 7;
    unsigned v = r[byte] >> fb;

    if (fb > 2) /* the register spills into the next byte */
        v |= (unsigned)r[byte + 1] << (8 - fb);
    return (int)(v & 63);
}

static inline void dense_put(uint8_t *r, long i, int val)
{
    unsigned long bit = (unsigned long)i * 6, byte = bit >> 3, fb = bit & 7;

    r[byte] = (uint8_t)((r[byte] & ~(63u << fb)) | ((unsigned)val << fb));
    if (fb > 2)
        r[byte + 1] = (uint8_t)((r[byte + 1] & ~(63u >> (8 - fb))) | ((unsigned)val >> (8 - fb)));
}

/* Raise register i to val. Returns 1 if it changed. */
static inline int dense_set(uint8_t *r, long i, int val)
{
    if (val <= dense_get(r, i))
        return 0;
    dense_put(r, i, val);
    return 1;
}

/* ---- sparse opcodes ---- */

#define OP_IS_ZERO(b) (((b) & 0xc0) == 0)
#define OP_IS_XZERO(b) (((b) & 0xc0) == 0x40)
#define OP_IS_VAL(b) ((b) & 0x80)
#define OP_ZERO_LEN(b) (((b) & 0x3f) + 1)
#define OP_VAL_VALUE(b) ((((b) >> 2) & 0x1f) + 1)
#define OP_VAL_LEN(b) (((b) & 3) + 1)
#define OP_VAL(v, l) ((uint8_t)(0x80 | (((v) - 1) << 2) | ((l) - 1)))

/* An XZERO's run length. A truncated XZERO (the value's last byte) takes tail as its second
 * byte: Redis reads the byte past its string's end, the terminator (0) of a stored value;
 * within a sparse update, whatever hllSparseSet last left there (see struct hll). */
static inline long xzero_len(const uint8_t *p, const uint8_t *end, uint8_t tail)
{
    unsigned lo = p + 1 < end ? p[1] : tail;
    return (long)((((unsigned)p[0] & 0x3f) << 8) | lo) + 1;
}

/* Append the opcode(s) for a run of len zero registers at n; returns the bytes written. */
static int put_zero_run(uint8_t *n, long len)
{
    if (len > HLL_ZERO_MAXLEN) {
        n[0] = (uint8_t)(((len - 1) >> 8) | 0x40);
        n[1] = (uint8_t)((len - 1) & 0xff);
        return 2;
    }
    n[0] = (uint8_t)(len - 1);
    return 1;
}

/* Walk the sparse opcodes of p[HLL_HDR..len) (tail: the byte past the end, xzero_len):
 * every VAL run calls fn (when set) with its first register, length and value; zero runs
 * only advance. Returns 0 when the runs cover exactly the 16384 registers, -1 otherwise (VAL
 * runs past the end stop the walk). */
typedef void run_fn(long first, long len, int val, void *arg);
static int sparse_walk(const uint8_t *p, size_t len, uint8_t tail, run_fn *fn, void *arg)
{
    const uint8_t *end = p + len;
    long idx = 0;

    for (p += HLL_HDR; p < end;) {
        if (OP_IS_ZERO(*p)) {
            idx += OP_ZERO_LEN(*p);
            p++;
        } else if (OP_IS_XZERO(*p)) {
            idx += xzero_len(p, end, tail);
            p += 2;
        } else {
            long run = OP_VAL_LEN(*p);
            if (idx + run > HLL_REGS)
                return -1;
            if (fn)
                fn(idx, run, OP_VAL_VALUE(*p), arg);
            idx += run;
            p++;
        }
        if (idx > HLL_REGS)
            return -1;
    }
    return idx == HLL_REGS ? 0 : -1;
}

static void run_to_dense(long first, long len, int val, void *arg)
{
    for (long i = first; i < first + len; i++)
        dense_put(arg, i, val);
}

static void run_to_max(long first, long len, int val, void *arg)
{
    uint8_t *max = arg;
    for (long i = first; i < first + len; i++)
        if (val > max[i])
            max[i] = (uint8_t)val;
}

static void run_to_histo(long first, long len, int val, void *arg)
{
    (void)first;
    ((int *)arg)[val] += (int)len;
}

/* Convert the sparse value of h into tl_dense (header kept, encoding changed) and make h
 * refer to it. Returns 0, or -1 when the sparse value is corrupt (h unchanged). */
static int hll_to_dense(struct hll *h)
{
    memcpy(tl_dense, h->p, HLL_HDR);
    tl_dense[4] = HLL_ENC_DENSE;
    memset(tl_dense + HLL_HDR, 0, HLL_DENSE_LEN - HLL_HDR);
    if (sparse_walk(h->p, h->len, h->p[h->len], run_to_dense, tl_dense + HLL_HDR))
        return -1;
    free(h->heap);
    h->heap = NULL;
    h->p = tl_dense;
    h->len = h->cap = HLL_DENSE_LEN;
    return 0;
}

/* Raise register index of the sparse h to count, in Redis's steps. Returns 1 if changed
 * (the cache is invalidated), 0 if not, -1 if the value is corrupt, HLL_OOM if h could not
 * grow (h unchanged). An update grows the value by at most 3 bytes (an XZERO split into
 * XZERO VAL XZERO) and promotes it to dense past h->max bytes, as Redis's hllSparseSet. */
static int sparse_set(struct hll *h, long index, int count)
{
    uint8_t *sp, *end, *p, *prev = NULL, *next;
    uint8_t seq[5], *n = seq;
    long first = 0, span = 0, runlen, last;
    int delta;

    if (count > HLL_VAL_MAX)
        goto promote;
    if (hll_reserve(h, h->len + 4))
        return HLL_OOM;
    sp = p = h->p + HLL_HDR;
    end = h->p + h->len;
    /* find the opcode covering index */
    while (p < end) {
        int oplen = 1;
        if (OP_IS_ZERO(*p)) {
            span = OP_ZERO_LEN(*p);
        } else if (OP_IS_VAL(*p)) {
            span = OP_VAL_LEN(*p);
        } else {
            span = xzero_len(p, end, *end);
            oplen = 2;
        }
        if (index <= first + span - 1)
            break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end)
        return -1;
    next = OP_IS_XZERO(*p) ? p + 2 : p + 1;
    if (next >= end)
        next = NULL;

    if (OP_IS_VAL(*p)) {
        if (OP_VAL_VALUE(*p) >= count)
            return 0;
        if (OP_VAL_LEN(*p) == 1) {
            *p = OP_VAL(count, 1);
            goto updated;
        }
    } else if (OP_IS_ZERO(*p) && OP_ZERO_LEN(*p) == 1) {
        *p = OP_VAL(count, 1);
        goto updated;
    }

    /* split the run into up to three opcodes: before, the register, after */
    runlen = OP_IS_ZERO(*p) ? OP_ZERO_LEN(*p) : OP_IS_XZERO(*p) ? xzero_len(p, end, *end)
                                                               : OP_VAL_LEN(*p);
    last = first + runlen - 1;
    if (!OP_IS_VAL(*p)) {
        if (index != first)
            n += put_zero_run(n, index - first);
        *n++ = OP_VAL(count, 1);
        if (index != last)
            n += put_zero_run(n, last - index);
    } else {
        int cur = OP_VAL_VALUE(*p);
        if (index != first)
            *n++ = OP_VAL(cur, (int)(index - first));
        *n++ = OP_VAL(count, 1);
        if (index != last)
            *n++ = OP_VAL(cur, (int)(last - index));
    }
    delta = (int)(n - seq) - (OP_IS_XZERO(*p) ? 2 : 1);
    if (delta > 0 && h->len + (size_t)delta > h->max)
        goto promote;
    if (delta && next)
        memmove(next + delta, next, (size_t)(end - next));
    /* Redis's order: the new length and its terminator, then the opcodes, which overwrite
     * that terminator when a truncated XZERO was split */
    h->len = (size_t)((long)h->len + delta);
    end = h->p + h->len;
    *end = 0;
    memcpy(p, seq, (size_t)(n - seq));

updated:
    /* merge equal adjacent VAL opcodes around the change (at most 5 opcodes from prev) */
    p = prev ? prev : sp;
    for (int scan = 5; p < end && scan--;) {
        if (OP_IS_XZERO(*p)) {
            p += 2;
            continue;
        }
        if (OP_IS_ZERO(*p)) {
            p++;
            continue;
        }
        if (p + 1 < end && OP_IS_VAL(p[1]) && OP_VAL_VALUE(p[0]) == OP_VAL_VALUE(p[1])) {
            int len = OP_VAL_LEN(p[0]) + OP_VAL_LEN(p[1]);
            if (len <= HLL_VAL_MAXLEN) {
                p[1] = OP_VAL(OP_VAL_VALUE(p[0]), len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                h->len--;
                *--end = 0;
                continue;
            }
        }
        p++;
    }
    h->p[HLL_CACHE_BYTE] |= 0x80;
    return 1;

promote:
    if (hll_to_dense(h))
        return -1;
    dense_set(h->p + HLL_HDR, index, count);
    return 1;
}

/* Add one element. Returns 1 if a register changed, 0 if not, -1 if the value is corrupt,
 * HLL_OOM (sparse values only) if it could not grow. */
static int hll_add(struct hll *h, const uint8_t *e, size_t n)
{
    int reg, count = hll_patlen(e, n, &reg);

    if (h->p[4] == HLL_ENC_DENSE)
        return dense_set(h->p + HLL_HDR, reg, count);
    return sparse_set(h, reg, count);
}

/* ---- cardinality (Ertl's improved estimator, as Redis 7.0) ---- */

static double hll_sigma(double x)
{
    double y = 1, z = x, zp;

    if (x == 1.)
        return INFINITY;
    do {
        x *= x;
        zp = z;
        z += x * y;
        y += y;
    } while (zp != z);
    return z;
}

static double hll_tau(double x)
{
    double y = 1.0, z = 1 - x, zp;

    if (x == 0. || x == 1.)
        return 0.;
    do {
        x = sqrt(x);
        zp = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (zp != z);
    return z / 3;
}

/* histo[v]: registers holding v (values above 51 count nowhere, as in Redis). */
static uint64_t hll_estimate(const int *histo)
{
    double m = HLL_REGS, z;

    z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; j--) {
        z += histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma(histo[0] / m);
    return (uint64_t)llround(0.721347520444481703680 * m * m / z);
}

/* Cardinality of a checked HLL value. Returns 0, or -1 when a sparse value is corrupt. */
static int hll_count(const uint8_t *v, size_t n, uint64_t *card)
{
    int histo[64] = {0};

    if (v[4] == HLL_ENC_DENSE) {
        for (long i = 0; i < HLL_REGS; i++)
            histo[dense_get(v + HLL_HDR, i)]++;
    } else {
        histo[0] = HLL_REGS;
        if (sparse_walk(v, n, 0, run_to_histo, histo))
            return -1;
        for (int i = 1; i < 64; i++)
            histo[0] -= histo[i];
    }
    *card = hll_estimate(histo);
    return 0;
}

/* Merge a checked HLL value into tl_max. Returns 0, or -1 when corrupt. */
static int hll_merge(const uint8_t *v, size_t n)
{
    if (v[4] == HLL_ENC_DENSE) {
        for (long i = 0; i < HLL_REGS; i++) {
            int r = dense_get(v + HLL_HDR, i);
            if (r > tl_max[i])
                tl_max[i] = (uint8_t)r;
        }
        return 0;
    }
    return sparse_walk(v, n, 0, run_to_max, tl_max);
}

/* ---- values in the keyspace ---- */

/* Reply the error and return -1 unless it is missing or a string holding an HLL. */
static int hll_check(struct conn *c, struct item *it)
{
    const uint8_t *v;

    if (!it)
        return 0;
    if (it->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return -1;
    }
    v = (const uint8_t *)item_value(it);
    if (item_vlen(it) < HLL_HDR || memcmp(v, "HYLL", 4) || v[4] > HLL_ENC_SPARSE ||
        (v[4] == HLL_ENC_DENSE && item_vlen(it) != HLL_DENSE_LEN)) {
        reply_error(c, ERR_HLL_TYPE);
        return -1;
    }
    return 0;
}

/* h = an empty sparse HLL (one XZERO covering every register, cache valid at 0). */
static void hll_init_empty(struct hll *h)
{
    h->p = tl_work;
    h->cap = WORK_CAP;
    h->heap = NULL;
    h->max = (size_t)__atomic_load_n(&cfg.hll_sparse_max_bytes, __ATOMIC_RELAXED);
    memset(h->p, 0, HLL_HDR);
    memcpy(h->p, "HYLL", 4);
    h->p[4] = HLL_ENC_SPARSE;
    h->len = HLL_HDR + put_zero_run(h->p + HLL_HDR, HLL_XZERO_MAXLEN);
    h->p[h->len] = 0;
}

/* h = a mutable copy of a value, in tl_work unless it needs more room (sparse_set grows it
 * further as needed). Returns 0 or -1 (OOM: replied). */
static int hll_load(struct conn *c, struct hll *h, const void *v, size_t n)
{
    h->heap = NULL;
    h->p = tl_work;
    h->cap = WORK_CAP;
    h->len = 0;
    h->max = (size_t)__atomic_load_n(&cfg.hll_sparse_max_bytes, __ATOMIC_RELAXED);
    if (hll_reserve(h, n + 4)) {
        reply_error(c, "ERR out of memory");
        return -1;
    }
    h->len = n;
    memcpy(h->p, v, n);
    h->p[n] = 0;
    return 0;
}

/* Store h as the value of k (old: its current item or NULL; TTL and memcached flags kept).
 * In place when the size is unchanged. Returns 0, or -1 (out of memory: replied). */
static int hll_store(struct conn *c, const struct skey *k, struct item *old, const struct hll *h)
{
    if (old && item_vlen(old) == h->len && item_writable(old)) {
        if ((uint8_t *)item_value(old) != h->p)
            memcpy(item_value(old), h->p, h->len);
        item_cas_invalidate(old);
        return 0;
    }
    if (!strval_put_locked(conn_store(c), k, old, (const char *)h->p, h->len)) {
        reply_error(c, "ERR out of memory");
        return -1;
    }
    return 0;
}

/* ---- commands ---- */

static void pfadd_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct hll h = {0};
    int updated = 0, r = 0;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (hll_check(c, it))
        goto out;
    if (!it) {
        hll_init_empty(&h);
        updated = 1;
    } else if (((uint8_t *)item_value(it))[4] == HLL_ENC_DENSE && item_writable(it)) {
        h.p = (uint8_t *)item_value(it); /* dense: registers change in place */
        h.len = h.cap = item_vlen(it);
    } else if (hll_load(c, &h, item_value(it), item_vlen(it))) {
        goto out;
    }
    for (int i = 2; i < c->argc; i++) {
        r = hll_add(&h, (const uint8_t *)c->argv[i].p, c->argv[i].n);
        if (r < 0)
            break;
        updated += r;
    }
    if (r == HLL_OOM) { /* h is a copy: the value is left as it was */
        reply_error(c, "ERR out of memory");
        goto out;
    }
    if (r >= 0 && updated)
        h.p[HLL_CACHE_BYTE] |= 0x80;
    /* Registers changed before a corrupt part was met stay changed, as in Redis. */
    if (updated && hll_store(c, &k, it, &h))
        goto out;
    if (updated) {
        cmd_modified(c, &k, NULL); /* hll_store invalidated the CAS of the item it wrote */
        notify_event(NOTIFY_STRING, "pfadd", &k);
    }
    if (r < 0)
        reply_error(c, ERR_HLL_BAD);
    else
        reply_int(c, updated ? 1 : 0);
out:
    free(h.heap);
    store_unlock(s, k.stripe);
}

/* The union's cardinality over keys[0..n), without writing anything. */
static void pfcount_many(struct conn *c)
{
    struct store *s = conn_store(c);
    int n = c->argc - 1, histo[64] = {0};
    struct skey *keys = keyset_resolve(c, 1, 1, n);

    if (!keys)
        return;
    memset(tl_max, 0, sizeof(tl_max));
    store_lock_keys(s, keys, n);
    for (int i = 0; i < n; i++) {
        struct item *it = store_lookup_read_locked(s, &keys[i], conn_now(c));
        if (hll_check(c, it))
            goto out;
        if (it && hll_merge((const uint8_t *)item_value(it), item_vlen(it))) {
            reply_error(c, ERR_HLL_BAD);
            goto out;
        }
    }
    for (int i = 0; i < HLL_REGS; i++)
        histo[tl_max[i]]++;
    reply_int(c, (long long)hll_estimate(histo));
out:
    store_unlock_keys(s, keys, n);
}

static void pfcount_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    uint8_t *v;
    uint64_t card = 0;

    if (c->argc > 2) {
        pfcount_many(c);
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    if (hll_check(c, it))
        goto out;
    v = (uint8_t *)item_value(it);
    if (!(v[HLL_CACHE_BYTE] & 0x80)) {
        for (int b = 7; b >= 0; b--)
            card = (card << 8) | v[8 + b];
        reply_int(c, (long long)card);
        goto out;
    }
    if (hll_count(v, item_vlen(it), &card)) {
        reply_error(c, ERR_HLL_BAD);
        goto out;
    }
    /* Cache the result in the value, as Redis does (a change WATCH sees). */
    if (item_writable(it)) {
        for (int b = 0; b < 8; b++)
            v[8 + b] = (uint8_t)(card >> (8 * b));
        item_cas_invalidate(it);
    } else {
        struct hll h;
        if (hll_load(c, &h, v, item_vlen(it)))
            goto out;
        for (int b = 0; b < 8; b++)
            h.p[8 + b] = (uint8_t)(card >> (8 * b));
        int r = hll_store(c, &k, it, &h);
        free(h.heap);
        if (r)
            goto out;
    }
    reply_int(c, (long long)card);
out:
    store_unlock(s, k.stripe);
}

static void pfmerge_command(struct conn *c)
{
    struct store *s = conn_store(c);
    int n = c->argc - 1, use_dense = 0;
    struct skey *keys = keyset_resolve(c, 1, 1, n);
    struct item *it;
    struct hll h = {0};

    if (!keys)
        return;
    memset(tl_max, 0, sizeof(tl_max));
    store_lock_keys(s, keys, n);
    /* the destination is a source too */
    for (int i = 0; i < n; i++) {
        it = store_lookup_read_locked(s, &keys[i], conn_now(c));
        if (hll_check(c, it))
            goto out;
        if (!it)
            continue;
        if (((uint8_t *)item_value(it))[4] == HLL_ENC_DENSE)
            use_dense = 1;
        if (hll_merge((const uint8_t *)item_value(it), item_vlen(it))) {
            reply_error(c, ERR_HLL_BAD);
            goto out;
        }
    }
    it = store_lookup_write_locked(s, &keys[0], conn_now(c));
    if (!it)
        hll_init_empty(&h);
    else if (hll_load(c, &h, item_value(it), item_vlen(it)))
        goto out;
    if (use_dense && h.p[4] == HLL_ENC_SPARSE && hll_to_dense(&h)) {
        reply_error(c, ERR_HLL_BAD);
        goto out;
    }
    for (long i = 0; i < HLL_REGS; i++) {
        if (!tl_max[i])
            continue;
        if (h.p[4] == HLL_ENC_DENSE) {
            dense_set(h.p + HLL_HDR, i, tl_max[i]);
        } else if (sparse_set(&h, i, tl_max[i]) == HLL_OOM) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
    }
    h.p[HLL_CACHE_BYTE] |= 0x80;
    if (!hll_store(c, &keys[0], it, &h)) {
        notify_event(NOTIFY_STRING, "pfadd", &keys[0]);
        reply_ok(c);
    }
out:
    free(h.heap);
    store_unlock_keys(s, keys, n);
}

/* PFDEBUG DECODE: the sparse opcodes as text ("z:len Z:len v:value,len" separated by
 * spaces). A debugging command: the text is built in one allocation sized beforehand. */
static void pfdebug_decode(struct conn *c, const uint8_t *v, size_t n)
{
    const uint8_t *end = v + n, *p;
    size_t cap = 1, len = 0;
    char *out;

    for (p = v + HLL_HDR; p < end; p += OP_IS_XZERO(*p) ? 2 : 1)
        cap += 16;
    if (!(out = malloc(cap))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (p = v + HLL_HDR; p < end;) {
        if (OP_IS_ZERO(*p)) {
            len += (size_t)snprintf(out + len, cap - len, "z:%d ", OP_ZERO_LEN(*p));
            p++;
        } else if (OP_IS_XZERO(*p)) {
            len += (size_t)snprintf(out + len, cap - len, "Z:%ld ", xzero_len(p, end, 0));
            p += 2;
        } else {
            len += (size_t)snprintf(out + len, cap - len, "v:%d,%d ", OP_VAL_VALUE(*p),
                                    OP_VAL_LEN(*p));
            p++;
        }
    }
    if (len)
        len--; /* the last space */
    reply_bulk(c, out, len);
    free(out);
}

/* PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. GETREG and TODENSE convert a sparse value to
 * dense, as in Redis. */
static void pfdebug_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct hll h = {0};
    uint8_t *v;
    char sub[512];
    int getreg = arg_is(c, 1, "getreg"), todense = arg_is(c, 1, "todense");

    arg_cstr(c, 1, sub, sizeof(sub));
    arg_key(c, 2, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (!it) {
        reply_error(c, "ERR The specified key does not exist");
        goto out;
    }
    if (hll_check(c, it))
        goto out;
    if (!getreg && !todense && !arg_is(c, 1, "decode") && !arg_is(c, 1, "encoding")) {
        reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%s'", sub);
        goto out;
    }
    v = (uint8_t *)item_value(it);
    if (arg_is(c, 1, "encoding")) {
        reply_status(c, v[4] == HLL_ENC_DENSE ? "dense" : "sparse");
        goto out;
    }
    if (arg_is(c, 1, "decode")) {
        if (v[4] != HLL_ENC_SPARSE)
            reply_error(c, "ERR HLL encoding is not sparse");
        else
            pfdebug_decode(c, v, item_vlen(it));
        goto out;
    }
    if (v[4] == HLL_ENC_SPARSE) {
        if (hll_load(c, &h, v, item_vlen(it)))
            goto out;
        if (hll_to_dense(&h)) {
            reply_error(c, ERR_HLL_BAD);
            goto out;
        }
        if (hll_store(c, &k, it, &h))
            goto out;
        if (todense) {
            reply_int(c, 1);
            goto out;
        }
        v = h.p;
    } else if (todense) {
        reply_int(c, 0);
        goto out;
    }
    reply_array(c, HLL_REGS);
    for (long i = 0; i < HLL_REGS; i++)
        reply_int(c, dense_get(v + HLL_HDR, i));
out:
    free(h.heap);
    store_unlock(s, k.stripe);
}

/* PFSELFTEST: check register access and that sparse and dense HLLs fed the same elements
 * agree, with an error within the expected bounds. A debugging command (allocates). */
static void pfselftest_command(struct conn *c)
{
    uint8_t *dense = calloc(1, HLL_DENSE_LEN);
    struct hll sp = {0}, dn = {0};
    uint64_t seed = 0x9e3779b97f4a7c15ULL, next = 10;
    char e[32];

    if (!dense) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int pass = 0; pass < 4; pass++) {
        uint64_t start = seed;
        for (long i = 0; i < HLL_REGS; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            dense_put(dense + HLL_HDR, i, (int)(seed >> 58));
        }
        seed = start; /* read back the same values */
        for (long i = 0; i < HLL_REGS; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            if (dense_get(dense + HLL_HDR, i) != (int)(seed >> 58)) {
                reply_errorf(c, "TESTFAILED Register error at %ld", i);
                goto out;
            }
        }
    }
    memset(dense, 0, HLL_DENSE_LEN);
    memcpy(dense, "HYLL", 4);
    dn.p = dense;
    dn.len = dn.cap = HLL_DENSE_LEN;
    dn.heap = NULL;
    hll_init_empty(&sp);
    for (uint64_t j = 1; j <= 200000; j++) {
        uint64_t a, b;
        int n = snprintf(e, sizeof(e), "selftest:%llu", (unsigned long long)j);
        int r = hll_add(&sp, (const uint8_t *)e, (size_t)n);
        if (r < 0) {
            reply_error(c, r == HLL_OOM ? "ERR out of memory" : "TESTFAILED sparse HLL corrupted");
            goto out;
        }
        hll_add(&dn, (const uint8_t *)e, (size_t)n);
        if (j != next)
            continue;
        next *= 2;
        if (hll_count(sp.p, sp.len, &a) || hll_count(dn.p, dn.len, &b) || a != b) {
            reply_error(c, "TESTFAILED sparse and dense HLLs disagree");
            goto out;
        }
        double err = fabs((double)a - (double)j) / (double)j;
        if (err > 5 * 1.04 / sqrt((double)HLL_REGS) + (j < 1000 ? 0.02 : 0)) {
            reply_errorf(c, "TESTFAILED Too big error. card:%llu error:%llu",
                         (unsigned long long)j, (unsigned long long)fabs((double)a - (double)j));
            goto out;
        }
    }
    reply_ok(c);
out:
    free(sp.heap);
    free(dense);
}

static struct cmd cmds[] = {
    {"pfadd", pfadd_command, -2, "write denyoom fast tc:signals", "@hyperloglog", "RW,insert index:1 range:0,1,0", "hyperloglog", "Adds the specified elements to the specified HyperLogLog."},
    {"pfcount", pfcount_command, -2, "readonly may_replicate", "@hyperloglog", "RW,access index:1 range:-1,1,0", "hyperloglog", "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s)."},
    {"pfmerge", pfmerge_command, -2, "write denyoom", "@hyperloglog", "RW,access,insert index:1 range:0,1,0; RO,access index:2 range:-1,1,0", "hyperloglog", "Merge N different HyperLogLogs into a single one."},
    {"pfdebug", pfdebug_command, 3, "write denyoom admin", "@hyperloglog", "RW,access index:2 range:0,1,0", "hyperloglog", "Internal commands for debugging HyperLogLog values"},
    {"pfselftest", pfselftest_command, 1, "admin", "@hyperloglog", NULL, "hyperloglog", "An internal command for testing HyperLogLog values"},
};

void cmd_hll_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
