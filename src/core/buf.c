#include "core/buf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

int buf_reserve_slow(struct buf *b, size_t n)
{
    size_t need, cap;
    char *p;

    if (b->rpos > 0 && b->cap - (b->wpos - b->rpos) >= n && b->rpos >= b->cap / 2) {
        buf_compact(b);
        return 0;
    }
    need = b->wpos + n;
    cap = b->cap ? b->cap : 1024;
    while (cap < need)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int buf_reserve_exact(struct buf *b, size_t n)
{
    char *p;

    if (b->cap - b->wpos >= n)
        return 0;
    buf_compact(b);
    if (b->cap - b->wpos >= n)
        return 0;
    p = realloc(b->data, b->wpos + n);
    if (!p)
        return -1;
    b->data = p;
    b->cap = b->wpos + n;
    return 0;
}

void buf_compact(struct buf *b)
{
    size_t n = b->wpos - b->rpos;

    if (b->rpos == 0)
        return;
    if (n)
        memmove(b->data, b->data + b->rpos, n);
    b->shift += b->rpos;
    b->rpos = 0;
    b->wpos = n;
}

_Atomic unsigned long buf_big_frees;

void buf_deinit(struct buf *b)
{
    if (b->cap >= 65536)
        atomic_fetch_add_explicit(&buf_big_frees, 1, memory_order_relaxed);
    free(b->data);
    b->data = NULL;
    b->rpos = b->wpos = b->cap = 0;
}

void buf_shrink(struct buf *b, size_t keep)
{
    size_t n = b->wpos - b->rpos;
    char *p;

    if (b->cap <= keep || n > keep)
        return;
    buf_compact(b);
    if (n == 0) {
        buf_deinit(b);
        return;
    }
    p = realloc(b->data, keep);
    if (b->cap >= 65536)
        atomic_fetch_add_explicit(&buf_big_frees, 1, memory_order_relaxed);
    if (p) {
        b->data = p;
        b->cap = keep;
    }
}

int buf_append_repr(struct buf *b, const char *p, size_t n)
{
    int rc = buf_append(b, "\"", 1);

    for (size_t i = 0; i < n && !rc; i++) {
        unsigned char ch = (unsigned char)p[i];
        char e[8];
        switch (ch) {
        case '\\': rc = buf_append(b, "\\\\", 2); break;
        case '"': rc = buf_append(b, "\\\"", 2); break;
        case '\n': rc = buf_append(b, "\\n", 2); break;
        case '\r': rc = buf_append(b, "\\r", 2); break;
        case '\t': rc = buf_append(b, "\\t", 2); break;
        case '\a': rc = buf_append(b, "\\a", 2); break;
        case '\b': rc = buf_append(b, "\\b", 2); break;
        default:
            if (isprint(ch)) {
                rc = buf_append(b, p + i, 1);
            } else {
                snprintf(e, sizeof(e), "\\x%02x", ch);
                rc = buf_append(b, e, 4);
            }
        }
    }
    return rc ? rc : buf_append(b, "\"", 1);
}
