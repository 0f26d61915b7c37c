/* The memcached room's connection side: per-connection state, the parse-and-run loop, the
 * dispatch to the handlers, and the commands too small for a file of their own (flush_all,
 * version, verbosity, quit, mn). The only file of the room that uses the command layer: the
 * AOF propagation hooks of cmd/propagate.h (aof_on, aof_mc_exec, aof_mc_flush). */
#include "mc/mc_cmd.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/acl.h"
#include "cmd/notify.h"
#include "cmd/propagate.h"
#include "cmd/tracking.h"
#include "core/config.h"
#include "core/log.h"
#include "mc/mc_int.h"

struct srv *mc_srv;
struct mc_stats *mc_wstats;
_Atomic int mc_curr_conns;
_Atomic int mc_verbosity;
static _Atomic int64_t g_flush_at_ms; /* pending "flush_all <delay>" (0: none) */
struct mc_settings mc_cfg = {
    .flush_enabled = 1, .cas_enabled = 1, .reqs_per_event = 20, .chunk_size = 48,
    .umask = 0700, .lru_crawler = 1, .lru_maintainer = 1, .slab_reassign = 1,
    .dump_enabled = 1, .watch_enabled = 1,
    .maxconns_fast = 1, .evictions = 1, .binding = "auto", .growth_factor = "1.25",
    .domain_socket = "NULL", .inter = "NULL",
};

/* ---- -R (requests per event): a connection that used its share of an event yields; the
 * worker runs the rest of its input at the end of the turn (mc_before_sleep), after its other
 * connections' events, and wakes itself for the next share. Owner worker only. ---- */
struct yield_q {
    struct conn **c, **run; /* yielded in this turn / being resumed (NULL: closed since) */
    int n, cap, nrun, runcap;
};
static struct yield_q *g_yq; /* one per worker */

int mc_cmd_setup(struct srv *srv)
{
    mc_srv = srv;
    atomic_store(&mc_verbosity, mc_cfg.verbose);
    mc_wstats = aligned_alloc(64, sizeof(struct mc_stats) * (size_t)srv->nworkers);
    mc_ghosts = calloc(srv->store->nstripes, sizeof(*mc_ghosts));
    g_yq = calloc((size_t)srv->nworkers, sizeof(*g_yq));
    mc_stats_setup();
    if (!mc_wstats || !mc_ghosts || !g_yq)
        return -1;
    memset(mc_wstats, 0, sizeof(struct mc_stats) * (size_t)srv->nworkers);
    return 0;
}

/* ---- flush_all ---- */

struct mc_ghosts *mc_ghosts;

#define GHOST_EMPTY 0u
#define GHOST_GONE UINT32_MAX /* a taken ghost (tombstone) */

/* A key's 32-bit code: the hash's high half (the stripe is its low bits). Two keys of a
 * stripe may share one: then a read of the other counts get_flushed, a 2^-32 chance each. */
static uint32_t ghost_code(uint64_t hash)
{
    uint32_t code = (uint32_t)(hash >> 32);
    return code == GHOST_EMPTY || code == GHOST_GONE ? 2 : code;
}

static uint32_t ghost_slot(const struct mc_ghosts *g, uint32_t code)
{
    return (code * 2654435761u) & (g->cap - 1);
}

static void ghost_insert(struct mc_ghosts *g, uint32_t code)
{
    uint32_t i = ghost_slot(g, code);

    while (g->h[i] != GHOST_EMPTY) {
        if (g->h[i] == code)
            return;
        i = (i + 1) & (g->cap - 1);
    }
    g->h[i] = code;
    g->n++;
}

/* A set of flushed keys being built (private until installed): grown at half load. */
static int ghost_visit(struct item *it, void *arg)
{
    struct mc_ghosts *g = arg;

    if (it->type != OBJ_STRING) /* not a memcached item */
        return 0;
    if (g->n + 1 > g->cap / 2) {
        struct mc_ghosts b = {NULL, g->cap ? g->cap * 2 : 64, 0};
        if (!(b.h = calloc(b.cap, sizeof(uint32_t))))
            return 1; /* out of memory: fewer flushed keys remembered, nothing else */
        for (uint32_t i = 0; i < g->cap; i++)
            if (g->h[i] != GHOST_EMPTY)
                ghost_insert(&b, g->h[i]);
        free(g->h);
        *g = b;
    }
    ghost_insert(g, ghost_code(util_hash(item_key(it), item_klen(it))));
    return 0;
}

