/* Connection commands: PING ECHO QUIT SELECT AUTH HELLO RESET CLIENT. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/tracking.h"
#include "cmd/cmd.h"
#include "cmd/acl.h"
#include "cmd/multi.h"
#include "cmd/blocking.h"
#include "cmd/pubsub.h"
#include "cmd/repl.h"
#include "core/config.h"
#include "core/log.h"


static void ping_command(struct conn *c)
{
    if (c->argc > 2) {
        reply_arity_error(c, "ping");
        return;
    }
    if (c->ps != NULL && c->resp == 2 && pubsub_count(c) > 0) {
        /* RESP2 subscribed mode: PING answers like a message */
        reply_array(c, 2);
        reply_lit(c, "$4\r\npong\r\n");
        if (c->argc > 1)
            reply_bulk(c, c->argv[1].p, c->argv[1].n);
        else
            reply_lit(c, "$0\r\n\r\n");
        return;
    }
    if (c->argc == 1)
        reply_lit(c, "+PONG\r\n");
    else
        reply_bulk(c, c->argv[1].p, c->argv[1].n);
}

static void echo_command(struct conn *c)
{
    reply_bulk(c, c->argv[1].p, c->argv[1].n);
}

static void quit_command(struct conn *c)
{
    reply_ok(c);
    c->flags |= CONN_CLOSE_AFTER_REPLY;
}

static void select_command(struct conn *c)
{
    long long db;

    if (arg_ll(c, 1, &db, NULL))
        return;
    if (db < 0 || db >= cfg.databases) {
        reply_error(c, ERR_DBRANGE);
        return;
    }
    __atomic_store_n(&c->db, (int)db, __ATOMIC_RELAXED);
    reply_ok(c);
}

static int client_info(struct conn *c, struct conn *x, char *out, size_t cap);

/* The ACL log's client-info: this connection's CLIENT INFO line, without the newline. */
int conn_client_info(struct conn *c, char *out, size_t cap)
{
    int n = client_info(c, c, out, cap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= cap)
        n = (int)cap - 1;
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
        n--;
    out[n] = '\0';
    return n;
}

static void set_authed(struct conn *c, int v)
{
    c->authed = v;
    c->rp.unauth = !v;
}

/* AUTH [user] pass against the ACL users: c runs as the user from now on. */
static int auth_user(struct conn *c, const struct slice *user, const struct slice *pass)
{
    struct acl_user *u;

    if (!acl_authenticate(user ? user->p : "default", user ? user->n : 7, pass->p, pass->n, &u))
        return 0;
    acl_conn_set_user(c, u);
    acl_user_unref(u);
    set_authed(c, 1);
    return 1;
}

static void auth_command(struct conn *c)
{
    if (c->argc > 3) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 2 && acl_default_has_nopass()) {
        reply_error(c, "ERR AUTH <password> called without any password configured for the "
                       "default user. Are you sure your configuration is correct?");
        return;
    }
    if (auth_user(c, c->argc == 3 ? &c->argv[1] : NULL, &c->argv[c->argc - 1])) {
        reply_ok(c);
        return;
    }
    acl_log_auth_failure(c, "AUTH", c->argc == 3 ? &c->argv[1] : NULL);
    reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
}

static int valid_name(const struct slice *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->p[i] < '!' || s->p[i] > '~')
            return 0;
    return 1;
}

static void set_name(struct conn *c, const struct slice *s)
{
    size_t n = s->n < sizeof(c->name) - 1 ? s->n : sizeof(c->name) - 1;
    pthread_mutex_lock(&c->w->list_lock);
    memcpy(c->name, s->p, n);
    c->name[n] = '\0';
    pthread_mutex_unlock(&c->w->list_lock);
}

