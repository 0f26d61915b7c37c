/* RESP: request parsing (multibulk, inline, pipelining, errors, limits), resumability (input fed
 * byte by byte gives the same commands and the same error as whole input), and the reply
 * composers byte for byte in RESP2 and RESP3. */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "proto/resp.h"
#include "tap.h"

#define MAXBULK (512LL * 1024 * 1024)

static void parser_init(struct resp_parser *rp, int unauth)
{
    memset(rp, 0, sizeof(*rp));
    resp_parser_reset(rp);
    rp->max_bulk = MAXBULK;
    rp->unauth = unauth;
}

/* Run a byte stream through the parser as a connection would: the read buffer grows by step
 * bytes at a time (0 = everything at once), frames are consumed from its front. The result is
 * a transcript: one "[arg][arg]\n" line per command, then "NEED_MORE" or "ERR <status>". */
struct transcript {
    char *text;
    size_t len, cap;
    int status;       /* last status: RESP_NEED_MORE or an error */
    size_t consumed;  /* bytes consumed by complete commands */
    size_t argv_cap;  /* parser argv capacity at the end */
    char bad;
};

static void tr_add(struct transcript *t, const char *p, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        t->cap = (t->len + n + 1) * 2;
        t->text = realloc(t->text, t->cap);
    }
    memcpy(t->text + t->len, p, n);
    t->len += n;
    t->text[t->len] = '\0';
}

static struct transcript run(const char *in, size_t n, size_t step, int unauth)
{
    struct transcript t = {0};
    struct resp_parser rp;
    char *buf = malloc(n + 1);
    size_t avail = step ? (step < n ? step : n) : n, start = 0;

    parser_init(&rp, unauth);
    memcpy(buf, in, n);
    tr_add(&t, "", 0);
    for (;;) {
        size_t used = 0;
        int r = resp_parse(&rp, buf + start, avail - start, &used);
        if (r == RESP_OK) {
            char hdr[32];
            snprintf(hdr, sizeof(hdr), "%lld:", rp.argc);
            tr_add(&t, hdr, strlen(hdr));
            for (long long i = 0; i < rp.argc; i++) {
                tr_add(&t, "[", 1);
                tr_add(&t, buf + start + rp.argv[i].off, rp.argv[i].len);
                tr_add(&t, "]", 1);
            }
            tr_add(&t, "\n", 1);
            start += used;
            continue;
        }
        if (r == RESP_NEED_MORE && avail < n) {
            avail = step && avail + step < n ? avail + step : n;
            continue;
        }
        t.status = r;
        t.bad = rp.bad;
        break;
    }
    t.consumed = start;
    t.argv_cap = rp.argv_cap;
    resp_parser_deinit(&rp);
    free(buf);
    return t;
}

/* Parse whole, then byte by byte, then in 7-byte steps; all must agree with want (a transcript
 * of commands) and status. */
static void check(const char *name, const char *in, size_t n, int unauth, const char *want,
                  size_t wantlen, int status)
{
    struct transcript whole = run(in, n, 0, unauth);
    struct transcript bytes = run(in, n, 1, unauth);
    struct transcript sevens = run(in, n, 7, unauth);

    is_mem(whole.text, whole.len, want, wantlen, "%s: commands", name);
    is_int(whole.status, status, "%s: final status", name);
    ok(bytes.len == whole.len && !memcmp(bytes.text, whole.text, whole.len) &&
           bytes.status == whole.status && bytes.consumed == whole.consumed,
       "%s: byte by byte gives the same result", name);
    ok(sevens.len == whole.len && !memcmp(sevens.text, whole.text, whole.len) &&
           sevens.status == whole.status && sevens.consumed == whole.consumed,
       "%s: 7-byte reads give the same result", name);
    free(whole.text);
    free(bytes.text);
    free(sevens.text);
}

#define CHECK(name, lit, want, status)                                                             \
    check(name, lit, sizeof(lit) - 1, 0, want, sizeof(want) - 1, status)
#define CHECK_UNAUTH(name, lit, want, status)                                                      \
    check(name, lit, sizeof(lit) - 1, 1, want, sizeof(want) - 1, status)

