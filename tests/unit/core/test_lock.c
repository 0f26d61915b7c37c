/* core/lock.h: exclusion under contention (the futex path), trylock, the timed lock's timeout
 * and its wake-up; and util_ticks, the clock commands are timed with. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "core/lock.h"
#include "core/util.h"
#include "tap.h"

enum { THREADS = 4, ROUNDS = 200000 };

static struct tc_lock lk = TC_LOCK_INIT;
static long counter; /* guarded by lk, plain on purpose */

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        tc_lock(&lk);
        long v = counter;
        if (i % 4096 == 0)
            usleep(50); /* sleep holding it: the others spin out and wait on the futex */
        counter = v + 1;
        tc_unlock(&lk);
    }
    return NULL;
}

static void test_exclusion(void)
{
    pthread_t t[THREADS];

    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, adder, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    is_int(counter, (long)THREADS * ROUNDS, "every increment under the lock counted");
    is_int(atomic_load(&lk.v), 0, "free after the last release");
}

static void *hold_then_release(void *arg)
{
    struct tc_lock *l = arg;
    usleep(50 * 1000);
    tc_unlock(l);
    return NULL;
}

static void test_try_and_timed(void)
{
    struct tc_lock l = TC_LOCK_INIT;
    pthread_t t;

    is_int(tc_trylock(&l), 0, "trylock takes a free lock");
    is_int(tc_trylock(&l), EBUSY, "trylock on a held lock: EBUSY");
    int64_t t0 = util_mono_us();
    int r = tc_lock_timed(&l, 30);
    int64_t took = util_mono_us() - t0;
    is_int(r, ETIMEDOUT, "timed lock on a lock nobody releases: ETIMEDOUT");
    ok(took >= 25000, "it waited about its 30 ms first (%lld us)", (long long)took);
    /* the holder releases after 50 ms: the waiter gets it well before its 5 s */
    pthread_create(&t, NULL, hold_then_release, &l);
    t0 = util_mono_us();
    r = tc_lock_timed(&l, 5000);
    took = util_mono_us() - t0;
    pthread_join(t, NULL);
    is_int(r, 0, "timed lock taken when the holder releases");
    ok(took < 4000000, "taken on the release, not at the timeout (%lld us)", (long long)took);
    is_int(tc_trylock(&l), EBUSY, "and held");
    tc_unlock(&l);
    is_int(tc_trylock(&l), 0, "free again after unlock");
    tc_unlock(&l);
}

static void test_ticks(void)
{
    util_ticks_init();
    diag("util_ticks: %s", util_tsc ? "TSC" : "CLOCK_MONOTONIC");
    int64_t m0 = util_mono_us(), c0 = util_ticks();
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int64_t c1 = util_ticks(), m1 = util_mono_us();
    int64_t us = util_ticks_us(c1 - c0), real = m1 - m0;
    ok(us >= 19000 && us <= real + 1000, "20 ms of ticks read as %lld us (monotonic: %lld us)",
       (long long)us, (long long)real);
    is_int(util_ticks_us(-5), 0, "a negative difference (another core's counter) reads 0");
    is_int(util_ticks_us(0), 0, "no time is 0 us");
}

int main(void)
{
    test_exclusion();
    test_try_and_timed();
    test_ticks();
    return tap_done();
}
