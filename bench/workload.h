/* twinbench workload: what each request is (operation, key, value size).
 * The config structs are filled once at startup and read-only afterwards;
 * each worker thread owns one struct wl_state for its random streams. */
#ifndef TB_WORKLOAD_H
#define TB_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

enum wl_mode {
    WL_MIXED,  /* SET:GET ratio (get/set on RESP, get/set on memcached) */
    WL_INCR,   /* INCR / incr */
    WL_MGET,   /* MGET / multi-key get with mget_keys keys */
    WL_CMD,    /* RESP command template */
};

enum key_pattern { KEY_SEQ = 'S', KEY_UNIFORM = 'R', KEY_GAUSS = 'G', KEY_ZIPF = 'Z' };

enum size_kind { SIZE_FIXED, SIZE_RANGE, SIZE_LIST, SIZE_RECORD };

enum tpl_part_kind { TPL_LIT, TPL_KEY, TPL_DATA, TPL_RAND };

struct tpl_part {
    enum tpl_part_kind kind;  /* what to write */
    const char *lit;          /* TPL_LIT bytes (owned by the template) */
    uint32_t len;             /* TPL_LIT length */
};

struct tpl_arg {
    struct tpl_part parts[8];  /* concatenated to form one argument */
    uint32_t nparts;
};

#define TPL_MAX_ARGS 64

/* A RESP command template: `SET __key__ __data__`, `LPUSH mylist __data__`,
 * `GET key:__rand_int__`. inline_cmd sends it as an inline command. */
struct tpl {
    struct tpl_arg args[TPL_MAX_ARGS];
    uint32_t nargs;
    int inline_cmd;   /* 1: "PING\r\n" style instead of a multibulk */
    int has_key;      /* routes by the generated key when sharded */
    char *storage;    /* owned copy of the literal bytes */
};

struct workload {
    enum wl_mode mode;
    uint32_t ratio_set, ratio_get;  /* WL_MIXED */
    uint32_t mget_keys;             /* WL_MGET */
    struct tpl tpl;                 /* WL_CMD */
    char cmd_text[512];             /* WL_CMD source text, for reports */
    /* keys */
    enum key_pattern pattern;
    uint64_t key_min, key_max;      /* inclusive */
    char key_prefix[64];
    double zipf_exp;                /* KEY_ZIPF exponent (> 0) */
    double key_stddev, key_median;  /* KEY_GAUSS; 0 = (max-min)/6 and middle */
    uint64_t rand_max;              /* __rand_int__ range [0, rand_max]; 0 = fixed */
    /* values */
    enum size_kind size_kind;
    uint32_t size, size_min, size_max;  /* FIXED: size; RANGE/RECORD: min..max */
    uint32_t list_sizes[16], list_weights[16], nlist;
    uint32_t expiry;                /* memcached exptime / SET EX, 0 = none */
};

/* Per-thread generator state. */
struct wl_state {
    uint64_t s[4];        /* xoshiro256** state */
    uint64_t seq_next;    /* KEY_SEQ cursor */
    uint64_t seq_lo, seq_hi;  /* this thread's KEY_SEQ slice, inclusive */
    uint64_t nreq;        /* requests generated, drives the ratio */
    /* zipf constants */
    double z_hx1, z_hxn, z_s;
};

/* Parse a template like "LPUSH mylist __data__". Returns 0 or -1 with a
 * message in err. The template keeps its own copy of the text. */
int tpl_parse(struct tpl *t, const char *text, char *err, size_t errlen);
void tpl_deinit(struct tpl *t);

/* Fill defaults: mixed SET:GET 1:10, uniform keys 0..9999, 32-byte values. */
void workload_defaults(struct workload *w);
/* Prepare thread `idx` of `nthreads`: seed, KEY_SEQ slice, zipf constants. */
void wl_state_init(struct wl_state *st, const struct workload *w, uint32_t idx,
                   uint32_t nthreads, uint64_t seed);

uint64_t wl_rand(struct wl_state *st);
static inline double wl_rand01(struct wl_state *st)
{
    return (double)(wl_rand(st) >> 11) * (1.0 / 9007199254740992.0);
}
/* Next key number per the pattern. */
uint64_t wl_next_key(struct wl_state *st, const struct workload *w);
/* Format prefix+n into out (>= 96 bytes). Returns length. */
uint32_t wl_format_key(const struct workload *w, uint64_t n, char *out);
/* Next value size. */
uint32_t wl_next_size(struct wl_state *st, const struct workload *w);
/* 1 if the next WL_MIXED request is a SET. */
int wl_next_is_set(struct wl_state *st, const struct workload *w);

/* Shared value bytes: wl_value(off) points at >= max value size bytes.
 * Built once by wl_values_setup(max_size) before threads start. */
void wl_values_setup(uint32_t max_size);
const char *wl_value(struct wl_state *st, uint32_t size);
/* A seed-000 record (2 longs + 4 doubles, then letters), >= max size bytes. */
const char *wl_record(struct wl_state *st);
uint32_t wl_max_size(const struct workload *w);

/* Write a 12-digit zero-padded decimal (redis-benchmark __rand_int__). */
void wl_fmt12(uint64_t v, char *out);

#endif
