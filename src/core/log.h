/* Leveled logging to stdout (as redis-server) or stderr (as memcached) or a file, Redis-style lines. Thread-safe (one write per line). */
#ifndef TC_LOG_H
#define TC_LOG_H

enum log_level { LOG_DEBUG = 0, LOG_VERBOSE, LOG_NOTICE, LOG_WARNING };

/* Set the level and the destination (NULL or "" = stdout, or stderr after log_to_stderr). Returns 0 or -1. Call at startup
 * or from CONFIG SET; the level is read racily by loggers, which is harmless. */
int log_setup(int level, const char *path);
/* Parse "debug"/"verbose"/"notice"/"warning"; returns the level or -1. */
/* memcached's command line: memcached writes its messages to stderr. */
void log_to_stderr(void);
int log_level_parse(const char *s);
const char *log_level_name(int level);
int log_level_get(void);
void log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text as is, without the line prefix (the start-up banner), at the notice level. */
void log_raw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__)
#define log_verbose(...) log_write(LOG_VERBOSE, __VA_ARGS__)
#define log_notice(...) log_write(LOG_NOTICE, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARNING, __VA_ARGS__)

#endif
