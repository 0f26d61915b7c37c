/* memcached binary protocol framing: one request header and body at a time, checked with
 * memcached 1.6's per-opcode length rules before any of the body is needed. */
#include "proto/mc_bin.h"

#include <string.h>

/* The plain opcode of a quiet variant, or 0xff when op has none. */
static uint8_t quiet_base(uint8_t op)
{
    switch (op) {
    case MCB_GETQ: return MCB_GET;
    case MCB_GETKQ: return MCB_GETK;
    case MCB_SETQ: return MCB_SET;
    case MCB_ADDQ: return MCB_ADD;
    case MCB_REPLACEQ: return MCB_REPLACE;
    case MCB_DELETEQ: return MCB_DELETE;
    case MCB_INCRQ: return MCB_INCR;
    case MCB_DECRQ: return MCB_DECR;
    case MCB_QUITQ: return MCB_QUIT;
    case MCB_FLUSHQ: return MCB_FLUSH;
    case MCB_APPENDQ: return MCB_APPEND;
    case MCB_PREPENDQ: return MCB_PREPEND;
    case MCB_GATQ: return MCB_GAT;
    case MCB_GATKQ: return MCB_GATK;
    default: return 0xff;
    }
}

/* memcached's item size check for a stored value (the text protocol's formula). */
static int fits(size_t nkey, uint32_t flags, uint64_t vlen, size_t item_size_max)
{
    return 56 + nkey + 1 + (flags ? 4 : 0) + vlen + 2 <= item_size_max;
}

/* 1 when the header's lengths are what memcached accepts for the opcode (base). */
static int lengths_ok(uint8_t base, unsigned extlen, unsigned keylen, uint32_t bodylen)
{
    switch (base) {
    case MCB_VERSION: case MCB_NOOP: case MCB_QUIT: case MCB_SASL_LIST:
        return extlen == 0 && keylen == 0 && bodylen == 0;
    case MCB_FLUSH:
        return keylen == 0 && bodylen == extlen && (extlen == 0 || extlen == 4);
    case MCB_SET: case MCB_ADD: case MCB_REPLACE:
        return extlen == 8 && keylen != 0 && bodylen >= keylen + 8u;
    case MCB_GET: case MCB_GETK: case MCB_DELETE:
        return extlen == 0 && keylen != 0 && bodylen == keylen;
    case MCB_INCR: case MCB_DECR:
        return extlen == 20 && keylen != 0 && bodylen == keylen + 20u;
    case MCB_APPEND: case MCB_PREPEND:
        return extlen == 0 && keylen != 0 && bodylen >= keylen;
    case MCB_STAT:
        return extlen == 0 && bodylen == keylen;
    case MCB_SASL_AUTH: case MCB_SASL_STEP:
        return extlen == 0 && keylen != 0;
    case MCB_TOUCH: case MCB_GAT: case MCB_GATK:
        return extlen == 4 && keylen != 0 && bodylen == keylen + 4u;
    default:
        return 1;
    }
}

static int known(uint8_t base)
{
    /* memcached 1.6 answers VERBOSITY as an unknown command */
    return base < MCB_VERBOSITY || base == MCB_TOUCH || base == MCB_GAT ||
           (base >= MCB_SASL_LIST && base <= MCB_SASL_STEP) || base == MCB_GATK;
}

int mcb_parse(struct mcb_parser *p, const char *buf, size_t len, size_t item_size_max,
              struct mcb_req *r, size_t *used)
{
    const uint8_t *u = (const uint8_t *)buf;
    uint8_t base;
    size_t fixed;

    *used = 0;
    if (p->swallow) {
        size_t n = len < p->swallow ? len : (size_t)p->swallow;
        p->swallow -= n;
        *used = n;
        if (p->swallow)
            return MCB_NEED_MORE;
        buf += n, len -= n, u += n;
    }
    if (len == 0)
        return MCB_NEED_MORE;
    if (u[0] != MCB_REQ_MAGIC)
        return MCB_ERR_MAGIC;
    if (len < MCB_HDR_LEN)
        return MCB_NEED_MORE;
    memset(r, 0, sizeof(*r));
    r->op = u[1];
    r->keylen = (uint16_t)(u[2] << 8 | u[3]);
    r->extlen = u[4];
    r->bodylen = mcb_get32(buf + 8);
    memcpy(&r->opaque, buf + 12, 4); /* echoed as sent */
    r->cas = mcb_get64(buf + 16);
    base = quiet_base(r->op);
    r->quiet = base != 0xff;
    r->base = r->quiet ? base : r->op;

