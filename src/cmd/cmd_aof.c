/* The append-only file, command side (see propagate.h and persist/aof.h): what is logged and
 * in which form, when the buffer is written and fsync'd, BGREWRITEAOF and automatic rewrites,
 * loading at start-up, CONFIG SET appendonly, INFO fields.
 *
 * Order. A write runs with its stripes held; its records go to a thread-local buffer and are
 * appended to the shared buffer (aof_append) before the stripes are released. Keys removed by
 * expiry or eviction are logged as DEL from under their stripe lock too (store_gone_hook).
 *
 * Durability. A worker holds the output of the connections whose commands it logged
 * (conn_hold_output); before it sleeps it writes the shared buffer (and with appendfsync
 * always fsyncs it: one fsync covers everything appended by every worker so far, and a worker
 * whose bytes another worker's fsync covered returns at once), then it releases those replies
 * (worker_release_held). So an acknowledged write is in the file before its reply leaves
 * (fsync'd with always); everysec fsyncs from a background thread once a second.
 *
 * Rewrite (Redis 7 multi-part AOF). With every stripe held: switch appends to a new incr file
 * (the old buffer is written and fsync'd into the old one), list it in the manifest, fork.
 * The child writes the store as an RDB base file. When it succeeds the manifest becomes
 * {new base, new incr} and the older files are deleted. */
#define _GNU_SOURCE
#include "cmd/propagate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/persist.h"
#include "core/config.h"
#include "core/log.h"
#include "persist/aof.h"
#include "persist/rdb.h"
#include "proto/mc.h"

_Atomic int aof_on;

#define MAX_WORKERS 256

/* ---- state (under alock; lock order: alock, then stripes) ---- */
static pthread_mutex_t alock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    struct srv *srv;
    struct aof_manifest m;    /* what the manifest on disk says (or will say) */
    int have_manifest;        /* m was written (turning on: not until the first rewrite) */
    pid_t child;              /* rewrite child, 0 none */
    char child_base[AOF_NAME_MAX];
    long child_base_seq;
    long child_incr_seq;      /* incr files with seq >= this one stay after the rewrite */
    int64_t child_start_ms;
    int scheduled;
    int last_rw_ok;
    int64_t last_rw_s;        /* aof_last_rewrite_time_sec, -1 none */
    uint64_t rewrites;
    int rw_failures;
    int64_t base_size;
    int64_t incr_prev_size;   /* incr files before the current one */
    int64_t base_size_at_rw;  /* aof_base_size: current size after the last rewrite/start */
    int64_t last_try_ms;
    pthread_t fsync_tid;
    int fsync_started;
} as = {.last_rw_ok = 1, .last_rw_s = -1};
static _Atomic int loading;
static _Atomic uint64_t epochs[MAX_WORKERS]; /* per worker: loop iterations (before_sleep) */

int aof_loading(void)
{
    return atomic_load_explicit(&loading, memory_order_relaxed);
}

static void dir_path(char *out, size_t cap)
{
    aof_join(out, cap, cfg.dir, cfg.appenddirname);
}

static void file_path(char *out, size_t cap, const char *name)
{
    char d[1400];
    dir_path(d, sizeof(d));
    aof_join(out, cap, d, name);
}

/* ---- records: [int32 db][uint32 len][RESP] in a thread-local buffer ---- */

static _Thread_local struct {
    struct buf pend;   /* records of the running command */
    int depth;         /* >0: inside a logged command (nested calls log into pend) */
    int explicit_;     /* the running command propagated itself (cmd_prop_*, nested calls) */
    int nprop;         /* records the running top-level command propagated */
    size_t prop_at;    /* pend offset of the first of them */
    size_t open_rec;   /* the explicit record being written (cmd_prop_begin) */
    int in_tx;
    size_t tx_mark;    /* pend length after MULTI */
    uint64_t upto;     /* offset this thread must see written before replying */
    uint64_t *bm;      /* stripe bitmap scratch */
} tl;

static size_t rec_open(int db)
{
    int32_t d = db;
    uint32_t z = 0;
    size_t at = buf_len(&tl.pend);
    buf_append(&tl.pend, &d, 4);
    buf_append(&tl.pend, &z, 4);
    return at;
}

static void rec_close(size_t at)
{
    uint32_t len = (uint32_t)(buf_len(&tl.pend) - at - 8);
    if (at + 8 <= buf_len(&tl.pend))
        memcpy(tl.pend.data + tl.pend.rpos + at + 4, &len, 4);
}

static void rec_arr(int n)
{
    char h[24];
    int k = snprintf(h, sizeof(h), "*%d\r\n", n);
    buf_append(&tl.pend, h, (size_t)k);
}

static void rec_bulk(const char *p, size_t n)
{
    char h[24];
    int k = snprintf(h, sizeof(h), "$%zu\r\n", n);
    buf_append(&tl.pend, h, (size_t)k);
    buf_append(&tl.pend, p, n);
    buf_append(&tl.pend, "\r\n", 2);
}

static void rec_str(const char *s)
{
    rec_bulk(s, strlen(s));
}

static void rec_ll(long long v)
{
    char num[24];
    int k = snprintf(num, sizeof(num), "%lld", v);
    rec_bulk(num, (size_t)k);
}

static void rec_slices(int db, int argc, const struct slice *argv)
{
    size_t at = rec_open(db);
    rec_arr(argc);
    for (int i = 0; i < argc; i++)
        rec_bulk(argv[i].p, argv[i].n);
    rec_close(at);
}

