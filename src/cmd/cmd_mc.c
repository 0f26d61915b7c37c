/* memcached protocol handlers: the text commands and the meta commands of memcached 1.6 on the
 * shared store (database 0). A key holding another Redis type is a miss for reads and is
 * replaced by set. CAS values are the store's lazy ones: an item without a CAS value (any
 * write since the last one handed out) never matches a client's cas unique. */
#define _GNU_SOURCE
#include "cmd/cmd_mc.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/propagate.h"
#include "core/config.h"
#include "proto/mc.h"

#define MC_VERSION_STR "1.6.18" /* the memcached release whose behaviour we follow */
#define MC_DB 0

/* Per-connection state (c->mc). */
struct mc_conn {
    struct mc_parser p;
    struct mc_req r;
    /* The item an mg hit of the previous / current command returned: in memcached its
     * response still holds a reference while the next command runs, which keeps incr/decr
     * from rewriting that item in place (so the value is not space padded). */
    const struct item *mg_prev, *mg_cur;
};

static int is_held(struct conn *c, const struct item *it)
{
    return ((struct mc_conn *)c->mc)->mg_prev == it;
}

#define MC_STAT_FIELDS(X)                                                                      \
    X(get_cmds) X(get_hits) X(get_misses) X(get_expired) X(set_cmds) X(flush_cmds)           \
    X(touch_cmds) X(touch_hits) X(touch_misses) X(meta_cmds) X(delete_hits) X(delete_misses) \
    X(incr_hits) X(incr_misses) X(decr_hits) X(decr_misses) X(cas_hits) X(cas_misses)        \
    X(cas_badval) X(too_large) X(no_memory) X(bytes_read) X(bytes_written) X(conns_total)

/* Counters of one worker, written by that worker only, summed racily when read. */
struct mc_stats {
#define X(f) uint64_t f;
    MC_STAT_FIELDS(X)
#undef X
} __attribute__((aligned(64)));

/* Store totals that "stats reset" zeroes (kept as a baseline, the store is shared). */
struct mc_store_base {
    uint64_t stored, evicted, expired_unfetched, evicted_unfetched;
};

static struct srv *g_srv;
static struct mc_stats *g_stats; /* one per worker */
static struct mc_stats g_base;   /* subtracted after "stats reset" */
static struct mc_store_base g_store_base;
static pthread_mutex_t g_base_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_curr_conns;
static _Atomic int64_t g_flush_at_ms; /* pending "flush_all <delay>" (0: none) */
static _Atomic int g_verbosity;
static _Atomic int g_detail;

int cmd_mc_setup(struct srv *srv)
{
    g_srv = srv;
    g_stats = aligned_alloc(64, sizeof(struct mc_stats) * (size_t)srv->nworkers);
    if (!g_stats)
        return -1;
    memset(g_stats, 0, sizeof(struct mc_stats) * (size_t)srv->nworkers);
    return 0;
}

static inline struct mc_stats *wst(struct conn *c)
{
    return &g_stats[c->w->idx];
}

/* ---- output ---- */

static void out(struct conn *c, const char *s, size_t n)
{
    reply_check(c, buf_append(&c->wbuf, s, n));
}
#define OUT_LIT(c, s) out((c), (s), sizeof(s) - 1)

static void out_line(struct conn *c, const char *s)
{
    size_t n = strlen(s);
    if (buf_reserve(&c->wbuf, n + 2)) {
        c->flags |= CONN_CLOSE_ASAP;
        return;
    }
    memcpy(c->wbuf.data + c->wbuf.wpos, s, n);
    memcpy(c->wbuf.data + c->wbuf.wpos + n, "\r\n", 2);
    c->wbuf.wpos += n + 2;
}

/* A value block: the bytes (referenced when large) and CRLF. Under the stripe lock. */
static void out_value(struct conn *c, struct item *it)
{
    if (it->bits & IT_REF)
        reply_item_ref(c, it);
    else
        out(c, item_value(it), it->vlen);
    OUT_LIT(c, "\r\n");
}

/* "VALUE key flags bytes [cas]" and the value block of a get hit, written straight into the
 * output buffer. Under the stripe lock. */
static void out_hit(struct conn *c, const struct mc_tok *key, struct item *it, int with_cas,
                    uint64_t cas)
{
    int inline_value = !(it->bits & IT_REF);
    /* "VALUE " + key + 3 numbers of at most 20 digits with their separators + NUL, CRLFs */
    size_t need = 6 + key->n + 3 * 21 + 1 + 2 + (inline_value ? it->vlen + 2 : 0);
    char *o;

    if (buf_free(&c->wbuf) < need && buf_reserve(&c->wbuf, need)) {
        c->flags |= CONN_CLOSE_ASAP;
        return;
    }
    o = c->wbuf.data + c->wbuf.wpos;
    memcpy(o, "VALUE ", 6);
    o += 6;
    memcpy(o, key->p, key->n);
    o += key->n;
    *o++ = ' ';
    o += util_ull2str(o, item_mcflags(it));
    *o++ = ' ';
    o += util_ull2str(o, it->vlen);
    if (with_cas) {
        *o++ = ' ';
        o += util_ull2str(o, cas);
    }
    *o++ = '\r';
    *o++ = '\n';
    if (inline_value) {
        memcpy(o, item_value(it), it->vlen);
        o += it->vlen;
        *o++ = '\r';
        *o++ = '\n';
    }
    c->wbuf.wpos = (size_t)(o - c->wbuf.data);
    if (!inline_value)
        out_value(c, it);
}

/* A response line under construction (meta flags, VALUE headers). Long enough for the longest
 * one memcached builds: a base64 key, an opaque and every other flag once. */
struct line {
    size_t n;
    char b[1400];
};

static void ln_put(struct line *l, const char *s, size_t n)
{
    if (l->n + n <= sizeof(l->b)) {
        memcpy(l->b + l->n, s, n);
        l->n += n;
    }
}

static void ln_str(struct line *l, const char *s)
{
    ln_put(l, s, strlen(s));
}

static void ln_u64(struct line *l, uint64_t v)
{
    char tmp[24];
    ln_put(l, tmp, (size_t)mc_u64toa(v, tmp));
}

static void ln_i64(struct line *l, int64_t v)
{
    if (v < 0) {
        ln_put(l, "-", 1);
        ln_u64(l, (uint64_t)0 - (uint64_t)v);
    } else {
        ln_u64(l, (uint64_t)v);
    }
}

/* " k<key>", base64 again (and " b") when the request gave it so. */
static void ln_key(struct line *l, const struct mc_req *r)
{
    ln_put(l, " k", 2);
    if (r->key_b64) {
        char tmp[400];
        size_t n = mc_base64_encode(r->key.p, r->key.n, tmp, sizeof(tmp));
        ln_put(l, tmp, n);
        ln_put(l, " b", 2);
    } else {
        ln_put(l, r->key.p, r->key.n);
    }
}

static void ln_end(struct conn *c, struct line *l)
{
    ln_put(l, "\r\n", 2);
    out(c, l->b, l->n);
}

/* The O and k flags of a meta request, in request order (misses and failures). */
static void ln_opaque_key(struct line *l, const struct mc_req *r)
{
    for (int i = 2; i < r->ntok - 1; i++) {
        if (r->tok[i].p[0] == 'O') {
            ln_put(l, " ", 1);
            ln_put(l, r->tok[i].p, r->tok[i].n);
        } else if (r->tok[i].p[0] == 'k') {
            ln_key(l, r);
        }
    }
}

static int is_meta(enum mc_cmd cmd)
{
    return cmd >= MC_MG;
}

