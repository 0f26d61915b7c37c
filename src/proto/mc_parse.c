/* memcached text/meta request parser. The tokenizer, the token-count checks, the number
 * parsing and the order in which errors win follow memcached 1.6 (proto_text.c), so that the
 * same bytes get the same reply. Keys are any bytes but space (memcached does not refuse
 * control characters, and memcaslap's keys start with some). One difference, on purpose: a
 * partial line past MC_LINE_MAX gets MC_ERR_LINE before the close. */
#include "proto/mc.h"

#include <limits.h>
#include <string.h>

#include "core/util.h"

enum { LINE_DONE, LINE_DATA, LINE_SWALLOW };

static int tok_is(const struct mc_tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->n == n && memcmp(t->p, s, n) == 0;
}

/* memcached's safe_strtoull: unsigned 64-bit, a '-' only allowed while the result stays
 * non-negative as a signed number (so "-0" is 0 and "-1" is refused). */
static int safe_strtoull(const struct mc_tok *t, size_t skip, uint64_t *out)
{
    return t->n >= skip && util_mc_str2u64(t->p + skip, t->n - skip, out);
}

/* memcached's safe_strtoul: an unsigned long truncated to 32 bits (4294967296 gives 0). */
static int safe_strtoul(const struct mc_tok *t, size_t skip, uint32_t *out)
{
    uint64_t v;

    if (!safe_strtoull(t, skip, &v))
        return 0;
    *out = (uint32_t)v;
    return 1;
}

/* memcached 1.6.18's safe_strtol: a long, truncated to 32 bits (4102444800 becomes negative). */
static int safe_strtol(const struct mc_tok *t, size_t skip, int32_t *out)
{
    uint64_t mag;
    int neg;
    int64_t l;

    if (t->n < skip || util_mc_scan_num(t->p + skip, t->n - skip, &mag, &neg) != 1)
        return 0;
    if (!neg && mag > (uint64_t)INT64_MAX)
        return 0;
    if (neg && mag > (uint64_t)INT64_MAX + 1)
        return 0;
    l = neg ? (int64_t)((uint64_t)0 - mag) : (int64_t)mag;
    *out = (int32_t)(uint32_t)(uint64_t)l;
    return 1;
}

/* memcached's tokenize_command: split on ' ' only, at most MC_MAX_TOKENS - 1 tokens. */
static void tokenize(struct mc_req *r, const char *line, const char *end)
{
    const char *s = line, *e = line;
    int n = 0;

    for (; e < end; e++) {
        if (*e != ' ')
            continue;
        if (s != e) {
            r->tok[n].p = s;
            r->tok[n].n = (size_t)(e - s);
            n++;
            if (n == MC_MAX_TOKENS - 1) {
                e++;
                s = e;
                break;
            }
        }
        s = e + 1;
    }
    if (s != e) {
        r->tok[n].p = s;
        r->tok[n].n = (size_t)(e - s);
        n++;
    }
    r->rest = e < end ? e : NULL;
    r->ntok = n + 1;
}

static int last_is_noreply(const struct mc_req *r)
{
    return r->ntok >= 2 && tok_is(&r->tok[r->ntok - 2], "noreply");
}

static int set_err(struct mc_req *r, const char *err)
{
    r->err = err;
    return LINE_DONE;
}

/* memcached's item_size_ok: header (48) + cas (8) + key + NUL + flags suffix + data + CRLF. */
static int too_large(size_t nkey, uint32_t flags, size_t vlen, size_t item_size_max)
{
    return 56 + nkey + 1 + (flags ? 4 : 0) + vlen + 2 > item_size_max;
}

static int parse_get(struct mc_req *r, enum mc_cmd cmd, int touch)
{
    const char *pos;
    struct mc_tok t;

    r->cmd = cmd;
    if (touch) {
        if (!safe_strtol(&r->tok[1], 0, &r->exptime))
            return set_err(r, MC_ERR_EXPTIME);
        pos = r->tok[1].p + r->tok[1].n;
    } else {
        pos = r->tok[1].p;
    }
    r->keys = pos;
    if (!r->rest) {
        /* the whole line is in tok[]: the keys are its tokens from here on */
        for (int i = touch ? 2 : 1; i < r->ntok - 1; i++)
            if (r->tok[i].n > MC_KEY_MAX)
                return set_err(r, MC_ERR_FORMAT);
        return LINE_DONE;
    }
    while (mc_next_token(&pos, r->end, &t))
        if (t.n > MC_KEY_MAX)
            return set_err(r, MC_ERR_FORMAT);
    return LINE_DONE;
}

