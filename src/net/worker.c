/* The worker's event loop: reading, running input through the protocol hooks, writing
 * (read/writev or io_uring batches), pausing, held output, the mailbox, the tick, the drain
 * at shutdown. Listening and accepting are in listen.c. */
#define _GNU_SOURCE
#include "net/worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#ifdef TC_HAVE_URING
#include <liburing.h>
#endif

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "net/net_int.h"
#include "net/tls.h"
#include "net/udp.h"

#define READ_CHUNK 16384
#define BIG_ARG 32768

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
    /* refuse new connections now (Linux: a listening socket shut for reading stops
     * listening), not once every worker got to its drain: a worker may be inside a script the
     * shutdown stops, and Redis is gone when SHUTDOWN returns */
    pthread_rwlock_rdlock(&srv->lst_lock);
    for (int i = 0; i < SRV_MAX_LISTEN; i++)
        if (srv->lst[i].fd >= 0)
            shutdown(srv->lst[i].fd, SHUT_RD);
    pthread_rwlock_unlock(&srv->lst_lock);
    for (int i = 0; i < srv->nworkers; i++)
        worker_wake(&srv->workers[i]);
}

static void update_events(struct worker *w, struct conn *c)
{
    struct epoll_event ev;
    int want_out = conn_pending(c) > 0 || (c->flags & CONN_TLS_HSW);
    int want_in = !(c->flags & (CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY)) && !w->draining;
    uint32_t nf = want_out ? (c->flags | CONN_WANT_WRITE) : (c->flags & ~(uint32_t)CONN_WANT_WRITE);

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
    if (c->tls) {
        if (c->flags & CONN_TLS_HS)
            w->ntls_hs--;
        tls_conn_free(c);
    }
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
    atomic_fetch_sub_explicit(&w->load, 1, memory_order_relaxed);
    /* its memory leaves the clients' total (and what eviction counted as on its way out) */
    if (c->mem_acc) {
        __atomic_store_n(&w->cmem, w->cmem - c->mem_acc, __ATOMIC_RELAXED);
        __atomic_store_n(&c->mem_acc, 0, __ATOMIC_RELAXED);
    }
    size_t ea = __atomic_load_n(&c->evict_amt, __ATOMIC_RELAXED);
    if (ea)
        atomic_fetch_sub_explicit(&srv->evict_pending, ea, memory_order_relaxed);
    if (srv->proto[c->proto].on_close)
        srv->proto[c->proto].on_close(c);
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
    if (TC_UNLIKELY(c->flags & CONN_HOLD_LISTED)) {
        for (int i = 0; i < w->nheld; i++)
            if (w->held[i] == c)
                w->held[i] = NULL;
    }
    atomic_fetch_sub(&srv->nclients, 1);
    conn_reset_output(c);
    buf_deinit(&c->rbuf);
    buf_deinit(&c->wbuf);
    free(c->refs);
    c->refs = NULL;
    /* events, batched reads and queued writes of this turn may still name c: it is freed
     * at the end of the turn (free_dead) and skipped until then */
    c->flags |= CONN_CLOSED;
    c->prev = NULL;
    c->next = w->dead;
    w->dead = c;
}

size_t srv_clients_mem(struct srv *srv)
{
    size_t sum = 0, pend = atomic_load_explicit(&srv->evict_pending, memory_order_relaxed);

    for (int i = 0; i < srv->nworkers; i++)
        sum += __atomic_load_n(&srv->workers[i].cmem, __ATOMIC_RELAXED);
    return sum > pend ? sum - pend : 0;
}

/* Client eviction when the clients' memory reached maxmemory-clients (one load when off). */
static void evict_clients_check(struct worker *w)
{
    if (__atomic_load_n(&cfg.maxmemory_clients, __ATOMIC_RELAXED) && w->srv->evict_clients) {
        size_t lim = conn_evict_limit();
        if (lim && srv_clients_mem(w->srv) >= lim)
            w->srv->evict_clients(w);
    }
}

