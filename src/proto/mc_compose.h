/* memcached reply composition: the text protocol's lines (VALUE headers and blocks, status and
 * error lines, numbers, STAT lines) and the meta protocol's response lines with their return
 * flags. Pure: no I/O, no storage; everything is appended to a struct buf the caller owns (a
 * connection's output, its worker's alone). Functions returning int return 0, or -1 when the
 * buffer could not grow (the caller closes the connection: the reply may be cut). */
#ifndef TC_MC_COMPOSE_H
#define TC_MC_COMPOSE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "proto/mc.h"

/* Append s and CRLF ("STORED", "END", error lines). Inline: a literal's length is known. */
static inline int mc_compose_line(struct buf *b, const char *s)
{
    size_t n = strlen(s);

    if (buf_reserve(b, n + 2))
        return -1;
    memcpy(b->data + b->wpos, s, n);
    memcpy(b->data + b->wpos + n, "\r\n", 2);
    b->wpos += n + 2;
    return 0;
}

/* "<v>\r\n": the reply of incr/decr. */
int mc_compose_u64(struct buf *b, uint64_t v);

/* A get hit: "VALUE <key> <flags> <vlen>[ <cas>]\r\n" and, when value is not NULL, the value
 * block (vlen bytes and CRLF), with one reservation for both. With value NULL the caller adds
 * the block itself (a large value sent by reference). key and value are copied. */
int mc_compose_value(struct buf *b, const char *key, size_t klen, uint32_t flags,
                     const char *value, size_t vlen, int with_cas, uint64_t cas);

/* "STAT <name> <value>\r\n" with the value formatted by fmt (the line is cut at 512 bytes);
 * mc_compose_stat_u64 for a number. */
int mc_compose_stat(struct buf *b, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int mc_compose_stat_u64(struct buf *b, const char *name, uint64_t v);

/* A meta response line under construction ("HD c12 t-1 Oabc k..."), built on the stack then
 * appended whole. Long enough for the longest one memcached builds: a base64 key, an opaque
 * and every other flag once; a piece that would not fit is dropped (it cannot happen within
 * the parser's limits). Start with l.n = 0. */
#define MC_LINE_CAP 1400
struct mc_line {
    size_t n;              /* bytes used */
    char b[MC_LINE_CAP];   /* the line, without CRLF until mc_line_end */
};

/* Append n bytes / a C string / a decimal number. */
void mc_line_put(struct mc_line *l, const char *s, size_t n);
void mc_line_str(struct mc_line *l, const char *s);
void mc_line_u64(struct mc_line *l, uint64_t v);
void mc_line_i64(struct mc_line *l, int64_t v);
/* " <flag><v>": a return flag with a number ("c123", "s5"). */
void mc_line_flag_u64(struct mc_line *l, char flag, uint64_t v);
/* " " and the request's token as it came (the O(paque) flag is echoed so). */
void mc_line_tok(struct mc_line *l, const struct mc_tok *t);
/* " k<key>" for the k flag: base64 again, followed by " b", when the request's key was. */
void mc_line_key(struct mc_line *l, const struct mc_req *r);
/* The O and k flags of the request, in request order (what misses and failures return). */
void mc_line_opaque_key(struct mc_line *l, const struct mc_req *r);
/* Add CRLF and append the line to b. */
int mc_line_end(struct buf *b, struct mc_line *l);

#endif
