/* LATENCY LATEST | HISTORY | RESET | GRAPH | DOCTOR | HISTOGRAM | HELP, as Redis 7.0 (the
 * monitor's events live in src/core/latency.c; the per-command histograms in cmdstats.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/latency.h"

#define PUT(b, lit) buf_append((b), (lit), sizeof(lit) - 1)

static struct latency_event *find(struct latency_event *ev, int n, struct conn *c, int arg)
{
    for (int i = 0; i < n; i++)
        if (util_eq_nocase(c->argv[arg].p, c->argv[arg].n, ev[i].name))
            return &ev[i];
    return NULL;
}

/* the samples of e, oldest first, into out; returns how many */
static int samples(const struct latency_event *e, struct latency_point *out)
{
    int n = 0;
    for (int k = 0; k < LATENCY_TS_LEN; k++) {
        const struct latency_point *p = &e->samples[(e->idx + k) % LATENCY_TS_LEN];
        if (p->time)
            out[n++] = *p;
    }
    return n;
}

static void latest(struct conn *c, struct latency_event *ev, int n)
{
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        const struct latency_point *last =
            &ev[i].samples[(ev[i].idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN];
        reply_array(c, 4);
        reply_bulk(c, ev[i].name, strlen(ev[i].name));
        reply_int(c, last->time);
        reply_int(c, last->ms);
        reply_int(c, ev[i].max);
    }
}

static void history(struct conn *c, struct latency_event *e)
{
    struct latency_point pts[LATENCY_TS_LEN];
    int n = e ? samples(e, pts) : 0;

    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        reply_array(c, 2);
        reply_int(c, pts[i].time);
        reply_int(c, pts[i].ms);
    }
}

/* An ASCII graph of the samples: a header as Redis's, then four rows of bars (the tallest
 * bar is the highest sample), then how long ago each sample was, as a column label. */
static void graph(struct conn *c, struct latency_event *e)
{
    struct latency_point pts[LATENCY_TS_LEN];
    int n = samples(e, pts), rows = 4;
    uint32_t hi = 0, lo = UINT32_MAX;
    struct buf b = {0};
    char line[256];
    int64_t now = util_now_ms() / 1000;

    for (int i = 0; i < n; i++) {
        if (pts[i].ms > hi)
            hi = pts[i].ms;
        if (pts[i].ms < lo)
            lo = pts[i].ms;
    }
    int k = snprintf(line, sizeof(line), "%s - high %u ms, low %u ms (all time high %u ms)\n",
                     e->name, hi, lo, e->max);
    buf_append(&b, line, (size_t)k);
    for (int i = 0; i < 80; i++)
        PUT(&b, "-");
    PUT(&b, "\n");
    for (int r = rows; r >= 1; r--) {
        for (int i = 0; i < n; i++) {
            double level = hi ? (double)pts[i].ms * rows / hi : 0;
            buf_append(&b, level >= r ? "#" : level > r - 1 ? "_" : " ", 1);
        }
        PUT(&b, "\n");
    }
    /* ages, one column per sample: "10s", "2m", ... written top to bottom */
    char ages[LATENCY_TS_LEN][24];
    int h = 0;
    for (int i = 0; i < n; i++) {
        int64_t age = now - pts[i].time;
        if (age < 60)
            snprintf(ages[i], sizeof(ages[i]), "%llds", (long long)age);
        else if (age < 3600)
            snprintf(ages[i], sizeof(ages[i]), "%lldm", (long long)(age / 60));
        else
            snprintf(ages[i], sizeof(ages[i]), "%lldh", (long long)(age / 3600));
        if ((int)strlen(ages[i]) > h)
            h = (int)strlen(ages[i]);
    }
    for (int r = 0; r < h; r++) {
        for (int i = 0; i < n; i++)
            buf_append(&b, r < (int)strlen(ages[i]) ? &ages[i][r] : " ", 1);
        PUT(&b, "\n");
    }
    reply_verbatim(c, b.data, buf_len(&b));
    buf_deinit(&b);
}

