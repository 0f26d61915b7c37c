/* Client-side caching (CLIENT TRACKING): a table from key name to the IDs of the clients
 * that read it, split in shards by key hash (each its own mutex, touched only by tracking
 * clients' reads and by writes of tracked keys), and a registry of tracking clients. A write,
 * expiry or eviction of a tracked key posts an invalidation to each reader (RESP3 push, or a
 * __redis__:invalidate message to the REDIRECT client) and forgets the key. With no tracking
 * client, tracking costs a write one relaxed load. */
#ifndef TC_TRACKING_H
#define TC_TRACKING_H

#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>

#include "core/util.h"

struct conn;
struct cmd;
struct buf;

/* Tracking clients (any mode): 0 makes every hook a no-op. */
extern _Atomic long tracking_nclients;
/* The ID of the client whose command runs on this thread (NOLOOP), 0 for none. */
extern __thread uint64_t tracking_writer;

/* Key (db is ignored, as Redis tracks names) was modified: invalidate it for its readers
 * and the broadcast clients whose prefixes match. Any thread, stripe lock held or not. */
void tracking_invalidate_slow(const char *p, size_t n);
static inline void tracking_invalidate(int db, const char *p, size_t n)
{
    (void)db;
    if (TC_UNLIKELY(atomic_load_explicit(&tracking_nclients, memory_order_relaxed) != 0))
        tracking_invalidate_slow(p, n);
}
/* Set while the store evicts before this connection's command: invalidations for it are
 * written to its output at once instead of after the command (owner thread). */
extern __thread struct conn *tracking_now_conn;
/* The server's timer (one worker): keep the table within tracking-table-max-keys. */
void tracking_tick(void);
/* Before c's command (queued ones too), as Redis's processCommand: trim a table over
 * tracking-table-max-keys; c's own invalidations go out before its reply. */
void tracking_limit_slow(struct conn *c);
static inline void tracking_limit(struct conn *c)
{
    if (TC_UNLIKELY(atomic_load_explicit(&tracking_nclients, memory_order_relaxed) != 0))
        tracking_limit_slow(c);
}
/* Send the broadcast (BCAST) invalidations this thread's command or sweep collected: one
 * message per client and prefix (notify_flush calls it; no stripe may be held). */
void tracking_bcast_flush(void);
/* c (c->trk set) will read key p (its command's only key) soon, pipelined: prefetch its place
 * in the table and return its hash there, for tracking_after_command (c->trk_hash), or 0. */
uint64_t tracking_prefetch(struct conn *c, const char *p, size_t n);
/* FLUSHDB / FLUSHALL / flush_all: a null invalidation to every tracking client; the table
 * is emptied. */
void tracking_flush(void);
/* After cmd ran for c (owner), c tracking: remember the keys a read-only command read. */
void tracking_after_command(struct conn *c, const struct cmd *cmd);
/* A script that c runs with cmd (EVAL, FCALL...) called a read-only command: c, tracking,
 * remembers cmd's keys (the script's declared keys), as Redis. Owner thread of c. */
void tracking_remember_caller_keys(struct conn *c, const struct cmd *cmd);
/* c closes (owner): tracking off. */
void tracking_close(struct conn *c);
/* Bytes of c's tracking state and BCAST prefixes (client memory; owner only). */
size_t tracking_mem(const struct conn *c);
/* CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO (argv[1] names it). */
void tracking_client_command(struct conn *c);
/* Remember srv (main thread, before the workers start). */
struct srv;
void tracking_setup(struct srv *srv);
/* INFO: tracked keys, tracking clients, broadcast prefixes. */
long tracking_total_keys(void);
long tracking_total_items(void);
long tracking_total_prefixes(void);

#endif
