/* Stream commands (Redis 7.0 semantics): XADD XLEN XRANGE XREVRANGE XDEL XTRIM, XREAD
 * (BLOCK through blocking.c), and consumer groups: XGROUP XREADGROUP XACK XPENDING XCLAIM
 * XAUTOCLAIM XINFO. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/multi.h"
#include "cmd/propagate.h"
#include "core/config.h"
#include "store/t_stream.h"
#include "store/t_stream_cg.h"

/* blocking.c: block XREADGROUP ... BLOCK ms after a first try served nothing, until an entry
 * arrives for the group, the key or the group goes (an error), or ms passes (0 = forever). */
void block_xreadgroup(struct conn *c, long long ms);
int xreadgroup_try(struct conn *c);
int xreadgroup_retry(struct conn *c);

#define ERR_BADID "ERR Invalid stream ID specified as stream command argument"

static struct tstream *st_of(struct item *it)
{
    return it ? item_ptr(it) : NULL;
}

static const char *stream_encoding(struct item *it)
{
    (void)it;
    return "stream";
}

/* Redis's string2ull: strict decimal, or what strtoull accepts in full. */
static int str2ull(const char *s, unsigned long long *v)
{
    long long ll;
    char *end;

    if (util_str2ll(s, strlen(s), &ll)) {
        if (ll < 0)
            return 0;
        *v = (unsigned long long)ll;
        return 1;
    }
    errno = 0;
    *v = strtoull(s, &end, 10);
    return !(errno == EINVAL || errno == ERANGE || !(*s && *end == '\0'));
}

/* streamGenericParseIDOrReply. seq_given NULL: "ms-*" is invalid. Replies on error. */
static int parse_id(struct conn *c, const struct slice *a, struct sid *id, uint64_t missing_seq,
                    int strict, int *seq_given)
{
    char buf[128], *dash;
    unsigned long long ms, seq;

    if (a->n > sizeof(buf) - 1)
        goto invalid;
    memcpy(buf, a->p, a->n);
    buf[a->n] = '\0';
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0')
        goto invalid;
    if (seq_given)
        *seq_given = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        id->ms = id->seq = 0;
        return 0;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        id->ms = id->seq = UINT64_MAX;
        return 0;
    }
    dash = strchr(buf, '-');
    if (dash)
        *dash = '\0';
    if (!str2ull(buf, &ms))
        goto invalid;
    if (dash) {
        if (seq_given && strcmp(dash + 1, "*") == 0) {
            seq = 0;
            *seq_given = 0;
        } else if (!str2ull(dash + 1, &seq)) {
            goto invalid;
        }
    } else {
        seq = missing_seq;
    }
    id->ms = ms;
    id->seq = seq;
    return 0;
invalid:
    reply_error(c, ERR_BADID);
    return -1;
}

static int id_incr(struct sid *id)
{
    if (id->seq == UINT64_MAX) {
        if (id->ms == UINT64_MAX)
            return -1;
        id->ms++;
        id->seq = 0;
    } else {
        id->seq++;
    }
    return 0;
}

static int id_decr(struct sid *id)
{
    if (id->seq == 0) {
        if (id->ms == 0)
            return -1;
        id->ms--;
        id->seq = UINT64_MAX;
    } else {
        id->seq--;
    }
    return 0;
}

static void reply_id(struct conn *c, const struct sid *id)
{
    char buf[48];
    int n = snprintf(buf, sizeof(buf), "%llu-%llu", (unsigned long long)id->ms,
                     (unsigned long long)id->seq);
    reply_bulk(c, buf, (size_t)n);
}

static void reply_entry(struct conn *c, struct sent *e)
{
    const char *p;
    size_t n;

    reply_array(c, 2);
    reply_id(c, &e->id);
    reply_array(c, (long long)e->nfields * 2);
    while (sentry_next(e, &p, &n))
        reply_bulk(c, p, n);
}

/* XADD / XTRIM options (streamParseAddOrTrimArgsOrReply). */
struct trim_args {
    int strategy;     /* 0 none, 1 maxlen, 2 minid */
    int approx;
    long long maxlen;
    struct sid minid;
    long long limit;
    int nomkstream;
    int id_given, seq_given;
    struct sid id;
};

