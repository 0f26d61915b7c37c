/* Replication, the primary's side (repl.h): the stream and its backlog, SYNC / PSYNC / REPLCONF,
 * full syncs by a snapshot child, sending the stream to the replicas, WAIT's acknowledgements,
 * min-replicas-to-write, INFO replication and ROLE. */
#define _GNU_SOURCE
#include "cmd/multi.h"
#include "cmd/repl.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/blocking.h"
#include "cmd/cmd.h"
#include "cmd/propagate.h"
#include "core/lock.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "store/store.h"

/* The stream's blocks (allocations, header included): 64 KB, but no more than a quarter of
 * repl-backlog-size (down to Redis's 16 KB), so that a small backlog is trimmed as Redis trims
 * its own (the backlog drops whole blocks only). */
static inline size_t block_size(void)
{
    long long q = cfg.repl_backlog_size / 4;
    return q >= 64 * 1024 ? 64 * 1024 : q <= 16 * 1024 ? 16 * 1024 : (size_t)q;
}
#define BLOCK_SIZE block_size()
#define MAX_REPLICAS 64

_Atomic int repl_on;
_Atomic int repl_gate;
_Atomic int repl_is_replica;
_Thread_local int repl_applying;
struct srv *repl_srv;

/* ---- the chain of blocks ---- */

struct rblock {
    _Atomic long refs;    /* the chain's (from the list or the previous block) + holders' */
    struct rblock *next;  /* the next block holds one reference from this one */
    uint64_t start;       /* stream offset of data[0] (the first byte is offset 1) */
    size_t len, cap;      /* len grows under the chain's lock; bytes below it never change */
    char data[];
};

static _Atomic size_t blk_bytes; /* every block alive (INFO mem_total_replication_buffers) */

size_t repl_not_counted_bytes(void)
{
    /* as Redis's freeMemoryGetNotCountedMemory: the replication buffer beyond the backlog
     * (with an estimate of its blocks' headers) is the replicas' own, not the dataset's */
    size_t mem = atomic_load_explicit(&blk_bytes, memory_order_relaxed);
    long long bl = __atomic_load_n(&cfg.repl_backlog_size, __ATOMIC_RELAXED);
    size_t counted = (size_t)bl + ((size_t)bl / 16384 + 1) * (sizeof(struct rblock) + 16);
    return mem > (size_t)bl && mem > counted ? mem - counted : 0;
}

/* A block of about size bytes whose cap is all the allocator gave (a 16 KB block with its
 * header is a 20 KB allocation: a quarter of it would be counted nowhere, and a stalled
 * replica's stream would grow used_memory by more than the replication buffers show). */
static struct rblock *blk_new(size_t size)
{
    struct rblock *b = malloc(size);
    if (b) {
        size_t got = malloc_usable_size(b);
        b->cap = got - sizeof(*b);
        atomic_fetch_add_explicit(&blk_bytes, got, memory_order_relaxed);
    }
    return b;
}

static void blk_ref(struct rblock *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

static void blk_unref(struct rblock *b)
{
    while (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        struct rblock *n = b->next;
        atomic_fetch_sub_explicit(&blk_bytes, sizeof(*b) + b->cap, memory_order_relaxed);
        free(b);
        b = n;
    }
}

static void blk_release(void *owner)
{
    blk_unref(owner);
}

/* WAIT_START: wants a full sync; WAIT_END: the child is writing it (diskless: to its socket);
 * SEND_FILE: its owner worker sends the file the child wrote (disk mode: through the
 * connection's own output, so TLS and the output limits apply); ONLINE: streaming. */
enum { RS_WAIT_START = 1, RS_WAIT_END, RS_SEND_FILE, RS_ONLINE };

struct rslave {
    struct conn *c;
    struct worker *w;
    int state;
    int slot;              /* index in R.slaves */
    uint64_t send_off;     /* next byte to hand to c's output */
    struct rblock *blk;    /* holds a reference: the block of send_off */
    uint64_t ack_off;      /* REPLCONF ACK */
    int64_t ack_ms;        /* when it last acknowledged (or synced) */
    int port;
    char ip[64];
    int capa_eof, capa_psync2, rdb_only, old_sync;
    int64_t soft_since_ms; /* over the soft output limit since */
    int over_limit;        /* waiting for its RDB, over the output limit: its owner closes it */
    uint64_t limit_from;   /* a partial resync's backlog is not held against the output limit
                            * until the stream grows past this offset (as Redis checks on feed) */
    int nl_due;            /* a newline is due (keep-alive of a replica waiting for its RDB) */
    int wait_ack;          /* online after a diskless sync: the stream waits for its first
                            * ACK (until then it reads the RDB to its end mark and would take
                            * what follows for more of it), as Redis */
    int acked;             /* ... which came before its child was reaped */
    int file_fd;           /* SEND_FILE: the RDB being sent, -1 before it is opened */
    int64_t file_pos, file_size;
};

static struct {
    struct tc_lock lock;      /* leaf: the chain, the IDs, the replica list */
    char replid[41], replid2[41];
    uint64_t offset;          /* master_repl_offset: bytes fed so far */
    uint64_t second_off;      /* second_repl_offset (first byte of replid2's end + 1), 0: none */
    struct rblock *head, *tail;
    uint64_t backlog_first;   /* first byte the backlog holds */
    int active;               /* a backlog exists */
    int stream_db;            /* database of the stream's last SELECT, -1: must SELECT */
    uint64_t pin_off;         /* the slowest replica's next byte, when last computed */
    int pin_dirty;            /* a replica changed block, came or went since */
    struct rslave *slaves[MAX_REPLICAS];
    int nslaves;
    int64_t no_slaves_since;  /* ms, for repl-backlog-ttl */
    _Atomic int getack;       /* a WAIT waits: ask the replicas for ACKs */
    _Atomic uint64_t gen;     /* bumped at every feed and replica state change */
    _Atomic int sending;      /* replicas in SEND_FILE (their workers look every turn) */
    /* counters (INFO stats) */
    uint64_t sync_full, sync_partial_ok, sync_partial_err;
    /* the full sync child, under sync_lock (taken before stripes) */
    pthread_mutex_t sync_lock;
    struct snapshot sn;
    uint64_t sn_off;
    int sn_db;                /* the stream's database at sn_off (repl-stream-db) */
    char sn_replid[41];
    int sn_fds[MAX_REPLICAS];
    int sn_n;
    int sn_diskless;
    uint64_t sn_ids[MAX_REPLICAS]; /* the connections the child writes to */
    uint8_t sn_old[MAX_REPLICAS];  /* ... that sent SYNC: no +FULLRESYNC line */
    char sn_mark[41];
    int64_t first_wait_ms;
} R = {.lock = TC_LOCK_INIT, .sync_lock = PTHREAD_MUTEX_INITIALIZER,
       .sn = SNAPSHOT_INIT, .stream_db = -1, .pin_off = UINT64_MAX, .pin_dirty = 1};

static _Thread_local uint64_t tl_fed; /* this worker fed the stream this turn */

/* Under R.lock: tell the workers the chain or a replica changed. Every bump is made under the
 * lock, so a plain store does (no locked read-modify-write per feed). */
static inline void gen_bump_locked(void)
{
    atomic_store_explicit(&R.gen, atomic_load_explicit(&R.gen, memory_order_relaxed) + 1,
                          memory_order_release);
}

static int failover_running(void)
{
    return strcmp(repl_failover_state(), "no-failover") != 0;
}

void repl_random_id(char id[41])
{
    unsigned char r[20];
    static const char hex[] = "0123456789abcdef";

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        uint64_t x = (uint64_t)util_mono_us() ^ (uint64_t)getpid() << 32;
        for (int i = 0; i < 20; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            r[i] = (unsigned char)(x >> 56);
        }
    }
    for (int i = 0; i < 20; i++) {
        id[2 * i] = hex[r[i] >> 4];
        id[2 * i + 1] = hex[r[i] & 15];
    }
    id[40] = 0;
}

