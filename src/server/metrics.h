/* The Prometheus endpoint (config metrics-port, docs/metrics.md): GET /metrics in the text
 * exposition format 0.0.4, served by src/net/http_srv.c's thread. Off (no thread, no socket)
 * while metrics-port is 0. */
#ifndef TC_METRICS_H
#define TC_METRICS_H

#include <stddef.h>

struct srv;
struct buf;

/* Start the endpoint when cfg.metrics_port is set (main thread, after srv_listen: srv's
 * workers exist). 0 (also when off), or -1 with why set. */
int metrics_start(struct srv *srv, char *why, size_t cap);
/* Stop it (main thread, before the workers are freed; a no-op when off). */
void metrics_stop(void);
/* Append the exposition of srv's counters to out (the endpoint's thread; tests). 0 or -1. */
int metrics_render(struct buf *out, void *srv);

#endif
