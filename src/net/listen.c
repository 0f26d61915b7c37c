/* Listening sockets and accepting connections: every worker waits on the same listeners;
 * an accepted connection belongs to the worker that accepted it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "net/net_int.h"
#include "net/tls.h"
#include "net/udp.h"
#include "net/worker.h"

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int net_bind_inet(const char *addr, int port, int socktype, char *why, size_t cap)
{
    struct addrinfo hints, *res = NULL, *ai;
    char portstr[16];
    int fd = -1, one = 1, r;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = socktype;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    snprintf(portstr, sizeof(portstr), "%d", port < 0 ? 0 : port); /* -1: any free port */
    r = getaddrinfo(addr, portstr, &hints, &res);
    if (r) {
        snprintf(why, cap, "%s", gai_strerror(r));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        if (socktype == SOCK_STREAM)
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            (socktype != SOCK_STREAM || listen(fd, cfg.tcp_backlog) == 0))
            break;
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    return fd;
}

static int listen_unix(const char *path, char *why, size_t cap)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(why, cap, "bad unix socket path");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, cfg.tcp_backlog) ||
        set_nonblock(fd)) {
        snprintf(why, cap, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    if (cfg.unixsocketperm)
        chmod(path, (mode_t)cfg.unixsocketperm);
    return fd;
}

/* Every worker waits on the same listening sockets with EPOLLEXCLUSIVE (one is woken per
 * connection). One socket per address, not SO_REUSEPORT: a second server started on the
 * same port must fail to bind instead of silently sharing it. */
static void epoll_listen(struct worker *w, int slot, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};

    ev.data.u64 = TAG_LISTEN + (uint64_t)slot;
    epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
}

/* "*" and "::*" are Redis's words for every IPv4 / IPv6 address */
static const char *bind_host(const char *word)
{
    if (word[0] == '-')
        word++; /* "-::1": an address that may be missing */
    if (!strcmp(word, "*"))
        return "0.0.0.0";
    if (!strcmp(word, "::*"))
        return "::";
    return word;
}

/* The listeners the settings ask for, in want[] (fd -1: not bound yet). -1 when there are
 * more than SRV_MAX_LISTEN. */
