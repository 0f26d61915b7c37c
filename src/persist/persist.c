/* RDB snapshots: SAVE, BGSAVE [SCHEDULE], LASTSAVE, the save rules, INFO persistence, the
 * load at start-up and the save at shutdown (see persist.h).
 *
 * BGSAVE is a snapshot job (snapshot.h): the child writes temp-<pid>.rdb, fsyncs, renames
 * and reports its copy-on-write size. SAVE, the shutdown save and the save after FLUSHALL
 * write from this thread with every stripe held. */
#define _GNU_SOURCE
#include "persist/persist.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/log.h"
#include "core/supervise.h"
#include "core/util.h"
#include "persist/aof_log.h"
#include "persist/persist_int.h"
#include "persist/rdb.h"
#include "persist/snapshot.h"
#include "store/store.h"

static void load_tick(size_t done, size_t total);

/* rdb_load's progress (INFO loading_*), written by the loading thread */
static _Atomic int64_t load_start_s;
static _Atomic size_t load_total, load_done;

#define BGSAVE_RETRY_DELAY 5 /* seconds before retrying a failed automatic save, as Redis */

_Atomic int persist_misconf;

static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
struct persist_host persist_host;

static struct {
    struct snapshot sn;      /* running BGSAVE child */
    int64_t child_start_ms;
    uint64_t dirty_child;    /* dirty total when the child was forked */
    int scheduled;           /* BGSAVE SCHEDULE while a child ran */
    int last_ok;             /* rdb_last_bgsave_status */
    int64_t lastsave_s;      /* last successful save (LASTSAVE) */
    int64_t last_try_s;      /* last background save attempt */
    uint64_t dirty_saved;    /* dirty total at the start of the last successful save */
    int64_t last_bgsave_s;   /* rdb_last_bgsave_time_sec, -1 = none */
    int64_t last_cow;        /* rdb_last_cow_size */
    int64_t fork_us;         /* latest_fork_usec: every stripe held, fork included */
    uint64_t saves;          /* rdb_saves */
    uint64_t load_keys, load_expired;
    int shutdown_done;       /* SHUTDOWN already saved (or chose not to) */
    int presaved;            /* a signal's shutdown save succeeded (persist_shutdown_signal) */
} ps = {.sn = SNAPSHOT_INIT, .last_ok = 1, .last_bgsave_s = -1};

void persist_setup(const struct persist_host *h)
{
    persist_host = *h;
}

static uint64_t dirty_total(void)
{
    return persist_host.dirty(persist_host.ctx);
}

static void dump_path(char *out, size_t cap)
{
    char dir[sizeof(cfg.dir)], file[sizeof(cfg.dbfilename)];
    config_str(cfg.dir, dir, sizeof(dir));
    config_str(cfg.dbfilename, file, sizeof(file));
    rdb_path(out, cap, dir, file);
}

static void update_misconf(void)
{
    atomic_store_explicit(&persist_misconf,
                          cfg.stop_writes_on_bgsave_error && !config_str_empty(cfg.save) &&
                          !ps.last_ok,
                          memory_order_relaxed);
}

static struct rdb_save_opts save_opts(void)
{
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum,
                              .autosync = cfg.rdb_save_incremental_fsync ? RDB_AUTOSYNC_BYTES
                                                                         : 0};
    return o;
}

/* The AUX fields of replication's ID and offset into aux (space for 5 pointers) from the
 * host's hook, with every stripe held: aux itself, or NULL when there are none. */
struct repl_aux {
    char id[41], off[24], db[16];
    const char *v[7];
};

static const char *const *repl_aux_fill(struct repl_aux *a)
{
    unsigned long long off;
    int db = 0;
    if (!persist_host.repl_aux || !persist_host.repl_aux(a->id, &off, &db))
        return NULL;
    snprintf(a->off, sizeof(a->off), "%llu", off);
    snprintf(a->db, sizeof(a->db), "%d", db);
    a->v[0] = "repl-stream-db";
    a->v[1] = a->db;
    a->v[2] = "repl-id";
    a->v[3] = a->id;
    a->v[4] = "repl-offset";
    a->v[5] = a->off;
    a->v[6] = NULL;
    return a->v;
}

static struct {
    int has;
    char id[41];
    unsigned long long off;
    int db;
} loaded_repl;

_Atomic int persist_repl_sync_running;

