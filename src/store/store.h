/* The keyspace: S stripes (power of two) chosen by key hash, each with its own lock, one hash
 * table per database, memory and hit counters. Commands compute a struct skey once, lock the
 * stripe(s) they need, work on items, unlock. Functions marked _locked need the key's stripe
 * lock held by the caller. Items returned are owned by the store and valid only under the lock
 * (take a reference with item_ref for IT_REF items to use them after unlocking). */
#ifndef TC_STORE_H
#define TC_STORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lock.h"
#include "core/util.h"
#include "store/ht.h"
#include "store/item.h"

struct stripe {
    struct tc_lock lock;
    struct ht *db;      /* one table per database */
    int64_t mem;        /* bytes of items, values and tables held */
    uint64_t cas;       /* last CAS value handed out in this stripe */
    uint64_t hits;      /* keyspace_hits */
    uint64_t misses;    /* keyspace_misses */
    uint64_t expired;   /* keys removed because their TTL passed */
    uint64_t evicted;   /* keys removed for memory */
    uint64_t stored;    /* items stored (memcached total_items) */
    uint32_t nvolatile; /* items with an expire time, all databases */
    uint64_t expired_unfetched;
    uint64_t evicted_unfetched;
    uint64_t expired_swept; /* of expired: removed by the active expire cycle (memcached's
                               crawler_reclaimed) */
} __attribute__((aligned(64)));

struct store {
    struct stripe *stripes;
    uint32_t nstripes; /* power of two */
    uint32_t mask;     /* nstripes - 1 */
    int ndb;           /* databases */
    uint64_t *all;     /* a bitmap of every stripe (store_hold_set(s, s->all)) */
};

/* A key resolved once: the hash picks stripe and slot. Borrowed bytes. */
struct skey {
    const char *p;
    size_t n;
    uint64_t hash;
    uint32_t stripe;
    int db;
};

struct store_totals {
    uint64_t keys, expires, hits, misses, expired, evicted, stored, expired_unfetched,
        evicted_unfetched, expired_swept;
    int64_t mem;
};

/* The store clock: wall time in ms truncated to 32 bits, advanced by every worker once per
 * event-loop turn. LRU ages are differences of it (modulo 2^32). */
extern _Atomic uint32_t store_lru_clock;
/* Bytes held by the keyspace (items, values, tables), summed from per-thread deltas that are
 * published every 64 KiB, so reading it is one load and its error is bounded. Under a small
 * maxmemory the step is 1/256 of it: another thread's unpublished delta counts twice in the
 * limit check (the measured overhead holds it too), and 64 KiB is too much of a 1 MB limit. */
extern _Atomic int64_t store_mem_total;
extern _Thread_local int64_t store_mem_pending;
extern _Atomic int64_t store_mem_step; /* 65536, less under a small maxmemory (evict.c) */
static inline void store_mem_add(int64_t delta)
{
    int64_t step = atomic_load_explicit(&store_mem_step, memory_order_relaxed);
    store_mem_pending += delta;
    if (store_mem_pending > step || store_mem_pending < -step) {
        atomic_fetch_add_explicit(&store_mem_total, store_mem_pending, memory_order_relaxed);
        store_mem_pending = 0;
    }
}
/* Bytes counted as used toward maxmemory though the keyspace does not hold them: memcached's
 * T_MEMD_INITIAL_MALLOC test hook (memory it pretends to have allocated at start). Set once
 * at start-up. */
extern int64_t store_mem_reserved;
/* Publish this thread's pending delta now (timers, before measuring). */
static inline void store_mem_flush(void)
{
    if (store_mem_pending) {
        atomic_fetch_add_explicit(&store_mem_total, store_mem_pending, memory_order_relaxed);
        store_mem_pending = 0;
    }
}
static inline int64_t store_mem_used(void)
{
    return atomic_load_explicit(&store_mem_total, memory_order_relaxed);
}

/* Active expiry on (1) or off (0: DEBUG SET-ACTIVE-EXPIRE 0); lazy expiry always works. */
extern _Atomic int store_active_expire;
/* Microseconds the workers' active expiry cycles took (INFO expire_cycle_cpu_milliseconds) */
extern _Atomic uint64_t store_expire_cycle_us;
/* CLIENT PAUSE (WRITE or ALL) lasts until this time (ms; 0: none): as Redis, keys are not
 * deleted by expiry meanwhile (readers see them gone, the sweep leaves them). */
