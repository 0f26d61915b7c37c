/* DUMP, RESTORE and MIGRATE (Redis 7.0 semantics and error texts). The payload codec is
 * src/persist's (rdb.h: rdb_dump, rdb_payload_check, rdb_payload_decode).
 *
 * MIGRATE talks to the target with a plain blocking socket on the worker thread, bounded by
 * the command's timeout for the connect and for every send and receive (as Redis, whose
 * whole server waits meanwhile; here only this worker's clients do). No stripe lock is held
 * during the I/O, except when the AOF is on (its commands run with their stripes held): the
 * payloads are taken under the locks, sent, and the keys the target accepted are deleted
 * afterwards (a write to one of them in between is lost with the key, as if it came before
 * the MIGRATE). Connections are cached per worker thread for 10 s after their last use, as
 * Redis's (an idle one is closed by the next MIGRATE of that thread that finds it expired,
 * not by a timer), and a failed one is replaced once, unless it timed out. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/log.h"
#include "cmd/notify.h"
#include "cmd/propagate.h"
#include "cmd/repl.h"
#include "core/config.h"
#include "persist/rdb.h"
#include "store/evict.h"
#include "store/item.h"

/* ---- DUMP ---- */

static void dump_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    char *p = NULL;
    size_t n = 0;
    int rc = 1;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = store_lookup_read_locked(s, &k, conn_now(c));
    if (it)
        rc = rdb_dump(it, &p, &n);
    store_unlock(s, k.stripe);
    if (rc > 0)
        reply_null(c);
    else if (rc < 0)
        reply_error(c, "ERR out of memory");
    else
        reply_bulk(c, p, n);
    free(p);
}

/* ---- RESTORE ---- */

static int lfu_policy(void)
{
    return cfg.maxmemory_policy == MM_ALLKEYS_LFU || cfg.maxmemory_policy == MM_VOLATILE_LFU;
}

/* IDLETIME / FREQ as Redis's objectSetLRUOrLFU: each only under its kind of policy. */
static void set_access(struct item *it, long long idle, long long freq)
{
    if (lfu_policy()) {
        if (freq >= 0)
            it->lru = ((atomic_load_explicit(&store_lfu_minutes, memory_order_relaxed) &
                        0xffffff)
                       << 8) |
                      (uint32_t)freq;
    } else if (idle >= 0) {
        uint32_t now = store_lru_now();
        uint64_t ms = (uint64_t)idle * 1000;
        it->lru = ms >= now ? 0 : now - (uint32_t)ms;
    }
}

/* An item for key k holding v (consumed on success). NULL when out of memory. */
static struct item *item_of_value(const struct skey *k, struct rdb_value *v, int64_t exp)
{
    uint8_t bits = item_ttl_bits(exp);
    struct item *it = item_create((uint8_t)v->type, k->p, k->n,
                                  v->type == OBJ_STRING ? v->strn : sizeof(void *), bits);
    if (!it)
        return NULL;
    if (v->type == OBJ_STRING)
        memcpy(item_value(it), v->str, v->strn);
    else
        memcpy(item_value(it), &v->ptr, sizeof(v->ptr));
    if (exp)
        item_set_expire_field(it, exp);
    free(v->str);
    v->str = NULL;
    v->ptr = NULL;
    return it;
}

_Atomic uint64_t cmd_dump_sanitizations;

