/* Snapshot state of the server: SAVE, BGSAVE (fork with every stripe held for the fork only),
 * LASTSAVE, the `save` rules checked by worker 0's timer, INFO persistence, and the saves of
 * start-up (load) and shutdown. One mutex guards the state; it is a leaf (never held while
 * taking stripe locks, except by SAVE/BGSAVE which take the stripes after it, in order). */
#ifndef TC_PERSIST_H
#define TC_PERSIST_H

#include <stdatomic.h>

struct srv;
struct worker;
struct buf;

/* 1 when writes are refused with -MISCONF (last background save failed and
 * stop-writes-on-bgsave-error is set with save rules present). Read racily by workers. */
extern _Atomic int persist_misconf;

/* Start-up (main thread, before workers): load dir/dbfilename into the store, logging
 * progress. Returns 0 (loaded or no file) or -1 (corrupt: the server should exit). */
int persist_load(struct srv *srv);
/* Worker 0's timer: reap a finished BGSAVE child, start one when a save rule matches or one
 * was scheduled. */
void persist_tick(struct worker *w);
/* Synchronous save with every stripe held by the caller's thread or no workers running
 * (held_all: the caller already holds every stripe). Returns 0 or -1. */
int persist_save_now(struct srv *srv, int held_all);
/* At exit (workers joined): kill a running BGSAVE child and, when save rules exist or
 * force is set (SHUTDOWN SAVE), save. nosave skips it. Returns 0 or -1 (save failed). */
int persist_shutdown(struct srv *srv, int force, int nosave);
/* After FLUSHALL: when save rules exist, stop a running BGSAVE and save the empty dataset
 * now, as Redis does (so a crash cannot bring the flushed keys back). */
void persist_flushall(struct srv *srv);
/* The "# Persistence" INFO section. */
void persist_info(struct srv *srv, struct buf *b);
void cmd_persist_setup(void);

#endif