extern _Atomic int64_t store_expire_paused_until;
/* 1 while this server is a replica (set by replication): as Redis's expireIfNeeded there, a
 * lookup answers a logically expired key as missing but leaves it, for the primary's DEL to
 * remove, unless store_expire_force is set on the thread (a writable replica's own write
 * command, or an insert through store_lookup_pos_locked). The active expiry sweeps only the
 * keys a writable replica's own clients gave a TTL (store_replica_note_locked). */
extern _Atomic int store_replica;
extern _Thread_local int store_expire_force;
/* A writable replica's own write left key k (its stripe held) with a TTL: remember it, so that
 * store_replica_expire deletes it once expired (Redis's rememberSlaveKeyWithExpire). */
void store_replica_note_locked(struct store *s, const struct skey *k);
/* One worker's timer, on a replica: delete the remembered keys whose TTL passed, forget those
 * gone or persistent (Redis's expireSlaveKeys). Takes each key's stripe in turn. */
void store_replica_expire(struct store *s, int64_t now);
/* Forget every remembered key (no longer a replica, or a flush). */
void store_replica_forget(void);
/* How many keys it remembers (INFO slave_expires_tracked_keys); any thread. */
uint64_t store_replica_tracked(void);
/* 1: no eviction at all (a replica with replica-ignore-maxmemory: its primary's DELs decide). */
extern _Atomic int store_evict_off;
/* Set by the command layer for a CLIENT NO-TOUCH client's command: reads on this thread do
 * not refresh access times. */
extern _Thread_local int store_no_touch;
/* Set while this thread replays the AOF at start-up: an expired key stays (lookups return it,
 * as Redis does not expire anything while loading; it goes once the server runs). */
extern _Thread_local int store_no_expire;

struct store *store_create(uint32_t nstripes, int ndb);
void store_destroy(struct store **s);

static inline void store_key(struct store *s, struct skey *k, int db, const char *p, size_t n)
{
    k->p = p;
    k->n = n;
    k->hash = util_hash(p, n);
    k->stripe = (uint32_t)k->hash & s->mask;
    k->db = db;
}

/* Stripes already held by this thread for a whole transaction (MULTI/EXEC): a bitmap, or
 * NULL. store_lock/unlock of a held stripe are no-ops, so the commands of a transaction run
 * unchanged while EXEC holds every stripe they touch. */
extern _Thread_local const uint64_t *store_held;

/* Called under the key's stripe lock when a key is removed by expiry or eviction (the AOF
 * logs a DEL), or NULL. Set by the AOF when it is turned on. */
typedef void store_gone_fn(int db, const char *key, size_t klen);
extern store_gone_fn *_Atomic store_gone_hook;
/* The same removals for the command layer (keyspace events, client-side caching): why is
 * STORE_GONE_EXPIRED or STORE_GONE_EVICTED; also STORE_EVENT_MISS (a read lookup found no key)
 * while notify-keyspace-events has class m. Set once at start-up. */
enum { STORE_GONE_EXPIRED, STORE_GONE_EVICTED, STORE_EVENT_MISS /* a read found nothing */ };
typedef void store_event_fn(int why, int db, const char *key, size_t klen);
extern store_event_fn *store_event_hook;
static inline void store_gone(int why, int db, const char *key, size_t klen)
{
    store_gone_fn *fn = atomic_load_explicit(&store_gone_hook, memory_order_relaxed);
    if (TC_UNLIKELY(fn != NULL))
        fn(db, key, klen);
    if (store_event_hook)
        store_event_hook(why, db, key, klen);
}

/* Called under the stripe lock with each item eviction (why STORE_GONE_EVICTED) or the active
 * expiry sweep (STORE_GONE_EXPIRED) removes, before it is freed, or NULL: the memcached
 * room's counts per slab class. Set once at start-up. */
typedef void store_removed_fn(int why, int db, struct item *it);
extern store_removed_fn *store_removed_hook;

