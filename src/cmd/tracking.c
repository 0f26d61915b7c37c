#include "cmd/tracking.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/multi.h"
#include "cmd/pubsub.h"
#include "core/config.h"

/* ---- the key table ---- */

#define NSHARDS 256 /* power of two */

struct tkey {
    struct tkey *next;
    uint64_t hash;
    uint64_t *ids; /* readers' client IDs */
    uint32_t nids, cap;
    size_t n;
    char p[];
};

struct tshard {
    pthread_mutex_t lock;
    struct tkey **b; /* buckets (power of two), NULL until the first key */
    size_t nb, count;
} __attribute__((aligned(64)));

static struct tshard shards[NSHARDS];
static pthread_once_t shards_once = PTHREAD_ONCE_INIT;
static _Atomic long tkeys, titems, tprefixes;

/* ---- tracking clients ---- */

#define TF_BCAST 0x01
#define TF_OPTIN 0x02
#define TF_OPTOUT 0x04
#define TF_NOLOOP 0x08

/* A tracking client (c->trk): written by its owner under reg_lock, read by any thread
 * under reg_lock; caching is the owner's alone. */
struct tstate {
    struct conn *c;
    uint64_t id;
    uint64_t redir; /* REDIRECT client ID, 0 for none */
    unsigned flags; /* TF_* */
    int on;         /* in the registry */
    int caching;    /* CLIENT CACHING given for the next command (owner only) */
    int broken;     /* the REDIRECT client is gone (under reg_lock) */
    char **pfx;     /* BCAST prefixes */
    size_t *pl;
    int npfx;
};

_Atomic long tracking_nclients;
__thread uint64_t tracking_writer;
static _Atomic long nbcast;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tstate **reg; /* under reg_lock */
static int nreg, capreg;
static struct srv *tsrv;

static void shards_init(void)
{
    for (int i = 0; i < NSHARDS; i++)
        pthread_mutex_init(&shards[i].lock, NULL);
}

static struct tstate *reg_find(uint64_t id)
{
    for (int i = 0; i < nreg; i++)
        if (reg[i]->id == id)
            return reg[i];
    return NULL;
}

/* Post an invalidation to ts's receiver (reg_lock held, which keeps registered connections
 * alive; a redirect target outside the registry is found under its worker's list lock). */
static void send_locked(struct tstate *ts, int kind, const char *p, size_t n)
{
    if (!ts->redir) {
        pubsub_post_conn(ts->c, kind | PUBSUB_INV_SELF, p, n);
        return;
    }
    struct tstate *t = reg_find(ts->redir);
    if (t) {
        pubsub_post_conn(t->c, kind, p, n);
        return;
    }
    for (int i = 0; tsrv && i < tsrv->nworkers; i++) {
        struct worker *w = &tsrv->workers[i];
        int found = 0;
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x; x = x->next) {
            if (x->id == ts->redir) {
                pubsub_post_conn(x, kind, p, n);
                found = 1;
                break;
            }
        }
        pthread_mutex_unlock(&w->list_lock);
        if (found)
            return;
    }
    ts->broken = 1;
}

static void entry_free(struct tkey *e)
{
    atomic_fetch_sub_explicit(&titems, e->nids, memory_order_relaxed);
    atomic_fetch_sub_explicit(&tkeys, 1, memory_order_relaxed);
    free(e->ids);
    free(e);
}

/* Tell e's readers (and, when bcast, the matching broadcast clients) that key p changed. */
static void deliver_key(struct tkey *e, const char *p, size_t n, uint64_t writer, int bcast)
{
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 0; e && i < e->nids; i++) {
        struct tstate *ts = reg_find(e->ids[i]);
        if (!ts || (ts->flags & TF_BCAST) || ((ts->flags & TF_NOLOOP) && ts->id == writer))
            continue;
        send_locked(ts, PUBSUB_INV, p, n);
    }
    for (int i = 0; bcast && i < nreg; i++) {
        struct tstate *ts = reg[i];
        if (!(ts->flags & TF_BCAST) || ((ts->flags & TF_NOLOOP) && ts->id == writer))
            continue;
        for (int j = 0; j < ts->npfx; j++) {
            if (n >= ts->pl[j] && !memcmp(p, ts->pfx[j], ts->pl[j])) {
                send_locked(ts, PUBSUB_INV, p, n);
                break;
            }
        }
    }
    pthread_mutex_unlock(&reg_lock);
}

