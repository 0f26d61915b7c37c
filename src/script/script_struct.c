/* struct for scripts: pack(fmt, ...), unpack(fmt, s [, pos]) and size(fmt) with the format
 * language of the struct library Redis 7.0 embeds: ">" "<" byte order, "!n" alignment, "x"
 * padding, b/B h/H l/L T i[n]/I[n] integers, f/d floats, s zero-terminated and c[n] fixed
 * strings ("c0": the length is the previous value when unpacking, the string's own when
 * packing), spaces ignored. Native order is little-endian (x86-64, as Redis on it). */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "script/script_int.h"

#define MAX_INT_SIZE 32 /* largest i[n] */
#define MAX_ALIGN 8

struct fmt_state {
    int big;   /* big-endian */
    int align; /* current maximum alignment */
};

/* digits at *fmt as a number, or df when there are none */
static int read_num(lua_State *L, const char **fmt, int df)
{
    int a = 0;

    if (!isdigit((unsigned char)**fmt))
        return df;
    do {
        if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0'))
            luaL_error(L, "integral size overflow");
        a = a * 10 + *((*fmt)++) - '0';
    } while (isdigit((unsigned char)**fmt));
    return a;
}

/* bytes of option opt (reading its size digits), 0 for the options without a size */
static size_t opt_size(lua_State *L, int opt, const char **fmt)
{
    switch (opt) {
    case 'B': case 'b': case 'x':
        return 1;
    case 'H': case 'h':
        return 2;
    case 'L': case 'l': case 'T': case 'd':
        return 8;
    case 'f':
        return 4;
    case 'c':
        return (size_t)read_num(L, fmt, 1);
    case 'i': case 'I': {
        int n = read_num(L, fmt, 4);
        if (n > MAX_INT_SIZE)
            luaL_error(L, "integral size %d is larger than limit of %d", n, MAX_INT_SIZE);
        return (size_t)n;
    }
    default:
        return 0;
    }
}

/* padding before an element of size bytes at offset len */
static size_t pad_for(size_t len, const struct fmt_state *h, int opt, size_t size)
{
    if (size == 0 || opt == 'c')
        return 0;
    if (size > (size_t)h->align)
        size = (size_t)h->align;
    return (size - (len & (size - 1))) & (size - 1);
}

