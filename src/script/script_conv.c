/* Conversions between RESP replies and Lua values, as Redis 7.0 does them (its "conversion
 * rules"): both directions, RESP2 and the RESP3 types a script sees after redis.setresp(3). */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "cmd/cmd.h"
#include "script/script_int.h"

#define MAX_DEPTH 200 /* nesting of replies and of returned tables */

void script_push_error(lua_State *L, const char *msg, size_t n)
{
    const char *code = "ERR", *text = msg;
    size_t codelen = 3, textlen = n;
    luaL_Buffer b;

    if (TC_UNLIKELY(ldb_logging()))
        ldb_log_error("", msg, n); /* as Redis: errors are logged while stepping */
    if (n && msg[0] == '-') {
        const char *sp = memchr(msg, ' ', n);
        if (!sp) {
            text = msg + 1, textlen = n - 1;
        } else {
            code = msg + 1, codelen = (size_t)(sp - msg - 1);
            text = sp + 1, textlen = n - (size_t)(sp + 1 - msg);
        }
    }
    while (textlen && (text[textlen - 1] == '\r' || text[textlen - 1] == '\n'))
        textlen--;
    lua_newtable(L);
    lua_pushliteral(L, "err");
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, codelen);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, text, textlen);
    luaL_pushresult(&b);
    lua_settable(L, -3);
}

/* ---- RESP -> Lua ---- */

/* The line at p (up to CRLF) parsed as an integer; *next after the CRLF. -1 on error. */
static int read_line(const char *p, const char *end, const char **line, size_t *len,
                     const char **next)
{
    const char *cr = memchr(p, '\r', (size_t)(end - p));
    if (!cr || cr + 1 >= end || cr[1] != '\n')
        return -1;
    *line = p;
    *len = (size_t)(cr - p);
    *next = cr + 2;
    return 0;
}

static int read_ll(const char *p, const char *end, long long *v, const char **next)
{
    const char *l;
    size_t n;
    if (read_line(p, end, &l, &n, next) || !util_str2ll(l, n, v))
        return -1;
    return 0;
}

static const char *parse(lua_State *L, const char *p, const char *end, int depth);

/* A counted aggregate of n elements (pairs when kv) into a fresh table on the stack. */
static const char *parse_array(lua_State *L, const char *p, const char *end, long long n,
                               int depth)
{
    lua_createtable(L, n > 0 && n < 1024 ? (int)n : 0, 0);
    for (long long i = 0; i < n; i++) {
        lua_pushnumber(L, (lua_Number)(i + 1));
        if (!(p = parse(L, p, end, depth + 1))) {
            lua_pop(L, 2);
            return NULL;
        }
        lua_settable(L, -3);
    }
    return p;
}

/* {map = {k = v}} or {set = {member = true}} */
static const char *parse_kv(lua_State *L, const char *p, const char *end, long long n, int set,
                            int depth)
{
    lua_newtable(L);
    lua_pushstring(L, set ? "set" : "map");
    lua_newtable(L);
    for (long long i = 0; i < n; i++) {
        if (!(p = parse(L, p, end, depth + 1)))
            goto bad;
        if (set) {
            lua_pushboolean(L, 1);
        } else if (!(p = parse(L, p, end, depth + 1))) {
            lua_pop(L, 1);
            goto bad;
        }
        lua_settable(L, -3);
    }
    lua_settable(L, -3);
    return p;
bad:
    lua_pop(L, 3);
    return NULL;
}

static void push_field(lua_State *L, const char *field)
{
    /* below: the value; makes {field = value} */
    lua_newtable(L);
    lua_pushstring(L, field);
    lua_pushvalue(L, -3);
    lua_settable(L, -3);
    lua_remove(L, -2);
}

