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
#include "cmd/tracking.h"

typedef void cmd_fn(struct conn *c);

/* Command flags, as Redis 7.0 names them (COMMAND INFO), then twincache's own. */
/* The Redis version twincache answers as (INFO redis_version, HELLO, LOLWUT). */
#define TC_VERSION "7.0.15"

#define CMD_WRITE 0x000001
#define CMD_READONLY 0x000002
#define CMD_DENYOOM 0x000004
#define CMD_ADMIN 0x000008
#define CMD_PUBSUB 0x000010
#define CMD_NOSCRIPT 0x000020
#define CMD_LOADING 0x000040
#define CMD_STALE 0x000080
#define CMD_FAST 0x000100
#define CMD_NOAUTH 0x000200 /* no_auth: allowed before AUTH */
#define CMD_BLOCKING 0x000400
#define CMD_MOVABLE 0x000800 /* movablekeys: derived from the key specs */
#define CMD_SKIP_MONITOR 0x001000
#define CMD_SKIP_SLOWLOG 0x002000
#define CMD_ASKING 0x004000
#define CMD_MAY_REPLICATE 0x008000
#define CMD_NO_MANDATORY_KEYS 0x010000
#define CMD_NO_ASYNC_LOADING 0x020000
#define CMD_NO_MULTI 0x040000
#define CMD_ALLOW_BUSY 0x080000
#define CMD_MODULE 0x100000 /* reported, never set */
/* twincache's own, written "tc:name" in a flag string and never reported */
#define CMD_TX_CONTROL 0x1000000 /* tc:txcontrol: runs at once inside MULTI (EXEC, WATCH, ...) */
#define CMD_SUBSCRIBED 0x2000000 /* tc:subscribed: allowed in RESP2 subscribed mode */
#define CMD_SIGNALS 0x4000000    /* tc:signals: the handler reports the keys it modifies */
#define CMD_ONE_KEY 0x400000000ULL   /* derived: its only key is argv[first] (one range spec of
                                       * one key, no getkeys): hooks skip the key-spec walk */
#define CMD_INTERNAL 0x200000000ULL   /* tc:internal: not a client command (TC.MCSET): only the
                                        * AOF loader runs it; hidden from COMMAND */
#define CMD_KEEP_WATCH 0x100000000ULL /* tc:keep-watch: its changes invalidate no WATCH (Redis
                                        * does not signal the key: XACK, XGROUP, XCLAIM...) */
/* How a write propagates when its handler does not say (cmd_prop_*): by default as it came,
 * unless it answered an error */
#define CMD_PROP_EXPLICIT 0x08000000 /* tc:prop-explicit: only what the handler propagates */
#define CMD_PROP_STATE 0x10000000    /* tc:prop-state: the key's state after (SET ... PXAT) */
#define CMD_PROP_EXPIRE 0x20000000   /* tc:prop-expire: PEXPIREAT / PERSIST / DEL of the key */
#define CMD_PROP_ARGV3 0x40000000    /* tc:prop-argv3 (SET): with an expiry its state, else as it came */
/* tc:allstripes: may touch any key whatever its key specs say (scripts): EXEC holds every
 * stripe for a transaction that queues it */
#define CMD_ALL_STRIPES 0x80000000u

/* Key spec flags (Redis 7.0's names) */
#define KS_RO 0x0001
#define KS_RW 0x0002
#define KS_OW 0x0004
#define KS_RM 0x0008
#define KS_ACCESS 0x0010
#define KS_UPDATE 0x0020
#define KS_INSERT 0x0040
#define KS_DELETE 0x0080
#define KS_NOT_KEY 0x0100
#define KS_INCOMPLETE 0x0200
#define KS_VARIABLE_FLAGS 0x0400

enum { KS_BS_UNKNOWN, KS_BS_INDEX, KS_BS_KEYWORD };
enum { KS_FK_UNKNOWN, KS_FK_RANGE, KS_FK_KEYNUM };

/* One Redis 7 key spec: where the search for keys begins, and how keys are found from there. */
struct keyspec {
    uint16_t flags;  /* KS_* */
    uint8_t bs, fk;  /* KS_BS_*, KS_FK_* */
    int pos;         /* index: the argument; keyword: where the search starts (<0: from the end) */
    char kw[16];     /* keyword: the word, NUL-terminated */
    char kwl[16];    /* and in lowercase, to match arguments */
    int a, b, l;     /* range: lastkey, keystep, limit; keynum: keynumidx, firstkey, keystep */
};

