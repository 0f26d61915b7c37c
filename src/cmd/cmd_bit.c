/* Bitmap commands on strings: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO (Redis 7.0).
 * A bitmap is a plain string value (item bytes inline); bit 0 is the most significant bit of
 * byte 0. Writes grow the value with zero bytes, in place when the allocation has room and no
 * reader holds a reference, otherwise into a new item that keeps the TTL and memcached flags.
 * Offsets are checked against proto-max-bulk-len before anything is allocated. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "core/config.h"
#include "store/strval.h"

#define ERR_BITOFF "ERR bit offset is not an integer or out of range"
#define ERR_BITVAL "ERR bit is not an integer or out of range"
#define ERR_BIT01 "ERR The bit argument must be 1 or 0."
#define ERR_BFTYPE \
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
#define ERR_BFRO "ERR BITFIELD_RO only supports the GET subcommand"
#define ERR_BFOVER "ERR Invalid OVERFLOW type specified"
#define ERR_BITOPNOT "ERR BITOP NOT must be called with a single source key."

/* Reply WRONGTYPE and return 1 when it holds something other than a string. */
static int not_string(struct conn *c, struct item *it)
{
    if (it && it->type != OBJ_STRING) {
        reply_error(c, ERR_WRONGTYPE);
        return 1;
    }
    return 0;
}

/* Parse argv[i] as a bit offset (hash: "#N" allowed, counted in units of bits). The product
 * wraps as a 64-bit multiplication, as Redis computes it. 0, or -1 after replying. */
static int arg_bitoff(struct conn *c, int i, int hash, int bits, uint64_t *off)
{
    const char *p = c->argv[i].p;
    size_t n = c->argv[i].n;
    long long v;

    if (hash && n > 0 && p[0] == '#') {
        p++;
        n--;
    } else {
        hash = 0;
    }
    if (!util_str2ll(p, n, &v))
        goto bad;
    if (hash)
        v = (long long)((unsigned long long)v * (unsigned long long)bits);
    if (v < 0 || (v >> 3) >= cfg.proto_max_bulk_len)
        goto bad;
    *off = (uint64_t)v;
    return 0;
bad:
    reply_error(c, ERR_BITOFF);
    return -1;
}

/* The string item of k made writable with at least need bytes (zero-filled growth): it itself
 * when possible, otherwise a copy stored in its place (or a new key when it is NULL). Returns
 * the item in the table, or NULL after replying an error; *grown is set when the key was
 * created or its value grew (a change to report even if no bit changes). The caller reports
 * the modification (cmd_modified, which also invalidates the CAS value). Under k's stripe
 * lock. */
static struct item *bits_for_write(struct conn *c, const struct skey *k, struct item *it,
                                   size_t need, int *grown)
{
    size_t len = it ? item_vlen(it) : 0, total = need > len ? need : len;
    struct item *n;

    if (need > UINT32_MAX) {
        /* only with proto-max-bulk-len raised past 4 GB: more than an item can hold */
        reply_error(c, ERR_BIGSTR);
        return NULL;
    }
    *grown = total != len || !it;
    if (it && item_writable(it)) {
        if (total == len)
            return it;
        if (!(it->bits & IT_REF) == !(total >= ITEM_REF_MIN) && item_vlen_same_form(it, total) &&
            (size_t)(item_value(it) - (char *)it) + total <= item_room(it)) {
            /* the allocation has room: grow in place */
            memset(item_value(it) + len, 0, total - len);
            item_set_vlen(it, total);
            return it;
        }
    }
    n = strval_create_like(k, it, NULL, total, 0);
    if (!n) {
        reply_error(c, "ERR out of memory");
        return NULL;
    }
    if (len)
        memcpy(item_value(n), item_value(it), len);
    memset(item_value(n) + len, 0, total - len);
    if (store_put_locked(conn_store(c), k, n)) {
        reply_error(c, "ERR out of memory");
        return NULL;
    }
    return n;
}

