/* Eviction support internal to the store: access bookkeeping for LRU/LFU. The public entry
 * points (store_make_room, store_touch, ...) are declared in store.h. */
#ifndef TC_EVICT_H
#define TC_EVICT_H

#include <stdatomic.h>
#include <stdint.h>

struct item;

/* Minutes since the epoch (24 bits), advanced by the server's timer; the LFU decay clock. */
extern _Atomic uint32_t store_lfu_minutes;

/* Initial access data of a newly stored item. */
void store_touch_new(struct item *it);

#endif
