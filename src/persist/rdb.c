/* RDB writer (format: see rdb.h and Redis's rdb.h). */
#define _GNU_SOURCE
#include "persist/rdb.h"

#include <errno.h>
#include <poll.h>
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

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/crc64.h"
#include "persist/lzf.h"
#include "persist/rdb_int.h"
#include "store/item.h"
#include "store/lpack.h"
#include "store/store.h"
#include "store/t_stream_cg.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_stream.h"
#include "store/t_zset.h"

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
    int *fds;      /* rdb_save_stream: sockets written alike (-1: dropped), or NULL */
    int nfds;
    int timeout_ms; /* ... and how long one of them may block a write */
    unsigned char *buf;
    size_t n, cap;
    uint64_t crc;
    int err;       /* errno of the first failure */
    const struct rdb_save_opts *o;
    long long written, synced; /* a file: bytes written, and handed to the disk (autosync) */
    unsigned char *tmp; /* LZF output */
    size_t tmpcap;
};

int sock_write_all(int fd, const void *p, size_t n, int timeout_ms)
{
    const char *b = p;

    while (n) {
        ssize_t r = write(fd, b, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int k = poll(&pf, 1, timeout_ms);
            if (k == 0)
                return -1; /* stuck */
            if (k < 0 && errno != EINTR)
                return -1;
            continue;
        }
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

static void w_flush(struct wr *w)
{
    size_t off = 0;

    if (w->err || !w->n)
        return;
    if (w->o->checksum)
        w->crc = crc64(w->crc, w->buf, w->n);
    if (w->fds) {
        int live = 0;
        for (int i = 0; i < w->nfds; i++) {
            if (w->fds[i] >= 0 && sock_write_all(w->fds[i], w->buf, w->n, w->timeout_ms))
                w->fds[i] = -1; /* that replica is gone or stuck: the others go on */
            live += w->fds[i] >= 0;
        }
        if (!live)
            w->err = EPIPE;
        w->n = 0;
        return;
    }
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
    w->written += (long long)w->n;
    w->n = 0;
    if (w->o->autosync && rdb_autosync(w->fd, w->written, &w->synced, w->o->autosync))
        w->err = errno;
}

int rdb_autosync(int fd, long long written, long long *synced, long long step)
{
    while (written - *synced >= step) {
        long long at = *synced;
        if (sync_file_range(fd, at, step, SYNC_FILE_RANGE_WRITE) < 0)
            return -1;
        /* the step before this one must be on disk now: at most two in flight */
        if (at >= step &&
            sync_file_range(fd, at - step, step, SYNC_FILE_RANGE_WAIT_BEFORE |
                            SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) < 0)
            return -1;
        *synced = at + step;
    }
    return 0;
}

static void w_put(struct wr *w, const void *p, size_t n)
{
    const unsigned char *s = p;

    while (n && !w->err) {
        if (w->n == w->cap && w->fd < 0) { /* in memory (DUMP): grow */
            size_t nc = w->cap * 2 > w->n + n ? w->cap * 2 : w->n + n;
            unsigned char *nb = realloc(w->buf, nc);
            if (!nb) {
                w->err = ENOMEM;
                return;
            }
            w->buf = nb;
            w->cap = nc;
        }
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

/* A millisecond time: 8 bytes little-endian (rdbSaveMillisecondTime). */
static void w_ms(struct wr *w, int64_t t)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)t >> (8 * i));
    w_put(w, b, 8);
}

static void w_raw_id(struct wr *w, const struct sid *id)
{
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
    w_put(w, b, 16);
}

/* The consumer groups of a stream, as Redis 7.0 writes them: per group its name, last ID,
 * entries-read, the global PEL (raw ID, delivery time, delivery count), then the consumers
 * (name, seen time, the raw IDs of their PEL). */
static void w_groups(struct wr *w, const struct tstream *s)
{
    w_len(w, s->ngroups);
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct sgroup *g = s->groups[i];
        w_str(w, g->name, g->nlen);
        w_len(w, g->last_id.ms);
        w_len(w, g->last_id.seq);
        w_len(w, (uint64_t)g->entries_read);
        w_len(w, g->pel.n);
        for (size_t j = 0; j < g->pel.n; j++) {
            w_raw_id(w, &g->pel.v[j]->id);
            w_ms(w, g->pel.v[j]->dtime);
            w_len(w, g->pel.v[j]->dcount);
        }
        w_len(w, g->ncons);
        for (size_t j = 0; j < g->ncons; j++) {
            const struct scons *c = g->cons[j];
            w_str(w, c->name, c->nlen);
            w_ms(w, c->seen);
            w_len(w, c->pel.n);
            for (size_t k = 0; k < c->pel.n; k++)
                w_raw_id(w, &c->pel.v[k]->id);
        }
    }
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
    w_groups(w, s);
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
        w_str(w, item_value(it), item_vlen(it));
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

/* Redis 7.0's d2string: the text of a score in a sorted set's listpack. */
static size_t score_text(char *buf, size_t cap, double d)
{
    if (isnan(d))
        return (size_t)snprintf(buf, cap, "nan");
    if (isinf(d))
        return (size_t)snprintf(buf, cap, d < 0 ? "-inf" : "inf");
    if (d == 0)
        return (size_t)snprintf(buf, cap, signbit(d) ? "-0" : "0");
    if (d > -4503599627370495.0 && d < 4503599627370496.0 && d == (double)(long long)d)
        return (size_t)snprintf(buf, cap, "%lld", (long long)d);
    return (size_t)snprintf(buf, cap, "%.17g", d);
}

/* DUMP writes a value as Redis 7.0 does when its encoding is one Redis 7.0 has: an intset, a
 * listpack hash or sorted set, a quicklist of listpacks (a node per chunk of the list), so
 * that small values give Redis's bytes. Returns 0 when it wrote nothing (the plain form
 * follows: hash tables, skiplists, and sets in listpacks, which Redis 7.0 does not have). */
static int w_packed(struct wr *w, struct item *it)
{
    void *ptr = item_ptr(it);
    struct lpb b = {0};

    switch (it->type) {
    case OBJ_SET: {
        const struct tset *st = ptr;
        if (st->enc != TSET_INTSET)
            return 0;
        w_byte(w, T_SET_INTSET);
        w_str(w, (const char *)st->u.is, 8 + (size_t)st->u.is->width * st->u.is->count);
        return 1;
    }
    case OBJ_HASH: {
        struct thash_iter hi;
        const char *f, *v;
        size_t fn, vn;
        if (strcmp(thash_encoding_name(ptr), "listpack"))
            return 0;
        lpb_init(&b);
        thash_iter_init(&hi, ptr);
        while (thash_next(&hi, &f, &fn, &v, &vn)) {
            lpb_str(&b, f, fn);
            lpb_str(&b, v, vn);
        }
        lpb_finish(&b);
        if (!b.oom) {
            w_byte(w, T_HASH_LISTPACK);
            w_str(w, (const char *)b.p, b.n);
        }
        break;
    }
    case OBJ_ZSET: {
        struct tzset *z = ptr;
        unsigned long len = tzset_len(z);
        struct zit zi;
        if (strcmp(tzset_encoding_name(z), "listpack"))
            return 0;
        lpb_init(&b);
        if (len)
            zit_seek(&zi, z, 0);
        for (unsigned long i = 0; i < len; i++) {
            char num[64];
            size_t n;
            double sc;
            const char *p = zit_get(&zi, &n, &sc);
            lpb_str(&b, p, n);
            lpb_str(&b, num, score_text(num, sizeof(num), sc));
            zit_next(&zi);
        }
        lpb_finish(&b);
        if (!b.oom) {
            w_byte(w, T_ZSET_LISTPACK);
            w_str(w, (const char *)b.p, b.n);
        }
        break;
    }
    case OBJ_LIST: {
        struct tlist *l = ptr;
        uint64_t nodes = 0;
        for (struct qnode *q = l->head; q; q = q->next)
            nodes += lp_end(q->lp) != 0;
        w_byte(w, T_LIST_QUICKLIST_2);
        w_len(w, nodes);
        for (struct qnode *q = l->head; q && !b.oom; q = q->next) {
            if (!lp_end(q->lp))
                continue;
            lpb_init(&b);
            for (uint32_t off = 0; off < lp_end(q->lp); off = lp_next(q->lp, off)) {
                size_t n;
                const char *p = lp_get(q->lp, off, &n);
                lpb_str(&b, p, n);
            }
            lpb_finish(&b);
            w_len(w, 2); /* PACKED */
            if (!b.oom)
                w_str(w, (const char *)b.p, b.n);
        }
        break;
    }
    default:
        return 0;
    }
    if (b.oom)
        w->err = ENOMEM;
    free(b.p);
    return 1;
}

int rdb_dump(struct item *it, char **out, size_t *outn)
{
    static const struct rdb_save_opts o = {1, 1, 0};
    struct wr w = {.fd = -1, .o = &o, .cap = 256};
    unsigned char b[10];

    w.buf = malloc(w.cap);
    if (!w.buf)
        return -1;
    if (it->type == OBJ_STRING || !w_packed(&w, it)) {
        w_byte(&w, (unsigned)rdb_type_of(it->type));
        w_value(&w, it);
    }
    b[0] = RDB_VERSION & 0xff;
    b[1] = RDB_VERSION >> 8;
    w_put(&w, b, 2);
    if (!w.err) {
        uint64_t crc = crc64(0, w.buf, w.n);
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(crc >> (8 * i));
        w_put(&w, b, 8);
    }
    free(w.tmp);
    if (w.err) {
        free(w.buf);
        return -1;
    }
    *out = (char *)w.buf;
    *outn = w.n;
    return 0;
}

struct rdb_func_hooks rdb_funcs;
_Thread_local rdb_walk_fn *rdb_walk;

static void put_function(void *arg, const char *code, size_t n)
{
    struct wr *w = arg;

    w_byte(w, OP_FUNCTION2);
    w_str(w, code, n);
}

/* Append n bytes to a growable buffer (*b, *len, *cap). 0 or -1 (out of memory). */
static int arena_put(unsigned char **b, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) {
        size_t nc = *cap ? *cap : 16384;
        while (nc < *len + n)
            nc *= 2;
        unsigned char *nb = realloc(*b, nc);
        if (!nb)
            return -1;
        *b = nb;
        *cap = nc;
    }
    memcpy(*b + *len, p, n);
    *len += n;
    return 0;
}

