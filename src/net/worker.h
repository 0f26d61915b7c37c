/* Worker threads, each with its own epoll loop, the shared listeners and its connections,
 * and the process-wide context they share (struct srv: the workers, counters, the hooks).
 * Commands run on the worker that owns the connection.
 *
 * What net owns: listening and accepting (listen.c), the event loop and its clock, reading
 * into a connection's input buffer, writing its output (read/writev, or io_uring batches),
 * pausing input while too much output waits, the output limits and the idle timeout (as the
 * protocol layer flagged them), closing, the mailbox for cross-thread deliveries, held
 * output, graceful drain at shutdown, the per-worker counters.
 *
 * What it calls back (struct srv, all on the worker's own thread): per protocol (srv->proto,
 * indexed by the listener's protocol id) on_open / on_input / on_close / read_hint /
 * may_time_out; per worker on_tick (every 1000/hz ms: the store's housekeeping, persistence
 * timers), on_wakeup, on_timer, on_deliver / on_discard (mailbox), before_sleep (the AOF,
 * which releases held output), on_exit. Net includes nothing of src/store or src/cmd: what
 * the server keeps per worker for them (keys, scratch, blocked) is storage net never reads. */
#ifndef TC_WORKER_H
#define TC_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "net/conn.h"

struct store;
struct srv;
struct skey;

/* What the server plugs in for one protocol (srv->proto[id]); every hook runs on the owner
 * worker. Listeners are given a protocol id; their connections carry it in c->proto. */
struct srv_proto {
    int port;               /* TCP port, listened on at every bind address; 0: none */
    int tls_port;           /* TLS TCP port, listened on at every bind address; 0: none */
    int udp_port;           /* UDP port (datagrams framed as memcached's, udp.c); 0: none */
    int unix_socket;        /* 1: cfg.unixsocket speaks this protocol (one protocol at most) */
    int port_optional;      /* 1: a port already in use is logged and skipped, not fatal */
    const char *full_reply; /* written to a client refused at maxclients before closing it */
    /* a new connection: set up protocol state (and the CONN_OUT_LIMIT/CONN_PAUSE_AT_LIMIT
     * flags); NULL: none */
    void (*on_open)(struct conn *c);
    /* parse and run what rbuf holds (consuming it); called after every read and when a
     * paused connection drains */
    void (*on_input)(struct conn *c);
    /* free protocol state (the connection is leaving; its output is discarded after) */
    void (*on_close)(struct conn *c);
    /* optional, called before a read while rbuf holds an incomplete request: bytes the
     * buffer must hold to complete it (a big argument), 0 when unknown; input buffers grow
     * geometrically towards it */
    size_t (*read_hint)(struct conn *c);
    /* optional, called at a tick when c has been idle for more than cfg.timeout seconds:
     * 1 closes it (0: c is waiting for something, not idle). NULL: no idle timeout. */
    int (*may_time_out)(struct conn *c);
    /* optional: bytes the protocol layer keeps for c beyond its buffers (client memory,
     * CLIENT LIST tot-mem); must be cheap (it runs after every I/O turn of c) */
    size_t (*mem)(const struct conn *c);
};
#define SRV_MAX_PROTO 4

struct worker_stats {
    uint64_t commands;        /* total_commands_processed */
    uint64_t net_in;          /* bytes read */
    uint64_t net_out;         /* bytes written (not to replicas) */
    uint64_t net_repl_out;    /* bytes written to replicas (total_net_repl_output_bytes) */
    uint64_t conns_received;  /* total_connections_received */
    uint64_t rejected;        /* rejected_connections */
    uint64_t dirty;           /* write commands run (rdb_changes_since_last_save) */
    uint64_t reads;           /* reads that brought input (total_reads_processed) */
    uint64_t writes;          /* writes that sent output (total_writes_processed) */
    uint64_t reply_expands;   /* output buffers the timer grew (reply_buffer_expands) */
    uint64_t reply_shrinks;   /* and shrank (reply_buffer_shrinks) */
    uint64_t ops_sample[16];  /* commands at each of the last 16 ticks (instantaneous ops) */
    int64_t ops_sample_ms[16];
    int ops_idx;
};

