/* The contended half of core/lock.h (the three-state futex mutex: 0 free, 1 held, 2 held with
 * possible sleepers; a sleeper marks the lock 2 before it sleeps, so the holder's release
 * sees 2 and wakes one). */
#include "core/lock.h"
#include "core/util.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void tc_lock_slow(struct tc_lock *l)
{
    /* a short spin first: the sections it guards are a few hundred instructions */
    for (int i = 0; i < 64; i++) {
        int free_ = 0;
        if (atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
            atomic_compare_exchange_weak_explicit(&l->v, &free_, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

int tc_lock_timed(struct tc_lock *l, int ms)
{
    if (tc_trylock(l) == 0)
        return 0;
    int64_t end = util_mono_ns() + (int64_t)ms * 1000000;
    while (atomic_exchange_explicit(&l->v, 2, memory_order_acquire) != 0) {
        int64_t left = end - util_mono_ns();
        if (left <= 0)
            return ETIMEDOUT; /* the 2 left behind costs the holder one needless wake */
        struct timespec ts = {left / 1000000000, left % 1000000000};
        syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, &ts, NULL, 0);
    }
    return 0;
}

void tc_unlock_slow(struct tc_lock *l)
{
    syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