static void hello_command(struct conn *c)
{
    long long ver = c->resp;
    int i = 1;

    if (c->argc >= 2) {
        if (!util_str2ll(c->argv[1].p, c->argv[1].n, &ver)) {
            reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        i = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    const struct slice *name = NULL;
    for (; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(c, i, "auth") && more >= 2) {
            if (!auth_user(c, &c->argv[i + 1], &c->argv[i + 2])) {
                acl_log_auth_failure(c, "HELLO", &c->argv[i + 1]);
                reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
                return;
            }
            i += 2;
        } else if (arg_is(c, i, "setname") && more >= 1) {
            if (!valid_name(&c->argv[i + 1])) {
                reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
            name = &c->argv[i + 1];
            i++;
        } else {
            char opt[64];
            arg_cstr(c, i, opt, sizeof(opt));
            reply_errorf(c, "ERR Syntax error in HELLO option '%s'", opt);
            return;
        }
    }
    if (!c->authed) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, "
                       "otherwise the HELLO AUTH <user> <pass> option can be used to "
                       "authenticate the client and select the RESP protocol version at the "
                       "same time");
        return;
    }
    if (name)
        set_name(c, name);
    __atomic_store_n(&c->resp, (uint8_t)ver, __ATOMIC_RELAXED);
    reply_map(c, 7);
    reply_cstr(c, "server");
    reply_cstr(c, "redis");
    reply_cstr(c, "version");
    reply_cstr(c, TC_VERSION);
    reply_cstr(c, "proto");
    reply_int(c, c->resp);
    reply_cstr(c, "id");
    reply_int(c, (long long)c->id);
    reply_cstr(c, "mode");
    reply_cstr(c, "standalone");
    reply_cstr(c, "role");
    reply_cstr(c, "master");
    reply_cstr(c, "modules");
    reply_array(c, 0);
}

static void reset_command(struct conn *c)
{
    tx_reset(c);
    pubsub_reset(c);
    block_reset(c);
    __atomic_store_n(&c->db, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->resp, (uint8_t)2, __ATOMIC_RELAXED);
    set_authed(c, acl_default_nopass());
    if (c->user)
        acl_conn_set_user(c, acl_default_user());
    pthread_mutex_lock(&c->w->list_lock);
    c->name[0] = '\0';
    pthread_mutex_unlock(&c->w->list_lock);
    reply_lit(c, "+RESET\r\n");
}

/* ---- CLIENT ---- */

#define LOAD(f) __atomic_load_n(&(f), __ATOMIC_RELAXED)

/* One CLIENT LIST line for x, seen from c. x may belong to another worker: only its fixed
 * fields, the name (under the list lock, held by the caller) and the shared fields (atomic
 * loads; the buffer sizes as last published by x's owner) are read then. io-thread is the
 * index of x's worker (the field Redis 8 names so), which tells on which worker a client is. */
static int client_info(struct conn *c, struct conn *x, char *out, size_t cap)
{
    char flags[8];
    int nf = 0;

    int64_t now = c ? c->w->now_ms : util_now_ms();
    size_t qbuf, qfree, obl, ocap, omem, totmem, argvmem = 0;
    unsigned oll;
    int nsub = atomic_load_explicit(&x->nsub, memory_order_relaxed);
    int npsub = atomic_load_explicit(&x->npsub, memory_order_relaxed);
    const char *cmd = LOAD(x->lastcmd), *sub = LOAD(x->lastsub);
    int subn = LOAD(x->lastsub_n);

    if (x == c) {
        /* as Redis: the query buffer still holds the running command; its reply is not
         * written yet */
        qbuf = x->rbuf.wpos;
        qfree = x->rbuf.cap - x->rbuf.wpos;
        obl = oll = omem = 0;
        ocap = x->wbuf.cap;
        /* as Redis's getClientMemoryUsage while the command runs: its arguments count */
        for (int i = 0; i < x->argc; i++)
            argvmem += x->argv[i].n;
        argvmem += (size_t)x->argc * sizeof(void *);
        totmem = conn_mem_usage(x, 0) + argvmem;
    } else if (c && x->w == c->w) { /* this thread's own connections: exact */
        qbuf = conn_qbuf(x);
        qfree = x->rbuf.cap - x->rbuf.wpos;
        obl = x->wbuf.wpos - x->wbuf.rpos;
        oll = x->nrefs - x->ref_sent;
        omem = conn_pending(x);
        ocap = x->wbuf.cap;
        totmem = conn_mem_usage(x, omem - obl);
    } else {
        qbuf = LOAD(x->pub_qbuf);
        qfree = LOAD(x->pub_qfree);
        obl = LOAD(x->pub_obl);
        oll = LOAD(x->pub_oll);
        ocap = LOAD(x->pub_ocap);
        omem = LOAD(x->pub_omem);
        totmem = LOAD(x->mem);
    }
    if (__atomic_load_n(&x->repl, __ATOMIC_RELAXED))
        flags[nf++] = 'S';
    if (nsub || npsub)
        flags[nf++] = 'P';
    if (atomic_load_explicit(&x->blocked, memory_order_relaxed))
        flags[nf++] = 'b';
    if (__atomic_load_n(&x->no_evict, __ATOMIC_RELAXED))
        flags[nf++] = 'e';
    if (__atomic_load_n(&x->no_touch, __ATOMIC_RELAXED))
        flags[nf++] = 'T';
    if (!nf)
        flags[nf++] = 'N';
    flags[nf] = '\0';
    return snprintf(out, cap,
                    "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d "
                    "sub=%d psub=%d ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=%zu "
                    "multi-mem=0 rbs=%zu rbp=%zu obl=%zu oll=%u omem=%zu tot-mem=%zu events=r "
                    "cmd=%s%s%.*s user=%s redir=-1 resp=%d io-thread=%d\n",
                    (unsigned long long)x->id, x->addr, x->laddr, x->fd, x->name,
                    (long long)((now - x->ctime_ms) / 1000),
                    (long long)((now - LOAD(x->last_ms)) / 1000),
                    flags,
                    LOAD(x->db), nsub, npsub, qbuf, qfree, argvmem, ocap, LOAD(x->wpeak), obl, oll, omem,
                    totmem, cmd ? cmd : "NULL", subn ? "|" : "",
                    subn, subn ? sub : "", x->user ? x->user->name : "default", (int)LOAD(x->resp),
                    x->w->idx);
}

