/* Internal to tc_persist: the RDB loader's bounds-checked reader of a mapped file (struct rd),
 * its strings (struct rstr) and the listpack/intset blob walker (struct lpr), shared by the
 * loader's files (rdb_read.c, rdb_load.c). Pure functions of the bytes: no store, no I/O.
 * On error the rd_* readers return -1 and keep the first reason in r->why. */
#ifndef TC_RDB_READ_H
#define TC_RDB_READ_H

#include <stddef.h>
#include <stdint.h>

struct rd {
    const unsigned char *p, *end;
    const char *why; /* set on the first error */
    int strict;      /* a RESTORE payload: duplicates and NaN scores are corrupt, as Redis's
                      * deep sanitization */
    uint64_t nel;    /* elements added to the collection being read (duplicate check) */
};

struct rstr {
    const char *p;
    size_t n;
    char *own; /* malloc'd when decompressed */
    char num[24];
};

struct lpr {
    const unsigned char *p, *end;
    char num[24];
    int zl;          /* a ziplist (Redis < 7) rather than a listpack */
    size_t prev;     /* ziplist: the size of the previous entry (checked against prevlen) */
    const unsigned char *base, *last; /* ziplist: its start, its last entry read */
    uint32_t tail, count, seen; /* ziplist: zltail and zllen from the header, entries read */
};

/* The loader's value reader (rdb_load.c), shared with the RESTORE decoder (rdb_payload.c):
 * one value of RDB type t into *otype and *ptr (a collection) or *str (a string). 0, or -1
 * with r->why set; *ptr may hold a partial collection to free with rdb_free_value. */
int rdb_read_value(struct rd *r, unsigned t, int *otype, void **ptr, struct rstr *str);
void rdb_free_value(int type, void *ptr);
/* Free what rd_str decompressed (s stays usable as empty). */
void rstr_free(struct rstr *s);
/* Record why (the first reason wins); returns -1. */
int rd_fail(struct rd *r, const char *why);
/* 0 when n more bytes are there, else -1 ("Unexpected EOF"). */
int rd_need(struct rd *r, size_t n);
int rd_byte(struct rd *r, unsigned *b);
/* A length, or (enc set) a special string encoding in *len. */
int rd_len_enc(struct rd *r, uint64_t *len, int *enc);
/* A plain length (an encoded string where a length belongs is corrupt). */
int rd_len(struct rd *r, uint64_t *len);
/* A string: s->p borrowed from the mapping, or from s->own / s->num (free with rstr_free). */
int rd_str(struct rd *r, struct rstr *s);
int rd_skip_str(struct rd *r);
/* Fixed-size little-endian fields and binary doubles. */
int rd_u64le(struct rd *r, uint64_t *v);
int rd_double_bin(struct rd *r, double *d);
/* The old text double of RDB_TYPE_ZSET. */
int rd_double_text(struct rd *r, double *d);
/* Start walking the listpack blob (borrowed). 0, or -1 when its header is corrupt. */
int lpr_init(struct lpr *l, const char *blob, size_t n);
/* Start walking a ziplist blob (Redis < 7 encodings) with the same lpr_next/lpr_int. */
int lpr_init_zl(struct lpr *l, const char *blob, size_t n);
/* The next element as bytes (integers formatted into l->num). 1, 0 at the end, -1 corrupt. */
int lpr_next(struct lpr *l, const char **p, size_t *n, int64_t *iv, int *isint);
/* The next element, which must be an integer. 0 or -1. */
int lpr_int(struct lpr *l, int64_t *v);

#endif
