#include "store/store.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/util.h"
#include "store/evict.h"
#include "store/lazyfree.h"
#include "store/slab.h"

_Atomic uint32_t store_lru_clock;
_Thread_local const uint64_t *store_held;
store_gone_fn *_Atomic store_gone_hook;
store_event_fn *store_event_hook;
_Atomic int64_t store_mem_total;
_Thread_local int64_t store_mem_pending;

_Thread_local int store_no_touch;
_Thread_local int store_no_expire;
_Atomic int store_snap_active;
store_snap_fn *store_snap_hook;
store_snap_key_fn *store_snap_key_hook;
_Thread_local int store_snap_readonly;

struct store *store_create(uint32_t nstripes, int ndb)
{
    struct store *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->nstripes = nstripes;
    s->mask = nstripes - 1;
    s->ndb = ndb;
    if (posix_memalign((void **)&s->stripes, 64, sizeof(struct stripe) * nstripes))
        goto out_free_store;
    memset(s->stripes, 0, sizeof(struct stripe) * nstripes);
    for (uint32_t i = 0; i < nstripes; i++) {
        struct stripe *st = &s->stripes[i];
        atomic_init(&st->lock.v, 0);
        st->db = calloc((size_t)ndb, sizeof(struct ht));
        if (!st->db)
            goto out_free_stripes;
        st->cas = i; /* distinct starting points keep values unique across stripes */
        st->cas <<= 32;
    }
    s->all = malloc(((nstripes + 63) / 64) * 8);
    if (!s->all)
        goto out_free_stripes;
    memset(s->all, 0xff, ((nstripes + 63) / 64) * 8);
    if (nstripes % 64)
        s->all[nstripes / 64] = (1ULL << (nstripes % 64)) - 1;
    return s;
out_free_stripes:
    for (uint32_t i = 0; i < nstripes; i++)
        free(s->stripes[i].db);
    free(s->stripes);
out_free_store:
    free(s);
    return NULL;
}

void store_destroy(struct store **sp)
{
    struct store *s = *sp;

    if (!s)
        return;
    store_flush(s, -1);
    for (uint32_t i = 0; i < s->nstripes; i++) {
        for (int d = 0; d < s->ndb; d++)
            ht_deinit(&s->stripes[i].db[d]);
        free(s->stripes[i].db);
    }
    free(s->stripes);
    free(s->all);
    free(s);
    *sp = NULL;
}

#define BITMAP_WORDS(s) (((s)->nstripes + 63) / 64)

static void collect(struct store *s, const struct skey *keys, int n, uint64_t *bm)
{
    memset(bm, 0, BITMAP_WORDS(s) * 8);
    for (int i = 0; i < n; i++)
        bm[keys[i].stripe >> 6] |= 1ULL << (keys[i].stripe & 63);
}

/* Lock the stripes set in bm in ascending order, skipping those this thread already holds,
 * without ever waiting while holding one: each is tried, and when one is busy those taken are
 * released and the busy one is waited for alone, then the others are tried again. So a thread
 * that holds stripes is never waited for by another that holds stripes and waits: a script
 * that must take a stripe below those it holds after it wrote (cmd_script.c) can wait for it
 * without a deadlock. Uncontended, it costs what locking in order costs. */
static void lock_bitmap(struct store *s, const uint64_t *bm)
{
    uint32_t words = BITMAP_WORDS(s), waited = UINT32_MAX;

    for (;;) {
        uint32_t failed = UINT32_MAX;
        if (waited != UINT32_MAX)
            tc_lock(&s->stripes[waited].lock);
        for (uint32_t w = 0; w < words && failed == UINT32_MAX; w++) {
            uint64_t b = bm[w];
            while (b) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(b);
                b &= b - 1;
                if (i == waited || store_is_held(i))
                    continue;
                if (tc_trylock(&s->stripes[i].lock)) {
                    failed = i;
                    break;
                }
            }
        }
        if (failed == UINT32_MAX) {
            /* a forkless snapshot copies each stripe just taken first (store_snap_check) */
            if (TC_UNLIKELY(atomic_load_explicit(&store_snap_active, memory_order_relaxed))) {
                for (uint32_t w2 = 0; w2 < words; w2++)
                    for (uint64_t b = bm[w2]; b; b &= b - 1) {
                        uint32_t i = w2 * 64 + (uint32_t)__builtin_ctzll(b);
                        if (!store_is_held(i))
                            store_snap_hook(s, i);
                    }
            }
            return;
        }
        /* release what this pass took (the stripes below failed) and the one waited for */
        for (uint32_t w = 0; w <= (failed >> 6); w++) {
            uint64_t b = bm[w];
            if (w == (failed >> 6))
                b &= (1ULL << (failed & 63)) - 1;
            while (b) {
                uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(b);
                b &= b - 1;
                if (i != waited && !store_is_held(i))
                    tc_unlock(&s->stripes[i].lock);
            }
        }
        if (waited != UINT32_MAX)
            tc_unlock(&s->stripes[waited].lock);
        waited = failed;
    }
}

