/* The AOF's files and their rewrite (Redis 7 multi-part AOF; see aof_log.h and aof.h).
 *
 * Rewrite: a snapshot job (snapshot.h). With every stripe held, appends switch to a new incr
 * file (the old buffer is written and fsync'd into the old one) and the manifest lists it;
 * then the fork. The child writes the store as an RDB base file. When it succeeds the
 * manifest becomes {new base, new incr} and the older files are deleted. */
#define _GNU_SOURCE
#include "persist/aof_log.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist_int.h"
#include "persist/rdb.h"

pthread_mutex_t aof_lock = PTHREAD_MUTEX_INITIALIZER;
struct aof_state aof_st = {.sn = SNAPSHOT_INIT, .last_rw_ok = 1, .last_rw_s = -1};

void aof_dir_path(char *out, size_t cap)
{
    aof_join(out, cap, cfg.dir, cfg.appenddirname);
}

void aof_file_path(char *out, size_t cap, const char *name)
{
    char d[1400];
    aof_dir_path(d, sizeof(d));
    aof_join(out, cap, d, name);
}

void aof_name_base(char *out, size_t cap, long seq)
{
    /* as Redis: an RDB base with aof-use-rdb-preamble yes, else RESP commands */
    snprintf(out, cap, "%s.%ld.base.%s", cfg.appendfilename, seq,
             cfg.aof_use_rdb_preamble ? "rdb" : "aof");
}

int aof_base_is_resp(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".aof");
}

void aof_name_incr(char *out, size_t cap, long seq)
{
    snprintf(out, cap, "%s.%ld.incr.aof", cfg.appendfilename, seq);
}

int64_t aof_file_size(const char *name)
{
    char p[2048];
    struct stat st;
    aof_file_path(p, sizeof(p), name);
    return stat(p, &st) == 0 ? (int64_t)st.st_size : 0;
}