/* Remember the keys of database 0 that a flush_all is about to remove, stripe by stripe,
 * replacing what the previous flush left. memcached keeps flushed items in memory until a
 * read meets one (get_flushed) or an allocation reuses it (reclaimed); twincache removes
 * them at once (the keyspace is shared with the Redis port, where FLUSHALL is immediate),
 * and keeps only 32 bits of their hashes for those two counters (8 bytes a key at most). Takes each stripe's lock (a no-op on
 * the stripes a transaction of this thread holds). */
static void ghosts_collect(struct conn *c)
{
    struct store *s = mc_store(c);

    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct mc_ghosts g = {NULL, 0, 0}, old;
        store_visit_stripe(s, MC_DB, i, mc_now(c), ghost_visit, &g);
        store_lock(s, i);
        old = mc_ghosts[i];
        mc_ghosts[i] = g;
        store_unlock(s, i);
        free(old.h);
    }
}

int mc_ghost_take_slow(struct mc_ghosts *g, const struct skey *k)
{
    uint32_t code = ghost_code(k->hash);
    uint32_t i = ghost_slot(g, code);

    while (g->h[i] != GHOST_EMPTY) {
        if (g->h[i] == code) {
            g->h[i] = GHOST_GONE;
            if (--g->n == 0) { /* the last one: the stripe costs one load again */
                free(g->h);
                g->h = NULL;
                g->cap = 0;
            }
            return 1;
        }
        i = (i + 1) & (g->cap - 1);
    }
    return 0;
}

static void flush_now(struct conn *c)
{
    atomic_store(&g_flush_at_ms, 0);
    ghosts_collect(c);
    store_flush(mc_store(c), MC_DB);
    tracking_flush();
}

/* Run a delayed flush_all whose time has come (the first worker to see it does). */
static void flush_check(struct conn *c)
{
    int64_t at = atomic_load_explicit(&g_flush_at_ms, memory_order_relaxed);

    if (TC_UNLIKELY(at) && mc_now(c) >= at &&
        atomic_compare_exchange_strong(&g_flush_at_ms, &at, 0)) {
        ghosts_collect(c);
        if (prop_active())
            aof_mc_flush(c);
        else
            store_flush(mc_store(c), MC_DB);
    }
}

_Atomic int64_t mc_nocas_flush_s;

int mc_flush_all(struct conn *c, int32_t exptime)
{
    int64_t at = exptime > 0 ? mc_exptime_ms(exptime, mc_now(c)) : 0;

    STAT_INC(mc_ws(c)->flush_cmds);
    if (!mc_cfg.flush_enabled)
        return -1; /* memcached -F */
    if (!mc_cfg.cas_enabled) /* memcached's oldest_live, to the second (see mc_find_locked) */
        atomic_store(&mc_nocas_flush_s, (at > MC_EXPIRED && at > mc_now(c) ? at : mc_now(c)) /
                                            1000);
    if (at > MC_EXPIRED && at > mc_now(c))
        atomic_store(&g_flush_at_ms, at);
    else
        flush_now(c);
    return 0;
}

static void flush_all_command(struct conn *c, struct mc_req *r)
{
    if (mc_flush_all(c, r->exptime)) {
        if (!r->noreply)
            mc_out_line(c, "CLIENT_ERROR flush_all not allowed");
        return;
    }
    if (!r->noreply)
        mc_out_line(c, "OK");
}

/* ---- dispatch ---- */

/* A request the parser refused: its error line, and the side effects memcached has. */
static void refused(struct conn *c, struct mc_req *r)
{
    struct mc_stats *ws = mc_ws(c);

    if (r->too_large) {
        STAT_INC(ws->too_large);
        if (r->cmd == MC_SET || r->cmd == MC_MS) {
            /* memcached drops the old value rather than leave it stale */
            struct store *s = mc_store(c);
            struct skey k;
            store_key(s, &k, MC_DB, r->key.p, r->key.n);
            store_lock(s, k.stripe);
            store_delete_locked(s, &k, mc_now(c));
            store_unlock(s, k.stripe);
        }
    }
    if (r->cmd == MC_FLUSH_ALL)
        STAT_INC(ws->flush_cmds);
    if (r->data && (r->cmd < MC_MG || r->cmd == MC_MS))
        STAT_INC(ws->set_cmds); /* a bad data chunk still counts as a set, as in memcached */
    if (r->cmd >= MC_MG || !r->noreply) /* meta commands always answer errors */
        mc_out_line(c, r->err);
}

