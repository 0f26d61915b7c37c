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

/* "#!lua name=<lib>" on the first line: the library name in name (malloc'd) and the length of
 * the line, or -1 with the error (without "ERR ") in err. */
int func_parse_meta(const char *code, size_t n, char **name, size_t *skip, char *err,
                    size_t cap)
{
    const char *nl, *p, *end;

    *name = NULL;
    if (n < 2 || code[0] != '#' || code[1] != '!') {
        snprintf(err, cap, "Missing library metadata");
        return -1;
    }
    nl = memchr(code, '\n', n);
    end = nl ? nl : code + n;
    *skip = (size_t)(end - code);
    p = code + 2;
    for (int part = 0;; part++) {
        const char *w;
        size_t wn;
        while (p < end && (*p == ' ' || *p == '\r'))
            p++;
        if (p >= end)
            break;
        w = p;
        while (p < end && *p != ' ' && *p != '\r')
            p++;
        wn = (size_t)(p - w);
        if (part == 0) {
            if (wn != 3 || strncasecmp(w, "lua", 3)) { /* engine names ignore case, as Redis */
                snprintf(err, cap, "Engine '%.*s' not found", (int)wn, w);
                goto fail;
            }
            continue;
        }
        if (wn >= 5 && !memcmp(w, "name=", 5)) {
            if (*name) {
                snprintf(err, cap, "Invalid metadata value, name argument was given multiple times");
                goto fail;
            }
            *name = strndup(w + 5, wn - 5);
            if (!*name) {
                snprintf(err, cap, "out of memory");
                return -1;
            }
            continue;
        }
        snprintf(err, cap, "Invalid metadata value given: %.*s", (int)wn, w);
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