#define CMD_MAX_KEYSPECS 3

struct cmd;
struct block_spec;
/* One key found in a command line: its argv index and KS_* flags. Returns nonzero to stop. */
typedef int cmd_key_fn(void *arg, int pos, unsigned flags);
/* Keys of commands whose specs cannot find them all (SORT) or whose access flags depend on
 * the arguments (SET ... GET): calls fn for each, returns the number found or -1. */
typedef int cmd_getkeys_fn(const struct cmd *cmd, int argc, const struct slice *argv,
                           cmd_key_fn *fn, void *arg);

/* A command's table entry: every fact about it. The first nine fields are written by the
 * command families; cmd_register derives the rest from them. */
struct cmd {
    const char *name;       /* lowercase; a subcommand's is "container|sub" */
    cmd_fn *fn;
    int arity;              /* >0 exact, <0 at least -arity (argv[0] counted) */
    const char *flagstr;    /* Redis 7.0 flag names, space separated, plus "tc:..." */
    const char *aclstr;     /* ACL categories besides those the flags imply ("@string") */
    const char *keystr;     /* key specs, "; " separated: "RW,access index:1 range:0,1,0" */
    const char *group;      /* COMMAND DOCS group */
    const char *summary;    /* one help line */
    struct cmd *subs;       /* subcommand entries, ended by a NULL name, or NULL */
    cmd_getkeys_fn *getkeys; /* see cmd_getkeys_fn, or NULL */
    const struct block_spec *block; /* how it blocks (blocking.c), or NULL */
    /* derived */
    uint64_t flags;          /* CMD_* */
    uint32_t acl;            /* ACL_* category bits */
    int first, last, step;   /* the legacy key range COMMAND INFO reports */
    int nks;                 /* key specs */
    struct keyspec ks[CMD_MAX_KEYSPECS];
    int nsubs;
    const struct cmd *parent; /* a subcommand's container */
    int id;                   /* index of its counters (cmdstats.c), set by cmd_register */
};

/* The flags this command line runs with, as Redis's getCommandFlags: a script call's (EVAL,
 * EVALSHA, FCALL and their _RO forms) come from its shebang or function flags through the
 * hook src/script installs; every other command's are its entry's. Owner thread of c. */
extern uint64_t (*cmd_script_flags_hook)(struct conn *c, const struct cmd *cmd, uint64_t flags);
static inline uint64_t cmd_flags_of(struct conn *c, const struct cmd *cmd)
{
    if (TC_UNLIKELY(cmd_script_flags_hook != NULL) && cmd->group[0] == 's' &&
        !strcmp(cmd->group, "scripting"))
        return cmd_script_flags_hook(c, cmd, cmd->flags);
    return cmd->flags;
}

/* The entry running on this thread (set by cmd_call and EXEC before the handler). */
extern __thread const struct cmd *cmd_current;

/* Reports of the running command (this thread), and cmd_modified_reset to start counting
 * them for one command (cmd_call, EXEC). */
extern __thread unsigned long cmd_mods;
void cmd_modified_reset(void);
/* From blocking.c (blocking.h): registrations of blocked clients, and the wake-up of a key's
 * waiters. */
extern _Atomic long block_waiters;
void block_signal_key(int db, const char *p, size_t n);

/* The handler modified key k (under its stripe lock; it is the key's item now, or NULL when
 * the change deleted it), as Redis's signalModifiedKey: a WATCH of the key fails, clients
 * blocked on it retry, the change counts as dirty. A handler that changed nothing reports
 * nothing, so nothing is invalidated, woken or logged. Handlers that report carry
 * "tc:signals"; for the others every key they may write counts as modified. Inline: it is
 * on every write's path. */
static inline void cmd_modified(struct conn *c, const struct skey *k, struct item *it)
{
    cmd_mods++;
    STAT_INC(c->w->st.dirty);
    if (it)
        item_cas_invalidate(it);
    if (TC_UNLIKELY(atomic_load_explicit(&block_waiters, memory_order_relaxed) != 0))
        block_signal_key(k->db, k->p, k->n);
    tracking_invalidate(k->db, k->p, k->n);
}
/* As cmd_modified, for the writes Redis reports without signalKeyAsReady and without
 * touching a WATCH (XSETID, XGROUP SETID): dirty and tracked, but no blocked client retries
 * (a blocked XREAD / XREADGROUP stays blocked, as in Redis 7.0). */
