/* Fuzz target: compose, then parse back.
 * 1. The input, read as length-prefixed arguments ([len][bytes]...), is composed as a
 *    multibulk request and as an inline request (each argument bare, in double quotes with
 *    \xHH escapes, or in single quotes, as the input's first byte selects); resp_parse must
 *    return exactly those arguments and consume exactly the composed bytes.
 * 2. The input, read as operations ([op][payload]...), drives every reply composer; a small
 *    reply reader then checks that the output is well-framed RESP holding what was asked for
 *    (errors with CR/LF turned into spaces, doubles that read back to the same value). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "proto/resp.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_resp_roundtrip: check failed: %s (line %d)\n", #c, __LINE__);   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAXARGS 64

struct args {
    const uint8_t *p[MAXARGS];
    size_t n[MAXARGS];
    int argc;
};

static void parse_back(char *buf, size_t len, const struct args *a, int whole_line)
{
    struct resp_parser rp;
    size_t used = 0;

    memset(&rp, 0, sizeof(rp));
    resp_parser_reset(&rp);
    rp.max_bulk = 512LL * 1024 * 1024;
    CHECK(resp_parse(&rp, buf, len, &used) == RESP_OK);
    CHECK(used == len || !whole_line);
    CHECK(rp.argc == a->argc);
    for (int i = 0; i < a->argc; i++) {
        CHECK(rp.argv[i].len == a->n[i]);
        CHECK(a->n[i] == 0 || !memcmp(buf + rp.argv[i].off, a->p[i], a->n[i]));
    }
    resp_parser_deinit(&rp);
}

static int bare_ok(const uint8_t *p, size_t n, int first)
{
    if (n == 0 || (first && p[0] == '*'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        switch (p[i]) {
        case ' ': case '\t': case '\r': case '\n': case '\v': case '\f': case '\0':
        case '"': case '\'':
            return 0;
        }
    }
    return 1;
}

static int squote_ok(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\n' || p[i] == '\0' || p[i] == '\\')
            return 0;
    return 1;
}

static void requests(const uint8_t *data, size_t size, int style)
{
    struct args a = {.argc = 0};
    struct buf b = {0};
    size_t i = 0;

    while (i < size && a.argc < MAXARGS) {
        size_t n = data[i++];
        if (n > size - i)
            n = size - i;
        a.p[a.argc] = data + i;
        a.n[a.argc++] = n;
        i += n;
    }

    /* multibulk */
    CHECK(resp_add_array(&b, a.argc) == 0);
    for (int j = 0; j < a.argc; j++)
        CHECK(resp_add_bulk(&b, (const char *)a.p[j], a.n[j]) == 0);
    if (a.argc)
        parse_back(b.data, b.wpos, &a, 1);
    b.wpos = 0;

    /* inline */
    for (int j = 0; j < a.argc; j++) {
        const uint8_t *p = a.p[j];
        size_t n = a.n[j];
        int how = (style >> (j % 4 * 2)) & 3;
        if (j)
            buf_append(&b, (style & 0x80) ? "\t " : " ", (style & 0x80) ? 2 : 1);
        if (how == 1 && bare_ok(p, n, j == 0)) {
            buf_append(&b, p, n);
        } else if (how == 2 && squote_ok(p, n)) {
            buf_append(&b, "'", 1);
            for (size_t k = 0; k < n; k++)
                buf_append(&b, p[k] == '\'' ? "\\'" : (const char *)p + k, p[k] == '\'' ? 2 : 1);
            buf_append(&b, "'", 1);
        } else {
            buf_append(&b, "\"", 1);
            for (size_t k = 0; k < n; k++) {
                char esc[8];
                if (p[k] >= 0x20 && p[k] < 0x7f && p[k] != '"' && p[k] != '\\') {
                    buf_append(&b, p + k, 1);
                } else {
                    snprintf(esc, sizeof(esc), "\\x%02x", p[k]);
                    buf_append(&b, esc, 4);
                }
            }
            buf_append(&b, "\"", 1);
        }
    }
    buf_append(&b, (style & 0x40) ? "\n" : "\r\n", (style & 0x40) ? 1 : 2);
    if (b.wpos - 1 <= RESP_INLINE_MAX)
        parse_back(b.data, b.wpos, &a, 1);
    buf_deinit(&b);
}