void store_lock_keys(struct store *s, const struct skey *keys, int n)
{
    if (n == 1) {
        store_lock(s, keys[0].stripe);
        return;
    }
    uint64_t bm[BITMAP_WORDS(s)];
    collect(s, keys, n, bm);
    lock_bitmap(s, bm);
}

void store_unlock_keys(struct store *s, const struct skey *keys, int n)
{
    if (n == 1) {
        store_unlock(s, keys[0].stripe);
        return;
    }
    uint64_t bm[BITMAP_WORDS(s)];
    collect(s, keys, n, bm);
    for (uint32_t w = 0; w < BITMAP_WORDS(s); w++) {
        uint64_t b = bm[w];
        while (b) {
            store_unlock(s, w * 64 + (uint32_t)__builtin_ctzll(b));
            b &= b - 1;
        }
    }
}

static inline int64_t item_mem(struct item *it)
{
    return (int64_t)(item_alloc_size(it) + item_value_mem(it));
}

static inline void mem_addv(struct stripe *st, int64_t d)
{
    COUNTER_ADD(st->mem, d);
    store_mem_add(d);
}

static inline void vol_add(struct stripe *st, struct ht *t, int d)
{
    COUNTER_ADD(t->nvolatile, (uint32_t)d);
    COUNTER_ADD(st->nvolatile, (uint32_t)d);
}

static inline void mem_sub(struct stripe *st, int64_t d)
{
    mem_addv(st, -d);
}

void store_reserve_locked(struct store *s, int db, uint64_t n)
{
    /* the keys of a stripe are a binomial share of n: its mean plus four standard deviations
     * (about its square root), so few tables still grow */
    uint64_t mean = n / s->nstripes;
    uint64_t each = mean + 4 * ((uint64_t)sqrt((double)mean) + 1);

    if (db < 0 || db >= s->ndb || n == 0)
        return;
    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct stripe *st = &s->stripes[i];
        struct ht *t = &st->db[db];
        size_t before = ht_mem(t);
        if (ht_reserve(t, t->count + each))
            return; /* out of memory: the rest grow as keys come */
        mem_addv(st, (int64_t)ht_mem(t) - (int64_t)before);
    }
}

/* Remove the item at pos of table t and release it. */
static void remove_at(struct store *s, struct stripe *st, struct ht *t, uint32_t pos,
                      struct item *it)
{
    size_t before = ht_mem(t);
    if (item_expire(it))
        vol_add(st, t, -1);
    mem_sub(st, item_mem(it));
    ht_delete_at(t, pos);
    ht_maybe_shrink(t);
    mem_addv(st, (int64_t)ht_mem(t) - (int64_t)before);
    lazyfree_release(it, cfg.lazyfree_lazy_expire); /* only expiry removes keys here */
}

void store_prefetch(struct store *s, const struct skey *keys, int n)
{
    /* one stage for all keys before the next, so the misses of a stage overlap */
    for (int i = 0; i < n; i++)
        __builtin_prefetch(&s->stripes[keys[i].stripe], 1); /* lock word and db pointer */
    for (int i = 0; i < n; i++)
        __builtin_prefetch(&s->stripes[keys[i].stripe].db[keys[i].db]); /* db: set at create */
    for (int i = 0; i < n; i++)
        ht_prefetch_slot(&s->stripes[keys[i].stripe].db[keys[i].db], keys[i].hash);
    for (int i = 0; i < n; i++) {
        /* the lock alone, without a snapshot's copy-before-write: nothing changes here */
        tc_lock(&s->stripes[keys[i].stripe].lock);
        ht_prefetch(&s->stripes[keys[i].stripe].db[keys[i].db], keys[i].hash);
        tc_unlock(&s->stripes[keys[i].stripe].lock);
    }
}

