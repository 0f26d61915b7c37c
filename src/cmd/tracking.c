#include "cmd/tracking.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cmd/cmd.h"
#include "cmd/multi.h"
#include "cmd/notify.h"
#include "cmd/pubsub.h"
#include "core/config.h"

/* ---- the key table ---- */

#define NSHARDS 256 /* power of two */

/* The table is open-addressed per shard: a slot holds the key's (secretly seeded) hash and
 * the first word of its readers' bitmap (reader slots, below), so a re-read by one of the
 * first 64 tracking clients checks one slot and touches nothing else. */
struct tkey {
    uint64_t hash;
    uint32_t n;
    uint32_t nw;     /* bitmap words: word 0 (in the slot while in the table), more[0 .. nw-2] */
    uint64_t *more;
    uint64_t w0;     /* word 0 once detached from the table */
    char p[];
};

struct tslot {
    uint64_t hash;
    uint64_t w0;
    struct tkey *e; /* NULL: empty */
    uint64_t pad;
};

struct tshard {
    pthread_spinlock_t lock; /* held for a few hundred instructions at most, but for a sweep */
    struct tslot *t; /* power-of-two slots, at most half used; NULL until the first key */
    size_t cap, count;
} __attribute__((aligned(64)));

static struct tshard shards[NSHARDS];
static pthread_once_t shards_once = PTHREAD_ONCE_INIT;
static _Atomic long tkeys, titems, tprefixes;

/* ---- tracking clients ---- */

#define TF_BCAST 0x01
#define TF_OPTIN 0x02
#define TF_OPTOUT 0x04
#define TF_NOLOOP 0x08

/* A tracking client (c->trk): written by its owner under reg_lock, read by any thread
 * under reg_lock; caching is the owner's alone. */
struct tstate {
    struct conn *c;
    uint64_t id;
    uint32_t slot;  /* reader slot while on */
    uint64_t redir; /* REDIRECT client ID, 0 for none */
    unsigned flags; /* TF_* */
    int on;         /* in the registry */
    int caching;    /* CLIENT CACHING given for the next command (owner only) */
    int broken;     /* the REDIRECT client is gone (under reg_lock) */
    char **pfx;     /* BCAST prefixes */
    size_t *pl;
    int npfx;
};

size_t tracking_mem(const struct conn *c)
{
    const struct tstate *ts = c->trk;
    /* as Redis: an estimate of the prefix tree's nodes (one per prefix here) */
    return sizeof(*ts) + (size_t)ts->npfx * (sizeof(char *) + sizeof(size_t) + 4 * sizeof(void *));
}

_Atomic long tracking_nclients;
__thread struct conn *tracking_now_conn;
__thread uint64_t tracking_writer;
static _Atomic long nbcast;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tstate **reg; /* under reg_lock */
static int nreg, capreg;
static struct srv *tsrv;

/* Reader slots: every tracking client has a small number, its bit in the keys' reader
 * bitmaps (under reg_lock). A released slot is dirty (its bit may still be set in keys) and is
 * handed out again only after a sweep cleared it from every key, so no client is told about
 * keys another read; sweeps clear many released slots at once. */
static struct tstate **slots; /* owner of each slot, NULL when free or dirty */
static uint32_t nslots, capslots;
static uint32_t *freeslots, nfree; /* clean, reusable */
static uint32_t *dirtyslots, ndirty; /* both arrays have capslots entries */

static uint64_t hseed;

static void shards_init(void)
{
    for (int i = 0; i < NSHARDS; i++)
        pthread_spin_init(&shards[i].lock, PTHREAD_PROCESS_PRIVATE);
    if (getrandom(&hseed, sizeof(hseed), 0) != sizeof(hseed))
        hseed = (uint64_t)util_mono_us() * 0x9E3779B97F4A7C15ULL;
}

/* A key's hash in the table: bit 0 always set (0 is "not computed", conn.trk_hash); the top
 * byte picks the shard, bits 8 up the slot. */
static inline uint64_t thash(const char *p, size_t n)
{
    return util_hash_seeded(p, n, hseed) | 1;
}

#define SHARD_OF(h) ((unsigned)((h) >> 56) & (NSHARDS - 1))

static struct tstate *reg_find(uint64_t id)
{
    for (int i = 0; i < nreg; i++)
        if (reg[i]->id == id)
            return reg[i];
    return NULL;
}

/* Post an invalidation to ts's receiver (reg_lock held, which keeps registered connections
 * alive; a redirect target outside the registry is found under its worker's list lock). */
