/* RDB writer and loader (format: see rdb.h and Redis's rdb.h). */
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
#include "persist/lzf.h"
#include "store/item.h"
#include "store/lpack.h"
#include "store/store.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_stream.h"
#include "store/t_zset.h"

/* object types */
enum {
    T_STRING = 0,
    T_LIST = 1,
    T_SET = 2,
    T_ZSET = 3,
    T_HASH = 4,
    T_ZSET_2 = 5,
    T_MODULE = 6,
    T_MODULE_2 = 7,
    T_HASH_ZIPMAP = 9,
    T_LIST_ZIPLIST = 10,
    T_SET_INTSET = 11,
    T_ZSET_ZIPLIST = 12,
    T_HASH_ZIPLIST = 13,
    T_LIST_QUICKLIST = 14,
    T_STREAM_LISTPACKS = 15,
    T_HASH_LISTPACK = 16,
    T_ZSET_LISTPACK = 17,
    T_LIST_QUICKLIST_2 = 18,
    T_STREAM_LISTPACKS_2 = 19,
    T_SET_LISTPACK = 20,
    T_STREAM_LISTPACKS_3 = 21,
};
/* opcodes */
enum {
    OP_FUNCTION2 = 245,
    OP_FUNCTION_PRE_GA = 246,
    OP_MODULE_AUX = 247,
    OP_IDLE = 248,
    OP_FREQ = 249,
    OP_AUX = 250,
    OP_RESIZEDB = 251,
    OP_EXPIRETIME_MS = 252,
    OP_EXPIRETIME = 253,
    OP_SELECTDB = 254,
    OP_EOF = 255,
};
#define LEN_6 0
#define LEN_14 1
#define LEN_32 0x80
#define LEN_64 0x81
#define LEN_ENCVAL 3
#define ENC_INT8 0
#define ENC_INT16 1
#define ENC_INT32 2
#define ENC_LZF 3

#define MCMETA_AUX "tc-mcmeta"

void rdb_path(char *out, size_t cap, const char *dir, const char *file)
{
    if (file[0] == '/' || !dir[0])
        snprintf(out, cap, "%s", file);
    else
        snprintf(out, cap, "%s/%s", dir, file);
}

/* ======================= writing ======================= */

struct wr {
    int fd;
    unsigned char *buf;
    size_t n, cap;
    uint64_t crc;
    int err;       /* errno of the first failure */
    const struct rdb_save_opts *o;
    unsigned char *tmp; /* LZF output */
    size_t tmpcap;
};

static void w_flush(struct wr *w)
{
    size_t off = 0;

    if (w->err || !w->n)
        return;
    if (w->o->checksum)
        w->crc = crc64(w->crc, w->buf, w->n);
    while (off < w->n) {
        ssize_t r = write(w->fd, w->buf + off, w->n - off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            w->err = errno;
            return;
        }
        off += (size_t)r;
    }
    w->n = 0;
}

static void w_put(struct wr *w, const void *p, size_t n)
{
    const unsigned char *s = p;

    while (n && !w->err) {
        if (w->n == w->cap)
            w_flush(w);
        size_t k = w->cap - w->n < n ? w->cap - w->n : n;
        memcpy(w->buf + w->n, s, k);
        w->n += k;
        s += k;
        n -= k;
    }
}

static void w_byte(struct wr *w, unsigned b)
{
    unsigned char c = (unsigned char)b;
    w_put(w, &c, 1);
}

