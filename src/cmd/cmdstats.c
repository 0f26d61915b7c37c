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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/log.h"

#define MAX_IDS 1024
#define MAX_BLOCKS 256
#define MAX_CODES 128

struct cmdstat {
    uint64_t calls, usec, rejected, failed;
};

static struct cmdstat *blocks[MAX_BLOCKS];
static int nblocks;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct cmdstat *mine;
static struct cmdstat spare[MAX_IDS]; /* threads past MAX_BLOCKS share it (counts may race) */

static struct {
    char code[32];
    uint64_t count;
} codes[MAX_CODES];
static int ncodes, codes_full;
static uint64_t total_errors;
static pthread_mutex_t codes_lock = PTHREAD_MUTEX_INITIALIZER;

static struct cmdstat *block(void)
{
    if (TC_LIKELY(mine != NULL))
        return mine;
    pthread_mutex_lock(&blocks_lock);
    if (nblocks < MAX_BLOCKS && (mine = calloc(MAX_IDS, sizeof(*mine))) != NULL)
        blocks[nblocks++] = mine; /* kept for INFO after the thread ends */
    else
        mine = spare;
    pthread_mutex_unlock(&blocks_lock);
    return mine;
}

void cmdstats_call(const struct cmd *cmd, int64_t usec, int failed)
{
    struct cmdstat *st;

    if (TC_UNLIKELY(cmd->id < 0 || cmd->id >= MAX_IDS))
        return;
    st = &block()[cmd->id];
    STAT_INC(st->calls);
    if (usec > 0)
        STAT_ADD(st->usec, (uint64_t)usec);
    if (failed)
        STAT_INC(st->failed);
}

void cmdstats_reject(const struct cmd *cmd)
{
    if (cmd->id >= 0 && cmd->id < MAX_IDS)
        STAT_INC(block()[cmd->id].rejected);
}

void cmdstats_errors(const char *msg, unsigned n)
{
    char code[32];
    size_t len = 0;

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

void cmdstats_reset(void)
{
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
