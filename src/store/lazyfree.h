/* Lazy freeing: values that are costly to free (Redis's free effort above LAZYFREE_THRESHOLD,
 * 64 allocations) and whole flushed tables are freed by one background thread (`tc-lazyfree`)
 * instead of the worker that dropped them, as Redis's UNLINK, FLUSHALL/FLUSHDB ASYNC and the
 * lazyfree-lazy-* settings do. The key is gone from the keyspace (and its bytes from the
 * stripe's accounting) at once; the allocator's figures, and so used_memory, fall when the
 * thread has freed it. Values are malloc'd structures (any thread may free them); flushed
 * tables hold slab items, whose chunks the thread returns to their classes after each job. */
#ifndef TC_LAZYFREE_H
#define TC_LAZYFREE_H

#include <stddef.h>
#include <stdint.h>

#define LAZYFREE_THRESHOLD 64

struct item;
struct ht;

/* Allocations freeing it's value takes (Redis's lazyfreeGetFreeEffort): 1 for strings and
 * compact encodings, the elements of a hash table encoding, the chunks of a list (counted up
 * to LAZYFREE_THRESHOLD + 1), a stream's nodes plus its groups times their PEL. Under the
 * key's stripe lock. */
size_t lazyfree_effort(struct item *it);

/* Release it (already unlinked from its table, its bytes already subtracted), in the
 * background when lazy is set, it is the last reference and its effort is above the
 * threshold; otherwise at once (item_release). Any thread. */
void lazyfree_release(struct item *it, int lazy);

/* Take over the n tables at t (their items and slot arrays), leaving each empty, and free
 * them in the background. The caller holds the tables' stripes and has already subtracted
 * their bytes and counts. Frees at once when the thread cannot be reached. */
void lazyfree_tables(struct ht *t, int n);

/* INFO lazyfree_pending_objects / lazyfreed_objects; CONFIG RESETSTAT zeroes the latter. */
uint64_t lazyfree_pending(void);
uint64_t lazyfree_freed(void);
void lazyfree_reset_stats(void);

/* Start the thread (from main, before the workers); stop it after freeing what is queued. */
int lazyfree_setup(void);
void lazyfree_teardown(void);

#endif