static int plan(struct srv *srv, struct srv_listener *want, int *nwant)
{
    int n = 0, unix_proto = -1;
    char addrs[sizeof(cfg.bind)];

    config_str(cfg.bind, addrs, sizeof(addrs));
    for (int pt = 0; pt < 2 * SRV_MAX_PROTO; pt++) {
        char copy[sizeof(addrs)], *save = NULL, *a;
        int p = pt % SRV_MAX_PROTO, tls = pt >= SRV_MAX_PROTO; /* plain ports, then TLS */
        int port = tls ? srv->proto[p].tls_port : srv->proto[p].port;
        if (srv->proto[p].unix_socket && !tls)
            unix_proto = p;
        if (!port)
            continue;
        memcpy(copy, addrs, sizeof(copy));
        for (a = strtok_r(copy, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
            if (n == SRV_MAX_LISTEN || strlen(a) >= sizeof(want[n].addr))
                return -1;
            want[n].fd = -1;
            want[n].proto = (uint8_t)(p | (tls ? LST_TLS : 0));
            want[n].port = port;
            snprintf(want[n].addr, sizeof(want[n].addr), "%s", a);
            n++;
        }
    }
    if (cfg.unixsocket[0] && unix_proto >= 0) {
        if (n == SRV_MAX_LISTEN)
            return -1;
        want[n].fd = -1;
        want[n].proto = (uint8_t)(unix_proto | LST_UNIX);
        want[n].port = 0;
        want[n].addr[0] = '\0';
        n++;
    }
    *nwant = n;
    return 0;
}

static int same_listener(const struct srv_listener *a, const struct srv_listener *b)
{
    return a->proto == b->proto && a->port == b->port && !strcmp(a->addr, b->addr);
}

/* Bind every listener of want[] that srv->lst does not have already (those are taken over,
 * fd set, *kept marked). An optional address that fails is left out (fd -1). 0, or -1 with
 * the sockets bound here closed again and why set. Caller holds relisten_lock (or runs
 * before the workers). */
static int bind_wanted(struct srv *srv, struct srv_listener *want, int n, char *why,
                       size_t cap)
{
    for (int i = 0; i < n; i++) {
        struct srv_listener *l = &want[i];
        int p = l->proto & 0x3f, tls = l->proto & LST_TLS;
        char reason[256];

        for (int j = 0; j < SRV_MAX_LISTEN; j++)
            if (srv->lst[j].fd >= 0 && same_listener(&srv->lst[j], l)) {
                l->fd = srv->lst[j].fd;
                break;
            }
        if (l->fd >= 0)
            continue;
        if (l->proto & LST_UNIX) {
            l->fd = listen_unix(cfg.unixsocket, reason, sizeof(reason));
            if (l->fd < 0) {
                log_warn("Failed opening Unix socket: %s", reason);
                snprintf(why, cap, "Failed opening Unix socket %s: %s", cfg.unixsocket, reason);
                goto fail;
            }
            continue;
        }
        l->fd = net_bind_inet(bind_host(l->addr), l->port, SOCK_STREAM, reason, sizeof(reason));
        if (l->fd >= 0 || l->addr[0] == '-')
            continue;
        if (srv->proto[p].port_optional && !tls) {
            log_warn("Could not listen on %s:%d (%s): that protocol is off. Set its "
                     "port explicitly to make this an error.", l->addr, l->port, reason);
            /* the protocol's other addresses too */
            for (int k = i + 1; k < n; k++)
                if (want[k].proto == l->proto)
                    want[k].addr[0] = '-', want[k].fd = -2;
            continue;
        }
        log_warn("Warning: Could not create server TCP listening socket %s:%d: %s", l->addr,
                 l->port, reason);
        snprintf(why, cap, "Could not create server TCP listening socket %s:%d: %s", l->addr,
                 l->port, reason);
        goto fail;
    }
    for (int i = 0; i < n; i++)
        if (want[i].fd == -2)
            want[i].fd = -1;
    return 0;
fail:
    for (int i = 0; i < n; i++) {
        int owned = want[i].fd >= 0;
        for (int j = 0; owned && j < SRV_MAX_LISTEN; j++)
            if (srv->lst[j].fd == want[i].fd)
                owned = 0;
        if (owned)
            close(want[i].fd);
        want[i].fd = -1;
    }
    return -1;
}

int srv_listen(struct srv *srv)
{
    struct srv_listener want[SRV_MAX_LISTEN];
    char why[256];
    int n;

    for (int j = 0; j < SRV_MAX_LISTEN; j++)
        srv->lst[j].fd = -1;
    pthread_rwlock_init(&srv->lst_lock, NULL);
    pthread_mutex_init(&srv->relisten_lock, NULL);
    if (plan(srv, want, &n)) {
        log_warn("too many listening addresses");
        return -1;
    }
    if (bind_wanted(srv, want, n, why, sizeof(why)))
        return -1;
    for (int i = 0, j = 0; i < n; i++)
        if (want[i].fd >= 0)
            srv->lst[j++] = want[i];
    srv->workers = calloc((size_t)srv->nworkers, sizeof(struct worker));
    if (!srv->workers)
        return -1;
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        struct epoll_event ev = {.events = EPOLLIN};
        w->idx = i;
        w->srv = srv;
        pthread_mutex_init(&w->list_lock, NULL);
        pthread_mutex_init(&w->mbox_lock, NULL);
        w->ep = epoll_create1(EPOLL_CLOEXEC);
        w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        atomic_store(&w->alive_ms, INT64_MAX); /* free until its loop says otherwise */
        if (w->ep < 0 || w->evfd < 0)
            return -1;
        ev.data.u64 = TAG_EVENT;
        epoll_ctl(w->ep, EPOLL_CTL_ADD, w->evfd, &ev);
        for (int l = 0; l < SRV_MAX_LISTEN; l++)
            if (srv->lst[l].fd >= 0)
                epoll_listen(w, l, srv->lst[l].fd);
    }
    return udp_listen(srv);
}

