/* Load engine, see engine.h. Each worker thread owns its clients, sockets,
 * histogram and counters; the only shared state is the read-only spec, the
 * stop flag and the progress counters the main thread reads. */
#define _GNU_SOURCE
#include "engine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#ifdef TB_HAVE_URING
#include <liburing.h>
#endif

#include "proto.h"
#include "util.h"

/* most operations in one io_uring submission (more are done in several) */
#define BATCH_MAX 256

enum req_op { OPK_GET, OPK_SET, OPK_MGET, OPK_INCR, OPK_CMD };

struct pending {
    uint64_t t;      /* intended (open loop) or actual (closed loop) send time, ns */
    uint16_t op;     /* enum req_op */
    uint16_t nkeys;  /* keys asked for by a multi-get */
};

struct client;

struct sock {
    int fd;
    uint32_t host;          /* index into target hosts */
    struct client *cl;      /* owner */
    struct iobuf out, in;   /* request / reply bytes */
    struct pending *ring;   /* in-flight requests, FIFO, cap entries */
    uint32_t cap, head, count;
    int want_out;           /* EPOLLOUT registered */
    int queued;             /* in the worker's flush queue for this turn */
};

struct client {
    struct sock *socks;     /* one per target host */
    uint32_t inflight;      /* requests in flight over all socks */
    uint64_t left;          /* per-client budget, UINT64_MAX = unlimited */
    uint64_t next_due;      /* open loop: intended time of the next request */
    int done;               /* counted in worker ndone */
    int dead;               /* could not (re)connect */
    int batch_open;         /* --pipeline-batch: this fill may send up to the pipeline */
};

struct worker {
    uint32_t id;
    pthread_t th;
    const struct run_spec *spec;
    int epfd;
    struct client *clients;
    uint32_t nclients, ndone;
    uint64_t budget;        /* per-thread budget, UINT64_MAX = unlimited */
    struct wl_state st;
    struct hist hist;
    uint64_t ops, hits, misses, errors, timeouts, conn_errors, sets, gets;
    uint64_t host_reqs[TARGET_MAX_HOSTS];  /* requests sent per target host (no sharing) */
    uint64_t host_keys[TARGET_MAX_HOSTS];  /* keys sent per target host */
    char *mkeys;            /* multi-get on a sharded target: its keys, 128 bytes each */
    uint32_t *mkl;          /* their lengths */
    uint32_t *mhost;        /* their hosts */
    uint64_t t_last;        /* last reply time */
    size_t req_room;        /* worst-case bytes of one request */
    double gap_ns;          /* open loop mean gap per client */
    int stopping;
    _Atomic uint64_t progress;  /* ops, read by the main thread */
    char err[256];
    /* batched I/O: the sockets to read and to flush in this loop turn */
    struct sock **rdq, **flq;
    uint32_t nrd, nfl, qcap;
#ifdef TB_HAVE_URING
    struct io_uring ring;
#endif
    int use_ring;           /* ring set up: a turn's reads (and writes) are one submission */
    int res[BATCH_MAX];     /* results of one submission, by index */
};

static _Atomic int g_stop;
static _Atomic int g_uring_said;  /* said once why there is no io_uring */
static pthread_barrier_t g_barrier;
static uint64_t g_t0;

/* ---- target parsing ---------------------------------------------------- */

static int resolve(const char *hostport, struct sockaddr_storage *ss, socklen_t *len, char *err,
                   size_t errlen)
{
    char host[128];
    snprintf(host, sizeof(host), "%s", hostport);
    char *colon = strrchr(host, ':');
    if (!colon) { snprintf(err, errlen, "missing port in '%s'", hostport); return -1; }
    *colon = 0;
    const char *h = host;
    if (h[0] == '[') { h++; char *rb = strchr(host, ']'); if (rb) *rb = 0; }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(h, colon + 1, &hints, &res);
    if (rc || !res) {
        snprintf(err, errlen, "cannot resolve '%s': %s", hostport, gai_strerror(rc));
        return -1;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int target_parse(struct target *t, const char *spec, enum ketama_layout layout, char *err,
                 size_t errlen)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->url, sizeof(t->url), "%s", spec);
    const char *eq = strchr(spec, '=');
    const char *scheme = strstr(spec, "://");
    const char *url = spec;
    if (eq && (!scheme || eq < scheme)) {
        snprintf(t->name, sizeof(t->name), "%.*s", (int)(eq - spec), spec);
        url = eq + 1;
    }
    if (!strncmp(url, "redis://", 8)) { t->proto = PROTO_RESP; url += 8; }
    else if (!strncmp(url, "memcache://", 11)) { t->proto = PROTO_MC; url += 11; }
    else if (!strncmp(url, "memcached://", 12)) { t->proto = PROTO_MC; url += 12; }
    else if (!strncmp(url, "memcache-binary://", 18)) { t->proto = PROTO_MCBIN; url += 18; }
    else { snprintf(err, errlen, "target '%s': expected redis://, memcache:// or memcache-binary://", spec); return -1; }
    if (!t->name[0])
        snprintf(t->name, sizeof(t->name), "%s", t->proto == PROTO_RESP ? "redis" : "memcached");
    snprintf(t->url, sizeof(t->url), "%s", spec);
    char list[512];
    snprintf(list, sizeof(list), "%s", url);
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (t->nhosts == TARGET_MAX_HOSTS) { snprintf(err, errlen, "too many hosts"); return -1; }
        uint32_t n = t->nhosts;
        while (*tok == ' ') tok++;
        /* twemproxy's "host:port:weight name": the node name follows a space */
        char *sp = strchr(tok, ' ');
        if (sp) {
            *sp = 0;
            char *nm = sp + 1;
            while (*nm == ' ') nm++;
            nm[strcspn(nm, " ")] = 0;
            snprintf(t->names[n], sizeof(t->names[0]), "%s", nm);
        }
        char *slash = strchr(tok, '/');
        if (slash) *slash = 0;
        /* the port follows the bracketed IPv6 address or the first ':'; a second ':' gives
         * the weight */
        char *pc = tok[0] == '[' ? strchr(tok, ']') : tok;
        pc = pc ? strchr(pc, ':') : NULL;
        if (!pc) { snprintf(err, errlen, "missing port in '%s'", tok); return -1; }
        t->weights[n] = 1;
        char *wc = strchr(pc + 1, ':');
        if (wc) {
            char *end;
            unsigned long wt = strtoul(wc + 1, &end, 10);
            if (*end || wt == 0 || wt > 1000000) {
                snprintf(err, errlen, "bad weight in '%s' (HOST:PORT[:WEIGHT][ NAME])", tok);
                return -1;
            }
            t->weights[n] = (uint32_t)wt;
            *wc = 0;
        }
        snprintf(t->hosts[n], sizeof(t->hosts[0]), "%s", tok);
        /* an unresolvable host only fails when connecting (--print-shard needs no DNS) */
        if (resolve(tok, &t->addr[n], &t->addrlen[n], err, errlen)) t->addrlen[n] = 0;
        err[0] = 0;
        t->nhosts++;
    }
    if (!t->nhosts) { snprintf(err, errlen, "target '%s' has no host", spec); return -1; }
    if (t->nhosts > 1) {
        struct ketama_server ks[TARGET_MAX_HOSTS];
        for (uint32_t i = 0; i < t->nhosts; i++) {
            ks[i].hostport = t->hosts[i];
            ks[i].name = t->names[i];
            ks[i].weight = t->weights[i];
        }
        if (ketama_init_servers(&t->ring, layout, ks, t->nhosts)) {
            snprintf(err, errlen, "ketama: out of memory");
            return -1;
        }
    }
    return 0;
}