static void send_locked(struct tstate *ts, int kind, const char *p, size_t n)
{
    if (!ts->redir) {
        if (TC_UNLIKELY(ts->c == tracking_now_conn))
            pubsub_write_conn(ts->c, kind | PUBSUB_INV_SELF, p, n);
        else
            pubsub_post_conn(ts->c, kind | PUBSUB_INV_SELF, p, n);
        return;
    }
    struct tstate *t = reg_find(ts->redir);
    if (t) {
        pubsub_post_conn(t->c, kind, p, n);
        return;
    }
    for (int i = 0; tsrv && i < tsrv->nworkers; i++) {
        struct worker *w = &tsrv->workers[i];
        int found = 0;
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x; x = x->next) {
            if (x->id == ts->redir) {
                pubsub_post_conn(x, kind, p, n);
                found = 1;
                break;
            }
        }
        pthread_mutex_unlock(&w->list_lock);
        if (found)
            return;
    }
    ts->broken = 1;
    /* as Redis: a RESP3 client hears that its invalidations have nowhere to go */
    if (__atomic_load_n(&ts->c->resp, __ATOMIC_RELAXED) >= 3) {
        char msg[64];
        int m = snprintf(msg, sizeof(msg), ">2\r\n$21\r\ntracking-redir-broken\r\n:%llu\r\n",
                         (unsigned long long)ts->redir);
        pubsub_post_conn(ts->c, PUBSUB_RAW, msg, (size_t)m);
    }
}

static uint64_t *entry_word(struct tkey *e, uint32_t i)
{
    return i == 0 ? &e->w0 : &e->more[i - 1];
}

static long entry_readers(struct tkey *e)
{
    long r = 0;
    for (uint32_t i = 0; i < e->nw; i++)
        r += __builtin_popcountll(*entry_word(e, i));
    return r;
}

static void entry_free(struct tkey *e)
{
    atomic_fetch_sub_explicit(&titems, entry_readers(e), memory_order_relaxed);
    atomic_fetch_sub_explicit(&tkeys, 1, memory_order_relaxed);
    free(e->more);
    free(e);
}

/* Broadcast invalidations wait in a per-thread list until the command (or the expiry sweep)
 * ends, then go out as one message per client and prefix with every key of that prefix, as
 * Redis sends them before it sleeps: a record is the writer's ID, the key's length, the key. */
struct bpend {
    uint64_t writer;
    uint32_t n;
    uint32_t seq;
};
#define BPEND_SIZE(n) (sizeof(struct bpend) + (n) + (8 - (n) % 8) % 8)
static __thread struct buf bcast_keys; /* records, each 8-byte aligned (the buffer is malloc'd) */
static __thread uint32_t bcast_seq;

static void bcast_remember(const char *p, size_t n, uint64_t writer)
{
    struct bpend r = {writer, (uint32_t)n, bcast_seq++};

    static const char pad[8];
    size_t padn = (8 - n % 8) % 8; /* records stay 8-byte aligned */

    if (n > UINT32_MAX || buf_reserve(&bcast_keys, sizeof(r) + n + padn))
        return; /* out of memory: lost, as a full output buffer would lose it */
    buf_append(&bcast_keys, &r, sizeof(r));
    buf_append(&bcast_keys, p, n);
    buf_append(&bcast_keys, pad, padn);
    notify_wake_flush(); /* notify_flush calls tracking_bcast_flush */
}

/* Tell e's readers (and, when bcast, the broadcast clients through the pending list) that
 * key p changed. */
static void deliver_key(struct tkey *e, const char *p, size_t n, uint64_t writer, int bcast)
{
    if (bcast)
        bcast_remember(p, n, writer);
    if (!e)
        return;
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 0; i < e->nw; i++) {
        for (uint64_t w = *entry_word(e, i); w; w &= w - 1) {
            uint32_t sl = i * 64 + (uint32_t)__builtin_ctzll(w);
            struct tstate *ts = sl < nslots ? slots[sl] : NULL;
            if (!ts || (ts->flags & TF_BCAST) || ((ts->flags & TF_NOLOOP) && ts->id == writer))
                continue;
            send_locked(ts, PUBSUB_INV, p, n);
        }
    }
    pthread_mutex_unlock(&reg_lock);
}