static void free_dead(struct worker *w)
{
    while (w->dead) {
        struct conn *c = w->dead;
        w->dead = c->next;
        free(c);
    }
}

static void after_write(struct worker *w, struct conn *c);
static void tls_readable(struct worker *w, struct conn *c);

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
    /* the sizes are published once per turn of a connection: by after_write (now, or at the
     * end of the turn for a batched write), else here */
    if (c->flags & CONN_CLOSE_ASAP) {
        worker_close_conn(w, c);
        return;
    }
    if (TC_UNLIKELY(c->flags & CONN_HOLD_OUT)) {
        /* held (the AOF: its commands were logged): the output leaves once released */
        conn_publish(c);
        if (!(c->flags & CONN_HOLD_LISTED)) {
            if (w->nheld == w->held_cap) {
                int cap = w->held_cap ? w->held_cap * 2 : 64;
                struct conn **a = realloc(w->held, sizeof(*a) * (size_t)cap);
                if (!a) {
                    worker_close_conn(w, c);
                    return;
                }
                w->held = a;
                w->held_cap = cap;
            }
            w->held[w->nheld++] = c;
            c->flags |= CONN_HOLD_LISTED;
        }
        return;
    }
    /* as Redis, a reply over the normal hard limit is never sent: checked before writing */
    if ((c->flags & CONN_OUT_LIMIT) &&
        (__atomic_load_n(&cfg.cobl[COBL_NORMAL][0], __ATOMIC_RELAXED) > 0 ||
         __atomic_load_n(&cfg.cobl[COBL_NORMAL][1], __ATOMIC_RELAXED) > 0) &&
        conn_out_limit(c, COBL_NORMAL, w->now_ms)) {
        worker_close_conn(w, c);
        return;
    }
    if (conn_pending(c)) {
        conn_note_wpeak(c, conn_pending(c));
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
    conn_publish(c);
    if (conn_pending(c) == 0 && (c->flags & CONN_CLOSE_AFTER_REPLY)) {
        worker_close_conn(w, c);
        return;
    }
    if ((c->flags & CONN_OUT_LIMIT) && conn_out_limit(c, COBL_NORMAL, w->now_ms)) {
        worker_close_conn(w, c);
        return;
    }
    int paused = (c->flags & CONN_PAUSED_READ) != 0;
    int over = conn_pending(c) > conn_pause_bytes(c);
    if (over)
        c->flags |= CONN_PAUSED_READ;
    else
        c->flags &= ~CONN_PAUSED_READ;
    if (paused && !over && buf_len(&c->rbuf) && !(c->flags & CONN_CLOSE_AFTER_REPLY)) {
        /* resume: run what was left in the input buffer */
        w->srv->proto[c->proto].on_input(c);
        after_io(w, c);
        return;
    }
    if (TC_UNLIKELY(c->tls != NULL) && paused && !over && !(c->flags & CONN_CLOSE_AFTER_REPLY) &&
        tls_pending(c)) {
        /* decrypted input OpenSSL kept while paused: no socket event will bring it */
        tls_readable(w, c);
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
        w->srv->proto[c->proto].on_input(c);
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
        w->touched[i]->flags &= ~CONN_MBOX_TOUCHED;
        after_io(w, w->touched[i]);
    }
}

/* Make room in c's input buffer for the next read. Returns 0, or -1 (out of memory: c is
 * closed). */
