#define _GNU_SOURCE
#include "net/worker.h"

#include <arpa/inet.h>
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
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef TC_HAVE_URING
#include <liburing.h>
#endif

#include "core/alloc.h"
#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "store/evict.h"
#include "store/slab.h"
#include "store/store.h"

#define READ_CHUNK 16384
#define TAG_LISTEN 1
#define TAG_EVENT 2

/* epoll data: listeners and the eventfd carry small tags, connections their pointer. */
static inline int is_tag(uint64_t u)
{
    return u < 64;
}

static int set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int listen_tcp(const char *addr, int port, char *why, size_t cap)
{
    struct addrinfo hints, *res = NULL, *ai;
    char portstr[16];
    int fd = -1, one = 1, r;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    snprintf(portstr, sizeof(portstr), "%d", port);
    r = getaddrinfo(addr, portstr, &hints, &res);
    if (r) {
        snprintf(why, cap, "%s", gai_strerror(r));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, cfg.tcp_backlog) == 0 &&
            set_nonblock(fd) == 0)
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
static int add_listener(struct srv *srv, struct worker *w, int fd, int proto)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};

    if (w->nl == 4)
        return -1;
    ev.data.u64 = TAG_LISTEN + 8 + (uint64_t)w->nl;
    w->lfd[w->nl] = fd;
    w->lproto[w->nl] = (uint8_t)proto;
    w->nl++;
    return epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
}

int srv_listen(struct srv *srv)
{
    char why[256];
    int fds[4], protos[4], nfds = 0;
    int ports[2] = {cfg.port, cfg.memcache_port};

    for (int p = 0; p < 2; p++) {
        char addrs[256], *save = NULL, *a;
        if (!ports[p])
            continue;
        snprintf(addrs, sizeof(addrs), "%s", cfg.bind[0] ? cfg.bind : "127.0.0.1");
        for (a = strtok_r(addrs, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
            const char *bindaddr = a[0] == '-' ? a + 1 : a; /* "-::1": optional address */
            int fd;
            if (nfds == 4) {
                log_warn("too many listening addresses");
                return -1;
            }
            fd = listen_tcp(bindaddr, ports[p], why, sizeof(why));
            if (fd < 0) {
                if (a[0] == '-')
                    continue;
                log_warn("Could not create server TCP listening socket %s:%d: %s", bindaddr,
                         ports[p], why);
                return -1;
            }
            fds[nfds] = fd;
            protos[nfds++] = p == 0 ? PROTO_RESP : PROTO_MC;
        }
    }
    if (cfg.unixsocket[0]) {
        int fd = listen_unix(cfg.unixsocket, why, sizeof(why));
        if (fd < 0 || nfds == 4) {
            log_warn("Failed opening Unix socket %s: %s", cfg.unixsocket, why);
            return -1;
        }
        fds[nfds] = fd;
        protos[nfds++] = PROTO_RESP | 0x80;
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
        if (w->ep < 0 || w->evfd < 0)
            return -1;
        ev.data.u64 = TAG_EVENT;
        epoll_ctl(w->ep, EPOLL_CTL_ADD, w->evfd, &ev);
        for (int l = 0; l < nfds; l++)
            if (add_listener(srv, w, fds[l], protos[l]))
                return -1;
    }
    return 0;
}

void worker_wake(struct worker *w)
{
    uint64_t one = 1;
    if (write(w->evfd, &one, sizeof(one)) < 0) {
        /* the counter is saturated: the worker is awake anyway */
    }
}

void srv_request_shutdown(struct srv *srv, int exitcode)
{
    atomic_store(&srv->shutdown_exitcode, exitcode);
    atomic_store(&srv->shutdown, 1);
    for (int i = 0; i < srv->nworkers; i++)
        worker_wake(&srv->workers[i]);
}

static void update_events(struct worker *w, struct conn *c)
{
    struct epoll_event ev;
    int want_out = conn_pending(c) > 0;
    int want_in = !(c->flags & (CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY)) && !w->draining;
    uint16_t nf = (uint16_t)(want_out ? (c->flags | CONN_WANT_WRITE) : (c->flags & ~CONN_WANT_WRITE));

    ev.events = (want_in ? EPOLLIN : 0) | (want_out ? EPOLLOUT : 0) | (w->draining ? 0 : EPOLLRDHUP);
    ev.data.ptr = c;
    epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev);
    c->flags = nf;
}

