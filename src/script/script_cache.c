/* The script cache shared by all workers: SHA1 (FIPS 180-4) of each body -> body. One mutex
 * guards the table; it is a leaf lock (nothing else is taken under it). Workers compile the
 * bodies into their own Lua states; a flush bumps the generation so they reset them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/forksafe.h"
#include "script/script.h"

/* ---- SHA1 ---- */

struct sha1 {
    uint32_t h[5];
    uint64_t len;          /* bytes fed */
    unsigned char blk[64]; /* the partial block */
    size_t nblk;
};

static uint32_t rol(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static void sha1_block(struct sha1 *s, const unsigned char *p)
{
    uint32_t w[80], a, b, c, d, e;

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k, t;
        if (i < 20)
            f = (b & c) | (~b & d), k = 0x5a827999;
        else if (i < 40)
            f = b ^ c ^ d, k = 0x6ed9eba1;
        else if (i < 60)
            f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
        else
            f = b ^ c ^ d, k = 0xca62c1d6;
        t = rol(a, 5) + f + e + k + w[i];
        e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e;
}

static void sha1_feed(struct sha1 *s, const unsigned char *p, size_t n)
{
    s->len += n;
    while (n) {
        size_t k = 64 - s->nblk < n ? 64 - s->nblk : n;
        memcpy(s->blk + s->nblk, p, k);
        s->nblk += k, p += k, n -= k;
        if (s->nblk == 64) {
            sha1_block(s, s->blk);
            s->nblk = 0;
        }
    }
}

void script_sha1hex(char out[41], const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    struct sha1 s = {{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}, 0, {0}, 0};
    unsigned char pad[72] = {0x80}, lenb[8];
    uint64_t bits;
    size_t padn;

    sha1_feed(&s, (const unsigned char *)p, n);
    bits = s.len * 8;
    padn = s.nblk < 56 ? 56 - s.nblk : 120 - s.nblk;
    for (int i = 0; i < 8; i++)
        lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha1_feed(&s, pad, padn);
    sha1_feed(&s, lenb, 8);
    for (int i = 0; i < 20; i++) {
        unsigned v = (s.h[i / 4] >> (24 - 8 * (i % 4))) & 0xff;
        out[2 * i] = hex[v >> 4];
        out[2 * i + 1] = hex[v & 15];
    }
    out[40] = '\0';
}

/* ---- the table: open hashing on the first bytes of the SHA ---- */

struct entry {
    struct entry *next;
    char sha[41];
    size_t len;
    char body[];
};

#define NBUCKETS 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *buckets[NBUCKETS];
static long count;       /* under lock */
static size_t bytes;     /* under lock */
static _Atomic uint64_t gen;

/* A SCRIPT DEBUG YES child looks its script up here: it never finds the lock held by a thread
 * it does not have (a leaf: its holders wait for nothing). */
__attribute__((constructor)) static void cache_atfork(void)
{
    fork_protect(&lock);
}

static unsigned bucket_of(const char *sha)
{
    unsigned h = 0;
    for (int i = 0; i < 8; i++)
        h = h * 31 + (unsigned char)sha[i];
    return h & (NBUCKETS - 1);
}

/* sha in lowercase into out; -1 when it is not 40 characters */
static int norm_sha(const char *sha, size_t n, char out[41])
{
    if (n != 40)
        return -1;
    for (int i = 0; i < 40; i++) {
        char ch = sha[i];
        out[i] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
    }
    out[40] = '\0';
    return 0;
}

static struct entry *find_locked(const char *sha)
{
    for (struct entry *e = buckets[bucket_of(sha)]; e; e = e->next)
        if (!memcmp(e->sha, sha, 40))
            return e;
    return NULL;
}

int script_cache_add(const char *body, size_t n, char sha[41])
{
    struct entry *e;
    unsigned b;

    script_sha1hex(sha, body, n);
    pthread_mutex_lock(&lock);
    if (find_locked(sha)) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    e = malloc(sizeof(*e) + n + 1);
    if (!e) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    memcpy(e->sha, sha, 41);
    e->len = n;
    memcpy(e->body, body, n);
    e->body[n] = '\0';
    b = bucket_of(sha);
    e->next = buckets[b];
    buckets[b] = e;
    count++;
    bytes += n;
    pthread_mutex_unlock(&lock);
    return 0;
}

int script_cache_has(const char *sha, size_t n)
{
    char s[41];
    int r;

    if (norm_sha(sha, n, s))
        return 0;
    pthread_mutex_lock(&lock);
    r = find_locked(s) != NULL;
    pthread_mutex_unlock(&lock);
    return r;
}

char *script_cache_get(const char *sha, size_t n, size_t *len)
{
    char s[41], *out = NULL;
    struct entry *e;

    if (norm_sha(sha, n, s))
        return NULL;
    pthread_mutex_lock(&lock);
    e = find_locked(s);
    if (e && (out = malloc(e->len + 1))) {
        memcpy(out, e->body, e->len + 1);
        *len = e->len;
    }
    pthread_mutex_unlock(&lock);
    return out;
}

void script_cache_flush(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < NBUCKETS; i++) {
        struct entry *e = buckets[i];
        while (e) {
            struct entry *next = e->next;
            free(e);
            e = next;
        }
        buckets[i] = NULL;
    }
    count = 0;
    bytes = 0;
    atomic_fetch_add(&gen, 1);
    pthread_mutex_unlock(&lock);
}

uint64_t script_cache_gen(void)
{
    return atomic_load(&gen);
}

void script_cache_stats(long *n, size_t *b)
{
    pthread_mutex_lock(&lock);
    *n = count;
    *b = bytes;
    pthread_mutex_unlock(&lock);
}