/* Redis's changeListenPort / applyBind: the new sockets are bound before the old ones are
 * closed, so a failure leaves the server listening as before. Under the write side of
 * lst_lock no worker is inside net_accept; an event a worker took from epoll_wait for a
 * slot changed here finds the slot's new content (or an empty slot) when it gets to it. */
int srv_relisten(struct srv *srv, char *why, size_t cap)
{
    struct srv_listener want[SRV_MAX_LISTEN];
    int n, keep[SRV_MAX_LISTEN] = {0};

    pthread_mutex_lock(&srv->relisten_lock);
    if (plan(srv, want, &n)) {
        pthread_mutex_unlock(&srv->relisten_lock);
        snprintf(why, cap, "too many listening addresses");
        log_warn("too many listening addresses");
        return -1;
    }
    if (bind_wanted(srv, want, n, why, cap)) {
        pthread_mutex_unlock(&srv->relisten_lock);
        return -1;
    }
    pthread_rwlock_wrlock(&srv->lst_lock);
    for (int j = 0; j < SRV_MAX_LISTEN; j++)
        for (int i = 0; i < n && srv->lst[j].fd >= 0; i++)
            if (want[i].fd == srv->lst[j].fd) {
                keep[j] = 1;
                want[i].fd = -1; /* in its slot already */
            }
    for (int j = 0; j < SRV_MAX_LISTEN; j++) {
        if (srv->lst[j].fd < 0 || keep[j])
            continue;
        for (int k = 0; k < srv->nworkers; k++)
            if (!srv->workers[k].accept_paused)
                epoll_ctl(srv->workers[k].ep, EPOLL_CTL_DEL, srv->lst[j].fd, NULL);
        close(srv->lst[j].fd);
        srv->lst[j].fd = -1;
    }
    for (int i = 0, j = 0; i < n; i++) {
        if (want[i].fd < 0)
            continue;
        while (srv->lst[j].fd >= 0)
            j++; /* there is room: plan() wanted at most SRV_MAX_LISTEN */
        srv->lst[j] = want[i];
        for (int k = 0; k < srv->nworkers; k++)
            if (!srv->workers[k].accept_paused && !atomic_load(&srv->shutdown))
                epoll_listen(&srv->workers[k], j, want[i].fd);
    }
    pthread_rwlock_unlock(&srv->lst_lock);
    pthread_mutex_unlock(&srv->relisten_lock);
    return 0;
}

int srv_listeners(struct srv *srv, int *fds, uint8_t *protos, int cap)
{
    int n = 0;

    pthread_rwlock_rdlock(&srv->lst_lock);
    for (int j = 0; j < SRV_MAX_LISTEN && n < cap; j++)
        if (srv->lst[j].fd >= 0) {
            fds[n] = srv->lst[j].fd;
            protos[n++] = srv->lst[j].proto;
        }
    pthread_rwlock_unlock(&srv->lst_lock);
    return n;
}

/* Redis 7.0's protected mode: with protected-mode on and no password for the default user,
 * a RESP client from anywhere but 127.0.0.1 or ::1 (not a unix socket) gets -DENIED and is
 * closed once it is written. */
static const char denied[] =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from "
    "the loopback interface. If you want to connect from external computers to Redis you may "
    "adopt one of the following solutions: 1) Just disable protected mode sending the command "
    "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the "
    "same host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Setup a an authentication password for the default user. NOTE: You only need "
    "to do one of the above things in order for the server to start accepting connections "
    "from the outside.\r\n";

int (*net_default_nopass_hook)(void);

void net_protected_check(struct worker *w, struct conn *c)
{
    const char *colon;
    size_t iplen;

    if (c->proto != PROTO_RESP || (c->flags & CONN_UNIX) ||
        !__atomic_load_n(&cfg.protected_mode, __ATOMIC_RELAXED) ||
        !(net_default_nopass_hook ? net_default_nopass_hook()
                                  : config_str_empty(cfg.requirepass)))
        return;
    colon = strrchr(c->addr, ':');
    iplen = colon ? (size_t)(colon - c->addr) : strlen(c->addr);
    if ((iplen == 9 && !memcmp(c->addr, "127.0.0.1", 9)) ||
        (iplen == 3 && !memcmp(c->addr, "::1", 3)))
        return;
    if (buf_append(&c->wbuf, denied, sizeof(denied) - 1)) {
        worker_close_conn(w, c);
        return;
    }
    c->flags |= CONN_CLOSE_AFTER_REPLY;
    worker_conn_done(w, c);
}

