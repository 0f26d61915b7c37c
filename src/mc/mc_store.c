/* memcached storage and arithmetic: set, add, replace, append, prepend, cas, incr, decr and
 * delete, plus the store steps the meta commands ms and ma share with them. CAS values are the
 * store's lazy ones: an item without a CAS value (any write since the last one handed out)
 * never matches a client's cas unique. */
#include "mc/mc_int.h"

#include "cmd/notify.h"
#include "core/config.h"

static const char *const store_text[] = {"STORED", "NOT_STORED", "EXISTS", "NOT_FOUND",
                                         MC_ERR_OOM};

int mc_make_room(struct conn *c)
{
    if (cfg.maxmemory > 0 && store_make_room(mc_store(c))) {
        STAT_INC(mc_ws(c)->no_memory);
        return -1;
    }
    return 0;
}

/* memcached's item_size_ok for a whole item. */
static int fits(size_t nkey, uint32_t flags, size_t vlen)
{
    return 56 + nkey + 1 + (flags ? 4 : 0) + vlen + 2 <= (size_t)cfg.item_size_max;
}

/* Append or prepend data to the live item old (flags and TTL kept): memcached stores a new
 * item, with room for a CAS value when large (gets then needs no copy). */
static enum mc_store_res concat(struct store *s, const struct skey *k, struct item **itp,
                                const char *data, size_t n, int append)
{
    size_t total = (size_t)item_vlen((*itp)) + n;
    unsigned how = STRVAL_FRESH | (append ? 0 : STRVAL_PREPEND) |
                   (total >= ITEM_REF_MIN ? STRVAL_CAS : 0);

    if (!fits(k->n, item_mcflags(*itp), total))
        return MC_ST_NOT_STORED;
    return strval_concat_locked(s, k, itp, data, n, how) ? MC_ST_OOM : MC_ST_STORED;
}

void mc_delta_count(struct mc_stats *ws, int incr, int res)
{
    if (res == MC_DR_OK) {
        if (incr)
            STAT_INC(ws->incr_hits);
        else
            STAT_INC(ws->decr_hits);
    } else if (res == MC_DR_NOT_FOUND) {
        if (incr)
            STAT_INC(ws->incr_misses);
        else
            STAT_INC(ws->decr_misses);
    }
}

enum mc_store_res mc_store_locked(struct conn *c, const struct skey *k, enum mc_cmd mode,
                                  int cas_cmd, uint64_t cas, int stale, uint32_t flags,
                                  int64_t exp, const char *data, size_t vlen, int want_cas,
                                  struct item **out)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    struct item *old, *it;
    enum mc_store_res res;
    int mark_stale = 0, cls;
    uint32_t pos;

    uint64_t expired = s->stripes[k->stripe].expired;
    int ghost = mc_ghost_take_locked(k);

    *out = NULL;
    old = store_lookup_pos_locked(s, k, mc_now(c), &pos);
    /* memcached's allocation reuses a flushed or expired item of the class (reclaimed): here
     * the one this key held, whose memory the new value takes */
    cls = mc_class_of(mc_item_total(k->n, flags, vlen)); /* the class memcached allocates in */
    STAT_INC(ws->cls[cls][MC_CLS_CMD_SET]);
    if ((ghost && !old) || s->stripes[k->stripe].expired != expired) {
        STAT_INC(ws->reclaimed);
        STAT_INC(ws->cls[cls][MC_CLS_RECLAIMED]);
    }
    mc_watch_get(c, k->p, k->n, old && old->type == OBJ_STRING ? old : NULL);
    switch (mode) {
    case MC_ADD:
        if (old) {
            store_touch(old);
            res = MC_ST_NOT_STORED;
            break;
        }
        res = MC_ST_STORED;
        break;
    case MC_REPLACE:
        res = old ? MC_ST_STORED : MC_ST_NOT_STORED;
        break;
    case MC_CAS:
        if (!old || old->type != OBJ_STRING) {
            res = MC_ST_NOT_FOUND;
            STAT_INC(ws->cas_misses);
        } else if (mc_item_cas(old) != 0 && mc_item_cas(old) == cas) {
            res = MC_ST_STORED;
            STAT_INC(ws->cas_hits);
            mc_cls_inc(c, mc_it_total(old), MC_CLS_CAS_HITS);
        } else if (stale && (mc_item_cas(old) == 0 || cas < mc_item_cas(old))) {
            /* an older CAS with I: stored, but marked stale */
            res = MC_ST_STORED;
            mark_stale = 1;
            STAT_INC(ws->cas_hits);
            mc_cls_inc(c, mc_it_total(old), MC_CLS_CAS_HITS);
        } else {
            res = MC_ST_EXISTS;
            STAT_INC(ws->cas_badval);
            mc_cls_inc(c, mc_it_total(old), MC_CLS_CAS_BADVAL);
        }
        break;
    case MC_APPEND:
    case MC_PREPEND:
        if (!old || old->type != OBJ_STRING) {
            res = MC_ST_NOT_STORED;
        } else if (cas_cmd && (mc_item_cas(old) == 0 || mc_item_cas(old) != cas)) {
            res = MC_ST_EXISTS;
        } else {
            it = old;
            res = concat(s, k, &it, data, vlen, mode == MC_APPEND);
            if (res == MC_ST_STORED)
                *out = it;
        }
        break;
    default:
        res = MC_ST_STORED;
        break;
    }
    if (res == MC_ST_STORED &&
        (mode == MC_SET || mode == MC_ADD || mode == MC_REPLACE || mode == MC_CAS)) {
        int won = old ? old->mc_won : 0;
        if (mark_stale) /* a stale value replaces the old one but keeps its TTL */
            exp = item_expire(old);
        /* large values get room for a CAS value so that gets does not copy them */
        it = strval_set_locked(s, k, old, pos, data, vlen, flags, exp,
                               want_cas || vlen >= ITEM_REF_MIN, old && !mc_pinned(c, old));
        if (!it) {
            STAT_INC(ws->cls[cls][MC_CLS_OOM]);
            return MC_ST_OOM;
        }
        if (mark_stale) { /* memcached keeps a handed-out recache token */
            it->bits |= IT_MC_STALE;
            it->mc_won = (uint16_t)(won & 1);
        }
        *out = it;
    }
    if (TC_UNLIKELY(atomic_load_explicit(&mc_watch_mask, memory_order_relaxed))) {
        static const char *const st[] = {"stored", "not_stored", "exists", "not_found",
                                         "no_memory"};
        const char *cmd = mode == MC_ADD ? "add" : mode == MC_REPLACE ? "replace"
                        : mode == MC_APPEND ? "append" : mode == MC_PREPEND ? "prepend"
                        : mode == MC_CAS && cas_cmd && !stale ? "cas" : "set";
        mc_watch_store(c, k->p, k->n, st[res], cmd, *out ? item_expire(*out) : exp,
                       *out ? item_vlen((*out)) : vlen);
    }
    if (res == MC_ST_STORED)
        notify_write(NOTIFY_STRING, mode == MC_APPEND || mode == MC_PREPEND ? "append" : "set",
                     k, !old);
    return res;
}

