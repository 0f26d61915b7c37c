/* memcached's command line: "twincache -p 11211 -m 64 -c 1024 -t 4 ..." starts twincache as a
 * stand-in for memcached 1.6. Its single-dash flags map to twincache's settings (cfg) or to
 * the memcached room's own (mc_cfg); flags with no meaning here are accepted and reported by
 * "stats settings"; what cannot be honoured is refused with memcached's message and exit
 * status. The Redis port is off unless "--port N" is given; any "--name value" setting of
 * twincache may be mixed in. */
#define _GNU_SOURCE
#include "server/mc_cmdline.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "mc/mc_cmd.h"
#include "server/daemon.h"
#include "store/store.h"

#define EX_USAGE_ 64 /* sysexits.h EX_USAGE, memcached's status for bad sizes */
#define ITEM_SIZE_MIN 1024
#define ITEM_SIZE_MAX_UPPER (1024LL * 1024 * 1024)
#define SLAB_PAGE_SIZE (1024 * 1024)

int mc_cmdline_is(int argc, char **argv)
{
    return argc >= 2 && argv[1][0] == '-' && argv[1][1] != '-' && argv[1][1] != '\0';
}

static int set(const char *name, const char *val)
{
    char err[256];
    const char *v[1] = {val};

    if (config_set(name, v, 1, 1, err, sizeof(err))) {
        fprintf(stderr, "*** FATAL CONFIG ERROR ***\n'%s': %s\n", name, err);
        return -1;
    }
    return 0;
}

/* -I and -m take a number with an optional k/m suffix (memcached reads it with atoi). */
static long long size_arg(const char *s)
{
    size_t n = strlen(s);
    long long v = atoll(s);

    if (n && (s[n - 1] == 'k' || s[n - 1] == 'K'))
        v *= 1024;
    else if (n && (s[n - 1] == 'm' || s[n - 1] == 'M'))
        v *= 1024 * 1024;
    return (int)v; /* an int in memcached: 2g wraps and is refused as too small */
}

/* The -o sub-options memcached 1.6 knows. Those with an effect here are handled by name. The
 * ext_* ones are not among them: twincache has no external storage, and like a memcached built
 * without extstore it refuses them as illegal sub-options. */
static const char *const subopts[] = {
    "maxconns_fast", "no_maxconns_fast", "hashpower", "slab_reassign", "no_slab_reassign",
    "slab_automove", "slab_automove_ratio", "slab_automove_window", "slab_automove_freeratio",
    "tail_repair_time", "hash_algorithm", "lru_crawler", "no_lru_crawler", "lru_crawler_sleep",
    "lru_crawler_tocrawl", "lru_maintainer", "no_lru_maintainer", "hot_lru_pct", "warm_lru_pct",
    "hot_max_factor", "warm_max_factor", "temporary_ttl", "idle_timeout", "watcher_logbuf_size",
    "worker_logbuf_size", "track_sizes", "no_inline_ascii_resp", "inline_ascii_resp", "modern",
    "no_modern", "no_chunked_items", "no_hashexpand", "read_buf_mem_limit", "slab_sizes",
    "slab_chunk_max", "ssl_chain_cert", "ssl_key", "ssl_verify_mode", "ssl_keyformat",
    "ssl_ciphers",
    "ssl_ca_cert", "ssl_wbuf_size", "ssl_session_cache", "ssl_kernel_tls", "ssl_min_version",
    "drop_privileges", "no_drop_privileges", "lru_segmented", "no_lru_segmented", "temp_lru",
    "no_temp_lru", "proxy_config", "proxy_uring", "napi_ids", "relaxed_privileges", NULL};

static int ssl_enabled; /* -Z: the memcached TCP port speaks TLS */
struct mc_daemon mc_daemon;

