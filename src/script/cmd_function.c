/* FCALL, FCALL_RO and FUNCTION LOAD|LIST|DELETE|FLUSH|DUMP|RESTORE|STATS|HELP (Redis 7.0).
 * The registry is script_func.c; a function runs like a script (script_exec: every stripe
 * held, its writes logged as one MULTI ... EXEC). FUNCTION LOAD, DELETE, FLUSH and RESTORE
 * are write commands without keys: the AOF logs them as they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "persist/crc64.h"
#include "persist/rdb.h"
#include "script/script.h"
#include "script/script_func.h"
#include "script/script_int.h"

#define RDB_OPCODE_FUNCTION2 245
#define RDB_VERSION 10

static __thread char fname_buf[128]; /* the running function's name, for error texts */

static void fcall_generic(struct conn *c, int ro)
{
    struct script_run run = {0};
    long long nkeys;
    int flags;

    flags = func_lookup_name(c->argv[1].p, c->argv[1].n, fname_buf, sizeof(fname_buf));
    if (flags == -2) {
        reply_error(c, "ERR out of memory");
        return;
    }
    if (flags < 0) {
        reply_error(c, "ERR Function not found");
        return;
    }
    if (!util_str2ll(c->argv[2].p, c->argv[2].n, &nkeys)) {
        reply_error(c, "ERR Bad number of keys provided");
        return;
    }
    if (nkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (nkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    if (ro && !(flags & SCRIPT_FLAG_NO_WRITES)) {
        reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
        return;
    }
    run.caller = c;
    run.sha = fname_buf; /* the name as registered */
    run.fname = c->argv[1].p;
    run.fname_n = c->argv[1].n;
    run.readonly = ro || (flags & SCRIPT_FLAG_NO_WRITES);
    run.allow_oom = (flags & SCRIPT_FLAG_ALLOW_OOM) != 0;
    run.repl = SCRIPT_REPL_AOF | SCRIPT_REPL_REPLICA;
    run.flags = flags;
    script_exec(c, &run, (int)nkeys);
}

static void fcall_command(struct conn *c)
{
    fcall_generic(c, 0);
}

static void fcall_ro_command(struct conn *c)
{
    fcall_generic(c, 1);
}

static void function_load_command(struct conn *c)
{
    struct func_lib *lib;
    char err[512];
    int replace = 0, code = 2;
    char *name;

    /* as Redis: options up to the last argument, which is the code */
    for (; code < c->argc - 1; code++) {
        if (!arg_is(c, code, "replace")) {
            reply_errorf(c, "ERR Unknown option given: %.*s", (int)c->argv[code].n,
                         c->argv[code].p);
            return;
        }
        replace = 1;
    }
    lib = func_compile(c->argv[code].p, c->argv[code].n, err, sizeof(err));
    if (!lib) {
        for (char *q = err; *q; q++)
            if (*q == '\r' || *q == '\n')
                *q = ' ';
        reply_errorf(c, "ERR %s", err);
        return;
    }
    name = strdup(lib->name);
    if (!name) {
        func_list_free(lib);
        reply_error(c, "ERR out of memory");
        return;
    }
    if (func_add(lib, replace, err, sizeof(err))) {
        reply_errorf(c, "ERR %s", err);
        free(name);
        return;
    }
    reply_bulk(c, name, strlen(name));
    free(name);
}

static void function_delete_command(struct conn *c)
{
    if (func_delete(c->argv[2].p, c->argv[2].n)) {
        reply_error(c, "ERR Library not found");
        return;
    }
    reply_ok(c);
}

/* Redis's addReplySubcommandSyntaxError */
static void subcommand_syntax_error(struct conn *c)
{
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try "
                    "FUNCTION HELP.", (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p);
}

static void function_flush_command(struct conn *c)
{
    if (c->argc > 3) {
        subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 3 && !arg_is(c, 2, "sync") && !arg_is(c, 2, "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    func_flush();
    reply_ok(c);
}

/* ---- FUNCTION LIST ---- */

struct list_arg {
    struct conn *c;
    const char *pat;
    size_t patn;
    int withcode;
    int count; /* first pass: count; second: reply */
    int pass;
};

static void list_one(const struct func_lib *lib, void *arg)
{
    struct list_arg *a = arg;
    struct conn *c = a->c;

    if (a->pat && !util_glob_match(a->pat, a->patn, lib->name, strlen(lib->name), 0))
        return;
    if (a->pass == 0) {
        a->count++;
        return;
    }
    reply_map(c, a->withcode ? 4 : 3);
    reply_cstr(c, "library_name");
    reply_cstr(c, lib->name);
    reply_cstr(c, "engine");
    reply_cstr(c, "LUA");
    reply_cstr(c, "functions");
    reply_array(c, lib->nfn);
    for (int i = 0; i < lib->nfn; i++) {
        int nf = 0, flag;
        const char *fl;
        reply_map(c, 3);
        reply_cstr(c, "name");
        reply_cstr(c, lib->fns[i].name);
        reply_cstr(c, "description");
        if (lib->fns[i].desc)
            reply_cstr(c, lib->fns[i].desc);
        else
            reply_null(c);
        reply_cstr(c, "flags");
        for (int k = 0; (fl = func_flag_name(k, &flag)); k++)
            nf += (lib->fns[i].flags & flag) != 0;
        reply_set(c, nf);
        for (int k = 0; (fl = func_flag_name(k, &flag)); k++)
            if (lib->fns[i].flags & flag)
                reply_status(c, fl);
    }
    if (a->withcode) {
        reply_cstr(c, "library_code");
        reply_bulk(c, lib->code, lib->code_n);
    }
}

static void list_mid(void *arg)
{
    struct list_arg *a = arg;

    a->pass = 1;
    reply_array(a->c, a->count);
}

static void function_list_command(struct conn *c)
{
    struct list_arg a = {.c = c};

    for (int i = 2; i < c->argc; i++) {
        /* a repeated option is an unknown argument, as Redis */
        if (arg_is(c, i, "withcode") && !a.withcode) {
            a.withcode = 1;
        } else if (arg_is(c, i, "libraryname") && !a.pat) {
            if (i + 1 >= c->argc) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            a.pat = c->argv[++i].p;
            a.patn = c->argv[i].n;
        } else {
            reply_errorf(c, "ERR Unknown argument %.*s", (int)c->argv[i].n, c->argv[i].p);
            return;
        }
    }
    /* count, then reply, under one hold of the registry's lock */
    func_each2(list_one, &a, list_mid, &a);
}

/* ---- FUNCTION DUMP / RESTORE: Redis 7.0's payload ---- */

static void put_len(struct buf *b, uint64_t n)
{
    unsigned char h[9];
    size_t k;

    if (n < 64) {
        h[0] = (unsigned char)n;
        k = 1;
    } else if (n < 16384) {
        h[0] = (unsigned char)(0x40 | (n >> 8));
        h[1] = (unsigned char)n;
        k = 2;
    } else if (n <= 0xffffffffULL) {
        h[0] = 0x80;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (unsigned char)(n >> (24 - 8 * i));
        k = 5;
    } else {
        h[0] = 0x81;
        for (int i = 0; i < 8; i++)
            h[1 + i] = (unsigned char)(n >> (56 - 8 * i));
        k = 9;
    }
    buf_append(b, h, k);
}

static void dump_one(const struct func_lib *lib, void *arg)
{
    struct buf *b = arg;
    unsigned char op = RDB_OPCODE_FUNCTION2;

    buf_append(b, &op, 1);
    put_len(b, lib->code_n);
    buf_append(b, lib->code, lib->code_n);
}

void func_rdb_write(struct buf *b)
{
    func_each(dump_one, b);
}

static void function_dump_command(struct conn *c)
{
    struct buf b = {0};
    unsigned char tail[10];
    uint64_t crc;

    func_each(dump_one, &b);
    tail[0] = RDB_VERSION;
    tail[1] = 0;
    buf_append(&b, tail, 2);
    crc = crc64(0, b.data + b.rpos, buf_len(&b));
    for (int i = 0; i < 8; i++)
        tail[i] = (unsigned char)(crc >> (8 * i));
    buf_append(&b, tail, 8);
    reply_bulk(c, b.data + b.rpos, buf_len(&b));
    buf_deinit(&b);
}

struct parse_arg {
    struct func_lib *head, **tail;
    char *err;
    size_t cap;
};

static int parse_one(void *arg, const char *code, size_t n)
{
    struct parse_arg *a = arg;
    struct func_lib *lib = func_compile(code, n, a->err, a->cap);

    if (!lib)
        return -1;
    for (struct func_lib *o = a->head; o; o = o->next)
        if (!strcmp(o->name, lib->name)) {
            snprintf(a->err, a->cap, "Library %s already exists", lib->name);
            func_list_free(lib);
            return -1;
        }
    *a->tail = lib;
    a->tail = &lib->next;
    return 0;
}

static void function_restore_command(struct conn *c)
{
    int policy = FUNC_RESTORE_APPEND;
    struct parse_arg pa = {0};
    struct func_lib *list;
    char err[512];

    if (c->argc > 4) {
        subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 4) {
        if (arg_is(c, 3, "flush"))
            policy = FUNC_RESTORE_FLUSH;
        else if (arg_is(c, 3, "append"))
            policy = FUNC_RESTORE_APPEND;
        else if (arg_is(c, 3, "replace"))
            policy = FUNC_RESTORE_REPLACE;
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, "
                           "APPEND or REPLACE.");
            return;
        }
    }
    pa.tail = &pa.head;
    pa.err = err;
    pa.cap = sizeof(err);
    if (func_payload_split(c->argv[2].p, c->argv[2].n, parse_one, &pa, err, sizeof(err))) {
        func_list_free(pa.head);
        reply_errorf(c, "ERR %s", err);
        return;
    }
    list = pa.head;
    if (func_restore(list, policy, err, sizeof(err))) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    reply_ok(c);
}

static void function_stats_command(struct conn *c)
{
    long nl, nf;
    size_t bytes;
    char name[64], argv[SCRIPT_RUN_ARGS][SCRIPT_RUN_ARGLEN];
    int argc = 0;
    long long ms = 0;

    if (atomic_load_explicit(&cmd_script_busy, memory_order_relaxed) & (CMD_BUSY_FUNCTION - 1)) {
        /* as Redis: while an EVAL is busy, FUNCTION STATS answers its BUSY text */
        reply_error(c, cmd_busy_error());
        return;
    }
    func_counts(&nl, &nf, &bytes);
    reply_map(c, 2);

    reply_cstr(c, "running_script");
    if (!script_running_info(name, sizeof(name), argv, &argc, &ms)) {
        reply_null(c);
    } else {
        reply_map(c, 3);
        reply_cstr(c, "name");
        reply_cstr(c, name);
        reply_cstr(c, "command");
        reply_array(c, argc);
        for (int i = 0; i < argc; i++)
            reply_bulk(c, argv[i], strlen(argv[i]));
        reply_cstr(c, "duration_ms");
        reply_int(c, ms);
    }
    reply_cstr(c, "engines");
    reply_map(c, 1);
    reply_cstr(c, "LUA");
    reply_map(c, 2);
    reply_cstr(c, "libraries_count");
    reply_int(c, nl);
    reply_cstr(c, "functions_count");
    reply_int(c, nf);
}

static void function_kill_command(struct conn *c)
{
    if (atomic_load_explicit(&cmd_script_busy, memory_order_relaxed) & (CMD_BUSY_FUNCTION - 1)) {
        reply_error(c, cmd_busy_error()); /* an EVAL is busy: SCRIPT KILL is the way */
        return;
    }
    script_kill_generic(c, 0);
}

static void function_help_command(struct conn *c)
{
    static const char *help[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME "
        "argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored "
        "using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a "
        "restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
        "abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
        "replace the old",
        "      libraries with the new libraries (notice that even on this option there is a "
        "chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
    };
    reply_help(c, help);
}

static void function_command(struct conn *c)
{
    reply_arity_error(c, "function");
}

static struct cmd function_subs[] = {
    {"function|load", function_load_command, -3, "write denyoom noscript", "@write @slow @scripting", NULL, "scripting", "Create a function with the given arguments (name, code, description)"},
    {"function|delete", function_delete_command, 3, "write noscript", "@write @slow @scripting", NULL, "scripting", "Delete a function by name"},
    {"function|flush", function_flush_command, -2, "write noscript", "@write @slow @scripting", NULL, "scripting", "Deleting all functions"},
    {"function|list", function_list_command, -2, "noscript", "@slow @scripting", NULL, "scripting", "List information about all the functions"},
    {"function|dump", function_dump_command, 2, "noscript", "@slow @scripting", NULL, "scripting", "Dump all functions into a serialized binary payload"},
    {"function|restore", function_restore_command, -3, "write denyoom noscript", "@write @slow @scripting", NULL, "scripting", "Restore all the functions on the given payload"},
    {"function|kill", function_kill_command, 2, "noscript allow_busy", "@slow @scripting", NULL, "scripting", "Kill the function currently in execution."},
    {"function|stats", function_stats_command, 2, "noscript allow_busy", "@slow @scripting", NULL, "scripting", "Return information about the function currently running (name, description, duration)"},
    {"function|help", function_help_command, 2, "loading stale", "@slow @scripting", NULL, "scripting", "Show helpful text about the different subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"fcall", fcall_command, -3, "noscript may_replicate stale skip_monitor no_mandatory_keys tc:allstripes", "@slow @scripting", "RW,access,update index:2 keynum:0,1,1", "scripting", "Invoke a function"},
    {"fcall_ro", fcall_ro_command, -3, "readonly noscript stale skip_monitor no_mandatory_keys tc:allstripes", "@slow @scripting", "RO,access index:2 keynum:0,1,1", "scripting", "Invoke a read-only function"},
    {"function", function_command, -2, "", "", NULL, "scripting", "A container for function commands", function_subs},
};

struct each_arg {
    void (*put)(void *arg, const char *code, size_t n);
    void *arg;
};

static void each_one(const struct func_lib *lib, void *arg)
{
    struct each_arg *a = arg;

    a->put(a->arg, lib->code, lib->code_n);
}

void script_func_each(void (*put)(void *arg, const char *code, size_t n), void *arg)
{
    struct each_arg a = {put, arg};

    func_each(each_one, &a);
}

int script_func_load(const char *code, size_t n, char *err, size_t cap)
{
    struct func_lib *lib = func_compile(code, n, err, cap);

    if (!lib)
        return -1;
    return func_add(lib, rdb_funcs.replace, err, cap);
}

void func_setup(void)
{
    func_init();
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
