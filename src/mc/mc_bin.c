/* memcached binary protocol commands (memcached 1.6 semantics) on the same store and with the
 * same store steps as the text protocol (mc_store_locked, mc_delta_locked): a connection whose
 * first byte is the request magic 0x80 speaks it (mc_cmd_input hands it here). Quiet variants
 * answer only failures (GETQ/GETKQ/GATQ/GATKQ: only hits). SASL PLAIN against the
 * memcache-auth-file when memcache-sasl is on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd/acl.h"
#include "cmd/propagate.h"
#include "core/config.h"
#include "mc/mc_int.h"

#define MCB_MECHS "PLAIN"

static void out(struct conn *c, const struct mcb_req *r, uint16_t st, uint64_t cas,
                const void *ext, size_t extlen, const char *key, size_t klen, const char *val,
                size_t vlen)
{
    mc_check(c, mcb_compose(&c->wbuf, r->op, st, r->opaque, cas, ext, extlen, key, klen, val,
                            vlen));
}

static void out_err(struct conn *c, const struct mcb_req *r, uint16_t st)
{
    mc_check(c, mcb_compose_error(&c->wbuf, r->op, st, r->opaque));
}

/* A success without body, unless the request is quiet. */
static void out_ok(struct conn *c, const struct mcb_req *r, uint64_t cas)
{
    if (!r->quiet)
        out(c, r, MCB_ST_OK, cas, NULL, 0, NULL, 0, NULL, 0);
}

/* The expire time (absolute ms, as mc_exptime_ms) of a binary exptime: unsigned, so above
 * 30 days it is always an absolute unix time, as in memcached. */
/* flush's delay as flush_all's argument (an unsigned delay past 2^31 s is the far future) */
static int32_t flush_delay(const struct mcb_req *r)
{
    uint32_t e = r->extlen == 4 ? mcb_get32(r->ext) : 0;
    return e > INT32_MAX ? INT32_MAX : (int32_t)e;
}

static int64_t ext_exp_ms(struct conn *c, const char *p)
{
    uint32_t e = mcb_get32(p);

    if (e > INT32_MAX)
        return (int64_t)e * 1000 > mc_now(c) ? (int64_t)e * 1000 : MC_EXPIRED;
    return mc_exptime_ms((int32_t)e, mc_now(c));
}

/* get getk gat gatk touch (and their quiet variants) */
static void get_cmd(struct conn *c, struct mcb_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    int64_t now = mc_now(c);
    int touch = r->base == MCB_GAT || r->base == MCB_GATK || r->base == MCB_TOUCH;
    int withkey = r->base == MCB_GETK || r->base == MCB_GATK;
    struct skey k;
    struct item *it;
    int expired = 0;

    store_key(s, &k, MC_DB, r->key, r->keylen);
    store_lock(s, k.stripe);
    it = mc_find_locked(c, s, &k, now, &expired);
    if (it) {
        char fl[4];
        uint64_t cas;
        if (touch)
            it = mc_set_exp_locked(s, &k, it, ext_exp_ms(c, r->ext));
        strval_hit_locked(s, &k, it, 1);
        mc_cls_inc(c, mc_it_total(it), touch ? MC_CLS_TOUCH_HITS : MC_CLS_GET_HITS);
        cas = store_cas_locked(s, &k, &it);
        mcb_put32(fl, item_mcflags(it));
        if (r->base == MCB_TOUCH) {
            out(c, r, MCB_ST_OK, cas, fl, 4, NULL, 0, NULL, 0);
        } else if (it->bits & IT_REF) {
            out(c, r, MCB_ST_OK, cas, fl, 4, r->key, withkey ? r->keylen : 0, NULL, item_vlen(it));
            item_ref(it); /* dropped by item_unref once the bytes are written */
            mc_check(c, conn_add_ref(c, item_value(it), item_vlen(it), it, item_unref));
        } else {
            out(c, r, MCB_ST_OK, cas, fl, 4, r->key, withkey ? r->keylen : 0, item_value(it),
                item_vlen(it));
        }
    } else {
        strval_miss_locked(s, &k);
    }
    store_unlock(s, k.stripe);
    if (touch) {
        STAT_INC(ws->touch_cmds);
        if (it)
            STAT_INC(ws->touch_hits);
        else
            STAT_INC(ws->touch_misses);
    } else {
        STAT_INC(ws->get_cmds);
        if (it) {
            STAT_INC(ws->get_hits);
        } else {
            STAT_INC(ws->get_misses);
            STAT_ADD(ws->get_expired, (uint64_t)expired);
        }
    }
    if (it || r->quiet)
        return;
    if (withkey) /* a miss of getk/gatk carries the key, no text */
        out(c, r, MCB_ST_KEY_ENOENT, 0, NULL, 0, r->key, r->keylen, NULL, 0);
    else
        out_err(c, r, MCB_ST_KEY_ENOENT);
}

