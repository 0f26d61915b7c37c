/* memcached meta commands: mg, ms, md, ma and me, with their flags and return flags. A
 * response line is built with mc_line (src/proto/mc_compose.h); return flags come out in the
 * order the request gave them, as memcached does. */
#include "mc/mc_int.h"

#include "cmd/notify.h"

static const char *const store_meta[] = {"HD", "NS", "EX", "NF", MC_ERR_OOM};

void mc_mg_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    int64_t now = mc_now(c);
    uint64_t has = r->m.has;
    struct skey k;
    struct item *it;
    int expired, created = 0, won = 0, token_sent, fetched, ttl_set = 0;
    uint32_t idle;
    struct mc_line l;

    STAT_INC(ws->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = mc_find_locked(c, s, &k, now, &expired);
    mc_watch_get(c, r->key.p, r->key.n, it);
    if (!it && (has & MC_MF('N'))) {
        /* vivify an empty item; a key of another type is replaced */
        it = strval_put_locked(s, &k, NULL, "", 0);
        created = it != NULL;
    }
    if (!it) {
        strval_miss_locked(s, &k);
        store_unlock(s, k.stripe);
        if (has & MC_MF('T')) {
            STAT_INC(ws->touch_cmds);
            STAT_INC(ws->touch_misses);
        } else {
            STAT_INC(ws->get_cmds);
            STAT_INC(ws->get_misses);
            STAT_ADD(ws->get_expired, (uint64_t)expired);
        }
        if (r->noreply)
            return;
        l.n = 0;
        mc_line_put(&l, "EN", 2);
        mc_line_opaque_key(&l, r);
        mc_out_meta(c, &l);
        return;
    }
    token_sent = it->mc_won;
    fetched = it->fetched != 0;
    idle = store_idle_seconds(it);
    l.n = 0;
    if (has & MC_MF('v')) {
        mc_line_put(&l, "VA ", 3);
        mc_line_u64(&l, item_vlen(it));
    } else {
        mc_line_put(&l, "HD", 2);
    }
    for (int i = 2; i < r->ntok - 1; i++) {
        switch (r->tok[i].p[0]) {
        case 'T':
            ttl_set = 1;
            it = mc_set_exp_locked(s, &k, it, mc_exptime_ms(r->m.ttl, now));
            break;
        case 'N':
            if (created) {
                it = mc_set_exp_locked(s, &k, it, mc_exptime_ms(r->m.vivify_ttl, now));
                won = 1;
            }
            break;
        case 'R': {
            int64_t exp = item_expire(it), rt = mc_exptime_ms(r->m.recache_ttl, now);
            if (!token_sent && !created && exp != 0 && exp < rt)
                won = 1;
            break;
        }
        case 's':
            mc_line_flag_u64(&l, 's', item_vlen(it));
            break;
        case 't':
            if (item_expire(it)) /* memcached prints it unsigned */
                mc_line_flag_u64(&l, 't', (uint32_t)mc_ttl_left(it, now));
            else
                mc_line_put(&l, " t-1", 4);
            break;
        case 'c':
            mc_line_flag_u64(&l, 'c', MC_CAS_OUT(store_cas_locked(s, &k, &it)));
            break;
        case 'f':
            mc_line_flag_u64(&l, 'f', item_mcflags(it));
            break;
        case 'l':
            mc_line_flag_u64(&l, 'l', idle);
            break;
        case 'h':
            mc_line_put(&l, fetched ? " h1" : " h0", 3);
            break;
        case 'O':
            mc_line_tok(&l, &r->tok[i]);
            break;
        case 'k':
            mc_line_key(&l, r);
            break;
        }
    }
    if (token_sent)
        mc_line_put(&l, " Z", 2);
    if (it->bits & IT_MC_STALE) {
        mc_line_put(&l, " X", 2);
        if (!token_sent)
            won = 1;
    }
    if (won) {
        mc_line_put(&l, " W", 2);
        it->mc_won = 1;
    }
    mc_out_meta(c, &l);
    if (has & MC_MF('v'))
        mc_out_value(c, it);
    ((struct mc_conn *)c->mc)->mg_cur = it;
    strval_hit_locked(s, &k, it, !(has & MC_MF('u')));
    mc_cls_inc(c, mc_it_total(it), ttl_set ? MC_CLS_TOUCH_HITS : MC_CLS_GET_HITS);
    store_unlock(s, k.stripe);
    if (ttl_set) {
        STAT_INC(ws->touch_cmds);
        STAT_INC(ws->touch_hits);
    } else {
        STAT_INC(ws->get_cmds);
        STAT_INC(ws->get_hits);
    }
}

