/* RDB snapshots in Redis 7.0's format (RDB version 10): written from the store, loaded into
 * it. Strings (integer and LZF encodings), lists, sets, hashes and sorted sets are written in
 * the plain encodings every Redis since 2.x loads (list, set, hash, zset2), so the files pass
 * redis-check-rdb and load in redis-server. Loading also reads what Redis 7.0 writes:
 * quicklist-2 lists, intset and listpack sets/hashes/sorted sets.
 *
 * memcached client flags and CAS values are kept per key in an AUX field written just before
 * the key ("tc-mcmeta" = "<flags> <cas>"): Redis and redis-check-rdb accept AUX fields anywhere
 * and ignore unknown names, and our loader applies it to the next key.
 *
 * Not thread-safe with respect to the store: rdb_save needs every stripe held by the caller
 * (SAVE) or a private copy of memory (the BGSAVE child); rdb_load runs before the workers. */
#ifndef TC_RDB_H
#define TC_RDB_H

#include <stddef.h>
#include <stdint.h>

struct store;

#define RDB_VERSION 10

struct rdb_save_opts {
    int compress; /* LZF for strings longer than 20 bytes */
    int checksum; /* CRC64 trailer (0 written when off) */
};

struct rdb_load_info {
    uint64_t keys;    /* keys loaded */
    uint64_t expired; /* keys skipped because their expire time had passed */
    uint64_t skipped; /* keys of types twincache cannot hold (logged) */
    int version;      /* RDB version of the file */
};

/* Redis 7.0 functions, RDB_OPCODE_FUNCTION2 records (one library's code each) written before
 * the databases, without a dependency on their owner (src/script): src/server installs the
 * hooks before loading. each calls put once per library (it may run in a fork child); load
 * adds one library at load time (-1 with the reason in err: the load fails). With no hooks
 * none are written and the records are skipped. */
struct rdb_func_hooks {
    void (*each)(void (*put)(void *arg, const char *code, size_t n), void *arg);
    int (*load)(const char *code, size_t n, char *err, size_t cap);
};
extern struct rdb_func_hooks rdb_funcs;

/* Write every live key of s to path atomically: a temporary file temp-<pid>.rdb in the same
 * directory, fsync, rename. now (unix ms) decides which keys are expired (not written).
 * Returns 0, or -1 with errno set and a logged reason (the temporary file is removed). The
 * caller holds every stripe or owns a private copy of the store (fork child). */
int rdb_save(struct store *s, const char *path, const struct rdb_save_opts *o, int64_t now);

/* Load path into s (which should be empty). Returns 0 and fills info; 1 when the file does not
 * exist; -1 when it is unreadable or corrupt (err holds the reason; keys loaded so far stay).
 * Main thread, before the workers start. */
int rdb_load(struct store *s, const char *path, int64_t now, struct rdb_load_info *info,
             char *err, size_t errcap);

/* The path of the dump: dir/dbfilename into out. */
void rdb_path(char *out, size_t cap, const char *dir, const char *file);

#endif