/* One more record propagated by the running command (its start at is a pend offset). */
static void counted(size_t at)
{
    if (tl.nprop++ == 0)
        tl.prop_at = at;
}

/* The running command propagated more than one record: wrap them in MULTI ... EXEC so a
 * replay applies them together (outside EXEC, which has its own block). */
static void wrap_multi(void)
{
    size_t start = tl.prop_at, end = buf_len(&tl.pend), at, mlen;
    char m[64];
    char *base;

    at = rec_open(-1);
    rec_arr(1);
    rec_str("MULTI");
    rec_close(at);
    mlen = buf_len(&tl.pend) - end;
    if (mlen > sizeof(m) || buf_len(&tl.pend) != end + mlen)
        return; /* out of memory: the records stay unwrapped */
    base = tl.pend.data + tl.pend.rpos;
    memcpy(m, base + end, mlen);
    memmove(base + start + mlen, base + start, end - start);
    memcpy(base + start, m, mlen);
    at = rec_open(-1);
    rec_arr(1);
    rec_str("EXEC");
    rec_close(at);
}

int cmd_prop_on(struct conn *c)
{
    (void)c;
    return atomic_load_explicit(&aof_on, memory_order_relaxed) && (tl.depth > 0 || tl.in_tx);
}

int cmd_prop_begin(struct conn *c, int argc)
{
    if (!cmd_prop_on(c))
        return 0;
    tl.explicit_ = 1;
    tl.open_rec = rec_open(c->db);
    rec_arr(argc);
    return 1;
}

void cmd_prop_arg(struct conn *c, const char *p, size_t n)
{
    (void)c;
    rec_bulk(p, n);
}

void cmd_prop_end(struct conn *c)
{
    (void)c;
    rec_close(tl.open_rec);
    counted(tl.open_rec);
}

void cmd_propagate(struct conn *c, int argc, const struct slice *argv)
{
    if (!cmd_prop_begin(c, argc))
        return;
    for (int i = 0; i < argc; i++)
        rec_bulk(argv[i].p, argv[i].n);
    cmd_prop_end(c);
}

void cmd_prop_none(struct conn *c)
{
    if (cmd_prop_on(c))
        tl.explicit_ = 1;
}

/* Append pend to the shared buffer; remember the offset for the reply of c. */
static void commit(struct conn *c)
{
    if (buf_len(&tl.pend)) {
        uint64_t off = aof_append(tl.pend.data + tl.pend.rpos, buf_len(&tl.pend));
        tl.pend.rpos = tl.pend.wpos = 0;
        if (off > tl.upto)
            tl.upto = off;
        if (c)
            conn_hold_output(c);
    }
    if (tl.pend.cap > (1 << 20))
        buf_shrink(&tl.pend, 1 << 16);
}

/* ---- what a command logs ---- */

/* The key state of (db, key) after a write, under its stripe lock. mc: give the item a CAS
 * value now if it has none, so the one clients will see is the one logged. */
static void log_state(struct conn *c, int db, const char *key, size_t klen, int mc)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    size_t at;

    store_key(s, &k, db, key, klen);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (!it) {
        at = rec_open(db);
        rec_arr(2);
        rec_str("DEL");
        rec_bulk(key, klen);
        rec_close(at);
        return;
    }
    if (it->type != OBJ_STRING)
        return;
    uint32_t fl = item_mcflags(it);
    uint64_t cas = item_cas_field(it);
    int64_t exp = item_expire(it);
    if (mc && !cas)
        cas = store_cas_locked(s, &k, &it);
    at = rec_open(db);
    if (fl || cas) {
        rec_arr(6);
        rec_str("TC.MCSET");
        rec_bulk(key, klen);
        rec_bulk(item_value(it), it->vlen);
        rec_ll((long long)fl);
        rec_ll((long long)cas);
        rec_ll((long long)exp);
    } else {
        rec_arr(exp ? 5 : 3);
        rec_str("SET");
        rec_bulk(key, klen);
        rec_bulk(item_value(it), it->vlen);
        if (exp) {
            rec_str("PXAT");
            rec_ll((long long)exp);
        }
    }
    rec_close(at);
}

static void log_expire(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    size_t at;

    arg_key(c, 1, &k);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    at = rec_open(c->db);
    if (!it) {
        rec_arr(2);
        rec_str("DEL");
    } else if (item_expire(it)) {
        rec_arr(3);
        rec_str("PEXPIREAT");
    } else {
        rec_arr(2);
        rec_str("PERSIST");
    }
    rec_bulk(c->argv[1].p, c->argv[1].n);
    if (it && item_expire(it))
        rec_ll((long long)item_expire(it));
    rec_close(at);
}

/* Log the command c just ran, under its stripes, as its table entry says (cmd.h CMD_PROP_*):
 * it did not propagate itself. */
static void log_command(struct conn *c, const struct cmd *cmd)
{
    uint32_t f = cmd->flags;

    if (cmd_errors)
        return; /* refused: nothing changed */
    if (((f & CMD_SIGNALS) && !cmd_mods) || (f & CMD_PROP_EXPLICIT))
        return; /* changed nothing, or its handler propagates what it changed (nothing) */
    counted(buf_len(&tl.pend));
    if (f & CMD_PROP_EXPIRE)
        log_expire(c);
    else if ((f & CMD_PROP_STATE) || ((f & CMD_PROP_ARGV3) && c->argc != 3))
        log_state(c, c->db, c->argv[1].p, c->argv[1].n, 0);
    else
        rec_slices(c->db, c->argc, c->argv);
}

