/* Multi-key helpers: resolve several argv keys into the worker's scratch array (no malloc per
 * request once it has grown) and lock their stripes in ascending order. */
#ifndef TC_KEYSET_H
#define TC_KEYSET_H

#include "cmd/cmd.h"

/* Resolve argv[first], argv[first+step], ... (n keys) into the worker's scratch array.
 * Returns the array or NULL (out of memory: an error was replied). */
struct skey *keyset_resolve(struct conn *c, int first, int step, int n);

#endif