/* ---- replies ---- */

struct tok {
    char type;       /* first byte of the reply */
    long long num;   /* count, integer, length (-1: null) */
    const char *p;   /* line or bulk payload */
    size_t n;
};

/* Read one reply header (and a bulk's payload) at *pos. */
static struct tok read_tok(const char *b, size_t len, size_t *pos)
{
    struct tok t = {0};
    size_t i = *pos, e;

    CHECK(i < len);
    t.type = b[i++];
    for (e = i; e + 1 < len && !(b[e] == '\r' && b[e + 1] == '\n'); e++)
        CHECK(b[e] != '\n' && b[e] != '\r');
    CHECK(e + 1 < len);
    t.p = b + i;
    t.n = e - i;
    *pos = e + 2;
    if (strchr("$*%~>:=", t.type)) {
        char num[32];
        char *end;
        CHECK(t.n > 0 && t.n < sizeof(num));
        memcpy(num, t.p, t.n);
        num[t.n] = '\0';
        t.num = strtoll(num, &end, 10);
        CHECK(*end == '\0');
    }
    if ((t.type == '$' || t.type == '=') && t.num >= 0) {
        CHECK((size_t)t.num + 2 <= len - *pos);
        t.p = b + *pos;
        t.n = (size_t)t.num;
        CHECK(b[*pos + t.n] == '\r' && b[*pos + t.n + 1] == '\n');
        *pos += t.n + 2;
    }
    return t;
}

static void expect_text(struct tok t, char type, const void *p, size_t n)
{
    CHECK(t.type == type);
    CHECK(t.n == n && (n == 0 || !memcmp(t.p, p, n)));
}

static void expect_num(struct tok t, char type, long long v)
{
    CHECK(t.type == type && t.num == v);
}

static void check_double(struct tok t, double d, int proto)
{
    char tmp[64];
    CHECK(t.type == (proto == 3 ? ',' : '$'));
    CHECK(t.n < sizeof(tmp));
    memcpy(tmp, t.p, t.n);
    tmp[t.n] = '\0';
    if (isnan(d)) {
        CHECK(strstr(tmp, "nan") != NULL);
    } else {
        char *end;
        double back = strtod(tmp, &end);
        CHECK(*end == '\0' && (back == d || (isnan(back) && isnan(d))));
        CHECK(signbit(back) == signbit(d));
    }
}

/* Status lines carry no CR, LF or NUL (callers pass fixed texts): replace them. */
static char status_byte(uint8_t c)
{
    return c == '\r' || c == '\n' || c == 0 ? '.' : (char)c;
}