/* Detach key p from shard sh (its lock held). */
static struct tkey *shard_take_locked(struct tshard *sh, uint64_t h, const char *p, size_t n)
{
    if (!sh->b)
        return NULL;
    for (struct tkey **pp = &sh->b[(h >> 8) & (sh->nb - 1)]; *pp; pp = &(*pp)->next) {
        struct tkey *e = *pp;
        if (e->hash == h && e->n == n && !memcmp(e->p, p, n)) {
            *pp = e->next;
            sh->count--;
            return e;
        }
    }
    return NULL;
}

void tracking_invalidate_slow(const char *p, size_t n)
{
    uint64_t h = util_hash(p, n);
    struct tshard *sh = &shards[h & (NSHARDS - 1)];
    struct tkey *e = NULL;
    int bcast = atomic_load_explicit(&nbcast, memory_order_relaxed) != 0;

    pthread_once(&shards_once, shards_init);
    pthread_mutex_lock(&sh->lock);
    e = shard_take_locked(sh, h, p, n);
    pthread_mutex_unlock(&sh->lock);
    if (e || bcast)
        deliver_key(e, p, n, tracking_writer, bcast);
    if (e)
        entry_free(e);
}

/* Over tracking-table-max-keys: forget (and invalidate) keys from the shards after from. */
static void table_trim(unsigned from)
{
    long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);

    for (int evicted = 0; max > 0 && atomic_load(&tkeys) > max && evicted < 16; ) {
        struct tkey *e = NULL;
        for (unsigned k = 0; k < NSHARDS && !e; k++) {
            struct tshard *sh = &shards[(from + 1 + k) & (NSHARDS - 1)];
            pthread_mutex_lock(&sh->lock);
            for (size_t b = 0; sh->b && b < sh->nb && !e; b++) {
                if ((e = sh->b[b])) {
                    sh->b[b] = e->next;
                    sh->count--;
                }
            }
            pthread_mutex_unlock(&sh->lock);
        }
        if (!e)
            return;
        deliver_key(e, e->p, e->n, 0, 0);
        entry_free(e);
        evicted++;
    }
}

static int shard_grow(struct tshard *sh)
{
    size_t nb = sh->nb ? sh->nb * 2 : 16;
    struct tkey **b = calloc(nb, sizeof(*b));

    if (!b)
        return -1;
    for (size_t i = 0; i < sh->nb; i++) {
        struct tkey *e = sh->b[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[(e->hash >> 8) & (nb - 1)];
            b[(e->hash >> 8) & (nb - 1)] = e;
        }
    }
    free(sh->b);
    sh->b = b;
    sh->nb = nb;
    return 0;
}

/* Remember that client id read key p. */
static void remember(uint64_t id, const char *p, size_t n)
{
    uint64_t h = util_hash(p, n);
    unsigned si = (unsigned)(h & (NSHARDS - 1));
    struct tshard *sh = &shards[si];
    struct tkey *e = NULL;
    int created = 0;

    pthread_mutex_lock(&sh->lock);
    if (sh->b)
        for (e = sh->b[(h >> 8) & (sh->nb - 1)]; e; e = e->next)
            if (e->hash == h && e->n == n && !memcmp(e->p, p, n))
                break;
    if (!e) {
        if ((sh->count >= sh->nb && shard_grow(sh)) || !(e = calloc(1, sizeof(*e) + n))) {
            pthread_mutex_unlock(&sh->lock);
            return;
        }
        e->hash = h;
        e->n = n;
        memcpy(e->p, p, n);
        e->next = sh->b[(h >> 8) & (sh->nb - 1)];
        sh->b[(h >> 8) & (sh->nb - 1)] = e;
        sh->count++;
        created = 1;
    }
    /* the readers are kept sorted: a key many clients read is found by binary search (a
     * re-read, the common case, changes nothing) */
    uint32_t lo = 0, hi = e->nids;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (e->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == e->nids || e->ids[lo] != id) {
        if (e->nids == e->cap) {
            uint32_t cap = e->cap ? e->cap * 2 : 2;
            uint64_t *v = realloc(e->ids, cap * sizeof(*v));
            if (v) {
                e->ids = v;
                e->cap = cap;
            }
        }
        if (e->nids < e->cap) {
            memmove(e->ids + lo + 1, e->ids + lo, (e->nids - lo) * sizeof(*e->ids));
            e->ids[lo] = id;
            e->nids++;
            atomic_fetch_add_explicit(&titems, 1, memory_order_relaxed);
        }
    }
    pthread_mutex_unlock(&sh->lock);
    long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);
    if (created && atomic_fetch_add_explicit(&tkeys, 1, memory_order_relaxed) + 1 > max &&
        max > 0)
        table_trim(si);
}

