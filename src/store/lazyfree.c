/* The lazy free thread: a queue of jobs (one value's structure, or the tables a FLUSHALL /
 * FLUSHDB ASYNC took over) under one leaf mutex, emptied by `tc-lazyfree`. Only costly frees
 * are queued, so the queue's lock and its small job allocation are off the common path. */
#define _GNU_SOURCE
#include "store/lazyfree.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/forksafe.h"
#include "store/dict.h"
#include "store/ht.h"
#include "store/item.h"
#include "store/slab.h"
#include "store/t_hash.h"
#include "store/t_list.h"
#include "store/t_set.h"
#include "store/t_stream.h"
#include "store/t_stream_cg.h"
#include "store/t_zset.h"

struct job {
    struct job *next;
    item_free_fn *fn;  /* a value: its type's destructor ... */
    void *ptr;         /* ... and the structure */
    int ntables;       /* or tables: how many */
    uint64_t objects;  /* what the job counts in lazyfree_pending */
    struct ht tables[]; /* the tables taken over */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct job *head, **tail = &head; /* under lock */
static int running, stopping;            /* under lock */
static pthread_t thread;
static _Atomic uint64_t pending, freed;

size_t lazyfree_effort(struct item *it)
{
    void *p;

    if (it->type == OBJ_STRING)
        return 1;
    p = item_ptr(it);
    switch (it->type) {
    case OBJ_LIST: {
        /* every chunk is one allocation: count them only as far as the threshold */
        size_t n = 0;
        for (struct qnode *q = ((struct tlist *)p)->head; q && n <= LAZYFREE_THRESHOLD; q = q->next)
            n++;
        return n;
    }
    case OBJ_SET: {
        struct tset *s = p;
        return s->enc == TSET_HT ? (size_t)s->u.d->count : 1;
    }
    case OBJ_ZSET: {
        struct tzset *z = p;
        return z->enc == TZSET_SKIPLIST ? (size_t)z->d->count : 1;
    }
    case OBJ_HASH: {
        struct thash *h = p;
        return h->enc == THASH_HT ? (size_t)h->u.d->count : 1;
    }
    case OBJ_STREAM: {
        /* every node is an allocation, and so are a group and the entries of its PEL (the
         * first group's PEL stands for all, as Redis estimates) */
        struct tstream *s = p;
        size_t e = s->n;
        if (s->ngroups)
            e += s->ngroups * (1 + s->groups[0]->pel.n);
        return e;
    }
    default:
        return 1;
    }
}

/* Queue j; 0, or -1 when the thread is not running (the caller frees at once). */
static int enqueue(struct job *j)
{
    pthread_mutex_lock(&lock);
    if (!running || stopping) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    atomic_fetch_add_explicit(&pending, j->objects, memory_order_relaxed);
    j->next = NULL;
    *tail = j;
    tail = &j->next;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    return 0;
}

void lazyfree_release(struct item *it, int lazy)
{
    item_free_fn *fn;
    struct job *j;

    if (!it)
        return;
    if (!lazy || it->type == OBJ_STRING || !(fn = item_destructor(it->type)) ||
        !item_writable(it) || lazyfree_effort(it) <= LAZYFREE_THRESHOLD) {
        item_release(it);
        return;
    }
    if (!(j = malloc(sizeof(*j)))) {
        item_release(it);
        return;
    }
    j->fn = fn;
    j->ptr = item_ptr(it);
    j->ntables = 0;
    j->objects = 1;
    if (enqueue(j)) {
        free(j);
        item_release(it);
        return;
    }
    item_free_shell(it);
}

static void free_table(struct ht *t)
{
    for (uint32_t i = 0; i < ht_size(t); i++) {
        struct item *it = ht_item_at(t, i);
        if (it)
            item_release(it);
    }
    ht_deinit(t);
}

void lazyfree_tables(struct ht *t, int n)
{
    struct job *j = NULL;
    uint64_t objects = 0;

    for (int i = 0; i < n; i++)
        objects += t[i].count;
    if (objects)
        j = malloc(sizeof(*j) + (size_t)n * sizeof(struct ht));
    if (j) {
        j->fn = NULL;
        j->ptr = NULL;
        j->ntables = n;
        j->objects = objects;
        for (int i = 0; i < n; i++)
            j->tables[i] = t[i];
        if (enqueue(j) == 0) {
            for (int i = 0; i < n; i++)
                ht_forget(&t[i]);
            return;
        }
        free(j);
    }
    for (int i = 0; i < n; i++)
        free_table(&t[i]);
}

static void *lazyfree_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "tc-lazyfree");
    pthread_mutex_lock(&lock);
    for (;;) {
        struct job *j = head;
        if (!j) {
            if (stopping)
                break;
            pthread_cond_wait(&cond, &lock);
            continue;
        }
        head = j->next;
        if (!head)
            tail = &head;
        pthread_mutex_unlock(&lock);
        if (j->fn)
            j->fn(j->ptr);
        for (int i = 0; i < j->ntables; i++)
            free_table(&j->tables[i]);
        slab_thread_flush(); /* the chunks back to their classes, the bytes as unused */
        atomic_fetch_sub_explicit(&pending, j->objects, memory_order_relaxed);
        atomic_fetch_add_explicit(&freed, j->objects, memory_order_relaxed);
        free(j);
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

uint64_t lazyfree_pending(void)
{
    return atomic_load_explicit(&pending, memory_order_relaxed);
}

uint64_t lazyfree_freed(void)
{
    return atomic_load_explicit(&freed, memory_order_relaxed);
}

void lazyfree_reset_stats(void)
{
    atomic_store_explicit(&freed, 0, memory_order_relaxed);
}

int lazyfree_setup(void)
{
    pthread_mutex_lock(&lock);
    if (running) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    stopping = 0;
    fork_protect(&lock);
    if (pthread_create(&thread, NULL, lazyfree_main, NULL)) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    running = 1;
    pthread_mutex_unlock(&lock);
    return 0;
}

void lazyfree_teardown(void)
{
    pthread_mutex_lock(&lock);
    if (!running) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stopping = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&lock);
    running = 0;
    pthread_mutex_unlock(&lock);
}