/* set add replace append prepend: a CAS value turns each into a compare-and-swap */
static void update_cmd(struct conn *c, struct mcb_req *r)
{
    struct store *s = mc_store(c);
    int concat = r->base == MCB_APPEND || r->base == MCB_PREPEND;
    uint32_t flags = concat ? 0 : mcb_get32(r->ext);
    int64_t exp = concat ? 0 : ext_exp_ms(c, r->ext + 4);
    enum mc_cmd mode;
    enum mc_store_res res;
    struct skey k;
    struct item *it;
    uint64_t cas = 0;

    switch (r->base) {
    case MCB_ADD: mode = MC_ADD; break;
    case MCB_REPLACE: mode = MC_REPLACE; break;
    case MCB_APPEND: mode = MC_APPEND; break;
    case MCB_PREPEND: mode = MC_PREPEND; break;
    default: mode = MC_SET; break;
    }
    if (!concat && r->cas)
        mode = MC_CAS;
    STAT_INC(mc_ws(c)->set_cmds);
    store_key(s, &k, MC_DB, r->key, r->keylen);
    if (mc_make_room(c)) {
        res = MC_ST_OOM;
    } else {
        store_lock(s, k.stripe);
        res = mc_store_locked(c, &k, mode, concat && r->cas, r->cas, 0, flags,
                              exp, r->val, r->vlen, !r->quiet,
                              &it);
        if (res == MC_ST_STORED && it && !r->quiet)
            cas = store_cas_locked(s, &k, &it);
        store_unlock(s, k.stripe);
        if (res == MC_ST_OOM)
            STAT_INC(mc_ws(c)->no_memory);
    }
    switch (res) {
    case MC_ST_STORED:
        out_ok(c, r, cas);
        break;
    case MC_ST_EXISTS:
        out_err(c, r, MCB_ST_KEY_EEXISTS);
        break;
    case MC_ST_NOT_FOUND:
        out_err(c, r, MCB_ST_KEY_ENOENT);
        break;
    case MC_ST_NOT_STORED:
        out_err(c, r, mode == MC_ADD ? MCB_ST_KEY_EEXISTS
                      : mode == MC_REPLACE ? MCB_ST_KEY_ENOENT : MCB_ST_NOT_STORED);
        break;
    default:
        if (mode == MC_SET || mode == MC_CAS) {
            /* memcached drops the old value rather than leave it stale */
            store_lock(s, k.stripe);
            store_delete_locked(s, &k, mc_now(c));
            store_unlock(s, k.stripe);
        }
        out_err(c, r, MCB_ST_ENOMEM);
        break;
    }
}

