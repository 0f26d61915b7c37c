/* Persistence, the server's side: RDB snapshots (SAVE, BGSAVE, the `save` rules, LASTSAVE,
 * INFO persistence, the load at start-up and the save at shutdown) in persist.c; the
 * append-only log in aof_log.h. src/persist knows the store and the configuration, not the
 * command or network layers: what it needs from them (write counts, waking the workers,
 * running a command of the AOF at boot, logging expired keys) comes through struct
 * persist_host, filled by src/server/main.c.
 *
 * Threads: persist_setup and persist_load run on the main thread before the workers;
 * persist_tick on worker 0's timer; the command entry points, persist_flushall and
 * persist_info on any worker; persist_shutdown on a worker (SHUTDOWN) or on the main thread
 * once the workers are joined.
 *
 * Locks: one mutex (plock) guards the snapshot state. It is taken before stripe locks, never
 * after (SAVE/BGSAVE take the stripes after it, in ascending order); a thread inside EXEC,
 * which holds stripes already, only tries it (and answers "already in progress"). INFO takes
 * the AOF's mutex (aof_log.h) under plock: plock, then aof_lock, then stripes. */
#ifndef TC_PERSIST_H
#define TC_PERSIST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct buf;

struct persist_host {
    struct store *store;
    int64_t start_ms;  /* server start (unix ms): LASTSAVE until the first save */
    int nworkers;      /* worker indexes given to aof_before_sleep/aof_set_enabled are below */
    void *ctx;         /* given back to dirty, wake_workers and replay_open */
    /* Write commands run so far, summed over the workers (any thread, racy reads). */
    uint64_t (*dirty)(void *ctx);
    /* Wake every worker's loop (any thread). Returns 0, or -1 when the workers are not up. */
    int (*wake_workers)(void *ctx);
    /* Start-up, main thread: a context that runs the commands of the AOF (NULL: out of
     * memory); replay runs one (argv borrowed; -1 stops loading: unknown command, logged);
     * replay_close frees the context. */
    void *(*replay_open)(void *ctx);
    int (*replay)(void *rctx, int argc, const char **argv, const size_t *lens);
    void (*replay_close)(void *rctx);
    /* Installed as store_gone_hook while the AOF is on: logs a key removed by expiry or
     * eviction, under its stripe lock. */
    void (*gone)(int db, const char *key, size_t klen);
    /* Replication's ID and offset matching the dataset, called with every stripe held (SAVE,
     * BGSAVE's step before the fork, shutdown): 1 with id/off filled when there is one (they
     * go in the file as AUX repl-id / repl-offset, as Redis writes them), else 0. NULL: none. */
    int (*repl_aux)(char id[41], unsigned long long *off, int *db);
};

/* Main thread, before persist_load: remember the host (copied). */
void persist_setup(const struct persist_host *h);

/* 1 when writes are refused with -MISCONF (last background save failed and
 * stop-writes-on-bgsave-error is set with save rules present). Read racily by workers. */
extern _Atomic int persist_misconf;
/* 1 while replication's full sync writes its RDB (set by src/cmd/repl_master.c): INFO's
 * rdb_bgsave_in_progress counts it, as Redis's BGSAVE for SYNC. */
extern _Atomic int persist_repl_sync_running;

/* Start-up (main thread, every stripe held; the workers already answer -LOADING, see
 * persist_booting): load the AOF (appendonly yes and one exists) or
 * dir/dbfilename into the store, logging progress; with appendonly yes and no AOF yet,
 * create one. Returns 0 (loaded or no file) or -1 (corrupt: the server should exit). */
int persist_load(void);
/* Worker 0's timer (now_ms: its cached clock): reap a finished BGSAVE child, start one when a
 * save rule matches or one was scheduled; then the AOF's tick (aof_tick). */
void persist_tick(int64_t now_ms);
/* Synchronous save with every stripe held by the caller's thread or no workers running
 * (held_all: the caller already holds every stripe). Returns 0 or -1. */
int persist_save_now(int held_all);
/* At exit (workers joined), or SHUTDOWN from a worker: stop the AOF (aof_shutdown), kill a
 * running BGSAVE child and, when save rules exist or force is set (SHUTDOWN SAVE), save.
 * nosave skips it. Returns 0 or -1 (save failed). Runs once: later calls return 0. */
