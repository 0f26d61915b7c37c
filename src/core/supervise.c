#define _GNU_SOURCE
#include "core/supervise.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/log.h"

static int mode_now = SUPERVISE_NO; /* written once at start-up, before the workers */
static int active;

int supervise_send(const char *path, const char *msg)
{
    struct sockaddr_un sa;
    struct msghdr mh;
    struct iovec iov;
    size_t n;
    socklen_t len;
    int fd, r = 1;

    if (!path || !path[0])
        return 0;
    n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n < 2 || n >= sizeof(sa.sun_path))
        return -EINVAL;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* abstract: the name is the bytes after the NUL, not padded */
    len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/'));
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    iov.iov_base = (void *)msg;
    iov.iov_len = strlen(msg);
    memset(&mh, 0, sizeof(mh));
    mh.msg_name = &sa;
    mh.msg_namelen = len;
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0)
        r = -errno;
    close(fd);
    return r;
}

int supervise_notify(const char *msg)
{
    int r;

    if (mode_now != SUPERVISE_SYSTEMD)
        return 0;
    r = supervise_send(getenv("NOTIFY_SOCKET"), msg);
    if (r == 0)
        log_warn("systemd supervision error: NOTIFY_SOCKET not found!");
    else if (r < 0)
        log_warn("systemd supervision error: sd_notify: %d", r);
    return r;
}

int supervise_setup(int mode)
{
    int ok = 0;

    if (mode == SUPERVISE_AUTO) {
        if (getenv("UPSTART_JOB")) {
            log_verbose("Upstart supervision detected.");
            mode = SUPERVISE_UPSTART;
        } else if (getenv("NOTIFY_SOCKET")) {
            log_verbose("Systemd supervision detected.");
            mode = SUPERVISE_SYSTEMD;
        }
    }
    mode_now = mode;
    if (mode == SUPERVISE_UPSTART) {
        if (!getenv("UPSTART_JOB")) {
            log_warn("upstart supervision requested, but UPSTART_JOB not found!");
        } else {
            log_notice("supervised by upstart, will stop to signal readiness.");
            raise(SIGSTOP);
            unsetenv("UPSTART_JOB");
            ok = 1;
        }
    } else if (mode == SUPERVISE_SYSTEMD) {
        if (supervise_notify("STATUS=twincache is loading...\n") > 0) {
            log_notice("Supervised by systemd. Please make sure you set appropriate values for "
                       "TimeoutStartSec and TimeoutStopSec in your service unit.");
            ok = 1;
        }
    }
    active = ok;
    return ok;
}

int supervise_mode(void)
{
    return mode_now;
}

int supervise_active(void)
{
    return active;
}
