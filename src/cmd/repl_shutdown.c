/* SHUTDOWN (and SIGTERM / SIGINT) waits for lagging replicas, as Redis 7.0's
 * shutdown-timeout: unless NOW is given, the timeout is 0 or every replica acknowledged the
 * whole stream, writes are paused, the replicas are asked for their offsets and the shutdown
 * waits until they all caught up or shutdown-timeout seconds passed. Then it finishes: the
 * lagging replicas are logged, the final save runs, and the server exits; when that fails
 * (and FORCE was not given) the shutdown is cancelled, writes go on and the SHUTDOWN clients
 * blocked meanwhile get "Errors trying to SHUTDOWN. Check logs.". SHUTDOWN ABORT cancels a
 * waiting shutdown the same way.
 *
 * The waiting clients are blocked as WAIT's are (block_spec with acks: they look again at
 * each wake-up of the waiters); the main thread's loop finishes the shutdown
 * (repl_shutdown_tick). sd_lock is taken before everything else here and by no one else. */
#include "cmd/repl.h"

#include <pthread.h>
#include <stdatomic.h>

#include "cmd/blocking.h"
#include "core/config.h"
#include "core/log.h"
#include "core/supervise.h"
#include "core/util.h"
#include "net/worker.h"
#include "persist/aof_log.h"
#include "persist/persist.h"

static pthread_mutex_t sd_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int64_t sd_deadline; /* ms: a shutdown waits for its replicas until then; 0 none */
static int sd_flags;                /* its REPL_SHUT_* flags (under sd_lock) */
static int sd_signal;               /* it came from a signal (under sd_lock) */
static _Atomic int sd_done;         /* finished: the server is exiting */

/* Every blocked SHUTDOWN client looks again (they answer when no shutdown waits any more). */
static void cancel_locked(void)
{
    int waited = atomic_load(&sd_deadline) != 0;

    atomic_store(&sd_deadline, 0);
    sd_flags = 0;
    sd_signal = 0;
    if (waited)
        cmd_pause_shutdown(repl_srv, 0);
    block_wake_waiters(repl_srv);
}

/* Redis's finishShutdown: 0 when the server exits now, -1 when it failed (cancelled). */
static int finish_locked(void)
{
    int save = sd_flags & REPL_SHUT_SAVE, nosave = sd_flags & REPL_SHUT_NOSAVE;
    int force = sd_flags & REPL_SHUT_FORCE, rc;

    repl_lagging_replicas(1);
    if (aof_initial_rewrite_running()) {
        if (!force) {
            log_warn("Writing initial AOF, can't exit.");
            goto error;
        }
        log_warn("Writing initial AOF. Exit anyway.");
    }
    repl_quiesce(1); /* the offset saved is the one the replicas hold */
    /* a signal's save (without SAVE or NOSAVE) leaves the AOF to be closed once the workers
     * stopped; SHUTDOWN's closes it here */
    rc = sd_signal && !save && !nosave ? persist_shutdown_signal() : persist_shutdown(save, nosave);
    if (rc && !force) {
        repl_quiesce(0);
        goto error;
    }
    atomic_store(&sd_done, 1);
    atomic_store(&sd_deadline, 0);
    srv_request_shutdown(repl_srv, 0);
    return 0;
error:
    log_warn("Errors trying to shut down the server. Check the logs for more information.");
    cancel_locked();
    return -1;
}

int repl_shutdown_begin(int flags, int from_signal)
{
    int rc;

    pthread_mutex_lock(&sd_lock);
    if (atomic_load(&sd_deadline) || atomic_load(&sd_done)) {
        pthread_mutex_unlock(&sd_lock);
        return REPL_SHUT_WAITING; /* one shutdown at a time: this one waits with it */
    }
    if (atomic_load(&persist_loading))
        flags = (flags & ~REPL_SHUT_SAVE) | REPL_SHUT_NOSAVE; /* a half-loaded dataset */
    sd_flags = flags;
    sd_signal = from_signal;
    log_warn("User requested shutdown...");
    supervise_notify("STOPPING=1\n");
    if (!(flags & REPL_SHUT_NOW) && cfg.shutdown_timeout > 0 && repl_lagging_replicas(0)) {
        atomic_store(&sd_deadline, util_now_ms() + (int64_t)cfg.shutdown_timeout * 1000);
        repl_ask_acks();
        cmd_pause_shutdown(repl_srv, 1);
        block_wake_waiters(repl_srv); /* a worker sends the GETACK before it sleeps again */
        log_notice("Waiting for replicas before shutting down.");
        pthread_mutex_unlock(&sd_lock);
        return REPL_SHUT_WAITING;
    }
    rc = finish_locked() ? REPL_SHUT_FAILED : REPL_SHUT_DONE;
    pthread_mutex_unlock(&sd_lock);
    return rc;
}

void repl_shutdown_tick(void)
{
    int64_t d = atomic_load(&sd_deadline);

    if (!d || (util_now_ms() < d && repl_lagging_replicas(0)))
        return;
    pthread_mutex_lock(&sd_lock);
    if (atomic_load(&sd_deadline))
        finish_locked();
    pthread_mutex_unlock(&sd_lock);
}

int repl_shutdown_abort(void)
{
    int rc = -1;

    pthread_mutex_lock(&sd_lock);
    if (atomic_load(&sd_deadline)) {
        cancel_locked();
        log_notice("Shutdown manually aborted.");
        rc = 0;
    }
    pthread_mutex_unlock(&sd_lock);
    return rc;
}

int64_t repl_shutdown_in_ms(void)
{
    int64_t d = atomic_load_explicit(&sd_deadline, memory_order_relaxed);

    if (!d)
        return -1;
    d -= util_now_ms();
    return d > 0 ? d : 0;
}

int repl_shutdown_blocked_done(void)
{
    return !atomic_load(&sd_deadline) && !atomic_load(&sd_done);
}
