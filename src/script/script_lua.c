/* The Lua side of scripting: one Lua 5.1 state per worker thread (thread-local, created on the
 * first script and reset after SCRIPT FLUSH), sandboxed as Redis 7.0's (no io/os/debug/
 * loadfile/dofile/print/getfenv/setfenv/newproxy/require; read-only globals and library tables
 * in script_sandbox.c; cjson, bit, cmsgpack and struct loaded), the redis.* API, and the script's own client: redis.call runs a
 * command through the command table on a fake struct conn with its own output buffer, and the
 * reply bytes are converted back into Lua values (script_conv.c). Memory of a state is capped
 * by its allocator, so a runaway script gets an error and the server stays up. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "cmd/monitor.h"
#include "cmd/cmd.h"
#include "cmd/acl.h"
#include "cmd/propagate.h"
#include "cmd/repl.h"
#include "cmd/tracking.h"
#include "persist/persist.h"
#include "core/config.h"
#include "core/log.h"
#include "script/script.h"
#include "script/script_int.h"

int luaopen_cjson(lua_State *L); /* lua-cjson (Debian's liblua5.1-cjson) */
int luaopen_bit(lua_State *L);   /* LuaBitOp (Debian's liblua5.1-bitop) */

#define LUA_MEM_CAP ((size_t)512 << 20) /* bytes one thread's state may allocate */
#define REDIS_VERSION_STR "7.0.15"
#define REDIS_VERSION_NUM 0x0007000f

/* One worker thread's scripting state. */
struct lstate {
    lua_State *L;
    uint64_t gen;            /* script_cache_gen() when created */
    size_t mem;              /* bytes allocated by L */
    struct conn fake;        /* the script's client: argv, db, RESP version, output */
    struct script_run *run;  /* the running script, or NULL */
    struct slice *argv;      /* redis.call arguments (borrowed from the Lua stack) */
    char (*nums)[32];        /* numbers formatted as arguments */
    int cap;                 /* slots of argv and nums */
    struct buf flat;         /* a reply with output references, made contiguous */
};

static __thread struct lstate *ls;
static _Atomic long long mem_all; /* bytes of every state */

/* ---- allocator with a cap ---- */

static void *lalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct lstate *s = ud;
    void *p;

    if (nsize == 0) {
        free(ptr);
        s->mem -= osize;
        atomic_fetch_sub_explicit(&mem_all, (long long)osize, memory_order_relaxed);
        return NULL;
    }
    if (nsize > osize && s->mem + (nsize - osize) > LUA_MEM_CAP)
        return NULL; /* Lua raises "not enough memory" */
    p = realloc(ptr, nsize);
    if (!p)
        return NULL;
    s->mem = s->mem - osize + nsize;
    atomic_fetch_add_explicit(&mem_all, (long long)nsize - (long long)osize, memory_order_relaxed);
    return p;
}

size_t script_lua_memory(void)
{
    long long m = atomic_load_explicit(&mem_all, memory_order_relaxed);
    return m > 0 ? (size_t)m : 0;
}