_Atomic int64_t store_expire_paused_until;
_Atomic int store_replica;
_Thread_local int store_expire_force;
static __thread int store_read_only_lookup; /* lookup() on behalf of a read */

static struct item *lookup(struct store *s, const struct skey *k, int64_t now, uint32_t *posp)
{
    struct stripe *st = &s->stripes[k->stripe];
    struct ht *t = &st->db[k->db];
    uint32_t pos = 0;
    struct item *it = ht_find(t, k->hash, k->p, k->n, &pos);
    int64_t exp;

    if (!it)
        return NULL;
    exp = item_expire(it);
    if (TC_UNLIKELY(exp) && exp <= now && TC_LIKELY(!store_no_expire)) {
        if (TC_UNLIKELY(atomic_load_explicit(&store_replica, memory_order_relaxed)) &&
            !store_expire_force)
            return NULL; /* a replica: expired to readers, deleted by its primary's DEL */
        if (TC_UNLIKELY(store_read_only_lookup) &&
            atomic_load_explicit(&store_expire_paused_until, memory_order_relaxed) > now)
            return NULL; /* CLIENT PAUSE: expired to readers, deleted once the pause ends */
        if (TC_UNLIKELY(atomic_load_explicit(&store_snap_active, memory_order_relaxed))) {
            /* a forkless snapshot keeps the key first: a read-only command's stripe was not
             * copied, nor is one a one-key write holds (the key may be another one of it) */
            int ro = store_snap_readonly;
            store_snap_readonly = 0;
            store_snap_key_hook(s, k);
            store_snap_readonly = ro;
        }
        COUNTER_ADD(st->expired, 1);
        store_gone(STORE_GONE_EXPIRED, k->db, k->p, k->n);
        remove_at(s, st, t, pos, it);
        return NULL;
    }
    *posp = pos;
    return it;
}

struct item *store_lookup_read_locked(struct store *s, const struct skey *k, int64_t now)
{
    uint32_t pos;
    store_read_only_lookup = 1;
    struct item *it = lookup(s, k, now, &pos);
    store_read_only_lookup = 0;
    struct stripe *st = &s->stripes[k->stripe];

    if (it) {
        COUNTER_ADD(st->hits, 1);
        if (TC_LIKELY(!store_no_touch))
            store_touch(it);
        it->fetched = 1;
    } else {
        COUNTER_ADD(st->misses, 1);
        /* keyspace event class m: Redis's "keymiss", where it counts keyspace_misses */
        if (TC_UNLIKELY(__atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED) &
                        NOTIFY_KEY_MISS) && store_event_hook)
            store_event_hook(STORE_EVENT_MISS, k->db, k->p, k->n);
    }
    return it;
}

struct item *store_lookup_notouch_locked(struct store *s, const struct skey *k, int64_t now)
{
    uint32_t pos;
    struct item *it = lookup(s, k, now, &pos);

    if (it) {
        COUNTER_ADD(s->stripes[k->stripe].hits, 1);
    } else {
        COUNTER_ADD(s->stripes[k->stripe].misses, 1);
        if (TC_UNLIKELY(__atomic_load_n(&cfg.notify_keyspace_events, __ATOMIC_RELAXED) &
                        NOTIFY_KEY_MISS) && store_event_hook)
            store_event_hook(STORE_EVENT_MISS, k->db, k->p, k->n);
    }
    return it;
}

struct item *store_lookup_write_locked(struct store *s, const struct skey *k, int64_t now)
{
    uint32_t pos;
    return lookup(s, k, now, &pos);
}

struct item *store_lookup_pos_locked(struct store *s, const struct skey *k, int64_t now,
                                     uint32_t *pos)
{
    int force = store_expire_force;
    struct item *it;

    /* the caller inserts when it finds nothing: an expired key goes first, even on a
     * replica, or the table would hold the key twice */
    store_expire_force = 1;
    it = lookup(s, k, now, pos);
    store_expire_force = force;
    return it;
}

/* Put it at pos in place of old (same key), with the bookkeeping of a swap. */
static void swap_at(struct stripe *st, struct ht *t, uint32_t pos, struct item *old,
                    struct item *it)
{
    ht_replace_at(t, pos, it);
    vol_add(st, t, (item_expire(it) != 0) - (item_expire(old) != 0));
    mem_addv(st, item_mem(it) - item_mem(old));
    lazyfree_release(old, cfg.lazyfree_lazy_server_del); /* an overwrite */
}