/* memcached 1.6's ssl_* sub-options, mapped to the tls-* settings. */
static int ssl_suboption(const char *o, size_t n, const char *val)
{
    static const char *const verify[] = {"no", "optional", "yes", "yes"}; /* NONE REQUEST
                                                                            REQUIRE ONCE */
    static const char *const minver[] = {"TLSv1 TLSv1.1 TLSv1.2 TLSv1.3",
                                         "TLSv1.1 TLSv1.2 TLSv1.3", "TLSv1.2 TLSv1.3",
                                         "TLSv1.3"};
    int v;

    if (!val) {
        fprintf(stderr, "Missing argument for %.*s\n", (int)n, o);
        return 1;
    }
    if (n == 14 && !strncmp(o, "ssl_chain_cert", n))
        return set("tls-cert-file", val) ? 1 : 0;
    if (n == 7 && !strncmp(o, "ssl_key", n))
        return set("tls-key-file", val) ? 1 : 0;
    if (n == 11 && !strncmp(o, "ssl_ca_cert", n))
        return set("tls-ca-cert-file", val) ? 1 : 0;
    if (n == 11 && !strncmp(o, "ssl_ciphers", n))
        return set("tls-ciphers", val) ? 1 : 0;
    if (n == 17 && !strncmp(o, "ssl_session_cache", n))
        return set("tls-session-caching", "yes") ? 1 : 0;
    v = atoi(val);
    if (n == 15 && !strncmp(o, "ssl_verify_mode", n)) {
        if (v < 0 || v > 3) {
            fprintf(stderr, "Invalid ssl_verify_mode\n");
            return 1;
        }
        return set("tls-auth-clients", verify[v]) ? 1 : 0;
    }
    if (n == 15 && !strncmp(o, "ssl_min_version", n)) {
        if (v < 0 || v > 3) {
            fprintf(stderr, "Invalid ssl_min_version\n");
            return 1;
        }
        return set("tls-protocols", minver[v]) ? 1 : 0;
    }
    return 0; /* ssl_keyformat, ssl_wbuf_size, ssl_kernel_tls: accepted */
}

