/* ACL: the first, stateless part of Redis 7.0's ACL command (issue 21). One user exists,
 * "default", with every permission, so WHOAMI and USERS name it; CAT lists the categories of
 * the command table (struct cmd's acl word) and the commands of one; GENPASS draws from the
 * kernel's random source. User rules, the permission check, AUTH with users and the ACL log
 * are not built yet: their subcommands answer an error rather than pretend. */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "cmd/cmd.h"
#include "core/util.h"

/* Redis's reply to a known ACL subcommand with the wrong number of arguments. */
static void sub_syntax_error(struct conn *c)
{
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.",
                 (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p);
}

static void acl_whoami_command(struct conn *c)
{
    reply_cstr(c, "default");
}

static void acl_users_command(struct conn *c)
{
    reply_array(c, 1);
    reply_cstr(c, "default");
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

static void acl_help_command(struct conn *c)
{
    static const char *help[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "HELP",
        "    Print this help."};
    reply_help(c, help);
}

static struct cmd acl_subs[] = {
    {"acl|cat", acl_cat_command, -2, "noscript loading stale", "@slow", NULL, "server", "List the ACL categories or the commands inside a category"},
    {"acl|genpass", acl_genpass_command, -2, "noscript loading stale", "@slow", NULL, "server", "Generate a pseudorandom secure password to use for ACL users"},
    {"acl|users", acl_users_command, 2, "admin noscript loading stale", "@admin @slow @dangerous", NULL, "server", "List the username of all the configured ACL rules"},
    {"acl|whoami", acl_whoami_command, 2, "noscript loading stale", "@slow", NULL, "server", "Return the name of the user associated to the current connection"},
    {"acl|help", acl_help_command, 2, "loading stale", "@slow", NULL, "server", "Show helpful text about the different subcommands"},
    {NULL},
};

static struct cmd cmds[] = {
    {"acl", acl_help_command, -2, "", "", NULL, "server", "A container for Access List Control commands", acl_subs},
};

void cmd_acl_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
