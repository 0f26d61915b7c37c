/* String items shared by the Redis string commands and the memcached commands (strval.h). */
#include "store/strval.h"

#include <limits.h>
#include <string.h>

#include "core/util.h"

struct item *strval_create(const struct skey *k, const char *v, size_t vlen, uint32_t flags,
                           int64_t exp, int with_cas)
{
    uint8_t bits = (uint8_t)((flags ? IT_FLAGS : 0) | item_ttl_bits(exp) | (with_cas ? IT_CAS : 0));
    struct item *it = item_create(OBJ_STRING, k->p, k->n, vlen, bits);

    if (!it)
        return NULL;
    if (flags)
        memcpy(item_opt(it, IT_FLAGS), &flags, 4);
    if (exp)
        item_set_expire_field(it, exp);
    if (v)
        memcpy(item_value(it), v, vlen);
    return it;
}

struct item *strval_create_like(const struct skey *k, struct item *like, const char *v,
                                size_t vlen, int with_cas)
{
    uint32_t flags = like ? item_mcflags(like) : 0;
    int64_t exp = like ? item_expire(like) : 0;

    return strval_create(k, v, vlen, flags, exp, with_cas);
}

struct item *strval_put_locked(struct store *s, const struct skey *k, struct item *old,
                               const char *v, size_t vlen)
{
    struct item *it = strval_create_like(k, old, v, vlen, 0);

    if (!it || store_put_locked(s, k, it))
        return NULL;
    return it;
}

int strval_concat_locked(struct store *s, const struct skey *k, struct item **itp,
                         const char *data, size_t n, unsigned how)
{
    struct item *old = *itp, *it;
    size_t total = (size_t)item_vlen(old) + n;

    if (!(how & (STRVAL_FRESH | STRVAL_PREPEND)) && item_writable(old) &&
        !(old->bits & IT_REF) == !(total >= ITEM_REF_MIN) && item_vlen_same_form(old, total) &&
        (size_t)(item_value(old) - (char *)old) + total <= item_room(old)) {
        /* the allocation has room: grow in place (its accounted size is unchanged) */
        memcpy(item_value(old) + total - n, data, n);
        item_set_vlen(old, total);
        item_cas_invalidate(old);
        return STRVAL_OK;
    }
    it = strval_create_like(k, old, NULL, total, (how & STRVAL_CAS) != 0);
    if (!it)
        return STRVAL_OOM;
    if (how & STRVAL_PREPEND) {
        memcpy(item_value(it), data, n);
        memcpy(item_value(it) + n, item_value(old), item_vlen(old));
    } else {
        memcpy(item_value(it), item_value(old), item_vlen(old));
        memcpy(item_value(it) + item_vlen(old), data, n);
    }
    if (store_put_locked(s, k, it))
        return STRVAL_OOM;
    *itp = it;
    return STRVAL_OK;
}

int strval_incr_locked(struct store *s, const struct skey *k, struct item **itp,
                       long long delta, long long *out)
{
    struct item *it = *itp;
    long long v = 0;
    char buf[24];
    int n;

    if (it && !util_str2ll(item_value(it), item_vlen(it), &v))
        return STRVAL_NOT_NUMBER;
    if ((delta < 0 && v < 0 && delta < LLONG_MIN - v) ||
        (delta > 0 && v > 0 && delta > LLONG_MAX - v))
        return STRVAL_OVERFLOW;
    v += delta;
    n = util_ll2str(buf, v);
    if (it && item_vlen(it) == (uint32_t)n && item_writable(it))
        strval_overwrite(it, 0, buf, (size_t)n);
    else if (!(it = strval_put_locked(s, k, it, buf, (size_t)n)))
        return STRVAL_OOM;
    *itp = it;
    *out = v;
    return STRVAL_OK;
}

int strval_mc_delta_locked(struct store *s, const struct skey *k, struct item **itp, int incr,
                           uint64_t delta, int pinned, uint64_t *out)
{
    struct item *it = *itp;
    uint64_t v;
    char buf[24];
    int n;

    if (item_vlen(it) == 0 || !util_mc_str2u64(item_value(it), item_vlen(it), &v))
        return STRVAL_NOT_NUMBER;
    if (incr)
        v += delta;
    else
        v = delta > v ? 0 : v - delta;
    n = util_ull2str(buf, v);
    if ((size_t)n <= item_vlen(it) && !(it->bits & IT_REF) && !pinned) {
        memset(item_value(it) + n, ' ', item_vlen(it) - (size_t)n);
        strval_overwrite(it, 0, buf, (size_t)n);
        store_touch(it);
    } else if (!(it = strval_put_locked(s, k, it, buf, (size_t)n))) {
        return STRVAL_OOM;
    }
    *itp = it;
    *out = v;
    return STRVAL_OK;
}

uint64_t strval_new_cas_locked(struct store *s, const struct skey *k, struct item **itp,
                               uint64_t explicit_cas)
{
    uint64_t v;

    item_cas_invalidate(*itp);
    v = store_cas_locked(s, k, itp);
    if (v && explicit_cas) {
        memcpy(item_opt(*itp, IT_CAS), &explicit_cas, 8);
        v = explicit_cas;
    }
    return v;
}
