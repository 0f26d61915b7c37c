/* lpack: a packed array of byte strings in one allocation (the compact encoding of small
 * lists, hashes, sets and sorted sets, like Redis's listpack). Each entry is
 *   [len: 1 byte < 0x80, or 0x80 + u32] [bytes] [len again, mirrored: 1 byte, or u32 + 0x80]
 * so the array can be walked both ways. Positions are byte offsets into data; lp_end() is one
 * past the last entry. Functions that may grow the array take struct lpack ** and may move it.
 * Not thread-safe: the owner (a collection under its stripe lock) serialises access. */
#ifndef TC_LPACK_H
#define TC_LPACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct lpack {
    uint32_t bytes; /* used bytes of data */
    uint32_t cap;   /* usable bytes of data */
    uint32_t count; /* entries */
    uint32_t pad;
    char data[];
};

/* A new empty array with room for cap bytes. NULL when out of memory. */
struct lpack *lp_create(size_t cap);
void lp_destroy(struct lpack **lpp);
/* A copy (for COPY). NULL when out of memory. */
struct lpack *lp_dup(const struct lpack *lp);
/* Bytes held (allocator usable size). */
size_t lp_mem(const struct lpack *lp);

/* Bytes an entry of n bytes takes. */
static inline size_t lp_entry_size(size_t n)
{
    return n < 0x80 ? n + 2 : n + 10;
}

static inline uint32_t lp_end(const struct lpack *lp)
{
    return lp->bytes;
}

/* The entry at off: its bytes (borrowed until the next change) and length. */
static inline const char *lp_get(const struct lpack *lp, uint32_t off, size_t *n)
{
    const unsigned char *p = (const unsigned char *)lp->data + off;
    if (p[0] < 0x80) {
        *n = p[0];
        return (const char *)p + 1;
    }
    uint32_t l;
    memcpy(&l, p + 1, 4);
    *n = l;
    return (const char *)p + 5;
}

/* Offset of the entry after the one at off (lp_end() after the last). */
static inline uint32_t lp_next(const struct lpack *lp, uint32_t off)
{
    size_t n;
    lp_get(lp, off, &n);
    return off + (uint32_t)lp_entry_size(n);
}

/* Offset of the entry before the one at off (off > 0). */
static inline uint32_t lp_prev(const struct lpack *lp, uint32_t off)
{
    const unsigned char *e = (const unsigned char *)lp->data + off;
    if (e[-1] != 0x80)
        return off - (uint32_t)lp_entry_size(e[-1]);
    uint32_t l;
    memcpy(&l, e - 5, 4);
    return off - (uint32_t)lp_entry_size(l);
}

/* Offset of entry idx (negative: from the end), or UINT32_MAX when out of range. Walks from
 * the nearer end. */
uint32_t lp_seek(const struct lpack *lp, long idx);
/* Insert p[0..n) before the entry at off (off == lp_end(): append); p NULL reserves n bytes
 * for the caller to fill (lp_get finds them). Returns 0 or -1 (OOM, unchanged). */
int lp_insert(struct lpack **lpp, uint32_t off, const char *p, size_t n);
/* Append / prepend. */
static inline int lp_append(struct lpack **lpp, const char *p, size_t n)
{
    return lp_insert(lpp, (*lpp)->bytes, p, n);
}
/* Replace the entry at off with p[0..n). Returns 0 or -1 (OOM, unchanged). */
int lp_replace(struct lpack **lpp, uint32_t off, const char *p, size_t n);
/* Remove cnt entries starting at off. Never fails (the array is not shrunk; call lp_fit). */
void lp_delete(struct lpack *lp, uint32_t off, uint32_t cnt);
/* Give back unused capacity when more than a quarter is free. May move the array. */
void lp_fit(struct lpack **lpp);
/* Offset of the first entry equal to p[0..n) among entries 0, step, 2*step, ... (step 2: the
 * keys of a key/value array), or UINT32_MAX. */
uint32_t lp_find(const struct lpack *lp, const char *p, size_t n, int step);

#endif
