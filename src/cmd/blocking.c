#include "cmd/blocking.h"
#include "cmd/propagate.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/multi.h"
#include "cmd/notify.h"
#include "cmd/slowlog.h"

#define NBUCKETS 4096

struct blk;

/* One (client, key) registration, in its bucket's FIFO. */
struct bnode {
    struct bnode *prev, *next;
    struct blk *b;
    uint64_t hash;
    int db;
    size_t n;
    char key[];
};

struct bbucket {
    struct bnode *head, *tail;
};

/* A blocked client (owner worker only, except ready). */
struct blk {
    struct blk *prev, *next; /* the worker's blocked list, in blocking order */
    struct conn *c;
    const struct cmd *cmd;   /* its table entry */
    const struct block_spec *spec; /* how it blocks: cmd->block, or postponed (CLIENT PAUSE) */
    int64_t deadline;        /* ms, 0 = forever */
    _Atomic int ready;       /* set by a signaling thread under block_lock */
    /* the command that made it ready waits for its retry (block_settle), or NULL; set with
     * ready and taken with its clearing, under block_lock */
    struct wake_scope *_Atomic scope;
    int served;              /* served by a helping worker (settle): its unblock is pending */
    int argc;
    struct slice *argv;      /* copy of the command */
    int oargc;               /* the command as sent when argv differs (XREAD's "$"), for the */
    struct slice *oargv;     /* slowlog; NULL: as argv */
    int64_t took_us;         /* its first run's duration (block_defer_slowlog) */
    int nnodes;
    struct bnode **nodes;
};

_Atomic long block_waiters;
static _Atomic long block_clients;
static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf */
static struct bbucket buckets[NBUCKETS];                        /* under block_lock */

long block_nclients(void)
{
    return atomic_load_explicit(&block_clients, memory_order_relaxed);
}

/* ---- serving the woken inside the waking command (Redis's handleClientsBlockedOnKeys) ----
 *
 * Redis serves the clients a command unblocked before the next command runs: a client that
 * pushes and then reads the list sees it popped. Here the woken client's worker retries it,
 * so the waking command's worker waits for those retries before it runs anything else. Each
 * ready waiter holds the scope of the command that woke it; its owner releases the scope once
 * the retry is over, after the retries that retry woke in turn (its own scope, one level
 * down). A worker that waits serves its own woken clients meanwhile (two workers waking each
 * other's clients do not wait for each other). Scopes are per worker and level, never freed:
 * a wait given up (a long script, or a second) leaves nothing dangling. */
#define SCOPE_LEVELS 8

static struct wake_scope scopes[1024][SCOPE_LEVELS];
__thread struct wake_scope *block_scope; /* this thread's current level, NULL: no waiting */

static void scope_attach(struct blk *b)
{
    struct wake_scope *s = block_scope;

    if (!s)
        return;
    atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
    atomic_store_explicit(&b->scope, s, memory_order_relaxed);
}