int store_put_at_locked(struct store *s, const struct skey *k, struct item *old, uint32_t pos,
                        struct item *it)
{
    struct stripe *st = &s->stripes[k->stripe];
    struct ht *t = &st->db[k->db];

    store_touch_new(it);
    COUNTER_ADD(st->stored, 1);
    if (old) {
        swap_at(st, t, pos, old, it);
        return 0;
    }
    size_t before = ht_mem(t);
    if (ht_insert(t, k->hash, it)) {
        item_release(it);
        return -1;
    }
    mem_addv(st, (int64_t)ht_mem(t) - (int64_t)before + item_mem(it));
    if (item_expire(it))
        vol_add(st, t, 1);
    return 0;
}

int store_put_locked(struct store *s, const struct skey *k, struct item *it)
{
    struct ht *t = &s->stripes[k->stripe].db[k->db];
    uint32_t pos = 0;
    struct item *old = ht_find(t, k->hash, k->p, k->n, &pos);

    return store_put_at_locked(s, k, old, pos, it);
}

void store_swap_locked(struct store *s, const struct skey *k, struct item *old, struct item *it)
{
    struct stripe *st = &s->stripes[k->stripe];
    struct ht *t = &st->db[k->db];
    uint32_t pos;

    if (ht_find(t, k->hash, k->p, k->n, &pos) != old)
        return;
    swap_at(st, t, pos, old, it);
}

struct item *store_reuse_locked(struct store *s, const struct skey *k, struct item *old,
                                size_t vlen, uint8_t bits, int64_t exp)
{
    struct stripe *st = &s->stripes[k->stripe];
    size_t have, want;

    bits &= IT_FLAGS | IT_TTL | IT_CAS;
    /* a refcounted value may still be queued for a socket; other types own a structure */
    if (old->type != OBJ_STRING || vlen >= ITEM_REF_MIN || !item_vlen_same_form(old, vlen) ||
        (old->bits & (IT_REF | IT_FLAGS | IT_TTL | IT_CAS)) != bits)
        return NULL;
    have = item_total_size(old);
    want = have - item_vlen(old) + vlen;
    if (old->slab) {
        /* the slab class (and so the accounted size) must stay the same */
        if (want < SLAB_MIN || slab_round(want) != slab_round(have))
            return NULL;
    } else if (want > have && want > item_room(old)) {
        return NULL;
    }
    /* the accounted size (usable size or slab class) is unchanged: only TTL counts move */
    if ((exp != 0) != (item_expire(old) != 0))
        vol_add(st, &st->db[k->db], exp ? 1 : -1);
    old->bits &= (uint8_t)~IT_MC_STALE;
    old->mc_won = 0;
    old->fetched = 0;
    item_set_vlen(old, vlen);
    if (bits) {
        memset(old->data, 0, item_opt_size[bits]); /* flags, expire, CAS as item_create */
        if (bits & IT_TTL)
            item_set_expire_field(old, exp);
    }
    store_touch_new(old);
    COUNTER_ADD(st->stored, 1);
    return old;
}

int store_delete_locked(struct store *s, const struct skey *k, int64_t now)
{
    return store_delete_lazy_locked(s, k, now, cfg.lazyfree_lazy_server_del);
}

int store_delete_lazy_locked(struct store *s, const struct skey *k, int64_t now, int lazy)
{
    struct item *it = store_unlink_locked(s, k, now);

    if (!it)
        return 0;
    lazyfree_release(it, lazy);
    return 1;
}

struct item *store_unlink_locked(struct store *s, const struct skey *k, int64_t now)
{
    struct stripe *st = &s->stripes[k->stripe];
    struct ht *t = &st->db[k->db];
    uint32_t pos;
    struct item *it = ht_find(t, k->hash, k->p, k->n, &pos);
    int64_t exp;
    size_t before;

    if (!it)
        return NULL;
    exp = item_expire(it);
    if (exp && exp <= now && !store_no_expire) {
        if (atomic_load_explicit(&store_replica, memory_order_relaxed) && !store_expire_force)
            return NULL; /* a replica keeps it for its primary's DEL */
        COUNTER_ADD(st->expired, 1);
        store_gone(STORE_GONE_EXPIRED, k->db, k->p, k->n);
        remove_at(s, st, t, pos, it);
        return NULL;
    }
    before = ht_mem(t);
    if (exp)
        vol_add(st, t, -1);
    mem_sub(st, item_mem(it));
    ht_delete_at(t, pos);
    ht_maybe_shrink(t);
    mem_addv(st, (int64_t)ht_mem(t) - (int64_t)before);
    return it;
}

