/* proctitle (template expansion, validation, the title written over argv's memory) and
 * supervise_send (systemd's notify datagram, at a path and in the abstract namespace). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/config.h"
#include "core/proctitle.h"
#include "core/supervise.h"
#include "tap.h"

static void test_expand(void)
{
    char out[300];
    const char *argv[1];

    config_defaults(); /* bind "* -::*", port 6379 */
    is_int(proctitle_expand("{title} {listen-addr} {server-mode}", "/usr/bin/tc", out,
                            sizeof(out)), 18, "default template: its length");
    is_str(out, "/usr/bin/tc *:6379", "default template: trimmed of the empty server-mode");
    proctitle_expand("{{x} {port}/{tls-port} [{unixsocket}] {config-file}", "t", out, sizeof(out));
    is_str(out, "{x} 6379/0 [] -", "{{ is a brace; the other variables");
    argv[0] = "127.0.0.1 ::1";
    config_set("bind", argv, 1, 1, out, sizeof(out));
    proctitle_expand("{listen-addr}", "t", out, sizeof(out));
    is_str(out, "127.0.0.1:6379", "listen-addr: the first bind address");
    argv[0] = "0";
    config_set("port", argv, 1, 1, out, sizeof(out));
    argv[0] = "/tmp/tc.sock";
    config_set("unixsocket", argv, 1, 1, out, sizeof(out));
    proctitle_expand("{listen-addr}", "t", out, sizeof(out));
    is_str(out, "unixsocket:/tmp/tc.sock", "listen-addr without a TCP port");
    ok(proctitle_expand("{nope}", "t", out, sizeof(out)) < 0, "unknown variable");
    ok(proctitle_expand("a {title", "t", out, sizeof(out)) < 0, "no closing brace");
    ok(proctitle_expand("a {", "t", out, sizeof(out)) < 0, "a brace ending it");
    ok(proctitle_validate("{server-mode}") < 0, "valid but empty: refused");
    ok(proctitle_validate("   ") < 0, "spaces only: refused");
    ok(proctitle_validate("x}") == 0, "a lone closing brace is text");
    char small[8];
    is_int(proctitle_expand("{title}", "0123456789", small, sizeof(small)), 7, "cut to fit");
    config_defaults();
}

static void test_config_set(void)
{
    char err[256];
    const char *v[1] = {"{bad}"};

    ok(config_set("proc-title-template", v, 1, 0, err, sizeof(err)) < 0, "CONFIG SET refused");
    is_str(err, "CONFIG SET failed (possibly related to argument 'proc-title-template') - "
                "template format is invalid or contains unknown variables", "Redis's text");
}

static void test_apply(void)
{
    /* argv as the kernel lays it out: strings one after the other */
    static char area[] = "programname\0--port\0" "6380";
    char *argv[] = {area, area + 12, area + 19, NULL};
    char err[256];
    const char *v[1];

    ok(proctitle_apply() < 0, "not initialised: nothing written");
    config_defaults();
    proctitle_init(3, argv, "/etc/tc.conf");
    is_str(argv[0], "programname", "argv[0] still reads (a copy)");
    ok(argv[0] != area && argv[1] != area + 12, "argv[] points at copies");
    is_str(argv[2], "6380", "argv[2] copied");
    ok(proctitle_apply() == 0, "applied");
    is_str(area, "programname *:6379", "the title over argv's memory");
    ok(area[sizeof(area) - 2] == '\0', "the rest zeroed");
    v[0] = "{port}";
    ok(config_set("proc-title-template", v, 1, 0, err, sizeof(err)) == 0, "CONFIG SET");
    is_str(area, "6379", "a shorter title");
    ok(area[11] == '\0', "with more arguments, no byte kept where argv[0] ended");
    v[0] = "{config-file}";
    config_set("proc-title-template", v, 1, 0, err, sizeof(err));
    is_str(area, "/etc/tc.conf", "config-file");
    for (int i = 0; i < 3; i++)
        free(argv[i]); /* the copies: a process keeps them in its argv for good */
}

static void test_apply_single_arg(void)
{
    /* argv[0] alone: a shorter title keeps a byte where it ended, so Linux reads the area as
     * a title up to its first NUL. In a fork child (initialisation is once per process),
     * written as a snapshot child writes its title: without locks. */
    pid_t pid = fork();
    int status = -1;

    if (pid == 0) {
        static char area[] = "programname";
        char *argv[] = {area, NULL};
        config_defaults();
        proctitle_init(1, argv, NULL);
        _exit(proctitle_apply_child("bg") == 0 && !strcmp(area, "bg *:6379") &&
                      area[11] == '.' ? 0 : 1);
    }
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "single argument: title, then '.'");
}

static int bind_dgram(struct sockaddr_un *sa, socklen_t len)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)sa, len) < 0)
        return -1;
    return fd;
}

static void test_notify(void)
{
    struct sockaddr_un sa;
    char path[64], got[64], name[64];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/tmp/tc-unit-notify-%d", (int)getpid());
    unlink(path);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    fd = bind_dgram(&sa, sizeof(sa));
    ok(fd >= 0, "listener at a path");
    is_int(supervise_send(path, "READY=1\n"), 1, "sent to a path");
    n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
    is_int((int)n, 8, "one datagram");
    got[n > 0 ? n : 0] = '\0';
    is_str(got, "READY=1\n", "its text");
    close(fd);
    unlink(path);

    snprintf(name, sizeof(name), "@tc-unit-notify-%d", (int)getpid());
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
    fd = bind_dgram(&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name)));
    ok(fd >= 0, "abstract listener");
    is_int(supervise_send(name, "STOPPING=1\n"), 1, "sent to @name");
    n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
    got[n > 0 ? n : 0] = '\0';
    is_str(got, "STOPPING=1\n", "abstract: its text");
    close(fd);

    is_int(supervise_send(NULL, "READY=1\n"), 0, "no socket");
    is_int(supervise_send("relative", "READY=1\n"), -22, "neither / nor @: -EINVAL");
    ok(supervise_send("/nonexistent/x", "READY=1\n") < 0, "nobody listening: -errno");
    is_int(supervise_notify("READY=1\n"), 0, "not supervised: nothing sent");
}

int main(void)
{
    test_expand();
    test_config_set();
    test_apply_single_arg();
    test_apply();
    test_notify();
    return tap_done();
}
