/* The persistence commands: SAVE, BGSAVE, LASTSAVE (cmd_persist.c), thin callers of
 * src/persist (persist.h there holds the snapshot state, the save rules and INFO). */
#ifndef TC_CMD_PERSIST_H
#define TC_CMD_PERSIST_H

struct conn;

void cmd_persist_setup(void);
/* The persistence subcommands of DEBUG (LOADAOF, AOF-FLUSH-SLEEP,
 * SET-SKIP-CHECKSUM-VALIDATION): 1 when argv[1] was one of them (replied), else 0. */
int cmd_persist_debug(struct conn *c);

#endif