static int bpend_cmp(const void *a, const void *b)
{
    const struct bpend *x = *(const struct bpend *const *)a, *y = *(const struct bpend *const *)b;
    size_t n = x->n < y->n ? x->n : y->n;
    int r = memcmp(x + 1, y + 1, n);

    if (r)
        return r;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void tracking_bcast_flush(void)
{
    struct bpend **v;
    size_t nv = 0, at;
    struct buf msg = {0};

    if (!buf_len(&bcast_keys))
        return;
    for (at = bcast_keys.rpos; at < bcast_keys.wpos; nv++)
        at += BPEND_SIZE(((struct bpend *)(bcast_keys.data + at))->n);
    v = malloc(nv * sizeof(*v));
    if (!v)
        goto out;
    nv = 0;
    for (at = bcast_keys.rpos; at < bcast_keys.wpos; nv++) {
        v[nv] = (struct bpend *)(bcast_keys.data + at);
        at += BPEND_SIZE(v[nv]->n);
    }
    /* each key once, in order, with the writer of its last change (NOLOOP) */
    qsort(v, nv, sizeof(*v), bpend_cmp);
    size_t nk = 0;
    for (size_t i = 0; i < nv; i++) {
        if (i + 1 < nv && v[i]->n == v[i + 1]->n && !memcmp(v[i] + 1, v[i + 1] + 1, v[i]->n))
            continue;
        v[nk++] = v[i];
    }
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++) {
        struct tstate *ts = reg[i];
        if (!(ts->flags & TF_BCAST))
            continue;
        for (int j = 0; j < ts->npfx; j++) {
            long cnt = 0;
            char hdr[32];
            msg.rpos = msg.wpos = 0;
            for (size_t k = 0; k < nk; k++) {
                const char *p = (const char *)(v[k] + 1);
                if (v[k]->n < ts->pl[j] || memcmp(p, ts->pfx[j], ts->pl[j]) ||
                    ((ts->flags & TF_NOLOOP) && ts->id == v[k]->writer))
                    continue;
                if (resp_add_bulk(&msg, p, v[k]->n))
                    break;
                cnt++;
            }
            if (!cnt)
                continue;
            /* the array's header in front of its elements */
            int h = snprintf(hdr, sizeof(hdr), "*%ld\r\n", cnt);
            if (buf_reserve(&msg, (size_t)h))
                continue;
            memmove(msg.data + msg.rpos + h, msg.data + msg.rpos, buf_len(&msg));
            memcpy(msg.data + msg.rpos, hdr, (size_t)h);
            msg.wpos += (size_t)h;
            send_locked(ts, PUBSUB_INV_ARR, msg.data + msg.rpos, buf_len(&msg));
        }
    }
    pthread_mutex_unlock(&reg_lock);
    free(v);
out:
    buf_deinit(&msg);
    bcast_keys.rpos = bcast_keys.wpos = 0;
    if (bcast_keys.cap > 65536)
        buf_deinit(&bcast_keys);
}

/* The index of key p in sh (lock held, sh->t set), or of the empty slot it would take
 * (*found 0). */
static size_t shard_find(const struct tshard *sh, uint64_t h, const char *p, size_t n,
                         int *found)
{
    size_t m = sh->cap - 1;
    for (size_t i = (h >> 8) & m;; i = (i + 1) & m) {
        const struct tslot *t = &sh->t[i];
        if (!t->e || (t->hash == h && t->e->n == n && !memcmp(t->e->p, p, n))) {
            *found = t->e != NULL;
            return i;
        }
    }
}

/* Take slot i's key out of sh (lock held), closing the gap (backward shift). */
static struct tkey *shard_remove_at(struct tshard *sh, size_t i)
{
    size_t m = sh->cap - 1;
    struct tkey *e = sh->t[i].e;

    e->w0 = sh->t[i].w0;
    for (size_t j = i;;) {
        j = (j + 1) & m;
        if (!sh->t[j].e)
            break;
        size_t home = (sh->t[j].hash >> 8) & m;
        /* t[j] stays unless moving it back to i keeps it reachable from its home */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        sh->t[i] = sh->t[j];
        i = j;
    }
    memset(&sh->t[i], 0, sizeof(sh->t[i]));
    sh->count--;
    return e;
}

/* Detach key p from shard sh (its lock held). */
static struct tkey *shard_take_locked(struct tshard *sh, uint64_t h, const char *p, size_t n)
{
    int found;

    if (!sh->t)
        return NULL;
    size_t i = shard_find(sh, h, p, n, &found);
    return found ? shard_remove_at(sh, i) : NULL;
}

void tracking_invalidate_slow(const char *p, size_t n)
{
    pthread_once(&shards_once, shards_init);
    uint64_t h = thash(p, n);
    struct tshard *sh = &shards[SHARD_OF(h)];
    struct tkey *e = NULL;
    int bcast = atomic_load_explicit(&nbcast, memory_order_relaxed) != 0;

    pthread_spin_lock(&sh->lock);
    e = shard_take_locked(sh, h, p, n);
    pthread_spin_unlock(&sh->lock);
    if (e || bcast)
        deliver_key(e, p, n, tracking_writer, bcast);
    if (e)
        entry_free(e);
}