void mc_ms_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct skey k;
    struct item *it = NULL;
    enum mc_store_res res;
    enum mc_cmd mode;
    uint64_t has = r->m.has, cas = 0;
    int cas_mode;
    struct mc_line l;

    STAT_INC(mc_ws(c)->set_cmds);
    STAT_INC(mc_ws(c)->meta_cmds);
    switch (r->m.mode) {
    case 'E': mode = MC_ADD; break;
    case 'A': mode = MC_APPEND; break;
    case 'P': mode = MC_PREPEND; break;
    case 'R': mode = MC_REPLACE; break;
    default: mode = MC_SET; break;
    }
    cas_mode = (has & MC_MF('C')) != 0;
    if (cas_mode && (mode == MC_SET || mode == MC_REPLACE))
        mode = MC_CAS;
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    if (mc_make_room(c)) {
        res = MC_ST_OOM;
    } else {
        int64_t exp = has & MC_MF('T') ? mc_exptime_ms(r->m.ttl, mc_now(c)) : 0;
        store_lock(s, k.stripe);
        res = mc_store_locked(c, &k, mode, cas_mode, r->m.cas, (has & MC_MF('I')) != 0,
                              r->m.flags, exp, r->data, r->vlen,
                              (has & (MC_MF('c') | MC_MF('E'))) != 0, &it);
        if (res == MC_ST_STORED && it && (has & MC_MF('E')))
            cas = MC_CAS_OUT(strval_new_cas_locked(s, &k, &it, r->m.new_cas));
        else if (res == MC_ST_STORED && it && (has & MC_MF('c')))
            cas = MC_CAS_OUT(store_cas_locked(s, &k, &it));
        store_unlock(s, k.stripe);
    }
    if (res == MC_ST_OOM) {
        mc_out_line(c, MC_ERR_OOM);
        return;
    }
    if (res == MC_ST_STORED && r->noreply)
        return;
    l.n = 0;
    mc_line_str(&l, store_meta[res]);
    for (int i = 3; i < r->ntok - 1; i++) {
        switch (r->tok[i].p[0]) {
        case 'O':
            mc_line_tok(&l, &r->tok[i]);
            break;
        case 'k':
            mc_line_key(&l, r);
            break;
        case 'c':
            mc_line_flag_u64(&l, 'c', cas);
            break;
        }
    }
    mc_out_meta(c, &l);
}

void mc_ma_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    int incr = r->m.mode != 'D' && r->m.mode != '-';
    uint64_t has = r->m.has;
    struct skey k;
    struct item *it;
    uint64_t v = 0;
    enum mc_delta_res res;
    int created = 0;
    struct mc_line l;
    char num[24];
    int nlen = 0;

    STAT_INC(ws->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    if ((has & MC_MF('N')) && mc_make_room(c)) {
        mc_out_line(c, MC_ERR_OOM);
        return;
    }
    store_lock(s, k.stripe);
    res = mc_delta_locked(c, &k, incr, r->m.delta, (has & MC_MF('C')) ? r->m.cas : 0, &v, &it);
    if (res == MC_DR_NOT_FOUND && (has & MC_MF('N'))) {
        /* vivify with the initial value, no delta applied */
        v = r->m.initial;
        nlen = mc_u64toa(v, num);
        it = strval_put_locked(s, &k, NULL, num, (size_t)nlen);
        res = it ? MC_DR_OK : MC_DR_OOM;
        created = 1;
    }
    if (res == MC_DR_NON_NUMERIC || res == MC_DR_OOM) {
        store_unlock(s, k.stripe);
        mc_out_line(c, res == MC_DR_OOM ? "SERVER_ERROR out of memory" : MC_ERR_NONNUM);
        return;
    }
    l.n = 0;
    if (res == MC_DR_OK) {
        if (!created) {
            if (incr)
                STAT_INC(ws->incr_hits);
            else
                STAT_INC(ws->decr_hits);
        }
        if (has & MC_MF('E'))
            strval_new_cas_locked(s, &k, &it, r->m.new_cas);
        nlen = mc_u64toa(v, num);
        if (has & MC_MF('v')) {
            mc_line_put(&l, "VA ", 3);
            mc_line_u64(&l, (uint64_t)nlen);
        } else {
            mc_line_put(&l, "HD", 2);
        }
        for (int i = 2; i < r->ntok - 1; i++) {
            switch (r->tok[i].p[0]) {
            case 'c':
                mc_line_flag_u64(&l, 'c', MC_CAS_OUT(store_cas_locked(s, &k, &it)));
                break;
            case 't':
                mc_line_put(&l, " t", 2);
                mc_line_i64(&l, mc_ttl_left(it, mc_now(c)));
                break;
            case 'T':
                it = mc_set_exp_locked(s, &k, it, mc_exptime_ms(r->m.ttl, mc_now(c)));
                break;
            case 'N':
                if (created)
                    it = mc_set_exp_locked(s, &k, it,
                                           mc_exptime_ms(r->m.vivify_ttl, mc_now(c)));
                break;
            case 'O':
                mc_line_tok(&l, &r->tok[i]);
                break;
            case 'k':
                mc_line_key(&l, r);
                break;
            }
        }
    } else {
        if (res == MC_DR_NOT_FOUND) {
            if (incr)
                STAT_INC(ws->incr_misses);
            else
                STAT_INC(ws->decr_misses);
        }
        mc_line_put(&l, res == MC_DR_NOT_FOUND ? "NF" : "EX", 2);
        mc_line_opaque_key(&l, r);
    }
    store_unlock(s, k.stripe);
    if (res == MC_DR_OK && r->noreply && !created) /* q hides a hit, not a vivify */
        return;
    mc_line_put(&l, "\r\n", 2);
    if (res == MC_DR_OK && (has & MC_MF('v'))) {
        mc_line_put(&l, num, (size_t)nlen);
        mc_line_put(&l, "\r\n", 2);
    }
    mc_check(c, buf_append(&c->wbuf, l.b, l.n));
}