static void control(lua_State *L, int opt, const char **fmt, struct fmt_state *h)
{
    switch (opt) {
    case ' ':
        return;
    case '>':
        h->big = 1;
        return;
    case '<':
        h->big = 0;
        return;
    case '!': {
        int a = read_num(L, fmt, MAX_ALIGN);
        if (a <= 0 || (a & (a - 1)))
            luaL_error(L, "alignment %d is not a power of 2", a);
        h->align = a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

/* bytes in order for the format's byte order (the native order is little-endian) */
static void order(unsigned char *p, size_t n, int big)
{
    if (!big)
        return;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

static void put_int(lua_State *L, luaL_Buffer *b, int arg, int big, size_t size)
{
    lua_Number n = luaL_checknumber(L, arg);
    unsigned char out[MAX_INT_SIZE];
    uint64_t v;

    /* a number no 64-bit integer holds (or NaN) packs as x86 converts it: 0x8000000000000000,
     * without the undefined C conversion */
    if (n < 0 && n >= -9223372036854775808.0)
        v = (uint64_t)(int64_t)n;
    else if (n >= 0 && n < 18446744073709551616.0)
        v = (uint64_t)n;
    else
        v = 0x8000000000000000ULL;

    for (size_t i = 0; i < size; i++) {
        out[big ? size - 1 - i : i] = (unsigned char)(v & 0xff);
        v = i < 7 ? v >> 8 : 0;
    }
    luaL_addlstring(b, (const char *)out, size);
}

static lua_Number get_int(const unsigned char *p, int big, int sign, size_t size)
{
    uint64_t v = 0;

    for (size_t i = 0; i < size; i++)
        v = v << 8 | p[big ? i : size - 1 - i];
    if (!sign)
        return (lua_Number)v;
    if (size > 0 && size < 8) { /* (a zero-size integer reads as 0) */
        uint64_t mask = ~0ULL << (size * 8 - 1);
        if (v & mask)
            v |= mask; /* sign extension */
    }
    return (lua_Number)(int64_t)v;
}

static int st_pack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    struct fmt_state h = {0, 1};
    luaL_Buffer b;
    int arg = 2;
    size_t total = 0;

    lua_pushnil(L); /* keeps the arguments apart from the buffer's pieces */
    luaL_buffinit(L, &b);
    while (*fmt) {
        int opt = *fmt++;
        size_t size = opt_size(L, opt, &fmt);
        size_t pad = pad_for(total, &h, opt, size);
        total += pad;
        while (pad--)
            luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i':
        case 'I':
            put_int(L, &b, arg++, h.big, size);
            break;
        case 'x':
            luaL_addchar(&b, '\0');
            break;
        case 'f': {
            float f = (float)luaL_checknumber(L, arg++);
            unsigned char o[4];
            memcpy(o, &f, 4);
            order(o, 4, h.big);
            luaL_addlstring(&b, (const char *)o, 4);
            break;
        }
        case 'd': {
            double d = (double)luaL_checknumber(L, arg++);
            unsigned char o[8];
            memcpy(o, &d, 8);
            order(o, 8, h.big);
            luaL_addlstring(&b, (const char *)o, 8);
            break;
        }
        case 'c': case 's': {
            size_t l;
            const char *s = luaL_checklstring(L, arg++, &l);
            if (size == 0)
                size = l;
            luaL_argcheck(L, l >= size, arg, "string too short");
            luaL_addlstring(&b, s, size);
            if (opt == 's') {
                luaL_addchar(&b, '\0');
                size++;
            }
            break;
        }
        default:
            control(L, opt, &fmt, &h);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

static int st_unpack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    size_t ld;
    const char *data = luaL_checklstring(L, 2, &ld);
    size_t pos = (size_t)luaL_optinteger(L, 3, 1) - 1;
    struct fmt_state h = {0, 1};
    int n = 0;

    luaL_argcheck(L, pos <= ld, 3, "offset must be 1 or greater");
    while (*fmt) {
        int opt = *fmt++;
        size_t size = opt_size(L, opt, &fmt);
        pos += pad_for(pos, &h, opt, size);
        luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        luaL_checkstack(L, 2, "too many results");
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i':
        case 'I':
            lua_pushnumber(L, get_int((const unsigned char *)data + pos, h.big,
                                      islower(opt), size));
            n++;
            break;
        case 'x':
            break;
        case 'f': {
            unsigned char o[4];
            float f;
            memcpy(o, data + pos, 4);
            order(o, 4, h.big);
            memcpy(&f, o, 4);
            lua_pushnumber(L, (lua_Number)f);
            n++;
            break;
        }
        case 'd': {
            unsigned char o[8];
            double d;
            memcpy(o, data + pos, 8);
            order(o, 8, h.big);
            memcpy(&d, o, 8);
            lua_pushnumber(L, (lua_Number)d);
            n++;
            break;
        }
        case 'c':
            if (size == 0) {
                if (n == 0 || !lua_isnumber(L, -1))
                    luaL_error(L, "format 'c0' needs a previous size");
                {
                    lua_Number sz = lua_tonumber(L, -1);
                    /* (a size outside 0..ld is refused before it is converted) */
                    luaL_argcheck(L, sz >= 0 && sz <= (lua_Number)ld, 2, "data string too short");
                    size = (size_t)sz;
                }
                lua_pop(L, 1);
                n--;
                luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
            }
            lua_pushlstring(L, data + pos, size);
            n++;
            break;
        case 's': {
            const char *e = memchr(data + pos, '\0', ld - pos);
            if (!e)
                luaL_error(L, "unfinished string in data");
            size = (size_t)(e - (data + pos)) + 1;
            lua_pushlstring(L, data + pos, size - 1);
            n++;
            break;
        }
        default:
            control(L, opt, &fmt, &h);
        }
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos + 1); /* the next position */
    return n + 1;
}

static int st_size(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    struct fmt_state h = {0, 1};
    size_t pos = 0;

    while (*fmt) {
        int opt = *fmt++;
        size_t size = opt_size(L, opt, &fmt);
        pos += pad_for(pos, &h, opt, size);
        if (opt == 's')
            luaL_argerror(L, 1, "option 's' has no fixed size");
        else if (opt == 'c' && size == 0)
            luaL_argerror(L, 1, "option 'c0' has no fixed size");
        if (!isalnum(opt))
            control(L, opt, &fmt, &h);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)pos);
    return 1;
}

int script_open_struct(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", st_pack},
        {"unpack", st_unpack},
        {"size", st_size},
        {NULL, NULL},
    };

    lua_newtable(L);
    for (const luaL_Reg *r = fns; r->name; r++) {
        lua_pushcfunction(L, r->func);
        lua_setfield(L, -2, r->name);
    }
    return 1;
}
