/* TLS connections (OpenSSL 3): the server context built from the tls-* settings, reloaded by
 * CONFIG SET, and the per-connection handshake, read and write used by worker.c in place of
 * read(2) and writev(2). A TLS connection always does its I/O the plain (non io_uring) way:
 * OpenSSL owns the socket calls. Everything here runs on the connection's worker, except
 * tls_setup / tls_reload (any thread; the context is swapped under a lock). */
#ifndef TC_TLS_H
#define TC_TLS_H

#include <stddef.h>
#include <sys/types.h>

struct conn;

/* Build the server context from cfg (at startup, when a TLS port is configured) and install
 * config_tls_apply. 0, or -1 with err set. */
int tls_setup(char *err, size_t cap);
/* Rebuild the context from cfg and use it for new connections (connections already open keep
 * theirs). 0, or -1 with err set (the old context stays). */
int tls_reload(char *err, size_t cap);
/* Free the context (at exit). */
void tls_teardown(void);

/* Attach a server-side TLS session to c (c->fd set); the handshake starts with the first
 * input. 0, or -1 (out of memory, no context). */
int tls_conn_init(struct conn *c);
/* Free c's session (no-op without one). Sends close_notify when the handshake was done,
 * best effort without blocking. */
void tls_conn_free(struct conn *c);
/* Advance c's handshake. 1 done, 0 in progress (CONN_TLS_HSW set when it waits to write),
 * -1 failed (close c). */
int tls_handshake(struct conn *c);
/* Read decrypted bytes into buf. >0 bytes, 0 the peer closed, -1 with *err = EAGAIN (would
 * block) or another errno (close). */
ssize_t tls_read(struct conn *c, char *buf, size_t cap, int *err);
/* Nonzero when OpenSSL holds input already, decrypted or not (read ahead): read it before
 * waiting for the socket, which will not signal it. */
int tls_pending(const struct conn *c);
/* Write c's pending output (as conn_flush). 0 done or would block, -1 error (close). */
int tls_flush(struct conn *c);

/* The client side, for a replica's link to its primary (tls-replication; blocking socket fd,
 * the link thread's own): the client certificate (tls-client-cert-file, else tls-cert-file),
 * the primary's checked against tls-ca-cert-file / -dir when set. Returns the session, or
 * NULL with err. read: >0, 0 closed, -1 error or timeout; write: 0 or -1; pending: decrypted
 * bytes wait inside OpenSSL (poll(2) would not show them). */
void *tls_client_open(int fd, int timeout_ms, char *err, size_t cap);
ssize_t tls_client_read(void *s, void *buf, size_t n);
int tls_client_write(void *s, const void *p, size_t n);
int tls_client_pending(void *s);
void tls_client_close(void *s);

#endif
