#define _GNU_SOURCE
#include "core/config.h"

#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"

struct config cfg;

enum ctype { C_INT, C_LL, C_MEM, C_STR, C_BOOL, C_ENUM, C_LOGLEVEL, C_COBL, C_NOTIFY };

static pthread_mutex_t str_lock = PTHREAD_MUTEX_INITIALIZER; /* string settings (leaf lock) */

void config_str(const char *field, char *out, size_t cap)
{
    pthread_mutex_lock(&str_lock);
    snprintf(out, cap, "%s", field);
    pthread_mutex_unlock(&str_lock);
}

int config_str_empty(const char *field)
{
    pthread_mutex_lock(&str_lock);
    int r = field[0] == '\0';
    pthread_mutex_unlock(&str_lock);
    return r;
}

struct setting {
    const char *name;
    enum ctype type;
    void *ptr;
    size_t cap;        /* for strings */
    long long min, max;
    int mutable_;
    const char *const *enums;
};

static const char *const policies[] = {"noeviction", "allkeys-lru", "allkeys-lfu",
                                        "allkeys-random", "volatile-lru", "volatile-lfu",
                                        "volatile-random", "volatile-ttl", NULL};
static const char *const fsyncs[] = {"no", "everysec", "always", NULL};
static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", NULL};

