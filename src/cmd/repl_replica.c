/* Replication, the replica's side (repl.h): REPLICAOF / SLAVEOF and the link thread. The
 * link is one thread with a blocking socket: it connects, runs the handshake (PING, AUTH,
 * REPLCONF listening-port / ip-address / capa eof psync2, PSYNC), receives a full sync's RDB
 * into a file and loads it with every stripe held, then applies the stream command by command
 * on a connection of no worker (as the AOF is replayed at start-up), answering GETACK and
 * acknowledging its offset every second. Each applied command's bytes go to this server's own
 * stream unchanged (repl_feed_raw), so a sub-replica, or this server once promoted, goes on with
 * the same replication ID and offsets. A broken or malformed stream drops the link; the next
 * attempt asks to continue from the last command applied whole. */
#define _GNU_SOURCE
#include "cmd/repl.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd/blocking.h"
#include "cmd/cmd.h"
#include "cmd/propagate.h"
#include "cmd/repl_parse.h"
#include "cmd/tracking.h"
#include "core/log.h"
#include "core/oom.h"
#include "core/util.h"
#include "persist/persist.h"
#include "net/tls.h"
#include "persist/rdb.h"
#include "store/store.h"

/* CONNECTING: the TCP connect; HANDSHAKE: PING ... PSYNC's reply (ROLE "handshake"). */
enum { LS_NONE = 0, LS_CONNECT, LS_CONNECTING, LS_HANDSHAKE, LS_SYNC, LS_CONNECTED };


static struct {
    pthread_mutex_t lock;     /* the fields below (a leaf) */
    char host[256];
    int port;
    _Atomic uint64_t gen;     /* bumped to end the running link thread */
    int state;
    int fd;                   /* the link's socket, -1: none (shutdown() ends a blocking read) */
    _Atomic int64_t last_io_ms;
    int64_t down_since_ms;
    uint64_t read_off;        /* slave_read_repl_offset */
    long long sync_total, sync_read;
    pthread_mutex_t apply;    /* held while a link thread changes the data or the stream */
} L = {.lock = PTHREAD_MUTEX_INITIALIZER, .apply = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

/* FAILOVER's state (under L.lock): the primary pauses writes, waits for a replica to have
 * the whole stream, then follows it, asking it with PSYNC ... FAILOVER to become the primary. */
enum { FO_NONE = 0, FO_WAITING, FO_IN_PROGRESS };
static struct {
    int state;
    char host[256]; /* TO host port, "" any */
    int port;
    int force;
    int64_t deadline;     /* TIMEOUT, 0 none */
    int64_t started;      /* when in progress began */
    int64_t pause_end;    /* the cmd_pause_end it set */
} F;

static _Atomic int link_threads; /* link threads running (the old one may still end) */
static int link_db; /* the stream's database after the last batch (under L.apply); a new
                     * link continues in it (set from the RDB's repl-stream-db at start) */

static int stopped(uint64_t gen);

/* The link thread of generation gen: its state, unless it was stopped (a newer link owns L
 * then, and an old thread on its way out must not touch it). */
static void set_state(uint64_t gen, int st)
{
    pthread_mutex_lock(&L.lock);
    if (stopped(gen)) {
        pthread_mutex_unlock(&L.lock);
        return;
    }
    L.state = st;
    if (st != LS_CONNECTED && !L.down_since_ms)
        L.down_since_ms = util_now_ms();
    if (st == LS_CONNECTED)
        L.down_since_ms = 0;
    pthread_mutex_unlock(&L.lock);
}

int repl_link_up(void)
{
    pthread_mutex_lock(&L.lock);
    int up = L.state == LS_CONNECTED;
    pthread_mutex_unlock(&L.lock);
    return up;
}

static void addr_text(int fd, int peer, char *out, size_t cap)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;

    out[0] = 0;
    if ((peer ? getpeername(fd, (struct sockaddr *)&ss, &sl)
              : getsockname(fd, (struct sockaddr *)&ss, &sl)) < 0)
        return;
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
        port = ntohs(a->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
        port = ntohs(a->sin6_port);
    }
    snprintf(out, cap, "%s:%d", host, port);
}

int repl_link_kill(const char *addr, const char *laddr)
{
    char a[128], la[128];
    int killed = 0;

    pthread_mutex_lock(&L.lock);
    if (L.state == LS_CONNECTED && L.fd >= 0) {
        addr_text(L.fd, 1, a, sizeof(a));
        addr_text(L.fd, 0, la, sizeof(la));
        if ((!addr[0] || !strcmp(addr, a)) && (!laddr[0] || !strcmp(laddr, la))) {
            shutdown(L.fd, SHUT_RDWR); /* the link thread sees it and reconnects */
            killed = 1;
        }
    }
    pthread_mutex_unlock(&L.lock);
    return killed;
}

static int stopped(uint64_t gen)
{
    return atomic_load(&L.gen) != gen;
}

/* ---- socket helpers (blocking, with a timeout) ---- */

/* bind-source-addr: bind fd (family fam) to that address before connecting, as Redis's
 * anetTcpGenericConnect with a source address. 0, or -1 (logged) when it cannot be. */
static int bind_source(int fd, int fam)
{
    struct addrinfo hints = {.ai_family = fam, .ai_socktype = SOCK_STREAM}, *res, *ai;
    char src[sizeof(cfg.bind_source_addr)];
    int r;

    config_str(cfg.bind_source_addr, src, sizeof(src));
    if (!src[0])
        return 0;
    if ((r = getaddrinfo(src, NULL, &hints, &res))) {
        log_warn("Unable to connect to MASTER: %s", gai_strerror(r));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next)
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
    if (!ai)
        log_warn("Unable to connect to MASTER: bind: %s", strerror(errno));
    freeaddrinfo(res);
    return ai ? 0 : -1;
}

