/* Key, value and operation generators, see workload.h. */
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REC_COUNT 1024
#define REC_HEADER 48

static char *g_letters;      /* letters pool, g_letters_len bytes */
static uint32_t g_letters_len;
static char *g_records;      /* REC_COUNT records of g_rec_size bytes */
static uint32_t g_rec_size;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t wl_rand(struct wl_state *st)
{
    uint64_t *s = st->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void workload_defaults(struct workload *w)
{
    memset(w, 0, sizeof(*w));
    w->mode = WL_MIXED;
    w->ratio_set = 1;
    w->ratio_get = 10;
    w->mget_keys = 10;
    w->pattern = KEY_UNIFORM;
    w->key_min = 0;
    w->key_max = 9999;
    snprintf(w->key_prefix, sizeof(w->key_prefix), "key:");
    w->zipf_exp = 0.99;
    w->size_kind = SIZE_FIXED;
    w->size = 32;
}

/* Zipf by rejection-inversion (Hormann & Derflinger 1996): O(1) per sample,
 * any exponent > 0, no table. */
static double zh1(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x)); }
static double zh2(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x)); }
static double z_h(double e, double x) { return exp(-e * log(x)); }
static double z_hint(double e, double x) { double lx = log(x); return zh2((1 - e) * lx) * lx; }
static double z_hinv(double e, double x)
{
    double t = x * (1 - e);
    if (t < -1) t = -1;
    return exp(zh1(t) * x);
}

void wl_state_init(struct wl_state *st, const struct workload *w, uint32_t idx,
                   uint32_t nthreads, uint64_t seed)
{
    memset(st, 0, sizeof(*st));
    uint64_t x = seed * 0x100000001b3ull + idx * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < 4; i++) st->s[i] = splitmix(&x);
    uint64_t range = w->key_max - w->key_min + 1;
    if (nthreads == 0) nthreads = 1;
    st->seq_lo = w->key_min + range * idx / nthreads;
    st->seq_hi = w->key_min + range * (idx + 1) / nthreads - 1;
    if (st->seq_hi < st->seq_lo) st->seq_hi = st->seq_lo;
    st->seq_next = st->seq_lo;
    double n = (double)range, e = w->zipf_exp > 0 ? w->zipf_exp : 0.99;
    st->z_hx1 = z_hint(e, 1.5) - 1;
    st->z_hxn = z_hint(e, n + 0.5);
    st->z_s = 2 - z_hinv(e, z_hint(e, 2.5) - z_h(e, 2));
}

static uint64_t zipf_sample(struct wl_state *st, const struct workload *w, uint64_t n)
{
    double e = w->zipf_exp > 0 ? w->zipf_exp : 0.99;
    for (;;) {
        double u = st->z_hxn + wl_rand01(st) * (st->z_hx1 - st->z_hxn);
        double x = z_hinv(e, u);
        double kd = floor(x + 0.5);
        if (kd < 1) kd = 1;
        else if (kd > (double)n) kd = (double)n;
        if (kd - x <= st->z_s || u >= z_hint(e, kd + 0.5) - z_h(e, kd)) return (uint64_t)kd;
    }
}

uint64_t wl_next_key(struct wl_state *st, const struct workload *w)
{
    uint64_t range = w->key_max - w->key_min + 1;
    switch (w->pattern) {
    case KEY_SEQ: {
        uint64_t k = st->seq_next++;
        if (st->seq_next > st->seq_hi) st->seq_next = st->seq_lo;
        return k;
    }
    case KEY_GAUSS: {
        double sd = w->key_stddev > 0 ? w->key_stddev : (double)range / 6.0;
        double med = w->key_median > 0 ? w->key_median : (double)w->key_min + (double)(range - 1) / 2.0;
        double u1 = wl_rand01(st), u2 = wl_rand01(st);
        if (u1 < 1e-300) u1 = 1e-300;
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        double v = floor(med + z * sd + 0.5);
        if (v < (double)w->key_min) v = (double)w->key_min;
        if (v > (double)w->key_max) v = (double)w->key_max;
        return (uint64_t)v;
    }
    case KEY_ZIPF:
        return w->key_min + zipf_sample(st, w, range) - 1;
    case KEY_UNIFORM:
    default:
        return w->key_min + (range ? wl_rand(st) % range : 0);
    }
}

