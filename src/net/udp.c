/* The memcached text protocol over UDP (memcached's -U): every worker waits on the same UDP
 * sockets (EPOLLEXCLUSIVE) and runs each datagram as the input of its own pseudo-connection
 * (fd -1, never in the worker's list, never written by the event loop). A datagram starts
 * with memcached's 8-byte frame header: request id, sequence number, datagram count,
 * reserved (big-endian 16-bit each); a request must fit in one datagram (count 1, else it is
 * dropped). Each response (the protocol layer marks where one ends with conn_udp_cut) goes
 * out as its own datagrams of at most 1400 bytes, numbered from 0 with their count, as
 * memcached 1.6 sends them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "net/net_int.h"
#include "net/udp.h"
#include "net/worker.h"
#include "proto/mc_udp.h"

#define UDP_MAX_REQ 65536         /* the largest datagram */
#define UDP_MAX_CUTS 4096         /* responses told apart per datagram (more are merged) */
#define UDP_PER_EVENT 64          /* datagrams read per readiness event */

struct conn_udp {
    size_t cuts[UDP_MAX_CUTS]; /* output offsets where a response ends */
    int ncuts;
    struct buf out;            /* the output gathered into one piece */
};

void conn_udp_cut_slow(struct conn *c)
{
    struct conn_udp *u = c->udp;
    size_t at = conn_pending(c);

    if (u->ncuts < UDP_MAX_CUTS && at > (u->ncuts ? u->cuts[u->ncuts - 1] : 0))
        u->cuts[u->ncuts++] = at;
}

int udp_listen(struct srv *srv)
{
    char why[256];

    for (int p = 0; p < SRV_MAX_PROTO; p++) {
        char addrs[256], *save = NULL, *a;
        if (!srv->proto[p].udp_port)
            continue;
        snprintf(addrs, sizeof(addrs), "%s", cfg.bind[0] ? cfg.bind : "127.0.0.1");
        for (a = strtok_r(addrs, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
            const char *bindaddr = a[0] == '-' ? a + 1 : a;
            int fd;
            if (srv->nudp == SRV_MAX_UDP) {
                log_warn("too many UDP addresses");
                return -1;
            }
            fd = net_bind_inet(bindaddr, srv->proto[p].udp_port, SOCK_DGRAM, why, sizeof(why));
            if (fd < 0) {
                if (a[0] == '-')
                    continue;
                log_warn("Failed to create UDP socket %s:%d: %s", bindaddr,
                         srv->proto[p].udp_port, why);
                return -1;
            }
            srv->udp_fd[srv->nudp] = fd;
            srv->udp_proto[srv->nudp++] = (uint8_t)p;
        }
    }
    for (int i = 0; i < srv->nworkers; i++) {
        for (int u = 0; u < srv->nudp; u++) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE};
            ev.data.u64 = TAG_UDP + (uint64_t)u;
            if (epoll_ctl(srv->workers[i].ep, EPOLL_CTL_ADD, srv->udp_fd[u], &ev))
                return -1;
        }
    }
    return 0;
}

void udp_close(struct srv *srv)
{
    for (int u = 0; u < srv->nudp; u++)
        close(srv->udp_fd[u]);
    srv->nudp = 0;
}

/* The worker's pseudo-connection for protocol proto (created on first use). */
static struct conn *pseudo_conn(struct worker *w, int proto)
{
    struct conn *c = w->udp_conn[proto];

    if (c)
        return c;
    c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->udp = calloc(1, sizeof(struct conn_udp));
    if (!c->udp) {
        free(c);
        return NULL;
    }
    c->fd = -1;
    c->proto = (uint8_t)proto;
    c->w = w;
    c->id = atomic_fetch_add(&w->srv->next_client_id, 1) + 1;
    c->ctime_ms = c->last_ms = w->now_ms;
    snprintf(c->addr, sizeof(c->addr), "udp");
    if (w->srv->proto[proto].on_open)
        w->srv->proto[proto].on_open(c);
    w->udp_conn[proto] = c;
    return c;
}

void udp_worker_exit(struct worker *w)
{
    for (int p = 0; p < SRV_MAX_PROTO; p++) {
        struct conn *c = w->udp_conn[p];
        if (!c)
            continue;
        if (w->srv->proto[p].on_close)
            w->srv->proto[p].on_close(c);
        conn_reset_output(c);
        buf_deinit(&c->rbuf);
        buf_deinit(&c->wbuf);
        free(c->refs);
        buf_deinit(&c->udp->out);
        free(c->udp);
        free(c);
        w->udp_conn[p] = NULL;
    }
}