static void setbit_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    uint64_t off;
    long long on;
    unsigned char *p, mask;
    int old, grown;

    if (arg_bitoff(c, 2, 0, 1, &off))
        return;
    if (arg_ll(c, 3, &on, ERR_BITVAL))
        return;
    if (on & ~1LL) {
        reply_error(c, ERR_BITVAL);
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out;
    it = bits_for_write(c, &k, it, (size_t)(off >> 3) + 1, &grown);
    if (!it)
        goto out;
    p = (unsigned char *)item_value(it) + (off >> 3);
    mask = (unsigned char)(0x80 >> (off & 7));
    old = (*p & mask) != 0;
    if (on)
        *p |= mask;
    else
        *p &= (unsigned char)~mask;
    if (grown || old != (int)on) {
        cmd_modified(c, &k, it); /* as Redis 7.0: only a change (or a new, longer value) */
        notify_event(NOTIFY_STRING, "setbit", &k);
    }
    reply_int(c, old);
out:
    store_unlock(s, k.stripe);
}

static void getbit_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    uint64_t off;
    int bit = 0;

    if (arg_bitoff(c, 2, 0, 1, &off))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!not_string(c, it)) {
        if (it && (off >> 3) < item_vlen(it))
            bit = (((unsigned char *)item_value(it))[off >> 3] >> (7 - (off & 7))) & 1;
        reply_int(c, bit);
    }
    store_unlock(s, k.stripe);
}

/* Set bits in p[0..n), 8-byte words at a time (four in flight). */
#define POPCOUNT_BODY                                                                   \
    uint64_t cnt = 0, w0, w1, w2, w3;                                                   \
    size_t i = 0;                                                                       \
    for (; i + 32 <= n; i += 32) {                                                      \
        memcpy(&w0, p + i, 8);                                                          \
        memcpy(&w1, p + i + 8, 8);                                                      \
        memcpy(&w2, p + i + 16, 8);                                                     \
        memcpy(&w3, p + i + 24, 8);                                                     \
        cnt += (uint64_t)(__builtin_popcountll(w0) + __builtin_popcountll(w1) +         \
                          __builtin_popcountll(w2) + __builtin_popcountll(w3));         \
    }                                                                                   \
    for (; i + 8 <= n; i += 8) {                                                        \
        memcpy(&w0, p + i, 8);                                                          \
        cnt += (uint64_t)__builtin_popcountll(w0);                                      \
    }                                                                                   \
    for (; i < n; i++)                                                                  \
        cnt += (uint64_t)__builtin_popcount(p[i]);                                      \
    return cnt;

static uint64_t popcount_generic(const unsigned char *p, size_t n)
{
    POPCOUNT_BODY
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same loop compiled for the POPCNT instruction, used when the CPU has it (the build
 * targets baseline x86-64, where __builtin_popcountll is a library call). */
__attribute__((target("popcnt"))) static uint64_t popcount_hw(const unsigned char *p, size_t n)
{
    POPCOUNT_BODY
}

static uint64_t popcount(const unsigned char *p, size_t n)
{
    static int have = -1; /* racy first use is benign: every thread computes the same */

    if (__atomic_load_n(&have, __ATOMIC_RELAXED) < 0)
        __atomic_store_n(&have, __builtin_cpu_supports("popcnt") ? 1 : 0, __ATOMIC_RELAXED);
    return __atomic_load_n(&have, __ATOMIC_RELAXED) ? popcount_hw(p, n) : popcount_generic(p, n);
}
#else
#define popcount popcount_generic
#endif

/* The optional BYTE|BIT argument i: 0 byte, 1 bit, -1 after replying a syntax error. */
static int arg_unit(struct conn *c, int i)
{
    if (arg_is(c, i, "byte"))
        return 0;
    if (arg_is(c, i, "bit"))
        return 1;
    reply_error(c, ERR_SYNTAX);
    return -1;
}

/* Clamp an inclusive [*start, *end] range of a value of total units the way GETRANGE does.
 * Returns 0 when the range is empty. */
static int clamp_range(long long *start, long long *end, long long total)
{
    if (*start < 0)
        *start += total;
    if (*end < 0)
        *end += total;
    if (*start < 0)
        *start = 0;
    if (*end < 0)
        *end = 0;
    if (*end >= total)
        *end = total - 1;
    return *start <= *end;
}

static void bitcount_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    const unsigned char *p;
    long long start, end, total;
    int bitmode = 0;
    uint64_t cnt;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    if (not_string(c, it))
        goto out;
    p = (const unsigned char *)item_value(it);
    if (c->argc == 2) {
        reply_int(c, (long long)popcount(p, item_vlen(it)));
        goto out;
    }
    if (c->argc != 4 && c->argc != 5) {
        reply_error(c, ERR_SYNTAX);
        goto out;
    }
    if (arg_ll(c, 2, &start, NULL) || arg_ll(c, 3, &end, NULL))
        goto out;
    if (c->argc == 5 && (bitmode = arg_unit(c, 4)) < 0)
        goto out;
    total = (long long)item_vlen(it) * (bitmode ? 8 : 1);
    if ((start < 0 && end < 0 && start > end) || !clamp_range(&start, &end, total)) {
        reply_int(c, 0);
        goto out;
    }
    if (!bitmode) {
        cnt = popcount(p + start, (size_t)(end - start + 1));
    } else {
        long long fb = start >> 3, lb = end >> 3;
        unsigned char first = (unsigned char)(0xff >> (start & 7));
        unsigned char last = (unsigned char)(0xff << (7 - (end & 7)));
        if (fb == lb) {
            cnt = (uint64_t)__builtin_popcount(p[fb] & first & last);
        } else {
            cnt = (uint64_t)__builtin_popcount(p[fb] & first) +
                  (uint64_t)__builtin_popcount(p[lb] & last) +
                  popcount(p + fb + 1, (size_t)(lb - fb - 1));
        }
    }
    reply_int(c, (long long)cnt);
out:
    store_unlock(s, k.stripe);
}

