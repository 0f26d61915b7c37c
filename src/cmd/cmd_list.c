/* List commands with Redis 7.0 semantics (blocking variants come with the blocking issue). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/coll.h"
#include "cmd/keyset.h"
#include "cmd/propagate.h"
#include "store/lpack.h"
#include "store/t_list.h"

#define HEAD 0
#define TAIL 1

static struct tlist *lst(struct item *it)
{
    return item_ptr(it);
}

static const char *list_encoding(struct item *it)
{
    (void)it;
    return "quicklist"; /* Redis 7.0 keeps every list in a quicklist */
}

/* A new empty list stored under k; NULL after an OOM reply. */
static struct item *list_create(struct conn *c, const struct skey *k)
{
    struct tlist *l = tlist_create();

    if (!l) {
        reply_error(c, "ERR out of memory");
        return NULL;
    }
    return coll_put(c, k, OBJ_LIST, l);
}

static void push_generic(struct conn *c, int where, int xx)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    size_t before;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (xx) {
            reply_int(c, 0);
            goto out;
        }
        if (!(it = list_create(c, &k)))
            goto out;
    }
    before = item_value_mem(it);
    for (int i = 2; i < c->argc; i++) {
        if (tlist_push(lst(it), where, c->argv[i].p, c->argv[i].n)) {
            int empty = lst(it)->len == 0;
            coll_done(c, &k, it, before, empty);
            if (i > 2)
                cmd_modified(c, &k, empty ? NULL : it);
            reply_error(c, "ERR out of memory");
            goto out;
        }
    }
    coll_done(c, &k, it, before, 0);
    cmd_modified(c, &k, it);
    notify_event(NOTIFY_LIST, where == HEAD ? "lpush" : "rpush", &k);
    reply_int(c, (long long)lst(it)->len);
out:
    store_unlock(s, k.stripe);
}

static void lpush_command(struct conn *c)
{
    push_generic(c, HEAD, 0);
}
static void rpush_command(struct conn *c)
{
    push_generic(c, TAIL, 0);
}
static void lpushx_command(struct conn *c)
{
    push_generic(c, HEAD, 1);
}
static void rpushx_command(struct conn *c)
{
    push_generic(c, TAIL, 1);
}

/* Pop up to count elements from where, replying them as bulks (no header). */
static void pop_n(struct conn *c, struct tlist *l, int where, long long count)
{
    while (count-- > 0 && l->len) {
        size_t n;
        const char *p = tlist_peek(l, where, &n);
        reply_bulk(c, p, n);
        tlist_pop(l, where);
    }
}

static void pop_generic(struct conn *c, int where)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long count = -1;
    int wrong;
    size_t before;

    if (c->argc > 3) {
        reply_arity_error(c, where == HEAD ? "lpop" : "rpop");
        return;
    }
    if (c->argc == 3 && arg_positive(c, 2, &count, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (count >= 0)
            reply_null_array(c);
        else
            reply_null(c);
        goto out;
    }
    if (count == 0) {
        reply_array(c, 0);
        goto out;
    }
    before = item_value_mem(it);
    if (count < 0) {
        pop_n(c, lst(it), where, 1);
    } else {
        reply_array(c, count < (long long)lst(it)->len ? count : (long long)lst(it)->len);
        pop_n(c, lst(it), where, count);
    }
    {
        int empty = lst(it)->len == 0;
        coll_done(c, &k, it, before, empty);
        cmd_modified(c, &k, empty ? NULL : it); /* a list here holds at least one element */
        notify_coll(NOTIFY_LIST, where == HEAD ? "lpop" : "rpop", &k, empty);
    }
out:
    store_unlock(s, k.stripe);
}

static void lpop_command(struct conn *c)
{
    pop_generic(c, HEAD);
}
static void rpop_command(struct conn *c)
{
    pop_generic(c, TAIL);
}

static void llen_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_LIST, &wrong);
    if (!wrong)
        reply_int(c, it ? (long long)lst(it)->len : 0);
    store_unlock(s, k.stripe);
}

