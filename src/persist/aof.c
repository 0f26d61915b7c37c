/* Append-only file: manifest, shared buffer and writer, command reader (see aof.h). */
#define _GNU_SOURCE
#include "persist/aof.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/log.h"
#include "core/util.h"

void aof_join(char *out, size_t cap, const char *dir, const char *name)
{
    if (!dir[0] || name[0] == '/')
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "%s/%s", dir, name);
}

/* ---- manifest ---- */

#define MANIFEST_MAX_LINE 1024

int aof_manifest_read(const char *dir, const char *fname, struct aof_manifest *m, char *err,
                      size_t errcap)
{
    char path[2048], mname[AOF_NAME_MAX + 16], line[MANIFEST_MAX_LINE + 1];
    char words[MANIFEST_MAX_LINE + 64], *w[64];
    long long maxseq = 0;
    const char *why = NULL;
    FILE *f;
    int linenum = 0;

    memset(m, 0, sizeof(*m));
    snprintf(mname, sizeof(mname), "%s.manifest", fname);
    aof_join(path, sizeof(path), dir, mname);
    f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errcap, "Fatal error: can't open the AOF manifest file %s for reading: %s",
                 path, strerror(errno));
        return -1;
    }
    for (;;) {
        char name[AOF_NAME_MAX] = "", type = 0;
        long long seq = 0;
        int argc;

        m->err_line = 0; /* the line is shown only for errors about its content */
        if (!fgets(line, sizeof(line), f)) {
            if (feof(f)) {
                if (linenum == 0)
                    why = "Found an empty AOF manifest";
                break;
            }
            why = "Read AOF manifest failed";
            break;
        }
        linenum++;
        if (line[0] == '#')
            continue;
        if (!strchr(line, '\n')) {
            why = "The AOF manifest file contains too long line";
            break;
        }
        /* trimmed: the line is shown as Redis shows it */
        size_t n = strlen(line);
        while (n && strchr(" \t\r\n", line[n - 1]))
            line[--n] = 0;
        char *t = line;
        while (*t && strchr(" \t\r\n", *t))
            t++;
        memmove(line, t, strlen(t) + 1);
        m->err_line = linenum;
        snprintf(m->err_text, sizeof(m->err_text), "%s", line);
        if (!line[0]) {
            why = "Invalid AOF manifest file format";
            break;
        }
        argc = util_split_args(line, words, sizeof(words), w, 64);
        if (argc < 6 || (argc % 2)) {
            why = "Invalid AOF manifest file format";
            break;
        }
        for (int i = 0; i < argc; i += 2) {
            if (!strcasecmp(w[i], "file")) {
                if (strchr(w[i + 1], '/') || strlen(w[i + 1]) >= sizeof(name)) {
                    why = "File can't be a path, just a filename";
                    break;
                }
                snprintf(name, sizeof(name), "%s", w[i + 1]);
            } else if (!strcasecmp(w[i], "seq")) {
                seq = atoll(w[i + 1]);
            } else if (!strcasecmp(w[i], "type")) {
                type = w[i + 1][0];
            }
        }
        if (why)
            break;
        if (!name[0] || !seq || !type) {
            why = "Invalid AOF manifest file format";
            break;
        }
        if (type == 'b') {
            if (m->base[0]) {
                why = "Found duplicate base file information";
                break;
            }
            snprintf(m->base, sizeof(m->base), "%s", name);
            m->base_seq = (long)seq;
        } else if (type == 'h') {
            if (m->nhist < AOF_MAX_INCR)
                snprintf(m->hist[m->nhist++], sizeof(m->hist[0]), "%s", name);
        } else if (type == 'i') {
            if (seq <= maxseq) {
                why = "Found a non-monotonic sequence number";
                break;
            }
            if (m->nincr == AOF_MAX_INCR) {
                why = "Too many incremental AOF files in the manifest";
                break;
            }
            snprintf(m->incr[m->nincr], sizeof(m->incr[0]), "%s", name);
            m->incr_seq[m->nincr++] = (long)seq;
            maxseq = seq;
        } else {
            why = "Unknown AOF file type";
            break;
        }
    }
    fclose(f);
    if (!why) {
        m->err_line = 0;
        m->err_text[0] = 0;
        return 0;
    }
    snprintf(err, errcap, "%s", why);
    return -1;
}