static void delete_cmd(struct conn *c, struct mcb_req *r)
{
    struct store *s = mc_store(c);
    struct skey k;
    struct item *it;
    uint16_t st = MCB_ST_OK;

    store_key(s, &k, MC_DB, r->key, r->keylen);
    store_lock(s, k.stripe);
    if (r->cas) {
        it = mc_find_locked(c, s, &k, mc_now(c), NULL);
        if (!it)
            st = MCB_ST_KEY_ENOENT;
        else if (item_cas_field(it) != r->cas)
            st = MCB_ST_KEY_EEXISTS;
        else {
            mc_cls_inc(c, mc_it_total(it), MC_CLS_DELETE_HITS);
            store_delete_locked(s, &k, mc_now(c));
        }
    } else {
        it = strval_find_locked(s, &k, mc_now(c), NULL);
        if (it) /* counted in the class of the item deleted */
            mc_cls_inc(c, mc_it_total(it), MC_CLS_DELETE_HITS);
        if (!store_delete_locked(s, &k, mc_now(c))) {
            st = MCB_ST_KEY_ENOENT;
            if (mc_ghost_take_locked(&k)) /* memcached's lookup met the flushed item */
                STAT_INC(mc_ws(c)->get_flushed);
        }
    }
    store_unlock(s, k.stripe);
    if (st == MCB_ST_OK)
        STAT_INC(mc_ws(c)->delete_hits);
    else if (st == MCB_ST_KEY_ENOENT)
        STAT_INC(mc_ws(c)->delete_misses);
    if (st == MCB_ST_OK)
        out_ok(c, r, 0);
    else
        out_err(c, r, st);
}

/* incr decr: extras are delta, initial value and exptime (0xffffffff: do not create) */
static void arith_cmd(struct conn *c, struct mcb_req *r)
{
    struct store *s = mc_store(c);
    struct mc_stats *ws = mc_ws(c);
    int incr = r->base == MCB_INCR;
    uint64_t delta = mcb_get64(r->ext), initial = mcb_get64(r->ext + 8);
    uint32_t exptime = mcb_get32(r->ext + 16);
    enum mc_delta_res res;
    struct skey k;
    struct item *it;
    uint64_t v = 0, cas = 0;
    uint16_t st = MCB_ST_OK;

    store_key(s, &k, MC_DB, r->key, r->keylen);
    if (exptime != 0xffffffffu && mc_make_room(c)) {
        out_err(c, r, MCB_ST_ENOMEM);
        return;
    }
    store_lock(s, k.stripe);
    res = mc_delta_locked(c, &k, incr, delta, r->cas, &v, &it);
    if (res == MC_DR_OK) {
        cas = r->quiet ? 0 : store_cas_locked(s, &k, &it);
    } else if (res == MC_DR_NOT_FOUND && exptime != 0xffffffffu) {
        char num[24];
        int n = mc_u64toa(initial, num);
        enum mc_store_res sr = mc_store_locked(c, &k, MC_ADD, 0, 0, 0, 0,
                                               ext_exp_ms(c, r->ext + 16), num,
                                               (size_t)n, 1, &it);
        if (sr == MC_ST_STORED && it) {
            v = initial;
            cas = r->quiet ? 0 : store_cas_locked(s, &k, &it);
        } else {
            st = sr == MC_ST_OOM ? MCB_ST_ENOMEM : MCB_ST_NOT_STORED;
        }
    }
    store_unlock(s, k.stripe);
    mc_delta_count(ws, incr, res);
    switch (res) {
    case MC_DR_OK:
        break;
    case MC_DR_NOT_FOUND:
        if (exptime == 0xffffffffu)
            st = MCB_ST_KEY_ENOENT;
        break;
    case MC_DR_NON_NUMERIC:
        st = MCB_ST_DELTA_BADVAL;
        break;
    case MC_DR_CAS_MISMATCH:
        st = MCB_ST_KEY_EEXISTS;
        break;
    default:
        st = MCB_ST_ENOMEM;
        break;
    }
    if (st != MCB_ST_OK) {
        out_err(c, r, st);
    } else if (!r->quiet) {
        char b[8];
        mcb_put64(b, v);
        out(c, r, MCB_ST_OK, cas, NULL, 0, NULL, 0, b, 8);
    }
}

/* stat [group]: the text protocol's stats output, each "STAT name value" line sent as a
 * response with the name as key, then an empty response (the terminator). */
