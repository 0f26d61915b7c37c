#include "cmd/keyset.h"

#include <stdlib.h>

struct skey *keyset_resolve(struct conn *c, int first, int step, int n)
{
    struct worker *w = c->w;

    if (n > w->keys_cap) {
        int cap = w->keys_cap ? w->keys_cap : 64;
        while (cap < n)
            cap *= 2;
        struct skey *k = realloc(w->keys, sizeof(*k) * (size_t)cap);
        if (!k) {
            reply_error(c, "ERR out of memory");
            return NULL;
        }
        w->keys = k;
        w->keys_cap = cap;
    }
    for (int i = 0; i < n; i++)
        arg_key(c, first + i * step, &w->keys[i]);
    return w->keys;
}