/* ---- sockets ------------------------------------------------------------ */

static int blocking_exchange(int fd, const char *req, int proto, int nreplies, struct sbuf *out);

static int sock_connect(const struct target *t, uint32_t host, int nonblock, char *err,
                        size_t errlen)
{
    if (!t->addrlen[host]) {
        snprintf(err, errlen, "cannot resolve '%s'", t->hosts[host]);
        return -1;
    }
    int fd = socket(t->addr[host].ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) { snprintf(err, errlen, "socket: %s", strerror(errno)); return -1; }
    if (connect(fd, (const struct sockaddr *)&t->addr[host], t->addrlen[host]) < 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", t->hosts[host], strerror(errno));
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (nonblock) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void sock_events(struct worker *w, struct sock *s, int op)
{
    struct epoll_event ev = {.events = EPOLLIN | (s->want_out ? EPOLLOUT : 0), .data.ptr = s};
    epoll_ctl(w->epfd, op, s->fd, &ev);
}

/* Write pending output; arm EPOLLOUT only when the kernel buffer is full. */
static int sock_flush(struct worker *w, struct sock *s)
{
    while (s->out.off < s->out.len) {
        ssize_t n = write(s->fd, s->out.data + s->out.off, s->out.len - s->out.off);
        if (n > 0) { s->out.off += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!s->want_out) { s->want_out = 1; sock_events(w, s, EPOLL_CTL_MOD); }
            return 0;
        }
        return -1;
    }
    s->out.off = s->out.len = 0;
    if (s->want_out) { s->want_out = 0; sock_events(w, s, EPOLL_CTL_MOD); }
    return 0;
}

/* ---- request generation ------------------------------------------------ */

static void put_key_arg(struct iobuf *b, const char *k, uint32_t kl)
{
    resp_put_arg(b, k, kl);
}

/* A multi-get over a sharded target: one MGET / get per host that holds some of the keys,
 * as nutcracker splits it. Each part is a request of its own (latency, ops, per-host
 * counts); it counts once in gets. key0 is the first key. Returns the last socket used. */
static struct sock *gen_mget_split(struct worker *w, struct client *c, uint64_t t,
                                   const char *key0, uint32_t kl0, uint32_t nkeys)
{
    const struct workload *wl = w->spec->wl;
    const struct target *tg = w->spec->tgt;
    uint32_t cnt[TARGET_MAX_HOSTS] = {0};
    for (uint32_t i = 0; i < nkeys; i++) {
        char *k = w->mkeys + (size_t)i * 128;
        if (i == 0) memcpy(k, key0, kl0), w->mkl[0] = kl0;
        else w->mkl[i] = wl_format_key(wl, wl_next_key(&w->st, wl), k);
        w->mhost[i] = ketama_pick(&tg->ring, k, w->mkl[i]);
        cnt[w->mhost[i]]++;
    }
    struct sock *last = NULL;
    for (uint32_t h = 0; h < tg->nhosts; h++) {
        if (!cnt[h]) continue;
        struct sock *s = &c->socks[h];
        struct iobuf *b = &s->out;
        iobuf_reserve(b, w->req_room);
        if (tg->proto == PROTO_RESP) {
            resp_put_header(b, cnt[h] + 1);
            resp_put_arg(b, "MGET", 4);
        } else {
            iobuf_put(b, "get", 3);
        }
        for (uint32_t i = 0; i < nkeys; i++) {
            if (w->mhost[i] != h) continue;
            const char *k = w->mkeys + (size_t)i * 128;
            if (tg->proto == PROTO_RESP) {
                put_key_arg(b, k, w->mkl[i]);
            } else {
                iobuf_put(b, " ", 1);
                iobuf_put(b, k, w->mkl[i]);
            }
        }
        if (tg->proto != PROTO_RESP) iobuf_put(b, "\r\n", 2);
        struct pending *p = &s->ring[(s->head + s->count) % s->cap];
        p->t = t;
        p->op = OPK_MGET;
        p->nkeys = (uint16_t)cnt[h];
        w->host_reqs[h]++;
        w->host_keys[h] += cnt[h];
        s->count++;
        c->inflight++;
        last = s;
    }
    w->gets++;
    return last;
}

/* Encode one request for client c; returns the socket it went to. */
static struct sock *gen_request(struct worker *w, struct client *c, uint64_t t)
{
    const struct run_spec *sp = w->spec;
    const struct workload *wl = sp->wl;
    const struct target *tg = sp->tgt;
    struct wl_state *st = &w->st;
    char key[128];
    uint32_t kl = 0;
    int op;
    uint32_t nkeys = 1;
    int need_key = wl->mode != WL_CMD || wl->tpl.has_key;
    if (need_key) kl = wl_format_key(wl, wl_next_key(st, wl), key);
    uint32_t h = 0;
    if (tg->nhosts > 1 && kl) h = ketama_pick(&tg->ring, key, kl);
    struct sock *s = &c->socks[h];
    struct iobuf *b = &s->out;
    iobuf_reserve(b, w->req_room);

    switch (wl->mode) {
    case WL_MIXED:
    case WL_INCR:
        if (wl->mode == WL_INCR) op = OPK_INCR;
        else op = wl_next_is_set(st, wl) ? OPK_SET : OPK_GET;
        if (op == OPK_SET) {
            uint32_t vl = wl_next_size(st, wl);
            const char *v = wl->size_kind == SIZE_RECORD ? wl_record(st) : wl_value(st, vl);
            if (tg->proto == PROTO_MCBIN) {
                mcbin_put_set(b, key, kl, v, vl, wl->expiry);
            } else if (tg->proto == PROTO_RESP) {
                resp_put_header(b, wl->expiry ? 5 : 3);
                resp_put_arg(b, "SET", 3);
                put_key_arg(b, key, kl);
                resp_put_arg(b, v, vl);
                if (wl->expiry) {
                    resp_put_arg(b, "EX", 2);
                    resp_put_arg_len(b, (size_t)snprintf(NULL, 0, "%u", wl->expiry));
                    put_u64(b, wl->expiry);
                    resp_put_crlf(b);
                }
            } else {
                iobuf_put(b, "set ", 4);
                iobuf_put(b, key, kl);
                iobuf_put(b, " 0 ", 3);
                put_u64(b, wl->expiry);
                iobuf_put(b, " ", 1);
                put_u64(b, vl);
                iobuf_put(b, "\r\n", 2);
                iobuf_put(b, v, vl);
                iobuf_put(b, "\r\n", 2);
            }
            w->sets++;
        } else {
            const char *cmd = op == OPK_GET ? "GET" : "INCR";
            if (tg->proto == PROTO_RESP) {
                resp_put_header(b, 2);
                resp_put_arg(b, cmd, strlen(cmd));
                put_key_arg(b, key, kl);
            } else if (tg->proto == PROTO_MCBIN) {
                mcbin_put_get(b, key, kl);
            } else if (op == OPK_GET) {
                iobuf_put(b, "get ", 4);
                iobuf_put(b, key, kl);
                iobuf_put(b, "\r\n", 2);
            } else {
                iobuf_put(b, "incr ", 5);
                iobuf_put(b, key, kl);
                iobuf_put(b, " 1\r\n", 4);
            }
            if (op == OPK_GET) w->gets++;
        }
        break;
    case WL_MGET:
        op = OPK_MGET;
        nkeys = wl->mget_keys ? wl->mget_keys : 1;
        if (tg->nhosts > 1) return gen_mget_split(w, c, t, key, kl, nkeys);
        if (tg->proto == PROTO_RESP) {
            resp_put_header(b, nkeys + 1);
            resp_put_arg(b, "MGET", 4);
            put_key_arg(b, key, kl);
            for (uint32_t i = 1; i < nkeys; i++) {
                kl = wl_format_key(wl, wl_next_key(st, wl), key);
                put_key_arg(b, key, kl);
            }
        } else {
            iobuf_put(b, "get ", 4);
            iobuf_put(b, key, kl);
            for (uint32_t i = 1; i < nkeys; i++) {
                kl = wl_format_key(wl, wl_next_key(st, wl), key);
                iobuf_put(b, " ", 1);
                iobuf_put(b, key, kl);
            }
            iobuf_put(b, "\r\n", 2);
        }
        w->gets++;
        break;
    case WL_CMD:
    default: {
        op = OPK_CMD;
        const struct tpl *tp = &wl->tpl;
        uint32_t vl = 0;
        const char *v = NULL;
        char rnd[12];
        int have_rnd = 0;
        if (!tp->inline_cmd) resp_put_header(b, tp->nargs);
        for (uint32_t a = 0; a < tp->nargs; a++) {
            const struct tpl_arg *ar = &tp->args[a];
            size_t len = 0;
            for (uint32_t i = 0; i < ar->nparts; i++) {
                switch (ar->parts[i].kind) {
                case TPL_LIT: len += ar->parts[i].len; break;
                case TPL_KEY: len += kl; break;
                case TPL_DATA:
                    if (!v) {
                        vl = wl_next_size(st, wl);
                        v = wl->size_kind == SIZE_RECORD ? wl_record(st) : wl_value(st, vl);
                    }
                    len += vl;
                    break;
                case TPL_RAND:
                    if (!have_rnd) {
                        wl_fmt12(wl->rand_max ? wl_rand(st) % (wl->rand_max + 1) : 0, rnd);
                        have_rnd = 1;
                    }
                    len += 12;
                    break;
                }
            }
            if (tp->inline_cmd) { if (a) iobuf_put(b, " ", 1); }
            else resp_put_arg_len(b, len);

            for (uint32_t i = 0; i < ar->nparts; i++) {
                switch (ar->parts[i].kind) {
                case TPL_LIT: iobuf_put(b, ar->parts[i].lit, ar->parts[i].len); break;
                case TPL_KEY: iobuf_put(b, key, kl); break;
                case TPL_DATA: iobuf_put(b, v, vl); break;
                case TPL_RAND: iobuf_put(b, rnd, 12); break;
                }
            }
            if (!tp->inline_cmd || a + 1 == tp->nargs) resp_put_crlf(b);
        }
        break;
    }
    }
    struct pending *p = &s->ring[(s->head + s->count) % s->cap];
    p->t = t;
    p->op = (uint16_t)op;
    p->nkeys = (uint16_t)nkeys;
    w->host_reqs[h]++;
    w->host_keys[h] += need_key ? nkeys : 0;
    s->count++;
    c->inflight++;
    return s;
}

/* ---- batched socket I/O ----------------------------------------------------
 * Requests are not written when they are generated: their socket is queued, and the end of
 * the loop turn writes every queued socket. With io_uring (the default when it can be set up)
 * one submission reads every readable socket of the turn and one more writes every queued
 * socket; each operation carries MSG_DONTWAIT, so it completes during the submission exactly
 * as the read or write it replaces, and buffers are only lent for that call. A turn with one
 * socket uses plain read / write. At P=1 this takes the client's two system calls per request
 * (~1.2 us each on this kind of virtual machine) down to about two per turn. */
static void sock_queue(struct worker *w, struct sock *s)
{
    if (!s->queued) {
        s->queued = 1;
        w->flq[w->nfl++] = s;
    }
}

static void ring_setup(struct worker *w)
{
#ifdef TB_HAVE_URING
    if (w->spec->no_uring) return;
    static const unsigned flagsets[] = {
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN,
        IORING_SETUP_SUBMIT_ALL, 0};
    int r = -ENOSYS;
    for (size_t i = 0; i < sizeof(flagsets) / sizeof(flagsets[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = flagsets[i];
        r = io_uring_queue_init_params(BATCH_MAX, &w->ring, &p);
        if (r == 0) {
            w->use_ring = 1;
            return;
        }
    }
    if (!atomic_exchange(&g_uring_said, 1))
        fprintf(stderr, "twinbench: io_uring is not available (%s): using read and write\n",
                strerror(-r));
#else
    if (!w->spec->no_uring && !atomic_exchange(&g_uring_said, 1))
        fprintf(stderr, "twinbench: built without liburing: using read and write\n");
    (void)w;
#endif
}

static void ring_teardown(struct worker *w)
{
#ifdef TB_HAVE_URING
    if (w->use_ring) io_uring_queue_exit(&w->ring);
#endif
    w->use_ring = 0;
}

#ifdef TB_HAVE_URING
/* Submit the n queued operations and collect each result into w->res[index]; an operation
 * that was not submitted keeps INT_MIN and is done the plain way by the caller. After a
 * failed submission the worker stops using the ring (what it still holds is never submitted). */
static void ring_run(struct worker *w, uint32_t n)
{
    for (uint32_t j = 0; j < n; j++) w->res[j] = INT_MIN;
    if (!n) return;
    int r = io_uring_submit(&w->ring);
    if (r != (int)n) w->use_ring = 0;
    for (int got = 0; got < r; got++) {
        struct io_uring_cqe *cqe;
        int e = io_uring_wait_cqe(&w->ring, &cqe);
        if (e == -EINTR) { got--; continue; }
        if (e < 0) {
            /* cannot happen with MSG_DONTWAIT operations, which complete during the submit */
            fprintf(stderr, "twinbench: io_uring_wait_cqe: %s\n", strerror(-e));
            abort();
        }
        uint64_t i = io_uring_cqe_get_data64(cqe);
        if (i < n) w->res[i] = cqe->res;
        io_uring_cqe_seen(&w->ring, cqe);
    }
}
#endif

/* Write every queued socket (see above). A partial write is finished the plain way, which
 * arms EPOLLOUT when the kernel buffer is full; a write error shows up on the next read. */
static void flush_batch(struct worker *w)
{
    uint32_t i = 0;
    while (i < w->nfl) {
#ifdef TB_HAVE_URING
        if (w->use_ring && w->nfl - i >= 2) {
            struct sock *b[BATCH_MAX];
            uint32_t n = 0;
            for (; i < w->nfl && n < BATCH_MAX; i++) {
                struct sock *s = w->flq[i];
                s->queued = 0;
                if (s->fd < 0 || s->want_out || s->out.off >= s->out.len) continue;
                struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
                io_uring_prep_send(sqe, s->fd, s->out.data + s->out.off, s->out.len - s->out.off,
                                   MSG_DONTWAIT | MSG_NOSIGNAL);
                io_uring_sqe_set_data64(sqe, n);
                b[n++] = s;
            }
            ring_run(w, n);
            for (uint32_t j = 0; j < n; j++) {
                struct sock *s = b[j];
                int r = w->res[j];
                if (r > 0) s->out.off += (size_t)r;
                if (s->out.off == s->out.len) {
                    s->out.off = s->out.len = 0;
                } else if (r == -EAGAIN) {
                    s->want_out = 1;
                    sock_events(w, s, EPOLL_CTL_MOD);
                } else if (r > 0 || r == -EINTR || r == INT_MIN) {
                    if (sock_flush(w, s) < 0) { /* reported on read */ }
                }
            }
            continue;
        }
#endif
        struct sock *s = w->flq[i++];
        s->queued = 0;
        if (s->fd >= 0 && !s->want_out && s->out.off < s->out.len)
            if (sock_flush(w, s) < 0) { /* reported on read */ }
    }
    w->nfl = 0;
}

static int client_can_send(struct worker *w, struct client *c)
{
    return !w->stopping && !c->dead && c->left && w->budget &&
           c->inflight < w->spec->pipeline &&
           (!w->spec->pipeline_batch || w->spec->rate > 0 || c->batch_open);
}

static void client_take_budget(struct worker *w, struct client *c)
{
    if (c->left != UINT64_MAX) c->left--;
    if (w->budget != UINT64_MAX) w->budget--;
}

static double next_gap(struct worker *w)
{
    if (!w->spec->poisson) return w->gap_ns;
    double u = wl_rand01(&w->st);
    if (u < 1e-12) u = 1e-12;
    return -log(u) * w->gap_ns;
}

static void client_check_done(struct worker *w, struct client *c)
{
    if (!c->done && c->inflight == 0 && !client_can_send(w, c) &&
        (c->dead || w->stopping || !c->left || !w->budget)) {
        c->done = 1;
        w->ndone++;
    }
}

static void client_fill(struct worker *w, struct client *c, uint64_t now)
{
    const struct target *tg = w->spec->tgt;
    int sent = 0;
    if (w->spec->rate <= 0) {
        /* --pipeline-batch: a new batch only once the last one is fully answered */
        c->batch_open = c->inflight == 0;
        while (client_can_send(w, c)) {
            gen_request(w, c, now);
            client_take_budget(w, c);
            sent = 1;
        }
        c->batch_open = 0;
    } else {
        while (c->next_due <= now && client_can_send(w, c)) {
            gen_request(w, c, c->next_due);
            client_take_budget(w, c);
            c->next_due += (uint64_t)next_gap(w);
            sent = 1;
        }
    }
    if (sent)
        for (uint32_t h = 0; h < tg->nhosts; h++)
            if (c->socks[h].out.len > c->socks[h].out.off) sock_queue(w, &c->socks[h]);
    client_check_done(w, c);
}

/* Drop a broken socket: its in-flight requests count as failed (or timed out). */
static void sock_reset(struct worker *w, struct sock *s, int timed_out)
{
    struct client *c = s->cl;
    if (timed_out) w->timeouts += s->count;
    else w->conn_errors += s->count;
    c->inflight -= s->count;
    s->count = s->head = 0;
    s->out.off = s->out.len = 0;
    s->in.off = s->in.len = 0;
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, s->fd, NULL);
    close(s->fd);
    s->fd = -1;
    s->want_out = 0;
    char err[256];
    int fd = w->stopping ? -1 : sock_connect(w->spec->tgt, s->host, 1, err, sizeof(err));
    if (fd < 0) {
        c->dead = 1;
        return;
    }
    s->fd = fd;
    sock_events(w, s, EPOLL_CTL_ADD);
}

static void on_reply(struct worker *w, struct sock *s, const struct reply_info *ri, uint64_t now)
{
    struct pending *p = &s->ring[s->head];
    s->head = (s->head + 1) % s->cap;
    s->count--;
    s->cl->inflight--;
    uint64_t lat = now > p->t ? now - p->t : 0;
    hist_record(&w->hist, lat);
    w->ops++;
    if (ri->error) { w->errors++; return; }
    switch (p->op) {
    case OPK_GET:
        if (w->spec->tgt->proto == PROTO_RESP ? ri->nils > 0 : ri->elems == 0) w->misses++;
        else w->hits++;
        break;
    case OPK_MGET:
        if (w->spec->tgt->proto == PROTO_RESP) {
            w->hits += ri->elems - ri->nils;
            w->misses += ri->nils;
        } else {
            w->hits += ri->elems;
            w->misses += p->nkeys > ri->elems ? p->nkeys - ri->elems : 0;
        }
        break;
    case OPK_CMD:
    case OPK_INCR:
        if (ri->nils && !ri->is_array) w->misses++;
        else if (p->op == OPK_CMD) w->hits++;
        break;
    default:
        break;
    }
}

static void sock_reserve(struct sock *s)
{
    struct iobuf *in = &s->in;
    if (in->cap - in->len < 4096) iobuf_reserve(in, in->cap); /* only grows for huge replies */
}

/* n bytes (or -1 with err) were read into s->in: handle the complete replies, send more. */
static void sock_input(struct worker *w, struct sock *s, ssize_t n, int err)
{
    struct iobuf *in = &s->in;
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR)) return;
    if (n <= 0) { sock_reset(w, s, 0); client_check_done(w, s->cl); return; }
    in->len += (size_t)n;
    uint64_t now = tb_now_ns();
    int proto = w->spec->tgt->proto;
    while (in->off < in->len && s->count) {
        struct reply_info ri;
        size_t used = 0;
        int rc = proto == PROTO_RESP
                     ? resp_parse_reply(in->data + in->off, in->len - in->off, &used, &ri)
                 : proto == PROTO_MCBIN
                     ? mcbin_parse_reply(in->data + in->off, in->len - in->off, &used, &ri)
                     : mc_parse_reply(in->data + in->off, in->len - in->off, &used, &ri);
        if (rc == REPLY_NEED_MORE) break;
        if (rc != REPLY_OK) {
            snprintf(w->err, sizeof(w->err), "protocol error from %s", w->spec->tgt->hosts[s->host]);
            sock_reset(w, s, 0);
            client_check_done(w, s->cl);
            return;
        }
        in->off += used;
        on_reply(w, s, &ri, now);
    }
    if (in->off == in->len) in->off = in->len = 0;
    else if (in->off > in->cap / 2) {
        memmove(in->data, in->data + in->off, in->len - in->off);
        in->len -= in->off;
        in->off = 0;
    }
    w->t_last = now;
    atomic_store_explicit(&w->progress, w->ops, memory_order_relaxed);
    client_fill(w, s->cl, now);
}

