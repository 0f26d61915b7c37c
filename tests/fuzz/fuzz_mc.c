/* Fuzz target: mc_parse (memcached text and meta commands) on a stream of requests, as a
 * connection feeds it: each call sees exactly the unconsumed bytes (a fresh allocation of
 * that size, so ASan catches any read past them) and the caller drops *used bytes whatever
 * the status. Every slice of a parsed request must lie inside those bytes.
 * The stream is parsed whole and split at a point the fuzzer chooses. For streams up to
 * MC_LINE_MAX bytes no partial line can pass the limit, so both must give the same requests
 * (ignoring MC_NONE, which only reports discarded bytes) and the same final status; longer
 * streams are only checked for safety (memcached's line limit depends on how bytes arrive).
 * Input: [flags][split][stream...]; flags bit 0: item_size_max 1024 instead of 1 MiB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mc.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_mc: check failed: %s (line %d)\n", #c, __LINE__);               \
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
    }
    memcpy(r->log + r->len, p, n);
    r->len += n;
}

static void log_slice(struct result *r, const char *p, size_t n, const char *lo, const char *hi)
{
    CHECK(n == 0 || (p >= lo && p + n <= hi));
    log_add(r, &n, sizeof(n));
    if (n)
        log_add(r, p, n);
}

static void log_req(struct result *r, const struct mc_req *q, const char *lo, const char *hi)
{
    uint8_t zero = 0;
    int cmd = q->cmd;

    log_add(r, &cmd, sizeof(cmd));
    if (q->err)
        log_add(r, q->err, strlen(q->err) + 1);
    else
        log_add(r, &zero, 1);
    log_add(r, &q->noreply, 1);
    log_add(r, &q->too_large, 1);
    CHECK(q->ntok >= 0 && q->ntok <= MC_MAX_TOKENS + 1);
    log_add(r, &q->ntok, sizeof(q->ntok));
    for (int i = 0; i + 1 < q->ntok && i < MC_MAX_TOKENS; i++)
        log_slice(r, q->tok[i].p, q->tok[i].n, lo, hi);
    if (q->err)
        return; /* other fields are only meaningful for a command that runs */
    /* a decoded base64 key lives in keybuf */
    if (q->key_b64) {
        CHECK(q->key.n <= MC_KEY_MAX);
        log_slice(r, q->key.p, q->key.n, q->keybuf, q->keybuf + sizeof(q->keybuf));
    } else {
        log_slice(r, q->key.p, q->key.n, lo, hi);
    }
    if (q->data) {
        log_add(r, &q->vlen, sizeof(q->vlen));
        log_slice(r, q->data, q->vlen, lo, hi);
    }
    log_add(r, &q->flags, sizeof(q->flags));
    log_add(r, &q->exptime, sizeof(q->exptime));
    log_add(r, &q->num, sizeof(q->num));
    log_add(r, &q->m.has, sizeof(q->m.has));
}

static void run(const uint8_t *in, size_t n, size_t cut, size_t item_max, struct result *r)
{
    struct mc_parser p;
    static struct mc_req q;
    size_t start = 0, avail = cut;

    memset(&p, 0, sizeof(p));
    memset(r, 0, sizeof(*r));
    for (;;) {
        size_t len = avail - start, used = 0;
        char *chunk = malloc(len ? len : 1);
        memcpy(chunk, in + start, len);
        memset(&q, 0, sizeof(q)); /* fields a command leaves unset compare equal */
        int st = mc_parse(&p, chunk, len, item_max, &q, &used);
        CHECK(used <= len);
        if (st == MC_OK && q.cmd != MC_NONE)
            log_req(r, &q, chunk, chunk + len);
        if (st == MC_OK)
            CHECK(used > 0); /* else the caller would loop forever */
        free(chunk);
        start += used;
        if (st == MC_OK)
            continue;
        if (st == MC_NEED_MORE && avail < n) {
            avail = n;
            continue;
        }
        if (st == MC_NEED_MORE && used > 0 && start < avail)
            continue; /* bytes were discarded; the rest may hold more */
        CHECK(st == MC_NEED_MORE || st == MC_ERR_LINE_TOO_LONG);
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
    if (size <= MC_LINE_MAX) {
        CHECK(whole.status == split.status);
        CHECK(whole.len == split.len);
        CHECK(whole.len == 0 || !memcmp(whole.log, split.log, whole.len));
    }
    free(whole.log);
    free(split.log);
    return 0;
}
