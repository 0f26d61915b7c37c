/* Forked snapshots of the store (see snapshot.h).
 *
 * The fork happens while this thread holds every stripe lock, so the child's copy of the
 * store is one point in time and no other thread is inside a store structure at the fork
 * (the child never sees a half-done change or a lock held by a thread it does not have). */
#define _GNU_SOURCE
#include "persist/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/oom.h"
#include "core/proctitle.h"
#include "core/util.h"
#include "persist/rdb.h"
#include "store/store.h"

uint64_t *snapshot_hold_all(struct store *s, int *oom)
{
    size_t words = (s->nstripes + 63) / 64;
    uint64_t *bm;

    *oom = 0;
    if (store_held)
        return NULL;
    bm = malloc(words * 8);
    if (!bm) {
        *oom = 1;
        return NULL;
    }
    memset(bm, 0xff, words * 8);
    if (s->nstripes % 64)
        bm[words - 1] = (1ULL << (s->nstripes % 64)) - 1;
    store_hold_set(s, bm);
    return bm;
}

void snapshot_release_all(struct store *s, uint64_t *bm)
{
    if (bm) {
        store_release_set(s, bm);
        free(bm);
    }
}

/* Private_Dirty of this process in bytes (the child's copy-on-write). */
static int64_t private_dirty(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    int64_t kb = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        long long v;
        if (sscanf(line, "Private_Dirty: %lld kB", &v) == 1)
            kb += v;
    }
    fclose(f);
    return kb * 1024;
}

/* In the child: close every socket (listeners and clients) but the job's own. */
static void close_sockets(const struct snapshot_job *job)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int dfd;

    if (!d)
        return;
    dfd = dirfd(d);
    while ((e = readdir(d))) {
        struct stat st;
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dfd || fstat(fd, &st) < 0)
            continue;
        int keep = 0;
        for (int i = 0; i < job->nkeep; i++)
            keep |= job->keep_fds[i] == fd;
        if (S_ISSOCK(st.st_mode) && !keep)
            close(fd);
    }
    closedir(d);
}

static int job_oom; /* the child's oom_score_adj (oom_score_child_value), set before a fork */

static void child_main(const struct snapshot_job *job, int wfd)
{
    int rc;

    prctl(PR_SET_NAME, job->title);
    proctitle_apply_child(job->title); /* ps: "tc-rdb-bgsave 127.0.0.1:6379" */
    oom_score_child_apply(job_oom); /* as Redis's children: the first the kernel kills */
    {
        /* memcached's command line blocks SIGUSR1 in every thread for its graceful stop
         * (main.c): snapshot_kill's SIGUSR1 must reach this child */
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
    }
    /* on a machine with few cores the child competes with the workers it forked from */
    if (setpriority(PRIO_PROCESS, 0, 10) < 0) {
        /* not fatal */
    }
    close_sockets(job);
    rdb_key_delay_on = 1; /* rdb-key-save-delay slows background saves only */
    rc = job->write(job->arg);
    if (rc == 0 && job->cow_label) {
        int64_t cow = private_dirty();
        if (write(wfd, &cow, sizeof(cow)) < 0) {
            /* the parent then reports 0 */
        }
        if (cow)
            log_notice("Fork CoW for %s: current %lld MB", job->cow_label,
                       (long long)(cow >> 20));
    }
    _exit(rc ? 1 : 0);
}

/* ======================= forkless snapshots =======================
 *
 * An epoch is one point in time being written. It starts with every stripe held: the
 * per-stripe dumped flags are cleared and the epoch is marked active, so from then on any
 * thread that takes a stripe lock (store_snap_check) copies that stripe before it can change
 * anything (copy_before_write: rdb_stripe_copy, string items verbatim) and queues the copy
 * under the epoch's mutex while it still holds the stripe (lock order: stripe, then epoch).
 * The snapshot thread walks the stripes in order, copies those nobody copied yet, and
 * serializes every copy into the file without a lock held: it alone writes the file.
 *
 * A write that names one key (propagate.c: SET, HSET, INCR, ... run under that key's stripe
 * alone) does not copy the stripe: it keeps the key's value as of the start apart, once per key
 * (a shadow, or "absent" for a key created since), and the stripe's copy takes the shadows in
 * place of those keys (copy_key_before_write, at most SHADOW_MAX keys a stripe, then the whole
 * stripe). So a client waits for one key's copy, not a stripe's, and the memory held apart is
 * the old values of the keys written before the walk reached them. The snapshot thread yields
 * the CPU every SNAP_SLICE_US of work (checked after each stripe's copy and each stripe's
 * write), so a worker sharing its CPU waits about that long, not a scheduler time slice. */

