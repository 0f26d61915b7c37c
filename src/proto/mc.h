/* memcached text and meta protocol: request parsing with memcached 1.6's tokenizer, limits and
 * error precedence, plus the helpers replies need (mc_compose.h composes them). No I/O, no
 * storage, no allocation: tokens and values are borrowed slices of the caller's input buffer. */
#ifndef TC_MC_H
#define TC_MC_H

#include <stddef.h>
#include <stdint.h>

#define MC_KEY_MAX 250            /* longest key */
#define MC_MAX_TOKENS 24          /* as memcached: 23 tokens, then the rest of the line */
#define MC_LINE_MAX 2048          /* a partial line longer than this is refused (get lines excepted) */
#define MC_GET_LINE_MAX (16 << 20) /* a get line may grow this far without its newline */
#define MC_META_TOKENS_MAX 20     /* meta commands: at most this many tokens (memcached counting) */
#define MC_OPAQUE_MAX 32          /* longest O(paque) flag token */
#define MC_REALTIME_MAXDELTA 2592000 /* exptimes above 30 days are absolute unix times */

/* Error lines (without CRLF), exactly as memcached words them. */
#define MC_ERROR "ERROR"
#define MC_ERR_FORMAT "CLIENT_ERROR bad command line format"
#define MC_ERR_CHUNK "CLIENT_ERROR bad data chunk"
#define MC_ERR_TOO_LARGE "SERVER_ERROR object too large for cache"
#define MC_ERR_OOM "SERVER_ERROR out of memory storing object"
#define MC_ERR_LINE "CLIENT_ERROR line too long"
#define MC_ERR_EXPTIME "CLIENT_ERROR invalid exptime argument"
#define MC_ERR_DELTA "CLIENT_ERROR invalid numeric delta argument"
#define MC_ERR_NONNUM "CLIENT_ERROR cannot increment or decrement non-numeric value"

enum mc_status {
    MC_OK = 0,                /* *r holds a request (cmd MC_NONE: bytes were only discarded) */
    MC_NEED_MORE = 1,         /* feed more bytes */
    MC_ERR_LINE_TOO_LONG = -1 /* a line without newline passed the limit: reply MC_ERR_LINE, close */
};

enum mc_cmd {
    MC_NONE = 0,
    MC_GET, MC_GETS, MC_GAT, MC_GATS,
    MC_SET, MC_ADD, MC_REPLACE, MC_APPEND, MC_PREPEND, MC_CAS,
    MC_INCR, MC_DECR, MC_DELETE, MC_TOUCH,
    MC_FLUSH_ALL, MC_VERSION, MC_VERBOSITY, MC_QUIT, MC_STATS, MC_SHUTDOWN,
    MC_MG, MC_MS, MC_MD, MC_MA, MC_MN, MC_ME,
    MC_HANGUP,      /* an HTTP request line: close without a reply (pending output dropped) */
    MC_ADMIN,       /* lru_crawler, slabs, lru, cache_memlimit, watch: tok[] holds the line */
};

struct mc_tok {
    const char *p;
    size_t n;
};

/* Meta flag bit for a flag letter (A..Z, a..z). */
#define MC_MF(ch) (1ULL << ((ch) >= 'a' ? (ch) - 'a' + 26 : (ch) - 'A'))

/* Parsed meta flags (mg ms md ma me). Return flags are emitted by walking tok[] in order. */
struct mc_meta {
    uint64_t has;        /* MC_MF() of every flag present */
    char mode;           /* M token (0: none) */
    int32_t ttl;         /* T */
    int32_t vivify_ttl;  /* N */
    int32_t recache_ttl; /* R */
    uint32_t flags;      /* F */
    uint64_t cas;        /* C */
    uint64_t new_cas;    /* E: explicit CAS value for a write */
    uint64_t delta;      /* D (default 1) */
    uint64_t initial;    /* J (default 0) */
};

struct mc_req {
    enum mc_cmd cmd;
    const char *err;       /* reply this line instead of running cmd (NULL: run it) */
    uint8_t noreply;       /* text commands: "noreply" (suppresses errors too); meta: q */
    uint8_t too_large;     /* err is MC_ERR_TOO_LARGE: set and ms also drop the old item */
    uint8_t key_b64;       /* meta b: key was base64 (returned keys are encoded again) */
    int ntok;              /* memcached's count: tokens + 1 */
    struct mc_tok tok[MC_MAX_TOKENS];
    const char *rest;      /* text after the 23rd token, or NULL */
    const char *keys;      /* get family: first byte of the key list (when rest is NULL, the
                              keys are also tok[1 or 2 .. ntok - 2]) */
    const char *end;       /* end of the command line (without CR LF) */
    struct mc_tok key;     /* the key (decoded for meta b) */
    uint32_t flags;        /* client flags */
    int32_t exptime;       /* raw exptime argument (storage, touch, gat, flush_all delay) */
    uint64_t num;          /* cas unique (cas), delta (incr/decr), verbosity level */
    size_t vlen;           /* data block length (storage, ms) */
    const char *data;      /* data block (borrowed from the input) */
    struct mc_meta m;
    char keybuf[MC_KEY_MAX + 1]; /* decoded base64 key */
};

/* Resumable parser state, one per connection. Zero-initialise. */
struct mc_parser {
    uint64_t swallow;   /* bytes of a refused data block still to discard */
    size_t scanned;     /* bytes of the pending partial line already searched for a newline */
    size_t toklen;      /* length of the last token of a pending over-long get line */
    uint8_t get_line;   /* the pending partial line is a get/gets line past MC_LINE_MAX */
    uint8_t skip_line;  /* discarding a get line that holds an over-long key up to its newline */
};

/* Parse one request from buf[0..len). Always sets *used: the caller drops that many bytes
 * whatever the status (MC_NEED_MORE may consume bytes being discarded). On MC_OK, r's slices
 * point into buf and stay valid until those bytes are dropped. item_size_max bounds stored
 * items the way memcached does (header + key + value). Never allocates; any thread. */
int mc_parse(struct mc_parser *p, const char *buf, size_t len, size_t item_size_max,
             struct mc_req *r, size_t *used);

/* Next space-separated token of [*pos, end): returns 0 at the end, else 1 and advances *pos. */
int mc_next_token(const char **pos, const char *end, struct mc_tok *t);

/* The expire time of an exptime argument as absolute unix ms: 0 = never, MC_EXPIRED = already
 * expired (negative, or absolute in the past), else now + seconds or the absolute time. */
#define MC_EXPIRED 1
int64_t mc_exptime_ms(int32_t exptime, int64_t now_ms);

/* Standard base64 (with padding). decode returns the decoded length, 0 when invalid or when
 * it would not fit in cap. encode returns the length written (cap must be >= 4*((n+2)/3)). */
size_t mc_base64_decode(const char *in, size_t n, char *out, size_t cap);
size_t mc_base64_encode(const char *in, size_t n, char *out, size_t cap);

/* Format v in decimal into out (>= 21 bytes); returns the length. */
int mc_u64toa(uint64_t v, char *out);

/* memcached's number rules (util_mc_scan_num): mc_tok_u32 truncates to 32 bits like
 * memcached's safe_strtoul. Returns 1 on success. (Stored values for incr/decr are read by
 * src/store/strval.c with util_mc_str2u64.) */
int mc_tok_u32(const struct mc_tok *t, uint32_t *out);

#endif
