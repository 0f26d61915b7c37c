/* memcached reply composition (mc_compose.h). */
#include "proto/mc_compose.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/util.h"

int mc_compose_u64(struct buf *b, uint64_t v)
{
    char tmp[24];
    int n = util_ull2str(tmp, v);

    tmp[n++] = '\r';
    tmp[n++] = '\n';
    return buf_append(b, tmp, (size_t)n);
}

int mc_compose_value(struct buf *b, const char *key, size_t klen, uint32_t flags,
                     const char *value, size_t vlen, int with_cas, uint64_t cas)
{
    /* "VALUE " + key + 3 numbers of at most 20 digits with their separators + NUL, CRLFs */
    size_t need = 6 + klen + 3 * 21 + 1 + 2 + (value ? vlen + 2 : 0);
    char *o;

    if (buf_free(b) < need && buf_reserve(b, need))
        return -1;
    o = b->data + b->wpos;
    memcpy(o, "VALUE ", 6);
    o += 6;
    memcpy(o, key, klen);
    o += klen;
    *o++ = ' ';
    o += util_ull2str(o, flags);
    *o++ = ' ';
    o += util_ull2str(o, vlen);
    if (with_cas) {
        *o++ = ' ';
        o += util_ull2str(o, cas);
    }
    *o++ = '\r';
    *o++ = '\n';
    if (value) {
        memcpy(o, value, vlen);
        o += vlen;
        *o++ = '\r';
        *o++ = '\n';
    }
    b->wpos = (size_t)(o - b->data);
    return 0;
}

int mc_compose_stat(struct buf *b, const char *name, const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof(line), "STAT %s ", name);
    va_list ap;

    if (n > (int)sizeof(line) - 3)
        n = (int)sizeof(line) - 3;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 3)
        n = (int)sizeof(line) - 3;
    line[n++] = '\r';
    line[n++] = '\n';
    return buf_append(b, line, (size_t)n);
}

int mc_compose_stat_u64(struct buf *b, const char *name, uint64_t v)
{
    return mc_compose_stat(b, name, "%llu", (unsigned long long)v);
}

void mc_line_put(struct mc_line *l, const char *s, size_t n)
{
    if (l->n + n <= sizeof(l->b)) {
        memcpy(l->b + l->n, s, n);
        l->n += n;
    }
}

void mc_line_str(struct mc_line *l, const char *s)
{
    mc_line_put(l, s, strlen(s));
}

void mc_line_u64(struct mc_line *l, uint64_t v)
{
    char tmp[24];
    mc_line_put(l, tmp, (size_t)util_ull2str(tmp, v));
}

void mc_line_i64(struct mc_line *l, int64_t v)
{
    if (v < 0) {
        mc_line_put(l, "-", 1);
        mc_line_u64(l, (uint64_t)0 - (uint64_t)v);
    } else {
        mc_line_u64(l, (uint64_t)v);
    }
}

void mc_line_flag_u64(struct mc_line *l, char flag, uint64_t v)
{
    char head[2] = {' ', flag};
    mc_line_put(l, head, 2);
    mc_line_u64(l, v);
}

void mc_line_tok(struct mc_line *l, const struct mc_tok *t)
{
    mc_line_put(l, " ", 1);
    mc_line_put(l, t->p, t->n);
}

void mc_line_key(struct mc_line *l, const struct mc_req *r)
{
    mc_line_put(l, " k", 2);
    if (r->key_b64) {
        char tmp[400];
        size_t n = mc_base64_encode(r->key.p, r->key.n, tmp, sizeof(tmp));
        mc_line_put(l, tmp, n);
        mc_line_put(l, " b", 2);
    } else {
        mc_line_put(l, r->key.p, r->key.n);
    }
}

void mc_line_opaque_key(struct mc_line *l, const struct mc_req *r)
{
    for (int i = 2; i < r->ntok - 1; i++) {
        if (r->tok[i].p[0] == 'O')
            mc_line_tok(l, &r->tok[i]);
        else if (r->tok[i].p[0] == 'k')
            mc_line_key(l, r);
    }
}

int mc_line_end(struct buf *b, struct mc_line *l)
{
    mc_line_put(l, "\r\n", 2);
    return buf_append(b, l->b, l->n);
}
