/* twincache: the process. Reads the configuration (file and --name value arguments, like
 * redis-server), sets up logging, the store, the command table and the workers, then waits
 * for SIGTERM/SIGINT or SHUTDOWN and exits cleanly. */
#define _GNU_SOURCE
#include <ctype.h>
#include <pwd.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cmd/acl.h"
#include "server/crash.h"
#include "cmd/repl.h"
#include "cmd/monitor.h"
#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/multi.h"
#include "cmd/persist.h"
#include "cmd/propagate.h"
#include "cmd/blocking.h"
#include "cmd/pubsub.h"
#include "mc/mc_cmd.h"
#include "script/script.h"
#include "script/script_func.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/oom.h"
#include "core/log.h"
#include "core/log_sys.h"
#include "core/proctitle.h"
#include "core/supervise.h"
#include "core/util.h"
#include "net/tls.h"
#include "net/worker.h"
#include "persist/aof_log.h"
#include "persist/persist.h"
#include "server/daemon.h"
#include "server/mc_cmdline.h"
#include "server/metrics.h"
#include "persist/rdb.h"
#include "store/evict.h"
#include "store/lazyfree.h"
#include "store/store.h"

#define TWINCACHE_VERSION "0.1.0"

static int64_t not_counted_for_evict(void)
{
    return (int64_t)repl_not_counted_bytes();
}

/* ---- the workers' timer (srv.on_tick, every 1000/hz ms on each worker) ---- */

static struct store_cron *crons; /* one per worker, each touched by its worker only */

/* Publish this thread's memory delta; worker 0: the LFU minute clock, the memory overhead
 * measurement, the persistence timers (save rules, AOF rewrites, children); every worker:
 * catch-up eviction and active expiry over its share of the stripes. */
static void server_tick(struct worker *w)
{
    struct srv *srv = w->srv;

    store_mem_flush();
    if (atomic_load_explicit(&persist_booting, memory_order_relaxed))
        return; /* the start-up load holds the store (persist_load) */
    if (w->idx == 0) {
        store_cron_clocks(w->now_ms);
        persist_tick(w->now_ms);
        repl_tick(w->now_ms);
        script_ldb_tick(); /* reap SCRIPT DEBUG YES sessions that ended */
        tracking_tick();
    }
    store_cron_worker(srv->store, &crons[w->idx], (uint32_t)w->idx, (uint32_t)srv->nworkers,
                      w->now_ms);
    mc_cmd_tick(w); /* memcached "watch" log lines */
    cmd_migrate_tick(w->now_ms);
    notify_flush(w->idx); /* expired / evicted events of the sweep */
}

static void server_worker_exit(struct worker *w)
{
    (void)w;
    notify_thread_exit();
    monitor_thread_exit();
    store_thread_exit();
}

static void usage(void)
{
    fprintf(stderr,
            "Usage: twincache [/path/to/twincache.conf] [--name value ...]\n"
            "       twincache -v | --version\n"
            "       twincache -h | --help\n\n"
            "Settings use redis.conf names, for example:\n"
            "  --port 6379 --memcache-port 11211 --bind 127.0.0.1 --threads 2\n"
            "  --maxmemory 1gb --maxmemory-policy allkeys-lru --requirepass secret\n"
            "  --databases 16 --loglevel notice --logfile /tmp/twincache.log\n");
}

/* Every command family registers its table entries (main thread, before the workers). The
 * command layer's core (table.c) knows no family: this list is the one place that names them
 * all. */
static void register_commands(void)
{
    cmd_string_setup();
    cmd_keys_setup();
    cmd_dump_setup();
    cmd_conn_setup();
    cmd_command_setup();
    cmd_acl_setup();
    cmd_server_setup();
    cmd_latency_setup();
    cmd_lolwut_setup();
    cmd_debug_setup();
    cmd_module_setup();
    cmd_cluster_setup();
    cmd_multi_setup();
    cmd_persist_setup();
    cmd_repl_setup();
    cmd_list_setup();
    cmd_set_setup();
    cmd_hash_setup();
    cmd_zset_setup();
    cmd_stream_setup();
    cmd_bit_setup();
    cmd_hll_setup();
    cmd_geo_setup();
    cmd_sort_setup();
    cmd_pubsub_setup();
    cmd_monitor_setup();
    cmd_blocking_setup();
    cmd_aof_setup();
}

