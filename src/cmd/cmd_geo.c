/* Geo commands on sorted sets: GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEOSEARCHSTORE GEORADIUS* (Redis 7.0). */
#include "cmd/cmd.h"
#include "cmd/coll.h"

static const struct cmd cmds[] = {
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL},
};

void cmd_geo_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])) - 1);
}
