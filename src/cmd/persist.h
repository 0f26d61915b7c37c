/* The persistence commands: SAVE, BGSAVE, LASTSAVE (cmd_persist.c), thin callers of
 * src/persist (persist.h there holds the snapshot state, the save rules and INFO). */
#ifndef TC_CMD_PERSIST_H
#define TC_CMD_PERSIST_H

void cmd_persist_setup(void);

#endif