static int prep_read(struct worker *w, struct conn *c)
{
    size_t want = READ_CHUNK;
    int exact = 0;

    if (c->rbuf.rpos == c->rbuf.wpos) {
        c->rbuf.rpos = c->rbuf.wpos = 0; /* the usual case: everything was consumed */
    } else if (w->srv->proto[c->proto].read_hint) {
        /* an incomplete request (a big argument): grow geometrically towards its size; from
         * 32 KiB on (Redis's PROTO_MBULK_BIG_ARG) at once to exactly its size, as Redis sizes
         * the query buffer of a big argument (client memory counts the capacity) */
        size_t need = w->srv->proto[c->proto].read_hint(c), have = buf_len(&c->rbuf);
        if (need > have) {
            size_t more = need - have;
            size_t step = have > READ_CHUNK ? have : READ_CHUNK;
            want = more < step ? more : step;
            exact = need >= BIG_ARG;
            if (exact)
                want = more; /* Redis makes room for the whole argument at once */
            else if (want < READ_CHUNK)
                want = READ_CHUNK;
        }
    }
    if (exact ? buf_reserve_exact(&c->rbuf, want) : buf_reserve(&c->rbuf, want)) {
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
    if (buf_len(&c->rbuf) > c->qpeak)
        c->qpeak = buf_len(&c->rbuf);
    STAT_ADD(w->st.net_in, (uint64_t)n);
    STAT_INC(w->st.reads);
    __atomic_store_n(&c->last_ms, w->now_ms, __ATOMIC_RELAXED);
    if ((long long)buf_len(&c->rbuf) > cfg.client_query_buffer_limit) {
        log_warn("Closing client that reached max query buffer length: id=%llu addr=%s",
                 (unsigned long long)c->id, c->addr);
        worker_close_conn(w, c);
        return;
    }
    w->srv->proto[c->proto].on_input(c);
    after_io(w, c);
}

/* A TLS connection is readable (or its handshake can go on): advance the handshake, then
 * read records until OpenSSL holds no more decrypted bytes (the socket's readiness does not
 * tell about those). */
static void tls_readable(struct worker *w, struct conn *c)
{
    if (c->flags & CONN_TLS_HS) {
        int r = tls_handshake(c);
        if (r < 0) {
            worker_close_conn(w, c);
            return;
        }
        if (r == 0) {
            update_events(w, c);
            return;
        }
        w->ntls_hs--;
        update_events(w, c);
        net_protected_check(w, c);
        if (c->flags & (CONN_CLOSED | CONN_CLOSE_AFTER_REPLY))
            return;
    }
    for (;;) {
        int err = 0;
        ssize_t n;
        if (prep_read(w, c))
            return;
        n = tls_read(c, c->rbuf.data + c->rbuf.wpos, buf_free(&c->rbuf), &err);
        read_done(w, c, n, err);
        if (n <= 0 || (c->flags & (CONN_CLOSED | CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY)) ||
            !tls_pending(c))
            return;
    }
}

static void on_readable(struct worker *w, struct conn *c)
{
    ssize_t n;

    if (c->tls) {
        tls_readable(w, c);
        return;
    }
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
        c->flags |= CONN_IO_PENDING;
        nsub++;
    }
    if (nsub)
        uring_run(w, nsub);
    w->rq = q; /* a long script in one of them applies the others' reads (worker_serve_busy) */
    w->rq_res = u->res;
    w->rq_n = n;
    for (int i = 0; i < n; i++) {
        struct conn *c = q[i];
        if (!c)
            continue;
        c->flags &= ~CONN_IO_PENDING;
        if (c->flags & CONN_CLOSED)
            continue;
        if (u->res[i] == INT32_MIN) {
            on_readable(w, c); /* not submitted: read it the plain way */
            continue;
        }
        read_done(w, c, u->res[i] < 0 ? -1 : u->res[i], u->res[i] < 0 ? -u->res[i] : 0);
    }
    w->rq = NULL;
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
                c->flags &= ~CONN_FLUSHQ;
                u->res[j] = INT32_MIN;
                u->want[j] = 0;
                if ((c->flags & CONN_CLOSED) || !w->batching || m == 1 || c->tls)
                    continue; /* one writev(2) costs less than one submission; OpenSSL
                                 writes TLS connections itself */
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
                c->flags |= CONN_IO_PENDING;
                nsub++;
            }
            if (nsub)
                uring_run(w, nsub);
            for (int j = 0; j < m; j++) {
                struct conn *c = q[base + j];
                int r = u->res[j];
                c->flags &= ~CONN_IO_PENDING;
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
                c->flags &= ~CONN_FLUSHQ;
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
    net_adopt_handed(w);
    for (c = w->conns; c; c = next) {
        next = c->next;
        if (atomic_load(&c->kill))
            worker_close_conn(w, c);
    }
    if (w->srv->on_wakeup)
        w->srv->on_wakeup(w);
}