    if ((uint64_t)r->keylen + r->extlen > r->bodylen) {
        /* memcached: unknown command, then close */
        r->status = MCB_ST_UNKNOWN;
        r->close = 1;
        *used += MCB_HDR_LEN;
        return MCB_OK;
    }
    if (!known(r->base)) {
        /* memcached answers and discards the body */
        r->status = MCB_ST_UNKNOWN;
        p->swallow = r->bodylen;
        *used += MCB_HDR_LEN;
        return MCB_OK;
    }
    if (r->keylen > MCB_KEY_MAX || !lengths_ok(r->base, r->extlen, r->keylen, r->bodylen)) {
        r->status = MCB_ST_EINVAL;
        r->close = 1;
        *used += MCB_HDR_LEN;
        return MCB_OK;
    }
    fixed = MCB_HDR_LEN + r->extlen + r->keylen;
    if (len < fixed)
        return MCB_NEED_MORE;
    r->ext = buf + MCB_HDR_LEN;
    r->key = r->ext + r->extlen;
    r->vlen = r->bodylen - r->extlen - r->keylen;
    if (r->base == MCB_SET || r->base == MCB_ADD || r->base == MCB_REPLACE ||
        r->base == MCB_APPEND || r->base == MCB_PREPEND) {
        uint32_t flags = r->extlen == 8 ? mcb_get32(r->ext) : 0;
        if (!fits(r->keylen, flags, r->vlen, item_size_max)) {
            /* the key and extras are read, the value is discarded */
            r->status = MCB_ST_E2BIG;
            p->swallow = r->vlen;
            *used += fixed;
            r->vlen = 0;
            return MCB_OK;
        }
    }
    if ((r->base == MCB_SASL_AUTH || r->base == MCB_SASL_STEP) &&
        (r->keylen > MCB_SASL_MECH_MAX || r->vlen > MCB_SASL_MAX)) {
        /* memcached: a mechanism name over 32 bytes is EINVAL; a body it cannot hold in one
         * unchunked item (key, body and CRLF) is ENOMEM; any other body it reads, and one this
         * long fails to authenticate. The body is discarded; the caller answers as memcached
         * does with SASL off. */
        if (r->keylen > MCB_SASL_MECH_MAX)
            r->status = MCB_ST_EINVAL;
        else if (56 + (uint64_t)r->keylen + 1 + r->vlen + 2 > MCB_SASL_ITEM_MAX)
            r->status = MCB_ST_ENOMEM;
        else
            r->status = MCB_ST_AUTH_ERROR;
        p->swallow = r->vlen;
        *used += fixed;
        r->vlen = 0;
        return MCB_OK;
    }
    if (len < fixed + r->vlen)
        return MCB_NEED_MORE;
    r->val = r->key + r->keylen;
    *used += fixed + r->vlen;
    return MCB_OK;
}

const char *mcb_status_text(uint16_t status)
{
    switch (status) {
    case MCB_ST_OK: return "";
    case MCB_ST_KEY_ENOENT: return "Not found";
    case MCB_ST_KEY_EEXISTS: return "Data exists for key.";
    case MCB_ST_E2BIG: return "Too large.";
    case MCB_ST_EINVAL: return "Invalid arguments";
    case MCB_ST_NOT_STORED: return "Not stored.";
    case MCB_ST_DELTA_BADVAL: return "Non-numeric server-side value for incr or decr";
    case MCB_ST_AUTH_ERROR: return "Auth failure.";
    case MCB_ST_UNKNOWN: return "Unknown command";
    case MCB_ST_ENOMEM: return "Out of memory";
    default: return "UNHANDLED ERROR";
    }
}

int mcb_compose(struct buf *b, uint8_t op, uint16_t status, uint32_t opaque, uint64_t cas,
                const void *ext, size_t extlen, const char *key, size_t keylen,
                const char *val, size_t vlen)
{
    size_t body = extlen + keylen + vlen;
    size_t n = MCB_HDR_LEN + extlen + keylen + (val ? vlen : 0);
    char *h;

    if (buf_reserve(b, n))
        return -1;
    h = b->data + b->wpos;
    h[0] = (char)MCB_RES_MAGIC;
    h[1] = (char)op;
    h[2] = (char)(keylen >> 8), h[3] = (char)keylen;
    h[4] = (char)extlen;
    h[5] = 0;
    h[6] = (char)(status >> 8), h[7] = (char)status;
    mcb_put32(h + 8, (uint32_t)body);
    memcpy(h + 12, &opaque, 4);
    mcb_put64(h + 16, cas);
    h += MCB_HDR_LEN;
    if (extlen)
        memcpy(h, ext, extlen), h += extlen;
    if (keylen)
        memcpy(h, key, keylen), h += keylen;
    if (val && vlen)
        memcpy(h, val, vlen);
    b->wpos += n;
    return 0;
}

int mcb_compose_error(struct buf *b, uint8_t op, uint16_t status, uint32_t opaque)
{
    const char *t = mcb_status_text(status);
    return mcb_compose(b, op, status, opaque, 0, NULL, 0, NULL, 0, t, strlen(t));
}