/* The item in slot j of t (its expire time, 0 for none, in *exp), or NULL: what a snapshot
 * writes. A key whose TTL passed but that is still there is written too, as Redis writes it
 * (the loader counts it in rdb_last_load_keys_expired and skips it). */
static struct item *live_at(const struct ht *t, uint32_t j, int64_t now, int64_t *exp)
{
    struct item *it = ht_item_at(t, j);
    (void)now;
    if (!it)
        return NULL;
    *exp = item_expire(it);
    return it;
}

int rdb_stripe_copy(struct store *s, uint32_t stripe, int compress, int64_t now,
                    struct rdb_copy *cp)
{
    return rdb_stripe_copy_except(s, stripe, compress, now, NULL, NULL, cp);
}

/* One item into cp as rdb_stripe_copy puts it (db: its database; exp: its expire time). */
static int copy_item(struct wr *w, struct rdb_copy *cp, size_t *cap, int db, int *selected,
                     struct item *it, int64_t exp)
{
    static const unsigned char pad[8];

    cp->nkeys++;
    if (it->type == OBJ_STRING) { /* self-contained: copied as it is */
        uint32_t h[2] = {(uint32_t)db, (uint32_t)item_total_size(it)};
        if (arena_put(&cp->items, &cp->itemsn, cap, h, sizeof(h)) ||
            arena_put(&cp->items, &cp->itemsn, cap, it, h[1]) ||
            arena_put(&cp->items, &cp->itemsn, cap, pad, (8 - h[1] % 8) % 8))
            w->err = ENOMEM;
        return 0;
    }
    if (!*selected) {
        if (!w->buf) {
            w->cap = 4096;
            if (!(w->buf = malloc(w->cap))) {
                w->err = ENOMEM;
                return -1;
            }
        }
        w_byte(w, OP_SELECTDB);
        w_len(w, (uint64_t)db);
        *selected = 1;
    }
    w_key(w, it, exp);
    return 0;
}

