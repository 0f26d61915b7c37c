/* Pub/Sub: SUBSCRIBE/PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE/PUBLISH/PUBSUB. One process-wide
 * registry (channel or pattern -> subscribers) under one mutex, touched only by Pub/Sub
 * commands and by the close of a subscribed connection. PUBLISH formats nothing: it posts a
 * refcounted message to the mailbox of each subscriber's worker, which writes it into the
 * subscriber's output (only the owner touches a connection's buffers), in post order, and
 * disconnects a subscriber whose pending output passes client-output-buffer-limit pubsub. */
#ifndef TC_PUBSUB_H
#define TC_PUBSUB_H

struct conn;
struct srv;

/* Subscriptions (channels + patterns) of c: RESP2 subscribed mode when > 0. Owner only. */
int pubsub_count(const struct conn *c);
/* Drop every subscription of c (RESET, close). Owner only. */
void pubsub_reset(struct conn *c);
/* INFO: channels with subscribers, distinct patterns (any thread). */
long pubsub_nchannels(void);
long pubsub_npatterns(void);
/* Install the worker mailbox hooks in srv (main thread, before the workers start). */
void pubsub_setup(struct srv *srv);
void cmd_pubsub_setup(void);

#endif