static void sock_read(struct worker *w, struct sock *s)
{
    sock_reserve(s);
    ssize_t n = read(s->fd, s->in.data + s->in.len, s->in.cap - s->in.len);
    sock_input(w, s, n, n < 0 ? errno : 0);
}

/* Read every socket of the turn's read queue (see flush_batch), then handle their input in
 * order. */
static void read_batch(struct worker *w)
{
    uint32_t i = 0;
    while (i < w->nrd) {
#ifdef TB_HAVE_URING
        if (w->use_ring && w->nrd - i >= 2) {
            struct sock *b[BATCH_MAX];
            uint32_t n = 0;
            for (; i < w->nrd && n < BATCH_MAX; i++) {
                struct sock *s = w->rdq[i];
                if (s->fd < 0) continue;
                sock_reserve(s);
                struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
                io_uring_prep_recv(sqe, s->fd, s->in.data + s->in.len, s->in.cap - s->in.len,
                                   MSG_DONTWAIT);
                io_uring_sqe_set_data64(sqe, n);
                b[n++] = s;
            }
            ring_run(w, n);
            for (uint32_t j = 0; j < n; j++) {
                int r = w->res[j];
                if (b[j]->fd < 0) continue;
                if (r == INT_MIN) sock_read(w, b[j]);
                else sock_input(w, b[j], r < 0 ? -1 : r, r < 0 ? -r : 0);
            }
            continue;
        }
#endif
        struct sock *s = w->rdq[i++];
        if (s->fd >= 0) sock_read(w, s);
    }
    w->nrd = 0;
}

