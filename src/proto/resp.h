/* RESP2/RESP3 request parsing (multibulk and inline) and reply composition. No I/O, no
 * storage. The parser is resumable: feed it the same growing buffer until it returns
 * RESP_OK; arguments are offsets into that buffer, valid until the bytes are consumed. */
#ifndef TC_RESP_H
#define TC_RESP_H

#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"

enum resp_status {
    RESP_OK = 0,         /* a full command (argc may be 0 for an empty line / *0) */
    RESP_NEED_MORE = 1,  /* feed more bytes */
    RESP_ERR_MBULK = -1, /* Protocol error: invalid multibulk length */
    RESP_ERR_BULK = -2,  /* Protocol error: invalid bulk length */
    RESP_ERR_DOLLAR = -3, /* Protocol error: expected '$', got 'X' */
    RESP_ERR_BIG_MBULK = -4, /* Protocol error: too big mbulk count string */
    RESP_ERR_BIG_BULK = -5,  /* Protocol error: too big bulk count string */
    RESP_ERR_BIG_INLINE = -6, /* Protocol error: too big inline request */
    RESP_ERR_QUOTES = -7,     /* Protocol error: unbalanced quotes in request */
    RESP_ERR_NOMEM = -8,      /* argument vector could not grow */
    RESP_ERR_UNAUTH_MBULK = -9, /* Protocol error: unauthenticated multibulk length */
    RESP_ERR_UNAUTH_BULK = -10, /* Protocol error: unauthenticated bulk length */
};

#define RESP_INLINE_MAX (64 * 1024)

struct resp_arg {
    size_t off; /* offset of the first byte from the frame start */
    size_t len;
};

struct resp_parser {
    struct resp_arg *argv; /* grown as needed, kept between commands */
    size_t argv_cap;
    long long argc;      /* arguments parsed so far */
    long long mbulk;     /* announced count, -1 before the header */
    long long bulklen;   /* announced length of the next bulk, -1 before its header */
    size_t pos;          /* next byte to parse, from the frame start */
    long long max_bulk;  /* proto-max-bulk-len */
    int unauth;          /* the client must authenticate: tight limits */
    char bad;            /* the byte behind RESP_ERR_DOLLAR */
    int fast;            /* the last RESP_OK frame was a whole "*N\r\n$L\r\n..." frame read in
                          * one pass (parse_fast): every length in canonical digits and every
                          * argument where that encoding puts it */
};

/* Parse one command from p[0..n). On RESP_OK *used is the frame size and argv/argc are set
 * (the parser is then reset for the next frame). Inline arguments are unescaped in place
 * (p is modified). Only grows argv (amortised, bounded by what was received). */
int resp_parse(struct resp_parser *rp, char *p, size_t n, size_t *used);
/* Look ahead in a pipeline: parse the complete multibulk frame at p[0..n) into argv (cap
 * slots) without changing rp (its limits are read; nothing when a frame is half parsed or the
 * client must authenticate). Returns the argument count with *used set, or 0 when resp_parse
 * must handle the frame: incomplete, inline, malformed, unusual lengths or over cap arguments.
 * What it accepts, resp_parse accepts with the same arguments. Never allocates. */
int resp_parse_ahead(const struct resp_parser *rp, const char *p, size_t n,
                     struct resp_arg *argv, size_t cap, size_t *used);
/* Bytes the parser needs in the buffer to finish the current bulk (for preallocating). */
size_t resp_want(const struct resp_parser *rp);
void resp_parser_reset(struct resp_parser *rp);
void resp_parser_deinit(struct resp_parser *rp);
/* The client error text for a negative status (without "-" and CRLF). */
const char *resp_strerror(int status, char bad, char *tmp, size_t cap);

/* Reply composition into b. Each returns 0 or -1 when out of memory. proto is 2 or 3. */
static inline int resp_add_raw(struct buf *b, const char *p, size_t n)
{
    return buf_append(b, p, n);
}
int resp_add_status(struct buf *b, const char *s);
int resp_add_error(struct buf *b, const char *msg); /* msg includes the code, e.g. "ERR x" */
int resp_add_errorf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int resp_add_int(struct buf *b, long long v);
int resp_add_bulk(struct buf *b, const char *p, size_t n);
int resp_add_bulk_hdr(struct buf *b, size_t n);
int resp_add_bulk_ll(struct buf *b, long long v);
int resp_add_null(struct buf *b, int proto);       /* $-1 / _ */
int resp_add_null_array(struct buf *b, int proto); /* *-1 / _ */
int resp_add_array(struct buf *b, long long n);
int resp_add_map(struct buf *b, long long n, int proto);  /* %n / *2n */
int resp_add_set(struct buf *b, long long n, int proto);  /* ~n / *n */
int resp_add_push(struct buf *b, long long n, int proto); /* >n / *n */
int resp_add_double(struct buf *b, double d, int proto);  /* ,d / bulk */
int resp_add_bool(struct buf *b, int v, int proto);       /* #t / :1 */
int resp_add_verbatim(struct buf *b, const char *p, size_t n, int proto); /* =txt: / bulk */

#endif