static int suboptions(char *list)
{
    char *save = NULL;

    for (char *o = strtok_r(list, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(o, '=');
        size_t n = eq ? (size_t)(eq - o) : strlen(o);
        const char *val = eq ? eq + 1 : NULL;
        int known = 0;

        for (int i = 0; subopts[i]; i++)
            if (strlen(subopts[i]) == n && !memcmp(subopts[i], o, n))
                known = 1;
        if (!known) {
            fprintf(stderr, "Illegal suboption \"%s\"\n", o);
            return 1;
        }
        if (!strncmp(o, "idle_timeout", n) && n == 12) {
            if (!val) {
                fprintf(stderr, "Missing numeric argument for idle_timeout\n");
                return 1;
            }
            mc_cfg.idle_timeout = atoi(val);
        } else if (n == 9 && !strncmp(o, "hashpower", n)) {
            if (!val) {
                fprintf(stderr, "Missing numeric argument for hashpower\n");
                return 1;
            }
            mc_cfg.hashpower = atoi(val);
            if (mc_cfg.hashpower < 12 || mc_cfg.hashpower > 64) {
                fprintf(stderr, "Initial hashtable multiplier of %d is too low\n",
                        mc_cfg.hashpower);
                return 1;
            }
        } else if (n == 14 && !strncmp(o, "no_lru_crawler", n)) {
            mc_cfg.lru_crawler = 0;
        } else if (n == 11 && !strncmp(o, "lru_crawler", n)) {
            mc_cfg.lru_crawler = 1;
        } else if (n == 17 && !strncmp(o, "no_lru_maintainer", n)) {
            mc_cfg.lru_maintainer = 0;
        } else if (n == 14 && !strncmp(o, "lru_maintainer", n)) {
            mc_cfg.lru_maintainer = 1;
        } else if (n == 16 && !strncmp(o, "no_slab_reassign", n)) {
            mc_cfg.slab_reassign = 0;
        } else if (n == 13 && !strncmp(o, "slab_reassign", n)) {
            mc_cfg.slab_reassign = 1;
        } else if (n == 9 && !strncmp(o, "no_modern", n)) {
            /* memcached's 1.4 defaults: no crawler, maintainer, reassign, fast maxconns */
            mc_cfg.lru_crawler = 0;
            mc_cfg.lru_maintainer = 0;
            mc_cfg.slab_reassign = 0;
            mc_cfg.maxconns_fast = 0;
        } else if (n == 11 && !strncmp(o, "track_sizes", n)) {
            mc_cfg.track_sizes = 1;
        } else if (n == 13 && !strncmp(o, "maxconns_fast", n)) {
            mc_cfg.maxconns_fast = 1;
        } else if (n == 16 && !strncmp(o, "no_maxconns_fast", n)) {
            mc_cfg.maxconns_fast = 0;
        } else if (n == 14 && !strncmp(o, "slab_chunk_max", n) && val) {
            mc_cfg.slab_chunk_max = (int)size_arg(val);
        } else if (!strncmp(o, "ssl_", 4)) {
            if (ssl_suboption(o, n, val))
                return 1;
        }
    }
    return 0;
}

/* memcached's -h, listing what this command line takes. memcached's own test suite reads it to
 * learn what the binary supports (unix-socket, sasl, enable-ssl, ext_path, proxy_config,
 * no_drop_privileges): only what twincache honours is named. */
void mc_cmdline_help(void)
{
    printf("twincache as memcached 1.6.18 (the memcached command line)\n"
           "-p, --port=<num>          TCP port to listen on (default: 11211)\n"
           "-U, --udp-port=<num>      UDP port to listen on (default: 0, off)\n"
           "-s, --unix-socket=<file>  UNIX socket to listen on (disables network support)\n"
           "-a, --unix-mask=<mask>    access mask for UNIX socket, in octal (default: 700)\n"
           "-A, --enable-shutdown     enable ascii \"shutdown\" command\n"
           "-l, --listen=<addr>       interface to listen on (default: INADDR_ANY)\n"
           "-d, --daemon              run as a daemon\n"
           "-r, --enable-coredumps    maximize core file limit\n"
           "-u, --user=<user>         assume identity of <username> (only when run as root)\n"
           "-m, --memory-limit=<num>  item memory in megabytes (default: 64)\n"
           "-M, --disable-evictions   return error on memory exhausted instead of evicting\n"
           "-c, --conn-limit=<num>    max simultaneous connections (default: 1024)\n"
           "-v, --verbose             verbose (print errors/warnings while in event loop)\n"
           "-vv                       very verbose (also print client commands/responses)\n"
           "-h, --help                print this help and exit\n"
           "-V, --version             print version and exit\n"
           "-k, --lock-memory         lock down all paged memory\n"
           "-P, --pidfile=<file>      save PID in <file>, only used with -d option\n"
           "-f, --slab-growth-factor=<num> chunk size growth factor (default: 1.25)\n"
           "-n, --slab-min-size=<bytes> min space used for key+value+flags (default: 48)\n"
           "-D <char>                 delimiter between key prefixes and IDs (stats detail)\n"
           "-t, --threads=<num>       number of threads to use (default: 4)\n"
           "-R, --max-reqs-per-event  maximum number of requests per event (default: 20)\n"
           "-C, --disable-cas         disable use of CAS\n"
           "-b, --listen-backlog=<num> set the backlog queue limit (default: 1024)\n"
           "-B, --protocol=<name>     protocol - one of ascii, binary, or auto (default: auto)\n"
           "-I, --max-item-size=<num> adjusts max item size\n"
           "                          (default: 1m, min: 1k, max: 1024m)\n"
           "-S, --enable-sasl         turn on Sasl authentication\n"
           "-F, --disable-flush-all   disable flush_all command\n"
           "-X, --disable-dumping     disable stats cachedump and lru_crawler metadump\n"
           "-W  --disable-watch       disable watch commands (live logging)\n"
           "-Y, --auth-file=<file>    enable ASCII protocol authentication. format:\n"
           "                          user:pass\\nuser2:pass2\\n\n"
           "-Z, --enable-ssl          enable TLS/SSL\n"
           "-o, --extended            comma separated list of extended options\n"
           "   - maxconns_fast:       immediately close new connections after limit\n"
           "   - hashpower:           initial hash table size, as a power of two\n"
           "   - no_lru_crawler:      disable the LRU crawler\n"
           "   - idle_timeout:        timeout for idle connections. (default: 0, no timeout)\n"
           "   - read_buf_mem_limit:  limit in megabytes for connection read/response buffers\n"
           "   - slab_chunk_max:      maximum slab size in kilobytes. (default: 512)\n"
           "   - track_sizes:         enable dynamic reports for 'stats sizes' command.\n"
           "   - ssl_chain_cert, ssl_key, ssl_verify_mode, ssl_ciphers, ssl_ca_cert,\n"
           "     ssl_session_cache, ssl_min_version: TLS settings of -Z\n"
           "   - relaxed_privileges:  accepted (no seccomp filter is installed)\n"
           "--name value              any twincache setting (e.g. --port 6379 for Redis)\n");
}

int mc_cmdline_parse(int argc, char **argv)
{
    char **mav = calloc((size_t)argc + 1, sizeof(char *));
    int mac = 1, c, verbose = 0;
    long long item_size = -1, maxbytes = 64LL * 1024 * 1024;
    int port_given = 0, udp_given = 0;

    if (!mav)
        return 1;
    mc_cfg.memcached_cmdline = 1;
    log_to_stderr();
    cfg.maxmemory_policy = MM_ALLKEYS_LRU; /* memcached evicts (-M: it does not) */
    cfg.port = 0;            /* the Redis port: only with an explicit --port */
    cfg.maxclients = 1024;   /* memcached's defaults */
    cfg.threads = 4;
    strcpy(cfg.bind, "0.0.0.0");
    strcpy(cfg.save, ""); /* memcached keeps nothing on disk */
    cfg.tcp_backlog = 1024;
    cfg.tls_auth_clients = 0; /* memcached's ssl_verify_mode 0 */
    /* twincache's own "--name value ..." settings first; the rest goes to getopt */
    mav[0] = argv[0];
    for (int i = 1; i < argc;) {
        if (!strncmp(argv[i], "--", 2) && argv[i][2]) {
            const char *vals[16];
            char err[1024];
            const char *name = argv[i++] + 2;
            int n = 0;
            if (!strcmp(name, "help")) {
                mc_cmdline_help();
                free(mav);
                return 0;
            }
            if (!strcmp(name, "enable-ssl")) { /* memcached's long name of -Z */
                ssl_enabled = 1;
                continue;
            }
            while (i < argc && argv[i][0] != '-' && n < 16)
                vals[n++] = argv[i++];
            if (n == 0)
                vals[n++] = "";
            if (config_set(name, vals, n, 1, err, sizeof(err))) {
                fprintf(stderr, "*** FATAL CONFIG ERROR ***\n'%s': %s\n", name, err);
                free(mav);
                return 1;
            }
            if (!strcmp(name, "maxmemory"))
                maxbytes = cfg.maxmemory;
            if (!strcmp(name, "item-size-max"))
                item_size = cfg.item_size_max;
            continue;
        }
        mav[mac++] = argv[i++];
    }
    optind = 1;
    opterr = 1;
    while ((c = getopt(mac, mav, "a:Ab:B:c:CdD:e:f:FhiI:kl:Lm:Mn:N:o:p:P:rR:s:St:u:U:vVWXY:Z")) !=
           -1) {
        int rc = 0;
        switch (c) {
        case 'p':
            port_given = 1;
            if (atoi(optarg) < -1 || atoi(optarg) > 65535) { /* -1: any free port */
                fprintf(stderr, "ERROR: Invalid port number %d.\n", atoi(optarg));
                rc = EX_USAGE_;
            } else {
                cfg.memcache_port = atoi(optarg);
            }
            break;
        case 'U':
            mc_cfg.udp_port = atoi(optarg);
            udp_given = 1;
            if (mc_cfg.udp_port < -1 || mc_cfg.udp_port > 65535) {
                fprintf(stderr, "ERROR: Invalid port number %d.\n", mc_cfg.udp_port);
                rc = EX_USAGE_;
            }
            break;
        case 'l': {
            /* memcached: a comma-separated list; twincache: spaces */
            snprintf(mc_cfg.inter, sizeof(mc_cfg.inter), "%s", optarg);
            snprintf(cfg.bind, sizeof(cfg.bind), "%s", optarg);
            for (char *p = cfg.bind; *p; p++)
                if (*p == ',')
                    *p = ' ';
            break;
        }
        case 's':
            snprintf(mc_cfg.domain_socket, sizeof(mc_cfg.domain_socket), "%s", optarg);
            break;
        case 'a':
            mc_cfg.umask = (int)strtol(optarg, NULL, 8);
            break;
        case 'm':
            maxbytes = size_arg(optarg);
            if (optarg[0] && optarg[strlen(optarg) - 1] >= '0' &&
                optarg[strlen(optarg) - 1] <= '9')
                maxbytes = (long long)atoi(optarg) * 1024 * 1024; /* megabytes */
            break;
        case 'M':
            mc_cfg.evictions = 0;
            rc = set("maxmemory-policy", "noeviction") ? 1 : 0;
            break;
        case 'c':
            if (atoi(optarg) <= 0) {
                fprintf(stderr, "Maximum connections must be greater than 0\n");
                rc = 1;
            } else {
                cfg.maxclients = atoi(optarg);
            }
            break;
        case 't':
            if (atoi(optarg) <= 0) {
                fprintf(stderr, "Number of threads must be greater than 0\n");
                rc = 1;
            } else {
                cfg.threads = atoi(optarg) > 128 ? 128 : atoi(optarg);
            }
            break;
        case 'I':
            item_size = size_arg(optarg);
            break;
        case 'F':
            mc_cfg.flush_enabled = 0;
            break;
        case 'C':
            mc_cfg.cas_enabled = 0;
            break;
        case 'A':
            mc_cfg.shutdown_enabled = 1;
            break;
        case 'R':
            mc_cfg.reqs_per_event = atoi(optarg);
            if (mc_cfg.reqs_per_event <= 0) {
                fprintf(stderr, "Number of requests per event must be greater than 0\n");
                rc = 1;
            }
            break;
        case 'B':
            if (strcmp(optarg, "auto") && strcmp(optarg, "binary") && strcmp(optarg, "ascii")) {
                fprintf(stderr, "Invalid value for binding protocol: %s\n"
                                " -- should be one of auto, binary, or ascii\n", optarg);
                rc = EX_USAGE_;
            } else {
                snprintf(mc_cfg.binding, sizeof(mc_cfg.binding), "%s", optarg);
            }
            break;
        case 'n':
            mc_cfg.chunk_size = atoi(optarg);
            if (mc_cfg.chunk_size <= 0) {
                fprintf(stderr, "Chunk size must be greater than 0\n");
                rc = 1;
            }
            break;
        case 'f':
            if (atof(optarg) <= 1.0) {
                fprintf(stderr, "Factor must be greater than 1\n");
                rc = 1;
            } else {
                snprintf(mc_cfg.growth_factor, sizeof(mc_cfg.growth_factor), "%.2f",
                         atof(optarg));
            }
            break;
        case 'v':
            verbose++;
            break;
        case 'd':
            mc_daemon.daemonize = 1;
            break;
        case 'u':
            snprintf(mc_daemon.user, sizeof(mc_daemon.user), "%s", optarg);
            break;
        case 'r':
            mc_daemon.maxcore = 1;
            break;
        case 'k':
            mc_daemon.lock_memory = 1;
            break;
        case 'P':
            snprintf(cfg.pidfile, sizeof(cfg.pidfile), "%s", optarg);
            break;
        case 'b':
            cfg.tcp_backlog = atoi(optarg);
            break;
        case 'S':
            mc_cfg.sasl = 1;
            rc = set("memcache-sasl", "yes") ? 1 : 0;
            break;
        case 'Y':
            if (access(optarg, R_OK) != 0) {
                fprintf(stderr, "Could not open authfile [%s] for reading, error %m: %m\n",
                        optarg);
                rc = 1;
            } else {
                rc = set("memcache-auth-file", optarg) ? 1 : 0;
            }
            break;
        case 'X':
            mc_cfg.dump_enabled = 0;
            break;
        case 'W':
            mc_cfg.watch_enabled = 0;
            break;
        case 'Z':
            ssl_enabled = 1;
            break;
        case 'o': {
            char *copy = strdup(optarg);
            rc = copy ? suboptions(copy) : 1;
            free(copy);
            break;
        }
        case 'V':
            printf("memcached 1.6.18\n");
            rc = 0;
            free(mav);
            return 0;
        case 'h':
            mc_cmdline_help();
            free(mav);
            return 0;
        case 'i':
            printf("twincache: the memcached command line of twincache\n");
            free(mav);
            return 0;
        case 'L': case 'D': case 'e': case 'N':
            break; /* large pages, stats prefix, memory file, NAPI ids: no effect */
        default:
            fprintf(stderr, "Illegal argument \"%c\"\n", c);
            rc = 1;
            break;
        }
        if (rc) {
            free(mav);
            return rc;
        }
    }
    free(mav);
    if (udp_given && mc_cfg.udp_port && !port_given)
        cfg.memcache_port = mc_cfg.udp_port; /* memcached: -U alone sets the TCP port too */
    if (maxbytes <= 0)
        maxbytes = 0;
    cfg.maxmemory = maxbytes;
    if (getenv("T_MEMD_INITIAL_MALLOC")) /* memcached's test hook: memory already taken */
        store_mem_reserved = atoll(getenv("T_MEMD_INITIAL_MALLOC"));
    if (item_size >= 0) {
        if (item_size < ITEM_SIZE_MIN) {
            fprintf(stderr, "Item max size cannot be less than 1024 bytes.\n");
            return EX_USAGE_;
        }
        if (item_size > maxbytes / 2) {
            fprintf(stderr, "Cannot set item size limit higher than 1/2 of memory max.\n");
            return EX_USAGE_;
        }
        if (item_size > ITEM_SIZE_MAX_UPPER) {
            fprintf(stderr, "Cannot set item size limit higher than a gigabyte.\n");
            return EX_USAGE_;
        }
        cfg.item_size_max = item_size;
    } else if (cfg.item_size_max > maxbytes / 2) {
        fprintf(stderr, "Cannot set item size limit higher than 1/2 of memory max.\n");
        return EX_USAGE_;
    }
    if (!mc_cfg.slab_chunk_max)
        mc_cfg.slab_chunk_max = SLAB_PAGE_SIZE / 2;
    if (mc_cfg.slab_chunk_max > cfg.item_size_max) {
        fprintf(stderr,
                "slab_chunk_max (bytes: %d) cannot be larger than -I (item_size_max %lld)\n",
                mc_cfg.slab_chunk_max, cfg.item_size_max);
        return EX_USAGE_;
    }
    if (cfg.item_size_max % mc_cfg.slab_chunk_max != 0) {
        fprintf(stderr, "-I (item_size_max: %lld) must be evenly divisible by slab_chunk_max "
                        "(bytes: %d)\n", cfg.item_size_max, mc_cfg.slab_chunk_max);
        return EX_USAGE_;
    }
    if (strcmp(mc_cfg.domain_socket, "NULL")) {
        /* as memcached: a unix socket replaces the TCP and UDP ports; -a is its mode */
        snprintf(cfg.unixsocket, sizeof(cfg.unixsocket), "%s", mc_cfg.domain_socket);
        cfg.unixsocketperm = mc_cfg.umask & 0777;
        mc_cfg.tcpport = cfg.memcache_port;
        cfg.memcache_port = 0;
        mc_cfg.udp_port = 0;
    }
    if (ssl_enabled && cfg.memcache_port) {
        /* as memcached -Z: the TCP port speaks TLS (memcached's default: no client
         * certificates asked unless ssl_verify_mode says so) */
        if (!cfg.tls_cert_file[0] || !cfg.tls_key_file[0]) {
            fprintf(stderr, "Failed to initialize TLS: ssl_chain_cert and ssl_key are "
                            "required\n");
            return EX_USAGE_;
        }
        cfg.tls_memcache_port = cfg.memcache_port;
        cfg.memcache_port = 0;
    }
    if (mc_cfg.idle_timeout > 0)
        cfg.timeout = mc_cfg.idle_timeout;
    mc_cfg.verbose = verbose > 2 ? 2 : verbose;
    mc_daemon.verbose = verbose;
    /* as memcached, in its order: the core limit (-r), then the root check (-u) */
    if (mc_daemon.maxcore && (c = daemon_raise_core_limit()))
        return c;
    if ((c = daemon_user_check(mc_daemon.user)))
        return c;
    return -1;
}
