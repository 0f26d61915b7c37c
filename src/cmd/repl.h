/* Replication, as Redis 7.0 speaks it (PSYNC2), in both roles.
 *
 * The stream. What a primary sends its replicas is its propagation stream: the records
 * propagate.c builds for the AOF (under the stripes of the keys they change, so in effect
 * order across worker threads), turned into RESP with a SELECT before each change of
 * database, appended to one chain of refcounted blocks (repl_master.c). The chain is also the
 * backlog: its last repl-backlog-size bytes stay for partial resyncs. A replica's connection
 * sends the chain by reference (conn_add_ref on the blocks, no copy): its owner worker adds
 * what is new before it sleeps, woken by the worker that fed the bytes.
 *
 * Full sync. PSYNC that cannot continue registers the replica; worker 0's timer forks a
 * snapshot child (snapshot.h) once repl-diskless-sync-delay has passed. With every stripe
 * held, the parent notes the stream offset of the copy; the child writes +FULLRESYNC and the
 * RDB straight to the replicas' sockets (EOF-marked with repl-diskless-sync, else written to
 * dbfilename first and sent with its length). When the child is done the replicas go online
 * from that offset: the blocks since then were kept for them.
 *
 * The replica side (repl_replica.c) is one thread per link with a blocking socket: the
 * handshake, the RDB into a file and loaded with every stripe held, then the stream applied
 * command by command on a connection of no worker (as the AOF is replayed), each command's
 * bytes appended to this server's own chain as they came, so its sub-replicas, and itself
 * once promoted, continue with the same replication ID and offsets.
 *
 * Locks: the chain's mutex is a leaf taken under stripes (feeding); the sync mutex (the child)
 * is taken before stripes. */
#ifndef TC_REPL_H
#define TC_REPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conn;
struct cmd;
struct buf;
struct worker;
struct srv;

/* 1 once a backlog exists (a replica connected, or this server is a replica): write
 * commands are propagated (propagate.h tests aof_on | repl_on). */
extern _Atomic int repl_on;
/* Nonzero while some write may have to be refused (a read-only replica, min-replicas-to-write
 * set, a stale replica with replica-serve-stale-data no): cmd_call asks repl_refuse. */
extern _Atomic int repl_gate;
/* The thread applying a primary's stream (its commands are not fed again: their bytes are). */
extern _Thread_local int repl_applying;
/* 1 while a full sync's RDB is loaded: clients get -LOADING (commands flagged loading run). */
extern _Atomic int repl_loading;

/* Feed propagation records ([int32 db][uint32 len][RESP], propagate.c) to the stream, under
 * the stripes of the keys they change. Returns the stream offset after them. */
uint64_t repl_feed(const char *recs, size_t n);
/* repl_feed, then (f not NULL) one command of database db as its fn RESP bytes f: the frame
 * a client sent, fed without a copy into a record first. */
uint64_t repl_feed_frame(const char *recs, size_t n, int db, const char *f, size_t fn);
/* One command of no database to the stream alone (DEBUG REPLICATE): not applied here. */
struct slice;
void repl_feed_argv(int argc, const struct slice *argv);
/* The replica's link (from_aof 0) or the AOF's loading (1) applied a command that answered
 * the error e (n bytes, no CRLF): logged as Redis's afterErrorReply does ("== CRITICAL ==
 * ..."), counted in INFO's unexpected_error_replies, and, as propagation-error-behavior
 * says (panic: both; panic-on-replicas: a read-only replica's link), the server panics.
 * name is the command's, NULL unknown. */
void repl_applied_error(int from_aof, const char *name, const char *e, size_t n);
/* INFO stats unexpected_error_replies. */
extern _Atomic uint64_t repl_unexpected_errors;
/* Bytes exactly as received from the primary (the replica's link thread). */
void repl_feed_raw(const char *p, size_t n);
/* min-replicas-to-write: 1 when enough good replicas are attached (or it is off, or this is
 * a replica) for a write, as Redis's checkGoodReplicasStatus; a script asks it before it
 * writes. */