#define SNAP_SLOTS 4
/* A stripe keeps at most this many keys' old values apart; a write to one more key of it
 * copies the whole stripe instead (then the walk has it, and the list is empty again). */
#define SHADOW_MAX 4096

/* A key's value as of the epoch's start, kept apart under its stripe's lock because a one-key
 * write was about to change it before its stripe was written (copy_key_before_write); an
 * empty cp: the key did not exist then. The stripe's copy skips the key and takes this. */
struct shadow {
    struct shadow *next;
    uint64_t hash; /* util_hash of the key, as store_key */
    int db;
    size_t klen;
    struct rdb_copy cp;
    char key[];
};

/* A stripe's shadows: a list, and an open-addressing table over it for lookups (indexed by
 * the hash's high half: the low bits are the stripe's own). */
struct shset {
    struct shadow *list;
    struct shadow **tab;
    uint32_t n, cap;
};

struct snap_chunk {
    struct snap_chunk *next;
    struct rdb_copy cp;
};

struct snap_epoch {
    _Atomic int active;   /* copy-before-write applies */
    _Atomic int abort;    /* snapshot_kill, or a failure: stop */
    int used;             /* slot taken (slots_mu) */
    struct store *s;      /* set when activated, with every stripe held */
    uint8_t *dumped;      /* per stripe, read and written under that stripe's lock */
    struct shset *sh;     /* per stripe, its keys' old values (same lock) */
    uint32_t ndumped;
    int compress;
    int64_t now;
    pthread_mutex_t mu;   /* the queue of copies made by other threads, and the statistics */
    int closed;           /* copies arriving now are dropped */
    struct snap_chunk *head, **tail;
    size_t queued, peak;  /* bytes of copies waiting (now, at most) */
    uint64_t cow_stripes; /* stripes copied by another thread first */
    int64_t cow_max_us;   /* the longest of those copies */
    int64_t cow_total_us; /* all of them */
    uint64_t shadow_keys; /* keys whose old value a write kept apart */
    _Atomic int64_t shadow_bytes; /* their copies' size now */
    int64_t shadow_peak;
    int64_t shadow_max_us; /* the longest of those copies */
};

struct snap_run {
    pthread_t tid;
    struct snap_epoch *e;
    struct snapshot_job job;
    void *arg;           /* the job's copy */
    _Atomic int done;
    int rc;
};

static struct snap_epoch slots[SNAP_SLOTS] = {[0 ... SNAP_SLOTS - 1] = {.mu = PTHREAD_MUTEX_INITIALIZER}};
static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local struct snap_epoch *tl_epoch; /* set in a snapshot thread */
/* Set while snapshot_start holds every stripe: it changes nothing in them, so the epochs
 * already running need no copy (else starting a second snapshot would write out all that
 * remains of the first one while every stripe is held). */
static _Thread_local int tl_starting;

/* Stop e with why (1: a failure, 2: snapshot_kill), keeping the first reason. */
static void set_abort(struct snap_epoch *e, int why)
{
    int zero = 0;
    atomic_compare_exchange_strong_explicit(&e->abort, &zero, why, memory_order_relaxed,
                                            memory_order_relaxed);
}

/* Under the stripe's lock (so the walk finds it queued once it takes the stripe): hand a
 * copy to the snapshot thread. */
