/* Redis 7.0 functions: the shared library registry and loading libraries into Lua states.
 *
 * The registry (one list of libraries: name, code, functions with their flags) is shared by
 * every worker under one mutex, with a generation counter bumped on every change. FUNCTION
 * LOAD runs the library body on the calling thread's Lua state, in loading mode (the global
 * redis is, for that run, a table with only register_function, log and the constants), to
 * collect its functions; the library is added only when that succeeded. Each worker keeps the
 * callbacks in its own state (registry tables "tc_fn" name -> callback, "tc_ff" name ->
 * flags) and rebuilds them by running every library again when the generation changed: the
 * FCALL hot path costs one atomic load. */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "core/forksafe.h"
#include "core/log.h"
#include "core/util.h"
#include "script/script_func.h"
#include "script/script_int.h"

#define REDIS_VERSION_STR "7.0.15"
#define REDIS_VERSION_NUM 0x0007000f

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct func_lib *libs; /* under reg_mu */
static _Atomic uint64_t reg_gen = 1;
static _Atomic long nlibs_all, nfns_all;
static _Atomic long long code_bytes;

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* a fork child (BGSAVE, AOF rewrite) reads the registry: never with the lock held by a
 * thread it does not have */
static void setup_atfork(void)
{
    fork_protect(&reg_mu);
}

static __thread uint64_t seen_gen;
static __thread lua_State *seen_L;

/* ---- loading a library into a Lua state ---- */

/* What register_function collects during one library run. */
struct collect {
    struct func_fn *fns;
    int n, cap;
};

static const struct {
    const char *name;
    int flag;
} fflags[] = {
    {"no-writes", SCRIPT_FLAG_NO_WRITES},     {"allow-oom", SCRIPT_FLAG_ALLOW_OOM},
    {"allow-stale", SCRIPT_FLAG_ALLOW_STALE}, {"no-cluster", SCRIPT_FLAG_NO_CLUSTER},
    {"allow-cross-slot-keys", SCRIPT_FLAG_CROSS_SLOT},
};

const char *func_flag_name(int i, int *flag)
{
    if (i < 0 || i >= (int)(sizeof(fflags) / sizeof(fflags[0])))
        return NULL;
    *flag = fflags[i].flag;
    return fflags[i].name;
}

static int lerr(lua_State *L, const char *m)
{
    script_push_error(L, m, strlen(m));
    return lua_error(L);
}

/* flags table at index i */
static int read_flags(lua_State *L, int i, int *out)
{
    *out = SCRIPT_FLAG_SHEBANG;
    if (!lua_istable(L, i))
        return lerr(L, "flags argument to redis.register_function must be a table representing "
                       "function flags");
    for (int k = 1;; k++) {
        const char *f;
        size_t j;
        lua_rawgeti(L, i, k);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        f = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!f)
            return lerr(L, "unknown flag given");
        for (j = 0; j < sizeof(fflags) / sizeof(fflags[0]); j++)
            if (!strcmp(fflags[j].name, f))
                break;
        if (j == sizeof(fflags) / sizeof(fflags[0]))
            return lerr(L, "unknown flag given");
        *out |= fflags[j].flag;
        lua_pop(L, 1);
    }
    return 0;
}

/* redis.register_function(name, callback) or redis.register_function{function_name=...,
 * callback=..., flags={...}, description=...}; upvalue 1: the struct collect. The callback
 * goes into the table "tc_fn_new", its flags into "tc_ff_new". */
static __thread struct collect *loading; /* the library run now loading, or NULL */

