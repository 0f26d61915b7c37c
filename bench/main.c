/* twinbench: load generator for Redis- and memcached-compatible servers.
 * Command line (memtier_benchmark-like flag names), setup, and the generic run. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

static const char *usage_text =
"Usage: twinbench [options]\n"
"\n"
"Load generator for Redis (RESP) and memcached (text or binary protocol) servers:\n"
"T threads x C clients per thread, each with up to P requests in flight.\n"
"\n"
"Targets (one run measures each target in turn with the same workload):\n"
"  -s, --server HOST          server host (default 127.0.0.1); with --port and --protocol\n"
"  -p, --port PORT            server port (default 6379 for redis, 11211 for memcache)\n"
"  -P, --protocol PROTO       redis | memcache | memcache-binary (default redis; binary:\n"
"                             get/set workloads)\n"
"      --target NAME=URL      URL is redis://, memcache:// or memcache-binary://HOST:PORT;\n"
"                             several\n"
"                             hosts (memcache://h1:p1,h2:p2) are sharded with ketama.\n"
"                             A host may be written as in twemproxy's servers list,\n"
"                             HOST:PORT[:WEIGHT][ NAME] ('redis://h1:p1:1 node1,h2:p2:1\n"
"                             node2'): the node name replaces host:port in the ketama\n"
"                             point names and the weight scales the points (twemproxy\n"
"                             layout), so keys land where nutcracker puts them.\n"
"                             Repeatable: targets run one after the other.\n"
"      --ketama LAYOUT        ketama point layout for sharded targets: libmemcached\n"
"                             (MEMCACHED_BEHAVIOR_KETAMA with the default hash: 100\n"
"                             points/host, one-at-a-time; the default), libmemcached-md5\n"
"                             (the same with HASH=MD5), twemproxy|ketama (160 points,\n"
"                             4 per MD5, as libketama, twemproxy with hash md5 and\n"
"                             libmemcached KETAMA_WEIGHTED), spymemcached. nutcracker\n"
"                             places keys like twemproxy when its pool has hash: md5\n"
"                             and distribution: ketama\n"
"      --server-pid NAME=PID[,PID]  server process(es) of target NAME: their CPU time\n"
"                             per request is reported (the threads' run time from\n"
"                             /proc/PID/task/*/schedstat, ns; else /proc/PID/stat)\n"
"      --print-shard KEY      print which host of each target owns KEY ('-': keys from\n"
"                             stdin, one per line): 'TARGET INDEX HOST:PORT KEY', then exit\n"
"\n"
"Load model:\n"
"  -t, --threads N            client threads (default: number of CPUs)\n"
"  -c, --clients N            connections per thread (default 50)\n"
"      --pipeline P           requests in flight per connection (default 1): a sliding\n"
"                             window, as memtier_benchmark (a reply lets the next\n"
"                             request go)\n"
"      --preload-pipeline N   requests in flight per connection while preloading (default 64;\n"
"                             Hazelcast's memcached endpoint stalls on deep pipelines: 16)\n"
"      --pipeline-batch       pipeline as redis-benchmark -P: send P requests together,\n"
"                             wait for all P replies, then send the next P\n"
"      --io-uring yes|no      yes (default, when the kernel allows): each loop turn reads\n"
"                             every readable connection with one io_uring submission and\n"
"                             writes every request of the turn with one more; no: a read\n"
"                             and a write system call per connection\n"
"  -n, --requests N           requests per client (default 10000; 0 with --test-time)\n"
"      --test-time SECS       run for SECS seconds instead of a request count\n"
"      --rate R               open loop: R requests/s in total, spread over all clients;\n"
"                             latency counts from the intended send time, so stalls\n"
"                             are not hidden (coordinated omission corrected)\n"
"      --arrivals KIND        open-loop arrivals: poisson (default) or uniform\n"
"      --timeout MS           per-request timeout: the connection is reset, requests\n"
"                             in flight count as timeouts (default: none)\n"
"      --warmup SECS          run the workload SECS seconds first, reported separately\n"
"                             and not counted\n"
"      --preload              write every key of the key range once before measuring\n"
"      --flush                FLUSHALL / flush_all each target before it runs\n"
"      --conn-init 'CMD ARGS' RESP: a command each connection sends first, its reply\n"
"                             read and dropped (CLIENT TRACKING on, HELLO 3)\n"
"\n"
"Workload:\n"
"      --ratio SET:GET        mix of sets and gets (default 1:10)\n"
"      --command 'CMD ARGS'   RESP command template instead of SET/GET; __key__ is the\n"
"                             generated key, __data__ the value, __rand_int__ a 12-digit\n"
"                             random number (0..--key-maximum), e.g. 'LPUSH mylist __data__'\n"
"      --command-inline       send the template as an inline command (PING_INLINE)\n"
"      --incr                 INCR / incr on the keys\n"
"      --multi-get N          MGET / get with N keys per request\n"
"  -d, --data-size BYTES      value size (default 32)\n"
"      --data-size-range A-B  value sizes uniform in [A, B]\n"
"      --data-size-list S1:W1,S2:W2  value sizes with weights\n"
"      --data-record          seed-000 record values: 2 longs + 4 doubles (48 bytes)\n"
"                             plus a 50..400 character string\n"
"      --expiry SECS          expiry of written keys (SET EX / exptime), default none\n"
"      --key-pattern P        S (sequential), R (uniform random, default), G (gaussian),\n"
"                             Z (zipfian); memtier's 'R:R' form is accepted\n"
"      --key-minimum N        smallest key number (default 0)\n"
"      --key-maximum N        largest key number (default 9999)\n"
"      --key-prefix STR       key prefix (default 'key:')\n"
"      --key-zipf-exp E       zipfian exponent (default 0.99)\n"
"      --key-stddev S         gaussian standard deviation (default range/6)\n"
"      --key-median M         gaussian centre (default middle of the range)\n"
"      --seed N               random seed (default 1)\n"
"\n"
"Presets (each article's whole experiment, printed in its own format):\n"
"      --preset NAME          seed000: 1M records, reads with 1x10000 and 10/50/100/500x100,\n"
"                               0.025 ms bucket table and console histograms\n"
"                             seed001: the redis-benchmark suite, 10000 requests, 50 clients\n"
"                             seed002: threads 1,10,50,100,300, 64-byte values, 4:1 reads,\n"
"                               threads=..,tps=..,hit=.. lines\n"
"                             seed003: 16-byte string written then read 131072 times with\n"
"                               1..128 threads, elapsed microseconds table\n"
"      --scale F              multiply the preset's counts by F (e.g. 0.01 for a quick run)\n"
"      --tests LIST           seed001 tests (comma list, 'all' adds the newer\n"
"                             redis-benchmark tests RPUSH RPOP HSET ZADD ZPOPMIN XADD)\n"
"      --decimal-point        seed000 numbers with '.' instead of the article's ','\n"
"\n"
"Output:\n"
"      --json FILE            every figure and the whole histograms as JSON\n"
"      --html FILE            self-contained HTML report with SVG charts and environment\n"
"      --no-progress          no progress bar (it is only drawn when stderr is a tty)\n"
"  -h, --help                 this help\n"
"      --version              print the version\n";

