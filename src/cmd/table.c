#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/repl.h"
#include "cmd/monitor.h"
#include "cmd/notify.h"
#include "cmd/tracking.h"
#include "cmd/cmd.h"
#include "cmd/acl.h"
#include "cmd/coll.h"
#include "cmd/multi.h"
#include "cmd/persist.h"
#include "cmd/propagate.h"
#include "cmd/pubsub.h"
#include "cmd/blocking.h"
#include "cmd/slowlog.h"
#include "core/config.h"
#include "core/latency.h"
#include "core/log.h"
#include "core/util.h"
#include "persist/persist.h"

#define TABLE_SIZE 1024 /* power of two, well above the number of commands */
#define MAX_CMDS 512

/* name: the command's own name, or the one rename-command gave it */
static struct {
    const char *name;
    const struct cmd *c;
} table[TABLE_SIZE];
static const struct cmd *all[MAX_CMDS];
static int ncmds;
static int nids; /* counter ids given (entries and subcommands) */
static const struct cmd *internal[8]; /* tc:internal: outside the table */
static int ninternal;

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)tolower((unsigned char)s[i])) * 16777619u;
    return h;
}

void cmd_register(struct cmd *cmds, int n)
{
    for (int i = 0; i < n; i++) {
        struct cmd *c = &cmds[i];
        uint32_t h = name_hash(c->name, strlen(c->name)) & (TABLE_SIZE - 1);
        cmd_entry_setup(c, NULL);
        c->id = nids < CMDSTATS_MAX_IDS - 1 ? nids++ : CMDSTATS_MAX_IDS - 1; /* (never full) */
        for (int j = 0; j < c->nsubs; j++) {
            cmd_entry_setup(&c->subs[j], c);
            c->subs[j].id = nids < CMDSTATS_MAX_IDS - 1 ? nids++ : CMDSTATS_MAX_IDS - 1;
        }
        if (c->flags & CMD_INTERNAL) {
            if (ninternal < (int)(sizeof(internal) / sizeof(internal[0])))
                internal[ninternal++] = c;
            continue;
        }
        while (table[h].c)
            h = (h + 1) & (TABLE_SIZE - 1);
        table[h].name = c->name;
        table[h].c = c;
        if (ncmds < MAX_CMDS)
            all[ncmds++] = c;
    }
}

const struct cmd *cmd_lookup(const char *name, size_t len)
{
    uint32_t h;

    if (len > 32)
        return NULL;
    h = name_hash(name, len) & (TABLE_SIZE - 1);
    while (table[h].c) {
        if (util_eq_nocase(name, len, table[h].name))
            return table[h].c;
        h = (h + 1) & (TABLE_SIZE - 1);
    }
    return NULL;
}

int cmd_rename(const char *from, const char *to, char *err, size_t errcap)
{
    static __typeof__(table) old;
    const struct cmd *c = cmd_lookup(from, strlen(from));
    char *copy = NULL;

    if (!c) {
        snprintf(err, errcap, "No such command in rename-command");
        return -1;
    }
    if (to[0] && cmd_lookup(to, strlen(to))) {
        snprintf(err, errcap, "Target command name already exists");
        return -1;
    }
    if (to[0] && (strlen(to) > 32 || !(copy = strdup(to)))) {
        snprintf(err, errcap, "Target command name is too long");
        return -1;
    }
    for (char *p = copy; p && *p; p++) /* the table's names are lowercase (util_eq_nocase) */
        *p = (char)tolower((unsigned char)*p);
    /* the table again without `from`, with `to` (open addressing has no removal) */
    memcpy(old, table, sizeof(table));
    memset(table, 0, sizeof(table));
    for (int i = 0; i < TABLE_SIZE; i++) {
        const char *name = old[i].name;
        uint32_t h;
        if (!old[i].c)
            continue;
        if (util_eq_nocase(from, strlen(from), name)) {
            if (!copy)
                continue;
            name = copy;
        }
        h = name_hash(name, strlen(name)) & (TABLE_SIZE - 1);
        while (table[h].c)
            h = (h + 1) & (TABLE_SIZE - 1);
        table[h].name = name;
        table[h].c = old[i].c;
    }
    return 0;
}

const struct cmd *cmd_lookup_internal(const char *name, size_t len)
{
    for (int i = 0; i < ninternal; i++)
        if (util_eq_nocase(name, len, internal[i]->name))
            return internal[i];
    return NULL;
}

