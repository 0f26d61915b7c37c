/* The metrics endpoint's HTTP request-head parser (src/proto/http.c): methods, targets
 * (origin-form with a query, absolute-form, "*"), versions and keep-alive, header checks,
 * CRLF and bare LF, incremental feeding, pipelined heads, and each error with its status
 * code. Links only tc_proto and tc_core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/http.h"
#include "tap.h"

static int parse(const char *s, struct http_req *r, size_t *used)
{
    *used = 0;
    return http_parse(s, strlen(s), r, used);
}

static int path_is(const struct http_req *r, const char *p)
{
    return r->path_len == strlen(p) && !memcmp(r->path, p, r->path_len);
}

static void test_good(void)
{
    struct http_req r;
    size_t used;
    const char *s = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";

    ok(parse(s, &r, &used) == HTTP_OK, "a scrape parses");
    ok(used == strlen(s), "the whole head is used");
    ok(r.method == HTTP_GET && path_is(&r, "/metrics"), "GET /metrics");
    ok(r.minor == 1 && r.keep_alive == 1, "HTTP/1.1 keeps the connection");

    ok(parse("HEAD /metrics?a=b HTTP/1.1\r\nConnection: Keep-Alive, close\r\n\r\n", &r,
             &used) == HTTP_OK, "HEAD with a query");
    ok(r.method == HTTP_HEAD && path_is(&r, "/metrics"), "the query is not the path");
    ok(r.keep_alive == 0, "Connection: close (in a list, any case)");

    ok(parse("GET / HTTP/1.0\n\n", &r, &used) == HTTP_OK && r.keep_alive == 0,
       "HTTP/1.0 with bare LFs closes");
    ok(parse("GET / HTTP/1.0\r\nconnection: keep-alive\r\n\r\n", &r, &used) == HTTP_OK &&
           r.keep_alive == 1, "HTTP/1.0 with keep-alive keeps it");
    ok(parse("POST /x HTTP/1.1\r\nContent-Length: 000\r\n\r\n", &r, &used) == HTTP_OK &&
           r.method == HTTP_OTHER, "another method, no body");
    ok(parse("GET http://h:9150/metrics HTTP/1.1\r\n\r\n", &r, &used) == HTTP_OK &&
           path_is(&r, "/metrics"), "absolute-form: its path");
    ok(parse("OPTIONS * HTTP/1.1\r\n\r\n", &r, &used) == HTTP_OK && path_is(&r, "*"), "*");
    ok(parse("\r\n\r\nGET / HTTP/1.1\r\nX:\r\n\r\n", &r, &used) == HTTP_OK && path_is(&r, "/"),
       "empty lines before the request line, an empty header value");
}

static void test_incremental_and_pipelined(void)
{
    const char *s = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
    size_t first = strlen("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), used = 0;
    struct http_req r;
    int more = 1;

    for (size_t n = 0; n < first; n++)
        more &= http_parse(s, n, &r, &used) == HTTP_NEED_MORE;
    ok(more, "every prefix of the head asks for more");
    ok(http_parse(s, strlen(s), &r, &used) == HTTP_OK && used == first, "first head");
    ok(http_parse(s + used, strlen(s) - used, &r, &used) == HTTP_OK && path_is(&r, "/b"),
       "then the pipelined one");
}

static void test_errors(void)
{
    static const struct {
        const char *in;
        int st, code;
    } bad[] = {
        {"GARBAGE\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET /metrics\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET  / HTTP/1.1\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/1.1 \r\n", HTTP_ERR_SYNTAX, 400},
        {"GET ?x HTTP/1.1\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET http://h HTTP/1.1\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/2.0\r\n", HTTP_ERR_VERSION, 505},
        {"GET / HTTP/1.1\r\nno colon\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/1.1\r\n folded: x\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/1.1\r\nName : x\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/1.1\r\nX: a\x01" "b\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/1.1\r\nContent-Length: 12\r\n", HTTP_ERR_BODY, 413},
        {"GET / HTTP/1.1\r\nContent-Length: -1\r\n", HTTP_ERR_SYNTAX, 400},
        {"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n", HTTP_ERR_BODY, 413},
    };
    struct http_req r;
    size_t used;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *reason = NULL;
        int st = parse(bad[i].in, &r, &used);
        ok(st == bad[i].st && http_error_code(st, &reason) == bad[i].code && reason,
           "refused at once with %d: case %zu", bad[i].code, i);
    }
    {
        char *big = malloc(HTTP_MAX_HEAD + 100);
        int n = snprintf(big, HTTP_MAX_HEAD + 100, "GET / HTTP/1.1\r\nX: ");
        memset(big + n, 'a', HTTP_MAX_HEAD + 100 - (size_t)n);
        ok(http_parse(big, HTTP_MAX_HEAD - 1, &r, &used) == HTTP_NEED_MORE,
           "under the limit: more");
        ok(http_parse(big, HTTP_MAX_HEAD, &r, &used) == HTTP_ERR_TOO_LARGE,
           "no end of head within HTTP_MAX_HEAD: 431");
        ok(http_parse(big, HTTP_MAX_HEAD + 100, &r, &used) == HTTP_ERR_TOO_LARGE,
           "nothing past the limit is read");
        free(big);
    }
    {
        char many[4096];
        size_t o = (size_t)snprintf(many, sizeof(many), "GET / HTTP/1.1\r\n");
        for (int i = 0; i <= HTTP_MAX_HEADERS; i++)
            o += (size_t)snprintf(many + o, sizeof(many) - o, "H%d: v\r\n", i);
        snprintf(many + o, sizeof(many) - o, "\r\n");
        ok(parse(many, &r, &used) == HTTP_ERR_TOO_LARGE, "more than HTTP_MAX_HEADERS lines");
    }
}

int main(void)
{
    test_good();
    test_incremental_and_pipelined();
    test_errors();
    return tap_done();
}
