/* strval: the string-item semantics both protocols share. Creation with flags, TTL and CAS,
 * SET with and without reuse of the old allocation, Redis INCR (signed, overflow) and
 * memcached incr/decr (unsigned, wrapping, space padded in place unless pinned), append and
 * prepend (in place or fresh), new CAS values, the string-only lookup and the hit/miss
 * counters. Links only tc_store and tc_core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "store/store.h"
#include "store/strval.h"
#include "tap.h"

#define T0 1700000000000LL /* a fixed "now" in ms */

static struct store *s;

/* The live item of key (any type) under its lock, which the caller releases with unlock(). */
static struct item *lookup(const char *key, struct skey *k)
{
    store_key(s, k, 0, key, strlen(key));
    store_lock(s, k->stripe);
    return store_lookup_write_locked(s, k, T0);
}

static void unlock(const struct skey *k)
{
    store_unlock(s, k->stripe);
}

static int value_is(struct item *it, const char *want)
{
    return it && item_vlen(it) == strlen(want) && !memcmp(item_value(it), want, item_vlen(it));
}

static void test_create(void)
{
    struct skey k;
    struct item *it, *like;

    store_key(s, &k, 0, "c", 1);
    it = strval_create(&k, "abc", 3, 7, T0 + 5000, 1);
    ok(it && it->type == OBJ_STRING && value_is(it, "abc"), "create copies the value");
    ok(item_mcflags(it) == 7 && item_expire(it) == T0 + 5000, "flags and TTL set");
    ok((it->bits & IT_CAS) && item_cas_field(it) == 0, "CAS field present, none handed out");
    like = strval_create_like(&k, it, "xy", 2, 0);
    ok(value_is(like, "xy") && item_mcflags(like) == 7 && item_expire(like) == T0 + 5000 &&
           !(like->bits & IT_CAS),
       "create_like keeps flags and TTL, not the CAS field");
    item_release(like);
    item_release(it);
    it = strval_create(&k, NULL, 4, 0, 0, 0);
    ok(it && !(it->bits & (IT_FLAGS | IT_TTL | IT_CAS)) && item_vlen(it) == 4,
       "no flags, TTL or CAS: no optional fields");
    item_release(it);
}

static void test_set(void)
{
    struct skey k;
    struct item *old, *it;
    uint32_t pos;

    store_key(s, &k, 0, "s", 1);
    store_lock(s, k.stripe);
    old = store_lookup_pos_locked(s, &k, T0, &pos);
    it = strval_set_locked(s, &k, old, pos, "hello", 5, 3, 0, 0, 1);
    ok(old == NULL && value_is(it, "hello") && item_mcflags(it) == 3, "set inserts");
    old = store_lookup_pos_locked(s, &k, T0, &pos);
    it = strval_set_locked(s, &k, old, pos, "world", 5, 3, 0, 0, 1);
    ok(it == old && value_is(it, "world") && item_mcflags(it) == 3,
       "an overwrite of the same size reuses the item");
    it->bits |= IT_MC_STALE;
    old = store_lookup_pos_locked(s, &k, T0, &pos);
    it = strval_set_locked(s, &k, old, pos, "again", 5, 3, 0, 0, 0);
    ok(it != old && value_is(it, "again") && !(it->bits & IT_MC_STALE) && !it->mc_won,
       "without reuse a new item replaces it, memcached marks gone");
    ok(store_lookup_write_locked(s, &k, T0) == it, "the table holds the new item");
    store_unlock(s, k.stripe);
}

static void test_incr(void)
{
    struct skey k;
    struct item *it, *before;
    long long v = 0;

    it = lookup("i", &k);
    is_int(strval_incr_locked(s, &k, &it, 5, &v), STRVAL_OK, "incr of a missing key");
    ok(v == 5 && value_is(it, "5"), "missing counts as 0");
    before = it;
    is_int(strval_incr_locked(s, &k, &it, 3, &v), STRVAL_OK, "incr again");
    ok(v == 8 && it == before && value_is(it, "8"), "same length: rewritten in place");
    is_int(strval_incr_locked(s, &k, &it, 2, &v), STRVAL_OK, "incr to two digits");
    ok(v == 10 && value_is(it, "10") && store_lookup_write_locked(s, &k, T0) == it,
       "longer: a new item in the table");
    is_int(strval_incr_locked(s, &k, &it, -20, &v), STRVAL_OK, "decr below zero");
    ok(v == -10 && value_is(it, "-10"), "signed result");
    strval_set_locked(s, &k, it, 0, "9223372036854775807", 19, 0, 0, 0, 0);
    it = store_lookup_write_locked(s, &k, T0);
    is_int(strval_incr_locked(s, &k, &it, 1, &v), STRVAL_OVERFLOW, "overflow refused");
    ok(value_is(it, "9223372036854775807"), "value unchanged after overflow");
    strval_put_locked(s, &k, it, " 1", 2);
    it = store_lookup_write_locked(s, &k, T0);
    is_int(strval_incr_locked(s, &k, &it, 1, &v), STRVAL_NOT_NUMBER, "Redis refuses ' 1'");
    unlock(&k);
}

