/* Fuzz target: the config-file parser and CONFIG SET.
 * Input byte 0 picks the mode:
 *  even: the rest is a redis.conf-style file, loaded with config_load_file. When it loads,
 *        every setting is written back out as `name "value"` (escaping '"' and '\') and
 *        loaded again: the formatted values must be identical (file syntax round trip).
 *  odd:  the rest is words separated by NUL bytes: name, then values, for config_set at
 *        runtime (or at boot when bit 1 is set). When the set succeeds, setting the
 *        formatted value again must succeed and format the same (CONFIG GET/SET round trip).
 * The file lives in a memfd: no temporary files. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_config: check failed: %s (line %d)\n", #c, __LINE__);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define MAXSET 512

struct snapshot {
    char name[MAXSET][64];
    char value[MAXSET][1100];
    int n;
};

static void snap_cb(const char *name, const char *value, void *arg)
{
    struct snapshot *s = arg;
    CHECK(s->n < MAXSET);
    snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
    snprintf(s->value[s->n], sizeof(s->value[0]), "%s", value);
    s->n++;
}

static struct snapshot snap_a, snap_b;

static void take(struct snapshot *s)
{
    s->n = 0;
    config_get("*", snap_cb, s);
}

static int memfd_write(int fd, const void *p, size_t n, char *path, size_t cap)
{
    CHECK(ftruncate(fd, 0) == 0);
    CHECK(pwrite(fd, p, n, 0) == (ssize_t)n);
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return 0;
}

static void mode_file(const uint8_t *data, size_t size)
{
    static int fd = -1, fd2 = -1;
    char path[64], err[2048];
    char *out;
    size_t olen = 0;

    if (fd < 0) {
        fd = memfd_create("fuzz_config", 0);
        fd2 = memfd_create("fuzz_config_out", 0);
        CHECK(fd >= 0 && fd2 >= 0);
    }
    memfd_write(fd, data, size, path, sizeof(path));
    config_defaults();
    err[0] = '\0';
    if (config_load_file(path, err, sizeof(err))) {
        CHECK(err[0] != '\0');
        return;
    }

    /* write every setting back out and load it again */
    take(&snap_a);
    out = malloc((size_t)snap_a.n * (64 + 2 * 1100 + 4) + 1);
    for (int i = 0; i < snap_a.n; i++) {
        olen += (size_t)sprintf(out + olen, "%s \"", snap_a.name[i]);
        for (const char *v = snap_a.value[i]; *v; v++) {
            if (*v == '"' || *v == '\\')
                out[olen++] = '\\';
            out[olen++] = *v;
        }
        out[olen++] = '"';
        out[olen++] = '\n';
    }
    memfd_write(fd2, out, olen, path, sizeof(path));
    free(out);
    config_defaults();
    if (config_load_file(path, err, sizeof(err))) {
        fprintf(stderr, "fuzz_config: reloading the written config failed: %s\n", err);
        abort();
    }
    take(&snap_b);
    CHECK(snap_a.n == snap_b.n);
    for (int i = 0; i < snap_a.n; i++) {
        CHECK(!strcmp(snap_a.name[i], snap_b.name[i]));
        if (strcmp(snap_a.value[i], snap_b.value[i])) {
            fprintf(stderr, "fuzz_config: %s: '%s' became '%s'\n", snap_a.name[i],
                    snap_a.value[i], snap_b.value[i]);
            abort();
        }
    }
}

static void mode_set(const uint8_t *data, size_t size, int boot)
{
    char *copy = malloc(size + 1);
    const char *words[64];
    int n = 0;
    char err[1024], v1[1100], v2[1100];
    size_t i = 0;

    memcpy(copy, data, size);
    copy[size] = '\0';
    while (i <= size && n < 64) {
        words[n++] = copy + i;
        i += strlen(copy + i) + 1;
    }
    config_defaults();
    err[0] = '\0';
    if (config_set(words[0], words + 1, n - 1, boot, err, sizeof(err)) == 0 &&
        config_format(words[0], v1, sizeof(v1)) == 0) {
        /* a setting reads back as it was set (the `user` directive is no setting: it only
         * adds a line for the ACL layer, and config_defaults drops those) */
        const char *one[1] = {v1};
        CHECK(config_set(words[0], one, 1, boot, err, sizeof(err)) == 0);
        CHECK(config_format(words[0], v2, sizeof(v2)) == 0);
        CHECK(!strcmp(v1, v2));
    } else if (!(boot && !strcasecmp(words[0], "user") && err[0] == '\0')) {
        CHECK(err[0] != '\0');
    }
    free(copy);
}

/* A file with an include of a pattern may read any file of the machine (/proc/kcore): not
 * fuzzed. Plain includes are (a missing file, or the memfd itself, nested). */
static int includes_pattern(const uint8_t *data, size_t size)
{
    int inc = 0, pat = 0;
    for (size_t i = 0; i < size; i++) {
        if (i + 7 <= size && !strncasecmp((const char *)data + i, "include", 7))
            inc = 1;
        if (data[i] == '*' || data[i] == '?' || data[i] == '[')
            pat = 1;
    }
    return inc && pat;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char cwd[4096];

    if (size < 1 || includes_pattern(data, size))
        return 0;
    /* a dir line changes the working directory (as Redis's): back to where the fuzzer runs
     * (its relative corpus and artifact paths) */
    if (!cwd[0] && !getcwd(cwd, sizeof(cwd)))
        abort();
    if (data[0] & 1)
        mode_set(data + 1, size - 1, data[0] & 2);
    else
        mode_file(data + 1, size - 1);
    /* keep the logger quiet and at its default between runs */
    log_setup(LOG_NOTICE, NULL);
    if (chdir(cwd))
        abort();
    return 0;
}
