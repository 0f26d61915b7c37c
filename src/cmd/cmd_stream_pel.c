/* Stream pending entries lists (Redis 7.0 semantics): XPENDING, XCLAIM, XAUTOCLAIM, and the
 * AOF forms of consumer-group changes that these and XREADGROUP (cmd_stream_cg.c) log. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/coll.h"
#include "cmd/notify.h"
#include "cmd/propagate.h"
#include "cmd/stream_int.h"

/* The AOF form of group changes (Redis's propagation): XREADGROUP, XCLAIM and XAUTOCLAIM log
 * what they did as XCLAIM ... TIME t RETRYCOUNT n FORCE JUSTID LASTID id per pending entry
 * (XREADGROUP ... NOACK, which leaves none, as XGROUP SETID ... ENTRIESREAD n) and XGROUP
 * CREATECONSUMER, so a replay rebuilds the same PEL whatever the clock says. As in Redis
 * 7.0, a group's entries-read is not carried by XCLAIM: a replay estimates it. The forms are propagated explicitly (cmd_propagate) under
 * the stripes the command holds; a command that changed nothing propagates nothing. */
static void cg_exec(struct conn *c, int argc, struct slice *argv)
{
    cmd_propagate(c, argc, argv);
}

static struct slice sl_str(const char *s)
{
    return (struct slice){s, strlen(s)};
}

static void fmt_id(char *buf, size_t cap, const struct sid *id)
{
    snprintf(buf, cap, "%llu-%llu", (unsigned long long)id->ms, (unsigned long long)id->seq);
}

/* XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last */
void stream_prop_claim(struct conn *c, const struct slice *key, const struct sgroup *g,
                       const struct sid *id, const struct snack *nk)
{
    char ids[48], last[48], t[24], n[24];
    struct slice a[14];

    fmt_id(ids, sizeof(ids), id);
    fmt_id(last, sizeof(last), &g->last_id);
    snprintf(t, sizeof(t), "%lld", (long long)nk->dtime);
    snprintf(n, sizeof(n), "%llu", (unsigned long long)nk->dcount);
    a[0] = sl_str("XCLAIM");
    a[1] = *key;
    a[2] = (struct slice){g->name, g->nlen};
    a[3] = (struct slice){nk->owner->name, nk->owner->nlen};
    a[4] = sl_str("0");
    a[5] = sl_str(ids);
    a[6] = sl_str("TIME");
    a[7] = sl_str(t);
    a[8] = sl_str("RETRYCOUNT");
    a[9] = sl_str(n);
    a[10] = sl_str("FORCE");
    a[11] = sl_str("JUSTID");
    a[12] = sl_str("LASTID");
    a[13] = sl_str(last);
    cg_exec(c, 14, a);
}

/* A pending entry that is gone from the stream was dropped: XCLAIM of a missing entry drops
 * it on replay too. */
void stream_prop_drop(struct conn *c, const struct slice *key, const struct sgroup *g,
                      const struct sid *id, const struct scons *owner)
{
    char ids[48];
    struct slice a[7];

    fmt_id(ids, sizeof(ids), id);
    a[0] = sl_str("XCLAIM");
    a[1] = *key;
    a[2] = (struct slice){g->name, g->nlen};
    a[3] = (struct slice){owner->name, owner->nlen};
    a[4] = sl_str("0");
    a[5] = sl_str(ids);
    a[6] = sl_str("JUSTID");
    cg_exec(c, 7, a);
}

void stream_prop_setid(struct conn *c, const struct slice *key, const struct sgroup *g)
{
    char ids[48], er[24];
    struct slice a[7];

    fmt_id(ids, sizeof(ids), &g->last_id);
    snprintf(er, sizeof(er), "%lld", g->entries_read);
    a[0] = sl_str("XGROUP");
    a[1] = sl_str("SETID");
    a[2] = *key;
    a[3] = (struct slice){g->name, g->nlen};
    a[4] = sl_str(ids);
    a[5] = sl_str("ENTRIESREAD");
    a[6] = sl_str(er);
    cg_exec(c, 7, a);
}