void worker_close_conn(struct worker *w, struct conn *c)
{
    struct srv *srv = w->srv;

    if (c->flags & CONN_CLOSED)
        return;
    epoll_ctl(w->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    pthread_mutex_lock(&w->list_lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    w->nconns--;
    pthread_mutex_unlock(&w->list_lock);
    if (srv->on_close[c->proto])
        srv->on_close[c->proto](c);
    /* on_close removed c from the registries that post to it: drop what is still queued */
    if (atomic_load_explicit(&w->mbox_nonempty, memory_order_acquire)) {
        int j = 0;
        pthread_mutex_lock(&w->mbox_lock);
        for (int i = 0; i < w->mbox_n; i++) {
            if (w->mbox[i].c == c && srv->on_discard)
                srv->on_discard(w->mbox[i].msg);
            else if (w->mbox[i].c == c)
                continue;
            else
                w->mbox[j++] = w->mbox[i];
        }
        w->mbox_n = j;
        pthread_mutex_unlock(&w->mbox_lock);
    }
    if (TC_UNLIKELY(c->flags & CONN_AOF_LISTED)) {
        for (int i = 0; i < w->naof_wait; i++)
            if (w->aof_wait[i] == c)
                w->aof_wait[i] = NULL;
    }
    atomic_fetch_sub(&srv->nclients, 1);
    conn_reset_output(c);
    buf_deinit(&c->rbuf);
    buf_deinit(&c->wbuf);
    free(c->refs);
    c->refs = NULL;
    free(c->argv);
    c->argv = NULL;
    resp_parser_deinit(&c->rp);
    /* events, batched reads and queued writes of this turn may still name c: it is freed
     * at the end of the turn (free_dead) and skipped until then */
    c->flags |= CONN_CLOSED;
    c->prev = NULL;
    c->next = w->dead;
    w->dead = c;
}

static void free_dead(struct worker *w)
{
    while (w->dead) {
        struct conn *c = w->dead;
        w->dead = c->next;
        free(c);
    }
}

static void accept_all(struct worker *w, int li)
{
    struct srv *srv = w->srv;
    int lfd = w->lfd[li], proto = w->lproto[li] & 0x7f, is_unix = w->lproto[li] & 0x80;

    for (int n = 0; n < 64; n++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), one = 1;
        struct conn *c;
        struct epoll_event ev;

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                static _Atomic int64_t last_log;
                int64_t prev = atomic_load(&last_log);
                if (w->now_ms - prev > 1000 && atomic_compare_exchange_strong(&last_log, &prev, w->now_ms))
                    log_warn("Error accepting a client connection: %s", strerror(errno));
                /* as memcached: stop accepting for a while instead of spinning on the pending
                 * connections; the existing clients go on being served */
                if (!w->accept_paused) {
                    w->accept_paused = 1;
                    for (int i = 0; i < w->nl; i++)
                        epoll_ctl(w->ep, EPOLL_CTL_DEL, w->lfd[i], NULL);
                }
            }
            return;
        }
        if (atomic_fetch_add(&srv->nclients, 1) >= cfg.maxclients) {
            const char *msg = proto == PROTO_RESP ? "-ERR max number of clients reached\r\n"
                                                  : "ERROR Too many open connections\r\n";
            if (write(fd, msg, strlen(msg)) < 0) {
                /* best effort */
            }
            close(fd);
            atomic_fetch_sub(&srv->nclients, 1);
            STAT_INC(w->st.rejected);
            continue;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            atomic_fetch_sub(&srv->nclients, 1);
            continue;
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
        c->resp = 2;
        c->w = w;
        c->id = atomic_fetch_add(&srv->next_client_id, 1) + 1;
        c->authed = config_str_empty(cfg.requirepass);
        c->rp.max_bulk = cfg.proto_max_bulk_len;
        c->rp.unauth = !c->authed;
        resp_parser_reset(&c->rp);
        c->ctime_ms = c->last_ms = w->now_ms;
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
        if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev)) {
            worker_close_conn(w, c);
            continue;
        }
    }
}

static void after_write(struct worker *w, struct conn *c);

/* Queue c's output for the end of the turn (batching). */
static void flushq_add(struct worker *w, struct conn *c)
{
    if (c->flags & CONN_FLUSHQ)
        return;
    if (w->nflush == w->flush_cap) {
        int cap = w->flush_cap ? w->flush_cap * 2 : 256;
        struct conn **q = realloc(w->flushq, sizeof(*q) * (size_t)cap);
        if (!q) {
            /* no room to queue it: write it now */
            if (conn_flush(c))
                worker_close_conn(w, c);
            else
                after_write(w, c);
            return;
        }
        w->flushq = q;
        w->flush_cap = cap;
    }
    w->flushq[w->nflush++] = c;
    c->flags |= CONN_FLUSHQ;
}

