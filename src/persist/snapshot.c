/* Forked snapshots of the store (see snapshot.h).
 *
 * The fork happens while this thread holds every stripe lock, so the child's copy of the
 * store is one point in time and no other thread is inside a store structure at the fork
 * (the child never sees a half-done change or a lock held by a thread it does not have). */
#define _GNU_SOURCE
#include "persist/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "store/store.h"

uint64_t *snapshot_hold_all(struct store *s, int *oom)
{
    size_t words = (s->nstripes + 63) / 64;
    uint64_t *bm;

    *oom = 0;
    if (store_held)
        return NULL;
    bm = malloc(words * 8);
    if (!bm) {
        *oom = 1;
        return NULL;
    }
    memset(bm, 0xff, words * 8);
    if (s->nstripes % 64)
        bm[words - 1] = (1ULL << (s->nstripes % 64)) - 1;
    store_hold_set(s, bm);
    return bm;
}

void snapshot_release_all(struct store *s, uint64_t *bm)
{
    if (bm) {
        store_release_set(s, bm);
        free(bm);
    }
}

/* Private_Dirty of this process in bytes (the child's copy-on-write). */
static int64_t private_dirty(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    int64_t kb = 0;

    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        long long v;
        if (sscanf(line, "Private_Dirty: %lld kB", &v) == 1)
            kb += v;
    }
    fclose(f);
    return kb * 1024;
}

/* In the child: close every socket (listeners and clients) but the job's own. */
static void close_sockets(const struct snapshot_job *job)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int dfd;

    if (!d)
        return;
    dfd = dirfd(d);
    while ((e = readdir(d))) {
        struct stat st;
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == dfd || fstat(fd, &st) < 0)
            continue;
        int keep = 0;
        for (int i = 0; i < job->nkeep; i++)
            keep |= job->keep_fds[i] == fd;
        if (S_ISSOCK(st.st_mode) && !keep)
            close(fd);
    }
    closedir(d);
}

static void child_main(const struct snapshot_job *job, int wfd)
{
    int rc;

    prctl(PR_SET_NAME, job->title);
    /* on a machine with few cores the child competes with the workers it forked from */
    if (setpriority(PRIO_PROCESS, 0, 10) < 0) {
        /* not fatal */
    }
    close_sockets(job);
    rc = job->write(job->arg);
    if (rc == 0 && job->cow_label) {
        int64_t cow = private_dirty();
        if (write(wfd, &cow, sizeof(cow)) < 0) {
            /* the parent then reports 0 */
        }
        if (cow)
            log_notice("Fork CoW for %s: current %lld MB", job->cow_label,
                       (long long)(cow >> 20));
    }
    _exit(rc ? 1 : 0);
}

int snapshot_start(struct snapshot *sn, struct store *s, const struct snapshot_job *job,
                   struct snapshot_times *t)
{
    int p[2], oom;
    uint64_t *bm;
    int64_t t0, t1, t2;
    pid_t pid;

    if (pipe2(p, O_CLOEXEC) < 0) {
        log_warn("%s: pipe: %s", job->what, strerror(errno));
        return SNAPSHOT_ERR_PIPE;
    }
    t0 = util_mono_us();
    bm = snapshot_hold_all(s, &oom);
    if (oom) {
        close(p[0]);
        close(p[1]);
        return SNAPSHOT_ERR_NOMEM;
    }
    if (job->prepare && job->prepare(job->arg)) {
        snapshot_release_all(s, bm);
        close(p[0]);
        close(p[1]);
        return SNAPSHOT_ERR_PREPARE;
    }
    t1 = util_mono_us();
    pid = fork();
    t2 = util_mono_us();
    if (pid == 0) {
        close(p[0]);
        child_main(job, p[1]);
    }
    snapshot_release_all(s, bm);
    if (t) {
        t->held_us = util_mono_us() - t0;
        t->lock_us = t1 - t0;
        t->fork_us = t2 - t1;
    }
    close(p[1]);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        log_warn("%s: fork: %s", job->what, strerror(e));
        return SNAPSHOT_ERR_FORK;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    sn->report_fd = p[0];
    __atomic_store_n(&sn->pid, pid, __ATOMIC_RELAXED);
    return SNAPSHOT_OK;
}

int snapshot_reap(struct snapshot *sn, int block, struct snapshot_result *res)
{
    int status;
    pid_t r;

    if (!sn->pid)
        return 0;
    r = waitpid(sn->pid, &status, block ? 0 : WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return 0;
    memset(res, 0, sizeof(*res));
    res->pid = sn->pid;
    res->ok = r == sn->pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    res->signaled = r == sn->pid && WIFSIGNALED(status);
    res->sig = res->signaled ? WTERMSIG(status) : 0;
    if (sn->report_fd >= 0) {
        if (read(sn->report_fd, &res->cow, sizeof(res->cow)) != (ssize_t)sizeof(res->cow))
            res->cow = 0;
        close(sn->report_fd);
        sn->report_fd = -1;
    }
    __atomic_store_n(&sn->pid, 0, __ATOMIC_RELAXED);
    return 1;
}

void snapshot_kill(struct snapshot *sn)
{
    if (sn->pid)
        kill(sn->pid, SIGUSR1);
}

int snapshot_running(const struct snapshot *sn)
{
    return __atomic_load_n(&sn->pid, __ATOMIC_RELAXED) != 0;
}