static int stripe_cb(void *arg, int i, unsigned flags)
{
    struct conn *c = arg;
    struct skey k;

    (void)flags;
    arg_key(c, i, &k);
    tl.bm[k.stripe >> 6] |= 1ULL << (k.stripe & 63);
    return 0;
}

/* The stripes of cmd's keys into tl.bm (all of them when unknown). */
static uint64_t *key_stripes(struct conn *c, const struct cmd *cmd)
{
    struct store *s = conn_store(c);
    uint32_t words = (s->nstripes + 63) / 64;

    if (!tl.bm) {
        tl.bm = malloc(words * 8);
        if (!tl.bm)
            return NULL;
    }
    memset(tl.bm, 0, words * 8);
    if (!cmd_has_keys(cmd) || cmd_keys(cmd, c->argc, c->argv, stripe_cb, c) < 0) {
        memset(tl.bm, 0xff, words * 8);
        if (s->nstripes % 64)
            tl.bm[words - 1] = (1ULL << (s->nstripes % 64)) - 1;
    }
    return tl.bm;
}

/* Run cmd and record its propagation: its explicit forms, or its rule's. The reports and
 * errors counted are this command's alone (a blocked client's retry, a nested form), then
 * added to the caller's. */
static void run_logged(struct conn *c, const struct cmd *cmd)
{
    unsigned long mods = cmd_mods;
    unsigned errs = cmd_errors;

    cmd_mods = 0;
    cmd_errors = 0;
    tl.explicit_ = 0;
    cmd->fn(c);
    if (!tl.explicit_)
        log_command(c, cmd);
    cmd_mods += mods;
    cmd_errors += errs;
}

void aof_exec(struct conn *c, const struct cmd *cmd)
{
    struct store *s;
    uint64_t *bm;

    if (!(cmd->flags & CMD_WRITE)) {
        cmd->fn(c);
        return;
    }
    if (tl.depth > 0 || store_held) {
        /* inside a logged command (a blocking form running its plain form) or EXEC */
        if (tl.depth++ == 0)
            tl.nprop = 0;
        run_logged(c, cmd);
        tl.explicit_ = 1; /* an outer command was propagated by this one */
        if (--tl.depth == 0 && !tl.in_tx) {
            if (tl.nprop > 1)
                wrap_multi();
            commit(c);
        }
        return;
    }
    s = conn_store(c);
    bm = key_stripes(c, cmd);
    if (!bm) {
        cmd->fn(c);
        return;
    }
    store_hold_set(s, bm);
    tl.depth = 1;
    tl.nprop = 0;
    run_logged(c, cmd);
    if (tl.nprop > 1)
        wrap_multi();
    commit(c);
    tl.depth = 0;
    store_release_set(s, bm);
}

void aof_tx_begin(struct conn *c)
{
    size_t at;

    (void)c;
    tl.in_tx = 1;
    tl.depth = 1;
    at = rec_open(-1);
    rec_arr(1);
    rec_str("MULTI");
    rec_close(at);
    tl.tx_mark = buf_len(&tl.pend);
}

void aof_tx_end(struct conn *c)
{
    if (!tl.in_tx)
        return;
    if (buf_len(&tl.pend) == tl.tx_mark) {
        tl.pend.rpos = tl.pend.wpos = 0; /* nothing written: no block */
    } else {
        size_t at = rec_open(-1);
        rec_arr(1);
        rec_str("EXEC");
        rec_close(at);
    }
    commit(c);
    tl.in_tx = 0;
    tl.depth = 0;
}

/* Keys removed by expiry or eviction: DEL, under the key's stripe lock. */
static void gone_hook(int db, const char *key, size_t klen)
{
    size_t at;

    if (!atomic_load_explicit(&aof_on, memory_order_relaxed))
        return;
    at = rec_open(db);
    rec_arr(2);
    rec_str("DEL");
    rec_bulk(key, klen);
    rec_close(at);
    if (!tl.depth)
        commit(NULL);
}

/* ---- memcached ---- */

static int mc_is_write(const struct mc_req *r)
{
    switch (r->cmd) {
    case MC_GAT: case MC_GATS: case MC_SET: case MC_ADD: case MC_REPLACE: case MC_APPEND:
    case MC_PREPEND: case MC_CAS: case MC_INCR: case MC_DECR: case MC_DELETE: case MC_TOUCH:
    case MC_FLUSH_ALL: case MC_MS: case MC_MD: case MC_MA:
        return 1;
    case MC_MG:
        return (r->m.has & (MC_MF('T') | MC_MF('N'))) != 0;
    default:
        return 0;
    }
}

static void hold_all_bm(struct store *s, uint64_t *bm)
{
    uint32_t words = (s->nstripes + 63) / 64;
    memset(bm, 0xff, words * 8);
    if (s->nstripes % 64)
        bm[words - 1] = (1ULL << (s->nstripes % 64)) - 1;
}

