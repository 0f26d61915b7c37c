/* Sets: an intset (sorted integers, 2/4/8-byte width) while every member is an integer and
 * there are at most set-max-intset-entries; an lpack while small (set-max-listpack-entries /
 * -value, the Redis 7.2 encoding); a dict past that. Conversions only go towards the dict.
 * Not thread-safe: used under the key's stripe lock. */
#ifndef TC_T_SET_H
#define TC_T_SET_H

#include <stddef.h>
#include <stdint.h>

#include "store/dict.h"

enum { TSET_INTSET = 0, TSET_LISTPACK = 1, TSET_HT = 2 };

struct intset {
    uint32_t width; /* bytes per value: 2, 4 or 8 */
    uint32_t count;
    char data[];
};

struct tset {
    int enc;                /* TSET_* */
    union {
        struct intset *is;
        struct lpack *lp;
        struct dict *d;     /* entries: struct dentry + member bytes */
    } u;
    size_t emem;            /* bytes of dict entries (TSET_HT) */
};

/* A new empty set whose first member will be like p[0..n) (chooses the encoding). */
struct tset *tset_create(const char *p, size_t n);
void tset_destroy(void *s);
size_t tset_mem(void *s);
void *tset_copy(void *s);
const char *tset_encoding_name(const struct tset *s);

uint64_t tset_len(const struct tset *s);
/* 1 added, 0 already there, -1 out of memory. */
int tset_add(struct tset *s, const char *p, size_t n);
/* 1 removed, 0 not there. */
int tset_remove(struct tset *s, const char *p, size_t n);
int tset_contains(const struct tset *s, const char *p, size_t n);

/* Iteration: tset_next fills p and n (integers are formatted into it->buf); returns 0 at the
 * end. The set must not change while iterating. */
struct tset_iter {
    const struct tset *s;
    uint64_t i;          /* intset index */
    uint32_t off;        /* lpack offset */
    struct dict_iter di;
    char buf[24];
};
void tset_iter_init(struct tset_iter *it, const struct tset *s);
int tset_next(struct tset_iter *it, const char **p, size_t *n);

/* A random member (s not empty), formatted into buf[24] when an integer. */
void tset_random(const struct tset *s, char *buf, const char **p, size_t *n);

/* SSCAN: visit members of one step from cursor; returns the next cursor (0: done). Small
 * encodings are visited whole. */
typedef void tset_scan_fn(const char *p, size_t n, void *arg);
uint64_t tset_scan(const struct tset *s, uint64_t cursor, long count, tset_scan_fn *fn, void *arg);

#endif