static void enqueue(struct snap_epoch *e, struct rdb_copy *cp)
{
    struct snap_chunk *c = malloc(sizeof(*c));

    pthread_mutex_lock(&e->mu);
    if (c && !e->closed) {
        c->next = NULL;
        c->cp = *cp;
        *e->tail = c;
        e->tail = &c->next;
        e->queued += cp->rawn + cp->itemsn;
        if (e->queued > e->peak)
            e->peak = e->queued;
        pthread_mutex_unlock(&e->mu);
        return;
    }
    pthread_mutex_unlock(&e->mu);
    if (!c)
        set_abort(e, 1);
    free(c);
    rdb_copy_free(cp);
}

static void shadows_free(struct shadow *h)
{
    while (h) {
        struct shadow *nx = h->next;
        rdb_copy_free(&h->cp);
        free(h);
        h = nx;
    }
}

static struct shadow *shset_find(const struct shset *t, uint64_t hash, int db, const char *key,
                                 size_t klen)
{
    if (!t->n)
        return NULL;
    for (uint32_t i = (uint32_t)(hash >> 32) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        struct shadow *h = t->tab[i];
        if (!h)
            return NULL;
        if (h->hash == hash && h->klen == klen && h->db == db && !memcmp(h->key, key, klen))
            return h;
    }
}

/* Add h (not in t yet): 0, or -1 out of memory (t unchanged). */
static int shset_add(struct shset *t, struct shadow *h)
{
    if ((t->n + 1) * 2 > t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        struct shadow **tab = calloc(cap, sizeof(*tab));
        if (!tab)
            return -1;
        for (struct shadow *o = t->list; o; o = o->next) {
            uint32_t i = (uint32_t)(o->hash >> 32) & (cap - 1);
            while (tab[i])
                i = (i + 1) & (cap - 1);
            tab[i] = o;
        }
        free(t->tab);
        t->tab = tab;
        t->cap = cap;
    }
    uint32_t i = (uint32_t)(h->hash >> 32) & (t->cap - 1);
    while (t->tab[i])
        i = (i + 1) & (t->cap - 1);
    t->tab[i] = h;
    h->next = t->list;
    t->list = h;
    t->n++;
    return 0;
}

/* Empty t: its list handed back (the caller frees it). */
static struct shadow *shset_take(struct shset *t)
{
    struct shadow *l = t->list;
    free(t->tab);
    memset(t, 0, sizeof(*t));
    return l;
}

/* rdb_stripe_copy_except's skip: the key has its old value in the set arg. */
static int shadowed(void *arg, int db, const char *key, size_t klen)
{
    return shset_find(arg, util_hash(key, klen), db, key, klen) != NULL;
}

/* Under stripe's lock: copy its keys as of e's point in time and mark it: the keys as they
 * are now, but those a write changed since (the stripe's shadows: handed over in *shs, to be
 * written after cp and freed). compress: LZF for the strings inside structures as configured
 * (the snapshot thread), or not (a client's copy-before-write: its client waits meanwhile).
 * Strings are copied verbatim either way and serialized by the snapshot thread, without the
 * lock. */
static int copy_stripe(struct snap_epoch *e, uint32_t stripe, int compress, struct rdb_copy *cp,
                       struct shadow **shs)
{
    struct shset *set = &e->sh[stripe];
    int64_t bytes = 0;
    int r = 0;

    for (struct shadow *h = set->list; h; h = h->next)
        bytes += (int64_t)(sizeof(*h) + h->klen + h->cp.rawn + h->cp.itemsn);
    if (bytes)
        atomic_fetch_sub_explicit(&e->shadow_bytes, bytes, memory_order_relaxed);
    e->dumped[stripe] = 1;
    *shs = NULL;
    if (atomic_load_explicit(&e->abort, memory_order_relaxed)) {
        r = -1;
    } else if (rdb_stripe_copy_except(e->s, stripe, compress && e->compress, e->now,
                                      set->n ? shadowed : NULL, set, cp)) {
        set_abort(e, 1);
        r = -1;
    }
    struct shadow *sh = shset_take(set);
    if (r)
        shadows_free(sh);
    else
        *shs = sh;
    return r;
}