static void replies(const uint8_t *data, size_t size)
{
    struct buf b = {0};
    size_t i = 0, pos = 0;
    /* what each op expects is re-derived from the same input while reading */
    const uint8_t *ops = data;

    while (i < size) {
        uint8_t op = data[i++];
        size_t n = i < size ? data[i++] : 0;
        int proto = op & 0x80 ? 3 : 2;
        long long v = 0;
        char s[300];
        if (n > size - i)
            n = size - i;
        memcpy(&v, data + i, n < 8 ? n : 8);
        switch (op % 16) {
        case 0: /* status: callers pass text without CR/LF */
            for (size_t k = 0; k < n; k++)
                s[k] = status_byte(data[i + k]);
            s[n] = '\0';
            CHECK(resp_add_status(&b, s) == 0);
            break;
        case 1: /* error: any text (a C string) */
            memcpy(s, data + i, n);
            s[n] = '\0';
            CHECK(resp_add_error(&b, s) == 0);
            break;
        case 2:
            memcpy(s, data + i, n);
            s[n] = '\0';
            CHECK(resp_add_errorf(&b, "ERR %s!", s) == 0);
            break;
        case 3: CHECK(resp_add_int(&b, v) == 0); break;
        case 4: CHECK(resp_add_bulk(&b, (const char *)data + i, n) == 0); break;
        case 5:
            CHECK(resp_add_bulk_hdr(&b, n) == 0);
            CHECK(resp_add_raw(&b, (const char *)data + i, n) == 0);
            CHECK(resp_add_raw(&b, "\r\n", 2) == 0);
            break;
        case 6: CHECK(resp_add_bulk_ll(&b, v) == 0); break;
        case 7: CHECK(resp_add_null(&b, proto) == 0); break;
        case 8: CHECK(resp_add_null_array(&b, proto) == 0); break;
        case 9: CHECK(resp_add_array(&b, (long long)n) == 0); break;
        case 10: CHECK(resp_add_map(&b, (long long)n, proto) == 0); break;
        case 11: CHECK(resp_add_set(&b, (long long)n, proto) == 0); break;
        case 12: CHECK(resp_add_push(&b, (long long)n, proto) == 0); break;
        case 13: {
            double d;
            memcpy(&d, &v, 8);
            CHECK(resp_add_double(&b, d, proto) == 0);
            break;
        }
        case 14: CHECK(resp_add_bool(&b, (int)(v & 1), proto) == 0); break;
        case 15: CHECK(resp_add_verbatim(&b, (const char *)data + i, n, proto) == 0); break;
        }
        i += n;
    }

    /* read back */
    i = 0;
    while (i < size) {
        uint8_t op = ops[i++];
        size_t n = i < size ? ops[i++] : 0;
        int proto = op & 0x80 ? 3 : 2;
        long long v = 0;
        char s[1100];
        struct tok t;
        if (n > size - i)
            n = size - i;
        memcpy(&v, data + i, n < 8 ? n : 8);
        t = read_tok(b.data, b.wpos, &pos);
        switch (op % 16) {
        case 0:
            CHECK(t.type == '+' && t.n == n);
            for (size_t k = 0; k < n; k++)
                CHECK(t.p[k] == status_byte(data[i + k]));
            break;
        case 1:
        case 2: {
            size_t m;
            if (op % 16 == 1) {
                memcpy(s, data + i, n);
                s[n] = '\0';
            } else {
                s[0] = '\0';
                strcat(s, "ERR ");
                memcpy(s + 4, data + i, n);
                s[4 + n] = '\0';
                strcat(s, "!");
            }
            m = strlen(s);
            if (memchr(s, '\r', m) || memchr(s, '\n', m)) {
                if (m > 511)
                    m = 511;
                for (size_t k = 0; k < m; k++)
                    if (s[k] == '\r' || s[k] == '\n')
                        s[k] = ' ';
            }
            expect_text(t, '-', s, m);
            break;
        }
        case 3: expect_num(t, ':', v); break;
        case 4:
        case 5: expect_text(t, '$', data + i, n); break;
        case 6: {
            char num[32];
            CHECK(t.type == '$' && t.n < sizeof(num));
            memcpy(num, t.p, t.n);
            num[t.n] = '\0';
            CHECK(strtoll(num, NULL, 10) == v);
            break;
        }
        case 7:
            if (proto == 3)
                CHECK(t.type == '_' && t.n == 0);
            else
                expect_num(t, '$', -1);
            break;
        case 8:
            if (proto == 3)
                CHECK(t.type == '_' && t.n == 0);
            else
                expect_num(t, '*', -1);
            break;
        case 9: expect_num(t, '*', (long long)n); break;
        case 10: expect_num(t, proto == 3 ? '%' : '*', (long long)n * (proto == 3 ? 1 : 2)); break;
        case 11: expect_num(t, proto == 3 ? '~' : '*', (long long)n); break;
        case 12: expect_num(t, proto == 3 ? '>' : '*', (long long)n); break;
        case 13: {
            double d;
            memcpy(&d, &v, 8);
            check_double(t, d, proto);
            break;
        }
        case 14:
            if (proto == 3)
                expect_text(t, '#', (v & 1) ? "t" : "f", 1);
            else
                expect_num(t, ':', v & 1);
            break;
        case 15:
            if (proto == 3) {
                CHECK(t.type == '=' && t.n == n + 4 && !memcmp(t.p, "txt:", 4));
                CHECK(n == 0 || !memcmp(t.p + 4, data + i, n));
            } else {
                expect_text(t, '$', data + i, n);
            }
            break;
        }
        i += n;
    }
    CHECK(pos == b.wpos);
    buf_deinit(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    requests(data + 1, size - 1, data[0]);
    replies(data, size);
    return 0;
}