/* Make fd, accepted on a listener of protocol byte lp, a connection of w (its owner). */
static void adopt(struct worker *w, int fd, uint8_t lp)
{
    struct srv *srv = w->srv;
    int proto = lp & 0x3f, is_unix = lp & LST_UNIX, one = 1;
    int tls = lp & LST_TLS;
    const struct srv_proto *p = &srv->proto[proto];
    struct conn *c = calloc(1, sizeof(*c));
    struct epoll_event ev;

    if (!c) {
        close(fd);
        atomic_fetch_sub(&srv->nclients, 1);
        atomic_fetch_sub(&w->load, 1);
        return;
    }
    if (!is_unix) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (cfg.tcp_keepalive > 0) {
            int idle = cfg.tcp_keepalive, intvl = cfg.tcp_keepalive / 3 ? cfg.tcp_keepalive / 3 : 1,
                cnt = 3;
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
            setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
        }
        conn_format_addr(fd, 1, c->addr, sizeof(c->addr));
        conn_format_addr(fd, 0, c->laddr, sizeof(c->laddr));
    } else {
        c->flags |= CONN_UNIX;
        snprintf(c->addr, sizeof(c->addr), "/unix:0");
        snprintf(c->laddr, sizeof(c->laddr), "%.60s:0", cfg.unixsocket);
    }
    c->fd = fd;
    c->proto = (uint8_t)proto;
    c->w = w;
    c->id = atomic_fetch_add(&srv->next_client_id, 1) + 1;
    c->ctime_ms = c->last_ms = w->now_ms;
    if (tls && tls_conn_init(c)) {
        log_warn("Error creating a TLS session for a client connection");
        close(fd);
        free(c);
        atomic_fetch_sub(&srv->nclients, 1);
        atomic_fetch_sub(&w->load, 1);
        return;
    }
    if (tls)
        w->ntls_hs++;
    if (p->on_open)
        p->on_open(c);
    pthread_mutex_lock(&w->list_lock);
    c->next = w->conns;
    if (w->conns)
        w->conns->prev = c;
    w->conns = c;
    w->nconns++;
    pthread_mutex_unlock(&w->list_lock);
    STAT_INC(w->st.conns_received);
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.ptr = c;
    if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev))
        worker_close_conn(w, c);
    else if (!tls)
        net_protected_check(w, c); /* a TLS client is checked once its handshake is done */
}

/* The worker a new connection should go to: the one with the fewest, among those whose loop
 * turned lately (a worker stuck for more than two ticks, in a long script or on a blocked
 * disk, gets none, so a client can still reach a free one, e.g. for SCRIPT KILL); w itself
 * on a tie. */
static struct worker *pick(struct worker *w)
{
    struct srv *srv = w->srv;
    struct worker *best = w;
    int bl = atomic_load_explicit(&w->load, memory_order_relaxed);
    /* stuck: in the same loop turn for over two ticks (1000/hz ms each) */
    int64_t stale = w->now_ms - 2000 / (cfg.hz > 0 ? cfg.hz : 10) - 200;

    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *x = &srv->workers[i];
        int l = atomic_load_explicit(&x->load, memory_order_relaxed);
        if (x == w || l >= bl ||
            atomic_load_explicit(&x->alive_ms, memory_order_relaxed) < stale)
            continue;
        best = x;
        bl = l;
    }
    return best;
}