/* Visit every connection of every worker under its list lock. */
typedef int client_visit_fn(struct conn *c, struct conn *x, void *arg);
static void clients_visit(struct conn *c, client_visit_fn *fn, void *arg)
{
    struct srv *srv = c->w->srv;
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        int stop = 0;
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x && !stop; x = x->next)
            if (x->proto == PROTO_RESP)
                stop = fn(c, x, arg);
        pthread_mutex_unlock(&w->list_lock);
        if (stop)
            break;
    }
}

/* Client types (CLIENT LIST / KILL TYPE): Redis's names. A replica's connection has its
 * replication state (cmd/repl_master.c); the link to a primary is a thread of its own, not a
 * client: CLIENT KILL reaches it through repl_link_kill. */
enum { CT_ANY = -1, CT_NORMAL, CT_MASTER, CT_REPLICA, CT_PUBSUB };

static int client_type_by_name(struct conn *c, int i)
{
    if (arg_is(c, i, "normal"))
        return CT_NORMAL;
    if (arg_is(c, i, "master"))
        return CT_MASTER;
    if (arg_is(c, i, "replica") || arg_is(c, i, "slave"))
        return CT_REPLICA;
    if (arg_is(c, i, "pubsub"))
        return CT_PUBSUB;
    return CT_ANY;
}

static int client_type(struct conn *x)
{
    if (__atomic_load_n(&x->repl, __ATOMIC_RELAXED))
        return CT_REPLICA;
    return atomic_load_explicit(&x->nsub, memory_order_relaxed) ||
                   atomic_load_explicit(&x->npsub, memory_order_relaxed)
               ? CT_PUBSUB
               : CT_NORMAL;
}

struct list_arg {
    struct buf out;
    long long *ids;
    int nids;
    int type;
};

static int list_one(struct conn *c, struct conn *x, void *arg)
{
    struct list_arg *a = arg;
    char line[1024];
    int n;

    if (a->type != CT_ANY && client_type(x) != a->type)
        return 0;
    /* Killed (CLIENT KILL, an ACL change, a replica dropped, client eviction) but not yet
     * closed by its own worker: Redis frees such a client before its reply, so it is gone. */
    if (x != c && atomic_load_explicit(&x->kill, memory_order_relaxed))
        return 0;
    if (a->nids) {
        int hit = 0;
        for (int i = 0; i < a->nids; i++)
            hit |= (unsigned long long)a->ids[i] == x->id;
        if (!hit)
            return 0;
    }
    n = client_info(c, x, line, sizeof(line));
    if (n > (int)sizeof(line) - 1)
        n = (int)sizeof(line) - 1;
    buf_append(&a->out, line, (size_t)n);
    return 0;
}

struct kill_arg {
    int by_id;
    unsigned long long id;
    char addr[128];
    char laddr[128];
    int skipme;
    int killed;
    int self;
    int type;
};