static int parse_trim_args(struct conn *c, struct trim_args *a, int xadd)
{
    int i = 2, limit_given = 0;

    memset(a, 0, sizeof(*a));
    a->seq_given = 1;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const struct slice *o = &c->argv[i];
        if (xadd && o->n == 1 && o->p[0] == '*') {
            break;
        } else if ((arg_is(c, i, "maxlen") || arg_is(c, i, "minid")) && more) {
            int minid = arg_is(c, i, "minid");
            if (a->strategy) {
                reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are "
                               "not compatible");
                return -1;
            }
            a->approx = 0;
            const struct slice *nx = &c->argv[i + 1];
            if (more >= 2 && nx->n == 1 && nx->p[0] == '~') {
                a->approx = 1;
                i++;
            } else if (more >= 2 && nx->n == 1 && nx->p[0] == '=') {
                i++;
            }
            if (minid) {
                if (parse_id(c, &c->argv[i + 1], &a->minid, 0, 1, NULL))
                    return -1;
            } else {
                if (arg_ll(c, i + 1, &a->maxlen, NULL))
                    return -1;
                if (a->maxlen < 0) {
                    reply_error(c, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
            }
            i++;
            a->strategy = minid ? 2 : 1;
        } else if (arg_is(c, i, "limit") && more) {
            if (arg_ll(c, i + 1, &a->limit, NULL))
                return -1;
            if (a->limit < 0) {
                reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            i++;
        } else if (xadd && arg_is(c, i, "nomkstream")) {
            a->nomkstream = 1;
        } else if (xadd) {
            if (parse_id(c, o, &a->id, 0, 1, &a->seq_given))
                return -1;
            a->id_given = 1;
            break;
        } else {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (a->limit && !a->strategy) {
        reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming "
                       "strategy");
        return -1;
    }
    if (!xadd && !a->strategy) {
        reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (limit_given) {
        if (!a->approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else {
        a->limit = a->approx ? 10000 : 0; /* 100 * stream-node-max-entries */
    }
    return i;
}

static int64_t do_trim(struct tstream *s, const struct trim_args *a)
{
    return tstream_trim(s, a->maxlen, a->strategy == 2 ? &a->minid : NULL, a->approx, a->limit);
}

static void xadd_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct trim_args a;
    int wrong, idpos, fpos;
    struct sid id;

    if ((idpos = parse_trim_args(c, &a, 1)) < 0)
        return;
    fpos = idpos + 1;
    if (c->argc - fpos < 2 || (c->argc - fpos) % 2) {
        reply_arity_error(c, "xadd");
        return;
    }
    if (a.id_given && a.seq_given && a.id.ms == 0 && a.id.seq == 0) {
        reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (a.nomkstream) {
            reply_null(c);
            goto out;
        }
        struct tstream *t = tstream_create();
        if (!t) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        if (!(it = coll_put(c, &k, OBJ_STREAM, t)))
            goto out;
    }
    struct tstream *t = st_of(it);
    struct sid last = t->last_id;
    if (last.ms == UINT64_MAX && last.seq == UINT64_MAX) {
        reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more "
                       "items");
        goto out;
    }
    if (!a.id_given) {
        uint64_t now = (uint64_t)conn_now(c);
        if (now > last.ms) {
            id.ms = now;
            id.seq = 0;
        } else {
            id = last;
            id_incr(&id);
        }
    } else if (!a.seq_given) {
        id.ms = a.id.ms;
        if (id.ms == last.ms) {
            if (last.seq == UINT64_MAX) {
                /* what Redis answers here (its errno is ERANGE) */
                reply_error(c, "ERR Elements are too large to be stored");
                goto out;
            }
            id.seq = last.seq + 1;
        } else if (id.ms > last.ms) {
            id.seq = 0;
        } else {
            goto too_small;
        }
    } else {
        id = a.id;
        if (sid_cmp(&id, &last) <= 0)
            goto too_small;
    }
    size_t bytes = 0;
    for (int i = fpos; i < c->argc; i++)
        bytes += sfield_size(c->argv[i].n);
    size_t before = item_value_mem(it);
    unsigned char *w = tstream_append(t, &id, (uint32_t)((c->argc - fpos) / 2), bytes);
    if (!w) {
        reply_error(c, "ERR Elements are too large to be stored");
        goto out;
    }
    for (int i = fpos; i < c->argc; i++)
        w = sfield_put(w, c->argv[i].p, c->argv[i].n);
    reply_id(c, &id);
    if (cmd_prop_begin(c, c->argc)) { /* replayed with the ID it got */
        char ids[48];
        int n = snprintf(ids, sizeof(ids), "%llu-%llu", (unsigned long long)id.ms,
                         (unsigned long long)id.seq);
        for (int j = 0; j < c->argc; j++) {
            if (j == idpos)
                cmd_prop_arg(c, ids, (size_t)n);
            else
                cmd_prop_arg(c, c->argv[j].p, c->argv[j].n);
        }
        cmd_prop_end(c);
    }
    if (a.strategy)
        do_trim(t, &a);
    coll_done(c, &k, it, before, 0);
    goto out;
too_small:
    reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top "
                   "item");
out:
    store_unlock(s, k.stripe);
}

static void xlen_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_STREAM, &wrong);
    if (!wrong)
        reply_int(c, it ? (long long)st_of(it)->len : 0);
    store_unlock(s, k.stripe);
}

