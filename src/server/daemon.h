/* The process as a daemon: detaching (redis-server's daemonize, memcached's -d), the pid file,
 * memcached's -u / -r / -k. Start-up only, main thread. */
#ifndef TC_DAEMON_H
#define TC_DAEMON_H

/* Detach before any thread exists: fork, setsid, fork again; stdin, stdout and stderr go to
 * /dev/null (unless keep_stdio: memcached -d -v); chdir("/") when chdir_root (memcached -d
 * without -r). Returns 0 in the daemon. The original process does not return: it waits until
 * the daemon calls daemon_ready() and exits 0, or exits 1 when the daemon ends first (a failed
 * start-up). -1 (message on stderr) when fork or setsid fail. */
int daemon_detach(int keep_stdio, int chdir_root);
/* Start-up went far enough (the ports are bound): the waiting original process exits 0.
 * A no-op when not detached, or after the first call. */
void daemon_ready(void);

/* The pid file, as redis-server writes it (best effort, nothing logged) or, mc_style, as
 * memcached (a warning when it names a running process, written to path.tmp then renamed,
 * failures on stderr). */
void daemon_pidfile_write(const char *path, int mc_style);
/* Remove it at exit: mc_style reports a failure on stderr as memcached. */
void daemon_pidfile_remove(const char *path, int mc_style);

/* memcached's root check, before anything is bound: as root (uid or euid 0) without a user,
 * "can't run as root without the -u switch" and 64; an unknown user, "can't find the user %s
 * to switch to" and 67. 0 when start-up may go on; else the exit status (message printed). */
int daemon_user_check(const char *user);
/* Become user (when root): supplementary groups dropped (EPERM tolerated, as memcached), then
 * its group and uid. Call after the ports are bound, before any thread starts. 0, or the
 * exit status after memcached's message on stderr. A no-op when not root. */
int daemon_drop_privileges(const char *user);
/* memcached -r: raise the core file size limit (to unlimited, else to the hard limit); 0, or
 * 71 after "failed to ensure corefile creation". */
int daemon_raise_core_limit(void);
/* memcached -k: mlockall(MCL_CURRENT | MCL_FUTURE); a failure is a warning on stderr. */
void daemon_lock_memory(void);

#endif