/* The subcommand of container named by (p, n), or NULL. */
static const struct cmd *sub_lookup(const struct cmd *container, const char *p, size_t n)
{
    size_t cl = strlen(container->name) + 1; /* "container|" */

    for (int i = 0; i < container->nsubs; i++) {
        const struct cmd *s = &container->subs[i];
        if (util_eq_nocase(p, n, s->name + cl))
            return s;
    }
    return NULL;
}

const struct cmd *cmd_resolve(int argc, const struct slice *argv, const struct cmd **container)
{
    const struct cmd *cmd = cmd_lookup(argv[0].p, argv[0].n);

    *container = cmd;
    if (!cmd || !cmd->nsubs || argc < 2)
        return cmd;
    return sub_lookup(cmd, argv[1].p, argv[1].n);
}

const struct cmd *cmd_lookup_full(const char *name, size_t len)
{
    const char *bar = memchr(name, '|', len);
    const struct cmd *cmd;

    if (!bar)
        return cmd_lookup(name, len);
    cmd = cmd_lookup(name, (size_t)(bar - name));
    if (!cmd || !cmd->nsubs)
        return NULL;
    return sub_lookup(cmd, bar + 1, len - (size_t)(bar - name) - 1);
}

__thread const struct cmd *cmd_current;
uint64_t (*cmd_script_flags_hook)(struct conn *c, const struct cmd *cmd, uint64_t flags);
__thread unsigned long cmd_mods;
__thread unsigned cmd_errors;
__thread const char *cmd_last_error;

__thread int cmd_dirty_counted;

void cmd_modified_reset(void)
{
    cmd_mods = 0;
    cmd_errors = 0;
    cmd_dirty_counted = 0;
}

static int invalidate_cb(void *arg, int pos, unsigned flags)
{
    struct conn *c = arg;
    if (!(flags & KS_RO))
        tracking_invalidate(c->db, c->argv[pos].p, c->argv[pos].n);
    return 0;
}

int cmd_after_write(struct conn *c, const struct cmd *cmd)
{
    if (cmd->flags & CMD_SIGNALS)
        return cmd_mods != 0;
    if (cmd_errors)
        return 0; /* refused: it changed nothing (as the propagation assumes too) */
    if (TC_LIKELY(!cmd_dirty_counted))
        STAT_INC(c->w->st.dirty);
    else
        cmd_dirty_counted = 0;
    if (TC_UNLIKELY(atomic_load_explicit(&tx_watched_keys, memory_order_relaxed) != 0) &&
        !(cmd->flags & CMD_KEEP_WATCH))
        tx_touch_keys(c, cmd);
    if (TC_UNLIKELY(atomic_load_explicit(&block_waiters, memory_order_relaxed) != 0) && !c->blk)
        block_signal_keys(c, cmd);
    if (TC_UNLIKELY(atomic_load_explicit(&tracking_nclients, memory_order_relaxed) != 0)) {
        if ((cmd->flags & CMD_ONE_KEY) && !(cmd->ks[0].flags & KS_RO)) {
            if (c->argc > cmd->first)
                tracking_invalidate(c->db, c->argv[cmd->first].p, c->argv[cmd->first].n);
        } else {
            cmd_keys(cmd, c->argc, c->argv, invalidate_cb, c);
        }
    }
    return 1;
}

int cmd_count(void)
{
    return ncmds;
}

const struct cmd *cmd_at(int i)
{
    return all[i];
}

void reply_lines(struct conn *c, const char *const *lines, size_t n)
{
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++)
        reply_status(c, lines[i]);
}

void reply_arity_error(struct conn *c, const char *name)
{
    reply_errorf(c, "ERR wrong number of arguments for '%s' command", name);
}

int arg_ll(struct conn *c, int i, long long *v, const char *msg)
{
    if (util_str2ll(c->argv[i].p, c->argv[i].n, v))
        return 0;
    reply_error(c, msg ? msg : ERR_NOTINT);
    return -1;
}

void arg_cstr(struct conn *c, int i, char *out, size_t cap)
{
    size_t n = c->argv[i].n < cap - 1 ? c->argv[i].n : cap - 1;
    memcpy(out, c->argv[i].p, n);
    out[n] = '\0';
}

void reply_item_value(struct conn *c, struct item *it)
{
    if (it->bits & IT_REF) {
        reply_check(c, resp_add_bulk_hdr(&c->wbuf, item_vlen(it)));
        reply_item_ref(c, it);
        reply_lit(c, "\r\n");
        return;
    }
    reply_bulk(c, item_value(it), item_vlen(it));
}

