/* memcached's "watch": a connection that sent "watch [fetchers] [mutations] [evictions]"
 * receives a log line for every item fetch and store on any worker, in memcached's format
 * ("ts=... gid=... type=item_get key=... status=found clsid=1 cfd=... size=..."). An event
 * appends its line to each interested watcher's pending bytes under g_watch_lock (taken only
 * while watchers exist: a relaxed load of mc_watch_mask first); the watcher's own worker moves
 * them to the connection at its next tick (memcached's logger thread also delivers on a timer).
 * Evictions are accepted as a filter but not logged (the store reports no eviction events). */
#include <errno.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "core/buf.h"
#include "core/log.h"
#include "mc/mc_cmd.h"
#include "mc/mc_int.h"

#define WATCH_MAX 64                 /* watchers at most (memcached: 20 by default) */
#define WATCH_PENDING_MAX (1 << 20)  /* bytes a slow watcher may owe before lines are skipped */

struct watcher {
    struct conn *c;
    unsigned mask;
    struct buf pending;
};

_Atomic unsigned mc_watch_mask;
static pthread_mutex_t g_watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct watcher g_watchers[WATCH_MAX]; /* under g_watch_lock */
static int g_nwatchers;
static _Atomic uint64_t g_gid;

static void recompute_mask_locked(void)
{
    unsigned m = 0;
    for (int i = 0; i < g_nwatchers; i++)
        m |= g_watchers[i].mask;
    atomic_store(&mc_watch_mask, m);
}

static void publish(unsigned what, const char *line, size_t n)
{
    pthread_mutex_lock(&g_watch_lock);
    for (int i = 0; i < g_nwatchers; i++) {
        struct watcher *wt = &g_watchers[i];
        if ((wt->mask & what) && buf_len(&wt->pending) + n <= WATCH_PENDING_MAX &&
            buf_append(&wt->pending, line, n) == 0) {
            /* appended */
        }
    }
    pthread_mutex_unlock(&g_watch_lock);
}

static int head(char *out, size_t cap)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return snprintf(out, cap, "ts=%ld.%06ld gid=%llu ", (long)tv.tv_sec, (long)tv.tv_usec,
                    (unsigned long long)(atomic_fetch_add(&g_gid, 1) + 1));
}

void mc_watch_get_slow(struct conn *c, const char *key, size_t klen, const struct item *it)
{
    char line[MC_KEY_MAX + 200];
    int n = head(line, sizeof(line));

    n += snprintf(line + n, sizeof(line) - (size_t)n,
                  "type=item_get key=%.*s status=%s clsid=%d cfd=%d size=%u\n",
                  (int)(klen > MC_KEY_MAX ? MC_KEY_MAX : klen), key,
                  it ? "found" : "not_found", it ? 1 : 0, c->fd, it ? (unsigned)item_vlen(it) : 0u);
    publish(MC_WATCH_FETCHERS, line, (size_t)n);
}

void mc_watch_store_slow(struct conn *c, const char *key, size_t klen, const char *status,
                         const char *cmd, int64_t exp_ms, size_t vlen)
{
    char line[MC_KEY_MAX + 220];
    int64_t ttl = exp_ms > 0 ? (exp_ms - mc_now(c) + 999) / 1000 : 0;
    int n = head(line, sizeof(line));

    n += snprintf(line + n, sizeof(line) - (size_t)n,
                  "type=item_store key=%.*s status=%s cmd=%s ttl=%lld clsid=1 cfd=%d size=%zu\n",
                  (int)(klen > MC_KEY_MAX ? MC_KEY_MAX : klen), key, status, cmd,
                  (long long)(ttl < 0 ? -1 : ttl), c->fd, vlen);
    publish(MC_WATCH_MUTATIONS, line, (size_t)n);
}

static int tok_is(const struct mc_tok *t, const char *s)
{
    return t->n == strlen(s) && memcmp(t->p, s, t->n) == 0;
}

void mc_watch_command(struct conn *c, struct mc_req *r)
{
    unsigned mask = 0;

    for (int i = 1; i < r->ntok - 1; i++) {
        const struct mc_tok *t = &r->tok[i];
        if (t->n == 8 && !memcmp(t->p, "fetchers", 8))
            mask |= MC_WATCH_FETCHERS;
        else if (t->n == 9 && !memcmp(t->p, "mutations", 9))
            mask |= MC_WATCH_MUTATIONS;
        else if (t->n == 9 && !memcmp(t->p, "evictions", 9))
            mask |= MC_WATCH_EVICTIONS;
        else if (!tok_is(t, "rawcmds") && !tok_is(t, "connevents") &&
                 !tok_is(t, "sysevents") && !tok_is(t, "deletions") &&
                 !tok_is(t, "proxyreqs") && !tok_is(t, "proxyuser")) {
            mc_out_line(c, MC_ERROR);
            return;
        }
    }
    if (c->udp) { /* a datagram has no connection to stream to */
        mc_out_line(c, MC_ERROR);
        return;
    }
    if (!mc_cfg.watch_enabled) {
        mc_out_line(c, "CLIENT_ERROR watch commands not allowed");
        return;
    }
    if (conn_pending(c) > 0) {
        mc_out_line(c, "ERROR cannot pipeline other commands before watch");
        return;
    }
    if (r->ntok == 2)
        mask = MC_WATCH_FETCHERS; /* memcached's default */
    pthread_mutex_lock(&g_watch_lock);
    if (g_nwatchers == WATCH_MAX) {
        pthread_mutex_unlock(&g_watch_lock);
        mc_out_line(c, "WATCHER_TOO_MANY log watcher limit reached");
        return;
    }
    memset(&g_watchers[g_nwatchers], 0, sizeof(g_watchers[0]));
    g_watchers[g_nwatchers].c = c;
    g_watchers[g_nwatchers].mask = mask;
    g_nwatchers++;
    recompute_mask_locked();
    pthread_mutex_unlock(&g_watch_lock);
    ((struct mc_conn *)c->mc)->watching = 1;
    mc_out_line(c, "OK");
}

