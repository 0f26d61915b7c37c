/* Stream consumer groups (Redis 7.0 semantics): XGROUP, XACK, XREADGROUP (BLOCK through
 * blocking.c) and XINFO. XPENDING, XCLAIM, XAUTOCLAIM and the AOF forms these commands log are
 * in cmd_stream_pel.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/blocking.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/multi.h"
#include "cmd/propagate.h"
#include "cmd/stream_int.h"
#include "core/config.h"

/* blocking.c: block XREADGROUP ... BLOCK ms after a first try served nothing, until an entry
 * arrives for the group, the key or the group goes (an error), or ms passes (0 = forever). */

#define ERR_XGROUP_KEY                                                                         \
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "  \
    "to use the MKSTREAM option to create an empty stream automatically."

/* ---- XGROUP ---- */

static void xgroup_help(struct conn *c)
{
    static const char *lines[] = {
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    };
    reply_array(c, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        reply_status(c, lines[i]);
}

static void subcmd_syntax(struct conn *c, const char *container)
{
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s "
                    "HELP.", (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p,
                 container);
}

static void xgroup_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it = NULL;
    struct tstream *t = NULL;
    struct sgroup *g = NULL;
    long long entries_read = SCG_INVALID_ENTRIES_READ;
    int mkstream = 0, wrong, create, setid;

    if (c->argc == 2 && arg_is(c, 1, "help")) {
        xgroup_help(c);
        return;
    }
    if (c->argc < 4) {
        subcmd_syntax(c, "XGROUP");
        return;
    }
    create = arg_is(c, 1, "create");
    setid = arg_is(c, 1, "setid");
    if (create || setid) {
        for (int i = 5; i < c->argc;) {
            if (create && arg_is(c, i, "mkstream")) {
                mkstream = 1;
                i++;
            } else if (arg_is(c, i, "entriesread") && i + 1 < c->argc) {
                if (arg_ll(c, i + 1, &entries_read, NULL))
                    return;
                if (entries_read < 0 && entries_read != SCG_INVALID_ENTRIES_READ) {
                    reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                    return;
                }
                i += 2;
            } else {
                subcmd_syntax(c, "XGROUP");
                return;
            }
        }
    }
    /* CREATE and CREATECONSUMER are denied over maxmemory (denyoom in Redis), the rest free
     * memory and always run. store_make_room wants no stripe held: under the AOF's hold or in
     * EXEC the check is skipped. */
    if ((create || arg_is(c, 1, "createconsumer")) && cfg.maxmemory > 0 && !store_held &&
        store_make_room(s)) {
        reply_error(c, ERR_OOM);
        return;
    }
    arg_key(c, 2, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    t = stream_of(it);
    if (!t && !(create && mkstream)) {
        reply_error(c, ERR_XGROUP_KEY);
        goto out;
    }
    const struct slice *gn = &c->argv[3];
    if (t)
        g = scg_find(t, gn->p, gn->n);
    if (!g && (setid || arg_is(c, 1, "createconsumer") || arg_is(c, 1, "delconsumer"))) {
        reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'", (int)gn->n,
                     gn->p, (int)c->argv[2].n, c->argv[2].p);
        goto out;
    }
    size_t before = it ? item_value_mem(it) : 0;
    if (create && c->argc >= 5 && c->argc <= 8) {
        struct sid id;
        if (c->argv[4].n == 1 && c->argv[4].p[0] == '$') {
            id = t ? t->last_id : (struct sid){0, 0};
        } else if (stream_parse_id(c, &c->argv[4], &id, 0, 1, NULL)) {
            goto out;
        }
        if (g) {
            reply_error(c, "BUSYGROUP Consumer Group name already exists");
            goto out;
        }
        if (!t) {
            struct tstream *nt = tstream_create();
            if (!nt) {
                reply_error(c, "ERR out of memory");
                goto out;
            }
            if (!(it = coll_put(c, &k, OBJ_STREAM, nt)))
                goto out;
            t = nt;
            before = item_value_mem(it);
        }
        if (!scg_create(t, gn->p, gn->n, &id, entries_read)) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        notify_event(NOTIFY_STREAM, "xgroup-create", &k);
        reply_ok(c);
    } else if (setid && (c->argc == 5 || c->argc == 7)) {
        struct sid id;
        if (c->argv[4].n == 1 && c->argv[4].p[0] == '$') {
            id = t->last_id;
        } else if (stream_parse_id(c, &c->argv[4], &id, 0, 0, NULL)) {
            goto out;
        }
        g->last_id = id;
        g->entries_read = entries_read;
        cmd_modified_quiet(c, &k);
        notify_event(NOTIFY_STREAM, "xgroup-setid", &k);
        reply_ok(c);
    } else if (arg_is(c, 1, "destroy") && c->argc == 4) {
        if (g) {
            scg_destroy(t, g);
            notify_event(NOTIFY_STREAM, "xgroup-destroy", &k);
            reply_int(c, 1);
        } else {
            reply_int(c, 0);
        }
    } else if (arg_is(c, 1, "createconsumer") && c->argc == 5) {
        const struct slice *cn = &c->argv[4];
        if (scg_cons_find(g, cn->p, cn->n)) {
            reply_int(c, 0);
        } else if (!scg_cons_create(t, g, cn->p, cn->n, conn_now(c))) {
            reply_error(c, "ERR out of memory");
        } else {
            notify_event(NOTIFY_STREAM, "xgroup-createconsumer", &k);
            reply_int(c, 1);
        }
    } else if (arg_is(c, 1, "delconsumer") && c->argc == 5) {
        struct scons *cs = scg_cons_find(g, c->argv[4].p, c->argv[4].n);
        reply_int(c, cs ? (long long)scg_cons_delete(t, g, cs) : 0);
        if (cs)
            notify_event(NOTIFY_STREAM, "xgroup-delconsumer", &k);
    } else {
        subcmd_syntax(c, "XGROUP");
        goto out;
    }
    if (it)
        coll_done(c, &k, it, before, 0);
out:
    store_unlock(s, k.stripe);
}