static int connect_to(const char *host, int port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    char ps[16];
    int fd = -1;

    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &res))
        return -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        if (bind_source(fd, ai->ai_family)) {
            close(fd);
            fd = -1;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (errno == EINPROGRESS) {
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            int err = 0;
            socklen_t el = sizeof(err);
            if (poll(&pf, 1, 5000) == 1 && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) &&
                !err)
                break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        int one = 1;
        if (!cfg.repl_disable_tcp_nodelay)
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

/* The link's TLS session (tls-replication), NULL for a plain socket: the link thread's. */
static _Thread_local void *lssl;

_Atomic uint64_t repl_link_net_in;

static ssize_t lread(int fd, void *b, size_t n)
{
    ssize_t r = lssl ? tls_client_read(lssl, b, n) : read(fd, b, n);
    if (r > 0)
        atomic_fetch_add_explicit(&repl_link_net_in, (uint64_t)r, memory_order_relaxed);
    return r;
}

static int lwrite(int fd, const void *p, size_t n, int tmo)
{
    return lssl ? tls_client_write(lssl, p, n) : sock_write_all(fd, p, n, tmo);
}

/* Wait until fd is readable: 1, 0 on timeout, -1 on error. */
static int wait_read(int fd, int ms)
{
    if (lssl && tls_client_pending(lssl))
        return 1;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int k = poll(&pf, 1, ms);
    if (k < 0 && errno == EINTR)
        return 0;
    return k;
}

/* One line ("\r\n" stripped) read byte by byte (nothing after it is consumed). 0, -1, or
 * -2 when nothing came for tmo_ms. */
static int read_line(int fd, char *out, size_t cap, int tmo_ms)
{
    size_t n = 0;
    for (;;) {
        char ch;
        int k = wait_read(fd, tmo_ms);
        if (k == 0)
            return -2;
        if (k < 0)
            return -1;
        ssize_t r = lread(fd, &ch, 1);
        if (r <= 0)
            return -1;
        L.last_io_ms = util_now_ms();
        if (ch == '\n') {
            if (n && out[n - 1] == '\r')
                n--;
            out[n] = 0;
            return 0;
        }
        if (n + 1 < cap)
            out[n++] = ch;
    }
}

/* Send a command; lens NULL: the arguments are C strings (else binary, lens[i] bytes). */
static int send_cmd(int fd, int argc, const char **argv, const size_t *lens)
{
    char buf[2048];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "*%d\r\n", argc);
    for (int i = 0; i < argc && n < sizeof(buf); i++) {
        size_t len = lens ? lens[i] : strlen(argv[i]);
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "$%zu\r\n", len);
        if (n + len + 2 > sizeof(buf))
            return -1;
        memcpy(buf + n, argv[i], len);
        memcpy(buf + n + len, "\r\n", 2);
        n += len + 2;
    }
    if (n >= sizeof(buf))
        return -1;
    return lwrite(fd, buf, n, cfg.repl_timeout * 1000);
}

/* Send a command (lens as send_cmd's) and read its one-line reply into out. */
static int exchange_n(int fd, int argc, const char **argv, const size_t *lens, char *out,
                      size_t cap)
{
    if (send_cmd(fd, argc, argv, lens))
        return -1;
    do {
        int rc = read_line(fd, out, cap, cfg.repl_timeout * 1000);
        if (rc == -2)
            log_warn("Timeout connecting to the MASTER...");
        if (rc)
            return -1;
    } while (!out[0]); /* newlines: a primary's keep-alive */
    return 0;
}

static int exchange(int fd, int argc, const char **argv, char *out, size_t cap)
{
    return exchange_n(fd, argc, argv, NULL, out, cap);
}

/* masterauth as CONFIG SET gave it, every byte (a NUL included); until then the
 * configuration's C string. Under mauth_lock. */
static pthread_mutex_t mauth_lock = PTHREAD_MUTEX_INITIALIZER;
static char mauth[sizeof(cfg.masterauth)];
static size_t mauth_n;
static int mauth_set;

void repl_masterauth_set(const char *p, size_t n)
{
    pthread_mutex_lock(&mauth_lock);
    if (n > sizeof(mauth))
        n = sizeof(mauth);
    memcpy(mauth, p, n);
    mauth_n = n;
    mauth_set = 1;
    pthread_mutex_unlock(&mauth_lock);
}

static size_t masterauth_get(char *out, size_t cap)
{
    size_t n;

    pthread_mutex_lock(&mauth_lock);
    if (mauth_set) {
        n = mauth_n < cap ? mauth_n : cap;
        memcpy(out, mauth, n);
        pthread_mutex_unlock(&mauth_lock);
        return n;
    }
    pthread_mutex_unlock(&mauth_lock);
    config_str(cfg.masterauth, out, cap);
    return strlen(out);
}

static void failover_end(int ok, const char *why);

/* ---- the handshake ---- */

/* 1 full sync (id, *off: the primary's), 0 continue (id: maybe a new ID), -1 failed. */
static int handshake(int fd, char id[41], uint64_t *off)
{
    char line[512], portnum[16], myid[41], offnum[32];
    uint64_t myoff;

    if (exchange(fd, 1, (const char *[]){"PING"}, line, sizeof(line)))
        return -1;
    if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
        strncmp(line, "-ERR operation not permitted", 28)) {
        log_warn("Error reply to PING from master: '%s'", line);
        return -1;
    }
    char auth[sizeof(cfg.masterauth)], user[128];
    size_t authn = masterauth_get(auth, sizeof(auth));
    config_str(cfg.masteruser, user, sizeof(user));
    if (authn) {
        int r = user[0] ? exchange_n(fd, 3, (const char *[]){"AUTH", user, auth},
                                     (const size_t[]){4, strlen(user), authn}, line, sizeof(line))
                        : exchange_n(fd, 2, (const char *[]){"AUTH", auth},
                                     (const size_t[]){4, authn}, line, sizeof(line));
        if (r || line[0] == '-') {
            log_warn("Unable to AUTH to MASTER: %s", r ? "no reply" : line);
            return -1;
        }
    }
    snprintf(portnum, sizeof(portnum), "%d",
             cfg.replica_announce_port ? cfg.replica_announce_port : cfg.port);
    if (exchange(fd, 3, (const char *[]){"REPLCONF", "listening-port", portnum}, line,
                 sizeof(line)))
        return -1;
    char aip[64];
    config_str(cfg.replica_announce_ip, aip, sizeof(aip));
    if (aip[0] &&
        exchange(fd, 3, (const char *[]){"REPLCONF", "ip-address", aip}, line, sizeof(line)))
        return -1;
    if (exchange(fd, 5, (const char *[]){"REPLCONF", "capa", "eof", "capa", "psync2"}, line,
                 sizeof(line)))
        return -1;
    /* a link stopped for this one finishes the command it is in (it looks at its generation
     * before each): then the offset asked for is the data's */
    pthread_mutex_lock(&L.apply);
    pthread_mutex_unlock(&L.apply);
    repl_get_id(myid, &myoff);
    int have = atomic_load(&repl_on); /* a backlog: this data has an ID and an offset */
    snprintf(offnum, sizeof(offnum), "%llu", (unsigned long long)(myoff + 1));
    pthread_mutex_lock(&L.lock);
    int fo = F.state == FO_IN_PROGRESS;
    pthread_mutex_unlock(&L.lock);
    if (fo) {
        if (exchange(fd, 4, (const char *[]){"PSYNC", myid, offnum, "FAILOVER"}, line,
                     sizeof(line)))
            return -1;
        if (line[0] == '-') {
            failover_end(0, "Failover target rejected psync request");
            return -1;
        }
    } else if (exchange(fd, 3,
                        (const char *[]){"PSYNC", have ? myid : "?", have ? offnum : "-1"},
                        line, sizeof(line))) {
        return -1;
    }
    if (!strncmp(line, "+FULLRESYNC ", 12)) {
        unsigned long long o;
        char nid[64];
        if (sscanf(line + 12, "%63s %llu", nid, &o) != 2 || strlen(nid) != 40) {
            log_warn("Master replied with wrong +FULLRESYNC syntax.");
            return -1;
        }
        memcpy(id, nid, 41);
        *off = o;
        log_notice("Full resync from master: %s:%llu", id, o);
        if (fo)
            failover_end(1, NULL); /* not expected, but the target took over */
        return 1;
    }
    if (!strncmp(line, "+CONTINUE", 9)) {
        if (fo)
            failover_end(1, NULL);
        const char *p = line + 9;
        while (*p == ' ')
            p++;
        if (strlen(p) == 40)
            memcpy(id, p, 41);
        else
            memcpy(id, myid, 41);
        *off = myoff;
        log_notice("Successful partial resynchronization with master.");
        return 0;
    }
    log_warn("Unexpected reply to PSYNC from master: %s", line);
    return -1;
}