/* The first bit equal to bit in the bit range [from, to] of p, or -1. Whole bytes and words
 * that cannot hold it are skipped at once. */
static long long find_bit(const unsigned char *p, uint64_t from, uint64_t to, int bit)
{
    uint64_t i = from, skipw = bit ? 0 : ~0ULL;
    unsigned char skipb = bit ? 0x00 : 0xff;

    while (i <= to) {
        if ((i & 7) == 0 && i + 7 <= to) {
            uint64_t b = i >> 3, end = (to + 1) >> 3; /* bytes [b, end) lie wholly inside */
            uint64_t w;
            while (b + 8 <= end) {
                memcpy(&w, p + b, 8);
                if (w != skipw)
                    break;
                b += 8;
            }
            while (b < end && p[b] == skipb)
                b++;
            if (b < end) {
                unsigned v = bit ? p[b] : (unsigned char)~p[b];
                return (long long)(b * 8 + (uint64_t)(__builtin_clz(v) - 24));
            }
            i = end << 3;
            continue;
        }
        if (((p[i >> 3] >> (7 - (i & 7))) & 1) == bit)
            return (long long)i;
        i++;
    }
    return -1;
}

static void bitpos_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long bit, start = 0, end = -1, total, pos;
    int bitmode = 0, end_given = 0;

    if (arg_ll(c, 2, &bit, NULL))
        return;
    if (bit & ~1LL) {
        reply_error(c, ERR_BIT01);
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (!it) {
        reply_int(c, bit ? -1 : 0);
        goto out;
    }
    if (not_string(c, it))
        goto out;
    if (c->argc > 6) {
        reply_error(c, ERR_SYNTAX);
        goto out;
    }
    if (c->argc >= 4 && arg_ll(c, 3, &start, NULL))
        goto out;
    if (c->argc == 6 && (bitmode = arg_unit(c, 5)) < 0)
        goto out;
    if (c->argc >= 5) {
        if (arg_ll(c, 4, &end, NULL))
            goto out;
        end_given = 1;
    }
    total = (long long)item_vlen(it) * (bitmode ? 8 : 1);
    if (!clamp_range(&start, &end, total)) {
        reply_int(c, -1);
        goto out;
    }
    if (bitmode)
        pos = find_bit((const unsigned char *)item_value(it), (uint64_t)start, (uint64_t)end,
                       (int)bit);
    else
        pos = find_bit((const unsigned char *)item_value(it), (uint64_t)start * 8,
                       (uint64_t)end * 8 + 7, (int)bit);
    /* looking for a clear bit with no end given: the string continues with zeros */
    if (pos < 0 && bit == 0 && !end_given)
        pos = (end + 1) * 8;
    reply_int(c, pos);
out:
    store_unlock(s, k.stripe);
}

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* dst[0..n) op= src[0..n), a word at a time. */
static void bitop_apply(int op, unsigned char *dst, const unsigned char *src, size_t n)
{
    size_t i = 0;
    uint64_t a, b;

    for (; i + 8 <= n; i += 8) {
        memcpy(&a, dst + i, 8);
        memcpy(&b, src + i, 8);
        a = op == BITOP_AND ? a & b : op == BITOP_OR ? a | b : a ^ b;
        memcpy(dst + i, &a, 8);
    }
    for (; i < n; i++)
        dst[i] = (unsigned char)(op == BITOP_AND ? dst[i] & src[i]
                                 : op == BITOP_OR ? dst[i] | src[i] : dst[i] ^ src[i]);
}

