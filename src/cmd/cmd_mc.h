/* The memcached protocol (text and meta commands) on the shared store, database 0. */
#ifndef TC_CMD_MC_H
#define TC_CMD_MC_H

struct conn;
struct srv;

/* Allocate the per-worker memcached counters (main thread, after srv->nworkers is set and
 * before workers start). Returns 0 or -1 when out of memory. */
int cmd_mc_setup(struct srv *srv);
/* Input hook for PROTO_MC connections: parse and run everything complete in c->rbuf, answering
 * into c's output (the worker writes it once per read). Owner worker only. */
void cmd_mc_input(struct conn *c);
/* Open hook: a new connection's state (as a RESP one's: RESP2, authenticated unless a password
 * is set; the memcached state itself is created on first input). */
void cmd_mc_open(struct conn *c);
/* Close hook: free the connection's memcached state and arguments. */
void cmd_mc_close(struct conn *c);

#endif
