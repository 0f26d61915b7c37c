/* Reading configuration files as redis-server 7.0 does (its loadServerConfigFromString and
 * loadServerConfig): the file and the command line's options as one text, comments and blank
 * lines skipped before a line is split, directives that are no setting (include,
 * rename-command, user, loadmodule, sentinel, module settings, the deprecated ones), and
 * Redis's error texts and form. The settings themselves are config.c's. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/config_int.h"
#include "core/util.h"

char **config_renames; /* rename-command pairs, applied by the server after the table */
int config_nrenames;
char **config_rename_where; /* per pair: where it was read, as a load error shows it */

static int add_rename(const char *from, const char *to, const char *where)
{
    char **nr = realloc(config_renames, sizeof(*nr) * (size_t)(config_nrenames + 2));
    if (!nr)
        return -1;
    config_renames = nr;
    nr = realloc(config_rename_where, sizeof(*nr) * (size_t)(config_nrenames / 2 + 1));
    if (!nr)
        return -1;
    config_rename_where = nr;
    config_renames[config_nrenames] = strdup(from);
    config_renames[config_nrenames + 1] = strdup(to);
    nr[config_nrenames / 2] = strdup(where);
    if (!config_renames[config_nrenames] || !config_renames[config_nrenames + 1] ||
        !nr[config_nrenames / 2])
        return -1;
    config_nrenames += 2;
    return 0;
}

static int module_config_seen; /* a "module.name value" line (Redis: fails once loaded) */

static int load_path(const char *path, int depth, char *err, size_t errcap);

/* Directives Redis 7.0 still accepts and ignores (its deprecated_configs). */
static int deprecated(const char *name, int argc)
{
    return argc == 2 && (!strcmp(name, "list-max-ziplist-entries") ||
                         !strcmp(name, "list-max-ziplist-value") ||
                         !strcmp(name, "lua-replicate-commands"));
}

/* One line's words (words[0] lowercased). 0; -1 with err the reason (the caller adds the
 * line); -2 with err a complete log line (no FATAL CONFIG FILE ERROR form); -3 with err a
 * complete error in that form (an included file's). */
static int load_words(char **words, int n, const char *where, int depth, char *err,
                      size_t errcap)
{
    const struct setting *s = config_find(words[0]);

    if (s) {
        char e[1024];
        int multi = s->type == C_COBL || s->type == C_FLAGS || s->ptr == cfg.save ||
                    s->ptr == cfg.bind || s->ptr == cfg.oom_score_adj_values ||
                    s->ptr == cfg.latency_tracking_info_percentiles || s->ptr == cfg.replicaof;
        if (!multi && n != 2) {
            snprintf(err, errcap, "wrong number of arguments");
            return -1;
        }
        if (config_set(words[0], (const char **)words + 1, n - 1, 1, e, sizeof(e))) {
            /* a setting's own text, without CONFIG SET's preamble */
            static const char pre[] = "CONFIG SET failed (possibly related to argument '";
            const char *tail = e;
            if (!strncmp(tail, pre, sizeof(pre) - 1) && strstr(tail, "') - "))
                tail = strstr(tail, "') - ") + 5;
            snprintf(err, errcap, "%s", tail);
            return -1;
        }
        return 0;
    }
    if (deprecated(words[0], n))
        return 0;
    if (!strcmp(words[0], "include") && n == 2) {
        if (depth >= 16) {
            snprintf(err, errcap, "include nested too deeply");
            return -1;
        }
        int r = load_path(words[1], depth + 1, err, errcap);
        return r == -1 ? -3 : r;
    }
    if (!strcmp(words[0], "rename-command") && n == 3) {
        if (add_rename(words[1], words[2], where)) {
            snprintf(err, errcap, "out of memory");
            return -1;
        }
        return 0;
    }
    if (!strcmp(words[0], "user") && n >= 2) {
        char e[512];
        if (config_set("user", (const char **)words + 1, n - 1, 1, e, sizeof(e))) {
            snprintf(err, errcap, "%s", e);
            return -1;
        }
        return 0;
    }
    if (!strcmp(words[0], "loadmodule") && n >= 2) {
        snprintf(err, errcap, "Module %s failed to load: Redis modules (the C module API) are "
                 "not supported\nCan't load module from %s: server aborting", words[1],
                 words[1]);
        return -2;
    }
    if (strchr(words[0], '.')) {
        if (n < 2) {
            snprintf(err, errcap, "Module config specified without value");
            return -1;
        }
        module_config_seen = 1;
        return 0;
    }
    if (!strcmp(words[0], "sentinel")) {
        if (n == 1)
            return 0; /* (Redis enters sentinel mode from its command line) */
        snprintf(err, errcap, "sentinel directive while not in sentinel mode");
        return -1;
    }
    snprintf(err, errcap, "Bad directive or wrong number of arguments");
    return -1;
}

/* Redis's loadServerConfigFromString: text split on newlines, each line trimmed of spaces,
 * tabs, CR and LF; comments and blank lines skipped before the line is split into words. */