static int parse_update(struct mc_req *r, enum mc_cmd cmd, size_t item_size_max)
{
    int32_t vlen;

    r->cmd = cmd;
    r->noreply = (uint8_t)last_is_noreply(r);
    r->key = r->tok[1];
    if (r->key.n > MC_KEY_MAX)
        return set_err(r, MC_ERR_FORMAT);
    if (!safe_strtoul(&r->tok[2], 0, &r->flags) || !safe_strtol(&r->tok[3], 0, &r->exptime) ||
        !safe_strtol(&r->tok[4], 0, &vlen))
        return set_err(r, MC_ERR_FORMAT);
    if (cmd == MC_CAS && !safe_strtoull(&r->tok[5], 0, &r->num))
        return set_err(r, MC_ERR_FORMAT);
    if (vlen < 0 || vlen > INT_MAX - 2)
        return set_err(r, MC_ERR_FORMAT);
    r->vlen = (size_t)vlen;
    if (too_large(r->key.n, r->flags, r->vlen, item_size_max)) {
        r->err = MC_ERR_TOO_LARGE;
        r->too_large = 1;
        return LINE_SWALLOW;
    }
    return LINE_DATA;
}

/* memcached's _meta_flag_preparse over tokens start.. : the last problem found sets *errstr;
 * a duplicate or unknown flag stops at once. Returns 0 or -1. */
static int meta_preparse(struct mc_req *r, int start, const char **errstr)
{
    uint64_t seen[2] = {0, 0};
    int bad = 0;

    for (int i = start; i < r->ntok - 1; i++) {
        const struct mc_tok *t = &r->tok[i];
        unsigned char o = (unsigned char)t->p[0];
        size_t n;

        if (o >= 127 || (seen[o >> 6] >> (o & 63)) & 1) {
            *errstr = "CLIENT_ERROR duplicate flag";
            return -1;
        }
        seen[o >> 6] |= 1ULL << (o & 63);
        switch (o) {
        case 'b':
            n = mc_base64_decode(r->tok[1].p, r->tok[1].n, r->keybuf, sizeof(r->keybuf));
            if (n == 0) {
                *errstr = "CLIENT_ERROR error decoding key";
                bad = 1;
            }
            r->key.p = r->keybuf;
            r->key.n = n;
            r->key_b64 = 1;
            break;
        case 'N':
            if (!safe_strtol(t, 1, &r->m.vivify_ttl)) {
                *errstr = "CLIENT_ERROR bad token in command line format";
                bad = 1;
            }
            break;
        case 'T':
            if (!safe_strtol(t, 1, &r->m.ttl)) {
                *errstr = "CLIENT_ERROR bad token in command line format";
                bad = 1;
            }
            break;
        case 'R':
            if (!safe_strtol(t, 1, &r->m.recache_ttl)) {
                *errstr = "CLIENT_ERROR bad token in command line format";
                bad = 1;
            }
            break;
        case 'l': case 'O': case 'P': case 'L': case 'k': case 's': case 't': case 'c':
        case 'f': case 'v': case 'h': case 'u': case 'q': case 'I':
            break;
        case 'F':
            if (!safe_strtoul(t, 1, &r->m.flags))
                bad = 1;
            break;
        case 'C':
            if (!safe_strtoull(t, 1, &r->m.cas)) {
                *errstr = "CLIENT_ERROR bad token in command line format";
                bad = 1;
            }
            break;
        case 'E': /* newer memcached: the CAS value a write gives the item */
            if (!safe_strtoull(t, 1, &r->m.new_cas)) {
                *errstr = "CLIENT_ERROR bad token in command line format";
                bad = 1;
            }
            break;
        case 'M':
            if (t->n != 2) {
                *errstr = "CLIENT_ERROR incorrect length for M token";
                bad = 1;
            } else {
                r->m.mode = t->p[1];
            }
            break;
        case 'J':
            if (!safe_strtoull(t, 1, &r->m.initial)) {
                *errstr = "CLIENT_ERROR invalid numeric initial value";
                bad = 1;
            }
            break;
        case 'D':
            if (!safe_strtoull(t, 1, &r->m.delta)) {
                *errstr = "CLIENT_ERROR invalid numeric delta value";
                bad = 1;
            }
            break;
        default:
            *errstr = "CLIENT_ERROR invalid flag";
            return -1;
        }
        if ((o >= 'A' && o <= 'Z') || (o >= 'a' && o <= 'z'))
            r->m.has |= MC_MF(o);
    }
    return bad ? -1 : 0;
}