/* After input was processed or output drained: write (or queue the write for the end of the
 * turn), pause or resume, or close. */
static void after_io(struct worker *w, struct conn *c)
{
    if (c->flags & CONN_CLOSED)
        return;
    conn_publish(c);
    if (c->flags & CONN_CLOSE_ASAP) {
        worker_close_conn(w, c);
        return;
    }
    if (TC_UNLIKELY(c->flags & CONN_AOF_WAIT)) {
        /* its commands were logged: the reply leaves after the AOF write (before_sleep) */
        if (!(c->flags & CONN_AOF_LISTED)) {
            if (w->naof_wait == w->aof_wait_cap) {
                int cap = w->aof_wait_cap ? w->aof_wait_cap * 2 : 64;
                struct conn **a = realloc(w->aof_wait, sizeof(*a) * (size_t)cap);
                if (!a) {
                    worker_close_conn(w, c);
                    return;
                }
                w->aof_wait = a;
                w->aof_wait_cap = cap;
            }
            w->aof_wait[w->naof_wait++] = c;
            c->flags |= CONN_AOF_LISTED;
        }
        return;
    }
    if (conn_pending(c)) {
        if (w->batching) {
            flushq_add(w, c);
            return;
        }
        if (conn_flush(c)) {
            worker_close_conn(w, c);
            return;
        }
    }
    after_write(w, c);
}

/* After a write attempt: close when done, enforce the output limit, pause or resume input,
 * update the epoll interest. */
static void after_write(struct worker *w, struct conn *c)
{
    if (conn_pending(c) == 0 && (c->flags & CONN_CLOSE_AFTER_REPLY)) {
        worker_close_conn(w, c);
        return;
    }
    if (c->proto == PROTO_RESP && !c->ps && conn_out_limit(c, COBL_NORMAL, w->now_ms)) {
        worker_close_conn(w, c);
        return;
    }
    int paused = (c->flags & CONN_PAUSED_READ) != 0;
    int over = conn_pending(c) > conn_pause_bytes(c);
    if (over)
        c->flags |= CONN_PAUSED_READ;
    else
        c->flags &= (uint16_t)~CONN_PAUSED_READ;
    if (paused && !over && buf_len(&c->rbuf) && !(c->flags & CONN_CLOSE_AFTER_REPLY)) {
        /* resume: run what was left in the input buffer */
        w->srv->on_input[c->proto](c);
        after_io(w, c);
        return;
    }
    if (over != paused || (conn_pending(c) > 0) != ((c->flags & CONN_WANT_WRITE) != 0) ||
        (c->flags & CONN_CLOSE_AFTER_REPLY))
        update_events(w, c);
}

void worker_conn_done(struct worker *w, struct conn *c)
{
    after_io(w, c);
}

void worker_conn_resume(struct worker *w, struct conn *c)
{
    if (!(c->flags & (CONN_CLOSE_ASAP | CONN_CLOSE_AFTER_REPLY | CONN_PAUSED_READ)) &&
        buf_len(&c->rbuf))
        w->srv->on_input[c->proto](c);
    after_io(w, c);
}

int worker_post(struct worker *w, struct conn *c, void *msg)
{
    int was_empty;

    pthread_mutex_lock(&w->mbox_lock);
    if (w->mbox_n == w->mbox_cap) {
        int cap = w->mbox_cap ? w->mbox_cap * 2 : 64;
        struct mbox_msg *m = realloc(w->mbox, sizeof(*m) * (size_t)cap);
        if (!m) {
            pthread_mutex_unlock(&w->mbox_lock);
            return -1;
        }
        w->mbox = m;
        w->mbox_cap = cap;
    }
    was_empty = w->mbox_n == 0;
    w->mbox[w->mbox_n].c = c;
    w->mbox[w->mbox_n].msg = msg;
    w->mbox_n++;
    atomic_store_explicit(&w->mbox_nonempty, 1, memory_order_release);
    pthread_mutex_unlock(&w->mbox_lock);
    return was_empty;
}

/* Deliver the mailbox: swap it out, write every message, then flush (or close) each
 * connection written once. Nothing is closed while messages are being written. */
