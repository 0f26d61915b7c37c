#include "cmd/notify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/pubsub.h"
#include "cmd/tracking.h"
#include "core/buf.h"
#include "net/worker.h"

/* One buffered event: its header, then the key's bytes. */
struct nrec {
    const char *event; /* static */
    int db;
    uint32_t klen;
};

__thread size_t notify_pending;
static __thread struct buf nbuf;
static struct srv *nsrv;

void notify_record(int type, const char *event, int db, const char *p, size_t n)
{
    int f = __atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED);
    struct nrec r = {event, db, (uint32_t)n};

    (void)type;
    if (!(f & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT)) || !nsrv)
        return;
    /* nobody listens: nothing to keep (a subscriber arriving meanwhile misses this one,
     * as it would have a moment earlier) */
    if (!pubsub_active())
        return;
    if (buf_reserve(&nbuf, sizeof(r) + n))
        return; /* out of memory: the event is lost, as a full output buffer would lose it */
    buf_append(&nbuf, &r, sizeof(r));
    buf_append(&nbuf, p, n);
    notify_pending = buf_len(&nbuf);
}

/* "__keyspace@<db>__:" + key (or "__keyevent@<db>__:" + event) into out (cap bytes), or
 * a malloc'd string when it does not fit; *len set. */
static char *channel(char *out, size_t cap, const char *kind, int db, const char *p, size_t n,
                     size_t *len)
{
    char head[48];
    int h = snprintf(head, sizeof(head), "__%s@%d__:", kind, db);
    char *d = (size_t)h + n <= cap ? out : malloc((size_t)h + n);

    if (!d)
        return NULL;
    memcpy(d, head, (size_t)h);
    memcpy(d + h, p, n);
    *len = (size_t)h + n;
    return d;
}

void notify_flush_slow(int self)
{
    int f = __atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED);
    size_t at = nbuf.rpos;

    notify_pending = 0;
    while (at + sizeof(struct nrec) <= nbuf.wpos) {
        struct nrec r;
        char tmp[512], *ch;
        size_t cl;
        memcpy(&r, nbuf.data + at, sizeof(r));
        const char *key = nbuf.data + at + sizeof(r);
        at += sizeof(r) + r.klen;
        if (f & NOTIFY_KEYSPACE) {
            ch = channel(tmp, sizeof(tmp), "keyspace", r.db, key, r.klen, &cl);
            if (ch) {
                pubsub_publish(nsrv, self, ch, cl, r.event, strlen(r.event));
                if (ch != tmp)
                    free(ch);
            }
        }
        if (f & NOTIFY_KEYEVENT) {
            ch = channel(tmp, sizeof(tmp), "keyevent", r.db, r.event, strlen(r.event), &cl);
            if (ch) {
                pubsub_publish(nsrv, self, ch, cl, key, r.klen);
                if (ch != tmp)
                    free(ch);
            }
        }
    }
    nbuf.rpos = nbuf.wpos = 0;
    if (nbuf.cap > 65536)
        buf_shrink(&nbuf, 4096);
    tracking_bcast_flush();
}

/* The store removed a key by expiry or eviction (under its stripe lock). */
static void store_event(int why, int db, const char *key, size_t klen)
{
    if (why == STORE_EVENT_MISS) {
        notify_event_key(NOTIFY_KEY_MISS, "keymiss", db, key, klen);
        return;
    }
    if (why == STORE_GONE_EXPIRED)
        notify_event_key(NOTIFY_EXPIRED, "expired", db, key, klen);
    else
        notify_event_key(NOTIFY_EVICTED, "evicted", db, key, klen);
    /* no client changed it: NOLOOP clients hear of it too (Redis passes no client) */
    uint64_t writer = tracking_writer;
    tracking_writer = 0;
    tracking_invalidate(db, key, klen);
    tracking_writer = writer;
}

void notify_thread_exit(void)
{
    buf_deinit(&nbuf);
    notify_pending = 0;
}

void notify_setup(struct srv *srv)
{
    nsrv = srv;
    store_event_hook = store_event;
    tracking_setup(srv);
}