void mc_md_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    uint64_t has = r->m.has;
    struct skey k;
    struct item *it;
    const char *code;
    struct mc_line l;

    STAT_INC(ws->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = store_lookup_write_locked(s, &k, mc_now(c));
    if (mc_ghost_take_locked(&k) && !it) /* memcached's lookup met the flushed item */
        STAT_INC(ws->get_flushed);
    if (!it || ((has & MC_MF('I')) && it->type != OBJ_STRING)) {
        STAT_INC(ws->delete_misses);
        code = "NF";
    } else if ((has & MC_MF('C')) && mc_item_cas(it) != r->m.cas) {
        STAT_INC(ws->delete_misses);
        code = "EX";
    } else if (has & MC_MF('I')) {
        /* invalidate: keep the value, mark it stale, new CAS, let a client win again */
        if (has & MC_MF('T'))
            it = mc_set_exp_locked(s, &k, it, mc_exptime_ms(r->m.ttl, mc_now(c)));
        it->bits |= IT_MC_STALE;
        it->mc_won = 0;
        strval_new_cas_locked(s, &k, &it, r->m.new_cas);
        code = "HD";
    } else {
        mc_cls_inc(c, mc_it_total(it), MC_CLS_DELETE_HITS);
        store_delete_locked(s, &k, mc_now(c));
        notify_write(NOTIFY_GENERIC, "del", &k, 0);
        STAT_INC(ws->delete_hits);
        code = "HD";
    }
    store_unlock(s, k.stripe);
    if (code[0] == 'H' && r->noreply)
        return;
    l.n = 0;
    mc_line_put(&l, code, 2);
    mc_line_opaque_key(&l, r);
    mc_out_meta(c, &l);
}

void mc_me_command(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    int64_t now = mc_now(c);
    struct skey k;
    struct item *it;
    struct mc_line l;

    STAT_INC(mc_ws(c)->meta_cmds);
    store_key(s, &k, MC_DB, r->key.p, r->key.n);
    store_lock(s, k.stripe);
    it = mc_find_locked(c, s, &k, now, NULL);
    if (!it) {
        store_unlock(s, k.stripe);
        mc_out_line(c, "EN");
        return;
    }
    l.n = 0;
    mc_line_put(&l, "ME ", 3);
    mc_line_put(&l, r->key.p, r->key.n); /* memcached re-encodes only keys stored as binary */
    /* memcached 1.6 prints exp as current_time - exptime */
    mc_line_str(&l, " exp=");
    mc_line_i64(&l, item_expire(it) ? -mc_ttl_left(it, now) : -1);
    mc_line_str(&l, " la=");
    mc_line_u64(&l, store_idle_seconds(it));
    mc_line_str(&l, " cas=");
    mc_line_u64(&l, mc_item_cas(it));
    mc_line_str(&l, it->fetched ? " fetch=yes" : " fetch=no");
    mc_line_str(&l, " cls=1 size=");
    mc_line_u64(&l, item_alloc_size(it));
    store_unlock(s, k.stripe);
    mc_out_meta(c, &l);
}