static void check_timeouts(struct worker *w, uint64_t now)
{
    uint64_t lim = (uint64_t)(w->spec->timeout_ms * 1e6);
    const struct target *tg = w->spec->tgt;
    for (uint32_t i = 0; i < w->nclients; i++) {
        struct client *c = &w->clients[i];
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            struct sock *s = &c->socks[h];
            if (s->fd >= 0 && s->count && now > s->ring[s->head].t + lim) {
                sock_reset(w, s, 1);
                client_fill(w, c, now);
            }
        }
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const struct run_spec *sp = w->spec;
    struct epoll_event evs[256];
    ring_setup(w);
    pthread_barrier_wait(&g_barrier);
    uint64_t now = tb_now_ns();
    for (uint32_t i = 0; i < w->nclients; i++) {
        struct client *c = &w->clients[i];
        /* spread first arrivals so clients do not fire in lockstep */
        c->next_due = now + (uint64_t)(wl_rand01(&w->st) * w->gap_ns);
        client_fill(w, c, now);
    }
    flush_batch(w);
    uint64_t last_tcheck = now, stop_at = 0;
    while (w->ndone < w->nclients) {
        int timeout_ms = 100;
        struct timespec ts = {0, 100 * 1000000L};
        if (sp->rate > 0) {
            uint64_t best = UINT64_MAX;
            for (uint32_t i = 0; i < w->nclients; i++) {
                struct client *c = &w->clients[i];
                if (client_can_send(w, c) && c->next_due < best) best = c->next_due;
            }
            now = tb_now_ns();
            if (best != UINT64_MAX) {
                uint64_t d = best > now ? best - now : 0;
                if (d < 100000000ull) { ts.tv_sec = 0; ts.tv_nsec = (long)d; }
            }
            timeout_ms = -2;
        }
        int n = timeout_ms == -2 ? epoll_pwait2(w->epfd, evs, 256, &ts, NULL)
                                 : epoll_wait(w->epfd, evs, 256, timeout_ms);
        for (int i = 0; i < n; i++) {
            struct sock *s = evs[i].data.ptr;
            if (s->fd < 0) continue;
            if (evs[i].events & EPOLLOUT) {
                if (sock_flush(w, s) < 0) { sock_reset(w, s, 0); client_check_done(w, s->cl); continue; }
            }
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) w->rdq[w->nrd++] = s;
        }
        read_batch(w);
        now = tb_now_ns();
        if (sp->rate > 0)
            for (uint32_t i = 0; i < w->nclients; i++) client_fill(w, &w->clients[i], now);
        if (!w->stopping && atomic_load_explicit(&g_stop, memory_order_relaxed)) {
            w->stopping = 1;
            stop_at = now;
            for (uint32_t i = 0; i < w->nclients; i++) client_check_done(w, &w->clients[i]);
        }
        if (sp->timeout_ms > 0 && now - last_tcheck > 1000000ull) {
            check_timeouts(w, now);
            last_tcheck = now;
        }
        flush_batch(w);
        /* after a stop, in-flight replies get a bounded grace period */
        uint64_t grace = sp->timeout_ms > 0 ? (uint64_t)(sp->timeout_ms * 1e6) : 5000000000ull;
        if (w->stopping && now - stop_at > grace) {
            for (uint32_t i = 0; i < w->nclients; i++) {
                struct client *c = &w->clients[i];
                for (uint32_t h = 0; h < sp->tgt->nhosts; h++) {
                    w->timeouts += c->socks[h].count;
                    c->socks[h].count = 0;
                }
                c->inflight = 0;
                client_check_done(w, c);
            }
        }
    }
    atomic_store_explicit(&w->progress, w->ops, memory_order_relaxed);
    ring_teardown(w);
    return NULL;
}

