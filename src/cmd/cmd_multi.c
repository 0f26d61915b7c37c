#include <stdlib.h>
#include <string.h>

#include "cmd/monitor.h"
#include "cmd/tracking.h"
#include "cmd/cmd.h"
#include "cmd/slowlog.h"
#include "cmd/acl.h"
#include "cmd/blocking.h"
#include "cmd/multi.h"
#include "cmd/propagate.h"
#include "core/config.h"

_Atomic long tx_watched_keys;

struct watched {
    int db;
    int missing;   /* the key did not exist at WATCH */
    uint64_t cas;  /* its CAS value at WATCH */
    size_t klen;
    char key[];
};

struct tx {
    int active;              /* between MULTI and EXEC/DISCARD */
    int executing;           /* EXEC is running the queued commands */
    int error;               /* a command was rejected while queuing */
    int writes;              /* a queued command may write (CLIENT PAUSE WRITE holds EXEC) */
    uint64_t qany, qall;     /* flags of the queued commands: OR'd, AND'd (EXEC's checks) */
    struct buf q;            /* queued commands: u32 argc, then u32 len + bytes per arg */
    int nq;
    struct watched **w;
    int nw, capw;
    size_t wmem;             /* bytes of the watched entries */
};

static struct tx *tx_of(struct conn *c)
{
    if (!c->tx)
        c->tx = calloc(1, sizeof(struct tx));
    return c->tx;
}

static void unwatch_all(struct tx *t)
{
    for (int i = 0; i < t->nw; i++)
        free(t->w[i]);
    t->wmem = 0;
    if (t->nw)
        atomic_fetch_sub(&tx_watched_keys, t->nw);
    t->nw = 0;
}

static void discard(struct tx *t)
{
    t->active = 0;
    t->error = 0;
    t->writes = 0;
    t->qany = 0;
    t->qall = ~(uint64_t)0;
    t->nq = 0;
    t->q.rpos = t->q.wpos = 0;
    buf_shrink(&t->q, 16384);
}

void tx_reset(struct conn *c)
{
    struct tx *t = c->tx;

    if (!t)
        return;
    unwatch_all(t);
    free(t->w);
    buf_deinit(&t->q);
    free(t);
    c->tx = NULL;
}

size_t tx_mem(const struct conn *c)
{
    const struct tx *t = c->tx;
    /* as Redis's multiStateMemOverhead: the queued arguments' bytes (not the queue's
     * capacity) and the watched keys */
    return sizeof(*t) + t->q.wpos + (size_t)t->capw * sizeof(*t->w) + t->wmem;
}

void tx_flag_error(struct conn *c)
{
    struct tx *t = c->tx;
    if (t && t->active)
        t->error = 1;
}

int tx_in_exec(const struct conn *c)
{
    return c->tx && ((const struct tx *)c->tx)->executing;
}

int tx_has_writes(const struct conn *c)
{
    const struct tx *t = c->tx;
    return t && t->active && t->writes;
}

uint64_t tx_exec_flags(const struct conn *c, uint64_t exec_flags)
{
    const struct tx *t = c->tx;
    uint64_t f = exec_flags;
    if (!t || !t->active)
        return f;
    f |= t->qany & (CMD_WRITE | CMD_DENYOOM);
    f &= ~(~t->qall & (CMD_STALE | CMD_LOADING));
    return f;
}

int tx_active(const struct conn *c)
{
    return c->tx && ((const struct tx *)c->tx)->active;
}

int tx_maybe_queue(struct conn *c, const struct cmd *cmd)
{
    struct tx *t = c->tx;
    uint32_t n;

    if (!t || !t->active || (cmd->flags & CMD_TX_CONTROL))
        return 0;
    n = (uint32_t)c->argc;
    if (buf_append(&t->q, &n, 4)) {
        t->error = 1;
        reply_error(c, "ERR out of memory");
        return 1;
    }
    for (int i = 0; i < c->argc; i++) {
        n = (uint32_t)c->argv[i].n;
        if (buf_append(&t->q, &n, 4) || buf_append(&t->q, c->argv[i].p, c->argv[i].n)) {
            t->error = 1;
            reply_error(c, "ERR out of memory");
            return 1;
        }
    }
    t->nq++;
    /* a script's flags are its shebang's (as Redis's getCommandFlags): EXEC is checked with
     * them (READONLY on a replica, OOM, stale) */
    uint64_t fl = cmd_flags_of(c, cmd);
    if (fl & (CMD_WRITE | CMD_MAY_REPLICATE))
        t->writes = 1;
    t->qany |= fl;
    t->qall &= fl;
    reply_lit(c, "+QUEUED\r\n");
    return 1;
}

static void touch_one(struct conn *c, int i)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;

    arg_key(c, i, &k);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (it)
        item_cas_invalidate(it);
    store_unlock(s, k.stripe);
}

