/* Snapshots: SAVE, BGSAVE [SCHEDULE], LASTSAVE, the save rules, INFO persistence, the load at
 * start-up and the save at shutdown (see persist.h).
 *
 * BGSAVE forks while this thread holds every stripe lock, so the child's copy of the store is
 * a consistent point in time and no other thread is inside a store structure at the fork;
 * the parent releases the stripes right after fork() returns. The child walks the store
 * without locks (nothing else runs in it), writes temp-<pid>.rdb, fsyncs, renames, reports
 * its copy-on-write size through a pipe and leaves with _exit. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/persist.h"
#include "cmd/propagate.h"
#include "core/config.h"
#include "core/log.h"
#include "persist/rdb.h"

#define BGSAVE_RETRY_DELAY 5 /* seconds before retrying a failed automatic save, as Redis */

_Atomic int persist_misconf;

static pthread_mutex_t plock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pid_t child;             /* running BGSAVE child, 0 = none */
    int cow_fd;              /* read end of the child's report pipe */
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
} ps = {.last_ok = 1, .last_bgsave_s = -1, .cow_fd = -1};

static uint64_t dirty_total(struct srv *srv)
{
    uint64_t d = 0;
    for (int i = 0; i < srv->nworkers; i++)
        d += STAT_GET(srv->workers[i].st.dirty);
    return d;
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

/* Every stripe held by this thread: a bitmap for store_hold_set (freed by unhold). Returns
 * NULL when the thread already holds them (EXEC with unknown keys) or out of memory (*oom). */
static uint64_t *hold_all(struct store *s, int *oom)
{
    size_t words = (s->nstripes + 63) / 64;
    uint64_t *bm;

    *oom = 0;
    if (store_held)
        return NULL;
    bm = malloc(words * 8);
    if (!bm) {
        *oom = 1;
        return NULL;
    }
    memset(bm, 0xff, words * 8);
    if (s->nstripes % 64)
        bm[words - 1] = (1ULL << (s->nstripes % 64)) - 1;
    store_hold_set(s, bm);
    return bm;
}

static void unhold(struct store *s, uint64_t *bm)
{
    if (bm) {
        store_release_set(s, bm);
        free(bm);
    }
}

static struct rdb_save_opts save_opts(void)
{
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum};
    return o;
}

/* Under plock, with every stripe held (or no other thread running). */
static int save_locked(struct srv *srv)
{
    char path[2048];
    struct rdb_save_opts o = save_opts();
    uint64_t dirty = dirty_total(srv);
    int64_t now = util_now_ms();

    dump_path(path, sizeof(path));
    if (rdb_save(srv->store, path, &o, now)) {
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

int persist_save_now(struct srv *srv, int held_all)
{
    int oom, rc;
    uint64_t *bm = NULL;

    pthread_mutex_lock(&plock);
    if (!held_all) {
        bm = hold_all(srv->store, &oom);
        if (oom) {
            pthread_mutex_unlock(&plock);
            return -1;
        }
    }
    rc = save_locked(srv);
    unhold(srv->store, bm);
    pthread_mutex_unlock(&plock);
    return rc;
}

/* Private_Dirty of this process in bytes (the child's copy-on-write). */
static int64_t private_dirty(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    int64_t kb = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        long long v;
        if (sscanf(line, "Private_Dirty: %lld kB", &v) == 1)
            kb += v;
    }
    fclose(f);
    return kb * 1024;
}

/* In the child: close every socket (listeners and clients), so that a client the parent
 * disconnects during the save sees its connection close at once and a restarted server can
 * bind the port while an old child still writes. */
static void close_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int dfd;

    if (!d)
        return;
    dfd = dirfd(d);
    while ((e = readdir(d))) {
        struct stat st;
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dfd || fstat(fd, &st) < 0)
            continue;
        if (S_ISSOCK(st.st_mode))
            close(fd);
    }
    closedir(d);
}