void stream_prop_consumer(struct conn *c, const struct slice *key, const struct sgroup *g,
                          const struct scons *cs)
{
    struct slice a[5];

    a[0] = sl_str("XGROUP");
    a[1] = sl_str("CREATECONSUMER");
    a[2] = *key;
    a[3] = (struct slice){g->name, g->nlen};
    a[4] = (struct slice){cs->name, cs->nlen};
    cg_exec(c, 5, a);
}

static void reply_nogroup_key(struct conn *c, const struct slice *key, const struct slice *g)
{
    reply_errorf(c, "NOGROUP No such key '%.*s' or consumer group '%.*s'", (int)key->n, key->p,
                 (int)g->n, g->p);
}

struct sgroup *stream_group_locked(struct conn *c, struct skey *k, int write, struct item **itp,
                                   int *wrong)
{
    struct store *s = conn_store(c);
    struct item *it;

    arg_key(c, 1, k);
    store_lock(s, k->stripe);
    it = write ? coll_write(c, k, OBJ_STREAM, wrong) : coll_read(c, k, OBJ_STREAM, wrong);
    *itp = it;
    if (*wrong || !it)
        return NULL;
    return scg_find(stream_of(it), c->argv[2].p, c->argv[2].n);
}

static int entry_exists(struct tstream *t, const struct sid *id)
{
    struct spos pos;
    struct sent e;

    if (!tstream_seek(t, id, &pos))
        return 0;
    tstream_get(t, &pos, &e);
    return sid_cmp(&e.id, id) == 0;
}

/* ---- XPENDING ---- */

static void xpending_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct sgroup *g = NULL;
    struct sid start = {0, 0}, end = {0, 0};
    long long count = 0, minidle = 0;
    int sx, ex, wrong, summary = c->argc == 3;
    const struct slice *cname = NULL;

    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc >= 6) {
        int si = 3;
        if (arg_is(c, 3, "idle")) {
            if (arg_ll(c, 4, &minidle, NULL))
                return;
            if (c->argc < 8) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
            si += 2;
        }
        if (arg_ll(c, si + 2, &count, NULL))
            return;
        if (count < 0)
            count = 0;
        if (stream_parse_interval(c, si, &start, &sx, 0))
            return;
        if (sx && stream_id_incr(&start)) {
            reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        if (stream_parse_interval(c, si + 1, &end, &ex, UINT64_MAX))
            return;
        if (ex && stream_id_decr(&end)) {
            reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc)
            cname = &c->argv[si + 3];
    }
    if (!(g = stream_group_locked(c, &k, 0, &it, &wrong))) {
        if (!wrong)
            reply_nogroup_key(c, &c->argv[1], &c->argv[2]);
        goto out;
    }
    if (summary) {
        reply_array(c, 4);
        reply_int(c, (long long)g->pel.n);
        if (!g->pel.n) {
            reply_null(c);
            reply_null(c);
            reply_null_array(c);
            goto out;
        }
        stream_reply_id(c, &g->pel.v[0]->id);
        stream_reply_id(c, &g->pel.v[g->pel.n - 1]->id);
        long long n = 0;
        for (size_t i = 0; i < g->ncons; i++)
            n += g->cons[i]->pel.n > 0;
        reply_array(c, n);
        for (size_t i = 0; i < g->ncons; i++) {
            struct scons *cs = g->cons[i];
            if (!cs->pel.n)
                continue;
            reply_array(c, 2);
            reply_bulk(c, cs->name, cs->nlen);
            reply_bulk_ll(c, (long long)cs->pel.n);
        }
        goto out;
    }
    const struct spel *pel = &g->pel;
    if (cname) {
        struct scons *cs = scg_cons_find(g, cname->p, cname->n);
        if (!cs) {
            reply_array(c, 0);
            goto out;
        }
        pel = &cs->pel;
    }
    int64_t now = conn_now(c);
    long long n = 0;
    size_t i0 = spel_seek(pel, &start), i;
    /* count first (the reply header), then emit */
    for (i = i0; i < pel->n && n < count && sid_cmp(&pel->v[i]->id, &end) <= 0; i++)
        if (!minidle || stream_idle_ms(now, pel->v[i]->dtime) >= minidle)
            n++;
    reply_array(c, n);
    for (i = i0; n > 0; i++) {
        const struct snack *nk = pel->v[i];
        if (minidle && stream_idle_ms(now, nk->dtime) < minidle)
            continue;
        reply_array(c, 4);
        stream_reply_id(c, &nk->id);
        reply_bulk(c, nk->owner->name, nk->owner->nlen);
        reply_int(c, stream_idle_ms(now, nk->dtime) < 0 ? 0 : stream_idle_ms(now, nk->dtime));
        reply_int(c, (long long)nk->dcount);
        n--;
    }
out:
    store_unlock(s, k.stripe);
}

