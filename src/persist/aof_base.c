/* An AOF base file in RESP (aof-use-rdb-preamble no), as Redis's rewriteAppendOnlyFileRio
 * writes it: per database a SELECT, per key the commands that rebuild it (collections in
 * batches of 64 elements), PEXPIREAT for a TTL, memcached items as TC.MCSET, streams with
 * XADD / XSETID / XGROUP CREATE / XCLAIM / XGROUP CREATECONSUMER, functions as FUNCTION
 * LOAD; with aof-timestamp-enabled a #TS annotation first. Runs in a fork child (the store is
 * a private copy: no locks) or with every stripe held. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "persist/persist_int.h"
#include "persist/rdb.h"
#include "store/item.h"
#include "store/lpack.h"
#include "store/store.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_stream.h"
#include "store/t_stream_cg.h"
#include "store/t_zset.h"

#define ITEMS_PER_CMD 64 /* AOF_REWRITE_ITEMS_PER_CMD */

static void w_arr(FILE *f, long n)
{
    fprintf(f, "*%ld\r\n", n);
}

static void w_bulk(FILE *f, const char *p, size_t n)
{
    fprintf(f, "$%zu\r\n", n);
    fwrite(p, 1, n, f);
    fwrite("\r\n", 1, 2, f);
}

static void w_s(FILE *f, const char *s)
{
    w_bulk(f, s, strlen(s));
}

static void w_ll(FILE *f, long long v)
{
    char b[32];
    w_bulk(f, b, (size_t)snprintf(b, sizeof(b), "%lld", v));
}

static void w_id(FILE *f, const struct sid *id)
{
    char b[48];
    w_bulk(f, b, (size_t)snprintf(b, sizeof(b), "%llu-%llu", (unsigned long long)id->ms,
                                  (unsigned long long)id->seq));
}

/* A batch command head: NAME key, then n more arguments. */
static void w_head(FILE *f, const char *cmd, struct item *it, long n)
{
    w_arr(f, 2 + n);
    w_s(f, cmd);
    w_bulk(f, item_key(it), item_klen(it));
}

static void w_list(FILE *f, struct item *it, struct tlist *l)
{
    unsigned long left = l->len;
    long in_cmd = 0;

    for (struct qnode *q = l->head; q; q = q->next) {
        for (uint32_t off = 0; off < lp_end(q->lp); off = lp_next(q->lp, off)) {
            size_t n;
            const char *p = lp_get(q->lp, off, &n);
            if (in_cmd == 0) {
                in_cmd = left > ITEMS_PER_CMD ? ITEMS_PER_CMD : (long)left;
                w_head(f, "RPUSH", it, in_cmd);
            }
            w_bulk(f, p, n);
            left--;
            in_cmd--;
        }
    }
}

static void w_set(FILE *f, struct item *it, void *s)
{
    unsigned long left = tset_len(s);
    long in_cmd = 0;
    struct tset_iter si;
    const char *p;
    size_t n;

    tset_iter_init(&si, s);
    while (tset_next(&si, &p, &n)) {
        if (in_cmd == 0) {
            in_cmd = left > ITEMS_PER_CMD ? ITEMS_PER_CMD : (long)left;
            w_head(f, "SADD", it, in_cmd);
        }
        w_bulk(f, p, n);
        left--;
        in_cmd--;
    }
}

static void w_hash(FILE *f, struct item *it, void *h)
{
    unsigned long left = thash_len(h);
    long in_cmd = 0;
    struct thash_iter hi;
    const char *k, *v;
    size_t kn, vn;

    thash_iter_init(&hi, h);
    while (thash_next(&hi, &k, &kn, &v, &vn)) {
        if (in_cmd == 0) {
            in_cmd = left > ITEMS_PER_CMD ? ITEMS_PER_CMD : (long)left;
            w_head(f, "HMSET", it, in_cmd * 2);
        }
        w_bulk(f, k, kn);
        w_bulk(f, v, vn);
        left--;
        in_cmd--;
    }
}

