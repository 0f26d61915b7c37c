/* ACL: Redis 7.0's ACL command (issue 21). The users and their rules are acl_user.c and
 * acl_rules.c; this file is the subcommands (SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI,
 * DRYRUN, CAT, GENPASS, LOG, SAVE, LOAD, HELP) and the ACL log. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cmd/acl.h"
#include "core/config.h"
#include "core/util.h"

/* Redis's reply to a known ACL subcommand with the wrong number of arguments. */
static void sub_syntax_error(struct conn *c)
{
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.",
                 (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p);
}

/* ---- ACL LOG: denials, newest first. A denial like one logged within the last 60 s (same
 * reason, context, object and user) adds to its count, refreshes its client-info and moves it
 * to the front, as Redis 7.0 does. At most acllog-max-len entries; the oldest is dropped. The
 * lock is the log's own, taken only on a denial or by ACL LOG. */
enum { ACL_LOG_CAP = 4096, ACL_LOG_USER_MAX = 512, ACL_LOG_GROUP_MS = 60000 };

struct acl_log_entry {
    long long count;
    int reason;
    const char *ctx; /* "toplevel", "multi", "lua" */
    int64_t ctime_ms;
    size_t ulen, olen;
    char user[ACL_LOG_USER_MAX];
    char object[ACL_LOG_USER_MAX];
    char cinfo[1024];
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct acl_log_entry *log_ents[ACL_LOG_CAP]; /* [0] newest */
static int log_n;

static const char *reason_name(int r)
{
    switch (r) {
    case ACL_DENIED_CMD:
        return "command";
    case ACL_DENIED_KEY:
        return "key";
    case ACL_DENIED_CHANNEL:
        return "channel";
    default:
        return "auth";
    }
}

static void log_add(struct conn *c, int reason, const char *ctx, const char *obj, size_t ol,
                    const char *u, size_t ul)
{
    char cinfo[1024];
    int64_t now = util_now_ms();
    struct acl_log_entry *e = NULL;
    int at, max = cfg.acllog_max_len < ACL_LOG_CAP ? cfg.acllog_max_len : ACL_LOG_CAP;

    if (ul > ACL_LOG_USER_MAX)
        ul = ACL_LOG_USER_MAX;
    if (ol > ACL_LOG_USER_MAX)
        ol = ACL_LOG_USER_MAX;
    conn_client_info(c, cinfo, sizeof(cinfo));
    pthread_mutex_lock(&log_lock);
    for (at = 0; at < log_n; at++) {
        struct acl_log_entry *x = log_ents[at];
        if (x->reason == reason && !strcmp(x->ctx, ctx) && x->ulen == ul &&
            !memcmp(x->user, u, ul) && x->olen == ol && !memcmp(x->object, obj, ol) &&
            now - x->ctime_ms < ACL_LOG_GROUP_MS) {
            e = x;
            break;
        }
    }
    if (e) {
        e->count++;
    } else {
        if (max <= 0) {
            pthread_mutex_unlock(&log_lock);
            return;
        }
        while (log_n > max)
            free(log_ents[--log_n]);
        if (log_n == max) {
            e = log_ents[--log_n]; /* reuse the oldest */
        } else if (!(e = malloc(sizeof(*e)))) {
            pthread_mutex_unlock(&log_lock);
            return;
        }
        e->count = 1;
        e->reason = reason;
        e->ctx = ctx;
        e->ulen = ul;
        memcpy(e->user, u, ul);
        e->olen = ol;
        memcpy(e->object, obj, ol);
        at = log_n++;
    }
    e->ctime_ms = now;
    memcpy(e->cinfo, cinfo, sizeof(cinfo));
    memmove(log_ents + 1, log_ents, (size_t)at * sizeof(log_ents[0]));
    log_ents[0] = e;
    pthread_mutex_unlock(&log_lock);
}

void acl_log_auth_failure(struct conn *c, const char *object, const struct slice *user)
{
    log_add(c, ACL_DENIED_AUTH, "toplevel", object, strlen(object), user ? user->p : "default",
            user ? user->n : 7);
}

void acl_log_denial(struct conn *c, int reason, const char *ctx, const struct cmd *cmd,
                    const struct slice *obj, const struct acl_user *u)
{
    if (obj)
        log_add(c, reason, ctx, obj->p, obj->n, u->name, u->nlen);
    else
        log_add(c, reason, ctx, cmd->name, strlen(cmd->name), u->name, u->nlen);
}

/* ACL LOG [count | RESET]: the newest count entries (default 10). */
static void acl_log_command(struct conn *c)
{
    long long count = 10;

    if (c->argc > 3) {
        sub_syntax_error(c);
        return;
    }
    if (c->argc == 3) {
        if (arg_is(c, 2, "reset")) {
            pthread_mutex_lock(&log_lock);
            for (int i = 0; i < log_n; i++)
                free(log_ents[i]);
            log_n = 0;
            pthread_mutex_unlock(&log_lock);
            reply_ok(c);
            return;
        }
        if (arg_ll(c, 2, &count, NULL) < 0)
            return;
        if (count < 0)
            count = 0;
    }
    int64_t now = util_now_ms();
    pthread_mutex_lock(&log_lock);
    int n = count < log_n ? (int)count : log_n;
    reply_array(c, n);
    for (int i = 0; i < n; i++) {
        const struct acl_log_entry *e = log_ents[i];
        reply_map(c, 7);
        reply_cstr(c, "count");
        reply_int(c, e->count);
        reply_cstr(c, "reason");
        reply_cstr(c, reason_name(e->reason));
        reply_cstr(c, "context");
        reply_cstr(c, e->ctx);
        reply_cstr(c, "object");
        reply_bulk(c, e->object, e->olen);
        reply_cstr(c, "username");
        reply_bulk(c, e->user, e->ulen);
        reply_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime_ms) / 1000.0);
        reply_cstr(c, "client-info");
        reply_cstr(c, e->cinfo);
    }
    pthread_mutex_unlock(&log_lock);
}