/* The config file, then the command line's options turned into configuration lines as Redis
 * 7.0 does: "--name" starts a line (its value may be in the same argument: "--port 6380"),
 * the arguments after it are its values (quoted; one starting with "--" too while the name
 * has none yet); a lone "--save" becomes save "". */
static int read_args(int argc, char **argv, const char **config_file)
{
    char err[2048];
    int i = 1, have_value = 1, r;
    struct buf opts = {0};

    if (argc >= 2 && argv[1][0] != '-') {
        /* absolute: CONFIG REWRITE writes it back whatever the working directory is then */
        char *abs = realpath(argv[1], NULL);
        *config_file = abs ? abs : argv[1];
        i = 2;
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (have_value && a[0] == '-' && a[1] == '-') {
            int words = 0;
            if (buf_len(&opts))
                buf_append(&opts, "\n", 1);
            buf_append(&opts, a + 2, strlen(a + 2));
            buf_append(&opts, " ", 1);
            for (const char *p = a; *p;) { /* words in the argument ("--port 6380": 2) */
                while (*p == ' ' || *p == '\t')
                    p++;
                if (!*p)
                    break;
                words++;
                while (*p && *p != ' ' && *p != '\t')
                    p++;
            }
            have_value = words > 1;
            if (!have_value && !strcasecmp(a, "--save") &&
                (i == argc - 1 || (argv[i + 1][0] == '-' && argv[i + 1][1] == '-'))) {
                buf_append(&opts, "\"\"", 2); /* --save alone: save "" */
                have_value = 1;
            }
        } else {
            buf_append_repr(&opts, a, strlen(a));
            buf_append(&opts, " ", 1);
            have_value = 1;
        }
    }
    buf_append(&opts, "", 1);
    /* the file's lines, then the options' (as Redis: one text, one line count) */
    r = config_load(*config_file ? argv[1] : NULL,
                    buf_len(&opts) > 1 ? opts.data + opts.rpos : NULL,
                    err, sizeof(err));
    buf_deinit(&opts);
    if (r == -2) { /* a log line, as Redis's serverLog before exit(1) */
        printf("%s\n", err);
        return -1;
    }
    if (r) {
        fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n%s\n", err);
        return -1;
    }
    return 0;
}

/* The file and the command line are read as one configuration (config_reading: Redis's save
 * lines). */
static int parse_args(int argc, char **argv, const char **config_file)
{
    int r;

    config_reading = 1;
    r = read_args(argc, argv, config_file);
    config_reading = 0;
    return r;
}

/* ---- the persistence host (persist.h): what src/persist needs from the layers above ---- */

static uint64_t persist_dirty(void *ctx)
{
    struct srv *srv = ctx;
    uint64_t d = 0;
    for (int i = 0; i < srv->nworkers; i++)
        d += STAT_GET(srv->workers[i].st.dirty);
    return d;
}

static int persist_wake_workers(void *ctx)
{
    struct srv *srv = ctx;
    if (!srv->workers)
        return -1;
    for (int i = 0; i < srv->nworkers; i++)
        worker_wake(&srv->workers[i]);
    return 0;
}

static void *persist_replay_open(void *ctx)
{
    return cmd_aof_replay_open(ctx);
}

/* Before a worker sleeps: write (and with appendfsync always fsync) what its commands
 * logged, then release the replies that waited for it. */
static void persist_before_sleep(struct worker *w)
{
    mc_before_sleep(w); /* memcached connections that yielded (-R) run first: their writes
                         * are logged and released below */
    aof_before_sleep(w->idx);
    worker_release_held(w);
    repl_before_sleep(w);
}