/* Normalise [start, end] against len like Redis; returns 0 for an empty range. */
static int clamp_range(long long *start, long long *end, long long len)
{
    if (*start < 0)
        *start += len;
    if (*end < 0)
        *end += len;
    if (*start < 0)
        *start = 0;
    if (*start > *end || *start >= len)
        return 0;
    if (*end >= len)
        *end = len - 1;
    return 1;
}

static void lrange_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long start, end;
    int wrong;
    struct lpos pos;

    if (arg_ll(c, 2, &start, NULL) || arg_ll(c, 3, &end, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it || !clamp_range(&start, &end, (long long)lst(it)->len)) {
        reply_array(c, 0);
        goto out;
    }
    reply_array(c, end - start + 1);
    tlist_seek(lst(it), (long)start, &pos);
    for (long long i = start; i <= end; i++) {
        size_t n;
        const char *p = tlist_get(&pos, &n);
        reply_bulk(c, p, n);
        if (i < end)
            tlist_next(lst(it), &pos);
    }
out:
    store_unlock(s, k.stripe);
}

static void lindex_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long idx;
    int wrong;
    struct lpos pos;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_null(c); /* as Redis: a missing key answers nil before the index is read */
        goto out;
    }
    if (arg_ll(c, 2, &idx, NULL))
        goto out;
    if (idx < LONG_MIN / 2 || tlist_seek(lst(it), (long)idx, &pos)) {
        reply_null(c);
    } else {
        size_t n;
        const char *p = tlist_get(&pos, &n);
        reply_bulk(c, p, n);
    }
out:
    store_unlock(s, k.stripe);
}

static void lset_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long idx;
    int wrong;
    struct lpos pos;

    if (arg_ll(c, 2, &idx, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_error(c, ERR_NOKEY);
    } else if (idx < LONG_MIN / 2 || tlist_seek(lst(it), (long)idx, &pos)) {
        reply_error(c, "ERR index out of range");
    } else {
        size_t before = item_value_mem(it);
        int r = tlist_replace(lst(it), &pos, c->argv[3].p, c->argv[3].n);
        coll_done(c, &k, it, before, 0);
        if (r) {
            reply_error(c, "ERR out of memory");
        } else {
            cmd_modified(c, &k, it);
            notify_event(NOTIFY_LIST, "lset", &k);
            reply_ok(c);
        }
    }
out:
    store_unlock(s, k.stripe);
}

static int elem_eq(const char *p, size_t n, const struct slice *a)
{
    return n == a->n && memcmp(p, a->p, n) == 0;
}