static void worker_free(struct worker *w, uint32_t nhosts)
{
    if (w->clients) {
        for (uint32_t i = 0; i < w->nclients; i++) {
            struct client *c = &w->clients[i];
            if (!c->socks) continue;
            for (uint32_t h = 0; h < nhosts; h++) {
                struct sock *s = &c->socks[h];
                if (s->fd >= 0) close(s->fd);
                iobuf_deinit(&s->in);
                iobuf_deinit(&s->out);
                free(s->ring);
            }
            free(c->socks);
        }
        free(w->clients);
    }
    if (w->epfd >= 0) close(w->epfd);
    free(w->mkeys);
    free(w->mkl);
    free(w->mhost);
    free(w->rdq);
    free(w->flq);
    hist_deinit(&w->hist);
}

static size_t request_room(const struct workload *wl)
{
    size_t keyroom = 32 + strlen(wl->key_prefix) + 24;
    size_t room = 128 + wl_max_size(wl) + keyroom * (wl->mode == WL_MGET ? wl->mget_keys + 1 : 1);
    if (wl->mode == WL_CMD) {
        room += 16 * wl->tpl.nargs;
        for (uint32_t a = 0; a < wl->tpl.nargs; a++)
            for (uint32_t i = 0; i < wl->tpl.args[a].nparts; i++)
                room += wl->tpl.args[a].parts[i].len + keyroom + 16 + wl_max_size(wl);
    }
    return room;
}

