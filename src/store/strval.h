/* String items: the semantics Redis strings and memcached items share, written once on top of
 * the store (Redis SET, APPEND, INCR...; memcached set, append, incr, ms, ma...). A string
 * item keeps its bytes inline, with optional memcached client flags, expire time and CAS value
 * (item.h). Functions named _locked run under k's stripe lock, held by the calling worker (any
 * worker); the items they return belong to the store and stay valid only while that lock is
 * held. Keys and values passed in are borrowed and copied. Where the protocols differ (Redis
 * INCR is signed with an overflow error, memcached incr is unsigned, wraps and pads with
 * spaces) each has its own entry point over the same rewrite. Never allocates except the
 * items it stores. */
#ifndef TC_STRVAL_H
#define TC_STRVAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store/store.h"

enum strval_res {
    STRVAL_OK = 0,
    STRVAL_NOT_NUMBER = -1, /* the value is not a number the protocol's incr accepts */
    STRVAL_OVERFLOW = -2,   /* Redis: the result would leave the signed 64-bit range */
    STRVAL_OOM = -3,        /* out of memory: nothing changed */
};

/* How strval_concat_locked changes a value. */
#define STRVAL_PREPEND 0x1 /* the new bytes go before the old ones (else after them) */
#define STRVAL_FRESH 0x2   /* always store a new item, never grow in place (memcached: the
                              result has fresh access data, fetched bit and meta marks) */
#define STRVAL_CAS 0x4     /* a new item gets a CAS field */

/* A new string item for k, not stored: vlen bytes copied from v (v NULL: left for the caller
 * to fill), memcached client flags (0: no field), absolute expire time in ms (0: none), and a
 * CAS field (0: none handed out yet) when with_cas. NULL when out of memory. Any thread; the
 * caller owns the item until it stores it. */
struct item *strval_create(const struct skey *k, const char *v, size_t vlen, uint32_t flags,
                           int64_t exp, int with_cas);
/* strval_create keeping the memcached flags and expire time of like (NULL: none): a new value
 * for a key whose item was like. like is only read. */
struct item *strval_create_like(const struct skey *k, struct item *like, const char *v,
                                size_t vlen, int with_cas);

/* Store v as k's value in place of old (k's live item, or NULL), keeping old's flags and
 * expire time, without a CAS field. Returns the item now in the table, or NULL when out of
 * memory (nothing changed). */
struct item *strval_put_locked(struct store *s, const struct skey *k, struct item *old,
                               const char *v, size_t vlen);

/* SET: store v as k's value with memcached flags, absolute expire time exp (0: none) and a
 * CAS field when with_cas; old and pos are what store_lookup_pos_locked returned for k (old
 * NULL: insert; old of any type is replaced). When reuse is set and old's layout and size
 * class allow, old's allocation is rewritten (no malloc/free: the hot path), else a new item
 * replaces it. Either way the result carries no memcached marks and no CAS value yet. Returns
 * the item now in the table, or NULL when out of memory (k unchanged). */
static inline struct item *strval_set_locked(struct store *s, const struct skey *k,
                                             struct item *old, uint32_t pos, const char *v,
                                             size_t vlen, uint32_t flags, int64_t exp,
                                             int with_cas, int reuse)
{
    /* inline: SET's hot path, where the constant arguments fold away */
    uint8_t bits = (uint8_t)((flags ? IT_FLAGS : 0) | item_ttl_bits(exp) | (with_cas ? IT_CAS : 0));
    struct item *it;

    /* an overwrite of a value of about the same size reuses the item (no malloc/free) */
    if (reuse && old && (it = store_reuse_locked(s, k, old, vlen, bits, exp)) != NULL) {
        if (flags)
            memcpy(item_opt(it, IT_FLAGS), &flags, 4);
        memcpy(item_value(it), v, vlen);
        return it;
    }
    it = strval_create(k, v, vlen, flags, exp, with_cas);
    if (!it || store_put_at_locked(s, k, old, pos, it))
        return NULL;
    return it;
}