/* set/add/replace/append/prepend/cas */
void mc_update_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct skey k;
    struct item *it;
    enum mc_store_res res;

    STAT_INC(mc_ws(c)->set_cmds);
    mc_detail(r->key.p, r->key.n, MC_DETAIL_SET, 0);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    if (mc_make_room(c)) {
        res = MC_ST_OOM;
    } else {
        store_lock(s, k.stripe);
        res = mc_store_locked(c, &k, r->cmd, r->cmd == MC_CAS, r->num, 0, r->flags,
                              mc_exptime_ms(r->exptime, mc_now(c)), r->data, r->vlen, 0, &it);
        store_unlock(s, k.stripe);
        if (res == MC_ST_OOM)
            STAT_INC(mc_ws(c)->no_memory);
    }
    if (res == MC_ST_OOM && r->cmd == MC_SET) {
        /* memcached drops the old value rather than leave it stale */
        store_lock(s, k.stripe);
        store_delete_locked(s, &k, mc_now(c));
        store_unlock(s, k.stripe);
    }
    if (!r->noreply)
        mc_out_line(c, store_text[res]);
}

enum mc_delta_res mc_delta_locked(struct conn *c, const struct skey *k, int incr, uint64_t delta,
                                  uint64_t req_cas, uint64_t *val, struct item **itp)
{
    struct store *s = mc_store(c);
    struct item *it = mc_find_locked(c, s, k, mc_now(c), NULL);
    int rc;

    *itp = NULL;
    if (!it)
        return MC_DR_NOT_FOUND;
    if (item_vlen(it) == 0)
        return MC_DR_NON_NUMERIC;
    if (req_cas && mc_item_cas(it) != req_cas)
        return MC_DR_CAS_MISMATCH;
    rc = strval_mc_delta_locked(s, k, &it, incr, delta, mc_pinned(c, it), val);
    if (rc == STRVAL_NOT_NUMBER)
        return MC_DR_NON_NUMERIC;
    if (rc)
        return MC_DR_OOM;
    notify_write(NOTIFY_STRING, incr ? "incrby" : "decrby", k, 0);
    mc_cls_inc(c, mc_it_total(it), incr ? MC_CLS_INCR_HITS : MC_CLS_DECR_HITS);
    *itp = it;
    return MC_DR_OK;
}

void mc_arith_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    int incr = r->cmd == MC_INCR;
    struct skey k;
    struct item *it;
    uint64_t v = 0;
    enum mc_delta_res res;

    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    res = mc_delta_locked(c, &k, incr, r->num, 0, &v, &it);
    store_unlock(s, k.stripe);
    mc_delta_count(ws, incr, res);
    if (r->noreply)
        return;
    switch (res) {
    case MC_DR_OK:
        mc_check(c, mc_compose_u64(&c->wbuf, v));
        break;
    case MC_DR_NOT_FOUND:
        mc_out_line(c, "NOT_FOUND");
        break;
    case MC_DR_NON_NUMERIC:
        mc_out_line(c, MC_ERR_NONNUM);
        break;
    default:
        mc_out_line(c, "SERVER_ERROR out of memory");
        break;
    }
}

void mc_delete_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct skey k;
    struct item *it;
    int found;

    mc_detail(r->key.p, r->key.n, MC_DETAIL_DEL, 0);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = strval_find_locked(s, &k, mc_now(c), NULL);
    mc_watch_get(c, r->key.p, r->key.n, it);
    if (it)
        mc_cls_inc(c, mc_it_total(it), MC_CLS_DELETE_HITS);
    found = store_delete_locked(s, &k, mc_now(c));
    if (found)
        notify_write(NOTIFY_GENERIC, "del", &k, 0);
    if (mc_ghost_take_locked(&k) && !found) /* memcached's lookup met the flushed item */
        STAT_INC(mc_ws(c)->get_flushed);
    store_unlock(s, k.stripe);
    if (found)
        STAT_INC(mc_ws(c)->delete_hits);
    else
        STAT_INC(mc_ws(c)->delete_misses);
    if (!r->noreply)
        mc_out_line(c, found ? "DELETED" : "NOT_FOUND");
}