static void doctor(struct conn *c, struct latency_event *ev, int n)
{
    struct buf b = {0};
    char line[512];
    int k;

    if (n == 0) {
        static const char none[] =
            "Dave, no latency spike was observed during the lifetime of this Redis instance, "
            "not in the slightest bit. I honestly think you ought to sit down calmly, take a "
            "stress pill, and think things over.\n";
        reply_verbatim(c, none, sizeof(none) - 1);
        return;
    }
    PUT(&b, "Dave, I have observed latency spikes in this Redis instance. You don't mind "
                   "talking about it, do you Dave?\n\n");
    int slow_cmd = 0, expire = 0, fork = 0;
    for (int i = 0; i < n; i++) {
        struct latency_point pts[LATENCY_TS_LEN];
        int m = samples(&ev[i], pts);
        double avg = 0, dev = 0, period = 0;
        for (int j = 0; j < m; j++)
            avg += pts[j].ms;
        avg /= m ? m : 1;
        for (int j = 0; j < m; j++)
            dev += fabs(pts[j].ms - avg);
        dev /= m ? m : 1;
        if (m > 1)
            period = (double)(pts[m - 1].time - pts[0].time) / m;
        k = snprintf(line, sizeof(line),
                     "%d. %s: %d latency spikes (average %.0fms, mean deviation %.0fms, period "
                     "%.2f sec). Worst all time event %ums.\n",
                     i + 1, ev[i].name, m, avg, dev, period, ev[i].max);
        buf_append(&b, line, (size_t)k);
        slow_cmd |= !strcmp(ev[i].name, "command") || !strcmp(ev[i].name, "fast-command");
        expire |= !strcmp(ev[i].name, "expire-cycle");
        fork |= !strcmp(ev[i].name, "fork");
    }
    PUT(&b, "\nI have a few advices for you:\n\n");
    if (slow_cmd)
        PUT(&b, "- Check your Slow Log to understand what are the commands you are running "
                       "which are too slow to execute. Please check "
                       "https://redis.io/commands/slowlog for more information.\n");
    if (expire)
        PUT(&b, "- Many keys expiring at the same time can make the expire cycle run long: "
                       "spread the expire times of keys set together.\n");
    if (fork)
        PUT(&b, "- Snapshots fork the server: a large dataset makes fork() take long. "
                       "Consider persisting less often or from a replica.\n");
    PUT(&b, "- Deleting, expiring or evicting (because of maxmemory policy) large objects "
                   "is a blocking operation. If you have very large objects that are often "
                   "deleted, expired, or evicted, try to fragment those objects into multiple "
                   "smaller objects.\n");
    reply_verbatim(c, b.data, buf_len(&b));
    buf_deinit(&b);
}

#define HIST_CAP 48

static void histogram_one(struct conn *c, const struct cmd *cmd)
{
    uint64_t calls, bounds[HIST_CAP], counts[HIST_CAP];
    int n;

    cmdstats_histogram(cmd, &calls, bounds, counts, HIST_CAP, &n);
    reply_bulk(c, cmd->name, strlen(cmd->name));
    reply_map(c, 2);
    reply_bulk(c, "calls", 5);
    reply_int(c, (long long)calls);
    reply_bulk(c, "histogram_usec", 14);
    reply_map(c, n);
    for (int i = 0; i < n; i++) {
        reply_int(c, (long long)bounds[i]);
        reply_int(c, (long long)counts[i]);
    }
}

static int has_samples(const struct cmd *cmd)
{
    uint64_t calls, b[1], k[1];
    int n;
    return cmdstats_histogram(cmd, &calls, b, k, 1, &n);
}