static int touch_cb(void *arg, int i, unsigned flags)
{
    if (flags & (KS_RW | KS_OW | KS_RM))
        touch_one(arg, i);
    return 0;
}

void tx_touch_keys(struct conn *c, const struct cmd *cmd)
{
    if (cmd_keys(cmd, c->argc, c->argv, touch_cb, c) < 0) {
        /* keys not known from the spec: every argument may be one */
        for (int i = 1; i < c->argc; i++)
            touch_one(c, i);
    }
}

static void multi_command(struct conn *c)
{
    struct tx *t = tx_of(c);

    if (!t) {
        reply_error(c, "ERR out of memory");
        return;
    }
    if (t->active) {
        reply_error(c, "ERR MULTI calls can not be nested");
        return;
    }
    t->active = 1;
    t->error = 0;
    t->nq = 0;
    t->qany = 0;
    t->qall = ~(uint64_t)0;
    reply_ok(c);
}

static void discard_command(struct conn *c)
{
    struct tx *t = c->tx;

    if (!t || !t->active) {
        reply_error(c, "ERR DISCARD without MULTI");
        return;
    }
    discard(t);
    unwatch_all(t);
    reply_ok(c);
}

static void watch_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct tx *t = tx_of(c);

    if (!t) {
        reply_error(c, "ERR out of memory");
        return;
    }
    if (t->active) {
        reply_error(c, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        struct skey k;
        struct item *it;
        struct watched *w;
        int dup = 0;

        for (int j = 0; j < t->nw && !dup; j++)
            dup = t->w[j]->db == c->db && t->w[j]->klen == c->argv[i].n &&
                  !memcmp(t->w[j]->key, c->argv[i].p, c->argv[i].n);
        if (dup)
            continue;
        if (t->nw == t->capw) {
            int cap = t->capw ? t->capw * 2 : 8;
            struct watched **nw = realloc(t->w, sizeof(*nw) * (size_t)cap);
            if (!nw) {
                reply_error(c, "ERR out of memory");
                return;
            }
            t->w = nw;
            t->capw = cap;
        }
        w = malloc(sizeof(*w) + c->argv[i].n);
        if (!w) {
            reply_error(c, "ERR out of memory");
            return;
        }
        w->db = c->db;
        w->klen = c->argv[i].n;
        memcpy(w->key, c->argv[i].p, w->klen);
        arg_key(c, i, &k);
        store_lock(s, k.stripe);
        it = store_lookup_write_locked(s, &k, conn_now(c));
        w->missing = it == NULL;
        w->cas = it ? store_cas_locked(s, &k, &it) : 0;
        store_unlock(s, k.stripe);
        t->w[t->nw++] = w;
        t->wmem += sizeof(*w) + w->klen;
        atomic_fetch_add(&tx_watched_keys, 1);
    }
    reply_ok(c);
}

static void unwatch_command(struct conn *c)
{
    if (c->tx)
        unwatch_all(c->tx);
    reply_ok(c);
}

/* Load queued command number i (from *pos) into c->argv. Returns 0 or -1 (OOM). */
static int load_queued(struct conn *c, struct tx *t, size_t *pos)
{
    uint32_t argc, len;
    const char *p = t->q.data;

    memcpy(&argc, p + *pos, 4);
    *pos += 4;
    if ((int)argc > c->argv_cap) {
        struct slice *a = realloc(c->argv, sizeof(*a) * argc);
        if (!a)
            return -1;
        c->argv = a;
        c->argv_cap = (int)argc;
    }
    for (uint32_t i = 0; i < argc; i++) {
        memcpy(&len, p + *pos, 4);
        *pos += 4;
        c->argv[i].p = p + *pos;
        c->argv[i].n = len;
        *pos += len;
    }
    c->argc = (int)argc;
    return 0;
}

struct set_arg {
    struct conn *c;
    uint64_t *bm;
};

static int set_bit_cb(void *arg, int i, unsigned flags)
{
    struct set_arg *a = arg;
    struct skey k;
    (void)flags;
    arg_key(a->c, i, &k);
    a->bm[k.stripe >> 6] |= 1ULL << (k.stripe & 63);
    return 0;
}