static void lrem_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long count, removed = 0;
    int wrong;
    struct lpos pos;
    size_t before;

    if (arg_ll(c, 2, &count, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    before = item_value_mem(it);
    struct tlist *l = lst(it);
    if (count >= 0) {
        int more = tlist_seek(l, 0, &pos) == 0;
        while (more) {
            size_t n;
            const char *p = tlist_get(&pos, &n);
            if (elem_eq(p, n, &c->argv[3])) {
                more = tlist_delete(l, &pos) == 0;
                if (++removed == count)
                    break;
            } else {
                more = tlist_next(l, &pos) == 0;
            }
        }
    } else {
        long long idx = (long long)l->len - 1;
        while (idx >= 0) {
            size_t n;
            const char *p;
            tlist_seek(l, (long)idx, &pos);
            /* walk back from idx within this pass, deleting as we go */
            for (;;) {
                p = tlist_get(&pos, &n);
                if (elem_eq(p, n, &c->argv[3])) {
                    tlist_delete(l, &pos);
                    idx--;
                    if (++removed == -count)
                        idx = -1;
                    break; /* positions after a delete are re-sought */
                }
                idx--;
                if (idx < 0 || tlist_prev(l, &pos))
                    break;
            }
        }
    }
    {
        int empty = l->len == 0;
        coll_done(c, &k, it, before, empty);
        if (removed) {
            cmd_modified(c, &k, empty ? NULL : it);
            notify_coll(NOTIFY_LIST, "lrem", &k, empty);
        }
    }
    reply_int(c, removed);
out:
    store_unlock(s, k.stripe);
}

static void ltrim_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long start, end;
    int wrong;

    if (arg_ll(c, 2, &start, NULL) || arg_ll(c, 3, &end, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (it) {
        size_t before = item_value_mem(it);
        struct tlist *l = lst(it);
        int empty = 1;
        if (!clamp_range(&start, &end, (long long)l->len)) {
            coll_done(c, &k, it, before, 1);
        } else {
            tlist_trim(l, (long)start, (long)end);
            empty = l->len == 0;
            coll_done(c, &k, it, before, empty);
        }
        cmd_modified(c, &k, empty ? NULL : it); /* as Redis, even when nothing was trimmed */
        notify_coll(NOTIFY_LIST, "ltrim", &k, empty);
    }
    reply_ok(c);
out:
    store_unlock(s, k.stripe);
}

static void linsert_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int after, wrong;
    struct lpos pos;

    if (arg_is(c, 2, "after"))
        after = 1;
    else if (arg_is(c, 2, "before"))
        after = 0;
    else {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        reply_int(c, 0);
        goto out;
    }
    struct tlist *l = lst(it);
    int more = tlist_seek(l, 0, &pos) == 0;
    while (more) {
        size_t n;
        const char *p = tlist_get(&pos, &n);
        if (elem_eq(p, n, &c->argv[3])) {
            size_t before = item_value_mem(it);
            int r = tlist_insert(l, &pos, after, c->argv[4].p, c->argv[4].n);
            coll_done(c, &k, it, before, 0);
            if (r) {
                reply_error(c, "ERR out of memory");
            } else {
                cmd_modified(c, &k, it);
                notify_event(NOTIFY_LIST, "linsert", &k);
                reply_int(c, (long long)l->len);
            }
            goto out;
        }
        more = tlist_next(l, &pos) == 0;
    }
    reply_int(c, -1);
out:
    store_unlock(s, k.stripe);
}

static void lpos_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    long long rank = 1, count = -1, maxlen = 0, matches = 0, idx = 0, found = 0;
    int wrong, back = 0;
    struct lpos pos;

    for (int j = 3; j < c->argc; j++) {
        int more = j + 1 < c->argc;
        if (arg_is(c, j, "rank") && more) {
            if (arg_ll(c, ++j, &rank, NULL))
                return;
            if (rank == 0) {
                reply_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 "
                               "from the second ... or use negative to start from the end of "
                               "the list");
                return;
            }
        } else if (arg_is(c, j, "count") && more) {
            if (arg_positive(c, ++j, &count, "ERR COUNT can't be negative"))
                return;
        } else if (arg_is(c, j, "maxlen") && more) {
            if (arg_positive(c, ++j, &maxlen, "ERR MAXLEN can't be negative"))
                return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (rank < 0) {
        rank = rank == LLONG_MIN ? 1 : -rank; /* Redis's negation wraps: any match counts */
        back = 1;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (count != -1)
            reply_array(c, 0);
        else
            reply_null(c);
        goto out;
    }
    struct tlist *l = lst(it);
    long long len = (long long)l->len;
    /* two passes when COUNT is given: count the matches for the header, then reply them */
    for (int pass = count == -1 ? 1 : 0; pass < 2; pass++) {
        long long hits = found;
        if (pass == 1 && count != -1)
            reply_array(c, hits);
        matches = idx = found = 0;
        int more = tlist_seek(l, back ? -1 : 0, &pos) == 0;
        while (more && (maxlen == 0 || idx < maxlen)) {
            size_t n;
            const char *p = tlist_get(&pos, &n);
            if (elem_eq(p, n, &c->argv[2]) && ++matches >= rank) {
                if (pass == 1)
                    reply_int(c, back ? len - 1 - idx : idx);
                found++;
                if (count == -1 || (count && found >= count))
                    break;
            }
            idx++;
            more = (back ? tlist_prev(l, &pos) : tlist_next(l, &pos)) == 0;
        }
    }
    if (count == -1 && !found)
        reply_null(c);
out:
    store_unlock(s, k.stripe);
}

static int parse_where(struct conn *c, int i, int *where)
{
    if (arg_is(c, i, "left"))
        *where = HEAD;
    else if (arg_is(c, i, "right"))
        *where = TAIL;
    else {
        reply_error(c, ERR_SYNTAX);
        return -1;
    }
    return 0;
}

static void lmove_generic(struct conn *c, int from, int to)
{
    struct store *s = conn_store(c);
    struct skey k[2];
    struct item *src, *dst;
    int wrong;
    size_t n, sb, db = 0;
    const char *p;

    arg_key(c, 1, &k[0]);
    arg_key(c, 2, &k[1]);
    store_lock_keys(s, k, 2);
    src = coll_write(c, &k[0], OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!src) {
        reply_null(c);
        goto out;
    }
    dst = coll_write(c, &k[1], OBJ_LIST, &wrong);
    if (wrong)
        goto out;
    if (!dst && !(dst = list_create(c, &k[1])))
        goto out;
    p = tlist_peek(lst(src), from, &n);
    reply_bulk(c, p, n);
    sb = item_value_mem(src);
    if (dst != src) {
        db = item_value_mem(dst);
        if (tlist_push(lst(dst), to, p, n) == 0)
            tlist_pop(lst(src), from);
        coll_done(c, &k[1], dst, db, lst(dst)->len == 0);
    } else if (from != to) {
        /* rotation of one list: the element moves end to end (copied first: the push may
         * move the chunk it lives in) */
        char *tmp = n <= sizeof(c->w->scratch) ? c->w->scratch : malloc(n);
        if (tmp) {
            memcpy(tmp, p, n);
            tlist_pop(lst(src), from);
            if (tlist_push(lst(dst), to, tmp, n))
                tlist_push(lst(dst), from, tmp, n); /* put it back where it was */
            if (tmp != c->w->scratch)
                free(tmp);
        }
    }
    {
        int empty = lst(src)->len == 0;
        coll_done(c, &k[0], src, sb, empty);
        cmd_modified(c, &k[0], empty ? NULL : src);
        if (dst != src)
            cmd_modified(c, &k[1], dst);
        notify_event(NOTIFY_LIST, to == HEAD ? "lpush" : "rpush", &k[1]);
        notify_coll(NOTIFY_LIST, from == HEAD ? "lpop" : "rpop", &k[0], empty);
    }
out:
    store_unlock_keys(s, k, 2);
}

static void lmove_command(struct conn *c)
{
    int from, to;

    if (parse_where(c, 3, &from) || parse_where(c, 4, &to))
        return;
    lmove_generic(c, from, to);
}

static void rpoplpush_command(struct conn *c)
{
    lmove_generic(c, TAIL, HEAD);
}

static void lmpop_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long numkeys, count = -1;
    int where;
    struct skey *keys;

    if (arg_range(c, 1, 1, LLONG_MAX, &numkeys, "ERR numkeys should be greater than 0"))
        return;
    if (numkeys >= c->argc - 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    int wi = 2 + (int)numkeys;
    if (parse_where(c, wi, &where))
        return;
    for (int j = wi + 1; j < c->argc; j++) {
        if (count == -1 && arg_is(c, j, "count") && j + 1 < c->argc) {
            if (arg_range(c, ++j, 1, LLONG_MAX, &count, "ERR count should be greater than 0"))
                return;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (count == -1)
        count = 1;
    keys = keyset_resolve(c, 2, 1, (int)numkeys);
    if (!keys)
        return;
    store_lock_keys(s, keys, (int)numkeys);
    for (int i = 0; i < numkeys; i++) {
        int wrong;
        struct item *it = coll_write(c, &keys[i], OBJ_LIST, &wrong);
        if (wrong)
            goto out;
        if (!it)
            continue;
        size_t before = item_value_mem(it);
        long long len = (long long)lst(it)->len;
        reply_array(c, 2);
        reply_bulk(c, keys[i].p, keys[i].n);
        reply_array(c, count < len ? count : len);
        pop_n(c, lst(it), where, count);
        if (cmd_prop_begin(c, 3)) { /* replayed as LPOP/RPOP key n, as Redis rewrites it */
            char num[24];
            cmd_prop_arg(c, where == HEAD ? "LPOP" : "RPOP", 4);
            cmd_prop_arg(c, keys[i].p, keys[i].n);
            cmd_prop_arg(c, num, (size_t)util_ll2str(num, count < len ? count : len));
            cmd_prop_end(c);
        }
        int empty = lst(it)->len == 0;
        coll_done(c, &keys[i], it, before, empty);
        cmd_modified(c, &keys[i], empty ? NULL : it);
        notify_coll(NOTIFY_LIST, where == HEAD ? "lpop" : "rpop", &keys[i], empty);
        goto out;
    }
    reply_null_array(c);
out:
    store_unlock_keys(s, keys, (int)numkeys);
}

static struct cmd cmds[] = {
    {"lpush", lpush_command, -3, "write denyoom fast tc:signals", "@list", "RW,insert index:1 range:0,1,0", "list", "Prepend one or multiple elements to a list"},
    {"rpush", rpush_command, -3, "write denyoom fast tc:signals", "@list", "RW,insert index:1 range:0,1,0", "list", "Append one or multiple elements to a list"},
    {"lpushx", lpushx_command, -3, "write denyoom fast tc:signals", "@list", "RW,insert index:1 range:0,1,0", "list", "Prepend an element to a list, only if the list exists"},
    {"rpushx", rpushx_command, -3, "write denyoom fast tc:signals", "@list", "RW,insert index:1 range:0,1,0", "list", "Append an element to a list, only if the list exists"},
    {"lpop", lpop_command, -2, "write fast tc:signals", "@list", "RW,access,delete index:1 range:0,1,0", "list", "Remove and get the first elements in a list"},
    {"rpop", rpop_command, -2, "write fast tc:signals", "@list", "RW,access,delete index:1 range:0,1,0", "list", "Remove and get the last elements in a list"},
    {"llen", llen_command, 2, "readonly fast", "@list", "RO index:1 range:0,1,0", "list", "Get the length of a list"},
    {"lrange", lrange_command, 4, "readonly", "@list", "RO,access index:1 range:0,1,0", "list", "Get a range of elements from a list"},
    {"lindex", lindex_command, 3, "readonly", "@list", "RO,access index:1 range:0,1,0", "list", "Get an element from a list by its index"},
    {"lset", lset_command, 4, "write denyoom tc:signals", "@list", "RW,update index:1 range:0,1,0", "list", "Set the value of an element in a list by its index"},
    {"lrem", lrem_command, 4, "write tc:signals", "@list", "RW,delete index:1 range:0,1,0", "list", "Remove elements from a list"},
    {"ltrim", ltrim_command, 4, "write tc:signals", "@list", "RW,delete index:1 range:0,1,0", "list", "Trim a list to the specified range"},
    {"linsert", linsert_command, 5, "write denyoom tc:signals", "@list", "RW,insert index:1 range:0,1,0", "list", "Insert an element before or after another element in a list"},
    {"lpos", lpos_command, -3, "readonly", "@list", "RO,access index:1 range:0,1,0", "list", "Return the index of matching elements on a list"},
    {"lmove", lmove_command, 5, "write denyoom tc:signals", "@list", "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0", "list", "Pop an element from a list, push it to another list and return it"},
    {"rpoplpush", rpoplpush_command, 3, "write denyoom tc:signals", "@list", "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0", "list", "Remove the last element in a list, prepend it to another list and return it"},
    {"lmpop", lmpop_command, -4, "write tc:signals", "@list", "RW,access,delete index:1 keynum:0,1,1", "list", "Pop elements from a list"},
};

void cmd_list_setup(void)
{
    coll_type_setup(OBJ_LIST, tlist_destroy, tlist_mem, tlist_copy, list_encoding);
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
