/* net: real workers on a loopback port serving a fake line-echo protocol through the hooks of
 * struct srv_proto, driven by plain sockets. Echo of single and pipelined lines, a line split
 * across reads, close after reply, a client closing (on_close), zero-copy output references
 * (released once written), held output (released from before_sleep), maxclients with the
 * protocol's refusal text, the idle timeout as the protocol allows it, the tick and exit
 * hooks, the mailbox. Runs once with io_uring batching and once with read/writev. Links only
 * tc_net, tc_proto and tc_core: net needs nothing of the store or the command layer. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/util.h"
#include "net/conn.h"
#include "net/worker.h"
#include "tap.h"

#define NWORKERS 2
#define BIG (256 * 1024)

static _Atomic int opened, closed, ticks, exits, released, hold_ok, delivered;
static _Atomic(struct conn *) last_conn;
static char big[BIG];

static void ref_release(void *owner)
{
    atomic_fetch_add(&released, 1);
    (void)owner;
}

static void echo_open(struct conn *c)
{
    atomic_fetch_add(&opened, 1);
    c->db = 0; /* the fake protocol's state: 1 while "waiting" (not idle) */
}

/* One line per request: "quit" answers "bye" and closes, "big" answers BIG bytes by
 * reference, "hold" answers "held" with the output held, "wait" makes the connection exempt
 * from the idle timeout, "whoami" makes it the target of mailbox posts; anything else is
 * echoed. */
static void echo_input(struct conn *c)
{
    while (!(c->flags & CONN_CLOSE_AFTER_REPLY)) {
        char *p = c->rbuf.data + c->rbuf.rpos;
        size_t n = buf_len(&c->rbuf);
        char *nl = memchr(p, '\n', n);
        if (!nl)
            break;
        size_t len = (size_t)(nl - p) + 1;
        if (len == 5 && !memcmp(p, "quit\n", 5)) {
            buf_append(&c->wbuf, "bye\n", 4);
            c->flags |= CONN_CLOSE_AFTER_REPLY;
        } else if (len == 4 && !memcmp(p, "big\n", 4)) {
            buf_append(&c->wbuf, "<", 1);
            conn_add_ref(c, big, BIG, big, ref_release);
            buf_append(&c->wbuf, ">\n", 2);
        } else if (len == 5 && !memcmp(p, "hold\n", 5)) {
            buf_append(&c->wbuf, "held\n", 5);
            conn_hold_output(c);
        } else if (len == 5 && !memcmp(p, "wait\n", 5)) {
            c->db = 1;
            buf_append(&c->wbuf, "waiting\n", 8);
        } else if (len == 7 && !memcmp(p, "whoami\n", 7)) {
            atomic_store(&last_conn, c);
            buf_append(&c->wbuf, "you\n", 4);
        } else {
            buf_append(&c->wbuf, p, len);
        }
        c->rbuf.rpos += len;
    }
}

static void echo_close(struct conn *c)
{
    atomic_fetch_add(&closed, 1);
    (void)c;
}

static int echo_may_time_out(struct conn *c)
{
    return !c->db;
}

static void on_tick(struct worker *w)
{
    atomic_fetch_add(&ticks, 1);
    (void)w;
}

static void on_exit_hook(struct worker *w)
{
    atomic_fetch_add(&exits, 1);
    (void)w;
}

static void before_sleep(struct worker *w)
{
    if (atomic_load(&hold_ok))
        worker_release_held(w);
}

static void on_deliver(struct conn *c, void *msg)
{
    buf_append(&c->wbuf, msg, strlen(msg));
    atomic_fetch_add(&delivered, 1);
}

static void on_discard(void *msg)
{
    (void)msg;
}

/* ---- client side ---- */

static int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int dial(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
        close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s), off = 0;
    while (off < n) {
        ssize_t w = write(fd, s + off, n - off);
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

/* Read until want bytes arrived, EOF, or timeout_ms without data. Returns the bytes read;
 * *eof set when the peer closed. */
static size_t recv_some(int fd, char *out, size_t want, int timeout_ms, int *eof)
{
    size_t got = 0;
    *eof = 0;
    while (got < want) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, timeout_ms) <= 0)
            break;
        ssize_t r = read(fd, out + got, want - got);
        if (r == 0) {
            *eof = 1;
            break;
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *eof = 1;
            break;
        }
        got += (size_t)r;
    }
    return got;
}

static void expect(int fd, const char *want, const char *what)
{
    char buf[256];
    int eof;
    size_t n = recv_some(fd, buf, strlen(want), 3000, &eof);
    is_mem(buf, n, want, strlen(want), "%s", what);
}

static int wait_for(_Atomic int *v, int want, int ms)
{
    for (int i = 0; i < ms && atomic_load(v) < want; i++)
        usleep(1000);
    return atomic_load(v);
}

