/* Worker threads, each with its own epoll loop, listeners (SO_REUSEPORT) and connections,
 * and the process-wide context they share (struct srv: the store, the workers, counters).
 * Commands run on the worker that owns the connection. */
#ifndef TC_WORKER_H
#define TC_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "net/conn.h"

struct store;
struct srv;
struct skey;

/* Per-protocol hooks, set by the server: parse and run what rbuf holds (consuming it); called
 * after every read and when a paused connection drains. on_close frees protocol state. */
typedef void conn_input_fn(struct conn *c);
typedef void conn_close_fn(struct conn *c);

struct worker_stats {
    uint64_t commands;        /* total_commands_processed */
    uint64_t net_in;          /* bytes read */
    uint64_t net_out;         /* bytes written */
    uint64_t conns_received;  /* total_connections_received */
    uint64_t rejected;        /* rejected_connections */
    uint64_t dirty;           /* write commands run (rdb_changes_since_last_save) */
    uint64_t ops_sample[16];  /* commands at each of the last 16 ticks (instantaneous ops) */
    int64_t ops_sample_ms[16];
    int ops_idx;
};

struct worker {
    int idx;
    pthread_t tid;
    int ep;                    /* epoll fd */
    int evfd;                  /* eventfd: kill requests, shutdown */
    int lfd[4];                /* listening sockets */
    uint8_t lproto[4];         /* protocol of each listener */
    int nl;
    struct srv *srv;
    pthread_mutex_t list_lock; /* guards the list links and the shared conn fields */
    struct conn *conns;        /* all connections of this worker */
    int nconns;
    int64_t now_ms;            /* wall clock cached per loop turn */
    int64_t next_tick_ms;
    uint32_t expire_cursor;
    int expire_effort;         /* last active-expire share of expired keys (0..100) */
    int draining;              /* shutdown: no more input events, replies are being flushed */
    int accept_paused;         /* out of fds: listeners left out of epoll until the next tick */
    struct worker_stats st;    /* written by this worker only, read racily by INFO */
    struct skey *keys;         /* scratch array for multi-key commands */
    int keys_cap;
    char scratch[256];
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
    int64_t block_deadline;    /* owner only: nearest timeout of a blocked client, 0 none */
    struct conn **aof_wait;    /* owner only: connections whose replies wait for the AOF */
    int naof_wait, aof_wait_cap;
    /* owner only: batched socket I/O (io_uring). When batching, a loop turn reads every
     * readable connection with one submission, and the replies of the turn wait in flushq
     * until one submission sends them all. */
    void *uring;               /* the ring and its iovec space (worker.c), NULL: read/writev */
    int batching;              /* after_io queues output instead of writing it */
    struct conn **flushq, **flushq2;
    int nflush, flush_cap, flush2_cap;
    struct conn *dead;         /* closed during this turn; freed at its end */
} __attribute__((aligned(64)));

/* A delivery for connection c: msg is owned by the cmd layer (on_deliver / on_discard). */
struct mbox_msg {
    struct conn *c;
    void *msg;
};

struct srv {
    struct store *store;
    struct worker *workers;
    int nworkers;
    _Atomic int shutdown;         /* 1: stop; workers close their connections and exit */
    _Atomic int shutdown_exitcode;
    _Atomic uint64_t next_client_id;
    _Atomic int nclients;         /* connected clients, both protocols */
    _Atomic int uring_workers;    /* workers batching their socket I/O in io_uring (INFO) */
    int64_t start_ms;
    conn_input_fn *on_input[2];
    conn_close_fn *on_close[2];
    const char *executable;
    const char *config_file;
    void (*on_tick0)(struct worker *w); /* persistence timer, run by worker 0's tick */
    _Atomic uint64_t stat_reset_ms;
    /* cmd layer hooks for cross-thread work, run on the owner worker:
     * on_deliver writes a mailbox message into c's output (and releases it), on_discard
     * releases one whose connection closed; on_wakeup runs after every eventfd wake-up
     * (blocked clients made ready by other threads); on_timer runs once now_ms reaches
     * block_deadline. */
    void (*on_deliver)(struct conn *c, void *msg);
    void (*on_discard)(void *msg);
    void (*on_wakeup)(struct worker *w);
    void (*on_timer)(struct worker *w);
    /* run by every worker before it sleeps (the AOF writes its buffer); then the replies of
     * connections marked CONN_AOF_WAIT are flushed */
    void (*before_sleep)(struct worker *w);
};

/* Create the workers and their listeners (port/memcache port on every bind address). Returns
 * 0 or -1 with a logged reason. Runs on the main thread before workers start. */
int srv_listen(struct srv *srv);
/* Start / join every worker thread. */
int srv_start(struct srv *srv);
void srv_join(struct srv *srv);
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

#endif