static void drop_replicas_locked(void);

/* Under R.lock: append n bytes to the chain, in new blocks as needed. */
static void chain_put_slow(const char *p, size_t n)
{
    while (n) {
        struct rblock *t = R.tail;
        if (!t || t->len == t->cap) {
            struct rblock *b = blk_new(BLOCK_SIZE);
            if (!b) {
                log_warn("Replication: out of memory for the stream; replicas will resync");
                R.offset += n; /* the offsets stay true: a replica behind this gap resyncs */
                drop_replicas_locked();
                return;
            }
            atomic_init(&b->refs, 1);
            b->next = NULL;
            b->start = R.offset + 1;
            b->len = 0;
            if (t)
                t->next = b; /* t's reference */
            else
                R.head = b;  /* the list's reference */
            R.tail = b;
            t = b;
        }
        size_t k = t->cap - t->len < n ? t->cap - t->len : n;
        memcpy(t->data + t->len, p, k);
        t->len += k;
        R.offset += k;
        p += k;
        n -= k;
    }
}

/* Under R.lock: append n bytes to the chain (most often all within the tail block). */
static inline void chain_put(const char *p, size_t n)
{
    struct rblock *t = R.tail;
    if (TC_LIKELY(t && t->cap - t->len >= n)) {
        memcpy(t->data + t->len, p, n);
        t->len += n;
        R.offset += n;
        return;
    }
    chain_put_slow(p, n);
}

/* Under R.lock: drop head blocks past repl-backlog-size (replicas behind keep theirs). */
static void chain_trim_slow(void)
{
    long long size = cfg.repl_backlog_size;
    if (R.pin_dirty) {
        /* the blocks a replica still has to send stay in the backlog (as Redis 7.0's shared
         * replication buffer): it grows past repl-backlog-size for a slow replica, and a
         * replica that reconnects may continue from any of them */
        R.pin_off = UINT64_MAX;
        for (int i = 0; i < R.nslaves; i++)
            if (R.slaves[i]->blk && R.slaves[i]->send_off < R.pin_off)
                R.pin_off = R.slaves[i]->send_off;
        R.pin_dirty = 0;
    }
    while (R.head && R.head != R.tail &&
           R.offset - (R.head->start + R.head->len - 1) >= (uint64_t)size &&
           R.head->start + R.head->len <= R.pin_off) {
        struct rblock *old = R.head;
        R.head = old->next;
        blk_ref(R.head); /* the list's, while old keeps its own on it */
        blk_unref(old);
    }
    if (R.head)
        R.backlog_first = R.head->start;
    else
        R.backlog_first = R.offset + 1;
}

static inline void chain_trim(void)
{
    struct rblock *h = R.head;
    /* nothing to drop and backlog_first already right: what chain_trim_slow would find */
    if (TC_LIKELY(h && R.backlog_first == h->start &&
                  (h == R.tail ||
                   R.offset - (h->start + h->len - 1) < (uint64_t)cfg.repl_backlog_size ||
                   (!R.pin_dirty && h->start + h->len > R.pin_off))))
        return;
    chain_trim_slow();
}

static void chain_free(void)
{
    struct rblock *h = R.head;
    R.pin_dirty = 1;
    R.head = R.tail = NULL;
    blk_unref(h);
    R.backlog_first = R.offset + 1;
}

static void put_select(int db)
{
    char num[16], h[64];
    int k = snprintf(num, sizeof(num), "%d", db);
    int m = snprintf(h, sizeof(h), "*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n", k, num);
    chain_put(h, (size_t)m);
}

/* Under R.lock: one command of database db to the stream, after a SELECT if the stream is
 * in another database (db -1: a command of no database, MULTI or EXEC). */
static inline void feed_one_locked(int db, const char *p, size_t n)
{
    if (db >= 0 && db != R.stream_db) {
        put_select(db);
        R.stream_db = db;
    }
    chain_put(p, n);
}

uint64_t repl_feed_frame(const char *recs, size_t n, int db, const char *f, size_t fn)
{
    uint64_t off;

    if (repl_applying || atomic_load_explicit(&repl_is_replica, memory_order_relaxed))
        return 0; /* a replica sends on what its primary sent, nothing of its own */
    tc_lock(&R.lock);
    if (!R.active) {
        tc_unlock(&R.lock);
        return 0;
    }
    while (n >= 8) {
        int32_t rdb;
        uint32_t len;
        memcpy(&rdb, recs, 4);
        memcpy(&len, recs + 4, 4);
        if (8 + (size_t)len > n)
            break;
        feed_one_locked(rdb, recs + 8, len);
        recs += 8 + len;
        n -= 8 + len;
    }
    if (f)
        feed_one_locked(db, f, fn);
    chain_trim();
    off = R.offset;
    gen_bump_locked();
    tc_unlock(&R.lock);
    tl_fed = off;
    return off;
}

uint64_t repl_feed(const char *recs, size_t n)
{
    return repl_feed_frame(recs, n, -1, NULL, 0);
}

void repl_feed_raw(const char *p, size_t n)
{
    tc_lock(&R.lock);
    R.stream_db = -1; /* the primary's bytes may SELECT: this server's own next write does */
    if (R.active) {
        chain_put(p, n);
        chain_trim();
    } else {
        R.offset += n;
        R.backlog_first = R.offset + 1;
    }
    gen_bump_locked();
    tl_fed = R.offset;
    tc_unlock(&R.lock);
}

void repl_feed_argv(int argc, const struct slice *argv)
{
    struct buf b = {0};
    char h[32];

    if (atomic_load(&repl_is_replica))
        return; /* a replica sends on its primary's stream alone */
    buf_append(&b, h, (size_t)snprintf(h, sizeof(h), "*%d\r\n", argc));
    for (int i = 0; i < argc; i++) {
        buf_append(&b, h, (size_t)snprintf(h, sizeof(h), "$%zu\r\n", argv[i].n));
        buf_append(&b, argv[i].p, argv[i].n);
        buf_append(&b, "\r\n", 2);
    }
    tc_lock(&R.lock);
    if (R.active) {
        chain_put(b.data + b.rpos, buf_len(&b));
        chain_trim();
        gen_bump_locked();
        tl_fed = R.offset;
    }
    tc_unlock(&R.lock);
    buf_deinit(&b);
}

_Atomic uint64_t repl_unexpected_errors;

void repl_applied_error(int from_aof, const char *name, const char *e, size_t n)
{
    const char *from = from_aof ? "server" : "replica";
    const char *to = from_aof ? "AOF-loading-client" : "master";
    int beh = __atomic_load_n(&cfg.propagation_error_behavior, __ATOMIC_RELAXED);

    if (!name)
        name = "<unknown>";
    /* the text as Redis's callers give it: an ERR error without its code, another with its
     * dash ("-WRONGTYPE ...", a shared error object) */
    const char *dash = "-";
    if (n >= 4 && !memcmp(e, "ERR ", 4)) {
        e += 4;
        n -= 4;
        dash = "";
    }
    log_warn("== CRITICAL == This %s is sending an error to its %s: '%s%.*s' after processing "
             "the command '%s'", from, to, dash, (int)(n > 4096 ? 4096 : n), e, name);
    atomic_fetch_add_explicit(&repl_unexpected_errors, 1, memory_order_relaxed);
    if (from_aof ? beh == 1
                 : (beh == 1 || beh == 2) && __atomic_load_n(&cfg.replica_read_only,
                                                             __ATOMIC_RELAXED)) {
        /* as Redis's serverPanic; the crash report (SIGABRT's handler) follows */
        log_warn("------------------------------------------------");
        log_warn("!!! Software Failure. Press left mouse button to continue");
        log_warn("Guru Meditation: This %s panicked sending an error to its %s after "
                 "processing the command '%s' #%s:%d", from, to, name, __FILE__, __LINE__);
        if (cfg.use_exit_on_panic)
            _exit(1);
        abort();
    }
}