static void scope_release(struct wake_scope *s)
{
    if (s && atomic_fetch_sub_explicit(&s->n, 1, memory_order_acq_rel) == 1)
        syscall(SYS_futex, &s->n, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Take b's readiness and its scope (owner). */
static struct wake_scope *take_ready(struct blk *b)
{
    struct wake_scope *s;

    pthread_mutex_lock(&block_lock);
    s = atomic_exchange_explicit(&b->scope, NULL, memory_order_relaxed);
    atomic_store_explicit(&b->ready, 0, memory_order_relaxed);
    pthread_mutex_unlock(&block_lock);
    return s;
}

static uint64_t key_hash(int db, const char *p, size_t n)
{
    return util_hash(p, n) + (uint64_t)db * 0x9e3779b97f4a7c15ULL;
}

/* ---- signaling (any thread) ---- */

/* Mark the first popping waiter of (db, key) and every reading one ready and wake their
 * workers. block_lock held. */
static void signal_locked(int db, const char *p, size_t n)
{
    uint64_t h = key_hash(db, p, n);
    struct bbucket *bk = &buckets[h & (NBUCKETS - 1)];

    int consumer = 0;

    for (struct bnode *x = bk->head; x; x = x->next) {
        if (x->hash != h || x->db != db || x->n != n || memcmp(x->key, p, n))
            continue;
        /* readers (XREAD) take nothing: all of them retry; of the poppers only the first */
        if (!x->b->spec->reader) {
            if (consumer)
                continue;
            consumer = 1;
        }
        if (!atomic_exchange_explicit(&x->b->ready, 1, memory_order_relaxed)) {
            scope_attach(x->b);
            worker_wake(x->b->c->w);
        }
    }
}

/* Signals held back while this thread runs a script (block_defer_begin/end). */
struct deferred {
    int db;
    size_t n;
    char *key;
};
static __thread int defer_on;
static __thread struct deferred *defer_list;
static __thread int defer_n, defer_cap;
static __thread int defer_flush = -2; /* a FLUSHDB's db, -1 FLUSHALL (or several), -2 none */

static void defer_key(int db, const char *p, size_t n)
{
    char *k;

    if (defer_n == defer_cap) {
        int cap = defer_cap ? defer_cap * 2 : 16;
        struct deferred *d = realloc(defer_list, sizeof(*d) * (size_t)cap);
        if (!d) {
            defer_flush = -1; /* out of memory: every waiter looks again at the end */
            return;
        }
        defer_list = d;
        defer_cap = cap;
    }
    k = malloc(n ? n : 1);
    if (!k) {
        defer_flush = -1;
        return;
    }
    memcpy(k, p, n);
    defer_list[defer_n++] = (struct deferred){db, n, k};
}

void block_defer_begin(void)
{
    defer_on = 1;
}

void block_defer_end(void)
{
    int n = defer_n, fl = defer_flush;

    defer_on = 0;
    defer_n = 0;
    defer_flush = -2;
    for (int i = 0; i < n; i++) {
        block_signal_key(defer_list[i].db, defer_list[i].key, defer_list[i].n);
        free(defer_list[i].key);
    }
    if (fl != -2)
        block_signal_flush(fl);
}

void block_signal_flush(int db)
{
    if (!atomic_load_explicit(&block_waiters, memory_order_relaxed))
        return;
    if (defer_on) {
        defer_flush = defer_flush == -2 || defer_flush == db ? db : -1;
        return;
    }
    pthread_mutex_lock(&block_lock);
    for (int i = 0; i < NBUCKETS; i++)
        for (struct bnode *x = buckets[i].head; x; x = x->next)
            if ((db < 0 || x->db == db) &&
                !atomic_exchange_explicit(&x->b->ready, 1, memory_order_relaxed)) {
                scope_attach(x->b);
                worker_wake(x->b->c->w);
            }
    pthread_mutex_unlock(&block_lock);
}

void block_signal_key(int db, const char *p, size_t n)
{
    if (defer_on) {
        defer_key(db, p, n);
        return;
    }
    pthread_mutex_lock(&block_lock);
    signal_locked(db, p, n);
    pthread_mutex_unlock(&block_lock);
}

static int signal_cb(void *arg, int i, unsigned flags)
{
    struct conn *c = arg;
    if (flags & (KS_RW | KS_OW | KS_RM))
        signal_locked(c->db, c->argv[i].p, c->argv[i].n);
    return 0;
}

static int defer_cb(void *arg, int i, unsigned flags)
{
    struct conn *c = arg;
    if (flags & (KS_RW | KS_OW | KS_RM))
        defer_key(c->db, c->argv[i].p, c->argv[i].n);
    return 0;
}

void block_signal_keys(struct conn *c, const struct cmd *cmd)
{
    if (defer_on) {
        if (cmd_keys(cmd, c->argc, c->argv, defer_cb, c) < 0)
            for (int i = 1; i < c->argc; i++)
                defer_key(c->db, c->argv[i].p, c->argv[i].n);
        return;
    }
    pthread_mutex_lock(&block_lock);
    if (cmd_keys(cmd, c->argc, c->argv, signal_cb, c) < 0)
        for (int i = 1; i < c->argc; i++) /* keys unknown: any argument may be one */
            signal_locked(c->db, c->argv[i].p, c->argv[i].n);
    pthread_mutex_unlock(&block_lock);
}

/* ---- registration (owner) ---- */

static void update_deadline(struct worker *w)
{
    int64_t d = 0;
    for (struct blk *b = w->blocked; b; b = b->next)
        if (b->deadline && (!d || b->deadline < d))
            d = b->deadline;
    w->block_deadline = d;
}

/* Forget b: its registrations, the worker list, the client's state. Re-signals its keys when
 * it was woken but never retried, so the next waiter is not forgotten. */
static void blk_unregister(struct blk *b)
{
    struct wake_scope *s;

    pthread_mutex_lock(&block_lock);
    for (int i = 0; i < b->nnodes; i++) {
        struct bnode *x = b->nodes[i];
        struct bbucket *bk = &buckets[x->hash & (NBUCKETS - 1)];
        if (x->prev)
            x->prev->next = x->next;
        else
            bk->head = x->next;
        if (x->next)
            x->next->prev = x->prev;
        else
            bk->tail = x->prev;
    }
    if (atomic_load_explicit(&b->ready, memory_order_relaxed))
        for (int i = 0; i < b->nnodes; i++)
            signal_locked(b->nodes[i]->db, b->nodes[i]->key, b->nodes[i]->n);
    s = atomic_exchange_explicit(&b->scope, NULL, memory_order_relaxed);
    atomic_store_explicit(&b->ready, 0, memory_order_relaxed);
    pthread_mutex_unlock(&block_lock);
    scope_release(s);
    atomic_fetch_sub_explicit(&block_waiters, b->nnodes, memory_order_relaxed);
    for (int i = 0; i < b->nnodes; i++)
        free(b->nodes[i]);
    b->nnodes = 0;
}

static void blk_destroy(struct blk *b)
{
    struct conn *c = b->c;
    struct worker *w = c->w;

    blk_unregister(b);
    if (!b->served)
        atomic_fetch_sub_explicit(&block_clients, 1, memory_order_relaxed);
    free(b->nodes);
    if (b->prev)
        b->prev->next = b->next;
    else
        w->blocked = b->next;
    if (b->next)
        b->next->prev = b->prev;
    w->nblocked--;
    free(b->argv);
    free(b->oargv);
    free(b);
    c->blk = NULL;
    atomic_store(&c->blocked, 0);
    /* the idle timeout counts from the unblocking: the reply may still wait in the buffer */
    __atomic_store_n(&c->last_ms, w->now_ms, __ATOMIC_RELAXED);
    update_deadline(w);
}

/* A copy of argc arguments in one allocation, or NULL. */
static struct slice *argv_copy(int argc, const struct slice *argv)
{
    size_t bytes = 0;
    struct slice *v;
    char *p;

    for (int i = 0; i < argc; i++)
        bytes += argv[i].n;
    if (!(v = malloc(sizeof(*v) * (size_t)argc + bytes + 1)))
        return NULL;
    p = (char *)(v + argc);
    for (int i = 0; i < argc; i++) {
        memcpy(p, argv[i].p, argv[i].n);
        v[i].p = p;
        v[i].n = argv[i].n;
        p += argv[i].n;
    }
    return v;
}

int block_defer_slowlog(struct conn *c, int64_t took_us)
{
    struct blk *b = c->blk;
    int same;

    if (!b || b->spec->postpone)
        return 0;
    b->took_us = took_us;
    same = b->argc == c->argc;
    for (int i = 0; same && i < c->argc; i++)
        same = b->argv[i].n == c->argv[i].n && !memcmp(b->argv[i].p, c->argv[i].p, c->argv[i].n);
    if (!same && !b->oargv && (b->oargv = argv_copy(c->argc, c->argv)))
        b->oargc = c->argc;
    return 1;
}

/* b's command is unblocked (served, timed out, or an error): its slowlog entry, as sent, for
 * its first run and the one that ended it (extra_us), as Redis logs it at the unblock. */
static void blk_slowlog(struct blk *b, int64_t extra_us)
{
    struct conn *c = b->c;
    const struct cmd *cur = cmd_current;
    struct slice *sv = c->argv;
    int sc = c->argc;
    int64_t dur = b->took_us + extra_us;

    if (cfg.slowlog_log_slower_than < 0 || dur < cfg.slowlog_log_slower_than || !b->cmd ||
        (b->cmd->flags & CMD_SKIP_SLOWLOG) || b->spec->postpone)
        return;
    c->argv = b->oargv ? b->oargv : b->argv;
    c->argc = b->oargv ? b->oargc : b->argc;
    cmd_current = b->cmd;
    slowlog_push(c, dur);
    cmd_current = cur;
    c->argv = sv;
    c->argc = sc;
}

void block_reset(struct conn *c)
{
    if (c->blk)
        blk_destroy(c->blk);
}

/* The keys a blocked command waits on: those its key specs find with the access flag. */
struct waitkeys {
    int n;
    int *pos; /* argc entries: no command has more keys than arguments */
};

static int waitkey_cb(void *arg, int pos, unsigned flags)
{
    struct waitkeys *wk = arg;
    if (flags & KS_ACCESS)
        wk->pos[wk->n++] = pos;
    return 0;
}

/* Block c on the keys of its current command cmd. Returns 0 or -1 (OOM, nothing
 * registered). */
static int blk_create(struct conn *c, const struct cmd *cmd, const struct block_spec *spec,
                      int64_t deadline)
{
    struct worker *w = c->w;
    struct blk *b;
    size_t bytes = 0;
    struct waitkeys wk = {0};
    char *p;

    wk.pos = malloc(sizeof(int) * (size_t)c->argc);
    if (!wk.pos)
        return -1;
    if (spec->postpone) {
        wk.n = 0; /* waits for the pause to end, on no key */
    } else if (cmd_keys(cmd, c->argc, c->argv, waitkey_cb, &wk) < 0 ||
               (wk.n == 0 && !spec->timeout_fn)) {
        /* the command checked its arguments before: cannot happen (only WAIT waits on no
         * key, for its timeout alone) */
        free(wk.pos);
        return -1;
    }
    for (int i = 0; i < c->argc; i++)
        bytes += c->argv[i].n;
    b = calloc(1, sizeof(*b));
    if (!b) {
        free(wk.pos);
        return -1;
    }
    b->argv = malloc(sizeof(struct slice) * (size_t)c->argc + bytes + 1);
    b->nodes = calloc((size_t)(wk.n ? wk.n : 1), sizeof(*b->nodes));
    if (!b->argv || !b->nodes)
        goto oom;
    p = (char *)(b->argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i].p, c->argv[i].n);
        b->argv[i].p = p;
        b->argv[i].n = c->argv[i].n;
        p += c->argv[i].n;
    }
    b->argc = c->argc;
    for (int j = 0; j < wk.n; j++) {
        int i = wk.pos[j];
        struct bnode *x = malloc(sizeof(*x) + c->argv[i].n);
        if (!x)
            goto oom;
        x->b = b;
        x->db = c->db;
        x->n = c->argv[i].n;
        memcpy(x->key, c->argv[i].p, x->n);
        x->hash = key_hash(c->db, x->key, x->n);
        b->nodes[b->nnodes++] = x;
    }
    free(wk.pos);
    b->c = c;
    b->cmd = cmd;
    b->spec = spec;
    b->deadline = deadline;
    pthread_mutex_lock(&block_lock);
    for (int i = 0; i < b->nnodes; i++) {
        struct bnode *x = b->nodes[i];
        struct bbucket *bk = &buckets[x->hash & (NBUCKETS - 1)];
        x->next = NULL;
        x->prev = bk->tail;
        if (bk->tail)
            bk->tail->next = x;
        else
            bk->head = x;
        bk->tail = x;
    }
    pthread_mutex_unlock(&block_lock);
    atomic_fetch_add_explicit(&block_waiters, b->nnodes, memory_order_relaxed);
    atomic_fetch_add_explicit(&block_clients, 1, memory_order_relaxed);
    /* append: the list stays in blocking order */
    if (!w->blocked) {
        w->blocked = b;
    } else {
        struct blk *t = w->blocked;
        while (t->next)
            t = t->next;
        t->next = b;
        b->prev = t;
    }
    w->nblocked++;
    c->blk = b;
    atomic_store(&c->unblock_req, 0);
    atomic_store(&c->blocked, 1);
    update_deadline(w);
    return 0;
oom:
    free(wk.pos);
    for (int i = 0; i < b->nnodes; i++)
        free(b->nodes[i]);
    free(b->nodes);
    free(b->argv);
    free(b);
    return -1;
}

