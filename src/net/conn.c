#define _GNU_SOURCE
#include "net/conn.h"
#include "net/worker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "net/tls.h"
#include "net/worker.h"

int conn_add_ref(struct conn *c, const char *ptr, size_t len, void *owner,
                 conn_ref_release_fn *release)
{
    if (c->nrefs == c->refs_cap) {
        uint32_t cap = c->refs_cap ? c->refs_cap * 2 : 8;
        struct oref *r = realloc(c->refs, cap * sizeof(*r));
        if (!r) {
            release(owner);
            return -1;
        }
        c->refs = r;
        c->refs_cap = cap;
    }
    c->refs[c->nrefs].at = c->wbuf.wpos + c->wbuf.shift; /* survives compaction of wbuf */
    c->refs[c->nrefs].ptr = ptr;
    c->refs[c->nrefs].len = len;
    c->refs[c->nrefs].owner = owner;
    c->refs[c->nrefs].release = release;
    c->nrefs++;
    return 0;
}

int conn_out_limit(struct conn *c, int cls, int64_t now_ms)
{
    long long hard = __atomic_load_n(&cfg.cobl[cls][0], __ATOMIC_RELAXED);
    long long soft = __atomic_load_n(&cfg.cobl[cls][1], __ATOMIC_RELAXED);
    long long secs = __atomic_load_n(&cfg.cobl[cls][2], __ATOMIC_RELAXED);
    long long pend;
    int over;

    if (hard <= 0 && soft <= 0)
        return 0;
    pend = (long long)conn_pending(c);
    over = hard > 0 && pend > hard;
    if (!over && soft > 0 && pend > soft) {
        if (!c->obl_soft_ms)
            c->obl_soft_ms = now_ms ? now_ms : 1;
        else if (now_ms - c->obl_soft_ms > secs * 1000)
            over = 1;
    } else if (c->obl_soft_ms) {
        c->obl_soft_ms = 0;
    }
    if (over) {
        log_warn("Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of output "
                 "buffer limits.", (unsigned long long)c->id, c->addr);
        c->flags |= CONN_CLOSE_ASAP;
    }
    return over;
}

void conn_reset_output(struct conn *c)
{
    for (uint32_t i = 0; i < c->nrefs; i++)
        c->refs[i].release(c->refs[i].owner);
    c->nrefs = 0;
    c->ref_sent = 0;
    c->ref_off = 0;
    c->wbuf.rpos = c->wbuf.wpos = 0;
}

void conn_output_rewind(struct conn *c, const struct conn_mark *m)
{
    for (uint32_t i = m->nrefs; i < c->nrefs; i++)
        c->refs[i].release(c->refs[i].owner);
    c->nrefs = m->nrefs;
    c->wbuf.wpos = m->at - c->wbuf.shift;
}

int conn_out_iov(const struct conn *c, struct iovec *iov, int max)
{
    int n = 0;
    size_t pos = c->wbuf.rpos;
    uint32_t r = c->ref_sent;

    /* Interleave buffer bytes and references in order. */
    while (n < max) {
        size_t until = r < c->nrefs ? c->refs[r].at - c->wbuf.shift : c->wbuf.wpos;
        if (pos < until) {
            iov[n].iov_base = c->wbuf.data + pos;
            iov[n].iov_len = until - pos;
            n++;
            pos = until;
            continue;
        }
        if (r < c->nrefs) {
            size_t off = r == c->ref_sent ? c->ref_off : 0;
            iov[n].iov_base = (void *)(c->refs[r].ptr + off);
            iov[n].iov_len = c->refs[r].len - off;
            n++;
            r++;
            continue;
        }
        break;
    }
    return n;
}

int conn_sent(struct conn *c, size_t w)
{
    size_t left = w;

    if (TC_UNLIKELY(__atomic_load_n(&c->repl, __ATOMIC_RELAXED) != NULL))
        STAT_ADD(c->w->st.net_repl_out, (uint64_t)w); /* as Redis 7.0: apart */
    else
        STAT_ADD(c->w->st.net_out, (uint64_t)w);
    STAT_INC(c->w->st.writes);
    /* Advance through the same sequence as conn_out_iov by w bytes. */
    while (left) {
        size_t until =
            c->ref_sent < c->nrefs ? c->refs[c->ref_sent].at - c->wbuf.shift : c->wbuf.wpos;
        if (c->wbuf.rpos < until) {
            size_t k = until - c->wbuf.rpos;
            if (k > left)
                k = left;
            c->wbuf.rpos += k;
            left -= k;
            continue;
        }
        struct oref *ref = &c->refs[c->ref_sent];
        size_t k = ref->len - c->ref_off;
        if (k > left) {
            c->ref_off += left;
            left = 0;
        } else {
            left -= k;
            c->ref_off = 0;
            c->ref_sent++;
        }
    }
    if (c->wbuf.rpos == c->wbuf.wpos && c->ref_sent == c->nrefs) {
        conn_reset_output(c);
        return 1;
    }
    return 0;
}

int conn_flush(struct conn *c)
{
    if (c->tls)
        return tls_flush(c);
    for (;;) {
        struct iovec iov[CONN_IOV_MAX];
        int n = conn_out_iov(c, iov, CONN_IOV_MAX);
        ssize_t w;

        if (n == 0) {
            conn_reset_output(c);
            return 0;
        }
        w = writev(c->fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return -1;
        }
        if (conn_sent(c, (size_t)w))
            return 0;
    }
}

void conn_format_addr(int fd, int peer, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char ip[INET6_ADDRSTRLEN];
    int r = peer ? getpeername(fd, (struct sockaddr *)&ss, &len)
                 : getsockname(fd, (struct sockaddr *)&ss, &len);

    if (r < 0) {
        snprintf(out, cap, "?:0");
        return;
    }
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &s->sin_addr, ip, sizeof(ip));
        snprintf(out, cap, "%s:%d", ip, ntohs(s->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof(ip));
        snprintf(out, cap, "%s:%d", ip, ntohs(s->sin6_port));
    } else {
        snprintf(out, cap, "/unix:0");
    }
}

size_t conn_mem_usage(const struct conn *c, size_t refbytes)
{
    size_t m = sizeof(*c) + c->rbuf.cap + c->wbuf.cap + refbytes +
               (size_t)c->refs_cap * sizeof(struct oref) +
               ((size_t)c->argv_cap + c->rp.argv_cap) * sizeof(struct slice);
    size_t (*extra)(const struct conn *) = c->w->srv->proto[c->proto].mem;

    return extra ? m + extra(c) : m;
}

void conn_mem_update(struct conn *c, size_t refbytes)
{
    size_t m = conn_mem_usage(c, refbytes);
    size_t acc =
        (c->flags & (CONN_MEM_COUNTED | CONN_CLOSED | CONN_MONITOR)) == CONN_MEM_COUNTED ? m : 0;

    __atomic_store_n(&c->mem, m, __ATOMIC_RELAXED);
    if (acc != c->mem_acc) {
        struct worker *w = c->w;
        __atomic_store_n(&w->cmem, w->cmem - c->mem_acc + acc, __ATOMIC_RELAXED);
        __atomic_store_n(&c->mem_acc, acc, __ATOMIC_RELAXED);
    }
}