/* store_snap_hook: a thread has just taken stripe. */
static void copy_before_write(struct store *s, uint32_t stripe)
{
    if (tl_starting || store_snap_readonly)
        return;
    for (int i = 0; i < SNAP_SLOTS; i++) {
        struct snap_epoch *e = &slots[i];
        struct rdb_copy cp;
        if (!atomic_load_explicit(&e->active, memory_order_acquire) || e->s != s ||
            e->dumped[stripe])
            continue;
        int64_t t0 = util_mono_us();
        struct shadow *sh;
        if (copy_stripe(e, stripe, 0, &cp, &sh) == 0) {
            if (cp.rawn || cp.itemsn)
                enqueue(e, &cp);
            else
                rdb_copy_free(&cp);
            for (struct shadow *h = sh; h; h = h->next) {
                if (h->cp.rawn || h->cp.itemsn)
                    enqueue(e, &h->cp); /* the chunk owns it now */
                else
                    rdb_copy_free(&h->cp);
                memset(&h->cp, 0, sizeof(h->cp));
            }
            shadows_free(sh);
        }
        int64_t us = util_mono_us() - t0;
        pthread_mutex_lock(&e->mu);
        e->cow_stripes++;
        e->cow_total_us += us;
        if (us > e->cow_max_us)
            e->cow_max_us = us;
        pthread_mutex_unlock(&e->mu);
    }
}

/* store_snap_key_hook: a one-key write command is about to change k, its stripe just taken
 * (and nothing else of it: propagate.c aof_exec). For each snapshot that has not written the
 * stripe yet, keep k's current value apart once (the stripe's copy takes it instead of what
 * the write leaves), rather than copying the whole stripe now. */
static void copy_key_before_write(struct store *s, const struct skey *k)
{
    if (tl_starting || store_snap_readonly)
        return;
    for (int i = 0; i < SNAP_SLOTS; i++) {
        struct snap_epoch *e = &slots[i];
        struct shadow *h;
        if (!atomic_load_explicit(&e->active, memory_order_acquire) || e->s != s ||
            e->dumped[k->stripe] || atomic_load_explicit(&e->abort, memory_order_relaxed))
            continue;
        struct shset *set = &e->sh[k->stripe];
        if (shset_find(set, k->hash, k->db, k->p, k->n))
            continue; /* its old value is kept already */
        if (set->n >= SHADOW_MAX) {
            copy_before_write(s, k->stripe); /* this one and any other epoch short of it */
            continue;
        }
        int64_t t0 = util_mono_us();
        if (!(h = malloc(sizeof(*h) + k->n)) || rdb_key_copy(s, k, 0, e->now, &h->cp)) {
            free(h);
            set_abort(e, 1);
            continue;
        }
        h->hash = k->hash;
        h->db = k->db;
        h->klen = k->n;
        memcpy(h->key, k->p, k->n);
        if (shset_add(set, h)) {
            rdb_copy_free(&h->cp);
            free(h);
            set_abort(e, 1);
            continue;
        }
        atomic_fetch_add_explicit(&e->shadow_bytes,
                                  (int64_t)(sizeof(*h) + k->n + h->cp.rawn + h->cp.itemsn),
                                  memory_order_relaxed);
        int64_t us = util_mono_us() - t0;
        pthread_mutex_lock(&e->mu);
        e->shadow_keys++;
        if (us > e->shadow_max_us)
            e->shadow_max_us = us;
        pthread_mutex_unlock(&e->mu);
    }
}

/* With every stripe held: a free slot, activated. NULL when none is free or out of memory. */
static struct snap_epoch *epoch_begin(struct store *s, const struct snapshot_job *job)
{
    struct snap_epoch *e = NULL;