/* Hand fd to x (another worker): 0, or -1 when its queue is full. */
static int hand_over(struct worker *x, int fd, uint8_t lp)
{
    pthread_mutex_lock(&x->mbox_lock);
    if (x->hand_n == (int)(sizeof(x->hand_fd) / sizeof(x->hand_fd[0]))) {
        pthread_mutex_unlock(&x->mbox_lock);
        return -1;
    }
    x->hand_fd[x->hand_n] = fd;
    x->hand_proto[x->hand_n] = lp;
    x->hand_n++;
    pthread_mutex_unlock(&x->mbox_lock);
    worker_wake(x);
    return 0;
}

void net_adopt_handed(struct worker *w)
{
    int fd[64], n;
    uint8_t lp[64];

    pthread_mutex_lock(&w->mbox_lock);
    n = w->hand_n;
    memcpy(fd, w->hand_fd, (size_t)n * sizeof(fd[0]));
    memcpy(lp, w->hand_proto, (size_t)n);
    w->hand_n = 0;
    pthread_mutex_unlock(&w->mbox_lock);
    for (int i = 0; i < n; i++)
        adopt(w, fd[i], lp[i]);
}

/* Accept what is pending on listener li (all workers wait on it; EPOLLEXCLUSIVE wakes one)
 * and spread it: each connection goes to the least loaded worker, so a burst of connects
 * accepted by one worker does not leave the others idle. */
static void listeners_pause(struct worker *w);

void net_accept(struct worker *w, int li)
{
    struct srv *srv = w->srv;
    int lfd;
    uint8_t lp;
    const struct srv_proto *p;

    if (li < 0 || li >= SRV_MAX_LISTEN)
        return;
    pthread_rwlock_rdlock(&srv->lst_lock);
    lfd = srv->lst[li].fd;
    lp = srv->lst[li].proto;
    p = &srv->proto[lp & 0x3f];
    for (int n = 0; lfd >= 0 && n < 64; n++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                static _Atomic int64_t last_log;
                int64_t prev = atomic_load(&last_log);
                if (w->now_ms - prev > 1000 && atomic_compare_exchange_strong(&last_log, &prev, w->now_ms))
                    log_warn("Error accepting a client connection: %s", strerror(errno));
                /* as memcached: stop accepting for a while instead of spinning on the pending
                 * connections; the existing clients go on being served */
                listeners_pause(w);
            }
            break;
        }
        if (atomic_fetch_add(&srv->nclients, 1) >= cfg.maxclients) {
            const char *msg = p->full_reply ? p->full_reply : "";
            if (msg[0] && write(fd, msg, strlen(msg)) < 0) {
                /* best effort */
            }
            close(fd);
            atomic_fetch_sub(&srv->nclients, 1);
            STAT_INC(w->st.rejected);
            continue;
        }
        struct worker *x = pick(w);
        atomic_fetch_add(&x->load, 1);
        if (x != w && hand_over(x, fd, lp) == 0)
            continue;
        if (x != w) {
            atomic_fetch_sub(&x->load, 1);
            atomic_fetch_add(&w->load, 1);
        }
        adopt(w, fd, lp);
    }
    pthread_rwlock_unlock(&srv->lst_lock);
}

/* under the read side of lst_lock */
static void listeners_pause(struct worker *w)
{
    struct srv *srv = w->srv;

    if (!w->accept_paused) {
        w->accept_paused = 1;
        for (int i = 0; i < SRV_MAX_LISTEN; i++)
            if (srv->lst[i].fd >= 0)
                epoll_ctl(w->ep, EPOLL_CTL_DEL, srv->lst[i].fd, NULL);
    }
}

void net_listeners_pause(struct worker *w)
{
    pthread_rwlock_rdlock(&w->srv->lst_lock);
    listeners_pause(w);
    pthread_rwlock_unlock(&w->srv->lst_lock);
}

void net_listeners_resume(struct worker *w)
{
    struct srv *srv = w->srv;

    pthread_rwlock_rdlock(&srv->lst_lock);
    if (w->accept_paused) {
        w->accept_paused = 0;
        for (int i = 0; i < SRV_MAX_LISTEN; i++)
            if (srv->lst[i].fd >= 0)
                epoll_listen(w, i, srv->lst[i].fd);
    }
    pthread_rwlock_unlock(&srv->lst_lock);
}