/* ---- the RDB of a full sync ---- */

#define RDB_WRITEBACK_STEP (8LL << 20) /* bytes received between writeback starts */

/* rdb-del-sync-files: a replica without persistence (no save points, appendonly no) keeps no
 * copy of the RDB file its primary sent once it is loaded or failed to (Redis: the end of
 * readSyncBulkPayload). */
static void del_sync_file(const char *path)
{
    if (!cfg.rdb_del_sync_files || !config_str_empty(cfg.save) || cfg.appendonly)
        return;
    log_notice("Removing the RDB file obtained from the master. This replica has persistence "
               "disabled");
    unlink(path);
}

/* The full sync's RDB from fd: to a temporary file renamed to dbfilename (0, path names it),
 * or, with repl-diskless-load on-empty-db or swapdb, to an anonymous memory file (*mem its
 * descriptor, path /proc/self/fd/N): as Redis loads such a transfer straight from the socket,
 * nothing of it reaches the disk and the old dbfilename stays. -1 on failure. */
static int receive_rdb(int fd, uint64_t gen, char *path, size_t cap, int *mem)
{
    char line[256], d[1024], f[256], tmp[1400];
    int diskless = __atomic_load_n(&cfg.repl_diskless_load, __ATOMIC_RELAXED) != 0;
    int tmo = cfg.repl_timeout * 1000;
    long long len = -1;
    char mark[41] = {0};

    do {
        if (read_line(fd, line, sizeof(line), tmo))
            return -1;
    } while (!line[0]);
    if (line[0] == '-') {
        log_warn("MASTER aborted replication with an error: %s", line + 1);
        return -1;
    }
    if (line[0] != '$') {
        log_warn("Bad protocol from MASTER, the first byte is not '$' (we received '%s'), are "
                 "you sure the host and port are right?", line);
        return -1;
    }
    if (!strncmp(line + 1, "EOF:", 4) && strlen(line + 5) == 40) {
        memcpy(mark, line + 5, 40);
    } else if (!util_str2ll(line + 1, strlen(line + 1), &len) || len < 0) {
        log_warn("Bad RDB length from MASTER: %s", line);
        return -1;
    }
    config_str(cfg.dir, d, sizeof(d));
    config_str(cfg.dbfilename, f, sizeof(f));
    snprintf(tmp, sizeof(tmp), "%s/temp-%lld.%d.rdb", d, (long long)util_now_ms(), (int)getpid());
    rdb_path(path, cap, d, f);
    *mem = -1;
    int out = diskless ? memfd_create("twincache-sync-rdb", MFD_CLOEXEC)
                       : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        log_warn("Opening the temp file needed for MASTER <-> REPLICA synchronization: %s",
                 strerror(errno));
        return -1;
    }
    if (mark[0])
        log_notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF %s",
                   diskless ? "to parser" : "to disk");
    else
        log_notice("MASTER <-> REPLICA sync: receiving %lld bytes from master %s", len,
                   diskless ? "to parser" : "to disk");
    pthread_mutex_lock(&L.lock);
    L.sync_total = len;
    L.sync_read = 0;
    pthread_mutex_unlock(&L.lock);
    static char buf[1 << 16];
    char tail[40];
    size_t tailn = 0;
    long long got = 0, flushed = 0; /* bytes received; file bytes handed to writeback */
    int rc = -1;
    for (;;) {
        if (stopped(gen))
            goto out;
        size_t want = sizeof(buf);
        if (len >= 0) {
            if (got == len)
                break;
            if ((long long)want > len - got)
                want = (size_t)(len - got);
        }
        int k = wait_read(fd, tmo);
        if (k <= 0) {
            log_warn("Timeout receiving bulk data from MASTER... If the problem persists try to "
                     "set the 'repl-timeout' parameter in redis.conf to a larger value.");
            goto out;
        }
        ssize_t r = lread(fd, buf, want);
        if (r <= 0) {
            log_warn("I/O error trying to sync with MASTER: %s",
                     r == 0 ? "connection lost" : strerror(errno));
            goto out;
        }
        L.last_io_ms = util_now_ms();
        got += r;
        pthread_mutex_lock(&L.lock);
        L.sync_read = got;
        pthread_mutex_unlock(&L.lock);
        if (mark[0]) {
            /* keep the last 40 bytes back: they may be the end mark */
            char both[40 + sizeof(buf)];
            memcpy(both, tail, tailn);
            memcpy(both + tailn, buf, (size_t)r);
            size_t all = tailn + (size_t)r;
            if (all >= 40 && !memcmp(both + all - 40, mark, 40)) {
                if (all > 40 && sock_write_all(out, both, all - 40, tmo))
                    goto out;
                break;
            }
            size_t keep = all < 40 ? all : 40;
            if (all > keep && sock_write_all(out, both, all - keep, tmo))
                goto out;
            memmove(tail, both + all - keep, keep);
            tailn = keep;
        } else if (sock_write_all(out, buf, (size_t)r, tmo)) {
            goto out;
        }
        long long written = got - (mark[0] ? (long long)tailn : 0); /* in the file */
        if (!diskless && written - flushed >= RDB_WRITEBACK_STEP) {
            /* start writing back what came so far, as Redis does, so the fsync at the end
             * has little left to wait for */
            sync_file_range(out, flushed, written - flushed, SYNC_FILE_RANGE_WRITE);
            flushed = written;
        }
    }
    if (!diskless && fsync(out) < 0)
        goto out;
    rc = 0;
