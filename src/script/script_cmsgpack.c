/* cmsgpack for scripts: MessagePack encoding and decoding with the API and the exact byte
 * choices of the cmsgpack library Redis 7.0 embeds (lua-cmsgpack 0.4.0): pack(...),
 * unpack(s), unpack_one(s [, offset]), unpack_limit(s, limit [, offset]). Written from the
 * MessagePack specification and Redis's documented behaviour; runs on the worker's Lua state. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "script/script_int.h"

#define MAX_NESTING 16 /* deeper tables are encoded as nil, as in Redis */

/* ---- encoding into a buffer held by a userdata at a fixed stack slot (no leak on error) ---- */

struct mbuf {
    lua_State *L;
    int slot;         /* stack index of the userdata holding the bytes */
    unsigned char *p; /* its bytes */
    size_t len, cap;
};

static void mbuf_init(struct mbuf *m, lua_State *L)
{
    m->L = L;
    m->cap = 64;
    m->len = 0;
    m->p = lua_newuserdata(L, m->cap);
    m->slot = lua_gettop(L);
}

static void put(struct mbuf *m, const void *src, size_t n)
{
    if (m->len + n > m->cap) {
        size_t cap = m->cap;
        unsigned char *np;
        while (cap < m->len + n)
            cap *= 2;
        np = lua_newuserdata(m->L, cap);
        memcpy(np, m->p, m->len);
        lua_replace(m->L, m->slot);
        m->p = np;
        m->cap = cap;
    }
    memcpy(m->p + m->len, src, n);
    m->len += n;
}

static void put_be(struct mbuf *m, unsigned char tag, uint64_t v, int bytes)
{
    unsigned char o[9];
    o[0] = tag;
    for (int i = 0; i < bytes; i++)
        o[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
    put(m, o, (size_t)bytes + 1);
}

static void put_byte(struct mbuf *m, unsigned c)
{
    unsigned char b = (unsigned char)c;
    put(m, &b, 1);
}

static void enc_int(struct mbuf *m, int64_t n)
{
    if (n >= 0) {
        if (n <= 127)
            put_byte(m, (unsigned)n);
        else if (n <= 0xff)
            put_be(m, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            put_be(m, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            put_be(m, 0xce, (uint64_t)n, 4);
        else
            put_be(m, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            put_byte(m, (unsigned)(n & 0xff));
        else if (n >= -128)
            put_be(m, 0xd0, (uint64_t)n & 0xff, 1);
        else if (n >= -32768)
            put_be(m, 0xd1, (uint64_t)n & 0xffff, 2);
        else if (n >= -2147483648LL)
            put_be(m, 0xd2, (uint64_t)n & 0xffffffff, 4);
        else
            put_be(m, 0xd3, (uint64_t)n, 8);
    }
}

static void enc_number(struct mbuf *m, lua_Number x)
{
    float f;

    if (!isinf(x) && !isnan(x) && x >= -9223372036854775808.0 && x < 9223372036854775808.0 &&
        (lua_Number)(int64_t)x == x) {
        enc_int(m, (int64_t)x);
        return;
    }
    f = (float)x;
    if ((double)f == (double)x) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(m, 0xca, u, 4);
    } else {
        uint64_t u;
        double d = (double)x;
        memcpy(&u, &d, 8);
        put_be(m, 0xcb, u, 8);
    }
}

static void enc_string(struct mbuf *m, const char *s, size_t n)
{
    if (n < 32)
        put_byte(m, 0xa0 | (unsigned)n);
    else if (n <= 0xff)
        put_be(m, 0xd9, n, 1);
    else if (n <= 0xffff)
        put_be(m, 0xda, n, 2);
    else
        put_be(m, 0xdb, n, 4);
    put(m, s, n);
}

static void enc_header(struct mbuf *m, size_t n, int map)
{
    if (n <= 15)
        put_byte(m, (map ? 0x80u : 0x90u) | (unsigned)n);
    else if (n <= 0xffff)
        put_be(m, map ? 0xde : 0xdc, n, 2);
    else
        put_be(m, map ? 0xdf : 0xdd, n, 4);
}

/* The table at the top has only the keys 1..n (the empty table included). */
static int is_array(lua_State *L)
{
    int top = lua_gettop(L);
    long count = 0;
    lua_Number max = 0;

    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_Number n;
        lua_pop(L, 1);
        /* (a key past 2^53 is no array index, and casting it would be undefined) */
        if (lua_type(L, -1) != LUA_TNUMBER || (n = lua_tonumber(L, -1)) <= 0 ||
            n > 9007199254740992.0 || (lua_Number)(long long)n != n) {
            lua_settop(L, top);
            return 0;
        }
        if (n > max)
            max = n;
        count++;
    }
    lua_settop(L, top);
    return max == (lua_Number)count;
}

static void encode(struct mbuf *m, int level);

static void enc_table(struct mbuf *m, int level)
{
    lua_State *L = m->L;
    int t = lua_gettop(L);

    luaL_checkstack(L, 4, "in function mp_encode_lua_table");
    if (is_array(L)) {
        size_t len = lua_objlen(L, t);
        enc_header(m, len, 0);
        for (size_t j = 1; j <= len; j++) {
            lua_pushnumber(L, (lua_Number)j);
            lua_gettable(L, t);
            encode(m, level + 1);
        }
    } else {
        size_t len = 0;
        lua_pushnil(L);
        while (lua_next(L, t)) {
            lua_pop(L, 1);
            len++;
        }
        enc_header(m, len, 1);
        lua_pushnil(L);
        while (lua_next(L, t)) {
            lua_pushvalue(L, -2);
            encode(m, level + 1); /* the key */
            encode(m, level + 1); /* the value */
        }
    }
}

/* Encode the value at the top of the stack and pop it. */
static void encode(struct mbuf *m, int level)
{
    lua_State *L = m->L;
    int t = lua_type(L, -1);

    if (t == LUA_TTABLE && level == MAX_NESTING)
        t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        enc_string(m, s, n);
        break;
    }
    case LUA_TBOOLEAN:
        put_byte(m, lua_toboolean(L, -1) ? 0xc3 : 0xc2);
        break;
    case LUA_TNUMBER:
        enc_number(m, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        enc_table(m, level);
        break;
    default:
        put_byte(m, 0xc0);
        break;
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    struct mbuf m;

    if (nargs == 0)
        return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs + 8))
        return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    mbuf_init(&m, L);
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        encode(&m, 0);
    }
    lua_pushlstring(L, (const char *)m.p, m.len);
    return 1;
}