static void restore_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct rdb_value v;
    struct item *it;
    const char *why;
    long long ttl, idle = -1, freq = -1;
    int replace = 0, absttl = 0, deleted = 0;
    int64_t now = conn_now(c);

    for (int j = 4; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "replace")) {
            replace = 1;
        } else if (arg_is(c, j, "absttl")) {
            absttl = 1;
        } else if (arg_is(c, j, "idletime") && more >= 1 && freq == -1) {
            if (arg_ll(c, ++j, &idle, NULL))
                return;
            if (idle < 0) {
                reply_error(c, "ERR Invalid IDLETIME value, must be >= 0");
                return;
            }
        } else if (arg_is(c, j, "freq") && more >= 1 && idle == -1) {
            if (arg_ll(c, ++j, &freq, NULL))
                return;
            if (freq < 0 || freq > 255) {
                reply_error(c, "ERR Invalid FREQ value, must be >= 0 and <= 255");
                return;
            }
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    if (!replace && store_lookup_write_locked(s, &k, now)) {
        reply_error(c, "BUSYKEY Target key name already exists.");
        goto out;
    }
    if (arg_ll(c, 2, &ttl, NULL))
        goto out;
    if (ttl < 0) {
        reply_error(c, "ERR Invalid TTL value, must be >= 0");
        goto out;
    }
    if (rdb_payload_check(c->argv[3].p, c->argv[3].n)) {
        reply_error(c, "ERR DUMP payload version or checksum are wrong");
        goto out;
    }
    /* every payload is checked deeply; counted where Redis's sanitize-dump-payload would have
     * (yes; clients: not the primary's stream) */
    if (cfg.sanitize_dump_payload == 1 || (cfg.sanitize_dump_payload == 2 && !repl_applying))
        atomic_fetch_add_explicit(&cmd_dump_sanitizations, 1, memory_order_relaxed);
    if (rdb_payload_decode(c->argv[3].p, c->argv[3].n, &v, &why)) {
        /* as Redis's rdbReportCorruptRDB in a RESTORE: at verbose level, then the error */
        log_verbose("Internal error in RDB reading offset 0, function at rdb.c:0 -> %s",
                    why ? why : "Bad data format");
        reply_error(c, "ERR Bad data format");
        goto out;
    }
    if (replace && store_delete_locked(s, &k, now))
        deleted = 1;
    if (ttl && !absttl)
        ttl = ttl > INT64_MAX - now ? INT64_MAX : ttl + now;
    if (ttl && ttl <= now) {
        /* already expired: nothing is created (a replaced key is gone) */
        rdb_value_free(&v);
        if (deleted) {
            cmd_modified(c, &k, NULL);
            notify_event(NOTIFY_GENERIC, "del", &k);
            if (cmd_prop_begin(c, 2)) {
                cmd_prop_arg(c, "DEL", 3);
                cmd_prop_arg(c, k.p, k.n);
                cmd_prop_end(c);
            }
        } else {
            cmd_prop_none(c);
        }
        reply_ok(c);
        goto out;
    }
    it = item_of_value(&k, &v, ttl);
    if (!it || store_put_locked(s, &k, it)) {
        rdb_value_free(&v);
        if (deleted)
            cmd_modified(c, &k, NULL);
        reply_error(c, "ERR out of memory");
        goto out;
    }
    set_access(it, idle, freq);
    cmd_modified(c, &k, it);
    notify_event(NOTIFY_GENERIC, "restore", &k);
    if (cmd_prop_begin(c, c->argc + (ttl && !absttl))) {
        /* a relative TTL is logged as the absolute time it gave (ABSTTL), as Redis */
        char num[24];
        for (int j = 0; j < c->argc; j++) {
            if (j == 2 && ttl && !absttl)
                cmd_prop_arg(c, num, (size_t)snprintf(num, sizeof(num), "%lld", ttl));
            else
                cmd_prop_arg(c, c->argv[j].p, c->argv[j].n);
        }
        if (ttl && !absttl)
            cmd_prop_arg(c, "ABSTTL", 6);
        cmd_prop_end(c);
    }
    reply_ok(c);
out:
    store_unlock(s, k.stripe);
}

/* ---- MIGRATE ---- */

/* The commands for the target, in RESP; oom set when an append failed. */
struct mig_out {
    struct buf b;
    int oom;
};

static void out_put(struct mig_out *o, const void *p, size_t n)
{
    if (buf_append(&o->b, p, n))
        o->oom = 1;
}

static void out_cmd(struct mig_out *o, int argc, const char **argv, const size_t *lens)
{
    char h[32];
    int k = snprintf(h, sizeof(h), "*%d\r\n", argc);
    out_put(o, h, (size_t)k);
    for (int i = 0; i < argc; i++) {
        k = snprintf(h, sizeof(h), "$%zu\r\n", lens[i]);
        out_put(o, h, (size_t)k);
        out_put(o, argv[i], lens[i]);
        out_put(o, "\r\n", 2);
    }
}

static int mig_timeouts(int fd, long long timeout);

/* Connect to host:port within timeout ms; the socket then times out sends and receives
 * after timeout ms. -1 when no connection was made in time, -2 when the attempt failed at
 * once (refused): Redis sees the socket writable then and reports the failed write. */