static int register_function(lua_State *L)
{
    struct collect *col = lua_touserdata(L, lua_upvalueindex(1));
    int argc = lua_gettop(L), flags = SCRIPT_FLAG_SHEBANG, fi = 0, ci = 0;
    const char *name = NULL, *desc = NULL;
    size_t nn = 0;

    if (!loading || col != loading) /* kept by a library and called later: its col is gone */
        return lerr(L, "redis.register_function can only be called on FUNCTION LOAD command");

    if (argc == 1) {
        if (!lua_istable(L, 1))
            return lerr(L, "calling redis.register_function with a single argument is only "
                           "applicable to Lua table (representing named arguments).");
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            const char *k;
            if (lua_type(L, -2) != LUA_TSTRING)
                return lerr(L, "named argument key given to redis.register_function is not a "
                               "string");
            k = lua_tostring(L, -2);
            if (!strcmp(k, "function_name")) {
                if (!lua_isstring(L, -1))
                    return lerr(L, "function_name argument given to redis.register_function "
                                   "must be a string");
                name = lua_tolstring(L, -1, &nn);
            } else if (!strcmp(k, "description")) {
                if (lua_type(L, -1) != LUA_TSTRING)
                    return lerr(L, "description argument given to redis.register_function must "
                                   "be a string");
                desc = lua_tostring(L, -1); /* kept alive by the table at index 1 */
            } else if (!strcmp(k, "callback")) {
                if (!lua_isfunction(L, -1))
                    return lerr(L, "callback argument given to redis.register_function must be "
                                   "a function");
            } else if (!strcmp(k, "flags")) {
                read_flags(L, lua_gettop(L), &flags);
            } else {
                return lerr(L, "unknown argument given to redis.register_function");
            }
            lua_pop(L, 1);
        }
        lua_getfield(L, 1, "function_name");
        fi = lua_gettop(L);
        lua_getfield(L, 1, "callback");
        ci = lua_gettop(L);
        if (lua_isnil(L, fi))
            return lerr(L, "redis.register_function must get a function name argument");
        if (lua_isnil(L, ci))
            return lerr(L, "redis.register_function must get a callback argument");
        name = lua_tolstring(L, fi, &nn);
    } else if (argc == 2) {
        if (!lua_isstring(L, 1))
            return lerr(L, "first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2))
            return lerr(L, "second argument to redis.register_function must be a function");
        name = lua_tolstring(L, 1, &nn);
        ci = 2;
    } else {
        return lerr(L, "wrong number of arguments to redis.register_function");
    }
    if (!func_name_ok(name, nn))
        return lerr(L, "Library names can only contain letters, numbers, or underscores(_) "
                       "and must be at least one character long"); /* sic, Redis 7.0 */
    for (int i = 0; i < col->n; i++)
        if (strlen(col->fns[i].name) == nn && !memcmp(col->fns[i].name, name, nn))
            return lerr(L, "Function already exists in the library");
    if (col->n == col->cap) {
        int cap = col->cap ? col->cap * 2 : 4;
        struct func_fn *f = realloc(col->fns, sizeof(*f) * (size_t)cap);
        if (!f)
            return luaL_error(L, "not enough memory");
        col->fns = f;
        col->cap = cap;
    }
    col->fns[col->n].name = strndup(name, nn);
    if (!col->fns[col->n].name)
        return luaL_error(L, "not enough memory");
    col->fns[col->n].flags = flags;
    col->fns[col->n].desc = desc ? strdup(desc) : NULL;
    col->n++;
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_fn_new");
    func_push_key(L, name, nn);
    lua_pushvalue(L, ci);
    lua_rawset(L, -3);
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_ff_new");
    func_push_key(L, name, nn);
    lua_pushnumber(L, flags);
    lua_rawset(L, -3);
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_fk_new"); /* the name as registered */
    func_push_key(L, name, nn);
    lua_pushlstring(L, name, nn);
    lua_rawset(L, -3);
    return 0;
}

void func_push_key(lua_State *L, const char *name, size_t n)
{
    luaL_Buffer b;

    luaL_buffinit(L, &b);
    for (size_t i = 0; i < n; i++)
        luaL_addchar(&b, (char)tolower((unsigned char)name[i]));
    luaL_pushresult(&b);
}

static int load_log(lua_State *L)
{
    /* redis.log while loading: the real one */
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_redis");
    lua_getfield(L, -1, "log");
    lua_insert(L, 1);
    lua_pop(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
}

static void free_collect(struct collect *col)
{
    for (int i = 0; i < col->n; i++) {
        free(col->fns[i].name);
        free(col->fns[i].desc);
    }
    free(col->fns);
    col->fns = NULL;
    col->n = col->cap = 0;
}

/* the Lua error at the top of L as text (the err field of an error table) */
static const char *err_text(lua_State *L)
{
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "err");
        lua_replace(L, -2);
    } else if (lua_isstring(L, -1)) {
        lua_pushliteral(L, "ERR ");
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_tostring(L, -1) ? lua_tostring(L, -1) : "unknown error";
}

#define LOAD_TIMEOUT_MS 500 /* as Redis: a library body may run this long */

static __thread int64_t load_deadline;

static void load_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (util_now_ms() > load_deadline) {
        lua_sethook(L, load_hook, LUA_MASKLINE, 0); /* the error raised from a line hook */
        lerr(L, "FUNCTION LOAD timeout");
    }
}