int persist_shutdown(int force, int nosave);
/* SIGTERM / SIGINT, main thread, workers still running: the save shutting down makes (save
 * rules present), ahead of stopping them. -1 when it failed (logged "Error trying to save
 * the DB, can't exit."): the server keeps running, as Redis does. persist_shutdown later
 * does not save again unless something was written meanwhile. */
int persist_shutdown_signal(void);
/* After FLUSHALL (worker, maybe inside EXEC): when save rules exist, stop a running BGSAVE and
 * save the empty dataset now, as Redis does (so a crash cannot bring the flushed keys back).
 * Nothing while the AOF is replayed at start-up. */
void persist_flushall(void);
/* The "# Persistence" INFO section, the aof_* fields included (any worker). */
void persist_info(struct buf *b);

/* Command entry points (a worker; inside EXEC they only try plock). */
enum {
    PERSIST_OK = 0,
    PERSIST_SCHEDULED = 1, /* BGSAVE SCHEDULE while a child runs: started by the timer later */
    PERSIST_BUSY = -1,     /* a background save is in progress (or plock is, inside EXEC) */
    PERSIST_ERR = -2,      /* the save failed (logged) */
};
/* SAVE: save now with every stripe held. PERSIST_OK, PERSIST_BUSY or PERSIST_ERR. */
int persist_save(void);
/* BGSAVE [SCHEDULE]: fork a child that saves (snapshot.h). PERSIST_OK (started),
 * PERSIST_SCHEDULED, PERSIST_BUSY or PERSIST_ERR. */
int persist_bgsave(int schedule);
/* DEBUG RELOAD: with every stripe held, save (save), empty the keyspace and the functions
 * (flush), then load the RDB file again (merge: its keys and libraries replace those that
 * exist; without it a library that exists fails the load). PERSIST_OK, PERSIST_BUSY or
 * PERSIST_ERR (err: why the load failed, "" when the save did). */
int persist_reload(int save, int flush, int merge, char *err, size_t cap);
/* Replication: with every stripe held, empty the keyspace and the functions and load path
 * (a full sync's RDB). 0, or -1 with err. *stream_db: the file's repl-stream-db (0 when
 * absent), the database the primary's stream continues in. */
int persist_load_replica(const char *path, int *stream_db, char *err, size_t cap);
/* 1 while a dataset loads (start-up, persist_load_replica, DEBUG RELOAD / LOADAOF): INFO
 * persistence loading:1 and its loading_* progress; other clients are answered -LOADING. */
extern _Atomic int persist_loading;
/* 1 when start-up has a file to load (appendonly yes, or the RDB exists): only then does the
 * server say it is loading, as Redis enters its loading state only for a file it opened. It
 * also starts the load's progress (persist_load_begin with the RDB's size). */
int persist_boot_may_load(void);
/* 1 while the start-up load runs with the workers already serving (src/server/main.c): their
 * timers leave the store alone, and a SIGTERM ends the server at once. */
extern _Atomic int persist_booting;
/* A load starts: INFO's loading_start_time and progress restart, loading_total_bytes total. */
void persist_load_begin(size_t total);
/* Wait until every worker but self finished the loop turn it was in (a switch that commands
 * read racily, such as replication's, is seen by all of them afterwards). */
void persist_wait_workers(int self);
/* Set by replication: turning the AOF off keeps store_gone_hook (expired keys still go to the
 * replication stream). */
extern _Atomic int persist_keep_gone_hook;

/* The replication ID and offset of the RDB loaded at start-up (1), or 0 when it had none or
 * the AOF was loaded. */
/* The start-up load of a primary's RDB with a replication ID: the DELs of the expired keys it
 * skipped (RESP with SELECTs, *n bytes at *p), for the backlog that continues the ID; release:
 * free them. */
void persist_loaded_expired_dels(const char **p, size_t *n, int release);
int persist_loaded_repl(char id[41], unsigned long long *off, int *db);

/* LASTSAVE: unix seconds of the last successful save. */
int64_t persist_lastsave(void);

#endif