/* ---- store helpers (all under the key's stripe lock) ---- */

/* The live string item of k, or NULL; another type is a miss. *expired: an expired item was
 * removed by this lookup. */
static struct item *find(struct store *s, const struct skey *k, int64_t now, int *expired)
{
    struct stripe *st = &s->stripes[k->stripe];
    uint64_t before = st->expired;
    struct item *it = store_lookup_write_locked(s, k, now);

    if (expired)
        *expired = st->expired != before;
    if (it && it->type != OBJ_STRING)
        return NULL;
    return it;
}

/* A read hit: keyspace counters, LRU/LFU and the fetched bit. */
static void hit(struct store *s, const struct skey *k, struct item *it)
{
    s->stripes[k->stripe].hits++;
    store_touch(it);
    it->enc |= ITEM_FETCHED;
}

static void miss(struct store *s, const struct skey *k)
{
    s->stripes[k->stripe].misses++;
}

/* Set the expire time (absolute ms, 0 = never); keeps the old one when out of memory. */
static struct item *set_exp(struct store *s, const struct skey *k, struct item *it, int64_t ms)
{
    struct item *n = store_set_expire_locked(s, k, it, ms);
    return n ? n : it;
}

/* The current CAS value of it, assigned now if none was handed out (0 when out of memory). */
static uint64_t cas_of(struct store *s, const struct skey *k, struct item **itp)
{
    return store_cas_locked(s, k, itp);
}

/* Give *itp a fresh CAS value, or the explicit one (meta E) when nonzero. */
static uint64_t new_cas(struct store *s, const struct skey *k, struct item **itp, uint64_t explicit_cas)
{
    uint64_t v;

    if ((*itp)->bits & IT_CAS)
        memset(item_opt(*itp, IT_CAS), 0, 8);
    v = store_cas_locked(s, k, itp);
    if (v && explicit_cas) {
        memcpy(item_opt(*itp, IT_CAS), &explicit_cas, 8);
        v = explicit_cas;
    }
    return v;
}

/* An in-place change: CAS values handed out before no longer match. */
static void changed_in_place(struct item *it)
{
    if (it->bits & IT_CAS)
        memset(item_opt(it, IT_CAS), 0, 8);
}

/* Seconds of TTL left as memcached reports them (-1: none). */
static int64_t ttl_left(struct item *it, int64_t now)
{
    int64_t exp = item_expire(it);
    if (!exp)
        return -1;
    return (exp - now + 999) / 1000;
}

/* A new string item for k, not stored. Large values get room for a CAS value so that gets
 * does not copy them. NULL when out of memory. */
static struct item *new_item(const struct skey *k, uint32_t flags, int64_t exp, size_t vlen,
                             int want_cas)
{
    uint8_t bits = 0;
    struct item *it;

    if (flags)
        bits |= IT_FLAGS;
    if (exp)
        bits |= IT_TTL;
    if (want_cas || vlen >= ITEM_REF_MIN)
        bits |= IT_CAS;
    it = item_create(OBJ_STRING, k->p, k->n, vlen, bits);
    if (!it)
        return NULL;
    if (flags)
        memcpy(item_opt(it, IT_FLAGS), &flags, 4);
    if (exp)
        item_set_expire_field(it, exp);
    return it;
}

/* memcached's item_size_ok for a whole item. */
static int fits(size_t nkey, uint32_t flags, size_t vlen)
{
    return 56 + nkey + 1 + (flags ? 4 : 0) + vlen + 2 <= (size_t)cfg.item_size_max;
}

static int make_room(struct conn *c)
{
    if (cfg.maxmemory > 0 && store_make_room(conn_store(c))) {
        wst(c)->no_memory++;
        return -1;
    }
    return 0;
}

/* ---- retrieval ---- */

static void get_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct mc_stats *ws = wst(c);
    int64_t now = conn_now(c);
    int with_cas = r->cmd == MC_GETS || r->cmd == MC_GATS;
    int touch = r->cmd == MC_GAT || r->cmd == MC_GATS;
    int64_t exp = touch ? mc_exptime_ms(r->exptime, now) : 0;
    const char *pos = r->keys;
    struct mc_tok t;
    int ti = touch ? 2 : 1; /* next key in r->tok when the line fit in it (no rest) */

    while (r->rest ? mc_next_token(&pos, r->end, &t)
                   : ti < r->ntok - 1 ? (t = r->tok[ti++], 1) : 0) {
        struct skey k;
        struct item *it;
        int expired;

        store_key(s, &k, MC_DB, t.p, t.n);
        store_lock(s, k.stripe);
        it = find(s, &k, now, &expired);
        if (it) {
            uint64_t cas = 0;
            if (touch)
                it = set_exp(s, &k, it, exp);
            hit(s, &k, it);
            if (with_cas)
                cas = cas_of(s, &k, &it);
            out_hit(c, &t, it, with_cas, cas);
            if (touch) {
                STAT_INC(ws->touch_cmds);
                STAT_INC(ws->touch_hits);
            } else {
                STAT_INC(ws->get_cmds);
                STAT_INC(ws->get_hits);
            }
        } else {
            miss(s, &k);
            if (touch) {
                STAT_INC(ws->touch_cmds);
                STAT_INC(ws->touch_misses);
            } else {
                STAT_INC(ws->get_cmds);
                STAT_INC(ws->get_misses);
                STAT_ADD(ws->get_expired, (uint64_t)expired);
            }
        }
        store_unlock(s, k.stripe);
    }
    OUT_LIT(c, "END\r\n");
}

/* ---- storage ---- */

enum store_res { ST_STORED, ST_NOT_STORED, ST_EXISTS, ST_NOT_FOUND, ST_OOM };

static const char *const store_text[] = {"STORED", "NOT_STORED", "EXISTS", "NOT_FOUND",
                                         MC_ERR_OOM};
static const char *const store_meta[] = {"HD", "NS", "EX", "NF", MC_ERR_OOM};

/* Append or prepend data to the live item old (flags and TTL kept). */
static enum store_res concat(struct store *s, const struct skey *k, struct item *old,
                             const char *data, size_t n, int append)
{
    size_t total = (size_t)old->vlen + n;
    uint32_t flags = item_mcflags(old);
    struct item *it;

    if (!fits(k->n, flags, total))
        return ST_NOT_STORED;
    it = new_item(k, flags, item_expire(old), total, 0);
    if (!it)
        return ST_OOM;
    if (append) {
        memcpy(item_value(it), item_value(old), old->vlen);
        memcpy(item_value(it) + old->vlen, data, n);
    } else {
        memcpy(item_value(it), data, n);
        memcpy(item_value(it) + n, item_value(old), old->vlen);
    }
    return store_put_locked(s, k, it) ? ST_OOM : ST_STORED;
}

/* The store step shared by set/add/replace/append/prepend/cas and ms. mode is the text
 * command; cas != 0 (or cas_cmd) compares CAS values; stale allows an older CAS (ms I).
 * *out is the item stored (for ms c/E), under the lock. */
static enum store_res store_generic(struct conn *c, const struct skey *k, enum mc_cmd mode,
                                    int cas_cmd, uint64_t cas, int stale, uint32_t flags,
                                    int64_t exp, const char *data, size_t vlen, int want_cas,
                                    struct item **out)
{
    struct store *s = conn_store(c);
    struct mc_stats *ws = wst(c);
    struct item *old, *it = NULL;
    enum store_res res;
    int mark_stale = 0;
    uint32_t pos;