static void child_main(struct srv *srv, int wfd, int64_t now)
{
    char path[2048];
    struct rdb_save_opts o = save_opts();
    int rc;

    prctl(PR_SET_NAME, "tc-rdb-bgsave");
    /* on a machine with few cores the child competes with the workers it forked from */
    if (setpriority(PRIO_PROCESS, 0, 10) < 0) {
        /* not fatal */
    }
    close_sockets();
    dump_path(path, sizeof(path));
    rc = rdb_save(srv->store, path, &o, now);
    if (rc == 0) {
        int64_t cow = private_dirty();
        if (write(wfd, &cow, sizeof(cow)) < 0) {
            /* the parent then reports 0 */
        }
        if (cow)
            log_notice("Fork CoW for RDB: current %lld MB", (long long)(cow >> 20));
    }
    _exit(rc ? 1 : 0);
}

/* Start a background save. Under plock, no child running. held_all: this thread holds every
 * stripe already (EXEC). Returns 0 or -1. */
static int bgsave_start_locked(struct srv *srv, int held_all)
{
    int p[2], oom;
    uint64_t *bm = NULL;
    int64_t t0, now = util_now_ms();
    pid_t pid;

    ps.last_try_s = now / 1000;
    if (pipe2(p, O_CLOEXEC) < 0) {
        log_warn("Can't save in background: pipe: %s", strerror(errno));
        ps.last_ok = 0;
        update_misconf();
        return -1;
    }
    t0 = util_mono_us();
    if (!held_all) {
        bm = hold_all(srv->store, &oom);
        if (oom) {
            close(p[0]);
            close(p[1]);
            return -1;
        }
    }
    int64_t t1 = util_mono_us();
    pid = fork();
    int64_t t2 = util_mono_us();
    if (pid == 0) {
        close(p[0]);
        child_main(srv, p[1], now);
    }
    unhold(srv->store, bm);
    ps.fork_us = util_mono_us() - t0;
    close(p[1]);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        ps.last_ok = 0;
        update_misconf();
        log_warn("Can't save in background: fork: %s", strerror(e));
        return -1;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    ps.cow_fd = p[0];
    ps.child = pid;
    ps.child_start_ms = now;
    ps.dirty_child = dirty_total(srv);
    log_notice("Background saving started by pid %d (stripes held %lld us: locking %lld, "
               "fork %lld)", (int)pid, (long long)ps.fork_us, (long long)(t1 - t0),
               (long long)(t2 - t1));
    return 0;
}