/* ---- XACK ---- */

static void xack_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct sgroup *g = NULL;
    struct sid id;
    int wrong;
    long long acked = 0;

    if (!(g = stream_group_locked(c, &k, 1, &it, &wrong))) {
        if (!wrong)
            reply_int(c, 0);
        goto out;
    }
    /* all or nothing: every ID is checked before the first is acknowledged */
    for (int j = 3; j < c->argc; j++)
        if (stream_parse_id(c, &c->argv[j], &id, 0, 1, NULL))
            goto out;
    size_t before = item_value_mem(it);
    for (int j = 3; j < c->argc; j++) {
        stream_parse_id(c, &c->argv[j], &id, 0, 1, NULL);
        struct snack *nk = scg_pel_find(g, &id);
        if (nk) {
            scg_pel_del(stream_of(it), g, nk);
            acked++;
        }
    }
    coll_done(c, &k, it, before, 0);
    reply_int(c, acked);
out:
    store_unlock(s, k.stripe);
}

/* ---- XREADGROUP ---- */

static __thread int rg_retry;    /* XREADGROUP retried for a blocked client (blocking.c) */
static __thread int rg_marking;  /* registering it: its ">" IDs carry the stream's last ID */
static __thread int rg_served;

struct rg_args {
    long long count;  /* 0 = all */
    long long block;  /* -1 = none */
    int noack;
    int gi;           /* index of the group name (the consumer follows) */
    int first, nkeys; /* the keys, then as many IDs */
};