/* ---- decoding ---- */

enum { MP_OK, MP_EOF, MP_BADFMT };

struct mcur {
    const unsigned char *p;
    size_t left;
    int err;
    int depth; /* arrays and maps open: bounded, so garbage cannot recurse the C stack away */
};

#define MP_MAX_DEPTH 1000

static int need(struct mcur *c, size_t n)
{
    if (c->left < n) {
        c->err = MP_EOF;
        return 0;
    }
    return 1;
}

static uint64_t be(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

static void decode(lua_State *L, struct mcur *c);

static void enter(lua_State *L, struct mcur *c)
{
    if (++c->depth > MP_MAX_DEPTH)
        luaL_error(L, "cmsgpack: too many nested levels");
    luaL_checkstack(L, 4, "cmsgpack: too many nested levels");
}

static void dec_array(lua_State *L, struct mcur *c, size_t n)
{
    enter(L, c);
    lua_newtable(L);
    for (size_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        decode(L, c);
        if (c->err)
            return;
        lua_settable(L, -3);
    }
    c->depth--;
}

static void dec_map(lua_State *L, struct mcur *c, size_t n)
{
    enter(L, c);
    lua_newtable(L);
    while (n--) {
        decode(L, c); /* key */
        if (c->err)
            return;
        decode(L, c); /* value */
        if (c->err)
            return;
        lua_settable(L, -3);
    }
    c->depth--;
}

/* Push the next value (on error c->err is set and what was pushed stays: the caller raises) */
static void decode(lua_State *L, struct mcur *c)
{
    unsigned t;
    size_t n;

    luaL_checkstack(L, 3, "in function mp_decode_to_lua_type");
    if (!need(c, 1))
        return;
    t = c->p[0];
    switch (t) {
    case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        int bytes = 1 << (t - 0xcc);
        if (!need(c, 1 + (size_t)bytes))
            return;
        /* as Redis's: a uint64 reads as a signed 64-bit value */
        lua_pushnumber(L, bytes == 8 ? (lua_Number)(int64_t)be(c->p + 1, 8)
                                     : (lua_Number)be(c->p + 1, bytes));
        c->p += 1 + bytes, c->left -= 1 + (size_t)bytes;
        return;
    }
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        int bytes = 1 << (t - 0xd0);
        uint64_t u;
        int64_t v;
        if (!need(c, 1 + (size_t)bytes))
            return;
        u = be(c->p + 1, bytes);
        if (bytes < 8 && (u >> (8 * bytes - 1)))
            u |= ~0ULL << (8 * bytes); /* sign-extend */
        memcpy(&v, &u, 8);
        lua_pushnumber(L, (lua_Number)v);
        c->p += 1 + bytes, c->left -= 1 + (size_t)bytes;
        return;
    }
    case 0xc0:
        lua_pushnil(L);
        c->p++, c->left--;
        return;
    case 0xc2: case 0xc3:
        lua_pushboolean(L, t == 0xc3);
        c->p++, c->left--;
        return;
    case 0xca: {
        uint32_t u;
        float f;
        if (!need(c, 5))
            return;
        u = (uint32_t)be(c->p + 1, 4);
        memcpy(&f, &u, 4);
        lua_pushnumber(L, (lua_Number)f);
        c->p += 5, c->left -= 5;
        return;
    }
    case 0xcb: {
        uint64_t u;
        double d;
        if (!need(c, 9))
            return;
        u = be(c->p + 1, 8);
        memcpy(&d, &u, 8);
        lua_pushnumber(L, (lua_Number)d);
        c->p += 9, c->left -= 9;
        return;
    }
    case 0xd9: case 0xda: case 0xdb: {
        int bytes = t == 0xd9 ? 1 : t == 0xda ? 2 : 4;
        if (!need(c, 1 + (size_t)bytes))
            return;
        n = (size_t)be(c->p + 1, bytes);
        if (!need(c, 1 + (size_t)bytes + n))
            return;
        lua_pushlstring(L, (const char *)c->p + 1 + bytes, n);
        c->p += 1 + (size_t)bytes + n, c->left -= 1 + (size_t)bytes + n;
        return;
    }
    case 0xdc: case 0xdd: case 0xde: case 0xdf: {
        int bytes = (t == 0xdc || t == 0xde) ? 2 : 4;
        if (!need(c, 1 + (size_t)bytes))
            return;
        n = (size_t)be(c->p + 1, bytes);
        c->p += 1 + bytes, c->left -= 1 + (size_t)bytes;
        if (t <= 0xdd)
            dec_array(L, c, n);
        else
            dec_map(L, c, n);
        return;
    }
    default:
        break;
    }
    if (t <= 0x7f) {
        lua_pushnumber(L, (lua_Number)t);
        c->p++, c->left--;
    } else if (t >= 0xe0) {
        lua_pushnumber(L, (lua_Number)((int)t - 256));
        c->p++, c->left--;
    } else if ((t & 0xe0) == 0xa0) {
        n = t & 0x1f;
        if (!need(c, 1 + n))
            return;
        lua_pushlstring(L, (const char *)c->p + 1, n);
        c->p += 1 + n, c->left -= 1 + n;
    } else if ((t & 0xf0) == 0x90) {
        c->p++, c->left--;
        dec_array(L, c, t & 0x0f);
    } else if ((t & 0xf0) == 0x80) {
        c->p++, c->left--;
        dec_map(L, c, t & 0x0f);
    } else {
        c->err = MP_BADFMT;
    }
}

