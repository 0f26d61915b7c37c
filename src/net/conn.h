/* A client connection: socket, input buffer, output buffer with zero-copy references to
 * refcounted values, and the per-client state the protocol layers use (parser, database,
 * protocol version, name, auth, Pub/Sub and blocking state). A connection lives on one worker
 * for its whole life; only that worker touches it, except the fields marked shared (read
 * under the worker's list lock by CLIENT LIST, or atomic).
 *
 * Net (conn.c, worker.c) owns the socket, the buffers, the output references, the flags
 * below and the fields it documents as its own; it never reads the protocol state (rp, argv,
 * mc, tx, ps, blk, db, resp, authed...), which the protocol layer sets up in its on_open
 * hook and frees in on_close (struct srv_proto in worker.h). What net needs to know about a
 * connection's protocol it learns from flags the protocol layer sets (CONN_OUT_LIMIT,
 * CONN_PAUSE_AT_LIMIT, CONN_HOLD_OUT) and from the per-protocol hooks. */
#ifndef TC_CONN_H
#define TC_CONN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "proto/resp.h"

struct worker;
struct acl_pat;

/* The server's protocol ids: c->proto and the listeners' protocol are indexes into
 * srv->proto (worker.h), opaque to net. */
enum conn_proto { PROTO_RESP = 0, PROTO_MC = 1 };

#define CONN_CLOSE_AFTER_REPLY 0x01 /* flush the output, then close */
#define CONN_CLOSE_ASAP 0x02        /* close without flushing */
#define CONN_WANT_WRITE 0x04        /* EPOLLOUT is registered */
#define CONN_PAUSED_READ 0x08       /* input paused until the output drains */
#define CONN_UNIX 0x10
#define CONN_MBOX_TOUCHED 0x20 /* in the worker's list of connections a mailbox batch wrote */
#define CONN_HOLD_OUT 0x40     /* output held until released (conn_hold_output) */
#define CONN_HOLD_LISTED 0x80  /* in the worker's list of held connections */
#define CONN_FLUSHQ 0x100      /* in the worker's list of outputs to send at the end of the turn */
#define CONN_CLOSED 0x200      /* closed: only the struct remains until the end of the turn */
/* Set and cleared by the protocol layer: */
#define CONN_OUT_LIMIT 0x400      /* the normal client-output-buffer-limit applies */
#define CONN_PAUSE_AT_LIMIT 0x800 /* input pauses just above that limit (conn_pause_bytes) */
#define CONN_MONITOR 0x1000       /* attached by MONITOR (owned by cmd/monitor.c) */
#define CONN_TLS_HS 0x2000        /* TLS handshake not finished (tls.c) */
#define CONN_TLS_HSW 0x4000       /* ... and it waits for the socket to take its output */
#define CONN_IO_PENDING 0x8000    /* a batched read or send of this turn completed but its
                                   * result is not applied yet (worker_serve_busy skips it) */