enum {
    O_TARGET = 256, O_KETAMA, O_SERVER_PID, O_PRINT_SHARD, O_PIPELINE, O_PIPELINE_BATCH, O_IO_URING, O_TEST_TIME, O_RATE,
    O_ARRIVALS, O_TIMEOUT, O_WARMUP, O_PRELOAD, O_FLUSH, O_CONN_INIT, O_RATIO, O_COMMAND, O_COMMAND_INLINE,
    O_INCR, O_MGET, O_RANGE, O_LIST, O_RECORD, O_EXPIRY, O_KPAT, O_KMIN, O_KMAX, O_KPREFIX,
    O_ZIPF, O_STDDEV, O_MEDIAN, O_SEED, O_PRESET, O_SCALE, O_TESTS, O_DECIMAL, O_JSON, O_HTML, O_PRELOAD_PIPELINE,
    O_NOPROGRESS, O_VERSION,
};

static const struct option longopts[] = {
    {"server", required_argument, 0, 's'}, {"port", required_argument, 0, 'p'},
    {"protocol", required_argument, 0, 'P'}, {"target", required_argument, 0, O_TARGET},
    {"ketama", required_argument, 0, O_KETAMA}, {"server-pid", required_argument, 0, O_SERVER_PID},
    {"print-shard", required_argument, 0, O_PRINT_SHARD}, {"threads", required_argument, 0, 't'},
    {"clients", required_argument, 0, 'c'}, {"pipeline", required_argument, 0, O_PIPELINE},
    {"preload-pipeline", required_argument, 0, O_PRELOAD_PIPELINE},
    {"pipeline-batch", no_argument, 0, O_PIPELINE_BATCH}, {"io-uring", required_argument, 0, O_IO_URING},
    {"requests", required_argument, 0, 'n'}, {"test-time", required_argument, 0, O_TEST_TIME},
    {"rate", required_argument, 0, O_RATE}, {"arrivals", required_argument, 0, O_ARRIVALS},
    {"timeout", required_argument, 0, O_TIMEOUT}, {"warmup", required_argument, 0, O_WARMUP},
    {"preload", no_argument, 0, O_PRELOAD}, {"flush", no_argument, 0, O_FLUSH},
    {"conn-init", required_argument, 0, O_CONN_INIT},
    {"ratio", required_argument, 0, O_RATIO}, {"command", required_argument, 0, O_COMMAND},
    {"command-inline", no_argument, 0, O_COMMAND_INLINE}, {"incr", no_argument, 0, O_INCR},
    {"multi-get", required_argument, 0, O_MGET}, {"data-size", required_argument, 0, 'd'},
    {"data-size-range", required_argument, 0, O_RANGE},
    {"data-size-list", required_argument, 0, O_LIST}, {"data-record", no_argument, 0, O_RECORD},
    {"expiry", required_argument, 0, O_EXPIRY}, {"key-pattern", required_argument, 0, O_KPAT},
    {"key-minimum", required_argument, 0, O_KMIN}, {"key-maximum", required_argument, 0, O_KMAX},
    {"key-prefix", required_argument, 0, O_KPREFIX}, {"key-zipf-exp", required_argument, 0, O_ZIPF},
    {"key-stddev", required_argument, 0, O_STDDEV}, {"key-median", required_argument, 0, O_MEDIAN},
    {"seed", required_argument, 0, O_SEED}, {"preset", required_argument, 0, O_PRESET},
    {"scale", required_argument, 0, O_SCALE}, {"tests", required_argument, 0, O_TESTS},
    {"decimal-point", no_argument, 0, O_DECIMAL}, {"json", required_argument, 0, O_JSON},
    {"html", required_argument, 0, O_HTML}, {"no-progress", no_argument, 0, O_NOPROGRESS},
    {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, O_VERSION}, {0, 0, 0, 0}};

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "twinbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see twinbench --help)\n");
    exit(1);
}

