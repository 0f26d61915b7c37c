/* Lists: a doubly linked list of lpack chunks (a quicklist). Chunks are bounded by
 * list-max-listpack-size (negative: -1..-5 = 4..64 KiB per chunk; positive: entries per
 * chunk). Element access by index walks chunks from the nearer end. mem counts every
 * allocation (usable sizes) so the store can account the list in O(1).
 * Not thread-safe: used under the key's stripe lock. */
#ifndef TC_T_LIST_H
#define TC_T_LIST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct lpack;

struct qnode {
    struct qnode *prev, *next;
    struct lpack *lp;
};

struct tlist {
    struct qnode *head, *tail;
    size_t len;   /* elements */
    size_t mem;   /* bytes held, including this struct */
};

/* A position in a list: a chunk and an offset into its lpack. */
struct lpos {
    struct qnode *n;
    uint32_t off;
};

struct tlist *tlist_create(void);
void tlist_destroy(void *l); /* item destructor */
size_t tlist_mem(void *l);   /* item sizer */
void *tlist_copy(void *l);   /* COPY */

/* Push at the head (where=0) or tail (1). Returns 0 or -1 (OOM). */
int tlist_push(struct tlist *l, int where, const char *p, size_t n);
/* The element at the head/tail (borrowed) without removing it; NULL when empty. */
const char *tlist_peek(struct tlist *l, int where, size_t *n);
/* Remove the head/tail element. */
void tlist_pop(struct tlist *l, int where);
/* Position of element idx (negative from the end). Returns 0 or -1 out of range. */
int tlist_seek(struct tlist *l, long idx, struct lpos *pos);
/* Element at pos (borrowed). */
const char *tlist_get(const struct lpos *pos, size_t *n);
/* Advance pos (forward or back). Returns 0, or -1 at the end. */
int tlist_next(struct tlist *l, struct lpos *pos);
int tlist_prev(struct tlist *l, struct lpos *pos);
/* Remove the element at pos; pos then points at the element that followed it (or is at the
 * end: returns -1). */
int tlist_delete(struct tlist *l, struct lpos *pos);
/* Replace / insert before (after=0) or after the element at pos. Return 0 or -1 (OOM). */
int tlist_replace(struct tlist *l, struct lpos *pos, const char *p, size_t n);
int tlist_insert(struct tlist *l, struct lpos *pos, int after, const char *p, size_t n);
/* Keep only elements [start, end] (valid indexes, start <= end). */
void tlist_trim(struct tlist *l, long start, long end);

/* Entries larger than this many bytes get a chunk of their own (DEBUG
 * QUICKLIST-PACKED-THRESHOLD; Redis's default 1 GiB). */
#define TLIST_PACKED_DEFAULT ((size_t)1 << 30)
extern _Atomic size_t tlist_packed_threshold;

#endif