static int kill_one(struct conn *c, struct conn *x, void *arg)
{
    struct kill_arg *a = arg;

    if (a->by_id && x->id != a->id)
        return 0;
    if (a->addr[0] && strcmp(a->addr, x->addr))
        return 0;
    if (a->laddr[0] && strcmp(a->laddr, x->laddr))
        return 0;
    if (a->type != CT_ANY && client_type(x) != a->type)
        return 0;
    if (x == c) {
        if (a->skipme)
            return 0;
        a->self = 1;
    } else {
        atomic_store(&x->kill, 1);
        worker_wake(x->w);
    }
    a->killed++;
    return 0;
}

/* ---- client eviction (maxmemory-clients) ---- */

/* Taken by one evicting thread at a time, before the workers' list locks (every one, in
 * ascending index order, held while it picks: the connections stay in their lists, so
 * none is freed under it). Only when the clients' memory reached the limit. */
static pthread_mutex_t evict_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t evicted_clients;

void cmd_evicted_clients_reset(void)
{
    atomic_store_explicit(&evicted_clients, 0, memory_order_relaxed);
}

uint64_t cmd_evicted_clients(void)
{
    return atomic_load_explicit(&evicted_clients, memory_order_relaxed);
}

struct evict_cand {
    struct conn *x;
    size_t mem;
};

static int evict_cand_cmp(const void *a, const void *b)
{
    size_t ma = ((const struct evict_cand *)a)->mem, mb = ((const struct evict_cand *)b)->mem;
    return ma < mb ? 1 : ma > mb ? -1 : 0;
}

/* As Redis's evictClients: while the memory of the normal and Pub/Sub clients is at or over
 * the limit, close the largest evictable one (not CLIENT NO-EVICT). Redis keeps the clients
 * in buckets by log2 of their memory and takes the top bucket first; here the candidates are
 * sorted by their memory, largest first. A client of another worker is killed as CLIENT
 * KILL does (its worker closes it on its wake-up); its memory counts as gone meanwhile
 * (srv->evict_pending). */
static void evict_clients(struct srv *srv, struct conn *self)
{
    size_t lim = conn_evict_limit();
    struct evict_cand *v = NULL;
    size_t n = 0, cap = 0;

    /* not under held stripes (EXEC, a script): the next turn's end evicts */
    if (!lim || store_held || srv_clients_mem(srv) < lim)
        return;
    pthread_mutex_lock(&evict_mu);
    for (int i = 0; i < srv->nworkers; i++)
        pthread_mutex_lock(&srv->workers[i].list_lock);
    for (int i = 0; i < srv->nworkers; i++) {
        for (struct conn *x = srv->workers[i].conns; x; x = x->next) {
            size_t m = LOAD(x->mem_acc);
            if (!m || LOAD(x->no_evict) || atomic_load(&x->kill) || LOAD(x->evict_amt))
                continue;
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct evict_cand *nv = realloc(v, nc * sizeof(*nv));
                if (!nv)
                    break;
                v = nv;
                cap = nc;
            }
            v[n].x = x;
            v[n++].mem = m;
        }
    }
    if (n > 1)
        qsort(v, n, sizeof(*v), evict_cand_cmp);
    size_t i = 0;
    while (srv_clients_mem(srv) >= lim) {
        char line[1024];
        if (i == n) {
            log_warn("Over client maxmemory after evicting all evictable clients");
            break;
        }
        struct conn *x = v[i++].x;
        int k = client_info(self, x, line, sizeof(line));
        if (k > (int)sizeof(line) - 1)
            k = (int)sizeof(line) - 1;
        if (k > 0 && line[k - 1] == '\n')
            k--;
        log_notice("Evicting client: %.*s", k, line);
        __atomic_store_n(&x->evict_amt, v[i - 1].mem, __ATOMIC_RELAXED);
        atomic_fetch_add_explicit(&srv->evict_pending, v[i - 1].mem, memory_order_relaxed);
        atomic_store(&x->kill, 1);
        worker_wake(x->w);
        atomic_fetch_add_explicit(&evicted_clients, 1, memory_order_relaxed);
    }
    for (int j = srv->nworkers - 1; j >= 0; j--)
        pthread_mutex_unlock(&srv->workers[j].list_lock);
    pthread_mutex_unlock(&evict_mu);
    free(v);
}

void cmd_evict_clients(struct worker *w)
{
    evict_clients(w->srv, NULL);
}