static inline void cmd_modified_quiet(struct conn *c, const struct skey *k)
{
    cmd_mods++;
    STAT_INC(c->w->st.dirty);
    tracking_invalidate(k->db, k->p, k->n);
}
/* After a write command ran (cmd_call, EXEC): the default reports of a command without
 * "tc:signals". Returns 1 when the command modified something (or may have). */
int cmd_after_write(struct conn *c, const struct cmd *cmd);

/* Scripts past busy-reply-threshold (src/script): evals in the low 16 bits, functions above.
 * While it is not 0, commands without "allow_busy" are refused with cmd_busy_error(). */
extern _Atomic int cmd_script_busy;
/* DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands (tests only). */
extern _Atomic int cmd_script_deny_off;
#define CMD_BUSY_FUNCTION (1 << 16)
/* The -BUSY text (without "-" or CRLF) for the scripts busy now. */
const char *cmd_busy_error(void);

/* ACL categories: bit i is acl_category_name(i) */
int acl_category_count(void);
const char *acl_category_name(int i);

/* Call fn for every key of the command line argv (argc arguments, argv[0] the command, or
 * the container and subcommand) as its key specs find them, with each key's flags; keys of
 * NOT_KEY specs (channels) are skipped. Returns the number of keys, or -1 when the arguments
 * do not fit the specs (a missing numkeys, keys past the end): then the set of keys is
 * unknown, and callers that lock or invalidate must assume every key. */
int cmd_keys(const struct cmd *cmd, int argc, const struct slice *argv, cmd_key_fn *fn,
             void *arg);
/* 1 when the command has key arguments at all. */
int cmd_has_keys(const struct cmd *cmd);
/* Derive an entry's flags, categories, key specs and range (cmd_register). */
void cmd_entry_setup(struct cmd *c, const struct cmd *parent);
/* The names of the CMD_* and KS_* flags, for COMMAND INFO: i from 0 to count-1. */
int cmd_flag_count(void);
const char *cmd_flag_name(int i, uint64_t *bit);
int keyspec_flag_count(void);
const char *keyspec_flag_name(int i, unsigned *bit);
/* getkeys functions of SET, BITFIELD, SORT and SORT_RO (see cmd_getkeys_fn). */
cmd_getkeys_fn cmd_getkeys_set, cmd_getkeys_bitfield, cmd_getkeys_sort, cmd_getkeys_sort_ro;

/* Families register their commands at setup with cmd_register (main thread, before workers
 * start). */
void cmd_register(struct cmd *cmds, int n);
/* An internal command (tc:internal) by name, for the AOF loader, or NULL. */
const struct cmd *cmd_lookup_internal(const char *name, size_t len);
/* A top-level command by name (any case), or NULL. */
const struct cmd *cmd_lookup(const char *name, size_t len);
/* rename-command: the command named `from` is named `to` from now on ("": it has no name, no
 * client can call it). At start-up, before the workers run. 0, or -1 with Redis's message. */
int cmd_rename(const char *from, const char *to, char *err, size_t errcap);
/* The entry that runs argv: the command, or its subcommand's entry when it is a container
 * and argc > 1. NULL with *container set when argv[1] names no subcommand of it. */
const struct cmd *cmd_resolve(int argc, const struct slice *argv, const struct cmd **container);
/* "name" or "container|sub", as COMMAND INFO takes them, or NULL. */
const struct cmd *cmd_lookup_full(const char *name, size_t len);
/* Every registered command, for COMMAND / COMMAND LIST. */
int cmd_count(void);
const struct cmd *cmd_at(int i);

/* The RESP protocol hooks (struct srv_proto). open: a new connection (RESP2, not
 * authenticated when a password is set, parser limits; the normal output limit applies). */
void cmd_resp_open(struct conn *c);
/* input: parse and execute everything complete in c->rbuf. */
void cmd_resp_input(struct conn *c);
/* read_hint: the bytes the buffer must hold to complete the bulk argument being read. */
size_t cmd_resp_read_hint(struct conn *c);
/* srv_proto.mem of RESP: what the MULTI queue, WATCH, subscriptions and tracking prefixes
 * of c use (client memory, as Redis's getClientMemoryUsage counts them). */