/* A logged-in ACL user's key patterns on the memcached port: 1 after answering the denial
 * (and logging it, reason key) when a key of r is outside them. Reads need %R, writes %W. */
static int acl_denied_keys(struct conn *c, struct mc_req *r)
{
    int write = 0, many = 0;

    switch (r->cmd) {
    case MC_GET: case MC_GETS: case MC_MG: case MC_MN: case MC_ME:
        many = r->cmd == MC_GET || r->cmd == MC_GETS;
        break;
    case MC_GAT: case MC_GATS:
        many = 1;
        write = 1;
        break;
    case MC_SET: case MC_ADD: case MC_REPLACE: case MC_APPEND: case MC_PREPEND: case MC_CAS:
    case MC_INCR: case MC_DECR: case MC_DELETE: case MC_TOUCH: case MC_MS: case MC_MD:
    case MC_MA:
        write = 1;
        break;
    case MC_FLUSH_ALL:
        break;
    default:
        return 0;
    }
    if (r->cmd == MC_MN || r->cmd == MC_ME)
        return 0;
    if (r->cmd == MC_FLUSH_ALL) {
        /* every key: only for a user allowed all of them */
        if (acl_mc_key_allowed(c, NULL, 0, 1))
            return 0;
        mc_out_line(c, "CLIENT_ERROR access denied");
        return 1;
    }
    if (!many) {
        if (acl_mc_key_allowed(c, r->key.p, r->key.n, write))
            return 0;
    } else {
        const char *pos = r->keys;
        struct mc_tok t;
        int ti = (r->cmd == MC_GAT || r->cmd == MC_GATS) ? 2 : 1, ok = 1;
        while (ok && (r->rest ? mc_next_token(&pos, r->end, &t)
                              : ti < r->ntok - 1 ? (t = r->tok[ti++], 1) : 0))
            ok = acl_mc_key_allowed(c, t.p, t.n, write);
        if (ok)
            return 0;
    }
    mc_out_line(c, "CLIENT_ERROR access denied");
    return 1;
}

static void execute(struct conn *c, struct mc_req *r)
{
    if (TC_UNLIKELY(r->err != NULL)) {
        refused(c, r);
        return;
    }
    if (TC_UNLIKELY(c->user != NULL) &&
        !atomic_load_explicit(&c->user->allperm, memory_order_relaxed)) {
        if (mc_acl_denied(c, r)) {
            if (!r->noreply)
                mc_out_line(c, "CLIENT_ERROR access denied");
            return;
        }
        if (acl_denied_keys(c, r))
            return;
    }
    switch (r->cmd) {
    case MC_GET: case MC_GETS: case MC_GAT: case MC_GATS:
        mc_get_command(c, r);
        break;
    case MC_SET: case MC_ADD: case MC_REPLACE: case MC_APPEND: case MC_PREPEND: case MC_CAS:
        mc_update_command(c, r);
        break;
    case MC_INCR: case MC_DECR:
        mc_arith_command(c, r);
        break;
    case MC_DELETE:
        mc_delete_command(c, r);
        break;
    case MC_TOUCH:
        mc_touch_command(c, r);
        break;
    case MC_FLUSH_ALL:
        flush_all_command(c, r);
        break;
    case MC_VERSION:
        mc_out_line(c, "VERSION " MC_VERSION_STR);
        break;
    case MC_VERBOSITY:
        atomic_store(&mc_verbosity, r->num > 2 ? 2 : (int)r->num);
        if (!r->noreply)
            mc_out_line(c, "OK");
        break;
    case MC_QUIT:
        c->flags |= CONN_CLOSE_AFTER_REPLY;
        break;
    case MC_STATS:
        mc_stats_command(c, r);
        break;
    case MC_MG:
        mc_mg_command(c, r);
        break;
    case MC_MS:
        mc_ms_command(c, r);
        break;
    case MC_MD:
        mc_md_command(c, r);
        break;
    case MC_MA:
        mc_ma_command(c, r);
        break;
    case MC_MN:
        mc_out_line(c, "MN");
        break;
    case MC_SHUTDOWN:
        if (!mc_cfg.shutdown_enabled) {
            mc_out_line(c, "ERROR: shutdown not enabled");
        } else if (r->num == 2) {
            mc_out_line(c, "CLIENT_ERROR invalid shutdown mode");
        } else {
            log_notice(r->num == 1 ? "Gracefully stopping" : "Shutting down");
            c->flags |= CONN_CLOSE_ASAP;
            srv_request_shutdown(c->w->srv, 0);
        }
        break;
    case MC_HANGUP:
        c->flags |= CONN_CLOSE_ASAP; /* memcached drops what was pending too */
        break;
    case MC_ADMIN:
        mc_admin_command(c, r);
        break;
    case MC_ME:
        mc_me_command(c, r);
        break;
    default:
        break;
    }
}