/* Under R.lock: a stream command that changes no key (PING, REPLCONF GETACK). */
static void feed_cmd_locked(const char *resp)
{
    if (!R.active)
        return;
    chain_put(resp, strlen(resp));
    chain_trim();
    gen_bump_locked();
}

void repl_get_id(char id[41], uint64_t *off)
{
    tc_lock(&R.lock);
    memcpy(id, R.replid, 41);
    *off = R.offset;
    tc_unlock(&R.lock);
}

void repl_set_id(const char *id, uint64_t off, int keep_old_as_second)
{
    tc_lock(&R.lock);
    if (keep_old_as_second) {
        memcpy(R.replid2, R.replid, 41);
        R.second_off = R.offset + 1;
    } else {
        memset(R.replid2, '0', 40);
        R.replid2[40] = 0;
        R.second_off = 0;
    }
    memcpy(R.replid, id, 40);
    R.replid[40] = 0;
    R.stream_db = -1; /* a new history (a promotion): its first write SELECTs, as Redis */
    if (off != R.offset) {
        chain_free();
        R.offset = off;
        R.backlog_first = off + 1;
    }
    tc_unlock(&R.lock);
}

static void activate_locked(void)
{
    if (R.active)
        return;
    R.active = 1;
    R.backlog_first = R.offset + 1;
    R.stream_db = -1;
}

void repl_reset_backlog(uint64_t off)
{
    tc_lock(&R.lock);
    chain_free();
    R.offset = off;
    R.backlog_first = off + 1;
    R.stream_db = -1;
    activate_locked();
    gen_bump_locked();
    tc_unlock(&R.lock);
    atomic_store(&repl_on, 1);
}

/* ---- replicas ---- */

static struct rslave *slave_of(struct conn *c)
{
    return c->repl;
}

/* Under R.lock: the block holding offset off (a reference taken), or NULL. */
static struct rblock *block_at(uint64_t off)
{
    struct rblock *b = R.head;
    while (b && b->next && off >= b->start + b->len)
        b = b->next;
    if (b)
        blk_ref(b);
    return b;
}

/* Under R.lock: a new empty tail to park a replica on (a full sync's start). */
static struct rblock *tail_for_new(void)
{
    if (!R.tail || R.tail->len == R.tail->cap) {
        struct rblock *b = blk_new(BLOCK_SIZE);
        if (!b)
            return NULL;
        atomic_init(&b->refs, 1);
        b->next = NULL;
        b->start = R.offset + 1;
        b->len = 0;
        if (R.tail)
            R.tail->next = b;
        else
            R.head = b;
        R.tail = b;
    }
    blk_ref(R.tail);
    return R.tail;
}

static struct rslave *slave_add(struct conn *c)
{
    struct rslave *s = c->repl;
    if (s)
        return s;
    if (R.nslaves >= MAX_REPLICAS)
        return NULL;
    s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->c = c;
    s->w = c->w;
    s->file_fd = -1;
    s->slot = R.nslaves;
    R.slaves[R.nslaves++] = s;
    __atomic_store_n(&c->repl, s, __ATOMIC_RELAXED);
    return s;
}

void repl_conn_closed(struct conn *c)
{
    struct rslave *s = c->repl;
    if (!s)
        return;
    tc_lock(&R.lock);
    int i = s->slot;
    R.slaves[i] = R.slaves[--R.nslaves];
    R.slaves[i]->slot = i;
    if (!R.nslaves)
        R.no_slaves_since = util_now_ms();
    struct rblock *b = s->blk;
    s->blk = NULL;
    R.pin_dirty = 1;
    if (R.active)
        chain_trim_slow(); /* what only it held leaves the backlog now */
    if (s->state == RS_SEND_FILE) {
        if (s->file_fd >= 0)
            close(s->file_fd);
        atomic_fetch_sub(&R.sending, 1);
    }
    tc_unlock(&R.lock);
    if (s->state == RS_ONLINE)
        log_notice("Connection with replica %s:%d lost.", s->ip, s->port);
    blk_unref(b);
    __atomic_store_n(&c->repl, NULL, __ATOMIC_RELAXED);
    free(s);
}

static struct conn *drop_except; /* under R.lock */

static void drop_replicas_locked(void)
{
    for (int i = 0; i < R.nslaves; i++) {
        if (R.slaves[i]->c == drop_except)
            continue;
        struct rslave *s = R.slaves[i];
        atomic_store(&s->c->kill, 1);
        worker_wake(s->w);
    }
}

void repl_drop_replicas(void)
{
    tc_lock(&R.lock);
    drop_replicas_locked();
    tc_unlock(&R.lock);
}

void repl_drop_replicas_except(struct conn *keep)
{
    tc_lock(&R.lock);
    drop_except = keep;
    drop_replicas_locked();
    drop_except = NULL;
    tc_unlock(&R.lock);
}

/* The sync child may write c's socket itself (not a TLS session). */
static int repl_conn_raw_ok(struct conn *c)
{
    return c->tls == NULL;
}

/* ---- sending the stream (the owner worker, before it sleeps) ---- */

static _Thread_local uint64_t tl_seen; /* R.gen when this worker last sent its replicas' stream */

