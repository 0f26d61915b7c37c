#include "core/log.h"
#include "core/log_sys.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_level = LOG_NOTICE; /* atomic: CONFIG SET loglevel runs on any worker */
static int log_fd = 1; /* stdout, as redis-server with logfile "" */
static const char *names[] = {"debug", "verbose", "notice", "warning"};
static const char marks[] = {'.', '-', '*', '#'};

int log_setup(int level, const char *path)
{
    if (level >= LOG_DEBUG && level <= LOG_WARNING)
        __atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
    if (path && path[0]) {
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
            return -1;
        if (log_fd > 2)
            close(log_fd);
        log_fd = fd;
    }
    return 0;
}

void log_to_stderr(void)
{
    if (log_fd <= 2)
        log_fd = 2;
}

void log_raw(const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    int n;

    if (LOG_NOTICE < __atomic_load_n(&log_level, __ATOMIC_RELAXED))
        return;
    va_start(ap, fmt);
    n = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(text) - 1)
        n = (int)sizeof(text) - 1;
    if (n > 0 && write(log_fd, text, (size_t)n) < 0) {
        /* nothing sensible to do */
    }
    log_sys_write(LOG_NOTICE, text); /* as Redis: raw text goes to syslog too */
}

int log_level_parse(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(s, names[i]))
            return i;
    return -1;
}

const char *log_level_name(int level)
{
    return names[level & 3];
}

int log_level_get(void)
{
    return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

void log_write(int level, const char *fmt, ...)
{
    char line[1024];
    struct timeval tv;
    struct tm tm;
    va_list ap;
    int n;

    if (level < __atomic_load_n(&log_level, __ATOMIC_RELAXED))
        return;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    n = snprintf(line, sizeof(line), "%d:M ", (int)getpid());
    n += (int)strftime(line + n, sizeof(line) - (size_t)n, "%d %b %Y %H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03d %c ", (int)(tv.tv_usec / 1000),
                  marks[level & 3]);
    int msg = n; /* where the message starts: syslog gets it without the prefix */
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    if (write(log_fd, line, (size_t)n) < 0) {
        /* nothing sensible to do */
    }
    if (log_sys_enabled()) {
        line[n - 1] = '\0';
        log_sys_write(level, line + msg);
    }
}
