/* Streams (entries; consumer groups hang off groups, see t_stream_cg.h). Entries live in nodes of at
 * most stream-node-max-entries (100) entries, like Redis's radix-tree listpacks: each node is
 * an lpack with one packed record per entry (varint ms delta from the node's base, varint
 * seq, varint field count, then varint length + bytes per field and value). Nodes sit in a
 * ring sorted by ID; a lookup is a binary search over nodes and a scan inside one. Node
 * boundaries follow Redis's rules, so approximate trimming (~) removes the same entries.
 * Not thread-safe: used under the key's stripe lock. */
#ifndef TC_T_STREAM_H
#define TC_T_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct lpack;
struct sgroup;

struct sid {
    uint64_t ms, seq;
};

static inline int sid_cmp(const struct sid *a, const struct sid *b)
{
    if (a->ms != b->ms)
        return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return 0;
}

struct snode {
    uint64_t base_ms;       /* ms of the first entry ever added (deltas are from it) */
    uint64_t base_seq;      /* and its seq (Redis's master ID) */
    struct sid last_added;  /* ID of the last entry added to this node */
    uint32_t live;          /* entries present */
    uint32_t added;         /* entries ever added (live + deleted) */
    uint32_t nmaster;       /* fields of the first entry (Redis's master fields) */
    uint64_t rfixed;        /* bytes of this node as Redis's listpack, but for the two counts */
    unsigned char *master;  /* those fields, packed as in a record (sfield_put) */
    struct lpack *lp;       /* one record per live entry */
};

struct tstream {
    struct snode **nodes;   /* ring of nodes sorted by ID */
    size_t head, n, cap;
    uint64_t len;           /* entries */
    struct sid last_id;     /* last ID ever added */
    struct sid max_deleted_id;
    uint64_t entries_added;
    size_t mem;             /* bytes held (groups included) */
    struct sgroup **groups; /* consumer groups sorted by name (t_stream_cg.h) */
    size_t ngroups, gcap;
};

/* A position: node index (0..n) and offset of a record in its lpack. */
struct spos {
    size_t ni;
    uint32_t off;
};

/* A decoded entry: its ID and the packed fields (iterate with sentry_next). */
struct sent {
    struct sid id;
    uint32_t nfields;
    const unsigned char *f, *end;
};

struct tstream *tstream_create(void);
void tstream_destroy(void *s);
size_t tstream_mem(void *s);
void *tstream_copy(void *s);

static inline struct snode *tstream_node(const struct tstream *s, size_t i)
{
    return s->nodes[(s->head + i) & (s->cap - 1)];
}

/* Bytes a field or value of n bytes takes in a record. */
size_t sfield_size(size_t n);
/* Start appending an entry with ID id (greater than last_id) of nfields pairs whose fields
 * and values take fbytes (the sum of sfield_size) and raw bytes (the sum of their lengths).
 * Returns where to write them with sfield_put, then call tstream_append_done; or NULL when
 * out of memory (nothing changed). The entry opens a new node where Redis's would: when the
 * last node has stream-node-max-entries entries (live and deleted) or its listpack would
 * reach stream-node-max-bytes. */
unsigned char *tstream_append(struct tstream *s, const struct sid *id, uint32_t nfields,
                              size_t fbytes, size_t raw);
/* The fields of the entry tstream_append started are written: account it (as Redis's
 * listpack would hold it). Returns -1 when out of memory (the entry stays). */
int tstream_append_done(struct tstream *s);
unsigned char *sfield_put(unsigned char *p, const char *v, size_t n);

/* First entry with ID >= id: 1 and *pos, or 0 when there is none. */
int tstream_seek(const struct tstream *s, const struct sid *id, struct spos *pos);
/* Last entry with ID <= id: 1 and *pos, or 0 when there is none. */
int tstream_seek_rev(const struct tstream *s, const struct sid *id, struct spos *pos);
/* Step to the next / previous entry: 1, or 0 past the end. */
int tstream_next(const struct tstream *s, struct spos *pos);
int tstream_prev(const struct tstream *s, struct spos *pos);
/* Decode the entry at pos. */
void tstream_get(const struct tstream *s, const struct spos *pos, struct sent *e);
/* The next field or value of e: 1, or 0 at the end. */
int sentry_next(struct sent *e, const char **p, size_t *n);

/* Delete the entry with this ID: 1, or 0 when absent. */
int tstream_delete(struct tstream *s, const struct sid *id);
/* Trim: keep at most maxlen entries (minid NULL) or drop entries below *minid. approx: only
 * whole nodes; limit: at most this many entries (0 = no limit). Returns entries removed. */
int64_t tstream_trim(struct tstream *s, long long maxlen, const struct sid *minid, int approx,
                     long long limit);

#endif