/* Add what is new for s to its connection's output. Under R.lock. */
static void pump_locked(struct rslave *s)
{
    if (!s->blk && s->send_off <= R.offset) {
        s->blk = block_at(s->send_off); /* it joined an empty chain: the first block since */
        R.pin_dirty = 1;
    }
    while (s->send_off <= R.offset && s->blk) {
        struct rblock *b = s->blk;
        if (s->send_off >= b->start + b->len) {
            if (!b->next)
                break;
            s->blk = b->next;
            blk_ref(s->blk);
            blk_unref(b);
            R.pin_dirty = 1;
            continue;
        }
        size_t at = (size_t)(s->send_off - b->start);
        size_t len = b->len - at;
        blk_ref(b);
        if (conn_add_ref(s->c, b->data + at, len, b, blk_release)) {
            s->c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        s->send_off += len;
    }
}

/* s's output of pend bytes is over client-output-buffer-limit's replica class: the hard
 * limit at once, the soft one for its seconds. As Redis, a hard limit below repl-backlog-size
 * counts as repl-backlog-size (the output shares the backlog's blocks, and a partial resync
 * within the backlog must not be cut). */
static int over_limits(struct rslave *s, size_t pend, int64_t now)
{
    long long hard = cfg.cobl[COBL_REPLICA][0], soft = cfg.cobl[COBL_REPLICA][1];
    int over = 0;

    if (hard && hard < cfg.repl_backlog_size)
        hard = cfg.repl_backlog_size;
    if (hard && pend >= (size_t)hard)
        over = 1;
    if (soft && pend >= (size_t)soft) {
        if (!s->soft_since_ms)
            s->soft_since_ms = now;
        else if (now - s->soft_since_ms >= cfg.cobl[COBL_REPLICA][2] * 1000)
            over = 1;
    } else {
        s->soft_since_ms = 0;
    }
    return over;
}

static void close_over_limits(struct rslave *s)
{
    log_warn("Client id=%llu addr=%s laddr=%s fd=%d name=%s flags=S scheduled to be closed "
             "ASAP for overcoming of output buffer limits.",
             (unsigned long long)s->c->id, s->c->addr, s->c->laddr, s->c->fd, s->c->name);
    s->c->flags |= CONN_CLOSE_ASAP;
}

static void check_limits(struct rslave *s, int64_t now)
{
    if (R.offset <= s->limit_from)
        return;
    if (over_limits(s, conn_pending(s->c), now))
        close_over_limits(s);
}

static void sync_file_path(char *path, size_t cap)
{
    char d[1024], f[256];
    config_str(cfg.dir, d, sizeof(d));
    config_str(cfg.dbfilename, f, sizeof(f));
    rdb_path(path, cap, d, f);
}

/* SEND_FILE, by the owner under R.lock: the header, then the file in chunks while the output
 * is short, then ONLINE (the stream since the copy follows). */
static void send_file_locked(struct rslave *s)
{
    struct conn *c = s->c;
    if (s->file_fd < 0) {
        char path[2048], line[160];
        struct stat st;
        sync_file_path(path, sizeof(path));
        s->file_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (s->file_fd < 0 || fstat(s->file_fd, &st) < 0) {
            log_warn("Can't open the RDB file for replica %s:%d: %s", s->ip, s->port,
                     strerror(errno));
            c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        s->file_pos = 0;
        s->file_size = st.st_size;
        int k = 0;
        if (!s->old_sync)
            k = snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n", R.sn_replid,
                         (unsigned long long)R.sn_off);
        k += snprintf(line + k, sizeof(line) - (size_t)k, "$%lld\r\n", (long long)st.st_size);
        if (buf_append(&c->wbuf, line, (size_t)k))
            c->flags |= CONN_CLOSE_ASAP;
    }
    while (s->file_pos < s->file_size && conn_pending(c) < (1u << 20)) {
        size_t want = s->file_size - s->file_pos < (1 << 18) ? (size_t)(s->file_size - s->file_pos)
                                                              : (size_t)1 << 18;
        if (buf_reserve(&c->wbuf, want)) {
            c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        ssize_t r = pread(s->file_fd, c->wbuf.data + c->wbuf.wpos, want, s->file_pos);
        if (r <= 0) {
            log_warn("Read error sending the RDB to replica %s:%d", s->ip, s->port);
            c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        c->wbuf.wpos += (size_t)r;
        s->file_pos += r;
    }
    if (s->file_pos == s->file_size) {
        close(s->file_fd);
        s->file_fd = -1;
        atomic_fetch_sub(&R.sending, 1);
        if (s->rdb_only) {
            c->flags |= CONN_CLOSE_AFTER_REPLY;
            s->state = RS_WAIT_END; /* nothing more for it */
            return;
        }
        s->state = RS_ONLINE;
        log_notice("Synchronization with replica %s:%d succeeded", s->ip, s->port);
        pump_locked(s);
    }
}

void repl_before_sleep(struct worker *w)
{
    struct conn *todo[MAX_REPLICAS];
    int nt = 0;

    if (!atomic_load_explicit(&repl_on, memory_order_relaxed))
        return;
    /* (not during a FAILOVER: the stream stands still while the replica catches up; its
     * periodic ACK tells when) */
    if (atomic_exchange_explicit(&R.getack, 0, memory_order_relaxed) && !failover_running()) {
        tc_lock(&R.lock);
        if (R.nslaves)
            feed_cmd_locked("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n");
        tl_fed = R.offset;
        tc_unlock(&R.lock);
    }
    uint64_t gen = atomic_load_explicit(&R.gen, memory_order_acquire);
    if (tl_fed) {
        /* wake the workers of the replicas this turn fed */
        uint8_t wake[256] = {0};
        tc_lock(&R.lock);
        for (int i = 0; i < R.nslaves; i++)
            if (R.slaves[i]->w != w && R.slaves[i]->state == RS_ONLINE &&
                R.slaves[i]->w->idx < 256)
                wake[R.slaves[i]->w->idx] = 1;
        tc_unlock(&R.lock);
        tl_fed = 0;
        for (int i = 0; i < repl_srv->nworkers && i < 256; i++)
            if (wake[i])
                worker_wake(&repl_srv->workers[i]);
    }
    if (gen == tl_seen && !atomic_load_explicit(&R.sending, memory_order_relaxed))
        return;
    tl_seen = gen;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        if (s->w != w || (s->c->flags & (CONN_CLOSED | CONN_CLOSE_ASAP)))
            continue;
        if (s->over_limit) {
            /* waiting for its RDB, the stream kept for it went over its limit (repl_tick) */
            close_over_limits(s);
            todo[nt++] = s->c;
            continue;
        }
        if (s->state == RS_SEND_FILE) {
            send_file_locked(s);
            todo[nt++] = s->c;
            continue;
        }
        if (s->nl_due) {
            /* waiting for its RDB: a newline keeps its link from timing out, as Redis */
            s->nl_due = 0;
            if ((s->state == RS_WAIT_START || (s->state == RS_WAIT_END && !R.sn_diskless)) &&
                !buf_append(&s->c->wbuf, "\n", 1)) {
                todo[nt++] = s->c;
                continue;
            }
        }
        if (s->state != RS_ONLINE || s->wait_ack)
            continue;
        pump_locked(s);
        check_limits(s, w->now_ms);
        todo[nt++] = s->c;
    }
    tc_unlock(&R.lock);
    for (int i = 0; i < nt; i++)
        worker_conn_done(w, todo[i]);
}

void repl_wake_replicas(void)
{
    uint8_t wake[256] = {0};
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++)
        if (R.slaves[i]->state == RS_ONLINE && R.slaves[i]->w->idx < 256)
            wake[R.slaves[i]->w->idx] = 1;
    tc_unlock(&R.lock);
    for (int i = 0; i < repl_srv->nworkers && i < 256; i++)
        if (wake[i])
            worker_wake(&repl_srv->workers[i]);
}

/* ---- full sync: the snapshot child ---- */

static int sync_prepare(void *arg)
{
    (void)arg;
    tc_lock(&R.lock);
    R.sn_n = 0;
    R.sn_off = R.offset;
    /* a replica passes its primary's stream on: the copy's replicas continue in the database
     * its link is in (the caller holds the link between batches); a primary SELECTs next */
    R.sn_db = atomic_load(&repl_is_replica) ? repl_link_db() : 0;
    memcpy(R.sn_replid, R.replid, 41);
    for (int i = 0; i < MAX_REPLICAS; i++)
        R.sn_fds[i] = -1;
    for (int i = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        if (s->state != RS_WAIT_START)
            continue;
        s->state = RS_WAIT_END;
        s->send_off = R.offset + 1;
        blk_unref(s->blk);
        s->blk = tail_for_new();
        R.pin_dirty = 1;
        R.sn_fds[R.sn_n] = R.sn_diskless ? s->c->fd : -1;
        R.sn_ids[R.sn_n] = s->c->id;
        R.sn_old[R.sn_n] = (uint8_t)s->old_sync;
        R.sn_n++;
    }
    R.stream_db = -1; /* what follows the copy starts with a SELECT */
    tc_unlock(&R.lock);
    return R.sn_n ? 0 : -1;
}

/* The full sync's point in time; in disk mode the job may run forkless (snapshot.h), in
 * diskless mode it always forks (the sockets are written from the child). */
struct sync_job {
    int64_t now; /* unix ms: which keys have expired */
};

static int sync_write(void *arg)
{
    const struct sync_job *sj = arg;
    int tmo = cfg.repl_timeout * 1000;
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum};
    char line[160], num[32], dbnum[16];
    int live = 0;
    snprintf(num, sizeof(num), "%llu", (unsigned long long)R.sn_off);
    snprintf(dbnum, sizeof(dbnum), "%d", R.sn_db);
    const char *aux[] = {"repl-stream-db", dbnum, "repl-id", R.sn_replid, "repl-offset", num,
                         NULL};

    for (int i = 0; i < R.sn_n && R.sn_diskless; i++) {
        int k = snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n", R.sn_replid,
                         (unsigned long long)R.sn_off);
        if (R.sn_fds[i] >= 0 && !R.sn_old[i] && sock_write_all(R.sn_fds[i], line, (size_t)k, tmo))
            R.sn_fds[i] = -1;
    }
    if (R.sn_diskless) {
        int k = snprintf(line, sizeof(line), "$EOF:%s\r\n", R.sn_mark);
        for (int i = 0; i < R.sn_n; i++)
            if (R.sn_fds[i] >= 0 && sock_write_all(R.sn_fds[i], line, (size_t)k, tmo))
                R.sn_fds[i] = -1;
        if (rdb_save_stream(repl_srv->store, R.sn_fds, R.sn_n, tmo, &o, sj->now, aux))
            return 1;
        for (int i = 0; i < R.sn_n; i++)
            if (R.sn_fds[i] >= 0 && sock_write_all(R.sn_fds[i], R.sn_mark, 40, tmo))
                R.sn_fds[i] = -1;
    } else {
        /* disk mode: the file alone; the parent sends it through each connection */
        char path[2048];
        sync_file_path(path, sizeof(path));
        if (rdb_save_aux(repl_srv->store, path, &o, sj->now, aux))
            return 1;
        return 0;
    }
    for (int i = 0; i < R.sn_n; i++)
        live += R.sn_fds[i] >= 0;
    return live ? 0 : 1;
}

