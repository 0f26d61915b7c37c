/* The keys a writable replica's own clients gave a TTL (Redis's slaveKeysWithExpire). A
 * replica leaves expiry to its primary, which sends a DEL for each key it expires; the keys
 * the replica wrote itself have no such primary, so they are remembered here and swept by
 * store_replica_expire. Empty unless a writable replica's clients write keys with a TTL.
 *
 * Lock order: a stripe, then rk_lock (store_replica_note_locked runs under the key's stripe).
 * The sweep takes the whole set out first and so never holds rk_lock while it locks a stripe. */
#include <stdlib.h>
#include <string.h>

#include "core/lock.h"
#include "store/dict.h"
#include "store/item.h"
#include "store/store.h"

struct rkey {
    struct dentry de; /* the key bytes follow: [db as 4 bytes][key] */
    char k[];
};

static struct tc_lock rk_lock = TC_LOCK_INIT;
/* under rk_lock; NULL while empty. Stored with atomic stores: the sweep's first look at it
 * is an unlocked load */
static struct dict *rk_set;

static size_t rk_name(char *out, int db, const char *p, size_t n)
{
    int32_t d = db;
    memcpy(out, &d, 4);
    memcpy(out + 4, p, n);
    return 4 + n;
}

static void rk_add_locked(struct rkey *e)
{
    if (!rk_set) {
        struct dict *d = dict_create(offsetof(struct rkey, k), 16);
        if (!d) {
            free(e);
            return;
        }
        __atomic_store_n(&rk_set, d, __ATOMIC_RELAXED);
    }
    if (dict_find(rk_set, e->k, e->de.klen) || dict_add(rk_set, &e->de) < 0)
        free(e);
}

void store_replica_note_locked(struct store *s, const struct skey *k)
{
    struct ht *t = &s->stripes[k->stripe].db[k->db];
    uint32_t pos;
    struct item *it = ht_find(t, k->hash, k->p, k->n, &pos);
    struct rkey *e;

    if (!it || !item_expire(it))
        return;
    if (!(e = malloc(sizeof(*e) + 4 + k->n)))
        return;
    e->de.next = NULL;
    e->de.klen = (uint32_t)rk_name(e->k, k->db, k->p, k->n);
    e->de.vlen = 0;
    tc_lock(&rk_lock);
    rk_add_locked(e);
    tc_unlock(&rk_lock);
}

void store_replica_expire(struct store *s, int64_t now)
{
    struct dict *d;
    struct dict_iter i;
    struct dentry *de, *list = NULL;

    if (!__atomic_load_n(&rk_set, __ATOMIC_RELAXED))
        return;
    tc_lock(&rk_lock);
    d = rk_set;
    __atomic_store_n(&rk_set, NULL, __ATOMIC_RELAXED);
    tc_unlock(&rk_lock);
    if (!d)
        return;
    /* out of the dict into a list (its entries are the caller's), the dict freed */
    dict_iter_init(&i, d);
    while ((de = dict_iter_next(&i)) != NULL) {
        de->next = list;
        list = de;
    }
    dict_destroy(&d, 0);
    while (list) {
        struct rkey *e = (struct rkey *)list;
        struct skey k;
        struct item *it;
        int32_t db;
        int keep;

        list = list->next;
        e->de.next = NULL;
        memcpy(&db, e->k, 4);
        if (db < 0 || db >= s->ndb) {
            free(e);
            continue;
        }
        store_key(s, &k, db, e->k + 4, e->de.klen - 4);
        store_lock(s, k.stripe);
        store_expire_force = 1; /* a key of its own: deleted here as a primary does */
        it = store_lookup_write_locked(s, &k, now);
        store_expire_force = 0;
        keep = it && item_expire(it);
        store_unlock(s, k.stripe);
        if (!keep) {
            free(e);
            continue;
        }
        tc_lock(&rk_lock);
        rk_add_locked(e);
        tc_unlock(&rk_lock);
    }
}

void store_replica_forget(void)
{
    struct dict *d;

    tc_lock(&rk_lock);
    d = rk_set;
    __atomic_store_n(&rk_set, NULL, __ATOMIC_RELAXED);
    tc_unlock(&rk_lock);
    dict_destroy(&d, 1);
}

uint64_t store_replica_tracked(void)
{
    uint64_t n;

    tc_lock(&rk_lock);
    n = rk_set ? rk_set->count : 0;
    tc_unlock(&rk_lock);
    return n;
}