static void persist_wire(struct srv *srv)
{
    struct persist_host h = {
        .store = srv->store,
        .start_ms = srv->start_ms,
        .nworkers = srv->nworkers,
        .ctx = srv,
        .dirty = persist_dirty,
        .wake_workers = persist_wake_workers,
        .replay_open = persist_replay_open,
        .replay = cmd_aof_replay,
        .replay_close = cmd_aof_replay_close,
        .gone = cmd_prop_gone,
        .repl_aux = repl_rdb_aux,
    };
    persist_setup(&h);
    srv->before_sleep = persist_before_sleep;
    srv->evict_clients = cmd_evict_clients;
    store_not_counted_fn = not_counted_for_evict;
}

/* config_listen_apply: CONFIG SET port, tls-port, memcache-port, tls-memcache-port, bind */
static struct srv *listening_srv;
static int relisten(char *err, size_t cap)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* two CONFIG SETs at once */
    struct srv *srv = listening_srv;
    int r;

    pthread_mutex_lock(&lock);
    if ((cfg.tls_port || cfg.tls_memcache_port) && !config_tls_apply &&
        tls_setup(err, cap)) { /* TLS was off: its context first, as Redis's applyTLSPort */
        pthread_mutex_unlock(&lock);
        return -2;
    }
    srv->proto[PROTO_RESP].port = cfg.port;
    srv->proto[PROTO_RESP].tls_port = cfg.tls_port;
    srv->proto[PROTO_MC].port = cfg.memcache_port;
    srv->proto[PROTO_MC].tls_port = cfg.tls_memcache_port;
    srv->proto[PROTO_MC].port_optional = !cfg.memcache_port_given && !mc_cfg.memcached_cmdline;
    r = srv_relisten(srv, err, cap);
    pthread_mutex_unlock(&lock);
    return r;
}

/* As Redis's linuxMemoryWarnings: when the kernel has transparent huge pages "always" on,
 * disable-thp turns them off for this process (prctl), else a warning says what to do. */
static void thp_check(void)
{
    char line[256] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

    if (!f)
        return;
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    if (!strstr(line, "[always]"))
        return;
    if (cfg.disable_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0)
        return;
    log_warn("WARNING You have Transparent Huge Pages (THP) support enabled in your kernel. This "
             "will create latency and memory usage issues with Redis. To fix this issue run the "
             "command 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled' as root, and "
             "add it to your /etc/rc.local in order to retain the setting after a reboot. Redis "
             "must be restarted after THP is disabled (set to 'madvise' or 'never').");
}

