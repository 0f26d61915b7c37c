/* COMMAND and its subcommands: the command table as clients see it. Everything here is read
 * from the table entries (cmd.h), so what COMMAND INFO and GETKEYS say is what locking,
 * WATCH, blocking and the AOF use. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/util.h"

static void reply_flags(struct conn *c, uint64_t f)
{
    int n = 0, nf = cmd_flag_count();
    uint64_t bit;

    for (int i = 0; i < nf; i++) {
        const char *name = cmd_flag_name(i, &bit);
        n += (f & bit) && strncmp(name, "tc:", 3) && bit != CMD_MAY_REPLICATE;
    }
    reply_set(c, n);
    for (int i = 0; i < nf; i++) {
        const char *name = cmd_flag_name(i, &bit);
        if ((f & bit) && strncmp(name, "tc:", 3) && bit != CMD_MAY_REPLICATE)
            reply_status(c, name); /* may_replicate is internal, as in Redis's reply */
    }
}

static void reply_key_flags(struct conn *c, unsigned f)
{
    int n = 0, nf = keyspec_flag_count();
    unsigned bit;

    for (int i = 0; i < nf; i++) {
        keyspec_flag_name(i, &bit);
        n += (f & bit) != 0;
    }
    reply_set(c, n);
    for (int i = 0; i < nf; i++) {
        const char *name = keyspec_flag_name(i, &bit);
        if (f & bit)
            reply_status(c, name);
    }
}

static void reply_acl(struct conn *c, uint32_t acl)
{
    int n = 0;
    char name[32];

    for (int i = 0; i < acl_category_count(); i++)
        n += (acl >> i) & 1;
    reply_set(c, n);
    for (int i = 0; i < acl_category_count(); i++)
        if ((acl >> i) & 1) {
            snprintf(name, sizeof(name), "@%s", acl_category_name(i));
            reply_status(c, name);
        }
}

static void reply_kv_int(struct conn *c, const char *k, long long v)
{
    reply_cstr(c, k);
    reply_int(c, v);
}

static void reply_keyspec(struct conn *c, const struct keyspec *ks)
{
    reply_map(c, 3);
    reply_cstr(c, "flags");
    reply_key_flags(c, ks->flags);
    reply_cstr(c, "begin_search");
    reply_map(c, 2);
    reply_cstr(c, "type");
    if (ks->bs == KS_BS_INDEX) {
        reply_cstr(c, "index");
        reply_cstr(c, "spec");
        reply_map(c, 1);
        reply_kv_int(c, "index", ks->pos);
    } else if (ks->bs == KS_BS_KEYWORD) {
        reply_cstr(c, "keyword");
        reply_cstr(c, "spec");
        reply_map(c, 2);
        reply_cstr(c, "keyword");
        reply_cstr(c, ks->kw);
        reply_kv_int(c, "startfrom", ks->pos);
    } else {
        reply_cstr(c, "unknown");
        reply_cstr(c, "spec");
        reply_map(c, 0);
    }
    reply_cstr(c, "find_keys");
    reply_map(c, 2);
    reply_cstr(c, "type");
    if (ks->fk == KS_FK_RANGE) {
        reply_cstr(c, "range");
        reply_cstr(c, "spec");
        reply_map(c, 3);
        reply_kv_int(c, "lastkey", ks->a);
        reply_kv_int(c, "keystep", ks->b);
        reply_kv_int(c, "limit", ks->l);
    } else if (ks->fk == KS_FK_KEYNUM) {
        reply_cstr(c, "keynum");
        reply_cstr(c, "spec");
        reply_map(c, 3);
        reply_kv_int(c, "keynumidx", ks->a);
        reply_kv_int(c, "firstkey", ks->b);
        reply_kv_int(c, "keystep", ks->l);
    } else {
        reply_cstr(c, "unknown");
        reply_cstr(c, "spec");
        reply_map(c, 0);
    }
}