    pthread_mutex_lock(&slots_mu);
    for (int i = 0; i < SNAP_SLOTS && !e; i++)
        if (!slots[i].used)
            e = &slots[i];
    if (e && e->ndumped == s->nstripes) {
        /* what an aborted snapshot left (every stripe is held: nobody is adding) */
        for (uint32_t j = 0; j < e->ndumped; j++)
            shadows_free(shset_take(&e->sh[j]));
    } else if (e) {
        for (uint32_t j = 0; j < e->ndumped; j++)
            shadows_free(shset_take(&e->sh[j]));
        free(e->dumped);
        free(e->sh);
        e->ndumped = 0;
        e->dumped = malloc(s->nstripes);
        e->sh = calloc(s->nstripes, sizeof(*e->sh));
        if (e->dumped && e->sh) {
            e->ndumped = s->nstripes;
        } else {
            free(e->dumped);
            free(e->sh);
            e->dumped = NULL;
            e->sh = NULL;
            e = NULL;
        }
    }
    if (!e) {
        pthread_mutex_unlock(&slots_mu);
        return NULL;
    }
    e->used = 1;
    pthread_mutex_unlock(&slots_mu);
    if (!store_snap_hook) { /* every stripe held: published by the unlocks */
        store_snap_hook = copy_before_write;
        store_snap_key_hook = copy_key_before_write;
    }
    memset(e->dumped, 0, s->nstripes);
    e->s = s;
    e->compress = job->compress;
    e->now = job->now;
    e->closed = 0;
    e->head = NULL;
    e->tail = &e->head;
    e->queued = e->peak = 0;
    e->cow_stripes = 0;
    e->cow_total_us = 0;
    e->cow_max_us = 0;
    e->shadow_keys = 0;
    e->shadow_max_us = 0;
    atomic_store_explicit(&e->shadow_bytes, 0, memory_order_relaxed);
    e->shadow_peak = 0;
    atomic_store_explicit(&e->abort, 0, memory_order_relaxed);
    atomic_store_explicit(&e->active, 1, memory_order_release);
    atomic_fetch_add_explicit(&store_snap_active, 1, memory_order_relaxed);
    return e;
}

/* Drop e's queued copies, refuse new ones and stop copy-before-write. Any thread. */
static void epoch_close(struct snap_epoch *e)
{
    struct snap_chunk *c;

    pthread_mutex_lock(&e->mu);
    e->closed = 1;
    c = e->head;
    e->head = NULL;
    e->tail = &e->head;
    e->queued = 0;
    pthread_mutex_unlock(&e->mu);
    while (c) {
        struct snap_chunk *nx = c->next;
        rdb_copy_free(&c->cp);
        free(c);
        c = nx;
    }
    if (atomic_exchange_explicit(&e->active, 0, memory_order_acq_rel))
        atomic_fetch_sub_explicit(&store_snap_active, 1, memory_order_relaxed);
}

static void epoch_free(struct snap_epoch *e)
{
    epoch_close(e);
    pthread_mutex_lock(&slots_mu);
    e->used = 0;
    pthread_mutex_unlock(&slots_mu);
}

static void pace(int64_t *ran);

/* The snapshot thread: cp as RDB bytes into the file (out), then freed; the strings are
 * serialized (and compressed) EMIT_PIECE bytes at a time, pacing the CPU in between. */
#define EMIT_PIECE (32 * 1024)
static void emit(struct snap_epoch *e, struct rdb_copy *cp,
                 int (*out)(void *w, const void *p, size_t n), void *w, int64_t *ran)
{
    unsigned char *p;
    size_t n;

    if (cp->rawn && !atomic_load_explicit(&e->abort, memory_order_relaxed) &&
        out(w, cp->raw, cp->rawn))
        set_abort(e, 1);
    for (size_t pos = 0;
         pos < cp->itemsn && !atomic_load_explicit(&e->abort, memory_order_relaxed);) {
        if (rdb_copy_items_bytes(cp, e->compress, &pos, EMIT_PIECE, &p, &n)) {
            set_abort(e, 1);
            break;
        }
        if (out(w, p, n))
            set_abort(e, 1);
        free(p);
        pace(ran);
    }
    rdb_copy_free(cp);
}