static void acl_whoami_command(struct conn *c)
{
    struct acl_user *u = c->user ? c->user : acl_default_user();
    reply_bulk(c, u->name, u->nlen);
}

static void users_one(struct acl_user *u, void *arg)
{
    reply_bulk((struct conn *)arg, u->name, u->nlen);
}

static void acl_users_command(struct conn *c)
{
    /* the count and the names under one hold of the table: SETUSER waits */
    struct acl_user *d = acl_default_user();
    (void)d;
    reply_array(c, acl_users_count());
    acl_users_each(users_one, c);
}

struct list_arg {
    struct conn *c;
    struct buf line;
    int n;
};

static void list_one(struct acl_user *u, void *arg)
{
    struct list_arg *a = arg;
    a->line.rpos = a->line.wpos = 0;
    acl_user_line(u, &a->line);
    reply_bulk(a->c, a->line.data + a->line.rpos, buf_len(&a->line));
}

static void rewrite_one(struct acl_user *u, void *arg)
{
    struct buf *out = arg;
    acl_user_line(u, out);
    buf_append(out, "\n", 1);
}

/* CONFIG REWRITE's user lines (core/config.h config_users_hook). */
static void rewrite_users(struct buf *out)
{
    acl_users_each(rewrite_one, out);
}

/* ACL LIST: every user's rules in Redis's form. */
static void acl_list_command(struct conn *c)
{
    struct list_arg a = {c, {0}, 0};
    reply_array(c, acl_users_count());
    acl_users_each(list_one, &a);
    buf_deinit(&a.line);
}

static void reply_buf(struct conn *c, struct buf *b)
{
    reply_bulk(c, b->data ? b->data + b->rpos : "", buf_len(b));
    b->rpos = b->wpos = 0;
}

/* ACL GETUSER name: the user's flags, passwords, root selector and other selectors. */
static void acl_getuser_command(struct conn *c)
{
    struct acl_user *u = acl_user_get(c->argv[2].p, c->argv[2].n);
    struct buf t = {0};
    int nf = 0;

    if (!u) {
        reply_null(c);
        return;
    }
    pthread_rwlock_rdlock(&u->lock);
    const struct acl_body *b = u->b;
    reply_map(c, 6);
    reply_cstr(c, "flags");
    for (int i = 0; i < acl_user_flag_count(); i++) {
        unsigned bit;
        acl_user_flag(i, &bit);
        nf += (b->flags & bit) != 0;
    }
    reply_set(c, nf);
    for (int i = 0; i < acl_user_flag_count(); i++) {
        unsigned bit;
        const char *name = acl_user_flag(i, &bit);
        if (b->flags & bit)
            reply_cstr(c, name);
    }
    reply_cstr(c, "passwords");
    reply_array(c, b->npass);
    for (int i = 0; i < b->npass; i++)
        reply_bulk(c, b->pass[i], 64);
    reply_cstr(c, "commands");
    acl_sel_describe_commands(&b->sels[0], &t);
    reply_buf(c, &t);
    reply_cstr(c, "keys");
    acl_sel_describe_keys(&b->sels[0], &t);
    reply_buf(c, &t);
    reply_cstr(c, "channels");
    acl_sel_describe_channels(&b->sels[0], &t);
    reply_buf(c, &t);
    reply_cstr(c, "selectors");
    reply_array(c, b->nsels - 1);
    for (int i = 1; i < b->nsels; i++) {
        reply_map(c, 3);
        reply_cstr(c, "commands");
        acl_sel_describe_commands(&b->sels[i], &t);
        reply_buf(c, &t);
        reply_cstr(c, "keys");
        acl_sel_describe_keys(&b->sels[i], &t);
        reply_buf(c, &t);
        reply_cstr(c, "channels");
        acl_sel_describe_channels(&b->sels[i], &t);
        reply_buf(c, &t);
    }
    pthread_rwlock_unlock(&u->lock);
    buf_deinit(&t);
    acl_user_unref(u);
}

