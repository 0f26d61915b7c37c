/* dict: a chained hash table of caller-allocated entries keyed by byte strings, for the large
 * encodings of hashes, sets and sorted sets. Every entry starts with struct dentry; its key
 * bytes sit at a fixed offset (koff) from the entry start, set per dict. The dict owns only
 * its bucket array; entries belong to the caller (dict_destroy can free them with free()).
 * Power-of-two bucket arrays, load factor <= 1, shrink below 1/8; SCAN uses Redis's
 * reverse-binary cursor so elements present for a whole scan are returned at least once.
 * Not thread-safe (the owning collection is under its stripe lock). */
#ifndef TC_DICT_H
#define TC_DICT_H

#include <stddef.h>
#include <stdint.h>

struct dentry {
    struct dentry *next; /* bucket chain */
    uint32_t klen;       /* key bytes at (char *)e + koff */
    uint32_t vlen;       /* owner-defined (hashes: value bytes after the key) */
};

struct dict {
    struct dentry **tab; /* buckets, NULL while empty */
    uint64_t mask;       /* buckets - 1 */
    uint64_t count;      /* entries */
    uint32_t koff;       /* offset of the key bytes in an entry */
};

static inline const char *dict_key(const struct dict *d, const struct dentry *e)
{
    return (const char *)e + d->koff;
}

/* A new empty dict whose entries keep their key at koff. NULL when out of memory. */
struct dict *dict_create(uint32_t koff, uint64_t expect);
/* Free the dict; with free_entries, free() every entry too. NULL is a no-op. */
void dict_destroy(struct dict **dp, int free_entries);
/* Bytes held by the dict itself (struct and buckets, not entries). */
size_t dict_mem(const struct dict *d);
uint64_t dict_hash(const char *p, size_t n);
struct dentry *dict_find(const struct dict *d, const char *key, size_t n);
/* Add e (its key must not be present). Grows when loaded (a failed grow is ignored). Returns
 * 0, or -1 only when the first bucket array cannot be allocated. */
int dict_add(struct dict *d, struct dentry *e);
/* Remove and return the entry with this key (not freed), or NULL. May shrink. */
struct dentry *dict_unlink(struct dict *d, const char *key, size_t n);
/* Replace entry old (in the dict) by e with the same key (after a realloc, say). */
void dict_replace(struct dict *d, struct dentry *old, struct dentry *e);
/* A random entry (d not empty); r is a random number. */
struct dentry *dict_random(const struct dict *d, uint64_t r);
/* Visit the bucket at cursor; returns the next cursor (0 when done). */
typedef void dict_scan_fn(struct dentry *e, void *arg);
uint64_t dict_scan(const struct dict *d, uint64_t cursor, dict_scan_fn *fn, void *arg);

/* Iteration (no changes to the dict while iterating, except dict_iter_del of the current). */
struct dict_iter {
    struct dict *d;
    uint64_t b;          /* bucket */
    struct dentry *e;    /* current */
    struct dentry *next; /* next in bucket */
};
void dict_iter_init(struct dict_iter *it, struct dict *d);
/* The next entry or NULL at the end. */
struct dentry *dict_iter_next(struct dict_iter *it);

/* Thread-local fast random numbers (xorshift64*), for SPOP, SRANDMEMBER and friends. */
uint64_t rnd_next(void);

#endif
