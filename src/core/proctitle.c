#define _GNU_SOURCE
#include "core/proctitle.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

#define TITLE_MAX 255 /* as Redis's setproctitle: longer titles are cut */

extern char **environ;

static struct {
    char *base;          /* argv[0]'s original memory: where the title goes */
    char *end;           /* one past the last byte that may be written */
    char *arg0_nul;      /* where argv[0]'s terminating NUL was */
    int arg0_last;       /* argv[0] was the only argument: its NUL ended the argument area */
    char *arg0;          /* a copy of argv[0]: {title} */
    char *config_file;   /* {config-file}, or NULL */
    int cleared;         /* the whole area was zeroed once */
} pt;
static pthread_mutex_t pt_lock = PTHREAD_MUTEX_INITIALIZER;
static int in_child; /* a fork child: one thread, so no lock is taken (one held at the fork
                      * by a thread the child does not have would never be released) */

static void read_str(const char *field, char *out, size_t cap)
{
    if (in_child)
        snprintf(out, cap, "%s", field);
    else
        config_str(field, out, cap);
}

/* The value of variable name (n bytes) into out; -1 when unknown. */
static int variable(const char *name, size_t n, const char *title, char *out, size_t cap)
{
#define IS(s) (n == sizeof(s) - 1 && !memcmp(name, s, n))
    char bind[sizeof(cfg.bind)], sock[sizeof(cfg.unixsocket)];
    unsigned port = (unsigned)__atomic_load_n(&cfg.port, __ATOMIC_RELAXED); /* CONFIG SET */
    unsigned tls_port = (unsigned)__atomic_load_n(&cfg.tls_port, __ATOMIC_RELAXED);

    read_str(cfg.bind, bind, sizeof(bind));
    read_str(cfg.unixsocket, sock, sizeof(sock));
    if (IS("title")) {
        snprintf(out, cap, "%s", title);
    } else if (IS("listen-addr")) {
        if (port || tls_port) {
            char *first = bind + strspn(bind, " ");
            first[strcspn(first, " ")] = '\0';
            snprintf(out, cap, "%s:%u", first[0] ? first : "*", port ? port : tls_port);
        } else {
            snprintf(out, cap, "unixsocket:%s", sock);
        }
    } else if (IS("server-mode")) {
        out[0] = '\0'; /* no cluster or sentinel mode here */
    } else if (IS("config-file")) {
        snprintf(out, cap, "%s", pt.config_file ? pt.config_file : "-");
    } else if (IS("port")) {
        snprintf(out, cap, "%u", port);
    } else if (IS("tls-port")) {
        snprintf(out, cap, "%u", tls_port);
    } else if (IS("unixsocket")) {
        snprintf(out, cap, "%s", sock);
    } else {
        return -1;
    }
    return 0;
#undef IS
}

int proctitle_expand(const char *tmpl, const char *title, char *out, size_t cap)
{
    size_t n = 0, start;
    const char *p = tmpl;
    char val[1100];

    if (!cap)
        return -1;
#define PUT(s, len)                                                                             \
    do {                                                                                       \
        size_t l_ = (len);                                                                     \
        if (l_ > cap - 1 - n)                                                                  \
            l_ = cap - 1 - n; /* cut, as a title is anyway */                                  \
        memcpy(out + n, (s), l_);                                                              \
        n += l_;                                                                               \
    } while (0)
    while (*p) {
        const char *open = strchr(p, '{'), *close;
        if (!open) {
            PUT(p, strlen(p));
            break;
        }
        PUT(p, (size_t)(open - p));
        if (!open[1])
            return -1; /* a '{' ending the template */
        if (open[1] == '{') {
            PUT("{", 1);
            p = open + 2;
            continue;
        }
        close = strchr(open + 1, '}');
        if (!close || variable(open + 1, (size_t)(close - open - 1), title, val, sizeof(val)))
            return -1;
        PUT(val, strlen(val));
        p = close + 1;
    }
#undef PUT
    out[n] = '\0';
    /* trimmed of spaces at both ends ({server-mode} is empty outside cluster mode) */
    while (n && out[n - 1] == ' ')
        out[--n] = '\0';
    start = strspn(out, " ");
    memmove(out, out + start, n - start + 1);
    return (int)(n - start);
}