void tracking_flush(void)
{
    if (!atomic_load_explicit(&tracking_nclients, memory_order_relaxed) &&
        !atomic_load_explicit(&tkeys, memory_order_relaxed))
        return;
    pthread_once(&shards_once, shards_init);
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++)
        send_locked(reg[i], PUBSUB_INV_NULL, "", 0);
    pthread_mutex_unlock(&reg_lock);
    for (int s = 0; s < NSHARDS; s++) {
        struct tshard *sh = &shards[s];
        pthread_mutex_lock(&sh->lock);
        for (size_t b = 0; sh->b && b < sh->nb; b++) {
            struct tkey *e = sh->b[b], *next;
            for (; e; e = next) {
                next = e->next;
                entry_free(e);
            }
            sh->b[b] = NULL;
        }
        sh->count = 0;
        pthread_mutex_unlock(&sh->lock);
    }
}

static int remember_cb(void *arg, int pos, unsigned flags)
{
    struct conn *c = arg;
    (void)flags;
    remember(c->id, c->argv[pos].p, c->argv[pos].n);
    return 0;
}

void tracking_after_command(struct conn *c, const struct cmd *cmd)
{
    struct tstate *ts = c->trk;
    const struct cmd *top = cmd->parent ? cmd->parent : cmd;

    if (!ts || !ts->on)
        return;
    if ((cmd->flags & CMD_READONLY) && !(ts->flags & TF_BCAST) &&
        !((ts->flags & TF_OPTIN) && !ts->caching) && !((ts->flags & TF_OPTOUT) && ts->caching))
        cmd_keys(cmd, c->argc, c->argv, remember_cb, c);
    /* CLIENT CACHING lasts for the next command (any CLIENT subcommand keeps it, and a
     * transaction keeps it until EXEC, as Redis) */
    if (strcmp(top->name, "client") && !tx_active(c))
        ts->caching = 0;
}

/* ---- the registry ---- */

static void prefixes_free(struct tstate *ts)
{
    for (int i = 0; i < ts->npfx; i++)
        free(ts->pfx[i]);
    atomic_fetch_sub_explicit(&tprefixes, ts->npfx, memory_order_relaxed);
    free(ts->pfx);
    free(ts->pl);
    ts->pfx = NULL;
    ts->pl = NULL;
    ts->npfx = 0;
}

static void tracking_off(struct conn *c)
{
    struct tstate *ts = c->trk;

    if (!ts || !ts->on)
        return;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++) {
        if (reg[i] == ts) {
            reg[i] = reg[--nreg];
            break;
        }
    }
    if (ts->flags & TF_BCAST)
        atomic_fetch_sub(&nbcast, 1);
    ts->on = 0;
    ts->flags = 0;
    ts->redir = 0;
    ts->caching = 0;
    ts->broken = 0;
    prefixes_free(ts);
    pthread_mutex_unlock(&reg_lock);
    atomic_fetch_sub(&tracking_nclients, 1);
}

void tracking_close(struct conn *c)
{
    if (!c->trk)
        return;
    tracking_off(c);
    free(c->trk);
    c->trk = NULL;
}

/* 1 when a is a prefix of b or b of a. */
static int overlap(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    return !memcmp(a, b, n);
}

