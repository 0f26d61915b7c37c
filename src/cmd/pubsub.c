#include "cmd/pubsub.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/config.h"
#include "core/log.h"

/* A channel or pattern with its subscribers. */
struct ps_entry {
    struct ps_entry *next;          /* hash chain */
    struct ps_entry *lprev, *lnext; /* every entry of the table, for patterns and CHANNELS */
    struct conn **subs;             /* subscribers, in subscription order */
    int nsubs, cap;
    uint64_t hash;
    size_t n;
    char name[];
};

struct ps_table {
    struct ps_entry **b;
    size_t nb;             /* buckets (power of two) */
    size_t count;          /* entries */
    struct ps_entry *list; /* all entries */
};

/* What one connection is subscribed to (owner only). */
struct ps_name {
    size_t n;
    char p[];
};
/* Kinds of subscription: channels (SUBSCRIBE), patterns (PSUBSCRIBE), shard channels
 * (SSUBSCRIBE: a namespace of their own, as in Redis 7 without cluster). */
enum { PS_CH, PS_PAT, PS_SHARD, PS_KINDS };
struct ps_conn {
    struct ps_name **v[PS_KINDS];
    int nv[PS_KINDS], cap[PS_KINDS];
};

size_t pubsub_mem(const struct conn *c)
{
    const struct ps_conn *pc = c->ps;
    size_t m = sizeof(*pc);
    /* as Redis's pubsubMemOverhead: the per-client entries, not the names (shared) */
    for (int k = 0; k < PS_KINDS; k++)
        m += (size_t)pc->cap[k] * sizeof(*pc->v[k]) + (size_t)pc->nv[k] * sizeof(struct ps_name);
    return m;
}

static const char *const kind_sub[PS_KINDS] = {"subscribe", "psubscribe", "ssubscribe"};
static const char *const kind_unsub[PS_KINDS] = {"unsubscribe", "punsubscribe", "sunsubscribe"};

/* A message on its way to subscribers: shared, freed by the last delivery. */
struct ps_msg {
    _Atomic int refs;
    uint32_t plen; /* pattern bytes (0 and !pattern: a channel message) */
    uint32_t clen;
    int pattern; /* 1: pmessage, 2: smessage, PUBSUB_RAW and up: pubsub_post_conn kinds */
    size_t mlen;
    char data[]; /* pattern, channel, message */
};

static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ps_table tables[PS_KINDS]; /* under ps_lock */
static _Atomic long ps_ntab[PS_KINDS];    /* table sizes for INFO */
static _Atomic long ps_subs;               /* subscriptions of all clients: 0 skips PUBLISH work */

long pubsub_nchannels(void)
{
    return atomic_load_explicit(&ps_ntab[PS_CH], memory_order_relaxed);
}

long pubsub_nshardchannels(void)
{
    return atomic_load_explicit(&ps_ntab[PS_SHARD], memory_order_relaxed);
}

long pubsub_npatterns(void)
{
    return atomic_load_explicit(&ps_ntab[PS_PAT], memory_order_relaxed);
}

int pubsub_count(const struct conn *c)
{
    const struct ps_conn *p = c->ps;
    return p ? p->nv[PS_CH] + p->nv[PS_PAT] + p->nv[PS_SHARD] : 0;
}

/* The count a (un)subscribe reply carries: channels + patterns, or shard channels. */
static int kind_count(const struct conn *c, int kind)
{
    const struct ps_conn *p = c->ps;
    if (!p)
        return 0;
    return kind == PS_SHARD ? p->nv[PS_SHARD] : p->nv[PS_CH] + p->nv[PS_PAT];
}

/* Publish c's subscription counts for CLIENT LIST on other workers. */
static void counts_update(struct conn *c)
{
    const struct ps_conn *p = c->ps;
    atomic_store_explicit(&c->nsub, p ? p->nv[PS_CH] : 0, memory_order_relaxed);
    atomic_store_explicit(&c->npsub, p ? p->nv[PS_PAT] : 0, memory_order_relaxed);
}

/* ---- registry (ps_lock held) ---- */

static struct ps_entry *table_find(struct ps_table *t, const char *p, size_t n, uint64_t h)
{
    if (!t->nb)
        return NULL;
    for (struct ps_entry *e = t->b[h & (t->nb - 1)]; e; e = e->next)
        if (e->hash == h && e->n == n && !memcmp(e->name, p, n))
            return e;
    return NULL;
}