static void yield(struct conn *c)
{
    struct mc_conn *m = c->mc;
    struct yield_q *q = &g_yq[c->w->idx];

    STAT_INC(mc_ws(c)->conn_yields);
    if (m->yielded)
        return;
    if (q->n == q->cap) {
        int cap = q->cap ? q->cap * 2 : 64;
        struct conn **a = realloc(q->c, sizeof(*a) * (size_t)cap);
        if (!a)
            return; /* not queued: its input runs at its next event */
        q->c = a;
        q->cap = cap;
    }
    q->c[q->n++] = c;
    m->yielded = 1;
}

void mc_before_sleep(struct worker *w)
{
    struct yield_q *q;
    struct conn **t;
    int tcap;

    if (!g_yq || !(q = &g_yq[w->idx])->n)
        return;
    /* swap the lists: connections resumed now may yield again, into the empty one */
    t = q->run;
    tcap = q->runcap;
    q->run = q->c;
    q->runcap = q->cap;
    q->nrun = q->n;
    q->c = t;
    q->cap = tcap;
    q->n = 0;
    for (int i = 0; i < q->nrun; i++) {
        struct conn *c = q->run[i];
        if (!c)
            continue; /* closed since it yielded */
        q->run[i] = NULL;
        ((struct mc_conn *)c->mc)->yielded = 0;
        worker_conn_resume(w, c);
    }
    q->nrun = 0;
    if (q->n)
        worker_wake(w); /* more to run: the next epoll_wait returns at once */
}

/* Forget a closing connection that yielded. */
static void yield_forget(struct conn *c)
{
    struct yield_q *q = &g_yq[c->w->idx];

    for (int i = 0; i < q->n; i++)
        if (q->c[i] == c)
            q->c[i] = q->c[--q->n];
    for (int i = 0; i < q->nrun; i++)
        if (q->run[i] == c)
            q->run[i] = NULL;
}

