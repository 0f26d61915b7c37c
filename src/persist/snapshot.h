/* Point-in-time copies of the store, by a snapshot thread (snapshot-fork no, the default, for
 * jobs that allow it: see arg_size below and docs/threads.md "Snapshot thread") or by fork(). A
 * forkless snapshot marks the point in time with every stripe held, then its thread copies the
 * stripes one by one while any thread that takes a stripe not copied yet copies it first
 * (store_snap_check); its result comes back through snapshot_reap like a child's.
 *
 * By fork(): the one place the server forks. BGSAVE
 * (persist.c) and the AOF rewrite (aof_rewrite.c) describe a job; snapshot_start holds every
 * stripe (ascending order, store_hold_set), runs the job's prepare step, forks and releases
 * the stripes in the parent at once. The child owns a private copy of memory: it closes the
 * sockets it inherited (listeners and clients, so a client the parent drops sees the close at
 * once and a restarted server can bind the port), runs the job's write function without
 * locks, reports its copy-on-write size through a pipe and leaves with _exit(0 or 1).
 *
 * A struct snapshot belongs to its caller and is used under the caller's mutex (plock,
 * aof_lock), which is taken before any stripe (lock order: caller's mutex, then stripes). Only
 * snapshot_running may be read without it. */
#ifndef TC_SNAPSHOT_H
#define TC_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <sys/types.h>

struct store;

struct snap_run;

struct snapshot {
    pid_t pid;     /* running child, 0 = none (a forkless snapshot: this process's pid) */
    int report_fd; /* read end of the child's report pipe, -1 = none (init to -1) */
    struct snap_run *run; /* a forkless snapshot's thread, or NULL */
};

#define SNAPSHOT_INIT {.pid = 0, .report_fd = -1, .run = NULL}

struct snapshot_job {
    const char *title;     /* the child's process name (prctl), e.g. "tc-rdb-bgsave" */
    const char *what;      /* start failures are logged as "<what>: pipe|fork: <reason>" */
    const char *cow_label; /* the child logs "Fork CoW for <label>: current N MB" and reports
                            * its private dirty size; NULL: it does neither */
    /* Parent, with every stripe held, just before fork (NULL: nothing). Nonzero: no fork. */
    int (*prepare)(void *arg);
    /* Child, no locks (nothing else runs in it): write the copy. 0 = success. */
    int (*write)(void *arg);
    void *arg; /* borrowed by both */
    const int *keep_fds; /* sockets the child keeps open (replication's full sync) */
    int nkeep;
    /* Forkless (snapshot-fork no): arg is copied (arg_size bytes) before prepare runs on the
     * copy, and a snapshot thread runs write on it; write's RDB writer (rdb.c) walks the
     * stripes through snapshot_walk instead of reading the store directly, and the keys are
     * serialized with these options as of now (unix ms). arg_size 0: this job always forks. */
    size_t arg_size;
    int compress;
    int64_t now;
};

enum {
    SNAPSHOT_OK = 0,
    SNAPSHOT_ERR_NOMEM = -1,   /* no stripe bitmap: nothing happened */
    SNAPSHOT_ERR_PIPE = -2,    /* logged */
    SNAPSHOT_ERR_PREPARE = -3, /* the job's prepare refused (its own log) */
    SNAPSHOT_ERR_FORK = -4,    /* logged */
};

struct snapshot_times {
    int64_t held_us; /* stripe locking + fork + release (rdb_latest_fork_usec) */
    int64_t lock_us; /* taking the stripes */
    int64_t fork_us; /* fork() itself */
};

/* Start a child for job on s (sn has none running). When the calling thread already holds
 * stripes (inside EXEC, store_held) it holds all of them and they are left as they are.
 * Returns SNAPSHOT_OK (sn->pid set) or a SNAPSHOT_ERR_*; t (may be NULL) is filled once the
 * fork was attempted (SNAPSHOT_OK, SNAPSHOT_ERR_FORK). Caller's mutex held. */
int snapshot_start(struct snapshot *sn, struct store *s, const struct snapshot_job *job,
                   struct snapshot_times *t);

struct snapshot_result {
    int thread;    /* it was a forkless snapshot (its write removed its own temporary file) */
    pid_t pid;     /* the child that was collected */
    int ok;        /* exited with status 0 */
    int signaled;  /* killed by signal sig */
    int sig;
    int64_t cow;   /* bytes the child reported (0 when it did not) */
};

/* Collect a finished child; block: wait for it (shutdown, after snapshot_kill). Returns 1
 * with res filled and sn emptied, or 0 (none, or still running). Caller's mutex held. */
int snapshot_reap(struct snapshot *sn, int block, struct snapshot_result *res);
/* Ask the child to stop (SIGUSR1); collect it with snapshot_reap(sn, 1, ...). */
void snapshot_kill(struct snapshot *sn);
/* 1 while a child runs. Any thread, without the caller's mutex (a racy hint). */
int snapshot_running(const struct snapshot *sn);

/* Every stripe of s held by this thread (ascending), for a synchronous save: returns the
 * bitmap to give back to snapshot_release_all, or NULL when the thread holds stripes already
 * (EXEC: then nothing is taken) or when out of memory (*oom set). */
uint64_t *snapshot_hold_all(struct store *s, int *oom);
/* Release what snapshot_hold_all took and free bm (NULL: nothing). */
void snapshot_release_all(struct store *s, uint64_t *bm);

/* snapshots started (INFO total_forks) and the latest one's stripe hold, fork included, in us
 * (latest_fork_usec) */
extern _Atomic long long snapshot_total_started;
extern _Atomic long long snapshot_latest_held_us;

#endif