static void stat_cmd(struct conn *c, struct mcb_req *r)
{
    struct mc_conn *m = c->mc;
    struct mc_req *q = &m->r;
    size_t start = c->wbuf.wpos, n;
    const char *pos = r->key, *end = r->key + r->keylen;
    struct mc_tok t;
    char *text, *line, *nl;

    memset(q, 0, offsetof(struct mc_req, keybuf));
    q->cmd = MC_STATS;
    q->tok[0].p = "stats";
    q->tok[0].n = 5;
    q->ntok = 1;
    while (q->ntok < MC_MAX_TOKENS - 1 && mc_next_token(&pos, end, &t))
        q->tok[q->ntok++] = t;
    q->ntok++; /* memcached's count: tokens + 1 */
    if (mc_acl_denied(c, q)) {
        out_err(c, r, MCB_ST_AUTH_ERROR);
        return;
    }
    mc_stats_command(c, q);
    if (c->flags & CONN_CLOSE_ASAP)
        return;
    n = c->wbuf.wpos - start;
    text = malloc(n + 1); /* stats are not a hot path */
    if (!text) {
        c->wbuf.wpos = start;
        out_err(c, r, MCB_ST_ENOMEM);
        return;
    }
    memcpy(text, c->wbuf.data + start, n);
    text[n] = '\0';
    c->wbuf.wpos = start;
    for (line = text; line < text + n; line = nl + 2) {
        nl = strstr(line, "\r\n");
        if (!nl)
            break;
        *nl = '\0';
        if (strncmp(line, "STAT ", 5) == 0) {
            char *name = line + 5, *sp = strchr(name, ' ');
            size_t nn = sp ? (size_t)(sp - name) : strlen(name);
            const char *val = sp ? sp + 1 : "";
            out(c, r, MCB_ST_OK, 0, NULL, 0, name, nn, val, strlen(val));
        } else if (!strcmp(line, "END") || !strcmp(line, "RESET") || !strcmp(line, "OK")) {
            out(c, r, MCB_ST_OK, 0, NULL, 0, NULL, 0, NULL, 0);
        } else {
            out_err(c, r, MCB_ST_KEY_ENOENT);
            break;
        }
    }
    free(text);
}

/* 1 when user/pass (n bytes each) is a line "user:password" of the auth file. */
static int auth_check(const char *user, size_t un, const char *pass, size_t pn)
{
    char path[1024], line[1024];
    FILE *f;
    int ok = 0;

    config_str(cfg.memcache_auth_file, path, sizeof(path));
    if (!path[0] || !(f = fopen(path, "r")))
        return 0;
    while (!ok && fgets(line, sizeof(line), f)) {
        size_t ln = strcspn(line, "\r\n");
        char *colon = memchr(line, ':', ln);
        if (!colon)
            continue;
        ok = (size_t)(colon - line) == un && memcmp(line, user, un) == 0 &&
             ln - un - 1 == pn && memcmp(colon + 1, pass, pn) == 0;
    }
    fclose(f);
    return ok;
}

/* A memcached login (ASCII auth, SASL PLAIN): a line of the auth file, or an ACL user and its
 * password. When an ACL user has the name, the connection runs as it: its key patterns apply
 * on the memcached port (acl_mc_key_allowed); otherwise it is not restricted. */
static int mc_login(struct conn *c, const char *user, size_t un, const char *pass, size_t pn)
{
    struct acl_user *u = NULL;
    int ok = auth_check(user, un, pass, pn);

    if (!ok && acl_authenticate(user, un, pass, pn, &u))
        ok = 1;
    else if (ok)
        u = acl_user_get(user, un);
    if (ok) {
        struct acl_user *old = c->user;
        pthread_mutex_lock(&c->w->list_lock);
        c->user = u; /* the reference taken above */
        pthread_mutex_unlock(&c->w->list_lock);
        acl_user_unref(old);
    }
    return ok;
}

/* ---- memcached 1.6's ASCII authentication (-Y) on text connections ---- */

#define AUTH_LINE_MAX 2048 /* a first line longer than this without newline: close */
#define AUTH_DATA_MAX 4096 /* longest "user pass" block we wait for (refused: close) */

static void auth_reply(struct conn *c, const char *s)
{
    mc_out_line(c, s);
}