/* The end of a copy: its structures' bytes handed to cp. 0, or -1 (cp freed) on an error. */
static int copy_done(struct wr *w, struct rdb_copy *cp)
{
    free(w->tmp);
    cp->raw = w->buf;
    cp->rawn = w->n;
    if (w->err) {
        rdb_copy_free(cp);
        return -1;
    }
    return 0;
}

int rdb_key_copy(struct store *s, const struct skey *k, int compress, int64_t now,
                 struct rdb_copy *cp)
{
    struct rdb_save_opts o = {.compress = compress, .checksum = 0};
    struct wr w = {.fd = -1, .o = &o};
    struct ht *t = &s->stripes[k->stripe].db[k->db];
    size_t cap = 0;
    uint32_t pos = 0;
    int selected = 0;
    int64_t exp;
    struct item *it;

    memset(cp, 0, sizeof(*cp));
    if (!t->count || !t->slots || !(it = ht_find(t, k->hash, k->p, k->n, &pos)) ||
        !(it = live_at(t, pos, now, &exp)))
        return 0; /* absent as of now: an empty copy */
    if (it->type == OBJ_STRING)
        cap = 8 + (item_total_size(it) + 7) / 8 * 8;
    if (cap && !(cp->items = malloc(cap)))
        return -1;
    copy_item(&w, cp, &cap, k->db, &selected, it, exp);
    return copy_done(&w, cp);
}

