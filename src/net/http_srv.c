/* The metrics endpoint's thread (http_srv.h): one poll() loop, nothing shared with the
 * workers but the render callback. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/util.h"
#include "net/http_srv.h"
#include "net/net_int.h"
#include "proto/http.h"

#define MAX_LISTEN 8
#define IDLE_MS 60000    /* a kept-alive connection with nothing to do */
#define PARTIAL_MS 10000 /* a request head still incomplete, or a close still lingering */
#define OUT_MAX (64 << 20) /* pipelined requests wait while this much output is pending */

struct hconn {
    int fd;
    size_t nin;           /* bytes in in[] */
    struct buf out;       /* responses not yet sent */
    int closing;          /* an error was answered: close once out is sent */
    int lingering;        /* output done and shut down: reading to EOF before close */
    int64_t last_ms;      /* last progress (read or write) */
    char in[HTTP_MAX_HEAD];
};

static struct {
    int lfd[MAX_LISTEN];
    int nlisten;
    struct hconn *conns[HTTP_SRV_MAX_CONNS];
    int nconns;
    int wake[2];          /* a byte on wake[1] stops the thread */
    pthread_t tid;
    int running;
    const char *path;
    size_t path_len;
    http_render_fn *render;
    void *ctx;
    struct buf body;      /* the render's output, reused */
} H = {.wake = {-1, -1}};

static void hconn_destroy(struct hconn **pc)
{
    struct hconn *c = *pc;
    if (!c)
        return;
    close(c->fd);
    buf_deinit(&c->out);
    free(c);
    *pc = NULL;
}

static void respond(struct hconn *c, int code, const char *reason, const char *ctype,
                    const char *extra, const char *body, size_t blen, int head_only, int keep,
                    int minor)
{
    char h[512];
    int n = snprintf(h, sizeof(h),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
                     code, reason, ctype, blen, extra,
                     !keep ? "Connection: close\r\n"
                           : minor == 0 ? "Connection: keep-alive\r\n" : "");
    buf_append(&c->out, h, (size_t)n);
    if (!head_only && blen)
        buf_append(&c->out, body, blen);
    if (!keep)
        c->closing = 1;
}

static const char text_plain[] = "text/plain; charset=utf-8";

static void serve(struct hconn *c, const struct http_req *r)
{
    int head = r->method == HTTP_HEAD;

    if (r->path_len != H.path_len || memcmp(r->path, H.path, H.path_len)) {
        respond(c, 404, "Not Found", text_plain, "", "Not Found\n", 10, head, r->keep_alive,
                r->minor);
        return;
    }
    if (r->method == HTTP_OTHER) {
        respond(c, 405, "Method Not Allowed", text_plain, "Allow: GET, HEAD\r\n",
                "Method Not Allowed\n", 19, 0, r->keep_alive, r->minor);
        return;
    }
    H.body.rpos = H.body.wpos = 0;
    if (H.render(&H.body, H.ctx)) {
        respond(c, 500, "Internal Server Error", text_plain, "", "Internal Server Error\n", 22,
                head, 0, r->minor);
        return;
    }
    respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", "",
            H.body.data ? H.body.data + H.body.rpos : "", buf_len(&H.body), head, r->keep_alive,
            r->minor);
    buf_shrink(&H.body, 1 << 20);
}

/* Answer every complete request in c->in (pipelined ones in order) until one closes. */
static void parse_input(struct hconn *c)
{
    while (!c->closing && buf_len(&c->out) < OUT_MAX) {
        struct http_req r;
        size_t used = 0;
        int st = http_parse(c->in, c->nin, &r, &used);
        if (st == HTTP_NEED_MORE)
            return;
        if (st != HTTP_OK) {
            const char *reason;
            int code = http_error_code(st, &reason);
            char body[64];
            int n = snprintf(body, sizeof(body), "%s\n", reason);
            respond(c, code, reason, text_plain, "", body, (size_t)n, 0, 0, 1);
            c->nin = 0;
            return;
        }
        serve(c, &r);
        memmove(c->in, c->in + used, c->nin - used);
        c->nin -= used;
    }
}

/* 0, or -1 when c is to be closed now. */
static int on_readable(struct hconn *c, int64_t now)
{
    for (;;) {
        ssize_t k;
        if (c->lingering) {
            char junk[4096];
            k = read(c->fd, junk, sizeof(junk));
        } else {
            if (c->closing || c->nin == sizeof(c->in))
                return 0;
            k = read(c->fd, c->in + c->nin, sizeof(c->in) - c->nin);
        }
        if (k == 0)
            return -1;
        if (k < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->last_ms = now;
        if (!c->lingering) {
            c->nin += (size_t)k;
            parse_input(c);
        }
    }
}

static int on_writable(struct hconn *c, int64_t now)
{
    while (buf_len(&c->out)) {
        ssize_t k = send(c->fd, c->out.data + c->out.rpos, buf_len(&c->out), MSG_NOSIGNAL);
        if (k < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->out.rpos += (size_t)k;
        c->last_ms = now;
    }
    c->out.rpos = c->out.wpos = 0;
    buf_shrink(&c->out, 16384);
    if (c->closing && !c->lingering) {
        /* the client may still be sending: a close with unread input would reset the
         * connection and could lose the answer, so shut down our side and read to EOF */
        shutdown(c->fd, SHUT_WR);
        c->lingering = 1;
        c->nin = 0;
    } else if (!c->closing) {
        parse_input(c); /* requests that waited for the output to drain */
    }
    return 0;
}

static void accept_all(int lfd, int64_t now)
{
    while (H.nconns < HTTP_SRV_MAX_CONNS) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct hconn *c;
        if (fd < 0)
            return;
        c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            return;
        }
        c->fd = fd;
        c->last_ms = now;
        H.conns[H.nconns++] = c;
    }
}

