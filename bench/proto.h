/* twinbench client-side protocol: request encoders and reply parsers for
 * RESP2, the memcached text protocol and the memcached binary protocol. Pure functions over byte buffers:
 * no I/O, never allocate except through iobuf growth (not per request once
 * the buffer has reached its working size). */
#ifndef TB_PROTO_H
#define TB_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Byte buffer: bytes [off, len) are pending. Owned by its connection. */
struct iobuf {
    char *data;
    size_t off, len, cap;
};

int iobuf_init(struct iobuf *b, size_t cap);
void iobuf_deinit(struct iobuf *b);
/* Make room for n more bytes at data+len (compacts, then grows). */
void iobuf_reserve(struct iobuf *b, size_t n);
static inline void iobuf_put(struct iobuf *b, const void *p, size_t n)
{
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

enum reply_status { REPLY_OK = 0, REPLY_NEED_MORE = 1, REPLY_ERR_PROTO = -1 };

/* What one reply said. */
struct reply_info {
    uint32_t elems;  /* top-level array elements (RESP) or VALUE blocks (memcached) */
    uint32_t nils;   /* top-level nils / nil elements / NOT_FOUND */
    int error;       /* -ERR..., ERROR, CLIENT_ERROR, SERVER_ERROR */
    int is_array;    /* RESP top-level array */
};

/* Parse one complete RESP reply at p[0..n). On REPLY_OK sets *used.
 * Nested aggregates are skipped (LRANGE, XRANGE replies). */
int resp_parse_reply(const char *p, size_t n, size_t *used, struct reply_info *ri);
/* Parse one complete memcached text reply (a line, or VALUE blocks + END). */
int mc_parse_reply(const char *p, size_t n, size_t *used, struct reply_info *ri);

/* Parse one memcached binary response (header and body): elems 1 for a hit (status 0 with a
 * value or an empty success), nils 1 for "key not found", error for any other status. */
int mcbin_parse_reply(const char *p, size_t n, size_t *used, struct reply_info *ri);
/* Binary requests: get (opcode 0x00) and set (0x01, flags 0, exptime). */
void mcbin_put_get(struct iobuf *b, const char *key, uint32_t kl);
void mcbin_put_set(struct iobuf *b, const char *key, uint32_t kl, const char *v, uint32_t vl,
                   uint32_t exptime);

/* Encoders append to b; callers reserve room first (proto_*_room). */
void resp_put_header(struct iobuf *b, uint32_t nargs);   /* "*N\r\n" */
void resp_put_arg_len(struct iobuf *b, size_t len);      /* "$L\r\n" */
static inline void resp_put_crlf(struct iobuf *b) { iobuf_put(b, "\r\n", 2); }
void resp_put_arg(struct iobuf *b, const char *p, size_t len); /* "$L\r\n<p>\r\n" */
/* Append decimal v; returns digits written. */
uint32_t put_u64(struct iobuf *b, uint64_t v);

#endif