size_t cmd_resp_mem(const struct conn *c);
/* srv->evict_clients: close the largest evictable clients until the clients' memory is
 * under maxmemory-clients (any worker; also CONFIG SET). */
void cmd_evict_clients(struct worker *w);
/* The same, run by c's command (CONFIG SET of maxmemory-clients or maxmemory). */
void cmd_evict_clients_now(struct conn *c);
/* INFO memory mem_clients_normal (normal and Pub/Sub clients) and mem_clients_slaves
 * (replicas, monitors): the clients' memory as last accounted. */
void cmd_clients_mem(struct srv *srv, size_t *normal, size_t *replicas);
/* CONFIG RESETSTAT: evicted_clients back to 0. */
void cmd_evicted_clients_reset(void);
/* INFO stats evicted_clients. */
uint64_t cmd_evicted_clients(void);
/* may_time_out: subscribers and blocked clients are not idle (as Redis). */
int cmd_resp_may_time_out(struct conn *c);
/* Run one command (argv/argc set). Used by the RESP input and by MULTI/EXEC later. */
void cmd_call(struct conn *c);
/* cmd_call for a run of commands on one thread: *clk (-1 at first) is the util_ticks time the
 * previous command ended, used as this one's start, so each command reads the clock once. */
void cmd_call_clk(struct conn *c, int64_t *clk);
/* The RESP protocol close hook: forget transactions, subscriptions, blocking; free the
 * parser and the arguments. */
void cmd_resp_close(struct conn *c);

/* Hooks for collection types (set by their modules at setup): deep copy of the value
 * structure for COPY, and the OBJECT ENCODING name. */
typedef void *value_copy_fn(void *ptr);
typedef const char *encoding_fn(struct item *it);
void cmd_keys_set_copier(int type, value_copy_fn *fn);
void cmd_keys_set_encoder(int type, encoding_fn *fn);
/* OBJECT ENCODING / REFCOUNT of it, as Redis reports them (also DEBUG OBJECT). */
const char *cmd_object_encoding(struct item *it);
int cmd_object_refcount(struct item *it);

/* Lines a module above cmd (scripting) appends to INFO's memory section, or NULL. Set at
 * setup; called on any worker. */
extern void (*cmd_info_memory_hook)(struct buf *b);
/* MIGRATE's cached connections: every thread's (INFO migrate_cached_sockets), and the worker
 * timer that closes this thread's idle ones (as Redis's cron, after 10 s). */
extern _Atomic int cmd_migrate_cached;
void cmd_migrate_tick(int64_t now_ms);

/* Families: each registers its table (src/server calls them all at start-up) */
void cmd_string_setup(void);
void cmd_keys_setup(void);
void cmd_dump_setup(void); /* DUMP RESTORE MIGRATE (cmd_dump.c) */
void cmd_conn_setup(void);
void cmd_server_setup(void);
void cmd_latency_setup(void);
void cmd_lolwut_setup(void);
void cmd_debug_setup(void);
void cmd_module_setup(void);
void cmd_cluster_setup(void);
/* enable-debug-command / enable-module-command: 1 when setting (0 no, 1 yes, 2 local) lets c
 * run the command (local: a Unix socket or loopback client). */
int cmd_protected_allowed(struct conn *c, int setting);
void cmd_command_setup(void);
void cmd_acl_setup(void);
/* A failed AUTH / HELLO AUTH into the ACL log (object "AUTH" or "HELLO"; user NULL: the
 * default user). Bounded work: at most ACL_LOG_MAX entries are compared. */
void acl_log_auth_failure(struct conn *c, const char *object, const struct slice *user);
/* c's CLIENT INFO line without the newline, for the ACL log. */
int conn_client_info(struct conn *c, char *out, size_t cap);
void cmd_list_setup(void);
void cmd_hash_setup(void);
void cmd_set_setup(void);
void cmd_zset_setup(void);
void cmd_stream_setup(void);
void cmd_bit_setup(void);
void cmd_hll_setup(void);
void cmd_geo_setup(void);
void cmd_sort_setup(void);