static void deliver_mailbox(struct worker *w)
{
    struct mbox_msg *batch;
    int n, bcap, nt = 0;

    pthread_mutex_lock(&w->mbox_lock);
    batch = w->mbox;
    n = w->mbox_n;
    bcap = w->mbox_cap;
    w->mbox = w->mbox_work;
    w->mbox_cap = w->mbox_work_cap;
    w->mbox_n = 0;
    w->mbox_work = batch;
    w->mbox_work_cap = bcap;
    atomic_store_explicit(&w->mbox_nonempty, 0, memory_order_relaxed);
    pthread_mutex_unlock(&w->mbox_lock);
    if (!n)
        return;
    if (w->touched_cap < n) {
        struct conn **t = realloc(w->touched, sizeof(*t) * (size_t)n);
        if (!t) {
            for (int i = 0; i < n; i++)
                w->srv->on_discard(batch[i].msg);
            return;
        }
        w->touched = t;
        w->touched_cap = n;
    }
    for (int i = 0; i < n; i++) {
        struct conn *c = batch[i].c;
        w->srv->on_deliver(c, batch[i].msg);
        if (!(c->flags & CONN_MBOX_TOUCHED)) {
            c->flags |= CONN_MBOX_TOUCHED;
            w->touched[nt++] = c;
        }
    }
    for (int i = 0; i < nt; i++) {
        w->touched[i]->flags &= (uint16_t)~CONN_MBOX_TOUCHED;
        after_io(w, w->touched[i]);
    }
}

/* Make room in c's input buffer for the next read. Returns 0, or -1 (out of memory: c is
 * closed). */
static int prep_read(struct worker *w, struct conn *c)
{
    size_t want = READ_CHUNK;

    if (c->proto == PROTO_RESP && c->rp.bulklen >= 0) {
        /* a big argument: grow geometrically towards its announced size */
        size_t need = resp_want(&c->rp), have = buf_len(&c->rbuf);
        if (need > have) {
            size_t more = need - have;
            size_t step = have > READ_CHUNK ? have : READ_CHUNK;
            want = more < step ? more : step;
            if (want < READ_CHUNK)
                want = READ_CHUNK;
        }
    }
    if (c->rbuf.rpos == c->rbuf.wpos)
        c->rbuf.rpos = c->rbuf.wpos = 0;
    if (buf_reserve(&c->rbuf, want)) {
        worker_close_conn(w, c);
        return -1;
    }
    return 0;
}

/* A read into c's input buffer returned n (err: its errno when n < 0): run the input. */
static void read_done(struct worker *w, struct conn *c, ssize_t n, int err)
{
    if (n <= 0) {
        if (n < 0 && (err == EAGAIN || err == EINTR))
            return;
        worker_close_conn(w, c);
        return;
    }
    c->rbuf.wpos += (size_t)n;
    STAT_ADD(w->st.net_in, (uint64_t)n);
    __atomic_store_n(&c->last_ms, w->now_ms, __ATOMIC_RELAXED);
    if ((long long)buf_len(&c->rbuf) > cfg.client_query_buffer_limit) {
        log_warn("Closing client that reached max query buffer length: id=%llu addr=%s",
                 (unsigned long long)c->id, c->addr);
        worker_close_conn(w, c);
        return;
    }
    w->srv->on_input[c->proto](c);
    after_io(w, c);
}

static void on_readable(struct worker *w, struct conn *c)
{
    ssize_t n;

    if (prep_read(w, c))
        return;
    n = read(c->fd, c->rbuf.data + c->rbuf.wpos, buf_free(&c->rbuf));
    read_done(w, c, n, n < 0 ? errno : 0);
}

/* ---- batched socket I/O (io_uring) ----
 * Every operation is submitted with MSG_DONTWAIT, so it completes during the submission as
 * the plain system call would (data, EAGAIN, or an error) and never stays in flight: buffers
 * are only borrowed for the duration of io_uring_submit, and the connection state machine is
 * the same as with read/writev. What changes is the number of system calls: one per loop turn
 * for all reads and one for all writes, instead of one per connection each (a system call
 * costs ~1.2 us on this kind of virtual machine; loopback TCP P=1 spent ~2 of them per
 * request). */
#define URING_ENTRIES 256
#define SEND_CHUNK 64

struct wuring {
#ifdef TC_HAVE_URING
    struct io_uring ring;
#endif
    int res[URING_ENTRIES];
    size_t want[SEND_CHUNK];
    struct msghdr msg[SEND_CHUNK];
    struct iovec iov[SEND_CHUNK][CONN_IOV_MAX];
};