/* Forkless snapshots (persist/snapshot.c): store_snap_active is nonzero while one runs, and a
 * thread that has just taken a stripe lock then calls store_snap_hook, which writes the stripe
 * into the snapshot first when it was not written yet (copy-before-write). With none running
 * the cost is one relaxed load and a predictable branch per lock. */
typedef void store_snap_fn(struct store *s, uint32_t stripe);
extern _Atomic int store_snap_active;
extern store_snap_fn *store_snap_hook;
/* Set by the command layer around a read-only command (CMD_READONLY) while a snapshot runs:
 * its stripes need no copy, as it changes nothing a snapshot holds (access times, hit
 * counters, a HyperLogLog's cached count are not part of it, or equal). The one change a
 * read makes, removing an expired key, keeps that key's old value first (store.c lookup). */
extern _Thread_local int store_snap_readonly;
static inline void store_snap_check(struct store *s, uint32_t stripe)
{
    if (TC_UNLIKELY(atomic_load_explicit(&store_snap_active, memory_order_relaxed) != 0))
        store_snap_hook(s, stripe);
}
/* Instead of store_snap_check, for a caller that has just taken k's stripe and will change
 * nothing in it but the key k: a snapshot keeps k's old value apart instead of copying the
 * whole stripe. */
typedef void store_snap_key_fn(struct store *s, const struct skey *k);
extern store_snap_key_fn *store_snap_key_hook;
static inline void store_snap_check_key(struct store *s, const struct skey *k)
{
    if (TC_UNLIKELY(atomic_load_explicit(&store_snap_active, memory_order_relaxed) != 0))
        store_snap_key_hook(s, k);
}

static inline int store_is_held(uint32_t stripe)
{
    return store_held && ((store_held[stripe >> 6] >> (stripe & 63)) & 1);
}

static inline void store_lock(struct store *s, uint32_t stripe)
{
    if (TC_UNLIKELY(store_held != NULL) && store_is_held(stripe))
        return;
    tc_lock(&s->stripes[stripe].lock);
    store_snap_check(s, stripe);
}

/* Take a stripe only if it is free: 0 when taken (the caller marks it held), else busy. */
static inline int store_trylock(struct store *s, uint32_t stripe)
{
    int r = tc_trylock(&s->stripes[stripe].lock);
    if (r == 0)
        store_snap_check(s, stripe);
    return r;
}

static inline void store_unlock(struct store *s, uint32_t stripe)
{
    if (TC_UNLIKELY(store_held != NULL) && store_is_held(stripe))
        return;
    tc_unlock(&s->stripes[stripe].lock);
}

/* Lock the stripes set in bitmap (nstripes bits), then mark them held by this thread;
 * store_release_set undoes both. Multi-stripe locking never waits while holding a stripe (it
 * backs off: store.c lock_bitmap), so it cannot deadlock against any order of taking. The
 * bitmap stays the caller's: bits it sets later (with store_trylock) are released too. */
void store_hold_set(struct store *s, const uint64_t *bitmap);
void store_release_set(struct store *s, const uint64_t *bitmap);

/* Swap databases a and b (SWAPDB); the caller holds every stripe. */
void store_swapdb_locked(struct store *s, int a, int b);

/* Lock the stripes of n keys in ascending order (each once); unlock them. */
void store_lock_keys(struct store *s, const struct skey *keys, int n);
void store_unlock_keys(struct store *s, const struct skey *keys, int n);

/* Warm the caches for the lookups of a pipelined batch about to run: the stripes, tables and
 * home slots of the n keys (read without locks, race-free: see ht_prefetch_slot), then, under
 * each stripe's lock taken and released in turn, the items the probes will compare. Only
 * prefetches: nothing is changed or returned. The caller holds no stripe lock. */
void store_prefetch(struct store *s, const struct skey *keys, int n);

/* Find a live item; an expired one is deleted (counted in expired) and NULL returned.
 * store_lookup_read also counts keyspace hits/misses and refreshes the LRU clock. */