/* Over tracking-table-max-keys: forget (and invalidate) keys from the shards after from. */
static void table_trim(unsigned from)
{
    long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);

    for (int evicted = 0; max > 0 && atomic_load(&tkeys) > max && evicted < 16; ) {
        struct tkey *e = NULL;
        for (unsigned k = 0; k < NSHARDS && !e; k++) {
            struct tshard *sh = &shards[(from + 1 + k) & (NSHARDS - 1)];
            pthread_spin_lock(&sh->lock);
            for (size_t i = 0; sh->t && i < sh->cap && !e; i++)
                if (sh->t[i].e)
                    e = shard_remove_at(sh, i);
            pthread_spin_unlock(&sh->lock);
        }
        if (!e)
            return;
        deliver_key(e, e->p, e->n, 0, 0);
        entry_free(e);
        evicted++;
    }
}

void tracking_tick(void)
{
    long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);

    /* CONFIG SET tracking-table-max-keys may have put the table over: trim it as the keys
     * come in, and here, without new keys (Redis's cron does the same) */
    if (max > 0 && atomic_load_explicit(&tkeys, memory_order_relaxed) > max)
        table_trim(0);
}

void tracking_limit_slow(struct conn *c)
{
    long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);

    if (max > 0 && atomic_load_explicit(&tkeys, memory_order_relaxed) > max) {
        tracking_now_conn = c;
        table_trim(0);
        tracking_now_conn = NULL;
    }
}

static int shard_grow(struct tshard *sh)
{
    size_t cap = sh->cap ? sh->cap * 2 : 16, m = cap - 1;
    struct tslot *t = calloc(cap, sizeof(*t));

    if (!t)
        return -1;
    for (size_t i = 0; i < sh->cap; i++) {
        if (!sh->t[i].e)
            continue;
        size_t j = (sh->t[i].hash >> 8) & m;
        while (t[j].e)
            j = (j + 1) & m;
        t[j] = sh->t[i];
    }
    free(sh->t);
    __atomic_store_n(&sh->t, t, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->cap, cap, __ATOMIC_RELAXED);
    return 0;
}

uint64_t tracking_prefetch(struct conn *c, const char *p, size_t n)
{
    struct tstate *ts = c->trk;

    if (!ts->on || (ts->flags & TF_BCAST))
        return 0;
    uint64_t h = thash(p, n);
    struct tshard *sh = &shards[SHARD_OF(h)];
    struct tslot *t = __atomic_load_n(&sh->t, __ATOMIC_RELAXED);
    size_t cap = __atomic_load_n(&sh->cap, __ATOMIC_RELAXED);
    if (t && cap)
        __builtin_prefetch(&t[(h >> 8) & (cap - 1)]);
    return h;
}

/* Remember that the client of reader slot sl read key p (h: its hash, 0 when not known). */
/* remember's insert (sh's lock held, released here): a key new to the table or a reader new
 * to the key. */
static __attribute__((noinline)) void remember_slow(struct tshard *sh, uint32_t sl,
                                                     const char *p, size_t n, uint64_t h)
{
    uint32_t wi = sl / 64;
    uint64_t bit = 1ULL << (sl % 64);
    struct tkey *e;
    struct tslot *t;
    int found = 0;

    if ((sh->count + 1) * 2 > sh->cap && shard_grow(sh)) {
        pthread_spin_unlock(&sh->lock);
        return;
    }
    size_t i = shard_find(sh, h, p, n, &found);
    t = &sh->t[i];
    if (!found) {
        if (n > UINT32_MAX || !(e = calloc(1, sizeof(*e) + n))) {
            pthread_spin_unlock(&sh->lock);
            return;
        }
        e->hash = h;
        e->n = (uint32_t)n;
        e->nw = 1;
        memcpy(e->p, p, n);
        t->hash = h;
        t->w0 = 0;
        t->e = e;
        sh->count++;
    }
    e = t->e;
    if (wi >= e->nw) {
        uint64_t *v = realloc(e->more, (size_t)wi * sizeof(*v));
        if (!v) {
            pthread_spin_unlock(&sh->lock);
            return;
        }
        memset(v + e->nw - 1, 0, (size_t)(wi + 1 - e->nw) * sizeof(*v));
        e->more = v;
        e->nw = wi + 1;
    }
    uint64_t *w = wi == 0 ? &t->w0 : &e->more[wi - 1];
    if (!(*w & bit)) {
        *w |= bit;
        atomic_fetch_add_explicit(&titems, 1, memory_order_relaxed);
    }
    pthread_spin_unlock(&sh->lock);
    long max = __atomic_load_n(&cfg.tracking_table_max_keys, __ATOMIC_RELAXED);
    if (!found && atomic_fetch_add_explicit(&tkeys, 1, memory_order_relaxed) + 1 > max &&
        max > 0)
        table_trim(SHARD_OF(h));
}

