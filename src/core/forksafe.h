/* Leaf mutexes a fork child may need (SCRIPT DEBUG YES runs commands in a child; BGSAVE and
 * AOF-rewrite children read the function registry): each registered mutex is taken before a
 * fork and released after it in both processes, so a child never finds one held by a thread
 * it does not have. Only leaves may be registered: their holders wait for no other lock (they
 * may be in malloc, which is why the handlers are registered after the allocator's first use:
 * pthread_atfork runs prepare handlers last-registered first, so ours run before its own). */
#ifndef TC_FORKSAFE_H
#define TC_FORKSAFE_H

#include <pthread.h>

/* Register m (start-up, any thread; at most 16). */
void fork_protect(pthread_mutex_t *m);

#endif
