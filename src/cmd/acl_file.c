/* ACL users from files (issue 21): the aclfile (ACL LOAD / ACL SAVE, Redis 7.0's format and
 * error texts: "user <name> <rules...>" lines, all or nothing) and the `user` lines of the
 * config file, applied at start-up once the command table is complete. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/acl.h"
#include "core/config.h"

enum { ACL_FILE_MAX = 64 << 20, ACL_LINE_WORDS = 65536 };

/* Split on single spaces as Redis does (consecutive spaces give empty words, which rules
 * ignore). Returns the count, or -1 past max. */
static int split_spaces(char *s, char **w, int max)
{
    int n = 0;
    for (;;) {
        if (n == max)
            return -1;
        w[n++] = s;
        char *sp = strchr(s, ' ');
        if (!sp)
            break;
        *sp = 0;
        s = sp + 1;
    }
    return n;
}

static char *trim(char *s)
{
    size_t n = strlen(s);
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        s[--n] = 0;
    return s;
}

static void errf(struct buf *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void errf(struct buf *e, const char *fmt, ...)
{
    char m[1400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(m, sizeof(m), fmt, ap);
    va_end(ap);
    if (n > 0)
        buf_append(e, m, (size_t)n < sizeof(m) ? (size_t)n : sizeof(m) - 1);
}

static int find_user(struct acl_user **v, int n, const char *name, size_t l)
{
    for (int i = 0; i < n; i++)
        if (v[i]->nlen == l && !memcmp(v[i]->name, name, l))
            return i;
    return -1;
}

static int by_name(const void *a, const void *b)
{
    const struct acl_user *x = *(struct acl_user *const *)a, *y = *(struct acl_user *const *)b;
    size_t m = x->nlen < y->nlen ? x->nlen : y->nlen;
    int r = memcmp(x->name, y->name, m);
    return r ? r : (x->nlen < y->nlen ? -1 : x->nlen > y->nlen);
}

/* Rules of one user (words, selectors in parentheses merged) onto b; errors as ACL LOAD
 * words them. */
static void apply_words(struct acl_body *b, char **w, int n, const char *fname, int lineno,
                        struct buf *errs)
{
    struct buf op = {0};

    for (int i = 0; i < n; i++) {
        op.rpos = op.wpos = 0;
        size_t l = strlen(w[i]);
        buf_append(&op, w[i], l);
        if (l && w[i][0] == '(' && w[i][l - 1] != ')') {
            int j = i;
            while (++j < n) {
                size_t k = strlen(w[j]);
                buf_append(&op, " ", 1);
                buf_append(&op, w[j], k);
                if (k && w[j][k - 1] == ')')
                    break;
            }
            if (j == n) {
                errf(errs, "%s:%d: Unmatched parenthesis in selector definition.", fname, lineno);
                break;
            }
            i = j;
        }
        buf_append(&op, "", 1);
        char *s = trim(op.data + op.rpos);
        const char *r = acl_body_apply(b, s, strlen(s));
        if (r && strstr(r, "Unknown command"))
            errf(errs, "%s:%d: Error in applying operation '%.512s': %s. ", fname, lineno, s, r);
        else if (r)
            errf(errs, "%s:%d: %s. ", fname, lineno, r);
    }
    buf_deinit(&op);
}

/* Users from lines (each "user name rules..."): sorted in *out on success (0); errors in
 * errs. */
static int parse_users(char **lines, int nlines, const char *fname, struct buf *errs,
                       struct acl_user ***out, int *nout)
{
    struct acl_user **v = NULL;
    int n = 0;
    char **w = malloc(sizeof(*w) * ACL_LINE_WORDS);

    if (!w) {
        errf(errs, "Out of memory. ");
        return -1;
    }
    acl_sync_pubsub_default();
    for (int li = 0; li < nlines; li++) {
        char *line = trim(lines[li]);
        int lineno = li + 1, nw;
        if (!*line)
            continue;
        nw = split_spaces(line, w, ACL_LINE_WORDS);
        if (nw < 2 || strcmp(w[0], "user")) {
            errf(errs, "%s:%d should start with user keyword followed by the username. ", fname,
                 lineno);
            continue;
        }
        if (acl_has_spaces(w[1], strlen(w[1]))) {
            errf(errs, "'%s:%d: username '%.128s' contains invalid characters. ", fname, lineno,
                 w[1]);
            continue;
        }
        if (find_user(v, n, w[1], strlen(w[1])) >= 0) {
            errf(errs, "WARNING: Duplicate user '%.128s' found on line %d. ", w[1], lineno);
            continue;
        }
        struct acl_body *b = acl_body_new();
        struct acl_user *u, **nv;
        if (!b || !(u = acl_user_new(w[1], strlen(w[1]), b))) {
            acl_body_free(b);
            errf(errs, "Out of memory. ");
            break;
        }
        if (!(nv = realloc(v, sizeof(*v) * (size_t)(n + 1)))) {
            acl_user_unref(u);
            errf(errs, "Out of memory. ");
            break;
        }
        v = nv;
        v[n++] = u;
        /* config lines: the default user is reset first (Redis's ACLLoadConfiguredUsers), which
         * gives it sanitize-payload unless the line says otherwise */
        if (!strcmp(fname, "redis.conf") && !strcmp(w[1], "default"))
            acl_body_apply(b, "reset", 5);
        apply_words(b, w + 2, nw - 2, fname, lineno, errs);
    }
    free(w);
    if (buf_len(errs)) {
        for (int i = 0; i < n; i++)
            acl_user_unref(v[i]);
        free(v);
        return -1;
    }
    qsort(v, (size_t)n, sizeof(*v), by_name);
    for (int i = 0; i < n; i++)
        atomic_store(&v[i]->allperm, acl_body_allperm(v[i]->b));
    *out = v;
    *nout = n;
    return 0;
}

/* The aclfile's path to open: Redis changes its working directory to `dir`, so a relative
 * aclfile is found there; twincache keeps its own working directory and joins them. */
static void acl_path(char *out, size_t cap)
{
    char name[sizeof(cfg.aclfile)], dir[sizeof(cfg.dir)];

    config_str(cfg.aclfile, name, sizeof(name));
    config_str(cfg.dir, dir, sizeof(dir));
    if (name[0] == '/' || !dir[0] || !strcmp(dir, "."))
        snprintf(out, cap, "%s", name);
    else
        snprintf(out, cap, "%s/%s", dir, name);
}

static char *read_file(const char *path, size_t *len, int *err)
{
    FILE *f = fopen(path, "r");
    struct buf b = {0};
    char chunk[65536];
    size_t r;

    if (!f) {
        *err = errno;
        return NULL;
    }
    while ((r = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (buf_len(&b) + r > ACL_FILE_MAX || buf_append(&b, chunk, r)) {
            fclose(f);
            buf_deinit(&b);
            *err = EFBIG;
            return NULL;
        }
    }
    fclose(f);
    buf_append(&b, "", 1);
    *len = buf_len(&b) - 1;
    if (!b.data) {
        *err = ENOMEM;
        return NULL;
    }
    return b.data;
}

int acl_load_file(struct conn *c, struct buf *errs)
{
    char path[sizeof(cfg.aclfile)], full[sizeof(cfg.aclfile) + sizeof(cfg.dir) + 1];
    char *data, **lines = NULL;
    size_t len;
    int nl = 0, e = 0, r;
    struct acl_user **v;
    int n;

    config_str(cfg.aclfile, path, sizeof(path));
    acl_path(full, sizeof(full));
    if (!(data = read_file(full, &len, &e))) {
        errf(errs, "Error loading ACLs, opening file '%s': %s", path, strerror(e));
        return -1;
    }
    for (char *p = data;; nl++) {
        char **nlp = realloc(lines, sizeof(*lines) * (size_t)(nl + 1));
        if (!nlp) {
            free(lines);
            free(data);
            errf(errs, "Out of memory");
            return -1;
        }
        lines = nlp;
        lines[nl] = p;
        char *q = strchr(p, '\n');
        if (!q) {
            nl++;
            break;
        }
        *q = 0;
        p = q + 1;
    }
    r = parse_users(lines, nl, path, errs, &v, &n);
    free(lines);
    free(data);
    if (r) {
        errf(errs, "WARNING: ACL errors detected, no change to the previously active ACL rules "
                   "was performed");
        return -1;
    }
    acl_users_replace(c, v, n);
    return 0;
}

struct save_arg {
    FILE *f;
    struct buf line;
    int err;
};

static void save_one(struct acl_user *u, void *arg)
{
    struct save_arg *a = arg;
    a->line.rpos = a->line.wpos = 0;
    acl_user_line(u, &a->line);
    buf_append(&a->line, "\n", 1);
    if (fwrite(a->line.data + a->line.rpos, 1, buf_len(&a->line), a->f) != buf_len(&a->line))
        a->err = 1;
}

int acl_save_file(void)
{
    char path[sizeof(cfg.aclfile) + sizeof(cfg.dir) + 1], tmp[sizeof(path) + 32];
    struct save_arg a = {0};

    acl_path(path, sizeof(path));
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
    if (!(a.f = fopen(tmp, "w")))
        return -1;
    acl_users_each(save_one, &a);
    buf_deinit(&a.line);
    if (fflush(a.f) || fsync(fileno(a.f)))
        a.err = 1;
    if (fclose(a.f))
        a.err = 1;
    if (a.err || rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int acl_startup(char *err, size_t cap)
{
    char path[sizeof(cfg.aclfile)];

    acl_users_init();
    acl_sync_pubsub_default();
    config_str(cfg.aclfile, path, sizeof(path));
    if (config_user_nlines && path[0]) {
        snprintf(err, cap, "Configuring Redis with users defined in redis.conf and at the same "
                           "setting an ACL file path is invalid. This setup is very likely to "
                           "lead to configuration errors and security holes, please define "
                           "either an ACL file or declare users directly in your redis.conf, "
                           "but not both.");
        return -1;
    }
    if (config_user_nlines) {
        /* each line as the words after "user": name then rules */
        char **lines = calloc((size_t)config_user_nlines, sizeof(*lines));
        struct buf errs = {0};
        struct acl_user **v;
        int n, r;
        if (!lines) {
            snprintf(err, cap, "out of memory");
            return -1;
        }
        for (int i = 0; i < config_user_nlines; i++) {
            size_t l = strlen(config_user_lines[i]);
            if (!(lines[i] = malloc(l + 6)))
                break;
            memcpy(lines[i], "user ", 5);
            memcpy(lines[i] + 5, config_user_lines[i], l + 1);
        }
        r = parse_users(lines, config_user_nlines, "redis.conf", &errs, &v, &n);
        for (int i = 0; i < config_user_nlines; i++)
            free(lines[i]);
        free(lines);
        if (r) {
            buf_append(&errs, "", 1);
            snprintf(err, cap, "Error in user declaration: %s", errs.data + errs.rpos);
            buf_deinit(&errs);
            return -1;
        }
        buf_deinit(&errs);
        acl_users_replace(NULL, v, n);
    } else if (path[0]) {
        struct buf errs = {0};
        if (acl_load_file(NULL, &errs)) {
            buf_append(&errs, "", 1);
            snprintf(err, cap, "Aborting Redis startup because of ACL errors: %s",
                     errs.data + errs.rpos);
            buf_deinit(&errs);
            return -1;
        }
        buf_deinit(&errs);
    }
    return 0;
}
