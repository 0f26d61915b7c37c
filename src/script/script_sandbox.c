/* The sandbox of a script's Lua state, as Redis 7.0's: math.random as Redis's (rand48),
 * read-only globals and library tables (proxies whose writes raise "Attempt to modify a
 * readonly table", reads of unknown globals raise "Script attempted to access nonexistent
 * global variable"), rawset/rawget/next/pairs/setmetatable that see through the proxies,
 * pcall returning error tables as their text, and the error handler that turns every error
 * into {err=..., source=..., line=...}. Runs on the worker thread that owns the state. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "script/script_int.h"

/* ---- math.random as Redis's (rand48) ---- */

static __thread uint64_t rand48_x = 0x1234abcd330eULL;

static int32_t rand48_next(void)
{
    rand48_x = (rand48_x * 0x5deece66dULL + 0xb) & ((1ULL << 48) - 1);
    return (int32_t)(rand48_x >> 17);
}

static int math_random(lua_State *L)
{
    lua_Number r = (lua_Number)(rand48_next() % INT32_MAX) / (lua_Number)INT32_MAX;

    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int math_randomseed(lua_State *L)
{
    uint32_t seed = (uint32_t)luaL_checkint(L, 1);
    rand48_x = 0x330e | ((uint64_t)seed << 16);
    return 0;
}

/* ---- unpack and bit.tohex without the overflows of Debian's Lua 5.1 and LuaBitOp ---- */

/* unpack(t [, i [, j]]): the range computed in 64 bits (Lua 5.1.5's int arithmetic overflows,
 * and the compiled check for it is gone: unpack({}, 0, 2^31-1) crashed the server). */
static int safe_unpack(lua_State *L)
{
    long long i, e, n;

    luaL_checktype(L, 1, LUA_TTABLE);
    i = luaL_optint(L, 2, 1);
    e = lua_isnoneornil(L, 3) ? (long long)lua_objlen(L, 1) : luaL_checkint(L, 3);
    if (i > e)
        return 0;
    n = e - i + 1;
    if (n >= INT32_MAX || !lua_checkstack(L, (int)n))
        return luaL_error(L, "too many results to unpack");
    for (long long k = i; k <= e; k++)
        lua_rawgeti(L, 1, (int)k);
    return (int)n;
}

/* bit.tohex(x [, n]): n = INT_MIN negated overflowed LuaBitOp's buffer (Redis's fix: n is
 * clamped to -8..8 first). */
static uint32_t bit_arg(lua_State *L, int idx)
{
    /* LuaBitOp's conversion: rounded to an integer, modulo 2^32 */
    union {
        lua_Number n;
        uint64_t b;
    } bn;

    bn.n = luaL_checknumber(L, idx) + 6755399441055744.0; /* 2^52 + 2^51 */
    return (uint32_t)bn.b;
}

static int safe_tohex(lua_State *L)
{
    uint32_t b = bit_arg(L, 1);
    long long n = lua_isnone(L, 2) ? 8 : (int32_t)bit_arg(L, 2);
    const char *hexdigits = "0123456789abcdef";
    char buf[8];

    if (n < 0) {
        n = n < -8 ? 8 : -n;
        hexdigits = "0123456789ABCDEF";
    } else if (n > 8) {
        n = 8;
    }
    for (int k = (int)n; --k >= 0; b >>= 4)
        buf[k] = hexdigits[b & 15];
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

/* ---- loadstring and load refuse precompiled chunks ---- */

/* s (n bytes) compiled as loadstring(s, name) does, except that a binary chunk (it starts with
 * ESC, Lua's bytecode signature) gets the error Redis's text-only parser gives: crafted
 * bytecode can crash the VM. Pushes the function, or nil and the message. */
static int load_text(lua_State *L, const char *p, size_t n, const char *name)
{
    if (n && p[0] == LUA_SIGNATURE[0]) {
        /* the message of the text parser on a first char(27), in Lua's own chunk-name form */
        luaL_loadbuffer(L, "\1", 1, name);
        lua_pushnil(L);
        luaL_gsub(L, lua_tostring(L, -2), "'char(1)'", "'char(27)'");
        return 2;
    }
    if (luaL_loadbuffer(L, p, n, name)) {
        lua_pushnil(L);
        lua_insert(L, -2);
        return 2;
    }
    return 1;
}

static int safe_loadstring(lua_State *L)
{
    size_t n;
    const char *p = luaL_checklstring(L, 1, &n);

    return load_text(L, p, n, luaL_optstring(L, 2, p));
}

/* load(reader [, name]): the pieces gathered, then compiled as loadstring */
static int safe_load(lua_State *L)
{
    const char *name = luaL_optstring(L, 2, "=(load)");
    luaL_Buffer b;
    size_t n;
    const char *p;

    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 2);
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            luaL_pushresult(&b);
            lua_pushnil(L);
            lua_pushliteral(L, "reader function must return a string");
            return 2;
        }
        if (lua_objlen(L, -1) == 0) {
            lua_pop(L, 1);
            break;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    p = lua_tolstring(L, -1, &n);
    return load_text(L, p, n, name);
}

/* ---- read-only tables ---- */

/* The real table behind the read-only proxy at idx pushed (1), or nothing (0). */
static int ro_real(lua_State *L, int idx)
{
    if (lua_type(L, idx) != LUA_TTABLE)
        return 0;
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_ro");
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

static int ro_newindex(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

static int ro_refuse(lua_State *L)
{
    lua_pushliteral(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

static int missing_global(lua_State *L)
{
    const char *k = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      k ? k : "?");
}

/* Call upvalue 1 (the original function) with the arguments on the stack. */
static int call_orig(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int w_rawset(lua_State *L)
{
    if (ro_real(L, 1))
        return ro_refuse(L);
    return call_orig(L);
}

static int w_setmetatable(lua_State *L)
{
    if (ro_real(L, 1))
        return ro_refuse(L);
    return call_orig(L);
}

/* rawget, next: on a proxy, the real table */
static int w_real_arg1(lua_State *L)
{
    if (ro_real(L, 1))
        lua_replace(L, 1);
    return call_orig(L);
}

static int w_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushvalue(L, lua_upvalueindex(1)); /* next */
    if (!ro_real(L, 1))
        lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* pcall as Redis 7.0's: an error table is returned as its err string. */
static int w_pcall(lua_State *L)
{
    int argc = lua_gettop(L);

    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1))
                lua_replace(L, -2);
            else
                lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

/* A read-only proxy for the table at the top (replaced by it). */
static void make_ro(lua_State *L, int is_globals)
{
    int real = lua_gettop(L);

    lua_newtable(L); /* the proxy */
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, real);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ro_newindex);
    lua_setfield(L, -2, "__newindex");
    if (is_globals) {
        /* what getmetatable(_G) shows, as in Redis: a table whose __index refuses */
        lua_createtable(L, 0, 1);
        lua_pushcfunction(L, missing_global);
        lua_setfield(L, -2, "__index");
        make_ro(L, 0); /* getmetatable(_G).__index = ... is refused too */
    } else {
        lua_pushboolean(L, 0);
    }
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_ro");
    lua_pushvalue(L, -2);
    lua_pushvalue(L, real);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_replace(L, real);
}

/* Replace global name (in the table at gi) by a wrapper of it with the original as upvalue. */
static void wrap_global(lua_State *L, int gi, const char *name, lua_CFunction fn)
{
    lua_getfield(L, gi, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, gi, name);
}

/* ---- the error handler: errors become {err=..., source=..., line=...} ---- */

static int err_handler(lua_State *L)
{
    lua_Debug ar;
    int have = 0;

    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
        have = 1;
        if (!strcmp(ar.what, "C"))
            have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "Sl", &ar);
    }
    if (!lua_istable(L, 1)) {
        const char *s;
        lua_settop(L, 1);
        if (!luaL_callmeta(L, 1, "__tostring")) {
            switch (lua_type(L, 1)) {
            case LUA_TNUMBER:
            case LUA_TSTRING:
                lua_pushvalue(L, 1);
                break;
            case LUA_TNIL:
                lua_pushliteral(L, "nil");
                break;
            case LUA_TBOOLEAN:
                lua_pushstring(L, lua_toboolean(L, 1) ? "true" : "false");
                break;
            default:
                lua_pushfstring(L, "%s: %p", luaL_typename(L, 1), lua_topointer(L, 1));
            }
        }
        s = lua_tostring(L, -1);
        lua_newtable(L);
        lua_pushliteral(L, "err");
        lua_pushfstring(L, "ERR %s", s ? s : "");
        lua_rawset(L, -3);
        lua_replace(L, 1);
        lua_settop(L, 1);
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, 1, "source");
        lua_pushnumber(L, ar.currentline);
        lua_setfield(L, 1, "line");
    }
    lua_settop(L, 1);
    return 1;
}