/* ACL SETUSER name [rule ...] */
static void acl_setuser_command(struct conn *c)
{
    char err[1200];

    if (acl_has_spaces(c->argv[2].p, c->argv[2].n)) {
        reply_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    if (acl_setuser(c->argv[2].p, c->argv[2].n, c->argc - 3, c->argv + 3, err, sizeof(err)))
        reply_error(c, err);
    else
        reply_ok(c);
}

/* ACL DELUSER name [name ...]: the number deleted; their connections are closed */
static void acl_deluser_command(struct conn *c)
{
    long long n = 0;

    for (int i = 2; i < c->argc; i++)
        if (c->argv[i].n == 7 && !memcmp(c->argv[i].p, "default", 7)) {
            reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    for (int i = 2; i < c->argc; i++)
        n += acl_deluser(c, c->argv[i].p, c->argv[i].n);
    reply_int(c, n);
}

/* ACL DRYRUN user command [arg ...]: whether user may run the command line, without running
 * it (or the reason it may not, in Redis's words). */
static void acl_dryrun_command(struct conn *c)
{
    const struct cmd *container = NULL, *cmd;
    int argc = c->argc - 3, pos = 0, r;
    struct acl_user *u = acl_user_get(c->argv[2].p, c->argv[2].n);

    if (!u) {
        reply_errorf(c, "ERR User '%.*s' not found", (int)(c->argv[2].n > 128 ? 128 : c->argv[2].n),
                     c->argv[2].p);
        return;
    }
    cmd = cmd_resolve(argc, c->argv + 3, &container);
    if (!cmd || (cmd->flags & CMD_INTERNAL)) {
        acl_user_unref(u);
        reply_errorf(c, "ERR Command '%.*s' not found", (int)(c->argv[3].n > 128 ? 128 : c->argv[3].n),
                     c->argv[3].p);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        acl_user_unref(u);
        reply_arity_error(c, cmd->name);
        return;
    }
    pthread_rwlock_rdlock(&u->lock);
    r = acl_body_check(u->b, cmd, argc, c->argv + 3, &pos);
    pthread_rwlock_unlock(&u->lock);
    if (r == ACL_OK) {
        reply_ok(c);
    } else if (r == ACL_DENIED_CMD) {
        char m[400];
        snprintf(m, sizeof(m), "This user has no permissions to run the '%s' command", cmd->name);
        reply_bulk(c, m, strlen(m));
    } else {
        char m[700];
        const struct slice *a = &c->argv[3 + pos];
        snprintf(m, sizeof(m), "This user has no permissions to access the '%.*s' %s",
                 (int)(a->n > 512 ? 512 : a->n), a->p, r == ACL_DENIED_KEY ? "key" : "channel");
        reply_bulk(c, m, strlen(m));
    }
    acl_user_unref(u);
}
static int cat_walk(struct conn *c, int cat, int emit)
{
    int m = 0;

    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *cmd = cmd_at(i);
        if ((cmd->acl >> cat) & 1) {
            m++;
            if (emit)
                reply_cstr(c, cmd->name);
        }
        for (int j = 0; j < cmd->nsubs; j++)
            if ((cmd->subs[j].acl >> cat) & 1) {
                m++;
                if (emit)
                    reply_cstr(c, cmd->subs[j].name);
            }
    }
    return m;
}

/* ACL CAT [category]: the category names, or the commands (and subcommands) of one. */
static void acl_cat_command(struct conn *c)
{
    if (c->argc == 2) {
        reply_array(c, acl_category_count());
        for (int i = 0; i < acl_category_count(); i++)
            reply_cstr(c, acl_category_name(i));
        return;
    }
    if (c->argc != 3) {
        sub_syntax_error(c);
        return;
    }
    for (int i = 0; i < acl_category_count(); i++)
        if (util_eq_nocase(c->argv[2].p, c->argv[2].n, acl_category_name(i))) {
            reply_array(c, cat_walk(c, i, 0));
            cat_walk(c, i, 1);
            return;
        }
    char name[129];
    arg_cstr(c, 2, name, sizeof(name));
    reply_errorf(c, "ERR Unknown category '%s'", name);
}

/* ACL GENPASS [bits]: bits (default 256, at most 4096) rounded up to whole hex digits. */
static void acl_genpass_command(struct conn *c)
{
    long long bits = 256;
    unsigned char raw[512];
    char hex[1025];

    if (c->argc > 3) {
        sub_syntax_error(c);
        return;
    }
    if (c->argc == 3) {
        if (arg_ll(c, 2, &bits, NULL) < 0)
            return;
        if (bits <= 0 || bits > 4096) {
            reply_error(c, "ERR ACL GENPASS argument must be the number of bits for the output "
                           "password, a positive number up to 4096");
            return;
        }
    }
    size_t chars = (size_t)(bits + 3) / 4, bytes = (chars + 1) / 2;
    size_t got = 0;
    while (got < bytes) {
        ssize_t r = getrandom(raw + got, bytes - got, 0);
        if (r <= 0) {
            reply_error(c, "ERR Failed to generate random password");
            return;
        }
        got += (size_t)r;
    }
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < chars; i++)
        hex[i] = digits[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
    reply_bulk(c, hex, chars);
}

/* ACL SAVE / LOAD: the aclfile, or Redis's error when none is configured. */
static int no_aclfile(struct conn *c)
{
    if (!config_str_empty(cfg.aclfile))
        return 0;
    reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to "
                   "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
                   "(assuming you have a Redis configuration file set) in order to store users in "
                   "the Redis configuration.");
    return 1;
}