out:
    if (diskless) {
        if (rc == 0) {
            *mem = out;
            snprintf(path, cap, "/proc/self/fd/%d", out);
        } else {
            close(out);
        }
        return rc;
    }
    close(out);
    if (rc == 0 && rename(tmp, path) < 0) {
        log_warn("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA "
                 "synchronization: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc)
        unlink(tmp);
    return rc;
}

/* ---- the stream ---- */

struct sbuf {
    char *p;
    size_t n, cap, pos;
};

static void send_ack(int fd, uint64_t off)
{
    char num[32];
    snprintf(num, sizeof(num), "%llu", (unsigned long long)off);
    send_cmd(fd, 3, (const char *[]){"REPLCONF", "ACK", num}, NULL);
}

/* Apply the stream until the link breaks or the thread is stopped. */

/* A batch of stream commands parsed ahead of running them: their keys are prefetched
 * together, so the cache misses of a batch overlap instead of coming one command at a time
 * (the primary's workers do the same for a pipelined batch), and each command is parsed once.
 * The arguments point into the link's buffer: a batch is used up before the next read. */
enum { AHEAD_CMDS = 32, AHEAD_ARGS = 1024 };
struct ahead {
    struct repl_args a; /* the arguments of every command of the batch */
    int n, next;        /* commands parsed, the next to run */
    int stop;           /* what the parse after the last one returned: 0 more needed, -1 bad */
    int argc[AHEAD_CMDS];
    int first[AHEAD_CMDS]; /* index of the command's first argument in a */
    size_t used[AHEAD_CMDS];
    signed char kx[AHEAD_CMDS]; /* index in key of the command's first key, -1 for none */
    struct skey key[AHEAD_CMDS]; /* hashed once here, for the prefetch and the command */
    const struct cmd *last; /* the entry of the last name looked up (streams repeat one) */
    char last_name[16];
    size_t last_len;
};

/* Parse the commands at p[pos..n) into h, at most AHEAD_CMDS (and about AHEAD_ARGS
 * arguments), and prefetch their first keys' table slots and items. */
static void ahead_fill(void *ctx, struct ahead *h, const char *p, size_t pos, size_t n)
{
    struct conn *c = ctx;
    struct store *s = conn_store(c);
    int nk = 0, db = c->db, base = 0;

    h->n = h->next = 0;
    h->stop = 0;
    while (h->n < AHEAD_CMDS && base < AHEAD_ARGS) {
        int argc;
        size_t used;
        int rc = repl_parse_at(p + pos, n - pos, cfg.proto_max_bulk_len, &h->a, base, &argc,
                               &used);
        if (rc <= 0) {
            h->stop = rc;
            break;
        }
        const char **av = h->a.argv + base;
        const size_t *al = h->a.lens + base;
        h->argc[h->n] = argc;
        h->first[h->n] = base;
        h->used[h->n] = used;
        h->kx[h->n] = -1;
        h->n++;
        pos += used;
        base += argc;
        if (argc < 2)
            continue;
        const struct cmd *cmd = h->last;
        if (!cmd || al[0] != h->last_len || memcmp(av[0], h->last_name, al[0])) {
            if (!(cmd = cmd_lookup(av[0], al[0])))
                continue;
            if (al[0] <= sizeof(h->last_name)) {
                h->last = cmd;
                h->last_len = al[0];
                memcpy(h->last_name, av[0], al[0]);
            }
        }
        if (cmd->first < 1 || cmd->first >= argc) {
            long long v;
            if (al[0] == 6 && util_eq_nocase(av[0], al[0], "select") &&
                util_str2ll(av[1], al[1], &v) && v >= 0 && v < s->ndb)
                db = (int)v;
            continue;
        }
        h->kx[h->n - 1] = (signed char)nk;
        store_key(s, &h->key[nk++], db, av[cmd->first], al[cmd->first]);
    }
    if (nk > 1)
        store_prefetch(s, h->key, nk);
}

/* Read what the primary sent into b (grown as needed). 0 when the link is gone. */
static int read_more(int fd, uint64_t gen, struct sbuf *b)
{
    if (b->cap - b->n < 16384) {
        size_t nc = b->cap ? b->cap * 2 : 65536;
        if (b->pos) { /* compact first */
            memmove(b->p, b->p + b->pos, b->n - b->pos);
            b->n -= b->pos;
            b->pos = 0;
        }
        if (b->cap - b->n < 16384) {
            /* no client-query-buffer-limit for the primary's stream, as Redis (each
             * argument is held to proto-max-bulk-len by the parse) */
            char *np = realloc(b->p, nc);
            if (!np)
                return 0;
            b->p = np;
            b->cap = nc;
        }
    }
    ssize_t r = lread(fd, b->p + b->n, b->cap - b->n);
    if (r <= 0)
        return 0;
    L.last_io_ms = util_now_ms();
    b->n += (size_t)r;
    pthread_mutex_lock(&L.lock);
    if (!stopped(gen))
        L.read_off += (uint64_t)r;
    pthread_mutex_unlock(&L.lock);
    return 1;
}

static void stream_loop(int fd, uint64_t gen, void *ctx)
{
    struct sbuf b = {0};
    struct ahead ah = {0};
    int64_t last_ack = 0;
    char id[41];
    uint64_t off;
    int held = 0; /* the next command waits for a CLIENT PAUSE to end */

    repl_get_id(id, &off);
    send_ack(fd, off);
    for (;;) {
        if (stopped(gen))
            break;
        int64_t now = util_now_ms();
        if (now - last_ack >= 1000) {
            repl_get_id(id, &off);
            send_ack(fd, off);
            last_ack = now;
        }
        if (now - L.last_io_ms > (int64_t)cfg.repl_timeout * 1000) {
            log_warn("MASTER timeout: no data nor PING received...");
            break;
        }
        int k = wait_read(fd, held ? 10 : 100);
        if (k < 0)
            break;
        if (k == 0 && !held)
            continue;
        if (k > 0 && !read_more(fd, gen, &b))
            break;
        int bad = 0;
        held = 0;
        size_t feed_from = b.pos; /* applied commands not yet passed on */
        int64_t now_ms = util_now_ms(), clk = -1;
        ah.n = ah.next = 0; /* the buffer moved: nothing parsed ahead is valid */
        pthread_mutex_lock(&L.apply);
        for (;;) {
            int argc = 0, rc = 1, kx = -1;
            size_t used = 0;
            const char **argv = NULL;
            const size_t *lens = NULL;
            if (stopped(gen))
                break;
            if (ah.next == ah.n)
                ahead_fill(ctx, &ah, b.p, b.pos, b.n);
            if (ah.next == ah.n) {
                rc = ah.stop;
            } else {
                argc = ah.argc[ah.next];
                argv = ah.a.argv + ah.first[ah.next];
                lens = ah.a.lens + ah.first[ah.next];
                used = ah.used[ah.next];
                kx = ah.kx[ah.next];
                ah.next++;
            }
            if (rc == 0)
                break;
            if (rc < 0) {
                bad = 1;
                break;
            }
            if (argc > 0 &&
                TC_UNLIKELY(atomic_load_explicit(&cmd_script_busy, memory_order_relaxed))) {
                /* a script is busy: the primary's stream is read on and waits (Redis's
                 * processInputBuffer stops at its master client), it is not answered -BUSY */
                held = 1;
                break;
            }
            if (argc >= 2 && lens[0] == 8 && lens[1] == 6 &&
                util_eq_nocase(argv[0], lens[0], "replconf") &&
                util_eq_nocase(argv[1], lens[1], "getack")) {
                if (b.pos > feed_from)
                    repl_feed_raw(b.p + feed_from, b.pos - feed_from);
                feed_from = b.pos;
                repl_get_id(id, &off);
                send_ack(fd, off); /* the offset before this command, as Redis */
            } else if (argc > 0 && TC_UNLIKELY(atomic_load_explicit(&cmd_pause_end,
                                                                     memory_order_relaxed)) &&
                       cmd_pause_holds_primary(argv[0], lens[0])) {
                /* CLIENT PAUSE holds the primary's writes as a client's (Redis's master
                 * client is postponed): read on, apply from here once the pause ends */
                held = 1;
                break;
            } else if (argc > 0) {
                /* an unknown command: Redis's replica answers the primary an error it
                 * discards; the stream goes on */
                repl_applying = 1;
                if (kx >= 0)
                    cmd_key_memo = ah.key[kx]; /* arg_key takes it when db and bytes match */
                cmd_aof_replay_batch(ctx, argc, argv, lens, now_ms, &clk);
                cmd_key_memo.p = NULL;
                repl_applying = 0;
            }
            b.pos += used;
        }
        int fed = b.pos > feed_from;
        if (fed)
            repl_feed_raw(b.p + feed_from, b.pos - feed_from);
        link_db = ((struct conn *)ctx)->db;
        pthread_mutex_unlock(&L.apply);
        if (fed)
            repl_wake_replicas();
        if (b.pos == b.n) {
            b.pos = b.n = 0;
            if (b.cap > (1u << 20)) {
                /* a big command's buffer goes once it is applied, as Redis frees a master
                 * client's large query buffer (the next read starts a small one) */
                free(b.p);
                b.p = NULL;
                b.cap = 0;
            }
        }
        if (bad) {
            log_warn("Protocol error in the primary's stream; dropping the link");
            break;
        }
    }
    free(b.p);
    repl_args_free(&ah.a);
}

/* ---- the thread ---- */

struct link_arg {
    uint64_t gen;
    char host[256];
    int port;
};

static void *link_main(void *arg)
{
    struct link_arg a = *(struct link_arg *)arg;
    void *ctx;

    free(arg);
    pthread_setname_np(pthread_self(), "tc-repl-link");
    ctx = cmd_aof_replay_open(repl_srv);
    if (!ctx) {
        atomic_fetch_sub(&link_threads, 1);
        return NULL;
    }
    ((struct conn *)ctx)->w->idx = -1; /* no worker: publishes and wake-ups go to all */
    /* the primary's commands see a key its TTL ended here as the primary did, live (as
     * Redis's master client): its INCR on it increments it, its DEL follows */
    store_no_expire = 1;
    while (!stopped(a.gen)) {
        set_state(a.gen, LS_CONNECT);
        log_notice("Connecting to MASTER %s:%d", a.host, a.port);
        set_state(a.gen, LS_CONNECTING);
        int fd = connect_to(a.host, a.port);
        if (fd < 0) {
            log_warn("Error condition on socket for SYNC: Connection refused");
            for (int i = 0; i < 10 && !stopped(a.gen); i++)
                usleep(100000);
            continue;
        }
        pthread_mutex_lock(&L.lock);
        if (stopped(a.gen)) {
            pthread_mutex_unlock(&L.lock);
            close(fd);
            break;
        }
        L.fd = fd;
        pthread_mutex_unlock(&L.lock);
        if (__atomic_load_n(&cfg.tls_replication, __ATOMIC_RELAXED)) {
            char err[300];
            lssl = tls_client_open(fd, cfg.repl_timeout * 1000, err, sizeof(err));
            if (!lssl) {
                log_warn("%s", err);
                pthread_mutex_lock(&L.lock);
                if (L.fd == fd)
                    L.fd = -1;
                pthread_mutex_unlock(&L.lock);
                close(fd);
                for (int i = 0; i < 10 && !stopped(a.gen); i++)
                    usleep(100000);
                continue;
            }
        }
        log_notice("MASTER <-> REPLICA sync started");
        set_state(a.gen, LS_HANDSHAKE);
        L.last_io_ms = util_now_ms();
        char id[41];
        uint64_t off = 0;
        int rc = handshake(fd, id, &off);
        if (rc == 1 && !stopped(a.gen)) {
            char path[2100];
            set_state(a.gen, LS_SYNC);
            int mem = -1;
            if (receive_rdb(fd, a.gen, path, sizeof(path), &mem) == 0 && !stopped(a.gen)) {
                char err[256];
                pthread_mutex_lock(&L.apply);
                if (stopped(a.gen)) {
                    pthread_mutex_unlock(&L.apply);
                    rc = -1;
                } else {
                    log_notice("MASTER <-> REPLICA sync: Flushing old data");
                    log_notice("MASTER <-> REPLICA sync: Loading DB in memory");
                    atomic_store(&repl_loading, 1);
                    repl_update_gate();
                    int sdb = 0;
                    int lrc = persist_load_replica(path, &sdb, err, sizeof(err));
                    atomic_store(&repl_loading, 0);
                    repl_update_gate();
                    if (lrc) {
                        log_warn("Failed trying to load the MASTER synchronization DB from "
                                 "%s: %s", mem >= 0 ? "socket" : "disk", err);
                        if (mem < 0)
                            del_sync_file(path);
                        rc = -1;
                    } else {
                        tracking_flush();
                        block_signal_flush(-1);
                        repl_set_id(id, off, 0);
                        repl_reset_backlog(off);
                        repl_drop_replicas(); /* sub-replicas resync from the new data */
                        /* the stream goes on in the database the copy was taken in (a
                         * replica relaying its primary's stream sends no SELECT there) */
                        ((struct conn *)ctx)->db = sdb;
                        link_db = sdb;
                        pthread_mutex_lock(&L.lock);
                        L.read_off = off;
                        pthread_mutex_unlock(&L.lock);
                        if (mem < 0)
                            del_sync_file(path);
                        log_notice("MASTER <-> REPLICA sync: Finished with success");
                    }
                    pthread_mutex_unlock(&L.apply);
                }
            } else {
                rc = -1;
            }
            if (mem >= 0)
                close(mem);
        } else if (rc == 0) {
            char myid[41];
            uint64_t myoff;
            /* the stream continues where this server's left off, in its database (a new
             * primary that was promoted SELECTs before its first write anyway) */
            pthread_mutex_lock(&L.apply);
            ((struct conn *)ctx)->db = link_db;
            pthread_mutex_unlock(&L.apply);
            repl_get_id(myid, &myoff);
            if (strcmp(myid, id)) {
                /* the primary was promoted: its old ID continues as our second one */
                repl_set_id(id, myoff, 1);
                repl_drop_replicas();
                /* their links are down before this one is up, as Redis closes them at once */
                for (int i = 0; i < 50 && repl_online_replicas() > 0; i++)
                    usleep(2000);
            }
            pthread_mutex_lock(&L.lock);
            L.read_off = myoff;
            pthread_mutex_unlock(&L.lock);
        }
        if (rc >= 0 && !stopped(a.gen)) {
            set_state(a.gen, LS_CONNECTED);
            log_notice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization or "
                       "the stream starts.");
            stream_loop(fd, a.gen, ctx);
            log_notice("Connection with master lost.");
        }
        pthread_mutex_lock(&L.lock);
        if (L.fd == fd)
            L.fd = -1;
        pthread_mutex_unlock(&L.lock);
        tls_client_close(lssl);
        lssl = NULL;
        close(fd);
        set_state(a.gen, LS_CONNECT);
        for (int i = 0; i < 10 && !stopped(a.gen); i++)
            usleep(100000);
    }
    cmd_aof_replay_close(ctx);
    atomic_fetch_sub(&link_threads, 1);
    return NULL;
}