static void *http_main(void *arg)
{
    struct pollfd pfd[1 + MAX_LISTEN + HTTP_SRV_MAX_CONNS];

    (void)arg;
    pthread_setname_np(pthread_self(), "tc-metrics");
    for (;;) {
        int n = 0, nl, full = H.nconns == HTTP_SRV_MAX_CONNS;
        int64_t now;

        pfd[n++] = (struct pollfd){.fd = H.wake[0], .events = POLLIN};
        for (int i = 0; i < H.nlisten; i++) /* while full, new connections wait in the backlog */
            pfd[n++] = (struct pollfd){.fd = full ? -1 : H.lfd[i], .events = POLLIN};
        nl = n;
        for (int i = 0; i < H.nconns; i++) {
            struct hconn *c = H.conns[i];
            short ev = buf_len(&c->out) ? POLLOUT : 0;
            if (c->lingering || (!c->closing && c->nin < sizeof(c->in) && !buf_len(&c->out)))
                ev |= POLLIN;
            pfd[n++] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        if (poll(pfd, (nfds_t)n, 1000) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            break;
        now = util_now_ms();
        for (int i = 0; i < H.nconns; i++) {
            struct hconn *c = H.conns[i];
            short re = pfd[nl + i].revents;
            int64_t limit = c->nin || c->lingering ? PARTIAL_MS : IDLE_MS;
            int gone = 0;
            if (re & (POLLERR | POLLNVAL))
                gone = 1;
            if (!gone && (re & (POLLIN | POLLHUP)))
                gone = on_readable(c, now) < 0;
            if (!gone && buf_len(&c->out))
                gone = on_writable(c, now) < 0;
            if (!gone && now - c->last_ms > limit)
                gone = 1;
            if (gone)
                hconn_destroy(&H.conns[i]);
        }
        {
            int k = 0; /* drop the closed slots (pfd indexes are not used past here) */
            for (int i = 0; i < H.nconns; i++)
                if (H.conns[i])
                    H.conns[k++] = H.conns[i];
            H.nconns = k;
        }
        for (int i = 1; i < nl; i++)
            if (pfd[i].revents & POLLIN)
                accept_all(pfd[i].fd, now);
    }
    for (int i = 0; i < H.nconns; i++)
        hconn_destroy(&H.conns[i]);
    H.nconns = 0;
    return NULL;
}

static void close_all(void)
{
    for (int i = 0; i < H.nlisten; i++)
        close(H.lfd[i]);
    H.nlisten = 0;
    for (int i = 0; i < 2; i++)
        if (H.wake[i] >= 0) {
            close(H.wake[i]);
            H.wake[i] = -1;
        }
    buf_deinit(&H.body);
}

int http_srv_start(int port, const char *bind, const char *path, http_render_fn *render,
                   void *ctx, char *why, size_t cap)
{
    char words[512], *save = NULL;

    snprintf(words, sizeof(words), "%s", bind && *bind ? bind : "* -::*");
    for (char *a = strtok_r(words, " ", &save); a; a = strtok_r(NULL, " ", &save)) {
        int optional = a[0] == '-', fd;
        const char *host = a + optional;
        char err[128] = "";
        if (!strcmp(host, "*"))
            host = "0.0.0.0";
        else if (!strcmp(host, "::*"))
            host = "::";
        if (H.nlisten == MAX_LISTEN) {
            snprintf(why, cap, "too many bind addresses for the metrics port");
            goto out_close;
        }
        fd = net_bind_inet(host, port, SOCK_STREAM, err, sizeof(err));
        if (fd < 0) {
            if (optional)
                continue;
            snprintf(why, cap, "metrics-port %d on %s: %s", port, host, err);
            goto out_close;
        }
        H.lfd[H.nlisten++] = fd;
    }
    if (!H.nlisten) {
        snprintf(why, cap, "metrics-port %d: no address to listen on", port);
        goto out_close;
    }
    if (pipe2(H.wake, O_CLOEXEC | O_NONBLOCK)) {
        snprintf(why, cap, "pipe: %s", strerror(errno));
        goto out_close;
    }
    H.path = path;
    H.path_len = strlen(path);
    H.render = render;
    H.ctx = ctx;
    if (pthread_create(&H.tid, NULL, http_main, NULL)) {
        snprintf(why, cap, "can't start the metrics thread");
        goto out_close;
    }
    H.running = 1;
    return 0;
out_close:
    close_all();
    return -1;
}

void http_srv_stop(void)
{
    if (!H.running)
        return;
    if (write(H.wake[1], "x", 1) < 0)
        log_warn("metrics: can't wake the endpoint's thread: %s", strerror(errno));
    pthread_join(H.tid, NULL);
    H.running = 0;
    close_all();
}