/* Remember that the client of reader slot sl read key p (h: its hash, 0 when not known). */
static inline void remember(uint32_t sl, const char *p, size_t n, uint64_t h)
{
    if (!h)
        h = thash(p, n);
    struct tshard *sh = &shards[SHARD_OF(h)];

    pthread_spin_lock(&sh->lock);
    /* a re-read, the common case: the slot's hash (seeded with a secret, 64 bits: taken as
     * the key's) and the reader's bit, without touching the key */
    if (sl < 64 && sh->t) {
        size_t m = sh->cap - 1;
        uint64_t bit = 1ULL << sl;
        for (size_t i = (h >> 8) & m; sh->t[i].e; i = (i + 1) & m) {
            if (sh->t[i].hash == h && (sh->t[i].w0 & bit)) {
                pthread_spin_unlock(&sh->lock);
                return;
            }
        }
    }
    remember_slow(sh, sl, p, n, h);
}

/* Clear the dirty slots' bits from every key and make them reusable (reg_lock held; it is
 * taken before a shard's lock, never after). */
static void slots_sweep_locked(void)
{
    uint32_t nw = (nslots + 63) / 64;
    uint64_t *mask = calloc(nw ? nw : 1, sizeof(*mask));

    if (!mask)
        return;
    for (uint32_t i = 0; i < ndirty; i++)
        mask[dirtyslots[i] / 64] |= 1ULL << (dirtyslots[i] % 64);
    for (int s = 0; s < NSHARDS; s++) {
        struct tshard *sh = &shards[s];
        long cleared = 0;
        pthread_spin_lock(&sh->lock);
        for (size_t b = 0; sh->t && b < sh->cap; b++) {
            struct tkey *e = sh->t[b].e;
            for (uint32_t i = 0; e && i < e->nw && i < nw; i++) {
                uint64_t *w = i == 0 ? &sh->t[b].w0 : &e->more[i - 1];
                cleared += __builtin_popcountll(*w & mask[i]);
                *w &= ~mask[i];
            }
        }
        pthread_spin_unlock(&sh->lock);
        atomic_fetch_sub_explicit(&titems, cleared, memory_order_relaxed);
    }
    free(mask);
    memcpy(freeslots + nfree, dirtyslots, ndirty * sizeof(*dirtyslots));
    nfree += ndirty;
    ndirty = 0;
}

/* A reader slot for ts (reg_lock held): -1 when out of memory. */
static int slot_take_locked(struct tstate *ts)
{
    if (!nfree && ndirty && (ndirty >= 64 || ndirty >= nslots / 4))
        slots_sweep_locked();
    if (nfree) {
        ts->slot = freeslots[--nfree];
        slots[ts->slot] = ts;
        return 0;
    }
    if (nslots == capslots) {
        uint32_t cap = capslots ? capslots * 2 : 64;
        struct tstate **v = realloc(slots, cap * sizeof(*v));
        if (!v)
            return -1;
        slots = v;
        uint32_t *f = realloc(freeslots, cap * sizeof(*f));
        if (!f)
            return -1;
        freeslots = f;
        uint32_t *d = realloc(dirtyslots, cap * sizeof(*d));
        if (!d)
            return -1;
        dirtyslots = d;
        capslots = cap;
    }
    ts->slot = nslots++;
    slots[ts->slot] = ts;
    return 0;
}

static void slot_drop_locked(struct tstate *ts)
{
    slots[ts->slot] = NULL;
    dirtyslots[ndirty++] = ts->slot;
}

void tracking_flush(void)
{
    if (!atomic_load_explicit(&tracking_nclients, memory_order_relaxed) &&
        !atomic_load_explicit(&tkeys, memory_order_relaxed))
        return;
    pthread_once(&shards_once, shards_init);
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++)
        send_locked(reg[i], PUBSUB_INV_NULL, "", 0);
    pthread_mutex_unlock(&reg_lock);
    for (int s = 0; s < NSHARDS; s++) {
        struct tshard *sh = &shards[s];
        pthread_spin_lock(&sh->lock);
        for (size_t b = 0; sh->t && b < sh->cap; b++) {
            struct tkey *e = sh->t[b].e;
            if (e) {
                e->w0 = sh->t[b].w0;
                entry_free(e);
            }
        }
        if (sh->t)
            memset(sh->t, 0, sh->cap * sizeof(*sh->t));
        sh->count = 0;
        pthread_spin_unlock(&sh->lock);
    }
}

