/* The Lua debugger's text forms (script_ldb.c): Lua values as Redis 7.0's debugger prints them
 * (ldbCatStackValue's forms: strings quoted like sdscatrepr, numbers with %g, tables as
 * {a; b} or {[k]=v}, nesting cut at LDB_MAX_VALUES_DEPTH) and RESP replies in its human form
 * ("+OK" quoted, [a,b], {k => v}, ~(a), (double) x, (null), NULL). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "core/buf.h"
#include "core/util.h"
#include "script/script_int.h"

#define LDB_MAX_VALUES_DEPTH 10 /* nesting shown, as Redis 7.0 shows it */

static void cat_str(struct buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

static void cat_value(struct buf *b, lua_State *L, int idx, int level);

static void cat_table(struct buf *b, lua_State *L, int idx, int level)
{
    struct buf arr = {0}, full = {0};
    int expected = 1, is_array = 1;

    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int top = lua_gettop(L);
        if (is_array &&
            (lua_type(L, -2) != LUA_TNUMBER || lua_tonumber(L, -2) != expected))
            is_array = 0;
        cat_value(&arr, L, top, level);
        buf_append(&arr, "; ", 2);
        buf_append(&full, "[", 1);
        cat_value(&full, L, top - 1, level);
        buf_append(&full, "]=", 2);
        cat_value(&full, L, top, level);
        buf_append(&full, "; ", 2);
        lua_pop(L, 1);
        expected++;
    }
    buf_append(b, "{", 1);
    if (is_array && arr.wpos > 2)
        buf_append(b, arr.data, arr.wpos - 2);
    else if (!is_array && full.wpos > 2)
        buf_append(b, full.data, full.wpos - 2);
    buf_append(b, "}", 1);
    buf_deinit(&arr);
    buf_deinit(&full);
}

/* The value at idx as Redis's debugger shows it. */
static void cat_value(struct buf *b, lua_State *L, int idx, int level)
{
    int t;
    char tmp[64];
    int k;

    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;
    if (level++ == LDB_MAX_VALUES_DEPTH) {
        const char *m = "<max recursion level reached! Nested table?>";
        buf_append(b, m, strlen(m));
        return;
    }
    t = lua_type(L, idx);
    switch (t) {
    case LUA_TSTRING: {
        size_t n;
        const char *p = lua_tolstring(L, idx, &n);
        buf_append_repr(b, p, n);
        break;
    }
    case LUA_TBOOLEAN:
        if (lua_toboolean(L, idx))
            buf_append(b, "true", 4);
        else
            buf_append(b, "false", 5);
        break;
    case LUA_TNUMBER:
        k = snprintf(tmp, sizeof(tmp), "%g", (double)lua_tonumber(L, idx));
        buf_append(b, tmp, (size_t)k);
        break;
    case LUA_TNIL:
        buf_append(b, "nil", 3);
        break;
    case LUA_TTABLE:
        if (!lua_checkstack(L, 4)) {
            buf_append(b, "{}", 2);
            break;
        }
        /* a read-only library table (script_sandbox.c) shows what it reads through to, as
         * Redis's read-only tables show their own contents */
        lua_getfield(L, LUA_REGISTRYINDEX, "tc_ro");
        if (lua_istable(L, -1)) {
            lua_pushvalue(L, idx);
            lua_rawget(L, -2);
            if (lua_istable(L, -1)) {
                cat_table(b, L, lua_gettop(L), level);
                lua_pop(L, 2);
                break;
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        cat_table(b, L, idx, level);
        break;
    case LUA_TFUNCTION:
    case LUA_TUSERDATA:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: {
        const char *name = t == LUA_TFUNCTION   ? "function"
                           : t == LUA_TUSERDATA ? "userdata"
                           : t == LUA_TTHREAD   ? "thread"
                                                : "light-userdata";
        k = snprintf(tmp, sizeof(tmp), "\"%s@%p\"", name, lua_topointer(L, idx));
        buf_append(b, tmp, (size_t)k);
        break;
    }
    default:
        buf_append(b, "\"<unknown-lua-type>\"", 20);
    }
}

void ldb_cat_value(struct buf *b, lua_State *L, int idx)
{
    cat_value(b, L, idx, 0);
}

static const char *line_end(const char *p, const char *end)
{
    const char *q = memchr(p, '\r', (size_t)(end - p));
    return q ? q : end;
}

/* The RESP reply at p as Redis's debugger shows it; returns the end of the reply. */
static const char *human(struct buf *b, const char *p, const char *end)
{
    const char *e, *q;
    long long n;

    if (p >= end)
        return end;
    e = line_end(p + 1, end);
    q = e + 2 <= end ? e + 2 : end;
    switch (*p) {
    case ':':
        buf_append(b, p + 1, (size_t)(e - p - 1));
        return q;
    case '+':
    case '-':
        buf_append_repr(b, p, (size_t)(e - p));
        return q;
    case '_':
        cat_str(b, "(null)");
        return q;
    case '#':
        cat_str(b, p + 1 < end && p[1] == 't' ? "#true" : "#false");
        return q;
    case ',':
        cat_str(b, "(double) ");
        buf_append(b, p + 1, (size_t)(e - p - 1));
        return q;
    case '$':
        if (!util_str2ll(p + 1, (size_t)(e - p - 1), &n) || n < 0) {
            cat_str(b, "NULL");
            return q;
        }
        if ((size_t)(end - q) < (size_t)n)
            n = end - q;
        buf_append_repr(b, q, (size_t)n);
        return q + n + 2 <= end ? q + n + 2 : end;
    case '*':
    case '~':
    case '%':
        if (!util_str2ll(p + 1, (size_t)(e - p - 1), &n) || n < 0) {
            cat_str(b, "NULL");
            return q;
        }
        cat_str(b, *p == '*' ? "[" : *p == '~' ? "~(" : "{");
        for (long long i = 0; i < n && q < end; i++) {
            q = human(b, q, end);
            if (*p == '%') {
                cat_str(b, " => ");
                q = human(b, q, end);
            }
            if (i != n - 1)
                cat_str(b, ",");
        }
        cat_str(b, *p == '*' ? "]" : *p == '~' ? ")" : "}");
        return q;
    default:
        return end; /* a type Redis 7.0's debugger does not show */
    }
}

void ldb_cat_reply(struct buf *b, const char *p, size_t n)
{
    human(b, p, p + n);
}