static void acl_save_command(struct conn *c)
{
    if (no_aclfile(c))
        return;
    if (acl_save_file())
        reply_error(c, "ERR There was an error trying to save the ACLs. Please check the server "
                       "logs for more information");
    else
        reply_ok(c);
}

static void acl_load_command(struct conn *c)
{
    struct buf errs = {0};

    if (no_aclfile(c))
        return;
    if (acl_load_file(c, &errs)) {
        buf_append(&errs, "", 1);
        reply_errorf(c, "ERR %s", errs.data + errs.rpos);
    } else {
        reply_ok(c);
    }
    buf_deinit(&errs);
}

static void acl_help_command(struct conn *c)
{
    static const char *help[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help."};
    reply_help(c, help);
}

static struct cmd acl_subs[] = {
    {"acl|cat", acl_cat_command, -2, "noscript loading stale", "@slow", NULL, "server", "List the ACL categories or the commands inside a category"},
    {"acl|genpass", acl_genpass_command, -2, "noscript loading stale", "@slow", NULL, "server", "Generate a pseudorandom secure password to use for ACL users"},
    {"acl|users", acl_users_command, 2, "admin noscript loading stale", "@admin @slow @dangerous", NULL, "server", "List the username of all the configured ACL rules"},
    {"acl|whoami", acl_whoami_command, 2, "noscript loading stale", "@slow", NULL, "server", "Return the name of the user associated to the current connection"},
    {"acl|setuser", acl_setuser_command, -3, "admin noscript loading stale", "@slow", NULL, "server", "Modify or create the rules for a specific ACL user"},
    {"acl|deluser", acl_deluser_command, -3, "admin noscript loading stale", "@slow", NULL, "server", "Remove the specified ACL users and the associated rules"},
    {"acl|list", acl_list_command, 2, "admin noscript loading stale", "@slow", NULL, "server", "List the current ACL rules in ACL config file format"},
    {"acl|getuser", acl_getuser_command, 3, "admin noscript loading stale", "@slow", NULL, "server", "Get the rules for a specific ACL user"},
    {"acl|dryrun", acl_dryrun_command, -4, "admin noscript loading stale", "@slow", NULL, "server", "Returns whether the user can execute the given command without executing the command"},
    {"acl|save", acl_save_command, 2, "admin noscript loading stale", "@slow", NULL, "server", "Save the current ACL rules in the configured ACL file"},
    {"acl|load", acl_load_command, 2, "admin noscript loading stale", "@slow", NULL, "server", "Reload the ACLs from the configured ACL file"},
    {"acl|log", acl_log_command, -2, "admin noscript loading stale", "@slow", NULL, "server", "List latest events denied because of ACLs in place"},
    {"acl|help", acl_help_command, 2, "loading stale", "@slow", NULL, "server", "Show helpful text about the different subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"acl", acl_help_command, -2, "", "", NULL, "server", "A container for Access List Control commands", acl_subs},
};

void cmd_acl_setup(void)
{
    acl_users_init();
    config_users_hook = rewrite_users;
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