static unsigned long long parse_u(const char *s, const char *flag)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') die("bad number for %s", flag);
    return v;
}

static double parse_d(const char *s, const char *flag)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || v < 0) die("bad number for %s", flag);
    return v;
}

static void describe(struct sbuf *o, const struct config *cfg)
{
    const struct workload *w = &cfg->wl;
    if (cfg->preset) {
        sbuf_printf(o, "preset: %s, scale %g (the preset sets connections, requests, sizes and "
                       "ratio; see each run's row)\n", cfg->preset, cfg->scale);
        for (int t = 0; t < cfg->ntargets; t++)
            sbuf_printf(o, "target %s: %s\n", cfg->targets[t].name, cfg->targets[t].url);
        sbuf_printf(o, "client threads: %u (at most one per connection)\n",
                    (cfg->set_flags & SET_THREADS) ? cfg->threads : (uint32_t)cfg->ncpu);
        sbuf_printf(o, "client socket I/O: %s\n", cfg->no_uring ? "a read and a write system call per socket"
                                                                 : "io_uring, one submission per loop turn for reads and one for writes");
        return;
    }
    sbuf_printf(o, "threads: %u, clients per thread: %u, pipeline: %u%s\n", cfg->threads, cfg->clients,
                cfg->pipeline, cfg->pipeline_batch ? " (batches, as redis-benchmark -P)" : "");
    sbuf_printf(o, "client socket I/O: %s\n", cfg->no_uring ? "a read and a write system call per socket"
                                                             : "io_uring, one submission per loop turn for reads and one for writes");
    if (cfg->test_time > 0) sbuf_printf(o, "test time: %g s\n", cfg->test_time);
    else sbuf_printf(o, "requests per client: %llu\n", (unsigned long long)cfg->requests);
    if (cfg->rate > 0) sbuf_printf(o, "open loop: %g requests/s, %s arrivals\n", cfg->rate, cfg->poisson ? "poisson" : "uniform");
    else sbuf_printf(o, "closed loop\n");
    static const char *modes[] = {"set/get", "incr", "multi-get", "command"};
    sbuf_printf(o, "workload: %s", modes[w->mode]);
    if (w->mode == WL_MIXED) sbuf_printf(o, " ratio %u:%u (SET:GET)", w->ratio_set, w->ratio_get);
    if (w->mode == WL_MGET) sbuf_printf(o, " %u keys", w->mget_keys);
    if (w->mode == WL_CMD) sbuf_printf(o, " '%s'", w->cmd_text);
    sbuf_printf(o, "\nkeys: %s%llu..%s%llu pattern %c", w->key_prefix, (unsigned long long)w->key_min,
                w->key_prefix, (unsigned long long)w->key_max, (char)w->pattern);
    if (w->pattern == KEY_ZIPF) sbuf_printf(o, " exponent %g", w->zipf_exp);
    switch (w->size_kind) {
    case SIZE_FIXED: sbuf_printf(o, "\nvalues: %u bytes\n", w->size); break;
    case SIZE_RANGE: sbuf_printf(o, "\nvalues: %u..%u bytes uniform\n", w->size_min, w->size_max); break;
    case SIZE_LIST: sbuf_printf(o, "\nvalues: list of %u sizes\n", w->nlist); break;
    case SIZE_RECORD: sbuf_printf(o, "\nvalues: seed-000 records %u..%u bytes\n", w->size_min, w->size_max); break;
    }
    if (cfg->preload) sbuf_printf(o, "preload: yes\n");
    if (cfg->warmup > 0) sbuf_printf(o, "warm-up: %g s\n", cfg->warmup);
    if (cfg->timeout_ms > 0) sbuf_printf(o, "request timeout: %g ms\n", cfg->timeout_ms);
    for (int t = 0; t < cfg->ntargets; t++)
        sbuf_printf(o, "target %s: %s\n", cfg->targets[t].name, cfg->targets[t].url);
}