void aof_mc_exec(struct conn *c, struct mc_req *r, aof_mc_exec_fn *exec)
{
    struct store *s = conn_store(c);
    uint32_t words = (s->nstripes + 63) / 64;
    struct mc_tok t;
    const char *pos;
    int64_t now = conn_now(c);

    if (!mc_is_write(r) || (!tl.bm && !(tl.bm = malloc(words * 8)))) {
        exec(c, r);
        return;
    }
    /* evict before holding anything (eviction under held stripes only refuses) */
    if (cfg.maxmemory > 0)
        store_make_room(s);
    if (r->cmd == MC_FLUSH_ALL) {
        hold_all_bm(s, tl.bm);
    } else {
        memset(tl.bm, 0, words * 8);
        if (r->cmd == MC_GAT || r->cmd == MC_GATS) {
            for (pos = r->keys; mc_next_token(&pos, r->end, &t);) {
                struct skey k;
                store_key(s, &k, 0, t.p, t.n);
                tl.bm[k.stripe >> 6] |= 1ULL << (k.stripe & 63);
            }
        } else {
            struct skey k;
            store_key(s, &k, 0, r->key.p, r->key.n);
            tl.bm[k.stripe >> 6] |= 1ULL << (k.stripe & 63);
        }
    }
    store_hold_set(s, tl.bm);
    tl.depth = 1;
    exec(c, r);
    if (r->cmd == MC_FLUSH_ALL) {
        int64_t at = r->exptime > 0 ? mc_exptime_ms(r->exptime, now) : 0;
        if (!r->err && !(at > MC_EXPIRED && at > now)) {
            size_t a = rec_open(0);
            rec_arr(1);
            rec_str("FLUSHDB");
            rec_close(a);
        }
    } else if (r->cmd == MC_GAT || r->cmd == MC_GATS) {
        for (pos = r->keys; mc_next_token(&pos, r->end, &t);)
            log_state(c, 0, t.p, t.n, 1);
    } else if (!r->err || r->too_large) {
        log_state(c, 0, r->key.p, r->key.n, 1);
    }
    commit(c);
    tl.depth = 0;
    store_release_set(s, tl.bm);
}

void aof_mc_flush(struct conn *c)
{
    struct store *s = conn_store(c);
    uint32_t words = (s->nstripes + 63) / 64;
    size_t a;

    if (!tl.bm && !(tl.bm = malloc(words * 8))) {
        store_flush(s, 0);
        return;
    }
    hold_all_bm(s, tl.bm);
    store_hold_set(s, tl.bm);
    store_flush(s, 0);
    a = rec_open(0);
    rec_arr(1);
    rec_str("FLUSHDB");
    rec_close(a);
    commit(c);
    store_release_set(s, tl.bm);
}

/* TC.MCSET key value flags cas pxat: a memcached item exactly (AOF replay). */
static void mcset_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long fl, cas, exp;
    struct skey k;
    struct item *it;
    uint8_t bits = 0;

    if (arg_ll(c, 3, &fl, NULL) || arg_ll(c, 4, &cas, NULL) || arg_ll(c, 5, &exp, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (exp && exp <= conn_now(c)) {
        store_delete_locked(s, &k, conn_now(c));
        store_unlock(s, k.stripe);
        reply_ok(c);
        return;
    }
    if (fl)
        bits |= IT_FLAGS;
    if (cas || c->argv[2].n >= ITEM_REF_MIN)
        bits |= IT_CAS;
    if (exp)
        bits |= IT_TTL;
    it = item_create(OBJ_STRING, k.p, k.n, c->argv[2].n, bits);
    if (!it) {
        store_unlock(s, k.stripe);
        reply_error(c, "ERR out of memory");
        return;
    }
    memcpy(item_value(it), c->argv[2].p, c->argv[2].n);
    if (fl) {
        uint32_t f = (uint32_t)fl;
        memcpy(item_opt(it, IT_FLAGS), &f, 4);
    }
    if (bits & IT_CAS) {
        uint64_t v = (uint64_t)cas;
        memcpy(item_opt(it, IT_CAS), &v, 8);
        if (v > s->stripes[k.stripe].cas)
            s->stripes[k.stripe].cas = v;
    }
    if (exp)
        item_set_expire_field(it, exp);
    if (store_put_locked(s, &k, it)) {
        store_unlock(s, k.stripe);
        reply_error(c, "ERR out of memory");
        return;
    }
    store_unlock(s, k.stripe);
    reply_ok(c);
}

/* ---- writing: before a worker sleeps, and the everysec thread ---- */

static int rewriting(void)
{
    return __atomic_load_n(&as.child, __ATOMIC_RELAXED) != 0;
}

/* Write (and with always fsync) what this worker appended, then release the replies it
 * held. */
static void before_sleep(struct worker *w)
{
    if (w->idx < MAX_WORKERS)
        atomic_fetch_add_explicit(&epochs[w->idx], 1, memory_order_release);
    if (tl.upto) {
        int fs = cfg.appendfsync == 2 && !(cfg.no_appendfsync_on_rewrite && rewriting());
        if (aof_write(tl.upto, fs) && cfg.appendfsync == 2) {
            log_warn("Can't recover from AOF write error when the AOF fsync policy is "
                     "'always'. Exiting...");
            _exit(1);
        }
        tl.upto = 0;
    }
    worker_release_held(w);
}

static void *fsync_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "tc-aof-fsync");
    for (;;) {
        usleep(100000);
        if (!atomic_load_explicit(&aof_on, memory_order_relaxed))
            continue;
        struct aof_stats st;
        aof_get_stats(&st);
        /* what the workers have not written yet (expiry DELs from a timer, say) */
        if (st.appended > st.written)
            aof_write(st.appended, 0);
        static int64_t last;
        int64_t now = util_mono_us();
        if (cfg.appendfsync == 1 && now - last >= 1000000 &&
            !(cfg.no_appendfsync_on_rewrite && rewriting())) {
            aof_fsync_written();
            last = now;
        }
    }
    return NULL;
}

static void start_fsync_thread(void)
{
    if (!as.fsync_started && pthread_create(&as.fsync_tid, NULL, fsync_main, NULL) == 0) {
        pthread_detach(as.fsync_tid);
        as.fsync_started = 1;
    }
}