/* Under plock: collect a finished child (block: wait for it). */
static void reap_locked(struct srv *srv, int block)
{
    int status;
    pid_t r;

    if (!ps.child)
        return;
    r = waitpid(ps.child, &status, block ? 0 : WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return;
    int64_t now = util_now_ms();
    int ok = r == ps.child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    int64_t cow = 0;
    if (ps.cow_fd >= 0) {
        if (read(ps.cow_fd, &cow, sizeof(cow)) != (ssize_t)sizeof(cow))
            cow = 0;
        close(ps.cow_fd);
        ps.cow_fd = -1;
    }
    if (ok) {
        log_notice("Background saving terminated with success");
        ps.dirty_saved = ps.dirty_child;
        ps.lastsave_s = ps.child_start_ms / 1000;
        ps.saves++;
        ps.last_cow = cow;
    } else if (r == ps.child && WIFSIGNALED(status)) {
        char tmp[2048], d[1100];
        log_warn("Background saving terminated by signal %d", WTERMSIG(status));
        config_str(cfg.dir, d, sizeof(d));
        snprintf(tmp, sizeof(tmp), "%s/temp-%d.rdb", d, (int)ps.child);
        unlink(tmp);
    } else {
        log_warn("Background saving error");
    }
    ps.last_ok = ok || (r == ps.child && WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1);
    ps.last_bgsave_s = (now - ps.child_start_ms) / 1000;
    ps.child = 0;
    update_misconf();
}

void persist_tick(struct worker *w)
{
    struct srv *srv = w->srv;
    int64_t now_s = w->now_ms / 1000;

    pthread_mutex_lock(&plock);
    reap_locked(srv, 0);
    if (!ps.child && ps.scheduled) {
        ps.scheduled = 0;
        bgsave_start_locked(srv, 0);
    } else if (!ps.child && !config_str_empty(cfg.save)) {
        char rules[256], *save = NULL, *a, *b;
        uint64_t dirty = dirty_total(srv) - ps.dirty_saved;
        config_str(cfg.save, rules, sizeof(rules));
        for (a = strtok_r(rules, " ", &save); a && (b = strtok_r(NULL, " ", &save));
             a = strtok_r(NULL, " ", &save)) {
            long long secs = atoll(a), changes = atoll(b);
            if (dirty >= (uint64_t)changes && now_s - ps.lastsave_s >= secs &&
                (ps.last_ok || now_s - ps.last_try_s >= BGSAVE_RETRY_DELAY)) {
                log_notice("%lld changes in %lld seconds. Saving...", changes, secs);
                bgsave_start_locked(srv, 0);
                break;
            }
        }
    }
    pthread_mutex_unlock(&plock);
    aof_tick(w);
}

int persist_shutdown(struct srv *srv, int force, int nosave)
{
    int rc = 0;

    aof_shutdown();
    pthread_mutex_lock(&plock);
    if (ps.shutdown_done) {
        pthread_mutex_unlock(&plock);
        return 0;
    }
    if (ps.child) {
        log_warn("There is a child saving an .rdb. Killing it!");
        kill(ps.child, SIGUSR1);
        reap_locked(srv, 1);
    }
    if (!nosave && (force || !config_str_empty(cfg.save))) {
        log_notice("Saving the final RDB snapshot before exiting.");
        int oom;
        uint64_t *bm = hold_all(srv->store, &oom);
        rc = oom ? -1 : save_locked(srv);
        unhold(srv->store, bm);
        if (rc)
            log_warn("Error trying to save the DB, can't exit.");
    }
    if (rc == 0)
        ps.shutdown_done = 1;
    pthread_mutex_unlock(&plock);
    return rc;
}

void persist_flushall(struct srv *srv)
{
    int oom;

    if (config_str_empty(cfg.save) || !srv->workers)
        return; /* no save rules, or replaying the AOF at start-up */
    /* inside EXEC this thread holds the stripes already: only try the mutex (lock order) */
    if (store_held ? pthread_mutex_trylock(&plock) : pthread_mutex_lock(&plock))
        return;
    if (ps.child) {
        kill(ps.child, SIGUSR1);
        reap_locked(srv, 1);
    }
    uint64_t *bm = hold_all(srv->store, &oom);
    if (!oom)
        save_locked(srv);
    unhold(srv->store, bm);
    pthread_mutex_unlock(&plock);
}

int persist_load(struct srv *srv)
{
    char path[2048], err[256];
    struct rdb_load_info info;
    int64_t t0 = util_mono_us();
    int rc, aof;

    ps.lastsave_s = srv->start_ms / 1000;
    aof = aof_boot(srv); /* appendonly yes: the AOF, when there is one, wins over the RDB */
    if (aof <= 0)
        return aof;
    dump_path(path, sizeof(path));
    log_notice("Loading RDB from %s", path);
    rc = rdb_load(srv->store, path, util_now_ms(), &info, err, sizeof(err));
    if (rc == 1) {
        log_notice("No RDB file found at %s: starting empty", path);
        return aof == 2 ? aof_boot_create(srv) : 0;
    }
    if (rc < 0) {
        log_warn("Fatal error loading the DB (%s): %s. Exiting.", path, err);
        return -1;
    }
    ps.load_keys = info.keys;
    ps.load_expired = info.expired;
    log_notice("Done loading RDB (version %d), keys loaded: %llu, keys expired: %llu.",
               info.version, (unsigned long long)info.keys, (unsigned long long)info.expired);
    log_notice("DB loaded from disk: %.3f seconds", (double)(util_mono_us() - t0) / 1e6);
    return aof == 2 ? aof_boot_create(srv) : 0;
}

#define P(...)                                                                                \
    do {                                                                                      \
        int n_ = snprintf(line, sizeof(line), __VA_ARGS__);                                   \
        buf_append(b, line, (size_t)n_);                                                      \
    } while (0)

void persist_info(struct srv *srv, struct buf *b)
{
    char line[256];
    int64_t now = util_now_ms();

    pthread_mutex_lock(&plock);
    P("# Persistence\r\n");
    P("loading:0\r\nasync_loading:0\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:0\r\n");
    P("current_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\n");
    P("current_save_keys_total:0\r\n");
    P("rdb_changes_since_last_save:%llu\r\n",
      (unsigned long long)(dirty_total(srv) - ps.dirty_saved));
    P("rdb_bgsave_in_progress:%d\r\n", ps.child ? 1 : 0);
    P("rdb_last_save_time:%lld\r\n", (long long)ps.lastsave_s);
    P("rdb_last_bgsave_status:%s\r\n", ps.last_ok ? "ok" : "err");
    P("rdb_last_bgsave_time_sec:%lld\r\n", (long long)ps.last_bgsave_s);
    P("rdb_current_bgsave_time_sec:%lld\r\n",
      ps.child ? (long long)((now - ps.child_start_ms) / 1000) : -1LL);
    P("rdb_saves:%llu\r\n", (unsigned long long)ps.saves);
    P("rdb_last_cow_size:%lld\r\n", (long long)ps.last_cow);
    P("rdb_last_load_keys_expired:%llu\r\n", (unsigned long long)ps.load_expired);
    P("rdb_last_load_keys_loaded:%llu\r\n", (unsigned long long)ps.load_keys);
    P("rdb_latest_fork_usec:%lld\r\n", (long long)ps.fork_us);
    aof_info(b);
    P("module_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n");
    P("\r\n");
    pthread_mutex_unlock(&plock);
}

/* ---- commands ---- */

/* plock for a command: a thread inside EXEC holds stripes and must not wait for plock (the
 * timer takes plock, then stripes), so it only tries. */
static int cmd_plock(struct conn *c)
{
    if (store_held) {
        if (pthread_mutex_trylock(&plock)) {
            reply_error(c, "ERR Background save already in progress");
            return -1;
        }
        return 0;
    }
    pthread_mutex_lock(&plock);
    return 0;
}

static void save_command(struct conn *c)
{
    struct srv *srv = c->w->srv;
    int oom;

    if (cmd_plock(c))
        return;
    if (ps.child) {
        pthread_mutex_unlock(&plock);
        reply_error(c, "ERR Background save already in progress");
        return;
    }
    uint64_t *bm = hold_all(srv->store, &oom);
    int rc = oom ? -1 : save_locked(srv);
    unhold(srv->store, bm);
    pthread_mutex_unlock(&plock);
    if (rc)
        reply_error(c, "ERR");
    else
        reply_ok(c);
}

static void bgsave_command(struct conn *c)
{
    struct srv *srv = c->w->srv;
    int schedule = 0;

    if (c->argc > 1) {
        if (c->argc == 2 && arg_is(c, 1, "schedule")) {
            schedule = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (cmd_plock(c))
        return;
    if (ps.child) {
        if (schedule) {
            ps.scheduled = 1;
            pthread_mutex_unlock(&plock);
            reply_status(c, "Background saving scheduled");
        } else {
            pthread_mutex_unlock(&plock);
            reply_error(c, "ERR Background save already in progress");
        }
        return;
    }
    int rc = bgsave_start_locked(srv, store_held != NULL);
    pthread_mutex_unlock(&plock);
    if (rc)
        reply_error(c, "ERR");
    else
        reply_status(c, "Background saving started");
}

static void lastsave_command(struct conn *c)
{
    pthread_mutex_lock(&plock);
    long long v = ps.lastsave_s;
    pthread_mutex_unlock(&plock);
    reply_int(c, v);
}

static struct cmd cmds[] = {
    {"save", save_command, 1, "admin noscript no_async_loading no_multi", "", NULL, "server", "Synchronously save the dataset to disk"},
    {"bgsave", bgsave_command, -1, "admin noscript no_async_loading", "", NULL, "server", "Asynchronously save the dataset to disk"},
    {"lastsave", lastsave_command, 1, "loading stale fast", "@admin @dangerous", NULL, "server", "Get the UNIX time stamp of the last successful save to disk"},
};

void cmd_persist_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