static void tracking_command(struct conn *c)
{
    struct tstate *ts = c->trk;
    unsigned opts = 0;
    long long redir = 0;
    int on, first_pfx = -1, npfx = 0;

    if (arg_is(c, 2, "on"))
        on = 1;
    else if (arg_is(c, 2, "off"))
        on = 0;
    else {
        reply_error(c, "ERR syntax error");
        return;
    }
    for (int j = 3; j < c->argc; j++) {
        int more = j + 1 < c->argc;
        if (arg_is(c, j, "redirect") && more) {
            j++;
            if (redir) {
                reply_error(c, "ERR A client can only redirect to a single other client");
                return;
            }
            if (arg_ll(c, j, &redir, "ERR value is not an integer or out of range"))
                return;
            if ((uint64_t)redir == c->id) {
                reply_error(c, "ERR A client can't redirect to itself");
                return;
            }
            int found = 0;
            for (int i = 0; i < c->w->srv->nworkers && !found; i++) {
                struct worker *w = &c->w->srv->workers[i];
                pthread_mutex_lock(&w->list_lock);
                for (struct conn *x = w->conns; x; x = x->next)
                    if (x->id == (uint64_t)redir && x->proto == PROTO_RESP)
                        found = 1;
                pthread_mutex_unlock(&w->list_lock);
            }
            if (!found) {
                reply_error(c, "ERR The client ID you want redirect to does not exist");
                return;
            }
        } else if (arg_is(c, j, "bcast")) {
            opts |= TF_BCAST;
        } else if (arg_is(c, j, "optin")) {
            opts |= TF_OPTIN;
        } else if (arg_is(c, j, "optout")) {
            opts |= TF_OPTOUT;
        } else if (arg_is(c, j, "noloop")) {
            opts |= TF_NOLOOP;
        } else if (arg_is(c, j, "prefix") && more) {
            j++;
            if (first_pfx < 0)
                first_pfx = j;
            npfx++;
        } else {
            reply_error(c, "ERR syntax error");
            return;
        }
    }
    if (!on) {
        tracking_off(c);
        reply_ok(c);
        return;
    }
    if (!(opts & TF_BCAST) && npfx) {
        reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
        return;
    }
    if (ts && ts->on && !!(ts->flags & TF_BCAST) != !!(opts & TF_BCAST)) {
        reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for "
                       "this client, and then re-enabling it with a different mode.");
        return;
    }
    if ((opts & TF_BCAST) && (opts & (TF_OPTIN | TF_OPTOUT))) {
        reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return;
    }
    if ((opts & TF_OPTIN) && (opts & TF_OPTOUT)) {
        reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return;
    }
    if (ts && ts->on && (((opts & TF_OPTIN) && (ts->flags & TF_OPTOUT)) ||
                         ((opts & TF_OPTOUT) && (ts->flags & TF_OPTIN)))) {
        reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for "
                       "this client, and then re-enabling it with a different mode.");
        return;
    }
    /* prefixes: none may overlap one the client has or another one given */
    for (int j = first_pfx; npfx && j < c->argc; j++) {
        if (!arg_is(c, j - 1, "prefix"))
            continue;
        const struct slice *a = &c->argv[j];
        for (int k = 0; ts && k < ts->npfx; k++) {
            if (overlap(a->p, a->n, ts->pfx[k], ts->pl[k])) {
                reply_errorf(c, "ERR Prefix '%.*s' overlaps with an existing prefix '%s'. "
                                "Prefixes for a single client must not overlap.",
                             (int)a->n, a->p, ts->pfx[k]);
                return;
            }
        }
        for (int k = j + 1; k < c->argc; k++) {
            if (!arg_is(c, k - 1, "prefix") || k - 1 == j)
                continue;
            if (overlap(a->p, a->n, c->argv[k].p, c->argv[k].n)) {
                reply_errorf(c, "ERR Prefix '%.*s' overlaps with another provided prefix "
                                "'%.*s'. Prefixes for a single client must not overlap.",
                             (int)a->n, a->p, (int)c->argv[k].n, c->argv[k].p);
                return;
            }
        }
    }
    if (!ts && !(ts = c->trk = calloc(1, sizeof(*ts)))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    pthread_once(&shards_once, shards_init);
    pthread_mutex_lock(&reg_lock);
    if (!ts->on) {
        if (nreg == capreg) {
            int cap = capreg ? capreg * 2 : 16;
            struct tstate **v = realloc(reg, (size_t)cap * sizeof(*v));
            if (!v) {
                pthread_mutex_unlock(&reg_lock);
                reply_error(c, "ERR out of memory");
                return;
            }
            reg = v;
            capreg = cap;
        }
        reg[nreg++] = ts;
        ts->c = c;
        ts->id = c->id;
        ts->on = 1;
        atomic_fetch_add(&tracking_nclients, 1);
        if (opts & TF_BCAST)
            atomic_fetch_add(&nbcast, 1);
    }
    ts->flags = opts;
    ts->redir = (uint64_t)redir;
    ts->broken = 0;
    if (opts & TF_BCAST) {
        int want = ts->npfx + (npfx ? npfx : (ts->npfx ? 0 : 1));
        char **pv = realloc(ts->pfx, (size_t)want * sizeof(*pv));
        size_t *lv = pv ? realloc(ts->pl, (size_t)want * sizeof(*lv)) : NULL;
        if (pv)
            ts->pfx = pv;
        if (lv)
            ts->pl = lv;
        for (int j = first_pfx; lv && j >= 0 && j < c->argc; j++) {
            if (!arg_is(c, j - 1, "prefix"))
                continue;
            char *p = malloc(c->argv[j].n + 1);
            if (!p)
                break;
            memcpy(p, c->argv[j].p, c->argv[j].n);
            p[c->argv[j].n] = '\0';
            ts->pfx[ts->npfx] = p;
            ts->pl[ts->npfx++] = c->argv[j].n;
            atomic_fetch_add(&tprefixes, 1);
        }
        if (lv && !npfx && !ts->npfx && (ts->pfx[0] = calloc(1, 1))) {
            ts->pl[0] = 0; /* BCAST without PREFIX: every key */
            ts->npfx = 1;
            atomic_fetch_add(&tprefixes, 1);
        }
    }
    pthread_mutex_unlock(&reg_lock);
    reply_ok(c);
}