/* Worker 0's timer, sync_lock held: start a full sync when replicas wait for one. */
static void maybe_start_sync(int64_t now)
{
    int waiting = 0, all_eof = 1;

    if (R.sn.pid)
        return;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++)
        if (R.slaves[i]->state == RS_WAIT_START) {
            waiting++;
            all_eof &= R.slaves[i]->capa_eof && repl_conn_raw_ok(R.slaves[i]->c);
        }
    tc_unlock(&R.lock);
    if (!waiting) {
        R.first_wait_ms = 0;
        return;
    }
    if (!R.first_wait_ms)
        R.first_wait_ms = now;
    int diskless = cfg.repl_diskless_sync && all_eof;
    if (diskless && now - R.first_wait_ms < (int64_t)cfg.repl_diskless_sync_delay * 1000 &&
        !(cfg.repl_diskless_sync_max_replicas > 0 &&
          waiting >= cfg.repl_diskless_sync_max_replicas))
        return;
    R.sn_diskless = diskless;
    repl_random_id(R.sn_mark);
    struct sync_job sj = {.now = util_now_ms()};
    struct snapshot_job job = {
        .title = "tc-repl-sync",
        .what = "Replication full sync",
        .cow_label = "RDB",
        .prepare = sync_prepare,
        .write = sync_write,
        .keep_fds = R.sn_fds,
        .nkeep = MAX_REPLICAS,
        .arg = &sj,
        .arg_size = diskless ? 0 : sizeof(sj), /* diskless: forked */
        .compress = cfg.rdbcompression,
        .now = sj.now,
    };
    /* a replica: its link between two batches, so the copy and the offset it notes match
     * (a batch is applied, then its bytes fed); busy now, the next tick tries again */
    int link = atomic_load(&repl_is_replica);
    if (link && !repl_link_quiet_begin())
        return;
    int rc = snapshot_start(&R.sn, repl_srv->store, &job, NULL);
    if (link)
        repl_link_quiet_end();
    R.first_wait_ms = 0;
    if (rc == SNAPSHOT_OK) {
        atomic_store(&persist_repl_sync_running, 1);
        log_notice("Starting BGSAVE for SYNC with target: %s", diskless ? "replicas sockets"
                                                                        : "disk");
        return;
    }
    if (rc == SNAPSHOT_ERR_PREPARE)
        return;
    log_warn("BGSAVE for replication failed");
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++)
        if (R.slaves[i]->state == RS_WAIT_START) {
            atomic_store(&R.slaves[i]->c->kill, 1);
            worker_wake(R.slaves[i]->w);
        }
    tc_unlock(&R.lock);
}

/* rdb-del-sync-files: the RDB file the last full sync wrote to disk (Redis's
 * RDBGeneratedByReplication), under R.sync_lock */
static int rdb_by_sync;

/* Redis's removeRDBUsedToSyncReplicas: without persistence (no save points, appendonly no),
 * the RDB file written only to feed replicas goes once none waits for it. Under
 * R.sync_lock. */
static void del_sync_file(void)
{
    char path[2048];
    struct stat st;
    int busy = R.sn.pid != 0;

    if (!cfg.rdb_del_sync_files) {
        rdb_by_sync = 0; /* (a later CONFIG SET yes must not find it set) */
        return;
    }
    if (!rdb_by_sync || !config_str_empty(cfg.save) || cfg.appendonly)
        return;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++)
        busy |= R.slaves[i]->state != RS_ONLINE;
    tc_unlock(&R.lock);
    sync_file_path(path, sizeof(path));
    if (busy || lstat(path, &st) < 0)
        return;
    rdb_by_sync = 0;
    log_notice("Removing the RDB file used to feed replicas in a persistence-less instance");
    unlink(path);
}

static void reap_sync(int64_t now)
{
    struct snapshot_result res;

    if (!R.sn.pid || !snapshot_reap(&R.sn, 0, &res))
        return;
    atomic_store(&persist_repl_sync_running, 0);
    if (res.ok && !R.sn_diskless && cfg.rdb_del_sync_files)
        rdb_by_sync = 1;
    if (res.ok)
        log_notice("Background RDB transfer terminated with success");
    else
        log_warn("Background transfer error");
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        if (s->state != RS_WAIT_END)
            continue;
        int sent = 0;
        for (int j = 0; j < R.sn_n; j++)
            sent |= R.sn_ids[j] == s->c->id;
        if (!res.ok || !sent || (s->rdb_only && R.sn_diskless)) {
            atomic_store(&s->c->kill, 1);
        } else if (!R.sn_diskless) {
            s->state = RS_SEND_FILE;
            s->file_fd = -1;
            s->ack_ms = now;
            atomic_fetch_add(&R.sending, 1);
        } else {
            s->state = RS_ONLINE;
            s->wait_ack = !s->acked;
            s->ack_ms = now;
            log_notice("Synchronization with replica %s:%d succeeded", s->ip, s->port);
        }
        worker_wake(s->w);
    }
    gen_bump_locked(); /* every worker looks at its replicas again */
    tc_unlock(&R.lock);
    for (int i = 0; i < repl_srv->nworkers; i++)
        worker_wake(&repl_srv->workers[i]);
}

void repl_sync_shutdown(void)
{
    struct snapshot_result res;
    pthread_mutex_lock(&R.sync_lock);
    if (R.sn.pid) {
        snapshot_kill(&R.sn);
        snapshot_reap(&R.sn, 1, &res);
        atomic_store(&persist_repl_sync_running, 0);
    }
    pthread_mutex_unlock(&R.sync_lock);
}

static _Atomic int quiesced;

void repl_quiesce(int on)
{
    atomic_store(&quiesced, on);
}

static int64_t last_ping; /* PINGs every repl-ping-replica-period from the start, as Redis's
                          * cron counts its loops: not at once when the first replica comes */

