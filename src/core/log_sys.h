/* log.c's syslog(3) side, kept apart: <syslog.h> names its priorities LOG_DEBUG ... LOG_WARNING,
 * the same names as log.h's levels. Levels here are log.h's (0 debug .. 3 warning). */
#ifndef TC_LOG_SYS_H
#define TC_LOG_SYS_H

/* From now on each line also goes to syslog, with syslog's defaults (the program's name, the
 * user facility) until log_sys_open: as redis-server, whose first lines precede its openlog. */
void log_sys_enable(void);
/* openlog(ident, LOG_PID | LOG_NDELAY | LOG_NOWAIT, facility) as redis-server: facility is an
 * index into user, local0 .. local7 (cfg.syslog_facility). ident is copied. Start-up only. */
void log_sys_open(const char *ident, int facility_idx);
/* The message (no time or pid prefix: syslog adds its own) at level's priority, mapped as
 * Redis maps them: debug, verbose -> info, notice, warning. A no-op before log_sys_open. */
void log_sys_write(int level, const char *msg);
/* 1 after log_sys_open. */
int log_sys_enabled(void);

#endif
