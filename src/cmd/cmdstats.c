/* INFO commandstats and errorstats, and the error and rejection totals of INFO stats, as
 * Redis 7.0 reports them.
 *
 * Per command (each subcommand its own, by its table id): calls, microseconds, calls rejected
 * before they ran (arity, NOAUTH, OOM, MISCONF, BUSY...) and calls that ran and answered an
 * error. Every thread that runs commands counts in its own block (no shared cache line on the
 * hot path; single-writer relaxed stores), and INFO sums the blocks. Error replies are counted
 * by their code (the first word: ERR, WRONGTYPE, ...) in one table under a mutex: only error
 * replies take it. As Redis, at most 128 codes are tracked. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/forksafe.h"
#include "core/log.h"

#define MAX_IDS CMDSTATS_MAX_IDS
#define MAX_BLOCKS 256
#define MAX_CODES 128

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;


/* Latency histograms (LATENCY HISTOGRAM, INFO latencystats): log-linear buckets of
 * microseconds — exact below 16, then 16 per power of two (6 % wide) — per thread and command,
 * allocated on a command's first timed call. CONFIG RESETSTAT bumps cmdstats_gen; each thread
 * clears its own histograms when it next records, and readers skip blocks of an older
 * generation, so no thread writes another's. */
#define HB CMDSTATS_HB

struct hblock {
    uint32_t *h[MAX_IDS]; /* (first: cmdstats_hist points at it) */
    _Atomic unsigned gen;
};

static struct hblock *hblocks[MAX_BLOCKS];
static int nhblocks;
static __thread struct hblock *myh;

_Atomic unsigned cmdstats_gen;

/* the largest value of bucket b */
static uint64_t hupper(int b)
{
    int e, sub;
    if (b < 16)
        return (uint64_t)b;
    e = (b - 16) / 16 + 4;
    sub = (b - 16) % 16;
    return ((uint64_t)(16 + sub) << (e - 4)) + ((uint64_t)1 << (e - 4)) - 1;
}

static void hist_record(int id, uint64_t us)
{
    struct hblock *hb = myh;
    unsigned gen = atomic_load_explicit(&cmdstats_gen, memory_order_relaxed);

    if (TC_UNLIKELY(!hb)) {
        pthread_mutex_lock(&blocks_lock);
        if (nhblocks < MAX_BLOCKS && (hb = calloc(1, sizeof(*hb))) != NULL)
            hblocks[nhblocks++] = hb;
        pthread_mutex_unlock(&blocks_lock);
        if (!hb)
            return;
        atomic_store_explicit(&hb->gen, gen, memory_order_relaxed);
        myh = hb;
    }
    if (TC_UNLIKELY(atomic_load_explicit(&hb->gen, memory_order_relaxed) != gen)) {
        for (int i = 0; i < MAX_IDS; i++)
            if (hb->h[i])
                for (int j = 0; j < HB; j++)
                    __atomic_store_n(&hb->h[i][j], 0, __ATOMIC_RELAXED);
        atomic_store_explicit(&hb->gen, gen, memory_order_release);
    }
    cmdstats_hist = hb->h; /* the inline fast path (cmd.h) uses it from now on */
    cmdstats_hist_gen = gen;
    if (TC_UNLIKELY(!hb->h[id])) {
        uint32_t *h = calloc(HB, sizeof(*h));
        if (!h)
            return;
        __atomic_store_n(&hb->h[id], h, __ATOMIC_RELEASE);
    }
    STAT_INC(hb->h[id][cmdstats_bucket(us)]);
}

