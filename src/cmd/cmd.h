/* The command table and the helpers every command family uses: argument access, replies in
 * the client's RESP version, and the exact Redis error texts. A handler runs on the worker
 * that owns the connection, with c->argv/argc set (borrowed from the input buffer until the
 * handler returns). Handlers lock the stripes they touch through store.h. */
#ifndef TC_CMD_H
#define TC_CMD_H

#include <stdint.h>

#include <string.h>

#include "core/buf.h"
#include "core/util.h"
#include "net/conn.h"
#include "net/worker.h"
#include "proto/resp.h"
#include "store/store.h"

typedef void cmd_fn(struct conn *c);

#define CMD_WRITE 0x0001
#define CMD_READONLY 0x0002
#define CMD_DENYOOM 0x0004
#define CMD_ADMIN 0x0008
#define CMD_PUBSUB 0x0010
#define CMD_NOSCRIPT 0x0020
#define CMD_LOADING 0x0040
#define CMD_STALE 0x0080
#define CMD_FAST 0x0100
#define CMD_NOAUTH 0x0200   /* allowed before AUTH */
#define CMD_BLOCKING 0x0400
#define CMD_MOVABLE 0x0800

struct cmd {
    const char *name;   /* lowercase */
    cmd_fn *fn;
    int arity;          /* >0 exact, <0 at least -arity */
    uint32_t flags;     /* CMD_* */
    int first, last, step; /* key positions, as COMMAND INFO reports them */
    const char *group;  /* COMMAND DOCS group */
    const char *summary;
    const char *subcmds; /* space-separated subcommands with arities "get:-3 set:-4", or NULL */
};

/* Families register their commands at setup with cmd_register (main thread, before workers
 * start). */
void cmd_register(const struct cmd *cmds, int n);
const struct cmd *cmd_lookup(const char *name, size_t len);
/* Every registered command, for COMMAND / COMMAND LIST. */
int cmd_count(void);
const struct cmd *cmd_at(int i);
void cmd_setup(void);

/* The RESP protocol input hook: parse and execute everything complete in c->rbuf. */
void cmd_resp_input(struct conn *c);
/* Run one command (argv/argc set). Used by the RESP input and by MULTI/EXEC later. */
void cmd_call(struct conn *c);
/* The RESP protocol close hook: forget transactions, subscriptions, blocking. */
void cmd_resp_close(struct conn *c);

/* Hooks for collection types (set by their modules at setup): deep copy of the value
 * structure for COPY, and the OBJECT ENCODING name. */
typedef void *value_copy_fn(void *ptr);
typedef const char *encoding_fn(struct item *it);
void cmd_keys_set_copier(int type, value_copy_fn *fn);
void cmd_keys_set_encoder(int type, encoding_fn *fn);

/* Families */
void cmd_string_setup(void);
void cmd_keys_setup(void);
void cmd_conn_setup(void);
void cmd_server_setup(void);

/* ---- reply helpers (never fail visibly: on OOM the connection is closed) ---- */
static inline void reply_check(struct conn *c, int r)
{
    if (r)
        c->flags |= CONN_CLOSE_ASAP;
}
#define reply_raw(c, s, n) reply_check((c), resp_add_raw(&(c)->wbuf, (s), (n)))
#define reply_lit(c, s) reply_raw((c), (s), sizeof(s) - 1)
#define reply_ok(c) reply_lit((c), "+OK\r\n")
#define reply_status(c, s) reply_check((c), resp_add_status(&(c)->wbuf, (s)))
#define reply_error(c, s) reply_check((c), resp_add_error(&(c)->wbuf, (s)))
#define reply_errorf(c, ...) reply_check((c), resp_add_errorf(&(c)->wbuf, __VA_ARGS__))
#define reply_int(c, v) reply_check((c), resp_add_int(&(c)->wbuf, (v)))
#define reply_bulk(c, p, n) reply_check((c), resp_add_bulk(&(c)->wbuf, (p), (n)))
#define reply_bulk_ll(c, v) reply_check((c), resp_add_bulk_ll(&(c)->wbuf, (v)))
#define reply_null(c) reply_check((c), resp_add_null(&(c)->wbuf, (c)->resp))
#define reply_null_array(c) reply_check((c), resp_add_null_array(&(c)->wbuf, (c)->resp))
#define reply_array(c, n) reply_check((c), resp_add_array(&(c)->wbuf, (n)))
#define reply_map(c, n) reply_check((c), resp_add_map(&(c)->wbuf, (n), (c)->resp))
#define reply_set(c, n) reply_check((c), resp_add_set(&(c)->wbuf, (n), (c)->resp))
#define reply_double(c, d) reply_check((c), resp_add_double(&(c)->wbuf, (d), (c)->resp))
#define reply_bool(c, v) reply_check((c), resp_add_bool(&(c)->wbuf, (v), (c)->resp))
#define reply_verbatim(c, p, n) reply_check((c), resp_add_verbatim(&(c)->wbuf, (p), (n), (c)->resp))
static inline void reply_cstr(struct conn *c, const char *s)
{
    reply_bulk(c, s, strlen(s));
}
/* A string item's value as a bulk reply: copied, or referenced when large. Under the lock. */
void reply_item_value(struct conn *c, struct item *it);

/* Exact Redis error texts */
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOTINT "ERR value is not an integer or out of range"
#define ERR_NOTFLOAT "ERR value is not a valid float"
#define ERR_SYNTAX "ERR syntax error"
#define ERR_NOKEY "ERR no such key"
#define ERR_OVERFLOW "ERR increment or decrement would overflow"
#define ERR_DBRANGE "ERR DB index is out of range"
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_BIGSTR "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
void reply_arity_error(struct conn *c, const char *name);

/* ---- argument helpers ---- */
static inline int arg_is(struct conn *c, int i, const char *lower)
{
    return util_eq_nocase(c->argv[i].p, c->argv[i].n, lower);
}
/* Parse argv[i] as an integer; on failure reply ERR_NOTINT (or msg) and return -1. */
int arg_ll(struct conn *c, int i, long long *v, const char *msg);
/* Copy argv[i] into a NUL-terminated buffer (truncated to cap-1). */
void arg_cstr(struct conn *c, int i, char *out, size_t cap);

static inline struct store *conn_store(struct conn *c)
{
    return c->w->srv->store;
}
static inline int64_t conn_now(struct conn *c)
{
    return c->w->now_ms;
}
/* Resolve argv[i] as a key of the client's database. */
static inline void arg_key(struct conn *c, int i, struct skey *k)
{
    store_key(conn_store(c), k, c->db, c->argv[i].p, c->argv[i].n);
}

#endif