/* Parse XREADGROUP (Redis's xreadCommand order of checks). Replies and returns -1 on error. */
static int xrg_parse(struct conn *c, struct rg_args *a)
{
    memset(a, 0, sizeof(*a));
    a->block = -1;
    for (int j = 1; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "count") && more) {
            if (arg_ll(c, ++j, &a->count, NULL))
                return -1;
            if (a->count < 0)
                a->count = 0;
        } else if (arg_is(c, j, "block") && more) {
            if (block_arg_ms(c, ++j, &a->block))
                return -1;
        } else if (arg_is(c, j, "streams") && more) {
            a->first = j + 1;
            if ((c->argc - a->first) % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an "
                               "ID or '$' must be specified.");
                return -1;
            }
            a->nkeys = (c->argc - a->first) / 2;
            break;
        } else if (arg_is(c, j, "group") && more >= 2) {
            a->gi = j + 1;
            j += 2;
        } else if (arg_is(c, j, "noack")) {
            a->noack = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (!a->first) {
        reply_error(c, ERR_SYNTAX);
        return -1;
    }
    if (!a->gi) {
        reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return -1;
    }
    return 0;
}

/* Insert the header of the XREADGROUP reply (a map of n keys) before the bytes written since
 * rel (an offset from the buffer's read position: appends may compact the buffer). */
static void reply_insert_header(struct conn *c, size_t rel, long long n)
{
    char hdr[32];
    int hn = snprintf(hdr, sizeof(hdr), c->resp > 2 ? "%%%lld\r\n" : "*%lld\r\n", n);
    size_t end = c->wbuf.wpos - c->wbuf.rpos;

    reply_raw(c, hdr, (size_t)hn);
    if (c->flags & CONN_CLOSE_ASAP)
        return;
    char *base = c->wbuf.data + c->wbuf.rpos;
    memmove(base + rel + hn, base + rel, end - rel);
    memcpy(base + rel, hdr, (size_t)hn);
}

/* Whether ">" has something for group g of t: an entry after the group's last ID; or, for a
 * blocked client's retry, an XADD since it blocked (the stream's last ID past mark, its last ID
 * then) that moved the stream past the group even though the entry is gone already (XADD ...
 * MAXLEN 0): Redis 7.0 serves its blocked reader then, with the stream and no entries. */
static int xrg_has_new(const struct tstream *t, const struct sgroup *g, const struct sid *mark)
{
    struct sid maxid;

    if (tstream_last_valid_id(t, &maxid) && sid_cmp(&maxid, &g->last_id) > 0)
        return 1;
    return mark && sid_cmp(&t->last_id, &g->last_id) > 0 && sid_cmp(&t->last_id, mark) > 0;
}

/* Serve XREADGROUP: 1 when something was replied (entries or an error), 0 when there is
 * nothing to serve (a null reply is written only when emit_null). retry: a blocked client's
 * retry, for which the key or group gone is an error (Redis's "no longer exists"). */