static const char *parse(lua_State *L, const char *p, const char *end, int depth)
{
    const char *l, *next;
    size_t n;
    long long v;

    if (p >= end || depth > MAX_DEPTH || !lua_checkstack(L, 8))
        return NULL;
    switch (*p) {
    case '+':
        if (read_line(p + 1, end, &l, &n, &next))
            return NULL;
        lua_pushlstring(L, l, n);
        push_field(L, "ok");
        return next;
    case '-':
        if (read_line(p + 1, end, &l, &n, &next))
            return NULL;
        if (TC_UNLIKELY(ldb_logging()))
            ldb_log_error("-", l, n);
        lua_pushlstring(L, l, n);
        push_field(L, "err");
        /* counted in errorstats when the command answered it, as Redis marks it */
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "ignore_error_stats_update");
        return next;
    case ':':
        if (read_ll(p + 1, end, &v, &next))
            return NULL;
        lua_pushnumber(L, (lua_Number)v);
        return next;
    case '$':
    case '=':
        if (read_ll(p + 1, end, &v, &next))
            return NULL;
        if (v < 0) {
            lua_pushboolean(L, 0);
            return next;
        }
        if ((size_t)(end - next) < (size_t)v + 2)
            return NULL;
        if (*p == '=' && v >= 4) {
            /* {verbatim_string = {format = "txt", string = "..."}} */
            lua_newtable(L);
            lua_pushliteral(L, "format");
            lua_pushlstring(L, next, 3);
            lua_settable(L, -3);
            lua_pushliteral(L, "string");
            lua_pushlstring(L, next + 4, (size_t)v - 4);
            lua_settable(L, -3);
            push_field(L, "verbatim_string");
        } else {
            lua_pushlstring(L, next, (size_t)v);
        }
        return next + v + 2;
    case '*':
    case '>':
        if (read_ll(p + 1, end, &v, &next))
            return NULL;
        if (v < 0) {
            lua_pushboolean(L, 0);
            return next;
        }
        return parse_array(L, next, end, v, depth);
    case '%':
    case '~':
        if (read_ll(p + 1, end, &v, &next) || v < 0)
            return NULL;
        return parse_kv(L, next, end, v, *p == '~', depth);
    case '|':
        /* attributes: read and dropped, the value follows */
        if (read_ll(p + 1, end, &v, &next) || v < 0)
            return NULL;
        if (!(next = parse_kv(L, next, end, v, 0, depth)))
            return NULL;
        lua_pop(L, 1);
        return parse(L, next, end, depth);
    case '_':
        if (read_line(p + 1, end, &l, &n, &next))
            return NULL;
        lua_pushnil(L);
        return next;
    case '#':
        if (read_line(p + 1, end, &l, &n, &next) || n != 1)
            return NULL;
        lua_pushboolean(L, l[0] == 't');
        return next;
    case ',': {
        char tmp[64];
        if (read_line(p + 1, end, &l, &n, &next) || n >= sizeof(tmp))
            return NULL;
        memcpy(tmp, l, n);
        tmp[n] = '\0';
        lua_pushnumber(L, strtod(tmp, NULL));
        push_field(L, "double");
        return next;
    }
    case '(':
        if (read_line(p + 1, end, &l, &n, &next))
            return NULL;
        lua_pushlstring(L, l, n);
        push_field(L, "big_number");
        return next;
    default:
        return NULL;
    }
}

size_t script_reply_to_lua(lua_State *L, const char *p, size_t n)
{
    const char *e = parse(L, p, p + n, 0);
    return e ? (size_t)(e - p) : 0;
}

/* ---- Lua -> RESP ---- */

/* t[field] (raw) on the stack; returns its type. */
static int raw_field(lua_State *L, const char *field)
{
    lua_pushstring(L, field);
    lua_rawget(L, -2);
    return lua_type(L, -1);
}