static struct buf loaded_dels; /* DELs of the expired keys the start-up load skipped */

void persist_loaded_expired_dels(const char **p, size_t *n, int release)
{
    if (release) {
        buf_deinit(&loaded_dels);
        memset(&loaded_dels, 0, sizeof(loaded_dels));
        return;
    }
    *p = loaded_dels.data ? loaded_dels.data + loaded_dels.rpos : "";
    *n = buf_len(&loaded_dels);
}

int persist_loaded_repl(char id[41], unsigned long long *off, int *db)
{
    if (!loaded_repl.has)
        return 0;
    memcpy(id, loaded_repl.id, 41);
    *off = loaded_repl.off;
    *db = loaded_repl.db;
    return 1;
}

/* Under plock, with every stripe held (or no other thread running). */
static int save_locked(void)
{
    char path[2048];
    struct rdb_save_opts o = save_opts();
    uint64_t dirty = dirty_total();
    int64_t now = util_now_ms();
    struct repl_aux ra;

    dump_path(path, sizeof(path));
    if (rdb_save_aux(persist_host.store, path, &o, now, repl_aux_fill(&ra))) {
        ps.last_ok = 0;
        update_misconf();
        return -1;
    }
    log_notice("DB saved on disk");
    ps.dirty_saved = dirty;
    ps.lastsave_s = now / 1000;
    ps.last_ok = 1;
    ps.saves++;
    update_misconf();
    return 0;
}

int persist_save_now(int held_all)
{
    int oom, rc;
    uint64_t *bm = NULL;

    pthread_mutex_lock(&plock);
    if (!held_all) {
        bm = snapshot_hold_all(persist_host.store, &oom);
        if (oom) {
            pthread_mutex_unlock(&plock);
            return -1;
        }
    }
    rc = save_locked();
    snapshot_release_all(persist_host.store, bm);
    pthread_mutex_unlock(&plock);
    return rc;
}

/* BGSAVE's child: the dump, as of the fork (now: unix ms at the fork). */
struct bgsave_job {
    char path[2048];
    int64_t now;
    struct repl_aux ra;
    const char *const *aux;
};

/* Parent, every stripe held: replication's offset as of the copy. */
static int bgsave_prepare(void *arg)
{
    struct bgsave_job *j = arg;
    j->aux = repl_aux_fill(&j->ra);
    return 0;
}

static int bgsave_write(void *arg)
{
    struct bgsave_job *j = arg;
    struct rdb_save_opts o = save_opts();
    return rdb_save_aux(persist_host.store, j->path, &o, j->now, j->aux);
}

/* Start a background save. Under plock, no child running; inside EXEC (store_held) this
 * thread holds every stripe already. Returns 0 or -1. */
static int bgsave_start_locked(void)
{
    struct bgsave_job j;
    struct snapshot_job job = {.title = "tc-rdb-bgsave", .what = "Can't save in background",
                               .cow_label = "RDB", .prepare = bgsave_prepare,
                               .write = bgsave_write, .arg = &j, .arg_size = sizeof(j),
                               .compress = cfg.rdbcompression};
    struct snapshot_times t;
    int rc;

    j.now = util_now_ms();
    job.now = j.now;
    dump_path(j.path, sizeof(j.path));
    ps.last_try_s = j.now / 1000;
    rc = snapshot_start(&ps.sn, persist_host.store, &job, &t);
    if (rc == SNAPSHOT_OK || rc == SNAPSHOT_ERR_FORK)
        ps.fork_us = t.held_us;
    if (rc == SNAPSHOT_ERR_PIPE || rc == SNAPSHOT_ERR_FORK) {
        ps.last_ok = 0;
        update_misconf();
    }
    if (rc)
        return -1;
    ps.child_start_ms = j.now;
    ps.dirty_child = dirty_total();
    log_notice("Background saving started by pid %d (stripes held %lld us: locking %lld, "
               "fork %lld)", (int)ps.sn.pid, (long long)t.held_us, (long long)t.lock_us,
               (long long)t.fork_us);
    return 0;
}