static void unknown_command(struct conn *c)
{
    char msg[1024], args[512];
    size_t al = 0;

    /* Redis 7: arguments quoted, each cut so the list stays about 128 bytes */
    args[0] = '\0';
    for (int i = 1; i < c->argc && al < 128; i++) {
        int room = 128 - (int)al;
        int n = snprintf(args + al, sizeof(args) - al, "'%.*s' ",
                         (int)(c->argv[i].n < (size_t)room ? c->argv[i].n : (size_t)room), c->argv[i].p);
        al += (size_t)n;
    }
    snprintf(msg, sizeof(msg), "ERR unknown command '%.*s', with args beginning with: %s",
             (int)(c->argv[0].n > 128 ? 128 : c->argv[0].n), c->argv[0].p, args);
    reply_error(c, msg);
}

/* argv[1] names no subcommand of the container cmd: Redis's error. */
static void unknown_subcommand(struct conn *c, const struct cmd *cmd)
{
    char upper[40];
    size_t i;

    for (i = 0; cmd->name[i] && i < sizeof(upper) - 1; i++)
        upper[i] = (char)toupper((unsigned char)cmd->name[i]);
    upper[i] = '\0';
    reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.",
                 (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p, upper);
}

_Atomic int cmd_script_busy;

const char *cmd_busy_error(void)
{
    if (atomic_load_explicit(&cmd_script_busy, memory_order_relaxed) & (CMD_BUSY_FUNCTION - 1))
        return "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
               "NOSAVE.";
    return "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
           "NOSAVE.";
}

/* cmd_call, timing the command for the slowlog from *clk (a util_ticks reading taken at or
 * before its start, or -1: read here) and leaving the time it ended in *clk (-1 when it was
 * not timed), so consecutive commands of one input batch read the clock once each. */
/* MONITOR is on: keep the command's name (EXEC reuses argv for its commands) and feed the
 * lines that go out before the command runs (EVAL, FCALL). */
static __attribute__((noinline, cold)) void call_monitor_before(struct conn *c,
                                                                const struct cmd *cmd,
                                                                struct slice *argv0)
{
    *argv0 = c->argv[0];
    if (monitor_feeds_before(cmd))
        monitor_feed_slow(c, cmd);
}

/* After a command, when a monitor, client tracking or keyspace events need anything: the
 * MONITOR line, the keys a tracking client read, the events (no stripe is held now). */
static __attribute__((noinline)) void call_hooks_after(struct conn *c, const struct cmd *cmd,
                                                       int mon, const struct slice *argv0)
{
    if (mon && !monitor_feeds_before(cmd))
        monitor_feed_argv(c, cmd, c->argc ? c->argc : 1, c->argc ? c->argv : argv0);
    if (c->trk)
        tracking_after_command(c, cmd);
    notify_flush(c->w->idx);
}

/* The ACL check of a user not allowed everything: 1 after a NOPERM reply (and its log entry) */
static __attribute__((noinline, cold)) int acl_denied(struct conn *c, const struct cmd *cmd,
                                                      int pos)
{
    const struct cmd *top = cmd->parent ? cmd->parent : cmd;
    char msg[160];
    int r;

    r = acl_check_conn(c, cmd, c->argc, c->argv, NULL, &pos);
    if (r == ACL_OK)
        return 0;
    /* as Redis, the protected commands' own refusal comes first (the handler answers it) */
    if ((!strcmp(top->name, "debug") && !cmd_protected_allowed(c, cfg.enable_debug_command)) ||
        (!strcmp(top->name, "module") && strcmp(cmd->name, "module|list") &&
         strcmp(cmd->name, "module|help") && !cmd_protected_allowed(c, cfg.enable_module_command)))
        return 0;
    acl_log_denial(c, r, c->tx != NULL && tx_active(c) ? "multi" : "toplevel", cmd,
                   r == ACL_DENIED_CMD ? NULL : &c->argv[pos], c->user);
    acl_denied_text(r, cmd, msg, sizeof(msg));
    reply_errorf(c, "%s", msg);
    cmd_last_error = "NOPERM"; /* errorstats: every denial's text begins so (msg is gone) */
    return 1;
}

/* Under maxmemory, whether cmd is refused when memory cannot be made (Redis's rules): a
 * command that may use memory; inside MULTI anything queued (the queue itself grows) except
 * DISCARD, QUIT and RESET; EXEC when a queued command may use memory. */