/* Change n bytes of it's value at off in place: the caller checked item_writable(it) and the
 * bounds. CAS values handed out before no longer match (gets/cas, WATCH). Under the lock. */
static inline void strval_overwrite(struct item *it, size_t off, const char *p, size_t n)
{
    memcpy(item_value(it) + off, p, n);
    item_cas_invalidate(it);
}

/* APPEND, memcached append/prepend: add data[0..n) to the value of *itp, k's live string item
 * (the caller checked the length limit). An append grows the item in place when no reader
 * holds it, its refcounting class is kept and its allocation has room (not with STRVAL_FRESH),
 * invalidating its CAS value; otherwise a new item with old's flags and expire time (and a CAS
 * field with STRVAL_CAS) replaces it. how: STRVAL_* bits. *itp becomes the item holding the
 * result. Returns STRVAL_OK or STRVAL_OOM. */
int strval_concat_locked(struct store *s, const struct skey *k, struct item **itp,
                         const char *data, size_t n, unsigned how);

/* Redis INCRBY/DECRBY: *itp is k's live item (NULL: missing, counts as 0; the caller checked
 * that it is a string). The value must be a signed 64-bit decimal as Redis reads them
 * (STRVAL_NOT_NUMBER) and value + delta must stay in range (STRVAL_OVERFLOW). The digits are
 * rewritten in place when their length is unchanged and no reader holds the item, else a new
 * item with the old flags and expire time is stored. On STRVAL_OK sets *out and *itp. */
int strval_incr_locked(struct store *s, const struct skey *k, struct item **itp,
                       long long delta, long long *out);

/* memcached incr/decr: *itp is k's live string item (not NULL). The value is read as
 * memcached's safe_strtoull reads it (empty or not a number: STRVAL_NOT_NUMBER); incr wraps
 * at 2^64, decr stops at 0. As memcached's do_add_delta, a result no longer than the value is
 * written in place, padded with spaces, with an access bump, unless the value is large
 * (IT_REF) or pinned (memcached: a reply of the previous command still holds the item); else a
 * new item with the old flags and expire time is stored. On STRVAL_OK sets *out and *itp. */
int strval_mc_delta_locked(struct store *s, const struct skey *k, struct item **itp, int incr,
                           uint64_t delta, int pinned, uint64_t *out);

/* Give *itp, k's live item, a new CAS value: explicit when nonzero (memcached meta E), else the
 * stripe's next one. May reallocate the item to add the field (*itp updated). Returns the
 * value, or 0 when out of memory. */
uint64_t strval_new_cas_locked(struct store *s, const struct skey *k, struct item **itp,
                               uint64_t explicit_cas);

/* The live string item of k, or NULL (missing, expired, or another type: a memcached miss),
 * without counting a hit or miss. *expired (unless NULL) is set to 1 when this lookup removed
 * an expired item, else 0. */
static inline struct item *strval_find_locked(struct store *s, const struct skey *k,
                                              int64_t now, int *expired)
{
    struct stripe *st = &s->stripes[k->stripe];
    uint64_t before = st->expired;
    struct item *it = store_lookup_write_locked(s, k, now);

    if (expired)
        *expired = st->expired != before;
    return it && it->type == OBJ_STRING ? it : NULL;
}

/* Keyspace hit and miss counters of k's stripe (INFO keyspace_hits/misses). A hit with bump
 * also records the access for the eviction policy and sets the fetched bit (memcached's
 * "fetched"); without (memcached mg u) it is only counted. */
static inline void strval_hit_locked(struct store *s, const struct skey *k, struct item *it,
                                     int bump)
{
    COUNTER_ADD(s->stripes[k->stripe].hits, 1);
    if (bump) {
        store_touch(it);
        it->fetched = 1;
    }
}
static inline void strval_miss_locked(struct store *s, const struct skey *k)
{
    COUNTER_ADD(s->stripes[k->stripe].misses, 1);
}

#endif
