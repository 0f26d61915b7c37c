/* Fuzz target: the Lua debugger's command parser (src/script/ldb_parse.c), on hostile bytes
 * from a SCRIPT DEBUG client. The input is parsed as a stream, command after command, the way
 * a session consumes it; and every prefix of a command that parses must ask for more (never
 * fail, never parse differently). Properties: no read outside the input (ASan), 1..1024
 * arguments of 1..1024 bytes each, all inside the bytes used, used within the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script/ldb_parse.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_ldb: check failed: %s (line %d)\n", #c, __LINE__);             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static struct ldb_cmd cmd, pre;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1); /* its own allocation: ASan sees an overread */
    size_t at = 0;

    if (!copy)
        return 0;
    memcpy(copy, data, size);
    while (at < size) {
        const char *b = copy + at;
        size_t n = size - at;
        int argc = ldb_parse(b, n, &cmd);
        if (argc <= 0) {
            CHECK(argc == 0 || argc == -1);
            break;
        }
        CHECK(argc == cmd.argc && argc <= LDB_ARG_MAX);
        CHECK(cmd.used > 0 && cmd.used <= n);
        for (int i = 0; i < argc; i++) {
            CHECK(cmd.argl[i] >= 1 && cmd.argl[i] <= LDB_ARG_MAX);
            CHECK(cmd.argv[i] >= b && cmd.argv[i] + cmd.argl[i] <= b + cmd.used);
        }
        /* a cut-off command is incomplete, not an error (a few cut points) */
        for (size_t cut = cmd.used - 1; cut > 0 && cut + 8 > cmd.used; cut--)
            if (memchr(b, '*', cut))
                CHECK(ldb_parse(b, cut, &pre) == 0);
        at += cmd.used;
    }
    free(copy);
    return 0;
}
