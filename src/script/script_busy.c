/* Scripts that run too long: busy-reply-threshold (lua-time-limit), -BUSY, SCRIPT KILL and
 * FUNCTION KILL, as Redis 7.0.
 *
 * Each worker thread that runs scripts has a slot here saying whether its script runs, is past
 * the threshold (busy), has written, and whether a kill was asked for. The running script's own
 * thread notices the threshold in its Lua hook (script_lua.c, every LUA_HOOK_COUNT
 * instructions) and counts itself in cmd_script_busy, which makes every other worker refuse
 * commands without "allow_busy" (src/cmd/table.c); the script's own worker serves its other
 * clients from the hook (worker_serve_busy). SCRIPT KILL, on any worker, finds the busy script
 * in the slots and sets its kill flag, which the hook turns into an error inside the script. A
 * worker waiting for a stripe the script holds waits for the script to end (Redis's clients
 * all get -BUSY). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/config.h"
#include "core/log.h"
#include "script/script_int.h"

#define MAX_SLOTS 256

struct script_slot {
    _Atomic int state; /* SLOT_* */
    _Atomic int kill;  /* SCRIPT KILL / FUNCTION KILL asked for it */
    _Atomic int wrote; /* a write command ran: it can no longer be killed */
    _Atomic int is_function;
    char name[64];     /* the function's name, or the script's sha (under names_lock) */
    char argv[SCRIPT_RUN_ARGS][SCRIPT_RUN_ARGLEN]; /* a function's FCALL line (names_lock) */
    int argc;
    _Atomic long long start_ms;
};

enum { SLOT_IDLE, SLOT_RUNNING, SLOT_BUSY };

static struct script_slot slots[MAX_SLOTS];
static _Atomic int nslots;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct script_slot *my_slot;

static struct script_slot *slot_get(void)
{
    if (!my_slot) {
        int i = atomic_fetch_add_explicit(&nslots, 1, memory_order_relaxed);
        if (i >= MAX_SLOTS) {
            atomic_fetch_sub_explicit(&nslots, 1, memory_order_relaxed);
            return NULL; /* more than MAX_SLOTS threads ran scripts: not killable */
        }
        my_slot = &slots[i];
    }
    return my_slot;
}

/* The run's name and (for a function) its FCALL line, for SCRIPT KILL / FUNCTION STATS on
 * other workers: written when the run turns busy, so a run that ends in time takes no lock. */
static void publish_name(struct script_slot *sl, struct script_run *run)
{
    pthread_mutex_lock(&names_lock);
    snprintf(sl->name, sizeof(sl->name), "%s", run->name ? run->name : run->sha);
    sl->argc = 0;
    if (run->is_function && run->caller) {
        const struct conn *c = run->caller;
        for (int i = 0; i < c->argc && i < SCRIPT_RUN_ARGS; i++) {
            size_t n = c->argv[i].n < SCRIPT_RUN_ARGLEN - 1 ? c->argv[i].n : SCRIPT_RUN_ARGLEN - 1;
            memcpy(sl->argv[i], c->argv[i].p, n);
            sl->argv[i][n] = '\0';
            sl->argc++;
        }
    }
    pthread_mutex_unlock(&names_lock);
}

void script_busy_enter(struct script_run *run)
{
    struct script_slot *sl = slot_get();

    run->start_ms = util_mono_us() / 1000;
    run->busy = 0;
    if (!sl)
        return;
    atomic_store_explicit(&sl->is_function, run->is_function, memory_order_relaxed);
    atomic_store_explicit(&sl->start_ms, run->start_ms, memory_order_relaxed);
    atomic_store_explicit(&sl->kill, 0, memory_order_relaxed);
    atomic_store_explicit(&sl->wrote, 0, memory_order_relaxed);
    atomic_store_explicit(&sl->state, SLOT_RUNNING, memory_order_release);
}

void script_busy_wrote(void)
{
    if (my_slot)
        atomic_store_explicit(&my_slot->wrote, 1, memory_order_relaxed);
}

