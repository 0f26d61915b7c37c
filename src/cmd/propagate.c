/* Command propagation (see propagate.h): the records a write command leaves for the
 * append-only file, and in which form.
 *
 * Order. A write runs with its stripes held; its records go to a thread-local buffer and are
 * handed to the log (aof_log_append, src/persist) before the stripes are released. Keys
 * removed by expiry or eviction are logged as DEL from under their stripe lock too
 * (cmd_prop_gone, installed as store_gone_hook by src/persist while the AOF is on). The
 * replication stream (repl_feed) takes the same records at the same point; with the AOF off,
 * a one-key command's frame as the client sent it is fed from the client's buffer instead of
 * being copied into a record first (tl.dfr, always the last record until commit).
 *
 * Durability. The output of the connections whose commands were logged is held
 * (conn_hold_output): their worker writes the log before it sleeps (aof_before_sleep), then
 * releases their replies (worker_release_held). */
#define _GNU_SOURCE
#include "cmd/propagate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "persist/aof_log.h"
#include "cmd/repl.h"
#include "persist/persist.h"
#include "store/store.h"
#include "proto/mc.h"

/* ---- records: [int32 db][uint32 len][RESP] in a thread-local buffer ----
 * The length's two top bits name a consumer the record is not for (a script's
 * redis.set_repl(REPL_AOF / REPL_REPLICA)); commit gives each consumer its own records. */

#define REC_NO_AOF 0x80000000u
#define REC_NO_REPL 0x40000000u
#define REC_LEN 0x3fffffffu

_Thread_local struct skey cmd_key_memo;

static _Thread_local struct {
    struct buf pend;   /* records of the running command */
    int depth;         /* >0: inside a logged command (nested calls log into pend) */
    int explicit_;     /* the running command propagated itself (cmd_prop_*, nested calls) */
    int nprop;         /* records the running top-level command propagated */
    size_t prop_at;    /* pend offset of the first of them */
    size_t open_rec;   /* the explicit record being written (cmd_prop_begin) */
    int in_tx;
    size_t tx_mark;    /* pend length when EXEC began (its records follow) */
    uint64_t *bm;      /* stripe bitmap scratch */
    int may_defer;     /* a one-key command with the AOF off: its frame may wait for commit */
    const char *dfr;   /* that frame (the last record; c->frame, valid until commit) or NULL */
    size_t dfr_n;
    int dfr_db;
    int own;           /* the top-level command runs under stripes aof_exec took for it */
    uint32_t mark;     /* REC_NO_* given to the records opened now (cmd_prop_target) */
    int marked;        /* pend holds a marked record */
    struct buf scratch; /* one consumer's records, when pend holds marked ones */
} tl;

void cmd_prop_target(int aof, int repl)
{
    tl.mark = (aof ? 0 : REC_NO_AOF) | (repl ? 0 : REC_NO_REPL);
}

int cmd_prop_may_block(void)
{
    return tl.own && tl.depth == 1 && !tl.in_tx;
}

static void rec_undefer(void);

static size_t rec_open(int db)
{
    int32_t d = db;
    uint32_t z = tl.mark;
    if (TC_UNLIKELY(tl.dfr != NULL))
        rec_undefer(); /* a record after the deferred frame: the frame goes first */
    if (TC_UNLIKELY(z != 0))
        tl.marked = 1;
    size_t at = buf_len(&tl.pend);
    if (buf_reserve(&tl.pend, 8))
        return at;
    memcpy(tl.pend.data + tl.pend.wpos, &d, 4);
    memcpy(tl.pend.data + tl.pend.wpos + 4, &z, 4);
    tl.pend.wpos += 8;
    return at;
}

static void rec_close(size_t at)
{
    uint32_t len = (uint32_t)(buf_len(&tl.pend) - at - 8), h;
    if (at + 8 <= buf_len(&tl.pend)) {
        memcpy(&h, tl.pend.data + tl.pend.rpos + at + 4, 4);
        len |= h & ~REC_LEN; /* the record's marks */
        memcpy(tl.pend.data + tl.pend.rpos + at + 4, &len, 4);
    }
}