struct item *store_set_expire_locked(struct store *s, const struct skey *k, struct item *it,
                                     int64_t ms)
{
    struct stripe *st = &s->stripes[k->stripe];
    struct ht *t = &st->db[k->db];

    if ((it->bits & IT_TTL) && item_expire_fits(it, ms)) {
        vol_add(st, t, (ms != 0) - (item_expire(it) != 0));
        item_set_expire_field(it, ms);
        return it;
    }
    if (ms == 0)
        return it;
    /* no expire field, or one whose form cannot hold ms */
    struct item *n = item_recreate(it, (uint8_t)((it->bits & ~IT_TTL) | item_ttl_bits(ms)));
    if (!n)
        return NULL;
    item_set_expire_field(n, ms);
    store_swap_locked(s, k, it, n);
    return n;
}

uint64_t store_cas_locked(struct store *s, const struct skey *k, struct item **itp)
{
    struct item *it = *itp;
    uint64_t cas;

    if (it->bits & IT_CAS) {
        cas = item_cas_field(it);
        if (cas)
            return cas;
    } else {
        struct item *n = item_recreate(it, (uint8_t)(it->bits | IT_CAS));
        if (!n)
            return 0;
        store_swap_locked(s, k, it, n);
        *itp = it = n;
    }
    cas = store_next_cas_locked(s, k->stripe);
    memcpy(item_opt(it, IT_CAS), &cas, 8);
    return cas;
}

void store_visit_stripe(struct store *s, int db, uint32_t stripe, int64_t now,
                        store_visit_fn *cb, void *arg)
{
    struct stripe *st = &s->stripes[stripe];
    struct ht *t;

    store_lock(s, stripe);
    t = &st->db[db];
    for (uint32_t i = 0; i < ht_size(t); i++) {
        struct item *it = ht_item_at(t, i);
        int64_t exp;
        if (!it)
            continue;
        exp = item_expire(it);
        if (exp && exp <= now)
            continue;
        if (cb(it, arg))
            break;
    }
    store_unlock(s, stripe);
}

void store_expire_stripe(struct store *s, int db, uint32_t stripe, int64_t now)
{
    struct ht *t = &s->stripes[stripe].db[db];
    char keys[4096];
    size_t used = 0;
    int more = 1;

    if (!__atomic_load_n(&t->nvolatile, __ATOMIC_RELAXED) || store_no_expire ||
        (atomic_load_explicit(&store_replica, memory_order_relaxed) && !store_expire_force))
        return; /* a replica's expired keys stay until its primary deletes them */
    store_lock(s, stripe);
    /* names first (deleting shifts and may shrink the table), then each through the lazy
     * path; a batch at a time when the names do not fit */
    while (more) {
        more = 0;
        used = 0;
        for (uint32_t i = 0; i < ht_size(t); i++) {
            struct item *it = ht_item_at(t, i);
            int64_t exp;
            if (!it || !(exp = item_expire(it)) || exp > now)
                continue;
            if (used + sizeof(uint32_t) + item_klen(it) > sizeof(keys)) {
                more = used > 0;
                break;
            }
            uint32_t kl = (uint32_t)item_klen(it);
            memcpy(keys + used, &kl, sizeof(kl));
            memcpy(keys + used + sizeof(kl), item_key(it), kl);
            used += sizeof(kl) + kl;
        }
        for (size_t at = 0; at < used;) {
            struct skey k;
            uint32_t kl;
            memcpy(&kl, keys + at, sizeof(kl));
            store_key(s, &k, db, keys + at + sizeof(kl), kl);
            store_lookup_write_locked(s, &k, now);
            at += sizeof(kl) + kl;
        }
    }
    store_unlock(s, stripe);
}