/* Under plock: collect a finished child (block: wait for it). */
static void reap_locked(int block)
{
    struct snapshot_result r;

    if (!snapshot_reap(&ps.sn, block, &r))
        return;
    int64_t now = util_now_ms();
    if (r.ok) {
        log_notice("Background saving terminated with success");
        ps.dirty_saved = ps.dirty_child;
        ps.lastsave_s = ps.child_start_ms / 1000;
        ps.saves++;
        ps.last_cow = r.cow;
    } else if (r.signaled) {
        char tmp[2048], d[1100];
        log_warn("Background saving terminated by signal %d", r.sig);
        config_str(cfg.dir, d, sizeof(d));
        snprintf(tmp, sizeof(tmp), "%s/temp-%d.rdb", d, (int)r.pid);
        if (!r.thread) /* a snapshot thread removed its own */
            unlink(tmp);
    } else {
        log_warn("Background saving error");
    }
    ps.last_ok = r.ok || (r.signaled && r.sig == SIGUSR1);
    ps.last_bgsave_s = (now - ps.child_start_ms) / 1000;
    update_misconf();
}

void persist_tick(int64_t now_ms)
{
    int64_t now_s = now_ms / 1000;

    pthread_mutex_lock(&plock);
    reap_locked(0);
    if (!ps.sn.pid && ps.scheduled) {
        ps.scheduled = 0;
        bgsave_start_locked();
    } else if (!ps.sn.pid && !config_str_empty(cfg.save)) {
        char rules[256], *save = NULL, *a, *b;
        uint64_t dirty = dirty_total() - ps.dirty_saved;
        config_str(cfg.save, rules, sizeof(rules));
        for (a = strtok_r(rules, " ", &save); a && (b = strtok_r(NULL, " ", &save));
             a = strtok_r(NULL, " ", &save)) {
            long long secs = atoll(a), changes = atoll(b);
            if (dirty >= (uint64_t)changes && now_s - ps.lastsave_s >= secs &&
                (ps.last_ok || now_s - ps.last_try_s >= BGSAVE_RETRY_DELAY)) {
                log_notice("%lld changes in %lld seconds. Saving...", changes, secs);
                bgsave_start_locked();
                break;
            }
        }
    }
    pthread_mutex_unlock(&plock);
    aof_tick();
}

/* Under plock: the save shutting down makes. 0 or -1 (logged). */
static int shutdown_save_locked(int force, int nosave)
{
    int rc = 0;

    if (ps.sn.pid) {
        log_warn("There is a child saving an .rdb. Killing it!");
        snapshot_kill(&ps.sn);
        reap_locked(1);
    }
    if (!nosave && (force || !config_str_empty(cfg.save))) {
        /* a save moments ago (a signal's, with nothing written since) stands */
        if (ps.presaved && ps.last_ok && dirty_total() == ps.dirty_saved)
            return 0;
        log_notice("Saving the final RDB snapshot before exiting.");
        supervise_notify("STATUS=Saving the final RDB snapshot\n");
        int oom;
        uint64_t *bm = snapshot_hold_all(persist_host.store, &oom);
        rc = oom ? -1 : save_locked();
        snapshot_release_all(persist_host.store, bm);
        if (rc) {
            log_warn("Error trying to save the DB, can't exit.");
            supervise_notify("STATUS=Error trying to save the DB, can't exit.\n");
        }
    }
    return rc;
}

int persist_shutdown(int force, int nosave)
{
    int rc;

    pthread_mutex_lock(&plock);
    if (ps.shutdown_done) {
        pthread_mutex_unlock(&plock);
        return 0;
    }
    rc = shutdown_save_locked(force, nosave);
    if (rc == 0)
        ps.shutdown_done = 1;
    pthread_mutex_unlock(&plock);
    /* the AOF is closed only once shutting down goes ahead: a failed save leaves it on */
    if (rc == 0)
        aof_shutdown();
    return rc;
}

int persist_bgsave_running(void)
{
    return snapshot_running(&ps.sn);
}

int persist_shutdown_signal(void)
{
    int rc;

    pthread_mutex_lock(&plock);
    rc = ps.shutdown_done ? 0 : shutdown_save_locked(0, 0);
    if (rc == 0)
        ps.presaved = 1;
    pthread_mutex_unlock(&plock);
    return rc;
}