static int at_panic(lua_State *L)
{
    /* every entry into Lua is protected (lua_pcall/lua_cpcall): this is a bug */
    log_warn("Lua panic: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    abort();
}

/* ---- redis.* ---- */

static int raise_error(lua_State *L, const char *msg)
{
    script_push_error(L, msg, strlen(msg));
    return lua_error(L);
}

/* A refusal before the command ran: {err=..., ignore_error_stats_update=true}, raised by
 * redis.call, returned by redis.pcall. */
static int refuse(lua_State *L, const struct cmd *cmd, const char *msg, int raise)
{
    /* counted now, as Redis's scriptCall: the command's rejection and the error's code (a
     * text without a code counts as ERR); the script's error reply then is not counted again */
    cmdstats_errors(msg[0] == '-' ? msg : "ERR", 1);
    if (cmd)
        cmdstats_reject(cmd);
    script_push_error(L, msg, strlen(msg));
    lua_pushliteral(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_settable(L, -3);
    return raise ? lua_error(L) : 1;
}

static int grow_args(struct lstate *s, int n)
{
    struct slice *a;
    char(*nb)[32];
    int cap = s->cap;

    if (n <= cap)
        return 0;
    while (cap < n)
        cap = cap ? cap * 2 : 16;
    a = realloc(s->argv, sizeof(*a) * (size_t)cap);
    if (!a)
        return -1;
    s->argv = a;
    nb = realloc(s->nums, sizeof(*nb) * (size_t)cap);
    if (!nb)
        return -1;
    s->nums = nb;
    s->cap = cap;
    return 0;
}

/* The fake client's reply as one contiguous run of bytes (output references copied in). */
static const char *flat_reply(struct lstate *s, size_t *n)
{
    struct conn *f = &s->fake;
    size_t at = 0;

    if (!f->nrefs) {
        *n = f->wbuf.wpos - f->wbuf.rpos;
        return f->wbuf.data + f->wbuf.rpos;
    }
    s->flat.rpos = s->flat.wpos = 0;
    for (uint32_t i = 0; i < f->nrefs; i++) {
        if (buf_append(&s->flat, f->wbuf.data + at, f->refs[i].at - at) ||
            buf_append(&s->flat, f->refs[i].ptr, f->refs[i].len))
            return NULL;
        at = f->refs[i].at;
    }
    if (buf_append(&s->flat, f->wbuf.data + at, f->wbuf.wpos - at))
        return NULL;
    *n = buf_len(&s->flat);
    return s->flat.data;
}

/* Redis 7.0's may_replicate commands a script can call (COMMAND INFO does not show the flag,
 * so the table does not carry it): a read-only script refuses them like writes. */
static int may_replicate(const struct cmd *cmd)
{
    return !strcmp(cmd->name, "publish") || !strcmp(cmd->name, "spublish") ||
           !strcmp(cmd->name, "pfcount");
}

/* XREAD/XREADGROUP argv with a BLOCK option before STREAMS */
static int asks_to_block(const struct slice *argv, int argc)
{
    for (int i = 1; i < argc; i++) {
        if (util_eq_nocase(argv[i].p, argv[i].n, "streams"))
            return 0;
        if (util_eq_nocase(argv[i].p, argv[i].n, "block"))
            return 1;
    }
    return 0;
}

/* ---- the time limit and stopping a run ---- */

#define LUA_HOOK_COUNT 100000 /* instructions between two looks at the clock, as Redis */

/* Raise the error that ends a stopped run. From now on the hook runs on every line, so a pcall
 * that catches the error gets it again at once (as Redis's SCRIPT KILL). A restart leaves no
 * reply: the run starts over. */
static int stop_error(lua_State *L, struct script_run *run)
{
    lua_sethook(L, lua_gethook(L), LUA_MASKLINE | LUA_MASKCOUNT, 1);
    if (run->restart)
        return raise_error(L, "ERR script restarted holding every stripe");
    return raise_error(L, "Script killed by user with SCRIPT KILL...");
}

/* Serve the other clients of the script's worker once (worker_serve_busy); the command
 * state of this thread that their commands overwrite is the script's again afterwards. */
static void serve_busy(struct script_run *run)
{
    const struct cmd *saved_cmd = cmd_current;
    unsigned long saved_mods = cmd_mods;
    unsigned saved_errors = cmd_errors;
    const char *saved_last = cmd_last_error;
    uint64_t saved_writer = tracking_writer;

    worker_serve_busy(run->caller->w, run->caller);
    cmd_current = saved_cmd;
    cmd_mods = saved_mods;
    cmd_errors = saved_errors;
    cmd_last_error = saved_last;
    tracking_writer = saved_writer;
}

static void hook(lua_State *L, lua_Debug *ar)
{
    struct lstate *s = ls;
    struct script_run *run = s->run;

    (void)ar;
    if (!run)
        return;
    if (!run->stop && !run->restart) {
        int down = atomic_load_explicit(&s->fake.w->srv->shutdown, memory_order_relaxed) != 0;
        int stop = script_busy_check(run, down);
        if (!stop && run->busy && run->caller && run->caller->w) {
            /* past the threshold: the worker's other clients are answered (-BUSY, or SCRIPT
             * KILL / FUNCTION KILL / SHUTDOWN NOSAVE run) from here, as Redis does */
            serve_busy(run);
            down = atomic_load_explicit(&s->fake.w->srv->shutdown, memory_order_relaxed) != 0;
            stop = script_busy_check(run, down);
        }
        if (stop) {
            /* SHUTDOWN NOSAVE: stop with no reply, the connection closes as in Redis */
            if (!down)
                log_notice("Lua script killed by user with SCRIPT KILL.");
            run->stop = down ? 2 : 1;
        }
    }
    if (run->stop || run->restart)
        stop_error(L, run);
}

/* The hook of a run under SCRIPT DEBUG: the debugger's (no time limit, no SCRIPT KILL), and
 * the shutdown stops it. */
static void debug_hook(lua_State *L, lua_Debug *ar)
{
    struct script_run *run = ls->run;

    if (!run)
        return;
    if (!run->stop && atomic_load_explicit(&ls->fake.w->srv->shutdown, memory_order_relaxed))
        run->stop = 2;
    if (run->stop)
        stop_error(L, run);
    ldb_line_hook(L, ar, run);
}

/* The arguments of a redis.* command call (stack 1..argc) into s->argv (borrowed from the
 * stack). Returns 0, or -1 with Redis's error table pushed. */
static int lua_args(lua_State *L, struct lstate *s, int argc)
{
    if (argc == 0) {
        script_push_error(L, "Please specify at least one argument for this redis lib call",
                          60);
        return -1;
    }
    if (grow_args(s, argc))
        return luaL_error(L, "not enough memory");
    for (int i = 0; i < argc; i++) {
        int t = lua_type(L, i + 1);
        if (t == LUA_TNUMBER) {
            int k = snprintf(s->nums[i], sizeof(s->nums[i]), "%.17g",
                             (double)lua_tonumber(L, i + 1));
            s->argv[i].p = s->nums[i];
            s->argv[i].n = (size_t)k;
        } else if (t == LUA_TSTRING) {
            s->argv[i].p = lua_tolstring(L, i + 1, &s->argv[i].n);
        } else {
            const char *m = "Lua redis lib command arguments must be strings or integers";
            script_push_error(L, m, strlen(m));
            return -1;
        }
    }
    return 0;
}

/* redis.acl_check_cmd(cmd, args...): whether the script's user may run that command line
 * (not logged to ACL LOG; the arity is not checked), as Redis 7.0. */
static int redis_acl_check_cmd(lua_State *L)
{
    struct lstate *s = ls;
    struct script_run *run = s->run;
    const struct cmd *cmd, *container;
    struct acl_user *u = s->fake.user;
    int argc = lua_gettop(L), ok = 1;

    if (!run)
        return raise_error(L, "redis.acl_check_cmd can only be called inside a script "
                              "invocation");
    if (lua_args(L, s, argc))
        return lua_error(L);
    cmd = cmd_resolve(argc, s->argv, &container);
    if (!cmd)
        return raise_error(L, "Invalid command passed to redis.acl_check_cmd()");
    if (u && !atomic_load_explicit(&u->allperm, memory_order_relaxed)) {
        struct conn *who = run->caller ? run->caller : &s->fake;
        struct acl_user *saved = who->user;
        int pos;
        who->user = u;
        ok = acl_check_conn(who, cmd, argc, s->argv, NULL, &pos) == ACL_OK;
        who->user = saved;
    }
    lua_pushboolean(L, ok);
    return 1;
}

static int redis_generic(lua_State *L, int raise)
{
    struct lstate *s = ls;
    struct script_run *run = s->run;
    struct conn *f = &s->fake;
    int argc = lua_gettop(L);
    const struct cmd *cmd, *container, *saved_cmd;
    unsigned long saved_mods;
    unsigned saved_errors;
    const char *reply, *saved_last;
    size_t rn;

    if (!run)
        return raise_error(L, "redis.call/pcall can only be called inside a script invocation");
    if (TC_UNLIKELY(run->stop | run->restart))
        return stop_error(L, run); /* a pcall caught the error: no command runs any more */
    if (lua_args(L, s, argc))
        return raise ? lua_error(L) : 1;
    if (TC_UNLIKELY(run->debug) && ldb_logging())
        ldb_log_command(argc, s->argv);
    cmd = cmd_resolve(argc, s->argv, &container);
    if (!cmd)
        return refuse(L, NULL, "Unknown Redis command called from script", raise);
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity)
        return refuse(L, cmd, "Wrong number of args calling Redis command from script", raise);
    if ((cmd->flags & CMD_NOSCRIPT) &&
        !atomic_load_explicit(&cmd_script_deny_off, memory_order_relaxed))
        return refuse(L, cmd, "This Redis command is not allowed from script", raise);
    if (TC_UNLIKELY(f->user != NULL) &&
        !atomic_load_explicit(&f->user->allperm, memory_order_relaxed)) {
        /* scripts run with the caller's permissions, checked per call as Redis does */
        struct conn *who = run->caller ? run->caller : f;
        struct acl_user *saved = who->user;
        int pos, r;
        who->user = f->user;
        r = acl_check_conn(who, cmd, argc, s->argv, "lua", &pos);
        who->user = saved;
        if (r == ACL_DENIED_CMD)
            return refuse(L, cmd, "The user executing the script can't run this command or "
                             "subcommand", raise);
        if (r == ACL_DENIED_KEY)
            return refuse(L, cmd, "The user executing the script can't access at least one of the "
                             "keys mentioned in the command arguments", raise);
        if (r == ACL_DENIED_CHANNEL)
            return refuse(L, cmd, "The user executing the script can't publish to the channel "
                             "mentioned in the command", raise);
    }
    if (run->readonly && ((cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)) || may_replicate(cmd)))
        return refuse(L, cmd, "Write commands are not allowed from read-only scripts.", raise);
    if (!run->allow_oom && run->oom && !run->wrote && (cmd->flags & CMD_DENYOOM))
        return refuse(L, cmd, "-" ERR_OOM, raise);
    /* as Redis's scriptVerifyWriteCommandAllow: once the script wrote, the server's state
     * (MISCONF, a read-only replica, too few good replicas) no longer fails its writes */
    if (TC_UNLIKELY(atomic_load_explicit(&persist_misconf, memory_order_relaxed)) &&
        (cmd->flags & CMD_WRITE) && !run->wrote)
        return refuse(L, cmd, "-" ERR_MISCONF, raise); /* as Redis: a failing BGSAVE stops writes */
    if (TC_UNLIKELY(atomic_load_explicit(&repl_is_replica, memory_order_relaxed)) &&
        !repl_applying) {
        /* as Redis's scriptVerifyAllowStale and scriptVerifyWriteCommandAllow */
        if (!repl_link_up() && !cfg.replica_serve_stale_data && !(cmd->flags & CMD_STALE))
            return refuse(L, cmd, "Can not execute the command on a stale replica. The script "
                                  "probably has the allow-stale flag but tried to call a "
                                  "non-stale command.", raise);
        if (cfg.replica_read_only && (cmd->flags & CMD_WRITE) && !run->wrote)
            return refuse(L, cmd, "-READONLY You can't write against a read only replica.",
                          raise);
    }
    if ((cmd->flags & CMD_WRITE) && !run->wrote && !repl_good_replicas_ok())
        return refuse(L, cmd, "-" REPL_NOREPLICAS_TEXT, raise); /* min-replicas-to-write */

    if (run->track) {
        int k = script_keys_check(run, cmd, argc, s->argv);
        if (k == SCRIPT_KEYS_RESTART) {
            run->restart = 1;
            return stop_error(L, run);
        }
        if (k == SCRIPT_KEYS_CONFLICT)
            return raise_error(L, "ERR this script wrote, then touched keys it did not declare "
                                  "while another script that also wrote holds them; it runs "
                                  "holding every stripe from now on");
    }
    if ((cmd->flags & CMD_WRITE) || may_replicate(cmd))
        run->effects = 1;

    if (cmd->block && asks_to_block(s->argv, argc)) {
        /* the list and sorted-set blocking commands are noscript; XREAD and XREADGROUP
         * answer this instead of blocking, as in Redis (the only commands that could block) */
        char m[96];
        snprintf(m, sizeof(m), "-ERR %s command is not allowed with BLOCK option from scripts",
                 cmd->name);
        script_push_error(L, m, strlen(m));
        return raise ? lua_error(L) : 1;
    }
    conn_reset_output(f);
    f->argv = s->argv;
    f->argc = argc;
    saved_cmd = cmd_current;
    saved_mods = cmd_mods;
    saved_errors = cmd_errors;
    saved_last = cmd_last_error;
    cmd_modified_reset();
    cmd_current = cmd;
    STAT_INC(f->w->st.commands);
    if (run->repl == (SCRIPT_REPL_AOF | SCRIPT_REPL_REPLICA)) {
        cmd_exec(f, cmd);
    } else if (run->repl) {
        /* redis.set_repl(REPL_AOF / REPL_REPLICA): its records for that consumer only */
        cmd_prop_target(run->repl & SCRIPT_REPL_AOF, run->repl & SCRIPT_REPL_REPLICA);
        cmd_exec(f, cmd);
        cmd_prop_target(1, 1);
    } else {
        cmd->fn(f); /* redis.set_repl(REPL_NONE): not logged */
    }
    cmdstats_call(cmd, -1, cmd_errors != 0);
    if (cmd_errors)
        cmdstats_errors(cmd_last_error, cmd_errors); /* as Redis counts the script client's */
    if (TC_UNLIKELY(run->caller && run->caller->trk != NULL) && (cmd->flags & CMD_READONLY) &&
        saved_cmd)
        tracking_remember_caller_keys(run->caller, saved_cmd); /* the declared keys, as Redis */
    if (cmd->flags & CMD_WRITE) {
        if (!run->wrote)
            script_busy_wrote();
        run->wrote = 1;
        cmd_after_write(f, cmd);
    }
    monitor_feed(f, cmd);
    cmd_current = saved_cmd;
    cmd_mods = saved_mods;
    cmd_errors = saved_errors;
    cmd_last_error = saved_last;
    f->argv = NULL;
    f->argc = 0;
    lua_settop(L, 0); /* the arguments, as Redis: room on the stack for the reply */
    reply = flat_reply(s, &rn);
    if (!reply || !script_reply_to_lua(L, reply, rn)) {
        conn_reset_output(f);
        return raise_error(L, "ERR the reply of the command could not be converted");
    }
    if (TC_UNLIKELY(run->debug) && ldb_logging())
        ldb_log_reply(reply, rn);
    conn_reset_output(f);
    if (raise && rn && reply[0] == '-') {
        lua_pushliteral(L, "ignore_error_stats_update");
        lua_pushboolean(L, 1);
        lua_settable(L, -3);
        return lua_error(L);
    }
    return 1;
}