/* Wait until every other worker finished the loop iteration it was in (so none still runs a
 * command that saw aof_on == 0). */
static void wait_workers(struct srv *srv, struct worker *self)
{
    uint64_t seen[MAX_WORKERS];
    int n = srv->nworkers < MAX_WORKERS ? srv->nworkers : MAX_WORKERS;

    if (!srv->workers)
        return;
    for (int i = 0; i < n; i++)
        seen[i] = atomic_load(&epochs[i]);
    for (int i = 0; i < n; i++)
        worker_wake(&srv->workers[i]);
    for (int i = 0; i < n; i++) {
        int64_t until = util_mono_us() + 2000000;
        if (&srv->workers[i] == self)
            continue;
        while (atomic_load(&epochs[i]) == seen[i] && util_mono_us() < until)
            usleep(200);
    }
}

/* ---- rewrite ---- */

static void name_base(char *out, size_t cap, long seq)
{
    snprintf(out, cap, "%s.%ld.base.rdb", cfg.appendfilename, seq);
}

static void name_incr(char *out, size_t cap, long seq)
{
    snprintf(out, cap, "%s.%ld.incr.aof", cfg.appendfilename, seq);
}

static int64_t file_size(const char *name)
{
    char p[2048];
    struct stat st;
    file_path(p, sizeof(p), name);
    return stat(p, &st) == 0 ? (int64_t)st.st_size : 0;
}

static int make_dir(void)
{
    char d[1400];
    dir_path(d, sizeof(d));
    if (mkdir(d, 0755) && errno != EEXIST) {
        log_warn("Can't create the append-only directory %s: %s", d, strerror(errno));
        return -1;
    }
    return 0;
}

static void close_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d))) {
        struct stat st;
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != dirfd(d) && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
            close(fd);
    }
    closedir(d);
}

/* Under alock, no child. held_all: this thread holds every stripe already. discard: turning
 * the AOF on (what is buffered predates the base). Returns 0 or -1. */
static int rewrite_start_locked(struct srv *srv, int held_all, int discard)
{
    struct store *s = srv->store;
    uint32_t words = (s->nstripes + 63) / 64;
    uint64_t *bm = NULL;
    char incr[AOF_NAME_MAX], path[2048];
    long incr_seq = as.m.nincr ? as.m.incr_seq[as.m.nincr - 1] + 1 : 1;
    long base_seq = as.m.base_seq + 1;
    struct aof_manifest nm;
    pid_t pid;

    as.last_try_ms = util_now_ms();
    if (make_dir())
        return -1;
    if (as.m.nincr == AOF_MAX_INCR) {
        log_warn("Too many incremental AOF files: can't rewrite");
        return -1;
    }
    if (!held_all) {
        bm = malloc(words * 8);
        if (!bm)
            return -1;
        hold_all_bm(s, bm);
        store_hold_set(s, bm);
    }
    name_incr(incr, sizeof(incr), incr_seq);
    file_path(path, sizeof(path), incr);
    nm = as.m;
    snprintf(nm.incr[nm.nincr], sizeof(nm.incr[0]), "%s", incr);
    nm.incr_seq[nm.nincr++] = incr_seq;
    /* the old files plus the new incr stay loadable while the child runs */
    {
        char d[1400];
        struct aof_stats st;
        aof_get_stats(&st);
        dir_path(d, sizeof(d));
        if (!discard)
            as.incr_prev_size += st.incr_size;
        if (aof_switch(path, discard) ||
            (as.have_manifest && aof_manifest_write(d, cfg.appendfilename, &nm))) {
            if (bm) {
                store_release_set(s, bm);
                free(bm);
            }
            return -1;
        }
    }
    as.m = nm;
    name_base(as.child_base, sizeof(as.child_base), base_seq);
    as.child_base_seq = base_seq;
    as.child_incr_seq = incr_seq;
    pid = fork();
    if (pid == 0) {
        struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum};
        char bp[2048];
        prctl(PR_SET_NAME, "tc-aof-rewrite");
        if (setpriority(PRIO_PROCESS, 0, 10) < 0) {
            /* not fatal */
        }
        close_sockets();
        file_path(bp, sizeof(bp), as.child_base);
        _exit(rdb_save(s, bp, &o, util_now_ms()) ? 1 : 0);
    }
    if (bm) {
        store_release_set(s, bm);
        free(bm);
    }
    if (pid < 0) {
        log_warn("Can't rewrite append only file in background: fork: %s", strerror(errno));
        as.last_rw_ok = 0;
        return -1;
    }
    __atomic_store_n(&as.child, pid, __ATOMIC_RELAXED);
    as.child_start_ms = util_now_ms();
    log_notice("Background append only file rewriting started by pid %d", (int)pid);
    return 0;
}

