/* The AOF's writing (see aof_log.h): group commit before a worker sleeps, the everysec fsync
 * thread, CONFIG SET appendonly, shutdown. */
#define _GNU_SOURCE
#include "persist/aof_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist_int.h"
#include "store/store.h"

#define MAX_WORKERS 256

_Atomic int aof_on;
_Atomic int aof_loading_flag;
static _Atomic uint64_t epochs[MAX_WORKERS]; /* per worker: loop iterations (before_sleep) */
static _Thread_local uint64_t upto; /* offset this thread must see written before replying */

int aof_loading(void)
{
    return atomic_load_explicit(&aof_loading_flag, memory_order_relaxed);
}

void aof_log_append(const char *recs, size_t n)
{
    uint64_t off = aof_append(recs, n);
    if (off > upto)
        upto = off;
}

static int rewriting(void)
{
    return snapshot_running(&aof_st.sn);
}

void aof_before_sleep(int idx)
{
    if (idx < MAX_WORKERS)
        atomic_fetch_add_explicit(&epochs[idx], 1, memory_order_release);
    if (!upto)
        return;
    int fs = cfg.appendfsync == 2 && !(cfg.no_appendfsync_on_rewrite && rewriting());
    if (aof_write(upto, fs) && cfg.appendfsync == 2) {
        log_warn("Can't recover from AOF write error when the AOF fsync policy is 'always'. "
                 "Exiting...");
        _exit(1);
    }
    upto = 0;
}

static void *fsync_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "tc-aof-fsync");
    for (;;) {
        usleep(100000);
        if (!atomic_load_explicit(&aof_on, memory_order_relaxed))
            continue;
        struct aof_stats st;
        aof_get_stats(&st);
        /* what the workers have not written yet (expiry DELs from a timer, say) */
        if (st.appended > st.written)
            aof_write(st.appended, 0);
        static int64_t last;
        int64_t now = util_mono_us();
        if (cfg.appendfsync == 1 && now - last >= 1000000 &&
            !(cfg.no_appendfsync_on_rewrite && rewriting())) {
            aof_fsync_written();
            last = now;
        }
    }
    return NULL;
}

void aof_start_logging(void)
{
    atomic_store(&store_gone_hook, persist_host.gone);
    atomic_store(&aof_on, 1);
    if (!aof_st.fsync_started && pthread_create(&aof_st.fsync_tid, NULL, fsync_main, NULL) == 0) {
        pthread_detach(aof_st.fsync_tid);
        aof_st.fsync_started = 1;
    }
}

/* Wait until every other worker finished the loop iteration it was in (so none still runs a
 * command that saw aof_on == 0). */
static void wait_workers(int self)
{
    uint64_t seen[MAX_WORKERS];
    int n = persist_host.nworkers < MAX_WORKERS ? persist_host.nworkers : MAX_WORKERS;

    for (int i = 0; i < n; i++)
        seen[i] = atomic_load(&epochs[i]);
    if (persist_host.wake_workers(persist_host.ctx))
        return; /* the workers are not up */
    for (int i = 0; i < n; i++) {
        int64_t until = util_mono_us() + 2000000;
        if (i == self)
            continue;
        while (atomic_load(&epochs[i]) == seen[i] && util_mono_us() < until)
            usleep(200);
    }
}

void persist_wait_workers(int self)
{
    wait_workers(self);
}

/* aof_lock for a command: a thread inside EXEC holds stripes and only tries it. */
static int alock_for_command(void)
{
    if (store_held)
        return pthread_mutex_trylock(&aof_lock) ? -1 : 0;
    pthread_mutex_lock(&aof_lock);
    return 0;
}

