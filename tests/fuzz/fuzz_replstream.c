/* Fuzz target: the replica's parser of its primary's stream (src/cmd/repl_parse.c), on hostile
 * bytes from a primary (or whoever answers at its address). The input is parsed as a stream,
 * command after command, as the link consumes it. Properties: no read outside the input (ASan);
 * a command uses bytes within the input, has 1..REPL_MAX_ARGS arguments (0 for a newline),
 * each inside the bytes it used and no longer than the bulk limit; every strict prefix of a
 * parsed command is incomplete or (for a long header) malformed, never a different command. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/repl_parse.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_replstream: check failed: %s (line %d)\n", #c, __LINE__);       \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_BULK 4096

static struct repl_args a, b;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1); /* its own allocation: ASan sees an overread */
    size_t at = 0;

    if (!copy)
        return 0;
    memcpy(copy, data, size);
    while (at < size) {
        const char *p = copy + at;
        size_t n = size - at, used = 0;
        int argc = -2;
        int rc = repl_parse(p, n, MAX_BULK, &a, &argc, &used);
        CHECK(rc >= -1 && rc <= 1);
        if (rc <= 0)
            break;
        CHECK(used > 0 && used <= n);
        CHECK(argc >= 0 && argc <= REPL_MAX_ARGS);
        CHECK(argc > 0 || used == 1);
        for (int i = 0; i < argc; i++) {
            CHECK(a.lens[i] <= MAX_BULK);
            CHECK(a.argv[i] >= p && a.argv[i] + a.lens[i] <= p + used);
        }
        /* a prefix never parses as a whole command */
        size_t cut = used > 1 ? used / 2 : 0;
        if (cut) {
            int c2;
            size_t u2;
            int r2 = repl_parse(p, cut, MAX_BULK, &b, &c2, &u2);
            CHECK(r2 == 0 || r2 == -1 || (r2 == 1 && c2 == 0 && u2 == 1));
        }
        at += used;
    }
    free(copy);
    return 0;
}