int main(int argc, char **argv)
{
    struct srv srv;
    const char *config_file = NULL;
    sigset_t set;
    int sig, code, mc, background;

    if (argc == 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("twincache v=%s (Redis protocol 7.0 compatible, memcached protocol 1.6 compatible)\n",
               TWINCACHE_VERSION);
        return 0;
    }
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage();
        mc_cmdline_help(); /* stdout: memcached's test suite reads what -h lists */
        return 0;
    }
    util_ticks_init();
    config_defaults();
    if (mc_cmdline_is(argc, argv)) { /* memcached's flags: "twincache -p 11211 -m 64 ..." */
        int rc = mc_cmdline_parse(argc, argv);
        if (rc >= 0)
            return rc;
    } else if (parse_args(argc, argv, &config_file)) {
        return 1;
    }
    if ((cfg.stripes & (cfg.stripes - 1)) != 0) {
        fprintf(stderr, "*** FATAL CONFIG ERROR *** stripes must be a power of two\n");
        return 1;
    }
    if (log_setup(cfg.loglevel, cfg.logfile)) {
        fprintf(stderr, "Can't open the log file: %s\n", strerror(errno));
        return 1;
    }
    mc = mc_cfg.memcached_cmdline;
    if (!mc) {
        /* argv's memory will hold the process title: the path is copied out of it first */
        if (config_file && !(config_file = strdup(config_file)))
            return 1;
        proctitle_init(argc, argv, config_file);
    }
    if (cfg.syslog_enabled)
        log_sys_enable();
    /* as redis-server: daemonize is not done when an init system supervises the process;
     * both detach before any thread exists (the lazy free thread is the first) */
    background = mc ? mc_daemon.daemonize : !supervise_setup(cfg.supervised) && cfg.daemonize;
    if (background) {
        if (!mc && !cfg.pidfile[0]) /* redis-server's default when daemonized */
            snprintf(cfg.pidfile, sizeof(cfg.pidfile), "%s", "/var/run/redis.pid");
        /* memcached -d: to "/" unless -r (core files land there), stderr kept with -v */
        if (daemon_detach(mc && mc_daemon.verbose, mc && !mc_daemon.maxcore))
            return 1;
    }
    if (mc && mc_daemon.lock_memory)
        daemon_lock_memory();
    oom_score_apply(cfg.replicaof[0] ? OOM_CLASS_REPLICA : OOM_CLASS_MASTER);
    if (!mc_cfg.memcached_cmdline) { /* redis-server's first lines */
        log_warn("oO0OoO0OoO0Oo twincache is starting oO0OoO0OoO0Oo");
        log_warn("twincache version=%s (Redis 7.0.15 compatible), bits=%d, pid=%d, just started",
                 TWINCACHE_VERSION, (int)(sizeof(void *) * 8), (int)getpid());
        if (config_file)
            log_warn("Configuration loaded");
        else
            log_warn("Warning: no config file specified, using the default config. In order "
                     "to specify a config file use %s /path/to/twincache.conf", argv[0]);
    }
    if (cfg.syslog_enabled) /* where redis-server's initServer opens it */
        log_sys_open(cfg.syslog_ident, cfg.syslog_facility);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGHUP, SIG_IGN); /* as redis-server, and memcached (whose handler only notes it) */
    crash_setup(); /* the bug report on fatal signals (crash.c) */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (mc)
        sigaddset(&set, SIGUSR1); /* memcached: a graceful stop (Redis: the default action) */
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* workers inherit the mask */

    {
        /* Clients get maxclients fds; the server keeps 64 plus 4 per worker (its epoll fd
         * and eventfd) for itself. If the hard limit is too low, lower maxclients (as Redis
         * does): a client beyond it is then told "max number of clients reached" instead of
         * waiting in the accept queue while accept() fails with EMFILE. */
        struct rlimit rl;
        rlim_t reserve = 64 + 4 * (rlim_t)cfg.threads, want = (rlim_t)cfg.maxclients + reserve;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
            rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl); /* on failure the limit read back decides */
            if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
                int fit = rl.rlim_cur > reserve + 1 ? (int)(rl.rlim_cur - reserve) : 1;
                log_warn("You requested maxclients of %d requiring at least %llu max file "
                         "descriptors, but the limit is %llu: maxclients has been reduced to "
                         "%d. If you need higher maxclients increase 'ulimit -n'.",
                         cfg.maxclients, (unsigned long long)want,
                         (unsigned long long)rl.rlim_cur, fit);
                cfg.maxclients = fit;
            }
        }
    }

    memset(&srv, 0, sizeof(srv));
    srv.nworkers = cfg.threads;
    srv.start_ms = util_now_ms();
    srv.executable = argv[0];
    srv.config_file = config_file;
    srv.proto[PROTO_RESP] = (struct srv_proto){
        .port = cfg.port,
        .tls_port = cfg.tls_port,
        .unix_socket = !mc_cfg.memcached_cmdline, /* memcached's -s: the memcached protocol */
        .full_reply = "-ERR max number of clients reached\r\n",
        .on_open = cmd_resp_open,
        .on_input = cmd_resp_input,
        .on_close = cmd_resp_close,
        .read_hint = cmd_resp_read_hint,
        .may_time_out = cmd_resp_may_time_out,
        .mem = cmd_resp_mem,
    };
    srv.proto[PROTO_MC] = (struct srv_proto){
        .port = cfg.memcache_port,
        .tls_port = cfg.tls_memcache_port,
        .udp_port = mc_cfg.udp_port,
        .unix_socket = mc_cfg.memcached_cmdline,
        /* started as a Redis server with no memcache-port of its own (redis-server's config
         * files, several servers on one machine): a busy default port only turns it off */
        .port_optional = !cfg.memcache_port_given && !mc_cfg.memcached_cmdline,
        .full_reply = "ERROR Too many open connections\r\n",
        .on_open = mc_cmd_open,
        .on_input = mc_cmd_input,
        .on_close = mc_cmd_close,
        .may_time_out = mc_cmd_may_time_out,
    };
    pubsub_setup(&srv);
    notify_setup(&srv);
    block_setup(&srv);
    repl_setup(&srv);
    srv.on_tick = server_tick;
    srv.on_exit = server_worker_exit;
    srv.clock = &store_lru_clock;
    crons = calloc((size_t)srv.nworkers, sizeof(*crons));
    srv.store = store_create((uint32_t)cfg.stripes, cfg.databases);
    if (!srv.store || !crons) {
        log_warn("Out of memory creating the store");
        return 1;
    }
    if (lazyfree_setup())
        log_warn("Can't start the lazy free thread: values are freed at once");
    atomic_store(&store_lru_clock, (uint32_t)srv.start_ms);
    atomic_store(&store_lfu_minutes, (uint32_t)(srv.start_ms / 60000) & 0xffffff);
    register_commands();
    script_setup(); /* src/script: EVAL, EVALSHA, SCRIPT, FCALL, FUNCTION */
    for (int i = 0; i + 1 < config_nrenames; i += 2) { /* rename-command lines */
        char rerr[128];
        if (cmd_rename(config_renames[i], config_renames[i + 1], rerr, sizeof(rerr))) {
            fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n%s\n%s\n",
                    config_rename_where[i / 2], rerr);
            return 1;
        }
    }
    {
        char aclerr[2048];
        if (acl_startup(aclerr, sizeof(aclerr))) { /* `user` lines, aclfile (cmd/acl.h) */
            log_warn("%s", aclerr);
            return 1;
        }
    }
    rdb_funcs.each = script_func_each; /* functions in RDB files, without src/persist */
    rdb_funcs.load = script_func_load; /* depending on src/script */
    rdb_funcs.clear = func_flush;
    persist_wire(&srv);
    if (mc_cmd_setup(&srv)) {
        log_warn("Out of memory setting up the memcached protocol");
        return 1;
    }
    if (cfg.tls_port || cfg.tls_memcache_port) {
        char err[512];
        if (tls_setup(err, sizeof(err))) {
            log_warn("Failed to configure TLS. Check logs for more info.");
            return 1;
        }
    }
    if (srv_listen(&srv)) {
        log_warn("Failed listening on port %d (TCP), aborting.", cfg.port);
        return 1;
    }
    listening_srv = &srv;
    config_listen_apply = relisten;
    {
        char merr[256];
        if (metrics_start(&srv, merr, sizeof(merr))) { /* metrics-port (docs/metrics.md) */
            log_warn("Failed listening on the metrics port: %s", merr);
            return 1;
        }
    }
    if (mc && mc_daemon.user[0] && (getuid() == 0 || geteuid() == 0)) {
        /* memcached -u: the identity taken once the ports are bound (a port below 1024
         * works); its unix socket is the user's, as memcached creates it after the switch */
        struct passwd *pw = getpwnam(mc_daemon.user);
        if (pw && cfg.unixsocket[0] && chown(cfg.unixsocket, pw->pw_uid, pw->pw_gid) != 0)
            log_warn("chown %s: %s", cfg.unixsocket, strerror(errno));
        if ((code = daemon_drop_privileges(mc_daemon.user)))
            return code;
    }
    /* as redis-server: daemonized or given a pidfile; memcached: -P */
    daemon_pidfile_write(cfg.pidfile, mc);
    if (!mc && cfg.set_proc_title)
        proctitle_apply();
    log_notice("twincache %s started, pid=%d, threads=%d, port=%d, memcache-port=%d",
               TWINCACHE_VERSION, (int)getpid(), srv.nworkers, cfg.port, cfg.memcache_port);
    if (cfg.always_show_logo || (!cfg.syslog_enabled && !cfg.logfile[0] && isatty(1))) {
        /* redis-server's banner lines (its test harness waits for "PID: <pid>") */
        log_raw("\n    twincache %s (Redis 7.0.15 compatible) 64 bit\n"
                "    Running in standalone mode\n"
                "    Port: %d\n"
                "    PID: %d\n\n", TWINCACHE_VERSION, cfg.port, (int)getpid());
    } else {
        log_notice("Running mode=standalone, port=%d.", cfg.port);
    }
    log_warn("Server initialized"); /* a warning-level line in redis-server */
    if (!mc)
        thp_check();
    /* as redis-server: listening (connections wait in the backlog) and the banner first, then
     * the dataset, so a corrupt file is logged after the PID line its test harness waits for */
    /* the workers serve while it loads, as Redis serves during loading: INFO says loading:1
     * and its progress, commands not flagged "loading" get -LOADING */
    int may_load = persist_boot_may_load();
    if (may_load)
        atomic_store(&persist_loading, 1); /* no file: nothing to refuse commands for */
    atomic_store(&persist_booting, 1);
    if (srv_start(&srv)) {
        log_warn("Could not start worker threads");
        return 1;
    }
    daemon_ready(); /* daemonized: the ports take connections, the waiting parent exits 0 */
    /* memcached's command line keeps nothing on disk: no file found (or, after -u, none the
     * user may see in the working directory) is no error there */
    int lrc = mc && !may_load ? 0 : persist_load();
    atomic_store(&persist_booting, 0);
    atomic_store(&persist_loading, 0);
    if (lrc)
        return 1;
    repl_after_load(); /* an RDB with replication's ID and offset continues them */
    log_notice("Ready to accept connections");
    if (cfg.replicaof[0])
        supervise_notify("STATUS=Ready to accept connections in read-only mode. Waiting for "
                         "MASTER <-> REPLICA sync\n");
    else
        supervise_notify("STATUS=Ready to accept connections\n");
    supervise_notify("READY=1\n");
    repl_start_configured(); /* replicaof in the configuration */
    for (;;) {
        /* a shutdown waiting for its replicas is looked at every 10 ms (Redis's cron) */
        struct timespec ts = {0, (repl_shutdown_in_ms() >= 0 ? 10 : 100) * 1000 * 1000};
        sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGUSR1) { /* memcached mode only (the set): its graceful stop */
            fprintf(stderr, "Gracefully stopping\n");
            repl_shutdown_begin(REPL_SHUT_NOSAVE | REPL_SHUT_NOW, 1);
        }
        if (sig == SIGTERM || sig == SIGINT) {
            int f = sig == SIGINT ? cfg.shutdown_on_sigint : cfg.shutdown_on_sigterm;
            log_warn("Received %s scheduling shutdown...", sig == SIGINT ? "SIGINT" : "SIGTERM");
            /* (a failed save: Redis keeps running; lagging replicas: it waits for them) */
            repl_shutdown_begin(((f & SHUTDOWN_ON_SIG_SAVE) ? REPL_SHUT_SAVE : 0) |
                                    ((f & SHUTDOWN_ON_SIG_NOSAVE) ? REPL_SHUT_NOSAVE : 0) |
                                    ((f & SHUTDOWN_ON_SIG_NOW) ? REPL_SHUT_NOW : 0) |
                                    ((f & SHUTDOWN_ON_SIG_FORCE) ? REPL_SHUT_FORCE : 0),
                                1);
        }
        repl_shutdown_tick();
        if (atomic_load(&srv.shutdown))
            break;
    }
    metrics_stop(); /* it reads the workers' counters: before they go */
    repl_shutdown(); /* the link thread applies commands: it ends before the store */
    srv_join(&srv);
    script_ldb_shutdown(); /* forked debugging sessions still running */
    persist_shutdown(0, 0);
    code = atomic_load(&srv.shutdown_exitcode);
    if (mc ? mc_daemon.daemonize && cfg.pidfile[0] : cfg.pidfile[0] != '\0') {
        if (!mc) /* memcached removes it only as a daemon (-d), saying so on failure */
            log_notice("Removing the pid file.");
        daemon_pidfile_remove(cfg.pidfile, mc);
    }
    if (cfg.unixsocket[0])
        unlink(cfg.unixsocket);
    lazyfree_teardown(); /* what it holds is freed first */
    store_destroy(&srv.store);
    for (int i = 0; i < srv.nworkers; i++)
        free(srv.workers[i].keys);
    srv_free(&srv);
    free(crons);
    log_warn("twincache is now ready to exit, bye bye...");
    return code;
}