#define CONN_PUBSUB_LIMIT 0x10000 /* the pubsub client-output-buffer-limit applies (subscribed) */
#define CONN_MEM_COUNTED 0x20000  /* a normal or Pub/Sub client: its memory counts towards
                                   * maxmemory-clients and it may be evicted (not a replica,
                                   * not a monitor: Redis's clientEvictionAllowed types) */

/* Input is not processed while more than this many reply bytes wait to be written. */
#define CONN_OUT_PAUSE_BYTES (4 * 1024 * 1024)
/* ... for a RESP client (CONN_PAUSE_AT_LIMIT): Redis never pauses, its clients' output grows
 * until an output limit or client eviction (maxmemory-clients) closes them; this only bounds
 * a client that pipelines and never reads when neither is set. */
#define CONN_OUT_PAUSE_BYTES_RESP (16 * 1024 * 1024)

struct slice {
    const char *p;
    size_t n;
};

/* Drops the reference on owner an output reference held (any thread may run it). */
typedef void conn_ref_release_fn(void *owner);

/* An output reference: len bytes at ptr, kept alive by one reference on owner (dropped with
 * release(owner) once written or discarded), logically placed at offset at of wbuf. */
struct oref {
    size_t at;
    const char *ptr;
    size_t len;
    void *owner;
    conn_ref_release_fn *release;
};

struct conn {
    int fd;
    uint8_t proto;         /* enum conn_proto */
    uint8_t resp;          /* RESP version: 2 or 3 */
    uint32_t flags;        /* CONN_* */
    int db;                /* selected database */
    int authed;            /* passed AUTH (or no password needed) */
    struct acl_user *user; /* ACL user (cmd/acl.h; a reference), NULL: internal, all allowed */
    /* the ACL check's cache (cmd/acl.h acl_check_fast): the rules (body id) and command last
     * allowed, and the key pattern that allowed its key (NULL: no key needed one) */
    uint64_t acl_ck_body;
    const void *acl_ck_cmd;
    const struct acl_pat *acl_ck_pat;
    uint64_t id;           /* CLIENT ID, unique for the process */
    struct worker *w;      /* owner */
    struct conn *prev, *next; /* worker's list (shared: under the list lock) */
    struct buf rbuf;       /* input */
    struct buf wbuf;       /* output bytes */
    struct oref *refs;     /* output references, in order */
    uint32_t nrefs, refs_cap;
    uint32_t ref_sent;     /* refs fully written */
    size_t ref_off;        /* bytes of refs[ref_sent] already written */
    struct resp_parser rp; /* RESP parser state */
    struct slice *argv;    /* the current command's arguments */
    int argc;
    /* the RESP frame argv was parsed from while the command runs (cmd layer), when the parser
     * read it in one pass (resp_parser.fast: canonical lengths, arguments where the encoding
     * puts them), else NULL: the AOF and replication copy it as it came */
    const char *frame;
    size_t frame_n;
    int argv_cap;
    void *mc;              /* memcached protocol state (owned by the mc module) */
    void *tx;              /* MULTI/WATCH state (owned by cmd_multi.c), NULL when unused */
    _Atomic int kill;      /* shared: CLIENT KILL from another worker */
    char name[64];         /* shared: CLIENT SETNAME */
    char addr[64];         /* peer "ip:port" */
    char laddr[64];        /* local "ip:port" */
    int64_t ctime_ms;      /* creation time */
    int64_t last_ms;       /* shared: last interaction (idle timeout, CLIENT LIST idle) */
    const char *lastcmd;   /* shared: name of the last command (static string) */
    const char *lastsub;   /* shared: its subcommand (in the static table), lastsub_n bytes */
    uint8_t lastsub_n;     /* shared: 0 when the last command had none */
    const void *cache_cmd; /* the last command looked up, for pipelines of one command */
    char cache_name[15];   /* ... and the exact bytes of its name */
    uint8_t cache_len;
    uint64_t tot_cmds;
    void *ps;              /* Pub/Sub subscriptions (owned by pubsub.c), NULL when none */
    void *blk;             /* blocked command state (owned by blocking.c), NULL when not blocked */
    void *trk;             /* CLIENT TRACKING state (owned by tracking.c), NULL when never on */
    uint64_t trk_hash;     /* tracking.c's hash of the running command's key, 0: not computed */
    void *repl;            /* a replica's state (cmd/repl_master.c), NULL for other clients */
    uint64_t woff;         /* replication stream offset after its last write (WAIT) */
    _Atomic int blocked;   /* shared: 1 while blocked (CLIENT UNBLOCK reads it) */
    _Atomic int unblock_req; /* shared: CLIENT UNBLOCK request, 1 timeout, 2 error */
    int64_t obl_soft_ms;   /* when the output first exceeded the soft limit, 0 if under */
    _Atomic int nsub, npsub; /* shared: channel / pattern subscriptions (CLIENT LIST) */
    /* shared: buffer sizes published by the owner after each I/O turn, for CLIENT LIST on
     * other workers (the buffers themselves are the owner's alone) */
    size_t pub_qbuf, pub_qfree, pub_qcap, pub_obl, pub_ocap, pub_omem;
    uint32_t pub_oll;
    size_t qpeak;          /* the input buffer's largest use since the last timer pass */
    /* Client memory (maxmemory-clients; Redis's getClientMemoryUsage): mem is the client's
     * total as of its last conn_publish (shared: CLIENT LIST tot-mem, client eviction);
     * mem_acc is the part of it counted in its worker's cmem (owner only; 0 for replicas and
     * monitors, which Redis does not count either); evict_amt is what client eviction added
     * to srv->evict_pending when it picked this client (shared: set under the worker's list
     * lock, taken back by the owner when it closes it). */
    size_t mem, mem_acc, evict_amt;
    /* the output buffer's peak use (Redis's buf_peak: a turn's output, at most wbuf.cap)
     * since wpeak_ms, for its resizing at the timer (shared: CLIENT LIST rbp) */
    size_t wpeak;
    int64_t wpeak_ms;
    uint8_t reply_mode;    /* CLIENT REPLY (cmd layer): 0 on, 1 off, 2 skip the next reply,
                            * 3 skipping this one */
    uint8_t no_evict;      /* shared: CLIENT NO-EVICT (cmd layer): never picked by client eviction */
    uint8_t no_touch;      /* CLIENT NO-TOUCH (cmd layer): reads leave access times alone */
    uint8_t ldb;           /* SCRIPT DEBUG (script layer): 0 off, 1 YES (forked), 2 SYNC */
    uint8_t in_script;     /* a script's own client (script layer; Redis's CLIENT_SCRIPT) */
    char lib_name[32];     /* CLIENT SETINFO LIB-NAME / LIB-VER (cmd layer) */
    char lib_ver[32];
    struct conn_udp *udp;  /* a UDP pseudo-connection's datagram state (udp.c), else NULL */
    void *tls;             /* the TLS session (tls.c: an SSL *), NULL for plain connections */
};

/* A position in c's output (conn_output_mark) to drop what was added after it
 * (conn_output_rewind: CLIENT REPLY OFF / SKIP). Nothing may be written to the socket in
 * between (one command's output). */
struct conn_mark {
    size_t at;      /* wbuf.wpos + wbuf.shift */
    uint32_t nrefs;
};
static inline void conn_output_mark(const struct conn *c, struct conn_mark *m)
{
    m->at = c->wbuf.wpos + c->wbuf.shift;
    m->nrefs = c->nrefs;
}
void conn_output_rewind(struct conn *c, const struct conn_mark *m);

/* Output helpers used by commands: everything goes to wbuf except large values which are
 * referenced (the reference is released once written). */
static inline struct buf *conn_out(struct conn *c)
{
    return &c->wbuf;
}
/* Append len bytes at ptr without copying. The caller hands over one reference it took on
 * owner, which keeps the bytes alive: c drops it with release(owner) once they are written or
 * the output is discarded, or at once when this fails (-1, out of memory). */
int conn_add_ref(struct conn *c, const char *ptr, size_t len, void *owner,
                 conn_ref_release_fn *release);
/* Hold c's output: it is not written (nor c closed after its reply) until the holder calls
 * worker_release_held (worker.h) on c's worker, which it does from srv->before_sleep. The AOF
 * holds the replies of the commands it logged until their records are written. Owner only. */
static inline void conn_hold_output(struct conn *c)
{
    c->flags |= CONN_HOLD_OUT;
}
/* Bytes waiting to be written. */
static inline size_t conn_pending(const struct conn *c)
{
    size_t n = c->wbuf.wpos - c->wbuf.rpos;
    for (uint32_t i = c->ref_sent; i < c->nrefs; i++)
        n += c->refs[i].len;
    return n - (c->ref_sent < c->nrefs ? c->ref_off : 0);
}
/* Write as much as possible (writev). Returns 0 (done or would block) or -1 (error: close). */
int conn_flush(struct conn *c);
/* Most iovecs one write of c's output uses. */
#define CONN_IOV_MAX 64
struct iovec;
/* Describe c's pending output (buffer bytes and references, in order) in at most max iovecs;
 * returns how many (0: nothing pending). */
int conn_out_iov(const struct conn *c, struct iovec *iov, int max);
/* Account for w bytes of that output written; returns 1 when nothing is left (the output
 * was reset), 0 otherwise. */
int conn_sent(struct conn *c, size_t w);
/* Release the output references and reset the output buffers. */
void conn_reset_output(struct conn *c);
/* The protocol layer marks the end of one response: over UDP (c->udp) each response goes
 * out as its own datagrams, as memcached sends them. A no-op for stream connections. */
void conn_udp_cut_slow(struct conn *c);
static inline void conn_udp_cut(struct conn *c)
{
    if (__builtin_expect(c->udp != NULL, 0))
        conn_udp_cut_slow(c);
}
/* Format "ip:port" of a socket address. */
void conn_format_addr(int fd, int peer, char *out, size_t cap);

/* c's memory as Redis counts a client's (getClientMemoryUsage): the input buffer, the
 * argument vectors, the output buffer and its references (refbytes: the referenced bytes
 * still to send, which Redis would hold as copies), the struct itself and what the protocol
 * layer keeps for it (srv_proto.mem: MULTI queue, WATCH, subscriptions, tracking prefixes). */
size_t conn_mem_usage(const struct conn *c, size_t refbytes);
/* Account c's memory anew in its worker's cmem (owner only): a few adds, no lock. */
void conn_mem_update(struct conn *c, size_t refbytes);

/* Publish c's buffer sizes for CLIENT LIST (owner only; relaxed stores, no lock). The
 * fields marked shared are written with __atomic stores and read with __atomic loads. */
/* The query buffer's use as CLIENT LIST's qbuf shows it: Redis moves a big argument (32 KiB
 * or more) being read to the start of its buffer, the request's bytes before it parsed. */
static inline size_t conn_qbuf(const struct conn *c)
{
    size_t n = c->rbuf.wpos - c->rbuf.rpos;
    if (c->proto == PROTO_RESP && c->rp.bulklen >= 32768 && c->rp.pos <= n)
        n -= c->rp.pos;
    return n;
}

/* The reply buffer's peak use (as Redis's buf_peak): noted before a write drains it. */
static inline void conn_note_wpeak(struct conn *c, size_t omem)
{
    if (omem > c->wpeak)
        __atomic_store_n(&c->wpeak, omem < c->wbuf.cap ? omem : c->wbuf.cap, __ATOMIC_RELAXED);
}

static inline void conn_publish(struct conn *c)
{
    __atomic_store_n(&c->pub_qbuf, conn_qbuf(c), __ATOMIC_RELAXED);
    __atomic_store_n(&c->pub_qfree, c->rbuf.cap - c->rbuf.wpos, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pub_qcap, c->rbuf.cap, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pub_obl, c->wbuf.wpos, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pub_ocap, c->wbuf.cap, __ATOMIC_RELAXED);
    __atomic_store_n(&c->pub_oll, c->nrefs, __ATOMIC_RELAXED);
    size_t omem = conn_pending(c);
    __atomic_store_n(&c->pub_omem, omem, __ATOMIC_RELAXED);
    conn_note_wpeak(c, omem);
    conn_mem_update(c, omem - (c->wbuf.wpos - c->wbuf.rpos));
}

/* The client eviction limit in bytes (maxmemory-clients, as a size or a percentage of
 * maxmemory), 0: no client eviction. As Redis, never under 128 KiB. */
static inline size_t conn_evict_limit(void)
{
    long long mc = __atomic_load_n(&cfg.maxmemory_clients, __ATOMIC_RELAXED);
    long long mm = __atomic_load_n(&cfg.maxmemory, __ATOMIC_RELAXED);
    size_t lim;

    if (mc < 0 && mm > 0)
        lim = (size_t)((double)mm * -(double)mc / 100);
    else if (mc > 0)
        lim = (size_t)mc;
    else
        return 0;
    return lim < 128 * 1024 ? 128 * 1024 : lim;
}

/* DEBUG REPLYBUFFER (as Redis's): the timer resizes idle output buffers (1: on), and the
 * buffers' peak use is reset every net_reply_peak_reset_ms (-1: never). Relaxed atomics. */
extern int net_reply_resizing;
extern long long net_reply_peak_reset_ms;
/* DEBUG PAUSE-CRON: the workers' timers do nothing while set (relaxed atomic). */
extern int net_pause_cron;

/* Output classes of client-output-buffer-limit. */
enum { COBL_NORMAL = 0, COBL_REPLICA = 1, COBL_PUBSUB = 2 };
/* Reply bytes past which c's input is not processed until its output drains: 4 MiB (16 MiB
 * for RESP), or just above the normal client-output-buffer-limit when one is set
 * (CONN_PAUSE_AT_LIMIT: RESP), so that a client that sends and never reads meets that limit
 * and is disconnected, as in Redis. */
static inline size_t conn_pause_bytes(const struct conn *c)
{
    size_t p = CONN_OUT_PAUSE_BYTES;
    if (c->flags & CONN_PAUSE_AT_LIMIT) {
        p = CONN_OUT_PAUSE_BYTES_RESP;
        long long hard = __atomic_load_n(&cfg.cobl[COBL_NORMAL][0], __ATOMIC_RELAXED);
        long long soft = __atomic_load_n(&cfg.cobl[COBL_NORMAL][1], __ATOMIC_RELAXED);
        long long m = hard > soft ? hard : soft;
        if (m > 0 && (size_t)m >= p)
            p = (size_t)m + 1;
    }
    return p;
}
/* Enforce client-output-buffer-limit class cls (hard, soft for seconds) on c's pending output:
 * when over, log as Redis, set CONN_CLOSE_ASAP and return 1. */
int conn_out_limit(struct conn *c, int cls, int64_t now_ms);

#endif
