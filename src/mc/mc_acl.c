/* A logged-in ACL user on the memcached port: memcached's commands that read the server, the
 * keyspace as a whole or an item's metadata, or change settings, are checked as the Redis
 * command that is their nearest equivalent, so they need what Redis asks for it (categories,
 * +command rules, and key patterns where that command has a key):
 *
 *   stats, stats settings|items|slabs|sizes   INFO              @slow @dangerous
 *   stats conns                                CLIENT LIST       @admin @slow @dangerous
 *   stats reset                                CONFIG RESETSTAT  @admin @slow @dangerous
 *   stats detail on|off, verbosity, slabs,
 *   lru, lru_crawler enable|disable|sleep|
 *   tocrawl, cache_memlimit                    CONFIG SET        @admin @slow @dangerous
 *   stats cachedump, stats detail dump,
 *   lru_crawler metadump|mgdump                KEYS *            @keyspace @read @slow @dangerous
 *   lru_crawler crawl                          DEBUG             @admin @slow @dangerous
 *   watch                                      MONITOR           @admin @slow @dangerous
 *   shutdown                                   SHUTDOWN          @admin @slow @dangerous
 *   flush_all                                  FLUSHALL          @keyspace @write @slow @dangerous
 *   me <key>                                   OBJECT IDLETIME <key>  @keyspace @read @slow
 *
 * and the data commands as the Redis command of the same kind: get/gets/mg GET, gat GETEX,
 * touch EXPIRE, set/add/replace/cas/ms SET, append/prepend APPEND, incr/ma INCRBY, decr
 * DECRBY, delete/md DEL (their keys' read/write patterns are checked as before).
 *
 * A denial is logged in ACL LOG as Redis logs one (reason command, or key with the key). */
#include <string.h>

#include "cmd/acl.h"
#include "cmd/cmd.h"
#include "mc/mc_int.h"

static int tok_eq(const struct mc_tok *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0;
}

/* The Redis argv standing for r into av (at most 4 words): its length, 0 when r needs no
 * check (version, quit, mn and the data commands, whose keys are checked elsewhere). */
static int redis_equivalent(const struct mc_req *r, struct slice *av)
{
#define W(i, s) (av[i].p = (s), av[i].n = sizeof(s) - 1)
    const struct mc_tok *sub = r->ntok > 2 ? &r->tok[1] : NULL;

    switch (r->cmd) {
    case MC_STATS:
        if (!sub || tok_eq(sub, "settings") || tok_eq(sub, "items") || tok_eq(sub, "slabs") ||
            tok_eq(sub, "sizes"))
            return W(0, "INFO"), 1;
        if (tok_eq(sub, "conns"))
            return W(0, "CLIENT"), W(1, "LIST"), 2;
        if (tok_eq(sub, "reset"))
            return W(0, "CONFIG"), W(1, "RESETSTAT"), 2;
        if (tok_eq(sub, "detail") && r->ntok >= 4 && !tok_eq(&r->tok[2], "dump"))
            return W(0, "CONFIG"), W(1, "SET"), 2;
        return W(0, "KEYS"), W(1, "*"), 2; /* cachedump, detail dump, anything else */
    case MC_VERBOSITY:
        return W(0, "CONFIG"), W(1, "SET"), 2;
    case MC_SHUTDOWN:
        return W(0, "SHUTDOWN"), 1;
    case MC_FLUSH_ALL:
        return W(0, "FLUSHALL"), 1;
    case MC_ME:
        W(0, "OBJECT");
        W(1, "IDLETIME");
        av[2].p = r->key.p;
        av[2].n = r->key.n;
        return 3;
    case MC_ADMIN:
        if (tok_eq(&r->tok[0], "watch"))
            return W(0, "MONITOR"), 1;
        if (tok_eq(&r->tok[0], "lru_crawler") && sub &&
            (tok_eq(sub, "metadump") || tok_eq(sub, "mgdump")))
            return W(0, "KEYS"), W(1, "*"), 2;
        if (tok_eq(&r->tok[0], "lru_crawler") && sub && tok_eq(sub, "crawl"))
            return W(0, "DEBUG"), 1;
        return W(0, "CONFIG"), W(1, "SET"), 2; /* slabs, lru, lru_crawler's settings,
                                                 * cache_memlimit */
    /* data commands: the command's own category (a user with -@write cannot store through
     * the memcached port); one-key commands with their key, so that one selector must allow
     * both, as in Redis; multi-key gets without (their keys are checked one by one after) */
    case MC_GET: case MC_GETS:
        return W(0, "GET"), 1;
    case MC_GAT: case MC_GATS:
        return W(0, "GETEX"), 1;
    case MC_MG:
        W(0, "GET");
        break;
    case MC_TOUCH:
        W(0, "EXPIRE");
        break;
    case MC_SET: case MC_ADD: case MC_REPLACE: case MC_CAS: case MC_MS:
        W(0, "SET");
        break;
    case MC_APPEND: case MC_PREPEND:
        W(0, "APPEND");
        break;
    case MC_INCR: case MC_MA:
        W(0, "INCRBY");
        break;
    case MC_DECR:
        W(0, "DECRBY");
        break;
    case MC_DELETE: case MC_MD:
        W(0, "DEL");
        break;
    default:
        return 0;
    }
    av[1].p = r->key.p;
    av[1].n = r->key.n;
    return 2;
#undef W
}

static int check(struct conn *c, int n, const struct slice *av)
{
    const struct cmd *cmd, *container = NULL;
    int pos;

    cmd = cmd_resolve(n, av, &container);
    if (!cmd) /* the table always has these: refuse rather than allow if one is missing */
        return 1;
    return acl_check_conn(c, cmd, n, av, "toplevel", &pos) != ACL_OK;
}

int mc_acl_denied(struct conn *c, const struct mc_req *r)
{
    struct slice av[4];
    int n;

    if (TC_LIKELY(c->user == NULL) ||
        atomic_load_explicit(&c->user->allperm, memory_order_relaxed))
        return 0;
    n = redis_equivalent(r, av);
    return n ? check(c, n, av) : 0;
}

int mc_acl_cmd_denied(struct conn *c, const char *name, const char *key, size_t klen)
{
    struct slice av[2] = {{name, strlen(name)}, {key, klen}};

    if (TC_LIKELY(c->user == NULL) ||
        atomic_load_explicit(&c->user->allperm, memory_order_relaxed))
        return 0;
    return check(c, key ? 2 : 1, av);
}