/* Decode from offset: every value (limit 0 and offset 0), or up to limit values preceded by
 * the next offset (-1 once the input is used up). */
static int unpack_full(lua_State *L, int limit, int offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    struct mcur c;
    int cnt, all = !limit && !offset;

    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                          offset, limit);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", offset, (int)len);
    c.p = (const unsigned char *)s + offset;
    c.left = len - (size_t)offset;
    c.err = MP_OK;
    c.depth = 0;
    for (cnt = 0; c.left > 0; cnt++) {
        decode(L, &c);
        if (c.err == MP_EOF)
            return luaL_error(L, "Missing bytes in input.");
        if (c.err == MP_BADFMT)
            return luaL_error(L, "Bad data format in input.");
        if (!all && cnt + 1 == limit) {
            cnt++;
            break;
        }
    }
    if (!all) {
        luaL_checkstack(L, 1, "in function mp_unpack_full");
        lua_pushnumber(L, c.left == 0 ? -1 : (lua_Number)(len - c.left));
        lua_insert(L, -cnt - 1);
        cnt++;
    }
    return cnt;
}

static int mp_unpack(lua_State *L)
{
    return unpack_full(L, 0, 0);
}

static int mp_unpack_one(lua_State *L)
{
    int offset = (int)luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    int limit = (int)luaL_checkinteger(L, 2);
    int offset = (int)luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

int script_open_cmsgpack(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", mp_pack},
        {"unpack", mp_unpack},
        {"unpack_one", mp_unpack_one},
        {"unpack_limit", mp_unpack_limit},
        {NULL, NULL},
    };

    lua_newtable(L);
    for (const luaL_Reg *r = fns; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