static void reply_info(struct conn *c, const struct cmd *cmd)
{
    reply_array(c, 10);
    reply_cstr(c, cmd->name);
    reply_int(c, cmd->arity);
    reply_flags(c, cmd->flags);
    reply_int(c, cmd->first);
    reply_int(c, cmd->last);
    reply_int(c, cmd->step);
    reply_acl(c, cmd->acl);
    reply_set(c, 0); /* tips: no cluster here */
    reply_array(c, cmd->nks);
    for (int i = 0; i < cmd->nks; i++)
        reply_keyspec(c, &cmd->ks[i]);
    if (!cmd->nsubs) {
        reply_set(c, 0);
        return;
    }
    reply_array(c, cmd->nsubs);
    for (int i = 0; i < cmd->nsubs; i++)
        reply_info(c, &cmd->subs[i]);
}

static void reply_docs(struct conn *c, const struct cmd *cmd)
{
    reply_cstr(c, cmd->name);
    reply_map(c, 2 + (cmd->nsubs > 0));
    reply_cstr(c, "summary");
    reply_cstr(c, cmd->summary ? cmd->summary : "");
    reply_cstr(c, "group");
    reply_cstr(c, cmd->group ? cmd->group : "server");
    if (cmd->nsubs) {
        reply_cstr(c, "subcommands");
        reply_map(c, cmd->nsubs);
        for (int i = 0; i < cmd->nsubs; i++)
            reply_docs(c, &cmd->subs[i]);
    }
}

/* COMMAND: every top-level command's INFO */
static void command_command(struct conn *c)
{
    int n = cmd_count();

    reply_array(c, n);
    for (int i = 0; i < n; i++)
        reply_info(c, cmd_at(i));
}

static void command_count_command(struct conn *c)
{
    reply_int(c, cmd_count());
}

static void command_info_command(struct conn *c)
{
    if (c->argc == 2) {
        command_command(c);
        return;
    }
    reply_array(c, c->argc - 2);
    for (int i = 2; i < c->argc; i++) {
        const struct cmd *cmd = cmd_lookup_full(c->argv[i].p, c->argv[i].n);
        if (cmd)
            reply_info(c, cmd);
        else
            reply_null(c);
    }
}

static void command_docs_command(struct conn *c)
{
    int n = cmd_count(), found = 0;

    if (c->argc == 2) {
        reply_map(c, n);
        for (int i = 0; i < n; i++)
            reply_docs(c, cmd_at(i));
        return;
    }
    for (int i = 2; i < c->argc; i++)
        found += cmd_lookup_full(c->argv[i].p, c->argv[i].n) != NULL;
    reply_map(c, found);
    for (int i = 2; i < c->argc; i++) {
        const struct cmd *cmd = cmd_lookup_full(c->argv[i].p, c->argv[i].n);
        if (cmd)
            reply_docs(c, cmd);
    }
}

/* COMMAND LIST [FILTERBY MODULE name | ACLCAT cat | PATTERN pat]: names of commands and
 * subcommands. */
struct list_filter {
    int kind; /* 0 none, 1 module (never matches), 2 aclcat, 3 pattern */
    int cat;
    const struct slice *arg;
};

static int list_match(const struct list_filter *f, const struct cmd *cmd)
{
    switch (f->kind) {
    case 1:
        return 0;
    case 2:
        return f->cat >= 0 && ((cmd->acl >> f->cat) & 1);
    case 3:
        return util_glob_match(f->arg->p, f->arg->n, cmd->name, strlen(cmd->name), 1);
    }
    return 1;
}

static int list_walk(struct conn *c, const struct list_filter *f, int emit)
{
    int m = 0;

    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *cmd = cmd_at(i);
        if (list_match(f, cmd)) {
            m++;
            if (emit)
                reply_cstr(c, cmd->name);
        }
        for (int j = 0; j < cmd->nsubs; j++)
            if (list_match(f, &cmd->subs[j])) {
                m++;
                if (emit)
                    reply_cstr(c, cmd->subs[j].name);
            }
    }
    return m;
}