void repl_tick(int64_t now)
{
    static int64_t last_nl;

    if (!atomic_load_explicit(&repl_on, memory_order_relaxed) || atomic_load(&quiesced))
        return;
    repl_failover_tick(now);
    pthread_mutex_lock(&R.sync_lock);
    reap_sync(now);
    maybe_start_sync(now);
    del_sync_file();
    pthread_mutex_unlock(&R.sync_lock);

    tc_lock(&R.lock);
    int has = 0, nl = now - last_nl >= 1000;
    if (nl)
        last_nl = now;
    for (int i = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        if (s->state == RS_WAIT_END && s->blk && !s->over_limit && R.offset + 1 > s->send_off &&
            over_limits(s, (size_t)(R.offset + 1 - s->send_off), now)) {
            /* the stream since its snapshot waits for it: its output, as Redis counts it */
            s->over_limit = 1;
            gen_bump_locked();
            worker_wake(s->w);
        }
        if (nl && (s->state == RS_WAIT_START || (s->state == RS_WAIT_END && !R.sn_diskless))) {
            s->nl_due = 1;
            gen_bump_locked();
            worker_wake(s->w);
        }
        if (s->state != RS_ONLINE)
            continue;
        has = 1;
        if (s->ack_ms && now - s->ack_ms > (int64_t)cfg.repl_timeout * 1000 && !s->old_sync) {
            log_warn("Disconnecting timedout replica (streaming sync): %s:%d", s->ip, s->port);
            atomic_store(&s->c->kill, 1);
            worker_wake(s->w);
        }
    }
    if (has && !last_ping)
        last_ping = now; /* as Redis's cron: the first PING a period after, not at once */
    if (has && !atomic_load(&repl_is_replica) && !failover_running() &&
        now - last_ping >= (int64_t)cfg.repl_ping_replica_period * 1000) {
        feed_cmd_locked("*1\r\n$4\r\nPING\r\n");
        last_ping = now;
        tl_fed = R.offset;
    }
    /* the backlog of a primary with no replica for repl-backlog-ttl seconds goes */
    if (!R.nslaves && R.active && !atomic_load(&repl_is_replica) && cfg.repl_backlog_ttl &&
        R.no_slaves_since && now - R.no_slaves_since >= (int64_t)cfg.repl_backlog_ttl * 1000) {
        chain_free();
        R.active = 0;
        memcpy(R.replid2, "0000000000000000000000000000000000000000", 41);
        R.second_off = 0;
        repl_random_id(R.replid);
        log_notice("Replication backlog freed after %d seconds without connected replicas.",
                   cfg.repl_backlog_ttl);
    }
    tc_unlock(&R.lock);
}

_Atomic int repl_loading;

void repl_update_gate(void)
{
    int replica = atomic_load(&repl_is_replica);

    atomic_store(&store_evict_off, replica && cfg.replica_ignore_maxmemory);
    if (atomic_exchange(&store_replica, replica) && !replica)
        store_replica_forget(); /* a primary's active expiry covers every key now */
    atomic_store(&repl_gate, atomic_load(&repl_is_replica) || cfg.min_replicas_to_write > 0 ||
                                 atomic_load(&repl_loading));
}

/* ---- commands ---- */