void cmd_clients_mem(struct srv *srv, size_t *normal, size_t *replicas)
{
    size_t n = 0, r = 0;
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x; x = x->next) {
            size_t acc = LOAD(x->mem_acc);
            if (acc)
                n += acc;
            else if (x->proto == PROTO_RESP)
                r += LOAD(x->mem); /* replicas and monitors: Redis's "slave" type */
        }
        pthread_mutex_unlock(&w->list_lock);
    }
    *normal = n;
    *replicas = r;
}

/* CONFIG SET maxmemory-clients / maxmemory: as Redis, clients over the new limit go now. */
void cmd_evict_clients_now(struct conn *c)
{
    evict_clients(c->w->srv, c);
}

/* ---- CLIENT PAUSE / UNPAUSE ---- */

_Atomic int64_t cmd_pause_end; /* ms; 0: no pause */
static _Atomic int pause_all;     /* ALL (1) or WRITE (0) */


static _Atomic int pause_shutdown; /* a SHUTDOWN waits for its replicas: writes wait */
#define PAUSE_SHUTDOWN_END (INT64_MAX / 4)

void cmd_pause_shutdown(struct srv *srv, int on)
{
    int64_t cur = atomic_load(&cmd_pause_end);

    atomic_store(&pause_shutdown, on);
    if (on) {
        while (cur < PAUSE_SHUTDOWN_END &&
               !atomic_compare_exchange_weak(&cmd_pause_end, &cur, PAUSE_SHUTDOWN_END))
            ;
        atomic_store(&store_expire_paused_until, PAUSE_SHUTDOWN_END);
        return;
    }
    /* a CLIENT PAUSE set meanwhile ran into the shutdown's: both end here, as Redis */
    if (atomic_compare_exchange_strong(&cmd_pause_end, &cur, 0))
        atomic_store(&pause_all, 0);
    atomic_store(&store_expire_paused_until, 0);
    block_wake_postponed(srv);
}

int64_t cmd_pause_until(struct conn *c, const struct cmd *cmd)
{
    int64_t end = atomic_load_explicit(&cmd_pause_end, memory_order_relaxed);

    if (!end)
        return 0;
    if (TC_UNLIKELY(atomic_load_explicit(&pause_shutdown, memory_order_relaxed)))
        end = PAUSE_SHUTDOWN_END; /* writes wait until the shutdown ends or fails */
    if (end <= c->w->now_ms) {
        /* over: back to the one-load fast path for every later command */
        atomic_compare_exchange_strong(&cmd_pause_end, &end, 0);
        return 0;
    }
    if (atomic_load_explicit(&pause_all, memory_order_relaxed))
        return end;
    /* WRITE: what may change the dataset or reach replicas waits, by the flags the command
     * runs with (a script's from its shebang or function flags; EXEC's from its queue), as
     * Redis's is_may_replicate_command */
    if ((cmd_flags_of(c, cmd) & (CMD_WRITE | CMD_MAY_REPLICATE)) ||
        ((cmd->flags & CMD_TX_CONTROL) && tx_has_writes(c) && !strcmp(cmd->name, "exec")))
        return end;
    return 0;
}

int cmd_pause_holds_primary(const char *name, size_t n)
{
    int64_t end = atomic_load_explicit(&cmd_pause_end, memory_order_relaxed);
    const struct cmd *cmd;

    if (!end || end <= util_now_ms())
        return 0;
    if (atomic_load_explicit(&pause_all, memory_order_relaxed))
        return 1;
    cmd = cmd_lookup(name, n);
    return cmd && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE));
}

/* CLIENT PAUSE timeout [WRITE|ALL]: a longer pause extends the current one, and ALL stays ALL
 * until the pause ends (as Redis keeps the more restrictive kind). */
