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
static int add_listener(struct worker *w, int fd, int proto)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};

    if (w->nl == 8)
        return -1;
    ev.data.u64 = TAG_LISTEN + (uint64_t)w->nl;
    w->lfd[w->nl] = fd;
    w->lproto[w->nl] = (uint8_t)proto;
    w->nl++;
    return epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
}

int srv_listen(struct srv *srv)
{
    char why[256];
    int fds[8], protos[8], nfds = 0;
    int unix_proto = -1;

    for (int pt = 0; pt < 2 * SRV_MAX_PROTO; pt++) {
        char addrs[256], *save = NULL, *a;
        int p = pt % SRV_MAX_PROTO, tls = pt >= SRV_MAX_PROTO; /* plain ports, then TLS */
        int port = tls ? srv->proto[p].tls_port : srv->proto[p].port;
        if (srv->proto[p].unix_socket && !tls)
            unix_proto = p;
        if (!port)
            continue;
        snprintf(addrs, sizeof(addrs), "%s", cfg.bind[0] ? cfg.bind : "127.0.0.1");
        for (a = strtok_r(addrs, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
            const char *bindaddr = a[0] == '-' ? a + 1 : a; /* "-::1": optional address */
            int fd;
            if (nfds == 8) {
                log_warn("too many listening addresses");
                return -1;
            }
            fd = net_bind_inet(bindaddr, port, SOCK_STREAM, why, sizeof(why));
            if (fd < 0) {
                if (a[0] == '-')
                    continue;
                if (srv->proto[p].port_optional && !tls) {
                    log_warn("Could not listen on %s:%d (%s): that protocol is off. Set its "
                             "port explicitly to make this an error.", bindaddr, port, why);
                    break;
                }
                log_warn("Could not create server TCP listening socket %s:%d: %s", bindaddr,
                         port, why);
                return -1;
            }
            fds[nfds] = fd;
            protos[nfds++] = p | (tls ? 0x40 : 0);
        }
    }
    if (cfg.unixsocket[0] && unix_proto >= 0) {
        int fd = listen_unix(cfg.unixsocket, why, sizeof(why));
        if (fd < 0 || nfds == 8) {
            log_warn("Failed opening Unix socket %s: %s", cfg.unixsocket, why);
            return -1;
        }
        fds[nfds] = fd;
        protos[nfds++] = unix_proto | 0x80;
    }
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
        for (int l = 0; l < nfds; l++)
            if (add_listener(w, fds[l], protos[l]))
                return -1;
    }
    return udp_listen(srv);
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

/* Make fd, accepted on listener li, a connection of w (its owner thread). */
static void adopt(struct worker *w, int fd, int li)
{
    struct srv *srv = w->srv;
    int proto = w->lproto[li] & 0x3f, is_unix = w->lproto[li] & 0x80, one = 1;
    int tls = w->lproto[li] & 0x40;
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
static int hand_over(struct worker *x, int fd, int li)
{
    pthread_mutex_lock(&x->mbox_lock);
    if (x->hand_n == (int)(sizeof(x->hand_fd) / sizeof(x->hand_fd[0]))) {
        pthread_mutex_unlock(&x->mbox_lock);
        return -1;
    }
    x->hand_fd[x->hand_n] = fd;
    x->hand_li[x->hand_n] = (uint8_t)li;
    x->hand_n++;
    pthread_mutex_unlock(&x->mbox_lock);
    worker_wake(x);
    return 0;
}

void net_adopt_handed(struct worker *w)
{
    int fd[64], n;
    uint8_t li[64];

    pthread_mutex_lock(&w->mbox_lock);
    n = w->hand_n;
    memcpy(fd, w->hand_fd, (size_t)n * sizeof(fd[0]));
    memcpy(li, w->hand_li, (size_t)n);
    w->hand_n = 0;
    pthread_mutex_unlock(&w->mbox_lock);
    for (int i = 0; i < n; i++)
        adopt(w, fd[i], li[i]);
}

/* Accept what is pending on listener li (all workers wait on it; EPOLLEXCLUSIVE wakes one)
 * and spread it: each connection goes to the least loaded worker, so a burst of connects
 * accepted by one worker does not leave the others idle. */
void net_accept(struct worker *w, int li)
{
    struct srv *srv = w->srv;
    int lfd = w->lfd[li], proto = w->lproto[li] & 0x3f;
    const struct srv_proto *p = &srv->proto[proto];

    for (int n = 0; n < 64; n++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                static _Atomic int64_t last_log;
                int64_t prev = atomic_load(&last_log);
                if (w->now_ms - prev > 1000 && atomic_compare_exchange_strong(&last_log, &prev, w->now_ms))
                    log_warn("Error accepting a client connection: %s", strerror(errno));
                /* as memcached: stop accepting for a while instead of spinning on the pending
                 * connections; the existing clients go on being served */
                net_listeners_pause(w);
            }
            return;
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
        if (x != w && hand_over(x, fd, li) == 0)
            continue;
        if (x != w) {
            atomic_fetch_sub(&x->load, 1);
            atomic_fetch_add(&w->load, 1);
        }
        adopt(w, fd, li);
    }
}

void net_listeners_pause(struct worker *w)
{
    if (!w->accept_paused) {
        w->accept_paused = 1;
        for (int i = 0; i < w->nl; i++)
            epoll_ctl(w->ep, EPOLL_CTL_DEL, w->lfd[i], NULL);
    }
}

void net_listeners_resume(struct worker *w)
{
    w->accept_paused = 0;
    for (int i = 0; i < w->nl; i++) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};
        ev.data.u64 = TAG_LISTEN + (uint64_t)i;
        epoll_ctl(w->ep, EPOLL_CTL_ADD, w->lfd[i], &ev);
    }
}
