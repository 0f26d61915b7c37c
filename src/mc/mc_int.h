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
#include "net/conn.h"
#include "net/worker.h"
#include "proto/mc.h"
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
};

#define MC_STAT_FIELDS(X)                                                                      \
    X(get_cmds) X(get_hits) X(get_misses) X(get_expired) X(set_cmds) X(flush_cmds)           \
    X(touch_cmds) X(touch_hits) X(touch_misses) X(meta_cmds) X(delete_hits) X(delete_misses) \
    X(incr_hits) X(incr_misses) X(decr_hits) X(decr_misses) X(cas_hits) X(cas_misses)        \
    X(cas_badval) X(too_large) X(no_memory) X(bytes_read) X(bytes_written) X(conns_total)

/* Counters of one worker, written by that worker only (STAT_INC), summed racily when read. */
struct mc_stats {
#define X(f) uint64_t f;
    MC_STAT_FIELDS(X)
#undef X
} __attribute__((aligned(64)));

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
static inline struct store *mc_store(struct conn *c)
{
    return c->w->srv->store;
}
static inline int64_t mc_now(struct conn *c)
{
    return c->w->now_ms;
}
/* 1 when it is the item a previous command's mg reply still holds (see struct mc_conn). */
static inline int mc_pinned(struct conn *c, const struct item *it)
{
    return ((struct mc_conn *)c->mc)->mg_prev == it;
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
void mc_stats_command(struct conn *c, struct mc_req *r);

#endif