/* Under alock: collect a finished child (block: wait for it). */
static void rewrite_reap_locked(int block)
{
    int status;
    pid_t r;
    char d[1400];

    if (!as.child)
        return;
    r = waitpid(as.child, &status, block ? 0 : WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return;
    dir_path(d, sizeof(d));
    int ok = r == as.child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    int64_t now = util_now_ms();
    if (ok && atomic_load(&aof_on)) {
        struct aof_manifest nm, old = as.m;
        memset(&nm, 0, sizeof(nm));
        snprintf(nm.base, sizeof(nm.base), "%s", as.child_base);
        nm.base_seq = as.child_base_seq;
        for (int i = 0; i < as.m.nincr; i++)
            if (as.m.incr_seq[i] >= as.child_incr_seq) {
                snprintf(nm.incr[nm.nincr], sizeof(nm.incr[0]), "%s", as.m.incr[i]);
                nm.incr_seq[nm.nincr++] = as.m.incr_seq[i];
            }
        if (aof_manifest_write(d, cfg.appendfilename, &nm) == 0) {
            char p[2048];
            as.m = nm;
            as.have_manifest = 1;
            /* the files the new base replaces */
            if (old.base[0] && strcmp(old.base, nm.base)) {
                file_path(p, sizeof(p), old.base);
                unlink(p);
            }
            for (int i = 0; i < old.nincr; i++)
                if (old.incr_seq[i] < as.child_incr_seq) {
                    file_path(p, sizeof(p), old.incr[i]);
                    unlink(p);
                }
            as.base_size = file_size(nm.base);
            as.incr_prev_size = 0;
            for (int i = 0; i + 1 < nm.nincr; i++)
                as.incr_prev_size += file_size(nm.incr[i]);
            struct aof_stats st;
            aof_get_stats(&st);
            as.base_size_at_rw = as.base_size + as.incr_prev_size + st.incr_size;
            as.rewrites++;
            as.rw_failures = 0;
            as.last_rw_ok = 1;
            log_notice("Background AOF rewrite terminated with success");
            log_notice("Background AOF rewrite finished successfully");
        } else {
            ok = 0;
        }
    } else if (ok) {
        ok = 0; /* the AOF was turned off meanwhile */
    } else {
        log_warn("Background AOF rewrite %s", r == as.child && WIFSIGNALED(status)
                                                  ? "terminated by signal"
                                                  : "terminated with error");
    }
    if (!ok) {
        char p[2048];
        file_path(p, sizeof(p), as.child_base);
        unlink(p);
        if (atomic_load(&aof_on)) {
            as.last_rw_ok = 0;
            as.rw_failures++;
        }
    }
    as.last_rw_s = (now - as.child_start_ms) / 1000;
    __atomic_store_n(&as.child, 0, __ATOMIC_RELAXED);
}

void aof_tick(struct worker *w)
{
    struct srv *srv = w->srv;

    pthread_mutex_lock(&alock);
    rewrite_reap_locked(0);
    if (!as.child && atomic_load(&aof_on)) {
        struct aof_stats st;
        aof_get_stats(&st);
        int64_t cur = as.base_size + as.incr_prev_size + st.incr_size;
        int64_t base = as.base_size_at_rw > 0 ? as.base_size_at_rw : 1;
        int retry_ok = as.last_rw_ok || util_now_ms() - as.last_try_ms >= 5000;
        if (as.scheduled || (!as.have_manifest && retry_ok)) {
            as.scheduled = 0;
            rewrite_start_locked(srv, 0, !as.have_manifest);
        } else if (cfg.auto_aof_rewrite_percentage > 0 && cur > cfg.auto_aof_rewrite_min_size &&
                   (cur - base) * 100 / base >= cfg.auto_aof_rewrite_percentage && retry_ok) {
            log_notice("Starting automatic rewriting of AOF on %lld%% growth",
                       (long long)((cur - base) * 100 / base));
            rewrite_start_locked(srv, 0, 0);
        }
    }
    pthread_mutex_unlock(&alock);
}

/* alock for a command: a thread inside EXEC holds stripes and only tries it. */
static int cmd_alock(void)
{
    if (store_held)
        return pthread_mutex_trylock(&alock) ? -1 : 0;
    pthread_mutex_lock(&alock);
    return 0;
}

static void bgrewriteaof_command(struct conn *c)
{
    struct srv *srv = c->w->srv;
    int rc;

    if (cmd_alock()) {
        reply_error(c, "ERR Background append only file rewriting already in progress");
        return;
    }
    if (!atomic_load(&aof_on)) {
        pthread_mutex_unlock(&alock);
        reply_error(c, "ERR Append only file is disabled (appendonly no): nothing to rewrite");
        return;
    }
    if (as.child) {
        pthread_mutex_unlock(&alock);
        reply_error(c, "ERR Background append only file rewriting already in progress");
        return;
    }
    rc = rewrite_start_locked(srv, store_held != NULL, !as.have_manifest);
    pthread_mutex_unlock(&alock);
    if (rc)
        reply_error(c, "ERR Can't execute an AOF background rewriting. Please check the server "
                       "logs for more information.");
    else
        reply_status(c, "Background append only file rewriting started");
}

int aof_set_enabled(struct conn *c, int on, char *err, size_t cap)
{
    struct srv *srv = c->w->srv;
    int rc = 0;

    if (cmd_alock()) {
        snprintf(err, cap, "can't change appendonly inside a transaction");
        return -1;
    }
    if (on && !atomic_load(&aof_on)) {
        char d[1400], mp[2048], mname[AOF_NAME_MAX + 16];
        dir_path(d, sizeof(d));
        if (make_dir()) {
            snprintf(err, cap, "can't create the append-only directory");
            pthread_mutex_unlock(&alock);
            return -1;
        }
        /* whatever AOF is on disk is stale now: it is replaced by the first rewrite */
        snprintf(mname, sizeof(mname), "%s.manifest", cfg.appendfilename);
        aof_join(mp, sizeof(mp), d, mname);
        if (aof_manifest_read(d, cfg.appendfilename, &as.m, err, cap) < 0)
            memset(&as.m, 0, sizeof(as.m));
        unlink(mp);
        as.have_manifest = 0;
        as.base_size = as.incr_prev_size = 0;
        atomic_store(&store_gone_hook, gone_hook);
        atomic_store(&aof_on, 1);
        start_fsync_thread();
        pthread_mutex_unlock(&alock);
        wait_workers(srv, c->w); /* commands that missed aof_on are done */
        pthread_mutex_lock(&alock);
        if (as.child || rewrite_start_locked(srv, store_held != NULL, 1))
            as.scheduled = 1; /* after the running one, or retried by the timer */
        cfg.appendonly = 1;
    } else if (!on && atomic_load(&aof_on)) {
        atomic_store(&aof_on, 0);
        atomic_store(&store_gone_hook, NULL);
        if (as.child) {
            kill(as.child, SIGUSR1);
            rewrite_reap_locked(1);
        }
        aof_close();
        cfg.appendonly = 0;
    }
    pthread_mutex_unlock(&alock);
    return rc;
}

void aof_shutdown(void)
{
    pthread_mutex_lock(&alock);
    if (as.child) {
        log_warn("There is a child rewriting the AOF. Killing it!");
        kill(as.child, SIGUSR1);
        rewrite_reap_locked(1);
    }
    if (atomic_load(&aof_on)) {
        log_notice("Calling fsync() on the AOF file.");
        aof_close();
    }
    pthread_mutex_unlock(&alock);
}

/* ---- loading ---- */

struct replay {
    struct conn *c;
    char *err;
    size_t errcap;
};

static int replay_one(void *arg, int argc, const char **argv, const size_t *lens)
{
    struct replay *rp = arg;
    struct conn *c = rp->c;

    if (argc > c->argv_cap) {
        struct slice *a = realloc(c->argv, sizeof(*a) * (size_t)argc);
        if (!a)
            return -1;
        c->argv = a;
        c->argv_cap = argc;
    }
    for (int i = 0; i < argc; i++) {
        c->argv[i].p = argv[i];
        c->argv[i].n = lens[i];
    }
    c->argc = argc;
    if (!cmd_lookup(argv[0], lens[0])) {
        log_warn("Unknown command '%.*s' reading the append only file",
                 (int)(lens[0] > 64 ? 64 : lens[0]), argv[0]);
        return -1;
    }
    c->w->now_ms = util_now_ms();
    cmd_call(c);
    c->argc = 0;
    conn_reset_output(c);
    c->wbuf.rpos = c->wbuf.wpos = 0;
    return 0;
}

/* Load one file of the AOF. last: the truncated tail may be cut (aof-load-truncated). */
static int load_one(struct srv *srv, struct conn *c, const char *name, int last)
{
    char path[2048], err[512] = "";
    struct replay rp = {c, err, sizeof(err)};
    off_t valid = 0;
    int rc;

    file_path(path, sizeof(path), name);
    if (strlen(name) > 4 && !strcmp(name + strlen(name) - 4, ".rdb")) {
        struct rdb_load_info info;
        rc = rdb_load(srv->store, path, util_now_ms(), &info, err, sizeof(err));
        if (rc) {
            log_warn("Fatal error loading the AOF base %s: %s", path,
                     rc == 1 ? "file missing" : err);
            return -1;
        }
        log_notice("DB loaded from base file %s: %llu keys", name,
                   (unsigned long long)info.keys);
        return 0;
    }
    rc = aof_read_file(path, replay_one, &rp, &valid, err, sizeof(err));
    if (rc == 1) {
        if (last)
            return 0; /* the incr file of a rewrite that had just started */
        log_warn("The AOF file %s doesn't exist", path);
        return -1;
    }
    if (rc < 0) {
        log_warn("%s", err);
        return -1;
    }
    if (rc == 2) {
        log_warn("!!! Warning: short read while loading the AOF file %s!!!", path);
        if (!last || !cfg.aof_load_truncated) {
            log_warn("Unexpected end of file reading the append only file %s. You can: 1) Make "
                     "a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "
                     "2) Alternatively you can set the 'aof-load-truncated' configuration option "
                     "to yes and restart the server.", path);
            return -1;
        }
        log_warn("!!! Warning: last valid command at offset %lld (AOF loaded anyway because "
                 "aof-load-truncated is enabled)", (long long)valid);
        if (truncate(path, valid)) {
            log_warn("Error truncating the AOF file %s: %s", path, strerror(errno));
            return -1;
        }
        log_warn("AOF %s loaded anyway because aof-load-truncated is enabled", path);
    }
    log_notice("DB loaded from incr file %s", name);
    return 0;
}

int aof_boot(struct srv *srv)
{
    char d[1400], err[256] = "";
    int rc;

    as.srv = srv;
    srv->before_sleep = before_sleep;
    if (!cfg.appendonly)
        return 1;
    dir_path(d, sizeof(d));
    rc = aof_manifest_read(d, cfg.appendfilename, &as.m, err, sizeof(err));
    if (rc < 0) {
        log_warn("Fatal error reading the AOF manifest: %s", err);
        return -1;
    }
    if (rc == 1)
        return 2; /* no AOF yet: the caller loads the RDB, then aof_boot_create */
    {
        struct worker *fw = calloc(1, sizeof(*fw));
        struct conn *c = calloc(1, sizeof(*c));
        int64_t t0 = util_mono_us();
        if (!fw || !c) {
            free(fw);
            free(c);
            return -1;
        }
        fw->srv = srv;
        fw->now_ms = util_now_ms();
        pthread_mutex_init(&fw->list_lock, NULL);
        pthread_mutex_init(&fw->mbox_lock, NULL);
        c->w = fw;
        c->fd = -1;
        c->proto = PROTO_RESP;
        c->resp = 2;
        c->authed = 1;
        atomic_store(&loading, 1);
        rc = 0;
        if (as.m.base[0])
            rc = load_one(srv, c, as.m.base, as.m.nincr == 0);
        for (int i = 0; i < as.m.nincr && rc == 0; i++)
            rc = load_one(srv, c, as.m.incr[i], i == as.m.nincr - 1);
        atomic_store(&loading, 0);
        cmd_resp_close(c);
        conn_reset_output(c);
        buf_deinit(&c->wbuf);
        free(c->argv);
        free(c);
        free(fw->keys);
        free(fw);
        if (rc)
            return -1;
        log_notice("DB loaded from append only file: %.3f seconds",
                   (double)(util_mono_us() - t0) / 1e6);
    }
    as.have_manifest = 1;
    as.base_size = as.m.base[0] ? file_size(as.m.base) : 0;
    as.incr_prev_size = 0;
    for (int i = 0; i + 1 < as.m.nincr; i++)
        as.incr_prev_size += file_size(as.m.incr[i]);
    if (as.m.nincr == 0) {
        long seq = 1;
        name_incr(as.m.incr[0], sizeof(as.m.incr[0]), seq);
        as.m.incr_seq[0] = seq;
        as.m.nincr = 1;
        if (aof_manifest_write(d, cfg.appendfilename, &as.m))
            return -1;
    }
    {
        char p[2048];
        file_path(p, sizeof(p), as.m.incr[as.m.nincr - 1]);
        if (aof_switch(p, 1))
            return -1;
    }
    struct aof_stats st;
    aof_get_stats(&st);
    as.base_size_at_rw = as.base_size + as.incr_prev_size + st.incr_size;
    atomic_store(&store_gone_hook, gone_hook);
    atomic_store(&aof_on, 1);
    start_fsync_thread();
    return 0;
}

int aof_boot_create(struct srv *srv)
{
    char d[1400], p[2048];
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum};

    if (make_dir())
        return -1;
    dir_path(d, sizeof(d));
    memset(&as.m, 0, sizeof(as.m));
    as.m.base_seq = 1;
    name_base(as.m.base, sizeof(as.m.base), 1);
    file_path(p, sizeof(p), as.m.base);
    log_notice("Creating AOF base file %s on server start", as.m.base);
    if (rdb_save(srv->store, p, &o, util_now_ms()))
        return -1;
    name_incr(as.m.incr[0], sizeof(as.m.incr[0]), 1);
    as.m.incr_seq[0] = 1;
    as.m.nincr = 1;
    if (aof_manifest_write(d, cfg.appendfilename, &as.m))
        return -1;
    log_notice("Creating AOF incr file %s on server start", as.m.incr[0]);
    file_path(p, sizeof(p), as.m.incr[0]);
    if (aof_switch(p, 1))
        return -1;
    as.have_manifest = 1;
    as.base_size = file_size(as.m.base);
    as.base_size_at_rw = as.base_size;
    atomic_store(&store_gone_hook, gone_hook);
    atomic_store(&aof_on, 1);
    start_fsync_thread();
    return 0;
}