static void uring_init(struct worker *w)
{
#ifdef TC_HAVE_URING
    static const unsigned flagsets[] = {
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
        IORING_SETUP_SUBMIT_ALL, 0};
    struct wuring *u;
    int r = -ENOSYS;

    if (!cfg.io_uring)
        return;
    u = calloc(1, sizeof(*u));
    if (!u)
        return;
    for (size_t i = 0; i < sizeof(flagsets) / sizeof(flagsets[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = flagsets[i];
        r = io_uring_queue_init_params(URING_ENTRIES, &u->ring, &p);
        if (r == 0)
            break;
    }
    if (r < 0) {
        if (w->idx == 0)
            log_notice("io_uring is not available (%s): using read and writev", strerror(-r));
        free(u);
        return;
    }
    w->uring = u;
    w->batching = 1;
    atomic_fetch_add(&w->srv->uring_workers, 1);
#else
    (void)w;
#endif
}

static void uring_exit(struct worker *w)
{
#ifdef TC_HAVE_URING
    struct wuring *u = w->uring;
    if (u) {
        io_uring_queue_exit(&u->ring);
        free(u);
    }
#endif
    w->uring = NULL;
    w->batching = 0;
    free(w->flushq);
    free(w->flushq2);
    w->flushq = w->flushq2 = NULL;
    w->nflush = w->flush_cap = w->flush2_cap = 0;
}

#ifdef TC_HAVE_URING
/* Submit what is queued and collect every completion's result into u->res[user_data] (a
 * queued operation that was not submitted keeps the INT32_MIN the caller put there and is
 * done the plain way). After a failure the worker stops batching. */
static void uring_run(struct worker *w, int nsub)
{
    struct wuring *u = w->uring;
    int r = io_uring_submit(&u->ring);

    if (r != nsub) {
        log_warn("io_uring_submit: %s: going on with read and writev",
                 r < 0 ? strerror(-r) : "not everything was submitted");
        if (w->batching)
            atomic_fetch_sub(&w->srv->uring_workers, 1);
        w->batching = 0; /* what the ring still holds is never submitted */
    }
    for (int got = 0; got < r; got++) {
        struct io_uring_cqe *cqe;
        int e = io_uring_wait_cqe(&u->ring, &cqe);
        if (e == -EINTR) {
            got--;
            continue;
        }
        if (e < 0) {
            /* cannot happen with MSG_DONTWAIT operations, which complete during the submit */
            log_warn("io_uring_wait_cqe: %s", strerror(-e));
            abort();
        }
        uint64_t i = io_uring_cqe_get_data64(cqe);
        if (i < URING_ENTRIES)
            u->res[i] = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
    }
}
#endif

/* Read every connection of q (up to URING_ENTRIES) with one submission, then run their input
 * in order. */
static void recv_batch(struct worker *w, struct conn **q, int n)
{
#ifdef TC_HAVE_URING
    struct wuring *u = w->uring;
    int nsub = 0;

    for (int i = 0; i < n; i++) {
        struct conn *c = q[i];
        u->res[i] = INT32_MIN; /* not submitted */
        if ((c->flags & CONN_CLOSED) || prep_read(w, c)) {
            q[i] = NULL;
            continue;
        }
        struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
        if (!sqe)
            continue;
        io_uring_prep_recv(sqe, c->fd, c->rbuf.data + c->rbuf.wpos, buf_free(&c->rbuf),
                           MSG_DONTWAIT);
        io_uring_sqe_set_data64(sqe, (uint64_t)i);
        nsub++;
    }
    if (nsub)
        uring_run(w, nsub);
    for (int i = 0; i < n; i++) {
        struct conn *c = q[i];
        if (!c || (c->flags & CONN_CLOSED))
            continue;
        if (u->res[i] == INT32_MIN) {
            on_readable(w, c); /* not submitted: read it the plain way */
            continue;
        }
        read_done(w, c, u->res[i] < 0 ? -1 : u->res[i], u->res[i] < 0 ? -u->res[i] : 0);
    }
#else
    for (int i = 0; i < n; i++)
        if (!(q[i]->flags & CONN_CLOSED))
            on_readable(w, q[i]);
#endif
}

/* Send the output of every connection in the flush queue, SEND_CHUNK per submission, until
 * the queue stays empty (resumed input can queue more). */
static void flush_batch(struct worker *w)
{
    while (w->nflush) {
        struct conn **q = w->flushq;
        int n = w->nflush, cap = w->flush_cap;
        w->flushq = w->flushq2;
        w->flush_cap = w->flush2_cap;
        w->flushq2 = q;
        w->flush2_cap = cap;
        w->nflush = 0;
        for (int base = 0; base < n; base += SEND_CHUNK) {
            int m = n - base < SEND_CHUNK ? n - base : SEND_CHUNK;
#ifdef TC_HAVE_URING
            struct wuring *u = w->uring;
            int nsub = 0;
            for (int j = 0; j < m; j++) {
                struct conn *c = q[base + j];
                c->flags &= (uint16_t)~CONN_FLUSHQ;
                u->res[j] = INT32_MIN;
                u->want[j] = 0;
                if ((c->flags & CONN_CLOSED) || !w->batching || m == 1)
                    continue; /* one writev(2) costs less than one submission */
                int niov = conn_out_iov(c, u->iov[j], CONN_IOV_MAX);
                if (niov == 0)
                    continue;
                for (int k = 0; k < niov; k++)
                    u->want[j] += u->iov[j][k].iov_len;
                struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
                if (!sqe)
                    continue;
                if (niov == 1) {
                    io_uring_prep_send(sqe, c->fd, u->iov[j][0].iov_base, u->iov[j][0].iov_len,
                                       MSG_DONTWAIT | MSG_NOSIGNAL);
                } else {
                    memset(&u->msg[j], 0, sizeof(u->msg[j]));
                    u->msg[j].msg_iov = u->iov[j];
                    u->msg[j].msg_iovlen = (size_t)niov;
                    io_uring_prep_sendmsg(sqe, c->fd, &u->msg[j], MSG_DONTWAIT | MSG_NOSIGNAL);
                }
                io_uring_sqe_set_data64(sqe, (uint64_t)j);
                nsub++;
            }
            if (nsub)
                uring_run(w, nsub);
            for (int j = 0; j < m; j++) {
                struct conn *c = q[base + j];
                int r = u->res[j];
                if (c->flags & CONN_CLOSED)
                    continue;
                if (r == INT32_MIN) {
                    /* nothing to send, or not submitted: the plain way */
                    if (conn_pending(c) && conn_flush(c))
                        worker_close_conn(w, c);
                    else
                        after_write(w, c);
                    continue;
                }
                if (r < 0 && r != -EAGAIN && r != -EINTR) {
                    worker_close_conn(w, c);
                    continue;
                }
                if (r > 0 && !conn_sent(c, (size_t)r) && (size_t)r == u->want[j]) {
                    flushq_add(w, c); /* more than CONN_IOV_MAX pieces: next round */
                    continue;
                }
                after_write(w, c); /* done, or the socket is full: EPOLLOUT */
            }
#else
            for (int j = 0; j < m; j++) {
                struct conn *c = q[base + j];
                c->flags &= (uint16_t)~CONN_FLUSHQ;
                if (c->flags & CONN_CLOSED)
                    continue;
                if (conn_pending(c) && conn_flush(c))
                    worker_close_conn(w, c);
                else
                    after_write(w, c);
            }
#endif
        }
    }
}

static void handle_kills(struct worker *w)
{
    uint64_t v;
    struct conn *c, *next;

    if (read(w->evfd, &v, sizeof(v)) < 0) {
        /* spurious */
    }
    for (c = w->conns; c; c = next) {
        next = c->next;
        if (atomic_load(&c->kill))
            worker_close_conn(w, c);
    }
    if (w->srv->on_wakeup)
        w->srv->on_wakeup(w);
}

static void tick(struct worker *w)
{
    struct srv *srv = w->srv;
    struct conn *c, *next;
    int64_t budget;

    store_mem_flush();
    if (w->idx == 0) {
        struct alloc_stats as;
        atomic_store_explicit(&store_lfu_minutes, (uint32_t)(w->now_ms / 60000) & 0xffffff,
                              memory_order_relaxed);
        alloc_stats(&as);
        store_measure_overhead((int64_t)(as.allocated + slab_used_bytes()));
        if (srv->on_tick0)
            srv->on_tick0(w);
    }
    /* writes evict before they run; this catches up when the last write went over */
    if (cfg.maxmemory > 0)
        store_make_room(srv->store);
    /* Active expiry: a small slice of time, more while many sampled keys were expired. */
    budget = 1000000 / cfg.hz / 40; /* 2.5% of the tick */
    if (w->expire_effort > 10)
        budget *= 10;
    w->expire_effort = store_expire_cycle(srv->store, (uint32_t)w->idx, (uint32_t)srv->nworkers,
                                          w->now_ms, budget, &w->expire_cursor);
    if (cfg.timeout > 0 || __atomic_load_n(&cfg.cobl[COBL_NORMAL][1], __ATOMIC_RELAXED) > 0) {
        for (c = w->conns; c; c = next) {
            next = c->next;
            /* as Redis: subscribers and blocked clients are not idle */
            if (cfg.timeout > 0 && c->proto == PROTO_RESP && !c->ps && !c->blk &&
                w->now_ms - c->last_ms > (int64_t)cfg.timeout * 1000)
                worker_close_conn(w, c);
            /* a paused client's soft limit runs out without any event on it */
            else if ((c->flags & CONN_PAUSED_READ) && c->proto == PROTO_RESP && !c->ps &&
                     conn_out_limit(c, COBL_NORMAL, w->now_ms))
                worker_close_conn(w, c);
        }
    }
    if (w->accept_paused && !w->draining) {
        w->accept_paused = 0;
        for (int i = 0; i < w->nl; i++) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};
            ev.data.u64 = TAG_LISTEN + 8 + (uint64_t)i;
            epoll_ctl(w->ep, EPOLL_CTL_ADD, w->lfd[i], &ev);
        }
    }
    int oi = (w->st.ops_idx + 1) % 16;
    STAT_SET(w->st.ops_sample[oi], w->st.commands);
    STAT_SET(w->st.ops_sample_ms[oi], w->now_ms);
    STAT_SET(w->st.ops_idx, oi);
}