static int xrg_serve(struct conn *c, const struct rg_args *a, int emit_null, int retry)
{
    struct store *s = conn_store(c);
    const struct slice *gname = &c->argv[a->gi], *cname = &c->argv[a->gi + 1];
    int nkeys = a->nkeys, ret = 1, nserve = 0, prop = cmd_prop_on(c);
    /* the client is blocked: a retry, or the try just after it registered (a change since
     * its first try happened while it was blocked, as Redis would have it) */
    int blocked = retry || rg_marking;
    struct skey *keys;
    struct sid *ids;
    struct sgroup **groups;

    ids = malloc((sizeof(*ids) * 2 + sizeof(*groups)) * (size_t)nkeys);
    if (!ids) {
        reply_error(c, "ERR out of memory");
        return 1;
    }
    struct sid *marks = ids + nkeys; /* ">" of a blocked client: the stream's last ID then */
    groups = (struct sgroup **)(ids + 2 * nkeys);
    keys = keyset_resolve(c, a->first, 1, nkeys);
    if (!keys) {
        free(ids);
        return 1;
    }
    store_lock_keys(s, keys, nkeys);
    for (int i = 0; i < nkeys; i++) {
        const struct slice *id = &c->argv[a->first + nkeys + i];
        struct item *it = store_lookup_write_locked(s, &keys[i], conn_now(c));
        if (it && it->type != OBJ_STREAM) {
            if (blocked)
                reply_error(c, "UNBLOCKED the stream key no longer exists");
            else
                reply_error(c, ERR_WRONGTYPE);
            goto out;
        }
        groups[i] = it ? scg_find(stream_of(it), gname->p, gname->n) : NULL;
        if (!groups[i]) {
            if (blocked && !it)
                reply_error(c, "UNBLOCKED the stream key no longer exists");
            else if (blocked)
                reply_error(c, "NOGROUP the consumer group this client was blocked on no "
                               "longer exists");
            else
                reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s' in "
                                "XREADGROUP with GROUP option", (int)keys[i].n, keys[i].p,
                             (int)gname->n, gname->p);
            goto out;
        }
        if (id->n == 1 && id->p[0] == '$') {
            reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want "
                           "to read the history of this consumer by specifying a proper ID, or "
                           "use the > ID to get new messages. The $ ID would just return an "
                           "empty result set.");
            goto out;
        }
        marks[i].ms = marks[i].seq = UINT64_MAX; /* none: nothing is past it */
        if (id->n == 1 && id->p[0] == '>') {
            ids[i].ms = ids[i].seq = UINT64_MAX;
        } else if (id->n > 1 && id->p[0] == '>' && (rg_retry || rg_marking)) {
            struct slice m = {id->p + 1, id->n - 1};
            ids[i].ms = ids[i].seq = UINT64_MAX;
            if (stream_parse_id(c, &m, &marks[i], 0, 1, NULL))
                goto out;
        } else if (stream_parse_id(c, id, &ids[i], 0, 1, NULL)) {
            goto out;
        }
        if (!(ids[i].ms == UINT64_MAX && ids[i].seq == UINT64_MAX))
            nserve++; /* history is always served (the largest ID means ">", as in Redis) */
        else if (xrg_has_new(stream_of(it), groups[i], &marks[i]) &&
                 !(retry && stream_key_repeated(keys, i)))
            nserve++;
    }
    if (!nserve) {
        ret = emit_null;
        if (emit_null)
            reply_null_array(c);
        goto out;
    }
    /* a key named twice is served twice, the second time from where the first left off;
     * so the number served is known at the end and the header is inserted then */
    size_t rel = c->wbuf.wpos - c->wbuf.rpos;
    long long nserved = 0;
    int64_t now = conn_now(c);
    for (int i = 0; i < nkeys; i++) {
        struct item *it = store_lookup_write_locked(s, &keys[i], now);
        struct tstream *t = stream_of(it);
        struct sgroup *g = groups[i];
        int history = !(ids[i].ms == UINT64_MAX && ids[i].seq == UINT64_MAX);
        struct slice key = {keys[i].p, keys[i].n};

        if (!history && (!xrg_has_new(t, g, &marks[i]) || (retry && stream_key_repeated(keys, i))))
            continue;
        size_t before = item_value_mem(it);
        nserved++;
        if (c->resp == 2)
            reply_array(c, 2);
        reply_bulk(c, keys[i].p, keys[i].n);
        struct scons *cs = scg_cons_find(g, cname->p, cname->n);
        int created = 0;
        if (!cs) {
            if (!(cs = scg_cons_create(t, g, cname->p, cname->n, now))) {
                reply_error(c, "ERR out of memory");
                c->flags |= CONN_CLOSE_ASAP;
                break;
            }
            created = 1;
            notify_event(NOTIFY_STREAM, "xgroup-createconsumer", &keys[i]);
        }
        cs->seen = now;
        long long n = 0;
        if (history) {
            /* the consumer's own pending entries after the ID */
            struct sid start = ids[i];
            size_t j0 = stream_id_incr(&start) ? cs->pel.n : spel_seek(&cs->pel, &start), j;
            for (j = j0; j < cs->pel.n && (a->count <= 0 || n < a->count); j++)
                n++;
            reply_array(c, n);
            for (j = j0; j < j0 + (size_t)n; j++) {
                struct snack *nk = cs->pel.v[j];
                if (stream_reply_entry_id(c, t, &nk->id)) {
                    nk->dtime = now;
                    nk->dcount++;
                    if (prop)
                        stream_prop_claim(c, &key, g, &nk->id, nk);
                } else {
                    /* acknowledged by nobody, deleted by someone: the ID and no fields */
                    reply_array(c, 2);
                    stream_reply_id(c, &nk->id);
                    reply_null_array(c);
                }
            }
            if (prop && created && !n)
                stream_prop_consumer(c, &key, g, cs);
        } else {
            struct sid start = g->last_id;
            struct spos pos = {0}, p0;
            struct sent e;
            int more = stream_id_incr(&start) == 0 && tstream_seek(t, &start, &pos);
            p0 = pos;
            while (more && (a->count <= 0 || n < a->count)) {
                n++;
                more = tstream_next(t, &pos);
            }
            reply_array(c, n);
            pos = p0;
            for (long long j = 0; j < n; j++) {
                tstream_get(t, &pos, &e);
                struct sid id = e.id;
                stream_reply_entry(c, &e);
                tstream_next(t, &pos);
                if (sid_cmp(&id, &g->last_id) > 0) {
                    if (g->entries_read != SCG_INVALID_ENTRIES_READ &&
                        !scg_range_has_tombstones(t, &id))
                        g->entries_read = (long long)((uint64_t)g->entries_read + 1);
                    else if (t->entries_added)
                        g->entries_read = scg_estimate_distance(t, &id);
                    g->last_id = id;
                }
                if (a->noack)
                    continue;
                struct snack *nk = scg_pel_find(g, &id);
                if (nk) {
                    if (scg_pel_move(t, nk, cs)) {
                        c->flags |= CONN_CLOSE_ASAP;
                        break;
                    }
                    nk->dtime = now;
                    nk->dcount = 1;
                } else if (!(nk = scg_pel_add(t, g, cs, &id, now, 1))) {
                    c->flags |= CONN_CLOSE_ASAP;
                    break;
                }
                if (prop)
                    stream_prop_claim(c, &key, g, &id, nk);
            }
            if (prop && n && a->noack) {
                /* as Redis: the group's last ID goes with each XCLAIM (LASTID), so XGROUP
                 * SETID ... ENTRIESREAD follows only under NOACK, which logs no XCLAIM */
                if (created)
                    stream_prop_consumer(c, &key, g, cs);
                stream_prop_setid(c, &key, g);
            } else if (prop && created && !n) {
                stream_prop_consumer(c, &key, g, cs);
            }
        }
        coll_done(c, &keys[i], it, before, 0);
    }
    reply_insert_header(c, rel, nserved);
