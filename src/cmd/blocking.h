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

struct conn;
struct cmd;
struct srv;

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
/* Unblock c without a reply and forget its registration (close, RESET). Owner only. */
void block_reset(struct conn *c);
/* INFO blocked_clients (any thread). */
long block_nclients(void);
/* CLIENT UNBLOCK id [TIMEOUT|ERROR] (any worker): returns 1 if the client was blocked. */
int block_unblock_request(struct srv *srv, unsigned long long id, int error);
/* XREAD ... BLOCK ms (cmd_stream.c after parsing): serve now, or block until an entry
 * arrives after the IDs ("$" resolved now) or ms passes (0 = forever). */
struct slice;
void block_stream(struct conn *c, long long ms, int first, int nkeys);
/* Provided by cmd_stream.c: serve XREAD if something is there (1: replied, 0: nothing, no
 * reply), and the last ID of a stream key as "ms-seq" ("0-0" when missing). */
int xread_try(struct conn *c);
int xread_last_id(struct conn *c, const struct slice *key, char *out, size_t cap);
/* XREADGROUP ... BLOCK ms with nothing to serve yet: register until an entry arrives or ms
 * passes (0 = forever). */
void block_xreadgroup(struct conn *c, long long ms);
/* Provided by cmd_stream_cg.c: serve XREADGROUP now (1: replied, 0: nothing), and its retry
 * for a blocked client (the key or group gone is then an error). */
int xreadgroup_try(struct conn *c);
int xreadgroup_retry(struct conn *c);

/* How XREAD and XREADGROUP block: their table entries point here (cmd->block). */
struct block_spec;
extern const struct block_spec block_spec_xread, block_spec_xreadgroup;

/* Install the worker hooks (main thread, before the workers start). */
void block_setup(struct srv *srv);
void cmd_blocking_setup(void);

#endif
