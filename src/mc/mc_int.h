/* Internals of the memcached room (src/mc only): per-connection state, per-worker counters,
 * output helpers and the handlers each file provides. Every handler runs on the worker that
 * owns the connection, with r borrowed from the connection's input until it returns; it locks
 * the stripe of each key it touches (store_lock/unlock; the _locked helpers need that lock)
 * and composes its reply into c->wbuf with src/proto/mc_compose.h. A key holding another
 * Redis type is a miss for reads and is replaced by set (memcached sees database 0). */
#ifndef TC_MC_INT_H
#define TC_MC_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "cmd/notify.h"
#include "core/util.h"
#include "mc/mc_cmd.h"
#include "net/conn.h"
#include "net/worker.h"
#include "proto/mc.h"
#include "proto/mc_bin.h"
#include "proto/mc_compose.h"
#include "store/store.h"
#include "store/strval.h"

#define MC_VERSION_STR "1.6.18" /* the memcached release whose behaviour we follow */
#define MC_DB 0

/* Per-connection state (c->mc), owned by the connection's worker. */
struct mc_conn {
    struct mc_parser p; /* resumable parser state */
    struct mc_req r;    /* the request being run */
    /* The item an mg hit of the previous / current command returned: in memcached its
     * response still holds a reference while the next command runs, which keeps incr/decr
     * from rewriting that item in place (so the value is not space padded). Compared only. */
    const struct item *mg_prev, *mg_cur;
    uint8_t proto;          /* MC_PROTO_*: chosen by the first byte, as memcached does */
    uint8_t sasl_ok;        /* binary SASL authentication succeeded */
    uint8_t sasl_step;      /* SASL PLAIN started without credentials: SASL_STEP brings them */
    uint8_t auth_need;      /* text: memcache-auth-file is set and the client has not logged in */
    uint32_t auth_len;      /* text auth: bytes of the "user pass" block awaited (0: none) */
    struct mcb_parser bp;   /* binary protocol: resumable parser state */
    struct mcb_req br;      /* binary protocol: the request being run */
    uint8_t watching; /* a "watch" log stream (mc_watch.c) */
    uint8_t yielded;  /* -R: queued to run the rest of its input at the end of the turn */
    uint8_t nread;    /* a storage command's line is in, its data not yet ("stats conns"
                       * reads it racily from another worker) */
};
enum { MC_PROTO_UNKNOWN = 0, MC_PROTO_TEXT, MC_PROTO_BINARY };

#define MC_STAT_FIELDS(X)                                                                      \
    X(get_cmds) X(get_hits) X(get_misses) X(get_expired) X(set_cmds) X(flush_cmds)           \
    X(touch_cmds) X(touch_hits) X(touch_misses) X(meta_cmds) X(delete_hits) X(delete_misses) \
    X(incr_hits) X(incr_misses) X(decr_hits) X(decr_misses) X(cas_hits) X(cas_misses)        \
    X(cas_badval) X(too_large) X(no_memory) X(bytes_read) X(bytes_written) X(conns_total)    \
    X(auth_cmds) X(auth_errors) X(idle_kicks) X(get_flushed) X(reclaimed) \
    X(conn_yields)

/* memcached's per slab class counters ("stats items", "stats slabs"), by the class of the
 * item the command met or stored (mc_class_of). */
#define MC_CLASSES 64 /* memcached's MAX_NUMBER_OF_SLAB_CLASSES: ids 1..63 */
enum {
    MC_CLS_GET_HITS, MC_CLS_CMD_SET, MC_CLS_DELETE_HITS, MC_CLS_INCR_HITS, MC_CLS_DECR_HITS,
    MC_CLS_CAS_HITS, MC_CLS_CAS_BADVAL, MC_CLS_TOUCH_HITS, MC_CLS_RECLAIMED, MC_CLS_OOM,
    MC_CLS_NFIELDS
};

/* Counters of one worker, written by that worker only (STAT_INC), summed racily when read. */
struct mc_stats {
#define X(f) uint64_t f;
    MC_STAT_FIELDS(X)
#undef X
    uint64_t cls[MC_CLASSES][MC_CLS_NFIELDS]; /* per class, [0] unused */
} __attribute__((aligned(64)));

/* The slab classes memcached would make from -n, -f, -I and slab_chunk_max (mc_stats.c,
 * built by mc_classes_setup before the workers start): chunk size of class i (1..mc_nclasses,
 * the last is slab_chunk_max, which also takes larger, chunked items). */