    *out = NULL;
    store_lock(s, k->stripe);
    old = store_lookup_pos_locked(s, k, conn_now(c), &pos);
    switch (mode) {
    case MC_ADD:
        if (old) {
            store_touch(old);
            res = ST_NOT_STORED;
            break;
        }
        res = ST_STORED;
        break;
    case MC_REPLACE:
        res = old ? ST_STORED : ST_NOT_STORED;
        break;
    case MC_CAS:
        if (!old || old->type != OBJ_STRING) {
            res = ST_NOT_FOUND;
            STAT_INC(ws->cas_misses);
        } else if (item_cas_field(old) != 0 && item_cas_field(old) == cas) {
            res = ST_STORED;
            STAT_INC(ws->cas_hits);
        } else if (stale && (item_cas_field(old) == 0 || cas < item_cas_field(old))) {
            /* an older CAS with I: stored, but marked stale */
            res = ST_STORED;
            mark_stale = 1;
            STAT_INC(ws->cas_hits);
        } else {
            res = ST_EXISTS;
            STAT_INC(ws->cas_badval);
        }
        break;
    case MC_APPEND:
    case MC_PREPEND:
        if (!old || old->type != OBJ_STRING) {
            res = ST_NOT_STORED;
        } else if (cas_cmd && (item_cas_field(old) == 0 || item_cas_field(old) != cas)) {
            res = ST_EXISTS;
        } else {
            res = concat(s, k, old, data, vlen, mode == MC_APPEND);
            if (res == ST_STORED)
                *out = store_lookup_write_locked(s, k, conn_now(c));
        }
        break;
    default:
        res = ST_STORED;
        break;
    }
    if (res == ST_STORED &&
        (mode == MC_SET || mode == MC_ADD || mode == MC_REPLACE || mode == MC_CAS)) {
        uint8_t won = old ? (uint8_t)(old->bits & IT_MC_WON) : 0;
        uint8_t bits = (uint8_t)((flags ? IT_FLAGS : 0) | (exp ? IT_TTL : 0) |
                                 (want_cas || vlen >= ITEM_REF_MIN ? IT_CAS : 0));
        /* an overwrite of a value of about the same size reuses the item (no malloc/free) */
        if (old && !is_held(c, old) &&
            (it = store_reuse_locked(s, k, old, vlen, bits, exp)) != NULL) {
            if (flags)
                memcpy(item_opt(it, IT_FLAGS), &flags, 4);
        } else {
            it = new_item(k, flags, exp, vlen, want_cas);
            if (!it)
                return ST_OOM;
        }
        memcpy(item_value(it), data, vlen);
        if (mark_stale) /* memcached keeps a handed-out recache token */
            it->bits |= (uint8_t)(IT_MC_STALE | won);
        if (it != old && store_put_at_locked(s, k, old, pos, it))
            res = ST_OOM;
        else
            *out = it;
    }
    return res; /* the caller unlocks */
}

/* set/add/replace/append/prepend/cas */
static void update_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    enum store_res res;

    wst(c)->set_cmds++;
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    if (make_room(c)) {
        res = ST_OOM;
    } else {
        res = store_generic(c, &k, r->cmd, r->cmd == MC_CAS, r->num, 0, r->flags,
                            mc_exptime_ms(r->exptime, conn_now(c)), r->data, r->vlen, 0, &it);
        store_unlock(s, k.stripe);
        if (res == ST_OOM)
            wst(c)->no_memory++;
    }
    if (res == ST_OOM && r->cmd == MC_SET) {
        /* memcached drops the old value rather than leave it stale */
        store_lock(s, k.stripe);
        store_delete_locked(s, &k, conn_now(c));
        store_unlock(s, k.stripe);
    }
    if (!r->noreply)
        out_line(c, store_text[res]);
}

static void ms_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it = NULL;
    enum store_res res;
    enum mc_cmd mode;
    uint64_t has = r->m.has, cas = 0;
    int cas_mode;
    struct line l;

    wst(c)->set_cmds++;
    wst(c)->meta_cmds++;
    switch (r->m.mode) {
    case 'E': mode = MC_ADD; break;
    case 'A': mode = MC_APPEND; break;
    case 'P': mode = MC_PREPEND; break;
    case 'R': mode = MC_REPLACE; break;
    default: mode = MC_SET; break;
    }
    cas_mode = (has & MC_MF('C')) != 0;
    if (cas_mode && (mode == MC_SET || mode == MC_REPLACE))
        mode = MC_CAS;
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    if (make_room(c)) {
        res = ST_OOM;
    } else {
        int64_t exp = has & MC_MF('T') ? mc_exptime_ms(r->m.ttl, conn_now(c)) : 0;
        res = store_generic(c, &k, mode, cas_mode, r->m.cas, (has & MC_MF('I')) != 0, r->m.flags,
                            exp, r->data, r->vlen, (has & (MC_MF('c') | MC_MF('E'))) != 0, &it);
        if (res == ST_STORED && it && (has & MC_MF('E')))
            cas = new_cas(s, &k, &it, r->m.new_cas);
        else if (res == ST_STORED && it && (has & MC_MF('c')))
            cas = cas_of(s, &k, &it);
        store_unlock(s, k.stripe);
    }
    if (res == ST_OOM) {
        out_line(c, MC_ERR_OOM);
        return;
    }
    if (res == ST_STORED && r->noreply)
        return;
    l.n = 0;
    ln_str(&l, store_meta[res]);
    for (int i = 3; i < r->ntok - 1; i++) {
        switch (r->tok[i].p[0]) {
        case 'O':
            ln_put(&l, " ", 1);
            ln_put(&l, r->tok[i].p, r->tok[i].n);
            break;
        case 'k':
            ln_key(&l, r);
            break;
        case 'c':
            ln_put(&l, " c", 2);
            ln_u64(&l, cas);
            break;
        }
    }
    ln_end(c, &l);
}

/* ---- arithmetic ---- */

enum delta_res { DR_OK, DR_NOT_FOUND, DR_NON_NUMERIC, DR_CAS_MISMATCH, DR_OOM };

/* incr/decr on the live item of k (memcached's do_add_delta): unsigned 64-bit, wraps on incr,
 * floors at 0 on decr; shorter results are written in place padded with spaces like
 * memcached. *itp is the item holding the result; *val the new value. Under the lock. */
static enum delta_res add_delta(struct conn *c, const struct skey *k, int incr, uint64_t delta,
                                uint64_t req_cas, uint64_t *val, struct item **itp)
{
    struct store *s = conn_store(c);
    struct item *it = find(s, k, conn_now(c), NULL);
    uint64_t v;
    char buf[24];
    int n;

    *itp = NULL;
    if (!it)
        return DR_NOT_FOUND;
    if (it->vlen == 0)
        return DR_NON_NUMERIC;
    if (req_cas && item_cas_field(it) != req_cas)
        return DR_CAS_MISMATCH;
    if (!mc_value_u64(item_value(it), it->vlen, &v))
        return DR_NON_NUMERIC;
    if (incr)
        v += delta;
    else
        v = delta > v ? 0 : v - delta;
    n = mc_u64toa(v, buf);
    if ((size_t)n <= it->vlen && !(it->bits & IT_REF) && !is_held(c, it)) {
        memcpy(item_value(it), buf, (size_t)n);
        memset(item_value(it) + n, ' ', it->vlen - (size_t)n);
        changed_in_place(it);
        store_touch(it);
    } else {
        struct item *nit = new_item(k, item_mcflags(it), item_expire(it), (size_t)n, 0);
        if (!nit)
            return DR_OOM;
        memcpy(item_value(nit), buf, (size_t)n);
        if (store_put_locked(s, k, nit))
            return DR_OOM;
        it = nit;
    }
    *val = v;
    *itp = it;
    return DR_OK;
}