static void w_len(struct wr *w, uint64_t len)
{
    unsigned char b[9];

    if (len < (1 << 6)) {
        b[0] = (unsigned char)len;
        w_put(w, b, 1);
    } else if (len < (1 << 14)) {
        b[0] = (unsigned char)((LEN_14 << 6) | (len >> 8));
        b[1] = (unsigned char)len;
        w_put(w, b, 2);
    } else if (len <= UINT32_MAX) {
        b[0] = LEN_32;
        for (int i = 0; i < 4; i++)
            b[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        w_put(w, b, 5);
    } else {
        b[0] = LEN_64;
        for (int i = 0; i < 8; i++)
            b[1 + i] = (unsigned char)(len >> (56 - 8 * i));
        w_put(w, b, 9);
    }
}

/* Redis's integer test: the text is exactly the canonical form of a long long. */
static int canon_ll(const char *p, size_t n, long long *v)
{
    char tmp[24];

    if (n == 0 || n > 20 || !util_str2ll(p, n, v))
        return 0;
    int k = snprintf(tmp, sizeof(tmp), "%lld", *v);
    return (size_t)k == n && memcmp(tmp, p, n) == 0;
}

static void w_str(struct wr *w, const char *p, size_t n)
{
    long long v;
    unsigned char b[5];

    if (n <= 11 && canon_ll(p, n, &v)) {
        if (v >= -(1 << 7) && v <= (1 << 7) - 1) {
            b[0] = (LEN_ENCVAL << 6) | ENC_INT8;
            b[1] = (unsigned char)(v & 0xff);
            w_put(w, b, 2);
            return;
        }
        if (v >= -(1 << 15) && v <= (1 << 15) - 1) {
            b[0] = (LEN_ENCVAL << 6) | ENC_INT16;
            b[1] = (unsigned char)(v & 0xff);
            b[2] = (unsigned char)((v >> 8) & 0xff);
            w_put(w, b, 3);
            return;
        }
        if (v >= -(1LL << 31) && v <= (1LL << 31) - 1) {
            b[0] = (LEN_ENCVAL << 6) | ENC_INT32;
            for (int i = 0; i < 4; i++)
                b[1 + i] = (unsigned char)((v >> (8 * i)) & 0xff);
            w_put(w, b, 5);
            return;
        }
    }
    if (w->o->compress && n > 20) {
        /* worth it only when at least 4 bytes are saved, as Redis */
        size_t cap = n - 4;
        if (cap > w->tmpcap) {
            unsigned char *t = realloc(w->tmp, cap);
            if (t) {
                w->tmp = t;
                w->tmpcap = cap;
            }
        }
        size_t cn = cap <= w->tmpcap ? lzf_compress(p, n, w->tmp, cap) : 0;
        if (cn) {
            w_byte(w, (LEN_ENCVAL << 6) | ENC_LZF);
            w_len(w, cn);
            w_len(w, n);
            w_put(w, w->tmp, cn);
            return;
        }
    }
    w_len(w, n);
    w_put(w, p, n);
}

static void w_aux(struct wr *w, const char *k, const char *v)
{
    w_byte(w, OP_AUX);
    w_str(w, k, strlen(k));
    w_str(w, v, strlen(v));
}

/* ---- listpack building (stream nodes) ---- */

struct lpb {
    unsigned char *p;
    size_t n, cap, count;
    int oom;
};

static void lpb_reserve(struct lpb *b, size_t more)
{
    if (b->n + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    unsigned char *np = realloc(b->p, cap);
    if (!np) {
        b->oom = 1;
        return;
    }
    b->p = np;
    b->cap = cap;
}

static void lpb_init(struct lpb *b)
{
    b->n = 6; /* total bytes u32, count u16 */
    b->count = 0;
    lpb_reserve(b, 7);
}

static void lpb_backlen(struct lpb *b, size_t l)
{
    unsigned char t[5];
    size_t k;

    if (l <= 127) {
        t[0] = (unsigned char)l;
        k = 1;
    } else if (l < 16383) {
        t[0] = (unsigned char)(l >> 7);
        t[1] = (unsigned char)((l & 127) | 128);
        k = 2;
    } else if (l < 2097151) {
        t[0] = (unsigned char)(l >> 14);
        t[1] = (unsigned char)(((l >> 7) & 127) | 128);
        t[2] = (unsigned char)((l & 127) | 128);
        k = 3;
    } else if (l < 268435455) {
        t[0] = (unsigned char)(l >> 21);
        t[1] = (unsigned char)(((l >> 14) & 127) | 128);
        t[2] = (unsigned char)(((l >> 7) & 127) | 128);
        t[3] = (unsigned char)((l & 127) | 128);
        k = 4;
    } else {
        t[0] = (unsigned char)(l >> 28);
        t[1] = (unsigned char)(((l >> 21) & 127) | 128);
        t[2] = (unsigned char)(((l >> 14) & 127) | 128);
        t[3] = (unsigned char)(((l >> 7) & 127) | 128);
        t[4] = (unsigned char)((l & 127) | 128);
        k = 5;
    }
    lpb_reserve(b, k);
    if (b->oom)
        return;
    memcpy(b->p + b->n, t, k);
    b->n += k;
}

static void lpb_int(struct lpb *b, int64_t v)
{
    unsigned char e[9];
    size_t k;
    uint64_t u = (uint64_t)v;

    if (v >= 0 && v <= 127) {
        e[0] = (unsigned char)v;
        k = 1;
    } else if (v >= -4096 && v <= 4095) {
        u &= 0x1fff;
        e[0] = (unsigned char)(0xc0 | (u >> 8));
        e[1] = (unsigned char)(u & 0xff);
        k = 2;
    } else {
        int bytes = (v >= -32768 && v <= 32767) ? 2 : (v >= -8388608 && v <= 8388607) ? 3
                    : (v >= INT32_MIN && v <= INT32_MAX)                          ? 4
                                                                                  : 8;
        e[0] = bytes == 2 ? 0xf1 : bytes == 3 ? 0xf2 : bytes == 4 ? 0xf3 : 0xf4;
        for (int i = 0; i < bytes; i++)
            e[1 + i] = (unsigned char)(u >> (8 * i));
        k = 1 + (size_t)bytes;
    }
    lpb_reserve(b, k);
    if (b->oom)
        return;
    memcpy(b->p + b->n, e, k);
    b->n += k;
    lpb_backlen(b, k);
    b->count++;
}

static void lpb_str(struct lpb *b, const char *s, size_t n)
{
    long long v;
    unsigned char e[5];
    size_t k;

    if (canon_ll(s, n, &v)) {
        lpb_int(b, v);
        return;
    }
    if (n < 64) {
        e[0] = (unsigned char)(0x80 | n);
        k = 1;
    } else if (n < 4096) {
        e[0] = (unsigned char)(0xe0 | (n >> 8));
        e[1] = (unsigned char)(n & 0xff);
        k = 2;
    } else {
        e[0] = 0xf0;
        for (int i = 0; i < 4; i++)
            e[1 + i] = (unsigned char)(n >> (8 * i));
        k = 5;
    }
    lpb_reserve(b, k + n);
    if (b->oom)
        return;
    memcpy(b->p + b->n, e, k);
    memcpy(b->p + b->n + k, s, n);
    b->n += k + n;
    lpb_backlen(b, k + n);
    b->count++;
}

static void lpb_finish(struct lpb *b)
{
    lpb_reserve(b, 1);
    if (b->oom)
        return;
    b->p[b->n++] = 0xff;
    uint32_t tot = (uint32_t)b->n;
    uint16_t cnt = b->count < 65535 ? (uint16_t)b->count : 65535;
    for (int i = 0; i < 4; i++)
        b->p[i] = (unsigned char)(tot >> (8 * i));
    b->p[4] = (unsigned char)(cnt & 0xff);
    b->p[5] = (unsigned char)(cnt >> 8);
}

static void w_stream_id(struct wr *w, const struct sid *id)
{
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
    w_str(w, (const char *)b, 16);
}

#define STREAM_NODE_ENTRIES 100

/* A stream as RDB_TYPE_STREAM_LISTPACKS_2 (Redis 7.0): nodes of up to 100 entries, each a
 * listpack with a master entry that has no master fields (so no entry uses SAMEFIELDS). */
static void w_stream(struct wr *w, struct tstream *s)
{
    struct lpb b = {0};
    struct spos pos;
    struct sid zero = {0, 0}, first = {0, 0};
    uint64_t nodes = (s->len + STREAM_NODE_ENTRIES - 1) / STREAM_NODE_ENTRIES;
    int have = s->len ? tstream_seek(s, &zero, &pos) : 0;

    w_len(w, nodes);
    for (uint64_t nd = 0; nd < nodes && have; nd++) {
        struct sent e;
        struct sid master;
        uint64_t in_node = s->len - nd * STREAM_NODE_ENTRIES;
        if (in_node > STREAM_NODE_ENTRIES)
            in_node = STREAM_NODE_ENTRIES;
        tstream_get(s, &pos, &e);
        master = e.id;
        if (nd == 0)
            first = e.id;
        lpb_init(&b);
        lpb_int(&b, (int64_t)in_node); /* live entries */
        lpb_int(&b, 0);                /* deleted entries */
        lpb_int(&b, 0);                /* master fields */
        lpb_int(&b, 0);                /* master entry terminator */
        for (uint64_t i = 0; i < in_node && have; i++) {
            const char *p;
            size_t n;
            tstream_get(s, &pos, &e);
            lpb_int(&b, 0); /* flags */
            lpb_int(&b, (int64_t)(e.id.ms - master.ms));
            lpb_int(&b, (int64_t)(e.id.seq - master.seq));
            lpb_int(&b, e.nfields);
            while (sentry_next(&e, &p, &n))
                lpb_str(&b, p, n);
            lpb_int(&b, (int64_t)e.nfields * 2 + 4); /* lp-count */
            have = tstream_next(s, &pos);
        }
        lpb_finish(&b);
        if (b.oom) {
            w->err = ENOMEM;
            break;
        }
        w_stream_id(w, &master);
        w_str(w, (const char *)b.p, b.n);
    }
    free(b.p);
    w_len(w, s->len);
    w_len(w, s->last_id.ms);
    w_len(w, s->last_id.seq);
    w_len(w, first.ms);
    w_len(w, first.seq);
    w_len(w, s->max_deleted_id.ms);
    w_len(w, s->max_deleted_id.seq);
    w_len(w, s->entries_added);
    w_len(w, 0); /* consumer groups */
}

static void w_double(struct wr *w, double d)
{
    unsigned char b[8];
    memcpy(b, &d, 8); /* little-endian hosts only, as the rest of twincache */
    w_put(w, b, 8);
}

static void w_value(struct wr *w, struct item *it)
{
    void *ptr = it->type == OBJ_STRING ? NULL : item_ptr(it);

    switch (it->type) {
    case OBJ_STRING:
        w_str(w, item_value(it), it->vlen);
        break;
    case OBJ_LIST: {
        struct tlist *l = ptr;
        w_len(w, l->len);
        for (struct qnode *q = l->head; q; q = q->next) {
            for (uint32_t off = 0; off < lp_end(q->lp); off = lp_next(q->lp, off)) {
                size_t n;
                const char *p = lp_get(q->lp, off, &n);
                w_str(w, p, n);
            }
        }
        break;
    }
    case OBJ_SET: {
        struct tset_iter si;
        const char *p;
        size_t n;
        w_len(w, tset_len(ptr));
        tset_iter_init(&si, ptr);
        while (tset_next(&si, &p, &n))
            w_str(w, p, n);
        break;
    }
    case OBJ_HASH: {
        struct thash_iter hi;
        const char *f, *v;
        size_t fn, vn;
        w_len(w, thash_len(ptr));
        thash_iter_init(&hi, ptr);
        while (thash_next(&hi, &f, &fn, &v, &vn)) {
            w_str(w, f, fn);
            w_str(w, v, vn);
        }
        break;
    }
    case OBJ_ZSET: {
        struct tzset *z = ptr;
        unsigned long len = tzset_len(z);
        struct zit zi;
        w_len(w, len);
        if (len) {
            zit_seek(&zi, z, 0);
            for (unsigned long i = 0; i < len; i++) {
                size_t n;
                double sc;
                const char *p = zit_get(&zi, &n, &sc);
                w_str(w, p, n);
                w_double(w, sc);
                zit_next(&zi);
            }
        }
        break;
    }
    case OBJ_STREAM:
        w_stream(w, ptr);
        break;
    }
}

static int rdb_type_of(int t)
{
    switch (t) {
    case OBJ_STRING:
        return T_STRING;
    case OBJ_LIST:
        return T_LIST;
    case OBJ_SET:
        return T_SET;
    case OBJ_HASH:
        return T_HASH;
    case OBJ_ZSET:
        return T_ZSET_2;
    case OBJ_STREAM:
        return T_STREAM_LISTPACKS_2;
    }
    return -1;
}

static void w_key(struct wr *w, struct item *it, int64_t exp)
{
    if (it->bits & (IT_FLAGS | IT_CAS)) {
        uint32_t fl = item_mcflags(it);
        uint64_t cas = item_cas_field(it);
        if (fl || cas) {
            char v[48];
            snprintf(v, sizeof(v), "%" PRIu32 " %" PRIu64, fl, cas);
            w_aux(w, MCMETA_AUX, v);
        }
    }
    if (exp) {
        unsigned char b[9];
        b[0] = OP_EXPIRETIME_MS;
        for (int i = 0; i < 8; i++)
            b[1 + i] = (unsigned char)((uint64_t)exp >> (8 * i));
        w_put(w, b, 9);
    }
    w_byte(w, (unsigned)rdb_type_of(it->type));
    w_str(w, item_key(it), item_klen(it));
    w_value(w, it);
}

int rdb_save(struct store *s, const char *path, const struct rdb_save_opts *o, int64_t now)
{
    char tmp[1200], dir[1100], num[32];
    const char *slash = strrchr(path, '/');
    struct wr w = {.o = o, .cap = 1 << 16};
    int saved_errno;

    if (slash)
        snprintf(dir, sizeof(dir), "%.*s/", (int)(slash - path), path);
    else
        dir[0] = '\0';
    snprintf(tmp, sizeof(tmp), "%stemp-%d.rdb", dir, (int)getpid());
    w.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w.fd < 0) {
        saved_errno = errno;
        log_warn("Failed opening the temp RDB file %s (in server root dir %s) for saving: %s",
                 tmp, dir[0] ? dir : ".", strerror(saved_errno));
        errno = saved_errno;
        return -1;
    }
    w.buf = malloc(w.cap);
    if (!w.buf) {
        w.err = ENOMEM;
        goto out_close;
    }
    w_put(&w, "REDIS0010", 9);
    w_aux(&w, "redis-ver", "7.0.15");
    w_aux(&w, "redis-bits", sizeof(void *) == 8 ? "64" : "32");
    snprintf(num, sizeof(num), "%lld", (long long)(now / 1000));
    w_aux(&w, "ctime", num);
    snprintf(num, sizeof(num), "%lld", (long long)store_mem_used());
    w_aux(&w, "used-mem", num);
    w_aux(&w, "aof-base", "0");
    for (int db = 0; db < s->ndb && !w.err; db++) {
        uint64_t keys = 0, vol = 0;
        for (uint32_t i = 0; i < s->nstripes; i++) {
            keys += s->stripes[i].db[db].count;
            vol += s->stripes[i].db[db].nvolatile;
        }
        if (!keys)
            continue;
        w_byte(&w, OP_SELECTDB);
        w_len(&w, (uint64_t)db);
        w_byte(&w, OP_RESIZEDB);
        w_len(&w, keys);
        w_len(&w, vol);
        for (uint32_t i = 0; i < s->nstripes && !w.err; i++) {
            struct ht *t = &s->stripes[i].db[db];
            for (uint32_t j = 0; j < t->size && t->slots && !w.err; j++) {
                if (!t->slots[j])
                    continue;
                struct item *it = ht_slot_item(t->slots[j]);
                int64_t exp = item_expire(it);
                if (exp && exp <= now)
                    continue;
                w_key(&w, it, exp);
            }
        }
    }
    w_byte(&w, OP_EOF);
    w_flush(&w);
    {
        unsigned char b[8];
        uint64_t crc = o->checksum ? w.crc : 0;
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(crc >> (8 * i));
        if (!w.err) {
            struct rdb_save_opts nocrc = *o;
            nocrc.checksum = 0; /* the trailer is not part of the sum */
            w.o = &nocrc;
            w_put(&w, b, 8);
            w_flush(&w);
            w.o = o;
        }
    }
    if (!w.err && fsync(w.fd) < 0)
        w.err = errno;
out_close:
    if (close(w.fd) < 0 && !w.err)
        w.err = errno;
    free(w.buf);
    free(w.tmp);
    if (!w.err && rename(tmp, path) < 0)
        w.err = errno;
    if (w.err) {
        log_warn("Write error saving DB on disk: %s", strerror(w.err));
        unlink(tmp);
        errno = w.err;
        return -1;
    }
    return 0;
}

/* ======================= loading ======================= */

struct rd {
    const unsigned char *p, *end;
    const char *why; /* set on the first error */
};

struct rstr {
    const char *p;
    size_t n;
    char *own; /* malloc'd when decompressed */
    char num[24];
};

static void rstr_free(struct rstr *s)
{
    free(s->own);
    s->own = NULL;
}

static int r_fail(struct rd *r, const char *why)
{
    if (!r->why)
        r->why = why;
    return -1;
}

static int r_need(struct rd *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n)
        return r_fail(r, "Unexpected EOF reading RDB file");
    return 0;
}