static int table_grow(struct ps_table *t)
{
    size_t nb = t->nb ? t->nb * 2 : 256;
    struct ps_entry **b = calloc(nb, sizeof(*b));

    if (!b)
        return -1;
    for (size_t i = 0; i < t->nb; i++) {
        struct ps_entry *e = t->b[i], *next;
        for (; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    }
    free(t->b);
    t->b = b;
    t->nb = nb;
    return 0;
}

/* Add c to the subscribers of name. Returns 0 or -1 (OOM). */
static int table_add(struct ps_table *t, _Atomic long *count, const char *p, size_t n,
                     struct conn *c)
{
    uint64_t h = util_hash(p, n);
    struct ps_entry *e = table_find(t, p, n, h);

    if (!e) {
        if (t->count >= t->nb && table_grow(t))
            return -1;
        e = calloc(1, sizeof(*e) + n);
        if (!e)
            return -1;
        e->hash = h;
        e->n = n;
        memcpy(e->name, p, n);
        e->next = t->b[h & (t->nb - 1)];
        t->b[h & (t->nb - 1)] = e;
        e->lnext = t->list;
        if (t->list)
            t->list->lprev = e;
        t->list = e;
        t->count++;
        atomic_store_explicit(count, (long)t->count, memory_order_relaxed);
    }
    if (e->nsubs == e->cap) {
        int cap = e->cap ? e->cap * 2 : 4;
        struct conn **s = realloc(e->subs, sizeof(*s) * (size_t)cap);
        if (!s)
            return -1; /* an empty new entry stays: harmless, removed with its last subscriber */
        e->subs = s;
        e->cap = cap;
    }
    e->subs[e->nsubs++] = c;
    return 0;
}

static void table_del(struct ps_table *t, _Atomic long *count, const char *p, size_t n,
                      struct conn *c)
{
    uint64_t h = util_hash(p, n);
    struct ps_entry *e = table_find(t, p, n, h), **pp;

    if (!e)
        return;
    for (int i = 0; i < e->nsubs; i++) {
        if (e->subs[i] == c) {
            /* keep the order of the others: deliveries to them are unaffected anyway */
            memmove(&e->subs[i], &e->subs[i + 1], sizeof(*e->subs) * (size_t)(e->nsubs - i - 1));
            e->nsubs--;
            break;
        }
    }
    if (e->nsubs)
        return;
    for (pp = &t->b[h & (t->nb - 1)]; *pp != e; pp = &(*pp)->next)
        ;
    *pp = e->next;
    if (e->lprev)
        e->lprev->lnext = e->lnext;
    else
        t->list = e->lnext;
    if (e->lnext)
        e->lnext->lprev = e->lprev;
    t->count--;
    atomic_store_explicit(count, (long)t->count, memory_order_relaxed);
    free(e->subs);
    free(e);
}

/* ---- per-connection sets (owner only) ---- */

static struct ps_conn *ps_of(struct conn *c)
{
    if (!c->ps) {
        c->ps = calloc(1, sizeof(struct ps_conn));
        if (c->ps) { /* a subscriber's output has the pubsub class limit only */
            c->flags &= ~CONN_OUT_LIMIT;
            c->flags |= CONN_PUBSUB_LIMIT;
        }
    }
    return c->ps;
}

static int names_find(struct ps_name **v, int nv, const char *p, size_t n)
{
    for (int i = 0; i < nv; i++)
        if (v[i]->n == n && !memcmp(v[i]->p, p, n))
            return i;
    return -1;
}

static int names_add(struct ps_name ***v, int *nv, int *cap, const char *p, size_t n)
{
    struct ps_name *x;

    if (*nv == *cap) {
        int nc = *cap ? *cap * 2 : 4;
        struct ps_name **nvv = realloc(*v, sizeof(*nvv) * (size_t)nc);
        if (!nvv)
            return -1;
        *v = nvv;
        *cap = nc;
    }
    x = malloc(sizeof(*x) + n);
    if (!x)
        return -1;
    x->n = n;
    memcpy(x->p, p, n);
    (*v)[(*nv)++] = x;
    return 0;
}

static void names_del(struct ps_name **v, int *nv, int i)
{
    free(v[i]);
    memmove(&v[i], &v[i + 1], sizeof(*v) * (size_t)(*nv - i - 1));
    (*nv)--;
}

/* ---- replies ---- */

static void reply_sub(struct conn *c, const char *what, int kind, const char *p, size_t n, int isnull)
{
    reply_push_begin(c);
    reply_check(c, resp_add_push(&c->wbuf, 3, c->resp));
    reply_cstr(c, what);
    if (isnull)
        reply_null(c);
    else
        reply_bulk(c, p, n);
    reply_int(c, kind_count(c, kind));
    reply_push_end(c);
}

static void subscribe_generic(struct conn *c, int kind)
{
    struct ps_conn *ps = ps_of(c);

    if (!ps) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        const char *p = c->argv[i].p;
        size_t n = c->argv[i].n;

        if (names_find(ps->v[kind], ps->nv[kind], p, n) < 0) {
            int r;
            if (names_add(&ps->v[kind], &ps->nv[kind], &ps->cap[kind], p, n)) {
                reply_error(c, "ERR out of memory");
                return;
            }
            pthread_mutex_lock(&ps_lock);
            r = table_add(&tables[kind], &ps_ntab[kind], p, n, c);
            pthread_mutex_unlock(&ps_lock);
            if (r) {
                names_del(ps->v[kind], &ps->nv[kind], ps->nv[kind] - 1);
                reply_error(c, "ERR out of memory");
                return;
            }
            atomic_fetch_add_explicit(&ps_subs, 1, memory_order_relaxed);
            counts_update(c);
        }
        reply_sub(c, kind_sub[kind], kind, p, n, 0);
    }
}

