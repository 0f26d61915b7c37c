/* EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP.
 *
 * Locking. A script holds stripes of the store so that no client on any worker sees it half
 * done. Redis lets a script touch keys it did not declare in KEYS (BullMQ's do), so holding
 * only the declared keys' stripes is not enough in general, while holding every stripe (1024
 * by default) stops every other worker and costs a thousand lock pairs per run. So each worker
 * thread learns, per script:
 *  - Its first run holds every stripe (store_hold_set with a full bitmap, like EXEC) and notes
 *    whether a command touched a stripe of no declared key, or ran a command that reaches the
 *    keyspace beyond its key arguments (KEYS, SCAN, FLUSHDB, SORT ... BY/GET, ...).
 *  - If it did not, later runs hold only the declared keys' stripes ("declared-only"), so
 *    scripts on different keys run on both workers at once. When such a run touches another
 *    stripe all the same (a branch not taken before), it takes it then, with a trylock. If the
 *    stripe is busy and the script has neither written nor published yet, the run gives up
 *    and starts over holding every stripe: nothing it did was visible. If it has written, it
 *    waits for the stripe. That cannot deadlock against commands or transactions, because no
 *    other thread waits for a stripe while it holds one (store.c lock_bitmap backs off); only
 *    another script in this same situation does, so one script at a time may wait that way
 *    (escalate_lock, taken with a trylock) and a second fails with an error, like a runtime
 *    error in Redis: what it wrote stays.
 *  - A script that touched an undeclared stripe once runs holding every stripe from then on
 *    (per thread, until SCRIPT FLUSH).
 * Inside EXEC (EVAL queued in MULTI) the transaction already holds every stripe: EVAL's entry
 * carries tc:allstripes, which makes EXEC hold them all.
 *
 * Effects: with the AOF on, the writes the script performs are logged as the commands they
 * are, wrapped in one MULTI ... EXEC (aof_tx_begin/aof_tx_end; a single command is
 * logged alone, as Redis 7.0); a run that starts over wrote nothing. */
#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/blocking.h"
#include "cmd/cmd.h"
#include "cmd/propagate.h"
#include "cmd/repl.h"
#include "core/config.h"
#include "persist/persist.h"
#include "script/script.h"
#include "script/script_func.h"
#include "script/script_func.h"
#include "script/script_int.h"

#define ERR_NOSCRIPT "NOSCRIPT No matching script. Please use EVAL."

/* This thread's bitmaps for scripts: every stripe, the stripes a run holds, the stripes of
 * its declared keys (one allocation, freed when the thread ends). */
static __thread uint64_t *bitmaps;
static pthread_key_t bitmap_key;
static pthread_once_t bitmap_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t escalate_lock = PTHREAD_MUTEX_INITIALIZER;

static void make_bitmap_key(void)
{
    pthread_key_create(&bitmap_key, free);
}

static uint32_t bitmap_words(struct store *s)
{
    return (s->nstripes + 63) / 64;
}

static uint64_t *full_bitmap(struct store *s)
{
    uint32_t words = bitmap_words(s);

    if (!bitmaps) {
        bitmaps = calloc(3 * (size_t)words, 8);
        if (!bitmaps)
            return NULL;
        memset(bitmaps, 0xff, words * 8);
        if (s->nstripes % 64)
            bitmaps[words - 1] = (1ULL << (s->nstripes % 64)) - 1;
        pthread_once(&bitmap_once, make_bitmap_key);
        pthread_setspecific(bitmap_key, bitmaps);
    }
    return bitmaps;
}

static inline int bit_is_set(const uint64_t *bm, uint32_t i)
{
    return (bm[i >> 6] >> (i & 63)) & 1;
}

static inline void bit_set(uint64_t *bm, uint32_t i)
{
    bm[i >> 6] |= 1ULL << (i & 63);
}

/* 1 when this thread holds every stripe (EXEC of a transaction with a script in it). */
static int holds_all(struct store *s)
{
    for (uint32_t i = 0; i < s->nstripes; i++)
        if (!store_is_held(i))
            return 0;
    return 1;
}

static void lower_sha(char out[41], const char *p)
{
    for (int i = 0; i < 40; i++)
        out[i] = p[i] >= 'A' && p[i] <= 'Z' ? (char)(p[i] - 'A' + 'a') : p[i];
    out[40] = '\0';
}