static int r_byte(struct rd *r, unsigned *b)
{
    if (r_need(r, 1))
        return -1;
    *b = *r->p++;
    return 0;
}

/* A length, or (enc set) a special string encoding in *len. */
static int r_len_enc(struct rd *r, uint64_t *len, int *enc)
{
    unsigned b;

    *enc = 0;
    if (r_byte(r, &b))
        return -1;
    switch (b >> 6) {
    case LEN_6:
        *len = b & 0x3f;
        return 0;
    case LEN_14:
        if (r_need(r, 1))
            return -1;
        *len = ((uint64_t)(b & 0x3f) << 8) | *r->p++;
        return 0;
    case LEN_ENCVAL:
        *enc = 1;
        *len = b & 0x3f;
        return 0;
    }
    if (b == LEN_32 || b == LEN_64) {
        int k = b == LEN_32 ? 4 : 8;
        uint64_t v = 0;
        if (r_need(r, (size_t)k))
            return -1;
        for (int i = 0; i < k; i++)
            v = (v << 8) | *r->p++;
        *len = v;
        return 0;
    }
    return r_fail(r, "Unknown length encoding in RDB file");
}

static int r_len(struct rd *r, uint64_t *len)
{
    int enc;
    if (r_len_enc(r, len, &enc))
        return -1;
    if (enc)
        return r_fail(r, "Unexpected encoded length in RDB file");
    return 0;
}

