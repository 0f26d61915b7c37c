/* ht: insert/find/delete with backward shift (no tombstones) in Robin Hood order, growth to
 * the next allocation size class and shrinking, iteration over every slot, keys sharing
 * their 2-bit tag or their home slot (distances past the 3 bits that hold them), clusters
 * that wrap around the end, and the delete-while-iterating pattern of the active expiry
 * sweep. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/util.h"
#include "store/ht.h"
#include "store/item.h"
#include "tap.h"

#define TAGOF(h) ((h) >> 62)          /* the tag bits of a hash */
#define SLOT_TAG(s) (((s) >> 35) & 3) /* and of a slot */
#define SLOT_DIST(s) ((s) >> 37)      /* a slot's distance from its home (7: 7 or more) */
#define HOMEOF(h, size) ((uint32_t)(((uint64_t)(uint32_t)((h) >> 20) * (size)) >> 32))

static struct item *mk(const char *key, size_t klen)
{
    struct item *it = item_create(OBJ_STRING, key, klen, 1, 0);
    item_value(it)[0] = 0;
    return it;
}

static struct item *find(struct ht *t, const char *key, size_t klen, uint32_t *pos)
{
    uint32_t p;
    return ht_find(t, util_hash(key, klen), key, klen, pos ? pos : &p);
}

static int insert(struct ht *t, struct item *it)
{
    return ht_insert(t, util_hash(item_key(it), item_klen(it)), it);
}

static uint32_t occupied(const struct ht *t)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ht_size(t); i++)
        n += ht_item_at(t, i) != NULL;
    return n;
}

/* Every item in a slot is found by its key at that slot, the slot's tag is its hash's, its
 * distance bits are its distance from its home slot, and the order is Robin Hood's: an entry
 * is never farther from its home than the entry before it is from its own, plus one. */
static int consistent(struct ht *t)
{
    for (uint32_t i = 0; i < ht_size(t); i++) {
        uint64_t s = ht_slot(t->slots, i);
        uint32_t pos;
        if (!s)
            continue;
        struct item *it = ht_slot_item(s);
        uint64_t h = util_hash(item_key(it), item_klen(it));
        if (SLOT_TAG(s) != TAGOF(h))
            return 0;
        uint32_t home = HOMEOF(h, ht_size(t));
        uint32_t d = i >= home ? i - home : i + ht_size(t) - home;
        if (SLOT_DIST(s) != (d < 7 ? d : 7))
            return 0;
        if (d > 0) {
            uint32_t p = i ? i - 1 : ht_size(t) - 1;
            uint64_t ps = ht_slot(t->slots, p);
            if (!ps)
                return 0; /* an entry away from home follows a used slot */
            uint64_t ph = util_hash(item_key(ht_slot_item(ps)), item_klen(ht_slot_item(ps)));
            uint32_t phome = HOMEOF(ph, ht_size(t));
            uint32_t pd = p >= phome ? p - phome : p + ht_size(t) - phome;
            if (d > pd + 1)
                return 0;
        }
        if (ht_find(t, h, item_key(it), item_klen(it), &pos) != it || pos != i)
            return 0;
    }
    return occupied(t) == t->count;
}

static void free_all(struct ht *t)
{
    for (uint32_t i = 0; i < ht_size(t); i++)
        if (ht_item_at(t, i))
            item_release(ht_item_at(t, i));
    ht_deinit(t);
}

static void test_basic(void)
{
    struct ht t = {0};
    uint32_t pos = 12345;

    ok(find(&t, "a", 1, &pos) == NULL && pos == 12345, "find in an empty table");
    is_int(ht_size(&t), 0, "no slots before the first insert");
    is_int(ht_mem(&t), 0, "no memory before the first insert");
    struct item *a = mk("a", 1), *b = mk("b", 1);
    ok(insert(&t, a) == 0 && t.count == 1, "insert");
    ok(ht_size(&t) > 0 && ht_mem(&t) >= ht_size(&t) * HT_SLOT, "slots allocated (%u)", ht_size(&t));
    ok(find(&t, "a", 1, &pos) == a && ht_item_at(&t, pos) == a, "find returns its slot");
    ok(find(&t, "b", 1, NULL) == NULL, "absent key");
    ok(find(&t, "a\0", 2, NULL) == NULL, "key length matters");
    ht_replace_at(&t, pos, b);
    ok(find(&t, "a", 1, NULL) == NULL, "replace_at puts another item (test only: other key)");
    ht_replace_at(&t, pos, a);
    item_release(b);
    struct item *a2 = mk("a", 1);
    ht_replace_at(&t, pos, a2);
    ok(find(&t, "a", 1, NULL) == a2 && t.count == 1, "replace_at with the same key");
    item_release(a);
    ht_delete_at(&t, pos);
    item_release(a2);
    ok(t.count == 0 && find(&t, "a", 1, NULL) == NULL, "delete");
    ht_maybe_shrink(&t);
    ok(t.slots == NULL && ht_size(&t) == 0 && ht_mem(&t) == 0, "empty table releases its slots");
    ht_deinit(&t);
    ht_deinit(&t);
    ok(1, "deinit twice");
}