static int redis_call(lua_State *L)
{
    return redis_generic(L, 1);
}

static int redis_pcall(lua_State *L)
{
    return redis_generic(L, 0);
}

static int redis_sha1hex(lua_State *L)
{
    char hex[41];
    size_t n = 0;
    const char *p;

    if (lua_gettop(L) != 1)
        return raise_error(L, "wrong number of arguments");
    p = lua_tolstring(L, 1, &n);
    script_sha1hex(hex, p ? p : "", p ? n : 0);
    lua_pushstring(L, hex);
    return 1;
}

static int redis_error_reply(lua_State *L)
{
    size_t n;
    const char *p;

    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        script_push_error(L, "wrong number or type of arguments", 33);
        return 1;
    }
    p = lua_tolstring(L, 1, &n);
    if (n && p[0] == '-') {
        script_push_error(L, p, n);
    } else {
        lua_pushliteral(L, "-");
        lua_pushvalue(L, 1);
        lua_concat(L, 2);
        p = lua_tolstring(L, -1, &n);
        script_push_error(L, p, n);
    }
    return 1;
}

static int redis_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        script_push_error(L, "wrong number or type of arguments", 33);
        return 1;
    }
    lua_newtable(L);
    lua_pushliteral(L, "ok");
    lua_pushvalue(L, 1);
    lua_settable(L, -3);
    return 1;
}