/* ---- running the non-blocking form ---- */

/* Run the command name with argv (argv[0] is replaced by name) on c. */
static void run(struct conn *c, const char *name, struct slice *argv, int argc)
{
    const struct cmd *cmd = cmd_lookup(name, strlen(name));
    struct slice *sv = c->argv;
    int sc = c->argc;
    struct slice a0 = argv[0];

    argv[0].p = name;
    argv[0].n = strlen(name);
    c->argv = argv;
    c->argc = argc;
    cmd_exec(c, cmd); /* logs the non-blocking form when the AOF is on */
    c->argv = sv;
    c->argc = sc;
    argv[0] = a0;
}

/* Set while a blocked client's command is retried after a signal. A key that now holds
 * another type is then not "ready" (Redis keeps the client blocked); only the first try
 * answers WRONGTYPE. */
static __thread int retrying;

int block_retrying(void)
{
    return retrying;
}

static int is_wrongtype(struct conn *c, size_t from)
{
    return c->wbuf.wpos - from > 10 && !memcmp(c->wbuf.data + from, "-WRONGTYPE", 10);
}

static int written_is(struct conn *c, size_t from, const char *s)
{
    size_t n = strlen(s);
    return c->wbuf.wpos - from == n && !memcmp(c->wbuf.data + from, s, n);
}

