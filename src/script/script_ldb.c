/* The Lua debugger (SCRIPT DEBUG YES|SYNC|NO), with Redis 7.0's protocol: after SCRIPT DEBUG,
 * the client's next EVAL runs in a debugging session. The script stops at its first line and
 * wherever a step, a breakpoint or redis.breakpoint() says; at each stop the session sends what
 * it logged as one array of status replies ("* Stopped at N, stop reason = ...", the source
 * line, "<redis>", "<reply>", "<error>", "<value>", "<debug>" lines) and reads debugger
 * commands (arrays of bulk strings) from the client's socket with blocking I/O until one of
 * them lets the script go on. The end sends "<endsession>", then EVAL's reply, then the
 * connection closes.
 *
 * YES forks (ldb_fork): the fork happens while this worker holds every stripe, so the child's
 * copy of the store is one point in time; the parent releases them at once and closes its copy
 * of the client's socket, the child releases its copies, serves the session over the copied
 * store (nothing it writes reaches the server: its changes go with it) and exits. SYNC runs the
 * session on the worker itself, holding every stripe for the whole run, so its changes stay and
 * the other workers wait for any key until it ends (Redis's server is blocked meanwhile).
 *
 * One session per thread at a time (the session blocks its thread): the state is thread-local.
 * The time limit does not apply to a debugged run (no -BUSY, no SCRIPT KILL): instead a run that
 * goes on for busy-reply-threshold ms (5 s when 0) without stopping stops with "timeout reached,
 * infinite loop?", as in Redis. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>

#include "cmd/propagate.h"
#include "cmd/cmd.h"
#include "cmd/monitor.h"
#include "cmd/pubsub.h"
#include "core/config.h"
#include "core/log.h"
#include "persist/aof_log.h"
#include "script/ldb_parse.h"
#include "script/script.h"
#include "script/script_int.h"

#define LDB_BREAKPOINTS_MAX 64
#define LDB_MAXLEN_DEFAULT 256
#define LDB_CBUF_MAX (1 << 20)   /* debugger input past this: the session ends with an error */
#define LDB_SEND_TIMEOUT_MS 5000 /* as Redis's send timeout on the debugging connection */

struct ldb {
    int active;     /* a session runs on this thread */
    int forked;     /* SCRIPT DEBUG YES: this process is the session's child */
    int fd;         /* the client's socket (non-blocking: every wait is a poll) */
    struct worker *w; /* the session's worker (its shutdown flag) */
    int gone;       /* the client closed the connection (or the server shuts down) */
    int step;       /* stop at the next line; also makes redis.call log */
    int luabp;      /* redis.breakpoint() was called */
    int bp[LDB_BREAKPOINTS_MAX];
    int bpcount;
    int currentline;
    char *src;      /* the script (a copy), split into lines */
    char **lines;
    int nlines;
    struct buf logs; /* "+entry\r\n" lines waiting to be sent */
    int nlogs;
    struct buf cbuf; /* debugger input not yet parsed */
    struct buf ent;  /* the entry being written */
    size_t maxlen;   /* replies and values logged are cut at this length (0: never) */
    int maxlen_hint_sent;
};

static __thread struct ldb ldb;

/* ---- forked sessions (the parent's list, reaped by worker 0's timer) ---- */

static pthread_mutex_t kids_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf */
static pid_t *kids;
static int nkids, kids_cap;

static void kids_add(pid_t pid)
{
    pthread_mutex_lock(&kids_lock);
    if (nkids == kids_cap) {
        int cap = kids_cap ? kids_cap * 2 : 8;
        pid_t *k = realloc(kids, sizeof(*k) * (size_t)cap);
        if (k) {
            kids = k;
            kids_cap = cap;
        }
    }
    if (nkids < kids_cap)
        kids[nkids++] = pid;
    pthread_mutex_unlock(&kids_lock);
}