static void test_grow_delete_shrink(void)
{
    enum { N = 20000 };
    struct ht t = {0};
    char key[32];
    uint32_t sizes[256], nsizes = 0;
    int bad = 0, loadbad = 0, waste = 0;

    for (int i = 0; i < N; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        if (insert(&t, mk(key, kl)))
            bad++;
        if (!nsizes || sizes[nsizes - 1] != ht_size(&t)) {
            sizes[nsizes++] = ht_size(&t);
            /* with jemalloc the array fills its size class: less than a slot is left over */
            if (!strcmp(alloc_name(), "jemalloc") &&
                ht_mem(&t) >= (size_t)ht_size(&t) * HT_SLOT + 3 + HT_SLOT)
                waste++;
        }
        loadbad += (uint64_t)t.count * 20 > (uint64_t)ht_size(&t) * 17;
    }
    is_int(bad, 0, "%d inserts", N);
    is_int(t.count, N, "count");
    is_int(loadbad, 0, "never more than 85%% full");
    is_int(waste, 0, "each array fills its allocation");
    ok((uint64_t)t.count * 100 >= (uint64_t)ht_size(&t) * 40, "not too empty after growth (%u/%u)",
       t.count, ht_size(&t));
    int growth = 1;
    for (uint32_t i = 1; i < nsizes; i++)
        growth &= sizes[i] > sizes[i - 1] + sizes[i - 1] / 8 &&
                  (sizes[i] < 64 || sizes[i] <= sizes[i - 1] + sizes[i - 1] / 2);
    ok(growth && nsizes > 20, "grows by an eighth to a half each time (%u resizes, last %u)",
       nsizes - 1, sizes[nsizes - 1]);
    ok(consistent(&t), "every item findable at its slot after growth");
    for (int i = 0; i < N; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        bad += find(&t, key, kl, NULL) == NULL;
    }
    is_int(bad, 0, "every key found");

    /* delete the odd keys in a scrambled order */
    for (int j = 0; j < N; j++) {
        int i = (int)(((unsigned)j * 7919u) % N);
        uint32_t pos;
        if (!(i & 1))
            continue;
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        struct item *it = find(&t, key, kl, &pos);
        if (!it) {
            bad++;
            continue;
        }
        ht_delete_at(&t, pos);
        item_release(it);
    }
    is_int(bad, 0, "every odd key found for deletion");
    is_int(t.count, N / 2, "count after deletions");
    ok(consistent(&t), "backward shift leaves no hole in a cluster (all findable, no tombstones)");
    for (int i = 0; i < N; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        bad += (find(&t, key, kl, NULL) != NULL) != !(i & 1);
    }
    is_int(bad, 0, "even keys present, odd keys gone");

    /* shrink: below 25% full the table shrinks to about 50% */
    uint32_t before = ht_size(&t);
    ht_maybe_shrink(&t);
    is_int(ht_size(&t), before, "no shrink at 50%% full");
    for (int i = 0; i < N; i += 2) {
        if (i % 20 == 0)
            continue; /* keep one in ten of the rest */
        uint32_t pos;
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        struct item *it = find(&t, key, kl, &pos);
        ht_delete_at(&t, pos);
        item_release(it);
    }
    is_int(t.count, N / 20, "count before shrinking");
    ht_maybe_shrink(&t);
    ok(ht_size(&t) < before / 4 && ht_size(&t) >= t.count, "shrunk from %u to %u slots", before,
       ht_size(&t));
    ok((uint64_t)t.count * 5 <= (uint64_t)ht_size(&t) * 4 && t.count * 3 >= ht_size(&t),
       "about half full after shrinking (%u/%u)", t.count, ht_size(&t));
    ok(consistent(&t), "all findable after shrinking");
    for (int i = 0; i < N; i += 20) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        bad += find(&t, key, kl, NULL) == NULL;
    }
    is_int(bad, 0, "kept keys found after shrinking");

    /* and grow again */
    for (int i = 1; i < N; i += 2) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "key:%d", i);
        insert(&t, mk(key, kl));
    }
    ok(consistent(&t) && t.count == N / 20 + N / 2, "grows again after a shrink");
    free_all(&t);
}