struct worker {
    int idx;
    pthread_t tid;
    int ep;                    /* epoll fd */
    int evfd;                  /* eventfd: kill requests, shutdown */
    int ntls_hs;               /* connections in a TLS handshake (the tick times them out) */
    struct srv *srv;
    pthread_mutex_t list_lock; /* guards the list links and the shared conn fields */
    struct conn *conns;        /* all connections of this worker */
    int nconns;
    int64_t now_ms;            /* wall clock cached per loop turn */
    int64_t next_tick_ms;
    int draining;              /* shutdown: no more input events, replies are being flushed */
    int accept_paused;         /* out of fds: listeners left out of epoll until the next tick
                                * (under srv->lst_lock, read side) */
    struct worker_stats st;    /* written by this worker only, read racily by INFO */
    size_t cmem;               /* one writer (this worker), relaxed atomic stores: memory of
                                * its normal and Pub/Sub clients (conn_mem_update) */
    struct skey *keys;         /* cmd layer: scratch array for multi-key commands */
    int keys_cap;
    char scratch[256];         /* cmd layer: scratch bytes */
    /* mailbox: deliveries posted by any thread for this worker's connections */
    pthread_mutex_t mbox_lock;
    struct mbox_msg *mbox;     /* under mbox_lock */
    int mbox_n, mbox_cap;
    _Atomic int mbox_nonempty; /* hint read before taking mbox_lock */
    struct mbox_msg *mbox_work; /* owner only: the batch being delivered */
    int mbox_work_cap;
    struct conn **touched;     /* owner only: connections written by the batch */
    int touched_cap;
    void *blocked;             /* owner only: blocked clients (cmd layer's list) */
    int nblocked;              /* owner only: clients in that list */
    int64_t block_deadline;    /* owner only: when to run srv->on_timer (ms), 0: never */
    struct conn **held;        /* owner only: connections whose output is held (CONN_HOLD_OUT) */
    int nheld, held_cap;
    /* owner only: batched socket I/O (io_uring). When batching, a loop turn reads every
     * readable connection with one submission, and the replies of the turn wait in flushq
     * until one submission sends them all. */
    void *uring;               /* the ring and its iovec space (worker.c), NULL: read/writev */
    int batching;              /* after_io queues output instead of writing it */
    struct conn **flushq, **flushq2;
    int nflush, flush_cap, flush2_cap;
    struct conn *dead;         /* closed during this turn; freed at its end */
    struct conn **rq;          /* owner only: the batch of reads whose input runs now (NULL:
                                * none), with their results (worker_serve_busy applies them) */
    int *rq_res;
    int rq_n;
    /* accepted elsewhere and handed to this worker (listen.c), under mbox_lock */
    int hand_fd[64];
    uint8_t hand_proto[64];    /* their listener's protocol byte (struct srv_listener) */
    int hand_n;
    _Atomic int load;          /* connections owned or handed over, for the accept balance */
    _Atomic int64_t alive_ms;  /* when its current loop turn began, INT64_MAX while it waits in
                                * epoll_wait: a worker stuck in a turn gets no new connection */
    struct conn *udp_conn[4];  /* owner only: UDP pseudo-connection per protocol (udp.c) */
} __attribute__((aligned(64)));

/* A delivery for connection c: msg is owned by the cmd layer (on_deliver / on_discard). */
struct mbox_msg {
    struct conn *c;
    void *msg;
};

/* A listening socket, shared by every worker: slot i of srv->lst is epoll tag TAG_LISTEN + i
 * in every worker's set (listen.c). */
#define SRV_MAX_LISTEN 16
#define LST_TLS 0x40  /* proto: | for a TLS port */
#define LST_UNIX 0x80 /* proto: | for the unix socket */
struct srv_listener {
    int fd;            /* -1: a free slot */
    uint8_t proto;     /* protocol id | LST_TLS | LST_UNIX */
    int port;          /* 0 for the unix socket */
    char addr[64];     /* the bind word as configured ("-::1"), "" for the unix socket */
};

struct srv {
    struct store *store;          /* the server's; net never uses it */
    /* the listeners: read (accepting, pausing) under the read side of lst_lock, changed
     * (srv_relisten, CONFIG SET port/bind) under its write side */
    struct srv_listener lst[SRV_MAX_LISTEN];
    pthread_rwlock_t lst_lock;
    pthread_mutex_t relisten_lock; /* one srv_relisten at a time */
    struct worker *workers;
    int nworkers;
    _Atomic int shutdown;         /* 1: stop; workers close their connections and exit */
    _Atomic int shutdown_exitcode;
    _Atomic uint64_t next_client_id;
    _Atomic int nclients;         /* connected clients, both protocols */
    _Atomic int uring_workers;    /* workers batching their socket I/O in io_uring (INFO) */
    int64_t start_ms;
    struct srv_proto proto[SRV_MAX_PROTO];
#define SRV_MAX_UDP 4
    int udp_fd[SRV_MAX_UDP];      /* UDP sockets (udp.c), shared by every worker */
    uint8_t udp_proto[SRV_MAX_UDP];
    int nudp;
    const char *executable;
    const char *config_file;
    /* run by every worker every 1000/hz ms (its "tick"), before the worker's own timeouts */
    void (*on_tick)(struct worker *w);
    /* a worker thread's last call, on that thread */
    void (*on_exit)(struct worker *w);
    /* when set, every worker stores its cached wall clock (now_ms, low 32 bits) there at
     * every loop turn (the store's LRU clock) */
    _Atomic uint32_t *clock;
    _Atomic uint64_t stat_reset_ms;
    /* > 0 while a worker runs srv_freeze (DEBUG SLEEP): the others wait at the start of their
     * next turn, so no other command runs meanwhile, as Redis's one thread stops for it */
    _Atomic int frozen;
    /* cmd layer hooks for cross-thread work, run on the owner worker:
     * on_deliver writes a mailbox message into c's output (and releases it), on_discard
     * releases one whose connection closed; on_wakeup runs after every eventfd wake-up
     * (blocked clients made ready by other threads); on_timer runs once now_ms reaches
     * block_deadline. */
    void (*on_deliver)(struct conn *c, void *msg);
    void (*on_discard)(void *msg);
    void (*on_wakeup)(struct worker *w);
    void (*on_timer)(struct worker *w);
    /* run by every worker at the end of every loop turn, before it sleeps: a holder of
     * output (conn_hold_output; the AOF writes its buffer first) releases it here with
     * worker_release_held. While connections stay held it is called again, up to 16 times a
     * turn (released input can run commands that hold output again). */
    void (*before_sleep)(struct worker *w);
    /* client eviction (maxmemory-clients): run by a worker at the end of a loop turn in which
     * the clients' memory (srv_clients_mem) reached the limit; it picks clients to close
     * (the cmd layer: CLIENT LIST's lines for the log) */
    void (*evict_clients)(struct worker *w);
    _Atomic size_t evict_pending;  /* memory of clients picked for eviction, not closed yet */
};
/* The memory of every worker's normal and Pub/Sub clients, less what client eviction already
 * picked (any thread; relaxed loads, one per worker). */