void persist_flushall(void)
{
    int oom;

    if (aof_loading())
        return; /* replaying the AOF at start-up */
    /* inside EXEC this thread holds the stripes already: only try the mutex (lock order) */
    if (store_held ? pthread_mutex_trylock(&plock) : pthread_mutex_lock(&plock))
        return;
    if (ps.sn.pid) { /* its dataset is gone: a running BGSAVE stops, save rules or not */
        snapshot_kill(&ps.sn);
        reap_locked(1);
    }
    if (config_str_empty(cfg.save)) {
        pthread_mutex_unlock(&plock);
        return;
    }
    uint64_t *bm = snapshot_hold_all(persist_host.store, &oom);
    if (!oom)
        save_locked();
    snapshot_release_all(persist_host.store, bm);
    pthread_mutex_unlock(&plock);
}

static int load_boot(void)
{
    char path[2048], err[256];
    struct rdb_load_info info;
    int64_t t0 = util_mono_us();
    int rc, aof;

    rdb_load_tick = load_tick; /* progress began in persist_boot_may_load */
    aof = aof_boot(); /* appendonly yes: the AOF, when there is one, wins over the RDB */
    if (aof <= 0)
        return aof;
    dump_path(path, sizeof(path));
    log_notice("Loading RDB from %s", path);
    if (config_str_empty(cfg.replicaof))
        rdb_load_expired_dels = &loaded_dels; /* a primary: its backlog gets their DELs */
    rc = rdb_load(persist_host.store, path, util_now_ms(), &info, err, sizeof(err));
    rdb_load_expired_dels = NULL;
    if (rc != 0 || info.has_repl != 3)
        persist_loaded_expired_dels(NULL, NULL, 1);
    if (rc == 1) {
        log_notice("No RDB file found at %s: starting empty", path);
        return aof == 2 ? aof_boot_create() : 0;
    }
    if (rc < 0) {
        if (access(path, R_OK)) {
            log_warn("Fatal error loading the DB: %s. Exiting.", strerror(errno));
            return -1;
        }
        /* a corrupt file: Redis's rdbReportCorruptRDB lines, its checker's, then the end */
        const char *why = err;
        if (!strncmp(err, "Wrong RDB checksum", 18)) {
            log_warn("%s", err);
            why = "RDB CRC error";
        }
        log_warn("Internal error in RDB reading offset 0, function at rdb.c:0 -> %s", why);
        log_warn("--- RDB ERROR DETECTED ---");
        log_warn("[offset 0] Internal error in RDB reading offset 0, function at rdb.c:0 -> %s",
                 why);
        log_warn("Terminating server after rdb file reading failure.");
        return -1;
    }
    pthread_mutex_lock(&plock); /* INFO reads them: the workers already serve */
    ps.load_keys = info.keys;
    ps.load_expired = info.expired;
    pthread_mutex_unlock(&plock);
    if (info.has_repl == 3) {
        loaded_repl.has = 1;
        memcpy(loaded_repl.id, info.repl_id, 41);
        loaded_repl.off = info.repl_offset;
        loaded_repl.db = info.repl_stream_db;
    }
    if (info.empty)
        log_notice("Done loading RDB, keys loaded: %llu, keys expired: %llu, empty keys "
                   "skipped: %llu.", (unsigned long long)info.keys,
                   (unsigned long long)info.expired, (unsigned long long)info.empty);
    else
        log_notice("Done loading RDB (version %d), keys loaded: %llu, keys expired: %llu.",
                   info.version, (unsigned long long)info.keys, (unsigned long long)info.expired);
    log_notice("DB loaded from disk: %.3f seconds", (double)(util_mono_us() - t0) / 1e6);
    return aof == 2 ? aof_boot_create() : 0;
}

int persist_boot_may_load(void)
{
    char path[2048];
    struct stat st;

    if (cfg.appendonly) {
        persist_load_begin(0); /* the AOF's files are sized as the load opens them */
        return 1;
    }
    dump_path(path, sizeof(path));
    if (stat(path, &st))
        return 0;
    /* as Redis's startLoadingFile: loading_total_bytes is the file's size from the start */
    persist_load_begin((size_t)st.st_size);
    return 1;
}

int persist_load(void)
{
    int oom, rc;
    /* the workers already serve: every stripe held while the dataset goes in */
    pthread_mutex_lock(&plock);
    ps.lastsave_s = persist_host.start_ms / 1000;
    pthread_mutex_unlock(&plock);
    uint64_t *bm = snapshot_hold_all(persist_host.store, &oom);
    if (oom)
        return -1;
    rc = load_boot();
    snapshot_release_all(persist_host.store, bm);
    return rc;
}

