/* memcached's operational text commands: lru_crawler (metadump, crawl and its tunables),
 * slabs (reassign, automove), lru (mode, temp_ttl, tune), cache_memlimit. twincache has no
 * slab classes: the keyspace is one class, "1", as "stats items" shows it. */
#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/config.h"
#include "mc/mc_int.h"

static int tok_eq(const struct mc_tok *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0;
}

static _Atomic int g_crawler = -1; /* lru_crawler enable/disable (-1: as started) */

int mc_crawler_on(void)
{
    int v = atomic_load(&g_crawler);
    return v < 0 ? mc_cfg.lru_crawler : v;
}

struct dump_ctx {
    struct conn *c;
    int64_t now;
    uint32_t now_s; /* unix seconds */
};

/* memcached's item size: header + cas + key + NUL + value + CRLF (+ 4 for nonzero flags). */
static uint64_t mc_item_size(struct item *it)
{
    return 56 + item_klen(it) + 1 + item_vlen(it) + 2 + (item_mcflags(it) ? 4 : 0);
}

/* One metadump line: key (URL-encoded as memcached does), exp, last access, cas, fetched,
 * class, size. */
static int dump_one(struct item *it, void *arg)
{
    struct dump_ctx *d = arg;
    char line[MC_KEY_MAX * 3 + 160];
    const char *k = item_key(it);
    size_t n = 0, klen = item_klen(it);
    int64_t exp = item_expire(it);
    uint32_t idle = store_idle_seconds(it);

    if (it->type != OBJ_STRING || d->c->flags & CONN_CLOSE_ASAP)
        return 0;
    memcpy(line, "key=", 4);
    n = 4;
    for (size_t i = 0; i < klen && i < MC_KEY_MAX; i++) {
        unsigned char ch = (unsigned char)k[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            line[n++] = (char)ch;
        } else {
            n += (size_t)snprintf(line + n, 4, "%%%02X", ch);
        }
    }
    n += (size_t)snprintf(line + n, sizeof(line) - n,
                          " exp=%lld la=%u cas=%llu fetch=%s cls=1 size=%llu",
                          exp ? (long long)((exp + 999) / 1000) : -1LL, d->now_s - idle,
                          (unsigned long long)mc_item_cas(it),
                          it->fetched ? "yes" : "no",
                          (unsigned long long)mc_item_size(it));
    if (n > sizeof(line) - 2)
        n = sizeof(line) - 2;
    line[n++] = '\n'; /* memcached ends metadump lines with LF only (END with CRLF) */
    mc_check(d->c, buf_append(&d->c->wbuf, line, n));
    return 0;
}

static void metadump(struct conn *c, struct mc_req *r)
{
    struct store *s = mc_store(c);
    struct dump_ctx d = {c, mc_now(c), (uint32_t)(mc_now(c) / 1000)};
    uint32_t id;

    if (r->ntok < 4) {
        mc_out_line(c, MC_ERROR);
        return;
    }
    if (!tok_eq(&r->tok[2], "all") && !tok_eq(&r->tok[2], "hash") &&
        !(r->ntok == 4 && mc_tok_u32(&r->tok[2], &id))) {
        mc_out_line(c, MC_ERROR);
        return;
    }
    if (!mc_cfg.dump_enabled) {
        mc_out_line(c, "ERROR metadump not allowed");
        return;
    }
    if (!mc_crawler_on()) {
        mc_out_line(c, "CLIENT_ERROR lru crawler disabled");
        return;
    }
    if (conn_pending(c) > 0) {
        mc_out_line(c, "ERROR cannot pipeline other commands before metadump");
        return;
    }
    if (!tok_eq(&r->tok[2], "all") && !tok_eq(&r->tok[2], "hash") && (id == 0 || id >= 64)) {
        mc_out_line(c, "BADCLASS invalid class id");
        return;
    }
    if (tok_eq(&r->tok[2], "all") || tok_eq(&r->tok[2], "hash") || id == 1)
        for (uint32_t st = 0; st < s->nstripes; st++)
            store_visit_stripe(s, MC_DB, st, d.now, dump_one, &d);
    mc_out_line(c, "END");
}

/* "1,2,5": class ids, each in 1..63. */
static int class_list_ok(const struct mc_tok *t)
{
    const char *p = t->p, *end = t->p + t->n;

    while (p < end) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        struct mc_tok one = {p, (size_t)((q ? q : end) - p)};
        uint32_t id;
        if (!mc_tok_u32(&one, &id) || id < 1 || id >= 64)
            return 0;
        p = q ? q + 1 : end;
    }
    return t->n > 0;
}

struct cachedump_ctx {
    struct conn *c;
    int id;         /* the slab class shown */
    uint32_t left;  /* items still to show (UINT32_MAX: no limit) */
    size_t bytes;   /* output so far, capped at 2 MB as in memcached */
};

static int cachedump_one(struct item *it, void *arg)
{
    struct cachedump_ctx *d = arg;
    char line[MC_KEY_MAX + 64];
    int64_t exp = item_expire(it);
    int n;

    if (it->type != OBJ_STRING || mc_class_of(mc_it_total(it)) != d->id)
        return 0;
    if (d->left == 0)
        return 1;
    n = snprintf(line, sizeof(line), "ITEM %.*s [%u b; %lld s]\r\n",
                 (int)(item_klen(it) > MC_KEY_MAX ? MC_KEY_MAX : item_klen(it)), item_key(it),
                 (unsigned)item_vlen(it), exp ? (long long)((exp + 999) / 1000) : 0LL);
    if (d->bytes + (size_t)n + 6 > 2 * 1024 * 1024)
        return 1;
    d->bytes += (size_t)n;
    d->left--;
    mc_check(d->c, buf_append(&d->c->wbuf, line, (size_t)n));
    return 0;
}