/* The summed histogram of id into out (HB counts); returns the total. */
static uint64_t hist_sum(int id, uint64_t *out)
{
    unsigned gen = atomic_load_explicit(&cmdstats_gen, memory_order_relaxed);
    uint64_t total = 0;

    memset(out, 0, sizeof(*out) * HB);
    pthread_mutex_lock(&blocks_lock);
    for (int b = 0; b < nhblocks; b++) {
        uint32_t *h;
        if (atomic_load_explicit(&hblocks[b]->gen, memory_order_acquire) != gen)
            continue;
        h = __atomic_load_n(&hblocks[b]->h[id], __ATOMIC_ACQUIRE);
        if (!h)
            continue;
        for (int j = 0; j < HB; j++) {
            uint32_t v = __atomic_load_n(&h[j], __ATOMIC_RELAXED);
            out[j] += v;
            total += v;
        }
    }
    pthread_mutex_unlock(&blocks_lock);
    return total;
}

static struct cmdstat *blocks[MAX_BLOCKS];
static int nblocks;
__thread struct cmdstat *cmdstats_mine;
__thread uint32_t **cmdstats_hist;
__thread unsigned cmdstats_hist_gen;
static struct cmdstat spare[MAX_IDS]; /* threads past MAX_BLOCKS share it (counts may race) */

static struct {
    char code[32];
    uint64_t count;
} codes[MAX_CODES];
static int ncodes, codes_full;
static uint64_t total_errors;
static pthread_mutex_t codes_lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork child (SCRIPT DEBUG YES runs commands in one, and they count their errors) never
 * finds codes_lock held by a thread it does not have (a leaf: its holders wait for nothing). */
__attribute__((constructor)) static void codes_atfork(void)
{
    fork_protect(&codes_lock);
}

static struct cmdstat *block(void)
{
    if (TC_LIKELY(cmdstats_mine != NULL))
        return cmdstats_mine;
    pthread_mutex_lock(&blocks_lock);
    if (nblocks < MAX_BLOCKS && (cmdstats_mine = calloc(MAX_IDS, sizeof(struct cmdstat))))
        blocks[nblocks++] = cmdstats_mine; /* kept for INFO after the thread ends */
    else
        cmdstats_mine = spare;
    pthread_mutex_unlock(&blocks_lock);
    return cmdstats_mine;
}

void cmdstats_call_slow(const struct cmd *cmd, int64_t usec, int failed)
{
    struct cmdstat *st;

    if (TC_UNLIKELY(cmd->id < 0 || cmd->id >= MAX_IDS))
        return;
    st = &block()[cmd->id];
    STAT_INC(st->calls);
    if (usec > 0)
        STAT_ADD(st->usec, (uint64_t)usec);
    if (usec >= 0 && cfg.latency_tracking) /* usec -1: not timed */
        hist_record(cmd->id, (uint64_t)usec);
    if (failed)
        STAT_INC(st->failed);
}

void cmdstats_fail(const struct cmd *cmd)
{
    if (cmd->id >= 0 && cmd->id < MAX_IDS)
        STAT_INC(block()[cmd->id].failed);
}

void cmdstats_reject(const struct cmd *cmd)
{
    if (cmd->id >= 0 && cmd->id < MAX_IDS)
        STAT_INC(block()[cmd->id].rejected);
}

__thread unsigned cmd_errors_quiet;

void cmdstats_errors(const char *msg, unsigned n)
{
    char code[32];
    size_t len = 0;

    if (TC_UNLIKELY(cmd_errors_quiet != 0)) {
        unsigned q = cmd_errors_quiet < n ? cmd_errors_quiet : n;
        cmd_errors_quiet = 0;
        n -= q;
        if (!n)
            return;
    }

    if (!msg)
        msg = "ERR";
    if (*msg == '-')
        msg++;
    while (msg[len] && msg[len] != ' ' && len < sizeof(code) - 1)
        len++;
    memcpy(code, msg, len);
    code[len] = '\0';
    pthread_mutex_lock(&codes_lock);
    total_errors += n;
    for (int i = 0; i < ncodes; i++)
        if (!strcmp(codes[i].code, code)) {
            codes[i].count += n;
            pthread_mutex_unlock(&codes_lock);
            return;
        }
    if (ncodes < MAX_CODES) {
        strcpy(codes[ncodes].code, code);
        codes[ncodes++].count = n;
    } else if (!codes_full) {
        codes_full = 1;
        log_warn("Errorstats stopped adding new errors because the number of different errors "
                 "reached %d; new errors will only be counted in 'total_error_replies'",
                 MAX_CODES);
    }
    pthread_mutex_unlock(&codes_lock);
}

