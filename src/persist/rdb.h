/* RDB snapshots in Redis 7.0's format (RDB version 10): written from the store, loaded into
 * it. Strings (integer and LZF encodings), lists, sets, hashes and sorted sets are written in
 * the plain encodings every Redis since 2.x loads (list, set, hash, zset2), so the files pass
 * redis-check-rdb and load in redis-server. Loading also reads what Redis 7.0 writes:
 * quicklist-2 lists, intset and listpack sets/hashes/sorted sets, and what older Redis wrote
 * (RDB 6-9: ziplist and quicklist lists, zipmap and ziplist hashes, ziplist sorted sets,
 * text-double sorted sets, first-layout streams).
 *
 * memcached client flags and CAS values are kept per key in an AUX field written just before
 * the key ("tc-mcmeta" = "<flags> <cas>"): Redis and redis-check-rdb accept AUX fields anywhere
 * and ignore unknown names, and our loader applies it to the next key.
 *
 * Not thread-safe with respect to the store: rdb_save needs every stripe held by the caller
 * (SAVE) or a private copy of memory (the BGSAVE child); rdb_load runs before the workers. */
#ifndef TC_RDB_H
#define TC_RDB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct store;

#define RDB_VERSION 10

struct rdb_save_opts {
    int compress; /* LZF for strings longer than 20 bytes */
    int checksum; /* CRC64 trailer (0 written when off) */
    long long autosync; /* a file: to disk every this many bytes while written, 0 only at
                         * the end (rdb-save-incremental-fsync, aof-rewrite-incremental-fsync) */
};

/* Redis's REDIS_AUTOSYNC_BYTES (7.0: the same for RDB files and AOF rewrites). */
#define RDB_AUTOSYNC_BYTES (4LL << 20)

/* Incremental fsync of a file being written, as Redis's rio with autosync: each time the
 * bytes written pass another step, the writeout of that step starts (sync_file_range) and
 * the one of the step before it is waited for, so the page cache never holds more than two
 * steps of it. *synced: the bytes handed to the disk so far (0 at first). Any thread. 0, or
 * -1 with errno. */
int rdb_autosync(int fd, long long written, long long *synced, long long step);

struct rdb_load_info {
    uint64_t keys;    /* keys loaded */
    uint64_t expired; /* keys skipped because their expire time had passed */
    uint64_t skipped; /* keys of types twincache cannot hold (logged) */
    uint64_t empty;   /* empty collections skipped (a corrupt file; logged) */
    int version;      /* RDB version of the file */
    /* replication (AUX repl-id / repl-offset, as Redis writes them): has_repl set when both */
    int has_repl;
    char repl_id[41];
    unsigned long long repl_offset;
    int repl_stream_db; /* AUX repl-stream-db, 0 when absent */
    uint64_t end_off;   /* bytes up to the end of the RDB (EOF and its checksum) */
};

/* Redis 7.0 functions, RDB_OPCODE_FUNCTION2 records (one library's code each) written before
 * the databases, without a dependency on their owner (src/script): src/server installs the
 * hooks before loading. each calls put once per library (it may run in a fork child); load
 * adds one library at load time (-1 with the reason in err: the load fails). With no hooks
 * none are written and the records are skipped. */
struct rdb_func_hooks {
    void (*each)(void (*put)(void *arg, const char *code, size_t n), void *arg);
    int (*load)(const char *code, size_t n, char *err, size_t cap);
    void (*clear)(void); /* drop every library (DEBUG RELOAD) */
    int replace;         /* load replaces a library of the same name (DEBUG RELOAD MERGE) */
};
extern struct rdb_func_hooks rdb_funcs;

/* Set in a forkless snapshot's thread (snapshot.c): the writer puts out its header, then
 * rdb_walk(out, w) writes the stripes (each through out(w, bytes), 0 or -1) and returns 1, or
 * -1 when it stopped; the writer then ends the file. NULL elsewhere: the writer reads the
 * store itself. Such a thread's temporary file is temp-<pid>-<tid>.rdb. */
typedef int rdb_walk_fn(int (*out)(void *w, const void *p, size_t n), void *w);
extern _Thread_local rdb_walk_fn *rdb_walk;
/* A stripe's keys copied under its lock for a forkless snapshot, quickly: keys whose values
 * are structures serialized (raw: RDB bytes, each database's part after SELECTDB), strings
 * copied verbatim (items: records of database, size and the item's bytes), serialized later
 * without the lock by rdb_copy_items_bytes (the raw bytes are written as they are). */
struct rdb_copy {
    unsigned char *raw;
    size_t rawn;
    unsigned char *items;
    size_t itemsn;
    uint32_t nkeys;
};
/* Under the stripe lock: copy stripe's keys live at now (compress: LZF for the structures'
 * strings). 0 or -1 (out of memory: nothing kept). */
int rdb_stripe_copy(struct store *s, uint32_t stripe, int compress, int64_t now,
                    struct rdb_copy *cp);
/* The same without the keys skip(skip_arg, db, key, klen) answers nonzero for (a forkless
 * snapshot's keys changed since its start: it holds their old values apart). */
int rdb_stripe_copy_except(struct store *s, uint32_t stripe, int compress, int64_t now,
                           int (*skip)(void *arg, int db, const char *key, size_t klen),
                           void *skip_arg, struct rdb_copy *cp);
/* Under the key's stripe lock: copy the one key k when it is live at now (an empty copy,
 * nkeys 0, when it is not). 0 or -1 (out of memory). */