#define S(n, p, mut) {n, C_STR, cfg.p, sizeof(cfg.p), 0, 0, mut, NULL}
static struct setting settings[] = {
    {"port", C_INT, &cfg.port, 0, 0, 65535, 0, NULL},
    {"memcache-port", C_INT, &cfg.memcache_port, 0, 0, 65535, 0, NULL},
    S("bind", bind, 0),
    S("unixsocket", unixsocket, 0),
    {"unixsocketperm", C_INT, &cfg.unixsocketperm, 0, 0, 0777, 0, NULL},
    {"threads", C_INT, &cfg.threads, 0, 1, 128, 0, NULL},
    {"io-threads", C_INT, &cfg.threads, 0, 1, 128, 0, NULL},
    {"databases", C_INT, &cfg.databases, 0, 1, 1024, 0, NULL},
    {"stripes", C_INT, &cfg.stripes, 0, 1, 65536, 0, NULL},
    S("requirepass", requirepass, 1),
    {"timeout", C_INT, &cfg.timeout, 0, 0, 0x7fffffff, 1, NULL},
    {"tcp-keepalive", C_INT, &cfg.tcp_keepalive, 0, 0, 0x7fffffff, 1, NULL},
    {"tcp-backlog", C_INT, &cfg.tcp_backlog, 0, 0, 0x7fffffff, 0, NULL},
    {"maxclients", C_INT, &cfg.maxclients, 0, 1, 0x7fffffff, 1, NULL},
    {"loglevel", C_LOGLEVEL, &cfg.loglevel, 0, 0, 0, 1, loglevels},
    S("logfile", logfile, 0),
    S("dir", dir, 1),
    S("dbfilename", dbfilename, 1),
    S("pidfile", pidfile, 0),
    S("save", save, 1),
    {"appendonly", C_BOOL, &cfg.appendonly, 0, 0, 1, 1, NULL},
    {"rdbcompression", C_BOOL, &cfg.rdbcompression, 0, 0, 1, 1, NULL},
    {"rdbchecksum", C_BOOL, &cfg.rdbchecksum, 0, 0, 1, 0, NULL},
    {"stop-writes-on-bgsave-error", C_BOOL, &cfg.stop_writes_on_bgsave_error, 0, 0, 1, 1, NULL},
    S("appendfilename", appendfilename, 0),
    {"appendfsync", C_ENUM, &cfg.appendfsync, 0, 0, 0, 1, fsyncs},
    S("appenddirname", appenddirname, 0),
    {"auto-aof-rewrite-percentage", C_INT, &cfg.auto_aof_rewrite_percentage, 0, 0, 0x7fffffff, 1, NULL},
    {"auto-aof-rewrite-min-size", C_MEM, &cfg.auto_aof_rewrite_min_size, 0, 0, 1LL << 50, 1, NULL},
    {"aof-load-truncated", C_BOOL, &cfg.aof_load_truncated, 0, 0, 1, 1, NULL},
    {"aof-use-rdb-preamble", C_BOOL, &cfg.aof_use_rdb_preamble, 0, 0, 1, 1, NULL},
    {"no-appendfsync-on-rewrite", C_BOOL, &cfg.no_appendfsync_on_rewrite, 0, 0, 1, 1, NULL},
    {"proto-max-bulk-len", C_MEM, &cfg.proto_max_bulk_len, 0, 1024 * 1024, 1LL << 40, 1, NULL},
    {"client-query-buffer-limit", C_MEM, &cfg.client_query_buffer_limit, 0, 1024 * 1024,
     1LL << 40, 1, NULL},
    {"maxmemory", C_MEM, &cfg.maxmemory, 0, 0, 1LL << 50, 1, NULL},
    {"maxmemory-policy", C_ENUM, &cfg.maxmemory_policy, 0, 0, 0, 1, policies},
    {"maxmemory-samples", C_INT, &cfg.maxmemory_samples, 0, 1, 64, 1, NULL},
    {"lfu-log-factor", C_INT, &cfg.lfu_log_factor, 0, 0, 0x7fffffff, 1, NULL},
    {"lfu-decay-time", C_INT, &cfg.lfu_decay_time, 0, 0, 0x7fffffff, 1, NULL},
    {"hz", C_INT, &cfg.hz, 0, 1, 500, 1, NULL},
    {"item-size-max", C_MEM, &cfg.item_size_max, 0, 1024, 1LL << 30, 1, NULL},
    {"slowlog-log-slower-than", C_LL, &cfg.slowlog_log_slower_than, 0, -1, 1LL << 62, 1, NULL},
    {"slowlog-max-len", C_INT, &cfg.slowlog_max_len, 0, 0, 0x7fffffff, 1, NULL},
    {"client-output-buffer-limit", C_COBL, cfg.cobl, 0, 0, 0, 1, NULL},
    {"daemonize", C_BOOL, &cfg.daemonize, 0, 0, 1, 0, NULL},
    {"io-uring", C_BOOL, &cfg.io_uring, 0, 0, 1, 0, NULL},
    {"protected-mode", C_BOOL, &cfg.protected_mode, 0, 0, 1, 1, NULL},
    {"hash-max-listpack-entries", C_INT, &cfg.hash_max_listpack_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"hash-max-listpack-value", C_INT, &cfg.hash_max_listpack_value, 0, 0, 0x7fffffff, 1, NULL},
    {"hash-max-ziplist-entries", C_INT, &cfg.hash_max_listpack_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"hash-max-ziplist-value", C_INT, &cfg.hash_max_listpack_value, 0, 0, 0x7fffffff, 1, NULL},
    {"set-max-intset-entries", C_INT, &cfg.set_max_intset_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"set-max-listpack-entries", C_INT, &cfg.set_max_listpack_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"set-max-listpack-value", C_INT, &cfg.set_max_listpack_value, 0, 0, 0x7fffffff, 1, NULL},
    {"zset-max-listpack-entries", C_INT, &cfg.zset_max_listpack_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"zset-max-listpack-value", C_INT, &cfg.zset_max_listpack_value, 0, 0, 0x7fffffff, 1, NULL},
    {"zset-max-ziplist-entries", C_INT, &cfg.zset_max_listpack_entries, 0, 0, 0x7fffffff, 1, NULL},
    {"zset-max-ziplist-value", C_INT, &cfg.zset_max_listpack_value, 0, 0, 0x7fffffff, 1, NULL},
    {"list-max-listpack-size", C_INT, &cfg.list_max_listpack_size, 0, -5, 0x7fffffff, 1, NULL},
    {"list-max-ziplist-size", C_INT, &cfg.list_max_listpack_size, 0, -5, 0x7fffffff, 1, NULL},
    {"list-compress-depth", C_INT, &cfg.list_compress_depth, 0, 0, 0x7fffffff, 1, NULL},
    {"notify-keyspace-events", C_NOTIFY, &cfg.notify_keyspace_events, 0, 0, 0, 1, NULL},
    {"tracking-table-max-keys", C_INT, &cfg.tracking_table_max_keys, 0, 0, 0x7fffffff, 1, NULL},
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

void config_defaults(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    memset(&cfg, 0, sizeof(cfg));
    cfg.port = 6379;
    cfg.memcache_port = 11211;
    strcpy(cfg.bind, "127.0.0.1");
    cfg.unixsocketperm = 0;
    cfg.threads = n > 0 ? (int)n : 1;
    cfg.databases = 16;
    cfg.stripes = 1024;
    cfg.tcp_keepalive = 300;
    cfg.tcp_backlog = 511;
    cfg.maxclients = 10000;
    cfg.loglevel = LOG_NOTICE;
    strcpy(cfg.dir, ".");
    strcpy(cfg.dbfilename, "dump.rdb");
    strcpy(cfg.appendfilename, "appendonly.aof");
    strcpy(cfg.save, "");
    cfg.appendfsync = 1;
    strcpy(cfg.appenddirname, "appendonlydir");
    cfg.auto_aof_rewrite_percentage = 100;
    cfg.auto_aof_rewrite_min_size = 64LL << 20;
    cfg.aof_load_truncated = 1;
    cfg.aof_use_rdb_preamble = 1;
    cfg.rdbcompression = 1;
    cfg.rdbchecksum = 1;
    cfg.stop_writes_on_bgsave_error = 1;
    cfg.proto_max_bulk_len = 512LL * 1024 * 1024;
    cfg.client_query_buffer_limit = 1024LL * 1024 * 1024;
    cfg.maxmemory_policy = MM_ALLKEYS_LRU;
    cfg.maxmemory_samples = 5;
    cfg.lfu_log_factor = 10;
    cfg.lfu_decay_time = 1;
    cfg.hz = 10;
    cfg.io_uring = 1;
    cfg.item_size_max = 1024 * 1024;
    cfg.slowlog_log_slower_than = 10000;
    cfg.slowlog_max_len = 128;
    cfg.tracking_table_max_keys = 1000000;
    cfg.cobl[1][0] = 256LL << 20;
    cfg.cobl[1][1] = 64LL << 20;
    cfg.cobl[1][2] = 60;
    cfg.cobl[2][0] = 32LL << 20;
    cfg.cobl[2][1] = 8LL << 20;
    cfg.cobl[2][2] = 60;
    cfg.protected_mode = 1;
    cfg.hash_max_listpack_entries = 128;
    cfg.hash_max_listpack_value = 64;
    cfg.set_max_intset_entries = 512;
    cfg.set_max_listpack_entries = 128;
    cfg.set_max_listpack_value = 64;
    cfg.zset_max_listpack_entries = 128;
    cfg.zset_max_listpack_value = 64;
    cfg.list_max_listpack_size = -2;
    cfg.list_compress_depth = 0;
}

const char *config_policy_name(int policy)
{
    return policies[policy];
}

static struct setting *find(const char *name)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (!strcasecmp(settings[i].name, name))
            return &settings[i];
    return NULL;
}