extern uint32_t mc_class_size[MC_CLASSES];
extern int mc_nclasses;
void mc_classes_setup(void);
/* The class of an item of ntotal bytes (memcached's slabs_clsid; 0 only before setup). */
static inline int mc_class_of(size_t ntotal)
{
    int lo = 1, hi = mc_nclasses;

    if (ntotal > mc_class_size[hi])
        return hi;
    while (lo < hi) { /* the first class whose chunk holds ntotal */
        int mid = (lo + hi) / 2;
        if (mc_class_size[mid] >= ntotal)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
/* An item's size as memcached allocates it: its 48-byte header, key and NUL, the flags (when
 * not 0), the data with its CRLF, and the CAS value unless -C. */
static inline size_t mc_item_total(size_t nkey, uint32_t flags, size_t vlen)
{
    return 48 + nkey + 1 + (flags ? 4 : 0) + vlen + 2 + (mc_cfg.cas_enabled ? 8 : 0);
}

/* Set once by mc_cmd_setup (main thread, before workers start), then read-only. */
extern struct srv *mc_srv;
extern struct mc_stats *mc_wstats; /* one per worker */
/* Shared by every worker (atomics). */
extern _Atomic int mc_curr_conns; /* open memcached connections */
extern _Atomic int mc_verbosity;  /* "verbosity" level, reported by stats settings */

static inline struct mc_stats *mc_ws(struct conn *c)
{
    return &mc_wstats[c->w->idx];
}
/* Count field (MC_CLS_*) for the class of an item of ntotal bytes. */
static inline void mc_cls_inc(struct conn *c, size_t ntotal, int field)
{
    STAT_INC(mc_ws(c)->cls[mc_class_of(ntotal)][field]);
}
static inline struct store *mc_store(struct conn *c)
{
    return c->w->srv->store;
}
static inline int64_t mc_now(struct conn *c)
{
    return c->w->now_ms;
}
static inline size_t mc_it_total(struct item *it)
{
    return mc_item_total(item_klen(it), item_mcflags(it), item_vlen(it));
}
/* An item's cas unique as memcached shows and compares it: 0 with -C (CAS disabled). */
static inline uint64_t mc_item_cas(struct item *it)
{
    return mc_cfg.cas_enabled ? item_cas_field(it) : 0;
}
#define MC_CAS_OUT(expr) (mc_cfg.cas_enabled ? (expr) : 0)

/* 1 when it is the item a previous command's mg reply still holds (see struct mc_conn). */
static inline int mc_pinned(struct conn *c, const struct item *it)
{
    return ((struct mc_conn *)c->mc)->mg_prev == it;
}

/* -C (no CAS): the second of the last flush_all, memcached's oldest_live (0: none). Without
 * CAS values memcached cannot tell an item stored in that very second after the flush from
 * one stored before it, and treats both as flushed: so does mc_find_locked. */
extern _Atomic int64_t mc_nocas_flush_s;

/* Keys a flush_all removed, per stripe (hashes; mc_cmd.c), each guarded by its stripe's
 * lock: a read that misses one counts get_flushed, a store over one counts reclaimed, as
 * memcached counts meeting an item older than the flush. Freed when the last one is taken. */
struct mc_ghosts {
    uint32_t *h;  /* open addressing, 0 empty, UINT32_MAX taken */
    uint32_t cap; /* slots (a power of two), 0 when h is NULL */
    uint32_t n;   /* ghosts left */
};
extern struct mc_ghosts *mc_ghosts; /* one per stripe */
int mc_ghost_take_slow(struct mc_ghosts *g, const struct skey *k);
/* 1 when k was removed by a flush_all and not met since (then it is forgotten). Under k's
 * stripe lock. */
static inline int mc_ghost_take_locked(const struct skey *k)
{
    struct mc_ghosts *g = &mc_ghosts[k->stripe];
    return TC_UNLIKELY(g->n != 0) && k->db == MC_DB && mc_ghost_take_slow(g, k);
}

/* k's live string item (strval_find_locked), or NULL; under -C an item last accessed no later
 * than the flush_all's second once that second has come is flushed now (counted in
 * get_flushed), as memcached's item_is_flushed does. Under the lock. */
static inline struct item *mc_find_locked(struct conn *c, struct store *s, const struct skey *k,
                                          int64_t now, int *expired)
{
    struct item *it = strval_find_locked(s, k, now, expired);
    int64_t f;

    if (TC_UNLIKELY(mc_ghost_take_locked(k)) && !it) /* found live: stored since the flush */
        STAT_INC(mc_ws(c)->get_flushed);
    if (TC_LIKELY(mc_cfg.cas_enabled) || !it ||
        !(f = atomic_load_explicit(&mc_nocas_flush_s, memory_order_relaxed)) ||
        f > now / 1000 || now / 1000 - (int64_t)store_idle_seconds(it) > f)
        return it;
    store_delete_locked(s, k, now);
    STAT_INC(mc_ws(c)->get_flushed);
    return NULL;
}

/* ---- output into c->wbuf: a buffer that cannot grow closes the connection ---- */
static inline void mc_check(struct conn *c, int rc)
{
    if (rc)
        c->flags |= CONN_CLOSE_ASAP;
}
static inline void mc_out_line(struct conn *c, const char *s)
{
    mc_check(c, mc_compose_line(&c->wbuf, s));
}
static inline void mc_out_meta(struct conn *c, struct mc_line *l)
{
    mc_check(c, mc_line_end(&c->wbuf, l));
}
/* The value block of it (its bytes, referenced when large, and CRLF). Under the lock. */
void mc_out_value(struct conn *c, struct item *it);

/* ---- store steps shared by the handlers, under k's stripe lock ---- */

/* Set the expire time (absolute ms, 0 = never); keeps the old one when out of memory. Returns
 * the item now in the table. */
static inline struct item *mc_set_exp_locked(struct store *s, const struct skey *k,
                                             struct item *it, int64_t ms)
{
    struct item *n = store_set_expire_locked(s, k, it, ms);
    if (n) /* touch, gat, mg T...: a keyspace "expire" event, cached copies invalidated */
        notify_write(NOTIFY_GENERIC, "expire", k, 0);
    return n ? n : it;
}
/* Seconds of TTL left as memcached reports them (-1: none). */
static inline int64_t mc_ttl_left(struct item *it, int64_t now)
{
    int64_t exp = item_expire(it);
    if (!exp)
        return -1;
    return (exp - now + 999) / 1000;
}
/* Evict for a write when maxmemory is set (no stripe lock held). -1: out of memory (counted). */
int mc_make_room(struct conn *c);

enum mc_store_res { MC_ST_STORED, MC_ST_NOT_STORED, MC_ST_EXISTS, MC_ST_NOT_FOUND, MC_ST_OOM };

/* The store step of set/add/replace/append/prepend/cas and ms, under k's stripe lock. mode is
 * the text command; cas_cmd compares CAS values with cas; stale allows an older CAS (ms I);
 * want_cas gives the new item a CAS field. *out is the item stored (for ms c/E), or NULL. */
enum mc_store_res mc_store_locked(struct conn *c, const struct skey *k, enum mc_cmd mode,
                                  int cas_cmd, uint64_t cas, int stale, uint32_t flags,
                                  int64_t exp, const char *data, size_t vlen, int want_cas,
                                  struct item **out);

enum mc_delta_res { MC_DR_OK, MC_DR_NOT_FOUND, MC_DR_NON_NUMERIC, MC_DR_CAS_MISMATCH, MC_DR_OOM };

/* Count an incr/decr's outcome (res: enum mc_delta_res) in memcached's incr_/decr_ hits
 * and misses, as every protocol does. */
struct mc_stats;
void mc_delta_count(struct mc_stats *ws, int incr, int res);
/* incr/decr on k's live string item (memcached's do_add_delta, see strval_mc_delta_locked);
 * req_cas != 0 must match its CAS value. *itp is the item holding the result, *val the new
 * value. Under the lock. */
enum mc_delta_res mc_delta_locked(struct conn *c, const struct skey *k, int incr, uint64_t delta,
                                  uint64_t req_cas, uint64_t *val, struct item **itp);

/* ---- handlers (mc_get.c, mc_store.c, mc_meta.c, mc_stats.c) ---- */
void mc_get_command(struct conn *c, struct mc_req *r);    /* get gets gat gats */
void mc_touch_command(struct conn *c, struct mc_req *r);
void mc_update_command(struct conn *c, struct mc_req *r); /* set add replace append prepend cas */
void mc_arith_command(struct conn *c, struct mc_req *r);  /* incr decr */
void mc_delete_command(struct conn *c, struct mc_req *r);
void mc_mg_command(struct conn *c, struct mc_req *r);
void mc_ms_command(struct conn *c, struct mc_req *r);
void mc_md_command(struct conn *c, struct mc_req *r);
void mc_ma_command(struct conn *c, struct mc_req *r);
void mc_me_command(struct conn *c, struct mc_req *r);
void mc_admin_command(struct conn *c, struct mc_req *r);
/* 1 while the LRU crawler is on (-o lru_crawler, then lru_crawler enable/disable). */
int mc_crawler_on(void);
/* A logged-in ACL user (mc_acl.c): 1 when r's Redis equivalent (stats: INFO, verbosity:
 * CONFIG SET, stats cachedump: KEYS, me: OBJECT IDLETIME <key>, ...) is denied to c's user,
 * the denial logged in ACL LOG; the caller answers. 0 for commands without one. */
int mc_acl_denied(struct conn *c, const struct mc_req *r);
/* The same for the Redis command name (upper case) with key (NULL: none): the binary
 * protocol's check. */
int mc_acl_cmd_denied(struct conn *c, const char *name, const char *key, size_t klen);
/* ---- "watch" (mc_watch.c): events logged to watcher connections ---- */
#define MC_WATCH_FETCHERS 1u
#define MC_WATCH_MUTATIONS 2u
#define MC_WATCH_EVICTIONS 4u
extern _Atomic unsigned mc_watch_mask; /* what some watcher wants (relaxed reads) */
void mc_watch_command(struct conn *c, struct mc_req *r);
void mc_watch_close(struct conn *c);
void mc_watch_get_slow(struct conn *c, const char *key, size_t klen, const struct item *it);
void mc_watch_store_slow(struct conn *c, const char *key, size_t klen, const char *status,
                         const char *cmd, int64_t exp_ms, size_t vlen);
/* An item fetch (it NULL: not found) and a store, logged while someone watches them. */
static inline void mc_watch_get(struct conn *c, const char *key, size_t klen,
                                const struct item *it)
{
    if (TC_UNLIKELY(atomic_load_explicit(&mc_watch_mask, memory_order_relaxed) &
                    MC_WATCH_FETCHERS))
        mc_watch_get_slow(c, key, klen, it);
}
static inline void mc_watch_store(struct conn *c, const char *key, size_t klen,
                                  const char *status, const char *cmd, int64_t exp_ms,
                                  size_t vlen)
{
    if (TC_UNLIKELY(atomic_load_explicit(&mc_watch_mask, memory_order_relaxed) &
                    MC_WATCH_MUTATIONS))
        mc_watch_store_slow(c, key, klen, status, cmd, exp_ms, vlen);
}
/* "stats detail on": count a text get (hit or not), storage command or delete of key under
 * its prefix. Call through mc_detail(), which costs one relaxed load while detail is off. */
enum { MC_DETAIL_GET, MC_DETAIL_SET, MC_DETAIL_DEL };
extern _Atomic int mc_detail_on;
void mc_detail_count(const char *key, size_t klen, int what, int hit);
static inline void mc_detail(const char *key, size_t klen, int what, int hit)
{
    if (TC_UNLIKELY(atomic_load_explicit(&mc_detail_on, memory_order_relaxed)))
        mc_detail_count(key, klen, what, hit);
}
/* "stats cachedump <id> <limit>" after its checks: the items of class id (mc_class_of). */
void mc_cachedump(struct conn *c, uint32_t id, uint32_t limit);
void mc_stats_command(struct conn *c, struct mc_req *r);
/* The slab classes and the store's removal hook (main thread, before the workers start). */
void mc_stats_setup(void);
/* flush_all's store step: now, or at exptime (memcached's exptime rules); counts flush_cmds. */
/* flush_all (after exptime when > 0): 0, or -1 when flush_all is disabled (-F). */
int mc_flush_all(struct conn *c, int32_t exptime);
/* Binary protocol connections (mc_bin.c): parse and run everything complete in c->rbuf. */
void mc_bin_input(struct conn *c);
/* memcached's ASCII authentication for a text connection with m->auth_need: consumes the
 * login exchange ("set <any> <flags> <exptime> <bytes>" and "user pass"). Returns 1 once
 * authenticated (parse commands), 0 when it needs more bytes or the connection closes. */
int mc_text_auth(struct conn *c);

#endif