int mc_text_auth(struct conn *c)
{
    struct mc_conn *m = c->mc;

    while (m->auth_need && !(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP))) {
        const char *p = c->rbuf.data + c->rbuf.rpos, *el, *end, *pos;
        size_t avail = buf_len(&c->rbuf);
        struct mc_tok t[6], u, pw;
        int n = 0;
        uint32_t size;

        if (!m->auth_len) {
            /* "set <key> <flags> <exptime> <bytes>": only the byte count matters */
            el = avail >= 2 ? memchr(p, '\n', avail) : NULL;
            if (!el) {
                if (avail > AUTH_LINE_MAX) {
                    c->flags |= CONN_CLOSE_ASAP;
                    c->rbuf.rpos = c->rbuf.wpos;
                }
                return 0;
            }
            c->rbuf.rpos += (size_t)(el - p) + 1;
            end = el > p && el[-1] == '\r' ? el - 1 : el;
            for (pos = p; n < 6 && mc_next_token(&pos, end, &t[n]);)
                n++;
            if (n < 5 || t[0].n != 3 || memcmp(t[0].p, "set", 3) != 0 ||
                !mc_tok_u32(&t[4], &size)) {
                auth_reply(c, "CLIENT_ERROR unauthenticated");
                continue;
            }
            if (size > AUTH_DATA_MAX) {
                auth_reply(c, "CLIENT_ERROR bad authentication token format");
                c->flags |= CONN_CLOSE_AFTER_REPLY;
                return 0;
            }
            m->auth_len = size + 2;
            continue;
        }
        if (avail < m->auth_len)
            return 0;
        c->rbuf.rpos += m->auth_len;
        end = p + m->auth_len - 2;
        m->auth_len = 0;
        if (end[0] != '\r' || end[1] != '\n') {
            auth_reply(c, "CLIENT_ERROR bad command line termination");
            continue;
        }
        pos = p;
        if (!mc_next_token(&pos, end, &u) || !mc_next_token(&pos, end, &pw)) {
            auth_reply(c, "CLIENT_ERROR bad authentication token format");
            continue;
        }
        STAT_INC(mc_ws(c)->auth_cmds);
        if (mc_login(c, u.p, u.n, pw.p, pw.n)) {
            m->auth_need = 0;
            auth_reply(c, "STORED");
        } else {
            STAT_INC(mc_ws(c)->auth_errors);
            auth_reply(c, "CLIENT_ERROR authentication failure");
        }
    }
    return !m->auth_need;
}

/* SASL is on for a binary connection with memcache-sasl, or when an auth file is set (the
 * text protocol's login then cannot be skipped by speaking binary). */
static int sasl_on(struct conn *c)
{
    return cfg.memcache_sasl || ((struct mc_conn *)c->mc)->auth_need;
}

/* A PLAIN user name as cyrus-sasl canonicalises it for memcached: a realm that is the host's
 * own name (memcached's user realm) is the same user; its length without that realm. */
static size_t plain_user_len(const char *u, size_t n)
{
    char host[256];
    const char *at = memchr(u, '@', n);
    size_t hn;

    if (!at || gethostname(host, sizeof(host) - 1) != 0)
        return n;
    host[sizeof(host) - 1] = '\0';
    hn = strlen(host);
    if (hn && (size_t)(u + n - at - 1) == hn && memcmp(at + 1, host, hn) == 0)
        return (size_t)(at - u);
    return n;
}

/* 1 when a PLAIN message "[authzid] NUL user NUL password" names a user of the auth file with
 * its password, acting as itself (an authzid, when given, is that user: cyrus-sasl's default
 * authorization). */
static int plain_ok(struct conn *c, const char *msg, size_t n)
{
    const char *end = msg + n, *user, *pass, *p;
    size_t zn, un;

    p = memchr(msg, '\0', n);
    if (!p)
        return 0;
    zn = (size_t)(p - msg);
    user = p + 1;
    p = memchr(user, '\0', (size_t)(end - user));
    if (!p)
        return 0;
    pass = p + 1;
    un = plain_user_len(user, (size_t)(p - user));
    if (zn) {
        zn = plain_user_len(msg, zn);
        if (zn != un || memcmp(msg, user, un) != 0)
            return 0;
    }
    return mc_login(c, user, un, pass, (size_t)(end - pass));
}