/* The script of argv[arg] (its body, or its sha when by_sha) compiled in this thread's state:
 * its flags with its sha in sha, or -1 with the error replied. */
static int find_script(struct conn *c, int arg, int by_sha, char sha[41])
{
    const struct slice *a = &c->argv[arg];
    int flags;

    if (!script_lua_state()) {
        reply_error(c, "ERR out of memory");
        return -1;
    }
    if (by_sha) {
        char *body;
        size_t n;
        if (a->n != 40) {
            reply_error(c, ERR_NOSCRIPT);
            return -1;
        }
        lower_sha(sha, a->p);
        if ((flags = script_lua_flags(sha)) >= 0)
            return flags;
        body = script_cache_get(sha, 40, &n);
        if (!body) {
            reply_error(c, ERR_NOSCRIPT);
            return -1;
        }
        flags = script_lua_load(c, sha, body, n);
        free(body);
        return flags;
    }
    script_sha1hex(sha, a->p, a->n);
    if ((flags = script_lua_flags(sha)) >= 0 && script_cache_has(sha, 40))
        return flags;
    flags = script_lua_load(c, sha, a->p, a->n);
    if (flags < 0)
        return -1;
    if (script_cache_add(a->p, a->n, sha)) {
        reply_error(c, "ERR out of memory");
        return -1;
    }
    return flags;
}