static int redis_log(lua_State *L)
{
    int argc = lua_gettop(L), level;
    luaL_Buffer b;

    if (argc < 2)
        return raise_error(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1))
        return raise_error(L, "First argument must be a number (log level).");
    level = (int)lua_tonumber(L, 1);
    if (level < LOG_DEBUG || level > LOG_WARNING)
        return raise_error(L, "Invalid debug level.");
    if (level < log_level_get())
        return 0;
    luaL_buffinit(L, &b);
    for (int j = 2; j <= argc; j++) {
        size_t n;
        const char *p = lua_tolstring(L, j, &n);
        if (p) {
            if (j != 2)
                luaL_addchar(&b, ' ');
            luaL_addlstring(&b, p, n);
        }
    }
    luaL_pushresult(&b);
    log_write(level, "%s", lua_tostring(L, -1));
    return 0;
}

static int redis_setresp(lua_State *L)
{
    int v;

    if (lua_gettop(L) != 1)
        return raise_error(L, "redis.setresp() requires one argument.");
    v = (int)lua_tonumber(L, 1);
    if (v != 2 && v != 3)
        return raise_error(L, "RESP version must be 2 or 3.");
    ls->fake.resp = (uint8_t)v;
    return 0;
}

static int redis_set_repl(lua_State *L)
{
    int v;

    if (!ls->run)
        return raise_error(L, "set_repl can only be called inside a script invocation");
    if (lua_gettop(L) != 1)
        return raise_error(L, "redis.set_repl() requires two arguments."); /* sic */
    v = (int)lua_tonumber(L, 1);
    if (v & ~(SCRIPT_REPL_AOF | SCRIPT_REPL_REPLICA))
        return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                              "REPL_ALL or REPL_NONE.");
    ls->run->repl = v;
    return 0;
}

