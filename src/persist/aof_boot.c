/* The AOF at start-up (see aof_log.h): load the files the manifest lists (the base as an RDB,
 * the incr files by replaying their commands through the host), or create the first AOF
 * from the store; then open the last incr file for appending. Main thread, before the
 * workers. */
#define _GNU_SOURCE
#include "persist/aof_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist_int.h"
#include "persist/rdb.h"
#include "store/store.h"

static char loading_name[AOF_NAME_MAX]; /* the file being replayed (log lines) */
_Thread_local int aof_replaying;

const char *aof_loading_name(void)
{
    return loading_name;
}

/* 1 when the file starts with an RDB signature (an RDB base, an old-style AOF's preamble). */
static int file_is_rdb(const char *path)
{
    char sig[5];
    FILE *f = fopen(path, "r");
    int yes;

    if (!f)
        return 0;
    yes = fread(sig, 1, 5, f) == 5 && !memcmp(sig, "REDIS", 5);
    fclose(f);
    return yes;
}

/* Load one file of the AOF as Redis's loadSingleAppendOnlyFile (with its log lines): an RDB
 * (signature REDIS) and then, for an old-style AOF, the commands after it; else commands.
 * last: a truncated tail may be cut (aof-load-truncated). 0 or -1 (logged). */
static int load_one(void *rctx, const char *name, int last, int base)
{
    char path[2048], err[512] = "";
    off_t valid = 0, start = 0;
    int64_t t0 = util_mono_us();
    int rc;

    aof_file_path(path, sizeof(path), name);
    snprintf(loading_name, sizeof(loading_name), "%s", name);
    if (file_is_rdb(path)) {
        struct rdb_load_info info;
        int old_style = !strcmp(name, cfg.appendfilename);
        log_notice(old_style ? "Reading RDB preamble from AOF file..."
                             : "Reading RDB base file on AOF loading...");
        rdb_load_preamble = 1;
        rc = rdb_load(persist_host.store, path, util_now_ms(), &info, err, sizeof(err));
        rdb_load_preamble = 0;
        if (rc) {
            if (err[0])
                log_warn("%s", err);
            log_warn(old_style ? "Error reading the RDB preamble of the AOF file %s, AOF loading "
                                 "aborted"
                               : "Error reading the RDB base file %s, AOF loading aborted",
                     name);
            return -1;
        }
        start = (off_t)info.end_off;
        if (old_style)
            log_notice("Reading the remaining AOF tail...");
    }
    rc = aof_read_file(path, start, persist_host.replay, rctx, &valid, err, sizeof(err));
    if (rc == 1) {
        log_warn("The append log file %s doesn't exist: %s", name, strerror(ENOENT));
        return -1;
    }
    if (rc < 0) {
        if (err[0])
            log_warn("%s", err);
        return -1;
    }
    if (rc == 3)
        log_warn("Revert incomplete MULTI/EXEC transaction in AOF file %s", name);
    if (rc >= 2) {
        if (!cfg.aof_load_truncated) {
            log_warn("Unexpected end of file reading the append only file %s. You can: 1) Make "
                     "a backup of your AOF file, then use ./redis-check-aof --fix "
                     "<filename.manifest>. 2) Alternatively you can set the "
                     "'aof-load-truncated' configuration option to yes and restart the server.",
                     name);
            return -1;
        }
        log_warn("!!! Warning: short read while loading the AOF file %s!!!", name);
        log_warn("!!! Truncating the AOF %s at offset %llu !!!", name,
                 (unsigned long long)valid);
        if (truncate(path, valid)) {
            log_warn("Error truncating the AOF file %s: %s", name, strerror(errno));
            log_warn("Unexpected end of file reading the append only file %s. You can: 1) Make "
                     "a backup of your AOF file, then use ./redis-check-aof --fix "
                     "<filename.manifest>. 2) Alternatively you can set the "
                     "'aof-load-truncated' configuration option to yes and restart the server.",
                     name);
            return -1;
        }
        log_warn("AOF %s loaded anyway because aof-load-truncated is enabled", name);
        if (!last) {
            log_warn("Fatal error: the truncated file is not the last file");
            return -1;
        }
    }
    log_notice("DB loaded from %s file %s: %.3f seconds", base ? "base" : "incr", name,
               (double)(util_mono_us() - t0) / 1e6);
    return 0;
}

/* Every file of the manifest, in order, as Redis's loadAppendOnlyFiles. 0 (loaded), 1 (every
 * file empty: nothing to load) or -1 (logged: a file is missing or does not load). */