int aof_make_dir(void)
{
    char d[1400];
    aof_dir_path(d, sizeof(d));
    if (mkdir(d, 0755) && errno != EEXIST) {
        log_warn("Can't create the append-only directory %s: %s", d, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- rewrite ---- */

struct rewrite_job {
    int discard;
    char incr_path[2048];   /* the incr file appends switch to */
    struct aof_manifest nm; /* the manifest listing it */
    long base_seq, incr_seq;
    char base_path[2048];   /* the new base file (set by prepare) */
    int64_t now;            /* the point in time (unix ms): which keys have expired */
};

/* Parent, every stripe held: the point in time of the fork is where the new incr file
 * starts. The old files plus the new incr stay loadable while the child runs. */
static int rewrite_prepare(void *arg)
{
    struct rewrite_job *j = arg;
    char d[1400];
    struct aof_stats st;

    aof_get_stats(&st);
    aof_dir_path(d, sizeof(d));
    if (!j->discard)
        aof_st.incr_prev_size += st.incr_size;
    if (aof_switch(j->incr_path, j->discard) ||
        (aof_st.have_manifest && aof_manifest_write(d, cfg.appendfilename, &j->nm)))
        return -1;
    aof_st.m = j->nm;
    aof_name_base(aof_st.child_base, sizeof(aof_st.child_base), j->base_seq);
    aof_file_path(j->base_path, sizeof(j->base_path), aof_st.child_base);
    aof_st.child_base_seq = j->base_seq;
    aof_st.child_incr_seq = j->incr_seq;
    return 0;
}

/* Child (or the snapshot thread): the store as the new base file. */
static int rewrite_write(void *arg)
{
    struct rewrite_job *j = arg;
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum,
                              .autosync = cfg.aof_rewrite_incremental_fsync ? RDB_AUTOSYNC_BYTES
                                                                            : 0};

    if (aof_base_is_resp(j->base_path))
        return aof_base_write_resp(persist_host.store, j->base_path, j->now) ? 1 : 0;
    return rdb_save(persist_host.store, j->base_path, &o, j->now) ? 1 : 0;
}

/* Parent, AOF off: nothing is appended, so no incr file; only the base's name. */
static int rewrite_prepare_off(void *arg)
{
    struct rewrite_job *j = arg;

    aof_name_base(aof_st.child_base, sizeof(aof_st.child_base), j->base_seq);
    aof_file_path(j->base_path, sizeof(j->base_path), aof_st.child_base);
    aof_st.child_base_seq = j->base_seq;
    aof_st.child_incr_seq = LONG_MAX; /* no incr file stays */
    return 0;
}

int aof_rewrite_off_start_locked(void)
{
    struct rewrite_job j = {.discard = 1};
    struct snapshot_job job = {.title = "tc-aof-rewrite",
                               .what = "Can't rewrite append only file in background",
                               .prepare = rewrite_prepare_off, .write = rewrite_write, .arg = &j,
                               .arg_size = cfg.aof_use_rdb_preamble ? sizeof(j) : 0,
                               .compress = cfg.rdbcompression}; /* RESP base: a fork */

    j.base_seq = aof_st.m.base_seq + 1;
    aof_st.last_try_ms = util_now_ms();
    j.now = job.now = aof_st.last_try_ms;
    if (aof_make_dir())
        return -1;
    if (snapshot_start(&aof_st.sn, persist_host.store, &job, NULL))
        return -1;
    aof_st.child_off = 1;
    aof_st.child_start_ms = util_now_ms();
    log_notice("Background append only file rewriting started by pid %d", (int)aof_st.sn.pid);
    return 0;
}

int aof_rewrite_start_locked(int discard)
{
    struct rewrite_job j = {.discard = discard};
    struct snapshot_job job = {.title = "tc-aof-rewrite",
                               .what = "Can't rewrite append only file in background",
                               .prepare = rewrite_prepare, .write = rewrite_write, .arg = &j,
                               .arg_size = cfg.aof_use_rdb_preamble ? sizeof(j) : 0,
                               .compress = cfg.rdbcompression}; /* RESP base: a fork */
    char incr[AOF_NAME_MAX];
    int rc;

    j.incr_seq = aof_st.m.nincr ? aof_st.m.incr_seq[aof_st.m.nincr - 1] + 1 : 1;
    j.base_seq = aof_st.m.base_seq + 1;
    aof_st.last_try_ms = util_now_ms();
    j.now = job.now = aof_st.last_try_ms;
    if (aof_make_dir())
        return -1;
    if (aof_st.m.nincr == AOF_MAX_INCR) {
        log_warn("Too many incremental AOF files: can't rewrite");
        return -1;
    }
    aof_name_incr(incr, sizeof(incr), j.incr_seq);
    aof_file_path(j.incr_path, sizeof(j.incr_path), incr);
    j.nm = aof_st.m;
    snprintf(j.nm.incr[j.nm.nincr], sizeof(j.nm.incr[0]), "%s", incr);
    j.nm.incr_seq[j.nm.nincr++] = j.incr_seq;
    rc = snapshot_start(&aof_st.sn, persist_host.store, &job, NULL);
    if (rc == SNAPSHOT_ERR_FORK)
        aof_st.last_rw_ok = 0;
    if (rc)
        return -1;
    aof_st.child_start_ms = util_now_ms();
    log_notice("Background append only file rewriting started by pid %d", (int)aof_st.sn.pid);
    return 0;
}

void aof_rewrite_reap_locked(int block)
{
    struct snapshot_result r;
    char d[1400];

    if (!snapshot_reap(&aof_st.sn, block, &r))
        return;
    aof_dir_path(d, sizeof(d));
    int ok = r.ok, off = aof_st.child_off;
    int64_t now = util_now_ms();
    aof_st.child_off = 0;
    /* a rewrite with the AOF off lands only while it stays off, and the other way round */
    if (ok && !off == !!atomic_load(&aof_on)) {
        struct aof_manifest nm, old = aof_st.m;
        memset(&nm, 0, sizeof(nm));
        snprintf(nm.base, sizeof(nm.base), "%s", aof_st.child_base);
        nm.base_seq = aof_st.child_base_seq;
        for (int i = 0; i < aof_st.m.nincr; i++)
            if (aof_st.m.incr_seq[i] >= aof_st.child_incr_seq) {
                snprintf(nm.incr[nm.nincr], sizeof(nm.incr[0]), "%s", aof_st.m.incr[i]);
                nm.incr_seq[nm.nincr++] = aof_st.m.incr_seq[i];
            }
        if (aof_manifest_write(d, cfg.appendfilename, &nm) == 0) {
            char p[2048];
            aof_st.m = nm;
            aof_st.have_manifest = 1;
            /* the files the new base replaces */
            if (old.base[0] && strcmp(old.base, nm.base)) {
                aof_file_path(p, sizeof(p), old.base);
                unlink(p);
            }
            for (int i = 0; i < old.nincr; i++)
                if (old.incr_seq[i] < aof_st.child_incr_seq) {
                    aof_file_path(p, sizeof(p), old.incr[i]);
                    unlink(p);
                }
            aof_st.base_size = aof_file_size(nm.base);
            aof_st.incr_prev_size = 0;
            for (int i = 0; i + 1 < nm.nincr; i++)
                aof_st.incr_prev_size += aof_file_size(nm.incr[i]);
            struct aof_stats st;
            aof_get_stats(&st);
            aof_st.base_size_at_rw = aof_st.base_size + aof_st.incr_prev_size + st.incr_size;
            aof_st.rewrites++;
            aof_st.rw_failures = 0;
            aof_st.last_rw_ok = 1;
            log_notice("Background AOF rewrite terminated with success");
            log_notice("Background AOF rewrite finished successfully");
        } else {
            ok = 0;
        }
    } else if (ok) {
        ok = 0; /* the AOF was turned off (or on) meanwhile */
    } else {
        log_warn("Background AOF rewrite %s",
                 r.signaled ? "terminated by signal" : "terminated with error");
    }
    if (!ok) {
        char p[2048];
        aof_file_path(p, sizeof(p), aof_st.child_base);
        unlink(p);
        if (atomic_load(&aof_on)) {
            aof_st.last_rw_ok = 0;
            aof_st.rw_failures++;
        }
    }
    aof_st.last_rw_s = (now - aof_st.child_start_ms) / 1000;
}

void aof_tick(void)
{
    pthread_mutex_lock(&aof_lock);
    aof_rewrite_reap_locked(0);
    if (aof_st.scheduled && !aof_st.sn.pid && persist_bgsave_running()) {
        pthread_mutex_unlock(&aof_lock); /* a scheduled rewrite waits for the BGSAVE */
        return;
    }
    if (aof_st.scheduled && !aof_st.sn.pid && !atomic_load(&aof_on)) {
        aof_st.scheduled = 0; /* BGREWRITEAOF with the AOF off, delayed by a BGSAVE */
        aof_rewrite_off_start_locked();
    }
    if (!aof_st.sn.pid && atomic_load(&aof_on)) {
        struct aof_stats st;
        aof_get_stats(&st);
        int64_t cur = aof_st.base_size + aof_st.incr_prev_size + st.incr_size;
        int64_t base = aof_st.base_size_at_rw > 0 ? aof_st.base_size_at_rw : 1;
        int retry_ok = aof_st.last_rw_ok || util_now_ms() - aof_st.last_try_ms >= 5000;
        if (aof_st.scheduled || (!aof_st.have_manifest && retry_ok)) {
            aof_st.scheduled = 0;
            aof_rewrite_start_locked(!aof_st.have_manifest);
        } else if (cfg.auto_aof_rewrite_percentage > 0 && cur > cfg.auto_aof_rewrite_min_size &&
                   (cur - base) * 100 / base >= cfg.auto_aof_rewrite_percentage && retry_ok) {
            log_notice("Starting automatic rewriting of AOF on %lld%% growth",
                       (long long)((cur - base) * 100 / base));
            aof_rewrite_start_locked(0);
        }
    }
    pthread_mutex_unlock(&aof_lock);
}

/* ---- INFO ---- */

#define P(...)                                                                                \
    do {                                                                                      \
        int n_ = snprintf(line, sizeof(line), __VA_ARGS__);                                   \
        buf_append(b, line, (size_t)n_);                                                      \
    } while (0)

void aof_info(struct buf *b)
{
    char line[256];
    struct aof_stats st;
    int on = atomic_load(&aof_on);

    aof_get_stats(&st);
    pthread_mutex_lock(&aof_lock);
    P("aof_enabled:%d\r\n", on);
    P("aof_rewrite_in_progress:%d\r\n", aof_st.sn.pid ? 1 : 0);
    P("aof_rewrite_scheduled:%d\r\n", aof_st.scheduled);
    P("aof_last_rewrite_time_sec:%lld\r\n", (long long)aof_st.last_rw_s);
    P("aof_current_rewrite_time_sec:%lld\r\n",
      aof_st.sn.pid ? (long long)((util_now_ms() - aof_st.child_start_ms) / 1000) : -1LL);
    P("aof_last_bgrewrite_status:%s\r\n", aof_st.last_rw_ok ? "ok" : "err");
    P("aof_rewrites:%llu\r\n", (unsigned long long)aof_st.rewrites);
    P("aof_rewrites_consecutive_failures:%d\r\n", aof_st.rw_failures);
    P("aof_last_write_status:%s\r\n", st.last_write_ok ? "ok" : "err");
    P("aof_last_cow_size:0\r\n");
    if (on) {
        P("aof_current_size:%lld\r\n",
          (long long)(aof_st.base_size + aof_st.incr_prev_size + st.incr_size));
        P("aof_base_size:%lld\r\n", (long long)aof_st.base_size_at_rw);
        P("aof_pending_rewrite:%d\r\n", aof_st.scheduled);
        P("aof_buffer_length:%llu\r\n", (unsigned long long)(st.appended - st.written));
        P("aof_pending_bio_fsync:0\r\n");
        P("aof_delayed_fsync:0\r\n");
    }
    pthread_mutex_unlock(&aof_lock);
}