/* Send out[from, to) as one response: datagrams numbered 0..n-1 of n. */
static void send_response(int fd, const struct sockaddr *to, socklen_t tolen, uint16_t id,
                          const char *p, size_t n)
{
    size_t per = MC_UDP_PER, count = mc_udp_count(n);

    for (size_t i = 0; i < count; i++) { /* (none: empty, or more than 16 bits can number) */
        unsigned char hdr[MC_UDP_HDR];
        size_t len = i + 1 < count ? per : n - i * per;
        struct iovec iov[2] = {{hdr, MC_UDP_HDR}, {(void *)(p + i * per), len}};
        mc_udp_header(hdr, id, (uint16_t)i, (uint16_t)count);
        struct msghdr mh = {.msg_name = (void *)to, .msg_namelen = tolen, .msg_iov = iov,
                            .msg_iovlen = 2};
        if (sendmsg(fd, &mh, 0) < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return;
    }
}

/* Gather c's output into u->out (references included). Returns 0 or -1 (out of memory). */
static int gather(struct conn *c, struct conn_udp *u)
{
    struct iovec iov[CONN_IOV_MAX];

    u->out.rpos = u->out.wpos = 0;
    while (conn_pending(c)) {
        int n = conn_out_iov(c, iov, CONN_IOV_MAX);
        size_t tot = 0;
        for (int i = 0; i < n; i++) {
            if (buf_append(&u->out, iov[i].iov_base, iov[i].iov_len))
                return -1;
            tot += iov[i].iov_len;
        }
        if (conn_sent(c, tot))
            break;
    }
    return 0;
}

static void run_datagram(struct worker *w, struct conn *c, int fd, size_t n,
                         const struct sockaddr *from, socklen_t fromlen)
{
    const struct srv_proto *p = &w->srv->proto[c->proto];
    struct conn_udp *u = c->udp;
    struct mc_udp_frame f;
    int off = mc_udp_parse((const unsigned char *)c->rbuf.data, n, &f);
    size_t from_off = 0;
    uint16_t id;

    if (off < 0)
        return; /* empty, or a request in several datagrams: dropped as memcached does */
    id = f.id;
    c->rbuf.rpos = (size_t)off;
    c->rbuf.wpos = n;
    c->flags = 0;
    c->last_ms = w->now_ms;
    u->ncuts = 0;
    p->on_input(c); /* (an incomplete request is dropped: the layer sees c->udp) */
    c->rbuf.rpos = c->rbuf.wpos = 0;
    if (c->flags & CONN_HOLD_LISTED) {
        for (int i = 0; i < w->nheld; i++)
            if (w->held[i] == c)
                w->held[i] = NULL;
    }
    c->flags = 0;
    if (!conn_pending(c))
        return;
    if (gather(c, u)) {
        conn_reset_output(c);
        return;
    }
    conn_reset_output(c);
    for (int i = 0; i <= u->ncuts; i++) {
        size_t to = i < u->ncuts ? u->cuts[i] : u->out.wpos;
        if (to > u->out.wpos)
            to = u->out.wpos;
        if (to > from_off)
            send_response(fd, from, fromlen, id, u->out.data + from_off, to - from_off);
        if (to > from_off)
            from_off = to;
    }
    STAT_ADD(w->st.net_out, u->out.wpos);
}

void udp_readable(struct worker *w, int ui)
{
    struct srv *srv = w->srv;
    int fd = srv->udp_fd[ui];
    struct conn *c = pseudo_conn(w, srv->udp_proto[ui]);

    if (!c)
        return;
    for (int i = 0; i < UDP_PER_EVENT; i++) {
        struct sockaddr_storage from;
        socklen_t fromlen = sizeof(from);
        ssize_t n;

        c->rbuf.rpos = c->rbuf.wpos = 0;
        if (buf_reserve(&c->rbuf, UDP_MAX_REQ))
            return;
        n = recvfrom(fd, c->rbuf.data, UDP_MAX_REQ, 0, (struct sockaddr *)&from, &fromlen);
        if (n < 0)
            return; /* EAGAIN: drained (another worker may have taken the rest) */
        STAT_ADD(w->st.net_in, (uint64_t)n);
        run_datagram(w, c, fd, (size_t)n, (struct sockaddr *)&from, fromlen);
    }
}
