/* Supervision by an init system, as redis-server's "supervised" setting: systemd's readiness
 * protocol (datagrams to $NOTIFY_SOCKET, written here without libsystemd) and upstart's
 * "expect stop" (the process stops itself with SIGSTOP once set up). */
#ifndef TC_SUPERVISE_H
#define TC_SUPERVISE_H

enum { SUPERVISE_NO = 0, SUPERVISE_UPSTART = 1, SUPERVISE_SYSTEMD = 2, SUPERVISE_AUTO = 3 };

/* Start-up, main thread, before any other thread: resolve mode (cfg.supervised; auto looks at
 * UPSTART_JOB, then NOTIFY_SOCKET), log as Redis does, and set up: systemd gets
 * "STATUS=twincache is loading..."; upstart: SIGSTOP now, then UPSTART_JOB is unset. Returns
 * 1 when the process is supervised (daemonize is then not done), else 0. */
int supervise_setup(int mode);
/* The mode in effect (SUPERVISE_*): the configured one, or what auto detected. */
int supervise_mode(void);
/* 1 once supervise_setup succeeded (INFO's process_supervised). */
int supervise_active(void);
/* When the mode is systemd: send msg (e.g. "READY=1\n") to $NOTIFY_SOCKET ('@' = Linux
 * abstract namespace). Failures are logged as Redis logs them. Returns 1 sent, 0 no socket,
 * -errno. A no-op returning 0 in other modes. Any thread. */
int supervise_notify(const char *msg);
/* The datagram itself, without mode check or logging (tests, the systemd path). */
int supervise_send(const char *socket_path, const char *msg);

#endif