static void link_stop(void);

void repl_shutdown(void)
{
    link_stop();
    /* the link applies commands on the store: it ends before the store goes */
    for (int i = 0; i < 3000 && atomic_load(&link_threads); i++)
        usleep(10000);
    repl_sync_shutdown();
}

/* Stop the running link (its thread ends on its own). */
static void link_stop(void)
{
    atomic_fetch_add(&L.gen, 1);
    pthread_mutex_lock(&L.lock);
    if (L.fd >= 0)
        shutdown(L.fd, SHUT_RDWR);
    L.state = LS_NONE;
    pthread_mutex_unlock(&L.lock);
}

/* Become a primary: stop the link, a new ID (the old one continues as the second), the
 * replicas but keep reconnect to hear of it. */
static void promote(struct conn *keep)
{
    {
        link_stop();
        /* a command being applied finishes first; inside EXEC (Sentinel's MULTI ... SLAVEOF NO
         * ONE ... EXEC) this thread holds stripes that command may wait for: then only try, and
         * the stopped link applies at most the command it is in */
        int locked = 0;
        if (!store_held) {
            pthread_mutex_lock(&L.apply);
            locked = 1;
        } else {
            for (int i = 0; i < 20 && !locked; i++) {
                locked = pthread_mutex_trylock(&L.apply) == 0;
                if (!locked)
                    usleep(1000);
            }
        }
        atomic_store(&repl_is_replica, 0);
        repl_update_gate();
        oom_score_apply(OOM_CLASS_MASTER); /* as Redis: the class follows the role */
        char nid[41], old[41];
        uint64_t off;
        repl_get_id(old, &off);
        repl_random_id(nid);
        repl_set_id(nid, off, 1);
        if (locked)
            pthread_mutex_unlock(&L.apply);
        /* as Redis: the replicas hear of the new ID by reconnecting (+CONTINUE <new id>) */
        repl_drop_replicas_except(keep);
        config_set("replicaof", (const char *[]){""}, 1, 1, NULL, 0);
        log_notice("MASTER MODE enabled");
    }
}