/* As Redis's clientsCronResizeQueryBuffer: an empty input buffer wasting more than 4 KiB is
 * freed after 2 s idle, and one over 32 KiB, twice its use since the last pass, shrinks to
 * that use (at least a read's 16 KiB). Only an empty buffer moves: a partial request keeps
 * its place. */
static void qbuf_resize(struct worker *w, struct conn *c)
{
    struct buf *b = &c->rbuf;
    size_t peak = c->qpeak;

    c->qpeak = buf_len(b);
    /* (RESP only: a memcached storage command may keep its parsed line while its data
     * block is on the way) */
    if (buf_len(b) || b->cap <= 4096 || c->proto != PROTO_RESP)
        return;
    if (w->now_ms - c->last_ms > 2000) {
        buf_deinit(b);
    } else if (b->cap > 32768 && b->cap / 2 > peak) {
        size_t keep = peak > READ_CHUNK ? peak : READ_CHUNK;
        char *p = realloc(b->data, keep);
        if (p) {
            b->data = p;
            b->cap = keep;
            b->rpos = b->wpos = 0;
        }
    }
}

int net_reply_resizing = 1;
long long net_reply_peak_reset_ms = 5000;
int net_pause_cron;

/* As Redis's clientsCronResizeOutputBuffer: an empty output buffer whose peak use stayed
 * under half its size shrinks to that peak (at least 1 KiB); one filled to the brim grows
 * twice as big, up to 16 KiB. The peak is reset every net_reply_peak_reset_ms. */
#define REPLY_MIN_BYTES 1024
#define REPLY_CHUNK_BYTES 16384
static void wbuf_resize(struct worker *w, struct conn *c)
{
    struct buf *b = &c->wbuf;
    size_t peak = c->wpeak, nsize = 0;
    long long reset = __atomic_load_n(&net_reply_peak_reset_ms, __ATOMIC_RELAXED);

    if (!__atomic_load_n(&net_reply_resizing, __ATOMIC_RELAXED))
        return;
    if (b->cap / 2 >= REPLY_MIN_BYTES && peak < b->cap / 2)
        nsize = peak + 1 > REPLY_MIN_BYTES ? peak + 1 : REPLY_MIN_BYTES;
    else if (b->cap && b->cap * 2 < REPLY_CHUNK_BYTES * 2 && peak >= b->cap)
        nsize = b->cap * 2 < REPLY_CHUNK_BYTES ? b->cap * 2 : REPLY_CHUNK_BYTES;
    if (reset >= 0 && w->now_ms - c->wpeak_ms >= reset) {
        __atomic_store_n(&c->wpeak, b->wpos - b->rpos, __ATOMIC_RELAXED);
        c->wpeak_ms = w->now_ms;
    }
    if (nsize && b->rpos == b->wpos && c->nrefs == 0) {
        char *p = realloc(b->data, nsize);
        if (p) {
            if (nsize > b->cap)
                STAT_INC(w->st.reply_expands);
            else
                STAT_INC(w->st.reply_shrinks);
            b->data = p;
            b->cap = nsize;
            b->rpos = b->wpos = 0;
        }
    }
}

/* Every 1000/hz ms: the server's timers (on_tick), idle timeouts and the soft output limit
 * of paused clients, listeners back after running out of fds, the ops samples. */
