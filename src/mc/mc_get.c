/* memcached retrieval: get, gets, gat, gats and touch. The get family is the hot path: one
 * lookup and one reply append per key, no allocation. */
#include "mc/mc_int.h"

void mc_out_value(struct conn *c, struct item *it)
{
    if (it->bits & IT_REF) {
        item_ref(it); /* dropped by item_unref once the bytes are written */
        mc_check(c, conn_add_ref(c, item_value(it), item_vlen(it), it, item_unref));
    } else
        mc_check(c, buf_append(&c->wbuf, item_value(it), item_vlen(it)));
    mc_out_line(c, "");
}

/* "VALUE key flags bytes [cas]" and the value block of a get hit, written straight into the
 * output buffer (a large value by reference). Under the stripe lock. */
static void out_hit(struct conn *c, const struct mc_tok *key, struct item *it, int with_cas,
                    uint64_t cas)
{
    if (!(it->bits & IT_REF)) {
        mc_check(c, mc_compose_value(&c->wbuf, key->p, key->n, item_mcflags(it),
                                     item_value(it), item_vlen(it), with_cas, cas));
        return;
    }
    mc_check(c, mc_compose_value(&c->wbuf, key->p, key->n, item_mcflags(it), NULL, item_vlen(it),
                                 with_cas, cas));
    mc_out_value(c, it);
}

void mc_get_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    int64_t now = mc_now(c);
    int with_cas = r->cmd == MC_GETS || r->cmd == MC_GATS;
    int touch = r->cmd == MC_GAT || r->cmd == MC_GATS;
    int64_t exp = touch ? mc_exptime_ms(r->exptime, now) : 0;
    const char *pos = r->keys;
    struct mc_tok t;
    int ti = touch ? 2 : 1; /* next key in r->tok when the line fit in it (no rest) */

    while (r->rest ? mc_next_token(&pos, r->end, &t)
                   : ti < r->ntok - 1 ? (t = r->tok[ti++], 1) : 0) {
        struct skey k;
        struct item *it;
        int expired;

        store_key(s, &k, MC_DB, t.p, t.n);
        store_lock(s, k.stripe);
        it = mc_find_locked(c, s, &k, now, &expired);
        mc_watch_get(c, t.p, t.n, it);
        if (it) {
            uint64_t cas = 0;
            if (touch)
                it = mc_set_exp_locked(s, &k, it, exp);
            strval_hit_locked(s, &k, it, 1);
            if (with_cas)
                cas = MC_CAS_OUT(store_cas_locked(s, &k, &it));
            conn_udp_cut(c); /* memcached answers each hit of a get on its own over UDP */
            out_hit(c, &t, it, with_cas, cas);
            mc_detail(t.p, t.n, MC_DETAIL_GET, 1);
            mc_cls_inc(c, mc_it_total(it), touch ? MC_CLS_TOUCH_HITS : MC_CLS_GET_HITS);
            if (touch) {
                STAT_INC(ws->touch_cmds);
                STAT_INC(ws->touch_hits);
            } else {
                STAT_INC(ws->get_cmds);
                STAT_INC(ws->get_hits);
            }
        } else {
            strval_miss_locked(s, &k);
            mc_detail(t.p, t.n, MC_DETAIL_GET, 0);
            if (touch) {
                STAT_INC(ws->touch_cmds);
                STAT_INC(ws->touch_misses);
            } else {
                STAT_INC(ws->get_cmds);
                STAT_INC(ws->get_misses);
                STAT_ADD(ws->get_expired, (uint64_t)expired);
            }
        }
        store_unlock(s, k.stripe);
    }
    mc_out_line(c, "END");
}

void mc_touch_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct skey k;
    struct item *it;

    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = mc_find_locked(c, s, &k, mc_now(c), NULL);
    if (it) {
        it = mc_set_exp_locked(s, &k, it, mc_exptime_ms(r->exptime, mc_now(c)));
        store_touch(it);
        it->fetched = 1; /* memcached's touch is a fetch with bump */
        mc_cls_inc(c, mc_it_total(it), MC_CLS_TOUCH_HITS);
    }
    store_unlock(s, k.stripe);
    STAT_INC(mc_ws(c)->touch_cmds);
    if (it)
        STAT_INC(mc_ws(c)->touch_hits);
    else
        STAT_INC(mc_ws(c)->touch_misses);
    if (!r->noreply)
        mc_out_line(c, it ? "TOUCHED" : "NOT_FOUND");
}