/* A file name as the manifest writes it: quoted when it holds spaces, quotes or bytes that
 * are not printable (Redis's sdscatrepr). */
static void name_repr(char *out, size_t cap, const char *name)
{
    size_t o = 0;
    int plain = 1;

    for (const char *p = name; *p; p++)
        if (!isprint((unsigned char)*p) || strchr(" \"'\\", *p))
            plain = 0;
    if (plain) {
        snprintf(out, cap, "%s", name);
        return;
    }
    out[o++] = '"';
    for (const unsigned char *p = (const unsigned char *)name; *p && o + 6 < cap; p++) {
        if (*p == '\\' || *p == '"') {
            out[o++] = '\\';
            out[o++] = (char)*p;
        } else if (*p == '\n' || *p == '\r' || *p == '\t' || *p == '\a' || *p == '\b') {
            out[o++] = '\\';
            out[o++] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : *p == '\t' ? 't' :
                       *p == '\a' ? 'a' : 'b';
        } else if (isprint(*p)) {
            out[o++] = (char)*p;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
        }
    }
    out[o++] = '"';
    out[o] = 0;
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir[0] ? dir : ".", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int aof_manifest_write(const char *dir, const char *fname, const struct aof_manifest *m)
{
    char path[2048], tmp[2100], mname[AOF_NAME_MAX + 16];
    struct buf b = {0};
    char line[AOF_NAME_MAX * 4 + 64];
    int fd, n, rc = -1;

    char r[AOF_NAME_MAX * 4 + 3];

    if (m->base[0]) {
        name_repr(r, sizeof(r), m->base);
        n = snprintf(line, sizeof(line), "file %s seq %ld type b\n", r, m->base_seq);
        buf_append(&b, line, (size_t)n);
    }
    for (int i = 0; i < m->nincr; i++) {
        name_repr(r, sizeof(r), m->incr[i]);
        n = snprintf(line, sizeof(line), "file %s seq %ld type i\n", r, m->incr_seq[i]);
        buf_append(&b, line, (size_t)n);
    }
    snprintf(mname, sizeof(mname), "%s.manifest", fname);
    aof_join(path, sizeof(path), dir, mname);
    snprintf(tmp, sizeof(tmp), "%s/temp-%s", dir[0] ? dir : ".", mname);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_warn("Can't open the AOF manifest file %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (write(fd, b.data ? b.data : "", buf_len(&b)) != (ssize_t)buf_len(&b) || fsync(fd)) {
        log_warn("Error writing the AOF manifest file %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        goto out;
    }
    close(fd);
    if (rename(tmp, path)) {
        log_warn("Error trying to rename the temporary AOF manifest file %s into %s: %s", tmp,
                 path, strerror(errno));
        unlink(tmp);
        goto out;
    }
    fsync_dir(dir);
    rc = 0;
out:
    buf_deinit(&b);
    return rc;
}

/* ---- buffer and writer ---- */

_Atomic int aof_flush_sleep_us; /* DEBUG AOF-FLUSH-SLEEP (aof_log.h) */

static struct {
    pthread_mutex_t buf_lock; /* leaf: buf, cur_db, appended */
    struct buf buf;
    int cur_db;               /* database of the last command in the current file, -1 none */
    int64_t cur_ts;           /* unix second of the last #TS annotation (aof-timestamp-enabled) */
    uint64_t appended;        /* logical bytes appended since start */
    pthread_mutex_t io_lock;  /* fd, spare; taken before buf_lock */
    int fd;
    struct buf spare;         /* the buffer being written (swapped out under buf_lock) */
    _Atomic uint64_t written; /* logical offset written to the file */
    _Atomic uint64_t synced;  /* logical offset fsync'd */
    _Atomic int64_t incr_size;
    _Atomic int last_write_ok;
    int err_logged;
} aw = {PTHREAD_MUTEX_INITIALIZER, {0}, -1, 0, 0, PTHREAD_MUTEX_INITIALIZER, -1, {0}, 0, 0, 0, 1, 0};

static void put_select(struct buf *b, int db)
{
    char num[16], hdr[48];
    int nl = snprintf(num, sizeof(num), "%d", db);
    int n = snprintf(hdr, sizeof(hdr), "*2\r\n$6\r\nSELECT\r\n$%d\r\n%s\r\n", nl, num);
    buf_append(b, hdr, (size_t)n);
}

uint64_t aof_append(const char *recs, size_t n)
{
    uint64_t off;
    size_t pos = 0;

    pthread_mutex_lock(&aw.buf_lock);
    if (cfg.aof_timestamp_enabled) {
        /* "#TS:<unix s>" before the first command of each second, as Redis annotates */
        int64_t now = (int64_t)time(NULL);
        if (now > aw.cur_ts) {
            char ts[40];
            int tn = snprintf(ts, sizeof(ts), "#TS:%lld\r\n", (long long)now);
            if (buf_append(&aw.buf, ts, (size_t)tn) == 0)
                aw.appended += (uint64_t)tn;
            aw.cur_ts = now;
        }
    }
    while (pos + 8 <= n) {
        int32_t db;
        uint32_t len;
        memcpy(&db, recs + pos, 4);
        memcpy(&len, recs + pos + 4, 4);
        pos += 8;
        if (db >= 0 && db != aw.cur_db) {
            size_t before = buf_len(&aw.buf);
            put_select(&aw.buf, db);
            aw.appended += buf_len(&aw.buf) - before;
            aw.cur_db = db;
        }
        if (buf_append(&aw.buf, recs + pos, len) == 0)
            aw.appended += len;
        else
            log_warn("Out of memory appending to the AOF buffer: a command was not logged");
        pos += len;
    }
    off = aw.appended;
    pthread_mutex_unlock(&aw.buf_lock);
    return off;
}

/* Under io_lock: move the buffer out and write it. Returns 0 or -1. */
static int write_locked(void)
{
    uint64_t upto;
    size_t off = 0;

    pthread_mutex_lock(&aw.buf_lock);
    if (buf_len(&aw.spare) == 0) {
        struct buf t = aw.spare;
        aw.spare = aw.buf;
        aw.buf = t;
        aw.buf.rpos = aw.buf.wpos = 0;
    }
    /* else: a failed write left bytes in spare; they go first, the rest waits */
    upto = aw.appended - buf_len(&aw.buf);
    pthread_mutex_unlock(&aw.buf_lock);
    if (aw.fd < 0) {
        aw.spare.rpos = aw.spare.wpos = 0;
        atomic_store(&aw.written, upto);
        return 0;
    }
    while (buf_len(&aw.spare)) {
        ssize_t r = write(aw.fd, aw.spare.data + aw.spare.rpos, buf_len(&aw.spare));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (!aw.err_logged)
                log_warn("Error writing to the AOF file: %s", strerror(errno));
            aw.err_logged = 1;
            atomic_store(&aw.last_write_ok, 0);
            return -1;
        }
        aw.spare.rpos += (size_t)r;
        off += (size_t)r;
        atomic_fetch_add(&aw.incr_size, r);
    }
    aw.spare.rpos = aw.spare.wpos = 0;
    if (buf_len(&aw.spare) == 0 && aw.spare.cap > (4 << 20))
        buf_shrink(&aw.spare, 1 << 20);
    atomic_store(&aw.written, upto);
    if (!atomic_load(&aw.last_write_ok))
        log_notice("AOF write error looks solved, Redis can write again.");
    atomic_store(&aw.last_write_ok, 1);
    aw.err_logged = 0;
    return 0;
}

int aof_write(uint64_t upto, int do_fsync)
{
    int rc = 0;

    if (atomic_load(do_fsync ? &aw.synced : &aw.written) >= upto)
        return 0;
    pthread_mutex_lock(&aw.io_lock);
    if (atomic_load(do_fsync ? &aw.synced : &aw.written) >= upto)
        goto out;
    if (atomic_load_explicit(&aof_flush_sleep_us, memory_order_relaxed))
        usleep((useconds_t)atomic_load(&aof_flush_sleep_us));
    rc = write_locked();
    if (rc == 0 && do_fsync) {
        uint64_t w = atomic_load(&aw.written);
        if (aw.fd >= 0 && fdatasync(aw.fd) < 0) {
            log_warn("Can't fsync the AOF file: %s", strerror(errno));
            atomic_store(&aw.last_write_ok, 0);
            rc = -1;
        } else {
            atomic_store(&aw.synced, w);
        }
    }
out:
    pthread_mutex_unlock(&aw.io_lock);
    return rc;
}

void aof_fsync_written(void)
{
    int fd = -1;
    uint64_t w;

    pthread_mutex_lock(&aw.io_lock);
    w = atomic_load(&aw.written);
    if (aw.fd >= 0 && w > atomic_load(&aw.synced))
        fd = dup(aw.fd);
    pthread_mutex_unlock(&aw.io_lock);
    if (fd < 0)
        return;
    if (fdatasync(fd) == 0) {
        uint64_t s = atomic_load(&aw.synced);
        while (s < w && !atomic_compare_exchange_weak(&aw.synced, &s, w)) {
        }
    }
    close(fd);
}

int aof_switch(const char *path, int discard)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    struct stat st;

    if (fd < 0) {
        log_warn("Can't open the append-only file %s: %s", path, strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&aw.io_lock);
    if (discard) {
        pthread_mutex_lock(&aw.buf_lock);
        aw.buf.rpos = aw.buf.wpos = 0;
        aw.spare.rpos = aw.spare.wpos = 0;
        atomic_store(&aw.written, aw.appended);
        atomic_store(&aw.synced, aw.appended);
        pthread_mutex_unlock(&aw.buf_lock);
    } else if (aw.fd >= 0) {
        write_locked();
        if (fdatasync(aw.fd) == 0)
            atomic_store(&aw.synced, atomic_load(&aw.written));
    }
    if (aw.fd >= 0)
        close(aw.fd);
    aw.fd = fd;
    pthread_mutex_lock(&aw.buf_lock);
    aw.cur_db = -1; /* the new file starts with a SELECT */
    aw.cur_ts = 0;  /* and with a #TS annotation when they are on */
    pthread_mutex_unlock(&aw.buf_lock);
    atomic_store(&aw.incr_size, fstat(fd, &st) == 0 ? (int64_t)st.st_size : 0);
    pthread_mutex_unlock(&aw.io_lock);
    return 0;
}

void aof_close(void)
{
    pthread_mutex_lock(&aw.io_lock);
    if (aw.fd >= 0) {
        write_locked();
        if (fsync(aw.fd) == 0)
            atomic_store(&aw.synced, atomic_load(&aw.written));
        close(aw.fd);
        aw.fd = -1;
    }
    pthread_mutex_unlock(&aw.io_lock);
}

void aof_get_stats(struct aof_stats *st)
{
    pthread_mutex_lock(&aw.buf_lock);
    st->appended = aw.appended;
    pthread_mutex_unlock(&aw.buf_lock);
    st->written = atomic_load(&aw.written);
    st->synced = atomic_load(&aw.synced);
    st->incr_size = atomic_load(&aw.incr_size);
    st->last_write_ok = atomic_load(&aw.last_write_ok);
}

/* ---- reading ---- */

/* Parse "<c><number>\r\n" at *p (before end). Returns 1 ok, 0 incomplete, -1 malformed. */
static int read_num(const char **p, const char *end, char c, long long *v)
{
    const char *q = *p;
    long long n = 0;
    int digits = 0;

    if (q >= end)
        return 0;
    if (*q != c)
        return -1;
    q++;
    while (q < end && *q >= '0' && *q <= '9' && digits < 18) {
        n = n * 10 + (*q - '0');
        q++;
        digits++;
    }
    if (q >= end)
        return 0;
    if (!digits || *q != '\r')
        return -1;
    if (q + 1 >= end)
        return 0;
    if (q[1] != '\n')
        return -1;
    *p = q + 2;
    *v = n;
    return 1;
}

int aof_read_file(const char *path, off_t start, aof_cmd_fn *fn, void *arg, off_t *valid,
                  char *err, size_t errcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const char *map = NULL, *p, *end;
    const char **argv = NULL;
    size_t *lens = NULL;
    long long cap = 0;
    off_t multi_at = -1, last = 0;
    int rc = -1;
    const char *fname = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errcap, "Fatal error: can't open the append log file %s for reading: %s",
                 path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st)) {
        snprintf(err, errcap, "Unable to check the AOF length: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *valid = 0;
    if (st.st_size == 0) {
        close(fd);
        return 0;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errcap, "Can't map the AOF %s: %s", path, strerror(errno));
        return -1;
    }
    madvise((void *)map, (size_t)st.st_size, MADV_SEQUENTIAL);
    p = map + (start < st.st_size ? start : st.st_size);
    end = map + st.st_size;
    last = p - map;
    while (p < end) {
        const char *q = p;
        long long argc, len;
        int r;

        if (*p == '#') {
            /* an annotation (#TS:<unix time>): skipped, as Redis does */
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                goto truncated;
            p = nl + 1;
            last = p - map;
            continue;
        }
        r = read_num(&q, end, '*', &argc);

        if (r == 0)
            goto truncated;
        if (r < 0 || argc < 1) {
            snprintf(err, errcap, "Bad file format reading the append only file %s: make a "
                     "backup of your AOF file, then use ./redis-check-aof --fix "
                     "<filename.manifest>", fname);
            goto out;
        }
        if (argc > cap) {
            long long nc = argc < 64 ? 64 : argc;
            const char **na = realloc(argv, sizeof(*na) * (size_t)nc);
            size_t *nl = na ? realloc(lens, sizeof(*nl) * (size_t)nc) : NULL;
            if (na)
                argv = na;
            if (!nl) {
                snprintf(err, errcap, "Out of memory reading the AOF");
                goto out;
            }
            lens = nl;
            cap = nc;
        }
        for (long long i = 0; i < argc; i++) {
            r = read_num(&q, end, '$', &len);
            if (r == 0)
                goto truncated;
            if (r < 0) {
                snprintf(err, errcap, "Bad file format reading the append only file %s: make a "
                     "backup of your AOF file, then use ./redis-check-aof --fix "
                     "<filename.manifest>", fname);
                goto out;
            }
            if (end - q < len + 2)
                goto truncated;
            if (q[len] != '\r' || q[len + 1] != '\n') {
                snprintf(err, errcap, "Bad file format reading the append only file %s: make a "
                     "backup of your AOF file, then use ./redis-check-aof --fix "
                     "<filename.manifest>", fname);
                goto out;
            }
            argv[i] = q;
            lens[i] = (size_t)len;
            q += len + 2;
        }
        if (lens[0] == 5 && !strncasecmp(argv[0], "multi", 5))
            multi_at = p - map;
        else if (lens[0] == 4 && !strncasecmp(argv[0], "exec", 4))
            multi_at = -1;
        if (fn(arg, (int)argc, argv, lens)) {
            err[0] = 0; /* the callback logged why */
            goto out;
        }
        p = q;
        last = p - map;
    }
    *valid = last;
    rc = multi_at >= 0 ? 3 : 0; /* a MULTI without EXEC at the end: cut before it */
    if (rc == 3)
        *valid = multi_at;
    goto out;
truncated:
    *valid = multi_at >= 0 ? multi_at : last;
    rc = 2;
out:
    free(argv);
    free(lens);
    munmap((void *)map, (size_t)st.st_size);
    return rc;
}