/* "<type><n>\r\n" at d (room for 24 bytes); returns its length. */
static size_t put_hdr(char *d, char type, unsigned long long n)
{
    d[0] = type;
    int k = util_ull2str(d + 1, n);
    d[1 + k] = '\r';
    d[2 + k] = '\n';
    return (size_t)k + 3;
}

static void rec_arr(int n)
{
    if (buf_reserve(&tl.pend, 24))
        return;
    tl.pend.wpos += put_hdr(tl.pend.data + tl.pend.wpos, '*', (unsigned long long)n);
}

static void rec_bulk(const char *p, size_t n)
{
    if (buf_reserve(&tl.pend, n + 26))
        return;
    char *d = tl.pend.data + tl.pend.wpos;
    size_t h = put_hdr(d, '$', n);
    memcpy(d + h, p, n);
    d[h + n] = '\r';
    d[h + n + 1] = '\n';
    tl.pend.wpos += h + n + 2;
}

static void rec_str(const char *s)
{
    rec_bulk(s, strlen(s));
}

static void rec_ll(long long v)
{
    char num[24];
    int k = util_ll2str(num, v);
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

/* The digits of n (decimal): small lengths without a loop. */
static inline size_t ndigits(size_t n)
{
    size_t d = 4;
    if (n < 10)
        return 1;
    if (n < 100)
        return 2;
    if (n < 1000)
        return 3;
    for (size_t p = 10000; n >= p && d < 20; p *= 10)
        d++;
    return d;
}

/* c's command as received, when the parser read its frame in one pass (c->frame, set only
 * then: every length in canonical digits) and argv is still that frame's, each argument where
 * the canonical encoding puts it: the frame is then copied whole instead of being formatted
 * again. The CRLF around each argument is checked too (the parser skips the byte after a CR
 * and a bulk's trailer unchecked, as Redis does). Anything else (an inline command, a frame
 * read in pieces, argv rewritten or replaced: EXEC, a blocked command's retry, a blocking
 * command's plain form) is formatted. */
static void rec_command(struct conn *c, int db)
{
    const char *f = c->frame;

    if (f && f[0] == '*') {
        size_t pos = 3 + ndigits((size_t)c->argc);
        if (f[pos - 2] != '\r' || f[pos - 1] != '\n')
            f = NULL;
        for (int i = 0; i < c->argc && f; i++) {
            const char *p = c->argv[i].p;
            size_t n = c->argv[i].n;
            pos += 3 + ndigits(n);
            if (p != f + pos || pos + n + 2 > c->frame_n || p[-2] != '\r' || p[-1] != '\n' ||
                p[n] != '\r' || p[n + 1] != '\n')
                f = NULL;
            pos += n + 2;
        }
        if (f && pos == c->frame_n) {
            if (tl.may_defer) {
                /* fed straight from the client's buffer at commit (no copy into pend) */
                tl.dfr = f;
                tl.dfr_n = pos;
                tl.dfr_db = db;
                return;
            }
            size_t at = rec_open(db);
            if (buf_reserve(&tl.pend, pos))
                return;
            memcpy(tl.pend.data + tl.pend.wpos, f, pos);
            tl.pend.wpos += pos;
            rec_close(at);
            return;
        }
    }
    rec_slices(db, c->argc, c->argv);
}

/* The deferred frame into pend, as a record like the others. */
static void rec_undefer(void)
{
    const char *f = tl.dfr;
    size_t at;

    tl.dfr = NULL;
    at = rec_open(tl.dfr_db);
    if (buf_reserve(&tl.pend, tl.dfr_n))
        return;
    memcpy(tl.pend.data + tl.pend.wpos, f, tl.dfr_n);
    tl.pend.wpos += tl.dfr_n;
    rec_close(at);
}

/* One more record propagated by the running command (its start at is a pend offset). */
static void counted(size_t at)
{
    if (tl.nprop++ == 0)
        tl.prop_at = at;
}

/* Records from pend offset start on go in MULTI ... EXEC so a replay applies them together.
 * MULTI takes the database of the first of them, so the stream's SELECT comes before MULTI
 * as in Redis's (SELECT, MULTI, SET ...). */
static void wrap_multi_at(size_t start)
{
    size_t end, at, mlen;
    int32_t db = -1;
    char m[64];
    char *base;

    if (tl.dfr)
        rec_undefer();
    end = buf_len(&tl.pend);
    if (start + 8 <= end)
        memcpy(&db, tl.pend.data + tl.pend.rpos + start, 4);
    at = rec_open(db);
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

/* The running command propagated more than one record: wrap them (outside EXEC, which has
 * its own block). */
static void wrap_multi(void)
{
    wrap_multi_at(tl.prop_at);
}

/* Records in pend from offset start on (each an 8-byte header: db, length). */
static int records_from(size_t start)
{
    int n = 0;
    size_t end = buf_len(&tl.pend);
    while (start + 8 <= end) {
        uint32_t len;
        memcpy(&len, tl.pend.data + tl.pend.rpos + start + 4, 4);
        start += 8 + (len & REC_LEN);
        n++;
    }
    return n;
}

int cmd_prop_on(struct conn *c)
{
    (void)c;
    return prop_active() && (tl.depth > 0 || tl.in_tx);
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

/* The records of pend not marked skip, their marks cleared, into tl.scratch. */
static void rec_filter(uint32_t skip)
{
    const char *p = tl.pend.data + tl.pend.rpos, *end = p + buf_len(&tl.pend);

    tl.scratch.rpos = tl.scratch.wpos = 0;
    while (p + 8 <= end) {
        uint32_t h, len;
        memcpy(&h, p + 4, 4);
        len = h & REC_LEN;
        if (!(h & skip)) {
            if (buf_reserve(&tl.scratch, 8 + (size_t)len))
                break;
            char *d = tl.scratch.data + tl.scratch.wpos;
            memcpy(d, p, 4);
            memcpy(d + 4, &len, 4);
            memcpy(d + 8, p + 8, len);
            tl.scratch.wpos += 8 + (size_t)len;
        }
        p += 8 + (size_t)len;
    }
}

/* commit when some records are for one consumer only: each gets its own. */
static void commit_marked(struct conn *c)
{
    tl.marked = 0;
    if (atomic_load_explicit(&aof_on, memory_order_relaxed)) {
        rec_filter(REC_NO_AOF);
        if (buf_len(&tl.scratch)) {
            aof_log_append(tl.scratch.data + tl.scratch.rpos, buf_len(&tl.scratch));
            if (c)
                conn_hold_output(c);
        }
    }
    if (atomic_load_explicit(&repl_on, memory_order_relaxed)) {
        rec_filter(REC_NO_REPL);
        if (buf_len(&tl.scratch)) {
            uint64_t off = repl_feed(tl.scratch.data + tl.scratch.rpos, buf_len(&tl.scratch));
            if (c && off)
                c->woff = off;
        }
    }
    tl.pend.rpos = tl.pend.wpos = 0;
    tl.scratch.rpos = tl.scratch.wpos = 0;
    if (tl.scratch.cap > (1 << 20))
        buf_shrink(&tl.scratch, 1 << 16);
}

/* Append pend to the shared buffer; remember the offset for the reply of c. */
static void commit(struct conn *c)
{
    if (TC_UNLIKELY(tl.marked)) {
        if (tl.dfr)
            rec_undefer();
        commit_marked(c);
        if (tl.pend.cap > (1 << 20))
            buf_shrink(&tl.pend, 1 << 16);
        return;
    }
    if (tl.dfr) {
        const char *f = tl.dfr;
        tl.dfr = NULL;
        if (!atomic_load_explicit(&aof_on, memory_order_relaxed) &&
            atomic_load_explicit(&repl_on, memory_order_relaxed)) {
            uint64_t off = repl_feed_frame(tl.pend.data + tl.pend.rpos, buf_len(&tl.pend),
                                           tl.dfr_db, f, tl.dfr_n);
            if (c && off)
                c->woff = off;
            tl.pend.rpos = tl.pend.wpos = 0;
            return;
        }
        tl.dfr = f; /* the AOF came on meanwhile: a record for both */
        rec_undefer();
    }
    if (buf_len(&tl.pend)) {
        if (atomic_load_explicit(&aof_on, memory_order_relaxed)) {
            aof_log_append(tl.pend.data + tl.pend.rpos, buf_len(&tl.pend));
            if (c)
                conn_hold_output(c);
        }
        if (atomic_load_explicit(&repl_on, memory_order_relaxed)) {
            uint64_t off = repl_feed(tl.pend.data + tl.pend.rpos, buf_len(&tl.pend));
            if (c && off)
                c->woff = off;
        }
        tl.pend.rpos = tl.pend.wpos = 0;
    }
    if (tl.pend.cap > (1 << 20))
        buf_shrink(&tl.pend, 1 << 16);
}

/* PUBLISH / SPUBLISH: to the replication stream only, as Redis (PROPAGATE_REPL). */
static void repl_publish(struct conn *c)
{
    if (!atomic_load_explicit(&repl_on, memory_order_relaxed) || repl_applying)
        return;
    if (tl.depth || tl.in_tx) { /* inside EXEC or a script: in its block (the AOF's too) */
        counted(buf_len(&tl.pend));
        rec_slices(c->db, c->argc, c->argv);
        return;
    }
    size_t start = buf_len(&tl.pend);
    rec_slices(c->db, c->argc, c->argv); /* with its SELECT, as Redis propagates it */
    repl_feed(tl.pend.data + tl.pend.rpos + start, buf_len(&tl.pend) - start);
    tl.pend.wpos = tl.pend.rpos + start;
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
        rec_bulk(item_value(it), item_vlen(it));
        rec_ll((long long)fl);
        rec_ll((long long)cas);
        rec_ll((long long)exp);
    } else {
        rec_arr(exp ? 5 : 3);
        rec_str("SET");
        rec_bulk(key, klen);
        rec_bulk(item_value(it), item_vlen(it));
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

/* SET (CMD_PROP_ARGV3) with options, as Redis 7.0 propagates it: with an expiry (EX PX EXAT
 * PXAT) its state, SET key value PXAT <ms>; else as it came, without its GETs. */
static void log_set(struct conn *c)
{
    int gets = 0;

    for (int i = 3; i < c->argc; i++) {
        const struct slice *a = &c->argv[i];
        if (util_eq_nocase(a->p, a->n, "ex") || util_eq_nocase(a->p, a->n, "px") ||
            util_eq_nocase(a->p, a->n, "exat") || util_eq_nocase(a->p, a->n, "pxat")) {
            log_state(c, c->db, c->argv[1].p, c->argv[1].n, 0);
            return;
        }
        gets += util_eq_nocase(a->p, a->n, "get");
    }
    if (!gets) {
        rec_command(c, c->db);
        return;
    }
    size_t at = rec_open(c->db);
    rec_arr(c->argc - gets);
    for (int i = 0; i < c->argc; i++)
        if (i < 3 || !util_eq_nocase(c->argv[i].p, c->argv[i].n, "get"))
            rec_bulk(c->argv[i].p, c->argv[i].n);
    rec_close(at);
}

/* Log the command c just ran, under its stripes, as its table entry says (cmd.h CMD_PROP_*):
 * it did not propagate itself. */
static void log_command(struct conn *c, const struct cmd *cmd)
{
    uint64_t f = cmd->flags;

    if (cmd_errors)
        return; /* refused: nothing changed */
    if (((f & CMD_SIGNALS) && !cmd_mods) || (f & CMD_PROP_EXPLICIT))
        return; /* changed nothing, or its handler propagates what it changed (nothing) */
    counted(buf_len(&tl.pend));
    if (f & CMD_PROP_EXPIRE)
        log_expire(c);
    else if (f & CMD_PROP_STATE)
        log_state(c, c->db, c->argv[1].p, c->argv[1].n, 0);
    else if ((f & CMD_PROP_ARGV3) && c->argc != 3)
        log_set(c);
    else
        rec_command(c, c->db);
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
static int note_replica_key(void *arg, int pos, unsigned flags)
{
    struct conn *c = arg;
    struct skey k;

    if (!(flags & KS_RO)) {
        arg_key(c, pos, &k);
        if (store_held && (store_held[k.stripe >> 6] >> (k.stripe & 63) & 1))
            store_replica_note_locked(conn_store(c), &k); /* (its stripe is held) */
    }
    return 0;
}

static void run_logged(struct conn *c, const struct cmd *cmd)
{
    unsigned long mods = cmd_mods;
    unsigned errs = cmd_errors;
    /* a writable replica's own write deletes the expired keys it meets, as a primary's
     * (Redis's LOOKUP_WRITE), and the keys it leaves with a TTL are its to expire */
    int own = TC_UNLIKELY(atomic_load_explicit(&store_replica, memory_order_relaxed)) &&
              !repl_applying && !cfg.replica_read_only && !store_expire_force;

    cmd_mods = 0;
    cmd_errors = 0;
    tl.explicit_ = 0;
    if (TC_UNLIKELY(own))
        store_expire_force = 1;
    cmd->fn(c);
    if (TC_UNLIKELY(own)) {
        store_expire_force = 0;
        if (!cmd_errors)
            cmd_keys(cmd, c->argc, c->argv, note_replica_key, c);
    }
    if (!tl.explicit_)
        log_command(c, cmd);
    cmd_mods += mods;
    cmd_errors += errs;
}

void cmd_exec_readonly(struct conn *c, const struct cmd *cmd)
{
    store_snap_readonly = 1;
    cmd->fn(c);
    store_snap_readonly = 0;
}

/* cmd names one key, at argv[cmd->first] (aof_exec and cmd_exec_snap_write run it under
 * that key's stripe alone). */
static inline int one_key(const struct conn *c, const struct cmd *cmd)
{
    /* SET and BITFIELD have a getkeys only for their key's flags: still one key at argv[1] */
    return ((cmd->flags & CMD_ONE_KEY) ||
            (cmd->nks == 1 && !(cmd->flags & CMD_MOVABLE) && cmd->first == cmd->last)) &&
           cmd->first > 0 && cmd->first < c->argc;
}

/* A one-key command has just taken k's stripe: a forkless snapshot keeps k's old value apart
 * (store_snap_check_key), or copies the whole stripe for MOVE, whose key also appears in
 * another database of the same stripe. */
static inline void snap_before_one_key(struct store *s, const struct cmd *cmd,
                                       const struct skey *k)
{
    if (TC_LIKELY(!atomic_load_explicit(&store_snap_active, memory_order_relaxed)))
        return;
    if (!strcmp(cmd->name, "move"))
        store_snap_check(s, k->stripe);
    else
        store_snap_check_key(s, k);
}

void cmd_exec_snap_write(struct conn *c, const struct cmd *cmd)
{
    struct store *s = conn_store(c);
    struct skey k;

    if (store_held || tl.depth > 0 || !one_key(c, cmd) ||
        (!tl.bm && !(tl.bm = calloc((s->nstripes + 63) / 64, 8)))) {
        cmd->fn(c); /* its own store_lock copies each stripe first */
        return;
    }
    arg_key(c, cmd->first, &k);
    tc_lock(&s->stripes[k.stripe].lock);
    snap_before_one_key(s, cmd, &k);
    tl.bm[k.stripe >> 6] = 1ULL << (k.stripe & 63);
    store_held = tl.bm;
    cmd_key_memo = k;
    cmd->fn(c);
    cmd_key_memo.p = NULL;
    store_held = NULL;
    tl.bm[k.stripe >> 6] = 0;
    tc_unlock(&s->stripes[k.stripe].lock);
}

void aof_exec(struct conn *c, const struct cmd *cmd)
{
    struct store *s;
    uint64_t *bm;

    if (!(cmd->flags & CMD_WRITE) ||
        (repl_applying && !atomic_load_explicit(&aof_on, memory_order_relaxed))) {
        if (TC_UNLIKELY(atomic_load_explicit(&store_snap_active, memory_order_relaxed)) &&
            (cmd->flags & CMD_READONLY))
            cmd_exec_readonly(c, cmd);
        else
            cmd->fn(c); /* a replica applying its primary's stream passes the bytes on */
        if (TC_UNLIKELY(cmd->flags & CMD_PUBSUB) && !(cmd->flags & CMD_WRITE) &&
            !strncmp(cmd->name + (cmd->name[0] == 's'), "publish", 8))
            repl_publish(c); /* PUBLISH reaches the replicas' subscribers (not the AOF) */
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
    if (one_key(c, cmd)) {
        /* one key: its stripe alone, without walking a bitmap of every stripe (the bitmap,
         * zero between commands, marks it held for the handler's own store_lock) */
        struct skey k;
        if (!tl.bm && !(tl.bm = calloc((s->nstripes + 63) / 64, 8))) {
            cmd->fn(c);
            return;
        }
        arg_key(c, cmd->first, &k);
        tc_lock(&s->stripes[k.stripe].lock);
        snap_before_one_key(s, cmd, &k); /* a forkless snapshot keeps k's old value first */
        tl.bm[k.stripe >> 6] = 1ULL << (k.stripe & 63);
        store_held = tl.bm;
        tl.depth = 1;
        tl.nprop = 0;
        cmd_key_memo = k;
        tl.may_defer = !atomic_load_explicit(&aof_on, memory_order_relaxed);
        tl.own = 1;
        run_logged(c, cmd);
        tl.own = 0;
        tl.may_defer = 0;
        cmd_key_memo.p = NULL;
        if (tl.nprop > 1)
            wrap_multi();
        commit(c);
        tl.depth = 0;
        store_held = NULL;
        tl.bm[k.stripe >> 6] = 0;
        tc_unlock(&s->stripes[k.stripe].lock);
        return;
    }
    bm = key_stripes(c, cmd);
    if (!bm) {
        cmd->fn(c);
        return;
    }
    store_hold_set(s, bm);
    tl.depth = 1;
    tl.nprop = 0;
    tl.own = 1;
    run_logged(c, cmd);
    tl.own = 0;
    if (tl.nprop > 1)
        wrap_multi();
    commit(c);
    tl.depth = 0;
    store_release_set(s, bm);
    memset(bm, 0, (s->nstripes + 63) / 64 * 8); /* zero between commands (the one-key path) */
}

void aof_tx_begin(struct conn *c)
{
    (void)c;
    tl.in_tx = 1;
    tl.depth = 1;
    tl.nprop = 0;
    if (tl.dfr)
        rec_undefer();
    tl.tx_mark = buf_len(&tl.pend);
}

void aof_tx_end(struct conn *c)
{
    if (!tl.in_tx)
        return;
    if (tl.dfr)
        rec_undefer();
    /* as Redis 7.0: MULTI ... EXEC only around two records or more; one goes alone */
    if (records_from(tl.tx_mark) > 1)
        wrap_multi_at(tl.tx_mark);
    commit(c);
    tl.in_tx = 0;
    tl.depth = 0;
}

void cmd_prop_gone(int db, const char *key, size_t klen)
{
    size_t at;

    if (!prop_active())
        return;
    at = rec_open(db);
    rec_arr(2);
    rec_str("DEL");
    rec_bulk(key, klen);
    rec_close(at);
    if (!tl.depth)
        commit(NULL);
}

void cmd_prop_gone_install(void)
{
    persist_keep_gone_hook = 1;
    atomic_store(&store_gone_hook, cmd_prop_gone);
}

/* ---- memcached ---- */

int aof_mc_is_write(const struct mc_req *r)
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

    if (!aof_mc_is_write(r) || (!tl.bm && !(tl.bm = malloc(words * 8)))) {
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
    memset(tl.bm, 0, (s->nstripes + 63) / 64 * 8); /* zero between commands */
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
    memset(tl.bm, 0, (s->nstripes + 63) / 64 * 8); /* zero between commands */
}
