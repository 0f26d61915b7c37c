#include "cmd/coll.h"
#include "cmd/notify.h"

#include <limits.h>

static struct item *typed(struct conn *c, struct item *it, int type, int *wrong)
{
    *wrong = 0;
    if (it && it->type != type) {
        reply_error(c, ERR_WRONGTYPE);
        *wrong = 1;
        return NULL;
    }
    return it;
}

struct item *coll_read(struct conn *c, const struct skey *k, int type, int *wrong)
{
    return typed(c, store_lookup_read_locked(conn_store(c), k, conn_now(c)), type, wrong);
}

struct item *coll_write(struct conn *c, const struct skey *k, int type, int *wrong)
{
    return typed(c, store_lookup_write_locked(conn_store(c), k, conn_now(c)), type, wrong);
}

static item_free_fn *destroyers[8];

void coll_type_setup(int type, item_free_fn *destroy, item_size_fn *sizer, value_copy_fn *copier,
                     encoding_fn *encoder)
{
    destroyers[type & 7] = destroy;
    item_set_destructor(type, destroy);
    item_set_sizer(type, sizer);
    cmd_keys_set_copier(type, copier);
    cmd_keys_set_encoder(type, encoder);
}

struct item *coll_put(struct conn *c, const struct skey *k, int type, void *ptr)
{
    struct item *it = item_create((uint8_t)type, k->p, k->n, sizeof(void *), 0);

    if (!it) {
        destroyers[type & 7](ptr);
        reply_error(c, "ERR out of memory");
        return NULL;
    }
    memcpy(item_value(it), &ptr, sizeof(ptr));
    if (TC_UNLIKELY(__atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED) & NOTIFY_NEW) &&
        !store_lookup_write_locked(conn_store(c), k, conn_now(c)))
        notify_event(NOTIFY_NEW, "new", k);
    if (store_put_locked(conn_store(c), k, it)) {
        reply_error(c, "ERR out of memory");
        return NULL;
    }
    return it;
}

void coll_done(struct conn *c, const struct skey *k, struct item *it, size_t before, int empty)
{
    int64_t delta = (int64_t)item_value_mem(it) - (int64_t)before;

    if (delta)
        store_mem_adjust_locked(conn_store(c), k->stripe, delta);
    if (empty)
        store_delete_locked(conn_store(c), k, conn_now(c));
}

int arg_range(struct conn *c, int i, long long min, long long max, long long *v, const char *msg)
{
    if (!util_str2ll(c->argv[i].p, c->argv[i].n, v)) {
        reply_error(c, msg ? msg : ERR_NOTINT);
        return -1;
    }
    if (*v < min || *v > max) {
        if (msg)
            reply_error(c, msg);
        else
            reply_errorf(c, "ERR value is out of range, value must between %lld and %lld", min,
                         max);
        return -1;
    }
    return 0;
}

int arg_positive(struct conn *c, int i, long long *v, const char *msg)
{
    return arg_range(c, i, 0, LLONG_MAX, v, msg ? msg : "ERR value is out of range, must be positive");
}

int arg_double(struct conn *c, int i, double *v, const char *msg)
{
    if (!util_str2d(c->argv[i].p, c->argv[i].n, v)) {
        reply_error(c, msg ? msg : ERR_NOTFLOAT);
        return -1;
    }
    return 0;
}

int coll_scan_cursor(struct conn *c, int i, uint64_t *cursor)
{
    unsigned long long v;

    if (!util_str2ull(c->argv[i].p, c->argv[i].n, &v)) {
        reply_error(c, "ERR invalid cursor");
        return -1;
    }
    *cursor = v;
    return 0;
}

int coll_scan_opts(struct conn *c, int first, struct scan_opts *o)
{
    o->count = 10;
    o->pat = NULL;
    o->plen = 0;
    for (int i = first; i < c->argc; i += 2) {
        if (i + 1 >= c->argc) {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
        if (arg_is(c, i, "count")) {
            long long v;
            if (arg_ll(c, i + 1, &v, NULL))
                return -1;
            if (v < 1) {
                reply_error(c, ERR_SYNTAX);
                return -1;
            }
            o->count = v > 1000000000 ? 1000000000 : (long)v;
        } else if (arg_is(c, i, "match")) {
            o->pat = c->argv[i + 1].p;
            o->plen = c->argv[i + 1].n;
            if (o->plen == 1 && o->pat[0] == '*')
                o->pat = NULL;
        } else {
            reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

int coll_scan_match(const struct scan_opts *o, const char *p, size_t n)
{
    return !o->pat || util_glob_match(o->pat, o->plen, p, n, 0);
}

void coll_scan_reply(struct conn *c, uint64_t cursor, long long n, struct buf *out)
{
    char tmp[24];
    int len = util_ull2str(tmp, cursor);

    reply_array(c, 2);
    reply_bulk(c, tmp, (size_t)len);
    reply_array(c, n);
    if (out->data)
        reply_raw(c, out->data + out->rpos, buf_len(out));
}

void coll_scan_command(struct conn *c, int type, coll_scan_step_fn *step)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    uint64_t cursor;
    struct scan_opts o;
    struct buf out = {0};
    long long n = 0;

    if (coll_scan_cursor(c, 2, &cursor))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, type, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        coll_scan_reply(c, 0, 0, &out);
        goto out;
    }
    if (coll_scan_opts(c, 3, &o))
        goto out;
    void *a[3] = {&o, &out, &n};
    cursor = step(it, cursor, o.count, a);
    coll_scan_reply(c, cursor, n, &out);
out:
    store_unlock(s, k.stripe);
    buf_deinit(&out);
}

void coll_remove_members(struct conn *c, int type, coll_len_fn *len, coll_del_fn *del)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    long long removed = 0;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, type, &wrong);
    if (wrong)
        goto out;
    if (it) {
        size_t before = item_value_mem(it);
        for (int i = 2; i < c->argc && len(it); i++)
            removed += del(it, c->argv[i].p, c->argv[i].n);
        int empty = len(it) == 0;
        if (removed) {
            cmd_modified(c, &k, empty ? NULL : it);
            notify_coll(type == OBJ_HASH ? NOTIFY_HASH : type == OBJ_SET ? NOTIFY_SET : NOTIFY_ZSET,
                        type == OBJ_HASH ? "hdel" : type == OBJ_SET ? "srem" : "zrem", &k, empty);
        }
        coll_done(c, &k, it, before, empty);
    }
    reply_int(c, removed);
out:
    store_unlock(s, k.stripe);
}