/* The snapshot thread: write the copies other threads queued. */
static void drain(struct snap_epoch *e, int (*out)(void *w, const void *p, size_t n), void *w,
                  int64_t *ran)
{
    struct snap_chunk *c;

    pthread_mutex_lock(&e->mu);
    c = e->head;
    e->head = NULL;
    e->tail = &e->head;
    pthread_mutex_unlock(&e->mu);
    while (c) {
        struct snap_chunk *nx = c->next;
        size_t bytes = c->cp.rawn + c->cp.itemsn;
        emit(e, &c->cp, out, w, ran);
        free(c);
        c = nx;
        pthread_mutex_lock(&e->mu);
        e->queued -= bytes;
        pthread_mutex_unlock(&e->mu);
    }
}

/* The snapshot thread between two pieces of work: after SNAP_SLICE_US of them since the last
 * time, yield the CPU, so that a worker thread waiting for it runs now and waits for at most
 * about that much of this thread's work (plus one stripe's), not a scheduler time slice of
 * several ms. *ran: when this thread last yielded (us). */
#define SNAP_SLICE_US 100
static void pace(int64_t *ran)
{
    int64_t now = util_mono_us();
    if (now - *ran < SNAP_SLICE_US)
        return;
    sched_yield();
    *ran = util_mono_us();
}

/* rdb_walk in a snapshot thread: take every stripe in turn and copy those no other thread
 * copied first; write each copy (and the queued ones) into the file without a lock held. */
static int snapshot_walk(int (*out)(void *w, const void *p, size_t n), void *w)
{
    struct snap_epoch *e = tl_epoch;
    struct store *s;
    int rc;

    if (!e)
        return 0;
    s = e->s;
    int64_t ran = util_mono_us();
    for (uint32_t i = 0; i < s->nstripes; i++) {
        struct rdb_copy cp;
        int r, have = 0;
        /* the stripe may be held by a thread that waits for this one to stop (FLUSHALL
         * inside EXEC kills a running save): wait in slices, looking at abort */
        do {
            if (atomic_load_explicit(&e->abort, memory_order_relaxed))
                goto out;
            r = tc_lock_timed(&s->stripes[i].lock, 20);
        } while (r == ETIMEDOUT);
        struct shadow *sh = NULL;
        if (!e->dumped[i])
            have = copy_stripe(e, i, 1, &cp, &sh) == 0;
        tc_unlock(&s->stripes[i].lock);
        if (have)
            pace(&ran); /* between the copy and its serialization too (see below) */
        int delay = __atomic_load_n(&cfg.rdb_key_save_delay, __ATOMIC_RELAXED);
        if (TC_UNLIKELY(delay) && have && cp.nkeys) { /* tests: a slow save, no lock held */
            /* as Redis: delay us per key; negative, 1 us per -delay keys. In slices: an
             * abort, or CONFIG SET rdb-key-save-delay 0, ends the wait */
            int64_t us = delay > 0 ? (int64_t)delay * cp.nkeys : cp.nkeys / -(int64_t)delay;
            int64_t end = util_mono_us() + us;
            while (us > 0 && !atomic_load_explicit(&e->abort, memory_order_relaxed) &&
                   __atomic_load_n(&cfg.rdb_key_save_delay, __ATOMIC_RELAXED) != 0) {
                usleep((useconds_t)(us > 10000 ? 10000 : us));
                us = end - util_mono_us();
            }
        }
        if (have)
            emit(e, &cp, out, w, &ran);
        for (struct shadow *h = sh; h; h = h->next)
            emit(e, &h->cp, out, w, &ran); /* frees the copy */
        shadows_free(sh);
        drain(e, out, w, &ran);
        int64_t held = atomic_load_explicit(&e->shadow_bytes, memory_order_relaxed);
        if (held > e->shadow_peak)
            e->shadow_peak = held;
        pace(&ran);
    }
    drain(e, out, w, &ran); /* every stripe was copied, under its lock: nothing more comes */
out:
    rc = atomic_load_explicit(&e->abort, memory_order_relaxed) ? -1 : 1;
    pthread_mutex_lock(&e->mu);
    log_verbose("Snapshot: %llu of %u stripes copied first by the threads that took them "
                "(longest %lld us, mean %lld us), %llu keys kept apart by one-key writes "
                "(longest %lld us), at most %zu bytes of copies waiting",
                (unsigned long long)e->cow_stripes, s->nstripes, (long long)e->cow_max_us,
                (long long)(e->cow_stripes ? e->cow_total_us / (int64_t)e->cow_stripes : 0),
                (unsigned long long)e->shadow_keys, (long long)e->shadow_max_us, e->peak);
    log_verbose("Snapshot: at most %lld bytes of old values kept apart",
                (long long)e->shadow_peak);
    pthread_mutex_unlock(&e->mu);
    epoch_close(e);
    return rc;
}