static void w_zset(FILE *f, struct item *it, struct tzset *z)
{
    unsigned long len = tzset_len(z), left = len;
    long in_cmd = 0;
    struct zit zi;

    if (!len)
        return;
    zit_seek(&zi, z, 0);
    for (unsigned long i = 0; i < len; i++) {
        size_t n;
        double sc;
        char b[64];
        const char *p = zit_get(&zi, &n, &sc);
        if (in_cmd == 0) {
            in_cmd = left > ITEMS_PER_CMD ? ITEMS_PER_CMD : (long)left;
            w_head(f, "ZADD", it, in_cmd * 2);
        }
        w_bulk(f, b, (size_t)snprintf(b, sizeof(b), "%.17g", sc));
        w_bulk(f, p, n);
        left--;
        in_cmd--;
        zit_next(&zi);
    }
}

static void w_stream(FILE *f, struct item *it, struct tstream *s)
{
    struct sid zero = {0, 0};
    struct spos pos;

    if (s->len && tstream_seek(s, &zero, &pos)) {
        do {
            struct sent e;
            const char *p;
            size_t n;
            tstream_get(s, &pos, &e);
            w_head(f, "XADD", it, 1 + 2 * (long)e.nfields);
            w_id(f, &e.id);
            while (sentry_next(&e, &p, &n))
                w_bulk(f, p, n);
        } while (tstream_next(s, &pos));
    } else {
        /* an empty stream: created by an entry 0-1 trimmed at once, as Redis writes it (its
         * last ID, 0-0 too, is the XSETID's below) */
        struct sid one = {0, 1};
        w_head(f, "XADD", it, 5);
        w_s(f, "MAXLEN");
        w_s(f, "0");
        w_id(f, &one);
        w_s(f, "x");
        w_s(f, "y");
    }
    w_head(f, "XSETID", it, 5);
    w_id(f, &s->last_id);
    w_s(f, "ENTRIESADDED");
    w_ll(f, (long long)s->entries_added);
    w_s(f, "MAXDELETEDID");
    w_id(f, &s->max_deleted_id);
}

/* The consumer groups: XGROUP CREATE (the key after CREATE), the pending entries by XCLAIM
 * (which creates their consumers), the consumers without any by XGROUP CREATECONSUMER. */
static void w_groups(FILE *f, struct item *it, struct tstream *s)
{
    for (size_t i = 0; i < s->ngroups; i++) {
        const struct sgroup *g = s->groups[i];
        w_arr(f, 7);
        w_s(f, "XGROUP");
        w_s(f, "CREATE");
        w_bulk(f, item_key(it), item_klen(it));
        w_bulk(f, g->name, g->nlen);
        w_id(f, &g->last_id);
        w_s(f, "ENTRIESREAD");
        w_ll(f, g->entries_read);
        for (size_t j = 0; j < g->pel.n; j++) {
            const struct snack *nk = g->pel.v[j];
            w_arr(f, 12);
            w_s(f, "XCLAIM");
            w_bulk(f, item_key(it), item_klen(it));
            w_bulk(f, g->name, g->nlen);
            w_bulk(f, nk->owner->name, nk->owner->nlen);
            w_s(f, "0");
            w_id(f, &nk->id);
            w_s(f, "TIME");
            w_ll(f, nk->dtime);
            w_s(f, "RETRYCOUNT");
            w_ll(f, (long long)nk->dcount);
            w_s(f, "JUSTID");
            w_s(f, "FORCE");
        }
        for (size_t j = 0; j < g->ncons; j++) {
            const struct scons *c = g->cons[j];
            if (c->pel.n)
                continue; /* created by its XCLAIMs */
            w_arr(f, 5);
            w_s(f, "XGROUP");
            w_s(f, "CREATECONSUMER");
            w_bulk(f, item_key(it), item_klen(it));
            w_bulk(f, g->name, g->nlen);
            w_bulk(f, c->name, c->nlen);
        }
    }
}