static int is_null(struct conn *c, size_t from)
{
    return written_is(c, from, "$-1\r\n") || written_is(c, from, "*-1\r\n") ||
           written_is(c, from, "_\r\n");
}

/* An error was written at mid after a header written at pos: keep only the error. */
static void keep_from(struct conn *c, size_t pos, size_t mid)
{
    size_t len = c->wbuf.wpos - mid;
    memmove(c->wbuf.data + pos, c->wbuf.data + mid, len);
    c->wbuf.wpos = pos + len;
}

/* BLPOP/BRPOP: [key, element] from the first non-empty list. */
static int try_bpop(struct conn *c, const char *pop)
{
    for (int i = 1; i < c->argc - 1; i++) {
        struct slice a[2] = {c->argv[0], c->argv[i]};
        size_t pos = c->wbuf.wpos, mid;
        reply_array(c, 2);
        reply_bulk(c, c->argv[i].p, c->argv[i].n);
        mid = c->wbuf.wpos;
        run(c, pop, a, 2);
        if (c->wbuf.wpos == mid || is_null(c, mid) || (retrying && is_wrongtype(c, mid))) {
            c->wbuf.wpos = pos;
            continue;
        }
        if (c->wbuf.data[mid] == '-')
            keep_from(c, pos, mid);
        return 1;
    }
    return 0;
}

static int try_blpop(struct conn *c)
{
    return try_bpop(c, "lpop");
}
static int try_brpop(struct conn *c)
{
    return try_bpop(c, "rpop");
}

/* BZPOPMIN/BZPOPMAX: [key, member, score]; ZPOPMIN answers [member, score] or []. */
static int try_bzpop(struct conn *c, const char *pop)
{
    for (int i = 1; i < c->argc - 1; i++) {
        struct slice a[2] = {c->argv[0], c->argv[i]};
        size_t pos = c->wbuf.wpos, mid;
        reply_array(c, 3);
        reply_bulk(c, c->argv[i].p, c->argv[i].n);
        mid = c->wbuf.wpos;
        run(c, pop, a, 2);
        if (c->wbuf.wpos == mid || written_is(c, mid, "*0\r\n") ||
            (retrying && is_wrongtype(c, mid))) {
            c->wbuf.wpos = pos;
            continue;
        }
        if (c->wbuf.data[mid] == '-') {
            keep_from(c, pos, mid);
        } else if (c->wbuf.wpos - mid >= 4 && !memcmp(c->wbuf.data + mid, "*2\r\n", 4)) {
            memmove(c->wbuf.data + mid, c->wbuf.data + mid + 4, c->wbuf.wpos - mid - 4);
            c->wbuf.wpos -= 4;
        }
        return 1;
    }
    return 0;
}

static int try_bzpopmin(struct conn *c)
{
    return try_bzpop(c, "zpopmin");
}
static int try_bzpopmax(struct conn *c)
{
    return try_bzpop(c, "zpopmax");
}

/* Commands whose non-blocking form answers a null when there is nothing: run it on argv
 * without the timeout (at tpos), keep the reply unless it is that null. */