static void *snap_thread(void *arg)
{
    struct snap_run *r = arg;
    char name[16];

    snprintf(name, sizeof(name), "%s", r->job.title);
    prctl(PR_SET_NAME, name);
    /* not niced, unlike the fork child: the copies other threads make wait in memory until
     * this thread has written them, so a slower thread holds more memory (measured at 1M
     * keys on 2 cores: nice 10 made the save 7x longer and held 93 % of the dataset in
     * copies, nice 0 44 %, at latencies within the noise: bench/results) */
    tl_epoch = r->e;
    rdb_walk = snapshot_walk;
    r->rc = r->job.write(r->arg);
    rdb_walk = NULL;
    tl_epoch = NULL;
    epoch_close(r->e); /* when write failed before walking */
    atomic_store_explicit(&r->done, 1, memory_order_release);
    return NULL;
}

/* snapshot_start without fork. The caller's thread holds no stripe. */
static int start_thread(struct snapshot *sn, struct store *s, const struct snapshot_job *job,
                        struct snapshot_times *t)
{
    struct snap_run *r = calloc(1, sizeof(*r));
    int64_t t0, t1, t2;
    uint64_t *bm;
    int oom, err;

    if (!r || !(r->arg = malloc(job->arg_size))) {
        free(r);
        return SNAPSHOT_ERR_NOMEM;
    }
    memcpy(r->arg, job->arg, job->arg_size);
    r->job = *job;
    r->job.arg = r->arg;
    t0 = util_mono_us();
    tl_starting = 1;
    bm = snapshot_hold_all(s, &oom);
    tl_starting = 0;
    if (oom || !bm) {
        free(r->arg);
        free(r);
        return SNAPSHOT_ERR_NOMEM;
    }
    if (job->prepare && job->prepare(r->arg)) {
        snapshot_release_all(s, bm);
        free(r->arg);
        free(r);
        return SNAPSHOT_ERR_PREPARE;
    }
    t1 = util_mono_us();
    r->e = epoch_begin(s, job);
    err = r->e ? pthread_create(&r->tid, NULL, snap_thread, r) : ENOMEM;
    if (err && r->e)
        epoch_free(r->e);
    t2 = util_mono_us();
    snapshot_release_all(s, bm);
    if (t) {
        t->held_us = util_mono_us() - t0;
        t->lock_us = t1 - t0;
        t->fork_us = t2 - t1;
    }
    if (err) {
        log_warn("%s: snapshot thread: %s", job->what, strerror(err));
        free(r->arg);
        free(r);
        return SNAPSHOT_ERR_FORK;
    }
    sn->run = r;
    __atomic_store_n(&sn->pid, getpid(), __ATOMIC_RELAXED);
    return SNAPSHOT_OK;
}

static int reap_thread(struct snapshot *sn, int block, struct snapshot_result *res)
{
    struct snap_run *r = sn->run;

    if (!block && !atomic_load_explicit(&r->done, memory_order_acquire))
        return 0;
    pthread_join(r->tid, NULL);
    memset(res, 0, sizeof(*res));
    res->thread = 1;
    res->pid = sn->pid;
    res->ok = r->rc == 0;
    pthread_mutex_lock(&r->e->mu);
    res->cow = (int64_t)r->e->peak; /* rdb_last_cow_size: the copies that waited at most */
    pthread_mutex_unlock(&r->e->mu);
    if (!res->ok && atomic_load_explicit(&r->e->abort, memory_order_relaxed) == 2) {
        res->signaled = 1; /* stopped by snapshot_kill: reported as the child's SIGUSR1 */
        res->sig = SIGUSR1;
    }
    epoch_free(r->e);
    free(r->arg);
    free(r);
    sn->run = NULL;
    __atomic_store_n(&sn->pid, 0, __ATOMIC_RELAXED);
    return 1;
}