static void unsub_one(struct conn *c, int kind, int idx, int notify)
{
    struct ps_conn *ps = c->ps;
    struct ps_name *x = ps->v[kind][idx];

    pthread_mutex_lock(&ps_lock);
    table_del(&tables[kind], &ps_ntab[kind], x->p, x->n, c);
    pthread_mutex_unlock(&ps_lock);
    atomic_fetch_sub_explicit(&ps_subs, 1, memory_order_relaxed);
    if (notify) {
        /* the count after removal, the name before it is freed */
        reply_push_begin(c);
        reply_check(c, resp_add_push(&c->wbuf, 3, c->resp));
        reply_cstr(c, kind_unsub[kind]);
        reply_bulk(c, x->p, x->n);
        names_del(ps->v[kind], &ps->nv[kind], idx);
        reply_int(c, kind_count(c, kind));
        reply_push_end(c);
    } else {
        names_del(ps->v[kind], &ps->nv[kind], idx);
    }
    counts_update(c);
}

static void unsubscribe_generic(struct conn *c, int kind)
{
    struct ps_conn *ps = c->ps;

    if (c->argc == 1) {
        if (!ps || ps->nv[kind] == 0) {
            reply_sub(c, kind_unsub[kind], kind, NULL, 0, 1);
            return;
        }
        while (ps->nv[kind])
            unsub_one(c, kind, 0, 1);
        if (pubsub_count(c) == 0)
            pubsub_reset(c);
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        int idx = ps ? names_find(ps->v[kind], ps->nv[kind], c->argv[i].p, c->argv[i].n) : -1;
        if (idx >= 0)
            unsub_one(c, kind, idx, 1);
        else
            reply_sub(c, kind_unsub[kind], kind, c->argv[i].p, c->argv[i].n, 0);
    }
    if (c->ps && pubsub_count(c) == 0)
        pubsub_reset(c); /* out of subscribed mode: no state left */
}

void pubsub_reset(struct conn *c)
{
    struct ps_conn *ps = c->ps;

    if (!ps)
        return;
    for (int k = 0; k < PS_KINDS; k++) {
        while (ps->nv[k])
            unsub_one(c, k, ps->nv[k] - 1, 0);
        free(ps->v[k]);
    }
    free(ps);
    c->ps = NULL;
    c->flags |= CONN_OUT_LIMIT;
    c->flags &= ~CONN_PUBSUB_LIMIT;
}

static void subscribe_command(struct conn *c)
{
    subscribe_generic(c, PS_CH);
}
static void psubscribe_command(struct conn *c)
{
    subscribe_generic(c, PS_PAT);
}
static void ssubscribe_command(struct conn *c)
{
    subscribe_generic(c, PS_SHARD);
}
static void unsubscribe_command(struct conn *c)
{
    unsubscribe_generic(c, PS_CH);
}
static void punsubscribe_command(struct conn *c)
{
    unsubscribe_generic(c, PS_PAT);
}
static void sunsubscribe_command(struct conn *c)
{
    unsubscribe_generic(c, PS_SHARD);
}