static int remember_cb(void *arg, int pos, unsigned flags)
{
    struct conn *c = arg;
    (void)flags;
    remember(((struct tstate *)c->trk)->slot, c->argv[pos].p, c->argv[pos].n, 0);
    return 0;
}

/* EVAL, EVALSHA, FCALL and their _RO forms: never tracked as commands themselves (their
 * declared keys are, when the script reads: tracking_remember_caller_keys). */
static int is_script_call(const struct cmd *cmd)
{
    return !strncmp(cmd->name, "eval", 4) || !strncmp(cmd->name, "fcall", 5);
}

void tracking_after_command(struct conn *c, const struct cmd *cmd)
{
    struct tstate *ts = c->trk;

    /* the common case first: a one-key read of a client in the default mode */
    if ((cmd->flags & (CMD_READONLY | CMD_ONE_KEY)) == (CMD_READONLY | CMD_ONE_KEY) && ts &&
        ts->on && !(ts->flags & (TF_BCAST | TF_OPTIN | TF_OPTOUT)) && c->argc > cmd->first) {
        uint64_t h = c->trk_hash;
        c->trk_hash = 0;
        remember(ts->slot, c->argv[cmd->first].p, c->argv[cmd->first].n, h);
        return;
    }
    if (!ts || !ts->on)
        return;
    if ((cmd->flags & CMD_READONLY) && !is_script_call(cmd) &&
        !(ts->flags & TF_BCAST) &&
        !((ts->flags & TF_OPTIN) && !ts->caching) && !((ts->flags & TF_OPTOUT) && ts->caching)) {
        if (cmd->flags & CMD_ONE_KEY) {
            if (c->argc > cmd->first)
                remember(ts->slot, c->argv[cmd->first].p, c->argv[cmd->first].n, c->trk_hash);
        } else {
            cmd_keys(cmd, c->argc, c->argv, remember_cb, c);
        }
    }
    c->trk_hash = 0;
    /* CLIENT CACHING lasts for the next command (any CLIENT subcommand keeps it, and a
     * transaction keeps it until EXEC, as Redis) */
    if (ts->caching && strcmp((cmd->parent ? cmd->parent : cmd)->name, "client") && !tx_active(c))
        ts->caching = 0;
}

void tracking_remember_caller_keys(struct conn *c, const struct cmd *cmd)
{
    struct tstate *ts = c->trk;

    if (!ts || !ts->on || (ts->flags & TF_BCAST) || ((ts->flags & TF_OPTIN) && !ts->caching) ||
        ((ts->flags & TF_OPTOUT) && ts->caching))
        return;
    cmd_keys(cmd, c->argc, c->argv, remember_cb, c);
}

/* ---- the registry ---- */

static void prefixes_free(struct tstate *ts)
{
    for (int i = 0; i < ts->npfx; i++)
        free(ts->pfx[i]);
    atomic_fetch_sub_explicit(&tprefixes, ts->npfx, memory_order_relaxed);
    free(ts->pfx);
    free(ts->pl);
    ts->pfx = NULL;
    ts->pl = NULL;
    ts->npfx = 0;
}

static void tracking_off(struct conn *c)
{
    struct tstate *ts = c->trk;

    if (!ts || !ts->on)
        return;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nreg; i++) {
        if (reg[i] == ts) {
            reg[i] = reg[--nreg];
            break;
        }
    }
    if (ts->flags & TF_BCAST)
        atomic_fetch_sub(&nbcast, 1);
    slot_drop_locked(ts);
    ts->on = 0;
    ts->flags = 0;
    ts->redir = 0;
    ts->caching = 0;
    ts->broken = 0;
    prefixes_free(ts);
    pthread_mutex_unlock(&reg_lock);
    atomic_fetch_sub(&tracking_nclients, 1);
}

void tracking_close(struct conn *c)
{
    if (!c->trk)
        return;
    tracking_off(c);
    free(c->trk);
    c->trk = NULL;
}

/* 1 when a is a prefix of b or b of a. */
static int overlap(const char *a, size_t an, const char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    return !memcmp(a, b, n);
}

