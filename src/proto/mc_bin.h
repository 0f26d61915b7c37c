/* memcached binary protocol (memcached 1.6): request framing with memcached's per-opcode
 * length rules and limits, and response composition. No I/O, no storage, no allocation: key,
 * extras and value of a request are borrowed slices of the caller's input buffer. */
#ifndef TC_MC_BIN_H
#define TC_MC_BIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define MCB_REQ_MAGIC 0x80
#define MCB_RES_MAGIC 0x81
#define MCB_HDR_LEN 24
#define MCB_KEY_MAX 250
#define MCB_SASL_MAX 1024     /* longest SASL AUTH/STEP body read (a longer one fails) */
#define MCB_SASL_MECH_MAX 32 /* longest SASL mechanism name (the key), memcached's limit */
/* memcached reads a SASL body into one unchunked item: its size at most slab_chunk_max (the
 * default, half a 1 MiB slab page) */
#define MCB_SASL_ITEM_MAX (512 * 1024)

enum mcb_op {
    MCB_GET = 0x00, MCB_SET = 0x01, MCB_ADD = 0x02, MCB_REPLACE = 0x03, MCB_DELETE = 0x04,
    MCB_INCR = 0x05, MCB_DECR = 0x06, MCB_QUIT = 0x07, MCB_FLUSH = 0x08, MCB_GETQ = 0x09,
    MCB_NOOP = 0x0a, MCB_VERSION = 0x0b, MCB_GETK = 0x0c, MCB_GETKQ = 0x0d, MCB_APPEND = 0x0e,
    MCB_PREPEND = 0x0f, MCB_STAT = 0x10, MCB_SETQ = 0x11, MCB_ADDQ = 0x12, MCB_REPLACEQ = 0x13,
    MCB_DELETEQ = 0x14, MCB_INCRQ = 0x15, MCB_DECRQ = 0x16, MCB_QUITQ = 0x17, MCB_FLUSHQ = 0x18,
    MCB_APPENDQ = 0x19, MCB_PREPENDQ = 0x1a, MCB_VERBOSITY = 0x1b, MCB_TOUCH = 0x1c,
    MCB_GAT = 0x1d, MCB_GATQ = 0x1e, MCB_SASL_LIST = 0x20, MCB_SASL_AUTH = 0x21,
    MCB_SASL_STEP = 0x22, MCB_GATK = 0x23, MCB_GATKQ = 0x24,
};

enum mcb_status {
    MCB_ST_OK = 0x00,
    MCB_ST_KEY_ENOENT = 0x01,
    MCB_ST_KEY_EEXISTS = 0x02,
    MCB_ST_E2BIG = 0x03,
    MCB_ST_EINVAL = 0x04,
    MCB_ST_NOT_STORED = 0x05,
    MCB_ST_DELTA_BADVAL = 0x06,
    MCB_ST_AUTH_ERROR = 0x20,
    MCB_ST_AUTH_CONTINUE = 0x21,
    MCB_ST_UNKNOWN = 0x81,
    MCB_ST_ENOMEM = 0x82,
};

/* mcb_parse results */
enum mcb_res {
    MCB_OK = 0,          /* *r holds a request: run it, or answer r->status when not 0 */
    MCB_NEED_MORE = 1,   /* feed more bytes (bytes being discarded may have been consumed) */
    MCB_ERR_MAGIC = -1,  /* not a request magic byte: close without a reply, as memcached */
};

struct mcb_req {
    uint8_t op;          /* opcode as sent (the reply echoes it) */
    uint8_t base;        /* opcode with the quiet variant folded (GETQ -> GET, GATKQ -> GATK) */
    uint8_t quiet;       /* a quiet variant */
    uint8_t extlen;
    uint16_t keylen;
    uint16_t status;     /* not MCB_ST_OK: reply this error instead of running the request */
    uint8_t close;       /* after the error reply, close (memcached's protocol errors) */
    uint32_t bodylen;
    uint32_t opaque;     /* as sent (network order bytes kept as a number to echo) */
    uint64_t cas;
    const char *ext;     /* extlen bytes */
    const char *key;     /* keylen bytes */
    const char *val;     /* vlen bytes */
    size_t vlen;
};

/* Resumable state, one per connection. Zero-initialise. */
struct mcb_parser {
    uint64_t swallow; /* bytes of a refused body still to discard */
};

/* Parse one request from buf[0..len). Always sets *used (the caller drops that many bytes
 * whatever the result). A request is returned only once its whole body is in buf, except a
 * refused one (status set), whose body the parser discards on later calls. item_size_max
 * bounds a stored value as memcached's item size check does; every length is checked before
 * the caller would need room for it. Any thread. */
int mcb_parse(struct mcb_parser *p, const char *buf, size_t len, size_t item_size_max,
              struct mcb_req *r, size_t *used);

/* memcached's error text for a status ("Not found", ...; "" for OK). */
const char *mcb_status_text(uint16_t status);

/* Append a response: header (opcode op, status, opaque, cas), extras, key and value. With val
 * NULL the value's vlen bytes are counted in the body length but not written (the caller adds
 * them, e.g. by reference). Copies. Returns 0 or -1 when the buffer could not grow. */
int mcb_compose(struct buf *b, uint8_t op, uint16_t status, uint32_t opaque, uint64_t cas,
                const void *ext, size_t extlen, const char *key, size_t keylen,
                const char *val, size_t vlen);

/* An error response with memcached's text as body. */
int mcb_compose_error(struct buf *b, uint8_t op, uint16_t status, uint32_t opaque);

static inline uint32_t mcb_get32(const char *p)
{
    const uint8_t *u = (const uint8_t *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}
static inline uint64_t mcb_get64(const char *p)
{
    return (uint64_t)mcb_get32(p) << 32 | mcb_get32(p + 4);
}
static inline void mcb_put32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24), p[1] = (char)(v >> 16), p[2] = (char)(v >> 8), p[3] = (char)v;
}
static inline void mcb_put64(char *p, uint64_t v)
{
    mcb_put32(p, (uint32_t)(v >> 32));
    mcb_put32(p + 4, (uint32_t)v);
}

#endif