static void client_pause(struct conn *c)
{
    long long ms;
    int all = 1;

    if (c->argc > 4) {
        reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try "
                        "CLIENT HELP.", (int)(c->argv[1].n > 64 ? 64 : c->argv[1].n), c->argv[1].p);
        return;
    }
    if (block_arg_ms(c, 2, &ms))
        return;
    if (c->argc == 4) {
        if (arg_is(c, 3, "write"))
            all = 0;
        else if (!arg_is(c, 3, "all")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    int64_t now = util_now_ms(), end = now + ms, cur = atomic_load(&cmd_pause_end);
    if (cur > now && atomic_load(&pause_all))
        all = 1;
    if (end > cur && cur != PAUSE_SHUTDOWN_END)
        atomic_store(&cmd_pause_end, end);
    atomic_store(&pause_all, all);
    atomic_store(&store_expire_paused_until, atomic_load(&cmd_pause_end));
    reply_ok(c);
}

static void client_command(struct conn *c)
{
    if (arg_is(c, 1, "id") && c->argc == 2) {
        reply_int(c, (long long)c->id);
    } else if (arg_is(c, 1, "getname") && c->argc == 2) {
        if (c->name[0])
            reply_cstr(c, c->name);
        else
            reply_null(c);
    } else if (arg_is(c, 1, "setname") && c->argc == 3) {
        if (!valid_name(&c->argv[2])) {
            reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        set_name(c, &c->argv[2]);
        reply_ok(c);
    } else if (arg_is(c, 1, "info") && c->argc == 2) {
        char line[1024];
        int n = client_info(c, c, line, sizeof(line));
        reply_verbatim(c, line, (size_t)(n < (int)sizeof(line) ? n : (int)sizeof(line) - 1));
    } else if (arg_is(c, 1, "list")) {
        struct list_arg a = {{0}, NULL, 0, CT_ANY};
        long long ids[64];
        for (int i = 2; i < c->argc; i++) {
            if (arg_is(c, i, "type") && i + 1 < c->argc) {
                if ((a.type = client_type_by_name(c, i + 1)) == CT_ANY) {
                    char t[64];
                    arg_cstr(c, i + 1, t, sizeof(t));
                    reply_errorf(c, "ERR Unknown client type '%s'", t);
                    return;
                }
                i++;
            } else if (arg_is(c, i, "id") && i + 1 < c->argc) {
                for (i++; i < c->argc && a.nids < 64; i++) {
                    if (!util_str2ll(c->argv[i].p, c->argv[i].n, &ids[a.nids]) || ids[a.nids] <= 0) {
                        reply_error(c, "ERR Invalid client ID");
                        return;
                    }
                    a.nids++;
                }
                a.ids = ids;
            } else {
                reply_error(c, ERR_SYNTAX);
                return;
            }
        }
        /* as in Redis, where a client's memory is always current and over-limit clients are
         * gone before the next command: this worker's clients account their buffers now
         * (written to outside their own I/O, e.g. tracking redirections), then eviction */
        if (__atomic_load_n(&cfg.maxmemory_clients, __ATOMIC_RELAXED)) {
            for (struct conn *x = c->w->conns; x; x = x->next)
                if (x != c)
                    conn_publish(x);
            cmd_evict_clients_now(c);
        }
        clients_visit(c, list_one, &a);
        reply_verbatim(c, a.out.data ? a.out.data : "", buf_len(&a.out));
        buf_deinit(&a.out);
    } else if (arg_is(c, 1, "kill") && c->argc >= 3) {
        struct kill_arg a;
        memset(&a, 0, sizeof(a));
        a.type = CT_ANY;
        if (c->argc == 3) {
            arg_cstr(c, 2, a.addr, sizeof(a.addr));
            clients_visit(c, kill_one, &a);
            a.killed += repl_link_kill(a.addr, "");
            if (!a.killed) {
                reply_error(c, "ERR No such client");
                return;
            }
            reply_ok(c);
        } else {
            a.skipme = 1;
            if ((c->argc - 2) % 2) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
            for (int i = 2; i < c->argc; i += 2) {
                if (arg_is(c, i, "id")) {
                    long long id;
                    if (!util_str2ll(c->argv[i + 1].p, c->argv[i + 1].n, &id) || id <= 0) {
                        reply_error(c, "ERR client-id should be greater than 0");
                        return;
                    }
                    a.by_id = 1;
                    a.id = (unsigned long long)id;
                } else if (arg_is(c, i, "addr")) {
                    arg_cstr(c, i + 1, a.addr, sizeof(a.addr));
                } else if (arg_is(c, i, "laddr")) {
                    arg_cstr(c, i + 1, a.laddr, sizeof(a.laddr));
                } else if (arg_is(c, i, "skipme")) {
                    if (arg_is(c, i + 1, "yes"))
                        a.skipme = 1;
                    else if (arg_is(c, i + 1, "no"))
                        a.skipme = 0;
                    else {
                        reply_error(c, ERR_SYNTAX);
                        return;
                    }
                } else if (arg_is(c, i, "type")) {
                    if ((a.type = client_type_by_name(c, i + 1)) == CT_ANY) {
                        char t[64];
                        arg_cstr(c, i + 1, t, sizeof(t));
                        reply_errorf(c, "ERR Unknown client type '%s'", t);
                        return;
                    }
                } else if (arg_is(c, i, "user")) {
                    /* one user exists until ACL users do: "default", every client's */
                    if (!arg_is(c, i + 1, "default")) {
                        char u[64];
                        arg_cstr(c, i + 1, u, sizeof(u));
                        reply_errorf(c, "ERR No such user '%s'", u);
                        return;
                    }
                } else {
                    reply_error(c, ERR_SYNTAX);
                    return;
                }
            }
            clients_visit(c, kill_one, &a);
            /* the link to the primary is no connection: Redis's master client */
            if (!a.by_id && (a.type == CT_ANY || a.type == CT_MASTER))
                a.killed += repl_link_kill(a.addr, a.laddr);
            reply_int(c, a.killed);
        }
        if (a.self)
            c->flags |= CONN_CLOSE_AFTER_REPLY;
    } else if (arg_is(c, 1, "pause") && c->argc >= 3) {
        client_pause(c);
    } else if (arg_is(c, 1, "unpause") && c->argc == 2) {
        int sd = atomic_load(&pause_shutdown); /* a shutdown's pause of writes stays */
        atomic_store(&cmd_pause_end, sd ? PAUSE_SHUTDOWN_END : 0);
        atomic_store(&pause_all, 0);
        atomic_store(&store_expire_paused_until, sd ? PAUSE_SHUTDOWN_END : 0);
        block_wake_postponed(c->w->srv);
        reply_ok(c);
    } else if (arg_is(c, 1, "reply") && c->argc == 3) {
        if (arg_is(c, 2, "on")) {
            c->reply_mode = 0;
            reply_ok(c);
        } else if (arg_is(c, 2, "off")) {
            c->reply_mode = 1;
        } else if (arg_is(c, 2, "skip")) {
            if (c->reply_mode != 1)
                c->reply_mode = 2; /* as Redis: SKIP while OFF keeps it OFF (and SKIP while
                                    * a SKIP covers this command skips the next one) */
        } else {
            reply_error(c, ERR_SYNTAX);
        }
    } else if (arg_is(c, 1, "setinfo") && c->argc == 4) {
        /* (Redis 7.2's) LIB-NAME / LIB-VER, kept for CLIENT INFO readers of the future */
        int ver = arg_is(c, 2, "lib-ver");
        char *dst = ver ? c->lib_ver : c->lib_name;
        size_t n = c->argv[3].n < 31 ? c->argv[3].n : 31;
        if (!ver && !arg_is(c, 2, "lib-name")) {
            char o[64];
            arg_cstr(c, 2, o, sizeof(o));
            reply_errorf(c, "ERR Unrecognized option '%s'", o);
            return;
        }
        if (!valid_name(&c->argv[3])) {
            reply_errorf(c, "ERR %s cannot contain spaces, newlines or special characters.",
                         ver ? "lib-ver" : "lib-name");
            return;
        }
        memcpy(dst, c->argv[3].p, n);
        dst[n] = '\0';
        reply_ok(c);
    } else if ((arg_is(c, 1, "no-evict") || arg_is(c, 1, "no-touch")) && c->argc == 3) {
        int on = arg_is(c, 2, "on");
        if (!on && !arg_is(c, 2, "off")) {
            reply_error(c, ERR_SYNTAX);
            return;
        }
        if (arg_is(c, 1, "no-evict"))
            __atomic_store_n(&c->no_evict, (uint8_t)on, __ATOMIC_RELAXED);
        else
            __atomic_store_n(&c->no_touch, (uint8_t)on, __ATOMIC_RELAXED);
        reply_ok(c);
    } else if (arg_is(c, 1, "unblock") && (c->argc == 3 || c->argc == 4)) {
        long long id;
        int error = 0;
        if (!util_str2ll(c->argv[2].p, c->argv[2].n, &id)) {
            reply_error(c, ERR_NOTINT);
            return;
        }
        if (c->argc == 4) {
            if (arg_is(c, 3, "error"))
                error = 1;
            else if (!arg_is(c, 3, "timeout")) {
                reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
                return;
            }
        }
        reply_int(c, block_unblock_request(c->w->srv, (unsigned long long)id, error));
    } else if (arg_is(c, 1, "help")) {
        static const char *help[] = {
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GETNAME", "    Return the name of the current connection.",
            "ID", "    Return the ID of the current connection.",
            "INFO", "    Return information about the current client connection.",
            "KILL <ip:port>", "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO).",
            "LIST [options ...]", "    Return information about client connections.",
            "SETNAME <name>", "    Assign the name <name> to the current connection.",
            "HELP", "    Print this help."};
        reply_help(c, help);
    } else {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        if (arg_is(c, 1, "id") || arg_is(c, 1, "getname") || arg_is(c, 1, "setname") ||
            arg_is(c, 1, "info") || arg_is(c, 1, "kill") || arg_is(c, 1, "setinfo")) {
            for (char *p = sub; *p; p++)
                *p = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
            reply_errorf(c, "ERR wrong number of arguments for 'client|%s' command", sub);
            return;
        }
        reply_errorf(c, "ERR unknown subcommand '%s'. Try CLIENT HELP.", sub);
    }
}

static struct cmd client_subs[] = {
    {"client|id", client_command, 2, "noscript loading stale", "@connection", NULL, "connection", "The connection's numeric ID"},
    {"client|getname", client_command, 2, "noscript loading stale", "@connection", NULL, "connection", "The name given to this connection"},
    {"client|setname", client_command, 3, "noscript loading stale", "@connection", NULL, "connection", "Give this connection a name"},
    {"client|info", client_command, 2, "noscript loading stale", "@connection", NULL, "connection", "This connection, as a CLIENT LIST line"},
    {"client|list", client_command, -2, "admin noscript loading stale", "@connection", NULL, "connection", "Every connection, one line each"},
    {"client|kill", client_command, -3, "admin noscript loading stale", "@connection", NULL, "connection", "Close connections by address, ID or filter"},
    {"client|pause", client_command, -3, "admin noscript loading stale", "@connection", NULL, "connection", "Stop processing commands from clients for some time"},
    {"client|unpause", client_command, 2, "admin noscript loading stale", "@connection", NULL, "connection", "Resume processing of clients that were paused"},
    {"client|reply", client_command, 3, "noscript loading stale", "@connection", NULL, "connection", "Instruct the server whether to reply to commands"},
    {"client|setinfo", client_command, 4, "noscript loading stale", "@connection", NULL, "connection", "Record the client library name or version"},
    {"client|no-evict", client_command, 3, "admin noscript loading stale", "@connection", NULL, "connection", "Exempt this connection from client eviction"},
    {"client|no-touch", client_command, 3, "noscript loading stale", "@connection", NULL, "connection", "Keep this connection's reads from touching key access times"},
    {"client|unblock", client_command, -3, "admin noscript loading stale", "@connection", NULL, "connection", "Wake a connection blocked in a blocking command"},
    {"client|tracking", tracking_client_command, -3, "noscript loading stale", "@connection", NULL, "connection", "Turn client-side caching invalidations on or off"},
    {"client|caching", tracking_client_command, 3, "noscript loading stale", "@connection", NULL, "connection", "Whether the next command's keys are tracked (OPTIN / OPTOUT)"},
    {"client|getredir", tracking_client_command, 2, "noscript loading stale", "@connection", NULL, "connection", "The client tracking invalidations are redirected to"},
    {"client|trackinginfo", tracking_client_command, 2, "noscript loading stale", "@connection", NULL, "connection", "This connection's tracking mode, redirect and prefixes"},
    {"client|help", client_command, 2, "loading stale", "@connection", NULL, "connection", "List the CLIENT subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"ping", ping_command, -1, "fast tc:subscribed", "@connection", NULL, "connection", "Ping the server"},
    {"echo", echo_command, 2, "loading stale fast", "@connection", NULL, "connection", "Echo the given string"},
    {"quit", quit_command, -1, "noscript loading stale fast no_auth allow_busy tc:txcontrol tc:subscribed", "@connection", NULL, "connection", "Close the connection"},
    {"select", select_command, 2, "loading stale fast", "@connection", NULL, "connection", "Change the selected database for the current connection"},
    {"auth", auth_command, -2, "noscript loading stale fast no_auth allow_busy", "@connection", NULL, "connection", "Authenticate to the server"},
    {"hello", hello_command, -1, "noscript loading stale fast no_auth allow_busy", "@connection", NULL, "connection", "Handshake with Redis"},
    {"reset", reset_command, 1, "noscript loading stale fast no_auth allow_busy tc:txcontrol tc:subscribed", "@connection", NULL, "connection", "Reset the connection"},
    {"client", client_command, -2, "", "", NULL, "connection", "A container for client connection commands", client_subs},
};

void cmd_conn_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