out:
    store_unlock_keys(s, keys, nkeys);
    free(ids);
    return ret;
}

static int xreadgroup_try(struct conn *c)
{
    struct rg_args a;

    if (xrg_parse(c, &a))
        return 1;
    return xrg_serve(c, &a, 0, 0);
}

/* A blocked client's retry: the command (cmd, its entry) runs again as a whole through
 * cmd_exec, so what it does is propagated under its stripes. 1 when it was served. */
static int xreadgroup_retry(struct conn *c, const struct cmd *cmd)
{
    rg_retry = 1;
    rg_served = 0;
    cmd_exec(c, cmd);
    rg_retry = 0;
    return rg_served;
}

/* Block c's XREADGROUP (a, parsed): each ">" is registered as ">ms-seq", the stream's last
 * ID now, so that a retry can tell an XADD since from the other writes that wake it. */
static void xrg_block(struct conn *c, const struct rg_args *a)
{
    struct store *s = conn_store(c);
    struct slice *sv = c->argv, *v;
    char (*ids)[48];

    v = malloc(sizeof(*v) * (size_t)c->argc + sizeof(*ids) * (size_t)a->nkeys);
    if (!v) {
        reply_error(c, "ERR out of memory");
        return;
    }
    ids = (void *)(v + c->argc);
    memcpy(v, c->argv, sizeof(*v) * (size_t)c->argc);
    for (int i = 0; i < a->nkeys; i++) {
        struct slice *id = &v[a->first + a->nkeys + i], *key = &v[a->first + i];
        struct sid last = {0, 0};
        struct skey k;
        struct item *it;
        if (!(id->n == 1 && id->p[0] == '>'))
            continue;
        store_key(s, &k, c->db, key->p, key->n);
        store_lock(s, k.stripe);
        it = store_lookup_write_locked(s, &k, conn_now(c));
        if (it && it->type == OBJ_STREAM)
            last = stream_of(it)->last_id;
        store_unlock(s, k.stripe);
        id->n = (size_t)snprintf(ids[i], sizeof(ids[i]), ">%llu-%llu",
                                 (unsigned long long)last.ms, (unsigned long long)last.seq);
        id->p = ids[i];
    }
    c->argv = v;
    rg_marking = 1;
    block_register(c, cmd_current, block_deadline(a->block));
    rg_marking = 0;
    c->argv = sv;
    free(v);
}

