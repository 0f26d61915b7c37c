/* HTTP/1.x request heads, as the metrics endpoint reads them (src/net/http_srv.c). No I/O, no
 * allocation: the caller keeps the bytes in a buffer of at most HTTP_MAX_HEAD bytes and calls
 * http_parse on it after every read, until it returns something other than HTTP_NEED_MORE.
 * Only what a scraper sends is accepted: a request line, header lines, no body. */
#ifndef TC_HTTP_H
#define TC_HTTP_H

#include <stddef.h>

#define HTTP_MAX_HEAD 8192 /* request line and headers, CRLFs included */
#define HTTP_MAX_HEADERS 64

enum http_status {
    HTTP_OK = 0,            /* a whole head: req is set, *used is its length */
    HTTP_NEED_MORE = 1,     /* no error so far; read more (while under HTTP_MAX_HEAD) */
    HTTP_ERR_SYNTAX = -1,   /* malformed request line or header (400) */
    HTTP_ERR_TOO_LARGE = -2, /* no end of head within HTTP_MAX_HEAD, or too many headers (431) */
    HTTP_ERR_VERSION = -3,  /* not HTTP/1.x (505) */
    HTTP_ERR_BODY = -4,     /* a body was announced (Content-Length > 0, Transfer-Encoding) */
};

enum http_method { HTTP_GET = 1, HTTP_HEAD, HTTP_OTHER };

struct http_req {
    int method;       /* enum http_method */
    const char *path; /* borrowed from the parsed bytes: the target without its query */
    size_t path_len;
    int minor;        /* HTTP/1.<minor> */
    int keep_alive;   /* 1.1 unless "Connection: close"; 1.0 only with "keep-alive" */
};

/* Parse the head at p[0..n). On HTTP_OK, req points into p and *used is the head's length
 * (the next request, pipelined, starts there). An error is final: the caller answers it and
 * closes. A request line that is complete and wrong is refused at once, without waiting for
 * the rest of the head. Never reads past p + n; never allocates. */
int http_parse(const char *p, size_t n, struct http_req *req, size_t *used);

/* The status code and reason phrase a parse error is answered with. */
int http_error_code(int status, const char **reason);

#endif