static int parse_bool(const char *v)
{
    if (!strcasecmp(v, "yes"))
        return 1;
    if (!strcasecmp(v, "no"))
        return 0;
    return -1;
}

/* Event classes, in the order CONFIG GET writes them (A stands for the first ten). */
static const struct {
    char ch;
    int flag;
} notify_classes[] = {
    {'g', NOTIFY_GENERIC}, {'$', NOTIFY_STRING}, {'l', NOTIFY_LIST}, {'s', NOTIFY_SET},
    {'h', NOTIFY_HASH}, {'z', NOTIFY_ZSET}, {'x', NOTIFY_EXPIRED}, {'e', NOTIFY_EVICTED},
    {'t', NOTIFY_STREAM}, {'d', NOTIFY_MODULE}, {'n', NOTIFY_NEW}, {'K', NOTIFY_KEYSPACE},
    {'E', NOTIFY_KEYEVENT}, {'m', NOTIFY_KEY_MISS},
};

int config_notify_parse(const char *v)
{
    int f = 0;

    for (; *v; v++) {
        size_t i;
        if (*v == 'A') {
            f |= NOTIFY_ALL;
            continue;
        }
        for (i = 0; i < sizeof(notify_classes) / sizeof(notify_classes[0]); i++)
            if (notify_classes[i].ch == *v)
                break;
        if (i == sizeof(notify_classes) / sizeof(notify_classes[0]))
            return -1;
        f |= notify_classes[i].flag;
    }
    return f;
}

void config_notify_format(int f, char *out, size_t cap)
{
    size_t n = 0;

    for (size_t i = 0; i < sizeof(notify_classes) / sizeof(notify_classes[0]) && n + 2 < cap;
         i++) {
        int fl = notify_classes[i].flag;
        /* as Redis: A replaces the classes it covers, and also hides n */
        if ((f & NOTIFY_ALL) == NOTIFY_ALL && !(fl & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT | NOTIFY_KEY_MISS))) {
            if (i == 0)
                out[n++] = 'A';
            continue;
        }
        if (f & fl)
            out[n++] = notify_classes[i].ch;
    }
    out[n] = '\0';
}

