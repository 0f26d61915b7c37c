/* The latency monitor's event table (latency.h). Recording happens only past the threshold
 * (slow events are rare by definition), so one mutex guards the table. */
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/config.h"
#include "core/latency.h"

static struct latency_event events[LATENCY_EVENTS];
static int nevents;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

long long cfg_latency_threshold(void)
{
    return __atomic_load_n(&cfg.latency_monitor_threshold, __ATOMIC_RELAXED);
}

void latency_sample_slow(const char *event, int64_t ms)
{
    int32_t now = (int32_t)time(NULL);
    struct latency_event *e = NULL;

    pthread_mutex_lock(&lock);
    for (int i = 0; i < nevents; i++)
        if (!strcmp(events[i].name, event))
            e = &events[i];
    if (!e && nevents < LATENCY_EVENTS) {
        e = &events[nevents++];
        memset(e, 0, sizeof(*e));
        strncpy(e->name, event, sizeof(e->name) - 1);
    }
    if (e) {
        int prev = (e->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        if ((uint32_t)ms > e->max)
            e->max = (uint32_t)ms;
        if (e->samples[prev].time == now) {
            /* the same second: keep its longest, as Redis */
            if ((uint32_t)ms > e->samples[prev].ms)
                e->samples[prev].ms = (uint32_t)ms;
        } else {
            e->samples[e->idx].time = now;
            e->samples[e->idx].ms = (uint32_t)ms;
            e->idx = (e->idx + 1) % LATENCY_TS_LEN;
        }
    }
    pthread_mutex_unlock(&lock);
}

int latency_events(struct latency_event *out, int cap)
{
    int n;

    pthread_mutex_lock(&lock);
    n = nevents < cap ? nevents : cap;
    memcpy(out, events, sizeof(*out) * (size_t)n);
    pthread_mutex_unlock(&lock);
    return n;
}

int latency_reset(const char **names, int n)
{
    int done = 0;

    pthread_mutex_lock(&lock);
    if (n == 0) {
        done = nevents;
        nevents = 0;
    } else {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < nevents; i++)
                if (!strcasecmp(events[i].name, names[j])) {
                    events[i] = events[--nevents];
                    done++;
                    break;
                }
    }
    pthread_mutex_unlock(&lock);
    return done;
}