/* An interval bound: "(" excludes (streamParseIntervalIDOrReply). */
static int parse_interval(struct conn *c, int i, struct sid *id, int *ex, uint64_t missing_seq)
{
    const struct slice *a = &c->argv[i];

    *ex = a->n > 1 && a->p[0] == '(';
    if (*ex) {
        struct slice t = {a->p + 1, a->n - 1};
        return parse_id(c, &t, id, missing_seq, 1, NULL);
    }
    return parse_id(c, a, id, missing_seq, 0, NULL);
}

static void xrange_generic(struct conn *c, int rev)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct sid start, end;
    int sx, ex, wrong;
    long long count = -1;

    if (parse_interval(c, rev ? 3 : 2, &start, &sx, 0))
        return;
    if (sx && id_incr(&start)) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (parse_interval(c, rev ? 2 : 3, &end, &ex, UINT64_MAX))
        return;
    if (ex && id_decr(&end)) {
        reply_error(c, "ERR invalid end ID for the interval");
        return;
    }
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(c, j, "count") && j + 1 < c->argc) {
            if (arg_ll(c, ++j, &count, NULL))
                return;
            if (count < 0)
                count = 0;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_array(c, 0);
        goto out;
    }
    if (count == 0) {
        reply_null_array(c);
        goto out;
    }
    struct tstream *t = st_of(it);
    struct spos pos = {0}, p0;
    struct sent e;
    long long n = 0;
    int more = sid_cmp(&start, &end) <= 0 &&
               (rev ? tstream_seek_rev(t, &end, &pos) : tstream_seek(t, &start, &pos));
    /* count first (the reply header), then emit */
    p0 = pos;
    while (more && (count <= 0 || n < count)) {
        tstream_get(t, &pos, &e);
        if (rev ? sid_cmp(&e.id, &start) < 0 : sid_cmp(&e.id, &end) > 0)
            break;
        n++;
        more = rev ? tstream_prev(t, &pos) : tstream_next(t, &pos);
    }
    reply_array(c, n);
    pos = p0;
    for (long long i = 0; i < n; i++) {
        tstream_get(t, &pos, &e);
        reply_entry(c, &e);
        if (rev)
            tstream_prev(t, &pos);
        else
            tstream_next(t, &pos);
    }
out:
    store_unlock(s, k.stripe);
}

static void xrange_command(struct conn *c)
{
    xrange_generic(c, 0);
}
static void xrevrange_command(struct conn *c)
{
    xrange_generic(c, 1);
}

static void xdel_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    long long deleted = 0;
    struct sid id;

    for (int j = 2; j < c->argc; j++)
        if (parse_id(c, &c->argv[j], &id, 0, 1, NULL))
            return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (it) {
        size_t before = item_value_mem(it);
        for (int j = 2; j < c->argc; j++) {
            struct slice a = c->argv[j];
            parse_id(c, &a, &id, 0, 1, NULL);
            deleted += tstream_delete(st_of(it), &id);
        }
        coll_done(c, &k, it, before, 0); /* an empty stream stays, as in Redis */
    }
    reply_int(c, deleted);
out:
    store_unlock(s, k.stripe);
}

static void xtrim_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct trim_args a;
    int wrong;

    if (parse_trim_args(c, &a, 0) < 0)
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    size_t before = item_value_mem(it);
    int64_t n = do_trim(st_of(it), &a);
    coll_done(c, &k, it, before, 0);
    reply_int(c, n);
out:
    store_unlock(s, k.stripe);
}


/* ---- XREAD ---- */

/* XREAD [COUNT n] [BLOCK ms] STREAMS key... id...: the index of the first key, the number of
 * keys, COUNT (0 = all) and BLOCK (-1 = none). Replies and returns -1 on error. */