/* The mechanism named by a SASL key (up to a NUL, as memcached hands it on) is PLAIN, in any
 * case. */
static int mech_plain(const char *key, size_t n)
{
    const char *nul = memchr(key, '\0', n);

    if (nul)
        n = (size_t)(nul - key);
    return n == 5 && strncasecmp(key, "PLAIN", 5) == 0;
}

/* sasl list mechs / auth / step: PLAIN only, as memcached with cyrus-sasl's PLAIN: AUTH with
 * the credentials, or AUTH without any (AUTH_CONTINUE, empty challenge) then STEPs until one
 * carries good ones. Any AUTH or STEP logs the connection out first. */
static void sasl_cmd(struct conn *c, struct mcb_req *r)
{
    struct mc_conn *m = c->mc;

    if (!sasl_on(c)) {
        out_err(c, r, MCB_ST_UNKNOWN);
        return;
    }
    if (r->base == MCB_SASL_LIST) {
        out(c, r, MCB_ST_OK, 0, NULL, 0, NULL, 0, MCB_MECHS, strlen(MCB_MECHS));
        return;
    }
    m->sasl_ok = 0;
    if (r->base == MCB_SASL_AUTH) {
        m->sasl_step = 0;
        if (!mech_plain(r->key, r->keylen))
            goto fail;
        if (r->vlen == 0) {
            m->sasl_step = 1;
            out(c, r, MCB_ST_AUTH_CONTINUE, 0, NULL, 0, NULL, 0, NULL, 0);
            return;
        }
    } else if (!m->sasl_step) {
        goto fail;
    }
    if (!plain_ok(c, r->val, r->vlen))
        goto fail; /* a STEP may try again */
    m->sasl_step = 0;
    m->sasl_ok = 1;
    STAT_INC(mc_ws(c)->auth_cmds);
    out(c, r, MCB_ST_OK, 0, NULL, 0, NULL, 0, "Authenticated", 13);
    return;
fail:
    STAT_INC(mc_ws(c)->auth_cmds);
    STAT_INC(mc_ws(c)->auth_errors);
    out_err(c, r, MCB_ST_AUTH_ERROR);
}

/* A logged-in ACL user's key patterns (acl_mc_key_allowed): 1 after an Auth error reply */
static int acl_denied(struct conn *c, struct mcb_req *r)
{
    int ok;

    const char *as = NULL; /* the Redis command of the same kind (mc_acl.c) */

    switch (r->base) {
    case MCB_GET: case MCB_GETK: as = "GET"; break;
    case MCB_GAT: case MCB_GATK: as = "GETEX"; break;
    case MCB_TOUCH: as = "EXPIRE"; break;
    case MCB_SET: case MCB_ADD: case MCB_REPLACE: as = "SET"; break;
    case MCB_APPEND: case MCB_PREPEND: as = "APPEND"; break;
    case MCB_INCR: as = "INCRBY"; break;
    case MCB_DECR: as = "DECRBY"; break;
    case MCB_DELETE: as = "DEL"; break;
    default: break;
    }
    if (as && mc_acl_cmd_denied(c, as, r->key, r->keylen)) {
        out_err(c, r, MCB_ST_AUTH_ERROR);
        return 1;
    }
    switch (r->base) {
    case MCB_GET: case MCB_GETK:
        ok = acl_mc_key_allowed(c, r->key, r->keylen, 0);
        break;
    case MCB_GAT: case MCB_GATK: case MCB_TOUCH: case MCB_SET: case MCB_ADD: case MCB_REPLACE:
    case MCB_APPEND: case MCB_PREPEND: case MCB_DELETE: case MCB_INCR: case MCB_DECR:
        ok = acl_mc_key_allowed(c, r->key, r->keylen, 1);
        break;
    case MCB_FLUSH: {
        struct mc_req q = {.cmd = MC_FLUSH_ALL}; /* FLUSHALL's rules, then every key */
        ok = !mc_acl_denied(c, &q) && acl_mc_key_allowed(c, NULL, 0, 1);
        break;
    }
    default:
        return 0;
    }
    if (ok)
        return 0;
    out_err(c, r, MCB_ST_AUTH_ERROR);
    return 1;
}