/* ---- PUBLISH ---- */

static struct ps_msg *msg_create(const char *pat, size_t plen, int pattern, const char *ch,
                                 size_t cn, const char *msg, size_t mn, int refs)
{
    struct ps_msg *m = malloc(sizeof(*m) + plen + cn + mn);

    if (!m)
        return NULL;
    atomic_init(&m->refs, refs);
    m->pattern = pattern;
    m->plen = (uint32_t)plen;
    m->clen = (uint32_t)cn;
    m->mlen = mn;
    if (plen)
        memcpy(m->data, pat, plen);
    memcpy(m->data + plen, ch, cn);
    memcpy(m->data + plen + m->clen, msg, mn);
    return m;
}

static void msg_release(void *msg)
{
    struct ps_msg *m = msg;
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
        free(m);
}

/* Post m to every subscriber of e; marks the workers to wake. Returns receivers. */
static long post_all(struct ps_entry *e, struct ps_msg *m, uint8_t *wake)
{
    long n = 0;
    for (int i = 0; i < e->nsubs; i++) {
        struct conn *s = e->subs[i];
        int r = worker_post(s->w, s, m);
        if (r < 0) {
            msg_release(m);
            continue;
        }
        if (r == 1)
            wake[s->w->idx] = 1;
        n++;
    }
    return n;
}

/* Post (ch, msg) to its subscribers; self is the calling worker's index (it drains its own
 * mailbox before it waits again), or -1. Returns the receivers. */
static long publish_to(struct srv *srv, int self, int shard, const char *ch, size_t cn,
                       const char *msg, size_t mn)
{
    long receivers = 0;
    uint8_t wake[256];

    if (!atomic_load_explicit(&ps_subs, memory_order_relaxed))
        return 0;
    memset(wake, 0, (size_t)srv->nworkers);
    pthread_mutex_lock(&ps_lock);
    struct ps_entry *e = table_find(&tables[shard ? PS_SHARD : PS_CH], ch, cn, util_hash(ch, cn));
    if (e && e->nsubs) {
        struct ps_msg *m = msg_create(NULL, 0, shard ? 2 : 0, ch, cn, msg, mn, e->nsubs);
        if (m)
            receivers += post_all(e, m, wake);
    }
    for (e = shard ? NULL : tables[PS_PAT].list; e; e = e->lnext) {
        if (!e->nsubs || !util_glob_match(e->name, e->n, ch, cn, 0))
            continue;
        struct ps_msg *m = msg_create(e->name, e->n, 1, ch, cn, msg, mn, e->nsubs);
        if (m)
            receivers += post_all(e, m, wake);
    }
    pthread_mutex_unlock(&ps_lock);
    for (int i = 0; i < srv->nworkers; i++)
        if (wake[i] && i != self)
            worker_wake(&srv->workers[i]);
    return receivers;
}

long pubsub_publish(struct srv *srv, int self, const char *ch, size_t cn, const char *msg,
                    size_t mn)
{
    return publish_to(srv, self, 0, ch, cn, msg, mn);
}

int pubsub_active(void)
{
    return atomic_load_explicit(&ps_subs, memory_order_relaxed) != 0;
}

static void publish_generic(struct conn *c, int shard)
{
    reply_int(c, publish_to(c->w->srv, c->w->idx, shard, c->argv[1].p, c->argv[1].n,
                            c->argv[2].p, c->argv[2].n));
}

static void publish_command(struct conn *c)
{
    publish_generic(c, 0);
}

static void spublish_command(struct conn *c)
{
    publish_generic(c, 1);
}

static int pubsub_deliver_other(struct conn *c, int kind, const char *p, size_t n);