static int opaque_too_long(const struct mc_req *r, int start)
{
    for (int i = start; i < r->ntok - 1; i++)
        if (r->tok[i].p[0] == 'O' && r->tok[i].n > MC_OPAQUE_MAX)
            return 1;
    return 0;
}

static void meta_reset(struct mc_req *r)
{
    memset(&r->m, 0, sizeof(r->m));
    r->m.delta = 1;
    r->key = r->tok[1];
}

static int parse_meta(struct mc_req *r, enum mc_cmd cmd, size_t item_size_max)
{
    const char *errstr = MC_ERR_FORMAT;
    int32_t vlen;
    int start = cmd == MC_MS ? 3 : 2;

    r->cmd = cmd;
    if (r->ntok < 3)
        return set_err(r, MC_ERROR);
    meta_reset(r);
    if (r->key.n > MC_KEY_MAX)
        return set_err(r, MC_ERR_FORMAT);
    if (cmd == MC_MS) {
        if (r->ntok == 3)
            return set_err(r, MC_ERR_FORMAT);
        if (r->ntok > MC_META_TOKENS_MAX)
            return set_err(r, "CLIENT_ERROR options flags too long");
        if (!safe_strtol(&r->tok[2], 0, &vlen) || vlen < 0 || vlen > INT_MAX - 2)
            return set_err(r, MC_ERR_FORMAT);
        r->vlen = (size_t)vlen;
        /* from here on the data block is swallowed after an error */
        if (meta_preparse(r, start, &errstr)) {
            r->err = errstr;
        } else if (r->m.mode && !strchr("EAPRS", r->m.mode)) {
            r->err = "CLIENT_ERROR invalid mode for ms M token";
        } else if (opaque_too_long(r, start)) {
            r->err = "CLIENT_ERROR opaque token too long";
        } else if (too_large(r->key.n, r->m.flags, r->vlen, item_size_max)) {
            r->err = MC_ERR_TOO_LARGE;
            r->too_large = 1;
        }
        if (r->err)
            return LINE_SWALLOW;
        r->noreply = (r->m.has & MC_MF('q')) != 0;
        return LINE_DATA;
    }
    if (r->ntok > MC_META_TOKENS_MAX)
        return set_err(r, cmd == MC_MG ? "CLIENT_ERROR options flags are too long"
                                       : "CLIENT_ERROR options flags too long");
    if (meta_preparse(r, start, &errstr))
        return set_err(r, cmd == MC_MG ? errstr : "CLIENT_ERROR invalid or duplicate flag");
    if (cmd == MC_MA && r->m.mode && !strchr("I+D-", r->m.mode))
        return set_err(r, "CLIENT_ERROR invalid mode for ma M token");
    if (opaque_too_long(r, start))
        return set_err(r, "CLIENT_ERROR opaque token too long");
    r->noreply = (r->m.has & MC_MF('q')) != 0;
    return LINE_DONE;
}

static int parse_me(struct mc_req *r)
{
    r->cmd = MC_ME;
    meta_reset(r);
    if (r->ntok < 3 || r->key.n > MC_KEY_MAX)
        return set_err(r, MC_ERR_FORMAT);
    if (r->ntok >= 4 && tok_is(&r->tok[2], "b")) {
        size_t n = mc_base64_decode(r->tok[1].p, r->tok[1].n, r->keybuf, sizeof(r->keybuf));
        if (n == 0)
            return set_err(r, MC_ERR_FORMAT);
        r->key.p = r->keybuf;
        r->key.n = n;
        r->key_b64 = 1;
    }
    return LINE_DONE;
}

static int want(struct mc_req *r, int a, int b)
{
    return r->ntok == a || r->ntok == b;
}