static int xread_parse(struct conn *c, long long *count, long long *block, int *first, int *nkeys)
{
    *count = 0;
    *block = -1;
    *first = 0;
    for (int j = 1; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "count") && more) {
            if (arg_ll(c, ++j, count, NULL))
                return -1;
            if (*count < 0)
                *count = 0;
        } else if (arg_is(c, j, "block") && more) {
            if (!util_str2ll(c->argv[j + 1].p, c->argv[j + 1].n, block)) {
                reply_error(c, "ERR timeout is not an integer or out of range");
                return -1;
            }
            if (*block < 0) {
                reply_error(c, "ERR timeout is negative");
                return -1;
            }
            j++;
        } else if (arg_is(c, j, "streams") && more) {
            *first = j + 1;
            if ((c->argc - *first) % 2) {
                reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an "
                               "ID or '$' must be specified.");
                return -1;
            }
            *nkeys = (c->argc - *first) / 2;
            break;
        } else if (arg_is(c, j, "group") && more >= 2) {
            reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called "
                           "XREAD instead.");
            return -1;
        } else if (arg_is(c, j, "noack")) {
            reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called "
                           "XREAD instead.");
            return -1;
        } else {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (!*first) {
        reply_error(c, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

/* Serve XREAD now: 1 when something was replied (entries or an error), 0 when no stream has
 * entries after its ID (a null reply is written only when emit_null). "$" means the last ID
 * of the stream (nothing can come after it without blocking). */
static int xread_serve(struct conn *c, int emit_null)
{
    struct store *s = conn_store(c);
    long long count, block;
    int first, nkeys, ret = 1, nwith = 0;
    struct skey *keys;
    struct sid *ids;

    if (xread_parse(c, &count, &block, &first, &nkeys))
        return 1;
    ids = malloc(sizeof(*ids) * (size_t)nkeys);
    if (!ids) {
        reply_error(c, "ERR out of memory");
        return 1;
    }
    keys = keyset_resolve(c, first, 1, nkeys);
    if (!keys) {
        free(ids);
        return 1;
    }
    store_lock_keys(s, keys, nkeys);
    for (int i = 0; i < nkeys; i++) {
        const struct slice *a = &c->argv[first + nkeys + i];
        int wrong;
        struct item *it = coll_read(c, &keys[i], OBJ_STREAM, &wrong);
        if (wrong)
            goto out;
        if (a->n == 1 && a->p[0] == '$') {
            ids[i] = it ? st_of(it)->last_id : (struct sid){0, 0};
        } else if (a->n == 1 && a->p[0] == '>') {
            reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using "
                           "the GROUP <group> <consumer> option.");
            goto out;
        } else if (parse_id(c, a, &ids[i], 0, 1, NULL)) {
            goto out;
        }
        if (it && st_of(it)->len && sid_cmp(&st_of(it)->last_id, &ids[i]) > 0)
            nwith++;
    }
    if (!nwith) {
        ret = emit_null;
        if (emit_null)
            reply_null_array(c);
        goto out;
    }
    if (c->resp > 2)
        reply_map(c, nwith);
    else
        reply_array(c, nwith);
    for (int i = 0; i < nkeys; i++) {
        struct item *it = store_lookup_write_locked(s, &keys[i], conn_now(c));
        struct tstream *t = st_of(it);
        struct sid start = ids[i];
        struct spos pos = {0}, p0;
        struct sent e;
        long long n = 0;
        int more;

        if (!t || !t->len || sid_cmp(&t->last_id, &ids[i]) <= 0)
            continue;
        if (c->resp == 2)
            reply_array(c, 2);
        reply_bulk(c, keys[i].p, keys[i].n);
        more = id_incr(&start) == 0 && tstream_seek(t, &start, &pos);
        p0 = pos;
        while (more && (count <= 0 || n < count)) {
            n++;
            more = tstream_next(t, &pos);
        }
        reply_array(c, n);
        pos = p0;
        for (long long j = 0; j < n; j++) {
            tstream_get(t, &pos, &e);
            reply_entry(c, &e);
            tstream_next(t, &pos);
        }
    }
out:
    store_unlock_keys(s, keys, nkeys);
    free(ids);
    return ret;
}

int xread_try(struct conn *c)
{
    return xread_serve(c, 0);
}

int xread_last_id(struct conn *c, const struct slice *key, char *out, size_t cap)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct sid id = {0, 0};

    store_key(s, &k, c->db, key->p, key->n);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (it && it->type == OBJ_STREAM)
        id = st_of(it)->last_id;
    store_unlock(s, k.stripe);
    return snprintf(out, cap, "%llu-%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
}

static void xread_command(struct conn *c)
{
    long long count, block;
    int first, nkeys;

    if (xread_parse(c, &count, &block, &first, &nkeys))
        return;
    if (block < 0) {
        xread_serve(c, 1);
        return;
    }
    block_stream(c, block, first, nkeys);
}

/* ---- consumer groups ---- */

#define ERR_XGROUP_KEY                                                                         \
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "  \
    "to use the MKSTREAM option to create an empty stream automatically."

/* The AOF form of group changes (Redis's propagation): XREADGROUP, XCLAIM and XAUTOCLAIM log
 * what they did as XCLAIM ... TIME t RETRYCOUNT n FORCE JUSTID LASTID id per pending entry
 * and XGROUP SETID ... ENTRIESREAD n / XGROUP CREATECONSUMER, so a replay rebuilds the same
 * PEL whatever the clock says. The forms are propagated explicitly (cmd_propagate) under
 * the stripes the command holds; a command that changed nothing propagates nothing. */
static __thread int rg_retry;    /* XREADGROUP retried for a blocked client (blocking.c) */
static __thread int rg_served;

/* now - t without overflow (times come from clients and files): wraps as two's complement. */
static long long idle_ms(int64_t now, int64_t t)
{
    return (long long)((uint64_t)now - (uint64_t)t);
}

static int cg_prop_on(struct conn *c)
{
    return cmd_prop_on(c);
}

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
static void cg_prop_claim(struct conn *c, const struct slice *key, const struct sgroup *g,
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
static void cg_prop_drop(struct conn *c, const struct slice *key, const struct sgroup *g,
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

static void cg_prop_setid(struct conn *c, const struct slice *key, const struct sgroup *g)
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

static void cg_prop_consumer(struct conn *c, const struct slice *key, const struct sgroup *g,
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

/* Reply the entry id of t ([id, fields]), or nothing: 1 when it exists. */
static int reply_entry_id(struct conn *c, struct tstream *t, const struct sid *id)
{
    struct spos pos;
    struct sent e;

    if (!tstream_seek(t, id, &pos))
        return 0;
    tstream_get(t, &pos, &e);
    if (sid_cmp(&e.id, id) != 0)
        return 0;
    reply_entry(c, &e);
    return 1;
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
    t = st_of(it);
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
        } else if (parse_id(c, &c->argv[4], &id, 0, 1, NULL)) {
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
        reply_ok(c);
    } else if (setid && (c->argc == 5 || c->argc == 7)) {
        struct sid id;
        if (c->argv[4].n == 1 && c->argv[4].p[0] == '$') {
            id = t->last_id;
        } else if (parse_id(c, &c->argv[4], &id, 0, 0, NULL)) {
            goto out;
        }
        g->last_id = id;
        g->entries_read = entries_read;
        reply_ok(c);
    } else if (arg_is(c, 1, "destroy") && c->argc == 4) {
        if (g) {
            scg_destroy(t, g);
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
            reply_int(c, 1);
        }
    } else if (arg_is(c, 1, "delconsumer") && c->argc == 5) {
        struct scons *cs = scg_cons_find(g, c->argv[4].p, c->argv[4].n);
        reply_int(c, cs ? (long long)scg_cons_delete(t, g, cs) : 0);
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

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (it)
        g = scg_find(st_of(it), c->argv[2].p, c->argv[2].n);
    if (!g) {
        reply_int(c, 0);
        goto out;
    }
    /* all or nothing: every ID is checked before the first is acknowledged */
    for (int j = 3; j < c->argc; j++)
        if (parse_id(c, &c->argv[j], &id, 0, 1, NULL))
            goto out;
    size_t before = item_value_mem(it);
    for (int j = 3; j < c->argc; j++) {
        parse_id(c, &c->argv[j], &id, 0, 1, NULL);
        struct snack *nk = scg_pel_find(g, &id);
        if (nk) {
            scg_pel_del(st_of(it), g, nk);
            acked++;
        }
    }
    coll_done(c, &k, it, before, 0);
    reply_int(c, acked);
out:
    store_unlock(s, k.stripe);
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
        if (parse_interval(c, si, &start, &sx, 0))
            return;
        if (sx && id_incr(&start)) {
            reply_error(c, "ERR invalid start ID for the interval");
            return;
        }
        if (parse_interval(c, si + 1, &end, &ex, UINT64_MAX))
            return;
        if (ex && id_decr(&end)) {
            reply_error(c, "ERR invalid end ID for the interval");
            return;
        }
        if (si + 3 < c->argc)
            cname = &c->argv[si + 3];
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (it)
        g = scg_find(st_of(it), c->argv[2].p, c->argv[2].n);
    if (!g) {
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
        reply_id(c, &g->pel.v[0]->id);
        reply_id(c, &g->pel.v[g->pel.n - 1]->id);
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
        if (!minidle || idle_ms(now, pel->v[i]->dtime) >= minidle)
            n++;
    reply_array(c, n);
    for (i = i0; n > 0; i++) {
        const struct snack *nk = pel->v[i];
        if (minidle && idle_ms(now, nk->dtime) < minidle)
            continue;
        reply_array(c, 4);
        reply_id(c, &nk->id);
        reply_bulk(c, nk->owner->name, nk->owner->nlen);
        reply_int(c, idle_ms(now, nk->dtime) < 0 ? 0 : idle_ms(now, nk->dtime));
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
    int force = 0, justid = 0, wrong, j, last_arg, prop = cg_prop_on(c);
    struct sid id, last_id = {0, 0};
    int64_t now = conn_now(c);
    struct idvec claimed = {0};

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (it)
        g = scg_find(st_of(it), c->argv[2].p, c->argv[2].n);
    if (!g) {
        reply_nogroup_key(c, &c->argv[1], &c->argv[2]);
        goto out;
    }
    t = st_of(it);
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
        if (!str2ull(buf, &v) || (dash && !str2ull(dash + 1, &v)))
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
            dtime = idle_ms(now, dtime); /* wraps like Redis's; out of range means now */
        } else if (arg_is(c, j, "time") && more) {
            if (arg_ll(c, ++j, &dtime, "ERR Invalid TIME option argument for XCLAIM"))
                goto out;
        } else if (arg_is(c, j, "retrycount") && more) {
            if (arg_ll(c, ++j, &retrycount, "ERR Invalid RETRYCOUNT option argument for XCLAIM"))
                goto out;
        } else if (arg_is(c, j, "lastid") && more) {
            if (parse_id(c, &c->argv[++j], &last_id, 0, 1, NULL))
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
        parse_id(c, &c->argv[i], &id, 0, 1, NULL);
        struct snack *nk = scg_pel_find(g, &id);
        if (!entry_exists(t, &id)) {
            if (nk) {
                /* the entry is gone: the pending entry goes too */
                struct scons *owner = nk->owner;
                scg_pel_del(t, g, nk);
                if (prop)
                    cg_prop_drop(c, &c->argv[1], g, &id, owner);
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
                else
                    cs = scg_cons_create(t, g, c->argv[3].p, c->argv[3].n, now);
            }
            if (!cs || !(nk = scg_pel_add(t, g, cs, &id, dtime, 1))) {
                c->flags |= CONN_CLOSE_ASAP; /* out of memory mid-reply */
                break;
            }
        } else if (minidle && idle_ms(now, nk->dtime) < minidle) {
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
            cg_prop_claim(c, &c->argv[1], g, &id, nk);
        prop_last = 0;
    }
    reply_array(c, (long long)claimed.n);
    for (size_t i = 0; i < claimed.n; i++) {
        if (justid)
            reply_id(c, &claimed.v[i]);
        else
            reply_entry_id(c, t, &claimed.v[i]);
    }
    if (prop && prop_last)
        cg_prop_setid(c, &c->argv[1], g);
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
    int sx, justid = 0, wrong, prop = cg_prop_on(c);
    struct sid start;
    struct idvec claimed = {0}, deleted = {0};

    if (arg_ll(c, 4, &minidle, "ERR Invalid min-idle-time argument for XAUTOCLAIM"))
        return;
    if (minidle < 0)
        minidle = 0;
    if (parse_interval(c, 5, &start, &sx, 0))
        return;
    if (sx && id_incr(&start)) {
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
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_STREAM, &wrong);
    if (wrong)
        goto out;
    if (it)
        g = scg_find(st_of(it), c->argv[2].p, c->argv[2].n);
    if (!g) {
        reply_nogroup_key(c, &c->argv[1], &c->argv[2]);
        goto out;
    }
    t = st_of(it);
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
                cg_prop_drop(c, &c->argv[1], g, &id, owner);
            count--;
            continue; /* i now names the next one */
        }
        i++;
        if (minidle && idle_ms(now, nk->dtime) < minidle)
            continue;
        if (idvec_push(&claimed, &id) || claim_one(c, t, g, &cs, nk, now, -1, justid)) {
            oom = 1;
            break;
        }
        if (prop)
            cg_prop_claim(c, &c->argv[1], g, &id, nk);
        count--;
    }
    if (oom) {
        reply_error(c, "ERR out of memory");
    } else {
        struct sid next = {0, 0};
        if (i < g->pel.n)
            next = g->pel.v[i]->id;
        reply_array(c, 3);
        reply_id(c, &next);
        reply_array(c, (long long)claimed.n);
        for (size_t j = 0; j < claimed.n; j++) {
            if (justid)
                reply_id(c, &claimed.v[j]);
            else
                reply_entry_id(c, t, &claimed.v[j]);
        }
        reply_array(c, (long long)deleted.n);
        for (size_t j = 0; j < deleted.n; j++)
            reply_id(c, &deleted.v[j]);
    }
    coll_done(c, &k, it, before, 0);
out:
    free(claimed.v);
    free(deleted.v);
    store_unlock(s, k.stripe);
}

/* ---- XREADGROUP ---- */

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
            if (!util_str2ll(c->argv[j + 1].p, c->argv[j + 1].n, &a->block)) {
                reply_error(c, "ERR timeout is not an integer or out of range");
                return -1;
            }
            if (a->block < 0) {
                reply_error(c, "ERR timeout is negative");
                return -1;
            }
            j++;
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

/* Serve XREADGROUP: 1 when something was replied (entries or an error), 0 when there is
 * nothing to serve (a null reply is written only when emit_null). retry: a blocked client's
 * retry, for which the key or group gone is an error. */
static int xrg_serve(struct conn *c, const struct rg_args *a, int emit_null, int retry)
{
    struct store *s = conn_store(c);
    const struct slice *gname = &c->argv[a->gi], *cname = &c->argv[a->gi + 1];
    int nkeys = a->nkeys, ret = 1, nserve = 0, prop = cg_prop_on(c);
    struct skey *keys;
    struct sid *ids;
    struct sgroup **groups;

    ids = malloc((sizeof(*ids) + sizeof(*groups)) * (size_t)nkeys);
    if (!ids) {
        reply_error(c, "ERR out of memory");
        return 1;
    }
    groups = (struct sgroup **)(ids + nkeys);
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
            if (retry)
                reply_error(c, "UNBLOCKED the stream key no longer exists");
            else
                reply_error(c, ERR_WRONGTYPE);
            goto out;
        }
        groups[i] = it ? scg_find(st_of(it), gname->p, gname->n) : NULL;
        if (!groups[i]) {
            if (retry && !it)
                reply_error(c, "UNBLOCKED the stream key no longer exists");
            else if (retry)
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
        if (id->n == 1 && id->p[0] == '>') {
            ids[i].ms = ids[i].seq = UINT64_MAX;
        } else if (parse_id(c, id, &ids[i], 0, 1, NULL)) {
            goto out;
        }
        struct sid maxid;
        if (!(ids[i].ms == UINT64_MAX && ids[i].seq == UINT64_MAX))
            nserve++; /* history is always served (the largest ID means ">", as in Redis) */
        else if (tstream_last_valid_id(st_of(it), &maxid) &&
                 sid_cmp(&maxid, &groups[i]->last_id) > 0)
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
        struct tstream *t = st_of(it);
        struct sgroup *g = groups[i];
        int history = !(ids[i].ms == UINT64_MAX && ids[i].seq == UINT64_MAX);
        struct sid maxid;
        struct slice key = {keys[i].p, keys[i].n};

        if (!history && !(tstream_last_valid_id(t, &maxid) && sid_cmp(&maxid, &g->last_id) > 0))
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
        }
        cs->seen = now;
        long long n = 0;
        if (history) {
            /* the consumer's own pending entries after the ID */
            struct sid start = ids[i];
            size_t j0 = id_incr(&start) ? cs->pel.n : spel_seek(&cs->pel, &start), j;
            for (j = j0; j < cs->pel.n && (a->count <= 0 || n < a->count); j++)
                n++;
            reply_array(c, n);
            for (j = j0; j < j0 + (size_t)n; j++) {
                struct snack *nk = cs->pel.v[j];
                if (reply_entry_id(c, t, &nk->id)) {
                    nk->dtime = now;
                    nk->dcount++;
                    if (prop)
                        cg_prop_claim(c, &key, g, &nk->id, nk);
                } else {
                    /* acknowledged by nobody, deleted by someone: the ID and no fields */
                    reply_array(c, 2);
                    reply_id(c, &nk->id);
                    reply_null_array(c);
                }
            }
            if (prop && created && !n)
                cg_prop_consumer(c, &key, g, cs);
        } else {
            struct sid start = g->last_id;
            struct spos pos = {0}, p0;
            struct sent e;
            int more = id_incr(&start) == 0 && tstream_seek(t, &start, &pos);
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
                reply_entry(c, &e);
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
                    cg_prop_claim(c, &key, g, &id, nk);
            }
            if (prop && n) {
                if (created && a->noack)
                    cg_prop_consumer(c, &key, g, cs);
                cg_prop_setid(c, &key, g);
            } else if (prop && created) {
                cg_prop_consumer(c, &key, g, cs);
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

int xreadgroup_try(struct conn *c)
{
    struct rg_args a;

    if (xrg_parse(c, &a))
        return 1;
    return xrg_serve(c, &a, 0, 0);
}

int xreadgroup_retry(struct conn *c)
{
    const struct cmd *cmd = cmd_lookup("xreadgroup", 10);

    /* through cmd_exec, so the AOF logs what it does under its stripes */
    rg_retry = 1;
    rg_served = 0;
    cmd_exec(c, cmd);
    rg_retry = 0;
    return rg_served;
}

static void xreadgroup_command(struct conn *c)
{
    struct rg_args a;
    int prop = cg_prop_on(c);

    if (xrg_parse(c, &a))
        return; /* an error: nothing is logged */
    if (rg_retry)
        rg_served = xrg_serve(c, &a, 0, 1);
    else if (a.block < 0 || tx_in_exec(c) || aof_loading())
        xrg_serve(c, &a, 1, 0); /* no BLOCK, or inside EXEC (never blocks) */
    else if (!xrg_serve(c, &a, 0, 0))
        block_xreadgroup(c, a.block);
}

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
    reply_id(c, &t->last_id);
    reply_cstr(c, "max-deleted-entry-id");
    reply_id(c, &t->max_deleted_id);
    reply_cstr(c, "entries-added");
    reply_int(c, (long long)t->entries_added);
    reply_cstr(c, "recorded-first-entry-id");
    if (!tstream_first_id(t, &first) && t->entries_added)
        first = (struct sid){0, 0};
    reply_id(c, &first);
    if (!full) {
        reply_cstr(c, "groups");
        reply_int(c, (long long)t->ngroups);
        reply_cstr(c, "first-entry");
        if (!t->len || !reply_entry_id(c, t, &first))
            reply_null(c);
        reply_cstr(c, "last-entry");
        if (!tstream_last_valid_id(t, &last) || !reply_entry_id(c, t, &last))
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
            reply_entry(c, &e);
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
        reply_id(c, &g->last_id);
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
            reply_id(c, &nk->id);
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
                reply_id(c, &nk->id);
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
    t = st_of(it);
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
            reply_int(c, idle_ms(now, cs->seen) < 0 ? 0 : idle_ms(now, cs->seen));
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
            reply_id(c, &g->last_id);
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
    {"xgroup|create", xgroup_command, -5, "write denyoom", "@stream", "RW,insert index:2 range:0,1,0", "stream", "Create a consumer group on a stream"},
    {"xgroup|setid", xgroup_command, -5, "write", "@stream", "RW,update index:2 range:0,1,0", "stream", "Move a consumer group's last delivered ID"},
    {"xgroup|destroy", xgroup_command, 4, "write", "@stream", "RW,delete index:2 range:0,1,0", "stream", "Remove a consumer group"},
    {"xgroup|createconsumer", xgroup_command, 5, "write denyoom", "@stream", "RW,insert index:2 range:0,1,0", "stream", "Add a consumer to a group"},
    {"xgroup|delconsumer", xgroup_command, 5, "write", "@stream", "RW,delete index:2 range:0,1,0", "stream", "Remove a consumer from a group"},
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
    {"xadd", xadd_command, -5, "write denyoom fast tc:prop-explicit", "@stream", "RW,update index:1 range:0,1,0", "stream", "Appends a new entry to a stream"},
    {"xlen", xlen_command, 2, "readonly fast", "@stream", "RO index:1 range:0,1,0", "stream", "Return the number of entries in a stream"},
    {"xrange", xrange_command, -4, "readonly", "@stream", "RO,access index:1 range:0,1,0", "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval"},
    {"xrevrange", xrevrange_command, -4, "readonly", "@stream", "RO,access index:1 range:0,1,0", "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE"},
    {"xdel", xdel_command, -3, "write fast", "@stream", "RW,delete index:1 range:0,1,0", "stream", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist."},
    {"xtrim", xtrim_command, -4, "write", "@stream", "RW,delete index:1 range:0,1,0", "stream", "Trims the stream to (approximately if '~' is passed) a certain size"},
    {"xread", xread_command, -4, "readonly blocking", "@stream", "RO,access keyword:STREAMS:1 range:-1,1,2", "stream", "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", NULL, NULL, &block_spec_xread},
    {"xreadgroup", xreadgroup_command, -7, "write blocking tc:prop-explicit", "@stream", "RO,access keyword:STREAMS:4 range:-1,1,2", "stream", "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", NULL, NULL, &block_spec_xreadgroup},
    {"xgroup", xgroup_command, -2, "", "", NULL, "stream", "A container for consumer groups commands", xgroup_subs},
    {"xack", xack_command, -4, "write fast", "@stream", "RW,update index:1 range:0,1,0", "stream", "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL."},
    {"xpending", xpending_command, -3, "readonly", "@stream", "RO,access index:1 range:0,1,0", "stream", "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged."},
    {"xclaim", xclaim_command, -6, "write fast tc:prop-explicit", "@stream", "RW,update index:1 range:0,1,0", "stream", "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer."},
    {"xautoclaim", xautoclaim_command, -6, "write fast tc:prop-explicit", "@stream", "RW,delete index:1 range:0,1,0", "stream", "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer."},
    {"xinfo", xinfo_command, -2, "", "", NULL, "stream", "A container for stream introspection commands", xinfo_subs},
};

void cmd_stream_setup(void)
{
    coll_type_setup(OBJ_STREAM, tstream_destroy, tstream_mem, tstream_copy, stream_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
