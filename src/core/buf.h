/* A growable byte buffer with a read and a write position. Owned by its holder; not
 * thread-safe. Capacity grows by doubling; the data pointer may move on any reserve. */
#ifndef TC_BUF_H
#define TC_BUF_H

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

struct buf {
    char *data;  /* storage, NULL until first reserve */
    size_t rpos; /* first unread byte */
    size_t wpos; /* one past the last written byte */
    size_t cap;  /* allocated size */
    size_t shift; /* bytes compaction ever moved the data back by: a position p taken earlier
                   * is now p - (shift - shift_then) (connection output references) */
};

/* buf_reserve when the room is not there yet: compact or grow. */
int buf_reserve_slow(struct buf *b, size_t n);

/* Make room for at least n more bytes after wpos. Returns 0, or -1 when out of memory. */
static inline int buf_reserve(struct buf *b, size_t n)
{
    return b->cap - b->wpos >= n ? 0 : buf_reserve_slow(b, n);
}

/* Make room for exactly n more bytes after wpos (compacting first; no rounding up): a buffer
 * sized to what it must hold, as Redis sizes a query buffer for a big argument. 0 or -1. */
int buf_reserve_exact(struct buf *b, size_t n);

/* Append n bytes. Returns 0 or -1 (out of memory). */
static inline int buf_append(struct buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n))
        return -1;
    memcpy(b->data + b->wpos, p, n);
    b->wpos += n;
    return 0;
}
/* Drop consumed bytes (move unread bytes to the front). */
void buf_compact(struct buf *b);
/* Append p[0..n) quoted as Redis quotes it (sdscatrepr: MONITOR, the Lua debugger): "...", with
 * \n \r \t \a \b \\ \" and \xHH escapes. 0 or -1 (out of memory). */
int buf_append_repr(struct buf *b, const char *p, size_t n);
/* Count of buffers of 64 KiB or more freed or shrunk (any thread, relaxed): a memory figure
 * measured before a change of it may be stale (maxmemory measures again before evicting). */
extern _Atomic unsigned long buf_big_frees;

/* Release the storage. */
void buf_deinit(struct buf *b);
/* Shrink a large idle buffer back to at most keep bytes of capacity. */
void buf_shrink(struct buf *b, size_t keep);

static inline size_t buf_len(const struct buf *b)
{
    return b->wpos - b->rpos;
}

static inline size_t buf_free(const struct buf *b)
{
    return b->cap - b->wpos;
}

#endif