static int redis_true(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static void set_int(lua_State *L, const char *name, int v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void open_redis(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"call", redis_call},
        {"pcall", redis_pcall},
        {"sha1hex", redis_sha1hex},
        {"error_reply", redis_error_reply},
        {"status_reply", redis_status_reply},
        {"log", redis_log},
        {"setresp", redis_setresp},
        {"set_repl", redis_set_repl},
        {"acl_check_cmd", redis_acl_check_cmd},
        {"replicate_commands", redis_true},
        {"breakpoint", ldb_redis_breakpoint},
        {"debug", ldb_redis_debug},
        {NULL, NULL},
    };

    lua_newtable(L);
    for (const luaL_Reg *r = fns; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    set_int(L, "LOG_DEBUG", LOG_DEBUG);
    set_int(L, "LOG_VERBOSE", LOG_VERBOSE);
    set_int(L, "LOG_NOTICE", LOG_NOTICE);
    set_int(L, "LOG_WARNING", LOG_WARNING);
    set_int(L, "REPL_NONE", 0);
    set_int(L, "REPL_AOF", SCRIPT_REPL_AOF);
    set_int(L, "REPL_SLAVE", SCRIPT_REPL_REPLICA);
    set_int(L, "REPL_REPLICA", SCRIPT_REPL_REPLICA);
    set_int(L, "REPL_ALL", SCRIPT_REPL_AOF | SCRIPT_REPL_REPLICA);
    lua_pushstring(L, REDIS_VERSION_STR);
    lua_setfield(L, -2, "REDIS_VERSION");
    set_int(L, "REDIS_VERSION_NUM", REDIS_VERSION_NUM);
    lua_setglobal(L, "redis");
}

/* ---- the sandbox (run under lua_cpcall) ---- */

static void open_lib(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 0);
}