struct skey;
int rdb_key_copy(struct store *s, const struct skey *k, int compress, int64_t now,
                 struct rdb_copy *cp);
/* Any time after, in pieces: cp's raw bytes are RDB as they are; its strings from items
 * offset *pos on, about max_in bytes of them (at least one), as RDB bytes into *out (*n), each
 * piece starting with its SELECTDB; *pos moves past them (cp->itemsn: all done). 0 or -1. */
int rdb_copy_items_bytes(const struct rdb_copy *cp, int compress, size_t *pos, size_t max_in,
                         unsigned char **out, size_t *n);
void rdb_copy_free(struct rdb_copy *cp);

/* Write every live key of s to path atomically: a temporary file temp-<pid>.rdb in the same
 * directory, fsync, rename. now (unix ms) decides which keys are expired (not written).
 * Returns 0, or -1 with errno set and a logged reason (the temporary file is removed). The
 * caller holds every stripe or owns a private copy of the store (fork child). */
int rdb_save(struct store *s, const char *path, const struct rdb_save_opts *o, int64_t now);
/* The same with extra AUX fields (name, value pairs ending with NULL; NULL: none). */
int rdb_save_aux(struct store *s, const char *path, const struct rdb_save_opts *o, int64_t now,
                 const char *const *aux);

/* The same file written to every socket of fds (replication's diskless full sync, from a
 * fork child): a socket whose write blocks longer than timeout_ms or fails is set to -1 and
 * the others go on. aux: extra AUX fields (name, value pairs, NULL-terminated) or NULL.
 * Returns 0 while at least one socket took it all, else -1. */
int rdb_save_stream(struct store *s, int *fds, int nfds, int timeout_ms,
                    const struct rdb_save_opts *o, int64_t now, const char *const *aux);
/* Write n bytes to fd, waiting in poll up to timeout_ms whenever it would block. 0 or -1. */
int sock_write_all(int fd, const void *p, size_t n, int timeout_ms);

/* Load path into s (which should be empty). Returns 0 and fills info; 1 when the file does not
 * exist; -1 when it is unreadable or corrupt (err holds the reason; keys loaded so far stay).
 * Main thread, before the workers start. */
int rdb_load(struct store *s, const char *path, int64_t now, struct rdb_load_info *info,
             char *err, size_t errcap);
/* Set around the start-up rdb_load of a primary: each key skipped because its TTL passed
 * adds a DEL to it (RESP, a SELECT before each change of database), for the backlog the file's
 * replication ID continues in (Redis's RDBFLAGS_FEED_REPL). NULL otherwise. */
struct buf;
extern struct buf *rdb_load_expired_dels;
/* Set around rdb_load by DEBUG RELOAD NOFLUSH (without MERGE): a key that exists fails the
 * load instead of being replaced. */
extern int rdb_load_no_replace;
/* Set around rdb_load for an AOF file in RDB format (a base, or an old-style AOF's preamble):
 * the checksum is the one after EOF (commands may follow: info->end_off says where), and keys
 * whose TTL passed are loaded all the same, as Redis loads an AOF. */
extern int rdb_load_preamble;
/* Called by rdb_load after each key (done/total: bytes of the file): key-load-delay, INFO's
 * loading_* progress and a shutdown signal during start-up loading (src/persist/persist.c). */
extern void (*rdb_load_tick)(size_t done, size_t total);
/* Set in a snapshot's fork child: rdb-key-save-delay applies to what it writes. */
extern int rdb_key_delay_on;

/* ---- one value: DUMP / RESTORE payloads ----
 * A payload is the value's RDB type byte and its RDB encoding (as in a file), the RDB version
 * (2 bytes little-endian, 10) and the CRC64 of everything before (8 bytes little-endian), as
 * Redis's DUMP. rdb_dump writes strings as rdb_save does (as Redis), and collections in Redis
 * 7.0's encoding when theirs is one Redis 7.0 has (intset, listpack hash and sorted set,
 * quicklist of listpacks), else plain as rdb_save; the decoder reads every encoding Redis 2.x to
 * 7.0 writes, validating deeply: a corrupt payload is an error, never a broken value. */
struct item;

/* The DUMP payload of it's value: a malloc'd buffer in *out, *outn bytes. 0, or -1 when out
 * of memory. Under the key's stripe lock. */
int rdb_dump(struct item *it, char **out, size_t *outn);
/* 0 when the payload's footer is sound (version <= 10, CRC64 matching), else -1. */
int rdb_payload_check(const char *p, size_t n);
/* DEBUG SET-SKIP-CHECKSUM-VALIDATION: rdb_payload_check checks the version alone. */
extern _Atomic int rdb_skip_checksum;

/* A decoded value: type (OBJ_*); a string's bytes (malloc'd) or a collection's structure. */
struct rdb_value {
    int type;
    char *str;
    size_t strn;
    void *ptr;
};
/* Decode a checked payload (whole, footer included). 0 and v filled, or -1 (corrupt, empty
 * collection, or out of memory) with *why set and nothing to free. Any thread: no store. */
int rdb_payload_decode(const char *p, size_t n, struct rdb_value *v, const char **why);
/* Free what rdb_payload_decode returned, when it is not put into an item. */
void rdb_value_free(struct rdb_value *v);

/* The path of the dump: dir/dbfilename into out. */
void rdb_path(char *out, size_t cap, const char *dir, const char *file);

#endif