size_t srv_clients_mem(struct srv *srv);

/* Create the workers and their listeners (each protocol's port on every bind address, the
 * unix socket). Returns 0 or -1 with a logged reason. Runs on the main thread before workers
 * start. */
int srv_listen(struct srv *srv);
/* Listen as srv->proto[*].port / tls_port and cfg.bind now say (CONFIG SET port, tls-port,
 * bind...), any thread, workers running: the sockets that are wanted and missing are bound
 * first; when one cannot be (not an optional address), they are closed and nothing changes
 * (-1, the reason logged and in why). Else every worker waits on the new set and the sockets
 * no longer wanted are closed before it returns (their port is free again). The unix socket
 * stays as it was. 0 or -1. */
int srv_relisten(struct srv *srv, char *why, size_t cap);
/* A copy of the listeners (fd and protocol byte each, up to cap): how many. Any thread; a
 * copied fd may be closed by a later srv_relisten. */
int srv_listeners(struct srv *srv, int *fds, uint8_t *protos, int cap);
/* Start / join every worker thread. */
int srv_start(struct srv *srv);
void srv_join(struct srv *srv);
/* Free what srv_listen and the workers allocated (after srv_join; not the cmd layer's
 * keys/blocked, which its owner frees first). */
void srv_free(struct srv *srv);
/* Ask every worker to stop (any thread). */
void srv_request_shutdown(struct srv *srv, int exitcode);
/* Wake a worker so it handles kill requests (any thread). */
void worker_wake(struct worker *w);
/* Close c now (owner worker only). */
void worker_close_conn(struct worker *w, struct conn *c);
/* Queue msg for connection c of worker w (any thread). Returns 1 when the mailbox was empty
 * (the caller wakes w with worker_wake once it has posted everything), 0 otherwise, -1 when
 * out of memory (msg not queued). Messages to one connection are delivered in post order. */
int worker_post(struct worker *w, struct conn *c, void *msg);
/* After the cmd layer wrote to c outside of c's own input event (owner only): write what is
 * pending, pause/resume, or close c. c may be freed on return. */
void worker_conn_done(struct worker *w, struct conn *c);
/* Run the input c buffered while it could not (a blocked client was served), then as
 * worker_conn_done. c may be freed on return. */
void worker_conn_resume(struct worker *w, struct conn *c);
/* Release every connection of w whose output is held (conn_hold_output): its output is
 * written (or queued for the turn's batched send) now, and input it had paused may run,
 * which may hold it again. Owner only; the holder calls it from srv->before_sleep (every
 * turn: nothing but a test when nothing is held). */
void worker_release_held_all(struct worker *w);
static inline void worker_release_held(struct worker *w)
{
    if (w->nheld)
        worker_release_held_all(w);
}

/* A long script runs on w's thread (called from its Lua hook past busy-reply-threshold):
 * serve w's other RESP connections once, without waiting, as Redis's
 * processEventsWhileBlocked: accept, read, run their commands (the cmd layer answers -BUSY
 * to those not allowed while busy: SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE do run) and
 * write the replies directly. self (the script's client, in the middle of its command) is not
 * read; memcached connections (which know nothing of -BUSY), connections whose batched I/O
 * of this turn is not applied yet, the mailbox, timers and the eventfd wait for the script to
 * end. Nothing is freed: connections closed here are freed at the end of the turn. Not
 * reentrant (a nested call returns at once); owner thread only. */
void worker_serve_busy(struct worker *w, struct conn *self);
/* Stop the whole server for us microseconds from a command on worker w (DEBUG SLEEP): w
 * sleeps, every other worker waits before its next turn's input until w is done. */
void srv_freeze(struct worker *w, int64_t us);

/* protected-mode (listen.c): whether the default user has no password (Redis's test, the
 * ACL layer's answer: cmd/acl_user.c sets it at start-up); NULL: requirepass is empty. */
extern int (*net_default_nopass_hook)(void);

#endif