static int open_state(lua_State *L)
{
    static const char *removed[] = {"dofile", "loadfile", "getfenv", "setfenv", "newproxy",
                                    "print", "module", "require", "package", NULL};
    int g;

    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    lua_pushcfunction(L, luaopen_cjson);
    lua_call(L, 0, 1);
    lua_setglobal(L, "cjson");
    lua_pushcfunction(L, script_open_cmsgpack);
    lua_call(L, 0, 1);
    lua_setglobal(L, "cmsgpack");
    lua_pushcfunction(L, script_open_struct);
    lua_call(L, 0, 1);
    lua_setglobal(L, "struct");
    lua_pushcfunction(L, luaopen_bit);
    lua_call(L, 0, 1);
    lua_setglobal(L, "bit");
    open_redis(L);

    lua_pushvalue(L, LUA_GLOBALSINDEX);
    g = lua_gettop(L); /* the real globals */
    for (int i = 0; removed[i]; i++) {
        if (cfg.lua_enable_deprecated_api && (!strcmp(removed[i], "getfenv") ||
                                              !strcmp(removed[i], "setfenv") ||
                                              !strcmp(removed[i], "newproxy")))
            continue; /* lua-enable-deprecated-api yes */
        lua_pushnil(L);
        lua_setfield(L, g, removed[i]);
    }
    script_sandbox(L, g);
    return 0;
}

static void state_destroy(struct lstate *s)
{
    if (s->L)
        lua_close(s->L);
    s->L = NULL;
}

/* A worker thread ends: its state goes with it. */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void thread_gone(void *arg)
{
    struct lstate *s = arg;

    ldb_thread_exit();
    state_destroy(s);
    conn_reset_output(&s->fake);
    free(s->fake.refs);
    buf_deinit(&s->fake.wbuf);
    buf_deinit(&s->flat);
    free(s->argv);
    free(s->nums);
    free(s);
    ls = NULL;
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, thread_gone);
}

lua_State *script_lua_state(void)
{
    struct lstate *s = ls;
    uint64_t gen = script_cache_gen();

    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s)
            return NULL;
        s->fake.fd = -1;
        s->fake.proto = PROTO_RESP;
        s->fake.authed = 1;
        s->fake.resp = 2;
        s->fake.in_script = 1;
        ls = s;
        pthread_once(&exit_once, make_exit_key);
        pthread_setspecific(exit_key, s);
    }
    if (s->L && s->gen != gen)
        state_destroy(s); /* SCRIPT FLUSH: a fresh state, as Redis */
    if (!s->L) {
        s->L = lua_newstate(lalloc, s);
        if (!s->L)
            return NULL;
        lua_atpanic(s->L, at_panic);
        if (lua_cpcall(s->L, open_state, NULL) || lua_cpcall(s->L, script_sandbox_pairs, NULL)) {
            log_warn("Lua: cannot set up the scripting state: %s", lua_tostring(s->L, -1));
            state_destroy(s);
            return NULL;
        }
        s->gen = gen;
    }
    return s->L;
}