static int try_plain(struct conn *c, const char *name, int tpos)
{
    struct slice a[64], *v = a;
    size_t pos = c->wbuf.wpos;
    int n = 0;

    if (c->argc > 64 && !(v = malloc(sizeof(*v) * (size_t)c->argc))) {
        reply_error(c, "ERR out of memory");
        return 1;
    }
    for (int i = 0; i < c->argc; i++)
        if (i != tpos)
            v[n++] = c->argv[i];
    run(c, name, v, n);
    if (v != a)
        free(v);
    if (c->wbuf.wpos == pos || is_null(c, pos)) {
        c->wbuf.wpos = pos;
        return 0;
    }
    return 1;
}

/* 1 if key argv[i] exists and holds something other than a list. */
static int src_not_list(struct conn *c, int i)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int r;

    arg_key(c, i, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    r = it && it->type != OBJ_LIST;
    store_unlock(s, k.stripe);
    return r;
}

/* BLMOVE/BRPOPLPUSH: a wrong-type destination is an error for the client (the pop is not
 * done), a source that became another type keeps it blocked. */
static int try_move(struct conn *c, const char *name, int tpos)
{
    size_t pos = c->wbuf.wpos;
    if (!try_plain(c, name, tpos))
        return 0;
    if (retrying && is_wrongtype(c, pos) && src_not_list(c, 1)) {
        c->wbuf.wpos = pos;
        return 0;
    }
    return 1;
}

static int try_blmove(struct conn *c)
{
    return try_move(c, "lmove", 5);
}
static int try_brpoplpush(struct conn *c)
{
    return try_move(c, "rpoplpush", 3);
}

/* BLMPOP/BZMPOP timeout numkeys key.. dir [COUNT n]: first try as LMPOP/ZMPOP (WRONGTYPE for
 * the first existing key of another type); when retried, key by key, skipping those. */
static int try_mpop(struct conn *c, const char *name)
{
    long long nk = 0;
    struct slice a[64], *v = a;
    int done = 0;

    if (!retrying)
        return try_plain(c, name, 1);
    util_str2ll(c->argv[2].p, c->argv[2].n, &nk);
    if (nk < 1 || nk > c->argc - 3)
        return try_plain(c, name, 1);
    int tail = c->argc - 3 - (int)nk;
    if (3 + tail > 64 && !(v = malloc(sizeof(*v) * (size_t)(3 + tail)))) {
        reply_error(c, "ERR out of memory");
        return 1;
    }
    v[0] = c->argv[0];
    v[1].p = "1";
    v[1].n = 1;
    for (int t = 0; t < tail; t++)
        v[3 + t] = c->argv[3 + nk + t];
    for (int i = 0; i < nk && !done; i++) {
        size_t pos = c->wbuf.wpos;
        v[2] = c->argv[3 + i];
        run(c, name, v, 3 + tail);
        if (c->wbuf.wpos == pos || is_null(c, pos) || is_wrongtype(c, pos))
            c->wbuf.wpos = pos;
        else
            done = 1;
    }
    if (v != a)
        free(v);
    return done;
}

static int try_blmpop(struct conn *c)
{
    return try_mpop(c, "lmpop");
}
static int try_bzmpop(struct conn *c)
{
    return try_mpop(c, "zmpop");
}

static const struct block_spec spec_list_pop = {.try_fn = try_blpop, .tpos = -1};
static const struct block_spec spec_list_rpop = {.try_fn = try_brpop, .tpos = -1};
static const struct block_spec spec_zpopmin = {.try_fn = try_bzpopmin, .tpos = -1};
static const struct block_spec spec_zpopmax = {.try_fn = try_bzpopmax, .tpos = -1};
static const struct block_spec spec_lmove = {.try_fn = try_blmove, .tpos = 5, .multi_null_bulk = 1};
static const struct block_spec spec_rpoplpush = {.try_fn = try_brpoplpush, .tpos = 3,
                                                 .multi_null_bulk = 1};
static const struct block_spec spec_lmpop = {.try_fn = try_blmpop, .tpos = 1};
static const struct block_spec spec_zmpop = {.try_fn = try_bzmpop, .tpos = 1};

int64_t block_deadline(long long ms)
{
    int64_t now = util_now_ms();

    if (ms <= 0 || ms > INT64_MAX - now)
        return 0;
    return now + ms;
}

int block_arg_ms(struct conn *c, int i, long long *ms)
{
    if (!util_str2ll(c->argv[i].p, c->argv[i].n, ms)) {
        reply_error(c, "ERR timeout is not an integer or out of range");
        return -1;
    }
    if (*ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return -1;
    }
    return 0;
}

/* Redis 7.0's getTimeoutFromObjectOrReply (seconds, fractional): the seconds as a long
 * double, times 1000 rounded up to a whole millisecond (so -0.0001 is 0: no timeout), then
 * negative is an error. A product past the range of long long converts to LLONG_MIN on the
 * hardware Redis runs on, so inf and 1e20 are "negative" too. The deadline in ms (0 = none). */
static int parse_timeout(struct conn *c, int i, int64_t *deadline)
{
    char tmp[5 * 1024 + 1], *end; /* Redis's MAX_LONG_DOUBLE_CHARS */
    long double v;
    long long ms;

    if (c->argv[i].n == 0 || c->argv[i].n >= sizeof(tmp))
        goto bad;
    memcpy(tmp, c->argv[i].p, c->argv[i].n);
    tmp[c->argv[i].n] = '\0';
    errno = 0;
    v = strtold(tmp, &end);
    if (*end || isnan(v) || isspace((unsigned char)tmp[0]) ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)))
        goto bad;
    v = ceill(v * 1000.0L);
    if (!(v >= -9223372036854775808.0L && v < 9223372036854775808.0L))
        ms = LLONG_MIN;
    else
        ms = (long long)v;
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return -1;
    }
    *deadline = block_deadline(ms);
    return 0;