void script_ldb_tick(void)
{
    pthread_mutex_lock(&kids_lock);
    for (int i = 0; i < nkids;) {
        int status;
        if (waitpid(kids[i], &status, WNOHANG) == kids[i])
            kids[i] = kids[--nkids];
        else
            i++;
    }
    pthread_mutex_unlock(&kids_lock);
}

void script_ldb_shutdown(void)
{
    pthread_mutex_lock(&kids_lock);
    for (int i = 0; i < nkids; i++) {
        if (waitpid(kids[i], NULL, WNOHANG) == kids[i])
            continue; /* it had ended */
        log_warn("Killing debugging session %ld", (long)kids[i]);
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    nkids = 0;
    free(kids);
    kids = NULL;
    kids_cap = 0;
    pthread_mutex_unlock(&kids_lock);
}

/* ---- the log ---- */

static void ent_reset(void)
{
    ldb.ent.rpos = ldb.ent.wpos = 0;
}

static void ent_cat(const char *p, size_t n)
{
    buf_append(&ldb.ent, p, n);
}

static void ent_str(const char *s)
{
    ent_cat(s, strlen(s));
}

static void ent_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ent_fmt(const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    int k;

    va_start(ap, fmt);
    k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (k > 0)
        ent_cat(tmp, (size_t)k < sizeof(tmp) ? (size_t)k : sizeof(tmp) - 1);
}

/* Queue the entry (CR and LF become spaces, as Redis sends them). */
static void log_ent(void)
{
    char *p = ldb.ent.data + ldb.ent.rpos;
    size_t n = buf_len(&ldb.ent);

    for (size_t i = 0; i < n; i++)
        if (p[i] == '\r' || p[i] == '\n')
            p[i] = ' ';
    buf_append(&ldb.logs, "+", 1);
    buf_append(&ldb.logs, p, n);
    buf_append(&ldb.logs, "\r\n", 2);
    ldb.nlogs++;
    ent_reset();
}

/* Queue the entry cut at maxlen, with the hint the first time one is cut. */
static void log_ent_maxlen(void)
{
    int cut = 0;

    if (ldb.maxlen && buf_len(&ldb.ent) > ldb.maxlen) {
        ldb.ent.wpos = ldb.ent.rpos + ldb.maxlen;
        ent_str(" ...");
        cut = 1;
    }
    log_ent();
    if (cut && !ldb.maxlen_hint_sent) {
        ldb.maxlen_hint_sent = 1;
        ent_str("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
        log_ent();
    }
}

static void log_str(const char *s)
{
    ent_reset();
    ent_str(s);
    log_ent();
}

/* Write all of p[0..n) to the client, waiting at most LDB_SEND_TIMEOUT_MS for room.
 * Returns 0 or -1 (the client is gone or does not read). */
static int write_all(const struct iovec *iov0, int niov)
{
    struct iovec iov[CONN_IOV_MAX];
    int n = niov;

    memcpy(iov, iov0, sizeof(*iov) * (size_t)niov);
    while (n > 0) {
        ssize_t w = writev(ldb.fd, iov, n);
        if (w < 0) {
            struct pollfd pf = {.fd = ldb.fd, .events = POLLOUT};
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -1;
            if (poll(&pf, 1, LDB_SEND_TIMEOUT_MS) <= 0)
                return -1;
            continue;
        }
        while (n > 0 && (size_t)w >= iov[0].iov_len) {
            w -= (ssize_t)iov[0].iov_len;
            memmove(iov, iov + 1, sizeof(*iov) * (size_t)--n);
        }
        if (n > 0) {
            iov[0].iov_base = (char *)iov[0].iov_base + w;
            iov[0].iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* Send the queued entries as one array of status replies. */
static void send_logs(void)
{
    char head[32];
    struct iovec iov[2];
    int k = snprintf(head, sizeof(head), "*%d\r\n", ldb.nlogs);

    iov[0].iov_base = head;
    iov[0].iov_len = (size_t)k;
    iov[1].iov_base = ldb.logs.data + ldb.logs.rpos;
    iov[1].iov_len = buf_len(&ldb.logs);
    if (!ldb.gone)
        write_all(iov, iov[1].iov_len ? 2 : 1); /* a failure shows at the next read */
    ldb.logs.rpos = ldb.logs.wpos = 0;
    ldb.nlogs = 0;
}

/* Write c's pending output (replies not sent yet) to the socket now. */
static void flush_conn(struct conn *c)
{
    struct iovec iov[CONN_IOV_MAX];
    int n;

    while ((n = conn_out_iov(c, iov, CONN_IOV_MAX)) > 0) {
        size_t len = 0;
        for (int i = 0; i < n; i++)
            len += iov[i].iov_len;
        if (ldb.gone || write_all(iov, n)) {
            conn_reset_output(c);
            return;
        }
        if (conn_sent(c, len))
            return;
    }
    conn_reset_output(c);
}

/* Log prefix + the value at the top of the stack, cut at maxlen. */
static void log_value(lua_State *L, const char *prefix)
{
    ent_reset();
    ent_str(prefix);
    ldb_cat_value(&ldb.ent, L, -1);
    log_ent_maxlen();
}

/* ---- what the script side logs ---- */

int ldb_active(void)
{
    return ldb.active;
}

int ldb_logging(void)
{
    return ldb.active && ldb.step;
}

void ldb_log_command(int argc, const struct slice *argv)
{
    ent_reset();
    ent_str("<redis>");
    for (int j = 0; j < argc; j++) {
        if (j == 10) {
            ent_fmt(" ... (%d more)", argc - j - 1);
            break;
        }
        ent_str(" ");
        ent_cat(argv[j].p, argv[j].n);
    }
    log_ent();
}

void ldb_log_reply(const char *p, size_t n)
{
    ent_reset();
    ent_str("<reply> ");
    ldb_cat_reply(&ldb.ent, p, n);
    log_ent_maxlen();
}

void ldb_log_error(const char *prefix, const char *msg, size_t n)
{
    ent_reset();
    ent_str("<error> ");
    ent_str(prefix);
    ent_cat(msg, n);
    log_ent();
}

int ldb_redis_debug(lua_State *L)
{
    int argc = lua_gettop(L);

    if (!ldb.active)
        return 0;
    ent_reset();
    ent_fmt("<debug> line %d: ", ldb.currentline);
    for (int i = 1; i <= argc; i++) {
        ldb_cat_value(&ldb.ent, L, i);
        if (i != argc)
            ent_str(", ");
    }
    log_ent();
    return 0;
}

int ldb_redis_breakpoint(lua_State *L)
{
    if (ldb.active)
        ldb.luabp = 1;
    lua_pushboolean(L, ldb.active);
    return 1;
}

/* ---- source lines and breakpoints ---- */

static const char *src_line(int line)
{
    if (line < 1 || line > ldb.nlines)
        return "<out of range source code line>";
    return ldb.lines[line - 1];
}

static int is_bp(int line)
{
    for (int i = 0; i < ldb.bpcount; i++)
        if (ldb.bp[i] == line)
            return 1;
    return 0;
}

static void log_src_line(int line)
{
    int bp = is_bp(line), cur = ldb.currentline == line;
    const char *prefix = cur && bp ? "->#" : cur ? "-> " : bp ? "  #" : "   ";

    ent_reset();
    ent_fmt("%s%-3d ", prefix, line);
    ent_str(src_line(line));
    log_ent();
}

static void list_lines(int around, int ctx)
{
    for (int j = 1; j <= ldb.nlines; j++) {
        if (around != 0 && abs(around - j) > ctx)
            continue;
        log_src_line(j);
    }
}

static void cmd_break(char **argv, const size_t *argl, int argc)
{
    if (argc == 1) {
        if (ldb.bpcount == 0) {
            log_str("No breakpoints set. Use 'b <line>' to add one.");
            return;
        }
        ent_reset();
        ent_fmt("%d breakpoints set:", ldb.bpcount);
        log_ent();
        for (int j = 0; j < ldb.bpcount; j++)
            log_src_line(ldb.bp[j]);
        return;
    }
    for (int j = 1; j < argc; j++) {
        long long line;
        if (!util_str2ll(argv[j], argl[j], &line) || line < -2147483647LL ||
            line > 2147483647LL) {
            ent_reset();
            ent_str("Invalid argument:'");
            ent_cat(argv[j], argl[j]);
            ent_str("'");
            log_ent();
        } else if (line == 0) {
            ldb.bpcount = 0;
            log_str("All breakpoints removed.");
        } else if (line > 0) {
            if (ldb.bpcount == LDB_BREAKPOINTS_MAX) {
                log_str("Too many breakpoints set.");
            } else if (line <= ldb.nlines && !is_bp((int)line)) {
                ldb.bp[ldb.bpcount++] = (int)line;
                list_lines((int)line, 1);
            } else {
                log_str("Wrong line number.");
            }
        } else {
            int i;
            for (i = 0; i < ldb.bpcount; i++)
                if (ldb.bp[i] == (int)-line)
                    break;
            if (i < ldb.bpcount) {
                /* the others keep their order (Redis 7.0 moves bytes, not lines, here and
                 * loses one when it was not the last) */
                ldb.bpcount--;
                memmove(ldb.bp + i, ldb.bp + i + 1, sizeof(ldb.bp[0]) * (size_t)(ldb.bpcount - i));
                log_str("Breakpoint removed.");
            } else {
                log_str("No breakpoint in the specified line.");
            }
        }
    }
}

static void cmd_maxlen(char **argv, int argc)
{
    if (argc == 2) {
        int v = atoi(argv[1]);
        ldb.maxlen_hint_sent = 1; /* the user knows about it */
        if (v != 0 && v <= 60)
            v = 60;
        ldb.maxlen = (size_t)v;
    }
    ent_reset();
    if (ldb.maxlen)
        ent_fmt("<value> replies are truncated at %d bytes.", (int)ldb.maxlen);
    else
        ent_str("<value> replies are unlimited.");
    log_ent();
}

/* ---- inspecting the running script ---- */

static void cmd_print(lua_State *L, const char *name)
{
    lua_Debug ar;

    for (int l = 0; lua_getstack(L, l, &ar); l++) {
        const char *n;
        for (int i = 1; (n = lua_getlocal(L, &ar, i)) != NULL; i++) {
            if (!strcmp(name, n)) {
                log_value(L, "<value> ");
                lua_pop(L, 1);
                return;
            }
            lua_pop(L, 1);
        }
    }
    if (!strcmp(name, "ARGV") || !strcmp(name, "KEYS")) {
        lua_getglobal(L, name);
        log_value(L, "<value> ");
        lua_pop(L, 1);
    } else {
        log_str("No such variable.");
    }
}

static void cmd_print_all(lua_State *L)
{
    lua_Debug ar;
    int vars = 0;

    if (lua_getstack(L, 0, &ar)) {
        const char *n;
        for (int i = 1; (n = lua_getlocal(L, &ar, i)) != NULL; i++) {
            if (!strstr(n, "(*temporary)")) {
                ent_reset();
                ent_str("<value> ");
                ent_str(n);
                ent_str(" = ");
                ldb_cat_value(&ldb.ent, L, -1);
                log_ent_maxlen();
                vars++;
            }
            lua_pop(L, 1);
        }
    }
    if (!vars)
        log_str("No local variables in the current context.");
}

static void cmd_trace(lua_State *L)
{
    lua_Debug ar;
    int level = 0;

    while (lua_getstack(L, level, &ar)) {
        lua_getinfo(L, "Snl", &ar);
        if (strstr(ar.short_src, "user_script")) {
            ent_reset();
            ent_fmt("%s %s:", level == 0 ? "In" : "From", ar.name ? ar.name : "top level");
            log_ent();
            log_src_line(ar.currentline);
        }
        level++;
    }
    if (level == 0)
        log_str("<error> Can't retrieve Lua stack.");
}

static void log_lua_error(lua_State *L)
{
    const char *m = NULL;

    if (lua_istable(L, -1)) {
        /* an error table (redis.call inside eval): Redis 7.0 crashes on it, show its text */
        lua_getfield(L, -1, "err");
        m = lua_tostring(L, -1);
        ldb_log_error("", m ? m : "", m ? strlen(m) : 0);
        lua_pop(L, 1);
        return;
    }
    m = lua_tostring(L, -1);
    ldb_log_error("", m ? m : "(error object is not a string)",
                  strlen(m ? m : "(error object is not a string)"));
}

static void cmd_eval(lua_State *L, char **argv, const size_t *argl, int argc)
{
    struct buf code = {0};

    buf_append(&code, "return ", 7);
    for (int j = 1; j < argc; j++) {
        if (j > 1)
            buf_append(&code, " ", 1);
        buf_append(&code, argv[j], argl[j]);
    }
    if (luaL_loadbuffer(L, code.data, code.wpos, "@ldb_eval")) {
        lua_pop(L, 1);
        if (luaL_loadbuffer(L, code.data + 7, code.wpos - 7, "@ldb_eval")) {
            log_lua_error(L);
            lua_pop(L, 1);
            buf_deinit(&code);
            return;
        }
    }
    buf_deinit(&code);
    if (lua_pcall(L, 0, 1, 0)) {
        log_lua_error(L);
        lua_pop(L, 1);
        return;
    }
    log_value(L, "<retval> ");
    lua_pop(L, 1);
}

static void cmd_redis(lua_State *L, char **argv, const size_t *argl, int argc)
{
    if (!lua_checkstack(L, argc + 1)) {
        log_str("<reply> max lua stack reached");
        return;
    }
    lua_getglobal(L, "redis");
    lua_getfield(L, -1, "call");
    for (int j = 1; j < argc; j++)
        lua_pushlstring(L, argv[j], argl[j]);
    ldb.step = 1; /* redis.call logs */
    lua_pcall(L, argc - 1, 1, 0);
    ldb.step = 0;
    lua_pop(L, 2);
}

static void log_help(void)
{
    static const char *help[] = {
        "Redis Lua debugger help:",
        "[h]elp               Show this help.",
        "[s]tep               Run current line and stop again.",
        "[n]ext               Alias for step.",
        "[c]ontinue           Run till next breakpoint.",
        "[l]ist               List source code around current line.",
        "[l]ist [line]        List source code around [line].",
        "                     line = 0 means: current position.",
        "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
        "                     to show before/after [line].",
        "[w]hole              List all source code. Alias for 'list 1 1000000'.",
        "[p]rint              Show all the local variables.",
        "[p]rint <var>        Show the value of the specified variable.",
        "                     Can also show global vars KEYS and ARGV.",
        "[b]reak              Show all breakpoints.",
        "[b]reak <line>       Add a breakpoint to the specified line.",
        "[b]reak -<line>      Remove breakpoint from the specified line.",
        "[b]reak 0            Remove all breakpoints.",
        "[t]race              Show a backtrace.",
        "[e]val <code>        Execute some Lua code (in a different callframe).",
        "[r]edis <cmd>        Execute a Redis command.",
        "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
        "                     Specifying zero as <len> means unlimited.",
        "[a]bort              Stop the execution of the script. In sync",
        "                     mode dataset changes will be retained.",
        "",
        "Debugger functions you can call from Lua scripts:",
        "redis.debug()        Produce logs in the debugger console.",
        "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
        "                     next line of code.",
    };
    for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++)
        log_str(help[i]);
}

/* ---- the debugger's input ---- */

/* One command from ldb.cbuf (ldb_parse.h), copied NUL-terminated: its argc with argv/argl/copy
 * to free, 0 when more input is needed, -1 on a protocol error. */
static __thread struct ldb_cmd *cmd; /* this thread's parsed command */

static int parse_command(char ***argvp, size_t **arglp, char **copyp)
{
    char **argv, *copy, *w;
    size_t *argl;
    int argc;

    if (!cmd && !(cmd = malloc(sizeof(*cmd))))
        return -1;
    argc = ldb_parse(ldb.cbuf.data + ldb.cbuf.rpos, buf_len(&ldb.cbuf), cmd);
    if (argc <= 0)
        return argc;
    copy = malloc(cmd->used + (size_t)argc);
    argv = malloc(sizeof(*argv) * (size_t)argc);
    argl = malloc(sizeof(*argl) * (size_t)argc);
    if (!copy || !argv || !argl) {
        free(copy);
        free(argv);
        free(argl);
        return -1;
    }
    w = copy;
    for (int i = 0; i < argc; i++) {
        memcpy(w, cmd->argv[i], cmd->argl[i]);
        w[cmd->argl[i]] = '\0';
        argv[i] = w;
        argl[i] = cmd->argl[i];
        w += cmd->argl[i] + 1;
    }
    *argvp = argv;
    *arglp = argl;
    *copyp = copy;
    return argc;
}

static int shutting_down(void)
{
    return !ldb.forked && ldb.w &&
           atomic_load_explicit(&ldb.w->srv->shutdown, memory_order_relaxed) != 0;
}

/* Read more debugger input: bytes read, or 0 when the client is gone. The command is parsed
 * again from its start after each read, so reads are large: 1 MB of input without a command
 * (refused at LDB_CBUF_MAX) costs 64 parses, not 1024. */
static int read_more(void)
{
    char tmp[16384];

    while (!ldb.gone) {
        struct pollfd pf = {.fd = ldb.fd, .events = POLLIN};
        ssize_t n;
        int r = poll(&pf, 1, 100);
        if (shutting_down()) {
            ldb.gone = 1;
            break;
        }
        if (r == 0 || (r < 0 && errno == EINTR))
            continue;
        n = read(ldb.fd, tmp, sizeof(tmp));
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (n <= 0) {
            ldb.gone = 1;
            break;
        }
        buf_append(&ldb.cbuf, tmp, (size_t)n);
        return (int)n;
    }
    return 0;
}

static int raise_lua(lua_State *L, const char *msg)
{
    script_push_error(L, msg, strlen(msg));
    return lua_error(L);
}

static int is(const char *a, const char *b)
{
    return !strcasecmp(a, b);
}

/* The debugger prompt: run commands until one lets the script go on. Returns 0, or -1 when
 * the client is gone (the script then runs to its end without stopping). May raise a Lua
 * error (abort, protocol error, too much input). */
static int repl(lua_State *L)
{
    for (;;) {
        char **argv = NULL, *copy = NULL;
        size_t *argl = NULL;
        int argc, go_on = 0;

        while ((argc = parse_command(&argv, &argl, &copy)) <= 0) {
            if (argc < 0)
                raise_lua(L, "protocol error");
            if (!read_more()) {
                ldb.step = 0;
                ldb.bpcount = 0;
                return -1;
            }
            if (buf_len(&ldb.cbuf) > LDB_CBUF_MAX) {
                ldb.cbuf.rpos = ldb.cbuf.wpos = 0;
                raise_lua(L, "max client buffer reached");
            }
        }
        ldb.cbuf.rpos = ldb.cbuf.wpos = 0; /* as Redis: the rest of the input is dropped */

        if (is(argv[0], "h") || is(argv[0], "help")) {
            log_help();
        } else if (is(argv[0], "s") || is(argv[0], "step") || is(argv[0], "n") ||
                   is(argv[0], "next")) {
            ldb.step = 1;
            go_on = 1;
        } else if (is(argv[0], "c") || is(argv[0], "continue")) {
            go_on = 1;
        } else if (is(argv[0], "t") || is(argv[0], "trace")) {
            cmd_trace(L);
        } else if (is(argv[0], "m") || is(argv[0], "maxlen")) {
            cmd_maxlen(argv, argc);
        } else if (is(argv[0], "b") || is(argv[0], "break")) {
            cmd_break(argv, argl, argc);
        } else if (is(argv[0], "e") || is(argv[0], "eval")) {
            cmd_eval(L, argv, argl, argc);
        } else if (is(argv[0], "a") || is(argv[0], "abort")) {
            free(argv);
            free(argl);
            free(copy);
            argv = NULL, argl = NULL, copy = NULL;
            raise_lua(L, "script aborted for user request");
        } else if (argc > 1 && (is(argv[0], "r") || is(argv[0], "redis"))) {
            cmd_redis(L, argv, argl, argc);
        } else if (is(argv[0], "p") || is(argv[0], "print")) {
            if (argc == 2)
                cmd_print(L, argv[1]);
            else
                cmd_print_all(L);
        } else if (is(argv[0], "l") || is(argv[0], "list")) {
            int around = ldb.currentline, ctx = 5;
            if (argc > 1) {
                int num = atoi(argv[1]);
                if (num > 0)
                    around = num;
            }
            if (argc > 2)
                ctx = atoi(argv[2]);
            list_lines(around, ctx);
        } else if (is(argv[0], "w") || is(argv[0], "whole")) {
            list_lines(1, 1000000);
        } else {
            log_str("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
        }
        free(argv);
        free(argl);
        free(copy);
        if (go_on)
            return 0;
        send_logs();
    }
}

/* ---- the line hook ---- */

void ldb_line_hook(lua_State *L, lua_Debug *ar, struct script_run *run)
{
    int bp, timeout = 0;
    const char *reason = "step over";

    lua_getstack(L, 0, ar);
    lua_getinfo(L, "Sl", ar);
    ldb.currentline = ar->currentline;
    bp = is_bp(ldb.currentline) || ldb.luabp;
    if (!strstr(ar->short_src, "user_script"))
        return;
    if (ar->event == LUA_HOOKCOUNT && !ldb.step && !bp) {
        long long limit = cfg.busy_reply_threshold > 0 ? cfg.busy_reply_threshold : 5000;
        if (util_mono_us() / 1000 - run->start_ms < limit)
            return;
        timeout = 1;
        ldb.step = 1;
    }
    if (!ldb.step && !bp)
        return;
    if (bp)
        reason = ldb.luabp ? "redis.breakpoint() called" : "break point";
    else if (timeout)
        reason = "timeout reached, infinite loop?";
    ldb.step = 0;
    ldb.luabp = 0;
    ent_reset();
    ent_fmt("* Stopped at %d, stop reason = %s", ldb.currentline, reason);
    log_ent();
    log_src_line(ldb.currentline);
    send_logs();
    if (repl(L) < 0 && timeout)
        raise_lua(L, "timeout during Lua debugging with client closing connection");
    run->start_ms = util_mono_us() / 1000;
}

/* ---- sessions ---- */

/* In the child: keep away from what other threads of the parent may have held at the fork
 * and from what the parent owns. */
static void child_setup(struct conn *c)
{
    DIR *d;

    prctl(PR_SET_NAME, "tc-ldb");
    /* nothing the session writes is the server's: no AOF record, no event, no wake-up of a
     * blocked client, no invalidation, no MONITOR line (their registries belong to threads
     * this process does not have) */
    atomic_store(&aof_on, 0);
    atomic_store(&repl_on, 0);
    atomic_store(&monitor_count, 0);
    atomic_store(&tracking_nclients, 0);
    atomic_store(&block_waiters, 0);
    __atomic_store_n(&cfg.notify_keyspace_events, 0, __ATOMIC_RELAXED);
    pubsub_fork_child(); /* PUBLISH reaches nobody (Redis's child delivers nothing either) */
    /* close every socket but the client's: the listeners and the other clients' connections
     * stay the parent's alone (a client the parent closes is not kept open by this copy) */
    d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *e;
        int dfd = dirfd(d);
        while ((e = readdir(d))) {
            struct stat st;
            int fd = atoi(e->d_name);
            if (e->d_name[0] == '.' || fd == dfd || fd == c->fd || fstat(fd, &st) < 0)
                continue;
            if (S_ISSOCK(st.st_mode))
                close(fd);
        }
        closedir(d);
    }
    log_warn("Redis forked for debugging eval");
}

int ldb_fork(struct conn *c)
{
    struct store *s = conn_store(c);
    pid_t pid;
    int err;

    store_hold_set(s, s->all); /* one point in time; no thread inside the store */
    pid = fork();
    err = errno;
    store_release_set(s, s->all);
    if (pid < 0) {
        reply_errorf(c, "ERR Fork() failed: can't run EVAL in debugging mode: %s", strerror(err));
        return -1;
    }
    if (pid > 0) {
        kids_add(pid);
        return 0;
    }
    child_setup(c);
    return 1;
}

void ldb_session_start(struct conn *c, int forked)
{
    const char *body = c->argv[1].p;
    size_t n = c->argv[1].n;

    if (!forked)
        log_warn("Redis synchronous debugging eval session started");
    ldb.active = 1;
    ldb.forked = forked;
    ldb.fd = c->fd;
    ldb.w = c->w;
    ldb.gone = 0;
    ldb.step = 1;
    ldb.luabp = 0;
    ldb.bpcount = 0;
    ldb.currentline = 0;
    ldb.maxlen = LDB_MAXLEN_DEFAULT;
    ldb.maxlen_hint_sent = 0;
    ldb.logs.rpos = ldb.logs.wpos = 0;
    ldb.nlogs = 0;
    ldb.cbuf.rpos = ldb.cbuf.wpos = 0;
    /* the source, split into lines (trailing line feeds dropped, as Redis) */
    while (n && (body[n - 1] == '\n' || body[n - 1] == '\r'))
        n--;
    ldb.src = malloc(n + 1);
    ldb.nlines = 0;
    ldb.lines = NULL;
    if (ldb.src) {
        int cap = 1;
        memcpy(ldb.src, body, n);
        ldb.src[n] = '\0';
        for (size_t i = 0; i < n; i++)
            cap += ldb.src[i] == '\n';
        ldb.lines = malloc(sizeof(*ldb.lines) * (size_t)cap);
        if (ldb.lines) {
            char *p = ldb.src;
            if (n == 0)
                cap = 0;
            for (int i = 0; i < cap; i++) {
                char *nl = strchr(p, '\n');
                ldb.lines[ldb.nlines++] = p;
                if (!nl)
                    break;
                *nl = '\0';
                p = nl + 1;
            }
        }
    }
    /* replies the client has not received yet go before the session's (unless the AOF holds
     * them until their writes are on disk: then they follow EVAL's) */
    if (!(c->flags & CONN_HOLD_OUT))
        flush_conn(c);
}

void ldb_session_end(struct conn *c)
{
    log_str("<endsession>");
    send_logs();
    if (ldb.forked) {
        flush_conn(c); /* EVAL's reply */
        log_warn("Lua debugging session child exiting");
        _exit(0);
    }
    log_warn("Redis synchronous debugging eval session ended");
    free(ldb.lines);
    free(ldb.src);
    ldb.lines = NULL;
    ldb.src = NULL;
    ldb.nlines = 0;
    ldb.active = 0;
    ldb.step = 0;
    if (ldb.cbuf.cap > 65536)
        buf_deinit(&ldb.cbuf);
    if (ldb.logs.cap > 65536)
        buf_deinit(&ldb.logs);
    if (ldb.ent.cap > 65536)
        buf_deinit(&ldb.ent);
}

void ldb_thread_exit(void)
{
    buf_deinit(&ldb.logs);
    buf_deinit(&ldb.cbuf);
    buf_deinit(&ldb.ent);
    free(cmd);
    cmd = NULL;
}