static void put_function(void *arg, const char *code, size_t n)
{
    FILE *f = arg;
    w_arr(f, 3);
    w_s(f, "FUNCTION");
    w_s(f, "LOAD");
    w_bulk(f, code, n);
}

static void w_item(FILE *f, struct item *it, int64_t exp)
{
    void *ptr = it->type == OBJ_STRING ? NULL : item_ptr(it);

    switch (it->type) {
    case OBJ_STRING: {
        uint32_t fl = (it->bits & IT_FLAGS) ? item_mcflags(it) : 0;
        uint64_t cas = (it->bits & IT_CAS) ? item_cas_field(it) : 0;
        if (fl || cas) { /* a memcached item exactly, as propagate.c logs it */
            w_head(f, "TC.MCSET", it, 4);
            w_bulk(f, item_value(it), item_vlen(it));
            w_ll(f, (long long)fl);
            w_ll(f, (long long)cas);
            w_ll(f, (long long)exp);
            return;
        }
        w_head(f, "SET", it, 1);
        w_bulk(f, item_value(it), item_vlen(it));
        break;
    }
    case OBJ_LIST:
        w_list(f, it, ptr);
        break;
    case OBJ_SET:
        w_set(f, it, ptr);
        break;
    case OBJ_HASH:
        w_hash(f, it, ptr);
        break;
    case OBJ_ZSET:
        w_zset(f, it, ptr);
        break;
    case OBJ_STREAM:
        w_stream(f, it, ptr);
        w_groups(f, it, ptr);
        break;
    default:
        return;
    }
    if (exp) {
        w_head(f, "PEXPIREAT", it, 1);
        w_ll(f, (long long)exp);
    }
}

int aof_base_write_resp(struct store *s, const char *path, int64_t now)
{
    char tmp[2100];
    FILE *f;
    int rc = -1, sync_err = 0;
    long long synced = 0; /* aof-rewrite-incremental-fsync: bytes handed to the disk */

    (void)now;
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
    f = fopen(tmp, "w");
    if (!f) {
        log_warn("Opening the temp file for AOF rewrite: %s", strerror(errno));
        return -1;
    }
    if (cfg.aof_timestamp_enabled)
        fprintf(f, "#TS:%lld\r\n", (long long)time(NULL));
    if (rdb_funcs.each)
        rdb_funcs.each(put_function, f);
    for (int db = 0; db < s->ndb; db++) {
        int selected = 0;
        for (uint32_t i = 0; i < s->nstripes; i++) {
            struct ht *t = &s->stripes[i].db[db];
            for (uint32_t j = 0; j < t->size && t->slots; j++) {
                struct item *it = ht_item_at(t, j);
                if (!it)
                    continue;
                if (!selected) {
                    w_arr(f, 2);
                    w_s(f, "SELECT");
                    w_ll(f, db);
                    selected = 1;
                }
                w_item(f, it, item_expire(it));
                if (cfg.aof_rewrite_incremental_fsync && !sync_err &&
                    ftello(f) - synced >= RDB_AUTOSYNC_BYTES)
                    sync_err = fflush(f) || rdb_autosync(fileno(f), ftello(f), &synced,
                                                         RDB_AUTOSYNC_BYTES);
            }
        }
    }
    if (sync_err || fflush(f) || ferror(f) || fsync(fileno(f))) {
        log_warn("Write error writing append only file on disk: %s", strerror(errno));
        fclose(f);
        unlink(tmp);
        return -1;
    }
    fclose(f);
    if (rename(tmp, path)) {
        log_warn("Error moving temp append only file on the final destination: %s",
                 strerror(errno));
        unlink(tmp);
        return -1;
    }
    rc = 0;
    return rc;
}