/* The counts of id since the last CONFIG RESETSTAT: the blocks' sums minus the baseline then
 * taken (no thread writes another's block). */
static struct cmdstat base[MAX_IDS];

static void raw_sum(int id, struct cmdstat *out)
{
    memset(out, 0, sizeof(*out));
    for (int b = 0; b < nblocks; b++) {
        out->calls += STAT_GET(blocks[b][id].calls);
        out->usec += STAT_GET(blocks[b][id].usec);
        out->rejected += STAT_GET(blocks[b][id].rejected);
        out->failed += STAT_GET(blocks[b][id].failed);
    }
    out->calls += STAT_GET(spare[id].calls);
    out->usec += STAT_GET(spare[id].usec);
    out->rejected += STAT_GET(spare[id].rejected);
    out->failed += STAT_GET(spare[id].failed);
}

static void sum(int id, struct cmdstat *out)
{
    pthread_mutex_lock(&blocks_lock);
    raw_sum(id, out);
    out->calls -= base[id].calls;
    out->usec -= base[id].usec;
    out->rejected -= base[id].rejected;
    out->failed -= base[id].failed;
    pthread_mutex_unlock(&blocks_lock);
}

static void info_entry(struct buf *b, const struct cmd *cmd)
{
    struct cmdstat st;
    char line[256];
    int n;

    if (cmd->id < 0 || cmd->id >= MAX_IDS)
        return;
    sum(cmd->id, &st);
    if (!st.calls && !st.rejected && !st.failed)
        return;
    n = snprintf(line, sizeof(line),
                 "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
                 "failed_calls=%llu\r\n",
                 cmd->name, (unsigned long long)st.calls, (unsigned long long)st.usec,
                 st.calls ? (double)st.usec / (double)st.calls : 0.0,
                 (unsigned long long)st.rejected, (unsigned long long)st.failed);
    buf_append(b, line, (size_t)n);
}

void cmdstats_info_commands(struct buf *b)
{
    buf_append(b, "# Commandstats\r\n", 16);
    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *cmd = cmd_at(i);
        info_entry(b, cmd);
        for (int j = 0; j < cmd->nsubs; j++)
            info_entry(b, &cmd->subs[j]);
    }
}

void cmdstats_info_errors(struct buf *b)
{
    char line[128];

    buf_append(b, "# Errorstats\r\n", 14);
    pthread_mutex_lock(&codes_lock);
    for (int i = 0; i < ncodes; i++) {
        int n = snprintf(line, sizeof(line), "errorstat_%s:count=%llu\r\n", codes[i].code,
                         (unsigned long long)codes[i].count);
        buf_append(b, line, (size_t)n);
    }
    pthread_mutex_unlock(&codes_lock);
}

void cmdstats_totals(uint64_t *errors, uint64_t *rejected)
{
    struct cmdstat st;

    pthread_mutex_lock(&codes_lock);
    *errors = total_errors;
    pthread_mutex_unlock(&codes_lock);
    *rejected = 0;
    for (int i = 0; i < MAX_IDS; i++) {
        sum(i, &st);
        *rejected += st.rejected;
    }
}

