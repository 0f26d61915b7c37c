/* CLUSTER, READONLY, READWRITE and ASKING as Redis 7.0 answers them with cluster-enabled no
 * (twincache has no cluster mode): every CLUSTER subcommand, READONLY, READWRITE and ASKING
 * reply that cluster support is disabled, so cluster clients see a standalone server.
 * RESTORE-ASKING is RESTORE (cmd_dump.c). */
#include "cmd/cmd.h"

static void cluster_disabled(struct conn *c)
{
    reply_error(c, "ERR This instance has cluster support disabled");
}

static struct cmd cluster_subs[] = {
    {"cluster|addslots", cluster_disabled, -3, "admin stale no_async_loading", "", NULL, "cluster", "Assign new hash slots to receiving node"},
    {"cluster|addslotsrange", cluster_disabled, -4, "admin stale no_async_loading", "", NULL, "cluster", "Assign new hash slots to receiving node"},
    {"cluster|bumpepoch", cluster_disabled, 2, "admin stale no_async_loading", "", NULL, "cluster", "Advance the cluster config epoch"},
    {"cluster|count-failure-reports", cluster_disabled, 3, "admin stale", "", NULL, "cluster", "Return the number of failure reports active for a given node"},
    {"cluster|countkeysinslot", cluster_disabled, 3, "stale", "", NULL, "cluster", "Return the number of local keys in the specified hash slot"},
    {"cluster|delslots", cluster_disabled, -3, "admin stale no_async_loading", "", NULL, "cluster", "Set hash slots as unbound in receiving node"},
    {"cluster|delslotsrange", cluster_disabled, -4, "admin stale no_async_loading", "", NULL, "cluster", "Set hash slots as unbound in receiving node"},
    {"cluster|failover", cluster_disabled, -2, "admin stale no_async_loading", "", NULL, "cluster", "Forces a replica to perform a manual failover of its master."},
    {"cluster|flushslots", cluster_disabled, 2, "admin stale no_async_loading", "", NULL, "cluster", "Delete a node's own slots information"},
    {"cluster|forget", cluster_disabled, 3, "admin stale no_async_loading", "", NULL, "cluster", "Remove a node from the nodes table"},
    {"cluster|getkeysinslot", cluster_disabled, 4, "stale", "", NULL, "cluster", "Return local key names in the specified hash slot"},
    {"cluster|help", cluster_disabled, 2, "loading stale", "", NULL, "cluster", "Show helpful text about the different subcommands"},
    {"cluster|info", cluster_disabled, 2, "stale", "", NULL, "cluster", "Provides info about Redis Cluster node state"},
    {"cluster|keyslot", cluster_disabled, 3, "stale", "", NULL, "cluster", "Returns the hash slot of the specified key"},
    {"cluster|links", cluster_disabled, 2, "stale", "", NULL, "cluster", "Returns a list of all TCP links to and from peer nodes in cluster"},
    {"cluster|meet", cluster_disabled, -4, "admin stale no_async_loading", "", NULL, "cluster", "Force a node cluster to handshake with another node"},
    {"cluster|myid", cluster_disabled, 2, "stale", "", NULL, "cluster", "Return the node id"},
    {"cluster|nodes", cluster_disabled, 2, "stale", "", NULL, "cluster", "Get Cluster config for the node"},
    {"cluster|replicas", cluster_disabled, 3, "admin stale", "", NULL, "cluster", "List replica nodes of the specified master node"},
    {"cluster|replicate", cluster_disabled, 3, "admin stale no_async_loading", "", NULL, "cluster", "Reconfigure a node as a replica of the specified master node"},
    {"cluster|reset", cluster_disabled, -2, "admin noscript stale", "", NULL, "cluster", "Reset a Redis Cluster node"},
    {"cluster|saveconfig", cluster_disabled, 2, "admin stale no_async_loading", "", NULL, "cluster", "Forces the node to save cluster state on disk"},
    {"cluster|set-config-epoch", cluster_disabled, 3, "admin stale no_async_loading", "", NULL, "cluster", "Set the configuration epoch in a new node"},
    {"cluster|setslot", cluster_disabled, -4, "admin stale no_async_loading", "", NULL, "cluster", "Bind a hash slot to a specific node"},
    {"cluster|shards", cluster_disabled, 2, "stale", "", NULL, "cluster", "Get array of cluster slots to node mappings"},
    {"cluster|slaves", cluster_disabled, 3, "admin stale", "", NULL, "cluster", "List replica nodes of the specified master node"},
    {"cluster|slots", cluster_disabled, 2, "stale", "", NULL, "cluster", "Get array of Cluster slot to node mappings"},
    {NULL},
};

static struct cmd cmds[] = {
    {"cluster", cluster_disabled, -2, "", "", NULL, "cluster", "A container for cluster commands", cluster_subs},
    {"readonly", cluster_disabled, 1, "loading stale fast", "@connection", NULL, "cluster", "Enables read queries for a connection to a cluster replica node"},
    {"readwrite", cluster_disabled, 1, "loading stale fast", "@connection", NULL, "cluster", "Disables read queries for a connection to a cluster replica node"},
    {"asking", cluster_disabled, 1, "fast", "@connection", NULL, "cluster", "Sent by cluster clients after an -ASK redirect"},
};

void cmd_cluster_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