int config_set(const char *name, const char **argv, int argc, int boot, char *err, size_t errcap)
{
    struct setting *s = find(name);
    char joined[1024];
    const char *v;
    long long ll;

    if (!s) {
        snprintf(err, errcap, "Unknown option or number of arguments for CONFIG SET - '%s'", name);
        return -1;
    }
    if (!boot && !s->mutable_) {
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - can't set immutable config", s->name);
        return -1;
    }
    /* multi-word values (save "900 1 300 10", bind "a b") are joined */
    joined[0] = '\0';
    for (int i = 0, len = 0; i < argc; i++) {
        int w = snprintf(joined + len, sizeof(joined) - (size_t)len, "%s%s", i ? " " : "",
                         argv[i]);
        /* a value that does not fit must fail, not be stored truncated */
        if (w < 0 || (size_t)w >= sizeof(joined) - (size_t)len)
            goto bad;
        len += w;
    }
    v = joined;
    switch (s->type) {
    case C_INT:
    case C_LL:
        if (!util_str2ll(v, strlen(v), &ll) || ll < s->min || ll > s->max)
            goto bad;
        if (s->type == C_INT)
            __atomic_store_n((int *)s->ptr, (int)ll, __ATOMIC_RELAXED);
        else
            __atomic_store_n((long long *)s->ptr, ll, __ATOMIC_RELAXED);
        break;
    case C_MEM:
        if (!util_parse_memsize(v, &ll) || ll < s->min || ll > s->max)
            goto bad;
        __atomic_store_n((long long *)s->ptr, ll, __ATOMIC_RELAXED);
        break;
    case C_STR:
        if (strlen(v) >= s->cap)
            goto bad;
        pthread_mutex_lock(&str_lock);
        strcpy((char *)s->ptr, v);
        pthread_mutex_unlock(&str_lock);
        break;
    case C_BOOL: {
        int b = parse_bool(v);
        if (b < 0)
            goto bad;
        __atomic_store_n((int *)s->ptr, b, __ATOMIC_RELAXED);
        break;
    }
    case C_COBL: {
        /* "class hard soft seconds" repeated; every word checked before anything is set */
        char copy[1024], *words[64], *save = NULL, *t;
        long long vals[64];
        int nw = 0, cls[21];
        snprintf(copy, sizeof(copy), "%s", v);
        for (t = strtok_r(copy, " ", &save); t && nw < 64; t = strtok_r(NULL, " ", &save))
            words[nw++] = t;
        if (nw == 0 || nw % 4 || nw > 60)
            goto bad;
        for (int i = 0; i < nw; i += 4) {
            const char *cn = words[i];
            cls[i / 4] = !strcasecmp(cn, "normal") ? 0
                         : (!strcasecmp(cn, "replica") || !strcasecmp(cn, "slave")) ? 1
                         : !strcasecmp(cn, "pubsub") ? 2 : -1;
            if (cls[i / 4] < 0 || !util_parse_memsize(words[i + 1], &vals[i + 1]) ||
                !util_parse_memsize(words[i + 2], &vals[i + 2]) ||
                !util_str2ll(words[i + 3], strlen(words[i + 3]), &vals[i + 3]) ||
                vals[i + 1] < 0 || vals[i + 2] < 0 || vals[i + 3] < 0)
                goto bad;
        }
        for (int i = 0; i < nw; i += 4)
            for (int j = 0; j < 3; j++)
                __atomic_store_n(&cfg.cobl[cls[i / 4]][j], vals[i + 1 + j], __ATOMIC_RELAXED);
        cfg.client_output_buffer_limit_normal = cfg.cobl[0][0];
        break;
    }
    case C_NOTIFY: {
        int f = config_notify_parse(v);
        if (f < 0) {
            snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.", s->name);
            return -1;
        }
        __atomic_store_n((int *)s->ptr, f, __ATOMIC_RELAXED);
        break;
    }
    case C_ENUM:
    case C_LOGLEVEL:
        for (int i = 0; s->enums[i]; i++) {
            if (!strcasecmp(s->enums[i], v)) {
                __atomic_store_n((int *)s->ptr, i, __ATOMIC_RELAXED);
                if (s->type == C_LOGLEVEL)
                    log_setup(i, NULL);
                return 0;
            }
        }
        goto bad;
    }
    return 0;
bad:
    if (s->type == C_BOOL)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument must be 'yes' or 'no'", s->name);
    else if (s->type == C_ENUM || s->type == C_LOGLEVEL)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument(s) must be one of the following: %s",
                 s->name, s->enums == policies ? "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"
                          : s->enums == fsyncs ? "always, everysec, no"
                                               : "debug, verbose, notice, warning, nothing");
    else if (s->type == C_MEM)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument must be a memory value", s->name);
    else if (s->type == C_STR)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - value is too long", s->name);
    else if (s->type == C_COBL)
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - Invalid argument", s->name);
    else
        snprintf(err, errcap, "CONFIG SET failed (possibly related to argument '%s') - argument couldn't be parsed into an integer", s->name);
    return -1;
}