/* Write the AOF, then send the replies that waited for it (their input may log more). */
static void before_sleep(struct worker *w)
{
    for (int round = 0; round < 16; round++) {
        w->srv->before_sleep(w);
        if (!w->naof_wait)
            return;
        int n = w->naof_wait;
        struct conn **list = w->aof_wait;
        w->aof_wait = NULL;
        w->naof_wait = w->aof_wait_cap = 0;
        for (int i = 0; i < n; i++) {
            struct conn *c = list[i];
            if (c)
                c->flags &= (uint16_t) ~(CONN_AOF_WAIT | CONN_AOF_LISTED);
        }
        for (int i = 0; i < n; i++) {
            if (list[i] && !(list[i]->flags & CONN_AOF_LISTED))
                after_io(w, list[i]);
        }
        free(list);
    }
}

/* Graceful shutdown (SIGTERM, SIGINT, SHUTDOWN): stop listening, answer what clients sent
 * before it (complete requests in the input buffers and bytes already in the sockets), write
 * every reply, waiting for slow readers up to DRAIN_MS, then close every connection. */
#define DRAIN_MS 5000
static void drain(struct worker *w)
{
    struct epoll_event evs[256];
    struct conn *c, *next;
    int64_t end;

    for (int i = 0; i < w->nl; i++) {
        epoll_ctl(w->ep, EPOLL_CTL_DEL, w->lfd[i], NULL);
        shutdown(w->lfd[i], SHUT_RD); /* Linux: stop listening, refuse new connections now */
    }
    w->now_ms = util_now_ms();
    end = w->now_ms + DRAIN_MS;
    if (atomic_load_explicit(&w->mbox_nonempty, memory_order_acquire))
        deliver_mailbox(w);
    for (c = w->conns; c; c = next) {
        next = c->next;
        if (!c->blk && !(c->flags & (CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP)))
            on_readable(w, c);
    }
    w->draining = 1; /* from here on only output: no EPOLLIN, no EPOLLRDHUP */
    for (c = w->conns; c; c = c->next)
        update_events(w, c);
    for (;;) {
        if (w->srv->before_sleep)
            before_sleep(w);
        for (c = w->conns; c; c = next) {
            next = c->next;
            if (conn_pending(c) == 0 && !(c->flags & CONN_AOF_WAIT) &&
                !(c->flags & CONN_PAUSED_READ && buf_len(&c->rbuf)))
                worker_close_conn(w, c);
        }
        free_dead(w);
        if (!w->conns || w->now_ms >= end)
            break;
        int n = epoll_wait(w->ep, evs, 256, (int)(end - w->now_ms));
        w->now_ms = util_now_ms();
        for (int i = 0; i < n; i++) {
            if (is_tag(evs[i].data.u64))
                continue;
            c = evs[i].data.ptr;
            if (c->flags & CONN_CLOSED)
                continue;
            if (evs[i].events & (EPOLLERR | EPOLLHUP)) {
                worker_close_conn(w, c);
                continue;
            }
            if (evs[i].events & EPOLLOUT) {
                if (conn_flush(c)) {
                    worker_close_conn(w, c);
                    continue;
                }
                after_io(w, c); /* a paused client goes on with its remaining input */
            }
        }
    }
    while (w->conns)
        worker_close_conn(w, w->conns);
}