void mc_cachedump(struct conn *c, uint32_t id, uint32_t limit)
{
    struct store *s = mc_store(c);
    struct cachedump_ctx d = {c, (int)id, limit ? limit : UINT32_MAX, 0};

    if (id >= 1 && (int)id <= mc_nclasses)
        for (uint32_t st = 0; st < s->nstripes && d.left && d.bytes < 2 * 1024 * 1024; st++)
            store_visit_stripe(s, MC_DB, st, mc_now(c), cachedump_one, &d);
    mc_out_line(c, "END");
}

static void lru_crawler(struct conn *c, struct mc_req *r)
{
    const struct mc_tok *sub = &r->tok[1];
    uint32_t v;

    if (r->ntok < 3) {
        mc_out_line(c, MC_ERROR);
    } else if (tok_eq(sub, "metadump") || tok_eq(sub, "mgdump")) {
        metadump(c, r);
    } else if (r->ntok == 4 && tok_eq(sub, "crawl")) {
        if (!mc_crawler_on())
            mc_out_line(c, "CLIENT_ERROR lru crawler disabled");
        else if (tok_eq(&r->tok[2], "all") || class_list_ok(&r->tok[2]))
            mc_out_line(c, "OK"); /* expired items are reclaimed by active expiry */
        else
            mc_out_line(c, "BADCLASS invalid class id");
    } else if (r->ntok == 4 && (tok_eq(sub, "sleep") || tok_eq(sub, "tocrawl"))) {
        if (!mc_tok_u32(&r->tok[2], &v) || (tok_eq(sub, "sleep") && v > 1000000))
            mc_out_line(c, "CLIENT_ERROR bad command line format");
        else
            mc_out_line(c, "OK");
    } else if (r->ntok == 3 && tok_eq(sub, "enable")) {
        mc_out_line(c, mc_crawler_on() ? "ERROR failed to start lru crawler thread" : "OK");
        atomic_store(&g_crawler, 1);
    } else if (r->ntok == 3 && tok_eq(sub, "disable")) {
        mc_out_line(c, mc_crawler_on() ? "OK" : "ERROR failed to stop lru crawler thread");
        atomic_store(&g_crawler, 0);
    } else {
        mc_out_line(c, MC_ERROR);
    }
}

static void slabs(struct conn *c, struct mc_req *r)
{
    uint32_t a, b;

    if (r->ntok == 5 && tok_eq(&r->tok[1], "reassign")) {
        if (!mc_tok_u32(&r->tok[2], &a) || !mc_tok_u32(&r->tok[3], &b))
            mc_out_line(c, MC_ERR_FORMAT);
        else if (a == b)
            mc_out_line(c, "SAME src and dst class are identical");
        else if (a >= 64 || b >= 64 || b == 0)
            mc_out_line(c, "BADCLASS invalid src or dst class id");
        else
            mc_out_line(c, "NOSPARE source class has no spare pages");
    } else if (r->ntok == 4 && tok_eq(&r->tok[1], "automove")) {
        if (!mc_tok_u32(&r->tok[2], &a))
            mc_out_line(c, MC_ERR_FORMAT);
        else if (a > 2)
            mc_out_line(c, MC_ERROR);
        else
            mc_out_line(c, "OK");
    } else {
        mc_out_line(c, MC_ERROR);
    }
}

static void lru(struct conn *c, struct mc_req *r)
{
    const struct mc_tok *sub = &r->tok[1];
    uint32_t v;

    if (r->ntok == 4 && tok_eq(sub, "mode") &&
        (tok_eq(&r->tok[2], "flat") || tok_eq(&r->tok[2], "segmented")))
        mc_out_line(c, "OK");
    else if (r->ntok == 4 && tok_eq(sub, "temp_ttl") && mc_tok_u32(&r->tok[2], &v))
        mc_out_line(c, "OK");
    else if ((r->ntok == 6 || r->ntok == 7) && tok_eq(sub, "tune"))
        mc_out_line(c, "OK");
    else
        mc_out_line(c, MC_ERROR);
}

/* cache_memlimit <megabytes> [noreply]: maxmemory changes (at least 8 megabytes). */
static void cache_memlimit(struct conn *c, struct mc_req *r)
{
    uint32_t mb;

    if (r->ntok != 3 && !(r->ntok == 4 && tok_eq(&r->tok[2], "noreply"))) {
        mc_out_line(c, MC_ERROR);
        return;
    }
    if (!mc_tok_u32(&r->tok[1], &mb)) {
        mc_out_line(c, MC_ERROR);
        return;
    }
    if (mb < 8) {
        mc_out_line(c, "MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m");
        return;
    }
    {
        /* as CONFIG SET maxmemory does it (workers read the setting racily, by design) */
        char v[32], err[128];
        const char *argv[1] = {v};
        snprintf(v, sizeof(v), "%llu", (unsigned long long)mb * 1024 * 1024);
        if (config_set("maxmemory", argv, 1, 0, err, sizeof(err))) {
            mc_out_line(c, MC_ERROR);
            return;
        }
    }
    if (r->ntok == 3)
        mc_out_line(c, "OK");
}

void mc_admin_command(struct conn *c, struct mc_req *r)
{
    const struct mc_tok *t0 = &r->tok[0];

    if (tok_eq(t0, "lru_crawler"))
        lru_crawler(c, r);
    else if (tok_eq(t0, "slabs"))
        slabs(c, r);
    else if (tok_eq(t0, "lru"))
        lru(c, r);
    else if (tok_eq(t0, "cache_memlimit"))
        cache_memlimit(c, r);
    else if (tok_eq(t0, "watch"))
        mc_watch_command(c, r);
    else
        mc_out_line(c, MC_ERROR);
}
