/* maxmemory: the limit check and the eviction policies, approximated by sampling within
 * stripes (maxmemory-samples random keys of one stripe, the worst one is evicted), with no
 * global lock. LRU keeps the store clock (ms) in item->lru; LFU keeps Redis's logarithmic
 * 8-bit counter with minute-based decay. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/util.h"
#include "store/evict.h"
#include "store/lazyfree.h"
#include "store/slab.h"
#include "store/store.h"

#define LFU_INIT_VAL 5

_Atomic uint32_t store_lfu_minutes;
static _Atomic int64_t overhead; /* allocator total minus keyspace bytes, last measured */
static _Atomic int measured;      /* overhead was measured once */
static _Thread_local uint64_t rng_state;

static uint64_t rng(void)
{
    if (!rng_state)
        rng_state = (uint64_t)(uintptr_t)&rng_state ^ 0x9e3779b97f4a7c15ULL;
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int lfu_mode(void)
{
    int p = cfg.maxmemory_policy;
    return p == MM_ALLKEYS_LFU || p == MM_VOLATILE_LFU;
}

static uint32_t lfu_minutes(void)
{
    return atomic_load_explicit(&store_lfu_minutes, memory_order_relaxed) & 0xffffff;
}

static int lfu_decayed(struct item *it)
{
    uint32_t ldt = it->lru >> 8, now = lfu_minutes();
    int counter = (int)(it->lru & 0xff);
    uint32_t elapsed = now >= ldt ? now - ldt : 0xffffff - ldt + now;
    uint32_t periods = cfg.lfu_decay_time ? elapsed / (uint32_t)cfg.lfu_decay_time : 0;

    if (periods)
        counter = periods > (uint32_t)counter ? 0 : counter - (int)periods;
    return counter;
}

int store_lfu_freq(struct item *it)
{
    return lfu_decayed(it);
}

uint32_t store_idle_seconds(struct item *it)
{
    return (store_lru_now() - it->lru) / 1000;
}

void store_touch_new(struct item *it)
{
    if (lfu_mode())
        it->lru = (lfu_minutes() << 8) | LFU_INIT_VAL;
    else
        it->lru = store_lru_now();
}

void store_touch(struct item *it)
{
    if (lfu_mode()) {
        int counter = lfu_decayed(it);
        if (counter < 255) {
            double r = (double)(rng() >> 11) / (double)(1ULL << 53);
            double base = counter - LFU_INIT_VAL;
            if (base < 0)
                base = 0;
            if (r < 1.0 / (base * cfg.lfu_log_factor + 1))
                counter++;
        }
        it->lru = (lfu_minutes() << 8) | (uint32_t)counter;
    } else {
        it->lru = store_lru_now();
    }
}

_Atomic int64_t store_mem_step = 65536;
static _Atomic int64_t measured_us; /* when the overhead was last measured (monotonic) */
static _Atomic unsigned long frees_seen; /* buf_big_frees at the last measure here */

static void measure_now(void)
{
    struct alloc_stats as;
    alloc_stats(&as);
    store_measure_overhead((int64_t)(as.allocated + slab_used_bytes()));
}

/* The publication step of the keyspace bytes for a limit of max (store.h). */
static void update_step(long long max)
{
    int64_t step = max > 0 && max < 256 * 65536 ? (max / 256 > 64 ? max / 256 : 64) : 65536;
    if (atomic_load_explicit(&store_mem_step, memory_order_relaxed) != step)
        atomic_store_explicit(&store_mem_step, step, memory_order_relaxed);
}

int64_t (*store_not_counted_fn)(void);

/* The used memory maxmemory is enforced on: without what Redis does not count (replicas'
 * output beyond the backlog). */
static int64_t used_counted(void)
{
    int64_t u = store_used_for_limit();
    int64_t (*fn)(void) = store_not_counted_fn;
    return fn ? u - fn() : u;
}

int64_t store_used_for_limit(void)
{
    /* before the timer's first measure (a server just started, a test setting maxmemory 1
     * at once), measure here: a zero overhead would let every write through */
    if (TC_UNLIKELY(!atomic_load_explicit(&measured, memory_order_relaxed)))
        measure_now();
    int64_t o = atomic_load_explicit(&overhead, memory_order_relaxed);
    return store_mem_used() + store_mem_pending + (o > 0 ? o : 0) + store_mem_reserved;
}

void store_measure_overhead(int64_t allocator_total)
{
    update_step(cfg.maxmemory);
    if (allocator_total > 0) {
        atomic_store_explicit(&overhead, allocator_total - store_mem_used(), memory_order_relaxed);
        atomic_store_explicit(&measured, 1, memory_order_relaxed);
        atomic_store_explicit(&measured_us, util_mono_us(), memory_order_relaxed);
    }
}

/* Higher is a better eviction candidate. */
static uint64_t score(struct item *it, int policy)
{
    switch (policy) {
    case MM_ALLKEYS_LFU:
    case MM_VOLATILE_LFU:
        /* fewer accesses first, older first among equals */
        return ((uint64_t)(255 - lfu_decayed(it)) << 32) | (uint64_t)((lfu_minutes() - (it->lru >> 8)) & 0xffffff);
    case MM_VOLATILE_TTL:
        return UINT64_MAX - (uint64_t)item_expire(it);
    case MM_ALLKEYS_RANDOM:
    case MM_VOLATILE_RANDOM:
        return rng();
    default:
        return (uint32_t)(store_lru_now() - it->lru);
    }
}

/* One eviction candidate, copied out of its stripe so several stripes can be sampled. */
struct cand {
    int found;
    uint64_t score;
    uint32_t stripe;
    int db;
    size_t klen;
    char *key;      /* the thread's candidate buffer */
};

static _Thread_local char *cand_buf;
static _Thread_local size_t cand_cap;

/* Sample one random item of stripe si (locked here) and keep it in best if it scores higher.
 * Returns 1 when the stripe had a candidate. */
static int sample_stripe(struct store *s, uint32_t si, int policy, int volatile_only,
                         struct cand *best)
{
    struct stripe *st = &s->stripes[si];
    int dbs[64], ndbs = 0, got = 0;

    for (int d = 0; d < s->ndb && ndbs < 64; d++) {
        struct ht *t = &st->db[d];
        if (__atomic_load_n(volatile_only ? &t->nvolatile : &t->count, __ATOMIC_RELAXED))
            dbs[ndbs++] = d;
    }
    if (!ndbs)
        return 0;
    store_lock(s, si);
    int d = dbs[rng() % (uint64_t)ndbs];
    struct ht *t = &st->db[d];
    uint32_t size = ht_size(t), i = size ? ht_reduce(t, (uint32_t)rng()) : 0;
    for (uint32_t probe = 0; probe < size && t->count; probe++, i = ht_next(t, i)) {
        struct item *it;
        if (!(it = ht_item_at(t, i)))
            continue;
        if (volatile_only && !item_expire(it))
            continue;
        got = 1;
        if (item_klen(it) > cand_cap) {
            char *nb = realloc(cand_buf, item_klen(it));
            if (!nb)
                break;
            cand_buf = nb;
            cand_cap = item_klen(it);
            best->key = cand_buf;
        }
        {
            uint64_t sc = score(it, policy);
            if (!best->found || sc > best->score) {
                best->found = 1;
                best->score = sc;
                best->stripe = si;
                best->db = d;
                best->klen = item_klen(it);
                memcpy(best->key, item_key(it), best->klen);
            }
        }
        break;
    }
    store_unlock(s, si);
    return got;
}

/* Evict the best of maxmemory-samples candidates drawn from random stripes (one per stripe,
 * like Redis sampling the whole keyspace). Returns 1 if a key was evicted. */
static int evict_one(struct store *s, int policy, int volatile_only)
{
    struct cand best;
    int samples = cfg.maxmemory_samples, drawn = 0;
    uint32_t si = (uint32_t)rng() & s->mask;

    best.found = 0;
    best.score = 0;
    best.key = cand_buf;
    /* walk from a random stripe: empty stripes are skipped cheaply, so a sparse keyspace
     * (or few volatile keys) is still found */
    for (uint32_t n = 0; n < s->nstripes && drawn < samples; n++) {
        if (sample_stripe(s, si, policy, volatile_only, &best))
            drawn++;
        si = drawn && n < 64 ? (uint32_t)rng() & s->mask : (si + 1) & s->mask;
    }
    if (!best.found)
        return 0;
    struct stripe *st = &s->stripes[best.stripe];
    struct skey k;
    struct item *gone;
    store_key(s, &k, best.db, best.key, best.klen);
    store_lock(s, k.stripe);
    gone = store_unlink_locked(s, &k, 0);
    if (gone) {
        store_gone(STORE_GONE_EVICTED, k.db, k.p, k.n);
        if (store_removed_hook)
            store_removed_hook(STORE_GONE_EVICTED, k.db, gone);
        COUNTER_ADD(st->evicted, 1);
        if (!gone->fetched)
            COUNTER_ADD(st->evicted_unfetched, 1);
        lazyfree_release(gone, cfg.lazyfree_lazy_eviction);
    }
    store_unlock(s, k.stripe);
    return 1;
}

void store_thread_exit(void)
{
    free(cand_buf);
    cand_buf = NULL;
}

_Atomic int store_evict_off;
int64_t store_mem_reserved;
store_removed_fn *store_removed_hook;

/* Redis's eviction "exceeded" time: since when used_memory is over maxmemory (monotonic us, 0:
 * not over), and the periods that ended since the last CONFIG RESETSTAT. */
static _Atomic int64_t exceeded_since;
static _Atomic uint64_t exceeded_total;

static void exceeded_end(void)
{
    int64_t t0 = atomic_load_explicit(&exceeded_since, memory_order_relaxed);
    if (TC_UNLIKELY(t0) &&
        atomic_compare_exchange_strong_explicit(&exceeded_since, &t0, 0, memory_order_relaxed,
                                                memory_order_relaxed))
        atomic_fetch_add_explicit(&exceeded_total, (uint64_t)(util_mono_us() - t0),
                                  memory_order_relaxed);
}

void store_evict_exceeded(uint64_t *current_ms, uint64_t *total_ms)
{
    int64_t t0 = atomic_load_explicit(&exceeded_since, memory_order_relaxed);
    uint64_t cur = t0 ? (uint64_t)(util_mono_us() - t0) : 0;

    *current_ms = cur / 1000;
    *total_ms = (atomic_load_explicit(&exceeded_total, memory_order_relaxed) + cur) / 1000;
}

void store_evict_reset_stats(void)
{
    int64_t t0 = atomic_load_explicit(&exceeded_since, memory_order_relaxed);
    atomic_store_explicit(&exceeded_total, 0, memory_order_relaxed);
    if (t0) /* a period under way counts from now on, as Redis's resetServerStats */
        atomic_compare_exchange_strong_explicit(&exceeded_since, &t0, util_mono_us(),
                                                memory_order_relaxed, memory_order_relaxed);
}

int store_make_room(struct store *s)
{
    int r;
    if (atomic_load_explicit(&store_evict_off, memory_order_relaxed))
        return 0;
    int policy = cfg.maxmemory_policy;
    int volatile_only = policy == MM_VOLATILE_LRU || policy == MM_VOLATILE_LFU ||
                        policy == MM_VOLATILE_RANDOM || policy == MM_VOLATILE_TTL;
    long long max = cfg.maxmemory;

    update_step(max);
    if (max <= 0)
        return 0;
    /* a sample older than 10 ms is taken again (growth of client buffers shows at once, as
     * in Redis's exact count; at most 100 allocator reads a second) */
    if (util_mono_us() - atomic_load_explicit(&measured_us, memory_order_relaxed) > 10000)
        measure_now();
    if (used_counted() <= max) {
        exceeded_end();
        return 0;
    }
    /* over: eviction destroys data, so first make sure with a fresh measure (the last may
     * still hold buffers of clients gone since): after a large buffer was freed, else at
     * most every 10 ms */
    unsigned long frees = atomic_load_explicit(&buf_big_frees, memory_order_relaxed);
    if (frees != atomic_load_explicit(&frees_seen, memory_order_relaxed) ||
        util_mono_us() - atomic_load_explicit(&measured_us, memory_order_relaxed) > 10000) {
        atomic_store_explicit(&frees_seen, frees, memory_order_relaxed);
        measure_now();
        if (used_counted() <= max) {
            exceeded_end();
            return 0;
        }
    }
    {
        int64_t zero = 0;
        atomic_compare_exchange_strong_explicit(&exceeded_since, &zero, util_mono_us(),
                                                memory_order_relaxed, memory_order_relaxed);
    }
    if (policy == MM_NOEVICTION)
        return -1;
    if (store_held)
        return -1; /* stripes held (AOF logging, EXEC): evicting could lock out of order */
    /* Evict a little below the limit: the keyspace total is published in steps per thread
     * and the overhead is sampled, so aim under the line rather than on it. */
    long long target = max - (max / 100 < 1024 * 1024 ? max / 100 : 1024 * 1024);
    r = 0;
    for (int evicted = 0; used_counted() > target; evicted++) {
        if (!evict_one(s, policy, volatile_only)) {
            r = -1;
            break;
        }
        if (evicted > 100000)
            break; /* bound the work of one command; the next write continues */
    }
    if (used_counted() <= max)
        exceeded_end();
    return r;
}