int repl_good_replicas_ok(void);
#define REPL_NOREPLICAS_TEXT "NOREPLICAS Not enough good replicas to write."
/* Refuse c's command cmd for replication's sake: 1 after the error reply, else 0. */
int repl_refuse(struct conn *c, const struct cmd *cmd);
/* The error repl_refuse would answer for a command with these CMD_* flags, or NULL (EXEC
 * asks with its queued commands' flags and answers EXECABORT with it). */
const char *repl_refuse_why(struct conn *c, uint64_t flags);
/* Before a worker sleeps: send the stream to its replicas, wake the workers of the others,
 * ask for ACKs when a WAIT waits. */
void repl_before_sleep(struct worker *w);
/* Worker 0's timer: start and reap full syncs, PINGs, timeouts, the backlog's TTL. */
void repl_tick(int64_t now_ms);
/* SHUTDOWN's final save is the stream's last point: 1 stops repl_tick (no PING, no replica
 * brought online) so the offset saved is the one the replicas hold; 0 when the shutdown
 * failed and the server goes on. */
void repl_quiesce(int on);
/* CONFIG SET masterauth: the password the link authenticates with, n bytes (binary safe). */
void repl_masterauth_set(const char *p, size_t n);
/* After CONFIG SET or a role change: whether cmd_call must ask repl_refuse. */
void repl_update_gate(void);
/* A replica's connection closed (cmd_resp_close). */
void repl_conn_closed(struct conn *c);
/* INFO: "# Replication" and the sync_* counters of "# Stats". */
void repl_info(struct buf *b);
void repl_info_stats(struct buf *b);
/* CONFIG RESETSTAT: sync_full, sync_partial_ok, sync_partial_err back to 0. */
void repl_reset_stats(void);
/* INFO memory: mem_replication_backlog, mem_total_replication_buffers (the blocks of the
 * stream alive, shared by the backlog and every replica's output). */
void repl_info_memory(struct buf *b);
/* Bytes of the replication buffer beyond the backlog: the replicas' output, which maxmemory
 * does not count (INFO mem_not_counted_for_evict). Any thread, lock-free. */
size_t repl_not_counted_bytes(void);
/* ROLE's reply. */
void repl_role(struct conn *c);
/* Replicas acknowledging at least c's last write (WAIT). */
int repl_count_acks(uint64_t off);

/* persist_host.repl_aux (every stripe held): the ID and offset matching the data, for the
 * RDB's AUX fields. */
int repl_rdb_aux(char id[41], unsigned long long *off, int *db);
/* The database the link's stream is in (under the link's apply mutex), and the one a link
 * starts in (restored from the RDB). */
int repl_link_db(void);
void repl_link_set_db(int db);
/* After the start-up load: a file saved with replication's ID and offset continues them (a
 * replica asks to PSYNC from there; a primary keeps them as its second ID). */
void repl_after_load(void);
/* The link thread is between batches (trylock of its apply mutex) / done. */
int repl_link_quiet_begin(void);
void repl_link_quiet_end(void);

/* SHUTDOWN's wait for lagging replicas (repl_shutdown.c, Redis 7.0's shutdown-timeout). */
enum { REPL_SHUT_SAVE = 1, REPL_SHUT_NOSAVE = 2, REPL_SHUT_NOW = 4, REPL_SHUT_FORCE = 8 };
enum { REPL_SHUT_DONE = 0, REPL_SHUT_WAITING = 1, REPL_SHUT_FAILED = -1 };
/* Begin a shutdown with REPL_SHUT_* flags (SHUTDOWN's worker, or the main thread for a
 * signal): REPL_SHUT_DONE (the save is done, the server exits: srv_request_shutdown was
 * called), REPL_SHUT_FAILED (logged, cancelled: the server goes on) or REPL_SHUT_WAITING (it
 * waits for the replicas, writes paused; also when a shutdown already waits). */
