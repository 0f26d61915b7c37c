/* Internal to src/net: what worker.c and listen.c share. */
#ifndef TC_NET_INT_H
#define TC_NET_INT_H

#include <stdint.h>

struct worker;

/* epoll data: the eventfd and the listeners carry small tags (TAG_LISTEN + listener index),
 * connections their pointer. */
#define TAG_EVENT 1
#define TAG_LISTEN 8 /* .. TAG_LISTEN + SRV_MAX_LISTEN - 1 */
#define TAG_UDP 32 /* + UDP socket index (udp.c) */
static inline int net_is_tag(uint64_t u)
{
    return u < 64;
}

/* Accept what listener slot li has pending (up to 64 connections) as w. Owner only. An event
 * for a slot that was emptied or reused meanwhile is harmless: the slot is read at once. */
void net_accept(struct worker *w, int li);
/* Take the connections another worker accepted for w (w's thread, after an eventfd wake). */
void net_adopt_handed(struct worker *w);
/* Out of file descriptors: leave w's listeners out of its epoll set until resumed. */
void net_listeners_pause(struct worker *w);
/* Put them back (w->accept_paused). Takes the read side of srv->lst_lock. */
void net_listeners_resume(struct worker *w);

struct conn;
/* Protected mode (Redis 7.0): a non-local client of a server without a password gets -DENIED
 * and is closed. Run on a new plain connection, or a TLS one after its handshake. */
void net_protected_check(struct worker *w, struct conn *c);

/* listen.c: a non-blocking, close-on-exec socket of socktype bound to addr:port (the first
 * address getaddrinfo gives that binds; IPv6 only for IPv6; SOCK_STREAM: SO_REUSEADDR and
 * listening with tcp-backlog). Returns it, or -1 with why set. TCP listeners and UDP share it. */
int net_bind_inet(const char *addr, int port, int socktype, char *why, size_t cap);

#endif