/* ---- INFO ---- */

#define P(...)                                                                                \
    do {                                                                                      \
        int n_ = snprintf(line, sizeof(line), __VA_ARGS__);                                   \
        buf_append(b, line, (size_t)n_);                                                      \
    } while (0)

void aof_info(struct buf *b)
{
    char line[256];
    struct aof_stats st;
    int on = atomic_load(&aof_on);

    aof_get_stats(&st);
    pthread_mutex_lock(&alock);
    P("aof_enabled:%d\r\n", on);
    P("aof_rewrite_in_progress:%d\r\n", as.child ? 1 : 0);
    P("aof_rewrite_scheduled:%d\r\n", as.scheduled);
    P("aof_last_rewrite_time_sec:%lld\r\n", (long long)as.last_rw_s);
    P("aof_current_rewrite_time_sec:%lld\r\n",
      as.child ? (long long)((util_now_ms() - as.child_start_ms) / 1000) : -1LL);
    P("aof_last_bgrewrite_status:%s\r\n", as.last_rw_ok ? "ok" : "err");
    P("aof_rewrites:%llu\r\n", (unsigned long long)as.rewrites);
    P("aof_rewrites_consecutive_failures:%d\r\n", as.rw_failures);
    P("aof_last_write_status:%s\r\n", st.last_write_ok ? "ok" : "err");
    P("aof_last_cow_size:0\r\n");
    if (on) {
        P("aof_current_size:%lld\r\n", (long long)(as.base_size + as.incr_prev_size + st.incr_size));
        P("aof_base_size:%lld\r\n", (long long)as.base_size_at_rw);
        P("aof_pending_rewrite:%d\r\n", as.scheduled);
        P("aof_buffer_length:%llu\r\n", (unsigned long long)(st.appended - st.written));
        P("aof_pending_bio_fsync:0\r\n");
        P("aof_delayed_fsync:0\r\n");
    }
    pthread_mutex_unlock(&alock);
}

static struct cmd cmds[] = {
    {"bgrewriteaof", bgrewriteaof_command, 1, "admin noscript no_async_loading", "", NULL, "server", "Asynchronously rewrite the append-only file"},
    {"tc.mcset", mcset_command, 6, "write denyoom", "@string", "OW,update index:1 range:0,1,0", "server", "Internal: store a memcached item with its flags, CAS value and expire time (AOF)"},
};

void cmd_aof_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