static int oom_rejects(struct conn *c, const struct cmd *cmd, uint64_t eflags)
{
    if (TC_LIKELY(c->tx == NULL) || !tx_active(c) || !strcmp(cmd->name, "exec"))
        return (eflags & CMD_DENYOOM) != 0;
    return strcmp(cmd->name, "discard") && strcmp(cmd->name, "quit") && strcmp(cmd->name, "reset");
}

/* A command refused before it ran, with error text err (no "-"). */
static void reject(struct conn *c, const struct cmd *cmd, int exec_tx, const char *err)
{
    cmdstats_reject(cmd);
    if (exec_tx) {
        reply_errorf(c, "EXECABORT Transaction discarded because of: %s", err);
        tx_reset(c);
        return;
    }
    reply_error(c, err);
    tx_flag_error(c);
}

static inline __attribute__((always_inline)) void call_inner(struct conn *c, int64_t *clk);

/* maxmemory: evict before c's command runs; c's own invalidations of evicted keys it tracks
 * go into its output now, before the reply (as Redis). 1 when there is still no room. */
static int evict_before(struct conn *c)
{
    int r;

    /* as Redis's processCommand: clients over maxmemory-clients go before keys do (not
     * under held stripes: EXEC, scripts; list locks are not taken under them) */
    if (__atomic_load_n(&cfg.maxmemory_clients, __ATOMIC_RELAXED) && !store_held)
        cmd_evict_clients_now(c);
    tracking_now_conn = c;
    r = store_make_room(conn_store(c));
    tracking_now_conn = NULL;
    return r;
}

/* A command while CLIENT REPLY is OFF or SKIP: its output is dropped, except its pushes
 * (reply_push_begin/end) and CLIENT REPLY ON's +OK (the CLIENT REPLY OFF / SKIP that turned
 * replies off wrote nothing): as Redis, whose reply helpers test the flags as they write.
 * reply_mode 3: the one command SKIP covers is running. */
__thread struct conn *cmd_quiet_conn;
static __thread struct conn_mark quiet_mark;

void reply_push_keep(struct conn *c, int end)
{
    if (end)
        conn_output_mark(c, &quiet_mark); /* the push stays */
    else
        conn_output_rewind(c, &quiet_mark); /* what the command wrote before it goes */
}

static void call_quiet(struct conn *c, int64_t *clk)
{
    struct conn *outer = cmd_quiet_conn;
    struct conn_mark saved = quiet_mark;

    conn_output_mark(c, &quiet_mark);
    cmd_quiet_conn = c;
    if (c->reply_mode == 2)
        c->reply_mode = 3;
    call_inner(c, clk);
    if (c->reply_mode == 3) {
        c->reply_mode = 0; /* SKIP covered this command */
        conn_output_rewind(c, &quiet_mark);
    } else if (c->reply_mode != 0) {
        conn_output_rewind(c, &quiet_mark);
    }
    cmd_quiet_conn = outer;
    quiet_mark = saved;
}

static void call(struct conn *c, int64_t *clk)
{
    cmd_errors = 0;
    if (TC_LIKELY((c->reply_mode | c->no_touch) == 0)) {
        call_inner(c, clk);
    } else if (c->no_touch && c->reply_mode == 0) {
        /* CLIENT NO-TOUCH: this command's reads leave access times alone (TOUCH's do not) */
        store_no_touch = !util_eq_nocase(c->argv[0].p, c->argv[0].n, "touch");
        call_inner(c, clk);
        store_no_touch = 0;
    } else {
        store_no_touch = c->no_touch && !util_eq_nocase(c->argv[0].p, c->argv[0].n, "touch");
        call_quiet(c, clk);
        store_no_touch = 0;
    }
    if (TC_UNLIKELY(cmd_errors != 0))
        cmdstats_errors(cmd_last_error, cmd_errors); /* errorstats, total_error_replies */
}