#define P(...)                                                                                \
    do {                                                                                      \
        int n_ = snprintf(line, sizeof(line), __VA_ARGS__);                                   \
        buf_append(b, line, (size_t)n_);                                                      \
    } while (0)

void persist_info(struct buf *b)
{
    char line[256];
    int64_t now = util_now_ms();

    pthread_mutex_lock(&plock);
    P("# Persistence\r\n");
    P("loading:%d\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n",
      atomic_load(&persist_loading));
    P("current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n");
    P("current_save_keys_total:0\r\n");
    P("rdb_changes_since_last_save:%llu\r\n",
      (unsigned long long)(dirty_total() - ps.dirty_saved));
    P("rdb_bgsave_in_progress:%d\r\n",
      ps.sn.pid || atomic_load(&persist_repl_sync_running) ? 1 : 0);
    P("rdb_last_save_time:%lld\r\n", (long long)ps.lastsave_s);
    P("rdb_last_bgsave_status:%s\r\n", ps.last_ok ? "ok" : "err");
    P("rdb_last_bgsave_time_sec:%lld\r\n", (long long)ps.last_bgsave_s);
    P("rdb_current_bgsave_time_sec:%lld\r\n",
      ps.sn.pid ? (long long)((now - ps.child_start_ms) / 1000) : -1LL);
    P("rdb_saves:%llu\r\n", (unsigned long long)ps.saves);
    P("rdb_last_cow_size:%lld\r\n", (long long)ps.last_cow);
    P("rdb_last_load_keys_expired:%llu\r\n", (unsigned long long)ps.load_expired);
    P("rdb_last_load_keys_loaded:%llu\r\n", (unsigned long long)ps.load_keys);
    P("rdb_latest_fork_usec:%lld\r\n", (long long)ps.fork_us);
    aof_info(b);
    P("module_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n");
    if (atomic_load(&persist_loading)) {
        /* as Redis: progress of the load in course (bytes of the file read so far) */
        int64_t start = atomic_load_explicit(&load_start_s, memory_order_relaxed);
        size_t total = atomic_load_explicit(&load_total, memory_order_relaxed);
        size_t done = atomic_load_explicit(&load_done, memory_order_relaxed);
        size_t left = total > done ? total - done : 1;
        int64_t elapsed = now / 1000 - start;
        long long eta = elapsed <= 0 ? 1 : (long long)((double)elapsed * (double)left /
                                                       (double)(done + 1));
        P("loading_start_time:%lld\r\nloading_total_bytes:%zu\r\n", (long long)start, total);
        P("loading_rdb_used_mem:0\r\nloading_loaded_bytes:%zu\r\n", done);
        P("loading_loaded_perc:%.2f\r\nloading_eta_seconds:%lld\r\n",
          total ? 100.0 * (double)done / (double)total : 0.0, eta);
    }
    P("\r\n");
    pthread_mutex_unlock(&plock);
}

/* ---- command entry points ---- */

/* plock for a command: a thread inside EXEC holds stripes and must not wait for plock (the
 * timer takes plock, then stripes), so it only tries. */
static int plock_for_command(void)
{
    if (store_held)
        return pthread_mutex_trylock(&plock) ? -1 : 0;
    pthread_mutex_lock(&plock);
    return 0;
}

int persist_save(void)
{
    int oom;

    if (plock_for_command())
        return PERSIST_BUSY;
    if (ps.sn.pid) {
        pthread_mutex_unlock(&plock);
        return PERSIST_BUSY;
    }
    uint64_t *bm = snapshot_hold_all(persist_host.store, &oom);
    int rc = oom ? -1 : save_locked();
    snapshot_release_all(persist_host.store, bm);
    pthread_mutex_unlock(&plock);
    return rc ? PERSIST_ERR : PERSIST_OK;
}

