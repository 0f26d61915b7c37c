/* A small HTTP/1.1 endpoint on a thread of its own (the Prometheus metrics port): poll() over
 * its listeners and at most HTTP_SRV_MAX_CONNS connections, each with a fixed input buffer of
 * HTTP_MAX_HEAD bytes allocated when it is accepted (a request never makes it grow). GET and
 * HEAD of one path are answered with what the render callback writes; other paths get 404,
 * other methods 405, a malformed or oversized request 400/431/413/505 and a close. Keep-alive
 * and pipelining are supported; an idle connection is closed after a while.
 *
 * The workers never see any of it: the thread has its own sockets and loop, and the render
 * callback decides what it reads (src/server/metrics.c reads the counters racily, as INFO). */
#ifndef TC_HTTP_SRV_H
#define TC_HTTP_SRV_H

#include <stddef.h>

struct buf;

#define HTTP_SRV_MAX_CONNS 32

/* Write the body of a GET of the endpoint's path into out (borrowed; the caller frees it).
 * Runs on the endpoint's thread. Returns 0, or -1 to answer 500. */
typedef int http_render_fn(struct buf *out, void *ctx);

/* Listen on port at every word of bind (Redis's words: "*", "::*", a leading "-" for an
 * address that may be missing) and start the thread serving path with render(ctx). Main
 * thread, once. 0, or -1 with why set (nothing left running). */
int http_srv_start(int port, const char *bind, const char *path, http_render_fn *render,
                   void *ctx, char *why, size_t cap);
/* Stop the thread and close every socket (main thread; a no-op when not started). */
void http_srv_stop(void);

#endif