/* Mailbox hook: write m to c in c's protocol, enforce the pubsub output limit. */
static void deliver(struct conn *c, void *msg)
{
    struct ps_msg *m = msg;
    struct buf *b = &c->wbuf;
    int r = 0;

    if (!(c->flags & CONN_CLOSE_ASAP) && m->pattern >= PUBSUB_RAW) {
        r = pubsub_deliver_other(c, m->pattern, m->data, m->mlen);
        reply_check(c, r);
        conn_out_limit(c, m->pattern == PUBSUB_RAW ? COBL_NORMAL : COBL_PUBSUB, c->w->now_ms);
    } else if (!(c->flags & CONN_CLOSE_ASAP)) {
        if (m->pattern == 1) {
            r |= resp_add_push(b, 4, c->resp);
            r |= resp_add_bulk(b, "pmessage", 8);
            r |= resp_add_bulk(b, m->data, m->plen);
        } else {
            r |= resp_add_push(b, 3, c->resp);
            if (m->pattern == 2)
                r |= resp_add_bulk(b, "smessage", 8);
            else
                r |= resp_add_bulk(b, "message", 7);
        }
        r |= resp_add_bulk(b, m->data + m->plen, m->clen);
        r |= resp_add_bulk(b, m->data + m->plen + m->clen, m->mlen);
        reply_check(c, r);
        conn_out_limit(c, COBL_PUBSUB, c->w->now_ms);
    }
    msg_release(m);
}

/* Write one message of kind (PUBSUB_RAW: the bytes as they are, MONITOR lines; PUBSUB_INV /
 * PUBSUB_INV_NULL: a client-side caching invalidation of key p, or of everything) to c. */
static int pubsub_deliver_other(struct conn *c, int kind, const char *p, size_t n)
{
    struct buf *b = &c->wbuf;
    int r = 0;

    if (kind == PUBSUB_RAW)
        return resp_add_raw(b, p, n);
    if ((kind & PUBSUB_INV_SELF) && c->resp < 3)
        return 0;
    kind &= ~PUBSUB_INV_SELF;
    if (c->resp >= 3) {
        r |= resp_add_push(b, 2, 3);
        r |= resp_add_bulk(b, "invalidate", 10);
    } else {
        /* RESP2: only a connection subscribed to the channel receives it (REDIRECT) */
        if (!c->ps || !pubsub_count(c))
            return 0;
        r |= resp_add_push(b, 3, 2);
        r |= resp_add_bulk(b, "message", 7);
        r |= resp_add_bulk(b, "__redis__:invalidate", 20);
    }
    if (kind == PUBSUB_INV_NULL) {
        r |= resp_add_null(b, c->resp);
    } else if (kind == PUBSUB_INV_ARR) {
        r |= resp_add_raw(b, p, n);
    } else {
        r |= resp_add_array(b, 1);
        r |= resp_add_bulk(b, p, n);
    }
    return r;
}

void pubsub_write_conn(struct conn *c, int kind, const char *p, size_t n)
{
    if (!(c->flags & CONN_CLOSE_ASAP))
        reply_check(c, pubsub_deliver_other(c, kind, p, n));
}

int pubsub_post_conn(struct conn *to, int kind, const char *p, size_t n)
{
    struct ps_msg *m = malloc(sizeof(*m) + n);
    int r;

    if (!m)
        return -1;
    atomic_init(&m->refs, 1);
    m->pattern = kind;
    m->plen = m->clen = 0;
    m->mlen = n;
    memcpy(m->data, p, n);
    r = worker_post(to->w, to, m);
    if (r < 0) {
        free(m);
        return -1;
    }
    if (r == 1)
        worker_wake(to->w);
    return 0;
}

/* ---- PUBSUB ---- */

static void pubsub_command(struct conn *c)
{
    if (arg_is(c, 1, "channels") || arg_is(c, 1, "shardchannels")) {
        struct buf out;
        long n = 0;
        int shard = arg_is(c, 1, "shardchannels");
        if (c->argc > 3) {
            reply_errorf(c, "ERR wrong number of arguments for 'pubsub|%s' command",
                         shard ? "shardchannels" : "channels");
            return;
        }
        memset(&out, 0, sizeof(out));
        pthread_mutex_lock(&ps_lock);
        for (struct ps_entry *e = tables[shard ? PS_SHARD : PS_CH].list; e; e = e->lnext) {
            if (!e->nsubs)
                continue;
            if (c->argc == 3 && !util_glob_match(c->argv[2].p, c->argv[2].n, e->name, e->n, 0))
                continue;
            if (resp_add_bulk(&out, e->name, e->n)) {
                c->flags |= CONN_CLOSE_ASAP;
                break;
            }
            n++;
        }
        pthread_mutex_unlock(&ps_lock);
        reply_array(c, n);
        reply_raw(c, out.data ? out.data : "", buf_len(&out));
        buf_deinit(&out);
    } else if (arg_is(c, 1, "numsub") || arg_is(c, 1, "shardnumsub")) {
        int shard = arg_is(c, 1, "shardnumsub");
        if (shard)
            reply_map(c, c->argc - 2);
        else
            reply_array(c, (c->argc - 2) * 2);
        for (int i = 2; i < c->argc; i++) {
            long n;
            pthread_mutex_lock(&ps_lock);
            struct ps_entry *e = table_find(&tables[shard ? PS_SHARD : PS_CH], c->argv[i].p,
                                            c->argv[i].n, util_hash(c->argv[i].p, c->argv[i].n));
            n = e ? e->nsubs : 0;
            pthread_mutex_unlock(&ps_lock);
            reply_bulk(c, c->argv[i].p, c->argv[i].n);
            reply_int(c, n);
        }
    } else if (arg_is(c, 1, "numpat")) {
        reply_int(c, pubsub_npatterns());
    } else {
        static const char *const help[] = {
            "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
            "HELP",
            "    Prints this help."};
        reply_help(c, help);
    }
}