int rdb_stripe_copy_except(struct store *s, uint32_t stripe, int compress, int64_t now,
                           int (*skip)(void *arg, int db, const char *key, size_t klen),
                           void *skip_arg, struct rdb_copy *cp)
{
    struct rdb_save_opts o = {.compress = compress, .checksum = 0};
    struct wr w = {.fd = -1, .o = &o};
    struct stripe *st = &s->stripes[stripe];
    size_t cap = 0;

    memset(cp, 0, sizeof(*cp));
    /* one allocation for the strings: sized by a first pass (cheaper than growing) */
    for (int db = 0; db < s->ndb; db++) {
        struct ht *t = &st->db[db];
        for (uint32_t j = 0; t->count && t->slots && j < t->size; j++) {
            struct item *it = ht_item_at(t, j);
            if (it && it->type == OBJ_STRING)
                cap += 8 + (item_total_size(it) + 7) / 8 * 8;
        }
    }
    if (cap && !(cp->items = malloc(cap)))
        return -1;
    for (int db = 0; db < s->ndb && !w.err; db++) {
        struct ht *t = &st->db[db];
        int selected = 0;
        if (!t->count || !t->slots)
            continue;
        for (uint32_t j = 0; j < t->size && !w.err; j++) {
            int64_t exp;
            struct item *it = live_at(t, j, now, &exp);
            if (!it || (skip && skip(skip_arg, db, item_key(it), item_klen(it))))
                continue;
            if (copy_item(&w, cp, &cap, db, &selected, it, exp))
                break;
        }
    }
    return copy_done(&w, cp);
}

int rdb_copy_items_bytes(const struct rdb_copy *cp, int compress, size_t *pos, size_t max_in,
                         unsigned char **out, size_t *n)
{
    struct rdb_save_opts o = {.compress = compress, .checksum = 0};
    size_t end = *pos;
    int db = -1;

    *out = NULL;
    *n = 0;
    while (end < cp->itemsn && (end == *pos || end - *pos < max_in)) {
        uint32_t h[2];
        memcpy(h, cp->items + end, sizeof(h));
        end += sizeof(h) + h[1] + (8 - h[1] % 8) % 8;
    }
    struct wr w = {.fd = -1, .o = &o, .cap = end - *pos + 64};
    if (!(w.buf = malloc(w.cap)))
        return -1;
    for (size_t off = *pos; off < end && !w.err;) {
        uint32_t h[2];
        memcpy(h, cp->items + off, sizeof(h));
        struct item *it = (struct item *)(void *)(cp->items + off + sizeof(h));
        if ((int)h[0] != db) {
            db = (int)h[0];
            w_byte(&w, OP_SELECTDB);
            w_len(&w, (uint64_t)db);
        }
        w_key(&w, it, item_expire(it));
        off += sizeof(h) + h[1] + (8 - h[1] % 8) % 8;
    }
    free(w.tmp);
    if (w.err) {
        free(w.buf);
        return -1;
    }
    *pos = end;
    *out = w.buf;
    *n = w.n;
    return 0;
}

void rdb_copy_free(struct rdb_copy *cp)
{
    free(cp->raw);
    free(cp->items);
    memset(cp, 0, sizeof(*cp));
}

/* snapshot_walk's sink: under the sink mutex. */
static int sink_out(void *arg, const void *p, size_t n)
{
    struct wr *w = arg;
    w_put(w, p, n);
    return w->err ? -1 : 0;
}

/* The whole file into w: header, AUX fields (aux: name, value pairs ending with NULL), the
 * functions, every live key, EOF and the CRC64 trailer. */
int rdb_key_delay_on;

/* rdb-key-save-delay (tests, as Redis's debugDelay) in a background save's child: > 0 sleeps
 * that many microseconds after each key; < 0 sleeps one microsecond once in -n keys. (The
 * snapshot thread has its own per-stripe delay; synchronous saves, shutdown's among them, are
 * not slowed: a test that failed with the delay still set would otherwise hang the exit.) */