int repl_link_db(void)
{
    return link_db;
}

void repl_link_set_db(int db)
{
    link_db = db;
}

int repl_link_quiet_begin(void)
{
    return pthread_mutex_trylock(&L.apply) == 0;
}

void repl_link_quiet_end(void)
{
    pthread_mutex_unlock(&L.apply);
}

/* Up to about 100 ms: until the link has applied what its primary already sent (nothing
 * left in its socket, the link between batches). */
static void link_drain(void)
{
    for (int i = 0; i < 100; i++) {
        int pending = 0;
        pthread_mutex_lock(&L.lock);
        if (L.state == LS_CONNECTED && L.fd >= 0 && ioctl(L.fd, FIONREAD, &pending) < 0)
            pending = 0;
        pthread_mutex_unlock(&L.lock);
        if (!pending && pthread_mutex_trylock(&L.apply) == 0) {
            pthread_mutex_unlock(&L.apply);
            return;
        }
        usleep(1000);
    }
}

void repl_promote_except(struct conn *keep)
{
    if (atomic_load(&repl_is_replica)) {
        /* PSYNC ... FAILOVER: the old primary's last writes may wait in the link's socket
         * (this server was stopped, or slow): applied first, its PSYNC continues from them,
         * as Redis reads its master's stream before the new client's PSYNC */
        link_drain();
        promote(keep);
    }
}

