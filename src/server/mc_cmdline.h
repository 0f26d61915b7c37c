/* memcached's command line for twincache (mc_cmdline.c). */
#ifndef TC_MC_CMDLINE_H
#define TC_MC_CMDLINE_H

/* 1 when argv is a memcached command line (its first argument a single-dash flag). */
int mc_cmdline_is(int argc, char **argv);
/* Apply a memcached command line to cfg and mc_cfg (after config_defaults). Returns -1 to go
 * on starting, else the exit status (0 after -h / -V, memcached's status on a refusal, the
 * message already printed on stderr). */
int mc_cmdline_parse(int argc, char **argv);

/* memcached's -h on stdout: the memcached options twincache takes (also printed after
 * twincache's own usage by "twincache -h", where memcached's test suite reads it). */
void mc_cmdline_help(void);

/* What memcached's command line asks of the process itself (main.c and daemon.h act on it). */
struct mc_daemon {
    int daemonize;   /* -d: detach; the pid file (-P) is removed at exit only then */
    char user[256];  /* -u: the identity taken after the ports are bound (when root) */
    int maxcore;     /* -r: core file limit raised */
    int lock_memory; /* -k: mlockall */
    int verbose;     /* -v count: -d keeps stderr open when verbose, as memcached */
};
extern struct mc_daemon mc_daemon;

#endif