static void xreadgroup_command(struct conn *c)
{
    struct rg_args a;

    if (xrg_parse(c, &a))
        return; /* an error: nothing is logged */
    if (rg_retry)
        rg_served = xrg_serve(c, &a, 0, 1);
    else if (a.block < 0 || tx_in_exec(c) || aof_loading())
        xrg_serve(c, &a, 1, 0); /* no BLOCK, or inside EXEC (never blocks) */
    else if (!xrg_serve(c, &a, 0, 0))
        xrg_block(c, &a);
}

/* How XREADGROUP blocks: every waiter of a key retries (groups and consumers differ), and a
 * retry runs the whole command again. */
static const struct block_spec xreadgroup_block_spec = {
    .try_fn = xreadgroup_try, .retry_fn = xreadgroup_retry, .reader = 1};

/* ---- XINFO ---- */

static void xinfo_help(struct conn *c)
{
    static const char *lines[] = {
        "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CONSUMERS <key> <groupname>",
        "    Show consumers of <groupname>.",
        "GROUPS <key>",
        "    Show the stream consumer groups.",
        "STREAM <key> [FULL [COUNT <count>]",
        "    Show information about the stream.",
        "HELP",
        "    Prints this help.",
    };
    reply_array(c, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        reply_status(c, lines[i]);
}

static void reply_lag(struct conn *c, const struct tstream *t, const struct sgroup *g)
{
    long long lag;
    if (scg_lag(t, g, &lag))
        reply_int(c, lag);
    else
        reply_null(c);
}

static void reply_entries_read(struct conn *c, const struct sgroup *g)
{
    if (g->entries_read != SCG_INVALID_ENTRIES_READ)
        reply_int(c, g->entries_read);
    else
        reply_null(c);
}

static void xinfo_stream(struct conn *c, struct tstream *t)
{
    int full = 0;
    long long count = 10;
    struct sid first = {0, 0}, last;
    int argc = c->argc - 3;

    if (argc) {
        if ((argc != 1 && argc != 3) || !arg_is(c, 3, "full") ||
            (argc == 3 && !arg_is(c, 4, "count"))) {
            subcmd_syntax(c, "XINFO");
            return;
        }
        if (argc == 3 && arg_ll(c, 5, &count, NULL))
            return;
        if (count < 0)
            count = 10;
        full = 1;
    }
    reply_map(c, full ? 9 : 10);
    reply_cstr(c, "length");
    reply_int(c, (long long)t->len);
    reply_cstr(c, "radix-tree-keys");
    reply_int(c, (long long)t->n);
    reply_cstr(c, "radix-tree-nodes");
    reply_int(c, (long long)(t->n ? t->n * 2 : 1));
    reply_cstr(c, "last-generated-id");
    stream_reply_id(c, &t->last_id);
    reply_cstr(c, "max-deleted-entry-id");
    stream_reply_id(c, &t->max_deleted_id);
    reply_cstr(c, "entries-added");
    reply_int(c, (long long)t->entries_added);
    reply_cstr(c, "recorded-first-entry-id");
    if (!tstream_first_id(t, &first) && t->entries_added)
        first = (struct sid){0, 0};
    stream_reply_id(c, &first);
    if (!full) {
        reply_cstr(c, "groups");
        reply_int(c, (long long)t->ngroups);
        reply_cstr(c, "first-entry");
        if (!t->len || !stream_reply_entry_id(c, t, &first))
            reply_null(c);
        reply_cstr(c, "last-entry");
        if (!tstream_last_valid_id(t, &last) || !stream_reply_entry_id(c, t, &last))
            reply_null(c);
        return;
    }
    reply_cstr(c, "entries");
    {
        struct spos pos;
        struct sent e;
        long long n = 0;
        int more = t->len && tstream_seek(t, &first, &pos);
        struct spos p0 = pos;
        while (more && (count == 0 || n < count)) {
            n++;
            more = tstream_next(t, &pos);
        }
        reply_array(c, n);
        pos = p0;
        for (long long i = 0; i < n; i++) {
            tstream_get(t, &pos, &e);
            stream_reply_entry(c, &e);
            tstream_next(t, &pos);
        }
    }
    reply_cstr(c, "groups");
    reply_array(c, (long long)t->ngroups);
    for (size_t i = 0; i < t->ngroups; i++) {
        const struct sgroup *g = t->groups[i];
        size_t np = count && (size_t)count < g->pel.n ? (size_t)count : g->pel.n;
        reply_map(c, 7);
        reply_cstr(c, "name");
        reply_bulk(c, g->name, g->nlen);
        reply_cstr(c, "last-delivered-id");
        stream_reply_id(c, &g->last_id);
        reply_cstr(c, "entries-read");
        reply_entries_read(c, g);
        reply_cstr(c, "lag");
        reply_lag(c, t, g);
        reply_cstr(c, "pel-count");
        reply_int(c, (long long)g->pel.n);
        reply_cstr(c, "pending");
        reply_array(c, (long long)np);
        for (size_t j = 0; j < np; j++) {
            const struct snack *nk = g->pel.v[j];
            reply_array(c, 4);
            stream_reply_id(c, &nk->id);
            reply_bulk(c, nk->owner->name, nk->owner->nlen);
            reply_int(c, nk->dtime);
            reply_int(c, (long long)nk->dcount);
        }
        reply_cstr(c, "consumers");
        reply_array(c, (long long)g->ncons);
        for (size_t j = 0; j < g->ncons; j++) {
            const struct scons *cs = g->cons[j];
            size_t cp = count && (size_t)count < cs->pel.n ? (size_t)count : cs->pel.n;
            reply_map(c, 4);
            reply_cstr(c, "name");
            reply_bulk(c, cs->name, cs->nlen);
            reply_cstr(c, "seen-time");
            reply_int(c, cs->seen);
            reply_cstr(c, "pel-count");
            reply_int(c, (long long)cs->pel.n);
            reply_cstr(c, "pending");
            reply_array(c, (long long)cp);
            for (size_t m = 0; m < cp; m++) {
                const struct snack *nk = cs->pel.v[m];
                reply_array(c, 3);
                stream_reply_id(c, &nk->id);
                reply_int(c, nk->dtime);
                reply_int(c, (long long)nk->dcount);
            }
        }
    }
}

static void xinfo_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct tstream *t;
    int wrong;

    if (arg_is(c, 1, "help")) {
        xinfo_help(c);
        return;
    }
    if (c->argc < 3) {
        subcmd_syntax(c, "XINFO");
        return;
    }
    arg_key(c, 2, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_error(c, ERR_NOKEY);
        goto out;
    }
    t = stream_of(it);
    if (arg_is(c, 1, "consumers") && c->argc == 4) {
        struct sgroup *g = scg_find(t, c->argv[3].p, c->argv[3].n);
        if (!g) {
            reply_errorf(c, "NOGROUP No such consumer group '%.*s' for key name '%.*s'",
                         (int)c->argv[3].n, c->argv[3].p, (int)c->argv[2].n, c->argv[2].p);
            goto out;
        }
        int64_t now = conn_now(c);
        reply_array(c, (long long)g->ncons);
        for (size_t i = 0; i < g->ncons; i++) {
            const struct scons *cs = g->cons[i];
            reply_map(c, 3);
            reply_cstr(c, "name");
            reply_bulk(c, cs->name, cs->nlen);
            reply_cstr(c, "pending");
            reply_int(c, (long long)cs->pel.n);
            reply_cstr(c, "idle");
            reply_int(c, stream_idle_ms(now, cs->seen) < 0 ? 0 : stream_idle_ms(now, cs->seen));
        }
    } else if (arg_is(c, 1, "groups") && c->argc == 3) {
        reply_array(c, (long long)t->ngroups);
        for (size_t i = 0; i < t->ngroups; i++) {
            const struct sgroup *g = t->groups[i];
            reply_map(c, 6);
            reply_cstr(c, "name");
            reply_bulk(c, g->name, g->nlen);
            reply_cstr(c, "consumers");
            reply_int(c, (long long)g->ncons);
            reply_cstr(c, "pending");
            reply_int(c, (long long)g->pel.n);
            reply_cstr(c, "last-delivered-id");
            stream_reply_id(c, &g->last_id);
            reply_cstr(c, "entries-read");
            reply_entries_read(c, g);
            reply_cstr(c, "lag");
            reply_lag(c, t, g);
        }
    } else if (arg_is(c, 1, "stream")) {
        xinfo_stream(c, t);
    } else {
        subcmd_syntax(c, "XINFO");
    }
out:
    store_unlock(s, k.stripe);
}

