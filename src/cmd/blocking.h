/* Blocking commands: BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP BZPOPMIN BZPOPMAX BZMPOP, and
 * CLIENT UNBLOCK. A blocking command first runs its non-blocking form; when nothing is there
 * the client is registered under each of its keys in one process-wide registry ((db, key) ->
 * FIFO of blocked clients, one mutex, a leaf lock) and stops reading commands. After any
 * write command names a key with waiters (block_signal_keys from cmd_call), the first waiter
 * of that key is marked ready and its worker woken; the owner worker retries the command for
 * it, and once served it signals its keys again so the next waiter gets what is left (first
 * blocked, first served). Timeouts are per worker: the epoll wait honours the nearest one. */
#ifndef TC_BLOCKING_H
#define TC_BLOCKING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conn;
struct cmd;
struct srv;

struct worker;

/* The retries a command woke, that its worker waits for before it runs the next one (as
 * Redis serves the clients a command unblocked before the next command): blocking.c. */
struct wake_scope {
    _Atomic int n; /* retries still to come */
};
extern __thread struct wake_scope *block_scope;
/* A worker thread's commands wait for the retries they wake (once per input batch). */
void block_scope_enter(struct worker *w);
/* After a command: wait for the retries it woke (the worker's own woken clients are served
 * meanwhile). Owner worker, no stripe held. */
void block_settle(struct worker *w);
static inline int block_settle_due(void)
{
    return block_scope && atomic_load_explicit(&block_scope->n, memory_order_relaxed) != 0;
}

/* Registrations (client, key) of all blocked clients: 0 lets writes skip signaling. */
extern _Atomic long block_waiters;

/* After a write command ran: wake the first waiter of each key it names (any worker). */
void block_signal_keys(struct conn *c, const struct cmd *cmd);
/* FLUSHDB (db) / FLUSHALL (-1) emptied keys they do not name: every waiter of db retries (a
 * blocked XREADGROUP then answers that its key is gone, as in Redis). Any thread. */
void block_signal_flush(int db);
/* (db, key) changed: its first popping waiter and every reading one retry. Any thread, any
 * locks held (block_lock is a leaf). */
void block_signal_key(int db, const char *p, size_t n);
/* A script runs on this thread (holding stripes): the signals of its writes wait for
 * block_defer_end, called once it released them, so the waiters it serves retry after the
 * script, as Redis serves them (and no worker waits for a stripe the script holds). */
void block_defer_begin(void);
void block_defer_end(void);
/* The command c just ran took took_us: when it blocked (not postponed), 1, and its slowlog
 * entry waits for its unblock, with its arguments as c has them now (as sent). cmd_call. */
int block_defer_slowlog(struct conn *c, int64_t took_us);
/* 1 while a blocked client's command is retried after a signal (its try_fn runs for a wake-up,
 * not for the first try or the one just after it blocked). Owner worker. */
int block_retrying(void);
/* Unblock c without a reply and forget its registration (close, RESET). Owner only. */
void block_reset(struct conn *c);
/* INFO blocked_clients (any thread). */
long block_nclients(void);
/* CLIENT UNBLOCK id [TIMEOUT|ERROR] (any worker): returns 1 if the client was blocked. */
int block_unblock_request(struct srv *srv, unsigned long long id, int error);
/* REPLICAOF host port (any thread): every blocked client but those postponed by CLIENT PAUSE
 * gets Redis's "-UNBLOCKED force unblock ... (master -> replica?)" and is closed after it (a
 * pop served later from the primary's stream would make the datasets differ). */
void block_unblock_all_role_change(struct srv *srv);
/* How a blocking command is tried and timed out: the fact its table entry points to
 * (cmd->block). It waits on the keys its key specs find with the access flag (the sources,
 * not BLMOVE's destination). */
struct block_spec {
    int (*try_fn)(struct conn *c); /* 1: replied (served or error), 0: nothing yet, no reply */
    /* a blocked client's retry after a signal, or NULL: try_fn (XREADGROUP runs itself again
     * through cmd_exec, so what it does is propagated under its stripes) */
    int (*retry_fn)(struct conn *c, const struct cmd *cmd);
    int tpos;                      /* timeout argument: >0 index, <0 from the end, 0 none */
    int multi_null_bulk;           /* inside MULTI: $-1 instead of *-1 */
    int reader;                    /* consumes nothing (XREAD): every waiter is woken */
    int wrongtype_waits;           /* at a retry, a key of another type is not ready (XREAD) */
    /* the reply at the timeout (and inside EXEC), or NULL: the null reply (WAIT: its count) */
    void (*timeout_fn)(struct conn *c);
    int postpone; /* not a blocking command: one postponed by CLIENT PAUSE (blocking.c) */
    int acks;     /* WAIT: tried again whenever a replica acknowledges (block_wake_waiters) */
};

/* CLIENT PAUSE: c's command cmd waits until the pause ends (until: ms), then runs as sent.
 * block_wake_postponed (CLIENT UNPAUSE) makes every postponed client look again. */
void block_postpone(struct conn *c, const struct cmd *cmd, int64_t until);
void block_wake_postponed(struct srv *srv);
/* A replica acknowledged its offset: every blocked WAIT looks again (any thread). */
void block_wake_waiters(struct srv *srv);
/* The end (ms) of the CLIENT PAUSE in effect or last set, 0 when none (cmd_conn.c). */
extern _Atomic int64_t cmd_pause_end;
/* The end (ms) of a CLIENT PAUSE that holds c's command cmd back, or 0 (cmd_conn.c). */
int64_t cmd_pause_until(struct conn *c, const struct cmd *cmd);
/* 1 when a CLIENT PAUSE in effect holds back the primary's command name (n bytes) on a
 * replica's link: ALL holds everything, WRITE what may write or replicate (any thread). */
int cmd_pause_holds_primary(const char *name, size_t n);
/* SHUTDOWN waits for its replicas (on 1): writes wait, as under CLIENT PAUSE WRITE, until it
 * ends or fails (0: the postponed commands run). CLIENT UNPAUSE does not end it. */
void cmd_pause_shutdown(struct srv *srv, int on);

/* The deadline (ms) of a timeout of ms milliseconds from now, 0 (none) for 0, and none
 * either when now + ms is past the clock's range (Redis 7.0's sum wraps negative, and such a
 * client waits until served). ms >= 0. */
int64_t block_deadline(long long ms);
/* A timeout in milliseconds at argv[i] (XREAD / XREADGROUP BLOCK, WAIT, CLIENT PAUSE): 0 and
 * *ms, or -1 after Redis's error reply (not an integer, negative). */
int block_arg_ms(struct conn *c, int i, long long *ms);
/* cmd (the running entry, with a block spec) on c: serve it now, or block c until deadline
 * (ms, 0: forever); inside EXEC answers the null reply instead. Owner worker. */
void block_until(struct conn *c, const struct cmd *cmd, int64_t deadline);
/* The caller tried cmd already and found nothing: block c until deadline (then try once
 * more, for a write that came between). Owner worker. */
void block_register(struct conn *c, const struct cmd *cmd, int64_t deadline);

/* Install the worker hooks (main thread, before the workers start). */
void block_setup(struct srv *srv);
void cmd_blocking_setup(void);

#endif
