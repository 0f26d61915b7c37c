/* The memcached room: the text and meta commands of memcached 1.6 on the shared store
 * (database 0), for connections accepted on the memcached port (PROTO_MC). The server wires
 * these hooks; everything else of the room is internal (mc_int.h). */
#ifndef TC_MC_CMD_H
#define TC_MC_CMD_H

struct conn;
struct srv;

/* Allocate the per-worker memcached counters (main thread, after srv->nworkers is set and
 * before workers start). Returns 0 or -1 when out of memory. */
int mc_cmd_setup(struct srv *srv);
/* Input hook for PROTO_MC connections: parse and run everything complete in c->rbuf, answering
 * into c's output (the worker writes it once per read). Owner worker only. */
void mc_cmd_input(struct conn *c);
/* Open hook: a new connection's state (as a RESP one's: RESP2, authenticated unless a password
 * is set; the memcached state itself is created on first input). Owner worker only. */
void mc_cmd_open(struct conn *c);
/* Close hook: free the connection's memcached state and arguments. Owner worker only. */
void mc_cmd_close(struct conn *c);

#endif
