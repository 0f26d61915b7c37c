#include "cmd/slowlog.h"


#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "cmd/monitor.h"
#include "core/config.h"
#include "core/forksafe.h"

#define SLOWLOG_MAX_ARGC 32
#define SLOWLOG_MAX_ARGLEN 128

struct slow_entry {
    uint64_t id;
    int64_t time;     /* unix seconds */
    int64_t dur;      /* microseconds */
    int argc;
    char **argv;
    size_t *argl;
    char addr[64];
    char name[64];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork child (SCRIPT DEBUG YES runs commands in one, which may be slow) never finds the lock
 * held by a thread it does not have (a leaf). */
__attribute__((constructor)) static void slowlog_atfork(void)
{
    fork_protect(&lock);
}
static struct slow_entry *ring; /* newest first, up to slowlog-max-len */
static int len, cap;
static uint64_t next_id;

static void entry_free(struct slow_entry *e)
{
    for (int i = 0; i < e->argc; i++)
        free(e->argv[i]);
    free(e->argv);
    free(e->argl);
}

void slowlog_push(struct conn *c, int64_t dur_us)
{
    struct slow_entry e;
    int max = cfg.slowlog_max_len;

    memset(&e, 0, sizeof(e));
    e.time = c->w->now_ms / 1000;
    e.dur = dur_us;
    e.argc = c->argc > SLOWLOG_MAX_ARGC ? SLOWLOG_MAX_ARGC : c->argc;
    e.argv = calloc((size_t)e.argc, sizeof(char *));
    e.argl = calloc((size_t)e.argc, sizeof(size_t));
    if (!e.argv || !e.argl) {
        free(e.argv);
        free(e.argl);
        return;
    }
    uint64_t redact = cmd_current ? cmd_redact_mask(cmd_current, c->argc, c->argv) : 0;
    for (int i = 0; i < e.argc; i++) {
        char tmp[SLOWLOG_MAX_ARGLEN + 64];
        size_t n;
        if (i < 64 && (redact >> i & 1)) {
            n = (size_t)snprintf(tmp, sizeof(tmp), "(redacted)");
        } else if (i == SLOWLOG_MAX_ARGC - 1 && c->argc > SLOWLOG_MAX_ARGC) {
            n = (size_t)snprintf(tmp, sizeof(tmp), "... (%d more arguments)",
                                 c->argc - SLOWLOG_MAX_ARGC + 1);
        } else if (c->argv[i].n > SLOWLOG_MAX_ARGLEN) {
            n = (size_t)snprintf(tmp, sizeof(tmp), "%.*s... (%zu more bytes)", SLOWLOG_MAX_ARGLEN,
                                 c->argv[i].p, c->argv[i].n - SLOWLOG_MAX_ARGLEN);
        } else {
            n = c->argv[i].n;
            memcpy(tmp, c->argv[i].p, n);
        }
        e.argv[i] = malloc(n + 1);
        if (e.argv[i]) {
            memcpy(e.argv[i], tmp, n);
            e.argv[i][n] = '\0';
        }
        e.argl[i] = e.argv[i] ? n : 0;
    }
    snprintf(e.addr, sizeof(e.addr), "%s", c->addr);
    snprintf(e.name, sizeof(e.name), "%s", c->name);
    pthread_mutex_lock(&lock);
    e.id = next_id++;
    if (max <= 0) {
        pthread_mutex_unlock(&lock);
        entry_free(&e);
        return;
    }
    if (cap < max) {
        struct slow_entry *r = realloc(ring, sizeof(*r) * (size_t)max);
        if (r) {
            ring = r;
            cap = max;
        }
    }
    while (len > 0 && len >= (cap < max ? cap : max)) {
        entry_free(&ring[len - 1]);
        len--;
    }
    if (cap > 0) {
        memmove(ring + 1, ring, sizeof(*ring) * (size_t)len);
        ring[0] = e;
        len++;
    } else {
        entry_free(&e);
    }
    pthread_mutex_unlock(&lock);
}

void slowlog_command(struct conn *c)
{
    if (c->argc == 2 && arg_is(c, 1, "reset")) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < len; i++)
            entry_free(&ring[i]);
        len = 0;
        pthread_mutex_unlock(&lock);
        reply_ok(c);
    } else if (c->argc == 2 && arg_is(c, 1, "len")) {
        pthread_mutex_lock(&lock);
        reply_int(c, len);
        pthread_mutex_unlock(&lock);
    } else if ((c->argc == 2 || c->argc == 3) && arg_is(c, 1, "get")) {
        long long n = 10;
        if (c->argc == 3) {
            if (arg_ll(c, 2, &n, NULL))
                return;
            if (n < -1) {
                reply_error(c, "ERR count should be greater than or equal to -1");
                return;
            }
            if (n == -1)
                n = 1LL << 62;
        }
        pthread_mutex_lock(&lock);
        if (n > len)
            n = len;
        reply_array(c, n);
        for (int i = 0; i < n; i++) {
            struct slow_entry *e = &ring[i];
            reply_array(c, 6);
            reply_int(c, (long long)e->id);
            reply_int(c, e->time);
            reply_int(c, e->dur);
            reply_array(c, e->argc);
            for (int j = 0; j < e->argc; j++)
                reply_bulk(c, e->argv[j] ? e->argv[j] : "", e->argl[j]);
            reply_cstr(c, e->addr);
            reply_cstr(c, e->name);
        }
        pthread_mutex_unlock(&lock);
    } else if (c->argc == 2 && arg_is(c, 1, "help")) {
        static const char *help[] = {
            "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
            "HELP",
            "    Print this help."};
        reply_help(c, help);
    } else {
        char sub[64];
        arg_cstr(c, 1, sub, sizeof(sub));
        reply_errorf(c, "ERR unknown subcommand '%s'. Try SLOWLOG HELP.", sub);
    }
}