bad:
    reply_error(c, "ERR timeout is not a float or out of range");
    return -1;
}

void block_until(struct conn *c, const struct cmd *cmd, int64_t deadline)
{
    const struct block_spec *spec = cmd->block;

    if (spec->try_fn(c))
        return;
    if ((store_held != NULL && !cmd_prop_may_block()) || tx_in_exec(c)) {
        /* inside EXEC or a script: never block (the AOF's or replication's own stripe
         * holding of a plain command does not count) */
        if (spec->timeout_fn)
            spec->timeout_fn(c);
        else if (spec->multi_null_bulk)
            reply_null(c);
        else
            reply_null_array(c);
        return;
    }
    if (blk_create(c, cmd, spec, deadline)) {
        reply_error(c, "ERR out of memory");
        return;
    }
    /* a push between the first try and the registration signaled nobody: try again */
    if (spec->try_fn(c))
        blk_destroy(c->blk);
}

/* The handler of every blocking command with a timeout argument (BLPOP ... BZMPOP): its
 * table entry's block spec says how it is tried and where its timeout is. */
static void block_command(struct conn *c)
{
    const struct cmd *cmd = cmd_current;
    int tpos = cmd->block->tpos > 0 ? cmd->block->tpos : c->argc + cmd->block->tpos;
    int64_t deadline;

    if (parse_timeout(c, tpos, &deadline))
        return;
    block_until(c, cmd, deadline);
}

void block_register(struct conn *c, const struct cmd *cmd, int64_t deadline)
{
    if (blk_create(c, cmd, cmd->block, deadline)) {
        reply_error(c, "ERR out of memory");
        return;
    }
    /* a write between the first try and the registration signaled nobody: try again */
    if (cmd->block->try_fn(c))
        blk_destroy(c->blk);
}

/* ---- the owner worker: retries, timeouts, CLIENT UNBLOCK ---- */

/* Unblock b's client with its timeout reply (or the UNBLOCKED error), then run its input. */
static void finish(struct blk *b, int error)
{
    struct conn *c = b->c;
    struct worker *w = c->w;

    if (error == 3) {
        reply_error(c, "UNBLOCKED force unblock from blocking operation, instance state "
                       "changed (master -> replica?)");
        c->flags |= CONN_CLOSE_AFTER_REPLY;
    } else if (error)
        reply_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    if (error) { /* errorstats, and the command's failed_calls (its call was counted) */
        cmdstats_errors("UNBLOCKED", 1);
        if (b->cmd)
            cmdstats_fail(b->cmd);
    } else if (b->spec->timeout_fn)
        b->spec->timeout_fn(c);
    else
        reply_null_array(c);
    blk_slowlog(b, 0);
    blk_destroy(b);
    worker_conn_resume(w, c);
}

static void settle(struct worker *w, struct wake_scope *s);

/* The end of a retry: wait for what it woke (its own level), back to the outer level, and
 * the command that woke it may go on (its scope released). */
static void retry_end(struct worker *w, struct wake_scope *outer, struct wake_scope *parent)
{
    if (block_scope)
        settle(w, block_scope);
    block_scope = outer;
    scope_release(parent);
}

/* Retry b's command. Served: unblock, pass the keys on (and wait for the retries that wakes),
 * run its input. helping: from a wait (settle), in the middle of another client's input: the
 * unblock and the input wait for the worker's next wake-up (b->served). */
