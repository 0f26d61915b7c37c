/* Lua scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT): Redis 7.0's semantics on Lua
 * 5.1. The script cache (SHA1 -> body) is shared by every worker under one mutex; each worker
 * thread owns its own Lua state, into which it compiles cached scripts on first use. A script
 * runs with every stripe held by its worker (see docs/threads.md, "Scripts"), so no client
 * on any worker sees it half done; its writes are logged to the AOF as one MULTI ... EXEC. */
#ifndef TC_SCRIPT_H
#define TC_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

struct buf;

/* Register the scripting commands (main thread, after cmd_setup, before workers start). */
void script_setup(void);

/* ---- the shared script cache (script_cache.c); every function is thread-safe ---- */

/* sha1 of p[0..n) as 40 lowercase hex digits and a NUL into out. */
void script_sha1hex(char out[41], const char *p, size_t n);
/* Add body (copied) to the cache under its SHA1 (hex written to sha). Returns 0 or -1 (OOM). */
int script_cache_add(const char *body, size_t n, char sha[41]);
/* 1 when sha (40 hex digits, any case) is cached. */
int script_cache_has(const char *sha, size_t n);
/* A copy of the body cached under sha (malloc'd, the caller frees; length in *len), or NULL. */
char *script_cache_get(const char *sha, size_t n, size_t *len);
/* Empty the cache. Bumps the generation: every worker resets its Lua state before its next
 * script. */
void script_cache_flush(void);
/* Generation of the cache (bumped by each flush). */
uint64_t script_cache_gen(void);
/* Scripts cached and the bytes of their bodies. */
void script_cache_stats(long *count, size_t *bytes);

/* SCRIPT DEBUG YES sessions run in forked children: worker 0's timer reaps those that ended
 * (script_ldb_tick), the shutdown kills those still running (script_ldb_shutdown). */
void script_ldb_tick(void);
void script_ldb_shutdown(void);

/* ---- functions in RDB files (hooks of src/persist's rdb_funcs, installed by src/server) ---- */

/* put(arg, code, n) for every function library (also in a fork child). */
void script_func_each(void (*put)(void *arg, const char *code, size_t n), void *arg);
/* Add one library read from an RDB file. 0, or -1 with the reason in err. */
int script_func_load(const char *code, size_t n, char *err, size_t cap);

#endif