static int load_files(void)
{
    int64_t t0 = util_mono_us(), total = 0;
    int rc = 0, nfiles = aof_st.m.nincr + (aof_st.m.base[0] ? 1 : 0), at = 0;
    void *rctx;

    for (int i = -1; i < aof_st.m.nincr; i++) {
        const char *name = i < 0 ? aof_st.m.base : aof_st.m.incr[i];
        char p[2048];
        struct stat st;
        if (!name[0])
            continue;
        aof_file_path(p, sizeof(p), name);
        if (stat(p, &st)) {
            log_warn("Unable to obtain the AOF file %s length. stat: %s", name, strerror(errno));
            return -1;
        }
        total += st.st_size;
    }
    if (total == 0)
        return 1;
    if (!(rctx = persist_host.replay_open(persist_host.ctx)))
        return -1;
    atomic_store(&aof_loading_flag, 1);
    if (aof_st.m.base[0])
        rc = load_one(rctx, aof_st.m.base, ++at == nfiles, 1);
    for (int i = 0; i < aof_st.m.nincr && rc == 0; i++)
        rc = load_one(rctx, aof_st.m.incr[i], ++at == nfiles, 0);
    atomic_store(&aof_loading_flag, 0);
    loading_name[0] = 0;
    persist_host.replay_close(rctx);
    if (rc)
        return -1;
    (void)t0;
    return 0;
}

static int exists(const char *path, int dir)
{
    struct stat st;
    return stat(path, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : !S_ISDIR(st.st_mode));
}

/* An AOF of Redis before 7.0 (<dir>/<appendfilename>) becomes the base of a manifest in the
 * append-only directory, as Redis's aofUpgradePrepare. 0 or -1 (logged). */
static int upgrade_old(const char *d, const char *old)
{
    char to[2048];

    if (aof_make_dir())
        return -1;
    memset(&aof_st.m, 0, sizeof(aof_st.m));
    snprintf(aof_st.m.base, sizeof(aof_st.m.base), "%s", cfg.appendfilename);
    aof_st.m.base_seq = 1;
    if (aof_manifest_write(d, cfg.appendfilename, &aof_st.m))
        return -1;
    aof_join(to, sizeof(to), d, cfg.appendfilename);
    if (rename(old, to)) {
        log_warn("Error trying to move the old AOF file %s into dir %s: %s", cfg.appendfilename,
                 cfg.appenddirname, strerror(errno));
        return -1;
    }
    log_notice("Successfully migrated an old-style AOF file (%s) into the AOF directory (%s).",
               cfg.appendfilename, cfg.appenddirname);
    return 0;
}

/* Read the manifest (Redis's aofLoadManifestFromDisk, then the upgrade of an old-style AOF).
 * 0, or -1 (logged as Redis logs a fatal manifest error). */
static int read_manifest(void)
{
    char d[1400], old[2048], err[256] = "";
    int rc;

    aof_dir_path(d, sizeof(d));
    rc = exists(d, 1) ? aof_manifest_read(d, cfg.appendfilename, &aof_st.m, err, sizeof(err)) : 1;
    if (rc < 0) {
        if (!strncmp(err, "Fatal error", 11)) {
            log_warn("%s", err);
            return -1;
        }
        log_warn("\n*** FATAL AOF MANIFEST FILE ERROR ***\n");
        if (aof_st.m.err_line) {
            log_warn("Reading the manifest file, at line %d\n", aof_st.m.err_line);
            log_warn(">>> '%s'\n", aof_st.m.err_text);
        }
        log_warn("%s\n", err);
        return -1;
    }
    if (rc == 1)
        memset(&aof_st.m, 0, sizeof(aof_st.m));
    aof_join(old, sizeof(old), cfg.dir, cfg.appendfilename);
    if (exists(old, 0)) {
        char in_dir[2048];
        aof_join(in_dir, sizeof(in_dir), d, cfg.appendfilename);
        if (!exists(d, 1) || (!aof_st.m.base[0] && aof_st.m.nincr == 0) ||
            (aof_st.m.base[0] && aof_st.m.nincr == 0 &&
             !strcmp(aof_st.m.base, cfg.appendfilename) && !exists(in_dir, 0)))
            return upgrade_old(d, old);
    }
    return 0;
}

/* History files the manifest still lists (a rewrite that ended before they were removed):
 * deleted, and the manifest written without them. */
static void delete_history(const char *d)
{
    if (!aof_st.m.nhist)
        return;
    for (int i = 0; i < aof_st.m.nhist; i++) {
        char p[2048];
        aof_file_path(p, sizeof(p), aof_st.m.hist[i]);
        log_notice("Removing the history file %s in the background", aof_st.m.hist[i]);
        unlink(p);
    }
    aof_st.m.nhist = 0;
    aof_manifest_write(d, cfg.appendfilename, &aof_st.m);
}