static void retry(struct blk *b, int helping)
{
    struct conn *c = b->c;
    struct worker *w = c->w;
    int sc = c->argc, done;
    struct wake_scope *parent = take_ready(b), *outer = block_scope;

    /* the arguments go into c's own array (EXEC reloads its queue into it, growing it): b's
     * is sized for the blocked command alone */
    if (b->argc > c->argv_cap) {
        struct slice *a = realloc(c->argv, sizeof(*a) * (size_t)b->argc);
        if (!a) {
            scope_release(parent);
            return; /* out of memory: tried again at the next wake-up */
        }
        c->argv = a;
        c->argv_cap = b->argc;
    }
    /* what this retry wakes is waited for one level down */
    if (outer && w->idx < 1024 && outer >= scopes[w->idx] &&
        outer < scopes[w->idx] + SCOPE_LEVELS - 1)
        block_scope = outer + 1;
    else
        block_scope = NULL;
    memcpy(c->argv, b->argv, sizeof(*c->argv) * (size_t)b->argc);
    c->argc = b->argc;
    retrying = 1;
    size_t pos = c->wbuf.wpos;
    const struct block_spec *spec = b->spec;
    cmd_last_error = NULL;
    int64_t t0 = cfg.slowlog_log_slower_than >= 0 ? util_ticks() : 0;
    done = spec->retry_fn ? spec->retry_fn(c, b->cmd) : spec->try_fn(c);
    retrying = 0;
    if (done && is_wrongtype(c, pos) && spec->wrongtype_waits) {
        c->wbuf.wpos = pos; /* XREAD: a stream replaced by another type is not ready */
        done = 0;
    }
    if (done && !spec->postpone && c->wbuf.wpos > pos && c->wbuf.data[pos] == '-') {
        /* served with an error (XREADGROUP's NOGROUP, BLMOVE's WRONGTYPE destination): in
         * errorstats and the command's failed_calls, as Redis counts it at the unblock */
        cmdstats_errors(cmd_last_error, 1);
        if (b->cmd)
            cmdstats_fail(b->cmd);
    }
    c->argc = sc; /* c->argv stays c's own array (the command may have grown it) */
    if (!done) {
        retry_end(w, outer, parent);
        return;
    }
    if (spec->postpone) {
        blk_destroy(b); /* the command ran through cmd_call: counted, signalled, logged */
        retry_end(w, outer, parent);
        worker_conn_resume(w, c);
        return;
    }
    {
        const struct cmd *cmd = b->cmd;
        struct slice *keep = b->argv, *sv = c->argv;
        int kc = b->argc;

        STAT_INC(w->st.commands);
        if (cfg.slowlog_log_slower_than >= 0)
            blk_slowlog(b, util_ticks_us(util_ticks() - t0));
        /* unregister first, so the signal goes to the next waiter (and to destinations) */
        b->argv = NULL;
        if (helping) { /* unblocked now (INFO, CLIENT LIST, CLIENT UNBLOCK see it so) */
            blk_unregister(b);
            b->served = 1;
            b->deadline = 0;
            update_deadline(w);
            atomic_fetch_sub_explicit(&block_clients, 1, memory_order_relaxed);
            atomic_store(&c->blocked, 0);
        } else {
            blk_destroy(b);
        }
        c->argv = keep;
        c->argc = kc;
        if ((cmd->flags & CMD_WRITE) &&
            atomic_load_explicit(&tx_watched_keys, memory_order_relaxed))
            tx_touch_keys(c, cmd);
        if (atomic_load_explicit(&block_waiters, memory_order_relaxed))
            block_signal_keys(c, cmd);
        c->argv = sv;
        c->argc = sc;
        free(keep);
    }
    notify_flush(w->idx); /* the served command's keyspace events */
    retry_end(w, outer, parent);
    if (helping)
        worker_wake(w); /* its unblock and input: at the next wake-up */
    else
        worker_conn_resume(w, c);
}

/* One woken client of w's that a command waits for, retried: 1, or 0 if there is none. */
static int help(struct worker *w)
{
    for (struct blk *b = w->blocked; b; b = b->next)
        if (!b->served && !b->spec->postpone && !b->spec->acks &&
            atomic_load_explicit(&b->scope, memory_order_relaxed)) {
            retry(b, 1);
            return 1;
        }
    return 0;
}

/* Wait until every retry s waits for is over, serving w's own woken clients meanwhile. Gives
 * up while a script runs past its busy time (its worker answers nothing else) or after a
 * second (a worker asleep in DEBUG SLEEP): the retries then come later, as they come. */
static void settle(struct worker *w, struct wake_scope *s)
{
    int64_t t0 = 0;
    int v;

    if (store_held)
        return; /* a command of another client's run while a script holds stripes */
    while ((v = atomic_load_explicit(&s->n, memory_order_acquire)) > 0) {
        if (atomic_load_explicit(&cmd_script_busy, memory_order_relaxed))
            break;
        if (help(w))
            continue;
        int64_t now = util_now_ms();
        if (!t0)
            t0 = now;
        else if (now - t0 > 1000)
            break;
        /* a short wait: a client of w's woken meanwhile does not wake this futex */
        struct timespec ts = {0, 200 * 1000};
        syscall(SYS_futex, &s->n, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
    }
}

void block_settle(struct worker *w)
{
    if (block_scope)
        settle(w, block_scope);
}

void block_scope_enter(struct worker *w)
{
    if (!block_scope && w->idx < 1024)
        block_scope = &scopes[w->idx][0];
}

/* CLIENT UNPAUSE: every worker retries its postponed clients at its next wake-up. */
static _Atomic unsigned long unpause_gen;
static unsigned long unpause_seen[1024]; /* per worker (owner only) */
/* Replicas acknowledged: every WAIT looks again. */
static _Atomic unsigned long acks_gen;
static unsigned long acks_seen[1024];

static void on_wakeup(struct worker *w)
{
    block_scope_enter(w);
    unsigned long gen = atomic_load(&unpause_gen);
    if (TC_UNLIKELY(w->idx < 1024 && unpause_seen[w->idx] != gen)) {
        unpause_seen[w->idx] = gen;
        for (struct blk *b = w->blocked; b; b = b->next)
            if (b->spec->postpone)
                atomic_store_explicit(&b->ready, 1, memory_order_relaxed);
    }
    gen = atomic_load(&acks_gen);
    if (TC_UNLIKELY(w->idx < 1024 && acks_seen[w->idx] != gen)) {
        acks_seen[w->idx] = gen;
        for (struct blk *b = w->blocked; b; b = b->next)
            if (b->spec->acks)
                atomic_store_explicit(&b->ready, 1, memory_order_relaxed);
    }
    for (;;) {
        struct blk *b;
        for (b = w->blocked; b; b = b->next)
            if (b->served || atomic_load_explicit(&b->ready, memory_order_relaxed) ||
                atomic_load_explicit(&b->c->unblock_req, memory_order_relaxed))
                break;
        if (!b)
            return;
        if (b->served) { /* served by a wait: unblocked now, its input runs */
            struct conn *c = b->c;
            atomic_store(&c->unblock_req, 0);
            blk_destroy(b);
            worker_conn_resume(w, c);
            continue;
        }
        int req = atomic_exchange(&b->c->unblock_req, 0);
        if (req && b->spec->postpone && req == 3)
            continue; /* a role change leaves postponed commands alone */
        if (req)
            finish(b, req == 1 ? 0 : req);
        else
            retry(b, 0);
    }
}

static void on_timer(struct worker *w)
{
    block_scope_enter(w);
    for (;;) {
        struct blk *b;
        for (b = w->blocked; b; b = b->next)
            if (b->deadline && b->deadline <= w->now_ms)
                break;
        if (!b)
            break;
        if (b->spec->postpone) {
            int64_t until = cmd_pause_until(b->c, b->cmd);
            if (until > w->now_ms) {
                b->deadline = until; /* the pause was extended */
                continue;
            }
            retry(b, 0);
            continue;
        }
        finish(b, 0);
    }
    update_deadline(w);
}

int block_unblock_request(struct srv *srv, unsigned long long id, int error)
{
    int found = 0;

    for (int i = 0; i < srv->nworkers && !found; i++) {
        struct worker *w = &srv->workers[i];
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x; x = x->next) {
            if (x->id != id)
                continue;
            if (atomic_load(&x->blocked)) {
                atomic_store(&x->unblock_req, error ? 2 : 1);
                worker_wake(w);
                found = 1;
            }
            break;
        }
        pthread_mutex_unlock(&w->list_lock);
    }
    return found;
}