static int load_missing(lua_State *L)
{
    const char *k = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      k ? k : "?");
}

static int load_readonly(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

/* the globals while loading: upvalue 1 the loading API table */
static int load_index(lua_State *L)
{
    const char *k = lua_tostring(L, 2);
    if (k && !strcmp(k, "redis")) {
        lua_pushvalue(L, lua_upvalueindex(1));
        return 1;
    }
    return load_missing(L);
}

/* Run one library body in L (the tables tc_fn_new/tc_ff_new set up by the caller), its
 * functions collected in col. 0, or -1 with the error in err. */
static int run_library(lua_State *L, const char *code, size_t n, struct collect *col, char *err,
                       size_t cap)
{
    const char *nl = memchr(code, '\n', n);
    size_t skip = nl ? (size_t)(nl - code) : n;
    int top = lua_gettop(L), rc, saved_mask, saved_count;
    lua_Hook saved_hook;

    if (luaL_loadbuffer(L, code + skip, n - skip, "@user_function")) {
        const char *m = lua_tostring(L, -1);
        snprintf(err, cap, "Error compiling function: %s", m ? m : "?");
        lua_settop(L, top);
        return -1;
    }
    /* the library's environment: while loading, only the loading API (redis) is there;
     * afterwards (its functions run) the globals */
    lua_newtable(L); /* env, top + 2 */
    lua_newtable(L); /* its metatable, top + 3 */
    lua_newtable(L); /* the loading API, top + 4 */
    lua_pushlightuserdata(L, col);
    lua_pushcclosure(L, register_function, 1);
    lua_setfield(L, -2, "register_function");
    lua_pushcfunction(L, load_log);
    lua_setfield(L, -2, "log");
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_G");
    lua_getfield(L, -1, "redis");
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_redis");
    lua_getfield(L, -1, "redis");
    {
        static const char *consts[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                                       "REDIS_VERSION", "REDIS_VERSION_NUM", NULL};
        for (int i = 0; consts[i]; i++) {
            lua_getfield(L, -1, consts[i]);
            lua_setfield(L, top + 4, consts[i]);
        }
    }
    lua_pop(L, 2);
    lua_newtable(L); /* the loading API's metatable */
    lua_pushcfunction(L, load_missing);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, load_readonly);
    lua_setfield(L, -2, "__newindex");
    lua_setmetatable(L, top + 4);
    lua_pushcclosure(L, load_index, 1);
    lua_setfield(L, top + 3, "__index");
    lua_pushcfunction(L, load_readonly);
    lua_setfield(L, top + 3, "__newindex");
    lua_pushvalue(L, top + 3);
    lua_setmetatable(L, top + 2);
    lua_pushvalue(L, top + 1);
    lua_pushvalue(L, top + 2);
    lua_setfenv(L, -2);
    /* a time limit on the body (any other hook, the busy-script one, put back after) */
    saved_hook = lua_gethook(L);
    saved_mask = lua_gethookmask(L);
    saved_count = lua_gethookcount(L);
    load_deadline = util_now_ms() + LOAD_TIMEOUT_MS;
    lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
    loading = col;
    rc = lua_pcall(L, 0, 0, 0);
    loading = NULL;
    lua_sethook(L, saved_hook, saved_mask, saved_count);
    if (rc)
        snprintf(err, cap, "Error registering functions: %s", err_text(L));
    /* from now on the functions see the globals (read-only through the sandbox's proxy) */
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_setfield(L, top + 3, "__index");
    lua_settop(L, top);
    return rc ? -1 : 0;
}

static void new_tables(lua_State *L)
{
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fn_new");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_ff_new");
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fk_new");
}

lua_State *script_func_state(void)
{
    lua_State *L = script_lua_state();
    uint64_t gen = atomic_load_explicit(&reg_gen, memory_order_acquire);

    if (!L)
        return NULL;
    if (L == seen_L && gen == seen_gen) {
        /* a state made anew (SCRIPT FLUSH) may have the old one's address */
        int have;
        lua_getfield(L, LUA_REGISTRYINDEX, "tc_ff");
        have = lua_istable(L, -1);
        lua_pop(L, 1);
        if (have)
            return L;
    }
    new_tables(L);
    pthread_mutex_lock(&reg_mu);
    gen = atomic_load_explicit(&reg_gen, memory_order_relaxed);
    for (struct func_lib *lib = libs; lib; lib = lib->next) {
        struct collect col = {0};
        char err[256];
        if (run_library(L, lib->code, lib->code_n, &col, err, sizeof(err)))
            log_warn("function library %s: %s", lib->name, err); /* loaded once: never */
        free_collect(&col);
    }
    pthread_mutex_unlock(&reg_mu);
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_fn_new");
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fn");
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_ff_new");
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_ff");
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_fk_new");
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fk");
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fk_new");
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fn_new");
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_ff_new");
    seen_L = L;
    seen_gen = gen;
    lua_gc(L, LUA_GCCOLLECT, 0);
    return L;
}