int proctitle_validate(const char *tmpl)
{
    char out[TITLE_MAX + 1];

    return proctitle_expand(tmpl, "", out, sizeof(out)) > 0 ? 0 : -1;
}

/* The end of the run of strings starting at argv[0]: argv's strings, then the environment's,
 * as long as each starts where the one before ended. */
static char *area_end(int argc, char **argv)
{
    char *end = argv[0] + strlen(argv[0]) + 1;

    for (int i = 1; i < argc; i++)
        if (argv[i] == end)
            end = argv[i] + strlen(argv[i]) + 1;
    for (int i = 0; environ && environ[i]; i++)
        if (environ[i] == end)
            end = environ[i] + strlen(environ[i]) + 1;
    return end;
}

void proctitle_init(int argc, char **argv, const char *config_file)
{
    char **env, *base, *end, *copy;
    int envc = 0;

    if (pt.base || argc < 1 || !argv[0])
        return;
    base = argv[0];
    end = area_end(argc, argv);
    while (environ && environ[envc])
        envc++;
    env = calloc((size_t)envc + 1, sizeof(*env));
    if (!env)
        return;
    for (int i = 0; i < envc; i++)
        if (!(env[i] = strdup(environ[i])))
            return; /* (copies made so far leak: start-up only, and rare) */
    pt.arg0 = strdup(argv[0]);
    pt.config_file = config_file ? strdup(config_file) : NULL;
    copy = strdup(program_invocation_name);
    if (!pt.arg0 || !copy)
        return;
    program_invocation_name = copy;
    program_invocation_short_name = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
    for (int i = 0; i < argc; i++) { /* argv[] keeps working: each points at its copy */
        char *a = strdup(argv[i]);
        if (!a)
            return;
        argv[i] = a;
    }
    environ = env;
    pt.arg0_nul = base + strlen(base);
    pt.arg0_last = argc == 1;
    pt.end = end;
    pt.base = base;
}

static int apply(const char *name)
{
    char tmpl[sizeof(cfg.proc_title_template)], title[TITLE_MAX + 1], *nul;
    int len;

    if (!pt.base)
        return -1;
    read_str(cfg.proc_title_template, tmpl, sizeof(tmpl));
    len = proctitle_expand(tmpl, name, title, sizeof(title));
    if (len <= 0)
        return -1;
    if (!in_child)
        pthread_mutex_lock(&pt_lock);
    if (!pt.cleared) {
        memset(pt.base, 0, (size_t)(pt.end - pt.base));
        pt.cleared = 1;
    } else {
        size_t n = (size_t)(pt.end - pt.base);
        memset(pt.base, 0, n < sizeof(title) ? n : sizeof(title));
    }
    if ((size_t)len > (size_t)(pt.end - pt.base) - 1)
        len = (int)(pt.end - pt.base) - 1;
    memcpy(pt.base, title, (size_t)len);
    nul = pt.base + len;
    /* Linux reads a command line whose argument area does not end with a NUL as a title of
     * its own, up to its first NUL: when argv[0] was the whole area, keep a byte where it
     * ended (a shorter title), or a space there (a title of exactly its length), as
     * setproctitle does (with more arguments the area ends further on, and such a byte would
     * only show up after the title) */
    if (!pt.arg0_last) {
        /* nothing to keep */
    } else if (nul < pt.arg0_nul) {
        *pt.arg0_nul = '.';
    } else if (nul == pt.arg0_nul && nul + 1 < pt.end) {
        *pt.arg0_nul = ' ';
        nul[1] = '\0';
    }
    if (!in_child)
        pthread_mutex_unlock(&pt_lock);
    return 0;
}

int proctitle_apply(void)
{
    return apply(pt.arg0);
}

int proctitle_apply_child(const char *title)
{
    in_child = 1;
    return apply(title);
}