void block_unblock_all_role_change(struct srv *srv)
{
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        int any = 0;
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x; x = x->next)
            if (atomic_load(&x->blocked)) {
                atomic_store(&x->unblock_req, 3);
                any = 1;
            }
        pthread_mutex_unlock(&w->list_lock);
        if (any)
            worker_wake(w);
    }
}

/* ---- CLIENT PAUSE: commands postponed until the pause ends ---- */

static int postponed_retry(struct conn *c, const struct cmd *cmd)
{
    if (cmd_pause_until(c, cmd) > c->w->now_ms)
        return 0;
    cmd_call(c); /* c->blk is set: it runs now even if a new pause began */
    return 1;
}

static int never(struct conn *c)
{
    (void)c;
    return 0;
}

static const struct block_spec postpone_spec = {.try_fn = never, .retry_fn = postponed_retry,
                                                .postpone = 1};

void block_postpone(struct conn *c, const struct cmd *cmd, int64_t until)
{
    if (blk_create(c, cmd, &postpone_spec, until))
        reply_error(c, "ERR out of memory");
}

void block_wake_postponed(struct srv *srv)
{
    atomic_fetch_add(&unpause_gen, 1);
    for (int i = 0; i < srv->nworkers; i++)
        worker_wake(&srv->workers[i]);
}

void block_wake_waiters(struct srv *srv)
{
    atomic_fetch_add(&acks_gen, 1);
    for (int i = 0; i < srv->nworkers; i++)
        worker_wake(&srv->workers[i]);
}

void block_setup(struct srv *srv)
{
    srv->on_wakeup = on_wakeup;
    srv->on_timer = on_timer;
}

static struct cmd cmds[] = {
    {"blpop", block_command, -3, "write noscript blocking tc:prop-explicit tc:signals", "@list", "RW,access,delete index:1 range:-2,1,0", "list", "Remove and get the first element in a list, or block until one is available", NULL, NULL, &spec_list_pop},
    {"brpop", block_command, -3, "write noscript blocking tc:prop-explicit tc:signals", "@list", "RW,access,delete index:1 range:-2,1,0", "list", "Remove and get the last element in a list, or block until one is available", NULL, NULL, &spec_list_rpop},
    {"blmove", block_command, 6, "write denyoom noscript blocking tc:prop-explicit tc:signals", "@list", "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0", "list", "Pop an element from a list, push it to another list and return it; or block until one is available", NULL, NULL, &spec_lmove},
    {"brpoplpush", block_command, 4, "write denyoom noscript blocking tc:prop-explicit tc:signals", "@list", "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0", "list", "Pop an element from a list, push it to another list and return it; or block until one is available", NULL, NULL, &spec_rpoplpush},
    {"blmpop", block_command, -5, "write blocking tc:prop-explicit tc:signals", "@list", "RW,access,delete index:2 keynum:0,1,1", "list", "Pop elements from a list, or block until one is available", NULL, NULL, &spec_lmpop},
    {"bzpopmin", block_command, -3, "write noscript blocking fast tc:prop-explicit tc:signals", "@sortedset", "RW,access,delete index:1 range:-2,1,0", "sorted-set", "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", NULL, NULL, &spec_zpopmin},
    {"bzpopmax", block_command, -3, "write noscript blocking fast tc:prop-explicit tc:signals", "@sortedset", "RW,access,delete index:1 range:-2,1,0", "sorted-set", "Remove and return the member with the highest score from one or more sorted sets, or block until one is available", NULL, NULL, &spec_zpopmax},
    {"bzmpop", block_command, -5, "write blocking tc:prop-explicit tc:signals", "@sortedset", "RW,access,delete index:2 keynum:0,1,1", "sorted-set", "Remove and return members with scores in a sorted set or block until one is available", NULL, NULL, &spec_zmpop},
};

void cmd_blocking_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
