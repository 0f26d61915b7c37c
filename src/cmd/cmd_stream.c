/* Stream commands (Redis 7.0 semantics): XADD XLEN XRANGE XREVRANGE XDEL XTRIM, XREAD
 * (BLOCK through blocking.c), and the ID parsing and reply helpers the consumer-group files
 * share (stream_int.h). Consumer groups: cmd_stream_cg.c (XGROUP XREADGROUP XACK XINFO) and
 * cmd_stream_pel.c (XPENDING XCLAIM XAUTOCLAIM and the AOF forms of group changes). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "core/config.h"
#include "cmd/blocking.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/propagate.h"
#include "cmd/repl.h"
#include "cmd/stream_int.h"

static const char *stream_encoding(struct item *it)
{
    (void)it;
    return "stream";
}

/* Redis's string2ull: strict decimal, or what strtoull accepts in full. */
int stream_str2ull(const char *s, unsigned long long *v)
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
int stream_parse_id(struct conn *c, const struct slice *a, struct sid *id, uint64_t missing_seq,
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
    if (!stream_str2ull(buf, &ms))
        goto invalid;
    if (dash) {
        if (seq_given && strcmp(dash + 1, "*") == 0) {
            seq = 0;
            *seq_given = 0;
        } else if (!stream_str2ull(dash + 1, &seq)) {
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

int stream_id_incr(struct sid *id)
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

int stream_id_decr(struct sid *id)
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

void stream_reply_id(struct conn *c, const struct sid *id)
{
    char buf[48];
    int n = snprintf(buf, sizeof(buf), "%llu-%llu", (unsigned long long)id->ms,
                     (unsigned long long)id->seq);
    reply_bulk(c, buf, (size_t)n);
}

void stream_reply_entry(struct conn *c, struct sent *e)
{
    const char *p;
    size_t n;

    reply_array(c, 2);
    stream_reply_id(c, &e->id);
    reply_array(c, (long long)e->nfields * 2);
    while (sentry_next(e, &p, &n))
        reply_bulk(c, p, n);
}

/* Reply the entry id of t ([id, fields]), or nothing: 1 when it exists. */
int stream_reply_entry_id(struct conn *c, struct tstream *t, const struct sid *id)
{
    struct spos pos;
    struct sent e;

    if (!tstream_seek(t, id, &pos))
        return 0;
    tstream_get(t, &pos, &e);
    if (sid_cmp(&e.id, id) != 0)
        return 0;
    stream_reply_entry(c, &e);
    return 1;
}

/* XADD / XTRIM options (streamParseAddOrTrimArgsOrReply). */
struct trim_args {
    int strategy;     /* 0 none, 1 maxlen, 2 minid */
    int approx;
    int targ;         /* argv index of the MAXLEN/MINID value (the "~" is just before) */
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
            a->targ = i + 1;
            if (minid) {
                if (stream_parse_id(c, &c->argv[i + 1], &a->minid, 0, 1, NULL))
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
            if (stream_parse_id(c, o, &a->id, 0, 1, &a->seq_given))
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
    if (aof_replaying || repl_applying || aof_loading()) {
        /* the AOF or a primary's stream: its trim argument was rewritten to the exact result
         * (stream_prop_rewritten), so no LIMIT applies, even one that came with it */
        a->limit = 0;
    } else if (limit_given) {
        if (!a->approx) {
            reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else {
        /* 100 * stream-node-max-entries (wrapping as Redis's product does), 10000 when
         * that is not positive, at most 1000000 */
        a->limit = 0;
        if (a->approx) {
            long long ne = __atomic_load_n(&cfg.stream_node_max_entries, __ATOMIC_RELAXED);
            a->limit = (long long)((unsigned long long)ne * 100);
            if (a->limit <= 0)
                a->limit = 10000;
            if (a->limit > 1000000)
                a->limit = 1000000;
        }
    }
    return i;
}

static int64_t do_trim(struct tstream *s, const struct trim_args *a)
{
    return tstream_trim(s, a->maxlen, a->strategy == 2 ? &a->minid : NULL, a->approx, a->limit);
}

/* Propagate XADD / XTRIM as it ran: the ID XADD got at idpos (-1: none), and an approximate
 * trim ("~" at a->targ - 1) as the exact one it came to, "= <length>" or "= <first ID>" (the
 * largest ID when the stream is empty), so a replay trims the same entries (Redis's
 * streamRewriteApproxSpecifier and streamRewriteTrimArgument). */
static void stream_prop_rewritten(struct conn *c, const struct tstream *t,
                                  const struct trim_args *a, int idpos, const struct sid *id)
{
    char ids[48], tv[48];
    int n = 0, tn = 0;

    if (!cmd_prop_begin(c, c->argc))
        return;
    if (idpos >= 0)
        n = snprintf(ids, sizeof(ids), "%llu-%llu", (unsigned long long)id->ms,
                     (unsigned long long)id->seq);
    if (a->approx) {
        if (a->strategy == 1) {
            tn = util_ll2str(tv, (long long)t->len);
        } else {
            struct sid first;
            if (!tstream_first_id(t, &first))
                first = (struct sid){UINT64_MAX, UINT64_MAX};
            tn = snprintf(tv, sizeof(tv), "%llu-%llu", (unsigned long long)first.ms,
                          (unsigned long long)first.seq);
        }
    }
    for (int j = 0; j < c->argc; j++) {
        if (j == idpos)
            cmd_prop_arg(c, ids, (size_t)n);
        else if (a->approx && j == a->targ - 1)
            cmd_prop_arg(c, "=", 1);
        else if (a->approx && j == a->targ)
            cmd_prop_arg(c, tv, (size_t)tn);
        else
            cmd_prop_arg(c, c->argv[j].p, c->argv[j].n);
    }
    cmd_prop_end(c);
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
    struct tstream *t = stream_of(it);
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
            stream_id_incr(&id);
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
    size_t bytes = 0, raw = 0;
    for (int i = fpos; i < c->argc; i++) {
        bytes += sfield_size(c->argv[i].n);
        raw += c->argv[i].n;
    }
    size_t before = item_value_mem(it);
    unsigned char *w = tstream_append(t, &id, (uint32_t)((c->argc - fpos) / 2), bytes, raw);
    if (!w) {
        reply_error(c, "ERR Elements are too large to be stored");
        goto out;
    }
    for (int i = fpos; i < c->argc; i++)
        w = sfield_put(w, c->argv[i].p, c->argv[i].n);
    tstream_append_done(t);
    stream_reply_id(c, &id);
    int64_t trimmed = a.strategy ? do_trim(t, &a) : 0;
    /* replayed with the ID it got when it was * or ms-* (one given whole stays as sent) */
    stream_prop_rewritten(c, t, &a, a.id_given && a.seq_given ? -1 : idpos, &id);
    coll_done(c, &k, it, before, 0);
    notify_event(NOTIFY_STREAM, "xadd", &k);
    if (trimmed)
        notify_event(NOTIFY_STREAM, "xtrim", &k);
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
        reply_int(c, it ? (long long)stream_of(it)->len : 0);
    store_unlock(s, k.stripe);
}

/* An interval bound: "(" excludes (streamParseIntervalIDOrReply). */
int stream_parse_interval(struct conn *c, int i, struct sid *id, int *ex, uint64_t missing_seq)
{
    const struct slice *a = &c->argv[i];

    *ex = a->n > 1 && a->p[0] == '(';
    if (*ex) {
        struct slice t = {a->p + 1, a->n - 1};
        return stream_parse_id(c, &t, id, missing_seq, 1, NULL);
    }
    return stream_parse_id(c, a, id, missing_seq, 0, NULL);
}

static void xrange_generic(struct conn *c, int rev)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct sid start, end;
    int sx, ex, wrong;
    long long count = -1;

    if (stream_parse_interval(c, rev ? 3 : 2, &start, &sx, 0))
        return;
    if (sx && stream_id_incr(&start)) {
        reply_error(c, "ERR invalid start ID for the interval");
        return;
    }
    if (stream_parse_interval(c, rev ? 2 : 3, &end, &ex, UINT64_MAX))
        return;
    if (ex && stream_id_decr(&end)) {
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
    struct tstream *t = stream_of(it);
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
        stream_reply_entry(c, &e);
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

/* XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id], Redis 7.0's checks and texts. */
static void xsetid_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct tstream *t;
    struct sid id, maxdel = {0, 0};
    long long added = -1;
    int wrong;

    if (stream_parse_id(c, &c->argv[2], &id, 0, 1, NULL))
        return;
    for (int i = 3; i < c->argc; i += 2) {
        int more = c->argc - 1 - i;
        if (arg_is(c, i, "entriesadded") && more) {
            if (arg_ll(c, i + 1, &added, NULL))
                return;
            if (added < 0) {
                reply_error(c, "ERR entries_added must be positive");
                return;
            }
        } else if (arg_is(c, i, "maxdeletedid") && more) {
            if (stream_parse_id(c, &c->argv[i + 1], &maxdel, 0, 1, NULL))
                return;
            if (sid_cmp(&id, &maxdel) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the provided "
                               "max_deleted_entry_id");
                return;
            }
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
    if (!it) {
        reply_error(c, "ERR no such key");
        goto out;
    }
    t = stream_of(it);
    if (t->len > 0) { /* (Redis 7.0 does not compare with the current max deleted ID) */
        struct sid top = {UINT64_MAX, UINT64_MAX};
        struct spos pos;
        struct sent e;
        if (tstream_seek_rev(t, &top, &pos)) {
            tstream_get(t, &pos, &e);
            if (sid_cmp(&id, &e.id) < 0) {
                reply_error(c, "ERR The ID specified in XSETID is smaller than the target "
                               "stream top item");
                goto out;
            }
        }
        if (added != -1 && t->len > (uint64_t)added) {
            reply_error(c, "ERR The entries_added specified in XSETID is smaller than the "
                           "target stream length");
            goto out;
        }
    }
    t->last_id = id;
    if (added != -1)
        t->entries_added = (uint64_t)added;
    if (maxdel.ms || maxdel.seq)
        t->max_deleted_id = maxdel;
    cmd_modified_quiet(c, &k);
    notify_event(NOTIFY_STREAM, "xsetid", &k);
    reply_ok(c); /* (as Redis 7.0: a WATCH of the key is not invalidated: tc:keep-watch) */
out:
    store_unlock(s, k.stripe);
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
        if (stream_parse_id(c, &c->argv[j], &id, 0, 1, NULL))
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
            stream_parse_id(c, &a, &id, 0, 1, NULL);
            deleted += tstream_delete(stream_of(it), &id);
        }
        coll_done(c, &k, it, before, 0); /* an empty stream stays, as in Redis */
        if (deleted) {
            cmd_modified(c, &k, it);
            notify_event(NOTIFY_STREAM, "xdel", &k);
        }
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
    int64_t n = do_trim(stream_of(it), &a);
    coll_done(c, &k, it, before, 0);
    if (n) {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_STREAM, "xtrim", &k);
        if (a.approx)
            stream_prop_rewritten(c, stream_of(it), &a, -1, NULL);
    }
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
            if (block_arg_ms(c, ++j, block))
                return -1;
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

/* Whether XREAD serves stream t (NULL: missing) for the ID it waits after. At the first try
 * (woken 0) only an entry after id counts (Redis compares the last entry's ID, not the last
 * ID ever added); a blocked client woken by a write is served once the stream's last ID moved
 * past id, entries or none (Redis's serveClientsBlockedOnStreamKey). */
static int xread_ready(const struct tstream *t, const struct sid *id, int woken)
{
    struct sid last;

    if (!t)
        return 0;
    if (woken)
        return sid_cmp(&t->last_id, id) > 0;
    return t->len && tstream_last_valid_id(t, &last) && sid_cmp(&last, id) > 0;
}

/* Serve XREAD now: 1 when something was replied (entries or an error), 0 when no stream has
 * entries after its ID (a null reply is written only when emit_null). "$" means the last ID
 * of the stream (nothing can come after it without blocking). */
static int xread_serve(struct conn *c, int emit_null, int woken)
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
            ids[i] = it ? stream_of(it)->last_id : (struct sid){0, 0};
        } else if (a->n == 1 && a->p[0] == '>') {
            reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using "
                           "the GROUP <group> <consumer> option.");
            goto out;
        } else if (stream_parse_id(c, a, &ids[i], 0, 1, NULL)) {
            goto out;
        }
        if (it && xread_ready(stream_of(it), &ids[i], woken) &&
            !(woken && stream_key_repeated(keys, i)))
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
        struct tstream *t = stream_of(it);
        struct sid start = ids[i];
        struct spos pos = {0}, p0;
        struct sent e;
        long long n = 0;
        int more;

        if (!xread_ready(t, &ids[i], woken) || (woken && stream_key_repeated(keys, i)))
            continue;
        if (c->resp == 2)
            reply_array(c, 2);
        reply_bulk(c, keys[i].p, keys[i].n);
        more = stream_id_incr(&start) == 0 && tstream_seek(t, &start, &pos);
        p0 = pos;
        while (more && (count <= 0 || n < count)) {
            n++;
            more = tstream_next(t, &pos);
        }
        reply_array(c, n);
        pos = p0;
        for (long long j = 0; j < n; j++) {
            tstream_get(t, &pos, &e);
            stream_reply_entry(c, &e);
            tstream_next(t, &pos);
        }
    }
out:
    store_unlock_keys(s, keys, nkeys);
    free(ids);
    return ret;
}

/* A blocked XREAD woken by a write: as Redis, a stream whose last ID moved past the one
 * waited for is served even when the new entries are gone already (XADD ... MAXLEN 0): the
 * client gets the stream with no entries. The try just after it blocked is a first try
 * (an emptied stream keeps it blocked). */
static int xread_try(struct conn *c)
{
    return xread_serve(c, 0, block_retrying());
}

/* How XREAD blocks (its table entry's block spec): every waiter of a key retries, and a key
 * that became another type keeps it waiting. */
static const struct block_spec xread_block_spec = {.try_fn = xread_try, .reader = 1,
                                                   .wrongtype_waits = 1};

/* The last ID of a stream key as "ms-seq" ("0-0" when missing). */
static int xread_last_id(struct conn *c, const struct slice *key, char *out, size_t cap)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    struct sid id = {0, 0};

    store_key(s, &k, c->db, key->p, key->n);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, conn_now(c));
    if (it && it->type == OBJ_STREAM)
        id = stream_of(it)->last_id;
    store_unlock(s, k.stripe);
    return snprintf(out, cap, "%llu-%llu", (unsigned long long)id.ms, (unsigned long long)id.seq);
}