int repl_replicaof_apply(const char *host, int port)
{
    if (!host) {
        if (atomic_load(&repl_is_replica))
            promote(NULL);
        return 0;
    }
    pthread_mutex_lock(&L.lock);
    int same = atomic_load(&repl_is_replica) && L.port == port && !strcmp(L.host, host);
    pthread_mutex_unlock(&L.lock);
    if (same)
        return 1;
    link_stop();
    struct link_arg *a = malloc(sizeof(*a));
    if (!a)
        return -1;
    pthread_mutex_lock(&L.lock);
    snprintf(L.host, sizeof(L.host), "%s", host);
    L.port = port;
    L.state = LS_CONNECT;
    L.down_since_ms = util_now_ms();
    pthread_mutex_unlock(&L.lock);
    a->gen = atomic_load(&L.gen);
    snprintf(a->host, sizeof(a->host), "%s", host);
    a->port = port;
    /* the data and stream so far are this server's own: continue from them if the new
     * primary knows them (a demoted primary rejoining the replica that replaced it) */
    char cur[41];
    uint64_t off;
    repl_get_id(cur, &off);
    if (!repl_on)
        repl_reset_backlog(off);
    atomic_store(&repl_is_replica, 1);
    repl_update_gate();
    oom_score_apply(OOM_CLASS_REPLICA);
    block_unblock_all_role_change(repl_srv); /* as Redis: nothing served from the stream */
    repl_drop_replicas();
    char val[300];
    snprintf(val, sizeof(val), "%s %d", host, port);
    const char *v[2] = {host, val + strlen(host) + 1};
    config_set("replicaof", v, 2, 1, NULL, 0);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&link_threads, 1);
    int rc = pthread_create(&t, &at, link_main, a);
    pthread_attr_destroy(&at);
    if (rc) {
        atomic_fetch_sub(&link_threads, 1);
        free(a);
        return -1;
    }
    log_notice("REPLICAOF %s:%d enabled", host, port);
    return 0;
}

/* Writes wait (as CLIENT PAUSE WRITE) while a failover runs. */
static void failover_pause(void)
{
    int64_t end = util_now_ms() + 100LL * 365 * 24 * 3600 * 1000;
    int64_t cur = atomic_load(&cmd_pause_end);
    if (end > cur)
        atomic_store(&cmd_pause_end, end);
    F.pause_end = end;
}

static void failover_unpause(void)
{
    int64_t end = F.pause_end;
    atomic_compare_exchange_strong(&cmd_pause_end, &end, 0);
    F.pause_end = 0;
    block_wake_postponed(repl_srv);
}

/* The failover is over (ok: the target took over; else rolled back). */
static void failover_end(int ok, const char *why)
{
    pthread_mutex_lock(&L.lock);
    int was = F.state;
    F.state = FO_NONE;
    pthread_mutex_unlock(&L.lock);
    if (!was)
        return;
    if (ok) {
        log_notice("Failover target %s:%d accepted the failover.", F.host, F.port);
    } else {
        if (F.host[0])
            log_notice("FAILOVER to %s:%d aborted: %s", F.host, F.port, why);
        else
            log_notice("FAILOVER to any replica aborted: %s", why);
        if (was == FO_IN_PROGRESS && atomic_load(&repl_is_replica))
            promote(NULL); /* back to a primary */
    }
    failover_unpause();
}

const char *repl_failover_state(void)
{
    switch (__atomic_load_n(&F.state, __ATOMIC_RELAXED)) {
    case FO_WAITING:
        return "waiting-for-sync";
    case FO_IN_PROGRESS:
        return "failover-in-progress";
    default:
        return "no-failover";
    }
}

void repl_failover_tick(int64_t now)
{
    char ip[256];
    int port;

    pthread_mutex_lock(&L.lock);
    int st = F.state;
    int64_t deadline = F.deadline, started = F.started;
    int force = F.force, has_to = F.host[0] != 0;
    char host[256];
    snprintf(host, sizeof(host), "%s", F.host);
    int tport = F.port;
    pthread_mutex_unlock(&L.lock);
    if (st == FO_WAITING) {
        int ready = repl_caught_up(has_to ? host : NULL, tport, 0, ip, sizeof(ip), &port);
        if (!ready && deadline && now >= deadline) {
            if (!force) {
                failover_end(0, "Replica never caught up before timeout");
                return;
            }
            ready = 1; /* FORCE: the target, caught up or not */
            log_notice("FAILOVER to %s:%d time out exceeded, failing over.", host, tport);
            snprintf(ip, sizeof(ip), "%s", host);
            port = tport;
        }
        if (!ready) {
            repl_ask_acks();
            return;
        }
        pthread_mutex_lock(&L.lock);
        F.state = FO_IN_PROGRESS;
        F.started = now;
        snprintf(F.host, sizeof(F.host), "%s", ip);
        F.port = port;
        pthread_mutex_unlock(&L.lock);
        if (!force || !deadline || now < deadline)
            log_notice("Failover target %s:%d is synced, failing over.", ip, port);
        repl_replicaof_apply(ip, port);
    } else if (st == FO_IN_PROGRESS && now - started > (int64_t)cfg.repl_timeout * 1000) {
        failover_end(0, "the target did not answer in time");
    }
}

/* FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] */
static void failover_command(struct conn *c)
{
    char host[256] = "";
    long long port = 0, ms = 0;
    int to = 0, force = 0, abort_ = 0, tmo = 0;

    for (int i = 1; i < c->argc; i++) {
        if (arg_is(c, i, "to") && !to && i + 2 < c->argc) {
            if (!util_str2ll(c->argv[i + 2].p, c->argv[i + 2].n, &port)) {
                reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            snprintf(host, sizeof(host), "%.*s",
                     (int)(c->argv[i + 1].n > 255 ? 255 : c->argv[i + 1].n), c->argv[i + 1].p);
            to = 1;
            i += 2;
        } else if (arg_is(c, i, "force") && !force) {
            force = 1;
        } else if (arg_is(c, i, "abort") && !abort_) {
            abort_ = 1;
        } else if (arg_is(c, i, "timeout") && !tmo && i + 1 < c->argc) {
            if (!util_str2ll(c->argv[i + 1].p, c->argv[i + 1].n, &ms)) {
                reply_error(c, "ERR value is not an integer or out of range");
                return;
            }
            if (ms <= 0) {
                reply_error(c, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
            tmo = 1;
            i++;
        } else {
            reply_error(c, "ERR syntax error");
            return;
        }
    }
    if (abort_) {
        if (to || force || tmo) {
            reply_error(c, "ERR syntax error");
            return;
        }
        if (!__atomic_load_n(&F.state, __ATOMIC_RELAXED)) {
            reply_error(c, "ERR No failover in progress.");
            return;
        }
        failover_end(0, "Failover manually aborted");
        reply_ok(c);
        return;
    }
    if (atomic_load(&repl_is_replica)) {
        reply_error(c, "ERR FAILOVER is not valid when server is a replica.");
        return;
    }
    if (!repl_online_replicas()) {
        reply_error(c, "ERR FAILOVER requires connected replicas.");
        return;
    }
    if (__atomic_load_n(&F.state, __ATOMIC_RELAXED)) {
        reply_error(c, "ERR FAILOVER already in progress.");
        return;
    }
    if (force && (!to || !tmo)) {
        reply_error(c, "ERR FAILOVER with force option requires both a timeout and target HOST "
                       "and IP.");
        return;
    }
    if (to) {
        int r = repl_find_replica(host, (int)port);
        if (!r) {
            reply_error(c, "ERR FAILOVER target HOST and PORT is not a replica.");
            return;
        }
        if (r != 2) {
            reply_error(c, "ERR FAILOVER target replica is not online.");
            return;
        }
    }
    pthread_mutex_lock(&L.lock);
    F.state = FO_WAITING;
    snprintf(F.host, sizeof(F.host), "%s", to ? host : "");
    F.port = (int)port;
    F.force = force;
    F.deadline = tmo ? c->w->now_ms + ms : 0;
    failover_pause();
    pthread_mutex_unlock(&L.lock);
    if (to)
        log_notice("FAILOVER requested to %s:%lld.", host, port);
    else
        log_notice("FAILOVER requested to any replica.");
    repl_ask_acks();
    reply_ok(c);
}

static void replicaof_command(struct conn *c)
{
    long long port;

    if (util_eq_nocase(c->argv[1].p, c->argv[1].n, "no") &&
        util_eq_nocase(c->argv[2].p, c->argv[2].n, "one")) {
        repl_replicaof_apply(NULL, 0);
        reply_ok(c);
        return;
    }
    if (!util_str2ll(c->argv[2].p, c->argv[2].n, &port) || port < 0 || port > 65535) {
        reply_error(c, "ERR Invalid master port");
        return;
    }
    char host[256];
    snprintf(host, sizeof(host), "%.*s", (int)(c->argv[1].n > 255 ? 255 : c->argv[1].n),
             c->argv[1].p);
    int rc = repl_replicaof_apply(host, (int)port);
    if (rc == 1)
        reply_status(c, "OK Already connected to specified master");
    else if (rc < 0)
        reply_error(c, "ERR can't start the replication link");
    else
        reply_ok(c);
}

static const char *state_text(int st)
{
    switch (st) {
    case LS_CONNECTING:
        return "connecting";
    case LS_HANDSHAKE:
        return "handshake";
    case LS_SYNC:
        return "sync";
    case LS_CONNECTED:
        return "connected";
    default:
        return "connect";
    }
}

void repl_link_info(struct buf *b)
{
    char line[512];
    int64_t now = util_now_ms();
    char id[41];
    uint64_t off;

    repl_get_id(id, &off);
    pthread_mutex_lock(&L.lock);
#define P(...)                                                                                  \
    do {                                                                                        \
        int k_ = snprintf(line, sizeof(line), __VA_ARGS__);                                     \
        buf_append(b, line, (size_t)k_);                                                        \
    } while (0)
    P("master_host:%s\r\nmaster_port:%d\r\n", L.host, L.port);
    P("master_link_status:%s\r\n", L.state == LS_CONNECTED ? "up" : "down");
    P("master_last_io_seconds_ago:%lld\r\n",
      L.state == LS_CONNECTED ? (long long)((now - L.last_io_ms) / 1000) : -1LL);
    P("master_sync_in_progress:%d\r\n", L.state == LS_SYNC);
    P("slave_read_repl_offset:%llu\r\nslave_repl_offset:%llu\r\n",
      (unsigned long long)(L.read_off > off ? L.read_off : off), (unsigned long long)off);
    if (L.state == LS_SYNC) {
        P("master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:%lld\r\n", L.sync_total,
          L.sync_read);
        P("master_sync_left_bytes:%lld\r\nmaster_sync_perc:%.2f\r\n",
          L.sync_total >= 0 ? L.sync_total - L.sync_read : -1LL,
          L.sync_total > 0 ? 100.0 * (double)L.sync_read / (double)L.sync_total : 0.0);
        P("master_sync_last_io_seconds_ago:%lld\r\n", (long long)((now - L.last_io_ms) / 1000));
    }
    if (L.state != LS_CONNECTED)
        P("master_link_down_since_seconds:%lld\r\n",
          L.down_since_ms ? (long long)((now - L.down_since_ms) / 1000) : -1LL);
    P("slave_priority:%d\r\nslave_read_only:%d\r\nreplica_announced:%d\r\n",
      cfg.replica_priority, cfg.replica_read_only, cfg.replica_announced);
#undef P
    pthread_mutex_unlock(&L.lock);
}

void repl_link_role(struct conn *c)
{
    char id[41];
    uint64_t off;

    repl_get_id(id, &off);
    pthread_mutex_lock(&L.lock);
    reply_array(c, 5);
    reply_bulk(c, "slave", 5);
    reply_cstr(c, L.host);
    reply_int(c, L.port);
    reply_cstr(c, state_text(L.state));
    reply_int(c, L.state == LS_CONNECTED ? (long long)off : -1LL);
    pthread_mutex_unlock(&L.lock);
}

static void role_command(struct conn *c)
{
    repl_role(c);
}

static struct cmd cmds[] = {
    {"replicaof", replicaof_command, 3, "admin noscript stale no_async_loading", "@dangerous", NULL, "server", "Make the server a replica of another instance, or promote it as master"},
    {"slaveof", replicaof_command, 3, "admin noscript stale no_async_loading", "@dangerous", NULL, "server", "Make the server a replica of another instance, or promote it as master"},
    {"failover", failover_command, -1, "admin noscript stale", "@dangerous", NULL, "server", "Start a coordinated failover between this server and one of its replicas"},
    {"role", role_command, 1, "noscript loading stale fast", "@admin @dangerous", NULL, "server", "Return the role of the instance in the context of replication"},
};

void cmd_repl_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
    cmd_repl_master_setup();
}

/* Start-up: replicaof from the configuration. */
void repl_start_configured(void)
{
    char v[300], host[256];
    int port;
    config_str(cfg.replicaof, v, sizeof(v));
    if (v[0] && sscanf(v, "%255s %d", host, &port) == 2)
        repl_replicaof_apply(host, port);
}
