/* A small mutex for hot paths: one compare-and-swap to take it and one exchange to release it
 * when nobody waits (a glibc pthread_mutex_t spends ~55 instructions on that pair, most of
 * them on its type checks), a futex wait when contended after a short spin, so a holder that
 * keeps it long (a script holding its stripes) costs waiters no CPU. Not recursive, no owner
 * check, no condition variables. The store's stripes and the replication stream use it. */
#ifndef TC_LOCK_H
#define TC_LOCK_H

#include <errno.h>
#include <stdatomic.h>

struct tc_lock {
    _Atomic int v; /* 0 free, 1 held, 2 held and someone may sleep on it */
};

#define TC_LOCK_INIT {0}

void tc_lock_slow(struct tc_lock *l);
void tc_unlock_slow(struct tc_lock *l);

static inline void tc_lock(struct tc_lock *l)
{
    int free_ = 0;
    if (__builtin_expect(atomic_compare_exchange_strong_explicit(
                             &l->v, &free_, 1, memory_order_acquire, memory_order_relaxed),
                         1))
        return;
    tc_lock_slow(l);
}

/* Take l only if it is free: 0 when taken, else EBUSY (as pthread_mutex_trylock). */
static inline int tc_trylock(struct tc_lock *l)
{
    int free_ = 0;
    return atomic_compare_exchange_strong_explicit(&l->v, &free_, 1, memory_order_acquire,
                                                   memory_order_relaxed)
               ? 0
               : EBUSY;
}

/* Take l, waiting at most about ms milliseconds: 0 when taken, else ETIMEDOUT. */
int tc_lock_timed(struct tc_lock *l, int ms);

static inline void tc_unlock(struct tc_lock *l)
{
    if (__builtin_expect(atomic_exchange_explicit(&l->v, 0, memory_order_release) == 2, 0))
        tc_unlock_slow(l);
}

#endif