int func_lookup(const char *name, size_t n)
{
    return func_lookup_name(name, n, NULL, 0);
}

int func_lookup_name(const char *name, size_t n, char *real, size_t cap)
{
    lua_State *L = script_func_state();
    int f = -2;

    if (!L)
        return -2;
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_ff");
    func_push_key(L, name, n);
    lua_rawget(L, -2);
    f = lua_isnumber(L, -1) ? (int)lua_tonumber(L, -1) : -1;
    lua_pop(L, 2);
    if (f >= 0 && real) {
        const char *r;
        lua_getfield(L, LUA_REGISTRYINDEX, "tc_fk");
        func_push_key(L, name, n);
        lua_rawget(L, -2);
        r = lua_tostring(L, -1);
        snprintf(real, cap, "%s", r ? r : "");
        lua_pop(L, 2);
    }
    return f;
}

void func_init(void)
{
    pthread_once(&atfork_once, setup_atfork);
}

/* ---- the registry ---- */

static void lib_free(struct func_lib *lib)
{
    if (!lib)
        return;
    for (int i = 0; i < lib->nfn; i++) {
        free(lib->fns[i].name);
        free(lib->fns[i].desc);
    }
    free(lib->fns);
    free(lib->name);
    free(lib->code);
    free(lib);
}

static struct func_lib **find_lib(struct func_lib **head, const char *name, size_t n)
{
    for (struct func_lib **p = head; *p; p = &(*p)->next)
        if (strlen((*p)->name) == n && !memcmp((*p)->name, name, n))
            return p;
    return NULL;
}

static void bump(void)
{
    long nl = 0, nf = 0;
    long long cb = 0;
    for (struct func_lib *lib = libs; lib; lib = lib->next) {
        nl++;
        nf += lib->nfn;
        cb += (long long)lib->code_n;
    }
    atomic_store(&nlibs_all, nl);
    atomic_store(&nfns_all, nf);
    atomic_store(&code_bytes, cb);
    atomic_fetch_add_explicit(&reg_gen, 1, memory_order_release);
}

struct func_lib *func_compile(const char *code, size_t n, char *err, size_t cap)
{
    lua_State *L = script_lua_state();
    struct func_lib *lib;
    struct collect col = {0};
    char *name;
    size_t skip;