static void eval_run(struct conn *c, int by_sha, int ro, int debug)
{
    struct script_run run = {0};
    long long nkeys;
    char sha[41];
    int flags;

    if (arg_ll(c, 2, &nkeys, NULL))
        return;
    if (nkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (nkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    if ((flags = find_script(c, 1, by_sha, sha)) < 0)
        return;
    run.caller = c;
    run.sha = sha;
    run.readonly = ro || (flags & SCRIPT_FLAG_NO_WRITES);
    run.allow_oom = (flags & SCRIPT_FLAG_ALLOW_OOM) != 0;
    run.repl = SCRIPT_REPL_AOF | SCRIPT_REPL_REPLICA;
    if (flags & SCRIPT_FLAG_SHEBANG) {
        if (ro && !(flags & SCRIPT_FLAG_NO_WRITES)) {
            reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
            return;
        }
    }
    run.flags = flags;
    run.debug = debug;
    script_exec(c, &run, (int)nkeys);
}

/* EVAL after SCRIPT DEBUG YES|SYNC: the run in a debugging session (script_ldb.c), in a forked
 * child for YES (the parent closes its copy of the connection at once, as Redis does), on this
 * worker for SYNC; either way the connection closes after EVAL's reply. */
static void eval_debug(struct conn *c, int ro)
{
    int forked = c->ldb == LDB_YES;

    c->ldb = LDB_OFF;
    if (forked) {
        int r = ldb_fork(c);
        if (r <= 0) {
            if (r == 0)
                c->flags |= CONN_CLOSE_ASAP;
            return;
        }
    }
    ldb_session_start(c, forked);
    eval_run(c, 0, ro, 1);
    ldb_session_end(c); /* a forked child exits there */
    c->flags |= CONN_CLOSE_AFTER_REPLY;
}

static void eval_generic(struct conn *c, int by_sha, int ro)
{
    if (by_sha && c->argv[1].n != 40) {
        reply_error(c, ERR_NOSCRIPT); /* as Redis: before numkeys is looked at */
        return;
    }
    if (TC_UNLIKELY(c->ldb != LDB_OFF) && store_held == NULL) {
        /* (inside EXEC a script runs undebugged) */
        if (by_sha)
            reply_error(c, "ERR Please use EVAL instead of EVALSHA for debugging");
        else
            eval_debug(c, ro);
        return;
    }
    eval_run(c, by_sha, ro, 0);
}

/* ---- keys a running script touches (see Locking) ---- */

#define KC_MAX 64

struct key_collect {
    struct store *s;
    const struct slice *argv;
    uint32_t stripe[KC_MAX];
    int n, overflow;
};

static int collect_key(void *arg, int pos, unsigned flags)
{
    struct key_collect *kc = arg;
    const struct slice *k = &kc->argv[pos];

    (void)flags;
    if (kc->n == KC_MAX) {
        kc->overflow = 1;
        return 0;
    }
    kc->stripe[kc->n++] = (uint32_t)util_hash(k->p, k->n) & kc->s->mask;
    return 0;
}

/* 1 when cmd may reach keys its key specs do not name: every stripe is needed. */
static int reaches_beyond_keys(const struct cmd *cmd)
{
    static _Atomic uint32_t wide; /* ACL bits of @keyspace and @dangerous, found once */
    uint32_t bits = atomic_load_explicit(&wide, memory_order_relaxed);

    if (!bits) {
        for (int i = 0; i < acl_category_count() && i < 32; i++)
            if (!strcmp(acl_category_name(i), "keyspace") ||
                !strcmp(acl_category_name(i), "dangerous"))
                bits |= 1u << i;
        atomic_store_explicit(&wide, bits | 0x80000000u, memory_order_relaxed);
    }
    if (cmd->flags & CMD_ALL_STRIPES)
        return 1;
    if (cmd->getkeys == cmd_getkeys_sort || cmd->getkeys == cmd_getkeys_sort_ro)
        return 1; /* BY and GET patterns read other keys */
    return !cmd_has_keys(cmd) && (cmd->acl & bits & 0x7fffffffu) != 0;
}

/* Take stripe i now, or note it as pending. */
static int take(struct store *s, struct script_run *run, uint32_t i)
{
    if (bit_is_set(run->held, i))
        return 0;
    run->undeclared = 1;
    if (store_trylock(s, i))
        return 1;
    bit_set(run->held, i);
    return 0;
}

int script_keys_check(struct script_run *run, const struct cmd *cmd, int argc,
                      const struct slice *argv)
{
    struct store *s = conn_store(run->caller);
    struct key_collect kc = {.s = s, .argv = argv};
    int all = reaches_beyond_keys(cmd), pending = 0;

    if (!all && (cmd_keys(cmd, argc, argv, collect_key, &kc) < 0 || kc.overflow))
        all = 1;
    if (!run->declared_only) {
        /* the learning run holds every stripe: only note what it touched */
        if (all)
            run->undeclared = 1;
        for (int i = 0; i < kc.n && !all; i++)
            if (!bit_is_set(run->declared, kc.stripe[i]))
                run->undeclared = 1;
        return 0;
    }
    if (all) {
        for (uint32_t i = 0; i < s->nstripes; i++)
            pending += take(s, run, i);
    } else {
        for (int i = 0; i < kc.n; i++)
            pending += take(s, run, kc.stripe[i]);
    }
    if (!pending)
        return 0;
    if (!run->effects)
        return SCRIPT_KEYS_RESTART;
    if (pthread_mutex_trylock(&escalate_lock))
        return SCRIPT_KEYS_CONFLICT;
    while (pending) {
        sched_yield();
        pending = 0;
        if (all) {
            for (uint32_t i = 0; i < s->nstripes; i++)
                if (!bit_is_set(run->held, i))
                    pending += take(s, run, i);
        } else {
            for (int i = 0; i < kc.n; i++)
                pending += take(s, run, kc.stripe[i]);
        }
    }
    pthread_mutex_unlock(&escalate_lock);
    return 0;
}

/* Run run (set up by EVAL or FCALL: run->flags the script's or function's flags) with nkeys
 * keys: the OOM check, the stripes held (see Locking), the time limit, the writes logged as one
 * MULTI ... EXEC. */
void script_exec(struct conn *c, struct script_run *run, int nkeys)
{
    struct store *s = conn_store(c);
    uint64_t *full, *declared;
    uint32_t words = bitmap_words(s);
    int nested = store_held != NULL, logged, learned, declared_only, learn;

    run->is_function = run->fname != NULL; /* FUNCTION KILL stops it, SCRIPT KILL does not */

    /* as Redis: whether used memory is over maxmemory is decided once, before the script
     * (evicting now, with no stripe held by this thread) */
    if (cfg.maxmemory > 0 && !nested)
        run->oom = store_make_room(s) != 0;
    if ((run->flags & SCRIPT_FLAG_SHEBANG) && !(run->flags & SCRIPT_FLAG_NO_WRITES) &&
        !run->allow_oom && run->oom) {
        reply_error(c, ERR_OOM); /* as Redis 7.0: EVAL of a writing script is a denyoom command */
        return;
    }
    if ((run->flags & SCRIPT_FLAG_SHEBANG) && !(run->flags & SCRIPT_FLAG_NO_WRITES) &&
        atomic_load_explicit(&persist_misconf, memory_order_relaxed)) {
        reply_error(c, ERR_MISCONF); /* as Redis 7.0: the EVAL of a writing script is a write */
        return;
    }
    if ((run->flags & SCRIPT_FLAG_SHEBANG) && !(run->flags & SCRIPT_FLAG_NO_WRITES) &&
        !repl_good_replicas_ok()) {
        reply_error(c, REPL_NOREPLICAS_TEXT); /* min-replicas-to-write, as Redis 7.0 */
        return;
    }
    if (!(run->flags & SCRIPT_FLAG_SHEBANG) && c->fd >= 0 &&
        TC_UNLIKELY(atomic_load_explicit(&repl_is_replica, memory_order_relaxed)) &&
        !repl_link_up() && !cfg.replica_serve_stale_data) {
        /* as Redis 7.0's scriptPrepareForRun: EVAL is a stale command, a script without a
         * shebang is not run on a stale replica */
        reply_error(c, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set "
                       "to 'no'.");
        return;
    }
    if (run->debug) {
        /* a debugged run holds every stripe for the whole session (in a forked child nobody
         * else wants them); its time limit is the debugger's (script_ldb.c) */
        logged = prop_active();
        if (logged)
            aof_tx_begin(c);
        block_defer_begin();
        store_hold_set(s, s->all);
        run->start_ms = util_mono_us() / 1000;
        script_lua_run(c, run, nkeys);
        store_release_set(s, s->all);
        if (logged)
            aof_tx_end(c);
        block_defer_end();
        return;
    }
    if (nested) {
        if (!holds_all(s)) {
            /* never: a transaction with a script holds every stripe (tc:allstripes) */
            reply_error(c, "ERR scripts can not run here");
            return;
        }
        script_busy_enter(run);
        script_lua_run(c, run, nkeys);
        script_busy_leave(run);
        return;
    }
    if (!(full = full_bitmap(s))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    declared = full + 2 * words;
    memset(declared, 0, words * 8);
    for (int i = 0; i < nkeys; i++) {
        const struct slice *k = &c->argv[3 + i];
        bit_set(declared, (uint32_t)util_hash(k->p, k->n) & s->mask);
    }
    learned = (run->flags & SCRIPT_FLAG_LEARNED) != 0;
    learn = !run->is_function; /* functions keep no learned bits yet: every stripe */
    declared_only = learn && learned && !(run->flags & SCRIPT_FLAG_UNDECLARED);
    run->declared = declared;
    logged = prop_active();
    if (logged)
        aof_tx_begin(c); /* the script's writes: one MULTI ... EXEC block */
    block_defer_begin(); /* the clients it unblocks retry after it, as Redis serves them */
    for (;;) {
        run->restart = run->stop = run->effects = run->undeclared = run->wrote = 0;
        run->declared_only = declared_only;
        run->track = learn && (declared_only || !learned);
        if (declared_only) {
            run->held = full + words;
            memcpy(run->held, declared, words * 8);
        } else {
            run->held = full;
        }
        store_hold_set(s, run->held);
        script_busy_enter(run);
        script_lua_run(c, run, nkeys);
        script_busy_leave(run);
        store_release_set(s, run->held);
        if (!run->restart)
            break;
        declared_only = 0; /* it touched an undeclared stripe: hold them all */
        learned = 1;
        run->flags |= SCRIPT_FLAG_UNDECLARED;
    }
    if (logged)
        aof_tx_end(c);
    block_defer_end();
    if (learn) {
        int f = run->flags | SCRIPT_FLAG_LEARNED | (run->undeclared ? SCRIPT_FLAG_UNDECLARED : 0);
        if (f != run->flags)
            script_lua_set_flags(run->sha, f);
    }
}

static void script_kill_command(struct conn *c)
{
    script_kill_generic(c, 1);
}

static void eval_command(struct conn *c)
{
    eval_generic(c, 0, 0);
}

static void evalsha_command(struct conn *c)
{
    eval_generic(c, 1, 0);
}

static void eval_ro_command(struct conn *c)
{
    eval_generic(c, 0, 1);
}

static void evalsha_ro_command(struct conn *c)
{
    eval_generic(c, 1, 1);
}

static void script_load_command(struct conn *c)
{
    char sha[41];

    if (find_script(c, 2, 0, sha) < 0)
        return;
    reply_bulk(c, sha, 40);
}

static void script_exists_command(struct conn *c)
{
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++)
        reply_int(c, script_cache_has(c->argv[i].p, c->argv[i].n));
}

static void script_debug_command(struct conn *c)
{
    if (conn_pending(c) > 0) {
        /* as Redis: the session writes to the socket itself, after replies not sent yet */
        reply_error(c, "ERR SCRIPT DEBUG must be called outside a pipeline");
        return;
    }
    if (arg_is(c, 2, "no")) {
        c->ldb = LDB_OFF;
    } else if (arg_is(c, 2, "yes")) {
        c->ldb = LDB_YES;
    } else if (arg_is(c, 2, "sync")) {
        c->ldb = LDB_SYNC;
    } else {
        reply_error(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
        return;
    }
    reply_ok(c);
}

static void script_flush_command(struct conn *c)
{
    if (c->argc > 3 || (c->argc == 3 && !arg_is(c, 2, "sync") && !arg_is(c, 2, "async"))) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    /* the bodies are freed now either way; each worker drops its Lua state before its next
     * script */
    script_cache_flush();
    reply_ok(c);
}

static void script_help_command(struct conn *c)
{
    static const char *help[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    reply_help(c, help);
}

static void script_command(struct conn *c)
{
    /* reached only when argv[1] names no subcommand (cmd_call resolves the others) */
    reply_arity_error(c, "script");
}

static struct cmd script_subs[] = {
    {"script|load", script_load_command, 3, "noscript stale", "@scripting", NULL, "scripting", "Load the specified Lua script into the script cache."},
    {"script|debug", script_debug_command, 3, "noscript", "@scripting", NULL, "scripting", "Set the debug mode for executed scripts."},
    {"script|exists", script_exists_command, -3, "noscript", "@scripting", NULL, "scripting", "Check existence of scripts in the script cache."},
    {"script|flush", script_flush_command, -2, "noscript", "@scripting", NULL, "scripting", "Remove all the scripts from the script cache."},
    {"script|kill", script_kill_command, 2, "noscript allow_busy", "@scripting", NULL, "scripting", "Kill the script currently in execution."},
    {"script|help", script_help_command, 2, "loading stale", "@scripting", NULL, "scripting", "Show helpful text about the different subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"eval", eval_command, -3, "noscript may_replicate stale skip_monitor no_mandatory_keys tc:allstripes", "@scripting", "RW,access,update index:2 keynum:0,1,1", "scripting", "Execute a Lua script server side"},
    {"evalsha", evalsha_command, -3, "noscript may_replicate stale skip_monitor no_mandatory_keys tc:allstripes", "@scripting", "RW,access,update index:2 keynum:0,1,1", "scripting", "Execute a Lua script server side"},
    {"eval_ro", eval_ro_command, -3, "readonly noscript stale skip_monitor no_mandatory_keys tc:allstripes", "@scripting", "RO,access index:2 keynum:0,1,1", "scripting", "Execute a read-only Lua script server side"},
    {"evalsha_ro", evalsha_ro_command, -3, "readonly noscript stale skip_monitor no_mandatory_keys tc:allstripes", "@scripting", "RO,access index:2 keynum:0,1,1", "scripting", "Execute a read-only Lua script server side"},
    {"script", script_command, -2, "", "", NULL, "scripting", "A container for Lua scripts management commands", script_subs},
};

static void human(char *out, size_t cap, double v)
{
    const char *u = "BKMGT";
    int i = 0;
    while (v >= 1024 && i < 4)
        v /= 1024, i++;
    if (i == 0)
        snprintf(out, cap, "%.0fB", v);
    else
        snprintf(out, cap, "%.2f%c", v, u[i]);
}

/* INFO memory: Redis 7.0's scripting fields */
static void info_memory(struct buf *b)
{
    char line[640], h1[32], h2[32];
    size_t lua = script_lua_memory(), bytes, fbytes;
    long n, nlibs, nfns;
    int k;

    script_cache_stats(&n, &bytes);
    func_counts(&nlibs, &nfns, &fbytes);
    human(h1, sizeof(h1), (double)lua);
    human(h2, sizeof(h2), (double)bytes);
    k = snprintf(line, sizeof(line),
                 "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_lua_human:%s\r\n"
                 "used_memory_scripts_eval:%zu\r\nnumber_of_cached_scripts:%ld\r\n"
                 "number_of_functions:%ld\r\nnumber_of_libraries:%ld\r\n"
                 "used_memory_vm_functions:%zu\r\nused_memory_vm_total:%zu\r\n"
                 "used_memory_functions:%zu\r\n"
                 "used_memory_scripts:%zu\r\nused_memory_scripts_human:%s\r\n",
                 lua, lua, h1, bytes, n, nfns, nlibs, (size_t)0, lua, fbytes, bytes + fbytes,
                 h2);
    buf_append(b, line, (size_t)k);
}

/* The flags of a shebang line as a command's flags are computed before it runs (Redis's
 * evalExtractShebangFlags): no shebang, 0; an invalid one is the run's to answer. */
static int shebang_flags_quiet(const char *p, size_t n)
{
    const char *nl, *end;
    int f = SCRIPT_FLAG_SHEBANG;

    if (n < 2 || p[0] != '#' || p[1] != '!')
        return 0;
    nl = memchr(p, '\n', n);
    end = nl ? nl : p + n;
    for (const char *w = p; w + 6 <= end; w++) {
        if ((w != p && w[-1] != ' ' && w[-1] != '\t') || memcmp(w, "flags=", 6))
            continue;
        const char *e = w + 6;
        while (e < end && *e != ' ' && *e != '\t' && *e != '\r')
            e++;
        for (const char *x = w + 6; x < e;) {
            const char *comma = memchr(x, ',', (size_t)(e - x));
            size_t xn = (size_t)((comma ? comma : e) - x);
            if (xn == 9 && !memcmp(x, "no-writes", 9))
                f |= SCRIPT_FLAG_NO_WRITES;
            else if (xn == 9 && !memcmp(x, "allow-oom", 9))
                f |= SCRIPT_FLAG_ALLOW_OOM;
            else if (xn == 11 && !memcmp(x, "allow-stale", 11))
                f |= SCRIPT_FLAG_ALLOW_STALE;
            x += xn + 1;
        }
        break;
    }
    return f;
}

/* cmd_script_flags_hook: a script call's flags, as Redis's scriptFlagsToCmdFlags (a script
 * without a shebang keeps the command's own). */
static uint64_t script_call_flags(struct conn *c, const struct cmd *cmd, uint64_t flags)
{
    int sf = -1;

    if (c->argc < 2)
        return flags;
    if (!strncmp(cmd->name, "fcall", 5)) {
        sf = func_lookup(c->argv[1].p, c->argv[1].n);
    } else if (!strncmp(cmd->name, "evalsha", 7)) {
        char sha[41];
        if (c->argv[1].n != 40)
            return flags;
        lower_sha(sha, c->argv[1].p);
        if ((sf = script_lua_flags(sha)) < 0) {
            size_t n;
            char *body = script_cache_get(sha, 40, &n);
            if (body) {
                sf = shebang_flags_quiet(body, n);
                free(body);
            }
        }
    } else if (!strncmp(cmd->name, "eval", 4)) {
        sf = shebang_flags_quiet(c->argv[1].p, c->argv[1].n);
    }
    if (sf < 0 || !(sf & SCRIPT_FLAG_SHEBANG))
        return flags;
    flags &= ~(uint64_t)(CMD_STALE | CMD_DENYOOM | CMD_WRITE | CMD_MAY_REPLICATE);
    if (!(sf & (SCRIPT_FLAG_ALLOW_OOM | SCRIPT_FLAG_NO_WRITES)))
        flags |= CMD_DENYOOM;
    if (!(sf & SCRIPT_FLAG_NO_WRITES))
        flags |= CMD_WRITE;
    if (sf & SCRIPT_FLAG_ALLOW_STALE)
        flags |= CMD_STALE;
    return flags;
}

void script_setup(void)
{
    cmd_script_flags_hook = script_call_flags;
    cmd_info_memory_hook = info_memory;
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
    func_setup(); /* FCALL, FUNCTION (cmd_function.c) */
}