static void command_list_command(struct conn *c)
{
    struct list_filter f = {0, -1, NULL};

    if (c->argc == 5 && arg_is(c, 2, "filterby")) {
        f.arg = &c->argv[4];
        if (arg_is(c, 3, "module")) {
            f.kind = 1;
        } else if (arg_is(c, 3, "aclcat")) {
            f.kind = 2;
            for (int i = 0; i < acl_category_count(); i++)
                if (util_eq_nocase(f.arg->p, f.arg->n, acl_category_name(i)))
                    f.cat = i;
        } else if (arg_is(c, 3, "pattern")) {
            f.kind = 3;
        } else {
            reply_error(c, ERR_SYNTAX);
            return;
        }
    } else if (c->argc != 2) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    reply_array(c, list_walk(c, &f, 0));
    list_walk(c, &f, 1);
}

struct getkeys_arg {
    struct conn *c;
    int with_flags;
};

static int getkeys_cb(void *arg, int pos, unsigned flags)
{
    struct getkeys_arg *a = arg;
    struct conn *c = a->c;

    if (a->with_flags)
        reply_array(c, 2);
    reply_bulk(c, c->argv[2 + pos].p, c->argv[2 + pos].n);
    if (a->with_flags)
        reply_key_flags(c, flags);
    return 0;
}

static void getkeys(struct conn *c, int with_flags)
{
    const struct cmd *container;
    const struct slice *argv = c->argv + 2;
    int argc = c->argc - 2;
    const struct cmd *cmd = cmd_resolve(argc, argv, &container);
    struct getkeys_arg a = {c, with_flags};
    int n;

    if (!cmd) {
        reply_error(c, "ERR Invalid command specified");
        return;
    }
    if (!cmd_has_keys(cmd)) {
        reply_error(c, "ERR The command has no key arguments");
        return;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    n = cmd_keys(cmd, argc, argv, NULL, NULL);
    if (n <= 0) {
        if (cmd->flags & CMD_NO_MANDATORY_KEYS)
            reply_array(c, 0);
        else
            reply_error(c, "ERR Invalid arguments specified for command");
        return;
    }
    reply_array(c, n);
    cmd_keys(cmd, argc, argv, getkeys_cb, &a);
}

static void command_getkeys_command(struct conn *c)
{
    getkeys(c, 0);
}

static void command_getkeysandflags_command(struct conn *c)
{
    getkeys(c, 1);
}

static void command_help_command(struct conn *c)
{
    static const char *help[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Every command's details.",
        "COUNT",
        "    How many commands there are.",
        "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
        "    Names of the commands and subcommands, optionally filtered.",
        "INFO [<command-name> ...]",
        "    Details of the named commands, or of every command.",
        "DOCS [<command-name> ...]",
        "    Summary and group of the named commands, or of every command.",
        "GETKEYS <full-command>",
        "    The keys of a full command line.",
        "GETKEYSANDFLAGS <full-command>",
        "    The keys of a full command line, with their access flags.",
        "HELP",
        "    Print this help."};
    reply_help(c, help);
}

static struct cmd command_subs[] = {
    {"command|count", command_count_command, 2, "loading stale", "@connection", NULL, "server", "How many commands the server has"},
    {"command|info", command_info_command, -2, "loading stale", "@connection", NULL, "server", "The table facts of the named commands, or of all"},
    {"command|docs", command_docs_command, -2, "loading stale", "@connection", NULL, "server", "Summary and group of the named commands, or of all"},
    {"command|list", command_list_command, -2, "loading stale", "@connection", NULL, "server", "Command names, optionally filtered"},
    {"command|getkeys", command_getkeys_command, -4, "loading stale", "@connection", NULL, "server", "The key arguments of a full command line"},
    {"command|getkeysandflags", command_getkeysandflags_command, -4, "loading stale", "@connection", NULL, "server", "The key arguments of a full command line with their access flags"},
    {"command|help", command_help_command, 2, "loading stale", "@connection", NULL, "server", "List the COMMAND subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"command", command_command, -1, "loading stale", "@connection", NULL, "server", "Get array of Redis command details", command_subs},
};

void cmd_command_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