static int load_text(const char *text, int depth, char *err, size_t errcap)
{
    int lineno = 0, r = 0;

    config_save_reading = 1;
    for (const char *p = text; p && !r;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        while (len && strchr(" \t\r\n", *p)) {
            p++;
            len--;
        }
        while (len && strchr(" \t\r\n", p[len - 1]))
            len--;
        if (len && *p != '#') {
            char *line = strndup(p, len), *buf = malloc(2 * len + 2), *words[1024];
            char why[1024], where[1200];
            int n = -1;
            if (!line || !buf) {
                free(line);
                free(buf);
                snprintf(err, errcap, "out of memory");
                return -1;
            }
            snprintf(where, sizeof(where), "Reading the configuration file, at line %d\n>>> '%s'",
                     lineno, line);
            n = util_split_args(line, buf, 2 * len + 2, words, 1024);
            if (n < 0) {
                snprintf(why, sizeof(why), "Unbalanced quotes in configuration line");
                r = -1;
            } else if (n > 0) {
                for (char *c = words[0]; *c; c++)
                    *c = (char)tolower((unsigned char)*c);
                r = load_words(words, n, where, depth, why, sizeof(why));
            }
            if (r == -1) {
                snprintf(err, errcap, "%s\n%s", where, why);
            } else if (r < -1) {
                snprintf(err, errcap, "%s", why);
                r = r == -3 ? -1 : -2;
            }
            free(line);
            free(buf);
        }
        p = nl ? nl + 1 : NULL;
    }
    config_save_reading = 0;
    return r;
}

/* A file's text (Redis: read with fgets, so a NUL byte ends what is kept of its line). */
static char *read_all(FILE *f)
{
    char chunk[1025];
    size_t len = 0, cap = 4096;
    char *out = malloc(cap);

    if (!out)
        return NULL;
    out[0] = '\0';
    while (fgets(chunk, sizeof(chunk), f)) {
        size_t n = strlen(chunk);
        if (len + n + 1 > cap) {
            char *no;
            while (len + n + 1 > cap)
                cap *= 2;
            if (!(no = realloc(out, cap))) {
                free(out);
                return NULL;
            }
            out = no;
        }
        memcpy(out + len, chunk, n + 1);
        len += n;
    }
    return out;
}

/* The whole file at path in *t (malloc'd, NUL-terminated): 0, -2 (it cannot be opened: err
 * says so as Redis does) or -1 (out of memory). */
static int read_file(const char *path, char **t, char *err, size_t errcap)
{
    FILE *f = fopen(path, "r");

    if (!f) {
        snprintf(err, errcap, "Fatal error, can't open config file '%s': %s", path,
                 strerror(errno));
        return -2;
    }
    *t = read_all(f);
    fclose(f);
    if (!*t) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    return 0;
}

/* A config file, or the files a pattern matches (include with * ? [: none is no error).
 * Relative paths are relative to the working directory (which dir lines change). */
static int load_path(const char *path, int depth, char *err, size_t errcap)
{
    glob_t g;
    int r = 0;

    if (strpbrk(path, "*?[")) {
        if (glob(path, 0, NULL, &g) != 0)
            return 0;
        struct buf all = {0};
        for (size_t i = 0; i < g.gl_pathc; i++) {
            FILE *f = fopen(g.gl_pathv[i], "r");
            char *t;
            if (!f) {
                snprintf(err, errcap, "Fatal error, can't open config file '%s': %s",
                         g.gl_pathv[i], strerror(errno));
                buf_deinit(&all);
                globfree(&g);
                return -2;
            }
            t = read_all(f);
            fclose(f);
            if (t && *t)
                buf_append(&all, t, strlen(t));
            free(t);
        }
        globfree(&g);
        buf_append(&all, "", 1);
        r = load_text(all.data + all.rpos, depth, err, errcap);
        buf_deinit(&all);
        return r;
    }
    char *t;
    if ((r = read_file(path, &t, err, errcap)))
        return r;
    r = load_text(t, depth, err, errcap);
    free(t);
    return r;
}

int config_load_string(const char *text, char *err, size_t errcap)
{
    return load_text(text, 0, err, errcap) ? -1 : 0;
}

int config_load_file(const char *path, char *err, size_t errcap)
{
    return load_path(path, 0, err, errcap) ? -1 : 0;
}

int config_load(const char *path, const char *options, char *err, size_t errcap)
{
    struct buf all = {0};
    int r = 0;

    module_config_seen = 0;
    if (path) {
        char *t;
        if ((r = read_file(path, &t, err, errcap)))
            return r;
        if (*t) /* (an empty file: nothing, buf_append would copy to NULL) */
            buf_append(&all, t, strlen(t));
        free(t);
    }
    if (options) { /* the command line's options after the file's lines, as Redis */
        buf_append(&all, "\n", 1);
        buf_append(&all, options, strlen(options));
    }
    buf_append(&all, "", 1);
    r = load_text(all.data + all.rpos, 0, err, errcap);
    buf_deinit(&all);
    if (r)
        return r;
    if (cfg.logfile[0]) { /* Redis checks it can open the log before it starts */
        FILE *lf = fopen(cfg.logfile, "a");
        if (!lf) {
            snprintf(err, errcap, "Can't open the log file: %s", strerror(errno));
            return -1;
        }
        fclose(lf);
    }
    if (module_config_seen) {
        snprintf(err, errcap, "Module Configuration detected without loadmodule directive or "
                 "no ApplyConfig call: aborting");
        return -2;
    }
    return 0;
}