static void test_iterate(void)
{
    struct ht t = {0};
    char key[32];
    int visits[5000] = {0};

    for (int i = 0; i < 5000; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "it:%d", i);
        insert(&t, mk(key, kl));
    }
    uint32_t seen = 0;
    for (uint32_t i = 0; i < ht_size(&t); i++) {
        struct item *it = ht_item_at(&t, i);
        if (!it)
            continue;
        int k = atoi(item_key(it) + 3);
        visits[k]++;
        seen++;
    }
    int once = 1;
    for (int i = 0; i < 5000; i++)
        once &= visits[i] == 1;
    ok(seen == 5000 && once, "iterating every slot visits each item exactly once");

    /* ht_next wraps, ht_reduce stays in range */
    ok(ht_next(&t, ht_size(&t) - 1) == 0 && ht_next(&t, 0) == 1, "ht_next wraps at the end");
    ok(ht_reduce(&t, 0) == 0 && ht_reduce(&t, 0xffffffffu) == ht_size(&t) - 1,
       "ht_reduce maps 32 random bits onto [0, size)");
    free_all(&t);
}

/* Keys whose hashes share the 2-bit tag: the tag check passes, the key compare decides. */
static void test_colliding_tags(void)
{
    enum { NCOL = 48 };
    char keys[NCOL][24];
    int ncol = 0;
    char key[24];
    uint64_t tag = TAGOF(util_hash("col:0", 5));

    for (long i = 0; ncol < NCOL && i < 50000000; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "col:%ld", i);
        if (TAGOF(util_hash(key, kl)) == tag)
            strcpy(keys[ncol++], key);
    }
    is_int(ncol, NCOL, "found keys sharing one tag");

    struct ht t = {0};
    for (int i = 0; i < NCOL; i++)
        insert(&t, mk(keys[i], strlen(keys[i])));
    for (int i = 0; i < 2000; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "other:%d", i);
        insert(&t, mk(key, kl));
    }
    int bad = 0;
    for (int i = 0; i < NCOL; i++) {
        struct item *it = find(&t, keys[i], strlen(keys[i]), NULL);
        bad += !it || item_klen(it) != strlen(keys[i]) ||
               memcmp(item_key(it), keys[i], item_klen(it));
    }
    is_int(bad, 0, "each same-tag key finds its own item");
    ok(find(&t, "col:x", 5, NULL) == NULL, "absent key");
    for (int i = 0; i < NCOL; i += 2) {
        uint32_t pos;
        struct item *it = find(&t, keys[i], strlen(keys[i]), &pos);
        ht_delete_at(&t, pos);
        item_release(it);
    }
    for (int i = 0; i < NCOL; i++)
        bad += (find(&t, keys[i], strlen(keys[i]), NULL) != NULL) != (i & 1);
    is_int(bad, 0, "deleting half of the same-tag keys leaves the other half");
    ok(consistent(&t), "consistent");

    /* same tag and same length, one byte apart */
    struct ht u = {0};
    for (int i = 0; i < NCOL; i++)
        insert(&u, mk(keys[i], strlen(keys[i])));
    ok(consistent(&u), "a table of only same-tag keys");
    free_all(&u);
    free_all(&t);
}

/* Keys sharing one home slot: their distances go past what the slot bits hold (7), so
 * finds, inserts and backward shifts need the exact distance from the item's hash. */
