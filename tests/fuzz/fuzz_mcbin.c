/* Fuzz target: mcb_parse (memcached binary protocol) on a stream of requests, as a connection
 * feeds it: each call sees exactly the unconsumed bytes (a fresh allocation of that size, so
 * ASan catches any read past them) and the caller drops *used bytes whatever the result. Every
 * slice of a request must lie inside those bytes, and the lengths must agree with the header.
 * The stream is parsed whole and split at a point the fuzzer chooses: both must give the same
 * requests and the same final result. Each request's reply is composed (mcb_compose) and its
 * header read back. Input: [flags][split][stream...]; flags bit 0: item_size_max 1024. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mc_bin.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_mcbin: check failed: %s (line %d)\n", #c, __LINE__);            \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct result {
    uint8_t *log;
    size_t len, cap;
    int status;
    size_t consumed;
};

static void log_add(struct result *r, const void *p, size_t n)
{
    if (r->len + n > r->cap) {
        r->cap = (r->len + n) * 2 + 64;
        r->log = realloc(r->log, r->cap);
        CHECK(r->log);
    }
    memcpy(r->log + r->len, p, n);
    r->len += n;
}

static void log_slice(struct result *r, const char *p, size_t n, const char *lo, const char *hi)
{
    CHECK(n == 0 || (p && p >= lo && p + n <= hi));
    log_add(r, &n, sizeof(n));
    if (n)
        log_add(r, p, n);
}

static struct buf out; /* composed replies, reused */

static void check_reply(const struct mcb_req *q)
{
    const uint8_t *h;
    size_t keep = q->keylen <= MCB_KEY_MAX ? q->keylen : 0;
    size_t vlen = q->vlen < 4096 ? q->vlen : 4096;

    out.rpos = out.wpos = 0;
    CHECK(mcb_compose(&out, q->op, q->status, q->opaque, q->cas, q->ext, q->ext ? q->extlen : 0,
                      q->key, q->key ? keep : 0, q->val, q->val ? vlen : 0) == 0);
    h = (const uint8_t *)out.data;
    CHECK(h[0] == MCB_RES_MAGIC && h[1] == q->op);
    CHECK(mcb_get32(out.data + 8) + (size_t)MCB_HDR_LEN == out.wpos);
    CHECK(mcb_get64(out.data + 16) == q->cas);
    CHECK(memcmp(out.data + 12, &q->opaque, 4) == 0);
    out.rpos = out.wpos = 0;
    CHECK(mcb_compose_error(&out, q->op, q->status ? q->status : MCB_ST_EINVAL, q->opaque) == 0);
    CHECK(mcb_get32(out.data + 8) == strlen(mcb_status_text(q->status ? q->status
                                                                      : MCB_ST_EINVAL)));
}

static void log_req(struct result *r, const struct mcb_req *q, const char *lo, const char *hi)
{
    log_add(r, &q->op, 1);
    log_add(r, &q->base, 1);
    log_add(r, &q->quiet, 1);
    log_add(r, &q->status, sizeof(q->status));
    log_add(r, &q->close, 1);
    log_add(r, &q->opaque, sizeof(q->opaque));
    log_add(r, &q->cas, sizeof(q->cas));
    log_add(r, &q->bodylen, sizeof(q->bodylen));
    if (q->status == MCB_ST_OK) {
        /* a request that runs has its whole body, as the header says */
        CHECK((size_t)q->extlen + q->keylen + q->vlen == q->bodylen);
        CHECK(q->keylen <= MCB_KEY_MAX);
        log_slice(r, q->ext, q->extlen, lo, hi);
        log_slice(r, q->key, q->keylen, lo, hi);
        log_slice(r, q->val, q->vlen, lo, hi);
    } else if (q->key) {
        log_slice(r, q->ext, q->extlen, lo, hi);
        log_slice(r, q->key, q->keylen, lo, hi);
    }
    check_reply(q);
}

static void run(const uint8_t *in, size_t n, size_t cut, size_t item_max, struct result *r)
{
    struct mcb_parser p;
    static struct mcb_req q;
    size_t start = 0, avail = cut;

    memset(&p, 0, sizeof(p));
    memset(r, 0, sizeof(*r));
    for (;;) {
        size_t len = avail - start, used = 0;
        char *chunk = malloc(len ? len : 1);
        int st;

        CHECK(chunk);
        memcpy(chunk, in + start, len);
        st = mcb_parse(&p, chunk, len, item_max, &q, &used);
        CHECK(used <= len);
        if (st == MCB_OK) {
            CHECK(used > 0); /* else the caller would loop forever */
            log_req(r, &q, chunk, chunk + len);
        }
        free(chunk);
        start += used;
        if (st == MCB_OK && !q.close)
            continue;
        if (st == MCB_NEED_MORE && avail < n) {
            avail = n;
            continue;
        }
        if (st == MCB_NEED_MORE && used > 0 && start < avail)
            continue; /* bytes were discarded; the rest may hold more */
        CHECK(st == MCB_NEED_MORE || st == MCB_ERR_MAGIC || (st == MCB_OK && q.close));
        r->status = st;
        break;
    }
    r->consumed = start;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct result whole, split;
    size_t item_max, k;

    if (size < 2)
        return 0;
    item_max = data[0] & 1 ? 1024 : 1024 * 1024;
    k = data[1];
    data += 2;
    size -= 2;
    k = size ? k * size / 255 : 0;

    run(data, size, size, item_max, &whole);
    run(data, size, k, item_max, &split);
    CHECK(whole.status == split.status);
    CHECK(whole.len == split.len);
    CHECK(whole.len == 0 || !memcmp(whole.log, split.log, whole.len));
    free(whole.log);
    free(split.log);
    return 0;
}