static void arith_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct mc_stats *ws = wst(c);
    int incr = r->cmd == MC_INCR;
    struct skey k;
    struct item *it;
    uint64_t v = 0;
    enum delta_res res;
    char buf[24];
    int n;

    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    res = add_delta(c, &k, incr, r->num, 0, &v, &it);
    store_unlock(s, k.stripe);
    if (res == DR_OK) {
        if (incr)
            STAT_INC(ws->incr_hits);
        else
            STAT_INC(ws->decr_hits);
    } else if (res == DR_NOT_FOUND) {
        if (incr)
            STAT_INC(ws->incr_misses);
        else
            STAT_INC(ws->decr_misses);
    }
    if (r->noreply)
        return;
    switch (res) {
    case DR_OK:
        n = mc_u64toa(v, buf);
        buf[n++] = '\r';
        buf[n++] = '\n';
        out(c, buf, (size_t)n);
        break;
    case DR_NOT_FOUND:
        OUT_LIT(c, "NOT_FOUND\r\n");
        break;
    case DR_NON_NUMERIC:
        out_line(c, MC_ERR_NONNUM);
        break;
    default:
        OUT_LIT(c, "SERVER_ERROR out of memory\r\n");
        break;
    }
}

static void ma_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct mc_stats *ws = wst(c);
    int incr = r->m.mode != 'D' && r->m.mode != '-';
    uint64_t has = r->m.has;
    struct skey k;
    struct item *it;
    uint64_t v = 0;
    enum delta_res res;
    int created = 0;
    struct line l;
    char num[24];
    int nlen = 0;

    STAT_INC(ws->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    if ((has & MC_MF('N')) && make_room(c)) {
        out_line(c, MC_ERR_OOM);
        return;
    }
    store_lock(s, k.stripe);
    res = add_delta(c, &k, incr, r->m.delta, (has & MC_MF('C')) ? r->m.cas : 0, &v, &it);
    if (res == DR_NOT_FOUND && (has & MC_MF('N'))) {
        /* vivify with the initial value, no delta applied */
        v = r->m.initial;
        nlen = mc_u64toa(v, num);
        it = new_item(&k, 0, 0, (size_t)nlen, 0);
        if (it) {
            memcpy(item_value(it), num, (size_t)nlen);
            if (store_put_locked(s, &k, it))
                it = NULL;
        }
        res = it ? DR_OK : DR_OOM;
        created = 1;
    }
    if (res == DR_NON_NUMERIC || res == DR_OOM) {
        store_unlock(s, k.stripe);
        out_line(c, res == DR_OOM ? "SERVER_ERROR out of memory" : MC_ERR_NONNUM);
        return;
    }
    l.n = 0;
    if (res == DR_OK) {
        if (!created) {
            if (incr)
                STAT_INC(ws->incr_hits);
            else
                STAT_INC(ws->decr_hits);
        }
        if (has & MC_MF('E'))
            new_cas(s, &k, &it, r->m.new_cas);
        nlen = mc_u64toa(v, num);
        if (has & MC_MF('v')) {
            ln_put(&l, "VA ", 3);
            ln_u64(&l, (uint64_t)nlen);
        } else {
            ln_put(&l, "HD", 2);
        }
        for (int i = 2; i < r->ntok - 1; i++) {
            switch (r->tok[i].p[0]) {
            case 'c':
                ln_put(&l, " c", 2);
                ln_u64(&l, cas_of(s, &k, &it));
                break;
            case 't':
                ln_put(&l, " t", 2);
                ln_i64(&l, ttl_left(it, conn_now(c)));
                break;
            case 'T':
                it = set_exp(s, &k, it, mc_exptime_ms(r->m.ttl, conn_now(c)));
                break;
            case 'N':
                if (created)
                    it = set_exp(s, &k, it, mc_exptime_ms(r->m.vivify_ttl, conn_now(c)));
                break;
            case 'O':
                ln_put(&l, " ", 1);
                ln_put(&l, r->tok[i].p, r->tok[i].n);
                break;
            case 'k':
                ln_key(&l, r);
                break;
            }
        }
    } else {
        if (res == DR_NOT_FOUND) {
            if (incr)
                STAT_INC(ws->incr_misses);
            else
                STAT_INC(ws->decr_misses);
        }
        ln_put(&l, res == DR_NOT_FOUND ? "NF" : "EX", 2);
        ln_opaque_key(&l, r);
    }
    store_unlock(s, k.stripe);
    if (res == DR_OK && r->noreply && !created) /* q hides a hit, not a vivify */
        return;
    ln_put(&l, "\r\n", 2);
    if (res == DR_OK && (has & MC_MF('v'))) {
        ln_put(&l, num, (size_t)nlen);
        ln_put(&l, "\r\n", 2);
    }
    out(c, l.b, l.n);
}

/* ---- delete, touch ---- */

static void delete_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct skey k;
    int found;

    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    found = store_delete_locked(s, &k, conn_now(c));
    store_unlock(s, k.stripe);
    if (found)
        wst(c)->delete_hits++;
    else
        wst(c)->delete_misses++;
    if (!r->noreply)
        out_line(c, found ? "DELETED" : "NOT_FOUND");
}

static void md_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct mc_stats *ws = wst(c);
    uint64_t has = r->m.has;
    struct skey k;
    struct item *it;
    const char *code;
    struct line l;

    STAT_INC(ws->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (!it || ((has & MC_MF('I')) && it->type != OBJ_STRING)) {
        STAT_INC(ws->delete_misses);
        code = "NF";
    } else if ((has & MC_MF('C')) && item_cas_field(it) != r->m.cas) {
        STAT_INC(ws->delete_misses);
        code = "EX";
    } else if (has & MC_MF('I')) {
        /* invalidate: keep the value, mark it stale, new CAS, let a client win again */
        if (has & MC_MF('T'))
            it = set_exp(s, &k, it, mc_exptime_ms(r->m.ttl, conn_now(c)));
        it->bits = (uint8_t)((it->bits | IT_MC_STALE) & ~IT_MC_WON);
        new_cas(s, &k, &it, r->m.new_cas);
        code = "HD";
    } else {
        store_delete_locked(s, &k, conn_now(c));
        STAT_INC(ws->delete_hits);
        code = "HD";
    }
    store_unlock(s, k.stripe);
    if (code[0] == 'H' && r->noreply)
        return;
    l.n = 0;
    ln_put(&l, code, 2);
    ln_opaque_key(&l, r);
    ln_end(c, &l);
}

static void touch_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = find(s, &k, conn_now(c), NULL);
    if (it) {
        it = set_exp(s, &k, it, mc_exptime_ms(r->exptime, conn_now(c)));
        store_touch(it);
        it->enc |= ITEM_FETCHED; /* memcached's touch is a fetch with bump */
    }
    store_unlock(s, k.stripe);
    wst(c)->touch_cmds++;
    if (it)
        wst(c)->touch_hits++;
    else
        wst(c)->touch_misses++;
    if (!r->noreply)
        out_line(c, it ? "TOUCHED" : "NOT_FOUND");
}

/* ---- mg, me ---- */

