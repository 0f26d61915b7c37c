/* The append-only file's commands and its start-up hooks (the log itself is src/persist,
 * aof_log.h; what a command logs is propagate.c): BGREWRITEAOF, TC.MCSET (how a memcached item
 * is logged and replayed), and the context that runs the AOF's commands at start-up. */
#define _GNU_SOURCE
#include "cmd/propagate.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/multi.h"
#include "cmd/repl.h"
#include "core/log.h"
#include "persist/aof_log.h"

static void bgrewriteaof_command(struct conn *c)
{
    switch (aof_rewrite_request(tx_in_exec(c))) {
    case AOF_RW_OK:
        reply_status(c, "Background append only file rewriting started");
        break;
    case AOF_RW_SCHEDULED:
        reply_status(c, "Background append only file rewriting scheduled");
        break;
    case AOF_RW_BUSY:
        reply_error(c, "ERR Background append only file rewriting already in progress");
        break;
    default:
        reply_error(c, "ERR Can't execute an AOF background rewriting. Please check the server "
                       "logs for more information.");
    }
}

/* TC.MCSET key value flags cas pxat: a memcached item exactly (AOF replay). */
static void mcset_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long fl, cas, exp;
    struct skey k;
    struct item *it;
    uint8_t bits = 0;

    if (arg_ll(c, 3, &fl, NULL) || arg_ll(c, 4, &cas, NULL) || arg_ll(c, 5, &exp, NULL))
        return;
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (exp && exp <= conn_now(c)) {
        store_delete_locked(s, &k, conn_now(c));
        store_unlock(s, k.stripe);
        reply_ok(c);
        return;
    }
    if (fl)
        bits |= IT_FLAGS;
    if (cas || c->argv[2].n >= ITEM_REF_MIN)
        bits |= IT_CAS;
    bits |= item_ttl_bits(exp);
    it = item_create(OBJ_STRING, k.p, k.n, c->argv[2].n, bits);
    if (!it) {
        store_unlock(s, k.stripe);
        reply_error(c, "ERR out of memory");
        return;
    }
    memcpy(item_value(it), c->argv[2].p, c->argv[2].n);
    if (fl) {
        uint32_t f = (uint32_t)fl;
        memcpy(item_opt(it, IT_FLAGS), &f, 4);
    }
    if (bits & IT_CAS) {
        uint64_t v = (uint64_t)cas;
        memcpy(item_opt(it, IT_CAS), &v, 8);
        if (v > s->stripes[k.stripe].cas)
            s->stripes[k.stripe].cas = v;
    }
    if (exp)
        item_set_expire_field(it, exp);
    if (store_put_locked(s, &k, it)) {
        store_unlock(s, k.stripe);
        reply_error(c, "ERR out of memory");
        return;
    }
    store_unlock(s, k.stripe);
    reply_ok(c);
}

/* ---- start-up: running the AOF's commands ---- */

/* A connection of no worker loop: what the AOF's commands run on. */
void *cmd_aof_replay_open(struct srv *srv)
{
    struct worker *fw = calloc(1, sizeof(*fw));
    struct conn *c = calloc(1, sizeof(*c));

    if (!fw || !c) {
        free(fw);
        free(c);
        return NULL;
    }
    fw->srv = srv;
    fw->now_ms = util_now_ms();
    pthread_mutex_init(&fw->list_lock, NULL);
    pthread_mutex_init(&fw->mbox_lock, NULL);
    c->w = fw;
    c->fd = -1;
    c->proto = PROTO_RESP;
    c->resp = 2;
    c->authed = 1;
    return c;
}

static int set_args(struct conn *c, int argc, const char **argv, const size_t *lens)
{
    if (argc > c->argv_cap) {
        struct slice *a = realloc(c->argv, sizeof(*a) * (size_t)argc);
        if (!a)
            return -1;
        c->argv = a;
        c->argv_cap = argc;
    }
    for (int i = 0; i < argc; i++) {
        c->argv[i].p = argv[i];
        c->argv[i].n = lens[i];
    }
    c->argc = argc;
    return 0;
}

/* After a replayed command (the AOF, from_aof 1, or the replica's link): an error reply means
 * the datasets may differ now (repl_applied_error logs it, and may panic, as Redis does). */
static void check_error(struct conn *c, int from_aof, const char *name, size_t namelen)
{
    if (TC_LIKELY(!buf_len(&c->wbuf) || c->wbuf.data[c->wbuf.rpos] != '-'))
        return;
    const char *e = c->wbuf.data + c->wbuf.rpos + 1;
    const char *end = memchr(e, '\r', buf_len(&c->wbuf) - 1);
    const struct cmd *cmd = cmd_lookup(name, namelen);
    repl_applied_error(from_aof, cmd ? cmd->name : NULL, e,
                       end ? (size_t)(end - e) : buf_len(&c->wbuf) - 1);
}

static void run_and_drop(struct conn *c, int64_t *clk, const char *name, size_t namelen)
{
    cmd_call_clk(c, clk);
    check_error(c, 1, name, namelen);
    c->argc = 0;
    conn_reset_output(c);
}

int cmd_aof_replay(void *rctx, int argc, const char **argv, const size_t *lens)
{
    struct conn *c = rctx;
    int64_t clk = -1;

    if (set_args(c, argc, argv, lens))
        return -1;
    if (!cmd_lookup(argv[0], lens[0]) && !cmd_lookup_internal(argv[0], lens[0])) {
        log_warn("Unknown command '%.*s' reading the append only file %s",
                 (int)(lens[0] > 64 ? 64 : lens[0]), argv[0], aof_loading_name());
        return -1;
    }
    c->w->now_ms = util_now_ms();
    store_no_expire = 1; /* nothing expires while loading (a later command may extend a TTL) */
    run_and_drop(c, &clk, argv[0], lens[0]);
    store_no_expire = 0;
    return 0;
}

void cmd_aof_replay_batch(void *rctx, int argc, const char **argv, const size_t *lens,
                          int64_t now_ms, int64_t *clk)
{
    struct conn *c = rctx;

    if (set_args(c, argc, argv, lens))
        return;
    c->w->now_ms = now_ms;
    cmd_call_clk(c, clk);
    check_error(c, 0, argv[0], lens[0]);
    c->argc = 0;
    conn_reset_output(c);
}

void cmd_aof_replay_close(void *rctx)
{
    struct conn *c = rctx;
    struct worker *fw = c->w;

    cmd_resp_close(c);
    conn_reset_output(c);
    buf_deinit(&c->wbuf);
    free(c->argv);
    free(c);
    free(fw->keys);
    free(fw);
}

static struct cmd cmds[] = {
    {"bgrewriteaof", bgrewriteaof_command, 1, "admin noscript no_async_loading", "", NULL, "server", "Asynchronously rewrite the append-only file"},
    {"tc.mcset", mcset_command, 6, "write denyoom noscript tc:internal", "@string", "OW,update index:1 range:0,1,0", "server", "Internal: store a memcached item with its flags, CAS value and expire time (AOF replay)"},
};

void cmd_aof_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
