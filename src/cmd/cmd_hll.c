/* HyperLogLog commands: PFADD PFCOUNT PFMERGE (Redis 7.0's HYLL string encoding). */
#include "cmd/cmd.h"
#include "cmd/coll.h"

static const struct cmd cmds[] = {
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

void cmd_hll_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])) - 1);
}