static void tracking_command(struct conn *c)
{
    struct tstate *ts = c->trk;
    unsigned opts = 0;
    long long redir = 0;
    int on, first_pfx = -1, npfx = 0;

    if (arg_is(c, 2, "on"))
        on = 1;
    else if (arg_is(c, 2, "off"))
        on = 0;
    else {
        reply_error(c, "ERR syntax error");
        return;
    }
    for (int j = 3; j < c->argc; j++) {
        int more = j + 1 < c->argc;
        if (arg_is(c, j, "redirect") && more) {
            j++;
            if (redir) {
                reply_error(c, "ERR A client can only redirect to a single other client");
                return;
            }
            if (arg_ll(c, j, &redir, "ERR value is not an integer or out of range"))
                return;
            if ((uint64_t)redir == c->id) {
                reply_error(c, "ERR A client can't redirect to itself");
                return;
            }
            int found = 0;
            for (int i = 0; i < c->w->srv->nworkers && !found; i++) {
                struct worker *w = &c->w->srv->workers[i];
                pthread_mutex_lock(&w->list_lock);
                for (struct conn *x = w->conns; x; x = x->next)
                    if (x->id == (uint64_t)redir && x->proto == PROTO_RESP)
                        found = 1;
                pthread_mutex_unlock(&w->list_lock);
            }
            if (!found) {
                reply_error(c, "ERR The client ID you want redirect to does not exist");
                return;
            }
        } else if (arg_is(c, j, "bcast")) {
            opts |= TF_BCAST;
        } else if (arg_is(c, j, "optin")) {
            opts |= TF_OPTIN;
        } else if (arg_is(c, j, "optout")) {
            opts |= TF_OPTOUT;
        } else if (arg_is(c, j, "noloop")) {
            opts |= TF_NOLOOP;
        } else if (arg_is(c, j, "prefix") && more) {
            j++;
            if (first_pfx < 0)
                first_pfx = j;
            npfx++;
        } else {
            reply_error(c, "ERR syntax error");
            return;
        }
    }
    if (!on) {
        tracking_off(c);
        reply_ok(c);
        return;
    }
    if (!(opts & TF_BCAST) && npfx) {
        reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
        return;
    }
    if (ts && ts->on && !!(ts->flags & TF_BCAST) != !!(opts & TF_BCAST)) {
        reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for "
                       "this client, and then re-enabling it with a different mode.");
        return;
    }
    if ((opts & TF_BCAST) && (opts & (TF_OPTIN | TF_OPTOUT))) {
        reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
        return;
    }
    if ((opts & TF_OPTIN) && (opts & TF_OPTOUT)) {
        reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
        return;
    }
    if (ts && ts->on && (((opts & TF_OPTIN) && (ts->flags & TF_OPTOUT)) ||
                         ((opts & TF_OPTOUT) && (ts->flags & TF_OPTIN)))) {
        reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for "
                       "this client, and then re-enabling it with a different mode.");
        return;
    }
    /* prefixes: none may overlap one the client has or another one given */
    for (int j = first_pfx; npfx && j < c->argc; j++) {
        if (!arg_is(c, j - 1, "prefix"))
            continue;
        const struct slice *a = &c->argv[j];
        for (int k = 0; ts && k < ts->npfx; k++) {
            if (overlap(a->p, a->n, ts->pfx[k], ts->pl[k])) {
                reply_errorf(c, "ERR Prefix '%.*s' overlaps with an existing prefix '%s'. "
                                "Prefixes for a single client must not overlap.",
                             (int)a->n, a->p, ts->pfx[k]);
                return;
            }
        }
        for (int k = j + 1; k < c->argc; k++) {
            if (!arg_is(c, k - 1, "prefix") || k - 1 == j)
                continue;
            if (overlap(a->p, a->n, c->argv[k].p, c->argv[k].n)) {
                reply_errorf(c, "ERR Prefix '%.*s' overlaps with another provided prefix "
                                "'%.*s'. Prefixes for a single client must not overlap.",
                             (int)a->n, a->p, (int)c->argv[k].n, c->argv[k].p);
                return;
            }
        }
    }
    if (!ts && !(ts = c->trk = calloc(1, sizeof(*ts)))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    pthread_once(&shards_once, shards_init);
    pthread_mutex_lock(&reg_lock);
    if (!ts->on) {
        if (nreg == capreg) {
            int cap = capreg ? capreg * 2 : 16;
            struct tstate **v = realloc(reg, (size_t)cap * sizeof(*v));
            if (!v) {
                pthread_mutex_unlock(&reg_lock);
                reply_error(c, "ERR out of memory");
                return;
            }
            reg = v;
            capreg = cap;
        }
        if (slot_take_locked(ts)) {
            pthread_mutex_unlock(&reg_lock);
            reply_error(c, "ERR out of memory");
            return;
        }
        reg[nreg++] = ts;
        ts->c = c;
        ts->id = c->id;
        ts->on = 1;
        atomic_fetch_add(&tracking_nclients, 1);
        if (opts & TF_BCAST)
            atomic_fetch_add(&nbcast, 1);
    }
    ts->flags = opts;
    ts->redir = (uint64_t)redir;
    ts->broken = 0;
    if (opts & TF_BCAST) {
        int want = ts->npfx + (npfx ? npfx : (ts->npfx ? 0 : 1));
        char **pv = realloc(ts->pfx, (size_t)want * sizeof(*pv));
        size_t *lv = pv ? realloc(ts->pl, (size_t)want * sizeof(*lv)) : NULL;
        if (pv)
            ts->pfx = pv;
        if (lv)
            ts->pl = lv;
        for (int j = first_pfx; lv && j >= 0 && j < c->argc; j++) {
            if (!arg_is(c, j - 1, "prefix"))
                continue;
            char *p = malloc(c->argv[j].n + 1);
            if (!p)
                break;
            memcpy(p, c->argv[j].p, c->argv[j].n);
            p[c->argv[j].n] = '\0';
            ts->pfx[ts->npfx] = p;
            ts->pl[ts->npfx++] = c->argv[j].n;
            atomic_fetch_add(&tprefixes, 1);
        }
        if (lv && !npfx && !ts->npfx && (ts->pfx[0] = calloc(1, 1))) {
            ts->pl[0] = 0; /* BCAST without PREFIX: every key */
            ts->npfx = 1;
            atomic_fetch_add(&tprefixes, 1);
        }
    }
    pthread_mutex_unlock(&reg_lock);
    reply_ok(c);
}