/* ---- reply helpers (never fail visibly: on OOM the connection is closed) ---- */
static inline void reply_check(struct conn *c, int r)
{
    if (r)
        c->flags |= CONN_CLOSE_ASAP;
}
/* A reply the data does not bound (SRANDMEMBER, HRANDFIELD, ZRANDMEMBER with a negative
 * count: any number of repeats): 1 once c's output passes the normal clients' hard output
 * limit (1 GiB when that is 0, as by default), and c is then closed, the reply unfinished,
 * instead of the server running out of memory; the loop stops. */
int reply_unbounded_stop_slow(struct conn *c);
static inline int reply_unbounded_stop(struct conn *c)
{
    return (c->flags & CONN_CLOSE_ASAP) || buf_len(&c->wbuf) > (1u << 20) ? reply_unbounded_stop_slow(c)
                                                                          : 0;
}
/* A push (a subscription's confirmation) goes out even while CLIENT REPLY is OFF or SKIP, as
 * Redis's CLIENT_PUSHING: its writes sit between reply_push_begin and reply_push_end, which
 * keep them from the rewind that drops the command's other output. Owner thread only. */
extern __thread struct conn *cmd_quiet_conn;
void reply_push_keep(struct conn *c, int end);
static inline void reply_push_begin(struct conn *c)
{
    if (TC_UNLIKELY(cmd_quiet_conn == c))
        reply_push_keep(c, 0);
}
static inline void reply_push_end(struct conn *c)
{
    if (TC_UNLIKELY(cmd_quiet_conn == c))
        reply_push_keep(c, 1);
}
#define reply_raw(c, s, n) reply_check((c), resp_add_raw(&(c)->wbuf, (s), (n)))
#define reply_lit(c, s) reply_raw((c), (s), sizeof(s) - 1)
#define reply_ok(c) reply_lit((c), "+OK\r\n")
#define reply_status(c, s) reply_check((c), resp_add_status(&(c)->wbuf, (s)))
/* Error replies of the running command: a write that answered an error changed nothing and
 * is not propagated (cmd_call resets it with cmd_modified_reset). */
extern __thread unsigned cmd_errors;
/* Set by a handler that counted its own change in the dirty counter (FLUSHALL, before the
 * save that resets it): cmd_after_write then does not count it again, and clears it. */
extern __thread int cmd_dirty_counted;
extern __thread const char *cmd_last_error; /* its text or format: the code is its first word */
#define reply_error(c, s)                                                                        \
    (cmd_errors++, cmd_last_error = (s), reply_check((c), resp_add_error(&(c)->wbuf, (s))))