/* One command line [line, end): memcached's process_command_ascii dispatch. */
static int parse_line(struct mc_req *r, const char *line, const char *end, size_t item_size_max)
{
    const struct mc_tok *t0 = &r->tok[0];
    const struct mc_tok *t1 = &r->tok[1];

    r->end = end;
    tokenize(r, line, end);
    if (r->ntok < 2 || t0->n < 2)
        return set_err(r, MC_ERROR);
    if (t0->p[0] == 'm' && t0->n == 2) {
        switch (t0->p[1]) {
        case 'g': return parse_meta(r, MC_MG, item_size_max);
        case 's': return parse_meta(r, MC_MS, item_size_max);
        case 'd': return parse_meta(r, MC_MD, item_size_max);
        case 'a': return parse_meta(r, MC_MA, item_size_max);
        case 'e': return parse_me(r);
        case 'n': r->cmd = MC_MN; return LINE_DONE;
        default: return set_err(r, MC_ERROR);
        }
    }
    if (t0->p[0] == 'g') {
        if (r->ntok < 3)
            return set_err(r, MC_ERROR);
        if (tok_is(t0, "get"))
            return parse_get(r, MC_GET, 0);
        if (tok_is(t0, "gets"))
            return parse_get(r, MC_GETS, 0);
        if (tok_is(t0, "gat"))
            return parse_get(r, MC_GAT, 1);
        if (tok_is(t0, "gats"))
            return parse_get(r, MC_GATS, 1);
        return set_err(r, MC_ERROR);
    }
    if (tok_is(t0, "set") || tok_is(t0, "add") || tok_is(t0, "append") ||
        tok_is(t0, "replace") || tok_is(t0, "prepend")) {
        enum mc_cmd cmd = t0->p[0] == 's' ? MC_SET : t0->p[0] == 'r' ? MC_REPLACE
                        : t0->n == 3 ? MC_ADD : t0->p[0] == 'a' ? MC_APPEND : MC_PREPEND;
        if (!want(r, 6, 7))
            return set_err(r, MC_ERROR);
        return parse_update(r, cmd, item_size_max);
    }
    if (tok_is(t0, "cas")) {
        if (!want(r, 7, 8))
            return set_err(r, MC_ERROR);
        return parse_update(r, MC_CAS, item_size_max);
    }
    if (tok_is(t0, "incr") || tok_is(t0, "decr")) {
        r->cmd = t0->p[0] == 'i' ? MC_INCR : MC_DECR;
        if (!want(r, 4, 5))
            return set_err(r, MC_ERROR);
        r->noreply = (uint8_t)last_is_noreply(r);
        r->key = *t1;
        if (t1->n > MC_KEY_MAX)
            return set_err(r, MC_ERR_FORMAT);
        if (!safe_strtoull(&r->tok[2], 0, &r->num))
            return set_err(r, MC_ERR_DELTA);
        return LINE_DONE;
    }
    if (tok_is(t0, "delete")) {
        r->cmd = MC_DELETE;
        if (r->ntok < 3 || r->ntok > 5)
            return set_err(r, MC_ERROR);
        if (r->ntok > 3) {
            int hold_is_zero = tok_is(&r->tok[2], "0");
            int sets_noreply = last_is_noreply(r);
            r->noreply = (uint8_t)sets_noreply;
            if (!((r->ntok == 4 && (hold_is_zero || sets_noreply)) ||
                  (r->ntok == 5 && hold_is_zero && sets_noreply)))
                return set_err(r, "CLIENT_ERROR bad command line format.  "
                                  "Usage: delete <key> [noreply]");
        }
        r->key = *t1;
        if (t1->n > MC_KEY_MAX)
            return set_err(r, MC_ERR_FORMAT);
        return LINE_DONE;
    }
    if (tok_is(t0, "touch")) {
        r->cmd = MC_TOUCH;
        if (!want(r, 4, 5))
            return set_err(r, MC_ERROR);
        r->noreply = (uint8_t)last_is_noreply(r);
        r->key = *t1;
        if (t1->n > MC_KEY_MAX)
            return set_err(r, MC_ERR_FORMAT);
        if (!safe_strtol(&r->tok[2], 0, &r->exptime))
            return set_err(r, MC_ERR_EXPTIME);
        return LINE_DONE;
    }
    if (tok_is(t0, "bget")) {
        if (r->ntok < 3)
            return set_err(r, MC_ERROR);
        return parse_get(r, MC_GET, 0);
    }
    if (tok_is(t0, "stats")) {
        r->cmd = MC_STATS;
        return LINE_DONE;
    }
    if (tok_is(t0, "flush_all")) {
        r->cmd = MC_FLUSH_ALL;
        if (r->ntok > 4)
            return set_err(r, MC_ERROR);
        r->noreply = (uint8_t)last_is_noreply(r);
        r->exptime = 0;
        if (r->ntok != (r->noreply ? 3 : 2) && !safe_strtol(t1, 0, &r->exptime))
            return set_err(r, MC_ERR_EXPTIME);
        return LINE_DONE;
    }
    if (tok_is(t0, "version")) {
        r->cmd = MC_VERSION;
        return LINE_DONE;
    }
    if (tok_is(t0, "quit")) {
        r->cmd = MC_QUIT;
        return LINE_DONE;
    }
    if (tok_is(t0, "verbosity")) {
        uint32_t level;
        r->cmd = MC_VERBOSITY;
        if (!want(r, 3, 4))
            return set_err(r, MC_ERROR);
        r->noreply = (uint8_t)last_is_noreply(r);
        if (!safe_strtoul(t1, 0, &level))
            return set_err(r, MC_ERR_FORMAT);
        r->num = level;
        return LINE_DONE;
    }
    if (tok_is(t0, "shutdown")) {
        /* num: 0 now, 1 graceful, 2 an unknown mode (refused only when shutdown is enabled) */
        r->cmd = MC_SHUTDOWN;
        r->num = r->ntok == 2 ? 0 : r->ntok == 3 && tok_is(t1, "graceful") ? 1 : 2;
        return LINE_DONE;
    }
    if (tok_is(t0, "lru_crawler") || tok_is(t0, "slabs") || tok_is(t0, "lru") ||
        tok_is(t0, "cache_memlimit") || tok_is(t0, "watch")) {
        r->cmd = MC_ADMIN;
        return LINE_DONE;
    }
    /* memcached hangs up on what looks like an HTTP request line (the last token starts
     * with HTTP/), past the command initials it dispatches on first */
    if (!strchr("acdgist", t0->p[0]) && r->tok[r->ntok - 2].n >= 5 &&
        memcmp(r->tok[r->ntok - 2].p, "HTTP/", 5) == 0) {
        r->cmd = MC_HANGUP;
        return LINE_DONE;
    }
    return set_err(r, MC_ERROR);
}