struct item *store_lookup_read_locked(struct store *s, const struct skey *k, int64_t now);
struct item *store_lookup_write_locked(struct store *s, const struct skey *k, int64_t now);
/* A read that counts a keyspace hit or miss but leaves the access time alone (Redis's
 * LOOKUP_NOTOUCH: TTL, TYPE, EXISTS). */
struct item *store_lookup_notouch_locked(struct store *s, const struct skey *k, int64_t now);
/* Size database db's tables for n more keys spread over the stripes (the caller holds every
 * stripe): a loader told the key count up front (the RDB's RESIZEDB) spares the tables their
 * growth's rehashing. Best effort: a table it cannot grow grows later as usual. */
void store_reserve_locked(struct store *s, int db, uint64_t n);
/* store_lookup_write_locked that also sets *pos to the item's slot, for store_put_at_locked
 * (valid only while the lock is held and the table is not changed). */
struct item *store_lookup_pos_locked(struct store *s, const struct skey *k, int64_t now,
                                     uint32_t *pos);
/* store_put_locked for a key just looked up with store_lookup_pos_locked: old and pos are what
 * it returned (old NULL: insert), so the table is not probed again. */
int store_put_at_locked(struct store *s, const struct skey *k, struct item *old, uint32_t pos,
                        struct item *it);
/* A SET without an allocation: reuse the live item old (from a lookup of k) for a string
 * value of vlen bytes with optional fields bits (IT_FLAGS/IT_TTL/IT_CAS) when the layout is
 * the same, the value fits old's allocation in the same size class (so memory accounting is
 * unchanged), old is a string and no reader may hold a reference (not IT_REF). Fields are
 * reset as item_create leaves them (flags and CAS 0, memcached marker bits cleared, the
 * expire field set to exp), the access data and stored counter as store_put_locked sets
 * them. Returns old (the caller writes the value bytes and flags) or NULL: create and put. */
struct item *store_reuse_locked(struct store *s, const struct skey *k, struct item *old,
                                size_t vlen, uint8_t bits, int64_t exp);
/* Insert it under k, replacing (and releasing) any previous item. Returns 0 or -1 (OOM: it is
 * released). */
int store_put_locked(struct store *s, const struct skey *k, struct item *it);
/* Replace the live item old (found by a lookup) with it (same key). */
void store_swap_locked(struct store *s, const struct skey *k, struct item *old, struct item *it);
/* Delete k. Returns 1 if a live item was removed. */
int store_delete_locked(struct store *s, const struct skey *k, int64_t now);
/* store_delete_locked, the value freed in the background when lazy and costly to free
 * (UNLINK, DEL with lazyfree-lazy-user-del; store_delete_locked follows
 * lazyfree-lazy-server-del). */
int store_delete_lazy_locked(struct store *s, const struct skey *k, int64_t now, int lazy);
/* Remove k and hand its item to the caller (NULL if missing). */
struct item *store_unlink_locked(struct store *s, const struct skey *k, int64_t now);
/* Set (ms > 0) or clear (ms == 0) the expire time of the live item it. May reallocate the
 * item; returns the item now in the table, or NULL when out of memory (it unchanged). */
struct item *store_set_expire_locked(struct store *s, const struct skey *k, struct item *it,
                                     int64_t ms);
/* The CAS value of it, assigning a fresh one (and possibly reallocating) if it has none.
 * *itp is updated to the item now in the table. Returns 0 when out of memory. */
uint64_t store_cas_locked(struct store *s, const struct skey *k, struct item **itp);
/* A fresh CAS value for an item of this stripe. */
static inline uint64_t store_next_cas_locked(struct store *s, uint32_t stripe)
{
    return ++s->stripes[stripe].cas;
}
/* Account a change of size of a value (collections growing in place). */
static inline void store_mem_adjust_locked(struct store *s, uint32_t stripe, int64_t delta)
{
    COUNTER_ADD(s->stripes[stripe].mem, delta); /* read lock-free by INFO (store_totals) */
    store_mem_add(delta);
}

/* Visit every live item of db in one stripe, under its lock (taken here). cb returns 0 to go
 * on. Expired items are skipped. */
typedef int store_visit_fn(struct item *it, void *arg);
/* Delete the expired keys of db in one stripe as lazy expiry does (counted, reported through
 * the gone hook: propagated as DEL), under its lock (taken here): SCAN's, as Redis's SCAN
 * expires the keys it meets. Nothing when the stripe's table has no key with a TTL. */