static void tick(struct worker *w)
{
    struct srv *srv = w->srv;
    struct conn *c, *next;

    if (__atomic_load_n(&net_pause_cron, __ATOMIC_RELAXED))
        return;
    /* clients over maxmemory-clients go before the timer evicts keys (Redis evicts clients
     * before keys too) */
    evict_clients_check(w);
    if (srv->on_tick)
        srv->on_tick(w);
    for (c = w->conns; c; c = next) {
        int (*may_time_out)(struct conn *) = srv->proto[c->proto].may_time_out;
        next = c->next;
        /* the protocol says who is waiting rather than idle (Redis: subscribers and
         * blocked clients) */
        if (cfg.timeout > 0 && may_time_out &&
            w->now_ms - c->last_ms > (int64_t)cfg.timeout * 1000 && may_time_out(c))
            worker_close_conn(w, c);
        /* a soft limit runs out without any event on the client (a paused one, or a
         * subscriber nobody publishes to any more) */
        else if ((c->flags & (CONN_PAUSED_READ | CONN_OUT_LIMIT)) ==
                     (CONN_PAUSED_READ | CONN_OUT_LIMIT) &&
                 conn_out_limit(c, COBL_NORMAL, w->now_ms))
            worker_close_conn(w, c);
        else if ((c->flags & CONN_PUBSUB_LIMIT) && c->obl_soft_ms &&
                 conn_out_limit(c, COBL_PUBSUB, w->now_ms))
            worker_close_conn(w, c);
        else {
            qbuf_resize(w, c);
            if (c->proto == PROTO_RESP)
                wbuf_resize(w, c);
            conn_publish(c); /* CLIENT LIST on other workers: the sizes as of now */
        }
    }
    if (w->ntls_hs > 0) {
        /* a TLS handshake that does not finish in tls-handshake-timeout ms closes */
        int64_t lim = __atomic_load_n(&cfg.tls_handshake_timeout, __ATOMIC_RELAXED);
        for (c = w->conns; c; c = next) {
            next = c->next;
            if ((c->flags & CONN_TLS_HS) && w->now_ms - c->ctime_ms >= lim) {
                log_verbose("TLS handshake timed out: addr=%s", c->addr);
                worker_close_conn(w, c);
            }
        }
    }
    if (w->accept_paused && !w->draining)
        net_listeners_resume(w);
    int oi = (w->st.ops_idx + 1) % 16;
    STAT_SET(w->st.ops_sample[oi], w->st.commands);
    STAT_SET(w->st.ops_sample_ms[oi], w->now_ms);
    STAT_SET(w->st.ops_idx, oi);
}

void worker_release_held_all(struct worker *w)
{
    int n = w->nheld;
    struct conn **list = w->held;

    w->held = NULL;
    w->nheld = w->held_cap = 0;
    for (int i = 0; i < n; i++) {
        struct conn *c = list[i];
        if (c)
            c->flags &= ~(CONN_HOLD_OUT | CONN_HOLD_LISTED);
    }
    for (int i = 0; i < n; i++) {
        if (list[i] && !(list[i]->flags & CONN_HOLD_LISTED))
            after_io(w, list[i]);
    }
    free(list);
}

/* Run the before-sleep hook (the AOF writes, then releases the output it held), again while
 * released input held more. */
