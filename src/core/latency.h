/* Redis's latency monitor (LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR): events
 * ("command", "fast-command", "expire-cycle", "fork", ...) that took at least
 * latency-monitor-threshold milliseconds are recorded with the second they ended in; per event
 * the last 160 such seconds are kept (the longest of each second) and the all-time longest.
 * Any room records through latency_sample; it costs one relaxed load while the threshold is 0
 * (the default). */
#ifndef TC_LATENCY_H
#define TC_LATENCY_H

#include <stdint.h>

#define LATENCY_TS_LEN 160
#define LATENCY_EVENTS 32

struct latency_point {
    int32_t time; /* unix seconds */
    uint32_t ms;
};

struct latency_event {
    char name[48];
    struct latency_point samples[LATENCY_TS_LEN];
    int idx;      /* next slot */
    uint32_t max; /* the all-time longest */
};

/* Record ms for event when the monitor is on and ms reaches its threshold. */
void latency_sample_slow(const char *event, int64_t ms);
static inline void latency_sample(const char *event, int64_t ms)
{
    extern long long cfg_latency_threshold(void);
    long long t = cfg_latency_threshold();
    if (t > 0 && ms >= t)
        latency_sample_slow(event, ms);
}

/* A copy of every event recorded (n of them); returns n. */
int latency_events(struct latency_event *out, int cap);
/* Forget the named events (all when n == 0); returns how many were forgotten. */
int latency_reset(const char **names, int n);

#endif