static void histogram(struct conn *c)
{
    const struct cmd *list[1024];
    int n = 0;

    if (c->argc == 2) {
        for (int i = 0; i < cmd_count() && n < 1024; i++) {
            const struct cmd *top = cmd_at(i);
            for (int j = -1; j < top->nsubs && n < 1024; j++) {
                const struct cmd *cmd = j < 0 ? top : &top->subs[j];
                if (has_samples(cmd))
                    list[n++] = cmd;
            }
        }
    } else {
        for (int i = 2; i < c->argc && n < 1024; i++) {
            const struct cmd *cmd = cmd_lookup_full(c->argv[i].p, c->argv[i].n);
            if (!cmd)
                continue;
            if (has_samples(cmd))
                list[n++] = cmd; /* a name given twice is answered twice, as Redis */
            for (int j = 0; j < cmd->nsubs && n < 1024; j++) /* a container: its subcommands */
                if (has_samples(&cmd->subs[j]))
                    list[n++] = &cmd->subs[j];
        }
    }
    reply_map(c, n);
    for (int i = 0; i < n; i++)
        histogram_one(c, list[i]);
}

static void latency_command(struct conn *c)
{
    struct latency_event *ev = malloc(sizeof(*ev) * LATENCY_EVENTS);
    int n;

    if (!ev) {
        reply_error(c, "ERR out of memory");
        return;
    }
    n = latency_events(ev, LATENCY_EVENTS);
    if (arg_is(c, 1, "latest")) {
        latest(c, ev, n);
    } else if (arg_is(c, 1, "history")) {
        history(c, find(ev, n, c, 2));
    } else if (arg_is(c, 1, "graph")) {
        struct latency_event *e = find(ev, n, c, 2);
        if (!e) {
            reply_errorf(c, "ERR No samples available for event '%.*s'",
                         (int)(c->argv[2].n > 128 ? 128 : c->argv[2].n), c->argv[2].p);
        } else {
            graph(c, e);
        }
    } else if (arg_is(c, 1, "doctor")) {
        doctor(c, ev, n);
    } else if (arg_is(c, 1, "reset")) {
        const char *names[64];
        char store[64][48];
        int k = 0;
        for (int i = 2; i < c->argc && k < 64; i++, k++) {
            arg_cstr(c, i, store[k], sizeof(store[k]));
            names[k] = store[k];
        }
        reply_int(c, latency_reset(names, k));
    } else if (arg_is(c, 1, "histogram")) {
        histogram(c);
    } else {
        static const char *help[] = {
            "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for "
            "the specified command names.",
            "    If no commands are specified then all histograms are replied.",
            "HELP",
            "    Prints this help.",
        };
        reply_help(c, help);
    }
    free(ev);
}

static void latency_container(struct conn *c)
{
    reply_arity_error(c, "latency");
}

static struct cmd latency_subs[] = {
    {"latency|latest", latency_command, 2, "admin noscript loading stale", "", NULL, "server", "Return the latest latency samples for all events."},
    {"latency|history", latency_command, 3, "admin noscript loading stale", "", NULL, "server", "Return timestamp-latency samples for the event."},
    {"latency|reset", latency_command, -2, "admin noscript loading stale", "", NULL, "server", "Reset latency data for one or more events."},
    {"latency|graph", latency_command, 3, "admin noscript loading stale", "", NULL, "server", "Return a latency graph for the event."},
    {"latency|doctor", latency_command, 2, "admin noscript loading stale", "", NULL, "server", "Return a human readable latency analysis report."},
    {"latency|histogram", latency_command, -2, "admin noscript loading stale", "", NULL, "server", "Return the cumulative distribution of latencies of a subset of commands or all."},
    {"latency|help", latency_command, 2, "loading stale", "", NULL, "server", "Show helpful text about the different subcommands."},
    {NULL},
};

static struct cmd cmds[] = {
    {"latency", latency_container, -2, "", "", NULL, "server", "A container for latency diagnostics commands", latency_subs},
};

void cmd_latency_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
