#include "core/oom.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"

static int adjusted; /* this process wrote oom_score_adj (base holds the value before) */
static int base;

int oom_values_parse(const char *s, int out[3])
{
    for (int i = 0; i < 3; i++) {
        char *end;
        long v;
        while (*s == ' ')
            s++;
        errno = 0;
        v = strtol(s, &end, 10);
        if (end == s || errno || v < -2000 || v > 2000 || (*end && *end != ' '))
            return -1;
        out[i] = (int)v;
        s = end;
    }
    while (*s == ' ')
        s++;
    return *s ? -1 : 0;
}

/* The value for cls: 1 and *val when a value is to be written, 0 when nothing is to be done,
 * -1 after a warning. Reads the first value when first asked. */
static int score_for(int cls, int *val)
{
    char buf[64], vals[sizeof(cfg.oom_score_adj_values)];
    int mode = __atomic_load_n(&cfg.oom_score_adj, __ATOMIC_RELAXED), v[3], fd;
    ssize_t n;

    if (mode) {
        if (!adjusted) {
            fd = open("/proc/self/oom_score_adj", O_RDONLY);
            if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) < 0) {
                log_warn("Unable to read oom_score_adj: %s", strerror(errno));
                if (fd >= 0)
                    close(fd);
                return -1;
            }
            close(fd);
            buf[n] = '\0';
            base = atoi(buf);
            adjusted = 1;
        }
        config_str(cfg.oom_score_adj_values, vals, sizeof(vals));
        if (oom_values_parse(vals, v))
            return -1;
        *val = v[cls];
        if (mode != 3) /* yes and relative: added to the value found first */
            *val += base;
        if (*val > 1000)
            *val = 1000;
        if (*val < -1000)
            *val = -1000;
        return 1;
    }
    if (adjusted) {
        adjusted = 0;
        *val = base;
        return 1;
    }
    return 0;
}

/* Only open and write: a forked child of a threaded process may call it. */
static int score_write(int val, int quiet)
{
    char buf[16];
    int n = snprintf(buf, sizeof(buf), "%d\n", val);
    int fd = open("/proc/self/oom_score_adj", O_WRONLY);

    if (fd < 0 || write(fd, buf, (size_t)n) < 0) {
        if (!quiet)
            log_warn("Unable to write oom_score_adj: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

int oom_score_apply(int cls)
{
    int val, r = score_for(cls, &val);

    return r <= 0 ? r : score_write(val, 0);
}

int oom_score_child_value(void)
{
    int val;

    if (!__atomic_load_n(&cfg.oom_score_adj, __ATOMIC_RELAXED))
        return INT_MIN;
    return score_for(OOM_CLASS_BGCHILD, &val) == 1 ? val : INT_MIN;
}

void oom_score_child_apply(int val)
{
    if (val != INT_MIN)
        score_write(val, 1);
}