/* No newline yet in buf[0..len): keep waiting, refuse, or start discarding a get line. */
static int partial_line(struct mc_parser *p, const char *buf, size_t len, size_t *used)
{
    size_t from = p->scanned;

    p->scanned = len;
    if (len <= MC_LINE_MAX && !p->get_line)
        return MC_NEED_MORE;
    if (!p->get_line) {
        /* memcached lets only a multiget grow past the limit */
        size_t i = 0;
        while (i < len && buf[i] == ' ')
            i++;
        if (i > 100 || !((len - i >= 4 && memcmp(buf + i, "get ", 4) == 0) ||
                         (len - i >= 5 && memcmp(buf + i, "gets ", 5) == 0)))
            return MC_ERR_LINE_TOO_LONG;
        p->get_line = 1;
        p->toklen = 0;
        from = 0;
    }
    if (len > MC_GET_LINE_MAX)
        return MC_ERR_LINE_TOO_LONG;
    for (size_t i = from; i < len; i++) {
        if (buf[i] == ' ') {
            p->toklen = 0;
        } else if (++p->toklen > MC_KEY_MAX) {
            /* the reply is known: drop the line as it comes instead of buffering it */
            p->skip_line = 1;
            p->get_line = 0;
            p->scanned = 0;
            *used = len;
            return MC_NEED_MORE;
        }
    }
    return MC_NEED_MORE;
}

int mc_parse(struct mc_parser *p, const char *buf, size_t len, size_t item_size_max,
             struct mc_req *r, size_t *used)
{
    const char *nl, *end, *nul;
    size_t linelen, need;
    int k;

