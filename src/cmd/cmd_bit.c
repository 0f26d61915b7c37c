/* Bitmap commands on strings: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO (Redis 7.0). */
#include "cmd/cmd.h"
#include "cmd/coll.h"

static const struct cmd cmds[] = {
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

void cmd_bit_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])) - 1);
}