/* XREAD ... BLOCK ms: serve now, or block until an entry arrives after the IDs ("$" resolved
 * now) or ms passes (0 = forever). */
static void xread_block(struct conn *c, long long ms, int first, int nkeys)
{
    struct slice *sv = c->argv, *v;
    char (*ids)[48];
    int64_t deadline = block_deadline(ms);

    if (xread_serve(c, 0, 0))
        return;
    /* "$" means the last ID now: the retries must not see later entries as old */
    v = malloc(sizeof(*v) * (size_t)c->argc + sizeof(*ids) * (size_t)nkeys);
    if (!v) {
        reply_error(c, "ERR out of memory");
        return;
    }
    ids = (void *)(v + c->argc);
    memcpy(v, c->argv, sizeof(*v) * (size_t)c->argc);
    for (int i = 0; i < nkeys; i++) {
        struct slice *a = &v[first + nkeys + i];
        if (a->n == 1 && a->p[0] == '$') {
            a->n = (size_t)xread_last_id(c, &v[first + i], ids[i], sizeof(ids[i]));
            a->p = ids[i];
        }
    }
    c->argv = v;
    block_until(c, cmd_current, deadline);
    c->argv = sv;
    free(v);
}

static void xread_command(struct conn *c)
{
    long long count, block;
    int first, nkeys;

    if (xread_parse(c, &count, &block, &first, &nkeys))
        return;
    if (block < 0) {
        xread_serve(c, 1, 0);
        return;
    }
    xread_block(c, block, first, nkeys);
}