static int r_str(struct rd *r, struct rstr *s)
{
    uint64_t len;
    int enc;

    s->own = NULL;
    if (r_len_enc(r, &len, &enc))
        return -1;
    if (!enc) {
        if (r_need(r, len))
            return -1;
        s->p = (const char *)r->p;
        s->n = (size_t)len;
        r->p += len;
        return 0;
    }
    if (len <= ENC_INT32) {
        int k = 1 << len;
        int64_t v = 0;
        if (r_need(r, (size_t)k))
            return -1;
        if (k == 1)
            v = (int8_t)r->p[0];
        else if (k == 2)
            v = (int16_t)(r->p[0] | r->p[1] << 8);
        else
            v = (int32_t)((uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                          (uint32_t)r->p[3] << 24);
        r->p += k;
        s->n = (size_t)snprintf(s->num, sizeof(s->num), "%lld", (long long)v);
        s->p = s->num;
        return 0;
    }
    if (len == ENC_LZF) {
        uint64_t clen, ulen;
        if (r_len(r, &clen) || r_len(r, &ulen) || r_need(r, clen))
            return -1;
        if (ulen > (1ULL << 32) || ulen == 0)
            return r_fail(r, "Invalid LZF compressed string");
        s->own = malloc(ulen);
        if (!s->own)
            return r_fail(r, "Out of memory loading RDB");
        if (lzf_decompress(r->p, clen, s->own, ulen) != ulen) {
            rstr_free(s);
            return r_fail(r, "Invalid LZF compressed string");
        }
        r->p += clen;
        s->p = s->own;
        s->n = (size_t)ulen;
        return 0;
    }
    return r_fail(r, "Unknown RDB string encoding type");
}

static int r_skip_str(struct rd *r)
{
    struct rstr s;
    if (r_str(r, &s))
        return -1;
    rstr_free(&s);
    return 0;
}

static int r_u64le(struct rd *r, uint64_t *v)
{
    if (r_need(r, 8))
        return -1;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = (*v << 8) | r->p[i];
    r->p += 8;
    return 0;
}

static int r_double_bin(struct rd *r, double *d)
{
    uint64_t u;
    if (r_u64le(r, &u))
        return -1;
    memcpy(d, &u, 8);
    return 0;
}

/* The old text double of RDB_TYPE_ZSET. */
static int r_double_text(struct rd *r, double *d)
{
    unsigned n;
    char buf[256];

    if (r_byte(r, &n))
        return -1;
    if (n == 253) {
        *d = NAN;
        return 0;
    }
    if (n == 254) {
        *d = INFINITY;
        return 0;
    }
    if (n == 255) {
        *d = -INFINITY;
        return 0;
    }
    if (r_need(r, n))
        return -1;
    memcpy(buf, r->p, n);
    buf[n] = '\0';
    r->p += n;
    *d = strtod(buf, NULL);
    return 0;
}

/* ---- listpack and intset blobs ---- */

struct lpr {
    const unsigned char *p, *end;
    char num[24];
};

static int lpr_init(struct lpr *l, const char *blob, size_t n)
{
    if (n < 7)
        return -1;
    const unsigned char *b = (const unsigned char *)blob;
    uint32_t tot = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                   (uint32_t)b[3] << 24;
    if (tot != n || b[n - 1] != 0xff)
        return -1;
    l->p = b + 6;
    l->end = b + n - 1;
    return 0;
}

static size_t backlen_size(size_t l)
{
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/* The next element as bytes (integers formatted into l->num). 1, 0 at the end, -1 corrupt. */
static int lpr_next(struct lpr *l, const char **p, size_t *n, int64_t *iv, int *isint)
{
    const unsigned char *e = l->p;
    size_t hdr, len = 0;
    int64_t v = 0;
    int in = 1;

    if (e >= l->end)
        return 0;
    unsigned b = e[0];
    size_t avail = (size_t)(l->end - e);
    if (b < 0x80) {
        v = b;
        hdr = 1;
    } else if ((b & 0xc0) == 0x80) {
        in = 0;
        len = b & 0x3f;
        hdr = 1;
    } else if ((b & 0xe0) == 0xc0) {
        if (avail < 2)
            return -1;
        uint64_t u = ((uint64_t)(b & 0x1f) << 8) | e[1];
        v = u >= (1 << 12) ? (int64_t)u - (1 << 13) : (int64_t)u;
        hdr = 2;
    } else if ((b & 0xf0) == 0xe0) {
        if (avail < 2)
            return -1;
        in = 0;
        len = ((size_t)(b & 0x0f) << 8) | e[1];
        hdr = 2;
    } else if (b == 0xf0) {
        if (avail < 5)
            return -1;
        in = 0;
        len = (size_t)e[1] | (size_t)e[2] << 8 | (size_t)e[3] << 16 | (size_t)e[4] << 24;
        hdr = 5;
    } else if (b >= 0xf1 && b <= 0xf4) {
        int k = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
        uint64_t u = 0;
        if (avail < (size_t)k + 1)
            return -1;
        for (int i = k - 1; i >= 0; i--)
            u = (u << 8) | e[1 + i];
        if (k < 8 && (u >> (8 * k - 1)) & 1)
            u |= ~0ULL << (8 * k);
        v = (int64_t)u;
        hdr = 1 + (size_t)k;
    } else {
        return -1;
    }
    size_t body = hdr + (in ? 0 : len);
    size_t tot = body + backlen_size(body);
    if (avail < tot)
        return -1;
    if (in) {
        *n = (size_t)snprintf(l->num, sizeof(l->num), "%lld", (long long)v);
        *p = l->num;
    } else {
        *p = (const char *)e + hdr;
        *n = len;
    }
    if (iv)
        *iv = v;
    if (isint)
        *isint = in;
    l->p = e + tot;
    return 1;
}

/* ---- building items ---- */

struct mcmeta {
    int set;
    uint32_t flags;
    uint64_t cas;
};

static int put_key(struct store *s, int db, const struct rstr *key, int type, const char *v,
                   size_t vn, void *ptr, int64_t exp, const struct mcmeta *mc)
{
    uint8_t bits = 0;
    struct skey k;
    struct item *it;

    if (exp)
        bits |= IT_TTL;
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
    if (mc->set && mc->cas > s->stripes[k.stripe].cas)
        s->stripes[k.stripe].cas = mc->cas;
    int rc = store_put_locked(s, &k, it);
    store_unlock(s, k.stripe);
    return rc;
}

static void free_value(int type, void *ptr)
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

static int set_add(struct tset **sp, const char *p, size_t n)
{
    if (!*sp && !(*sp = tset_create(p, n)))
        return -1;
    return tset_add(*sp, p, n) < 0 ? -1 : 0;
}

static int zset_add(struct tzset *z, const char *p, size_t n, double sc)
{
    int out;
    double ns;
    if (isnan(sc))
        sc = 0;
    return tzset_add(z, sc, p, n, 0, &out, &ns) < 0 ? -1 : 0;
}

static int r_raw_id(struct rd *r, struct sid *id)
{
    if (r_need(r, 16))
        return -1;
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = (id->ms << 8) | r->p[i];
        id->seq = (id->seq << 8) | r->p[8 + i];
    }
    r->p += 16;
    return 0;
}

static int lpr_int(struct lpr *l, int64_t *v)
{
    const char *p;
    size_t n;
    int isint;
    long long x;

    if (lpr_next(l, &p, &n, v, &isint) != 1)
        return -1;
    if (!isint) {
        if (!util_str2ll(p, n, &x))
            return -1;
        *v = x;
    }
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
        lpr_int(&l, &nmaster) || nmaster < 0)
        return -1;
    mf = l;
    for (int64_t i = 0; i < nmaster; i++)
        if (lpr_next(&l, &p, &n, NULL, NULL) != 1)
            return -1;
    if (lpr_int(&l, &v)) /* master terminator */
        return -1;
    for (int64_t i = 0; i < count + deleted; i++) {
        int64_t flags, dms, dseq, nf;
        struct sid id;
        size_t fbytes = 0;
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
            if (lpr_next(&e, &p, &n, NULL, NULL) != 1)
                return -1;
            fbytes += sfield_size(n);
        }
        if (!(flags & 1)) {
            if (s->len && sid_cmp(&id, &s->last_id) <= 0)
                return -1;
            unsigned char *w = tstream_append(s, &id, (uint32_t)nf, fbytes);
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
        }
        l = e;
        if (lpr_int(&l, &v)) /* lp-count */
            return -1;
    }
    return 0;
}

