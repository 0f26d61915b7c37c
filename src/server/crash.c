/* The crash report: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT the log gets redis-server's
 * bug-report lines ("crashed by signal", the STACK TRACE section with a backtrace), then the
 * signal is raised again with its default action (a core dump where enabled). Best effort, as
 * Redis's: the handler formats and may allocate while the process is already broken. */
#define _GNU_SOURCE
#include "server/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"

static void crash_handler(int sig, siginfo_t *info, void *uc)
{
    void *frames[64];
    char **names;
    int n;

    (void)uc;
    log_warn("\n\n=== REDIS BUG REPORT START: Cut & paste starting from here ===");
    log_warn("    twincache crashed by signal: %d, si_code: %d", sig, info ? info->si_code : 0);
    if (info && (sig == SIGSEGV || sig == SIGBUS))
        log_warn("    Accessing address: %p", info->si_addr);
    log_raw("\n------ STACK TRACE ------\n\nBacktrace:\n");
    n = backtrace(frames, 64);
    names = backtrace_symbols(frames, n);
    for (int i = 0; names && i < n; i++)
        log_raw("%s\n", names[i]);
    log_raw("\n------ STACK TRACE DONE ------\n");
    log_warn("\n=== REDIS BUG REPORT END. Make sure to include from START to END. ===\n");
    if (cfg.use_exit_on_panic)
        _exit(1);
    signal(sig, SIG_DFL);
    raise(sig);
}

void crash_setup(void)
{
    struct sigaction act;
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

    if (!cfg.crash_log_enabled)
        return;
    memset(&act, 0, sizeof(act));
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_NODEFER | SA_RESETHAND | SA_SIGINFO;
    act.sa_sigaction = crash_handler;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &act, NULL);
}