/* ---- XCLAIM / XAUTOCLAIM ---- */

struct idvec {
    struct sid *v;
    size_t n, cap;
};

static int idvec_push(struct idvec *a, const struct sid *id)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 16;
        struct sid *nv = realloc(a->v, sizeof(*nv) * nc);
        if (!nv)
            return -1;
        a->v = nv;
        a->cap = nc;
    }
    a->v[a->n++] = *id;
    return 0;
}


/* Give nk to consumer cs (creating it on first use), as a claim does. 0 or -1 (OOM). */
static int claim_one(struct conn *c, struct tstream *t, struct sgroup *g, struct scons **cs,
                     struct snack *nk, int64_t dtime, long long retrycount, int justid)
{
    if (!*cs) {
        const struct slice *cn = &c->argv[3];
        *cs = scg_cons_find(g, cn->p, cn->n);
        if (*cs)
            (*cs)->seen = conn_now(c);
        else if (!(*cs = scg_cons_create(t, g, cn->p, cn->n, conn_now(c))))
            return -1;
        else /* as Redis, a claim that creates its consumer tells so */
            notify_event_key(NOTIFY_STREAM, "xgroup-createconsumer", c->db, c->argv[1].p,
                             c->argv[1].n);
    }
    if (scg_pel_move(t, nk, *cs))
        return -1;
    nk->dtime = dtime;
    if (retrycount >= 0)
        nk->dcount = (uint64_t)retrycount;
    else if (!justid)
        nk->dcount++;
    return 0;
}