    *used = 0;
    r->cmd = MC_NONE;
    r->err = NULL;
    r->noreply = 0;
    r->too_large = 0;
    r->key_b64 = 0;
    r->data = NULL;
    r->vlen = 0;
    if (p->swallow) {
        size_t n = len < p->swallow ? len : (size_t)p->swallow;
        p->swallow -= n;
        *used = n;
        return p->swallow ? MC_NEED_MORE : MC_OK;
    }
    if (len == 0)
        return MC_NEED_MORE;
    if (p->scanned > len)
        p->scanned = 0;
    nl = memchr(buf + p->scanned, '\n', len - p->scanned);
    if (p->skip_line) {
        if (!nl) {
            *used = len;
            p->scanned = 0;
            return MC_NEED_MORE;
        }
        *used = (size_t)(nl - buf) + 1;
        p->skip_line = 0;
        p->scanned = 0;
        r->cmd = MC_GET;
        r->err = MC_ERR_FORMAT;
        return MC_OK;
    }
    if (!nl)
        return partial_line(p, buf, len, used);
    p->scanned = 0;
    p->get_line = 0;
    p->toklen = 0;
    linelen = (size_t)(nl - buf) + 1;
    end = nl;
    if (nl - buf > 1 && nl[-1] == '\r')
        end--;
    nul = memchr(buf, '\0', (size_t)(end - buf)); /* memcached sees a C string */
    if (nul)
        end = nul;
    k = parse_line(r, buf, end, item_size_max);
    if (k == LINE_DONE) {
        *used = linelen;
        return MC_OK;
    }
    if (k == LINE_SWALLOW) {
        *used = linelen;
        p->swallow = (uint64_t)r->vlen + 2;
        return MC_OK;
    }
    need = linelen + r->vlen + 2;
    if (len < need)
        return MC_NEED_MORE;
    r->data = buf + linelen;
    if (buf[linelen + r->vlen] != '\r' || buf[linelen + r->vlen + 1] != '\n')
        r->err = MC_ERR_CHUNK;
    *used = need;
    return MC_OK;
}

int mc_next_token(const char **pos, const char *end, struct mc_tok *t)
{
    const char *s = *pos, *e;

    while (s < end && *s == ' ')
        s++;
    if (s >= end) {
        *pos = end;
        return 0;
    }
    for (e = s; e < end && *e != ' '; e++)
        ;
    t->p = s;
    t->n = (size_t)(e - s);
    *pos = e;
    return 1;
}

int64_t mc_exptime_ms(int32_t exptime, int64_t now_ms)
{
    int64_t abs_ms;

    if (exptime == 0)
        return 0;
    if (exptime < 0)
        return MC_EXPIRED;
    if (exptime > MC_REALTIME_MAXDELTA) {
        abs_ms = (int64_t)exptime * 1000;
        return abs_ms <= now_ms ? MC_EXPIRED : abs_ms;
    }
    return now_ms + (int64_t)exptime * 1000;
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

size_t mc_base64_decode(const char *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;

    if (n == 0 || n % 4)
        return 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)in[i + j];
            if (c == '=' && i + 4 == n && j >= 2) {
                v[j] = 0;
                pad++;
                continue;
            }
            if (pad)
                return 0; /* data after padding */
            v[j] = b64val(c);
            if (v[j] < 0)
                return 0;
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        if (o + 3 - (size_t)pad > cap)
            return 0;
        out[o++] = (char)(w >> 16);
        if (pad < 2)
            out[o++] = (char)(w >> 8 & 0xff);
        if (pad < 1)
            out[o++] = (char)(w & 0xff);
    }
    return o;
}

size_t mc_base64_encode(const char *in, size_t n, char *out, size_t cap)
{
    size_t o = 0;

    if (cap < 4 * ((n + 2) / 3))
        return 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)(unsigned char)in[i] << 16;
        if (i + 1 < n)
            w |= (uint32_t)(unsigned char)in[i + 1] << 8;
        if (i + 2 < n)
            w |= (unsigned char)in[i + 2];
        out[o++] = b64chars[w >> 18 & 63];
        out[o++] = b64chars[w >> 12 & 63];
        out[o++] = i + 1 < n ? b64chars[w >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64chars[w & 63] : '=';
    }
    return o;
}

int mc_u64toa(uint64_t v, char *out)
{
    return util_ull2str(out, v);
}

int mc_tok_u32(const struct mc_tok *t, uint32_t *out)
{
    return safe_strtoul(t, 0, out);
}

