/* SAVE, BGSAVE [SCHEDULE] and LASTSAVE: the command side of RDB snapshots (the snapshots
 * themselves are src/persist, persist.h). */
#include "cmd/persist.h"

#include <signal.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "persist/aof_log.h"
#include "persist/persist.h"
#include "persist/rdb.h"

static void save_command(struct conn *c)
{
    int rc = persist_save();
    if (rc == PERSIST_BUSY)
        reply_error(c, "ERR Background save already in progress");
    else if (rc)
        reply_error(c, "ERR");
    else
        reply_ok(c);
}

static void bgsave_command(struct conn *c)
{
    int schedule = 0;

    if (c->argc > 1) {
        if (c->argc == 2 && arg_is(c, 1, "schedule")) {
            schedule = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    switch (persist_bgsave(schedule)) {
    case PERSIST_OK:
        reply_status(c, "Background saving started");
        break;
    case PERSIST_SCHEDULED:
        reply_status(c, "Background saving scheduled");
        break;
    case PERSIST_BUSY:
        reply_error(c, "ERR Background save already in progress");
        break;
    default:
        reply_error(c, "ERR");
    }
}

static void lastsave_command(struct conn *c)
{
    reply_int(c, (long long)persist_lastsave());
}

int cmd_persist_debug(struct conn *c)
{
    long long v;

    if (arg_is(c, 1, "loadaof") && c->argc == 2) {
        if (aof_debug_loadaof())
            reply_error(c, "ERR out of memory");
        else
            reply_ok(c);
    } else if (arg_is(c, 1, "aof-flush-sleep") && c->argc == 3) {
        if (arg_ll(c, 2, &v, NULL))
            return 1;
        atomic_store(&aof_flush_sleep_us, v < 0 ? 0 : v > 100000000 ? 100000000 : (int)v);
        reply_ok(c);
    } else if (arg_is(c, 1, "set-skip-checksum-validation") && c->argc == 3) {
        if (arg_ll(c, 2, &v, NULL))
            return 1;
        atomic_store(&rdb_skip_checksum, v != 0);
        reply_ok(c);
    } else if (arg_is(c, 1, "segfault") && c->argc == 2) {
        /* the crash report (src/server/crash.c) is what is tested */
        raise(SIGSEGV);
        reply_ok(c);
    } else {
        return 0;
    }
    return 1;
}

static struct cmd cmds[] = {
    {"save", save_command, 1, "admin noscript no_async_loading no_multi", "", NULL, "server", "Synchronously save the dataset to disk"},
    {"bgsave", bgsave_command, -1, "admin noscript no_async_loading", "", NULL, "server", "Asynchronously save the dataset to disk"},
    {"lastsave", lastsave_command, 1, "loading stale fast", "@admin @dangerous", NULL, "server", "Get the UNIX time stamp of the last successful save to disk"},
};

void cmd_persist_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
