/* Append-only file, the file side: Redis 7.0's multi-part layout (a directory holding a
 * manifest, one base file and incremental files), the shared append buffer with its writer,
 * and a reader of RESP command files. Which commands go in, and in what form, is decided by
 * the command layer (src/cmd/propagate.c); when it is written, rewritten and loaded,
 * by aof_log.h.
 *
 * Layout, as Redis 7.0 names it (appendfilename "appendonly.aof"):
 *   <dir>/<appenddirname>/appendonly.aof.manifest      "file <name> seq <n> type b|i" lines
 *   <dir>/<appenddirname>/appendonly.aof.<n>.base.rdb  RDB snapshot (the base)
 *   <dir>/<appenddirname>/appendonly.aof.<n>.incr.aof  RESP commands since that base
 *
 * Threads: aof_append may be called by any thread (it takes the buffer mutex, a leaf);
 * aof_write/aof_switch/aof_close take the I/O mutex, then the buffer mutex. Callers hold
 * stripe locks while appending (that is what orders the log), never while waiting for I/O
 * except aof_switch, which the rewrite calls with every stripe held. */
#ifndef TC_AOF_H
#define TC_AOF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AOF_MAX_INCR 64
#define AOF_NAME_MAX 300

struct aof_manifest {
    char base[AOF_NAME_MAX]; /* base file name, "" when none */
    long base_seq;
    int nincr;
    char incr[AOF_MAX_INCR][AOF_NAME_MAX]; /* in load order */
    long incr_seq[AOF_MAX_INCR];
    int nhist;
    char hist[AOF_MAX_INCR][AOF_NAME_MAX]; /* type h: history files, to delete */
    int err_line;       /* a malformed manifest: the line number and text at fault, 0 none */
    char err_text[1100];
};

/* dir/name into out. */
void aof_join(char *out, size_t cap, const char *dir, const char *name);
/* Read dir/<fname>.manifest as Redis 7.0 does. Returns 0, 1 when it does not exist, -1 when
 * malformed: err holds Redis's reason, m->err_line/err_text the line at fault (0: none). */
int aof_manifest_read(const char *dir, const char *fname, struct aof_manifest *m, char *err,
                      size_t errcap);
/* Write it atomically (temp file, fsync, rename, fsync of the directory). 0 or -1 (logged). */
int aof_manifest_write(const char *dir, const char *fname, const struct aof_manifest *m);

/* ---- the append buffer and its file ---- */

/* Append records to the shared buffer: each record is [int32 db][uint32 len][len bytes of
 * RESP]; db < 0 means "any database". A SELECT is inserted when the database changes.
 * Returns the logical offset after the appended bytes (the value aof_synced must reach for
 * them to be durable). Any thread. */
uint64_t aof_append(const char *recs, size_t n);
/* Write the buffer to the current file; with do_fsync, fdatasync it afterwards. Group
 * commit: returns at once when another thread already wrote (and synced) up to upto.
 * Returns 0, or -1 on a write/fsync error (the bytes stay buffered; logged once). */
int aof_write(uint64_t upto, int do_fsync);
/* everysec: fsync what was written, without holding the I/O mutex during the fsync. */
void aof_fsync_written(void);
/* Make path (created if needed, opened for append) the file new appends go to. The bytes
 * buffered so far go to the previous file first (written and fsync'd), unless discard is
 * set (they are dropped: turning the AOF on). Returns 0 or -1 (logged; nothing changed). */
int aof_switch(const char *path, int discard);
/* Write, fsync and close the current file (shutdown, turning the AOF off). */
void aof_close(void);

struct aof_stats {
    uint64_t appended, written, synced; /* logical offsets */
    int64_t incr_size;                  /* bytes written to the current incr file */
    int last_write_ok;
};
void aof_get_stats(struct aof_stats *st);

/* ---- reading ---- */

/* Called for every command of a file: argv[i]/lens[i] borrowed for the call. Returns 0, or
 * -1 to stop loading (err filled by the callee). */
typedef int aof_cmd_fn(void *arg, int argc, const char **argv, const size_t *lens);

/* Replay the RESP commands of path from offset start (after an RDB preamble; lines starting
 * with '#' are annotations, skipped). A command cut short at the end of the file is
 * "truncated": returns 2 with *valid set to the length up to the last complete command
 * (before an unfinished MULTI); a MULTI without EXEC at the end returns 3 (*valid: before it). Returns 0 (complete), 1 (file missing), -1 (bad format or
 * the callback failed: err holds the reason, "" when the callback logged it). */
int aof_read_file(const char *path, off_t start, aof_cmd_fn *fn, void *arg, off_t *valid,
                  char *err, size_t errcap);

#endif