static void bitop_command(struct conn *c)
{
    struct store *s = conn_store(c);
    int op, n = c->argc - 2; /* destkey and the sources */
    struct skey *keys;
    struct item *it, *src;
    size_t maxlen = 0;
    unsigned char *dst;

    if (arg_is(c, 1, "and"))
        op = BITOP_AND;
    else if (arg_is(c, 1, "or"))
        op = BITOP_OR;
    else if (arg_is(c, 1, "xor"))
        op = BITOP_XOR;
    else if (arg_is(c, 1, "not"))
        op = BITOP_NOT;
    else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (op == BITOP_NOT && n != 2) {
        reply_error(c, ERR_BITOPNOT);
        return;
    }
    keys = keyset_resolve(c, 2, 1, n);
    if (!keys)
        return;
    store_lock_keys(s, keys, n);
    for (int i = 1; i < n; i++) {
        src = store_lookup_read_locked(s, &keys[i], conn_now(c));
        if (not_string(c, src))
            goto out;
        if (src && item_vlen(src) > maxlen)
            maxlen = item_vlen(src);
    }
    if (maxlen == 0) {
        if (store_delete_locked(s, &keys[0], conn_now(c))) {
            cmd_modified(c, &keys[0], NULL);
            notify_event(NOTIFY_GENERIC, "del", &keys[0]);
        }
        reply_int(c, 0);
        goto out;
    }
    /* a fresh value, persistent, replaces destkey (which may also be a source: read the
     * sources before the put) */
    it = item_create(OBJ_STRING, keys[0].p, keys[0].n, maxlen, 0);
    if (!it) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    dst = (unsigned char *)item_value(it);
    src = store_lookup_write_locked(s, &keys[1], conn_now(c));
    size_t len = src ? item_vlen(src) : 0;
    if (len)
        memcpy(dst, item_value(src), len);
    memset(dst + len, 0, maxlen - len);
    if (op == BITOP_NOT) {
        size_t i = 0;
        uint64_t w;
        for (; i + 8 <= maxlen; i += 8) {
            memcpy(&w, dst + i, 8);
            w = ~w;
            memcpy(dst + i, &w, 8);
        }
        for (; i < maxlen; i++)
            dst[i] = (unsigned char)~dst[i];
    }
    for (int i = 2; i < n && op != BITOP_NOT; i++) {
        src = store_lookup_write_locked(s, &keys[i], conn_now(c));
        len = src ? item_vlen(src) : 0;
        if (len)
            bitop_apply(op, dst, (const unsigned char *)item_value(src), len);
        if (op == BITOP_AND && len < maxlen)
            memset(dst + len, 0, maxlen - len); /* missing bytes are zeros */
    }
    if (store_put_locked(s, &keys[0], it)) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    cmd_modified(c, &keys[0], it);
    notify_event(NOTIFY_STRING, "set", &keys[0]);
    reply_int(c, (long long)maxlen);
out:
    store_unlock_keys(s, keys, n);
}

/* ---- BITFIELD ---- */

enum { BF_GET, BF_SET, BF_INCRBY, BF_OVERFLOW };
enum { OW_WRAP, OW_SAT, OW_FAIL };

struct bf_op {
    int kind;      /* BF_* */
    int sign;      /* i (1) or u (0) */
    int bits;      /* 1..64 (i), 1..63 (u) */
    int ow;        /* OW_* (BF_OVERFLOW) */
    uint64_t off;  /* bit offset */
    long long val; /* SET value or INCRBY increment */
};

