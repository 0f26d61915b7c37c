/* Pub/Sub: SUBSCRIBE/PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE/PUBLISH/PUBSUB. One process-wide
 * registry (channel or pattern -> subscribers) under one mutex, touched only by Pub/Sub
 * commands and by the close of a subscribed connection. PUBLISH formats nothing: it posts a
 * refcounted message to the mailbox of each subscriber's worker, which writes it into the
 * subscriber's output (only the owner touches a connection's buffers), in post order, and
 * disconnects a subscriber whose pending output passes client-output-buffer-limit pubsub. */
#ifndef TC_PUBSUB_H
#define TC_PUBSUB_H

#include <stddef.h>

struct conn;
struct srv;

/* Subscriptions (channels + patterns) of c: RESP2 subscribed mode when > 0. Owner only. */
int pubsub_count(const struct conn *c);
/* Drop every subscription of c (RESET, close). Owner only. */
void pubsub_reset(struct conn *c);
/* Bytes of c's subscriptions (client memory; owner only). */
size_t pubsub_mem(const struct conn *c);
/* INFO: channels with subscribers, distinct patterns (any thread). */
long pubsub_nchannels(void);
long pubsub_npatterns(void);
long pubsub_nshardchannels(void);
/* Publish msg on channel ch (PUBLISH without a client: keyspace events, invalidations) from
 * any thread; self is the calling worker's index or -1. Holds the registry lock while it
 * posts: call it with no stripe locked. Returns the receivers. */
long pubsub_publish(struct srv *srv, int self, const char *ch, size_t cn, const char *msg,
                    size_t mn);
/* Post one message of kind to connection to, which the caller keeps alive (it holds the lock
 * of a registry to's close removes it from): PUBSUB_RAW writes p as it is (MONITOR),
 * PUBSUB_INV a client-side caching invalidation of key p, PUBSUB_INV_NULL of every key,
 * PUBSUB_INV_ARR of the keys p holds as a RESP array.
 * Any thread; wakes to's worker. 0 or -1 when out of memory. */
enum { PUBSUB_RAW = 3, PUBSUB_INV, PUBSUB_INV_NULL, PUBSUB_INV_ARR };
/* Or'ed into PUBSUB_INV*: to the tracking client itself (no REDIRECT), which receives
 * nothing in RESP2, as in Redis. */
#define PUBSUB_INV_SELF 0x100
int pubsub_post_conn(struct conn *to, int kind, const char *p, size_t n);
/* The same, written to c's output at once: c's owner thread only. */
void pubsub_write_conn(struct conn *c, int kind, const char *p, size_t n);
/* 1 when anybody subscribes to anything (a relaxed load). */
int pubsub_active(void);
/* In a fork child that runs commands (SCRIPT DEBUG YES): the registry and the workers'
 * mailboxes are the parent's (their locks may be held by threads the child does not have), so
 * PUBLISH there reaches nobody. */
void pubsub_fork_child(void);
/* Every subscription of every connection (channel or pattern name, and whether it is a
 * pattern), under the registry lock: the connections stay alive meanwhile (ACL: the
 * subscribers of channels a user may no longer use are closed). */
void pubsub_each_sub(int (*fn)(struct conn *c, const char *p, size_t n, int pattern, void *arg),
                     void *arg);
/* Install the worker mailbox hooks in srv (main thread, before the workers start). */
void pubsub_setup(struct srv *srv);
void cmd_pubsub_setup(void);

#endif