/* End of a loop turn: write the AOF, send every queued reply (one submission when batching),
 * repeat while sending resumed input that logged more, then free what was closed. */
static void end_turn(struct worker *w)
{
    for (int round = 0; round < 16; round++) {
        if (w->srv->before_sleep)
            before_sleep(w);
        if (!w->nflush)
            break;
        flush_batch(w);
        if (!w->naof_wait)
            break;
    }
    if (w->nflush) {
        /* still queued after the last round: keep only the live ones past free_dead */
        int j = 0;
        for (int i = 0; i < w->nflush; i++)
            if (!(w->flushq[i]->flags & CONN_CLOSED))
                w->flushq[j++] = w->flushq[i];
        w->nflush = j;
    }
    free_dead(w);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct srv *srv = w->srv;
    struct epoll_event evs[256];
    struct conn *recvq[256];
    char tname[16];

    snprintf(tname, sizeof(tname), "tc-worker-%d", w->idx);
    pthread_setname_np(pthread_self(), tname);
    uring_init(w);
    w->now_ms = util_now_ms();
    w->next_tick_ms = w->now_ms + 1000 / cfg.hz;
    while (!atomic_load_explicit(&srv->shutdown, memory_order_relaxed)) {
        int64_t until = w->next_tick_ms;
        int nrecv = 0;
        if (w->block_deadline && w->block_deadline < until)
            until = w->block_deadline;
        int timeout = (int)(until - w->now_ms);
        if (atomic_load_explicit(&w->mbox_nonempty, memory_order_relaxed) || w->nflush ||
            w->naof_wait)
            timeout = 0;
        int n = epoll_wait(w->ep, evs, 256, timeout < 0 ? 0 : timeout);
        w->now_ms = util_now_ms();
        atomic_store_explicit(&store_lru_clock, (uint32_t)w->now_ms, memory_order_relaxed);
        for (int i = 0; i < n; i++) {
            uint64_t u = evs[i].data.u64;
            if (is_tag(u)) {
                if (u == TAG_EVENT)
                    handle_kills(w);
                else
                    accept_all(w, (int)(u - TAG_LISTEN - 8));
                continue;
            }
            struct conn *c = evs[i].data.ptr;
            if (c->flags & CONN_CLOSED)
                continue; /* closed earlier in this turn */
            if (evs[i].events & EPOLLOUT) {
                if (w->batching) {
                    flushq_add(w, c);
                } else {
                    if (conn_flush(c)) {
                        worker_close_conn(w, c);
                        continue;
                    }
                    if (conn_pending(c) == 0 || (c->flags & CONN_PAUSED_READ)) {
                        after_io(w, c);
                        continue;
                    }
                }
            }
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) {
                if (c->flags & (CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY)) {
                    if (evs[i].events & (EPOLLERR | EPOLLHUP))
                        worker_close_conn(w, c);
                    continue;
                }
                if (w->batching)
                    recvq[nrecv++] = c;
                else
                    on_readable(w, c);
            }
        }
        if (nrecv == 1)
            on_readable(w, recvq[0]); /* one read(2) costs less than one submission */
        else if (nrecv)
            recv_batch(w, recvq, nrecv);
        if (atomic_load_explicit(&w->mbox_nonempty, memory_order_acquire))
            deliver_mailbox(w);
        if (w->block_deadline && w->now_ms >= w->block_deadline && w->srv->on_timer)
            w->srv->on_timer(w);
        if (w->now_ms >= w->next_tick_ms) {
            tick(w);
            w->next_tick_ms = w->now_ms + 1000 / cfg.hz;
        }
        end_turn(w);
    }
    if (w->nflush)
        flush_batch(w);
    w->batching = 0; /* the drain writes the plain way */
    drain(w);
    free_dead(w);
    uring_exit(w);
    store_thread_exit();
    return NULL;
}

int srv_start(struct srv *srv)
{
    for (int i = 0; i < srv->nworkers; i++) {
        if (pthread_create(&srv->workers[i].tid, NULL, worker_main, &srv->workers[i]))
            return -1;
    }
    return 0;
}

void srv_join(struct srv *srv)
{
    for (int i = 0; i < srv->nworkers; i++)
        pthread_join(srv->workers[i].tid, NULL);
    /* the listening sockets are shared: close them once */
    for (int i = 0; srv->nworkers && i < srv->workers[0].nl; i++)
        close(srv->workers[0].lfd[i]);
}