void mc_cmd_input(struct conn *c)
{
    struct mc_conn *m = c->mc;
    size_t out_before;
    int nreq = 0; /* requests run in this call (-R) */

    if (TC_UNLIKELY(!m)) {
        m = calloc(1, sizeof(*m));
        if (!m) {
            c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        c->mc = m;
        m->auth_need = !config_str_empty(cfg.memcache_auth_file); /* memcached -Y */
        atomic_fetch_add(&mc_curr_conns, 1);
        STAT_INC(mc_ws(c)->conns_total);
    }
    flush_check(c);
    out_before = conn_pending(c);
    if (TC_UNLIKELY(c->udp != NULL))
        m->proto = MC_PROTO_UNKNOWN; /* UDP: each datagram chooses (the worker's pseudo conn) */
    if (TC_UNLIKELY(m->proto != MC_PROTO_TEXT) && buf_len(&c->rbuf) > 0) {
        /* the first byte chooses the protocol for the connection's life, as in memcached */
        if (m->proto == MC_PROTO_UNKNOWN) {
            int magic = (uint8_t)c->rbuf.data[c->rbuf.rpos] == MCB_REQ_MAGIC;
            /* -B binds the protocol: under -B binary anything else is closed (memcached's
             * "Invalid magic"), under -B ascii everything is text */
            if (TC_UNLIKELY(mc_cfg.binding[0] != 'a') && !magic) {
                c->flags |= CONN_CLOSE_ASAP;
                c->rbuf.rpos = c->rbuf.wpos;
                goto out;
            }
            if (TC_UNLIKELY(mc_cfg.binding[0] == 'a' && mc_cfg.binding[1] == 's'))
                magic = 0;
            m->proto = magic ? MC_PROTO_BINARY : MC_PROTO_TEXT;
        }
        if (m->proto == MC_PROTO_BINARY) {
            mc_bin_input(c);
            goto out;
        }
    }
    if (TC_UNLIKELY(m->auth_need) && !mc_text_auth(c))
        goto out;
    while (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP))) {
        const char *base = c->rbuf.data + c->rbuf.rpos;
        size_t used = 0;
        int st;

        if (buf_len(&c->rbuf) == 0)
            break;
        if (TC_UNLIKELY(nreq >= mc_cfg.reqs_per_event) && !c->udp) {
            yield(c); /* -R: the rest of the input runs after the worker's other events */
            break;
        }
        if (conn_pending(c) > conn_pause_bytes(c)) {
            c->flags |= CONN_PAUSED_READ; /* after_io resumes once the output drains */
            break;
        }
        st = mc_parse(&m->p, base, buf_len(&c->rbuf), (size_t)cfg.item_size_max, &m->r, &used);
        c->rbuf.rpos += used;
        STAT_ADD(mc_ws(c)->bytes_read, used);
        if (st == MC_ERR_LINE_TOO_LONG) {
            mc_out_line(c, MC_ERR_LINE);
            c->flags |= CONN_CLOSE_AFTER_REPLY;
            c->rbuf.rpos = c->rbuf.wpos;
            break;
        }
        if (st == MC_NEED_MORE)
            break;
        if (m->r.cmd == MC_NONE && !m->r.err)
            continue;
        nreq++;
        STAT_INC(c->w->st.commands);
        if ((m->r.cmd >= MC_SET && m->r.cmd <= MC_FLUSH_ALL) || m->r.cmd == MC_GAT ||
            m->r.cmd == MC_GATS || (m->r.cmd >= MC_MS && m->r.cmd <= MC_MA))
            STAT_INC(c->w->st.dirty);
        c->tot_cmds++;
        m->mg_prev = m->mg_cur;
        m->mg_cur = NULL;
        if (TC_UNLIKELY(mc_replica_refuses()) && aof_mc_is_write(&m->r)) {
            mc_check(c, buf_append(conn_out(c), "SERVER_ERROR " MC_READONLY_TEXT "\r\n",
                                   sizeof("SERVER_ERROR " MC_READONLY_TEXT "\r\n") - 1));
            conn_udp_cut(c);
            continue;
        }
        if (TC_UNLIKELY(prop_active()))
            aof_mc_exec(c, &m->r, execute);
        else
            execute(c, &m->r);
        conn_udp_cut(c); /* over UDP each reply is its own datagrams */
        notify_flush(c->w->idx);
    }
out:
    {
        /* a complete line left unparsed: a storage command waiting for its data */
        int nread = buf_len(&c->rbuf) > 0 &&
                    memchr(c->rbuf.data + c->rbuf.rpos, '\n', buf_len(&c->rbuf)) != NULL;
        if (nread != m->nread)
            __atomic_store_n(&m->nread, (uint8_t)nread, __ATOMIC_RELAXED);
    }
    if (TC_UNLIKELY(c->udp != NULL))
        memset(&m->p, 0, sizeof(m->p)); /* a datagram is whole: drop an incomplete request */
    if (c->rbuf.rpos == c->rbuf.wpos)
        c->rbuf.rpos = c->rbuf.wpos = 0;
    STAT_ADD(mc_ws(c)->bytes_written, conn_pending(c) - out_before);
}

int mc_cmd_may_time_out(struct conn *c)
{
    if (mc_cfg.idle_timeout <= 0)
        return 0;
    STAT_INC(mc_ws(c)->idle_kicks); /* the worker closes it now */
    return 1;
}

void mc_cmd_open(struct conn *c)
{
    c->resp = 2;
    c->authed = config_str_empty(cfg.requirepass);
}

void mc_cmd_close(struct conn *c)
{
    if (c->user) {
        struct acl_user *u = c->user;
        pthread_mutex_lock(&c->w->list_lock);
        c->user = NULL;
        pthread_mutex_unlock(&c->w->list_lock);
        acl_user_unref(u);
    }
    free(c->argv);
    c->argv = NULL;
    if (c->mc) {
        if (((struct mc_conn *)c->mc)->watching)
            mc_watch_close(c);
        if (((struct mc_conn *)c->mc)->yielded)
            yield_forget(c);
        free(c->mc);
        c->mc = NULL;
        atomic_fetch_sub(&mc_curr_conns, 1);
    }
}
