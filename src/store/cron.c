/* The store's housekeeping, called from the server's timer (the workers' ticks): clocks,
 * memory measurement, catch-up eviction, active expiry. */
#include <stdatomic.h>

#include "core/alloc.h"
#include "core/config.h"
#include "core/latency.h"
#include "store/evict.h"
#include "store/slab.h"
#include "store/store.h"

_Atomic int store_active_expire = 1;
_Atomic uint64_t store_expire_cycle_us;

void store_cron_clocks(int64_t now_ms)
{
    struct alloc_stats as;

    atomic_store_explicit(&store_lfu_minutes, (uint32_t)(now_ms / 60000) & 0xffffff,
                          memory_order_relaxed);
    alloc_stats(&as);
    store_measure_overhead((int64_t)(as.allocated + slab_used_bytes()));
}

void store_cron_worker(struct store *s, struct store_cron *sc, uint32_t first, uint32_t step,
                       int64_t now_ms)
{
    int64_t budget;

    /* writes evict before they run; this catches up when the last write went over */
    if (cfg.maxmemory > 0)
        store_make_room(s);
    /* Active expiry: a small slice of time, more while many sampled keys were expired. */
    budget = 1000000 / config_hz_now() / 40; /* 2.5% of the tick (dynamic-hz: its rate) */
    if (sc->expire_effort > 10)
        budget *= 10;
    if (!atomic_load_explicit(&store_active_expire, memory_order_relaxed))
        return;
    if (atomic_load_explicit(&store_replica, memory_order_relaxed)) {
        /* a replica's primary expires its keys (its DELs come in the stream) */
        if (first == 0)
            store_replica_expire(s, now_ms);
        return;
    }
    int64_t t0 = util_mono_us();
    sc->expire_effort = store_expire_cycle(s, first, step, now_ms, budget, &sc->expire_cursor);
    t0 = util_mono_us() - t0;
    atomic_fetch_add_explicit(&store_expire_cycle_us, (uint64_t)t0, memory_order_relaxed);
    latency_sample("expire-cycle", t0 / 1000);
}