static void test_mc_delta(void)
{
    struct skey k;
    struct item *it, *before;
    uint64_t v = 0;

    it = lookup("m", &k);
    it = strval_put_locked(s, &k, NULL, "10", 2);
    before = it;
    is_int(strval_mc_delta_locked(s, &k, &it, 0, 1, 0, &v), STRVAL_OK, "decr 10 by 1");
    ok(v == 9 && it == before && value_is(it, "9 "), "shorter: in place, space padded");
    is_int(strval_mc_delta_locked(s, &k, &it, 1, 1, 1, &v), STRVAL_OK, "incr a pinned item");
    ok(v == 10 && it != before && value_is(it, "10"), "pinned: a new item, no padding");
    is_int(strval_mc_delta_locked(s, &k, &it, 0, 100, 0, &v), STRVAL_OK, "decr past zero");
    ok(v == 0 && value_is(it, "0 "), "decr stops at 0");
    strval_put_locked(s, &k, it, "18446744073709551615", 20);
    it = store_lookup_write_locked(s, &k, T0);
    is_int(strval_mc_delta_locked(s, &k, &it, 1, 2, 0, &v), STRVAL_OK, "incr past 2^64");
    ok(v == 1 && value_is(it, "1                   "), "incr wraps");
    strval_put_locked(s, &k, it, " 5", 2);
    it = store_lookup_write_locked(s, &k, T0);
    is_int(strval_mc_delta_locked(s, &k, &it, 1, 1, 0, &v), STRVAL_OK, "memcached reads ' 5'");
    ok(v == 6 && value_is(it, "6 "), "as strtoull does");
    strval_put_locked(s, &k, it, "abc", 3);
    it = store_lookup_write_locked(s, &k, T0);
    is_int(strval_mc_delta_locked(s, &k, &it, 1, 1, 0, &v), STRVAL_NOT_NUMBER, "non-numeric");
    strval_put_locked(s, &k, it, "", 0);
    it = store_lookup_write_locked(s, &k, T0);
    is_int(strval_mc_delta_locked(s, &k, &it, 1, 1, 0, &v), STRVAL_NOT_NUMBER, "empty value");
    unlock(&k);
}

static void test_concat(void)
{
    struct skey k;
    struct item *it, *first;
    uint64_t cas;

    it = lookup("a", &k);
    it = strval_set_locked(s, &k, NULL, 0, "ab", 2, 9, T0 + 60000, 0, 0);
    first = it;
    cas = store_cas_locked(s, &k, &it);
    ok(cas != 0, "a CAS value handed out");
    first = it;
    is_int(strval_concat_locked(s, &k, &it, "c", 1, 0), STRVAL_OK, "append");
    ok(value_is(it, "abc") && store_lookup_write_locked(s, &k, T0) == it, "appended");
    if (it == first)
        ok(item_cas_field(it) == 0, "grown in place: the CAS value is forgotten");
    else
        ok(item_cas_field(it) == 0, "a new item: no CAS value yet");
    ok(item_mcflags(it) == 9 && item_expire(it) == T0 + 60000, "flags and TTL kept");
    first = it;
    is_int(strval_concat_locked(s, &k, &it, "z", 1, STRVAL_FRESH | STRVAL_PREPEND), STRVAL_OK,
           "prepend");
    ok(value_is(it, "zabc") && it != first && store_lookup_write_locked(s, &k, T0) == it,
       "fresh: a new item in the table");
    ok(item_mcflags(it) == 9 && item_expire(it) == T0 + 60000, "flags and TTL kept again");
    unlock(&k);
}

static void test_cas_find_counters(void)
{
    struct skey k;
    struct item *it;
    struct store_totals t0, t1;
    uint64_t c1, c2;
    int expired = -1;

    it = lookup("n", &k);
    it = strval_put_locked(s, &k, NULL, "v", 1);
    c1 = strval_new_cas_locked(s, &k, &it, 0);
    c2 = strval_new_cas_locked(s, &k, &it, 0);
    ok(c1 && c2 && c2 != c1 && item_cas_field(it) == c2, "a new CAS value each time");
    ok(strval_new_cas_locked(s, &k, &it, 4242) == 4242 && item_cas_field(it) == 4242,
       "an explicit CAS value (meta E)");
    ok(strval_find_locked(s, &k, T0, &expired) == it && expired == 0, "find a string");
    store_set_expire_locked(s, &k, it, T0 - 1);
    ok(strval_find_locked(s, &k, T0, &expired) == NULL && expired == 1,
       "an expired item is removed and reported");
    /* another type is not a string */
    it = item_create(OBJ_LIST, "n", 1, sizeof(void *), 0);
    memset(item_value(it), 0, sizeof(void *));
    store_put_locked(s, &k, it);
    ok(strval_find_locked(s, &k, T0, NULL) == NULL, "another type is a miss");
    store_delete_locked(s, &k, T0);
    it = strval_put_locked(s, &k, NULL, "v", 1);
    unlock(&k);

    store_totals(s, &t0);
    store_lock(s, k.stripe);
    strval_hit_locked(s, &k, it, 1);
    ok(it->fetched, "a hit with bump sets the fetched bit");
    strval_hit_locked(s, &k, it, 0);
    strval_miss_locked(s, &k);
    store_unlock(s, k.stripe);
    store_totals(s, &t1);
    ok(t1.hits == t0.hits + 2 && t1.misses == t0.misses + 1, "hits and misses counted");
}

int main(void)
{
    config_defaults();
    s = store_create(64, 1);
    test_create();
    test_set();
    test_incr();
    test_mc_delta();
    test_concat();
    test_cas_find_counters();
    store_destroy(&s);
    return tap_done();
}