static int mig_connect(const char *host, const char *port, long long timeout)
{
    struct addrinfo hints = {0}, *res = NULL, *ai;
    int fd = -1, failed = -1;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res))
        return -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int err = 0;
            socklen_t el = sizeof(err);
            if (poll(&pf, 1, (int)timeout) == 1) {
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0)
                    break;
                failed = -2;
            }
        } else {
            failed = -2;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return failed;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || mig_timeouts(fd, timeout)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int mig_write(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads of the target's one-line replies (+OK / -ERR ...). */
struct mig_in {
    int fd;
    char buf[4096];
    size_t n, off;
};

/* The next reply line (without \r\n, NUL-terminated, truncated to cap-1). 0 or -1. */
static int mig_line(struct mig_in *in, char *out, size_t cap)
{
    size_t k = 0;
    for (;;) {
        while (in->off < in->n) {
            char ch = in->buf[in->off++];
            if (ch == '\n') {
                if (k && out[k - 1] == '\r')
                    k--;
                out[k] = '\0';
                return 0;
            }
            if (k < cap - 1)
                out[k++] = ch;
        }
        ssize_t r = recv(in->fd, in->buf, sizeof(in->buf), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            errno = ECONNRESET; /* closed: not a timeout */
        if (r <= 0)
            return -1;
        in->n = (size_t)r;
        in->off = 0;
    }
}

struct mig_key {
    int argi;     /* the key's argument */
    int sent;     /* a RESTORE of it was sent */
};

/* Connections to targets, per worker thread, kept MIG_CACHE_MS after their last use as
 * Redis's migrate_cached_sockets (closed when a later MIGRATE of this thread finds them idle
 * longer, or replaced when full). last_db: the database the connection has SELECTed. */
#define MIG_CACHE 8
#define MIG_CACHE_MS 10000
struct mig_sock {
    char name[300]; /* host:port */
    int fd;
    long long last_db;
    int64_t used;
};
static __thread struct mig_sock mig_cache[MIG_CACHE];
static __thread int mig_cached;
_Atomic int cmd_migrate_cached; /* every thread's cached connections (INFO) */

static void mig_drop(int i)
{
    close(mig_cache[i].fd);
    mig_cache[i] = mig_cache[--mig_cached];
    atomic_fetch_sub_explicit(&cmd_migrate_cached, 1, memory_order_relaxed);
}

void cmd_migrate_tick(int64_t now_ms)
{
    for (int i = 0; i < mig_cached; i++)
        if (now_ms - mig_cache[i].used > MIG_CACHE_MS)
            mig_drop(i--);
}

/* The cached connection to name (idle ones closed first), or -1. */
static int mig_find(const char *name, int64_t now)
{
    for (int i = 0; i < mig_cached; i++)
        if (now - mig_cache[i].used > MIG_CACHE_MS)
            mig_drop(i--);
    for (int i = 0; i < mig_cached; i++)
        if (!strcmp(mig_cache[i].name, name))
            return i;
    return -1;
}

static int mig_add(const char *name, int fd, int64_t now)
{
    if (mig_cached == MIG_CACHE) { /* full: the least recently used goes */
        int old = 0;
        for (int i = 1; i < mig_cached; i++)
            if (mig_cache[i].used < mig_cache[old].used)
                old = i;
        mig_drop(old);
    }
    struct mig_sock *m = &mig_cache[mig_cached];
    snprintf(m->name, sizeof(m->name), "%s", name);
    m->fd = fd;
    m->last_db = -1;
    m->used = now;
    atomic_fetch_add_explicit(&cmd_migrate_cached, 1, memory_order_relaxed);
    return mig_cached++;
}

static int mig_timeouts(int fd, long long timeout)
{
    struct timeval tv = {(time_t)(timeout / 1000), (suseconds_t)(timeout % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
                   setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0
               ? -1
               : 0;
}

static void migrate_command(struct conn *c)
{
    struct store *s = conn_store(c);
    long long dbid, timeout;
    int copy = 0, replace = 0, first = 3, nkeys = 1, auth = -1, auth2 = -1;
    int64_t now = conn_now(c);
    struct mig_out out = {0}, hdr = {0};
    struct mig_key *keys = NULL;
    int nsent = 0, may_retry = 1, ndel = 0;
    char host[256], port[32], name[300], line[512];

    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(c, j, "copy")) {
            copy = 1;
        } else if (arg_is(c, j, "replace")) {
            replace = 1;
        } else if (arg_is(c, j, "auth")) {
            if (!more) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
            auth = ++j;
            auth2 = -1;
        } else if (arg_is(c, j, "auth2")) {
            if (more < 2) {
                reply_error(c, ERR_SYNTAX);
                return;
            }
            auth2 = ++j;
            auth = -1;
            j++;
        } else if (arg_is(c, j, "keys")) {
            if (c->argv[3].n != 0) {
                reply_error(c, "ERR When using MIGRATE KEYS option, the key argument must be "
                               "set to the empty string");
                return;
            }
            first = j + 1;
            nkeys = c->argc - j - 1;
            break;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    if (arg_ll(c, 5, &timeout, NULL) || arg_ll(c, 4, &dbid, NULL))
        return;
    if (timeout <= 0)
        timeout = 1000;

    /* the RESTOREs of the keys that exist, each payload taken under its stripe */
    keys = calloc((size_t)(nkeys ? nkeys : 1), sizeof(*keys));
    if (!keys) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int i = 0; i < nkeys; i++) {
        struct skey k;
        struct item *it;
        char *p = NULL, ttlb[24];
        size_t n = 0;
        long long ttl = 0;
        int rc = 1;

        arg_key(c, first + i, &k);
        keys[i].argi = first + i;
        store_lock(s, k.stripe);
        it = store_lookup_read_locked(s, &k, now);
        if (it) {
            int64_t exp = item_expire(it);
            if (exp) {
                ttl = exp - now;
                if (ttl < 1)
                    ttl = 1;
            }
            rc = rdb_dump(it, &p, &n);
        }
        store_unlock(s, k.stripe);
        if (rc)
            continue;
        const char *av[5] = {"RESTORE", k.p, ttlb, p, "REPLACE"};
        size_t al[5] = {7, k.n, (size_t)snprintf(ttlb, sizeof(ttlb), "%lld", ttl), n, 7};
        out_cmd(&out, replace ? 5 : 4, av, al);
        free(p);
        keys[i].sent = 1;
        nsent++;
    }
    if (!nsent) {
        reply_lit(c, "+NOKEY\r\n");
        goto done;
    }
    if (out.oom) {
        reply_error(c, "ERR out of memory");
        goto done;
    }
    snprintf(host, sizeof(host), "%.*s", (int)(c->argv[1].n < 255 ? c->argv[1].n : 255),
             c->argv[1].p);
    snprintf(port, sizeof(port), "%.*s", (int)(c->argv[2].n < 31 ? c->argv[2].n : 31),
             c->argv[2].p);
    snprintf(name, sizeof(name), "%s:%s", host, port);

try_again:;
    int ci = mig_find(name, now), fd, select, write_error = 0;
    if (ci < 0) {
        fd = mig_connect(host, port, timeout);
        if (fd < 0) {
            if (fd == -2) { /* refused: Redis sees a failed write (and retries once) */
                if (may_retry) {
                    may_retry = 0;
                    goto try_again;
                }
                reply_error(c, "IOERR error or timeout writing to target instance");
            } else {
                reply_error(c, "IOERR error or timeout connecting to the client");
            }
            goto done;
        }
        ci = mig_add(name, fd, now);
    } else if (mig_timeouts(mig_cache[ci].fd, timeout)) {
        mig_drop(ci);
        goto try_again;
    }
    fd = mig_cache[ci].fd;
    mig_cache[ci].used = now;
    select = mig_cache[ci].last_db != dbid;
    hdr.b.rpos = hdr.b.wpos = 0;
    if (auth >= 0 || auth2 >= 0) {
        const char *av[3] = {"AUTH"};
        size_t al[3] = {4};
        int a = auth >= 0 ? auth : auth2, n = auth >= 0 ? 1 : 2;
        for (int i = 0; i < n; i++) {
            av[1 + i] = c->argv[a + i].p;
            al[1 + i] = c->argv[a + i].n;
        }
        out_cmd(&hdr, 1 + n, av, al);
    }
    if (select) {
        char db[24];
        const char *av[2] = {"SELECT", db};
        size_t al[2] = {6, (size_t)snprintf(db, sizeof(db), "%lld", dbid)};
        out_cmd(&hdr, 2, av, al);
    }
    if (hdr.oom) {
        reply_error(c, "ERR out of memory");
        goto done;
    }
    errno = 0;
    if ((buf_len(&hdr.b) && mig_write(fd, hdr.b.data + hdr.b.rpos, buf_len(&hdr.b))) ||
        mig_write(fd, out.b.data + out.b.rpos, buf_len(&out.b))) {
        write_error = 1;
        goto socket_err;
    }
    {
        struct mig_in in = {.fd = fd};
        int err = 0, selerr = 0;
        char *emsg = NULL, authe[512] = "";
        if (auth >= 0 || auth2 >= 0) {
            if (mig_line(&in, line, sizeof(line)))
                goto socket_err;
            if (line[0] == '-') /* reported (first) when a later reply is an error */
                snprintf(authe, sizeof(authe), "%s", line + 1);
        }
        if (select) {
            if (mig_line(&in, line, sizeof(line)))
                goto socket_err;
            if (line[0] == '-') {
                selerr = 1;
                err = 1;
                emsg = strdup(authe[0] ? authe : line + 1);
            } else {
                mig_cache[ci].last_db = dbid;
            }
        }
        for (int i = 0; i < nkeys; i++) {
            if (!keys[i].sent)
                continue;
            if (mig_line(&in, line, sizeof(line))) {
                free(emsg);
                may_retry = 0; /* keys may be deleted already: no second attempt */
                goto socket_err;
            }
            if (line[0] == '-' || selerr) {
                if (!err) {
                    err = 1;
                    emsg = strdup(authe[0] ? authe : line + 1);
                }
                continue;
            }
            if (copy)
                continue;
            struct skey k;
            arg_key(c, keys[i].argi, &k);
            store_lock(s, k.stripe);
            if (store_delete_locked(s, &k, conn_now(c))) {
                cmd_modified(c, &k, NULL);
                notify_event(NOTIFY_GENERIC, "del", &k);
                if (cmd_prop_begin(c, 2)) {
                    cmd_prop_arg(c, "DEL", 3);
                    cmd_prop_arg(c, k.p, k.n);
                    cmd_prop_end(c);
                }
                ndel++;
            }
            store_unlock(s, k.stripe);
        }
        if (err) {
            mig_cache[ci].last_db = -1; /* as Redis: SELECT again next time */
            reply_errorf(c, "ERR Target instance replied with error: %s", emsg ? emsg : "");
        } else {
            reply_ok(c);
        }
        free(emsg);
    }
    goto done;

socket_err: {
    /* the connection is dropped; a second attempt on a new one unless this was a timeout
     * (or a reply after which keys may have been deleted) */
    int timed_out = errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT;
    mig_drop(ci);
    if (!timed_out && may_retry) {
        may_retry = 0;
        goto try_again;
    }
    reply_errorf(c, "IOERR error or timeout %s to target instance",
                 write_error ? "writing" : "reading");
}
done:
    if (!ndel)
        cmd_prop_none(c);
    buf_deinit(&out.b);
    buf_deinit(&hdr.b);
    free(keys);
}

/* MIGRATE's keys as Redis's migrateGetKeys: argv[3], or what follows KEYS (the options before
 * it skipped with their arguments); none when KEYS comes with a non-empty key argument. */
static int migrate_getkeys(const struct cmd *cmd, int argc, const struct slice *argv,
                           cmd_key_fn *fn, void *arg)
{
    int first = 3, num = 1;

    (void)cmd;
    if (argc < 6)
        return 0;
    for (int i = 6; i < argc; i++) {
        if (util_eq_nocase(argv[i].p, argv[i].n, "keys")) {
            if (argv[3].n)
                return 0;
            first = i + 1;
            num = argc - first;
            break;
        }
        if (util_eq_nocase(argv[i].p, argv[i].n, "auth"))
            i += 1;
        else if (util_eq_nocase(argv[i].p, argv[i].n, "auth2"))
            i += 2;
    }
    for (int i = 0; i < num && fn; i++)
        if (fn(arg, first + i, KS_RW | KS_ACCESS | KS_DELETE))
            return i + 1;
    return num;
}

static struct cmd cmds[] = {
    {"dump", dump_command, 2, "readonly", "@keyspace", "RO,access index:1 range:0,1,0", "generic", "Return a serialized version of the value stored at the specified key."},
    {"restore", restore_command, -4, "write denyoom tc:signals tc:prop-explicit", "@keyspace @dangerous", "OW,update index:1 range:0,1,0", "generic", "Create a key using the provided serialized value, previously obtained using DUMP."},
    {"restore-asking", restore_command, -4, "write denyoom asking tc:signals tc:prop-explicit", "@keyspace @dangerous", "OW,update index:1 range:0,1,0", "server", "An internal command for migrating keys in a cluster"},
    {"migrate", migrate_command, -6, "write tc:signals tc:prop-explicit", "@keyspace @dangerous", "RW,access,delete index:3 range:0,1,0; RW,access,delete,incomplete keyword:KEYS:-2 range:-1,1,0", "generic", "Atomically transfer a key from a Redis instance to another one.", NULL, migrate_getkeys},
};

void cmd_dump_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