static void draw_progress(const struct run_spec *sp, uint64_t done, uint64_t total, double el,
                          double frac)
{
    int width = 30, fill = (int)(frac * width + 0.5);
    if (fill > width) fill = width;
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    char tot[32] = "";
    if (total) snprintf(tot, sizeof(tot), "/%llu", (unsigned long long)total);
    fprintf(stderr, "\r%-24.24s [%s] %3.0f%% %llu%s ops %.0f ops/s  ", sp->label ? sp->label : "",
            bar, frac * 100, (unsigned long long)done, tot, el > 0 ? (double)done / el : 0.0);
    fflush(stderr);
}

/* CPU seconds used so far by process pid: the sum of its threads' run time, in ns, from
 * /proc/PID/task/TID/schedstat (exact); utime + stime from /proc/PID/stat (clock ticks, 10 ms
 * here) when that cannot be read. -1 when the process is gone. */
static double one_pid_cpu_s(int pid)
{
    char path[300], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (d) {
        double sum = 0;
        int ok = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof(path), "/proc/%d/task/%.32s/schedstat", pid, e->d_name);
            FILE *f = fopen(path, "r");
            if (!f) continue;
            unsigned long long ns;
            if (fscanf(f, "%llu", &ns) == 1) {
                sum += (double)ns / 1e9;
                ok = 1;
            }
            fclose(f);
        }
        closedir(d);
        if (ok) return sum;
    }
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    unsigned long long ut = 0, stt = 0;
    /* fields after ')': state(3) ... utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stt) != 2)
        return -1;
    return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
}

static double pid_cpu_s(const struct target *t)
{
    if (!t->npids) return -1;
    double sum = 0;
    for (uint32_t i = 0; i < t->npids; i++) {
        double c = one_pid_cpu_s(t->pids[i]);
        if (c < 0) return -1;
        sum += c;
    }
    return sum;
}

/* Which host the ring gives each key of the workload's key range (at most 1M keys looked
 * up, evenly spaced), so a report can show the key distribution next to the requests. */
