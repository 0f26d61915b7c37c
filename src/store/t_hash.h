/* Hashes: an lpack of field, value pairs while small (hash-max-listpack-entries fields, each
 * field and value at most hash-max-listpack-value bytes), then a dict whose entries hold the
 * field and value in one allocation. Not thread-safe: used under the key's stripe lock. */
#ifndef TC_T_HASH_H
#define TC_T_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "store/dict.h"

enum { THASH_LISTPACK = 0, THASH_HT = 1 };

struct thash {
    int enc;
    union {
        struct lpack *lp; /* field, value, field, value ... */
        struct dict *d;   /* entries: struct dentry, field bytes, value bytes (vlen) */
    } u;
    size_t emem;          /* bytes of dict entries */
};

struct thash *thash_create(void);
void thash_destroy(void *h);
size_t thash_mem(void *h);
void *thash_copy(void *h);
const char *thash_encoding_name(const struct thash *h);
uint64_t thash_len(const struct thash *h);

/* The value of field f (borrowed until the next change): 1, or 0 when absent. */
int thash_get(const struct thash *h, const char *f, size_t fn, const char **v, size_t *vn);
/* Set f to v: 1 when the field is new, 0 when updated, -1 out of memory. */
int thash_set(struct thash *h, const char *f, size_t fn, const char *v, size_t vn);
/* Remove f: 1, or 0 when absent. */
int thash_del(struct thash *h, const char *f, size_t fn);
/* Convert to the dict encoding when any of n lengths exceeds hash-max-listpack-value. */
int thash_convert_for(struct thash *h, size_t maxlen);

struct thash_iter {
    const struct thash *h;
    uint32_t off;
    struct dict_iter di;
};
void thash_iter_init(struct thash_iter *it, const struct thash *h);
/* The next pair, or 0 at the end. No changes while iterating. */
int thash_next(struct thash_iter *it, const char **f, size_t *fn, const char **v, size_t *vn);
/* A random pair (h not empty). */
void thash_random(const struct thash *h, const char **f, size_t *fn, const char **v, size_t *vn);
/* HSCAN: visit pairs from cursor; returns the next cursor (0: done). */
typedef void thash_scan_fn(const char *f, size_t fn, const char *v, size_t vn, void *arg);
uint64_t thash_scan(const struct thash *h, uint64_t cursor, long count, thash_scan_fn *fn,
                    void *arg);

#endif