static void mg_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    struct mc_stats *ws = wst(c);
    int64_t now = conn_now(c);
    uint64_t has = r->m.has;
    struct skey k;
    struct item *it;
    int expired, created = 0, won = 0, token_sent, fetched, ttl_set = 0;
    uint32_t idle;
    struct line l;

    STAT_INC(ws->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = find(s, &k, now, &expired);
    if (!it && (has & MC_MF('N'))) {
        struct item *old = store_lookup_write_locked(s, &k, now); /* another type: replaced */
        (void)old;
        it = new_item(&k, 0, 0, 0, 0);
        if (it && store_put_locked(s, &k, it))
            it = NULL;
        created = it != NULL;
    }
    if (!it) {
        miss(s, &k);
        store_unlock(s, k.stripe);
        if (has & MC_MF('T')) {
            STAT_INC(ws->touch_cmds);
            STAT_INC(ws->touch_misses);
        } else {
            STAT_INC(ws->get_cmds);
            STAT_INC(ws->get_misses);
            STAT_ADD(ws->get_expired, (uint64_t)expired);
        }
        if (r->noreply)
            return;
        l.n = 0;
        ln_put(&l, "EN", 2);
        ln_opaque_key(&l, r);
        ln_end(c, &l);
        return;
    }
    token_sent = (it->bits & IT_MC_WON) != 0;
    fetched = (it->enc & ITEM_FETCHED) != 0;
    idle = store_idle_seconds(it);
    l.n = 0;
    if (has & MC_MF('v')) {
        ln_put(&l, "VA ", 3);
        ln_u64(&l, it->vlen);
    } else {
        ln_put(&l, "HD", 2);
    }
    for (int i = 2; i < r->ntok - 1; i++) {
        switch (r->tok[i].p[0]) {
        case 'T':
            ttl_set = 1;
            it = set_exp(s, &k, it, mc_exptime_ms(r->m.ttl, now));
            break;
        case 'N':
            if (created) {
                it = set_exp(s, &k, it, mc_exptime_ms(r->m.vivify_ttl, now));
                won = 1;
            }
            break;
        case 'R': {
            int64_t exp = item_expire(it), rt = mc_exptime_ms(r->m.recache_ttl, now);
            if (!token_sent && !created && exp != 0 && exp < rt)
                won = 1;
            break;
        }
        case 's':
            ln_put(&l, " s", 2);
            ln_u64(&l, it->vlen);
            break;
        case 't':
            ln_put(&l, " t", 2);
            if (item_expire(it))
                ln_u64(&l, (uint32_t)ttl_left(it, now)); /* memcached prints it unsigned */
            else
                ln_put(&l, "-1", 2);
            break;
        case 'c':
            ln_put(&l, " c", 2);
            ln_u64(&l, cas_of(s, &k, &it));
            break;
        case 'f':
            ln_put(&l, " f", 2);
            ln_u64(&l, item_mcflags(it));
            break;
        case 'l':
            ln_put(&l, " l", 2);
            ln_u64(&l, idle);
            break;
        case 'h':
            ln_put(&l, fetched ? " h1" : " h0", 3);
            break;
        case 'O':
            ln_put(&l, " ", 1);
            ln_put(&l, r->tok[i].p, r->tok[i].n);
            break;
        case 'k':
            ln_key(&l, r);
            break;
        }
    }
    if (token_sent)
        ln_put(&l, " Z", 2);
    if (it->bits & IT_MC_STALE) {
        ln_put(&l, " X", 2);
        if (!token_sent)
            won = 1;
    }
    if (won) {
        ln_put(&l, " W", 2);
        it->bits |= IT_MC_WON;
    }
    ln_end(c, &l);
    if (has & MC_MF('v'))
        out_value(c, it);
    ((struct mc_conn *)c->mc)->mg_cur = it;
    if (!(has & MC_MF('u')))
        hit(s, &k, it);
    else
        s->stripes[k.stripe].hits++;
    store_unlock(s, k.stripe);
    if (ttl_set) {
        STAT_INC(ws->touch_cmds);
        STAT_INC(ws->touch_hits);
    } else {
        STAT_INC(ws->get_cmds);
        STAT_INC(ws->get_hits);
    }
}

static void me_command(struct conn *c, struct mc_req *r)
{
    struct store *s = conn_store(c);
    int64_t now = conn_now(c);
    struct skey k;
    struct item *it;
    struct line l;

    wst(c)->meta_cmds++;
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = find(s, &k, now, NULL);
    if (!it) {
        store_unlock(s, k.stripe);
        OUT_LIT(c, "EN\r\n");
        return;
    }
    l.n = 0;
    ln_put(&l, "ME ", 3);
    ln_put(&l, r->key.p, r->key.n); /* memcached re-encodes only keys stored as binary */
    /* memcached 1.6 prints exp as current_time - exptime */
    ln_str(&l, " exp=");
    ln_i64(&l, item_expire(it) ? -ttl_left(it, now) : -1);
    ln_str(&l, " la=");
    ln_u64(&l, store_idle_seconds(it));
    ln_str(&l, " cas=");
    ln_u64(&l, item_cas_field(it));
    ln_str(&l, it->enc & ITEM_FETCHED ? " fetch=yes" : " fetch=no");
    ln_str(&l, " cls=1 size=");
    ln_u64(&l, item_alloc_size(it));
    store_unlock(s, k.stripe);
    ln_end(c, &l);
}

/* ---- flush_all ---- */

static void flush_now(struct conn *c)
{
    atomic_store(&g_flush_at_ms, 0);
    store_flush(conn_store(c), MC_DB);
}

/* Run a delayed flush_all whose time has come. */
static void flush_check(struct conn *c)
{
    int64_t at = atomic_load_explicit(&g_flush_at_ms, memory_order_relaxed);

    if (TC_UNLIKELY(at) && conn_now(c) >= at &&
        atomic_compare_exchange_strong(&g_flush_at_ms, &at, 0)) {
        if (atomic_load_explicit(&aof_on, memory_order_relaxed))
            aof_mc_flush(c);
        else
            store_flush(conn_store(c), MC_DB);
    }
}

static void flush_all_command(struct conn *c, struct mc_req *r)
{
    int64_t at = r->exptime > 0 ? mc_exptime_ms(r->exptime, conn_now(c)) : 0;

    wst(c)->flush_cmds++;
    if (at > MC_EXPIRED && at > conn_now(c))
        atomic_store(&g_flush_at_ms, at);
    else
        flush_now(c);
    if (!r->noreply)
        OUT_LIT(c, "OK\r\n");
}

/* ---- stats ---- */

static void sum_stats(struct mc_stats *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < g_srv->nworkers; i++) {
#define X(f) t->f += __atomic_load_n(&g_stats[i].f, __ATOMIC_RELAXED);
        MC_STAT_FIELDS(X)
#undef X
    }
}

static void stat_line(struct conn *c, const char *name, const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof(line), "STAT %s ", name);
    va_list ap;

    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 3)
        n = (int)sizeof(line) - 3;
    line[n++] = '\r';
    line[n++] = '\n';
    out(c, line, (size_t)n);
}

#define STAT_U(c, name, v) stat_line((c), (name), "%llu", (unsigned long long)(v))