static void keyspace_share(const struct target *tg, const struct workload *wl,
                           struct run_result *res)
{
    if (wl->mode == WL_CMD && !wl->tpl.has_key) return;
    uint64_t range = wl->key_max - wl->key_min + 1;
    uint64_t n = range < 1000000 ? range : 1000000;
    char key[128];
    for (uint64_t i = 0; i < n; i++) {
        uint64_t kn = wl->key_min + (range == n ? i : (uint64_t)((double)i * (double)range / (double)n));
        uint32_t kl = wl_format_key(wl, kn, key);
        res->host_keyspace[ketama_pick(&tg->ring, key, kl)]++;
    }
    res->keyspace_sampled = n;
}

int engine_run(const struct run_spec *sp, struct run_result *res)
{
    memset(res, 0, sizeof(*res));
    if (hist_init(&res->hist)) { snprintf(res->error, sizeof(res->error), "out of memory"); return -1; }
    snprintf(res->label, sizeof(res->label), "%s", sp->label ? sp->label : "");
    uint32_t T = sp->threads ? sp->threads : 1;
    uint32_t C = sp->conns ? sp->conns : T;
    if (T > C) T = C;
    uint32_t P = sp->pipeline ? sp->pipeline : 1;
    res->threads = T;
    res->conns = C;
    res->pipeline = P;
    res->requests_per_conn = sp->requests_per_conn;
    res->rate = sp->rate;
    const struct target *tg = sp->tgt;
    if (sp->wl->mode == WL_CMD && tg->proto != PROTO_RESP) {
        snprintf(res->error, sizeof(res->error), "--command needs a redis:// target");
        return -1;
    }
    if (tg->proto == PROTO_MCBIN && sp->wl->mode != WL_MIXED) {
        snprintf(res->error, sizeof(res->error), "memcache-binary:// runs get/set workloads only");
        return -1;
    }
    struct worker *ws = tb_xcalloc(T, sizeof(*ws));
    size_t room = request_room(sp->wl);
    int rc = 0;
    atomic_store(&g_stop, 0);
    for (uint32_t t = 0; t < T; t++) {
        struct worker *w = &ws[t];
        w->id = t;
        w->spec = sp;
        w->epfd = -1;
        w->req_room = room;
        w->nclients = C / T + (t < C % T ? 1 : 0);
        w->budget = UINT64_MAX;
        if (sp->total_requests) w->budget = sp->total_requests / T + (t < sp->total_requests % T ? 1 : 0);
        if (sp->rate > 0) w->gap_ns = 1e9 * (double)C / sp->rate;
        wl_state_init(&w->st, sp->wl, t, T, sp->seed + 1);
        if (hist_init(&w->hist)) { snprintf(res->error, sizeof(res->error), "out of memory"); rc = -1; break; }
        w->epfd = epoll_create1(EPOLL_CLOEXEC);
        if (sp->wl->mode == WL_MGET && tg->nhosts > 1) {
            uint32_t nk = sp->wl->mget_keys ? sp->wl->mget_keys : 1;
            w->mkeys = tb_xcalloc(nk, 128);
            w->mkl = tb_xcalloc(nk, sizeof(uint32_t));
            w->mhost = tb_xcalloc(nk, sizeof(uint32_t));
        }
        w->clients = tb_xcalloc(w->nclients, sizeof(struct client));
        w->qcap = w->nclients * tg->nhosts;
        w->rdq = tb_xcalloc(w->qcap > 256 ? w->qcap : 256, sizeof(struct sock *));
        w->flq = tb_xcalloc(w->qcap ? w->qcap : 1, sizeof(struct sock *));
        for (uint32_t i = 0; i < w->nclients && !rc; i++) {
            struct client *c = &w->clients[i];
            c->left = sp->requests_per_conn ? sp->requests_per_conn : UINT64_MAX;
            c->socks = tb_xcalloc(tg->nhosts, sizeof(struct sock));
            for (uint32_t h = 0; h < tg->nhosts; h++) c->socks[h].fd = -1;
            for (uint32_t h = 0; h < tg->nhosts; h++) {
                struct sock *s = &c->socks[h];
                s->host = h;
                s->cl = c;
                s->cap = P;
                s->ring = tb_xcalloc(P, sizeof(struct pending));
                if (iobuf_init(&s->out, room * P + 4096) || iobuf_init(&s->in, 65536)) {
                    snprintf(res->error, sizeof(res->error), "out of memory");
                    rc = -1;
                    break;
                }
                s->fd = sock_connect(tg, h, !sp->conn_init, res->error, sizeof(res->error));
                if (s->fd < 0) { rc = -1; break; }
                if (sp->conn_init) {
                    char req[512];
                    snprintf(req, sizeof(req), "%s\r\n", sp->conn_init);
                    if (blocking_exchange(s->fd, req, PROTO_RESP, 1, NULL)) {
                        snprintf(res->error, sizeof(res->error), "--conn-init: no reply");
                        rc = -1;
                        break;
                    }
                    fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
                }
                sock_events(w, s, EPOLL_CTL_ADD);
            }
        }
        if (rc) break;
    }
    if (rc) {
        for (uint32_t t = 0; t < T; t++) worker_free(&ws[t], tg->nhosts);
        free(ws);
        return -1;
    }
    if (tg->nhosts > 1) keyspace_share(tg, sp->wl, res);
    double scpu0 = pid_cpu_s(tg);
    uint64_t cpu0 = tb_cpu_ns();
    pthread_barrier_init(&g_barrier, NULL, T + 1);
    for (uint32_t t = 0; t < T; t++) pthread_create(&ws[t].th, NULL, worker_main, &ws[t]);
    g_t0 = tb_now_ns();
    pthread_barrier_wait(&g_barrier);
    int tty = sp->progress && isatty(STDERR_FILENO);
    uint64_t total = sp->total_requests ? sp->total_requests
                     : sp->requests_per_conn ? sp->requests_per_conn * C : 0;
    int stopped = 0;
    uint8_t *joined = tb_xcalloc(T, 1);
    for (;;) {
        struct timespec nap = {0, 50 * 1000000L};
        nanosleep(&nap, NULL);
        uint64_t now = tb_now_ns();
        double el = (double)(now - g_t0) / 1e9;
        if (sp->duration > 0 && el >= sp->duration && !stopped) {
            atomic_store(&g_stop, 1);
            stopped = 1;
        }
        /* threads finish on their own once their budget is spent or after stop */
        int finished = 1;
        uint64_t done = 0;
        for (uint32_t t = 0; t < T; t++) {
            done += atomic_load_explicit(&ws[t].progress, memory_order_relaxed);
            if (!joined[t] && pthread_tryjoin_np(ws[t].th, NULL) == 0) joined[t] = 1;
            if (!joined[t]) finished = 0;
        }
        if (tty) {
            double frac = sp->duration > 0 ? el / sp->duration : total ? (double)done / (double)total : 0;
            if (total && sp->duration > 0 && (double)done / (double)total > frac) frac = (double)done / (double)total;
            draw_progress(sp, done, total, el, frac > 1 ? 1 : frac);
        }
        if (finished) break;
    }
    free(joined);
    if (tty) fprintf(stderr, "\r%*s\r", 100, "");
    uint64_t cpu1 = tb_cpu_ns();
    double scpu1 = pid_cpu_s(tg);
    pthread_barrier_destroy(&g_barrier);
    uint64_t t_last = g_t0;
    for (uint32_t t = 0; t < T; t++) {
        struct worker *w = &ws[t];
        hist_merge(&res->hist, &w->hist);
        res->ops += w->ops;
        res->hits += w->hits;
        res->misses += w->misses;
        res->errors += w->errors;
        res->timeouts += w->timeouts;
        res->conn_errors += w->conn_errors;
        res->sets += w->sets;
        res->gets += w->gets;
        for (uint32_t h = 0; h < tg->nhosts; h++) {
            res->host_reqs[h] += w->host_reqs[h];
            res->host_keys[h] += w->host_keys[h];
        }
        if (w->t_last > t_last) t_last = w->t_last;
        if (w->err[0] && !res->error[0]) snprintf(res->error, sizeof(res->error), "%s", w->err);
        worker_free(w, tg->nhosts);
    }
    free(ws);
    res->elapsed_s = (double)(t_last - g_t0) / 1e9;
    res->ops_per_sec = res->elapsed_s > 0 ? (double)res->ops / res->elapsed_s : 0;
    res->client_cpu_s = (double)(cpu1 - cpu0) / 1e9;
    res->server_cpu_s = scpu0 >= 0 && scpu1 >= 0 ? scpu1 - scpu0 : -1;
    if (res->ops == 0 && !res->error[0]) snprintf(res->error, sizeof(res->error), "no replies");
    return res->ops ? 0 : -1;
}