static int generic_run(struct report *rep, const struct config *cfg)
{
    wl_values_setup(wl_max_size(&cfg->wl));
    int failed = 0;
    for (int t = 0; t < cfg->ntargets; t++) {
        const struct target *tg = &cfg->targets[t];
        if (cfg->flush) target_flush(tg);
        if (cfg->preload && bench_preload(rep, cfg, t, &cfg->wl)) { failed = 1; continue; }
        uint32_t conns = cfg->threads * cfg->clients;
        if (cfg->warmup > 0) {
            struct bench_run *w = bench_run_one(rep, cfg, t, &cfg->wl, "warm-up", "main", conns,
                                                cfg->threads, cfg->pipeline, 0, 0, cfg->warmup, 1, 0);
            if (w) report_run_line(rep, w);
        }
        struct bench_run *b = bench_run_one(rep, cfg, t, &cfg->wl, "main", "main", conns, cfg->threads,
                                            cfg->pipeline, cfg->test_time > 0 ? 0 : cfg->requests,
                                            0, cfg->test_time, 0, 1);
        if (!b) { failed = 1; continue; }
        report_run_line(rep, b);
    }
    report_summary(rep);
    for (int i = 0; i < rep->nruns; i++) {
        const struct bench_run *b = rep->runs[i];
        if (b->warmup) continue;
        const struct run_result *x = &b->r;
        rep_out(rep, "%s: twinbench used %.3f CPU-s for %llu requests (%.0f requests per CPU-second)",
                rep->targets[b->target].name, x->client_cpu_s, (unsigned long long)x->ops,
                x->client_cpu_s > 0 ? (double)x->ops / x->client_cpu_s : 0.0);
        if (x->server_cpu_s >= 0 && x->ops)
            rep_out(rep, "; server CPU %.3f s = %.2f us per request", x->server_cpu_s,
                    x->server_cpu_s * 1e6 / (double)x->ops);
        rep_out(rep, "\n");
    }
    return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
    static struct config cfg;
    const char *server = "127.0.0.1", *port = NULL, *protocol = "redis";
    const char *target_specs[MAX_TARGETS];
    const char *pid_specs[MAX_TARGETS];
    const char *print_shard = NULL;
    int ntspecs = 0, npids = 0;
    cfg.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cfg.ncpu < 1) cfg.ncpu = 1;
    cfg.threads = (uint32_t)cfg.ncpu;
    cfg.clients = 50;
    cfg.pipeline = 1;
    cfg.requests = 10000;
    cfg.poisson = 1;
    cfg.scale = 1;
    cfg.seed = 1;
    cfg.progress = 1;
    cfg.layout = KETAMA_LIBMEMCACHED;
    workload_defaults(&cfg.wl);
    const char *command = NULL;
    int command_inline = 0;

    int c;
    while ((c = getopt_long(argc, argv, "s:p:P:t:c:n:d:h", longopts, NULL)) != -1) {
        switch (c) {
        case 's': server = optarg; break;
        case 'p': port = optarg; break;
        case 'P':
            if (!strcmp(optarg, "redis") || !strcmp(optarg, "resp")) protocol = "redis";
            else if (!strcmp(optarg, "memcache-binary") || !strcmp(optarg, "mcbin"))
                protocol = "memcache-binary";
            else if (!strncmp(optarg, "memcache", 8)) protocol = "memcache";
            else die("unknown protocol '%s' (redis, memcache or memcache-binary)", optarg);
            break;
        case O_TARGET:
            if (ntspecs == MAX_TARGETS) die("too many targets%s", "");
            target_specs[ntspecs++] = optarg;
            break;
        case O_KETAMA: {
            int l = ketama_layout_parse(optarg);
            if (l < 0) die("unknown ketama layout '%s'", optarg);
            cfg.layout = (enum ketama_layout)l;
            break;
        }
        case O_SERVER_PID:
            if (npids == MAX_TARGETS) die("too many --server-pid%s", "");
            pid_specs[npids++] = optarg;
            break;
        case O_PRINT_SHARD: print_shard = optarg; break;
        case 't': cfg.threads = (uint32_t)parse_u(optarg, "--threads"); cfg.set_flags |= SET_THREADS; break;
        case 'c': cfg.clients = (uint32_t)parse_u(optarg, "--clients"); cfg.set_flags |= SET_CLIENTS; break;
        case O_PIPELINE: cfg.pipeline = (uint32_t)parse_u(optarg, "--pipeline"); cfg.set_flags |= SET_PIPELINE; break;
        case O_PIPELINE_BATCH: cfg.pipeline_batch = 1; break;
        case O_IO_URING:
            if (!strcmp(optarg, "yes")) cfg.no_uring = 0;
            else if (!strcmp(optarg, "no")) cfg.no_uring = 1;
            else die("--io-uring wants yes or no, not '%s'", optarg);
            break;
        case 'n': cfg.requests = parse_u(optarg, "--requests"); cfg.set_flags |= SET_REQUESTS; break;
        case O_TEST_TIME: cfg.test_time = parse_d(optarg, "--test-time"); break;
        case O_RATE: cfg.rate = parse_d(optarg, "--rate"); break;
        case O_ARRIVALS:
            if (!strcmp(optarg, "poisson")) cfg.poisson = 1;
            else if (!strcmp(optarg, "uniform")) cfg.poisson = 0;
            else die("--arrivals: poisson or uniform, not '%s'", optarg);
            break;
        case O_TIMEOUT: cfg.timeout_ms = parse_d(optarg, "--timeout"); break;
        case O_WARMUP: cfg.warmup = parse_d(optarg, "--warmup"); break;
        case O_PRELOAD: cfg.preload = 1; break;
        case O_FLUSH: cfg.flush = 1; break;
        case O_CONN_INIT: cfg.conn_init = optarg; break;
        case O_RATIO: {
            unsigned a, b;
            if (sscanf(optarg, "%u:%u", &a, &b) != 2 || a + b == 0) die("--ratio wants SET:GET, not '%s'", optarg);
            cfg.wl.ratio_set = a;
            cfg.wl.ratio_get = b;
            cfg.set_flags |= SET_RATIO;
            break;
        }
        case O_COMMAND: command = optarg; break;
        case O_COMMAND_INLINE: command_inline = 1; break;
        case O_INCR: cfg.wl.mode = WL_INCR; break;
        case O_MGET: cfg.wl.mode = WL_MGET; cfg.wl.mget_keys = (uint32_t)parse_u(optarg, "--multi-get"); break;
        case 'd':
            cfg.wl.size_kind = SIZE_FIXED;
            cfg.wl.size = (uint32_t)parse_u(optarg, "--data-size");
            cfg.set_flags |= SET_SIZE;
            break;
        case O_RANGE: {
            unsigned a, b;
            if (sscanf(optarg, "%u-%u", &a, &b) != 2 || a > b) die("--data-size-range wants MIN-MAX, not '%s'", optarg);
            cfg.wl.size_kind = SIZE_RANGE;
            cfg.wl.size_min = a;
            cfg.wl.size_max = b;
            cfg.set_flags |= SET_SIZE;
            break;
        }
        case O_LIST: {
            char buf[512];
            snprintf(buf, sizeof(buf), "%s", optarg);
            char *save = NULL;
            cfg.wl.nlist = 0;
            for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                unsigned s, w;
                if (sscanf(tok, "%u:%u", &s, &w) != 2 || cfg.wl.nlist == 16) die("--data-size-list wants SIZE:WEIGHT,..., not '%s'", optarg);
                cfg.wl.list_sizes[cfg.wl.nlist] = s;
                cfg.wl.list_weights[cfg.wl.nlist++] = w;
            }
            cfg.wl.size_kind = SIZE_LIST;
            cfg.set_flags |= SET_SIZE;
            break;
        }
        case O_RECORD:
            cfg.wl.size_kind = SIZE_RECORD;
            cfg.wl.size_min = 98;
            cfg.wl.size_max = 448;
            cfg.set_flags |= SET_SIZE;
            break;
        case O_EXPIRY: cfg.wl.expiry = (uint32_t)parse_u(optarg, "--expiry"); break;
        case O_KPAT:
            if (!strchr("SRGZ", optarg[0]) || !optarg[0]) die("--key-pattern: S, R, G or Z, not '%s'", optarg);
            cfg.wl.pattern = (enum key_pattern)optarg[0];
            cfg.set_flags |= SET_PATTERN;
            break;
        case O_KMIN: cfg.wl.key_min = parse_u(optarg, "--key-minimum"); cfg.set_flags |= SET_KEYMAX; break;
        case O_KMAX: cfg.wl.key_max = parse_u(optarg, "--key-maximum"); cfg.set_flags |= SET_KEYMAX; break;
        case O_KPREFIX: snprintf(cfg.wl.key_prefix, sizeof(cfg.wl.key_prefix), "%s", optarg); break;
        case O_ZIPF: cfg.wl.zipf_exp = parse_d(optarg, "--key-zipf-exp"); break;
        case O_STDDEV: cfg.wl.key_stddev = parse_d(optarg, "--key-stddev"); break;
        case O_MEDIAN: cfg.wl.key_median = parse_d(optarg, "--key-median"); break;
        case O_SEED: cfg.seed = parse_u(optarg, "--seed"); break;
        case O_PRELOAD_PIPELINE: cfg.preload_pipeline = (uint32_t)parse_u(optarg, "--preload-pipeline"); break;
        case O_PRESET: cfg.preset = optarg; break;
        case O_SCALE: cfg.scale = parse_d(optarg, "--scale"); break;
        case O_TESTS: cfg.tests = optarg; break;
        case O_DECIMAL: cfg.decimal_point = 1; break;
        case O_JSON: cfg.json_path = optarg; break;
        case O_HTML: cfg.html_path = optarg; break;
        case O_NOPROGRESS: cfg.progress = 0; break;
        case O_VERSION: printf("twinbench 0.1\n"); return 0;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs("(see twinbench --help)\n", stderr); return 1;
        }
    }
    if (optind < argc) die("unexpected argument '%s'", argv[optind]);
    if (cfg.threads < 1 || cfg.clients < 1 || cfg.pipeline < 1) die("threads, clients and pipeline must be >= 1%s", "");
    if (cfg.pipeline > 65535) die("pipeline too deep%s", "");
    if (cfg.wl.key_max < cfg.wl.key_min) die("--key-maximum is below --key-minimum%s", "");
    if (cfg.scale <= 0) die("--scale must be > 0%s", "");
    if (cfg.test_time > 0 && !(cfg.set_flags & SET_REQUESTS)) cfg.requests = 0;
    if (cfg.requests == 0 && cfg.test_time <= 0) die("give --requests or --test-time%s", "");
    if (command) {
        char err[128];
        cfg.wl.mode = WL_CMD;
        if (tpl_parse(&cfg.wl.tpl, command, err, sizeof(err))) die("--command: %s", err);
        cfg.wl.tpl.inline_cmd = command_inline;
        snprintf(cfg.wl.cmd_text, sizeof(cfg.wl.cmd_text), "%s", command);
        cfg.wl.rand_max = cfg.wl.key_max;
    }

    char err[256];
    if (ntspecs == 0) {
        char spec[600];
        snprintf(spec, sizeof(spec), "%s=%s://%s:%s", protocol, protocol, server,
                 port ? port : (!strcmp(protocol, "redis") ? "6379" : "11211"));
        if (target_parse(&cfg.targets[0], spec, cfg.layout, err, sizeof(err))) die("%s", err);
        snprintf(cfg.targets[0].name, sizeof(cfg.targets[0].name), "%s", protocol);
        cfg.ntargets = 1;
    }
    for (int i = 0; i < ntspecs; i++) {
        if (target_parse(&cfg.targets[i], target_specs[i], cfg.layout, err, sizeof(err))) die("%s", err);
        cfg.ntargets++;
    }
    for (int i = 0; i < npids; i++) {
        const char *eq = strchr(pid_specs[i], '=');
        if (!eq) die("--server-pid wants NAME=PID, not '%s'", pid_specs[i]);
        int found = 0;
        for (int t = 0; t < cfg.ntargets; t++) {
            struct target *tg = &cfg.targets[t];
            if (strlen(tg->name) != (size_t)(eq - pid_specs[i]) || strncmp(tg->name, pid_specs[i], (size_t)(eq - pid_specs[i])))
                continue;
            found = 1;
            char buf[256];
            snprintf(buf, sizeof(buf), "%s", eq + 1);
            char *save = NULL;
            for (char *tok = strtok_r(buf, ",", &save); tok && tg->npids < TARGET_MAX_HOSTS; tok = strtok_r(NULL, ",", &save))
                tg->pids[tg->npids++] = (int)parse_u(tok, "--server-pid");
        }
        if (!found) die("--server-pid: no target named like '%s'", pid_specs[i]);
    }
    if (print_shard) {
        /* KEY, or "-" for keys on stdin (one per line): "target host-index host key" */
        char line[4096];
        int from_stdin = !strcmp(print_shard, "-");
        while (from_stdin ? fgets(line, sizeof(line), stdin) != NULL : print_shard != NULL) {
            const char *key = from_stdin ? line : print_shard;
            if (from_stdin) line[strcspn(line, "\r\n")] = 0;
            for (int t = 0; t < cfg.ntargets; t++) {
                const struct target *tg = &cfg.targets[t];
                uint32_t h = tg->nhosts > 1 ? ketama_pick(&tg->ring, key, strlen(key)) : 0;
                printf("%s %u %s %s\n", tg->name, h, tg->hosts[h], key);
            }
            if (!from_stdin) print_shard = NULL;
        }
        return 0;
    }

    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    struct report rep;
    report_init(&rep, cfg.targets, cfg.ntargets);
    rep.preset = cfg.preset;
    rep.scale = cfg.scale;
    rep.decimal_comma = !cfg.decimal_point;
    for (int i = 0; i < argc; i++) {
        if (i) sbuf_adds(&rep.cmdline, " ");
        sbuf_adds(&rep.cmdline, argv[i]);
    }
    describe(&rep.settings, &cfg);
    for (int t = 0; t < cfg.ntargets; t++)
        if (target_fetch_info(&cfg.targets[t], &rep.info[t]))
            fprintf(stderr, "twinbench: %s: cannot reach %s\n", cfg.targets[t].name, cfg.targets[t].hosts[0]);
    int rc;
    if (cfg.preset) {
        for (int t = 0; t < cfg.ntargets && cfg.flush; t++) target_flush(&cfg.targets[t]);
        rc = preset_run(&rep, &cfg);
    } else {
        rc = generic_run(&rep, &cfg);
    }
    if (cfg.json_path && report_json(&rep, cfg.json_path)) rc = -1;
    if (cfg.html_path && report_html(&rep, cfg.html_path)) rc = -1;
    int nok = 0;
    for (int i = 0; i < rep.nruns; i++) if (!rep.runs[i]->warmup) nok++;
    report_deinit(&rep);
    for (int t = 0; t < cfg.ntargets; t++) ketama_deinit(&cfg.targets[t].ring);
    tpl_deinit(&cfg.wl.tpl);
    return rc || !nok ? 1 : 0;
}