void script_count_error(lua_State *L, int idx, const char *msg, size_t n)
{
    static __thread char code[32];
    const char *sp;
    int quiet = 0;

    if (lua_istable(L, idx)) {
        lua_getfield(L, idx, "ignore_error_stats_update");
        quiet = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    if (n && msg[0] == '-') {
        msg++;
        n--;
    }
    sp = memchr(msg, ' ', n < 31 ? n : 31);
    if (sp) {
        memcpy(code, msg, (size_t)(sp - msg));
        code[sp - msg] = '\0';
    } else {
        strcpy(code, "ERR");
    }
    cmd_last_error = code;
    cmd_errors++;
    if (quiet)
        cmd_errors_quiet++;
}

/* The error reply of a script that returned {err = "..."} (the table at the top, under the
 * text): "-" and the text as it is (the text carries its code), newlines turned into
 * spaces. */
static void reply_err_text(lua_State *L, struct conn *c, const char *s, size_t n)
{
    char *m = malloc(n + 1);
    if (!m) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        m[i] = s[i] == '\r' || s[i] == '\n' ? ' ' : s[i];
    while (n && m[n - 1] == ' ' && (s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    m[n] = '\0';
    script_count_error(L, -2, m, n);
    if (m[0] == '-') {
        reply_check(c, resp_add_raw(&c->wbuf, m, n));
        reply_lit(c, "\r\n");
    } else {
        reply_check(c, resp_add_raw(&c->wbuf, "-", 1));
        reply_check(c, resp_add_raw(&c->wbuf, m, n));
        reply_lit(c, "\r\n");
    }
    free(m);
}

static void to_reply(lua_State *L, struct conn *c, int sresp, int depth);

/* Elements 1, 2, ... of the table on top up to the first nil, as an array. */
static void reply_table_array(lua_State *L, struct conn *c, int sresp, int depth)
{
    size_t hdr;
    long long n = 0;
    char tmp[32];
    int k;

    /* the count is known at the end: reserve room for the largest header, then move */
    if (buf_reserve(&c->wbuf, 32)) {
        reply_check(c, -1);
        return;
    }
    hdr = c->wbuf.wpos;
    c->wbuf.wpos += 24;
    for (;;) {
        lua_pushnumber(L, (lua_Number)(n + 1));
        lua_rawget(L, -2);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        to_reply(L, c, sresp, depth + 1);
        lua_pop(L, 1);
        n++;
    }
    k = snprintf(tmp, sizeof(tmp), "*%lld\r\n", n);
    memmove(c->wbuf.data + hdr + k, c->wbuf.data + hdr + 24, c->wbuf.wpos - hdr - 24);
    memcpy(c->wbuf.data + hdr, tmp, (size_t)k);
    c->wbuf.wpos -= (size_t)(24 - k);
}

/* {map = {...}} (set: keys only) */
static void reply_table_kv(lua_State *L, struct conn *c, int sresp, int set, int depth)
{
    long long n = 0;

    lua_pushnil(L);
    while (lua_next(L, -2)) {
        n++;
        lua_pop(L, 1);
    }
    if (set)
        reply_set(c, n);
    else
        reply_map(c, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        to_reply(L, c, sresp, depth + 1); /* the key */
        lua_pop(L, 1);
        if (!set)
            to_reply(L, c, sresp, depth + 1);
        lua_pop(L, 1);
    }
}

static void to_reply(lua_State *L, struct conn *c, int sresp, int depth)
{
    size_t n;
    const char *s;
    int top;

    if (depth > MAX_DEPTH || !lua_checkstack(L, 6)) {
        reply_error(c, "ERR reached lua stack limit");
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &n);
        reply_bulk(c, s, n);
        return;
    case LUA_TBOOLEAN:
        if (sresp == 2) {
            if (lua_toboolean(L, -1))
                reply_lit(c, ":1\r\n");
            else
                reply_null(c);
        } else {
            reply_bool(c, lua_toboolean(L, -1));
        }
        return;
    case LUA_TNUMBER:
        reply_int(c, (long long)lua_tonumber(L, -1));
        return;
    case LUA_TTABLE:
        break;
    default:
        reply_null(c);
        return;
    }
    if (raw_field(L, "err") == LUA_TSTRING) {
        s = lua_tolstring(L, -1, &n);
        reply_err_text(L, c, s, n);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "ok") == LUA_TSTRING) {
        char *m;
        s = lua_tolstring(L, -1, &n);
        m = malloc(n + 1);
        if (m) {
            for (size_t i = 0; i < n; i++)
                m[i] = s[i] == '\r' || s[i] == '\n' ? ' ' : s[i];
            reply_check(c, resp_add_raw(&c->wbuf, "+", 1));
            reply_check(c, resp_add_raw(&c->wbuf, m, n));
            reply_lit(c, "\r\n");
            free(m);
        } else {
            reply_error(c, "ERR out of memory");
        }
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "double") == LUA_TNUMBER) {
        reply_double(c, (double)lua_tonumber(L, -1));
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "big_number") == LUA_TSTRING) {
        char *m;
        s = lua_tolstring(L, -1, &n);
        m = malloc(n ? n : 1);
        if (!m) {
            reply_error(c, "ERR out of memory");
            lua_pop(L, 1);
            return;
        }
        for (size_t i = 0; i < n; i++) /* as Redis: line breaks cannot end the reply early */
            m[i] = s[i] == '\r' || s[i] == '\n' ? ' ' : s[i];
        if (c->resp >= 3) {
            reply_check(c, resp_add_raw(&c->wbuf, "(", 1));
            reply_check(c, resp_add_raw(&c->wbuf, m, n));
            reply_lit(c, "\r\n");
        } else {
            reply_bulk(c, m, n);
        }
        free(m);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    top = lua_gettop(L);
    if (raw_field(L, "verbatim_string") == LUA_TTABLE && raw_field(L, "format") == LUA_TSTRING &&
        (lua_pushliteral(L, "string"), lua_rawget(L, -3), lua_type(L, -1) == LUA_TSTRING)) {
        /* {verbatim_string = {format = "txt", string = "..."}}: the format padded or cut to
         * three characters, as Redis's addReplyVerbatim */
        const char *fmt = lua_tostring(L, -2);
        char pre[40];
        int k;
        s = lua_tolstring(L, -1, &n);
        if (c->resp >= 3) {
            k = snprintf(pre, sizeof(pre), "=%zu\r\nxxx:", n + 4);
            for (int i = 0; i < 3; i++)
                pre[k - 4 + i] = *fmt ? *fmt++ : ' ';
            reply_check(c, resp_add_raw(&c->wbuf, pre, (size_t)k));
            reply_check(c, resp_add_raw(&c->wbuf, s, n));
            reply_lit(c, "\r\n");
        } else {
            reply_bulk(c, s, n);
        }
        lua_pop(L, 3);
        return;
    }
    lua_settop(L, top);
    if (raw_field(L, "map") == LUA_TTABLE) {
        reply_table_kv(L, c, sresp, 0, depth);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "set") == LUA_TTABLE) {
        reply_table_kv(L, c, sresp, 1, depth);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    reply_table_array(L, c, sresp, depth);
}

void script_lua_to_reply(lua_State *L, struct conn *c, int script_resp)
{
    to_reply(L, c, script_resp, 0);
}
