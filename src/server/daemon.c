#define _GNU_SOURCE
#include "server/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define EX_USAGE_ 64  /* sysexits.h: memcached's statuses */
#define EX_NOUSER_ 67
#define EX_OSERR_ 71

static int ready_fd = -1; /* the daemon's end of the pipe the original process waits on */

/* The original process: wait for the daemon's byte (its start-up status) or for EOF. */
static void wait_for_daemon(int rfd, pid_t child)
{
    unsigned char status = 1;
    ssize_t n;

    while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
        ;
    do
        n = read(rfd, &status, 1);
    while (n < 0 && errno == EINTR);
    _exit(n == 1 ? status : 1); /* EOF: the daemon ended before it was ready */
}

int daemon_detach(int keep_stdio, int chdir_root)
{
    int p[2], fd;
    pid_t pid;

    fflush(NULL); /* nothing buffered is written twice */
    if (pipe2(p, O_CLOEXEC)) {
        perror("failed to daemonize: pipe");
        return -1;
    }
    pid = fork();
    if (pid < 0) {
        perror("failed to daemonize: fork");
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid > 0) {
        close(p[1]);
        wait_for_daemon(p[0], pid);
    }
    close(p[0]);
    if (setsid() < 0) {
        perror("failed to daemonize: setsid");
        _exit(1);
    }
    /* a second fork: the daemon is no session leader, so it can never get a terminal back */
    pid = fork();
    if (pid < 0) {
        perror("failed to daemonize: fork");
        _exit(1);
    }
    if (pid > 0)
        _exit(0);
    ready_fd = p[1];
    if (chdir_root && chdir("/") != 0) {
        perror("chdir");
        return -1;
    }
    if (!keep_stdio && (fd = open("/dev/null", O_RDWR)) >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    return 0;
}

void daemon_ready(void)
{
    unsigned char ok = 0;

    if (ready_fd < 0)
        return;
    if (write(ready_fd, &ok, 1) < 0) {
        /* the original process is gone: nobody to tell */
    }
    close(ready_fd);
    ready_fd = -1;
}

void daemon_pidfile_write(const char *path, int mc_style)
{
    char tmp[1100];
    FILE *f;

    if (!path || !path[0])
        return;
    if (!mc_style) {
        if ((f = fopen(path, "w"))) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        return;
    }
    if ((f = fopen(path, "r"))) {
        char line[64];
        if (fgets(line, sizeof(line), f)) {
            char *end;
            unsigned long pid = strtoul(line, &end, 10);
            if (end != line && (*end == '\n' || !*end) && pid > 0 && kill((pid_t)pid, 0) == 0)
                fprintf(stderr, "WARNING: The pid file contained the following (running) pid: "
                                "%lu\n", pid);
        }
        fclose(f);
    }
    /* a reader never finds it empty: written under another name, then renamed */
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (!(f = fopen(tmp, "w"))) {
        fprintf(stderr, "Could not open the pid file %s for writing: %s\n", tmp,
                strerror(errno));
        return;
    }
    fprintf(f, "%ld\n", (long)getpid());
    if (fclose(f) != 0)
        fprintf(stderr, "Could not close the pid file %s: %s\n", tmp, strerror(errno));
    if (rename(tmp, path) != 0)
        fprintf(stderr, "Could not rename the pid file from %s to %s: %s\n", tmp, path,
                strerror(errno));
}

void daemon_pidfile_remove(const char *path, int mc_style)
{
    if (!path || !path[0])
        return;
    if (unlink(path) != 0 && mc_style)
        fprintf(stderr, "Could not remove the pid file %s: %s\n", path, strerror(errno));
}

static int is_root(void)
{
    return getuid() == 0 || geteuid() == 0;
}

int daemon_user_check(const char *user)
{
    if (!is_root())
        return 0;
    if (!user || !user[0]) {
        fprintf(stderr, "can't run as root without the -u switch\n");
        return EX_USAGE_;
    }
    if (!getpwnam(user)) {
        fprintf(stderr, "can't find the user %s to switch to\n", user);
        return EX_NOUSER_;
    }
    return 0;
}

/* The process already is pw's user and group, with no other group: switching changes
 * nothing. (Skipping it keeps the set*id calls, which glibc broadcasts to every thread, out of
 * the common "-u root" case.) */
static int already(const struct passwd *pw)
{
    uid_t r, e, s;
    gid_t rg, eg, sg, list[2];
    int n;

    if (getresuid(&r, &e, &s) || getresgid(&rg, &eg, &sg))
        return 0;
    if (r != pw->pw_uid || e != pw->pw_uid || s != pw->pw_uid || rg != pw->pw_gid ||
        eg != pw->pw_gid || sg != pw->pw_gid)
        return 0;
    n = getgroups(2, list);
    return n == 0 || (n == 1 && list[0] == pw->pw_gid);
}

int daemon_drop_privileges(const char *user)
{
    struct passwd *pw;

    if (!is_root() || !user || !user[0])
        return 0;
    if (!(pw = getpwnam(user))) {
        fprintf(stderr, "can't find the user %s to switch to\n", user);
        return EX_NOUSER_;
    }
    if (already(pw))
        return 0; /* "-u root" as root (test harnesses): nothing to change, no set*id call */
    if (setgroups(0, NULL) < 0) {
        int e = errno; /* EPERM: already without the right to change them, which is fine */
        fprintf(stderr, "failed to drop supplementary groups: %s\n", strerror(e));
        if (e != EPERM)
            return EX_OSERR_;
    }
    if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
        fprintf(stderr, "failed to assume identity of user %s\n", user);
        return EX_OSERR_;
    }
    return 0;
}

int daemon_raise_core_limit(void)
{
    struct rlimit rl, want;

    if (getrlimit(RLIMIT_CORE, &rl) == 0) {
        want.rlim_cur = want.rlim_max = RLIM_INFINITY;
        if (setrlimit(RLIMIT_CORE, &want) != 0) {
            want.rlim_cur = want.rlim_max = rl.rlim_max; /* as far as the hard limit goes */
            (void)setrlimit(RLIMIT_CORE, &want);
        }
    }
    if (getrlimit(RLIMIT_CORE, &rl) != 0 || rl.rlim_cur == 0) {
        fprintf(stderr, "failed to ensure corefile creation\n");
        return EX_OSERR_;
    }
    return 0;
}

void daemon_lock_memory(void)
{
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        fprintf(stderr, "warning: -k invalid, mlockall() failed: %s\n", strerror(errno));
}