void pubsub_setup(struct srv *srv)
{
    srv->on_deliver = deliver;
    srv->on_discard = msg_release;
}

#define PSF (CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE)
static struct cmd pubsub_subs[] = {
    {"pubsub|channels", pubsub_command, -2, "pubsub loading stale", "", NULL, "pubsub", "Channels with subscribers, optionally matching a pattern"},
    {"pubsub|numpat", pubsub_command, 2, "pubsub loading stale", "", NULL, "pubsub", "Number of pattern subscriptions"},
    {"pubsub|numsub", pubsub_command, -2, "pubsub loading stale", "", NULL, "pubsub", "Subscriber counts of the named channels"},
    {"pubsub|shardchannels", pubsub_command, -2, "pubsub loading stale", "", NULL, "pubsub", "Shard channels with subscribers"},
    {"pubsub|shardnumsub", pubsub_command, -2, "pubsub loading stale", "", NULL, "pubsub", "Subscriber counts of the named shard channels"},
    {"pubsub|help", pubsub_command, 2, "loading stale", "", NULL, "pubsub", "List the PUBSUB subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"subscribe", subscribe_command, -2, "pubsub noscript loading stale tc:subscribed", "", NULL, "pubsub", "Listen for messages published to the given channels"},
    {"psubscribe", psubscribe_command, -2, "pubsub noscript loading stale tc:subscribed", "", NULL, "pubsub", "Listen for messages published to channels matching the given patterns"},
    {"unsubscribe", unsubscribe_command, -1, "pubsub noscript loading stale tc:subscribed", "", NULL, "pubsub", "Stop listening for messages posted to the given channels"},
    {"punsubscribe", punsubscribe_command, -1, "pubsub noscript loading stale tc:subscribed", "", NULL, "pubsub", "Stop listening for messages posted to channels matching the given patterns"},
    {"ssubscribe", ssubscribe_command, -2, "pubsub noscript loading stale tc:subscribed", "", "not_key index:1 range:-1,1,0", "pubsub", "Listen for messages published to the given shard channels"},
    {"sunsubscribe", sunsubscribe_command, -1, "pubsub noscript loading stale tc:subscribed", "", "not_key index:1 range:-1,1,0", "pubsub", "Stop listening for messages posted to the given shard channels"},
    {"publish", publish_command, 3, "pubsub loading stale fast may_replicate", "", NULL, "pubsub", "Post a message to a channel"},
    {"spublish", spublish_command, 3, "pubsub loading stale fast may_replicate", "", "not_key index:1 range:0,1,0", "pubsub", "Post a message to a shard channel"},
    {"pubsub", pubsub_command, -2, "", "", NULL, "pubsub", "A container for Pub/Sub commands", pubsub_subs},
};

void cmd_pubsub_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}

void pubsub_fork_child(void)
{
    atomic_store_explicit(&ps_subs, 0, memory_order_relaxed);
}

void pubsub_each_sub(int (*fn)(struct conn *c, const char *p, size_t n, int pattern, void *arg),
                     void *arg)
{
    pthread_mutex_lock(&ps_lock);
    for (int k = 0; k < PS_KINDS; k++)
        for (struct ps_entry *e = tables[k].list; e; e = e->lnext)
            for (int i = 0; i < e->nsubs; i++)
                fn(e->subs[i], e->name, e->n, k == PS_PAT, arg);
    pthread_mutex_unlock(&ps_lock);
}
