#include "core/forksafe.h"

#include <stdatomic.h>
#include <stdlib.h>

#define FORK_MAX 16

static pthread_mutex_t *locks[FORK_MAX];
static _Atomic int nlocks;
static pthread_mutex_t reg = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void prepare(void)
{
    int n = atomic_load(&nlocks);
    for (int i = 0; i < n; i++)
        pthread_mutex_lock(locks[i]);
}

static void done(void)
{
    int n = atomic_load(&nlocks);
    for (int i = n - 1; i >= 0; i--)
        pthread_mutex_unlock(locks[i]);
}

static void setup(void)
{
    free(malloc(1)); /* the allocator's own fork handlers first */
    pthread_atfork(prepare, done, done);
}

void fork_protect(pthread_mutex_t *m)
{
    pthread_once(&once, setup);
    pthread_mutex_lock(&reg);
    int n = atomic_load(&nlocks);
    if (n < FORK_MAX) {
        locks[n] = m;
        atomic_store(&nlocks, n + 1);
    } else {
        abort(); /* a build-time mistake: raise FORK_MAX */
    }
    pthread_mutex_unlock(&reg);
}