/* Parse the type argument i ("i8", "u16"...). 0, or -1 after replying. */
static int bf_type(struct conn *c, int i, struct bf_op *op)
{
    const char *p = c->argv[i].p;
    long long bits;

    if (c->argv[i].n < 2 || (p[0] != 'i' && p[0] != 'u') ||
        !util_str2ll(p + 1, c->argv[i].n - 1, &bits))
        goto bad;
    op->sign = p[0] == 'i';
    if (bits < 1 || bits > (op->sign ? 64 : 63))
        goto bad;
    op->bits = (int)bits;
    return 0;
bad:
    reply_error(c, ERR_BFTYPE);
    return -1;
}

/* Parse the subcommand at *i into op and advance *i. 0, or -1 after replying. */
static int bf_parse(struct conn *c, int *i, struct bf_op *op)
{
    int left = c->argc - *i - 1;
    int j = *i;

    if (arg_is(c, j, "get") && left >= 2) {
        op->kind = BF_GET;
    } else if (arg_is(c, j, "set") && left >= 3) {
        op->kind = BF_SET;
    } else if (arg_is(c, j, "incrby") && left >= 3) {
        op->kind = BF_INCRBY;
    } else if (arg_is(c, j, "overflow") && left >= 1) {
        op->kind = BF_OVERFLOW;
        if (arg_is(c, j + 1, "wrap"))
            op->ow = OW_WRAP;
        else if (arg_is(c, j + 1, "sat"))
            op->ow = OW_SAT;
        else if (arg_is(c, j + 1, "fail"))
            op->ow = OW_FAIL;
        else {
            reply_error(c, ERR_BFOVER);
            return -1;
        }
        *i += 2;
        return 0;
    } else {
        reply_error(c, ERR_SYNTAX);
        return -1;
    }
    if (bf_type(c, j + 1, op) || arg_bitoff(c, j + 2, 1, op->bits, &op->off))
        return -1;
    if (op->kind != BF_GET && arg_ll(c, j + 3, &op->val, NULL))
        return -1;
    *i += op->kind == BF_GET ? 3 : 4;
    return 0;
}

/* The bits-wide field at bit off of p[0..len) (bytes past len read as zeros), unsigned. */
static uint64_t bf_read(const unsigned char *p, size_t len, uint64_t off, int bits)
{
    uint64_t v = 0;

    for (int b = 0; b < bits; b++, off++) {
        uint64_t byte = off >> 3;
        int bit = byte < len ? (p[byte] >> (7 - (off & 7))) & 1 : 0;
        v = (v << 1) | (uint64_t)bit;
    }
    return v;
}

/* Store the low bits of v at bit off of p (wholly inside the value). */
static void bf_write(unsigned char *p, uint64_t off, int bits, uint64_t v)
{
    for (int b = bits - 1; b >= 0; b--, off++) {
        unsigned char mask = (unsigned char)(0x80 >> (off & 7));
        if ((v >> b) & 1)
            p[off >> 3] |= mask;
        else
            p[off >> 3] &= (unsigned char)~mask;
    }
}

/* The field value as a signed/unsigned number. */
static long long bf_value(uint64_t raw, int sign, int bits)
{
    if (sign && bits < 64 && (raw >> (bits - 1)) & 1)
        raw |= ~0ULL << bits; /* sign-extend */
    return (long long)raw;
}

/* The new raw field for op applied on the old raw field, under overflow policy ow. Returns 0,
 * or -1 when it overflows under FAIL (nothing to write). */
static int bf_compute(const struct bf_op *op, uint64_t old, int ow, uint64_t *out)
{
    uint64_t mask = op->bits == 64 ? ~0ULL : (1ULL << op->bits) - 1;
    __int128 r, min, max;

    if (op->sign) {
        max = ((__int128)1 << (op->bits - 1)) - 1;
        min = -max - 1;
        r = op->kind == BF_SET ? (__int128)op->val
                               : (__int128)bf_value(old, 1, op->bits) + op->val;
    } else {
        max = (__int128)mask;
        min = 0;
        /* SET reads the value as unsigned 64-bit: negative numbers are huge */
        r = op->kind == BF_SET ? (__int128)(uint64_t)op->val : (__int128)old + op->val;
    }
    if (r > max || r < min) {
        if (ow == OW_FAIL)
            return -1;
        if (ow == OW_SAT)
            r = r > max ? max : min;
        /* Redis's signed SET check computes max - value in 64 bits: when that wraps (a value
         * at least 2^63 below max) it saturates to max, not min */
        if (ow == OW_SAT && op->sign && op->kind == BF_SET && op->bits < 64 &&
            (__int128)op->val <= max - ((__int128)1 << 63))
            r = max;
    }
    *out = (uint64_t)r & mask; /* WRAP: two's complement truncation */
    return 0;
}

