#include "core/oom.h"

#include <errno.h>
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

int oom_score_apply(int cls)
{
    char buf[64], vals[sizeof(cfg.oom_score_adj_values)];
    int mode = __atomic_load_n(&cfg.oom_score_adj, __ATOMIC_RELAXED), v[3], val, fd;
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
        val = v[cls];
        if (mode != 3) /* yes and relative: added to the value found first */
            val += base;
        if (val > 1000)
            val = 1000;
        if (val < -1000)
            val = -1000;
    } else if (adjusted) {
        adjusted = 0;
        val = base;
    } else {
        return 0;
    }
    snprintf(buf, sizeof(buf), "%d\n", val);
    fd = open("/proc/self/oom_score_adj", O_WRONLY);
    if (fd < 0 || write(fd, buf, strlen(buf)) < 0) {
        log_warn("Unable to write oom_score_adj: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}