int aof_boot(void)
{
    char d[1400];
    int64_t t0 = util_mono_us();
    int rc;

    if (!cfg.appendonly)
        return 1;
    aof_dir_path(d, sizeof(d));
    if (read_manifest())
        return -1;
    if (!aof_st.m.base[0] && aof_st.m.nincr == 0) {
        delete_history(d);
        return 2; /* no AOF yet: the caller loads the RDB, then aof_boot_create */
    }
    rc = load_files();
    if (rc < 0)
        return -1;
    log_notice("DB loaded from append only file: %.3f seconds",
               (double)(util_mono_us() - t0) / 1e6);
    delete_history(d);
    /* the workers already answer INFO (aof_info reads these under aof_lock) */
    pthread_mutex_lock(&aof_lock);
    aof_st.have_manifest = 1;
    aof_st.base_size = aof_st.m.base[0] ? aof_file_size(aof_st.m.base) : 0;
    aof_st.incr_prev_size = 0;
    for (int i = 0; i + 1 < aof_st.m.nincr; i++)
        aof_st.incr_prev_size += aof_file_size(aof_st.m.incr[i]);
    pthread_mutex_unlock(&aof_lock);
    if (aof_st.m.nincr == 0) {
        long seq = 1;
        aof_name_incr(aof_st.m.incr[0], sizeof(aof_st.m.incr[0]), seq);
        aof_st.m.incr_seq[0] = seq;
        aof_st.m.nincr = 1;
        if (aof_manifest_write(d, cfg.appendfilename, &aof_st.m))
            return -1;
        log_notice("Creating AOF incr file %s on server start", aof_st.m.incr[0]);
    } else {
        log_notice("Opening AOF incr file %s on server start",
                   aof_st.m.incr[aof_st.m.nincr - 1]);
    }
    {
        char p[2048];
        aof_file_path(p, sizeof(p), aof_st.m.incr[aof_st.m.nincr - 1]);
        if (aof_switch(p, 1))
            return -1;
    }
    struct aof_stats st;
    aof_get_stats(&st);
    pthread_mutex_lock(&aof_lock);
    aof_st.base_size_at_rw = aof_st.base_size + aof_st.incr_prev_size + st.incr_size;
    pthread_mutex_unlock(&aof_lock);
    aof_start_logging();
    return 0;
}

int aof_boot_create(void)
{
    char d[1400], p[2048];
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum,
                              .autosync = cfg.aof_rewrite_incremental_fsync ? RDB_AUTOSYNC_BYTES
                                                                            : 0};

    if (aof_make_dir())
        return -1;
    aof_dir_path(d, sizeof(d));
    memset(&aof_st.m, 0, sizeof(aof_st.m));
    aof_st.m.base_seq = 1;
    aof_name_base(aof_st.m.base, sizeof(aof_st.m.base), 1);
    aof_file_path(p, sizeof(p), aof_st.m.base);
    log_notice("Creating AOF base file %s on server start", aof_st.m.base);
    if (aof_base_is_resp(p) ? aof_base_write_resp(persist_host.store, p, util_now_ms())
                            : rdb_save(persist_host.store, p, &o, util_now_ms()))
        return -1;
    aof_name_incr(aof_st.m.incr[0], sizeof(aof_st.m.incr[0]), 1);
    aof_st.m.incr_seq[0] = 1;
    aof_st.m.nincr = 1;
    if (aof_manifest_write(d, cfg.appendfilename, &aof_st.m))
        return -1;
    log_notice("Creating AOF incr file %s on server start", aof_st.m.incr[0]);
    aof_file_path(p, sizeof(p), aof_st.m.incr[0]);
    if (aof_switch(p, 1))
        return -1;
    pthread_mutex_lock(&aof_lock);
    aof_st.have_manifest = 1;
    aof_st.base_size = aof_file_size(aof_st.m.base);
    aof_st.base_size_at_rw = aof_st.base_size;
    pthread_mutex_unlock(&aof_lock);
    aof_start_logging();
    return 0;
}

int aof_debug_loadaof(void)
{
    struct store *s = persist_host.store;
    struct aof_stats st;
    uint64_t *bm;
    int oom, rc;

    pthread_mutex_lock(&aof_lock);
    if (atomic_load(&aof_on)) {
        aof_get_stats(&st);
        aof_write(st.appended, 1);
    }
    bm = snapshot_hold_all(s, &oom);
    if (oom) {
        pthread_mutex_unlock(&aof_lock);
        return -1;
    }
    store_flush(s, -1);
    if (rdb_funcs.clear)
        rdb_funcs.clear(); /* as Redis's emptyData(-1, EMPTYDB_NO_FLAGS): the functions too */
    atomic_store(&persist_loading, 1); /* other clients are answered LOADING */
    aof_replaying = 1;
    store_no_expire = 1;
    rc = read_manifest();
    if (rc == 0 && (aof_st.m.base[0] || aof_st.m.nincr))
        rc = load_files() < 0 ? -1 : 0;
    store_no_expire = 0;
    aof_replaying = 0;
    atomic_store(&persist_loading, 0);
    if (rc) {
        log_warn("DEBUG LOADAOF: the AOF did not load. Exiting.");
        exit(1);
    }
    snapshot_release_all(s, bm);
    pthread_mutex_unlock(&aof_lock);
    log_warn("Append Only File loaded by DEBUG LOADAOF");
    return 0;
}