static inline __attribute__((always_inline)) void call_inner(struct conn *c, int64_t *clk)
{
    const struct cmd *cmd;
    int64_t start = *clk;
    int acl_pos, exec_tx;
    uint64_t eflags;
    const char *why;

    *clk = -1; /* a command that returns early leaves no end time */

    /* pipelines repeat one command: skip the table lookup when the name bytes are the same */
    if (c->cache_cmd && c->argv[0].n == c->cache_len &&
        memcmp(c->argv[0].p, c->cache_name, c->cache_len) == 0) {
        cmd = c->cache_cmd;
    } else {
        cmd = cmd_lookup(c->argv[0].p, c->argv[0].n);
        if (cmd && c->argv[0].n <= sizeof(c->cache_name)) {
            memcpy(c->cache_name, c->argv[0].p, c->argv[0].n);
            c->cache_len = (uint8_t)c->argv[0].n;
            c->cache_cmd = cmd;
        }
    }

    if (TC_UNLIKELY(!cmd) && c->fd < 0)
        cmd = cmd_lookup_internal(c->argv[0].p, c->argv[0].n); /* the AOF loader */
    STAT_INC(c->w->st.commands);
    c->tot_cmds++;
    if (TC_UNLIKELY(!cmd)) {
        if (util_eq_nocase(c->argv[0].p, c->argv[0].n, "post") ||
            util_eq_nocase(c->argv[0].p, c->argv[0].n, "host:")) {
            log_warn("Possible SECURITY ATTACK detected. It looks like somebody is sending POST "
                     "or Host: commands to Redis. Connection from %s aborted.", c->addr);
            c->flags |= CONN_CLOSE_ASAP;
            return;
        }
        unknown_command(c);
        tx_flag_error(c);
        return;
    }
    if (TC_UNLIKELY(cmd->nsubs != 0) && c->argc >= 2) {
        const struct cmd *sub = cmd;
        cmd = NULL;
        for (int i = 0; i < sub->nsubs && !cmd; i++)
            if (util_eq_nocase(c->argv[1].p, c->argv[1].n, sub->subs[i].name + strlen(sub->name) + 1))
                cmd = &sub->subs[i];
        if (!cmd) {
            unknown_subcommand(c, sub);
            tx_flag_error(c);
            return;
        }
    }
    if (TC_UNLIKELY((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity)) {
        cmdstats_reject(cmd);
        reply_arity_error(c, cmd->name);
        tx_flag_error(c);
        return;
    }
    if (TC_UNLIKELY(!c->authed) && !(cmd->flags & CMD_NOAUTH)) {
        cmdstats_reject(cmd);
        reply_error(c, "NOAUTH Authentication required.");
        return;
    }
    if (TC_UNLIKELY(c->tx != NULL) && (cmd->flags & CMD_NO_MULTI) && tx_active(c)) {
        cmdstats_reject(cmd);
        reply_error(c, "ERR Command not allowed inside a transaction");
        tx_flag_error(c);
        return;
    }
    if (TC_UNLIKELY(c->user != NULL) &&
        TC_UNLIKELY(!atomic_load_explicit(&c->user->allperm, memory_order_relaxed)) &&
        (acl_pos = 0, acl_check_fast(c, cmd, &acl_pos)) != ACL_OK && acl_denied(c, cmd, acl_pos)) {
        cmdstats_reject(cmd);
        tx_flag_error(c);
        return;
    }
    if (TC_UNLIKELY(c->ps != NULL) && c->resp == 2 && pubsub_count(c) > 0 &&
        !(cmd->flags & CMD_SUBSCRIBED)) {
        cmdstats_reject(cmd);
        reply_errorf(c, "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                        "PING / QUIT / RESET are allowed in this context", cmd->name);
        return;
    }
    if (TC_UNLIKELY(atomic_load_explicit(&persist_loading, memory_order_relaxed) != 0) &&
        !(cmd->flags & CMD_LOADING) && c->fd >= 0 && !aof_replaying) {
        /* DEBUG LOADAOF / RELOAD or a full sync's load runs (before BUSY, as Redis) */
        cmdstats_reject(cmd);
        reply_error(c, "LOADING Redis is loading the dataset in memory");
        tx_flag_error(c);
        return;
    }
    if (TC_UNLIKELY(atomic_load_explicit(&cmd_script_busy, memory_order_relaxed) != 0) &&
        !(cmd->flags & CMD_ALLOW_BUSY)) {
        cmdstats_reject(cmd);
        if (c->tx != NULL && tx_active(c) && !strcmp(cmd->name, "exec")) {
            /* as Redis's rejectCommand: EXEC answers why and the transaction is gone */
            reply_errorf(c, "EXECABORT Transaction discarded because of: %s", cmd_busy_error());
            tx_reset(c);
            return;
        }
        reply_error(c, cmd_busy_error());
        tx_flag_error(c);
        return;
    }
    /* EXEC is checked with its queued commands' flags; refused, it answers EXECABORT and
     * the transaction is gone (Redis's rejectCommand). As Redis, every command evicts when
     * over the limit; only those it rejects are refused. */
    exec_tx = TC_UNLIKELY(c->tx != NULL) && tx_active(c) && !strcmp(cmd->name, "exec");
    eflags = exec_tx ? tx_exec_flags(c, cmd->flags) : cmd->flags;
    if (TC_UNLIKELY(cfg.maxmemory > 0) && evict_before(c) && oom_rejects(c, cmd, eflags)) {
        reject(c, cmd, exec_tx, ERR_OOM);
        return;
    }
    tracking_limit(c); /* as Redis's trackingLimitUsedSlots there */
    if (TC_UNLIKELY(atomic_load_explicit(&repl_gate, memory_order_relaxed)) &&
        (why = repl_refuse_why(c, exec_tx ? eflags : cmd_flags_of(c, cmd))) != NULL) {
        /* (a script's call: with its script's flags, as Redis's getCommandFlags) */
        reject(c, cmd, exec_tx, why);
        return;
    }
    if (TC_UNLIKELY(atomic_load_explicit(&persist_misconf, memory_order_relaxed)) &&
        (eflags & CMD_WRITE)) {
        reject(c, cmd, exec_tx, ERR_MISCONF);
        return;
    }
    __atomic_store_n(&c->lastcmd, cmd->name, __ATOMIC_RELAXED);
    if (TC_UNLIKELY(atomic_load_explicit(&cmd_pause_end, memory_order_relaxed) != 0) &&
        !c->blk && c->fd >= 0) {
        /* as Redis, before a transaction queues it: a held write waits to be queued too */
        int64_t until = cmd_pause_until(c, cmd);
        if (until) {
            block_postpone(c, cmd, until); /* CLIENT PAUSE: it runs when the pause ends */
            return;
        }
    }
    if (TC_UNLIKELY(c->tx != NULL) && tx_maybe_queue(c, cmd))
        return;
    cmd_mods = 0;
    cmd_errors = 0;
    cmd_dirty_counted = 0;
    cmd_current = cmd;
    tracking_writer = c->id;
    /* MONITOR's state is read once: a monitor attaching meanwhile sees the next command */
    int mon = atomic_load_explicit(&monitor_count, memory_order_relaxed) != 0;
    struct slice argv0;
    if (TC_UNLIKELY(mon))
        call_monitor_before(c, cmd, &argv0);
    if (cfg.slowlog_log_slower_than < 0 && !cfg.latency_tracking &&
        !cfg.latency_monitor_threshold) {
        cmd_exec(c, cmd);
        cmdstats_call(cmd, -1, cmd_errors != 0);
    } else {
        int64_t took;
        if (start < 0)
            start = util_ticks();
        cmd_exec(c, cmd);
        *clk = util_ticks();
        took = util_ticks_us(*clk - start);
        cmdstats_call(cmd, took, cmd_errors != 0);
        if (TC_UNLIKELY(c->blk != NULL) && block_defer_slowlog(c, took))
            ; /* logged when it is unblocked, as Redis does */
        else if (TC_UNLIKELY(took >= cfg.slowlog_log_slower_than) &&
                 cfg.slowlog_log_slower_than >= 0 && !(cmd->flags & CMD_SKIP_SLOWLOG))
            slowlog_push(c, took);
        if (TC_UNLIKELY(cfg.latency_monitor_threshold > 0))
            latency_sample(cmd->flags & CMD_FAST ? "fast-command" : "command", took / 1000);
    }
    if ((cmd->flags & (CMD_WRITE | CMD_SIGNALS)) == CMD_WRITE)
        cmd_after_write(c, cmd); /* the others reported their keys (cmd_modified) */
    if (TC_UNLIKELY(mon | (c->trk != NULL) | (notify_pending != 0)))
        call_hooks_after(c, cmd, mon, &argv0);
}

void cmd_call(struct conn *c)
{
    int64_t clk = -1;

    call(c, &clk);
}

void cmd_call_clk(struct conn *c, int64_t *clk)
{
    call(c, clk);
}

void cmd_resp_open(struct conn *c)
{
    c->resp = 2;
    c->authed = acl_default_nopass();
    if (c->fd >= 0)
        acl_conn_set_user(c, acl_default_user());
    c->rp.max_bulk = cfg.proto_max_bulk_len;
    c->rp.unauth = !c->authed;
    resp_parser_reset(&c->rp);
    c->flags |= CONN_OUT_LIMIT | CONN_PAUSE_AT_LIMIT; /* pubsub.c clears the first meanwhile */
    if (c->fd >= 0)
        c->flags |= CONN_MEM_COUNTED; /* replication clears it for a replica */
}

size_t cmd_resp_mem(const struct conn *c)
{
    size_t m = 0;
    if (c->tx)
        m += tx_mem(c);
    if (c->ps)
        m += pubsub_mem(c);
    if (c->trk)
        m += tracking_mem(c);
    return m;
}

size_t cmd_resp_read_hint(struct conn *c)
{
    return c->rp.bulklen >= 0 ? resp_want(&c->rp) : 0;
}

int cmd_resp_may_time_out(struct conn *c)
{
    return !c->ps && !c->blk;
}

void cmd_resp_close(struct conn *c)
{
    tx_reset(c);
    tracking_close(c);
    monitor_close(c);
    pubsub_reset(c);
    block_reset(c);
    repl_conn_closed(c);
    free(c->argv);
    c->argv = NULL;
    resp_parser_deinit(&c->rp);
    if (c->user) {
        struct acl_user *u = c->user;
        pthread_mutex_lock(&c->w->list_lock); /* CLIENT LIST elsewhere reads its name */
        c->user = NULL;
        pthread_mutex_unlock(&c->w->list_lock);
        acl_user_unref(u);
    }
}

/* Commands of a pipeline parsed ahead of execution, so the keys of all of them are
 * prefetched before the first runs (the lookups otherwise wait on memory one by one). Lives
 * on the stack of one cmd_resp_input call; arguments are offsets from each frame's start. */
#define AHEAD_FRAMES 16
#define AHEAD_ARGS 64

struct ahead {
    struct resp_arg arg[AHEAD_ARGS];
    struct {
        size_t used; /* frame size */
        int argc;
        int first; /* index of its first argument in arg */
        uint64_t th; /* a tracking client's read: its key's place in the tracking table */
    } f[AHEAD_FRAMES];
    int n, next; /* frames parsed, next to run */
    uint64_t th0; /* th of the frame look_ahead was called for */
};

/* Add the first key of the command in frame p (args) to keys, when it has one. */
static void ahead_key(struct conn *c, const char *p, const struct resp_arg *a, int argc,
                      struct skey *keys, int *nk, uint64_t *th)
{
    const struct cmd *cmd = c->cache_cmd;

    *th = 0;
    if (argc < 2)
        return;
    if (!cmd || a[0].len != c->cache_len || memcmp(p + a[0].off, c->cache_name, a[0].len))
        cmd = cmd_lookup(p + a[0].off, a[0].len);
    if (!cmd || cmd->first < 1 || cmd->first >= argc || (cmd->flags & CMD_MOVABLE))
        return;
    store_key(conn_store(c), &keys[(*nk)++], c->db, p + a[cmd->first].off, a[cmd->first].len);
    if (TC_UNLIKELY(c->trk != NULL) && (cmd->flags & (CMD_READONLY | CMD_ONE_KEY)) ==
                                           (CMD_READONLY | CMD_ONE_KEY))
        *th = tracking_prefetch(c, p + a[cmd->first].off, a[cmd->first].len);
}

/* After the frame at p0 (argc0 arguments a0, used0 bytes) was parsed: parse the complete
 * frames that follow it in the input into ah and prefetch the keys of all of them. */
static void look_ahead(struct conn *c, struct ahead *ah, const char *p0, size_t used0,
                       const struct resp_arg *a0, int argc0)
{
    struct skey keys[AHEAD_FRAMES + 1];
    const char *p = p0 + used0;
    size_t n = buf_len(&c->rbuf) - used0;
    int nk = 0, na = 0;

    ah->n = ah->next = 0;
    ah->th0 = 0;
    if (n == 0)
        return;
    ahead_key(c, p0, a0, argc0, keys, &nk, &ah->th0);
    while (ah->n < AHEAD_FRAMES) {
        size_t used;
        int m = resp_parse_ahead(&c->rp, p, n, ah->arg + na, AHEAD_ARGS - na, &used);
        if (m <= 0)
            break;
        ah->f[ah->n].used = used;
        ah->f[ah->n].argc = m;
        ah->f[ah->n].first = na;
        ahead_key(c, p, ah->arg + na, m, keys, &nk, &ah->f[ah->n].th);
        ah->n++;
        na += m;
        p += used;
        n -= used;
    }
    if (nk > 1)
        store_prefetch(conn_store(c), keys, nk);
}

void cmd_resp_input(struct conn *c)
{
    /* The end of one command is the start of the next: one clock read per command. The
     * parsing in between is charged to the next command (well under a microsecond). */
    int64_t clk = -1;
    struct ahead ah;

    ah.n = ah.next = 0;
    if (TC_UNLIKELY(!block_scope) && c->fd >= 0)
        block_scope_enter(c->w);
    while (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP)) && !c->blk) {
        char *base = c->rbuf.data + c->rbuf.rpos;
        const struct resp_arg *args;
        size_t used = 0;
        int r, argc, fast;

        if (conn_pending(c) > conn_pause_bytes(c)) {
            c->flags |= CONN_PAUSED_READ; /* after_io resumes once the output drains */
            break;
        }
        /* frames parsed ahead were parsed as an authenticated client's: a command of the
         * batch that ended the authentication (RESET, AUTH) sends the rest to resp_parse */
        if (ah.next < ah.n && !c->rp.unauth) {
            fast = 1; /* resp_parse_ahead reads frames as parse_fast */
            args = ah.arg + ah.f[ah.next].first;
            argc = ah.f[ah.next].argc;
            used = ah.f[ah.next].used;
            c->trk_hash = ah.f[ah.next].th;
            ah.next++;
        } else {
            r = resp_parse(&c->rp, base, buf_len(&c->rbuf), &used);
            if (r == RESP_NEED_MORE)
                break;
            if (r < 0) {
                char tmp[128];
                reply_error(c, resp_strerror(r, c->rp.bad, tmp, sizeof(tmp)));
                log_verbose("Protocol error (%s) from client: id=%llu addr=%s",
                            resp_strerror(r, c->rp.bad, tmp, sizeof(tmp)),
                            (unsigned long long)c->id, c->addr);
                c->flags |= CONN_CLOSE_AFTER_REPLY;
                c->rbuf.rpos = c->rbuf.wpos;
                resp_parser_reset(&c->rp);
                break;
            }
            fast = c->rp.fast;
            args = c->rp.argv;
            argc = (int)c->rp.argc;
            c->rp.argc = 0;
            c->trk_hash = 0;
            if (argc > 0 && !c->rp.unauth) {
                look_ahead(c, &ah, base, used, args, argc);
                c->trk_hash = ah.th0;
                if (ah.n && clk >= 0)
                    clk = -1; /* the prefetch is not the next command's time */
            }
        }
        if (argc > c->argv_cap) {
            int cap = c->argv_cap ? c->argv_cap : 16;
            while (cap < argc)
                cap *= 2;
            struct slice *a = realloc(c->argv, (size_t)cap * sizeof(*a));
            if (!a) {
                c->flags |= CONN_CLOSE_ASAP;
                break;
            }
            c->argv = a;
            c->argv_cap = cap;
        }
        c->argc = argc;
        for (int i = 0; i < argc; i++) {
            c->argv[i].p = base + args[i].off;
            c->argv[i].n = args[i].len;
        }
        c->rbuf.rpos += used;
        if (argc == 0)
            continue;
        c->frame = fast ? base : NULL; /* propagation copies a fast-parsed frame as it came */
        c->frame_n = used;
        call(c, &clk);
        c->frame = NULL;
        c->argc = 0;
        if (TC_UNLIKELY(c->argv_cap > 1024)) {
            /* as Redis frees a command's argv: the argument arrays of a huge command (16
             * bytes an argument, twice) do not stay with the connection */
            free(c->argv);
            c->argv = NULL;
            c->argv_cap = 0;
            resp_parser_deinit(&c->rp);
        }
        if (TC_UNLIKELY(block_settle_due()))
            block_settle(c->w); /* the clients it unblocked are served before what follows */
        if (TC_UNLIKELY(c->rp.unauth) && conn_pending(c) > 1024) {
            /* as Redis: a client that has not authenticated gets 1 KiB of unread replies */
            log_warn("Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of "
                     "output buffer limits.", (unsigned long long)c->id, c->addr);
            c->flags |= CONN_CLOSE_ASAP;
        }
    }
    if (c->rbuf.rpos == c->rbuf.wpos)
        c->rbuf.rpos = c->rbuf.wpos = 0;
}

int reply_unbounded_stop_slow(struct conn *c)
{
    long long lim = cfg.cobl[0][0] > 0 ? cfg.cobl[0][0] : 1LL << 30;

    if (c->flags & CONN_CLOSE_ASAP)
        return 1;
    if ((long long)buf_len(&c->wbuf) <= lim)
        return 0;
    log_warn("Client id=%llu addr=%s closed: its reply passed %lld bytes (a random-members "
             "command with a huge negative count)", (unsigned long long)c->id, c->addr, lim);
    c->flags |= CONN_CLOSE_ASAP;
    return 1;
}