static void trackinginfo_command(struct conn *c)
{
    struct tstate *ts = c->trk;
    int on = ts && ts->on;
    const char *fl[8];
    int n = 0;

    if (!on) {
        fl[n++] = "off";
    } else {
        fl[n++] = "on";
        if (ts->flags & TF_BCAST)
            fl[n++] = "bcast";
        if (ts->flags & TF_OPTIN)
            fl[n++] = "optin";
        if (ts->flags & TF_OPTOUT)
            fl[n++] = "optout";
        if ((ts->flags & TF_OPTIN) && ts->caching)
            fl[n++] = "caching-yes";
        if ((ts->flags & TF_OPTOUT) && ts->caching)
            fl[n++] = "caching-no";
        if (ts->flags & TF_NOLOOP)
            fl[n++] = "noloop";
        pthread_mutex_lock(&reg_lock);
        if (ts->broken)
            fl[n++] = "broken_redirect";
        pthread_mutex_unlock(&reg_lock);
    }
    reply_map(c, 3);
    reply_bulk(c, "flags", 5);
    reply_set(c, n);
    for (int i = 0; i < n; i++)
        reply_bulk(c, fl[i], strlen(fl[i]));
    reply_bulk(c, "redirect", 8);
    reply_int(c, on ? (long long)ts->redir : -1);
    reply_bulk(c, "prefixes", 8);
    pthread_mutex_lock(&reg_lock);
    reply_array(c, on ? ts->npfx : 0);
    for (int i = 0; on && i < ts->npfx; i++)
        reply_bulk(c, ts->pfx[i], ts->pl[i]);
    pthread_mutex_unlock(&reg_lock);
}

void tracking_client_command(struct conn *c)
{
    struct tstate *ts = c->trk;

    if (arg_is(c, 1, "tracking")) {
        tracking_command(c);
    } else if (arg_is(c, 1, "caching")) {
        if (!ts || !ts->on || !(ts->flags & (TF_OPTIN | TF_OPTOUT))) {
            reply_error(c, "ERR CLIENT CACHING can be called only when the client is in "
                           "tracking mode with OPTIN or OPTOUT mode enabled");
        } else if (arg_is(c, 2, "yes")) {
            if (ts->flags & TF_OPTIN) {
                ts->caching = 1;
                reply_ok(c);
            } else {
                reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled "
                               "in OPTIN mode.");
            }
        } else if (arg_is(c, 2, "no")) {
            if (ts->flags & TF_OPTOUT) {
                ts->caching = 1;
                reply_ok(c);
            } else {
                reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled "
                               "in OPTOUT mode.");
            }
        } else {
            reply_error(c, "ERR syntax error");
        }
    } else if (arg_is(c, 1, "getredir")) {
        reply_int(c, ts && ts->on ? (long long)ts->redir : -1);
    } else {
        trackinginfo_command(c);
    }
}

void tracking_setup(struct srv *srv)
{
    tsrv = srv;
}

long tracking_total_keys(void)
{
    return atomic_load_explicit(&tkeys, memory_order_relaxed);
}

long tracking_total_items(void)
{
    return atomic_load_explicit(&titems, memory_order_relaxed);
}

long tracking_total_prefixes(void)
{
    return atomic_load_explicit(&tprefixes, memory_order_relaxed);
}