static void xclaim_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct tstream *t;
    struct sgroup *g = NULL;
    struct scons *cs = NULL;
    long long minidle, retrycount = -1, dtime = -1;
    int force = 0, justid = 0, wrong, j, last_arg, prop = cmd_prop_on(c);
    struct sid id, last_id = {0, 0};
    int64_t now = conn_now(c);
    struct idvec claimed = {0};

    if (!(g = stream_group_locked(c, &k, 1, &it, &wrong))) {
        if (!wrong)
            reply_nogroup_key(c, &c->argv[1], &c->argv[2]);
        goto out;
    }
    t = stream_of(it);
    if (arg_ll(c, 4, &minidle, "ERR Invalid min-idle-time argument for XCLAIM"))
        goto out;
    if (minidle < 0)
        minidle = 0;
    for (j = 5; j < c->argc; j++) {
        struct slice a = c->argv[j];
        char buf[128], *dash;
        unsigned long long v;
        /* a silent strict parse: the first word that is no ID starts the options */
        if (a.n == 0 || a.n >= sizeof(buf))
            break;
        memcpy(buf, a.p, a.n);
        buf[a.n] = '\0';
        if ((buf[0] == '-' || buf[0] == '+') && buf[1] == '\0')
            break;
        if ((dash = strchr(buf, '-')))
            *dash = '\0';
        if (!stream_str2ull(buf, &v) || (dash && !stream_str2ull(dash + 1, &v)))
            break;
    }
    last_arg = j - 1;
    for (; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        if (arg_is(c, j, "force")) {
            force = 1;
        } else if (arg_is(c, j, "justid")) {
            justid = 1;
        } else if (arg_is(c, j, "idle") && more) {
            if (arg_ll(c, ++j, &dtime, "ERR Invalid IDLE option argument for XCLAIM"))
                goto out;
            dtime = stream_idle_ms(now, dtime); /* wraps like Redis's; out of range means now */
        } else if (arg_is(c, j, "time") && more) {
            if (arg_ll(c, ++j, &dtime, "ERR Invalid TIME option argument for XCLAIM"))
                goto out;
        } else if (arg_is(c, j, "retrycount") && more) {
            if (arg_ll(c, ++j, &retrycount, "ERR Invalid RETRYCOUNT option argument for XCLAIM"))
                goto out;
        } else if (arg_is(c, j, "lastid") && more) {
            if (stream_parse_id(c, &c->argv[++j], &last_id, 0, 1, NULL))
                goto out;
        } else {
            reply_errorf(c, "ERR Unrecognized XCLAIM option '%.*s'",
                         (int)(c->argv[j].n > 128 ? 128 : c->argv[j].n), c->argv[j].p);
            goto out;
        }
    }
    size_t before = item_value_mem(it);
    int prop_last = 0;
    if (sid_cmp(&last_id, &g->last_id) > 0) {
        g->last_id = last_id;
        prop_last = 1;
    }
    if (dtime != -1) {
        if (dtime < 0 || dtime > now)
            dtime = now;
    } else {
        dtime = now;
    }
    for (int i = 5; i <= last_arg; i++) {
        stream_parse_id(c, &c->argv[i], &id, 0, 1, NULL);
        struct snack *nk = scg_pel_find(g, &id);
        if (!entry_exists(t, &id)) {
            if (nk) {
                /* the entry is gone: the pending entry goes too */
                struct scons *owner = nk->owner;
                scg_pel_del(t, g, nk);
                if (prop)
                    stream_prop_drop(c, &c->argv[1], g, &id, owner);
                prop_last = 0;
            }
            continue;
        }
        if (!nk) {
            if (!force)
                continue;
            if (!cs) {
                cs = scg_cons_find(g, c->argv[3].p, c->argv[3].n);
                if (cs)
                    cs->seen = now;
                else if ((cs = scg_cons_create(t, g, c->argv[3].p, c->argv[3].n, now)))
                    notify_event_key(NOTIFY_STREAM, "xgroup-createconsumer", c->db,
                                     c->argv[1].p, c->argv[1].n);
            }
            if (!cs || !(nk = scg_pel_add(t, g, cs, &id, dtime, 1))) {
                c->flags |= CONN_CLOSE_ASAP; /* out of memory mid-reply */
                break;
            }
        } else if (minidle && stream_idle_ms(now, nk->dtime) < minidle) {
            continue;
        }
        if (claim_one(c, t, g, &cs, nk, dtime, retrycount, justid)) {
            c->flags |= CONN_CLOSE_ASAP;
            break;
        }
        if (idvec_push(&claimed, &id)) {
            c->flags |= CONN_CLOSE_ASAP;
            break;
        }
        if (prop)
            stream_prop_claim(c, &c->argv[1], g, &id, nk);
        prop_last = 0;
    }
    reply_array(c, (long long)claimed.n);
    for (size_t i = 0; i < claimed.n; i++) {
        if (justid)
            stream_reply_id(c, &claimed.v[i]);
        else
            stream_reply_entry_id(c, t, &claimed.v[i]);
    }
    if (prop && prop_last)
        stream_prop_setid(c, &c->argv[1], g);
    coll_done(c, &k, it, before, 0);