static struct cmd cmds[] = {
    {"xadd", xadd_command, -5, "write denyoom fast tc:prop-explicit", "@stream", "RW,update index:1 range:0,1,0", "stream", "Appends a new entry to a stream"},
    {"xlen", xlen_command, 2, "readonly fast", "@stream", "RO index:1 range:0,1,0", "stream", "Return the number of entries in a stream"},
    {"xrange", xrange_command, -4, "readonly", "@stream", "RO,access index:1 range:0,1,0", "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval"},
    {"xrevrange", xrevrange_command, -4, "readonly", "@stream", "RO,access index:1 range:0,1,0", "stream", "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE"},
    {"xdel", xdel_command, -3, "write fast tc:signals", "@stream", "RW,delete index:1 range:0,1,0", "stream", "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist."},
    {"xtrim", xtrim_command, -4, "write tc:signals", "@stream", "RW,delete index:1 range:0,1,0", "stream", "Trims the stream to (approximately if '~' is passed) a certain size"},
    {"xsetid", xsetid_command, -3, "write denyoom fast tc:keep-watch tc:signals", "@stream", "RW,update index:1 range:0,1,0", "stream", "An internal command for replicating stream values"},
    {"xread", xread_command, -4, "readonly blocking", "@stream", "RO,access keyword:STREAMS:1 range:-1,1,2", "stream", "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", NULL, NULL, &xread_block_spec},
};

void cmd_stream_setup(void)
{
    coll_type_setup(OBJ_STREAM, tstream_destroy, tstream_mem, tstream_copy, stream_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
    cmd_stream_cg_setup();
    cmd_stream_pel_setup();
}
