/* Keyspace notifications (notify-keyspace-events): handlers call notify_event next to
 * cmd_modified with Redis's event name; store removals (expiry, eviction) arrive through the
 * store's event hook. Events are buffered per thread while stripes may be held and published
 * in order by notify_flush once the command (or the expiry sweep) is done, so Pub/Sub's
 * registry lock never nests inside a stripe lock. With notify-keyspace-events "" an event
 * costs one relaxed load. */
#ifndef TC_NOTIFY_H
#define TC_NOTIFY_H

#include <stddef.h>

#include "core/config.h"
#include "core/util.h"
#include "cmd/tracking.h"
#include "store/store.h"

struct srv;

/* Events waiting on this thread for notify_flush (bytes). */
extern __thread size_t notify_pending;

/* Buffer one event (type is one NOTIFY_* class) of key (db, p, n). Any thread. */
void notify_record(int type, const char *event, int db, const char *p, size_t n);

/* The handler changed key k: event is Redis's name ("set", "lpush", "del"...), type its
 * class. A static string: it is kept by pointer until the flush. */
static inline void notify_event(int type, const char *event, const struct skey *k)
{
    int f = __atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED);
    if (TC_UNLIKELY(f & type))
        notify_record(type, event, k->db, k->p, k->n);
}

/* The same for a key given as bytes. */
static inline void notify_event_key(int type, const char *event, int db, const char *p,
                                    size_t n)
{
    int f = __atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED);
    if (TC_UNLIKELY(f & type))
        notify_record(type, event, db, p, n);
}

/* A collection command's event on k, then "del" when it emptied the key (as Redis). */
static inline void notify_coll(int type, const char *event, const struct skey *k, int empty)
{
    notify_event(type, event, k);
    if (empty)
        notify_event(NOTIFY_GENERIC, "del", k);
}

/* A write outside the command table (memcached): the event, "new" first when isnew, and
 * the client-side caching invalidation cmd_modified does for commands. */
static inline void notify_write(int type, const char *event, const struct skey *k, int isnew)
{
    if (isnew)
        notify_event(NOTIFY_NEW, "new", k);
    notify_event(type, event, k);
    tracking_invalidate(k->db, k->p, k->n);
}

/* Publish this thread's buffered events in order (no stripe may be held); self is the
 * calling worker's index or -1. */
void notify_flush_slow(int self);
static inline void notify_flush(int self)
{
    if (TC_UNLIKELY(notify_pending != 0))
        notify_flush_slow(self);
}

/* Make the next notify_flush run its slow path (tracking's broadcast invalidations wait). */
static inline void notify_wake_flush(void)
{
    if (!notify_pending)
        notify_pending = 1;
}

/* A worker thread ends: free its event buffer. */
void notify_thread_exit(void);

/* Install the store's removal hook and remember srv (main thread, at start-up). */
void notify_setup(struct srv *srv);

#endif