static int start_snapshot(struct snapshot *sn, struct store *s, const struct snapshot_job *job,
                          struct snapshot_times *t)
{
    int p[2], oom;
    uint64_t *bm;
    int64_t t0, t1, t2;
    pid_t pid;

    /* inside EXEC (store_held) this thread goes on changing the stripes it holds without
     * taking them again, which copy-before-write would not see: fork then */
    if (job->arg_size && !store_held && !__atomic_load_n(&cfg.snapshot_fork, __ATOMIC_RELAXED))
        return start_thread(sn, s, job, t);
    if (pipe2(p, O_CLOEXEC) < 0) {
        log_warn("%s: pipe: %s", job->what, strerror(errno));
        return SNAPSHOT_ERR_PIPE;
    }
    t0 = util_mono_us();
    tl_starting = 1; /* the child walks the store without locks: no copy needed */
    bm = snapshot_hold_all(s, &oom);
    tl_starting = 0;
    if (oom) {
        close(p[0]);
        close(p[1]);
        return SNAPSHOT_ERR_NOMEM;
    }
    if (job->prepare && job->prepare(job->arg)) {
        snapshot_release_all(s, bm);
        close(p[0]);
        close(p[1]);
        return SNAPSHOT_ERR_PREPARE;
    }
    job_oom = oom_score_child_value();
    t1 = util_mono_us();
    pid = fork();
    t2 = util_mono_us();
    if (pid == 0) {
        close(p[0]);
        child_main(job, p[1]);
    }
    snapshot_release_all(s, bm);
    if (t) {
        t->held_us = util_mono_us() - t0;
        t->lock_us = t1 - t0;
        t->fork_us = t2 - t1;
    }
    close(p[1]);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        log_warn("%s: fork: %s", job->what, strerror(e));
        return SNAPSHOT_ERR_FORK;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    sn->report_fd = p[0];
    __atomic_store_n(&sn->pid, pid, __ATOMIC_RELAXED);
    return SNAPSHOT_OK;
}

int snapshot_reap(struct snapshot *sn, int block, struct snapshot_result *res)
{
    int status;
    pid_t r;

    if (!sn->pid)
        return 0;
    if (sn->run)
        return reap_thread(sn, block, res);
    r = waitpid(sn->pid, &status, block ? 0 : WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return 0;
    memset(res, 0, sizeof(*res));
    res->pid = sn->pid;
    res->ok = r == sn->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    res->signaled = r == sn->pid && WIFSIGNALED(status);
    res->sig = res->signaled ? WTERMSIG(status) : 0;
    if (sn->report_fd >= 0) {
        if (read(sn->report_fd, &res->cow, sizeof(res->cow)) != (ssize_t)sizeof(res->cow))
            res->cow = 0;
        close(sn->report_fd);
        sn->report_fd = -1;
    }
    __atomic_store_n(&sn->pid, 0, __ATOMIC_RELAXED);
    return 1;
}

void snapshot_kill(struct snapshot *sn)
{
    if (sn->run)
        set_abort(sn->run->e, 2);
    else if (sn->pid)
        kill(sn->pid, SIGUSR1);
}

int snapshot_running(const struct snapshot *sn)
{
    return __atomic_load_n(&sn->pid, __ATOMIC_RELAXED) != 0;
}

_Atomic long long snapshot_total_started;
_Atomic long long snapshot_latest_held_us;

/* INFO's total_forks and latest_fork_usec count every snapshot started, thread or child */
int snapshot_start(struct snapshot *sn, struct store *s, const struct snapshot_job *job,
                   struct snapshot_times *t)
{
    int r = start_snapshot(sn, s, job, t);

    if (r == SNAPSHOT_OK) {
        atomic_fetch_add(&snapshot_total_started, 1);
        if (t)
            atomic_store(&snapshot_latest_held_us, (long long)t->held_us);
    }
    return r;
}