static void replconf_command(struct conn *c)
{
    if ((c->argc - 1) % 2) {
        reply_error(c, "ERR syntax error");
        return;
    }
    for (int i = 1; i < c->argc; i += 2) {
        const struct slice *k = &c->argv[i], *v = &c->argv[i + 1];
        if (util_eq_nocase(k->p, k->n, "listening-port")) {
            long long port;
            if (!util_str2ll(v->p, v->n, &port)) {
                reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            tc_lock(&R.lock);
            struct rslave *s = slave_add(c);
            if (s)
                s->port = (int)port;
            tc_unlock(&R.lock);
        } else if (util_eq_nocase(k->p, k->n, "ip-address")) {
            tc_lock(&R.lock);
            struct rslave *s = slave_add(c);
            if (s)
                snprintf(s->ip, sizeof(s->ip), "%.*s", (int)(v->n > 60 ? 60 : v->n), v->p);
            tc_unlock(&R.lock);
        } else if (util_eq_nocase(k->p, k->n, "capa")) {
            tc_lock(&R.lock);
            struct rslave *s = slave_add(c);
            if (s && util_eq_nocase(v->p, v->n, "eof"))
                s->capa_eof = 1;
            if (s && util_eq_nocase(v->p, v->n, "psync2"))
                s->capa_psync2 = 1;
            tc_unlock(&R.lock);
        } else if (util_eq_nocase(k->p, k->n, "ack")) {
            long long off;
            int early = 0;
            struct rslave *s = slave_of(c);
            if (!s || !util_str2ll(v->p, v->n, &off))
                return; /* no reply, as Redis */
            tc_lock(&R.lock);
            if ((uint64_t)off > s->ack_off)
                s->ack_off = (uint64_t)off;
            s->ack_ms = c->w->now_ms;
            if (s->wait_ack && s->state == RS_ONLINE) {
                s->wait_ack = 0; /* it loaded the RDB: the stream follows */
                gen_bump_locked();
            } else if (s->state == RS_WAIT_END) {
                s->acked = 1; /* before the child was reaped: no need to wait for another */
                early = R.sn_diskless;
            }
            tc_unlock(&R.lock);
            /* A replica that loaded a diskless transfer acks once the child wrote its last byte:
             * the child is (nearly always) gone, so collect it now rather than at the next tick,
             * and the replica is online when its link is up (FAILOVER TO checks that at once). */
            if (early && !atomic_load(&quiesced)) {
                pthread_mutex_lock(&R.sync_lock);
                reap_sync(c->w->now_ms);
                pthread_mutex_unlock(&R.sync_lock);
            }
            if (block_nclients() > 0)
                block_wake_waiters(c->w->srv);
            return;
        } else if (util_eq_nocase(k->p, k->n, "getack")) {
            return; /* a primary's request: answered by the replica side only */
        } else if (util_eq_nocase(k->p, k->n, "rdb-only")) {
            long long v1;
            if (!util_str2ll(v->p, v->n, &v1) || (v1 != 0 && v1 != 1)) {
                reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            tc_lock(&R.lock);
            struct rslave *s = slave_add(c);
            if (s)
                s->rdb_only = (int)v1;
            tc_unlock(&R.lock);
        } else if (util_eq_nocase(k->p, k->n, "rdb-filter-only")) {
            /* 7.0 accepts it: the filters it names are not applied */
        } else {
            reply_errorf(c, "ERR Unrecognized REPLCONF option: %.*s",
                         (int)(k->n > 128 ? 128 : k->n), k->p);
            return;
        }
    }
    reply_ok(c);
}

static int id_eq(const struct slice *a, const char *id)
{
    return a->n == 40 && !memcmp(a->p, id, 40);
}

/* PSYNC replid offset / SYNC. */
static void sync_common(struct conn *c, int psync)
{
    char ip[64];
    int first;

    if (c->repl && ((struct rslave *)c->repl)->state) {
        return; /* already a replica: ignored, as Redis */
    }
    if (psync && c->argc >= 4) {
        if (!util_eq_nocase(c->argv[3].p, c->argv[3].n, "failover") || c->argc > 4) {
            reply_error(c, "ERR syntax error");
            return;
        }
        /* the primary hands over (its FAILOVER): this replica becomes the primary, then
         * answers the PSYNC as any (its old ID is now the second one) */
        if (!atomic_load(&repl_is_replica)) {
            reply_error(c, "ERR PSYNC FAILOVER can't be sent to a master.");
            return;
        }
        char myid[41];
        uint64_t myoff;
        repl_get_id(myid, &myoff);
        if (!id_eq(&c->argv[1], myid)) {
            reply_error(c, "ERR PSYNC FAILOVER replid must match my replid.");
            return;
        }
        log_notice("Failover request received for replid %s.", myid);
        repl_promote_except(c);
    }
    if (atomic_load(&repl_is_replica) && !repl_link_up()) {
        reply_error(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    if (c->tx && tx_active(c)) {
        reply_error(c, "ERR Replica can't interact with the keyspace");
        return;
    }
    snprintf(ip, sizeof(ip), "%s", c->addr);
    char *colon = strrchr(ip, ':');
    if (colon)
        *colon = 0;

    tc_lock(&R.lock);
    struct rslave *s = slave_add(c);
    if (!s) {
        tc_unlock(&R.lock);
        reply_error(c, "ERR too many replicas");
        return;
    }
    if (!s->ip[0])
        snprintf(s->ip, sizeof(s->ip), "%s", ip);
    first = !R.active;
    if (psync) {
        long long off;
        const struct slice *id = &c->argv[1];
        int ok = util_str2ll(c->argv[2].p, c->argv[2].n, &off);
        int same = id_eq(id, R.replid) ||
                   (id_eq(id, R.replid2) && ok && (uint64_t)off <= R.second_off);
        if (R.active && same && ok && (uint64_t)off >= R.backlog_first &&
            (uint64_t)off <= R.offset + 1) {
            char line[128];
            int k = s->capa_psync2 ? snprintf(line, sizeof(line), "+CONTINUE %s\r\n", R.replid)
                                   : snprintf(line, sizeof(line), "+CONTINUE\r\n");
            reply_raw(c, line, (size_t)k);
            s->state = RS_ONLINE;
            s->send_off = (uint64_t)off;
            s->blk = block_at((uint64_t)off);
            R.pin_dirty = 1;
            s->ack_ms = c->w->now_ms;
            s->ack_off = (uint64_t)off - 1;
            s->limit_from = R.offset;
            R.sync_partial_ok++;
            uint64_t backlog = R.offset + 1 - (uint64_t)off;
            c->flags &= ~(CONN_OUT_LIMIT | CONN_PAUSE_AT_LIMIT | CONN_MEM_COUNTED);
            gen_bump_locked();
            tc_unlock(&R.lock);
            log_notice("Partial resynchronization request from %s accepted. Sending %llu bytes "
                       "of backlog starting from offset %lld.", c->addr,
                       (unsigned long long)backlog, off);
            return;
        }
        if (!(id->n == 1 && id->p[0] == '?'))
            R.sync_partial_err++;
    } else {
        s->old_sync = 1;
    }
    s->state = RS_WAIT_START;
    R.sync_full++;
    activate_locked();
    char id1[41], id2[41];
    memcpy(id1, R.replid, 41);
    memcpy(id2, R.replid2, 41);
    tc_unlock(&R.lock);
    c->flags &= ~(CONN_OUT_LIMIT | CONN_PAUSE_AT_LIMIT | CONN_MEM_COUNTED);
    log_notice("Replica %s asks for synchronization", c->addr);
    if (first) {
        atomic_store(&repl_on, 1);
        cmd_prop_gone_install();
        log_notice("Replication backlog created, my new replication IDs are '%s' and '%s'",
                   id1, id2);
        /* the commands of other workers that saw repl_on == 0 are done before the copy */
        persist_wait_workers(c->w->idx);
    }
}

static void psync_command(struct conn *c)
{
    sync_common(c, 1);
}

static void sync_command(struct conn *c)
{
    sync_common(c, 0);
}

int repl_caught_up(const char *host, int port, int any_state, char *ip, size_t ipcap,
                   int *port_out)
{
    int found = 0;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves && !found; i++) {
        struct rslave *s = R.slaves[i];
        if (s->state != RS_ONLINE)
            continue;
        if (host && (strcmp(s->ip, host) || s->port != port))
            continue;
        if (!any_state && s->ack_off < R.offset)
            continue;
        snprintf(ip, ipcap, "%s", s->ip);
        *port_out = s->port;
        found = 1;
    }
    tc_unlock(&R.lock);
    return found;
}

int repl_find_replica(const char *host, int port)
{
    int r = 0;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        if (s->state && !strcmp(s->ip, host) && s->port == port)
            r = s->state == RS_ONLINE ? 2 : 1;
    }
    tc_unlock(&R.lock);
    return r;
}

int repl_online_replicas(void)
{
    int n = 0;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++)
        n += R.slaves[i]->state != 0;
    tc_unlock(&R.lock);
    return n;
}

int repl_count_acks(uint64_t off)
{
    int n = 0;
    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++)
        if (R.slaves[i]->state == RS_ONLINE && R.slaves[i]->ack_off >= off)
            n++;
    tc_unlock(&R.lock);
    return n;
}

void repl_ask_acks(void)
{
    atomic_store(&R.getack, 1);
}

static int good_replicas(int64_t now)
{
    int n = 0;
    for (int i = 0; i < R.nslaves; i++)
        if (R.slaves[i]->state == RS_ONLINE &&
            now - R.slaves[i]->ack_ms <= (int64_t)cfg.min_replicas_max_lag * 1000)
            n++;
    return n;
}

int repl_good_replicas_ok(void)
{
    if (!atomic_load_explicit(&repl_gate, memory_order_relaxed) ||
        atomic_load_explicit(&repl_is_replica, memory_order_relaxed) ||
        cfg.min_replicas_to_write <= 0 || cfg.min_replicas_max_lag <= 0)
        return 1;
    tc_lock(&R.lock);
    int good = good_replicas(util_now_ms());
    tc_unlock(&R.lock);
    return good >= cfg.min_replicas_to_write;
}

const char *repl_refuse_why(struct conn *c, uint64_t flags)
{
    if (c->fd < 0 && c->udp == NULL)
        return NULL; /* the primary's stream, the AOF */
    if (atomic_load_explicit(&repl_loading, memory_order_relaxed) && !(flags & CMD_LOADING))
        return "LOADING Redis is loading the dataset in memory";
    if (atomic_load_explicit(&repl_is_replica, memory_order_relaxed)) {
        if (!repl_link_up() && !cfg.replica_serve_stale_data && !(flags & CMD_STALE))
            return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to "
                   "'no'.";
        if (cfg.replica_read_only && (flags & CMD_WRITE))
            return "READONLY You can't write against a read only replica.";
        return NULL;
    }
    if (cfg.min_replicas_to_write > 0 && cfg.min_replicas_max_lag > 0 && (flags & CMD_WRITE)) {
        tc_lock(&R.lock);
        int good = good_replicas(c->w->now_ms);
        tc_unlock(&R.lock);
        if (good < cfg.min_replicas_to_write)
            return REPL_NOREPLICAS_TEXT;
    }
    return NULL;
}

int repl_refuse(struct conn *c, const struct cmd *cmd)
{
    const char *why = repl_refuse_why(c, cmd->flags);
    if (why)
        reply_error(c, why);
    return why != NULL;
}

/* ---- INFO and ROLE ---- */

static const char *state_name(const struct rslave *s)
{
    switch (s->state) {
    case RS_WAIT_START:
        return "wait_bgsave";
    case RS_WAIT_END:
    case RS_SEND_FILE:
        return "send_bulk";
    default:
        return "online";
    }
}