void run_result_deinit(struct run_result *res)
{
    hist_deinit(&res->hist);
}

/* ---- blocking helpers for setup (INFO, stats, flush) ------------------- */

static int blocking_exchange(int fd, const char *req, int proto, int nreplies, struct sbuf *out)
{
    size_t rl = strlen(req);
    if (write(fd, req, rl) != (ssize_t)rl) return -1;
    struct iobuf in;
    if (iobuf_init(&in, 65536)) return -1;
    int got = 0, rc = 0;
    while (got < nreplies) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 3000) <= 0) { rc = -1; break; }
        iobuf_reserve(&in, 65536);
        ssize_t n = read(fd, in.data + in.len, in.cap - in.len);
        if (n <= 0) { rc = -1; break; }
        in.len += (size_t)n;
        if (proto == PROTO_MC && !strncmp(req, "stats", 5)) {
            /* STAT lines up to END (or an error line) are one reply */
            char *end = NULL;
            if (in.len >= 5 && !memcmp(in.data, "END\r\n", 5)) end = in.data;
            else end = memmem(in.data, in.len, "\r\nEND\r\n", 7);
            if (!end && memmem(in.data, in.len, "ERROR", 5) && in.data[in.len - 1] == '\n') end = in.data + in.len;
            if (!end) continue;
            if (out) sbuf_add(out, in.data, (size_t)(end - in.data) + (end == in.data + in.len ? 0 : 2));
            got = nreplies;
            break;
        }
        for (;;) {
            struct reply_info ri;
            size_t used = 0;
            int r = proto == PROTO_RESP ? resp_parse_reply(in.data + in.off, in.len - in.off, &used, &ri)
                                        : mc_parse_reply(in.data + in.off, in.len - in.off, &used, &ri);
            if (r == REPLY_NEED_MORE) break;
            if (r != REPLY_OK) { rc = -1; got = nreplies; break; }
            if (out) {
                const char *p = in.data + in.off;
                size_t l = used;
                if (proto == PROTO_RESP && p[0] == '$') { /* strip the bulk header */
                    const char *nl = memchr(p, '\n', l);
                    if (nl) { l -= (size_t)(nl + 1 - p); p = nl + 1; if (l >= 2) l -= 2; }
                }
                sbuf_add(out, p, l);
            }
            in.off += used;
            if (++got == nreplies) break;
        }
    }
    iobuf_deinit(&in);
    return rc;
}

int target_fetch_info(const struct target *t, char **out)
{
    char err[256];
    struct sbuf sb;
    sbuf_init(&sb);
    *out = NULL;
    for (uint32_t h = 0; h < t->nhosts; h++) {
        int fd = sock_connect(t, h, 0, err, sizeof(err));
        if (fd < 0) { sbuf_deinit(&sb); return -1; }
        if (t->nhosts > 1) sbuf_printf(&sb, "## %s\n", t->hosts[h]);
        if (t->proto == PROTO_RESP) {
            blocking_exchange(fd, "INFO\r\n", PROTO_RESP, 1, &sb);
        } else {
            blocking_exchange(fd, "version\r\n", PROTO_MC, 1, &sb);
            blocking_exchange(fd, "stats\r\n", PROTO_MC, 1, &sb);
            blocking_exchange(fd, "stats settings\r\n", PROTO_MC, 1, &sb);
        }
        close(fd);
    }
    *out = sb.p ? sb.p : strdup("");
    return 0;
}

int target_flush(const struct target *t)
{
    char err[256];
    for (uint32_t h = 0; h < t->nhosts; h++) {
        int fd = sock_connect(t, h, 0, err, sizeof(err));
        if (fd < 0) return -1;
        /* a fresh connection: text flush_all for either memcached protocol */
        blocking_exchange(fd, t->proto == PROTO_RESP ? "FLUSHALL\r\n" : "flush_all\r\n",
                          t->proto == PROTO_RESP ? PROTO_RESP : PROTO_MC, 1, NULL);
        close(fd);
    }
    return 0;
}