    if (func_parse_meta(code, n, &name, &skip, err, cap))
        return NULL;
    if (!L) {
        free(name);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_fn_new");
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_ff_new");
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_fk_new");
    new_tables(L);
    if (run_library(L, code, n, &col, err, cap)) {
        free(name);
        free_collect(&col);
        name = NULL;
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fk_new");
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_ff_new");
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_fn_new");
    if (!name)
        return NULL;
    if (col.n == 0) {
        free(name);
        snprintf(err, cap, "No functions registered");
        return NULL;
    }
    lib = calloc(1, sizeof(*lib));
    if (!lib || !(lib->code = malloc(n + 1))) {
        free(lib);
        free(name);
        free_collect(&col);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    memcpy(lib->code, code, n);
    lib->code[n] = '\0';
    lib->code_n = n;
    lib->name = name;
    lib->fns = col.fns;
    lib->nfn = col.n;
    return lib;
}

/* Function f of lib is defined by a library of head other than the one named skip. */
static const char *clash(struct func_lib *head, struct func_lib *lib, const char *skip)
{
    for (struct func_lib *o = head; o; o = o->next) {
        if (skip && !strcmp(o->name, skip))
            continue;
        for (int i = 0; i < lib->nfn; i++)
            for (int j = 0; j < o->nfn; j++)
                if (!strcasecmp(lib->fns[i].name, o->fns[j].name)) /* as FCALL's lookup */
                    return lib->fns[i].name;
    }
    return NULL;
}

/* Put lib in the registry (reg_mu held): in the place of *old (freed), or first when old is
 * NULL. */
static void lib_put_locked(struct func_lib *lib, struct func_lib **old)
{
    if (old) {
        struct func_lib *o = *old;
        lib->next = o->next;
        *old = lib;
        lib_free(o);
    } else {
        lib->next = libs;
        libs = lib;
    }
}

int func_add(struct func_lib *lib, int replace, char *err, size_t cap)
{
    struct func_lib **old;
    const char *f;

    pthread_mutex_lock(&reg_mu);
    old = find_lib(&libs, lib->name, strlen(lib->name));
    if (old && !replace) {
        snprintf(err, cap, "Library '%s' already exists", lib->name);
        pthread_mutex_unlock(&reg_mu);
        lib_free(lib);
        return -1;
    }
    if ((f = clash(libs, lib, lib->name))) {
        snprintf(err, cap, "Function %s already exists", f);
        pthread_mutex_unlock(&reg_mu);
        lib_free(lib);
        return -1;
    }
    lib_put_locked(lib, old);
    bump();
    pthread_mutex_unlock(&reg_mu);
    return 0;
}

int func_delete(const char *name, size_t n)
{
    struct func_lib **p, *o;

    pthread_mutex_lock(&reg_mu);
    p = find_lib(&libs, name, n);
    if (!p) {
        pthread_mutex_unlock(&reg_mu);
        return -1;
    }
    o = *p;
    *p = o->next;
    lib_free(o);
    bump();
    pthread_mutex_unlock(&reg_mu);
    return 0;
}

void func_flush(void)
{
    struct func_lib *l;

    pthread_mutex_lock(&reg_mu);
    l = libs;
    libs = NULL;
    bump();
    pthread_mutex_unlock(&reg_mu);
    while (l) {
        struct func_lib *next = l->next;
        lib_free(l);
        l = next;
    }
}

int func_restore(struct func_lib *list, int policy, char *err, size_t cap)
{
    int rc = 0;

    pthread_mutex_lock(&reg_mu);
    if (policy == FUNC_RESTORE_FLUSH) {
        struct func_lib *l = libs;
        libs = NULL;
        while (l) {
            struct func_lib *next = l->next;
            lib_free(l);
            l = next;
        }
    }
    /* check everything first: all or nothing */
    for (struct func_lib *lib = list; lib && !rc; lib = lib->next) {
        struct func_lib **old = find_lib(&libs, lib->name, strlen(lib->name));
        const char *f;
        if (old && policy == FUNC_RESTORE_APPEND) {
            snprintf(err, cap, "Library %s already exists", lib->name);
            rc = -1;
        } else if ((f = clash(libs, lib, policy == FUNC_RESTORE_REPLACE ? lib->name : NULL))) {
            snprintf(err, cap, "Function %s already exists", f);
            rc = -1;
        }
    }
    if (!rc) {
        while (list) {
            struct func_lib *lib = list, **old;
            list = list->next;
            old = find_lib(&libs, lib->name, strlen(lib->name));
            lib_put_locked(lib, old);
        }
        bump();
    }
    pthread_mutex_unlock(&reg_mu);
    while (list) {
        struct func_lib *next = list->next;
        lib_free(list);
        list = next;
    }
    return rc;
}

void func_each(void (*fn)(const struct func_lib *lib, void *arg), void *arg)
{
    pthread_mutex_lock(&reg_mu);
    for (struct func_lib *lib = libs; lib; lib = lib->next)
        fn(lib, arg);
    pthread_mutex_unlock(&reg_mu);
}

void func_each2(void (*fn)(const struct func_lib *lib, void *arg), void *arg,
                void (*mid)(void *marg), void *marg)
{
    pthread_mutex_lock(&reg_mu);
    for (struct func_lib *lib = libs; lib; lib = lib->next)
        fn(lib, arg);
    mid(marg);
    for (struct func_lib *lib = libs; lib; lib = lib->next)
        fn(lib, arg);
    pthread_mutex_unlock(&reg_mu);
}

void func_counts(long *nlibs, long *nfns, size_t *bytes)
{
    *nlibs = atomic_load(&nlibs_all);
    *nfns = atomic_load(&nfns_all);
    *bytes = (size_t)atomic_load(&code_bytes);
}

void func_list_free(struct func_lib *list)
{
    while (list) {
        struct func_lib *next = list->next;
        lib_free(list);
        list = next;
    }
}
