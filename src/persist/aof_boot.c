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
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist_int.h"
#include "persist/rdb.h"

/* Load one file of the AOF. last: the truncated tail may be cut (aof-load-truncated). */
static int load_one(void *rctx, const char *name, int last)
{
    char path[2048], err[512] = "";
    off_t valid = 0;
    int rc;

    aof_file_path(path, sizeof(path), name);
    if (strlen(name) > 4 && !strcmp(name + strlen(name) - 4, ".rdb")) {
        struct rdb_load_info info;
        rc = rdb_load(persist_host.store, path, util_now_ms(), &info, err, sizeof(err));
        if (rc) {
            log_warn("Fatal error loading the AOF base %s: %s", path,
                     rc == 1 ? "file missing" : err);
            return -1;
        }
        log_notice("DB loaded from base file %s: %llu keys", name,
                   (unsigned long long)info.keys);
        return 0;
    }
    rc = aof_read_file(path, persist_host.replay, rctx, &valid, err, sizeof(err));
    if (rc == 1) {
        if (last)
            return 0; /* the incr file of a rewrite that had just started */
        log_warn("The AOF file %s doesn't exist", path);
        return -1;
    }
    if (rc < 0) {
        log_warn("%s", err);
        return -1;
    }
    if (rc == 2) {
        log_warn("!!! Warning: short read while loading the AOF file %s!!!", path);
        if (!last || !cfg.aof_load_truncated) {
            log_warn("Unexpected end of file reading the append only file %s. You can: 1) Make "
                     "a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. "
                     "2) Alternatively you can set the 'aof-load-truncated' configuration option "
                     "to yes and restart the server.", path);
            return -1;
        }
        log_warn("!!! Warning: last valid command at offset %lld (AOF loaded anyway because "
                 "aof-load-truncated is enabled)", (long long)valid);
        if (truncate(path, valid)) {
            log_warn("Error truncating the AOF file %s: %s", path, strerror(errno));
            return -1;
        }
        log_warn("AOF %s loaded anyway because aof-load-truncated is enabled", path);
    }
    log_notice("DB loaded from incr file %s", name);
    return 0;
}

/* Every file of the manifest, in order. 0 or -1 (logged). */
static int load_files(void)
{
    void *rctx = persist_host.replay_open(persist_host.ctx);
    int64_t t0 = util_mono_us();
    int rc = 0;

    if (!rctx)
        return -1;
    atomic_store(&aof_loading_flag, 1);
    if (aof_st.m.base[0])
        rc = load_one(rctx, aof_st.m.base, aof_st.m.nincr == 0);
    for (int i = 0; i < aof_st.m.nincr && rc == 0; i++)
        rc = load_one(rctx, aof_st.m.incr[i], i == aof_st.m.nincr - 1);
    atomic_store(&aof_loading_flag, 0);
    persist_host.replay_close(rctx);
    if (rc)
        return -1;
    log_notice("DB loaded from append only file: %.3f seconds",
               (double)(util_mono_us() - t0) / 1e6);
    return 0;
}

int aof_boot(void)
{
    char d[1400], err[256] = "";
    int rc;

    if (!cfg.appendonly)
        return 1;
    aof_dir_path(d, sizeof(d));
    rc = aof_manifest_read(d, cfg.appendfilename, &aof_st.m, err, sizeof(err));
    if (rc < 0) {
        log_warn("Fatal error reading the AOF manifest: %s", err);
        return -1;
    }
    if (rc == 1)
        return 2; /* no AOF yet: the caller loads the RDB, then aof_boot_create */
    if (load_files())
        return -1;
    aof_st.have_manifest = 1;
    aof_st.base_size = aof_st.m.base[0] ? aof_file_size(aof_st.m.base) : 0;
    aof_st.incr_prev_size = 0;
    for (int i = 0; i + 1 < aof_st.m.nincr; i++)
        aof_st.incr_prev_size += aof_file_size(aof_st.m.incr[i]);
    if (aof_st.m.nincr == 0) {
        long seq = 1;
        aof_name_incr(aof_st.m.incr[0], sizeof(aof_st.m.incr[0]), seq);
        aof_st.m.incr_seq[0] = seq;
        aof_st.m.nincr = 1;
        if (aof_manifest_write(d, cfg.appendfilename, &aof_st.m))
            return -1;
    }
    {
        char p[2048];
        aof_file_path(p, sizeof(p), aof_st.m.incr[aof_st.m.nincr - 1]);
        if (aof_switch(p, 1))
            return -1;
    }
    struct aof_stats st;
    aof_get_stats(&st);
    aof_st.base_size_at_rw = aof_st.base_size + aof_st.incr_prev_size + st.incr_size;
    aof_start_logging();
    return 0;
}

int aof_boot_create(void)
{
    char d[1400], p[2048];
    struct rdb_save_opts o = {.compress = cfg.rdbcompression, .checksum = cfg.rdbchecksum};

    if (aof_make_dir())
        return -1;
    aof_dir_path(d, sizeof(d));
    memset(&aof_st.m, 0, sizeof(aof_st.m));
    aof_st.m.base_seq = 1;
    aof_name_base(aof_st.m.base, sizeof(aof_st.m.base), 1);
    aof_file_path(p, sizeof(p), aof_st.m.base);
    log_notice("Creating AOF base file %s on server start", aof_st.m.base);
    if (rdb_save(persist_host.store, p, &o, util_now_ms()))
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
    aof_st.have_manifest = 1;
    aof_st.base_size = aof_file_size(aof_st.m.base);
    aof_st.base_size_at_rw = aof_st.base_size;
    aof_start_logging();
    return 0;
}