out:
    free(claimed.v);
    store_unlock(s, k.stripe);
}

static void xautoclaim_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct tstream *t;
    struct sgroup *g = NULL;
    struct scons *cs = NULL;
    long long minidle, count = 100;
    int sx, justid = 0, wrong, prop = cmd_prop_on(c);
    struct sid start;
    struct idvec claimed = {0}, deleted = {0};

    if (arg_ll(c, 4, &minidle, "ERR Invalid min-idle-time argument for XAUTOCLAIM"))
        return;
    if (minidle < 0)
        minidle = 0;
    if (stream_parse_interval(c, 5, &start, &sx, 0))
        return;
    if (sx && stream_id_incr(&start)) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    for (int j = 6; j < c->argc; j++) {
        if (arg_is(c, j, "count") && j + 1 < c->argc) {
            /* Redis's bound: LONG_MAX / max(sizeof(streamID), attempts factor 10) */
            if (arg_range(c, j + 1, 1, LONG_MAX / 16, &count, "ERR COUNT must be > 0"))
                return;
            j++;
        } else if (arg_is(c, j, "justid")) {
            justid = 1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (!(g = stream_group_locked(c, &k, 1, &it, &wrong))) {
        if (!wrong)
            reply_nogroup_key(c, &c->argv[1], &c->argv[2]);
        goto out;
    }
    t = stream_of(it);
    size_t before = item_value_mem(it);
    int64_t now = conn_now(c);
    long long attempts = count * 10;
    size_t i = spel_seek(&g->pel, &start);
    int oom = 0;
    while (attempts-- && count && i < g->pel.n) {
        struct snack *nk = g->pel.v[i];
        struct sid id = nk->id;
        if (!entry_exists(t, &id)) {
            struct scons *owner = nk->owner;
            if (idvec_push(&deleted, &id)) {
                oom = 1;
                break;
            }
            scg_pel_del(t, g, nk);
            if (prop)
                stream_prop_drop(c, &c->argv[1], g, &id, owner);
            count--;
            continue; /* i now names the next one */
        }
        i++;
        if (minidle && stream_idle_ms(now, nk->dtime) < minidle)
            continue;
        if (idvec_push(&claimed, &id) || claim_one(c, t, g, &cs, nk, now, -1, justid)) {
            oom = 1;
            break;
        }
        if (prop)
            stream_prop_claim(c, &c->argv[1], g, &id, nk);
        count--;
    }
    if (oom) {
        reply_error(c, "ERR out of memory");
    } else {
        struct sid next = {0, 0};
        if (i < g->pel.n)
            next = g->pel.v[i]->id;
        reply_array(c, 3);
        stream_reply_id(c, &next);
        reply_array(c, (long long)claimed.n);
        for (size_t j = 0; j < claimed.n; j++) {
            if (justid)
                stream_reply_id(c, &claimed.v[j]);
            else
                stream_reply_entry_id(c, t, &claimed.v[j]);
        }
        reply_array(c, (long long)deleted.n);
        for (size_t j = 0; j < deleted.n; j++)
            stream_reply_id(c, &deleted.v[j]);
    }
    coll_done(c, &k, it, before, 0);
out:
    free(claimed.v);
    free(deleted.v);
    store_unlock(s, k.stripe);
}

static struct cmd cmds[] = {
    {"xpending", xpending_command, -3, "readonly", "@stream", "RO,access index:1 range:0,1,0", "stream", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged."},
    {"xclaim", xclaim_command, -6, "write fast tc:prop-explicit tc:keep-watch", "@stream", "RW,update index:1 range:0,1,0", "stream", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer."},
    {"xautoclaim", xautoclaim_command, -6, "write fast tc:prop-explicit tc:keep-watch", "@stream", "RW,delete index:1 range:0,1,0", "stream", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer."},
};

void cmd_stream_pel_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