int repl_shutdown_begin(int flags, int from_signal);
/* The main thread, often while one waits: finish it once every replica acknowledged the
 * stream or shutdown-timeout passed. */
void repl_shutdown_tick(void);
/* SHUTDOWN ABORT: 0 when a waiting shutdown was cancelled, -1 when none waited. */
int repl_shutdown_abort(void);
/* INFO's shutdown_in_milliseconds, or -1 when no shutdown waits. */
int64_t repl_shutdown_in_ms(void);
/* A blocked SHUTDOWN client: 1 when the shutdown it waited with failed or was aborted. */
int repl_shutdown_blocked_done(void);
/* Replicas that did not acknowledge the whole stream; log: log each (and the count in sync)
 * as Redis's finishShutdown does. */
int repl_lagging_replicas(int log);

/* Shutdown (main thread, before the workers are joined): stop the link and wait for its
 * thread, kill a full sync's child. */
void repl_shutdown(void);
void repl_sync_shutdown(void);

/* Main thread, before the workers: remember srv, create the replication ID; start the link
 * when replicaof is configured. */
void repl_setup(struct srv *srv);
void cmd_repl_setup(void);
/* After the workers started: follow the configured replicaof, if any. */
void repl_start_configured(void);

/* ---- shared by repl_master.c and repl_replica.c ---- */
extern _Atomic int repl_is_replica; /* role: 1 replica */
/* The replication ID and offset this server continues from (the replica side after a sync,
 * REPLICAOF NO ONE's shift of IDs). */
void repl_get_id(char id[41], uint64_t *off);
void repl_set_id(const char *id, uint64_t off, int keep_old_as_second);
/* Forget the backlog and start a new one at offset off (a replica after a full sync). */
void repl_reset_backlog(uint64_t off);
/* Close every replica connection (they reconnect and resync). */
void repl_drop_replicas(void);
/* Wake the workers of the online replicas (the link thread fed the stream). */
void repl_wake_replicas(void);
/* A WAIT blocked: ask the replicas for their offsets (REPLCONF GETACK, before the worker
 * sleeps). */
void repl_ask_acks(void);
void cmd_repl_master_setup(void);
/* FAILOVER (repl_replica.c): INFO's master_failover_state, worker 0's timer step, and the
 * target's side: become the primary, dropping the replicas but keep (the old primary). */
const char *repl_failover_state(void);
void repl_failover_tick(int64_t now);
void repl_promote_except(struct conn *keep);
void repl_drop_replicas_except(struct conn *keep);
/* An online replica at host:port (any, when host is NULL) that acknowledged the whole stream
 * (or any online one with any_state): its address. 1 found, 0 none. */
int repl_caught_up(const char *host, int port, int any_state, char *ip, size_t ipcap,
                   int *port_out);
/* A replica at host:port: 0 none, 1 not online yet, 2 online. */
int repl_find_replica(const char *host, int port);
int repl_online_replicas(void);
/* A new random replication ID (40 hex digits). */
void repl_random_id(char id[41]);
/* The link's part of INFO replication and ROLE (repl_replica.c). */
void repl_link_info(struct buf *b);
void repl_link_role(struct conn *c);
int repl_link_up(void);
/* CLIENT KILL of the link to the primary (Redis's master client): when the link is up and
 * its peer address is addr and its own laddr (either "" for any), it is closed (the link
 * reconnects and asks to continue, as Redis's replica does). 1 killed, 0 none. */
int repl_link_kill(const char *addr, const char *laddr);
/* The primary's address and link state for INFO/ROLE; replicaof_apply starts or stops the
 * link (host NULL: NO ONE). Returns 0, or 1 when already following host:port. */
int repl_replicaof_apply(const char *host, int port);
extern struct srv *repl_srv;
/* Bytes the link read from the primary (INFO total_net_repl_input_bytes; relaxed). */
extern _Atomic uint64_t repl_link_net_in;

#endif