/* ---- compiling ---- */

static const struct {
    const char *name;
    int flag;
} shebang_flags[] = {
    {"no-writes", SCRIPT_FLAG_NO_WRITES},   {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
    {"allow-stale", SCRIPT_FLAG_ALLOW_STALE}, {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
    {"allow-cross-slot-keys", SCRIPT_FLAG_CROSS_SLOT},
};

/* "#!lua flags=a,b" on the first line: the flags and the length of the line (0 when there is
 * no shebang), or -1 with the error written to c. */
static int parse_shebang(struct conn *c, const char *body, size_t n, int *flags, size_t *len)
{
    const char *nl, *p, *end;

    *flags = 0;
    *len = 0;
    if (n < 2 || body[0] != '#' || body[1] != '!')
        return 0;
    nl = memchr(body, '\n', n);
    if (!nl) {
        if (c)
                    reply_error(c, "ERR Invalid script shebang");
        return -1;
    }
    *len = (size_t)(nl - body);
    *flags = SCRIPT_FLAG_SHEBANG;
    p = body;
    end = nl;
    for (int part = 0;; part++) {
        const char *w;
        size_t wn;
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p >= end) {
            if (part == 0) {
                if (c)
                    reply_error(c, "ERR Invalid engine in script shebang");
                return -1;
            }
            return 0;
        }
        w = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
        wn = (size_t)(p - w);
        if (part == 0) {
            if (wn != 5 || memcmp(w, "#!lua", 5)) {
                if (c)
                    reply_errorf(c, "ERR Unexpected engine in script shebang: %.*s", (int)wn, w);
                return -1;
            }
            continue;
        }
        if (wn < 6 || memcmp(w, "flags=", 6)) {
            if (c)
                    reply_errorf(c, "ERR Unknown lua shebang option: %.*s", (int)wn, w);
            return -1;
        }
        for (const char *f = w + 6; f < w + wn;) {
            const char *comma = memchr(f, ',', (size_t)(w + wn - f));
            size_t fn = (size_t)((comma ? comma : w + wn) - f);
            size_t i;
            for (i = 0; i < sizeof(shebang_flags) / sizeof(shebang_flags[0]); i++)
                if (strlen(shebang_flags[i].name) == fn && !memcmp(shebang_flags[i].name, f, fn))
                    break;
            if (i == sizeof(shebang_flags) / sizeof(shebang_flags[0])) {
                if (c)
                    reply_errorf(c, "ERR Unexpected flag in script shebang: %.*s", (int)fn, f);
                return -1;
            }
            *flags |= shebang_flags[i].flag;
            f += fn + 1;
        }
    }
}

int script_lua_flags(const char *sha)
{
    lua_State *L = script_lua_state();
    char key[48];
    int f = -1;

    if (!L)
        return -1;
    snprintf(key, sizeof(key), "F_%s", sha);
    lua_getfield(L, LUA_REGISTRYINDEX, key);
    if (lua_isnumber(L, -1))
        f = (int)lua_tonumber(L, -1);
    lua_pop(L, 1);
    return f;
}

void script_lua_set_flags(const char *sha, int flags)
{
    lua_State *L = script_lua_state();
    char key[48];

    if (!L)
        return;
    snprintf(key, sizeof(key), "F_%s", sha);
    lua_pushnumber(L, flags);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
}

int script_lua_load(struct conn *c, const char *sha, const char *body, size_t n)
{
    lua_State *L = script_lua_state();
    char key[48];
    size_t skip;
    int flags;

    if (!L) {
        reply_error(c, "ERR out of memory");
        return -1;
    }
    if (parse_shebang(c, body, n, &flags, &skip))
        return -1;
    /* the shebang line is skipped, its line feed kept: line numbers stay the user's */
    if (luaL_loadbuffer(L, body + skip, n - skip, "@user_script")) {
        const char *m = lua_tostring(L, -1);
        char *t = strdup(m ? m : "");
        if (t) {
            for (char *q = t; *q; q++)
                if (*q == '\r' || *q == '\n')
                    *q = ' ';
        }
        reply_errorf(c, "ERR Error compiling script (new function): %s", t ? t : "");
        free(t);
        lua_pop(L, 1);
        return -1;
    }
    snprintf(key, sizeof(key), "f_%s", sha);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
    snprintf(key, sizeof(key), "F_%s", sha);
    lua_pushnumber(L, flags);
    lua_setfield(L, LUA_REGISTRYINDEX, key);
    return flags;
}

/* ---- running ---- */

static void push_array(lua_State *L, const struct slice *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].p, v[i].n);
        lua_rawseti(L, -2, i + 1);
    }
}