static void run(int uring, int with_timeout)
{
    struct srv srv;
    char buf[BIG + 16];
    int port = free_port(), fd, fd2, eof;
    size_t n;

    diag("io_uring %s%s", uring ? "yes" : "no", with_timeout ? ", idle timeout 1s" : "");
    config_defaults();
    cfg.io_uring = uring;
    cfg.hz = 10;
    cfg.maxclients = 3;
    cfg.timeout = with_timeout;
    atomic_store(&opened, 0);
    atomic_store(&closed, 0);
    atomic_store(&ticks, 0);
    atomic_store(&exits, 0);
    atomic_store(&released, 0);
    atomic_store(&hold_ok, 0);
    atomic_store(&delivered, 0);
    memset(&srv, 0, sizeof(srv));
    srv.nworkers = NWORKERS;
    srv.start_ms = util_now_ms();
    srv.proto[0] = (struct srv_proto){
        .port = port,
        .full_reply = "FULL\n",
        .on_open = echo_open,
        .on_input = echo_input,
        .on_close = echo_close,
        .may_time_out = echo_may_time_out,
    };
    srv.on_tick = on_tick;
    srv.on_exit = on_exit_hook;
    srv.before_sleep = before_sleep;
    srv.on_deliver = on_deliver;
    srv.on_discard = on_discard;
    ok(port > 0 && srv_listen(&srv) == 0, "listen on 127.0.0.1:%d", port);
    ok(srv_start(&srv) == 0, "start %d workers", NWORKERS);

    fd = dial(port);
    ok(fd >= 0, "connect");
    send_all(fd, "hello\n");
    expect(fd, "hello\n", "echo of one line");
    send_all(fd, "a\nbb\nccc\n");
    expect(fd, "a\nbb\nccc\n", "pipelined lines echoed in order");
    send_all(fd, "spl");
    usleep(50000);
    send_all(fd, "it\n");
    expect(fd, "split\n", "a line split across reads");
    send_all(fd, "big\nafter\n");
    n = recv_some(fd, buf, BIG + 3 + 6, 3000, &eof);
    ok(n == BIG + 3 + 6 && buf[0] == '<' && !memcmp(buf + 1, big, BIG) &&
           !memcmp(buf + 1 + BIG, ">\nafter\n", 8),
       "referenced output written in order (%zu bytes)", n);
    is_int(wait_for(&released, 1, 2000), 1, "the reference is released once written");

    /* held output: nothing leaves until before_sleep releases it */
    send_all(fd, "hold\n");
    n = recv_some(fd, buf, 5, 300, &eof);
    is_int(n, 0, "held output is not written");
    atomic_store(&hold_ok, 1);
    for (int i = 0; i < NWORKERS; i++)
        worker_wake(&srv.workers[i]);
    expect(fd, "held\n", "released output is written");
    send_all(fd, "again\n");
    expect(fd, "again\n", "the connection goes on after a release");

    /* mailbox: a post from another thread reaches the connection */
    send_all(fd, "whoami\n");
    expect(fd, "you\n", "whoami");
    {
        struct conn *c = atomic_load(&last_conn);
        int r = worker_post(c->w, c, "posted\n");
        if (r == 1)
            worker_wake(c->w);
        ok(r >= 0, "post to the connection's worker");
        expect(fd, "posted\n", "a mailbox message is written to the connection");
        is_int(atomic_load(&delivered), 1, "on_deliver ran once");
    }

    /* maxclients (3): the fourth is refused with the protocol's text */
    fd2 = dial(port);
    int fd3 = dial(port);
    send_all(fd2, "x\n");
    expect(fd2, "x\n", "second client");
    send_all(fd3, "wait\n");
    expect(fd3, "waiting\n", "third client");
    int fd4 = dial(port);
    n = recv_some(fd4, buf, 64, 3000, &eof);
    is_mem(buf, n, "FULL\n", 5, "a client over maxclients gets full_reply");
    ok(eof, "... and is closed");
    close(fd4);
    is_int(wait_for(&opened, 3, 2000), 3, "on_open ran for each accepted client");

    if (with_timeout) {
        /* fd and fd2 are idle; fd3 is "waiting": the protocol keeps it */
        usleep(1600 * 1000);
        n = recv_some(fd2, buf, 16, 2000, &eof);
        ok(n == 0 && eof, "an idle client is closed after the timeout");
        send_all(fd3, "still\n");
        expect(fd3, "still\n", "a client the protocol exempts stays open");
        close(fd2);
        close(fd);
        fd = dial(port);
        ok(fd >= 0, "reconnect");
    } else {
        /* a client closing: on_close runs */
        close(fd2);
        is_int(wait_for(&closed, 1, 2000), 1, "on_close ran for a client that closed");
    }

    /* close after the reply */
    send_all(fd, "one\nquit\nnever\n");
    n = recv_some(fd, buf, 64, 3000, &eof);
    is_mem(buf, n, "one\nbye\n", 8, "the reply before the close is written");
    ok(eof, "closed after the reply (what followed is not run)");
    close(fd);
    ok(atomic_load(&ticks) > 0, "on_tick ran (%d ticks)", atomic_load(&ticks));

    /* shutdown: the remaining client is closed after the drain */
    srv_request_shutdown(&srv, 0);
    srv_join(&srv);
    n = recv_some(fd3, buf, 16, 3000, &eof);
    ok(eof, "shutdown closes the remaining client");
    close(fd3);
    is_int(atomic_load(&exits), NWORKERS, "on_exit ran on every worker");
    is_int(atomic_load(&closed), atomic_load(&opened), "on_close ran for every opened client");
    if (uring)
        diag("workers batching with io_uring: %d", atomic_load(&srv.uring_workers));
    srv_free(&srv);
}

int main(void)
{
    for (size_t i = 0; i < BIG; i++)
        big[i] = (char)('a' + i % 26);
    run(1, 1);
    run(0, 0);
    return tap_done();
}