static void test_multibulk(void)
{
    CHECK("set", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n", "3:[SET][k][hello]\n",
          RESP_NEED_MORE);
    CHECK("binary bulk", "*2\r\n$3\r\nGET\r\n$6\r\na\r\n\0b\"\r\n", "2:[GET][a\r\n\0b\"]\n",
          RESP_NEED_MORE);
    CHECK("empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", "2:[ECHO][]\n", RESP_NEED_MORE);
    CHECK("*0", "*0\r\n", "0:\n", RESP_NEED_MORE);
    CHECK("*-1", "*-1\r\n", "0:\n", RESP_NEED_MORE);
    CHECK("*-5 then a command", "*-5\r\n*1\r\n$4\r\nPING\r\n", "0:\n1:[PING]\n", RESP_NEED_MORE);
    CHECK("incomplete bulk", "*2\r\n$3\r\nGET\r\n$5\r\nhel", "", RESP_NEED_MORE);
    CHECK("incomplete header", "*2\r", "", RESP_NEED_MORE);
    CHECK("bulk data not followed by CRLF (not checked, as Redis)", "*1\r\n$4\r\nPINGxx",
          "1:[PING]\n", RESP_NEED_MORE);
    CHECK("leading zeros in a count are invalid", "*01\r\n", "", RESP_ERR_MBULK);
    CHECK("a '+' count is invalid", "*+1\r\n", "", RESP_ERR_MBULK);
    CHECK("INT_MAX count is accepted", "*2147483647\r\n$1\r\na\r\n", "", RESP_NEED_MORE);
    CHECK("huge bulk length below the limit waits", "*1\r\n$536870912\r\nabc", "",
          RESP_NEED_MORE);
}

static void test_pipeline(void)
{
    CHECK("pipelined",
          "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n",
          "1:[PING]\n2:[ECHO][hi]\n1:[PING]\n1:[QUIT]\n", RESP_NEED_MORE);
    CHECK("inline then multibulk then partial",
          "SET a b\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\nGET a\n*1\r\n$3\r\nDB",
          "3:[SET][a][b]\n2:[GET][a]\n2:[GET][a]\n",
          RESP_NEED_MORE);
    CHECK("command after an empty line", "\r\n\r\nPING\r\n", "0:\n0:\n1:[PING]\n",
          RESP_NEED_MORE);
    CHECK("error after good commands", "PING\r\n*1\r\n$4\r\nPING\r\n*x\r\n", "1:[PING]\n1:[PING]\n",
          RESP_ERR_MBULK);

    /* a long pipeline of mixed frames */
    struct buf b = {0};
    char want[200000];
    size_t wl = 0;
    for (int i = 0; i < 2000; i++) {
        char k[32];
        int kl = snprintf(k, sizeof(k), "key:%d", i);
        if (i % 3 == 0) {
            resp_add_array(&b, 2);
            resp_add_bulk(&b, "GET", 3);
            resp_add_bulk(&b, k, (size_t)kl);
        } else {
            buf_append(&b, "GET ", 4);
            buf_append(&b, k, (size_t)kl);
            buf_append(&b, i % 3 == 1 ? "\r\n" : "\n", i % 3 == 1 ? 2 : 1);
        }
        wl += (size_t)sprintf(want + wl, "2:[GET][%s]\n", k);
    }
    check("2000 pipelined commands", b.data, b.wpos, 0, want, wl, RESP_NEED_MORE);
    buf_deinit(&b);
}

