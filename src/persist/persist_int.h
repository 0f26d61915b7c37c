/* Internal to tc_persist: the host the server gave persist_setup, and the AOF's state shared
 * by aof_log.c, aof_rewrite.c and aof_boot.c (see aof_log.h). */
#ifndef TC_PERSIST_INT_H
#define TC_PERSIST_INT_H

#include <pthread.h>
#include <stdint.h>

#include "persist/aof.h"
#include "persist/persist.h"
#include "persist/snapshot.h"

extern struct persist_host persist_host; /* persist.c; written once before the workers */

/* Under aof_lock (lock order: aof_lock, then stripes). */
extern pthread_mutex_t aof_lock;
struct aof_state {
    struct aof_manifest m;    /* what the manifest on disk says (or will say) */
    int have_manifest;        /* m was written (turning on: not until the first rewrite) */
    struct snapshot sn;       /* rewrite child */
    char child_base[AOF_NAME_MAX];
    long child_base_seq;
    long child_incr_seq;      /* incr files with seq >= this one stay after the rewrite */
    int child_off;            /* the child rewrites with the AOF off: the base alone */
    int64_t child_start_ms;
    int scheduled;
    int last_rw_ok;
    int64_t last_rw_s;        /* aof_last_rewrite_time_sec, -1 none */
    uint64_t rewrites;
    int rw_failures;
    int64_t base_size;
    int64_t incr_prev_size;   /* incr files before the current one */
    int64_t base_size_at_rw;  /* aof_base_size: current size after the last rewrite/start */
    int64_t last_try_ms;
    pthread_t fsync_tid;
    int fsync_started;
};
extern struct aof_state aof_st; /* aof_rewrite.c */
extern _Atomic int aof_loading_flag; /* aof_log.c: aof_boot is replaying */

/* The base of an AOF in RESP (aof-use-rdb-preamble no), the store as of now written to path
 * (through a temporary file). In a fork child, or with every stripe held. 0 or -1 (logged). */
struct store;
int aof_base_write_resp(struct store *s, const char *path, int64_t now);
/* 1 when base names an AOF-format base (".aof"), 0 for an RDB one. */
int aof_base_is_resp(const char *name);

/* 1 while a BGSAVE runs (persist.c; any thread, racy). */
int persist_bgsave_running(void);

/* Paths: <dir>/<appenddirname>, a file in it, the base/incr file names of a sequence. */
void aof_dir_path(char *out, size_t cap);
void aof_file_path(char *out, size_t cap, const char *name);
void aof_name_base(char *out, size_t cap, long seq);
void aof_name_incr(char *out, size_t cap, long seq);
int64_t aof_file_size(const char *name);
/* Create the append-only directory. 0 or -1 (logged). */
int aof_make_dir(void);

/* Start logging (under aof_lock or before the workers): store_gone_hook, aof_on, the fsync
 * thread. */
void aof_start_logging(void);
/* Under aof_lock, no child: start a rewrite. discard: turning the AOF on (what is buffered
 * predates the base). 0 or -1. */
int aof_rewrite_start_locked(int discard);
/* BGREWRITEAOF with the AOF off (aof_lock held, no child running): a base file and a manifest
 * listing it alone, as Redis 7.0 writes. 0 or -1. */
int aof_rewrite_off_start_locked(void);
/* Under aof_lock: collect a finished rewrite child (block: wait for it). */
void aof_rewrite_reap_locked(int block);

#endif
