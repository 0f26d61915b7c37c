/* Private to src/script: what the EVAL handlers (cmd_script.c) and the Lua side
 * (script_lua.c, script_conv.c) share. Everything here runs on a worker thread and touches only
 * that thread's Lua state. */
#ifndef TC_SCRIPT_INT_H
#define TC_SCRIPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

struct conn;

/* Script flags from a "#!lua flags=..." first line (Redis 7.0's names). */
#define SCRIPT_FLAG_SHEBANG 0x01 /* the script has a shebang (not in compatibility mode) */
#define SCRIPT_FLAG_NO_WRITES 0x02
#define SCRIPT_FLAG_ALLOW_OOM 0x04
#define SCRIPT_FLAG_ALLOW_STALE 0x08
#define SCRIPT_FLAG_NO_CLUSTER 0x10
#define SCRIPT_FLAG_CROSS_SLOT 0x20

/* Learned per script and thread (kept with the flags, see cmd_script.c "Locking") */
#define SCRIPT_FLAG_LEARNED 0x100    /* it ran once holding every stripe */
#define SCRIPT_FLAG_UNDECLARED 0x200 /* it touched a stripe of no declared key */

/* redis.set_repl flags */
#define SCRIPT_REPL_AOF 1
#define SCRIPT_REPL_REPLICA 2

/* One run of a script, set up by the EVAL handler. */
struct script_run {
    struct conn *caller; /* the client that sent EVAL: its database, its reply buffer */
    const char *sha;     /* 40 lowercase hex digits */
    int readonly;        /* EVAL_RO, EVALSHA_RO or a no-writes script: writes are refused */
    int allow_oom;       /* allow-oom: denyoom commands run over maxmemory */
    int oom;             /* used memory was over maxmemory when the script started */
    int wrote;           /* a write command ran (OOM is no longer checked, as in Redis) */
    int repl;            /* redis.set_repl flags: SCRIPT_REPL_AOF logs the writes */
    int flags;           /* SCRIPT_FLAG_* of the script or function, learned bits included */
    const char *fname;   /* FCALL: the function's name (fname_n bytes), run from the registry
                          * table "tc_fn" with (KEYS, ARGV) as arguments; NULL for EVAL */
    size_t fname_n;
    /* time limit (script_busy.c) */
    const char *name;    /* a function's name (NULL: a script, named by sha) */
    int is_function;     /* FCALL: FUNCTION KILL kills it, SCRIPT KILL does not */
    long long start_ms;  /* monotonic */
    int busy;            /* past busy-reply-threshold, counted in cmd_script_busy */
    int stop;            /* 1 killed, 2 the server shuts down: every further call fails */
    /* locking (cmd_script.c) */
    int track;           /* check the stripes of each command's keys */
    int declared_only;   /* holds only the declared keys' stripes: take others as touched */
    int effects;         /* a write or PUBLISH ran: the run can no longer start over */
    int undeclared;      /* a command touched a stripe of no declared key */
    int restart;         /* give up this run: start over holding every stripe */
    uint64_t *held;      /* the stripes held (declared_only: grows as keys are touched) */
    const uint64_t *declared; /* the declared keys' stripes (track) */
    int debug;           /* a SCRIPT DEBUG session runs it (script_ldb.c): the debugger's
                          * line hook instead of the time limit, every stripe held */
};

/* script_busy.c: the time limit. enter/leave bracket a run; check (from the Lua hook) marks
 * it busy past the threshold and returns 1 when it must stop (killed, or shutting_down);
 * wrote makes it unkillable. */
void script_busy_enter(struct script_run *run);
void script_busy_leave(struct script_run *run);
int script_busy_check(struct script_run *run, int shutting_down);
void script_busy_wrote(void);
/* SCRIPT KILL (is_eval) and FUNCTION KILL. */
void script_kill_generic(struct conn *c, int is_eval);
/* FUNCTION STATS' running_script: when a function runs (on any worker), 1 with its name, its
 * FCALL command line (argc words, each up to SCRIPT_RUN_ARGLEN bytes, at most SCRIPT_RUN_ARGS)
 * and the ms it has run; else 0. */
#define SCRIPT_RUN_ARGS 16
#define SCRIPT_RUN_ARGLEN 64
int script_running_info(char *name, size_t cap, char (*argv)[SCRIPT_RUN_ARGLEN], int *argc,
                        long long *ms);

/* cmd_script.c: before a command runs in a script (track set): make sure the stripes of its
 * keys are held. Returns 0, or SCRIPT_KEYS_RESTART (the run must start over holding every
 * stripe: nothing was written yet) or SCRIPT_KEYS_CONFLICT (another script that wrote holds
 * what this one, which wrote too, needs). */
struct cmd;
struct slice;
#define SCRIPT_KEYS_RESTART 1
#define SCRIPT_KEYS_CONFLICT 2
int script_keys_check(struct script_run *run, const struct cmd *cmd, int argc,
                      const struct slice *argv);
/* cmd_script.c: run the compiled script of run (sha, flags) for c (KEYS = c->argv[3..3+nkeys),
 * ARGV the rest) as EVAL does: maxmemory check, stripes held (see "Locking" there), the
 * time limit, its writes logged as one MULTI/EXEC, the reply written to c. */
void script_exec(struct conn *c, struct script_run *run, int nkeys);
/* Store the flags (learned bits) of the script sha compiled in this thread's state. */
void script_lua_set_flags(const char *sha, int flags);