#define reply_errorf(c, fmt, ...)                                                                \
    (cmd_errors++, cmd_last_error = (fmt),                                                        \
     reply_check((c), resp_add_errorf(&(c)->wbuf, fmt, ##__VA_ARGS__)))

/* cmdstats.c: INFO commandstats / errorstats. call: a command ran (usec, -1 when not timed;
 * answered an error); reject: refused before it ran; errors: n error replies, the last one's
 * text msg. cmdstats_call is inline: one thread's counters and its latency histogram (buckets
 * exact below 16 us, then 16 per power of two) through thread-local pointers the slow path
 * sets up; a CONFIG RESETSTAT (cmdstats_gen) sends the thread to the slow path once. */
#define CMDSTATS_MAX_IDS 1024
#define CMDSTATS_HB (16 + 36 * 16)
struct cmdstat {
    uint64_t calls, usec, rejected, failed;
};
extern __thread struct cmdstat *cmdstats_mine;
extern __thread uint32_t **cmdstats_hist;
extern __thread unsigned cmdstats_hist_gen;
extern _Atomic unsigned cmdstats_gen;
void cmdstats_call_slow(const struct cmd *cmd, int64_t usec, int failed);
static inline int cmdstats_bucket(uint64_t us)
{
    int e, b;
    if (us < 16)
        return (int)us;
    e = 63 - __builtin_clzll(us);
    b = 16 + (e - 4) * 16 + (int)((us >> (e - 4)) & 15);
    return b < CMDSTATS_HB ? b : CMDSTATS_HB - 1;
}
static inline void cmdstats_call(const struct cmd *cmd, int64_t usec, int failed)
{
    struct cmdstat *m = cmdstats_mine;
    uint32_t **hh = cmdstats_hist, *h;

    /* hh is set only after m; ids stay below CMDSTATS_MAX_IDS (cmd_register) */
    if (TC_UNLIKELY(!hh || usec < 0 || !(h = hh[cmd->id]) || !cfg.latency_tracking ||
                    cmdstats_hist_gen !=
                        atomic_load_explicit(&cmdstats_gen, memory_order_relaxed))) {
        cmdstats_call_slow(cmd, usec, failed);
        return;
    }
    m += cmd->id;
    STAT_INC(m->calls);
    STAT_ADD(m->usec, (uint64_t)usec);
    if (failed)
        STAT_INC(m->failed);
    STAT_INC(h[cmdstats_bucket((uint64_t)usec)]);
}
void cmdstats_reject(const struct cmd *cmd);
void cmdstats_errors(const char *msg, unsigned n);
/* A blocked command ended in an error after it was counted (CLIENT UNBLOCK ... ERROR). */
void cmdstats_fail(const struct cmd *cmd);
/* Errors of the running command (in cmd_errors: its failed_calls) that were already counted in
 * errorstats (a script's error that a command it called answered): cmdstats_errors leaves that
 * many out, and resets it. */
extern __thread unsigned cmd_errors_quiet;
void cmdstats_info_commands(struct buf *b);
void cmdstats_info_errors(struct buf *b);
void cmdstats_totals(uint64_t *errors, uint64_t *rejected);
void cmdstats_reset(void);
void cmdstats_info_latency(struct buf *b);
/* The metrics endpoint: fn(cmd, counts since the last RESETSTAT) for each command with any, and
 * total_error_replies. Any thread; not on the request path. */
void cmdstats_visit(void (*fn)(const struct cmd *cmd, const struct cmdstat *st, void *arg),
                    void *arg);
uint64_t cmdstats_error_replies(void);
/* cmd_server.c: INFO's used_memory (the figure maxmemory is enforced on; as is filled with the
 * allocator's totals, rss is alloc_rss()), and the peak of it with used taken into account.
 * Any thread; takes the allocator's stats lock: not per request. */
struct alloc_stats;
size_t cmd_used_memory(struct alloc_stats *as, size_t rss);
size_t cmd_used_memory_peak(size_t used);
/* cmd_dump.c: RESTORE payloads sanitized as sanitize-dump-payload asks (INFO
 * dump_payload_sanitizations; CONFIG RESETSTAT zeroes it) */
extern _Atomic uint64_t cmd_dump_sanitizations;
int cmdstats_histogram(const struct cmd *cmd, uint64_t *calls, uint64_t *bounds,
                       uint64_t *counts, int cap, int *n);
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
/* Reference the value of the IT_REF item it in c's output without copying (the reference
 * taken is dropped once written). Under the lock. */
static inline void reply_item_ref(struct conn *c, struct item *it)
{
    item_ref(it);
    reply_check(c, conn_add_ref(c, item_value(it), item_vlen(it), it, item_unref));
}

/* Exact Redis error texts */
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NOTINT "ERR value is not an integer or out of range"
#define ERR_NOTFLOAT "ERR value is not a valid float"
#define ERR_SYNTAX "ERR syntax error"
#define ERR_NOKEY "ERR no such key"
#define ERR_OVERFLOW "ERR increment or decrement would overflow"
#define ERR_DBRANGE "ERR DB index is out of range"
#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_MISCONF                                                                                \
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "  \
    "disk. Commands that may modify the data set are disabled, because this instance is "         \
    "configured to report errors during writes if RDB snapshotting fails "                        \
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB " \
    "error."
#define ERR_BIGSTR "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
void reply_arity_error(struct conn *c, const char *name);
/* A HELP reply: one status line per entry of the array help. */
void reply_lines(struct conn *c, const char *const *lines, size_t n);
#define reply_help(c, help) reply_lines((c), (help), sizeof(help) / sizeof((help)[0]))

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
/* The key the AOF / replication path already resolved for the running command (propagate.c
 * aof_exec, which locks its stripe first), so the handler does not hash it again; p is NULL
 * outside such a command. */
extern _Thread_local struct skey cmd_key_memo;
/* Resolve argv[i] as a key of the client's database. */
static inline void arg_key(struct conn *c, int i, struct skey *k)
{
    if (TC_UNLIKELY(c->argv[i].p == cmd_key_memo.p) && c->argv[i].n == cmd_key_memo.n &&
        c->db == cmd_key_memo.db) {
        *k = cmd_key_memo;
        return;
    }
    store_key(conn_store(c), k, c->db, c->argv[i].p, c->argv[i].n);
}

#endif
