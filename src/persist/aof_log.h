/* The append-only log, run: when the shared buffer (aof.h) is written and fsync'd, the
 * multi-part files and their rewrite, loading at start-up, turning it on and off. What goes
 * in, and in which form, is the command layer's business (src/cmd/propagate.c): it appends
 * records with aof_log_append while it holds the stripes of the keys they change.
 *
 *   aof_log.c     group commit before a worker sleeps, the everysec fsync thread, CONFIG SET
 *                 appendonly, shutdown
 *   aof_rewrite.c BGREWRITEAOF and automatic rewrites (a snapshot job, snapshot.h), INFO
 *   aof_boot.c    loading the manifest's files at start-up, creating the first AOF
 *
 * Durability. The command layer marks the connections whose commands it logged; before a
 * worker sleeps it calls aof_before_sleep, which writes the shared buffer up to what this
 * thread appended (and with appendfsync always fsyncs it: one fsync covers everything
 * appended by every worker so far, and a worker whose bytes another worker's fsync covered
 * returns at once); then the worker flushes those replies. So an acknowledged write is in the
 * file before its reply leaves (fsync'd with always); everysec fsyncs from a background
 * thread once a second.
 *
 * Locks: the AOF state mutex (aof_lock) is taken before stripes, never after; a thread inside
 * EXEC (holding stripes) only tries it. The buffer's own mutexes (aof.h) are leaves. */
#ifndef TC_AOF_LOG_H
#define TC_AOF_LOG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct buf;

/* 1 while commands are logged. Written under aof_lock, read racily (every write command). */
extern _Atomic int aof_on;

/* 1 while the AOF is replayed at start-up (other persistence hooks stay quiet). */
int aof_loading(void);
/* Set while this thread replays the AOF outside start-up (DEBUG LOADAOF): the commands it
 * runs are neither logged nor sent to replicas (propagate.h). */
extern _Thread_local int aof_replaying;
/* DEBUG LOADAOF (a worker, not inside EXEC): write and fsync the buffer, then with every
 * stripe held empty the keyspace and load the AOF the manifest on disk lists, as Redis does.
 * A file that does not load ends the process (exit 1, logged), as Redis's does. Returns 0, or
 * -1 when out of memory (nothing done). */
int aof_debug_loadaof(void);
/* DEBUG AOF-FLUSH-SLEEP: microseconds each write of the buffer to the file sleeps first. */
extern _Atomic int aof_flush_sleep_us;
/* The name of the AOF file being replayed ("" when none): for the replay's log lines. */
const char *aof_loading_name(void);

/* Append records ([int32 db][uint32 len][RESP], aof.h) to the shared buffer and remember, for
 * this thread, that its next aof_before_sleep must write them. Any thread, with the stripes
 * of the keys the records change held (that is what orders the log). recs copied. */
void aof_log_append(const char *recs, size_t n);
/* A worker (index idx < persist_host.nworkers) is about to sleep: count its loop turn and
 * write (always: fsync) what this thread appended. With appendfsync always a write error
 * ends the process, as Redis does. */
void aof_before_sleep(int idx);

/* Start-up, main thread (persist_load): load the AOF (appendonly yes) and open it for
 * appending. Returns 1 when the AOF is off (the caller loads the RDB), 2 when it is on but
 * there is none yet (the caller loads the RDB, then aof_boot_create), 0 when loaded, -1 on a
 * fatal error (logged). */
int aof_boot(void);
/* After the RDB was loaded at start-up with appendonly yes and no AOF yet: create one (a
 * base file from the store and an empty incr file). 0 or -1. */
int aof_boot_create(void);
/* Worker 0's timer (from persist_tick): reap the rewrite child, start an automatic or
 * scheduled rewrite. */
void aof_tick(void);

/* BGREWRITEAOF (a worker; inside EXEC it only tries aof_lock). With appendonly no it writes
 * a base file and a manifest listing it alone, as Redis 7.0. */
enum {
    AOF_RW_OK = 0,    /* started */
    AOF_RW_SCHEDULED = 1, /* a BGSAVE runs, or inside EXEC: started by the timer later */
    AOF_RW_BUSY = -1, /* a rewrite is running (or aof_lock is busy, inside EXEC) */
    AOF_RW_ERR = -3,  /* could not start (logged) */
};
/* BGREWRITEAOF; in_exec: from inside MULTI/EXEC, where Redis only schedules it. */
int aof_rewrite_request(int in_exec);
/* CONFIG SET appendonly, from worker self (its own loop is not waited for). Turning on waits
 * for every other worker to finish its loop turn, then starts the first rewrite (inside EXEC:
 * schedules it for the timer, as Redis). Returns 0 or -1 (err filled). */
int aof_set_enabled(int self, int on, char *err, size_t cap);
/* Shutdown: stop a rewrite, write and fsync what is buffered. */
void aof_shutdown(void);
/* 1 while the AOF just turned on writes its first file (Redis's AOF_WAIT_REWRITE with its
 * child running): SHUTDOWN without FORCE fails then ("Writing initial AOF, can't exit."). */
int aof_initial_rewrite_running(void);
/* INFO persistence: the aof_* fields. */
void aof_info(struct buf *b);

#endif
