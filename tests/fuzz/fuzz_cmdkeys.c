/* Fuzz target: the key-spec walker (cmd_keys in src/cmd/cmdspec.c) on hostile argument lines.
 * Every command's keys go through it before a stripe is locked, a WATCH is invalidated or a
 * client blocks, and its input is whatever a client sent: numkeys negative, huge or not a
 * number, keywords missing or repeated, keys past the end. Properties: it never reads past
 * argv (each argument is its own allocation of exactly its size, so ASan sees any overread),
 * every key it reports is an argument index in [1, argc), it reports as many keys as it
 * returns, and a walk the callback stops ends at once.
 * The entries are shaped like the real table's (one per kind of key spec: index and keyword
 * begin-search, range and keynum find-keys, limits, several specs, getkeys functions).
 * Input: [entry][stop-after][arguments separated by 0 bytes...]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_cmdkeys: check failed: %s (line %d)\n", #c, __LINE__);         \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_ARGS 64

static struct cmd entries[] = {
    {"get", NULL, 2, "readonly fast", "@string", "RO,access index:1 range:0,1,0"},
    {"mget", NULL, -2, "readonly fast", "@string", "RO,access index:1 range:-1,1,0"},
    {"mset", NULL, -3, "write denyoom", "@string", "OW,update index:1 range:-1,2,0"},
    {"blpop", NULL, -3, "write blocking", "@list", "RW,access,delete index:1 range:-2,1,0"},
    {"lmove", NULL, 5, "write denyoom", "@list",
     "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0"},
    {"zunionstore", NULL, -4, "write denyoom", "@sortedset",
     "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1"},
    {"zinter", NULL, -3, "readonly", "@sortedset", "RO,access index:1 keynum:0,1,1"},
    {"blmpop", NULL, -5, "write blocking", "@list", "RW,access,delete index:2 keynum:0,1,1"},
    {"xread", NULL, -4, "readonly blocking", "@stream", "RO,access keyword:STREAMS:1 range:-1,1,2"},
    {"xreadgroup", NULL, -7, "write blocking", "@stream",
     "RO,access keyword:STREAMS:4 range:-1,1,2"},
    {"georadius", NULL, -6, "write denyoom", "@geo",
     "RO,access index:1 range:0,1,0; OW,update keyword:STORE:6 range:0,1,0; "
     "OW,update keyword:STOREDIST:6 range:0,1,0"},
    {"migrate", NULL, -6, "write", "@keyspace",
     "RW,access,delete index:3 range:0,1,0; RW,access,delete,incomplete keyword:KEYS:-2 "
     "range:-1,1,0"},
    {"set", NULL, -3, "write denyoom", "@string",
     "RW,access,update,variable_flags index:1 range:0,1,0", NULL, NULL, NULL,
     cmd_getkeys_set},
    {"bitfield", NULL, -2, "write denyoom", "@bitmap",
     "RW,access,update,variable_flags index:1 range:0,1,0", NULL, NULL, NULL,
     cmd_getkeys_bitfield},
    {"sort", NULL, -2, "write denyoom", "@list",
     "RO,access index:1 range:0,1,0; RO,access unknown unknown; OW,update unknown unknown", NULL,
     NULL, NULL, cmd_getkeys_sort},
    {"sort_ro", NULL, -2, "readonly", "@list",
     "RO,access index:1 range:0,1,0; RO,access unknown unknown", NULL, NULL, NULL,
     cmd_getkeys_sort_ro},
    {"publish", NULL, 3, "pubsub", "", "not_key index:1 range:0,1,0"},
    {"ping", NULL, -1, "fast", "@connection", NULL},
};
#define NENTRIES ((int)(sizeof(entries) / sizeof(entries[0])))

struct walk {
    int argc;
    int seen;
    int stop_after; /* stop the walk at this key (0: never) */
};

static int on_key(void *arg, int pos, unsigned flags)
{
    struct walk *w = arg;
    (void)flags;
    CHECK(pos >= 1 && pos < w->argc);
    w->seen++;
    return w->stop_after && w->seen == w->stop_after;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    struct slice argv[MAX_ARGS];
    char *bufs[MAX_ARGS];
    struct walk w = {0};
    const struct cmd *cmd;
    int argc = 1, n;
    size_t i, start;

    if (!ready) {
        for (int e = 0; e < NENTRIES; e++)
            cmd_entry_setup(&entries[e], NULL);
        ready = 1;
    }
    if (size < 2)
        return 0;
    cmd = &entries[data[0] % NENTRIES];
    w.stop_after = data[1] % 8;
    bufs[0] = malloc(strlen(cmd->name));
    memcpy(bufs[0], cmd->name, strlen(cmd->name));
    argv[0].p = bufs[0];
    argv[0].n = strlen(cmd->name);
    for (i = start = 2; i <= size && argc < MAX_ARGS; i++) {
        if (i == size || data[i] == 0) {
            size_t len = i - start;
            bufs[argc] = malloc(len ? len : 1);
            memcpy(bufs[argc], data + start, len);
            argv[argc].p = bufs[argc];
            argv[argc].n = len;
            argc++;
            start = i + 1;
        }
    }
    w.argc = argc;
    n = cmd_keys(cmd, argc, argv, on_key, &w);
    CHECK(n >= -1 && n <= argc);
    if (n >= 0 && !w.stop_after)
        CHECK(n == w.seen);
    if (w.stop_after)
        CHECK(w.seen <= w.stop_after);
    /* counting only (no callback) finds the same number */
    if (!w.stop_after) {
        int m = cmd_keys(cmd, argc, argv, NULL, NULL);
        CHECK(m == n);
    }
    for (int a = 0; a < argc; a++)
        free(bufs[a]);
    return 0;
}
