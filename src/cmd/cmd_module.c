/* MODULE as Redis 7.0 answers it with no module loaded: LIST is empty, LOAD / LOADEX / UNLOAD
 * are refused unless enable-module-command allows them (as Redis), and then fail the way a
 * module that cannot be loaded fails in Redis: twincache cannot run Redis modules (they are
 * built against Redis's own module API). Also the check shared with DEBUG
 * (enable-debug-command). */
#include <string.h>

#include "cmd/cmd.h"
#include "core/config.h"
#include "core/log.h"
#include "net/conn.h"

int cmd_protected_allowed(struct conn *c, int setting)
{
    if (setting == 1)
        return 1;
    if (setting != 2)
        return 0;
    /* local: a Unix socket or a loopback peer */
    return (c->flags & CONN_UNIX) || !strncmp(c->addr, "127.", 4) ||
           !strncmp(c->addr, "::1", 3) || !strncmp(c->addr, "[::1]", 5);
}

static void module_command(struct conn *c)
{
    if (arg_is(c, 1, "help") && c->argc == 2) {
        static const char *help[] = {
            "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
            "HELP",
            "    Prints this help.",
        };
        reply_help(c, help);
        return;
    }
    if (arg_is(c, 1, "list")) {
        reply_array(c, 0);
        return;
    }
    if (!cmd_protected_allowed(c, cfg.enable_module_command)) {
        reply_error(c, "ERR MODULE command not allowed. If the enable-module-command option is "
                       "set to \"local\", you can run it from a local connection, otherwise you "
                       "need to set this option in the configuration file, and then restart the "
                       "server.");
        return;
    }
    if (arg_is(c, 1, "unload")) {
        reply_error(c, "ERR Error unloading module: no such module with that name");
        return;
    }
    char path[256];
    arg_cstr(c, 2, path, sizeof(path));
    log_warn("Module %s failed to load: twincache cannot load Redis modules", path);
    reply_error(c, "ERR Error loading the extension. Please check the server logs.");
}

static struct cmd module_subs[] = {
    {"module|help", module_command, 2, "loading stale", "", NULL, "server", "Show helpful text about the different subcommands"},
    {"module|list", module_command, 2, "admin noscript", "", NULL, "server", "List all modules loaded by the server"},
    {"module|load", module_command, -3, "admin noscript no_async_loading", "", NULL, "server", "Load a module"},
    {"module|loadex", module_command, -3, "admin noscript no_async_loading", "", NULL, "server", "Load a module with extended parameters"},
    {"module|unload", module_command, 3, "admin noscript no_async_loading", "", NULL, "server", "Unload a module"},
    {NULL},
};

static struct cmd cmds[] = {
    {"module", module_command, -2, "", "", NULL, "server", "A container for module commands", module_subs},
};

void cmd_module_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