int aof_rewrite_request(int in_exec)
{
    int rc;

    if (alock_for_command())
        return AOF_RW_BUSY;
    if (aof_st.sn.pid) {
        pthread_mutex_unlock(&aof_lock);
        return AOF_RW_BUSY;
    }
    if (in_exec || persist_bgsave_running()) { /* one child at a time, as Redis: the timer starts it */
        aof_st.scheduled = 1;
        pthread_mutex_unlock(&aof_lock);
        return AOF_RW_SCHEDULED;
    }
    /* with the AOF off Redis still writes one: a base file and its manifest */
    rc = atomic_load(&aof_on) ? aof_rewrite_start_locked(!aof_st.have_manifest)
                              : aof_rewrite_off_start_locked();
    pthread_mutex_unlock(&aof_lock);
    return rc ? AOF_RW_ERR : AOF_RW_OK;
}

int aof_set_enabled(int self, int on, char *err, size_t cap)
{
    int rc = 0;

    if (alock_for_command()) {
        snprintf(err, cap, "can't change appendonly inside a transaction");
        return -1;
    }
    if (on && !atomic_load(&aof_on)) {
        char d[1400], mp[2048], mname[AOF_NAME_MAX + 16];
        aof_dir_path(d, sizeof(d));
        if (aof_make_dir()) {
            snprintf(err, cap, "can't create the append-only directory");
            pthread_mutex_unlock(&aof_lock);
            return -1;
        }
        /* whatever AOF is on disk is stale now: it is replaced by the first rewrite */
        snprintf(mname, sizeof(mname), "%s.manifest", cfg.appendfilename);
        aof_join(mp, sizeof(mp), d, mname);
        if (aof_manifest_read(d, cfg.appendfilename, &aof_st.m, err, cap) < 0)
            memset(&aof_st.m, 0, sizeof(aof_st.m));
        unlink(mp);
        aof_st.have_manifest = 0;
        aof_st.base_size = aof_st.incr_prev_size = 0;
        aof_start_logging();
        pthread_mutex_unlock(&aof_lock);
        wait_workers(self); /* commands that missed aof_on are done */
        pthread_mutex_lock(&aof_lock);
        if (store_held) { /* inside EXEC: the timer starts it, as Redis's in_exec case */
            aof_st.scheduled = 1;
            log_warn("AOF was enabled during a transaction. An AOF background was scheduled "
                     "to start when possible.");
        } else if (aof_st.sn.pid) {
            aof_st.scheduled = 1; /* after the running one */
            log_warn("AOF was enabled but there is already another background operation. An "
                     "AOF background was scheduled to start when possible.");
        } else if (aof_rewrite_start_locked(1)) {
            aof_st.scheduled = 1; /* retried by the timer */
        }
        cfg.appendonly = 1;
    } else if (!on && atomic_load(&aof_on)) {
        atomic_store(&aof_on, 0);
        if (!persist_keep_gone_hook)
            atomic_store(&store_gone_hook, NULL);
        if (aof_st.sn.pid) {
            log_notice("Killing running AOF rewrite child: %ld", (long)aof_st.sn.pid);
            snapshot_kill(&aof_st.sn);
            aof_rewrite_reap_locked(1);
        }
        aof_close();
        cfg.appendonly = 0;
    }
    pthread_mutex_unlock(&aof_lock);
    return rc;
}

int aof_initial_rewrite_running(void)
{
    int r;

    pthread_mutex_lock(&aof_lock);
    r = atomic_load(&aof_on) && !aof_st.have_manifest && snapshot_running(&aof_st.sn);
    pthread_mutex_unlock(&aof_lock);
    return r;
}

void aof_shutdown(void)
{
    pthread_mutex_lock(&aof_lock);
    if (aof_st.sn.pid) {
        log_warn("There is a child rewriting the AOF. Killing it!");
        snapshot_kill(&aof_st.sn);
        aof_rewrite_reap_locked(1);
    }
    if (atomic_load(&aof_on)) {
        log_notice("Calling fsync() on the AOF file.");
        aof_close();
    }
    pthread_mutex_unlock(&aof_lock);
}
