/* Command propagation to the append-only file (src/cmd/propagate.c; the log itself, its
 * files, rewrite and loading are src/persist, aof_log.h).
 *
 * When the AOF is on, a write command runs with its keys' stripes held by its thread
 * (store_hold_set, as EXEC does; every stripe for commands whose keys are not known from the
 * key specification), and its propagated form is appended to the shared AOF buffer before
 * the stripes are released. Two writes to one key therefore reach the log in the order they
 * took effect, whichever threads ran them. When the AOF is off the only cost is the test of
 * aof_on in cmd_exec. */
#ifndef TC_PROPAGATE_H
#define TC_PROPAGATE_H

#include <stdatomic.h>

#include "cmd/cmd.h"
#include "persist/aof_log.h" /* aof_on, aof_loading */
#include "store/store.h"        /* store_snap_active */

/* 1 once replication has a stream to feed (cmd/repl.h). */
extern _Atomic int repl_on;

/* Whether write commands are propagated: the AOF is on, or replication has a stream. */
static inline int prop_active(void)
{
    return (atomic_load_explicit(&aof_on, memory_order_relaxed) |
            atomic_load_explicit(&repl_on, memory_order_relaxed)) &&
           !aof_replaying; /* DEBUG LOADAOF: what the file says is not logged again */
}

struct mc_req;
struct srv;

/* Run cmd on c, logging it when the AOF is on (see above). Owner worker. */
void aof_exec(struct conn *c, const struct cmd *cmd);
/* A read-only command while a forkless snapshot runs: with store_snap_readonly set (its
 * stripes need no copy-before-write, store.h). */
void cmd_exec_readonly(struct conn *c, const struct cmd *cmd);
/* A write command while a forkless snapshot runs: one that names a single key runs under its
 * stripe, taken first so that the snapshot keeps that key's old value apart instead of
 * copying the whole stripe (store_snap_check_key); any other as usual. */
void cmd_exec_snap_write(struct conn *c, const struct cmd *cmd);
static inline void cmd_exec(struct conn *c, const struct cmd *cmd)
{
    if (TC_UNLIKELY(prop_active()))
        aof_exec(c, cmd);
    else if (TC_UNLIKELY(atomic_load_explicit(&store_snap_active, memory_order_relaxed)))
        (cmd->flags & CMD_READONLY) ? cmd_exec_readonly(c, cmd)
        : (cmd->flags & CMD_WRITE)  ? cmd_exec_snap_write(c, cmd)
                                    : cmd->fn(c);
    else
        cmd->fn(c);
}

/* Explicit propagation, by a write handler under its keys' stripes: the command(s) a replay
 * must run in place of the one that ran (SREM for SPOP, XADD with the ID it got, the XCLAIM
 * forms of XREADGROUP). Once a handler propagates anything, or calls cmd_prop_none, the
 * command itself is not propagated; several commands from one call are wrapped in
 * MULTI ... EXEC. All of them do nothing when nothing consumes the stream.
 * cmd_prop_on: 1 while the running command's effects are recorded (skip building them
 * otherwise). cmd_prop_begin starts one command of argc arguments (returns 0 when not
 * recording: then no cmd_prop_arg/end); cmd_prop_arg appends one argument (copied). */
int cmd_prop_on(struct conn *c);
/* 1 while a top-level command runs under the stripes aof_exec took for it (not inside EXEC, a
 * script or a nested call): store_held is set, yet a blocking command may block. */
int cmd_prop_may_block(void);
int cmd_prop_begin(struct conn *c, int argc);
void cmd_prop_arg(struct conn *c, const char *p, size_t n);
void cmd_prop_end(struct conn *c);
void cmd_propagate(struct conn *c, int argc, const struct slice *argv);
void cmd_prop_none(struct conn *c);
/* The consumers the records opened from now on are for (a script's redis.set_repl: aof 0
 * keeps them out of the AOF, repl 0 out of the replication stream); (1, 1) again after the
 * call. This thread only. */
void cmd_prop_target(int aof, int repl);

/* EXEC: called with the transaction's stripes held, around its commands; the commands it
 * logs are appended as one MULTI ... EXEC block. */
void aof_tx_begin(struct conn *c);
void aof_tx_end(struct conn *c);

/* memcached: run exec(c, r), logging the resulting items (memcached's handler). */
typedef void aof_mc_exec_fn(struct conn *c, struct mc_req *r);
/* 1 when r changes data (a write for the AOF, replication and a read-only replica). */
int aof_mc_is_write(const struct mc_req *r);
/* A memcached write on a read-only replica: 1 when it is refused (replication). */
static inline int mc_replica_refuses(void)
{
    extern _Atomic int repl_gate, repl_is_replica;
    return atomic_load_explicit(&repl_gate, memory_order_relaxed) &&
           atomic_load_explicit(&repl_is_replica, memory_order_relaxed) && cfg.replica_read_only;
}
#define MC_READONLY_TEXT "READONLY You can't write against a read only replica."
void aof_mc_exec(struct conn *c, struct mc_req *r, aof_mc_exec_fn *exec);
/* memcached's delayed flush_all came due: flush database 0 and log it. */
void aof_mc_flush(struct conn *c);

/* Keys removed by expiry or eviction: logged as DEL (the store's gone hook, under the key's
 * stripe lock; src/persist installs it while the AOF is on). */
void cmd_prop_gone(int db, const char *key, size_t klen);
/* Replication started: install cmd_prop_gone as the store's gone hook for good. */
void cmd_prop_gone_install(void);

/* Start-up (main thread, before the workers; the persist host's replay hooks, cmd_aof.c): a
 * connection to run the AOF's commands on (NULL: out of memory), running one command
 * (argv borrowed; -1 for an unknown command, logged), and freeing the connection. */
void *cmd_aof_replay_open(struct srv *srv);
int cmd_aof_replay(void *rctx, int argc, const char **argv, const size_t *lens);
void cmd_aof_replay_close(void *rctx);
/* cmd_aof_replay for a stream applied in batches (a replica's link): the caller reads the
 * wall clock once per batch (now_ms) and carries clk (start -1) from one command to the next,
 * so a command costs at most one clock read. An unknown command is run as any other (its
 * error reply is dropped), not logged. */
void cmd_aof_replay_batch(void *rctx, int argc, const char **argv, const size_t *lens,
                          int64_t now_ms, int64_t *clk);
/* BGREWRITEAOF and TC.MCSET into the command table. */
void cmd_aof_setup(void);

#endif
