/* MULTI/EXEC/DISCARD/WATCH/UNWATCH. EXEC runs the queued commands while holding every stripe
 * they touch (all stripes when a command's keys are not known from its key specification),
 * so a transaction is atomic against every client on every worker. WATCH records the key's
 * CAS value (assigned on demand); any write through cmd_call clears the CAS of the keys it
 * names while watchers exist, and deletion, expiry, eviction and replacement change or remove
 * the item, so EXEC sees every modification. */
#ifndef TC_MULTI_H
#define TC_MULTI_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

struct conn;
struct cmd;

/* Keys watched by all clients; when 0 writes skip the invalidation step. */
extern _Atomic long tx_watched_keys;

/* In MULTI and cmd is not one that runs immediately: queue it (+QUEUED). Returns 1 if
 * queued. */
int tx_maybe_queue(struct conn *c, const struct cmd *cmd);
/* 1 while EXEC runs c's queued commands (a blocking command then never blocks). */
int tx_in_exec(const struct conn *c);
/* 1 when a command queued in c's transaction may write. */
int tx_has_writes(const struct conn *c);
/* The flags EXEC is checked with (exec_flags: its own), as Redis checks it: write and
 * denyoom when a queued command is, stale and loading only when every queued command is. */
uint64_t tx_exec_flags(const struct conn *c, uint64_t exec_flags);
/* 1 between MULTI and EXEC/DISCARD. */
int tx_active(const struct conn *c);
/* A command was rejected while in MULTI: EXEC will answer EXECABORT. */
void tx_flag_error(struct conn *c);
/* After a write command: make watched copies of its keys stale. */
void tx_touch_keys(struct conn *c, const struct cmd *cmd);
/* Forget the transaction and the watched keys (RESET, connection close). */
void tx_reset(struct conn *c);
/* Bytes of c's MULTI queue and watched keys (client memory; owner only). */
size_t tx_mem(const struct conn *c);
void cmd_multi_setup(void);


#endif
