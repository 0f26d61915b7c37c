/* Ketama consistent hashing over a target's hosts, with the point layouts of
 * the common clients so keys land where those clients and proxies put them. */
#ifndef TB_KETAMA_H
#define TB_KETAMA_H

#include <stddef.h>
#include <stdint.h>

enum ketama_layout {
    KETAMA_LIBMEMCACHED,     /* libmemcached MEMCACHED_BEHAVIOR_KETAMA with its default hash:
                                100 points/host, one-at-a-time for points and keys */
    KETAMA_LIBMEMCACHED_MD5, /* the same with MEMCACHED_BEHAVIOR_HASH = MD5 */
    KETAMA_WEIGHTED,         /* libketama / twemproxy / libmemcached KETAMA_WEIGHTED:
                                160 points, 4 per MD5 digest, MD5 keys */
    KETAMA_SPY,              /* spymemcached / xmemcached: "/ip:port-N", 160 points, 4 per MD5 */
};

struct ketama_point {
    uint32_t value;  /* position on the circle */
    uint32_t host;   /* index into the host list */
};

struct ketama {
    struct ketama_point *points;  /* sorted by value, owned */
    uint32_t npoints;
    int oaat;                     /* keys hashed with one-at-a-time instead of MD5 */
};

/* One server of a continuum (strings borrowed for the duration of ketama_init). */
struct ketama_server {
    const char *hostport;  /* "host:port" */
    const char *name;      /* twemproxy node name ("host:port:1 node1") or NULL; when set
                              the points are named after it instead of hostport */
    uint32_t weight;       /* KETAMA_WEIGHTED only (twemproxy's formula); 0 counts as 1 */
};

/* Build the continuum (k owns its points). Point names follow the layout:
 * "NAME-i" with NAME the node name, or host:port with ":11211" dropped (the
 * libmemcached/twemproxy quirk; not for spymemcached). KETAMA_WEIGHTED gives
 * each server floor(weight/total * 40 * n) * 4 points in twemproxy's float
 * arithmetic (160 when weights are equal, except 156 for 25 servers, as
 * twemproxy does). Returns 0 or -1 (out of memory). */
int ketama_init_servers(struct ketama *k, enum ketama_layout layout,
                        const struct ketama_server *servers, uint32_t nservers);
/* ketama_init_servers with hosts given as "host:port" strings, no names, weight 1. */
int ketama_init(struct ketama *k, enum ketama_layout layout, const char *const *hosts,
                uint32_t nhosts);
void ketama_deinit(struct ketama *k);
/* Host index owning key (key hash, then the first point >= hash, wrapping). */
uint32_t ketama_pick(const struct ketama *k, const char *key, size_t len);
/* Parse a layout name: libmemcached, libmemcached-md5, ketama|twemproxy|weighted,
 * spy|spymemcached. -1 if unknown. */
int ketama_layout_parse(const char *name);

#endif
