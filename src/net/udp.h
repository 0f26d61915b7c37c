/* The memcached text protocol over UDP (udp.c): srv_proto.udp_port opens it. Internal to
 * src/net except conn_udp_cut (conn.h), which the protocol layer calls. */
#ifndef TC_UDP_H
#define TC_UDP_H

struct srv;
struct worker;

/* Open the UDP sockets of every protocol with a udp_port, on every bind address, and add
 * them to each worker's epoll (main thread, after the workers exist). Returns 0 or -1. */
int udp_listen(struct srv *srv);
/* Read and answer what UDP socket ui has pending (owner worker). */
void udp_readable(struct worker *w, int ui);
/* Free the worker's pseudo-connections (its thread, at exit). */
void udp_worker_exit(struct worker *w);
/* Close the UDP sockets (after the workers joined). */
void udp_close(struct srv *srv);

#endif