void mc_watch_close(struct conn *c)
{
    pthread_mutex_lock(&g_watch_lock);
    for (int i = 0; i < g_nwatchers; i++) {
        if (g_watchers[i].c == c) {
            buf_deinit(&g_watchers[i].pending);
            g_watchers[i] = g_watchers[--g_nwatchers];
            break;
        }
    }
    recompute_mask_locked();
    pthread_mutex_unlock(&g_watch_lock);
}

static void mc_watch_tick(struct worker *w)
{
    struct conn *ready[WATCH_MAX];
    int n = 0;

    if (!atomic_load_explicit(&mc_watch_mask, memory_order_relaxed))
        return;
    pthread_mutex_lock(&g_watch_lock);
    for (int i = 0; i < g_nwatchers; i++) {
        struct watcher *wt = &g_watchers[i];
        if (wt->c->w != w || !buf_len(&wt->pending) || conn_pending(wt->c) > WATCH_PENDING_MAX)
            continue; /* (a watcher that does not read: its pending lines fill, then skip) */
        mc_check(wt->c, buf_append(&wt->c->wbuf, wt->pending.data + wt->pending.rpos,
                                   buf_len(&wt->pending)));
        wt->pending.rpos = wt->pending.wpos = 0;
        ready[n++] = wt->c;
    }
    pthread_mutex_unlock(&g_watch_lock);
    for (int i = 0; i < n; i++)
        worker_conn_done(w, ready[i]); /* may close it (and so unregister it) */
}

/* memcached's MEMCACHED_PORT_FILENAME: once the sockets are bound, "TCP INET: <port>" for
 * each memcached TCP listener, then "UDP INET: <port>" for each UDP socket (INET6 for IPv6),
 * written to <file>.lck and renamed, so a reader sees it whole. Once, by worker 0's first tick
 * (the listeners are bound before any worker runs). */
static void write_port_file(struct worker *w)
{
    const char *name = getenv("MEMCACHED_PORT_FILENAME");
    struct srv *srv = w->srv;
    char tmp[4096];
    FILE *f;

    if (!name || !mc_cfg.memcached_cmdline || snprintf(tmp, sizeof(tmp), "%s.lck", name) >=
                                                  (int)sizeof(tmp))
        return;
    f = fopen(tmp, "a");
    if (!f)
        return;
    int lfd[SRV_MAX_LISTEN];
    uint8_t lproto[SRV_MAX_LISTEN];
    int nl = srv_listeners(srv, lfd, lproto, SRV_MAX_LISTEN);
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? srv->nudp : nl;
        for (int i = 0; i < n; i++) {
            int fd = pass ? srv->udp_fd[i] : lfd[i];
            struct sockaddr_storage ss;
            socklen_t len = sizeof(ss);
            if ((pass ? srv->udp_proto[i] : (lproto[i] & 0xbf)) != PROTO_MC ||
                getsockname(fd, (struct sockaddr *)&ss, &len))
                continue;
            if (ss.ss_family == AF_INET)
                fprintf(f, "%s INET: %u\n", pass ? "UDP" : "TCP",
                        ntohs(((struct sockaddr_in *)&ss)->sin_port));
            else if (ss.ss_family == AF_INET6)
                fprintf(f, "%s INET6: %u\n", pass ? "UDP" : "TCP",
                        ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
        }
    }
    fclose(f);
    if (rename(tmp, name))
        log_warn("Could not rename %s to %s: %s", tmp, name, strerror(errno));
}

void mc_cmd_tick(struct worker *w)
{
    static _Atomic int port_file_done; /* once, by worker 0 (atomic: the compiler may load it
                                        * before the idx test on the other workers) */

    if (w->idx == 0 &&
        TC_UNLIKELY(!atomic_load_explicit(&port_file_done, memory_order_relaxed))) {
        atomic_store_explicit(&port_file_done, 1, memory_order_relaxed);
        write_port_file(w);
    }
    mc_watch_tick(w);
}