static void set_array(lua_State *L, int g, const char *name, const struct slice *v, int n)
{
    push_array(L, v, n);
    lua_setfield(L, g, name);
}

/* The reply of a script that raised an error (the error object at the top). */
static void reply_failure(lua_State *L, struct conn *c, const char *sha)
{
    const char *msg, *src;
    size_t n;
    char *m;
    struct buf b = {0};

    if (!lua_istable(L, -1)) {
        msg = lua_tostring(L, -1);
        reply_errorf(c, "ERR Error running script %s, %.100s", sha, msg ? msg : "execution failure");
        return;
    }
    lua_getfield(L, -1, "err");
    msg = lua_tolstring(L, -1, &n);
    buf_append(&b, "-", 1);
    if (msg)
        buf_append(&b, msg, n);
    lua_pop(L, 1);
    lua_getfield(L, -1, "source");
    lua_getfield(L, -2, "line");
    src = lua_tostring(L, -2);
    if (src && lua_isnumber(L, -1)) {
        char tail[160];
        int k = snprintf(tail, sizeof(tail), " script: %s, on %.100s:%lld.", sha, src,
                         (long long)lua_tonumber(L, -1));
        buf_append(&b, tail, (size_t)k);
    }
    lua_pop(L, 2);
    m = b.data;
    if (!m) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (size_t i = 0; i < b.wpos; i++)
        if (m[i] == '\r' || m[i] == '\n')
            m[i] = ' ';
    script_count_error(L, lua_gettop(L), b.data, b.wpos);
    buf_append(&b, "\r\n", 2);
    reply_check(c, resp_add_raw(&c->wbuf, b.data, b.wpos));
    buf_deinit(&b);
}

void script_lua_run(struct conn *c, struct script_run *run, int nkeys)
{
    struct lstate *s = ls;
    lua_State *L = s->L;
    int base = lua_gettop(L), rc, nargs = 0;
    char key[48];

    lua_getfield(L, LUA_REGISTRYINDEX, "tc_errh");
    if (run->fname) {
        /* FCALL: callback(KEYS, ARGV) */
        lua_getfield(L, LUA_REGISTRYINDEX, "tc_fn");
        func_push_key(L, run->fname, run->fname_n);
        lua_rawget(L, -2);
        lua_remove(L, -2);
        push_array(L, c->argv + 3, nkeys);
        push_array(L, c->argv + 3 + nkeys, c->argc - 3 - nkeys);
        nargs = 2;
    } else {
        snprintf(key, sizeof(key), "f_%s", run->sha);
        lua_getfield(L, LUA_REGISTRYINDEX, key);
        lua_getfield(L, LUA_REGISTRYINDEX, "tc_G");
        set_array(L, lua_gettop(L), "KEYS", c->argv + 3, nkeys);
        set_array(L, lua_gettop(L), "ARGV", c->argv + 3 + nkeys, c->argc - 3 - nkeys);
        lua_pop(L, 1);
    }

    s->fake.w = c->w;
    s->fake.user = c->user; /* borrowed for the run: the caller's permissions */
    s->fake.db = c->db;
    s->fake.id = c->id;
    s->fake.resp = 2;
    s->fake.flags = 0;
    s->run = run;
    if (run->debug)
        lua_sethook(L, debug_hook, LUA_MASKLINE | LUA_MASKCOUNT, LUA_HOOK_COUNT);
    else
        lua_sethook(L, hook, LUA_MASKCOUNT, LUA_HOOK_COUNT);
    rc = lua_pcall(L, nargs, 1, base + 1);
    lua_sethook(L, NULL, 0, 0);
    if (run->restart || run->stop == 2)
        ; /* no reply: cmd_script.c runs it again, or the server is shutting down */
    else if (rc == 0)
        script_lua_to_reply(L, c, s->fake.resp);
    else
        reply_failure(L, c, run->sha);
    lua_settop(L, base);
    s->run = NULL;
    s->fake.user = NULL; /* borrowed for the run only */
    conn_reset_output(&s->fake);
    if (s->fake.wbuf.cap > (1 << 20))
        buf_shrink(&s->fake.wbuf, 16384);
    if (s->flat.cap > (1 << 20))
        buf_shrink(&s->flat, 16384);
    lua_gc(L, rc == LUA_ERRMEM ? LUA_GCCOLLECT : LUA_GCSTEP, 1);
}