int store_random_key(struct store *s, int db, int64_t now, struct buf *out)
{
    for (int tries = 0; tries < 100000; tries++) {
        uint32_t stripe;
        struct ht *t;
        int r = 1;

        if ((tries & 63) == 0 && store_dbsize(s, db) == 0)
            return -1;
        stripe = (uint32_t)random() & s->mask;
        t = &s->stripes[stripe].db[db];
        store_lock(s, stripe);
        if (t->count) {
            uint32_t size = ht_size(t), i = ht_reduce(t, (uint32_t)random());
            for (uint32_t j = 0; j < size; j++, i = ht_next(t, i)) {
                struct item *it = ht_item_at(t, i);
                int64_t exp;
                if (!it)
                    continue;
                exp = item_expire(it);
                /* (a replica, after 100 draws, answers an expired key, as Redis's
                 * dbRandomKey does when its primary is slow to delete them) */
                if (exp && exp <= now &&
                    !(tries >= 100 && atomic_load_explicit(&store_replica, memory_order_relaxed))) {
                    /* as Redis's RANDOMKEY: an expired key met is deleted (through the lazy
                     * path: counted, propagated as DEL), then another is drawn */
                    struct skey k;
                    if (store_no_expire ||
                        atomic_load_explicit(&store_replica, memory_order_relaxed))
                        continue; /* a replica does not delete it: another is drawn */
                    store_key(s, &k, db, item_key(it), item_klen(it));
                    store_lookup_write_locked(s, &k, now);
                    break;
                }
                r = buf_append(out, item_key(it), item_klen(it));
                break;
            }
        }
        store_unlock(s, stripe);
        if (r <= 0)
            return r;
    }
    return -1;
}

uint64_t store_dbsize(struct store *s, int db)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < s->nstripes; i++)
        n += __atomic_load_n(&s->stripes[i].db[db].count, __ATOMIC_RELAXED);
    return n;
}

size_t store_db_table_bytes(struct store *s, int db)
{
    size_t n = 0;

    for (uint32_t i = 0; i < s->nstripes; i++) {
        store_lock(s, i);
        n += ht_mem(&s->stripes[i].db[db]);
        store_unlock(s, i);
    }
    return n;
}

uint64_t store_db_expires(struct store *s, int db)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < s->nstripes; i++)
        n += __atomic_load_n(&s->stripes[i].db[db].nvolatile, __ATOMIC_RELAXED);
    return n;
}

void store_swapdb_locked(struct store *s, int a, int b)
{
    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct ht t = s->stripes[i].db[a];
        s->stripes[i].db[a] = s->stripes[i].db[b];
        s->stripes[i].db[b] = t;
    }
}

uint64_t store_flush(struct store *s, int db)
{
    return store_flush_lazy(s, db, 0);
}

uint64_t store_flush_lazy(struct store *s, int db, int lazy)
{
    uint64_t removed = 0;

    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct stripe *st = &s->stripes[i];
        int first = db >= 0 ? db : 0, n = db >= 0 ? 1 : s->ndb;
        store_lock(s, i);
        for (int d = first; d < first + n; d++) {
            struct ht *t = &st->db[d];
            for (uint32_t j = 0; j < ht_size(t); j++) {
                struct item *it = ht_item_at(t, j);
                if (it) {
                    mem_sub(st, item_mem(it));
                    if (!lazy)
                        item_release(it);
                    removed++;
                }
            }
            mem_sub(st, (int64_t)ht_mem(t));
            COUNTER_ADD(st->nvolatile, -t->nvolatile);
            if (!lazy)
                ht_deinit(t);
        }
        if (lazy)
            lazyfree_tables(&st->db[first], n); /* leaves them empty */
        store_unlock(s, i);
    }
    return removed;
}

/* Examine up to max slots of t from its sweep cursor; delete expired items. */
static void sweep_table(struct store *s, struct stripe *st, struct ht *t, int64_t now, int max,
                        int *sampled, int *expired)
{
    uint32_t i;
    int removed = 0;

    if (!t->nvolatile || !t->slots ||
        atomic_load_explicit(&store_expire_paused_until, memory_order_relaxed) > now)
        return;
    i = t->sweep < t->size ? t->sweep : 0;
    for (int n = 0; n < max && t->nvolatile; n++) {
        struct item *it = ht_item_at(t, i);
        if (it) {
            int64_t exp = item_expire(it);
            if (exp) {
                (*sampled)++;
                if (exp <= now) {
                    (*expired)++;
                    COUNTER_ADD(st->expired, 1);
                    COUNTER_ADD(st->expired_swept, 1);
                    if (!it->fetched)
                        COUNTER_ADD(st->expired_unfetched, 1);
                    store_gone(STORE_GONE_EXPIRED, (int)(t - st->db), item_key(it), item_klen(it));
                    if (store_removed_hook)
                        store_removed_hook(STORE_GONE_EXPIRED, (int)(t - st->db), it);
                    if (item_expire(it))
                        vol_add(st, t, -1);
                    mem_sub(st, item_mem(it));
                    ht_delete_at(t, i);
                    lazyfree_release(it, cfg.lazyfree_lazy_expire);
                    removed++;
                    continue; /* an entry may have shifted into slot i */
                }
            }
        }
        i = ht_next(t, i);
    }
    t->sweep = i;
    if (removed) {
        size_t before = ht_mem(t);
        ht_maybe_shrink(t);
        mem_addv(st, (int64_t)ht_mem(t) - (int64_t)before);
    }
}