static uint32_t fmt_u64(uint64_t v, char *out)
{
    char tmp[24];
    uint32_t n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (uint32_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

uint32_t wl_format_key(const struct workload *w, uint64_t n, char *out)
{
    uint32_t pl = (uint32_t)strlen(w->key_prefix);
    memcpy(out, w->key_prefix, pl);
    return pl + fmt_u64(n, out + pl);
}

void wl_fmt12(uint64_t v, char *out)
{
    for (int i = 11; i >= 0; i--) { out[i] = (char)('0' + v % 10); v /= 10; }
}

uint32_t wl_next_size(struct wl_state *st, const struct workload *w)
{
    switch (w->size_kind) {
    case SIZE_RANGE:
    case SIZE_RECORD:
        return w->size_min + (uint32_t)(wl_rand(st) % (w->size_max - w->size_min + 1));
    case SIZE_LIST: {
        uint32_t tot = 0;
        for (uint32_t i = 0; i < w->nlist; i++) tot += w->list_weights[i];
        uint32_t r = tot ? (uint32_t)(wl_rand(st) % tot) : 0;
        for (uint32_t i = 0; i < w->nlist; i++) {
            if (r < w->list_weights[i]) return w->list_sizes[i];
            r -= w->list_weights[i];
        }
        return w->nlist ? w->list_sizes[w->nlist - 1] : w->size;
    }
    case SIZE_FIXED:
    default:
        return w->size;
    }
}

int wl_next_is_set(struct wl_state *st, const struct workload *w)
{
    uint32_t tot = w->ratio_set + w->ratio_get;
    uint64_t i = st->nreq++;
    if (!tot) return 0;
    return (i % tot) < w->ratio_set;
}

uint32_t wl_max_size(const struct workload *w)
{
    switch (w->size_kind) {
    case SIZE_RANGE:
    case SIZE_RECORD:
        return w->size_max;
    case SIZE_LIST: {
        uint32_t m = 0;
        for (uint32_t i = 0; i < w->nlist; i++) if (w->list_sizes[i] > m) m = w->list_sizes[i];
        return m;
    }
    default:
        return w->size;
    }
}

void wl_values_setup(uint32_t max_size)
{
    uint64_t x = 12345;
    uint32_t want = max_size + 65536;
    if (g_letters_len < want) {
        free(g_letters);
        g_letters = malloc(want);
        if (!g_letters) { perror("malloc"); exit(2); }
        for (uint32_t i = 0; i < want; i++)
            g_letters[i] = (char)('a' + splitmix(&x) % 26);
        g_letters_len = want;
    }
    /* seed-000 records: 2 longs + 4 doubles (48 bytes) then a string. */
    uint32_t rs = max_size > REC_HEADER ? max_size : REC_HEADER;
    if (g_rec_size < rs) {
        free(g_records);
        g_records = malloc((size_t)REC_COUNT * rs);
        if (!g_records) { perror("malloc"); exit(2); }
        for (uint32_t r = 0; r < REC_COUNT; r++) {
            char *p = g_records + (size_t)r * rs;
            int64_t l[2] = {(int64_t)r, (int64_t)splitmix(&x)};
            double d[4];
            for (int i = 0; i < 4; i++) d[i] = (double)(splitmix(&x) >> 11) / 1e6;
            memcpy(p, l, 16);
            memcpy(p + 16, d, 32);
            for (uint32_t i = REC_HEADER; i < rs; i++) p[i] = (char)('A' + splitmix(&x) % 26);
        }
        g_rec_size = rs;
    }
}

const char *wl_value(struct wl_state *st, uint32_t size)
{
    (void)size;
    if (st == NULL) return g_letters;
    uint64_t r = wl_rand(st);
    return g_letters + (r % 65536);
}

const char *wl_record(struct wl_state *st)
{
    return g_records + (size_t)(wl_rand(st) % REC_COUNT) * g_rec_size;
}

int tpl_parse(struct tpl *t, const char *text, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    size_t tl = strlen(text);
    t->storage = malloc(tl + 1);
    if (!t->storage) { snprintf(err, errlen, "out of memory"); return -1; }
    memcpy(t->storage, text, tl + 1);
    char *p = t->storage;
    static const struct { const char *tok; enum tpl_part_kind kind; } toks[] = {
        {"__key__", TPL_KEY}, {"__data__", TPL_DATA}, {"__rand_int__", TPL_RAND}};
    while (*p) {
        while (*p == ' ') *p++ = 0;
        if (!*p) break;
        if (t->nargs == TPL_MAX_ARGS) { snprintf(err, errlen, "too many arguments"); return -1; }
        struct tpl_arg *a = &t->args[t->nargs++];
        char *start = p;
        while (*p && *p != ' ') p++;
        char *end = p;
        char *q = start;
        char *lit = start;
        while (q < end) {
            int hit = -1;
            for (int k = 0; k < 3; k++) {
                size_t n = strlen(toks[k].tok);
                if ((size_t)(end - q) >= n && !memcmp(q, toks[k].tok, n)) { hit = k; break; }
            }
            if (hit < 0) { q++; continue; }
            if (q > lit) {
                if (a->nparts >= 7) { snprintf(err, errlen, "argument too complex"); return -1; }
                a->parts[a->nparts++] = (struct tpl_part){TPL_LIT, lit, (uint32_t)(q - lit)};
            }
            if (a->nparts >= 7) { snprintf(err, errlen, "argument too complex"); return -1; }
            a->parts[a->nparts++] = (struct tpl_part){toks[hit].kind, NULL, 0};
            if (toks[hit].kind == TPL_KEY) t->has_key = 1;
            q += strlen(toks[hit].tok);
            lit = q;
        }
        if (q > lit || a->nparts == 0)
            a->parts[a->nparts++] = (struct tpl_part){TPL_LIT, lit, (uint32_t)(q - lit)};
    }
    if (t->nargs == 0) { snprintf(err, errlen, "empty command"); return -1; }
    return 0;
}

void tpl_deinit(struct tpl *t)
{
    free(t->storage);
    t->storage = NULL;
    t->nargs = 0;
}