static uint64_t limit_maxbytes(void)
{
    if (cfg.maxmemory > 0)
        return (uint64_t)cfg.maxmemory;
    return (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void stats_general(struct conn *c)
{
    struct srv *srv = c->w->srv;
    struct mc_stats t;
    struct store_totals st;
    struct rusage ru;
    uint64_t rejected = 0;
    int64_t now = conn_now(c);
    int curr = atomic_load(&g_curr_conns);
    static const char *const zeros1[] = {
        "slab_reassign_rescues", "slab_reassign_chunk_rescues", "slab_reassign_evictions_nomem",
        "slab_reassign_inline_reclaim", "slab_reassign_busy_items", "slab_reassign_busy_deletes",
        "slab_reassign_running", "slabs_moved", "lru_crawler_running", "lru_crawler_starts",
        "lru_maintainer_juggles", "malloc_fails", "log_worker_dropped", "log_worker_written",
        "log_watcher_skipped", "log_watcher_sent", "log_watchers", "unexpected_napi_ids",
        "round_robin_fallback"};
    static const char *const zeros2[] = {
        "reclaimed", "crawler_reclaimed", "crawler_items_checked", "lrutail_reflocked",
        "moves_to_cold", "moves_to_warm", "moves_within_lru", "direct_reclaims",
        "lru_bumps_dropped"};

    sum_stats(&t);
    store_totals(srv->store, &st);
    for (int i = 0; i < srv->nworkers; i++)
        rejected += __atomic_load_n(&srv->workers[i].st.rejected, __ATOMIC_RELAXED);
    pthread_mutex_lock(&g_base_lock);
#define X(f) t.f -= g_base.f;
    MC_STAT_FIELDS(X)
#undef X
    st.stored -= g_store_base.stored;
    st.evicted -= g_store_base.evicted;
    st.expired_unfetched -= g_store_base.expired_unfetched;
    st.evicted_unfetched -= g_store_base.evicted_unfetched;
    pthread_mutex_unlock(&g_base_lock);
    getrusage(RUSAGE_SELF, &ru);

    STAT_U(c, "pid", getpid());
    STAT_U(c, "uptime", (now - srv->start_ms) / 1000);
    STAT_U(c, "time", now / 1000);
    stat_line(c, "version", "%s", MC_VERSION_STR);
    stat_line(c, "libevent", "%s", "none");
    STAT_U(c, "pointer_size", sizeof(void *) * 8);
    stat_line(c, "rusage_user", "%ld.%06ld", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
    stat_line(c, "rusage_system", "%ld.%06ld", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    STAT_U(c, "max_connections", cfg.maxclients);
    STAT_U(c, "curr_connections", curr);
    STAT_U(c, "total_connections", t.conns_total);
    STAT_U(c, "rejected_connections", rejected);
    STAT_U(c, "connection_structures", curr);
    STAT_U(c, "response_obj_oom", 0);
    STAT_U(c, "response_obj_count", 0);
    STAT_U(c, "response_obj_bytes", 0);
    STAT_U(c, "read_buf_count", 0);
    STAT_U(c, "read_buf_bytes", 0);
    STAT_U(c, "read_buf_bytes_free", 0);
    STAT_U(c, "read_buf_oom", 0);
    STAT_U(c, "reserved_fds", 0);
    STAT_U(c, "cmd_get", t.get_cmds);
    STAT_U(c, "cmd_set", t.set_cmds);
    STAT_U(c, "cmd_flush", t.flush_cmds);
    STAT_U(c, "cmd_touch", t.touch_cmds);
    STAT_U(c, "cmd_meta", t.meta_cmds);
    STAT_U(c, "get_hits", t.get_hits);
    STAT_U(c, "get_misses", t.get_misses);
    STAT_U(c, "get_expired", t.get_expired);
    STAT_U(c, "get_flushed", 0);
    STAT_U(c, "delete_misses", t.delete_misses);
    STAT_U(c, "delete_hits", t.delete_hits);
    STAT_U(c, "incr_misses", t.incr_misses);
    STAT_U(c, "incr_hits", t.incr_hits);
    STAT_U(c, "decr_misses", t.decr_misses);
    STAT_U(c, "decr_hits", t.decr_hits);
    STAT_U(c, "cas_misses", t.cas_misses);
    STAT_U(c, "cas_hits", t.cas_hits);
    STAT_U(c, "cas_badval", t.cas_badval);
    STAT_U(c, "touch_hits", t.touch_hits);
    STAT_U(c, "touch_misses", t.touch_misses);
    STAT_U(c, "store_too_large", t.too_large);
    STAT_U(c, "store_no_memory", t.no_memory);
    STAT_U(c, "auth_cmds", 0);
    STAT_U(c, "auth_errors", 0);
    STAT_U(c, "bytes_read", t.bytes_read);
    STAT_U(c, "bytes_written", t.bytes_written);
    STAT_U(c, "limit_maxbytes", limit_maxbytes());
    STAT_U(c, "accepting_conns", 1);
    STAT_U(c, "listen_disabled_num", 0);
    STAT_U(c, "time_in_listen_disabled_us", 0);
    STAT_U(c, "threads", srv->nworkers);
    STAT_U(c, "conn_yields", 0);
    STAT_U(c, "hash_power_level", 0);
    STAT_U(c, "hash_bytes", 0);
    STAT_U(c, "hash_is_expanding", 0);
    for (size_t i = 0; i < sizeof(zeros1) / sizeof(zeros1[0]); i++)
        STAT_U(c, zeros1[i], 0);
    STAT_U(c, "bytes", st.mem > 0 ? st.mem : 0);
    STAT_U(c, "curr_items", store_dbsize(srv->store, MC_DB));
    STAT_U(c, "total_items", st.stored);
    STAT_U(c, "slab_global_page_pool", 0);
    STAT_U(c, "expired_unfetched", st.expired_unfetched);
    STAT_U(c, "evicted_unfetched", st.evicted_unfetched);
    STAT_U(c, "evicted_active", 0);
    STAT_U(c, "evictions", st.evicted);
    for (size_t i = 0; i < sizeof(zeros2) / sizeof(zeros2[0]); i++)
        STAT_U(c, zeros2[i], 0);
    OUT_LIT(c, "END\r\n");
}

static void stats_settings(struct conn *c)
{
    struct srv *srv = c->w->srv;

    STAT_U(c, "maxbytes", limit_maxbytes());
    STAT_U(c, "maxconns", cfg.maxclients);
    STAT_U(c, "tcpport", cfg.memcache_port);
    STAT_U(c, "udpport", 0);
    stat_line(c, "inter", "%s", cfg.bind[0] ? cfg.bind : "127.0.0.1");
    STAT_U(c, "verbosity", atomic_load(&g_verbosity));
    STAT_U(c, "oldest", 0);
    stat_line(c, "evictions", "%s", cfg.maxmemory_policy == MM_NOEVICTION ? "off" : "on");
    stat_line(c, "domain_socket", "%s", "NULL");
    STAT_U(c, "umask", 700);
    stat_line(c, "shutdown_command", "%s", "no");
    stat_line(c, "growth_factor", "%s", "1.25");
    STAT_U(c, "chunk_size", 48);
    STAT_U(c, "num_threads", srv->nworkers);
    STAT_U(c, "num_threads_per_udp", srv->nworkers);
    stat_line(c, "stat_key_prefix", "%s", ":");
    stat_line(c, "detail_enabled", "%s", atomic_load(&g_detail) ? "yes" : "no");
    STAT_U(c, "reqs_per_event", 20);
    stat_line(c, "cas_enabled", "%s", "yes");
    STAT_U(c, "tcp_backlog", cfg.tcp_backlog);
    stat_line(c, "binding_protocol", "%s", "ascii");
    stat_line(c, "auth_enabled_sasl", "%s", "no");
    stat_line(c, "auth_enabled_ascii", "%s", "no");
    STAT_U(c, "item_size_max", cfg.item_size_max);
    stat_line(c, "maxconns_fast", "%s", "yes");
    STAT_U(c, "hashpower_init", 0);
    stat_line(c, "slab_reassign", "%s", "no");
    STAT_U(c, "slab_automove", 0);
    stat_line(c, "slab_automove_ratio", "%s", "0.80");
    STAT_U(c, "slab_automove_window", 30);
    STAT_U(c, "slab_chunk_max", cfg.item_size_max / 2);
    stat_line(c, "lru_crawler", "%s", "yes");
    STAT_U(c, "lru_crawler_sleep", 100);
    STAT_U(c, "lru_crawler_tocrawl", 0);
    STAT_U(c, "tail_repair_time", 0);
    stat_line(c, "flush_enabled", "%s", "yes");
    stat_line(c, "dump_enabled", "%s", "yes");
    stat_line(c, "hash_algorithm", "%s", "xxh3");
    stat_line(c, "lru_maintainer_thread", "%s", "no");
    stat_line(c, "lru_segmented", "%s", "no");
    STAT_U(c, "hot_lru_pct", 20);
    STAT_U(c, "warm_lru_pct", 40);
    stat_line(c, "hot_max_factor", "%s", "0.20");
    stat_line(c, "warm_max_factor", "%s", "2.00");
    stat_line(c, "temp_lru", "%s", "no");
    STAT_U(c, "temporary_ttl", 61);
    STAT_U(c, "idle_timeout", cfg.timeout);
    STAT_U(c, "watcher_logbuf_size", 262144);
    STAT_U(c, "worker_logbuf_size", 65536);
    STAT_U(c, "read_buf_mem_limit", 0);
    stat_line(c, "track_sizes", "%s", "no");
    stat_line(c, "inline_ascii_response", "%s", "no");
    STAT_U(c, "ext_item_size", 512);
    STAT_U(c, "ext_item_age", 4294967295u);
    STAT_U(c, "ext_low_ttl", 0);
    STAT_U(c, "ext_recache_rate", 2000);
    STAT_U(c, "ext_wbuf_size", 4194304);
    STAT_U(c, "ext_compact_under", 0);
    STAT_U(c, "ext_drop_under", 0);
    STAT_U(c, "ext_max_sleep", 1000000);
    stat_line(c, "ext_max_frag", "%s", "0.80");
    stat_line(c, "slab_automove_freeratio", "%s", "0.010");
    stat_line(c, "ext_drop_unread", "%s", "no");
    stat_line(c, "ssl_enabled", "%s", "no");
    stat_line(c, "ssl_chain_cert", "%s", "(null)");
    stat_line(c, "ssl_key", "%s", "(null)");
    STAT_U(c, "ssl_verify_mode", 0);
    STAT_U(c, "ssl_keyformat", 1);
    stat_line(c, "ssl_ciphers", "%s", "NULL");
    stat_line(c, "ssl_ca_cert", "%s", "NULL");
    STAT_U(c, "ssl_wbuf_size", 16384);
    stat_line(c, "ssl_session_cache", "%s", "no");
    stat_line(c, "ssl_kernel_tls", "%s", "no");
    stat_line(c, "ssl_min_version", "%s", "tlsv1.2");
    stat_line(c, "num_napi_ids", "%s", "(null)");
    stat_line(c, "memory_file", "%s", "(null)");
    OUT_LIT(c, "END\r\n");
}

/* items and slabs: the whole keyspace of database 0 as one class, "1". */
static void stats_items(struct conn *c, int slabs)
{
    struct srv *srv = c->w->srv;
    uint64_t n = store_dbsize(srv->store, MC_DB);
    struct mc_stats t;
    struct store_totals st;
    char name[64];
    static const char *const item_fields[] = {
        "number", "number_hot", "number_warm", "number_cold", "age_hot", "age_warm", "age",
        "mem_requested", "evicted", "evicted_nonzero", "evicted_time", "outofmemory",
        "tailrepairs", "reclaimed", "expired_unfetched", "evicted_unfetched", "evicted_active",
        "crawler_reclaimed", "crawler_items_checked", "lrutail_reflocked", "moves_to_cold",
        "moves_to_warm", "moves_within_lru", "direct_reclaims", "hits_to_hot", "hits_to_warm",
        "hits_to_cold", "hits_to_temp"};

    sum_stats(&t);
    store_totals(srv->store, &st);
    if (slabs) {
        if (n) {
            uint64_t mem = st.mem > 0 ? (uint64_t)st.mem : 0;
            uint64_t chunk = mem / n;
            STAT_U(c, "1:chunk_size", chunk);
            STAT_U(c, "1:chunks_per_page", chunk ? 1048576 / chunk : 0);
            STAT_U(c, "1:total_pages", (mem + 1048575) / 1048576);
            STAT_U(c, "1:total_chunks", n);
            STAT_U(c, "1:used_chunks", n);
            STAT_U(c, "1:free_chunks", 0);
            STAT_U(c, "1:free_chunks_end", 0);
            STAT_U(c, "1:get_hits", t.get_hits);
            STAT_U(c, "1:cmd_set", t.set_cmds);
            STAT_U(c, "1:delete_hits", t.delete_hits);
            STAT_U(c, "1:incr_hits", t.incr_hits);
            STAT_U(c, "1:decr_hits", t.decr_hits);
            STAT_U(c, "1:cas_hits", t.cas_hits);
            STAT_U(c, "1:cas_badval", t.cas_badval);
            STAT_U(c, "1:touch_hits", t.touch_hits);
        }
        STAT_U(c, "active_slabs", n ? 1 : 0);
        STAT_U(c, "total_malloced", st.mem > 0 ? st.mem : 0);
        OUT_LIT(c, "END\r\n");
        return;
    }
    if (n) {
        for (size_t i = 0; i < sizeof(item_fields) / sizeof(item_fields[0]); i++) {
            const char *f = item_fields[i];
            uint64_t v = 0;
            if (!strcmp(f, "number") || !strcmp(f, "number_cold"))
                v = n;
            else if (!strcmp(f, "mem_requested"))
                v = st.mem > 0 ? (uint64_t)st.mem : 0;
            else if (!strcmp(f, "evicted"))
                v = st.evicted;
            else if (!strcmp(f, "outofmemory"))
                v = t.no_memory;
            else if (!strcmp(f, "expired_unfetched"))
                v = st.expired_unfetched;
            else if (!strcmp(f, "evicted_unfetched"))
                v = st.evicted_unfetched;
            else if (!strcmp(f, "hits_to_cold"))
                v = t.get_hits;
            snprintf(name, sizeof(name), "items:1:%s", f);
            STAT_U(c, name, v);
        }
    }
    OUT_LIT(c, "END\r\n");
}

static void stats_conns(struct conn *c)
{
    struct srv *srv = c->w->srv;
    char name[64];

    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *o = w->conns; o; o = o->next) {
            if (o->proto != PROTO_MC)
                continue;
            snprintf(name, sizeof(name), "%d:addr", o->fd);
            stat_line(c, name, "tcp:%s", o->addr);
            snprintf(name, sizeof(name), "%d:listen_addr", o->fd);
            stat_line(c, name, "tcp:%s", o->laddr);
            snprintf(name, sizeof(name), "%d:state", o->fd);
            stat_line(c, name, "%s", o == c ? "conn_parse_cmd" : "conn_waiting");
            snprintf(name, sizeof(name), "%d:secs_since_last_cmd", o->fd);
            STAT_U(c, name, (conn_now(c) - o->last_ms) / 1000);
        }
        pthread_mutex_unlock(&w->list_lock);
    }
    OUT_LIT(c, "END\r\n");
}

static void stats_reset(struct conn *c)
{
    struct store_totals st;

    store_totals(c->w->srv->store, &st);
    pthread_mutex_lock(&g_base_lock);
    sum_stats(&g_base);
    g_store_base.stored = st.stored;
    g_store_base.evicted = st.evicted;
    g_store_base.expired_unfetched = st.expired_unfetched;
    g_store_base.evicted_unfetched = st.evicted_unfetched;
    pthread_mutex_unlock(&g_base_lock);
}

static int tok_eq(const struct mc_tok *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0;
}

static void stats_command(struct conn *c, struct mc_req *r)
{
    const struct mc_tok *sub = &r->tok[1];

    if (r->ntok == 2) {
        stats_general(c);
    } else if (tok_eq(sub, "reset")) {
        stats_reset(c);
        OUT_LIT(c, "RESET\r\n");
    } else if (tok_eq(sub, "detail")) {
        if (r->ntok >= 4 && tok_eq(&r->tok[2], "on")) {
            atomic_store(&g_detail, 1);
            OUT_LIT(c, "OK\r\n");
        } else if (r->ntok >= 4 && tok_eq(&r->tok[2], "off")) {
            atomic_store(&g_detail, 0);
            OUT_LIT(c, "OK\r\n");
        } else if (r->ntok >= 4 && tok_eq(&r->tok[2], "dump")) {
            OUT_LIT(c, "END\r\n");
        } else {
            out_line(c, "CLIENT_ERROR usage: stats detail on|off|dump");
        }
    } else if (tok_eq(sub, "settings")) {
        stats_settings(c);
    } else if (tok_eq(sub, "items")) {
        stats_items(c, 0);
    } else if (tok_eq(sub, "slabs")) {
        stats_items(c, 1);
    } else if (tok_eq(sub, "sizes")) {
        OUT_LIT(c, "STAT sizes_status disabled\r\nEND\r\n");
    } else if (tok_eq(sub, "conns")) {
        stats_conns(c);
    } else if (tok_eq(sub, "cachedump")) {
        uint32_t id, limit;
        if (r->ntok < 5)
            out_line(c, "CLIENT_ERROR bad command line");
        else if (!mc_tok_u32(&r->tok[2], &id) || !mc_tok_u32(&r->tok[3], &limit))
            out_line(c, MC_ERR_FORMAT);
        else if (id >= 64)
            out_line(c, "CLIENT_ERROR Illegal slab id");
        else
            OUT_LIT(c, "END\r\n");
    } else {
        OUT_LIT(c, "ERROR\r\n");
    }
}

/* ---- dispatch ---- */

static void execute(struct conn *c, struct mc_req *r)
{
    if (TC_UNLIKELY(r->err != NULL)) {
        struct mc_stats *ws = wst(c);
        if (r->too_large) {
            STAT_INC(ws->too_large);
            if (r->cmd == MC_SET || r->cmd == MC_MS) {
                /* memcached drops the old value rather than leave it stale */
                struct store *s = conn_store(c);
                struct skey k;
                store_key(s, &k, MC_DB, r->key.p, r->key.n);
                store_lock(s, k.stripe);
                store_delete_locked(s, &k, conn_now(c));
                store_unlock(s, k.stripe);
            }
        }
        if (r->cmd == MC_FLUSH_ALL)
            STAT_INC(ws->flush_cmds);
        if (r->data && (r->cmd < MC_MG || r->cmd == MC_MS))
            STAT_INC(ws->set_cmds); /* a bad data chunk still counts as a set, as in memcached */
        if (is_meta(r->cmd) || !r->noreply)
            out_line(c, r->err);
        return;
    }
    switch (r->cmd) {
    case MC_GET: case MC_GETS: case MC_GAT: case MC_GATS:
        get_command(c, r);
        break;
    case MC_SET: case MC_ADD: case MC_REPLACE: case MC_APPEND: case MC_PREPEND: case MC_CAS:
        update_command(c, r);
        break;
    case MC_INCR: case MC_DECR:
        arith_command(c, r);
        break;
    case MC_DELETE:
        delete_command(c, r);
        break;
    case MC_TOUCH:
        touch_command(c, r);
        break;
    case MC_FLUSH_ALL:
        flush_all_command(c, r);
        break;
    case MC_VERSION:
        OUT_LIT(c, "VERSION " MC_VERSION_STR "\r\n");
        break;
    case MC_VERBOSITY:
        atomic_store(&g_verbosity, r->num > 2 ? 2 : (int)r->num);
        if (!r->noreply)
            OUT_LIT(c, "OK\r\n");
        break;
    case MC_QUIT:
        c->flags |= CONN_CLOSE_AFTER_REPLY;
        break;
    case MC_STATS:
        stats_command(c, r);
        break;
    case MC_MG:
        mg_command(c, r);
        break;
    case MC_MS:
        ms_command(c, r);
        break;
    case MC_MD:
        md_command(c, r);
        break;
    case MC_MA:
        ma_command(c, r);
        break;
    case MC_MN:
        OUT_LIT(c, "MN\r\n");
        break;
    case MC_ME:
        me_command(c, r);
        break;
    default:
        break;
    }
}

void cmd_mc_input(struct conn *c)
{
    struct mc_conn *m = c->mc;
    size_t out_before;

    if (TC_UNLIKELY(!m)) {
        m = calloc(1, sizeof(*m));
        if (!m) {
            c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        c->mc = m;
        atomic_fetch_add(&g_curr_conns, 1);
        STAT_INC(wst(c)->conns_total);
    }
    flush_check(c);
    out_before = conn_pending(c);
    while (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP))) {
        const char *base = c->rbuf.data + c->rbuf.rpos;
        size_t used = 0;
        int st;

        if (buf_len(&c->rbuf) == 0)
            break;
        if (conn_pending(c) > conn_pause_bytes(c)) {
            c->flags |= CONN_PAUSED_READ; /* after_io resumes once the output drains */
            break;
        }
        st = mc_parse(&m->p, base, buf_len(&c->rbuf), (size_t)cfg.item_size_max, &m->r, &used);
        c->rbuf.rpos += used;
        STAT_ADD(wst(c)->bytes_read, used);
        if (st == MC_ERR_LINE_TOO_LONG) {
            out_line(c, MC_ERR_LINE);
            c->flags |= CONN_CLOSE_AFTER_REPLY;
            c->rbuf.rpos = c->rbuf.wpos;
            break;
        }
        if (st == MC_NEED_MORE)
            break;
        if (m->r.cmd == MC_NONE && !m->r.err)
            continue;
        STAT_INC(c->w->st.commands);
        if ((m->r.cmd >= MC_SET && m->r.cmd <= MC_FLUSH_ALL) || m->r.cmd == MC_GAT ||
            m->r.cmd == MC_GATS || (m->r.cmd >= MC_MS && m->r.cmd <= MC_MA))
            STAT_INC(c->w->st.dirty);
        c->tot_cmds++;
        m->mg_prev = m->mg_cur;
        m->mg_cur = NULL;
        if (TC_UNLIKELY(atomic_load_explicit(&aof_on, memory_order_relaxed)))
            aof_mc_exec(c, &m->r, execute);
        else
            execute(c, &m->r);
    }
    if (c->rbuf.rpos == c->rbuf.wpos)
        c->rbuf.rpos = c->rbuf.wpos = 0;
    STAT_ADD(wst(c)->bytes_written, conn_pending(c) - out_before);
}

void cmd_mc_open(struct conn *c)
{
    c->resp = 2;
    c->authed = config_str_empty(cfg.requirepass);
}

void cmd_mc_close(struct conn *c)
{
    free(c->argv);
    c->argv = NULL;
    if (c->mc) {
        free(c->mc);
        c->mc = NULL;
        atomic_fetch_sub(&g_curr_conns, 1);
    }
}
