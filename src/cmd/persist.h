/* The persistence commands: SAVE, BGSAVE, LASTSAVE (cmd_persist.c), thin callers of
 * src/persist (persist.h there holds the snapshot state, the save rules and INFO). */
#ifndef TC_CMD_PERSIST_H
#define TC_CMD_PERSIST_H

#include <stdint.h>

struct conn;

void cmd_persist_setup(void);
/* The persistence subcommands of DEBUG (LOADAOF, AOF-FLUSH-SLEEP,
 * SET-SKIP-CHECKSUM-VALIDATION, and SEGFAULT for the crash report): 1 when argv[1] was one of them (replied), else 0. */
int cmd_persist_debug(struct conn *c);
/* INFO migrate_cached_sockets: MIGRATE's cached connections (cmd_dump.c), those idle for
 * 10 s closed first (now: unix ms). Any thread. */

#endif