void script_busy_leave(struct script_run *run)
{
    if (run->busy)
        atomic_fetch_sub_explicit(&cmd_script_busy, run->is_function ? CMD_BUSY_FUNCTION : 1,
                                  memory_order_relaxed);
    run->busy = 0;
    if (my_slot)
        atomic_store_explicit(&my_slot->state, SLOT_IDLE, memory_order_release);
}

int script_busy_check(struct script_run *run, int shutting_down)
{
    long long t = cfg.busy_reply_threshold;

    if (!run->busy && t > 0 && util_mono_us() / 1000 - run->start_ms >= t) {
        run->busy = 1;
        atomic_fetch_add_explicit(&cmd_script_busy, run->is_function ? CMD_BUSY_FUNCTION : 1,
                                  memory_order_relaxed);
        if (my_slot) {
            publish_name(my_slot, run);
            atomic_store_explicit(&my_slot->state, SLOT_BUSY, memory_order_release);
        }
        log_warn("Slow script detected: still in execution after %lld milliseconds. You can "
                 "try killing the script using the %s command. Script name is: %s.",
                 util_mono_us() / 1000 - run->start_ms,
                 run->is_function ? "FUNCTION KILL" : "SCRIPT KILL",
                 run->name ? run->name : run->sha);
    }
    if (shutting_down)
        return 1; /* SHUTDOWN NOSAVE: the script stops whatever it did */
    return my_slot && atomic_load_explicit(&my_slot->kill, memory_order_relaxed);
}

void script_kill_generic(struct conn *c, int is_eval)
{
    int n = atomic_load_explicit(&nslots, memory_order_acquire);

    for (int i = 0; i < n; i++) {
        struct script_slot *sl = &slots[i];
        if (atomic_load_explicit(&sl->state, memory_order_acquire) != SLOT_BUSY)
            continue;
        if (is_eval && atomic_load_explicit(&sl->is_function, memory_order_relaxed)) {
            reply_error(c, "BUSY Redis is busy running a script. You can only call FUNCTION "
                           "KILL or SHUTDOWN NOSAVE.");
            return;
        }
        if (!is_eval && !atomic_load_explicit(&sl->is_function, memory_order_relaxed)) {
            reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL "
                           "or SHUTDOWN NOSAVE.");
            return;
        }
        if (atomic_load_explicit(&sl->wrote, memory_order_relaxed)) {
            reply_error(c, "UNKILLABLE Sorry the script already executed write commands against "
                           "the dataset. You can either wait the script termination or kill the "
                           "server in a hard way using the SHUTDOWN NOSAVE command.");
            return;
        }
        atomic_store_explicit(&sl->kill, 1, memory_order_relaxed);
        reply_ok(c);
        return;
    }
    reply_error(c, "NOTBUSY No scripts in execution right now.");
}

int script_running_info(char *name, size_t cap, char (*argv)[SCRIPT_RUN_ARGLEN], int *argc,
                        long long *ms)
{
    int n = atomic_load_explicit(&nslots, memory_order_acquire);

    for (int i = 0; i < n; i++) {
        struct script_slot *sl = &slots[i];
        if (atomic_load_explicit(&sl->state, memory_order_acquire) != SLOT_BUSY ||
            !atomic_load_explicit(&sl->is_function, memory_order_relaxed))
            continue; /* (a function not yet past the threshold is not reported: as in Redis,
                       * where no other client is served while it runs) */
        pthread_mutex_lock(&names_lock);
        snprintf(name, cap, "%s", sl->name);
        *argc = sl->argc;
        memcpy(argv, sl->argv, sizeof(sl->argv[0]) * (size_t)sl->argc);
        pthread_mutex_unlock(&names_lock);
        *ms = util_mono_us() / 1000 - atomic_load_explicit(&sl->start_ms, memory_order_relaxed);
        return 1;
    }
    return 0;
}