static void run(struct conn *c, struct mcb_req *r)
{
    if (TC_UNLIKELY(c->user != NULL) &&
        !atomic_load_explicit(&c->user->allperm, memory_order_relaxed) && acl_denied(c, r))
        return;
    switch (r->base) {
    case MCB_GET: case MCB_GETK: case MCB_GAT: case MCB_GATK: case MCB_TOUCH:
        get_cmd(c, r);
        break;
    case MCB_SET: case MCB_ADD: case MCB_REPLACE: case MCB_APPEND: case MCB_PREPEND:
        update_cmd(c, r);
        break;
    case MCB_DELETE:
        delete_cmd(c, r);
        break;
    case MCB_INCR: case MCB_DECR:
        arith_cmd(c, r);
        break;
    case MCB_QUIT:
        out_ok(c, r, 0);
        c->flags |= CONN_CLOSE_AFTER_REPLY;
        break;
    case MCB_FLUSH:
        if (mc_flush_all(c, flush_delay(r)))
            out_err(c, r, MCB_ST_AUTH_ERROR); /* -F: as memcached's binary FLUSH answers */
        else
            out_ok(c, r, 0);
        break;
    case MCB_NOOP:
        out_ok(c, r, 0);
        break;
    case MCB_VERSION:
        out(c, r, MCB_ST_OK, 0, NULL, 0, NULL, 0, MC_VERSION_STR, strlen(MC_VERSION_STR));
        break;
    case MCB_STAT:
        stat_cmd(c, r);
        break;
    case MCB_SASL_LIST: case MCB_SASL_AUTH: case MCB_SASL_STEP:
        sasl_cmd(c, r);
        break;
    default:
        out_err(c, r, MCB_ST_UNKNOWN);
        break;
    }
}

/* aof_mc_exec's callback: the binary request is the connection's own */
static void run_aof(struct conn *c, struct mc_req *q)
{
    (void)q;
    run(c, &((struct mc_conn *)c->mc)->br);
}

/* Run r through the AOF hooks: they hold the key's stripe and log its state afterwards, so a
 * stand-in text request naming the same key and kind of write is enough. */
static void run_logged(struct conn *c, struct mcb_req *r)
{
    struct mc_req *q = &((struct mc_conn *)c->mc)->r;
    enum mc_cmd cmd;

    switch (r->base) {
    case MCB_SET: case MCB_ADD: case MCB_REPLACE: cmd = MC_SET; break;
    case MCB_APPEND: case MCB_PREPEND: cmd = MC_APPEND; break;
    case MCB_DELETE: cmd = MC_DELETE; break;
    case MCB_INCR: case MCB_DECR: cmd = MC_INCR; break;
    case MCB_TOUCH: case MCB_GAT: case MCB_GATK: cmd = MC_TOUCH; break;
    case MCB_FLUSH: cmd = MC_FLUSH_ALL; break;
    default:
        run(c, r);
        return;
    }
    memset(q, 0, offsetof(struct mc_req, keybuf));
    q->cmd = cmd;
    q->key.p = r->key;
    q->key.n = r->keylen;
    if (cmd == MC_FLUSH_ALL)
        q->exptime = flush_delay(r);
    aof_mc_exec(c, q, run_aof);
}

