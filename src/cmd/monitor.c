#include "cmd/monitor.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "cmd/cmd.h"
#include "cmd/pubsub.h"
#include "core/config.h"

_Atomic long monitor_count;
static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn **mons; /* under mon_lock: close removes a monitor under it */
static int nmons, capmons;
static __thread struct buf line;

int monitor_feeds_before(const struct cmd *cmd)
{
    /* EVAL and FCALL skip the feed after they ran; their line goes out first */
    return cmd->group && cmd->group[0] == 's' && !strcmp(cmd->group, "scripting") &&
           (!strncmp(cmd->name, "eval", 4) || !strncmp(cmd->name, "fcall", 5));
}

void monitor_feed_slow(struct conn *c, const struct cmd *cmd)
{
    monitor_feed_argv(c, cmd, c->argc, c->argv);
}

static int arg_eq(const struct slice *a, const char *s)
{
    size_t n = strlen(s);
    return a->n == n && !strncasecmp(a->p, s, n);
}

uint64_t cmd_redact_mask(const struct cmd *cmd, int argc, const struct slice *argv)
{
    const struct cmd *top = cmd->parent ? cmd->parent : cmd;
    uint64_t m = 0;
    int lim = argc < 64 ? argc : 64;

#define REDACT(i) ((i) < lim ? (m |= 1ULL << (i)) : 0)
    if (!strcmp(top->name, "auth")) {
        for (int i = 1; i < lim; i++)
            REDACT(i);
    } else if (!strcmp(top->name, "hello")) {
        for (int i = 2; i + 2 < argc; i++) {
            if (arg_eq(&argv[i], "auth")) {
                REDACT(i + 1);
                REDACT(i + 2);
                break;
            }
        }
    } else if (!strcmp(cmd->name, "acl|setuser")) {
        for (int i = 2; i < lim; i++)
            REDACT(i); /* the user, its rules, its passwords */
    } else if (!strcmp(cmd->name, "config|set")) {
        for (int i = 2; i + 1 < argc; i += 2)
            if (arg_eq(&argv[i], "requirepass") || arg_eq(&argv[i], "masterauth") ||
                arg_eq(&argv[i], "masteruser"))
                REDACT(i + 1);
    } else if (!strcmp(top->name, "migrate")) {
        for (int i = 6; i < argc; i++) {
            if (arg_eq(&argv[i], "auth") && i + 1 < argc) {
                REDACT(i + 1);
                i++;
            } else if (arg_eq(&argv[i], "auth2") && i + 2 < argc) {
                REDACT(i + 1);
                REDACT(i + 2);
                i += 2;
            } else if (arg_eq(&argv[i], "keys")) {
                break;
            }
        }
    }
#undef REDACT
    return m;
}

void monitor_feed_argv(struct conn *c, const struct cmd *cmd, int argc, const struct slice *argv)
{
    const struct cmd *top = cmd->parent ? cmd->parent : cmd;
    char head[160];
    struct timeval tv;
    int hl;

    if ((((cmd->flags & CMD_SKIP_MONITOR) && !monitor_feeds_before(cmd)) ||
         (cmd->flags & CMD_ADMIN) || (top->flags & CMD_ADMIN) || (c->flags & CONN_CLOSE_ASAP)))
        return;
    gettimeofday(&tv, NULL);
    if (c->fd < 0)
        hl = snprintf(head, sizeof(head), "+%ld.%06ld [%d lua] ", (long)tv.tv_sec,
                      (long)tv.tv_usec, c->db);
    else if (c->flags & CONN_UNIX)
        hl = snprintf(head, sizeof(head), "+%ld.%06ld [%d unix:%s] ", (long)tv.tv_sec,
                      (long)tv.tv_usec, c->db, cfg.unixsocket);
    else
        hl = snprintf(head, sizeof(head), "+%ld.%06ld [%d %s] ", (long)tv.tv_sec,
                      (long)tv.tv_usec, c->db, c->addr);
    if (hl < 0 || hl >= (int)sizeof(head))
        hl = (int)sizeof(head) - 1;
    /* passwords never reach a monitor (as Redis: AUTH's arguments, HELLO's AUTH pair,
     * MIGRATE's, ACL SETUSER's, CONFIG SET's of requirepass / masterauth) */
    uint64_t redact = cmd_redact_mask(cmd, argc, argv);
    line.rpos = line.wpos = 0;
    buf_append(&line, head, (size_t)hl);
    for (int i = 0; i < argc; i++) {
        if (i)
            buf_append(&line, " ", 1);
        if (i < 64 && (redact >> i & 1))
            buf_append(&line, "\"(redacted)\"", 12);
        else
            buf_append_repr(&line, argv[i].p, argv[i].n);
    }
    buf_append(&line, "\r\n", 2);
    pthread_mutex_lock(&mon_lock);
    for (int i = 0; i < nmons; i++)
        pubsub_post_conn(mons[i], PUBSUB_RAW, line.data, buf_len(&line));
    pthread_mutex_unlock(&mon_lock);
    if (line.cap > 65536)
        buf_shrink(&line, 4096);
}

void monitor_thread_exit(void)
{
    buf_deinit(&line);
}

void monitor_close(struct conn *c)
{
    if (!(c->flags & CONN_MONITOR))
        return;
    pthread_mutex_lock(&mon_lock);
    for (int i = 0; i < nmons; i++) {
        if (mons[i] == c) {
            mons[i] = mons[--nmons];
            atomic_fetch_sub(&monitor_count, 1);
            break;
        }
    }
    pthread_mutex_unlock(&mon_lock);
    c->flags &= ~CONN_MONITOR;
}

static void monitor_command(struct conn *c)
{
    if (c->flags & CONN_MONITOR)
        return; /* already: no reply, as Redis */
    pthread_mutex_lock(&mon_lock);
    if (nmons == capmons) {
        int cap = capmons ? capmons * 2 : 8;
        struct conn **v = realloc(mons, (size_t)cap * sizeof(*v));
        if (!v) {
            pthread_mutex_unlock(&mon_lock);
            reply_error(c, "ERR out of memory");
            return;
        }
        mons = v;
        capmons = cap;
    }
    mons[nmons++] = c;
    c->flags |= CONN_MONITOR;
    atomic_fetch_add(&monitor_count, 1);
    pthread_mutex_unlock(&mon_lock);
    reply_ok(c);
}

static struct cmd cmds[] = {
    {"monitor", monitor_command, 1, "admin noscript loading stale", "", NULL, "server", "Listen for all requests received by the server in real time"},
};

void cmd_monitor_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
