/* MONITOR: every command any worker runs, as Redis's line
 * "+<secs>.<usecs> [<db> <addr>] "arg" ...", posted to each monitoring connection's worker.
 * With no monitor attached the feed costs one relaxed load. */
#ifndef TC_MONITOR_H
#define TC_MONITOR_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/util.h"

struct conn;
struct cmd;

extern _Atomic long monitor_count;

/* c ran cmd (c->argv): post its line to every monitor. Any worker; fake clients (fd < 0)
 * show as "lua". */
void monitor_feed_slow(struct conn *c, const struct cmd *cmd);
static inline void monitor_feed(struct conn *c, const struct cmd *cmd)
{
    if (TC_UNLIKELY(atomic_load_explicit(&monitor_count, memory_order_relaxed) != 0))
        monitor_feed_slow(c, cmd);
}
/* The same with the arguments given (EXEC, whose argv the transaction reused). */
struct slice;
void monitor_feed_argv(struct conn *c, const struct cmd *cmd, int argc, const struct slice *argv);
/* 1 when cmd's line goes out before it runs (scripts: their commands follow their line). */
int monitor_feeds_before(const struct cmd *cmd);
/* The arguments of cmd's line (argv) that MONITOR and SLOWLOG show as "(redacted)", as
 * Redis's redactClientCommandArgument: bit i for argument i (the first 64). */
uint64_t cmd_redact_mask(const struct cmd *cmd, int argc, const struct slice *argv);
/* A worker thread ends: free its line buffer. */
void monitor_thread_exit(void);
/* c closes (owner): it monitors no more. */
void monitor_close(struct conn *c);
void cmd_monitor_setup(void);

#endif