static void trackinginfo_command(struct conn *c)
{
    struct tstate *ts = c->trk;
    int on = ts && ts->on;
    const char *fl[8];
    int n = 0;

    if (!on) {
        fl[n++] = "off";
    } else {
        fl[n++] = "on";
        if (ts->flags & TF_BCAST)
            fl[n++] = "bcast";
        if (ts->flags & TF_OPTIN)
            fl[n++] = "optin";
        if (ts->flags & TF_OPTOUT)
            fl[n++] = "optout";
        if ((ts->flags & TF_OPTIN) && ts->caching)
            fl[n++] = "caching-yes";
        if ((ts->flags & TF_OPTOUT) && ts->caching)
            fl[n++] = "caching-no";
        if (ts->flags & TF_NOLOOP)
            fl[n++] = "noloop";
        pthread_mutex_lock(&reg_lock);
        if (ts->broken)
            fl[n++] = "broken_redirect";
        pthread_mutex_unlock(&reg_lock);
    }
    reply_map(c, 3);
    reply_bulk(c, "flags", 5);
    reply_set(c, n);
    for (int i = 0; i < n; i++)
        reply_bulk(c, fl[i], strlen(fl[i]));
    reply_bulk(c, "redirect", 8);
    reply_int(c, on ? (long long)ts->redir : -1);
    reply_bulk(c, "prefixes", 8);
    pthread_mutex_lock(&reg_lock);
    reply_array(c, on ? ts->npfx : 0);
    for (int i = 0; on && i < ts->npfx; i++)
        reply_bulk(c, ts->pfx[i], ts->pl[i]);
    pthread_mutex_unlock(&reg_lock);
}

void tracking_client_command(struct conn *c)
{
    struct tstate *ts = c->trk;

    if (arg_is(c, 1, "tracking")) {
        tracking_command(c);
    } else if (arg_is(c, 1, "caching")) {
        if (!ts || !ts->on || !(ts->flags & (TF_OPTIN | TF_OPTOUT))) {
            reply_error(c, "ERR CLIENT CACHING can be called only when the client is in "
                           "tracking mode with OPTIN or OPTOUT mode enabled");
        } else if (arg_is(c, 2, "yes")) {
            if (ts->flags & TF_OPTIN) {
                ts->caching = 1;
                reply_ok(c);
            } else {
                reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled "
                               "in OPTIN mode.");
            }
        } else if (arg_is(c, 2, "no")) {
            if (ts->flags & TF_OPTOUT) {
                ts->caching = 1;
                reply_ok(c);
            } else {
                reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled "
                               "in OPTOUT mode.");
            }
        } else {
            reply_error(c, "ERR syntax error");
        }
    } else if (arg_is(c, 1, "getredir")) {
        reply_int(c, ts && ts->on ? (long long)ts->redir : -1);
    } else {
        trackinginfo_command(c);
    }
}

void tracking_setup(struct srv *srv)
{
    tsrv = srv;
}

long tracking_total_keys(void)
{
    return atomic_load_explicit(&tkeys, memory_order_relaxed);
}

long tracking_total_items(void)
{
    return atomic_load_explicit(&titems, memory_order_relaxed);
}

long tracking_total_prefixes(void)
{
    return atomic_load_explicit(&tprefixes, memory_order_relaxed);
}