static void test_inline(void)
{
    CHECK("inline", "PING\r\n", "1:[PING]\n", RESP_NEED_MORE);
    CHECK("inline LF only", "PING\n", "1:[PING]\n", RESP_NEED_MORE);
    CHECK("inline spaces and tabs", "  set \t a   b \r\n", "3:[set][a][b]\n", RESP_NEED_MORE);
    CHECK("empty line", "\r\n", "0:\n", RESP_NEED_MORE);
    CHECK("blank line", "   \t \n", "0:\n", RESP_NEED_MORE);
    CHECK("no newline yet", "PING", "", RESP_NEED_MORE);
    CHECK("quotes", "set \"a b\" 'c d'\r\n", "3:[set][a b][c d]\n", RESP_NEED_MORE);
    CHECK("escapes in double quotes", "echo \"\\x41\\x7a\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n",
          "2:[echo][Az\n\r\t\b\a\\\"q]\n", RESP_NEED_MORE);
    CHECK("hex escape needs two hex digits", "echo \"\\x4g\"\n", "2:[echo][x4g]\n",
          RESP_NEED_MORE);
    CHECK("escaped quote in single quotes", "echo 'it\\'s'\n", "2:[echo][it's]\n",
          RESP_NEED_MORE);
    CHECK("other escapes are literal in single quotes", "echo 'a\\nb'\n", "2:[echo][a\\nb]\n",
          RESP_NEED_MORE);
    CHECK("empty quoted args", "set \"\" ''\n", "3:[set][][]\n", RESP_NEED_MORE);
    CHECK("quote inside a word", "a\"b c\" d\n", "2:[ab c][d]\n", RESP_NEED_MORE);
    CHECK("closing quote then a letter", "set \"a\"b\n", "", RESP_ERR_QUOTES);
    CHECK("closing single quote then a letter", "set 'a'b\n", "", RESP_ERR_QUOTES);
    CHECK("unterminated double quote", "set \"abc\r\n", "", RESP_ERR_QUOTES);
    CHECK("unterminated single quote", "set 'abc\n", "", RESP_ERR_QUOTES);
    CHECK("backslash at the end of a quote", "set \"abc\\\"\n", "", RESP_ERR_QUOTES);
    CHECK("closing quote then \\v or \\f (isspace, as sdssplitargs)", "a \"b\"\vc '\"'\fd\n",
          "5:[a][b][c][\"][d]\n", RESP_NEED_MORE);
    CHECK("a NUL ends the line", "GET a\0b c\r\nPING\r\n", "2:[GET][a]\n1:[PING]\n",
          RESP_NEED_MORE);
    CHECK("inline that starts with '$'", "$3\r\n", "1:[$3]\n", RESP_NEED_MORE);
    CHECK("CR inside a line separates", "a\rb\r\n", "2:[a][b]\n", RESP_NEED_MORE);

    /* many words grow argv */
    char line[8000];
    size_t n = 0;
    for (int i = 0; i < 1000; i++)
        n += (size_t)sprintf(line + n, "w%d ", i);
    line[n++] = '\n';
    struct transcript t = run(line, n, 0, 0);
    ok(!strncmp(t.text, "1000:[w0][w1]", 13) && t.argv_cap >= 1000, "1000 inline words");
    free(t.text);
}