/* A request the parser refused, or one an unauthenticated connection may not send. */
static void refused(struct conn *c, struct mcb_req *r)
{
    if (r->status == MCB_ST_E2BIG) {
        STAT_INC(mc_ws(c)->too_large);
        if (r->base == MCB_SET) {
            /* memcached drops the old value rather than leave it stale */
            struct store *s = mc_store(c);
            struct skey k;
            store_key(s, &k, MC_DB, r->key, r->keylen);
            store_lock(s, k.stripe);
            store_delete_locked(s, &k, mc_now(c));
            store_unlock(s, k.stripe);
        }
    }
    if ((r->base == MCB_SASL_AUTH || r->base == MCB_SASL_STEP) && !r->close) {
        /* a mechanism name or body too long (proto/mc_bin.c) */
        if (!sasl_on(c)) {
            r->status = MCB_ST_UNKNOWN; /* as any SASL request with SASL off */
        } else if (r->status == MCB_ST_AUTH_ERROR) {
            struct mc_conn *m = c->mc;
            m->sasl_ok = 0;
            if (r->base == MCB_SASL_AUTH)
                m->sasl_step = 0;
            STAT_INC(mc_ws(c)->auth_cmds);
            STAT_INC(mc_ws(c)->auth_errors);
        }
    }
    out_err(c, r, r->status);
    if (r->close)
        c->flags |= CONN_CLOSE_AFTER_REPLY;
}

/* The requests the text protocol counts as writes (set family, arithmetic, delete, touch,
 * gat, flush). */
static int is_write(const struct mcb_req *r)
{
    switch (r->base) {
    case MCB_SET: case MCB_ADD: case MCB_REPLACE: case MCB_APPEND: case MCB_PREPEND:
    case MCB_INCR: case MCB_DECR: case MCB_DELETE: case MCB_TOUCH: case MCB_GAT:
    case MCB_GATK: case MCB_FLUSH:
        return 1;
    default:
        return 0;
    }
}

static int needs_auth(const struct mcb_req *r)
{
    return r->base != MCB_SASL_LIST && r->base != MCB_SASL_AUTH && r->base != MCB_SASL_STEP &&
           r->base != MCB_VERSION;
}

void mc_bin_input(struct conn *c)
{
    struct mc_conn *m = c->mc;

    while (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP))) {
        const char *base = c->rbuf.data + c->rbuf.rpos;
        struct mcb_req *r = &m->br;
        size_t used = 0;
        int st;

        if (buf_len(&c->rbuf) == 0)
            break;
        if (conn_pending(c) > conn_pause_bytes(c)) {
            c->flags |= CONN_PAUSED_READ; /* after_io resumes once the output drains */
            break;
        }
        st = mcb_parse(&m->bp, base, buf_len(&c->rbuf), (size_t)cfg.item_size_max, r, &used);
        c->rbuf.rpos += used;
        STAT_ADD(mc_ws(c)->bytes_read, used);
        if (st == MCB_ERR_MAGIC) {
            /* memcached closes on a bad magic byte at once, dropping the replies of the
             * requests read with it */
            c->flags |= CONN_CLOSE_ASAP;
            c->rbuf.rpos = c->rbuf.wpos;
            break;
        }
        if (st == MCB_NEED_MORE)
            break;
        STAT_INC(c->w->st.commands);
        c->tot_cmds++;
        if (!m->sasl_ok && needs_auth(r) && sasl_on(c)) {
            out_err(c, r, MCB_ST_AUTH_ERROR);
            c->flags |= CONN_CLOSE_AFTER_REPLY;
            c->rbuf.rpos = c->rbuf.wpos;
            break;
        }
        if (TC_UNLIKELY(r->status)) {
            refused(c, r);
            continue;
        }
        if (TC_UNLIKELY(mc_replica_refuses()) && is_write(r)) {
            mc_check(c, mcb_compose(&c->wbuf, r->op, 0x84, r->opaque, 0, NULL, 0, NULL, 0,
                                    MC_READONLY_TEXT, sizeof(MC_READONLY_TEXT) - 1));
            continue;
        }
        if (is_write(r))
            STAT_INC(c->w->st.dirty);
        if (TC_UNLIKELY(prop_active()))
            run_logged(c, r);
        else
            run(c, r);
        conn_udp_cut(c); /* over UDP each reply is its own datagrams */
    }
    if (TC_UNLIKELY(c->udp != NULL))
        memset(&m->bp, 0, sizeof(m->bp)); /* a datagram is whole: drop an incomplete request */
}
