/* Fuzz target: the metrics endpoint's HTTP request-head parser (src/proto/http.c), on hostile
 * bytes from a scraper's connection. The input is parsed as a connection's stream, request
 * after request (pipelining), as src/net/http_srv.c consumes it. Properties: no read outside
 * the input (ASan: the bytes sit in an allocation of their own size), a parsed head is within
 * the input and within HTTP_MAX_HEAD, its path lies inside the head, every shorter prefix of
 * it asks for more, and a NEED_MORE only comes under HTTP_MAX_HEAD bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/http.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_http: check failed: %s (line %d)\n", #c, __LINE__);            \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    size_t at = 0;

    if (!copy)
        return 0;
    memcpy(copy, data, size);
    while (at <= size) {
        const char *b = copy + at;
        size_t n = size - at, used = 0;
        struct http_req req;
        int st = http_parse(b, n, &req, &used);
        const char *reason = NULL;

        if (st == HTTP_NEED_MORE) {
            CHECK(n < HTTP_MAX_HEAD);
            break;
        }
        if (st != HTTP_OK) {
            int code = http_error_code(st, &reason);
            CHECK(st == HTTP_ERR_SYNTAX || st == HTTP_ERR_TOO_LARGE || st == HTTP_ERR_VERSION ||
                  st == HTTP_ERR_BODY);
            CHECK(code >= 400 && code < 600 && reason && *reason);
            break;
        }
        CHECK(used > 0 && used <= n && used <= HTTP_MAX_HEAD);
        CHECK(req.method == HTTP_GET || req.method == HTTP_HEAD || req.method == HTTP_OTHER);
        CHECK(req.path >= b && req.path_len > 0 && req.path + req.path_len <= b + used);
        CHECK(req.minor >= 0 && req.minor <= 9 && (req.keep_alive == 0 || req.keep_alive == 1));
        {
            /* a shorter prefix (cut at a point the input picks) asks for more: a head ends at
             * its empty line, and every line before it was accepted whole */
            size_t cut = ((size_t)(unsigned char)b[used - 1] * 131u + used) % used;
            struct http_req pre;
            size_t pu = 0;
            char *p = malloc(cut ? cut : 1);
            if (p) {
                memcpy(p, b, cut);
                CHECK(http_parse(p, cut, &pre, &pu) == HTTP_NEED_MORE);
                free(p);
            }
        }
        at += used;
    }
    free(copy);
    return 0;
}