void store_expire_stripe(struct store *s, int db, uint32_t stripe, int64_t now);
void store_visit_stripe(struct store *s, int db, uint32_t stripe, int64_t now,
                        store_visit_fn *cb, void *arg);
/* Append a random live key of db to out. Returns 0, or -1 if db is empty (or OOM). */
struct buf;
int store_random_key(struct store *s, int db, int64_t now, struct buf *out);

uint64_t store_dbsize(struct store *s, int db);
uint64_t store_db_expires(struct store *s, int db);
/* Bytes of db's hash tables (each stripe's, under its lock): MEMORY STATS. */
size_t store_db_table_bytes(struct store *s, int db);
/* Remove every item of db (db < 0: all databases). Returns items removed. */
uint64_t store_flush(struct store *s, int db);
/* store_flush, the tables handed to the lazy free thread when lazy (FLUSHALL/FLUSHDB ASYNC). */
uint64_t store_flush_lazy(struct store *s, int db, int lazy);
/* Active expiry over stripes first, first+step, ... for at most budget_us. Returns the share
 * (0..100) of sampled volatile items that were expired, to let the caller adapt its effort. */
int store_expire_cycle(struct store *s, uint32_t first, uint32_t step, int64_t now,
                       int64_t budget_us, uint32_t *cursor);
void store_totals(struct store *s, struct store_totals *t);
void store_reset_stats(struct store *s);

static inline uint32_t store_lru_now(void)
{
    return atomic_load_explicit(&store_lru_clock, memory_order_relaxed);
}

/* Free this thread's eviction scratch buffer (a worker's last call). */
void store_thread_exit(void);
/* Record an access to it for the eviction policy (LRU time or LFU counter). Under the lock. */
void store_touch(struct item *it);
/* LFU counter of it after decay (OBJECT FREQ). */
int store_lfu_freq(struct item *it);
/* Seconds since it was last accessed (OBJECT IDLETIME). */
uint32_t store_idle_seconds(struct item *it);

/* Memory limit. Returns 0 when a write may proceed: used memory is under maxmemory, or keys
 * were evicted per maxmemory-policy until it is. -1: over the limit and nothing (more) can be
 * evicted (reply -OOM). Locks one stripe at a time; the caller must hold none. */
int store_make_room(struct store *s);
/* INFO's current_eviction_exceeded_time and total_eviction_exceeded_time (ms): how long
 * used_memory has been over maxmemory as store_make_room saw it, and the sum of such periods
 * (the current one included) since the last store_reset_stats. Any thread. */
void store_evict_exceeded(uint64_t *current_ms, uint64_t *total_ms);
void store_evict_reset_stats(void);
/* Memory the limit is checked against: keyspace bytes plus the last measured overhead. */
int64_t store_used_for_limit(void);
/* Set at start-up (before the workers): bytes in used memory maxmemory does not count
 * (Redis's mem_not_counted_for_evict: replicas' output); any thread, cheap. NULL: none. */
extern int64_t (*store_not_counted_fn)(void);
/* Refresh the overhead estimate (allocator total minus keyspace bytes); called by a timer. */
void store_measure_overhead(int64_t allocator_total);

/* Housekeeping (cron.c), run by the server's timer: every worker every 1000/hz ms. */
struct store_cron {
    uint32_t expire_cursor; /* where this worker's active expiry goes on */
    int expire_effort;      /* last share (0..100) of sampled volatile keys that had expired */
};
/* The process-wide part, one thread per tick: the LFU minute clock from now_ms and the
 * memory overhead estimate (allocator total). */
void store_cron_clocks(int64_t now_ms);
/* One worker's part (sc is that worker's): catch-up eviction when over maxmemory, then active
 * expiry over stripes first, first + step, ... for 2.5% of the tick, ten times more while the
 * last run found many keys expired. The caller publishes its memory delta (store_mem_flush)
 * before both parts. */
void store_cron_worker(struct store *s, struct store_cron *sc, uint32_t first, uint32_t step,
                       int64_t now_ms);

#endif