static int r_stream(struct rd *r, unsigned t, void **ptr)
{
    struct tstream *s = tstream_create();
    uint64_t nodes, len, a, b, ngroups;
    struct sid last, maxdel = {0, 0};
    uint64_t added = 0;

    if (!s)
        return r_fail(r, "Out of memory loading RDB");
    *ptr = s;
    if (r_len(r, &nodes))
        return -1;
    for (uint64_t i = 0; i < nodes; i++) {
        struct rstr k, blob;
        struct sid master = {0, 0};
        if (r_str(r, &k))
            return -1;
        if (k.n != 16) {
            rstr_free(&k);
            return r_fail(r, "Stream node key entry is not the size of a stream ID");
        }
        for (int j = 0; j < 8; j++) {
            master.ms = (master.ms << 8) | (unsigned char)k.p[j];
            master.seq = (master.seq << 8) | (unsigned char)k.p[8 + j];
        }
        rstr_free(&k);
        if (r_str(r, &blob))
            return -1;
        int rc = r_stream_node(s, &master, blob.p, blob.n);
        rstr_free(&blob);
        if (rc)
            return r_fail(r, "Corrupt stream listpack in RDB");
    }
    if (r_len(r, &len) || r_len(r, &last.ms) || r_len(r, &last.seq))
        return -1;
    if (t >= T_STREAM_LISTPACKS_2) {
        if (r_len(r, &a) || r_len(r, &b) || r_len(r, &maxdel.ms) || r_len(r, &maxdel.seq) ||
            r_len(r, &added))
            return -1;
    } else {
        added = len;
    }
    if (r_len(r, &ngroups))
        return -1;
    if (ngroups)
        log_warn("RDB: dropping %llu consumer group(s) of a stream (not supported)",
                 (unsigned long long)ngroups);
    for (uint64_t g = 0; g < ngroups; g++) {
        uint64_t npel, ncons, x;
        struct sid id;
        if (r_skip_str(r) || r_len(r, &x) || r_len(r, &x))
            return -1;
        if (t >= T_STREAM_LISTPACKS_2 && r_len(r, &x))
            return -1;
        if (r_len(r, &npel))
            return -1;
        for (uint64_t j = 0; j < npel; j++)
            if (r_raw_id(r, &id) || r_u64le(r, &x) || r_len(r, &x))
                return -1;
        if (r_len(r, &ncons))
            return -1;
        for (uint64_t j = 0; j < ncons; j++) {
            if (r_skip_str(r) || r_u64le(r, &x))
                return -1;
            if (t >= T_STREAM_LISTPACKS_3 && r_u64le(r, &x))
                return -1;
            if (r_len(r, &npel))
                return -1;
            for (uint64_t k = 0; k < npel; k++)
                if (r_raw_id(r, &id))
                    return -1;
        }
    }
    if (s->len != len)
        return r_fail(r, "Stream length does not match its entries");
    s->last_id = last;
    s->max_deleted_id = maxdel;
    s->entries_added = added;
    return 0;
}