static void test_shared_home(void)
{
    enum { FILL = 1000, NSAME = 40 };
    struct ht t = {0};
    char key[32], same[NSAME][32];
    int nsame = 0, bad = 0;

    for (int i = 0; i < FILL; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "fill:%d", i);
        insert(&t, mk(key, kl));
    }
    uint32_t size = ht_size(&t);
    ok((uint64_t)(FILL + NSAME) * 20 <= (uint64_t)size * 17,
       "room for %d more without growing (%u slots)", NSAME, size);
    uint32_t home = HOMEOF(util_hash("same:0", 6), size);
    for (long i = 0; nsame < NSAME && i < 10000000; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "same:%ld", i);
        if (HOMEOF(util_hash(key, kl), size) == home)
            strcpy(same[nsame++], key);
    }
    is_int(nsame, NSAME, "found keys sharing one home slot");
    for (int i = 0; i < NSAME; i++)
        insert(&t, mk(same[i], strlen(same[i])));
    is_int(ht_size(&t), size, "the table did not grow");
    uint32_t maxd = 0;
    for (uint32_t i = 0; i < ht_size(&t); i++) {
        uint64_t sl = ht_slot(t.slots, i);
        if (sl && SLOT_DIST(sl) > maxd)
            maxd = (uint32_t)SLOT_DIST(sl);
    }
    is_int(maxd, 7, "some distances are 7 or more");
    ok(consistent(&t), "consistent with long distances");
    for (int i = 0; i < NSAME; i++)
        bad += find(&t, same[i], strlen(same[i]), NULL) == NULL;
    for (int i = 0; i < FILL; i++) {
        size_t kl = (size_t)snprintf(key, sizeof(key), "fill:%d", i);
        bad += find(&t, key, kl, NULL) == NULL;
    }
    is_int(bad, 0, "every key found");
    ok(find(&t, "same:x", 6, NULL) == NULL, "absent key");
    /* delete from the front of the run, where every later entry shifts back */
    for (int i = 0; i < NSAME; i += 3) {
        uint32_t pos;
        struct item *it = find(&t, same[i], strlen(same[i]), &pos);
        if (!it) {
            bad++;
            continue;
        }
        ht_delete_at(&t, pos);
        item_release(it);
    }
    for (int i = 0; i < NSAME; i++)
        bad += (find(&t, same[i], strlen(same[i]), NULL) != NULL) != (i % 3 != 0);
    is_int(bad, 0, "deleting a third of them leaves the rest");
    ok(consistent(&t), "consistent after the shifts");
    free_all(&t);
}

/* A reference model over a small key space: random inserts and deletes keep tables tiny, so
 * clusters wrap around the end and shrink/grow often. */
static void test_random_model(void)
{
    enum { K = 40 };
    struct ht t = {0};
    int present[K] = {0};
    unsigned seed = 99;
    int bad = 0, checks = 0;
    char key[16];

    for (int op = 0; op < 200000; op++) {
        int k = rand_r(&seed) % (op % 1000 < 500 ? 12 : K);
        size_t kl = (size_t)snprintf(key, sizeof(key), "m%d", k);
        uint32_t pos;
        struct item *it = find(&t, key, kl, &pos);
        if ((it != NULL) != present[k])
            bad++;
        if (it) {
            ht_delete_at(&t, pos);
            item_release(it);
            present[k] = 0;
            if (rand_r(&seed) % 4 == 0)
                ht_maybe_shrink(&t);
        } else {
            insert(&t, mk(key, kl));
            present[k] = 1;
        }
        if (op % 97 == 0) {
            checks++;
            bad += !consistent(&t);
        }
    }
    is_int(bad, 0, "200000 random operations agree with the model (%d full checks)", checks);
    free_all(&t);
}

/* The expiry sweep: walk the slots, delete an expired item and look at the same slot again
 * (a later item may have shifted into it). Every expired item goes, every live one stays and
 * is visited at least once. */
static void test_delete_while_iterating(void)
{
    enum { N = 6000 };
    struct ht t = {0};
    char key[32];
    unsigned seed = 5;
    int expired[N], visited[N];

    for (int round = 0; round < 4; round++) {
        int nexp = 0;
        memset(visited, 0, sizeof(visited));
        for (int i = 0; i < N; i++) {
            size_t kl = (size_t)snprintf(key, sizeof(key), "e:%d", i);
            struct item *it = mk(key, kl);
            expired[i] = rand_r(&seed) % (round + 2) != 0;
            item_value(it)[0] = (char)expired[i];
            nexp += expired[i];
            insert(&t, it);
        }
        uint32_t i = 0, steps = 0;
        while (i < ht_size(&t)) {
            uint64_t s = ht_slot(t.slots, i);
            steps++;
            if (s) {
                struct item *it = ht_slot_item(s);
                int k = atoi(item_key(it) + 2);
                if (item_value(it)[0]) {
                    ht_delete_at(&t, i);
                    item_release(it);
                    continue;
                }
                visited[k]++;
            }
            i++;
        }
        int bad = 0, missed = 0;
        for (int k = 0; k < N; k++) {
            size_t kl = (size_t)snprintf(key, sizeof(key), "e:%d", k);
            bad += (find(&t, key, kl, NULL) != NULL) == expired[k];
            missed += !expired[k] && !visited[k];
        }
        ok(bad == 0 && t.count == (uint32_t)(N - nexp),
           "round %d: %d expired items deleted during the walk, %d live kept", round, nexp,
           N - nexp);
        is_int(missed, 0, "round %d: every live item visited", round);
        ok(consistent(&t), "round %d: consistent after the walk", round);
        free_all(&t);
    }
}

int main(void)
{
    test_basic();
    test_grow_delete_shrink();
    test_iterate();
    test_colliding_tags();
    test_shared_home();
    test_random_model();
    test_delete_while_iterating();
    return tap_done();
}