static void before_sleep(struct worker *w)
{
    for (int round = 0; round < 16; round++) {
        w->srv->before_sleep(w);
        if (!w->nheld)
            return;
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

    pthread_rwlock_rdlock(&w->srv->lst_lock);
    for (int i = 0; i < SRV_MAX_LISTEN; i++) {
        int fd = w->srv->lst[i].fd;
        if (fd < 0)
            continue;
        epoll_ctl(w->ep, EPOLL_CTL_DEL, fd, NULL);
        shutdown(fd, SHUT_RD); /* Linux: stop listening, refuse new connections now */
    }
    pthread_rwlock_unlock(&w->srv->lst_lock);
    w->now_ms = util_now_ms();
    end = w->now_ms + DRAIN_MS;
    if (atomic_load_explicit(&w->mbox_nonempty, memory_order_acquire))
        deliver_mailbox(w);
    for (c = w->conns; c; c = next) {
        next = c->next;
        if (!(c->flags & (CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP)))
            on_readable(w, c); /* a blocked client's input stays in its buffer */
    }
    w->draining = 1; /* from here on only output: no EPOLLIN, no EPOLLRDHUP */
    for (c = w->conns; c; c = c->next)
        update_events(w, c);
    for (;;) {
        if (w->srv->before_sleep)
            before_sleep(w);
        for (c = w->conns; c; c = next) {
            next = c->next;
            if (conn_pending(c) == 0 && !(c->flags & CONN_HOLD_OUT) &&
                !(c->flags & CONN_PAUSED_READ && buf_len(&c->rbuf)))
                worker_close_conn(w, c);
        }
        free_dead(w);
        if (!w->conns || w->now_ms >= end)
            break;
        int n = epoll_wait(w->ep, evs, 256, (int)(end - w->now_ms));
        w->now_ms = util_now_ms();
        for (int i = 0; i < n; i++) {
            if (net_is_tag(evs[i].data.u64))
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

void worker_serve_busy(struct worker *w, struct conn *self)
{
    static __thread int inside;
    struct epoll_event evs[64];
    int batching = w->batching, n;

    if (inside || w->draining || w->idx < 0)
        return;
    inside = 1;
    w->batching = 0; /* replies are written now: the turn's flush queue is not touched */
    for (int i = 0; w->rq && i < w->rq_n; i++) {
        /* read in this turn's batch before the script began: the input runs now (the
         * batch's loop skips what is taken here) */
        struct conn *c = w->rq[i];
        int r = w->rq_res[i];
        if (!c || c == self || c->proto != PROTO_RESP || !(c->flags & CONN_IO_PENDING))
            continue;
        w->rq[i] = NULL;
        c->flags &= (uint16_t)~CONN_IO_PENDING;
        if (!(c->flags & CONN_CLOSED))
            read_done(w, c, r < 0 ? -1 : r, r < 0 ? -r : 0);
    }
    n = epoll_wait(w->ep, evs, 64, 0);
    w->now_ms = util_now_ms();
    for (int i = 0; i < n; i++) {
        uint64_t u = evs[i].data.u64;
        if (net_is_tag(u)) {
            if (u >= TAG_LISTEN && u < TAG_UDP)
                net_accept(w, (int)(u - TAG_LISTEN));
            continue; /* the eventfd (kills, handed connections) and UDP: after the script */
        }
        struct conn *c = evs[i].data.ptr;
        if (c == self || c->proto != PROTO_RESP ||
            (c->flags & (CONN_CLOSED | CONN_IO_PENDING | CONN_TLS_HS)))
            continue;
        if (evs[i].events & EPOLLOUT) {
            if (conn_flush(c)) {
                worker_close_conn(w, c);
                continue;
            }
            after_io(w, c);
            if (c->flags & CONN_CLOSED)
                continue;
        }
        if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLRDHUP)) &&
            !(c->flags & (CONN_PAUSED_READ | CONN_CLOSE_AFTER_REPLY)))
            on_readable(w, c);
    }
    w->batching = batching;
    inside = 0;
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
        if (!w->nheld)
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
    /* as Redis's beforeSleep: clients over maxmemory-clients once the turn's output is
     * written and the output limits enforced (those take precedence); one load when off */
    evict_clients_check(w);
    free_dead(w);
}

void srv_freeze(struct worker *w, int64_t us)
{
    atomic_fetch_add_explicit(&w->srv->frozen, 1, memory_order_acq_rel);
    while (us > 0) { /* usleep takes at most a second on some systems */
        int64_t step = us > 500000 ? 500000 : us;
        usleep((useconds_t)step);
        us -= step;
    }
    atomic_fetch_sub_explicit(&w->srv->frozen, 1, memory_order_acq_rel);
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
    w->next_tick_ms = w->now_ms + 1000 / config_hz_for(atomic_load(&srv->nclients));
    while (!atomic_load_explicit(&srv->shutdown, memory_order_relaxed)) {
        int64_t until = w->next_tick_ms;
        int nrecv = 0;
        if (w->block_deadline && w->block_deadline < until)
            until = w->block_deadline;
        int timeout = (int)(until - w->now_ms);
        if (atomic_load_explicit(&w->mbox_nonempty, memory_order_relaxed) || w->nflush ||
            w->nheld)
            timeout = 0;
        /* waiting: free for new connections; awake: busy since now (listen.c's pick) */
        atomic_store_explicit(&w->alive_ms, INT64_MAX, memory_order_relaxed);
        int n = epoll_wait(w->ep, evs, 256, timeout < 0 ? 0 : timeout);
        while (TC_UNLIKELY(atomic_load_explicit(&srv->frozen, memory_order_acquire) > 0))
            usleep(1000); /* another worker's DEBUG SLEEP: nothing runs meanwhile */
        w->now_ms = util_now_ms();
        atomic_store_explicit(&w->alive_ms, w->now_ms, memory_order_relaxed);
        if (srv->clock)
            atomic_store_explicit(srv->clock, (uint32_t)w->now_ms, memory_order_relaxed);
        /* what other threads posted before this turn's input goes out before its replies
         * (an invalidation or message a client caused before it sent its next command) */
        if (atomic_load_explicit(&w->mbox_nonempty, memory_order_acquire))
            deliver_mailbox(w);
        for (int i = 0; i < n; i++) {
            uint64_t u = evs[i].data.u64;
            if (net_is_tag(u)) {
                if (u == TAG_EVENT)
                    handle_kills(w);
                else if (u >= TAG_UDP)
                    udp_readable(w, (int)(u - TAG_UDP));
                else
                    net_accept(w, (int)(u - TAG_LISTEN));
                continue;
            }
            struct conn *c = evs[i].data.ptr;
            if (c->flags & CONN_CLOSED)
                continue; /* closed earlier in this turn */
            if (TC_UNLIKELY(c->flags & CONN_TLS_HS)) {
                tls_readable(w, c); /* the handshake goes on, whichever way it waits */
                continue;
            }
            if (evs[i].events & EPOLLOUT) {
                if (w->batching && !c->tls) {
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
                if (w->batching && !c->tls)
                    recvq[nrecv++] = c;
                else
                    on_readable(w, c);
            }
        }
        if (nrecv == 1) {
            /* one read(2) costs less than one submission; a kill handled after its event
             * (an eviction, CLIENT KILL) may have closed it */
            if (!(recvq[0]->flags & CONN_CLOSED))
                on_readable(w, recvq[0]);
        }
        else if (nrecv)
            recv_batch(w, recvq, nrecv);
        if (atomic_load_explicit(&w->mbox_nonempty, memory_order_acquire))
            deliver_mailbox(w);
        if (w->block_deadline && w->now_ms >= w->block_deadline && w->srv->on_timer)
            w->srv->on_timer(w);
        if (w->now_ms >= w->next_tick_ms) {
            tick(w);
            /* dynamic-hz: faster with many clients, as Redis's serverCron */
            w->next_tick_ms = w->now_ms + 1000 / config_hz_for(atomic_load(&srv->nclients));
        }
        end_turn(w);
    }
    if (w->nflush)
        flush_batch(w);
    w->batching = 0; /* the drain writes the plain way */
    drain(w);
    free_dead(w);
    udp_worker_exit(w);
    uring_exit(w);
    if (srv->on_exit)
        srv->on_exit(w);
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
    for (int i = 0; srv->nworkers && i < SRV_MAX_LISTEN; i++)
        if (srv->lst[i].fd >= 0) {
            close(srv->lst[i].fd);
            srv->lst[i].fd = -1;
        }
    udp_close(srv);
}

void srv_free(struct srv *srv)
{
    for (int i = 0; srv->workers && i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        free(w->mbox);
        free(w->mbox_work);
        free(w->touched);
        free(w->held);
        for (int j = 0; j < w->hand_n; j++) /* handed over as the server stopped */
            close(w->hand_fd[j]);
        close(w->ep);
        close(w->evfd);
        pthread_mutex_destroy(&w->list_lock);
        pthread_mutex_destroy(&w->mbox_lock);
    }
    free(srv->workers);
    srv->workers = NULL;
}