/* INFO latencystats: the configured percentiles of each command's histogram. */
void cmdstats_info_latency(struct buf *b)
{
    char pct[160], line[512];
    double ps[16];
    int np = 0;
    uint64_t *h = malloc(sizeof(*h) * HB);

    buf_append(b, "# Latencystats\r\n", 16);
    if (!h)
        return;
    config_format("latency-tracking-info-percentiles", pct, sizeof(pct));
    for (char *p = pct, *end; *p && np < 16; p = end) {
        double v = strtod(p, &end);
        if (end == p)
            break;
        ps[np++] = v;
    }
    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *top = cmd_at(i);
        for (int j = -1; j < top->nsubs; j++) {
            const struct cmd *cmd = j < 0 ? top : &top->subs[j];
            uint64_t total;
            int n;
            if (cmd->id < 0 || cmd->id >= MAX_IDS || !(total = hist_sum(cmd->id, h)))
                continue;
            n = snprintf(line, sizeof(line), "latency_percentiles_usec_%s:", cmd->name);
            for (int k = 0; k < np; k++) {
                uint64_t want = (uint64_t)((ps[k] / 100.0) * (double)total + 0.999999), cum = 0;
                int bk = 0;
                if (want < 1)
                    want = 1;
                for (; bk < HB; bk++)
                    if ((cum += h[bk]) >= want)
                        break;
                char pn[32];
                snprintf(pn, sizeof(pn), "%g", ps[k]);
                n += snprintf(line + n, sizeof(line) - (size_t)n, "%sp%s=%.3f", k ? "," : "", pn,
                              (double)hupper(bk < HB ? bk : HB - 1));
            }
            n += snprintf(line + n, sizeof(line) - (size_t)n, "\r\n");
            buf_append(b, line, (size_t)n);
        }
    }
    free(h);
}

/* LATENCY HISTOGRAM for one command: calls and {2^k usec: calls at most that long} for the
 * powers of two where the count grows, as Redis's log iteration from 1 us. Returns 0 when the
 * command has no samples. */
int cmdstats_histogram(const struct cmd *cmd, uint64_t *calls, uint64_t *bounds,
                       uint64_t *counts, int cap, int *n)
{
    uint64_t *h, cum = 0, prev = 0;
    int bk = 0;

    *n = 0;
    if (cmd->id < 0 || cmd->id >= MAX_IDS || !(h = malloc(sizeof(*h) * HB)))
        return 0;
    *calls = hist_sum(cmd->id, h);
    if (!*calls) {
        free(h);
        return 0;
    }
    for (uint64_t bound = 1; *n < cap && cum < *calls; bound <<= 1) {
        while (bk < HB && hupper(bk) <= bound)
            cum += h[bk++];
        if (cum > prev) {
            bounds[*n] = bound;
            counts[(*n)++] = cum;
            prev = cum;
        }
    }
    free(h);
    return 1;
}

void cmdstats_reset(void)
{
    atomic_fetch_add_explicit(&cmdstats_gen, 1, memory_order_relaxed);
    pthread_mutex_lock(&blocks_lock);
    for (int i = 0; i < MAX_IDS; i++)
        raw_sum(i, &base[i]);
    pthread_mutex_unlock(&blocks_lock);
    pthread_mutex_lock(&codes_lock);
    ncodes = 0;
    codes_full = 0;
    total_errors = 0;
    pthread_mutex_unlock(&codes_lock);
}

/* The metrics endpoint (src/server/metrics.c): fn for every command and subcommand that has
 * counts since the last CONFIG RESETSTAT, as INFO commandstats lists them. Any thread. */
void cmdstats_visit(void (*fn)(const struct cmd *cmd, const struct cmdstat *st, void *arg),
                    void *arg)
{
    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *top = cmd_at(i);
        for (int j = -1; j < top->nsubs; j++) {
            const struct cmd *cmd = j < 0 ? top : &top->subs[j];
            struct cmdstat st;
            if (cmd->id < 0 || cmd->id >= MAX_IDS)
                continue;
            sum(cmd->id, &st);
            if (st.calls || st.rejected || st.failed)
                fn(cmd, &st, arg);
        }
    }
}

uint64_t cmdstats_error_replies(void)
{
    uint64_t n;

    pthread_mutex_lock(&codes_lock);
    n = total_errors;
    pthread_mutex_unlock(&codes_lock);
    return n;
}