int repl_lagging_replicas(int log)
{
    int n = 0, lagging = 0;
    int64_t now = util_now_ms();

    tc_lock(&R.lock);
    for (int i = 0; i < R.nslaves; i++) {
        const struct rslave *s = R.slaves[i];
        n++;
        if (s->ack_off == R.offset)
            continue;
        lagging++;
        if (log)
            log_warn("Lagging replica %s:%d reported offset %lld behind master, lag=%ld, "
                     "state=%s.", s->ip, s->port, (long long)(R.offset - s->ack_off),
                     s->state == RS_ONLINE ? (long)((now - s->ack_ms) / 1000) : 0L,
                     state_name(s));
    }
    tc_unlock(&R.lock);
    if (log && n > 0)
        log_notice("%d of %d replicas are in sync when shutting down.", n - lagging, n);
    return lagging;
}

void repl_info(struct buf *b)
{
    char line[512];
    int64_t now = util_now_ms();
    int replica = atomic_load(&repl_is_replica);

#define P(...)                                                                                  \
    do {                                                                                        \
        int k_ = snprintf(line, sizeof(line), __VA_ARGS__);                                     \
        buf_append(b, line, (size_t)k_);                                                        \
    } while (0)
    P("# Replication\r\nrole:%s\r\n", replica ? "slave" : "master");
    if (replica)
        repl_link_info(b);
    tc_lock(&R.lock);
    int n = 0;
    for (int i = 0; i < R.nslaves; i++)
        n += R.slaves[i]->state != 0;
    P("connected_slaves:%d\r\n", n);
    if (!replica && cfg.min_replicas_to_write > 0)
        P("min_slaves_good_slaves:%d\r\n", good_replicas(now));
    for (int i = 0, j = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        if (!s->state)
            continue;
        P("slave%d:ip=%s,port=%d,state=%s,offset=%llu,lag=%lld\r\n", j++, s->ip, s->port,
          state_name(s), (unsigned long long)s->ack_off,
          (long long)(s->ack_ms ? (now - s->ack_ms) / 1000 : 0));
    }
    P("master_failover_state:%s\r\n", repl_failover_state());
    P("master_replid:%s\r\nmaster_replid2:%s\r\n", R.replid, R.replid2);
    P("master_repl_offset:%llu\r\nsecond_repl_offset:%lld\r\n", (unsigned long long)R.offset,
      R.second_off ? (long long)R.second_off : -1LL);
    P("repl_backlog_active:%d\r\nrepl_backlog_size:%lld\r\n", R.active, cfg.repl_backlog_size);
    P("repl_backlog_first_byte_offset:%llu\r\nrepl_backlog_histlen:%llu\r\n",
      (unsigned long long)(R.active ? R.backlog_first : 0),
      (unsigned long long)(R.active ? R.offset + 1 - R.backlog_first : 0));
    tc_unlock(&R.lock);
#undef P
}

void repl_info_memory(struct buf *b)
{
    char line[160];
    tc_lock(&R.lock);
    unsigned long long hist = R.active ? R.offset + 1 - R.backlog_first : 0;
    tc_unlock(&R.lock);
    int k = snprintf(line, sizeof(line), "mem_replication_backlog:%llu\r\n"
                     "mem_total_replication_buffers:%zu\r\n", hist,
                     atomic_load_explicit(&blk_bytes, memory_order_relaxed));
    buf_append(b, line, (size_t)k);
}

void repl_reset_stats(void)
{
    tc_lock(&R.lock);
    R.sync_full = R.sync_partial_ok = R.sync_partial_err = 0;
    tc_unlock(&R.lock);
}

void repl_info_stats(struct buf *b)
{
    char line[256];
    tc_lock(&R.lock);
    int k = snprintf(line, sizeof(line), "sync_full:%llu\r\nsync_partial_ok:%llu\r\n"
                                         "sync_partial_err:%llu\r\n",
                     (unsigned long long)R.sync_full, (unsigned long long)R.sync_partial_ok,
                     (unsigned long long)R.sync_partial_err);
    tc_unlock(&R.lock);
    buf_append(b, line, (size_t)k);
}

void repl_role(struct conn *c)
{
    if (atomic_load(&repl_is_replica)) {
        repl_link_role(c);
        return;
    }
    tc_lock(&R.lock);
    int n = 0;
    for (int i = 0; i < R.nslaves; i++)
        n += R.slaves[i]->state == RS_ONLINE;
    reply_array(c, 3);
    reply_bulk(c, "master", 6);
    reply_int(c, (long long)R.offset);
    reply_array(c, n);
    for (int i = 0; i < R.nslaves; i++) {
        struct rslave *s = R.slaves[i];
        char num[32];
        if (s->state != RS_ONLINE)
            continue;
        reply_array(c, 3);
        reply_cstr(c, s->ip);
        snprintf(num, sizeof(num), "%d", s->port);
        reply_cstr(c, num);
        snprintf(num, sizeof(num), "%llu", (unsigned long long)s->ack_off);
        reply_cstr(c, num);
    }
    tc_unlock(&R.lock);
}

int repl_rdb_aux(char id[41], unsigned long long *off, int *db)
{
    int ok = 0, link = atomic_load(&repl_is_replica);

    if (!atomic_load(&repl_on))
        return 0;
    /* a replica's link applies a batch, then passes its bytes on: only between batches do
     * the data and the offset match (every stripe is held here: only try) */
    if (link && !repl_link_quiet_begin())
        return 0;
    tc_lock(&R.lock);
    if (R.active) {
        memcpy(id, R.replid, 41);
        *off = R.offset;
        /* the database the stream is in at that offset: a replica's link's; a primary's
         * next record SELECTs anyway after a restart */
        *db = link ? repl_link_db() : (R.stream_db > 0 ? R.stream_db : 0);
        ok = 1;
    }
    tc_unlock(&R.lock);
    if (link)
        repl_link_quiet_end();
    return ok;
}

void repl_after_load(void)
{
    char id[41], v[300];
    unsigned long long off;
    int db;

    if (!persist_loaded_repl(id, &off, &db))
        return;
    repl_link_set_db(db);
    config_str(cfg.replicaof, v, sizeof(v));
    tc_lock(&R.lock);
    if (v[0]) {
        /* a replica: it asks its primary to continue from there */
        memcpy(R.replid, id, 41);
    } else {
        /* a primary: a new ID, the file's continues as the second (its replicas PSYNC) */
        memcpy(R.replid2, id, 41);
        R.second_off = off + 1;
    }
    R.offset = off;
    R.backlog_first = off + 1;
    activate_locked();
    tc_unlock(&R.lock);
    atomic_store(&repl_on, 1);
    cmd_prop_gone_install();
    log_notice("Replication ID %s and offset %llu restored from the RDB file", id, off);
    if (!v[0]) {
        /* the keys that expired while it was down go to the backlog as DELs, as Redis feeds
         * them while it loads: a replica continuing from before them must see them */
        const char *p;
        size_t n;
        persist_loaded_expired_dels(&p, &n, 0);
        if (n)
            repl_feed_raw(p, n);
    }
    persist_loaded_expired_dels(NULL, NULL, 1);
}

void repl_setup(struct srv *srv)
{
    repl_srv = srv;
    repl_random_id(R.replid);
    memset(R.replid2, '0', 40);
    R.replid2[40] = 0;
    R.no_slaves_since = util_now_ms();
    last_ping = R.no_slaves_since;
    repl_update_gate(); /* min-replicas-to-write from the configuration */
}

static struct cmd cmds[] = {
    {"psync", psync_command, -3, "admin noscript no_async_loading no_multi", "@dangerous", NULL, "server", "An internal command used in replication"},
    {"sync", sync_command, 1, "admin noscript no_async_loading no_multi", "@dangerous", NULL, "server", "An internal command used in replication"},
    {"replconf", replconf_command, -1, "admin noscript loading stale allow_busy", "@dangerous", NULL, "server", "An internal command for configuring the replication stream"},
};

void cmd_repl_master_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