int store_expire_cycle(struct store *s, uint32_t first, uint32_t step, int64_t now,
                       int64_t budget_us, uint32_t *cursor)
{
    int64_t start = util_mono_us();
    int sampled = 0, expired = 0;
    uint32_t nmine = (s->nstripes - first + step - 1) / step;

    for (uint32_t n = 0; n < nmine; n++) {
        uint32_t stripe = first + ((*cursor + n) % nmine) * step;
        struct stripe *st = &s->stripes[stripe];
        if (!__atomic_load_n(&st->nvolatile, __ATOMIC_RELAXED))
            continue;
        store_lock(s, stripe);
        for (int d = 0; d < s->ndb; d++)
            sweep_table(s, st, &st->db[d], now, 256, &sampled, &expired);
        store_unlock(s, stripe);
        if ((n & 7) == 7 && util_mono_us() - start > budget_us) {
            *cursor = (*cursor + n + 1) % nmine;
            return sampled ? expired * 100 / sampled : 0;
        }
    }
    return sampled ? expired * 100 / sampled : 0;
}

void store_totals(struct store *s, struct store_totals *t)
{
    memset(t, 0, sizeof(*t));
    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct stripe *st = &s->stripes[i];
        for (int d = 0; d < s->ndb; d++) {
            t->keys += __atomic_load_n(&st->db[d].count, __ATOMIC_RELAXED);
            t->expires += __atomic_load_n(&st->db[d].nvolatile, __ATOMIC_RELAXED);
        }
        t->hits += __atomic_load_n(&st->hits, __ATOMIC_RELAXED);
        t->misses += __atomic_load_n(&st->misses, __ATOMIC_RELAXED);
        t->expired += __atomic_load_n(&st->expired, __ATOMIC_RELAXED);
        t->evicted += __atomic_load_n(&st->evicted, __ATOMIC_RELAXED);
        t->stored += __atomic_load_n(&st->stored, __ATOMIC_RELAXED);
        t->expired_unfetched += __atomic_load_n(&st->expired_unfetched, __ATOMIC_RELAXED);
        t->evicted_unfetched += __atomic_load_n(&st->evicted_unfetched, __ATOMIC_RELAXED);
        t->expired_swept += __atomic_load_n(&st->expired_swept, __ATOMIC_RELAXED);
        t->mem += __atomic_load_n(&st->mem, __ATOMIC_RELAXED);
    }
}

void store_reset_stats(struct store *s)
{
    lazyfree_reset_stats(); /* lazyfreed_objects, as Redis's CONFIG RESETSTAT */
    atomic_store_explicit(&store_expire_cycle_us, 0, memory_order_relaxed);
    store_evict_reset_stats();
    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct stripe *st = &s->stripes[i];
        store_lock(s, i);
        __atomic_store_n(&st->hits, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->misses, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->expired, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->evicted, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->stored, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->expired_unfetched, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->evicted_unfetched, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&st->expired_swept, 0, __ATOMIC_RELAXED);
        store_unlock(s, i);
    }
}

void store_hold_set(struct store *s, const uint64_t *bm)
{
    store_held = NULL;
    lock_bitmap(s, bm);
    store_held = bm;
}

void store_release_set(struct store *s, const uint64_t *bm)
{
    store_held = NULL;
    for (uint32_t w = 0; w < BITMAP_WORDS(s); w++) {
        uint64_t b = bm[w];
        while (b) {
            tc_unlock(&s->stripes[w * 64 + (uint32_t)__builtin_ctzll(b)].lock);
            b &= b - 1;
        }
    }
}
