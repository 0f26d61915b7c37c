/* Fuzz target: resp_parse on a stream of requests. The stream is parsed whole, split at a
 * point the fuzzer chooses, and (when short) byte by byte; every way must yield the same
 * commands, the same bytes consumed and the same final status (up to 64 KiB: like Redis, an
 * inline line longer than that is accepted only when its newline came in the same read).
 * Frames must be sane: used > 0 and every argument inside its frame.
 * Input: [flags][split][stream...]; flags bit 0 = unauthenticated client, bit 1 = a tiny
 * proto-max-bulk-len (16). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/resp.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_resp: check failed: %s (line %d)\n", #c, __LINE__);             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct result {
    uint8_t *log; /* argc and length-prefixed args of each command */
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

/* Feed in[0..n) as reads of the given sizes (cuts: increasing offsets, the last is n). */
static void run(const uint8_t *in, size_t n, const size_t *cuts, int ncuts, int flags,
                struct result *r)
{
    struct resp_parser rp;
    char *buf = malloc(n ? n : 1);
    size_t start = 0, avail;
    int c = 0;

    memset(&rp, 0, sizeof(rp));
    resp_parser_reset(&rp);
    rp.unauth = flags & 1;
    rp.max_bulk = flags & 2 ? 16 : 512LL * 1024 * 1024;
    memcpy(buf, in, n);
    memset(r, 0, sizeof(*r));
    avail = cuts[0];
    for (;;) {
        size_t used = 0;
        int st = resp_parse(&rp, buf + start, avail - start, &used);
        if (st == RESP_OK) {
            CHECK(used > 0 && used <= avail - start);
            CHECK(rp.argc >= 0 && (size_t)rp.argc <= used);
            log_add(r, &rp.argc, sizeof(rp.argc));
            for (long long i = 0; i < rp.argc; i++) {
                CHECK(rp.argv[i].off + rp.argv[i].len <= used);
                log_add(r, &rp.argv[i].len, sizeof(rp.argv[i].len));
                log_add(r, buf + start + rp.argv[i].off, rp.argv[i].len);
            }
            CHECK(rp.mbulk == -1 && rp.bulklen == -1 && rp.pos == 0);
            start += used;
            continue;
        }
        if (st == RESP_NEED_MORE && c + 1 < ncuts) {
            CHECK(rp.pos <= avail - start);
            avail = cuts[++c];
            continue;
        }
        CHECK(st == RESP_NEED_MORE || (st < 0 && st >= RESP_ERR_UNAUTH_BULK));
        if (st < 0) {
            char tmp[64];
            CHECK(resp_strerror(st, rp.bad, tmp, sizeof(tmp))[0] == 'E');
        }
        r->status = st;
        break;
    }
    r->consumed = start;
    resp_parser_deinit(&rp);
    free(buf);
}

static void same(const struct result *a, const struct result *b)
{
    CHECK(a->status == b->status);
    CHECK(a->consumed == b->consumed);
    CHECK(a->len == b->len && (a->len == 0 || !memcmp(a->log, b->log, a->len)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct result whole, split, bytes;
    size_t cuts[2], k;
    int flags;

    if (size < 2)
        return 0;
    flags = data[0];
    k = data[1];
    data += 2;
    size -= 2;

    cuts[0] = size;
    run(data, size, cuts, 1, flags, &whole);

    k = size ? k * size / 255 : 0;
    cuts[0] = k;
    cuts[1] = size;
    run(data, size, cuts, 2, flags, &split);
    if (size <= RESP_INLINE_MAX)
        same(&whole, &split);
    free(split.log);

    if (size <= 512) {
        size_t *each = malloc((size + 1) * sizeof(*each));
        for (size_t i = 0; i <= size; i++)
            each[i] = i;
        run(data, size, each, (int)size + 1, flags, &bytes);
        same(&whole, &bytes);
        free(bytes.log);
        free(each);
    }
    free(whole.log);
    return 0;
}