static void bitfield_generic(struct conn *c, int ro)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct bf_op op;
    int nreply = 0, write = 0, ow = OW_WRAP, changes = 0, grown = 0;
    uint64_t need = 0; /* bytes the writes need */

    /* first pass: validate everything before touching the key */
    for (int i = 2; i < c->argc;) {
        if (bf_parse(c, &i, &op))
            return;
        if (op.kind == BF_OVERFLOW)
            continue;
        nreply++;
        if (op.kind != BF_GET) {
            uint64_t end = ((op.off + (uint64_t)op.bits - 1) >> 3) + 1;
            write = 1;
            if (end > need)
                need = end;
        }
    }
    /* BITFIELD_RO refuses writes once the whole command parsed */
    if (ro && write) {
        reply_error(c, ERR_BFRO);
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = write ? store_lookup_write_locked(s, &k, conn_now(c))
               : store_lookup_read_locked(s, &k, conn_now(c));
    if (not_string(c, it))
        goto out;
    if (write && !(it = bits_for_write(c, &k, it, (size_t)need, &grown)))
        goto out;
    reply_array(c, nreply);
    for (int i = 2; i < c->argc;) {
        unsigned char *p = it ? (unsigned char *)item_value(it) : NULL;
        size_t len = it ? item_vlen(it) : 0;
        uint64_t old, nv;

        bf_parse(c, &i, &op); /* validated above */
        if (op.kind == BF_OVERFLOW) {
            ow = op.ow;
            continue;
        }
        old = bf_read(p, len, op.off, op.bits);
        if (op.kind == BF_GET) {
            reply_int(c, bf_value(old, op.sign, op.bits));
        } else if (bf_compute(&op, old, ow, &nv)) {
            reply_null(c);
        } else {
            bf_write(p, op.off, op.bits, nv);
            changes += nv != old;
            reply_int(c, bf_value(op.kind == BF_SET ? old : nv, op.sign, op.bits));
        }
    }
    if (changes || grown) {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_STRING, "setbit", &k);
    }
out:
    store_unlock(s, k.stripe);
}

static void bitfield_command(struct conn *c)
{
    bitfield_generic(c, 0);
}

static void bitfield_ro_command(struct conn *c)
{
    bitfield_generic(c, 1);
}

static struct cmd cmds[] = {
    {"setbit", setbit_command, 4, "write denyoom tc:signals", "@bitmap", "RW,access,update index:1 range:0,1,0", "bitmap", "Sets or clears the bit at offset in the string value stored at key"},
    {"getbit", getbit_command, 3, "readonly fast", "@bitmap", "RO,access index:1 range:0,1,0", "bitmap", "Returns the bit value at offset in the string value stored at key"},
    {"bitcount", bitcount_command, -2, "readonly", "@bitmap", "RO,access index:1 range:0,1,0", "bitmap", "Count set bits in a string"},
    {"bitpos", bitpos_command, -3, "readonly", "@bitmap", "RO,access index:1 range:0,1,0", "bitmap", "Find first bit set or clear in a string"},
    {"bitop", bitop_command, -4, "write denyoom tc:signals", "@bitmap", "OW,update index:2 range:0,1,0; RO,access index:3 range:-1,1,0", "bitmap", "Perform bitwise operations between strings"},
    {"bitfield", bitfield_command, -2, "write denyoom tc:signals", "@bitmap", "RW,access,update,variable_flags index:1 range:0,1,0", "bitmap", "Perform arbitrary bitfield integer operations on strings", NULL, cmd_getkeys_bitfield},
    {"bitfield_ro", bitfield_ro_command, -2, "readonly fast", "@bitmap", "RO,access index:1 range:0,1,0", "bitmap", "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD"},
};

void cmd_bit_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