int config_format(const char *name, char *out, size_t cap)
{
    struct setting *s = find(name);

    if (!s)
        return -1;
    switch (s->type) {
    case C_INT:
        snprintf(out, cap, "%d", *(int *)s->ptr);
        break;
    case C_LL:
    case C_MEM:
        snprintf(out, cap, "%lld", *(long long *)s->ptr);
        break;
    case C_STR:
        config_str((const char *)s->ptr, out, cap);
        break;
    case C_BOOL:
        snprintf(out, cap, "%s", *(int *)s->ptr ? "yes" : "no");
        break;
    case C_ENUM:
    case C_LOGLEVEL:
        snprintf(out, cap, "%s", s->enums[*(int *)s->ptr]);
        break;
    case C_NOTIFY:
        config_notify_format(*(int *)s->ptr, out, cap);
        break;
    case C_COBL:
        snprintf(out, cap, "normal %lld %lld %lld slave %lld %lld %lld pubsub %lld %lld %lld",
                 cfg.cobl[0][0], cfg.cobl[0][1], cfg.cobl[0][2], cfg.cobl[1][0], cfg.cobl[1][1],
                 cfg.cobl[1][2], cfg.cobl[2][0], cfg.cobl[2][1], cfg.cobl[2][2]);
        break;
    }
    return 0;
}

int config_get(const char *pattern, config_visit_fn *cb, void *arg)
{
    char val[1100];
    int n = 0;

    for (size_t i = 0; i < NSETTINGS; i++) {
        if (util_glob_match(pattern, strlen(pattern), settings[i].name, strlen(settings[i].name), 1)) {
            if (!strcmp(settings[i].name, "io-threads") && strcasecmp(pattern, "io-threads"))
                continue;
            config_format(settings[i].name, val, sizeof(val));
            cb(settings[i].name, val, arg);
            n++;
        }
    }
    return n;
}

/* Split a config line into words, honouring double and single quotes. */
static int split_words(char *line, char **words, int max)
{
    int n = 0;
    char *p = line;

    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n == max)
            return -1;
        if (*p == '"' || *p == '\'') {
            char q = *p++;
            char *w = p;
            words[n++] = w;
            while (*p && *p != q) {
                if (*p == '\\' && q == '"' && p[1])
                    p++;
                *w++ = *p++;
            }
            if (*p != q)
                return -1;
            p++;
            *w = '\0';
            if (*p && !isspace((unsigned char)*p))
                return -1;
        } else {
            words[n++] = p;
            while (*p && !isspace((unsigned char)*p))
                p++;
            if (*p)
                *p++ = '\0';
        }
    }
    return n;
}

int config_load_file(const char *path, char *err, size_t errcap)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, e[512];
    size_t linecap = 0;
    int lineno = 0, ret = -1;

    if (!f) {
        snprintf(err, errcap, "can't open config file '%s': %s", path, strerror(errno));
        return -1;
    }
    /* getline, not a fixed buffer: the tail of a long line must not be read as a new one */
    while (getline(&line, &linecap, f) >= 0) {
        char *words[64];
        int n;
        lineno++;
        n = split_words(line, words, 64);
        if (n < 0) {
            snprintf(err, errcap, "%s:%d: unbalanced quotes or too many arguments", path, lineno);
            goto out_free_line;
        }
        if (n == 0 || words[0][0] == '#')
            continue;
        if (config_set(words[0], (const char **)words + 1, n - 1, 1, e, sizeof(e))) {
            snprintf(err, errcap, "%s:%d: '%s': %s", path, lineno, words[0], e);
            goto out_free_line;
        }
    }
    ret = 0;
out_free_line:
    free(line);
    fclose(f);
    return ret;
}