int persist_reload(int save, int flush, int merge, char *err, size_t cap)
{
    struct store *s = persist_host.store;
    struct rdb_load_info info;
    char path[2048];
    int oom, rc = PERSIST_OK;

    err[0] = 0;
    if (plock_for_command())
        return PERSIST_BUSY;
    uint64_t *bm = snapshot_hold_all(s, &oom);
    if (oom) {
        pthread_mutex_unlock(&plock);
        return PERSIST_ERR;
    }
    if (save && save_locked()) {
        rc = PERSIST_ERR;
        goto out;
    }
    if (flush) {
        store_flush(s, -1);
        if (rdb_funcs.clear)
            rdb_funcs.clear();
    }
    dump_path(path, sizeof(path));
    rdb_funcs.replace = merge;
    rdb_load_no_replace = !merge && !flush;
    int r = rdb_load(s, path, util_now_ms(), &info, err, cap);
    rdb_funcs.replace = 0;
    rdb_load_no_replace = 0;
    if (r != 0) {
        if (r > 0)
            snprintf(err, cap, "no RDB file at %s", path);
        log_warn("DEBUG RELOAD: %s", err);
        rc = PERSIST_ERR;
        goto out;
    }
    log_notice("DB reloaded by DEBUG RELOAD");
out:
    snapshot_release_all(s, bm);
    pthread_mutex_unlock(&plock);
    return rc;
}

_Atomic int persist_keep_gone_hook;

_Atomic int persist_loading;
_Atomic int persist_booting;


void persist_load_begin(size_t total)
{
    atomic_store(&load_start_s, util_now_ms() / 1000);
    atomic_store(&load_total, total);
    atomic_store(&load_done, 0);
}

/* Start-up loading runs on the main thread, which also takes the signals (sigtimedwait) once
 * the dataset is in: a SIGTERM or SIGINT meanwhile ends the server at once without saving, as
 * Redis does when it gets one during loading. */
static void boot_signal_check(void)
{
    sigset_t pend;
    if (sigpending(&pend) || (!sigismember(&pend, SIGTERM) && !sigismember(&pend, SIGINT)))
        return;
    log_warn("Received %s scheduling shutdown...", sigismember(&pend, SIGINT) ? "SIGINT"
                                                                               : "SIGTERM");
    log_warn("User requested shutdown...");
    supervise_notify("STOPPING=1\n");
    if (cfg.unixsocket[0])
        unlink(cfg.unixsocket);
    if (cfg.pidfile[0]) {
        log_notice("Removing the pid file.");
        unlink(cfg.pidfile);
    }
    log_warn("twincache is now ready to exit, bye bye...");
    _exit(0);
}

static void load_tick(size_t done, size_t total)
{
    static unsigned n;
    int d = cfg.key_load_delay; /* as Redis's debugDelay: < 0 sleeps 1 us once in -d keys */

    if (d < 0)
        d = rand() % -d == 0 ? 1 : 0;
    if (d)
        usleep((useconds_t)d);
    atomic_store_explicit(&load_total, total, memory_order_relaxed);
    atomic_store_explicit(&load_done, done, memory_order_relaxed);
    if (atomic_load_explicit(&persist_booting, memory_order_relaxed) && (d || (++n & 1023) == 0))
        boot_signal_check();
}

int persist_load_replica(const char *path, int *stream_db, char *err, size_t cap)
{
    struct store *s = persist_host.store;
    struct rdb_load_info info;
    int oom;

    err[0] = 0;
    uint64_t *bm = snapshot_hold_all(s, &oom);
    if (oom) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    persist_load_begin(0);
    atomic_store(&persist_loading, 1);
    store_flush_lazy(s, -1, cfg.replica_lazy_flush); /* the old data set, before a full sync */
    if (rdb_funcs.clear)
        rdb_funcs.clear();
    int r = rdb_load(s, path, util_now_ms(), &info, err, cap);
    snapshot_release_all(s, bm);
    atomic_store(&persist_loading, 0);
    if (r > 0)
        snprintf(err, cap, "no RDB file at %s", path);
    if (r == 0)
        log_notice("Done loading RDB, keys loaded: %llu, keys expired: %llu.",
                   (unsigned long long)info.keys, (unsigned long long)info.expired);
    *stream_db = r == 0 ? info.repl_stream_db : 0;
    return r ? -1 : 0;
}

int persist_bgsave(int schedule)
{
    if (plock_for_command())
        return PERSIST_BUSY;
    if (ps.sn.pid) {
        if (schedule)
            ps.scheduled = 1;
        pthread_mutex_unlock(&plock);
        return schedule ? PERSIST_SCHEDULED : PERSIST_BUSY;
    }
    int rc = bgsave_start_locked();
    pthread_mutex_unlock(&plock);
    return rc ? PERSIST_ERR : PERSIST_OK;
}

int64_t persist_lastsave(void)
{
    pthread_mutex_lock(&plock);
    int64_t v = ps.lastsave_s;
    pthread_mutex_unlock(&plock);
    return v;
}