void script_sandbox(lua_State *L, int g)
{
    static const char *libs[] = {"string", "table", "math", "coroutine", "cjson", "bit",
                                 "cmsgpack", "struct", "redis", NULL};

    lua_getfield(L, g, "math");
    lua_pushcfunction(L, math_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, math_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);

    lua_pushcfunction(L, safe_loadstring);
    lua_setfield(L, g, "loadstring");
    lua_pushcfunction(L, safe_load);
    lua_setfield(L, g, "load");
    lua_pushcfunction(L, safe_unpack);
    lua_setfield(L, g, "unpack");
    lua_getfield(L, g, "bit");
    if (lua_istable(L, -1)) {
        lua_pushcfunction(L, safe_tohex);
        lua_setfield(L, -2, "tohex");
    }
    lua_pop(L, 1);

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_ro");
    wrap_global(L, g, "rawset", w_rawset);
    wrap_global(L, g, "setmetatable", w_setmetatable);
    wrap_global(L, g, "rawget", w_real_arg1);
    wrap_global(L, g, "next", w_real_arg1);
    lua_pushcfunction(L, w_pcall);
    lua_setfield(L, g, "pcall");
    for (int i = 0; libs[i]; i++) {
        lua_getfield(L, g, libs[i]);
        make_ro(L, 0);
        lua_setfield(L, g, libs[i]);
    }
    /* getmetatable('') shows a read-only table whose __index is the read-only string */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_createtable(L, 0, 1);
        lua_getfield(L, g, "string");
        lua_setfield(L, -2, "__index");
        make_ro(L, 0);
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, err_handler);
    lua_pushvalue(L, -1);
    lua_setfield(L, g, "__redis__err__handler"); /* a global in Redis too */
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_errh");

    /* globals: reads go through a proxy to the real table, whose own __index refuses
     * unknown names; the proxy refuses every assignment */
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, missing_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, g);
    lua_pushvalue(L, g);
    lua_setfield(L, LUA_REGISTRYINDEX, "tc_G");
    lua_pushvalue(L, g);
    make_ro(L, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, g, "_G");
    lua_replace(L, LUA_GLOBALSINDEX);
}

/* pairs needs the original next as its upvalue: installed once the base library is open */
int script_sandbox_pairs(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, "tc_G");
    lua_getfield(L, -1, "next");
    /* the global next is now the wrapper; its upvalue is the original */
    lua_getupvalue(L, -1, 1);
    lua_pushcclosure(L, w_pairs, 1);
    lua_setfield(L, -3, "pairs");
    lua_pop(L, 2);
    return 0;
}