static void key_delay(void)
{
    static unsigned long long n;
    int d = __atomic_load_n(&cfg.rdb_key_save_delay, __ATOMIC_RELAXED);

    if (TC_LIKELY(!d) || !rdb_key_delay_on)
        return;
    if (d > 0)
        usleep((useconds_t)d);
    else if (++n % (unsigned long long)(-(long long)d) == 0)
        usleep(1);
}

static void write_all(struct wr *w, struct store *s, const struct rdb_save_opts *o, int64_t now,
                      const char *const *aux)
{
    char num[32];

    w_put(w, "REDIS0010", 9);
    w_aux(w, "redis-ver", "7.0.15");
    w_aux(w, "redis-bits", sizeof(void *) == 8 ? "64" : "32");
    snprintf(num, sizeof(num), "%lld", (long long)(now / 1000));
    w_aux(w, "ctime", num);
    snprintf(num, sizeof(num), "%lld", (long long)store_mem_used());
    w_aux(w, "used-mem", num);
    w_aux(w, "aof-base", "0");
    for (int i = 0; aux && aux[i] && aux[i + 1]; i += 2)
        w_aux(w, aux[i], aux[i + 1]);
    if (rdb_funcs.each)
        rdb_funcs.each(put_function, w);
    /* a snapshot thread takes the stripes through snapshot_walk (forkless); else the caller
     * holds them all or owns a private copy */
    int walked = !rdb_walk ? 0 : w->err ? -1 : rdb_walk(sink_out, w);
    if (walked < 0 && !w->err)
        w->err = ECANCELED;
    for (int db = 0; walked == 0 && db < s->ndb && !w->err; db++) {
        uint64_t keys = 0, vol = 0;
        for (uint32_t i = 0; i < s->nstripes; i++) {
            keys += s->stripes[i].db[db].count;
            vol += s->stripes[i].db[db].nvolatile;
        }
        if (!keys)
            continue;
        w_byte(w, OP_SELECTDB);
        w_len(w, (uint64_t)db);
        w_byte(w, OP_RESIZEDB);
        w_len(w, keys);
        w_len(w, vol);
        for (uint32_t i = 0; i < s->nstripes && !w->err; i++) {
            struct ht *t = &s->stripes[i].db[db];
            for (uint32_t j = 0; j < t->size && t->slots && !w->err; j++) {
                int64_t exp;
                struct item *it = live_at(t, j, now, &exp);
                if (it) {
                    w_key(w, it, exp);
                    key_delay();
                }
            }
        }
    }
    w_byte(w, OP_EOF);
    w_flush(w);
    {
        unsigned char b[8];
        uint64_t crc = o->checksum ? w->crc : 0;
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(crc >> (8 * i));
        if (!w->err) {
            struct rdb_save_opts nocrc = *o;
            nocrc.checksum = 0; /* the trailer is not part of the sum */
            w->o = &nocrc;
            w_put(w, b, 8);
            w_flush(w);
            w->o = o;
        }
    }
}

int rdb_save(struct store *s, const char *path, const struct rdb_save_opts *o, int64_t now)
{
    return rdb_save_aux(s, path, o, now, NULL);
}

int rdb_save_aux(struct store *s, const char *path, const struct rdb_save_opts *o, int64_t now,
                 const char *const *aux)
{
    char tmp[1200], dir[1100];
    const char *slash = strrchr(path, '/');
    struct wr w = {.o = o, .cap = 1 << 16};
    int saved_errno;

    if (slash)
        snprintf(dir, sizeof(dir), "%.*s/", (int)(slash - path), path);
    else
        dir[0] = '\0';
    if (rdb_walk)
        snprintf(tmp, sizeof(tmp), "%stemp-%d-%d.rdb", dir, (int)getpid(), (int)gettid());
    else
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
    write_all(&w, s, o, now, aux);
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

int rdb_save_stream(struct store *s, int *fds, int nfds, int timeout_ms,
                    const struct rdb_save_opts *o, int64_t now, const char *const *aux)
{
    struct wr w = {.fd = -1, .fds = fds, .nfds = nfds, .timeout_ms = timeout_ms, .o = o,
                   .cap = 1 << 16};

    w.buf = malloc(w.cap);
    if (!w.buf)
        return -1;
    write_all(&w, s, o, now, aux);
    w_flush(&w);
    free(w.buf);
    free(w.tmp);
    return w.err ? -1 : 0;
}
