/* The parsing half of functions, with no Lua (so that the fuzz target links it alone): the
 * library's "#!lua name=" line, and the FUNCTION DUMP payload (RDB_OPCODE_FUNCTION2 records,
 * RDB version, CRC64). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "persist/crc64.h"
#include "persist/rdb_read.h"
#include "script/script_func.h"

#define RDB_OPCODE_FUNCTION2 245
#define RDB_VERSION 10

int func_name_ok(const char *p, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return 1;
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The next word of [*pp, end) split as Redis's sdssplitargs (blanks between words, "double
 * quotes" with \n \r \t \b \a \\ \" \xHH, 'single quotes' with \'; a closing quote must end
 * the word) into out (cap bytes, cut). Returns 1 with a word, 0 at the end, -1 when the quotes
 * do not balance. */
static int next_arg(const char **pp, const char *end, char *out, size_t cap)
{
    const char *p = *pp;
    size_t n = 0;
    int inq = 0, insq = 0;

    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' ||
                       *p == '\f'))
        p++;
    if (p >= end)
        return 0;
#define PUT(ch) (n + 1 < cap ? (void)(out[n++] = (char)(ch)) : (void)0)
    for (;;) {
        if (inq) {
            if (p >= end)
                return -1;
            if (*p == '\\' && p + 3 < end && p[1] == 'x' && hexval(p[2]) >= 0 &&
                hexval(p[3]) >= 0) {
                PUT(hexval(p[2]) * 16 + hexval(p[3]));
                p += 3;
            } else if (*p == '\\' && p + 1 < end) {
                char c = *++p;
                PUT(c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'b' ? '\b'
                    : c == 'a' ? '\a' : c);
            } else if (*p == '"') {
                if (p + 1 < end && !strchr(" \t\r\n\v\f", p[1]))
                    return -1;
                inq = 0;
                p++;
                break;
            } else {
                PUT(*p);
            }
        } else if (insq) {
            if (p >= end)
                return -1;
            if (*p == '\\' && p + 1 < end && p[1] == '\'') {
                p++;
                PUT('\'');
            } else if (*p == '\'') {
                if (p + 1 < end && !strchr(" \t\r\n\v\f", p[1]))
                    return -1;
                insq = 0;
                p++;
                break;
            } else {
                PUT(*p);
            }
        } else {
            if (p >= end || strchr(" \t\r\n\v\f", *p))
                break;
            if (*p == '"')
                inq = 1;
            else if (*p == '\'')
                insq = 1;
            else
                PUT(*p);
        }
        p++;
    }
#undef PUT
    out[n] = '\0';
    *pp = p;
    return 1;
}

/* "#!lua name=<lib>" on the first line, split as Redis does (quotes allowed): the library name
 * in name (malloc'd) and the length of the line, or -1 with the error (without "ERR ") in
 * err. */
int func_parse_meta(const char *code, size_t n, char **name, size_t *skip, char *err,
                    size_t cap)
{
    const char *nl, *p, *end;
    char word[256];
    int r;

    *name = NULL;
    if (n < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, cap, "Missing library metadata");
        return -1;
    }
    nl = memchr(code, '\n', n);
    if (!nl) {
        snprintf(err, cap, "Invalid library metadata");
        return -1;
    }
    end = nl;
    *skip = (size_t)(end - code);
    p = code;
    r = next_arg(&p, end, word, sizeof(word));
    if (r <= 0) {
        snprintf(err, cap, "Invalid library metadata");
        return -1;
    }
    if (strcasecmp(word + 2, "lua")) { /* engine names ignore case, as Redis */
        snprintf(err, cap, "Engine '%s' not found", word + 2);
        return -1;
    }
    while ((r = next_arg(&p, end, word, sizeof(word))) != 0) {
        if (r < 0) {
            snprintf(err, cap, "Invalid library metadata");
            goto fail;
        }
        if (!strncasecmp(word, "name=", 5)) {
            if (*name) {
                snprintf(err, cap, "Invalid metadata value, name argument was given multiple times");
                goto fail;
            }
            *name = strdup(word + 5);
            if (!*name) {
                snprintf(err, cap, "out of memory");
                return -1;
            }
            continue;
        }
        snprintf(err, cap, "Invalid metadata value given: %s", word);
        goto fail;
    }
    if (!*name) {
        snprintf(err, cap, "Library name was not given");
        return -1;
    }
    if (!func_name_ok(*name, strlen(*name))) {
        snprintf(err, cap, "Library names can only contain letters, numbers, or underscores(_)"
                           " and must be at least one character long");
        goto fail;
    }
    return 0;
fail:
    free(*name);
    *name = NULL;
    return -1;
}

int func_payload_split(const char *payload, size_t n,
                       int (*each)(void *arg, const char *code, size_t n), void *arg, char *err,
                       size_t cap)
{
    const unsigned char *p = (const unsigned char *)payload;
    struct rd r;
    uint64_t crc = 0;

    if (n < 10) {
        snprintf(err, cap, "DUMP payload version or checksum are wrong");
        return -1;
    }
    for (int i = 0; i < 8; i++)
        crc |= (uint64_t)p[n - 8 + i] << (8 * i);
    if ((p[n - 10] | (p[n - 9] << 8)) > RDB_VERSION || (crc != 0 && crc64(0, p, n - 8) != crc)) {
        snprintf(err, cap, "DUMP payload version or checksum are wrong");
        return -1;
    }
    r.p = p;
    r.end = p + n - 10;
    r.why = NULL;
    while (r.p < r.end) {
        unsigned op;
        struct rstr s;
        int rc;
        if (rd_byte(&r, &op) || op != RDB_OPCODE_FUNCTION2) {
            snprintf(err, cap, "given type is not a function");
            return -1;
        }
        if (rd_str(&r, &s)) {
            snprintf(err, cap, "DUMP payload version or checksum are wrong");
            return -1;
        }
        rc = each(arg, s.p, s.n);
        rstr_free(&s);
        if (rc)
            return -1;
    }
    return 0;
}