/* This thread's Lua state, created on first use and reset when SCRIPT FLUSH bumped the cache
 * generation. Returns NULL when it cannot be created (out of memory). */
lua_State *script_lua_state(void);
/* Flags of the script sha compiled in this thread's state, or -1 when it is not there. */
int script_lua_flags(const char *sha);
/* Compile body (n bytes) as the script sha into this thread's state. Returns its flags, or
 * -1 with the error reply (compile error, bad shebang) written to c. */
int script_lua_load(struct conn *c, const char *sha, const char *body, size_t n);
/* Run the compiled script sha with KEYS = c->argv[3..3+nkeys) and ARGV = the rest, writing
 * its reply to c. The caller holds every stripe (or runs inside EXEC, which does). */
void script_lua_run(struct conn *c, struct script_run *run, int nkeys);
/* cmd_script.c: run run (EVAL's or FCALL's, set up) with nkeys keys: the OOM check, the
 * stripes held, the writes logged as one MULTI ... EXEC, the reply written to c. */
void script_exec(struct conn *c, struct script_run *run, int nkeys);
/* script_func.c: make this thread's state hold the current libraries' functions (registry
 * tables "tc_fn" name -> callback, "tc_ff" name -> flags). Returns L, or NULL (out of
 * memory). */
lua_State *script_func_state(void);
/* script_func.c: push the key of function name (n bytes) in "tc_fn"/"tc_ff": function names
 * are found ignoring case, as Redis's. */
void func_push_key(lua_State *L, const char *name, size_t n);
/* Bytes allocated by every thread's Lua state. */
size_t script_lua_memory(void);

/* script_sandbox.c: protect the state whose real globals table is at index g (libraries
 * loaded, unwanted functions removed): see that file. Replaces L's globals by a read-only
 * proxy; the real table stays in the registry as "tc_G", the error handler as "tc_errh".
 * Then script_sandbox_pairs (through lua_cpcall) installs pairs. */
void script_sandbox(lua_State *L, int g);
int script_sandbox_pairs(lua_State *L);

/* script_cmsgpack.c: push the cmsgpack library table (pack, unpack, unpack_one,
 * unpack_limit). */
int script_open_cmsgpack(lua_State *L);
/* script_struct.c: push the struct library table (pack, unpack, size). */
int script_open_struct(lua_State *L);

/* ---- script_conv.c: conversions ---- */

/* Push the Lua value of the RESP reply at p[0..n) (one complete reply); returns the bytes
 * used, or 0 when the reply is malformed or too deep (then nothing is pushed). */
size_t script_reply_to_lua(lua_State *L, const char *p, size_t n);
/* Write the value at the top of L's stack to c as a reply (script_resp: the RESP version the
 * script chose with redis.setresp, which decides how booleans convert). Pops nothing. */
void script_lua_to_reply(lua_State *L, struct conn *c, int script_resp);
/* Count the script's error reply msg (n bytes, "-CODE ..." or "CODE ..."; the error table at
 * idx, if any) for the running command: its failed_calls and, unless the table says
 * ignore_error_stats_update (a command's error, counted when the command answered it),
 * errorstats by its code. */
void script_count_error(lua_State *L, int idx, const char *msg, size_t n);
/* Push Redis's error table {err = "CODE msg"} for msg ("-CODE msg" or plain "msg": code ERR). */
void script_push_error(lua_State *L, const char *msg, size_t n);

/* ---- script_ldb.c: the Lua debugger (SCRIPT DEBUG); one session per thread ---- */

#define LDB_OFF 0
#define LDB_YES 1  /* conn->ldb: the next EVAL forks a session */
#define LDB_SYNC 2 /* the next EVAL runs a session on the worker */

/* YES: fork with every stripe held. Returns 0 in the parent (c must be closed now), 1 in the
 * child (which serves the session, then exits), -1 with the error replied. */
int ldb_fork(struct conn *c);
/* Start (c->argv[1] is the script) and end a session around EVAL's run. The end sends
 * "<endsession>"; in a forked child it also writes EVAL's reply and exits. */
void ldb_session_start(struct conn *c, int forked);
void ldb_session_end(struct conn *c);
/* A session runs on this thread; ... and logs redis.call (it is stepping). */
int ldb_active(void);
int ldb_logging(void);
/* Log lines: "<redis> argv...", "<reply> human form of the RESP reply p[0..n)",
 * "<error> prefix msg". */
struct slice;
void ldb_log_command(int argc, const struct slice *argv);
void ldb_log_reply(const char *p, size_t n);
void ldb_log_error(const char *prefix, const char *msg, size_t n);
/* redis.debug() and redis.breakpoint(). */
int ldb_redis_debug(lua_State *L);
int ldb_redis_breakpoint(lua_State *L);
/* ldb_text.c: the value at idx (Redis's debugger form), the RESP reply p[0..n) (its human
 * form), appended to b. */
struct buf;
void ldb_cat_value(struct buf *b, lua_State *L, int idx);
void ldb_cat_reply(struct buf *b, const char *p, size_t n);
/* A worker thread ends (script_lua.c): free the debugger's buffers. */
void ldb_thread_exit(void);
/* The line hook of a debugged run: stops, sends the log, runs the debugger's commands. */
void ldb_line_hook(lua_State *L, lua_Debug *ar, struct script_run *run);

#endif