static void test_errors(void)
{
    char tmp[128];
    struct resp_parser rp;
    size_t used;

    CHECK("non-numeric count", "*abc\r\n", "", RESP_ERR_MBULK);
    CHECK("empty count", "*\r\n", "", RESP_ERR_MBULK);
    CHECK("count above INT_MAX", "*2147483648\r\n", "", RESP_ERR_MBULK);
    CHECK("count of 2^40", "*1099511627776\r\n", "", RESP_ERR_MBULK);
    CHECK("count overflowing int64", "*99999999999999999999\r\n", "", RESP_ERR_MBULK);
    CHECK("expected '$'", "*1\r\nfoo\r\n", "", RESP_ERR_DOLLAR);
    CHECK("expected '$' on a later arg", "*2\r\n$1\r\na\r\n:1\r\n", "", RESP_ERR_DOLLAR);
    CHECK("negative bulk", "*1\r\n$-1\r\n", "", RESP_ERR_BULK);
    CHECK("non-numeric bulk", "*1\r\n$x\r\n", "", RESP_ERR_BULK);
    CHECK("empty bulk length", "*1\r\n$\r\n", "", RESP_ERR_BULK);
    CHECK("bulk above proto-max-bulk-len", "*1\r\n$536870913\r\n", "", RESP_ERR_BULK);
    CHECK("bulk of 2^63", "*1\r\n$9223372036854775808\r\n", "", RESP_ERR_BULK);
    CHECK("bulk of 2 GB", "*1\r\n$2147483648\r\n", "", RESP_ERR_BULK);

    /* the '$' error carries the offending byte */
    struct transcript t = run("*1\r\n:1\r\n", 8, 1, 0);
    ok(t.status == RESP_ERR_DOLLAR && t.bad == ':', "bad byte recorded");
    is_str(resp_strerror(RESP_ERR_DOLLAR, t.bad, tmp, sizeof(tmp)),
           "ERR Protocol error: expected '$', got ':'", "expected '$' text");
    free(t.text);

    /* over-long count strings: no CR within 64 KiB */
    size_t big = RESP_INLINE_MAX + 10;
    char *p = malloc(big + 16);
    p[0] = '\0';
    p[0] = '*';
    memset(p + 1, '1', big);
    check("mbulk count string too big", p, big + 1, 0, "", 0, RESP_ERR_BIG_MBULK);
    memcpy(p, "*1\r\n$", 5);
    check("bulk count string too big", p, big + 1, 0, "", 0, RESP_ERR_BIG_BULK);
    memset(p, 'a', big);
    check("inline too big", p, big, 0, "", 0, RESP_ERR_BIG_INLINE);
    memset(p, 'a', RESP_INLINE_MAX);
    check("inline of exactly 64 KiB without newline waits", p, RESP_INLINE_MAX, 0, "", 0,
          RESP_NEED_MORE);
    p[RESP_INLINE_MAX] = '\n';
    char *w64 = malloc(RESP_INLINE_MAX + 8);
    memcpy(w64, "1:[", 3);
    memset(w64 + 3, 'a', RESP_INLINE_MAX);
    memcpy(w64 + 3 + RESP_INLINE_MAX, "]\n", 2);
    check("an inline line of 64 KiB is accepted", p, RESP_INLINE_MAX + 1, 0, w64,
          RESP_INLINE_MAX + 5, RESP_NEED_MORE);
    free(w64);
    memset(p, 'a', big);
    p[big] = '\n';
    {
        /* Redis applies the 64 KiB limit only while the newline is missing, so a longer line
         * that arrives whole is accepted (Redis 7.0 answers a 70 kB inline ECHO); split into
         * small reads it is refused before the newline arrives. */
        struct transcript whole = run(p, big + 1, 0, 0);
        struct transcript bytes = run(p, big + 1, 1, 0);
        ok(whole.status == RESP_NEED_MORE && whole.len > 0,
           "inline longer than 64 KiB with its newline present is accepted whole");
        ok(bytes.status == RESP_ERR_BIG_INLINE, "the same line fed byte by byte is refused");
        free(whole.text);
        free(bytes.text);
    }
    p[0] = '*';
    memset(p + 1, '1', big);
    memcpy(p + big, "\r\n", 2);
    check("mbulk count string too big with its CR present", p, big + 2, 0, "", 0,
          RESP_ERR_BIG_MBULK);
    for (size_t d = RESP_INLINE_MAX - 2; d <= RESP_INLINE_MAX + 1; d++) {
        p[0] = '*';
        memset(p + 1, '1', d);
        memcpy(p + 1 + d, "\r\n", 2);
        struct transcript w = run(p, d + 3, 0, 0), s1 = run(p, d + 3, 1, 0);
        ok(w.status == s1.status && (w.status == RESP_ERR_MBULK || w.status == RESP_ERR_BIG_MBULK),
           "count string of %zu digits: same error whole and byte by byte (%d %d)", d, w.status,
           s1.status);
        free(w.text);
        free(s1.text);
    }
    free(p);

    /* unauthenticated clients: at most 10 args of at most 16 KiB */
    CHECK_UNAUTH("unauth 10 args", "*10\r\n", "", RESP_NEED_MORE);
    CHECK_UNAUTH("unauth 11 args", "*11\r\n", "", RESP_ERR_UNAUTH_MBULK);
    CHECK_UNAUTH("unauth 16384-byte bulk", "*1\r\n$16384\r\n", "", RESP_NEED_MORE);
    CHECK_UNAUTH("unauth 16385-byte bulk", "*1\r\n$16385\r\n", "", RESP_ERR_UNAUTH_BULK);
    CHECK_UNAUTH("unauth AUTH passes", "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n", "2:[AUTH][pw]\n",
                 RESP_NEED_MORE);
    CHECK("authenticated 11 args", "*11\r\n", "", RESP_NEED_MORE);

    /* every error status has its Redis text */
    static const struct {
        int st;
        const char *text;
    } texts[] = {
        {RESP_ERR_MBULK, "ERR Protocol error: invalid multibulk length"},
        {RESP_ERR_BULK, "ERR Protocol error: invalid bulk length"},
        {RESP_ERR_BIG_MBULK, "ERR Protocol error: too big mbulk count string"},
        {RESP_ERR_BIG_BULK, "ERR Protocol error: too big bulk count string"},
        {RESP_ERR_BIG_INLINE, "ERR Protocol error: too big inline request"},
        {RESP_ERR_QUOTES, "ERR Protocol error: unbalanced quotes in request"},
        {RESP_ERR_UNAUTH_MBULK, "ERR Protocol error: unauthenticated multibulk length"},
        {RESP_ERR_UNAUTH_BULK, "ERR Protocol error: unauthenticated bulk length"},
        {RESP_ERR_NOMEM, "ERR Protocol error: out of memory"},
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        is_str(resp_strerror(texts[i].st, 0, tmp, sizeof(tmp)), texts[i].text, "strerror %d",
               texts[i].st);

    /* a huge announced count allocates nothing up front */
    char hdr[] = "*2147483647\r\n$1\r\na\r\n$1\r\nb\r\n";
    parser_init(&rp, 0);
    ok(resp_parse(&rp, hdr, sizeof(hdr) - 1, &used) == RESP_NEED_MORE && rp.argc == 2 &&
           rp.argv_cap < 64,
       "argv grows with what arrived, not with the announced count");
    resp_parser_deinit(&rp);
}

static void test_state(void)
{
    struct resp_parser rp;
    char in[] = "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\nPING\r\n";
    size_t used = 0;

    parser_init(&rp, 0);
    is_int(resp_want(&rp), 0, "want is 0 before a bulk header");
    is_int(resp_parse(&rp, in, 20, &used), RESP_NEED_MORE, "partial frame");
    is_int(rp.bulklen, 10, "bulk length remembered");
    is_int(resp_want(&rp), 18 + 10 + 2, "want: the bytes needed to finish the bulk");
    is_int(resp_parse(&rp, in, 30, &used), RESP_OK, "complete frame");
    is_int(used, 30, "used is the frame size");
    ok(rp.mbulk == -1 && rp.bulklen == -1 && rp.pos == 0, "parser reset after OK");
    is_int(resp_parse(&rp, in + 30, sizeof(in) - 1 - 30, &used), RESP_OK, "next frame (inline)");
    ok(rp.argc == 1 && used == 6, "inline frame size");
    is_int(resp_parse(&rp, in, 0, &used), RESP_NEED_MORE, "empty input");

    /* reset in the middle of a frame starts over */
    is_int(resp_parse(&rp, in, 10, &used), RESP_NEED_MORE, "partial again");
    resp_parser_reset(&rp);
    ok(rp.argc == 0 && rp.mbulk == -1 && rp.pos == 0, "reset clears the frame state");
    is_int(resp_parse(&rp, in, 30, &used), RESP_OK, "parses from the start after reset");
    resp_parser_deinit(&rp);
    resp_parser_deinit(&rp);
    ok(rp.argv == NULL && rp.argv_cap == 0, "deinit twice is harmless");
}

/* Pseudo-random streams of valid frames cut at every boundary. */
static void test_random_pipelines(void)
{
    unsigned seed = 7;
    int bad = 0;

    for (int iter = 0; iter < 300; iter++) {
        struct buf b = {0};
        int ncmd = 1 + rand_r(&seed) % 8;
        for (int c = 0; c < ncmd; c++) {
            int argc = 1 + rand_r(&seed) % 4;
            if (rand_r(&seed) % 2) {
                resp_add_array(&b, argc);
                for (int a = 0; a < argc; a++) {
                    char v[40];
                    int vl = rand_r(&seed) % 40;
                    for (int i = 0; i < vl; i++)
                        v[i] = (char)(rand_r(&seed) % 256);
                    resp_add_bulk(&b, v, (size_t)vl);
                }
            } else {
                for (int a = 0; a < argc; a++) {
                    char v[16];
                    int vl = 1 + rand_r(&seed) % 15;
                    for (int i = 0; i < vl; i++)
                        v[i] = "abcxyz\"'\\ "[rand_r(&seed) % 10];
                    buf_append(&b, v, (size_t)vl);
                    buf_append(&b, " ", 1);
                }
                buf_append(&b, "\r\n", 2);
            }
        }
        struct transcript whole = run(b.data, b.wpos, 0, 0);
        for (size_t step = 1; step < 12; step += 5) {
            struct transcript part = run(b.data, b.wpos, step, 0);
            if (part.len != whole.len || memcmp(part.text, whole.text, whole.len) ||
                part.status != whole.status || part.consumed != whole.consumed)
                bad++;
            free(part.text);
        }
        free(whole.text);
        buf_deinit(&b);
    }
    is_int(bad, 0, "random pipelines parse the same in any chunking");
}

/* ---- composers ---- */

#define EXPECT(b, lit, ...)                                                                        \
    do {                                                                                           \
        is_mem((b)->data, (b)->wpos, lit, sizeof(lit) - 1, __VA_ARGS__);                          \
        (b)->wpos = 0;                                                                             \
    } while (0)

static void test_compose(void)
{
    struct buf b = {0};

    resp_add_status(&b, "OK");
    EXPECT(&b, "+OK\r\n", "status");
    resp_add_error(&b, "ERR wrong number of arguments for 'get' command");
    EXPECT(&b, "-ERR wrong number of arguments for 'get' command\r\n", "error");
    resp_add_error(&b, "ERR a\r\nb\nc");
    EXPECT(&b, "-ERR a  b c\r\n", "newlines in an error become spaces");
    resp_add_errorf(&b, "ERR %s %d", "value is", 7);
    EXPECT(&b, "-ERR value is 7\r\n", "errorf");
    resp_add_int(&b, 0);
    EXPECT(&b, ":0\r\n", "int 0");
    resp_add_int(&b, -42);
    EXPECT(&b, ":-42\r\n", "int -42");
    resp_add_int(&b, LLONG_MIN);
    EXPECT(&b, ":-9223372036854775808\r\n", "int LLONG_MIN");
    resp_add_int(&b, LLONG_MAX);
    EXPECT(&b, ":9223372036854775807\r\n", "int LLONG_MAX");
    resp_add_bulk(&b, "hello", 5);
    EXPECT(&b, "$5\r\nhello\r\n", "bulk");
    resp_add_bulk(&b, "", 0);
    EXPECT(&b, "$0\r\n\r\n", "empty bulk");
    resp_add_bulk(&b, "a\0\r\n", 4);
    EXPECT(&b, "$4\r\na\0\r\n\r\n", "binary bulk");
    resp_add_bulk_hdr(&b, 12345);
    EXPECT(&b, "$12345\r\n", "bulk header");
    resp_add_bulk_ll(&b, -42);
    EXPECT(&b, "$3\r\n-42\r\n", "bulk of an integer");
    resp_add_bulk_ll(&b, LLONG_MIN);
    EXPECT(&b, "$20\r\n-9223372036854775808\r\n", "bulk of LLONG_MIN");
    resp_add_raw(&b, "raw", 3);
    EXPECT(&b, "raw", "raw");

    resp_add_null(&b, 2);
    EXPECT(&b, "$-1\r\n", "RESP2 null");
    resp_add_null(&b, 3);
    EXPECT(&b, "_\r\n", "RESP3 null");
    resp_add_null_array(&b, 2);
    EXPECT(&b, "*-1\r\n", "RESP2 null array");
    resp_add_null_array(&b, 3);
    EXPECT(&b, "_\r\n", "RESP3 null array");
    resp_add_array(&b, 3);
    EXPECT(&b, "*3\r\n", "array");
    resp_add_array(&b, 0);
    EXPECT(&b, "*0\r\n", "empty array");
    resp_add_map(&b, 2, 2);
    EXPECT(&b, "*4\r\n", "RESP2 map is a flat array");
    resp_add_map(&b, 2, 3);
    EXPECT(&b, "%2\r\n", "RESP3 map");
    resp_add_set(&b, 3, 2);
    EXPECT(&b, "*3\r\n", "RESP2 set");
    resp_add_set(&b, 3, 3);
    EXPECT(&b, "~3\r\n", "RESP3 set");
    resp_add_push(&b, 3, 2);
    EXPECT(&b, "*3\r\n", "RESP2 push");
    resp_add_push(&b, 3, 3);
    EXPECT(&b, ">3\r\n", "RESP3 push");
    resp_add_double(&b, 1.5, 2);
    EXPECT(&b, "$3\r\n1.5\r\n", "RESP2 double is a bulk");
    resp_add_double(&b, 1.5, 3);
    EXPECT(&b, ",1.5\r\n", "RESP3 double");
    resp_add_double(&b, 0.1, 3);
    EXPECT(&b, ",0.10000000000000001\r\n", "RESP3 double with 17 digits (Redis 7.0)");
    resp_add_double(&b, INFINITY, 3);
    EXPECT(&b, ",inf\r\n", "RESP3 inf");
    resp_add_double(&b, -INFINITY, 2);
    EXPECT(&b, "$4\r\n-inf\r\n", "RESP2 -inf");
    resp_add_double(&b, 3, 3);
    EXPECT(&b, ",3\r\n", "RESP3 integral double");
    resp_add_bool(&b, 1, 2);
    EXPECT(&b, ":1\r\n", "RESP2 true");
    resp_add_bool(&b, 0, 2);
    EXPECT(&b, ":0\r\n", "RESP2 false");
    resp_add_bool(&b, 1, 3);
    EXPECT(&b, "#t\r\n", "RESP3 true");
    resp_add_bool(&b, 0, 3);
    EXPECT(&b, "#f\r\n", "RESP3 false");
    resp_add_verbatim(&b, "hi", 2, 2);
    EXPECT(&b, "$2\r\nhi\r\n", "RESP2 verbatim is a bulk");
    resp_add_verbatim(&b, "hi", 2, 3);
    EXPECT(&b, "=6\r\ntxt:hi\r\n", "RESP3 verbatim");

    /* appends accumulate, large bulks cross reallocations */
    size_t n = 100000;
    char *big = malloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)i;
    resp_add_array(&b, 2);
    resp_add_bulk(&b, big, n);
    resp_add_int(&b, 1);
    ok(b.wpos == 4 + 9 + n + 2 + 4 && !memcmp(b.data, "*2\r\n$100000\r\n", 13) &&
           !memcmp(b.data + 13, big, n) && !memcmp(b.data + 13 + n, "\r\n:1\r\n", 6),
       "large bulk in a sequence");
    b.wpos = 0;

    /* composed requests parse back to the same arguments */
    resp_add_array(&b, 3);
    resp_add_bulk(&b, "SET", 3);
    resp_add_bulk(&b, big, 1000);
    resp_add_bulk(&b, "", 0);
    struct resp_parser rp;
    size_t used;
    parser_init(&rp, 0);
    ok(resp_parse(&rp, b.data, b.wpos, &used) == RESP_OK && used == b.wpos && rp.argc == 3 &&
           rp.argv[1].len == 1000 && !memcmp(b.data + rp.argv[1].off, big, 1000) &&
           rp.argv[2].len == 0,
       "compose -> parse round trip");
    resp_parser_deinit(&rp);
    free(big);
    buf_deinit(&b);
}

int main(void)
{
    test_multibulk();
    test_pipeline();
    test_inline();
    test_errors();
    test_state();
    test_random_pipelines();
    test_compose();
    return tap_done();
}