static void exec_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct tx *t = c->tx;
    uint32_t words = (s->nstripes + 63) / 64;
    uint64_t *bm;
    size_t pos;
    int all = 0, ok = 1;

    if (!t || !t->active) {
        reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (t->error) {
        reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        discard(t);
        unwatch_all(t);
        return;
    }
    bm = calloc(words, sizeof(uint64_t));
    if (!bm) {
        reply_error(c, "ERR out of memory");
        return;
    }
    /* the stripes of every key the transaction names, or all of them */
    pos = 0;
    for (int i = 0; i < t->nq && !all; i++) {
        const struct cmd *cmd, *container;
        struct set_arg a = {c, bm};
        if (load_queued(c, t, &pos)) {
            all = 1;
            break;
        }
        cmd = cmd_resolve(c->argc, c->argv, &container);
        if (!cmd || (cmd->flags & CMD_ALL_STRIPES) ||
            cmd_keys(cmd, c->argc, c->argv, set_bit_cb, &a) < 0)
            all = 1;
    }
    for (int i = 0; i < t->nw; i++) {
        struct skey k;
        store_key(s, &k, t->w[i]->db, t->w[i]->key, t->w[i]->klen);
        bm[k.stripe >> 6] |= 1ULL << (k.stripe & 63);
    }
    if (all)
        for (uint32_t i = 0; i < s->nstripes; i++)
            bm[i >> 6] |= 1ULL << (i & 63);
    /* replayed by DEBUG LOADAOF, which holds every stripe already: run under that hold */
    const uint64_t *outer = store_held;
    for (uint32_t w = 0; outer && w < words; w++)
        if (bm[w] & ~outer[w])
            outer = NULL;
    if (!outer)
        store_hold_set(s, bm);
    for (int i = 0; i < t->nw && ok; i++) {
        struct skey k;
        struct item *it;
        store_key(s, &k, t->w[i]->db, t->w[i]->key, t->w[i]->klen);
        it = store_lookup_write_locked(s, &k, conn_now(c));
        if (t->w[i]->missing ? it != NULL : (!it || item_cas_field(it) != t->w[i]->cas))
            ok = 0;
    }
    if (!ok) {
        if (!outer)
            store_release_set(s, bm);
        free(bm);
        reply_null_array(c);
        discard(t);
        unwatch_all(t);
        return;
    }
    reply_array(c, t->nq);
    pos = 0;
    t->active = 0; /* queued commands run, they are not queued again */
    t->executing = 1;
    int logged = prop_active();
    if (TC_UNLIKELY(logged))
        aof_tx_begin(c); /* the writes are logged as one MULTI ... EXEC block */
    for (int i = 0; i < t->nq; i++) {
        const struct cmd *cmd, *container;
        if (load_queued(c, t, &pos)) {
            reply_error(c, "ERR out of memory");
            continue;
        }
        cmd = cmd_resolve(c->argc, c->argv, &container); /* checked when it was queued */
        if (TC_UNLIKELY(c->user != NULL) &&
            !atomic_load_explicit(&c->user->allperm, memory_order_relaxed) &&
            acl_exec_denied(c, cmd))
            continue; /* the rules changed since it was queued: answered NOPERM */
        STAT_INC(c->w->st.commands);
        cmd_modified_reset();
        cmd_current = cmd;
        int64_t t0 = util_ticks();
        if (TC_UNLIKELY(logged))
            aof_exec(c, cmd);
        else
            cmd->fn(c);
        int64_t took = util_ticks_us(util_ticks() - t0);
        cmdstats_call(cmd, took, cmd_errors != 0);
        /* as Redis, the slowlog has EXEC's commands, not EXEC */
        if (TC_UNLIKELY(took >= cfg.slowlog_log_slower_than) &&
            cfg.slowlog_log_slower_than >= 0 && !(cmd->flags & CMD_SKIP_SLOWLOG))
            slowlog_push(c, took);
        if (cmd_errors)
            cmdstats_errors(cmd_last_error, cmd_errors);
        /* blocked clients on other workers retry once EXEC releases the stripes */
        if (cmd->flags & CMD_WRITE)
            cmd_after_write(c, cmd);
        monitor_feed(c, cmd);
        if (TC_UNLIKELY(c->trk != NULL))
            tracking_after_command(c, cmd);
    }
    t->executing = 0;
    cmd_errors = 0; /* counted above, each command's; EXEC itself answered an array */
    if (TC_UNLIKELY(logged))
        aof_tx_end(c);
    if (!outer)
        store_release_set(s, bm);
    else
        store_held = outer;
    free(bm);
    c->argc = 0;
    discard(t);
    unwatch_all(t);
}

static struct cmd cmds[] = {
    {"multi", multi_command, 1, "noscript loading stale fast allow_busy tc:txcontrol", "@transaction", NULL, "transactions", "Mark the start of a transaction block"},
    {"exec", exec_command, 1, "noscript loading stale skip_slowlog tc:txcontrol", "@transaction", NULL, "transactions", "Execute all commands issued after MULTI"},
    {"discard", discard_command, 1, "noscript loading stale fast allow_busy tc:txcontrol", "@transaction", NULL, "transactions", "Discard all commands issued after MULTI"},
    {"watch", watch_command, -2, "noscript loading stale fast allow_busy tc:txcontrol", "@transaction", "RO index:1 range:-1,1,0", "transactions", "Watch the given keys to determine execution of the MULTI/EXEC block"},
    {"unwatch", unwatch_command, 1, "noscript loading stale fast allow_busy", "@transaction", NULL, "transactions", "Forget about all watched keys"},
};

void cmd_multi_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