static struct cmd xgroup_subs[] = {
    {"xgroup|create", xgroup_command, -5, "write denyoom tc:keep-watch", "@stream", "RW,insert index:2 range:0,1,0", "stream", "Create a consumer group on a stream"},
    {"xgroup|setid", xgroup_command, -5, "write tc:keep-watch tc:signals", "@stream", "RW,update index:2 range:0,1,0", "stream", "Move a consumer group's last delivered ID"},
    {"xgroup|destroy", xgroup_command, 4, "write tc:keep-watch", "@stream", "RW,delete index:2 range:0,1,0", "stream", "Remove a consumer group"},
    {"xgroup|createconsumer", xgroup_command, 5, "write denyoom tc:keep-watch", "@stream", "RW,insert index:2 range:0,1,0", "stream", "Add a consumer to a group"},
    {"xgroup|delconsumer", xgroup_command, 5, "write tc:keep-watch", "@stream", "RW,delete index:2 range:0,1,0", "stream", "Remove a consumer from a group"},
    {"xgroup|help", xgroup_command, 2, "loading stale", "@stream", NULL, "stream", "List the XGROUP subcommands"},
    {NULL},
};

static struct cmd xinfo_subs[] = {
    {"xinfo|consumers", xinfo_command, 4, "readonly", "@stream", "RO,access index:2 range:0,1,0", "stream", "The consumers of a group"},
    {"xinfo|groups", xinfo_command, 3, "readonly", "@stream", "RO,access index:2 range:0,1,0", "stream", "The consumer groups of a stream"},
    {"xinfo|stream", xinfo_command, -3, "readonly", "@stream", "RO,access index:2 range:0,1,0", "stream", "A stream's length, IDs and entries"},
    {"xinfo|help", xinfo_command, 2, "loading stale", "@stream", NULL, "stream", "List the XINFO subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"xreadgroup", xreadgroup_command, -7, "write blocking tc:prop-explicit", "@stream", "RO,access keyword:STREAMS:4 range:-1,1,2", "stream", "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", NULL, NULL, &xreadgroup_block_spec},
    {"xgroup", xgroup_command, -2, "", "", NULL, "stream", "A container for consumer groups commands", xgroup_subs},
    {"xack", xack_command, -4, "write fast tc:keep-watch", "@stream", "RW,update index:1 range:0,1,0", "stream", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL."},
    {"xinfo", xinfo_command, -2, "", "", NULL, "stream", "A container for stream introspection commands", xinfo_subs},
};

void cmd_stream_cg_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