/* Read one value of rdb type t; *otype and *ptr (collections) or the string. */
static int r_value(struct rd *r, unsigned t, int *otype, void **ptr, struct rstr *str)
{
    uint64_t len;
    struct rstr a, b;
    struct lpr lp;
    const char *p, *q;
    size_t n, m;

    *ptr = NULL;
    switch (t) {
    case T_STRING:
        *otype = OBJ_STRING;
        return r_str(r, str);
    case T_LIST: {
        struct tlist *l = tlist_create();
        *otype = OBJ_LIST;
        if (!l || r_len(r, &len))
            goto fail_list;
        *ptr = l;
        for (uint64_t i = 0; i < len; i++) {
            if (r_str(r, &a))
                return -1;
            int rc = tlist_push(l, 1, a.p, a.n);
            rstr_free(&a);
            if (rc)
                return r_fail(r, "Out of memory loading RDB");
        }
        return 0;
    fail_list:
        if (l)
            tlist_destroy(l);
        return r_fail(r, "Out of memory loading RDB");
    }
    case T_LIST_QUICKLIST_2: {
        struct tlist *l = tlist_create();
        *otype = OBJ_LIST;
        if (!l)
            return r_fail(r, "Out of memory loading RDB");
        *ptr = l;
        if (r_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            uint64_t container;
            if (r_len(r, &container) || r_str(r, &a))
                return -1;
            if (container == 1) { /* PLAIN: one element */
                int rc = tlist_push(l, 1, a.p, a.n);
                rstr_free(&a);
                if (rc)
                    return r_fail(r, "Out of memory loading RDB");
                continue;
            }
            if (lpr_init(&lp, a.p, a.n)) {
                rstr_free(&a);
                return r_fail(r, "Corrupt listpack in RDB");
            }
            int k;
            while ((k = lpr_next(&lp, &p, &n, NULL, NULL)) == 1) {
                if (tlist_push(l, 1, p, n)) {
                    rstr_free(&a);
                    return r_fail(r, "Out of memory loading RDB");
                }
            }
            rstr_free(&a);
            if (k < 0)
                return r_fail(r, "Corrupt listpack in RDB");
        }
        return 0;
    }
    case T_SET: {
        struct tset *s = NULL;
        *otype = OBJ_SET;
        if (r_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            if (r_str(r, &a))
                return -1;
            int rc = set_add(&s, a.p, a.n);
            *ptr = s;
            rstr_free(&a);
            if (rc)
                return r_fail(r, "Out of memory loading RDB");
        }
        *ptr = s;
        return 0;
    }
    case T_SET_INTSET: {
        struct tset *s = NULL;
        *otype = OBJ_SET;
        if (r_str(r, &a))
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
            return r_fail(r, "Corrupt intset in RDB");
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
            int rc = set_add(&s, num, (size_t)k);
            *ptr = s;
            if (rc) {
                rstr_free(&a);
                return r_fail(r, "Out of memory loading RDB");
            }
        }
        rstr_free(&a);
        return 0;
    }
    case T_SET_LISTPACK:
    case T_HASH_LISTPACK:
    case T_ZSET_LISTPACK: {
        void *o = NULL;
        *otype = t == T_SET_LISTPACK ? OBJ_SET : t == T_HASH_LISTPACK ? OBJ_HASH : OBJ_ZSET;
        if (r_str(r, &a))
            return -1;
        if (lpr_init(&lp, a.p, a.n)) {
            rstr_free(&a);
            return r_fail(r, "Corrupt listpack in RDB");
        }
        if (t == T_HASH_LISTPACK)
            o = thash_create();
        else if (t == T_ZSET_LISTPACK)
            o = tzset_create(0, 0);
        if (t != T_SET_LISTPACK && !o) {
            rstr_free(&a);
            return r_fail(r, "Out of memory loading RDB");
        }
        *ptr = o;
        int k, rc = 0;
        while (rc == 0 && (k = lpr_next(&lp, &p, &n, NULL, NULL)) == 1) {
            if (t == T_SET_LISTPACK) {
                struct tset *s = o;
                rc = set_add(&s, p, n);
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
                return r_fail(r, "Corrupt listpack in RDB");
            }
            if (t == T_HASH_LISTPACK) {
                rc = thash_set(o, kp, n, q, m) < 0 ? -1 : 0;
            } else {
                char num[64];
                size_t c = m < sizeof(num) - 1 ? m : sizeof(num) - 1;
                memcpy(num, q, c);
                num[c] = '\0';
                rc = zset_add(o, kp, n, strtod(num, NULL));
            }
        }
        rstr_free(&a);
        if (rc)
            return r_fail(r, "Out of memory loading RDB");
        if (k < 0)
            return r_fail(r, "Corrupt listpack in RDB");
        return 0;
    }
    case T_HASH: {
        struct thash *h = thash_create();
        *otype = OBJ_HASH;
        if (!h)
            return r_fail(r, "Out of memory loading RDB");
        *ptr = h;
        if (r_len(r, &len))
            return -1;
        for (uint64_t i = 0; i < len; i++) {
            if (r_str(r, &a))
                return -1;
            if (r_str(r, &b)) {
                rstr_free(&a);
                return -1;
            }
            thash_convert_for(h, a.n > b.n ? a.n : b.n);
            int rc = thash_set(h, a.p, a.n, b.p, b.n);
            rstr_free(&a);
            rstr_free(&b);
            if (rc < 0)
                return r_fail(r, "Out of memory loading RDB");
        }
        return 0;
    }
    case T_ZSET:
    case T_ZSET_2: {
        struct tzset *z;
        *otype = OBJ_ZSET;
        if (r_len(r, &len))
            return -1;
        z = tzset_create(len, 0);
        if (!z)
            return r_fail(r, "Out of memory loading RDB");
        *ptr = z;
        for (uint64_t i = 0; i < len; i++) {
            double sc;
            if (r_str(r, &a))
                return -1;
            if (t == T_ZSET_2 ? r_double_bin(r, &sc) : r_double_text(r, &sc)) {
                rstr_free(&a);
                return -1;
            }
            int rc = zset_add(z, a.p, a.n, sc);
            rstr_free(&a);
            if (rc)
                return r_fail(r, "Out of memory loading RDB");
        }
        return 0;
    }
    case T_STREAM_LISTPACKS:
    case T_STREAM_LISTPACKS_2:
    case T_STREAM_LISTPACKS_3:
        *otype = OBJ_STREAM;
        return r_stream(r, t, ptr);
    }
    return r_fail(r, "Unsupported RDB object type (ziplist encodings of Redis < 7 or modules)");
}

