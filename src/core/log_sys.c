#include "core/log_sys.h"

#include <stdio.h>
#include <syslog.h>

static int opened;     /* set once at start-up, before the workers */
static char ident[64]; /* openlog keeps the pointer */

void log_sys_enable(void)
{
    opened = 1;
}

void log_sys_open(const char *id, int facility_idx)
{
    static const int facilities[] = {LOG_USER,   LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3,
                                     LOG_LOCAL4, LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};

    if (facility_idx < 0 || facility_idx > 8)
        facility_idx = 1;
    snprintf(ident, sizeof(ident), "%s", id ? id : "");
    openlog(ident, LOG_PID | LOG_NDELAY | LOG_NOWAIT, facilities[facility_idx]);
    opened = 1;
}

void log_sys_write(int level, const char *msg)
{
    static const int prio[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};

    if (opened)
        syslog(prio[level & 3], "%s", msg);
}

int log_sys_enabled(void)
{
    return opened;
}
