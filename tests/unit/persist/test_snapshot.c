/* snapshot.c (tc_persist, linking only the store and core): the child sees the state of the
 * fork, the prepare step runs with every stripe held and the parent holds none afterwards,
 * inherited sockets are closed in the child, failures and SIGUSR1 are reported by the reap,
 * a refused prepare forks nothing. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "persist/snapshot.h"
#include "store/store.h"
#include "tap.h"

static int value;      /* changed by the parent after the fork */
static int sock = -1;  /* a socket the child must not have */
static int prepared;   /* prepare calls that saw every stripe held */
static int prepare_rc;
static struct store *st;

static int prepare(void *arg)
{
    (void)arg;
    if (store_held && store_is_held(0) && store_is_held(st->nstripes - 1))
        prepared++;
    return prepare_rc;
}

/* exit status 0 when the copy is the one of the fork and the socket is closed */
static int write_check(void *arg)
{
    (void)arg;
    if (value != 1)
        return 1;
    if (fcntl(sock, F_GETFD) != -1 || errno != EBADF)
        return 1;
    return 0;
}

static int write_fail(void *arg)
{
    (void)arg;
    return 1;
}

static int write_sleep(void *arg)
{
    (void)arg;
    sleep(30);
    return 0;
}

int main(void)
{
    struct snapshot sn = SNAPSHOT_INIT;
    struct snapshot_result r;
    struct snapshot_times t;
    int sv[2], oom;

    st = store_create(128, 1);
    ok(st != NULL, "store");
    ok(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    sock = sv[0];

    {
        struct snapshot_job job = {.title = "tc-test", .what = "test", .cow_label = "test",
                                   .prepare = prepare, .write = write_check};
        value = 1;
        ok(snapshot_start(&sn, st, &job, &t) == SNAPSHOT_OK, "started");
        value = 2;
        ok(sn.pid > 0 && snapshot_running(&sn), "child running");
        ok(store_held == NULL, "parent holds no stripe after the fork");
        ok(prepared == 1, "prepare ran with every stripe held");
        ok(t.held_us >= t.fork_us && t.held_us >= 0, "times");
        ok(snapshot_reap(&sn, 1, &r) == 1, "reaped");
        ok(r.ok && !r.signaled, "child saw the fork's state and no socket");
        ok(r.cow >= 0, "cow reported");
        ok(!snapshot_running(&sn) && sn.report_fd == -1, "emptied");
        ok(snapshot_reap(&sn, 1, &r) == 0, "nothing left to reap");
    }
    {
        struct snapshot_job job = {.title = "tc-test", .what = "test", .write = write_fail};
        ok(snapshot_start(&sn, st, &job, NULL) == SNAPSHOT_OK, "started (failing)");
        ok(snapshot_reap(&sn, 1, &r) == 1 && !r.ok && !r.signaled && r.cow == 0,
           "failure reported");
    }
    {
        struct snapshot_job job = {.title = "tc-test", .what = "test", .write = write_sleep};
        ok(snapshot_start(&sn, st, &job, NULL) == SNAPSHOT_OK, "started (sleeping)");
        ok(snapshot_reap(&sn, 0, &r) == 0, "still running: non-blocking reap returns 0");
        snapshot_kill(&sn);
        ok(snapshot_reap(&sn, 1, &r) == 1 && !r.ok && r.signaled && r.sig == SIGUSR1,
           "killed with SIGUSR1");
    }
    {
        struct snapshot_job job = {.title = "tc-test", .what = "test", .prepare = prepare,
                                   .write = write_check};
        prepare_rc = -1;
        ok(snapshot_start(&sn, st, &job, NULL) == SNAPSHOT_ERR_PREPARE, "prepare refused");
        ok(sn.pid == 0 && store_held == NULL, "no child, stripes released");
    }
    {
        uint64_t *bm = snapshot_hold_all(st, &oom);
        ok(bm && !oom && store_held && store_is_held(5), "hold all");
        ok(snapshot_hold_all(st, &oom) == NULL && !oom, "already held: nothing taken");
        snapshot_release_all(st, bm);
        ok(store_held == NULL, "released");
    }
    close(sv[0]);
    close(sv[1]);
    store_destroy(&st);
    return tap_done();
}