int rdb_load(struct store *s, const char *path, int64_t now, struct rdb_load_info *info,
             char *err, size_t errcap)
{
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
    if (info->version >= 5 && st.st_size >= 9 + 9) {
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

        if (r_byte(&r, &t))
            break;
        if (t == OP_EOF) {
            rc = 0;
            break;
        }
        if (t == OP_EXPIRETIME_MS) {
            uint64_t v;
            if (r_u64le(&r, &v))
                break;
            exp = (int64_t)v;
            continue;
        }
        if (t == OP_EXPIRETIME) {
            if (r_need(&r, 4))
                break;
            exp = (int64_t)((uint32_t)r.p[0] | (uint32_t)r.p[1] << 8 | (uint32_t)r.p[2] << 16 |
                            (uint32_t)r.p[3] << 24) *
                  1000;
            r.p += 4;
            continue;
        }
        if (t == OP_FREQ) {
            unsigned b;
            if (r_byte(&r, &b))
                break;
            continue;
        }
        if (t == OP_IDLE) {
            uint64_t v;
            if (r_len(&r, &v))
                break;
            continue;
        }
        if (t == OP_SELECTDB) {
            uint64_t v;
            if (r_len(&r, &v))
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
            if (r_len(&r, &a) || r_len(&r, &b))
                break;
            continue;
        }
        if (t == OP_AUX) {
            struct rstr k, v;
            if (r_str(&r, &k))
                break;
            if (r_str(&r, &v)) {
                rstr_free(&k);
                break;
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
            log_warn("RDB: skipping a function library (functions are not supported)");
            if (r_skip_str(&r))
                break;
            continue;
        }
        if (t == OP_MODULE_AUX || t == OP_FUNCTION_PRE_GA || t == T_MODULE || t == T_MODULE_2) {
            r_fail(&r, "RDB file holds module data or pre-GA functions (not supported)");
            break;
        }
        /* a key */
        if (r_str(&r, &key))
            break;
        if (r_value(&r, t, &otype, &ptr, &str)) {
            free_value(otype, ptr);
            rstr_free(&key);
            break;
        }
        if (exp && exp <= now) {
            info->expired++;
            free_value(otype, ptr);
        } else if (otype != OBJ_STRING && !ptr) {
            free_value(otype, ptr); /* an empty collection: nothing to keep */
        } else if (put_key(s, db, &key, otype, str.p, str.n, ptr, exp, &mc)) {
            rstr_free(&key);
            rstr_free(&str);
            r_fail(&r, "Out of memory loading RDB");
            break;
        } else if (++info->keys % 1000000 == 0) {
            log_notice("Loading RDB: %llu keys, %.0f%% of the file",
                       (unsigned long long)info->keys,
                       100.0 * (double)(r.p - (const unsigned char *)map) / (double)st.st_size);
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
