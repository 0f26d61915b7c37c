/* Fuzz target: the decoders a script can feed with a client's bytes — cmsgpack.unpack /
 * unpack_one / unpack_limit and struct.unpack / struct.size (twincache's own code, in
 * src/script), and cjson.decode (Debian's lua-cjson, as Redis ships it). BullMQ unpacks
 * msgpack it receives in ARGV; a hostile client can send anything there. Properties: no crash,
 * no overread (ASan), no Lua panic; every call returns or raises a Lua error; a value that
 * unpacks packs again.
 * Input: [selector byte][format bytes up to the first 0 byte, for struct][data...]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "script/script_int.h"

int luaopen_cjson(lua_State *L);

static lua_State *L;

static int at_panic(lua_State *l)
{
    fprintf(stderr, "fuzz_script: Lua panic: %s\n", lua_tostring(l, -1));
    abort();
}

/* a cap as the server's allocator has, so a length field cannot make the run allocate GBs */
static size_t used;
static void *lalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        used -= osize;
        return NULL;
    }
    if (nsize > osize && used + (nsize - osize) > ((size_t)256 << 20))
        return NULL;
    void *p = realloc(ptr, nsize);
    if (p)
        used = used - osize + nsize;
    return p;
}

static int setup(lua_State *l)
{
    luaL_openlibs(l);
    lua_pushcfunction(l, script_open_cmsgpack);
    lua_call(l, 0, 1);
    lua_setglobal(l, "cmsgpack");
    lua_pushcfunction(l, script_open_struct);
    lua_call(l, 0, 1);
    lua_setglobal(l, "struct");
    lua_pushcfunction(l, luaopen_cjson);
    lua_call(l, 0, 1);
    lua_setglobal(l, "cjson");
    return 0;
}

/* Calls lib.fn(args...) with the given strings/numbers pushed by the caller; pops all. */
static void call(const char *lib, const char *fn, int nargs)
{
    lua_getglobal(L, lib);
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    lua_insert(L, -(nargs + 1));
    lua_pcall(L, nargs, LUA_MULTRET, 0);
    lua_settop(L, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!L) {
        L = lua_newstate(lalloc, NULL);
        lua_atpanic(L, at_panic);
        if (lua_cpcall(L, setup, NULL))
            abort();
    }
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    data++, size--;
    switch (sel % 6) {
    case 0:
        lua_pushlstring(L, (const char *)data, size);
        call("cmsgpack", "unpack", 1);
        break;
    case 1:
        lua_pushlstring(L, (const char *)data, size);
        lua_pushnumber(L, sel >> 3);
        call("cmsgpack", "unpack_limit", 2);
        break;
    case 2:
        /* unpack then pack what came out: the packer sees arbitrary decoded values */
        lua_getglobal(L, "cmsgpack");
        lua_getfield(L, -1, "pack");
        lua_getfield(L, -2, "unpack");
        lua_pushlstring(L, (const char *)data, size);
        if (lua_pcall(L, 1, LUA_MULTRET, 0) == 0) {
            int n = lua_gettop(L) - 2;
            lua_pcall(L, n, 1, 0);
        }
        lua_settop(L, 0);
        break;
    case 3:
    case 4: {
        const uint8_t *z = memchr(data, 0, size);
        size_t fl = z ? (size_t)(z - data) : size;
        lua_pushlstring(L, (const char *)data, fl);
        if (sel % 6 == 3) {
            lua_pushlstring(L, (const char *)data + fl, size - fl);
            lua_pushnumber(L, (sel >> 3) + 1);
            call("struct", "unpack", 3);
        } else {
            call("struct", "size", 1);
        }
        break;
    }
    default:
        lua_pushlstring(L, (const char *)data, size);
        call("cjson", "decode", 1);
        break;
    }
    lua_gc(L, LUA_GCSTEP, 1);
    return 0;
}
