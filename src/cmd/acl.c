/* ACL: the first part of Redis 7.0's ACL command (issue 21). One user exists, "default",
 * with every permission and requirepass as its password, so WHOAMI, USERS, LIST, GETUSER and
 * DRYRUN describe it; CAT lists the categories of the command table (struct cmd's acl word)
 * and the commands of one; GENPASS draws from the kernel's random source; SAVE and LOAD
 * answer Redis's no-aclfile error; LOG holds failed AUTH / HELLO AUTH attempts. SETUSER and
 * DELUSER (user rules, the permission check, AUTH with other users) are not built yet: they
 * are not registered, so they get the unknown-subcommand error rather than a pretend answer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "cmd/cmd.h"
#include "core/config.h"
#include "core/util.h"

/* Redis's reply to a known ACL subcommand with the wrong number of arguments. */
static void sub_syntax_error(struct conn *c)
{
    reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try ACL HELP.",
                 (int)(c->argv[1].n > 128 ? 128 : c->argv[1].n), c->argv[1].p);
}

/* ---- ACL LOG: denials, newest first (today only failed AUTH / HELLO AUTH, reason "auth").
 * A failure like one logged within the last 60 s (same reason, context, object and user) adds
 * to its count, refreshes its client-info and moves it to the front, as Redis 7.0 does. At
 * most ACL_LOG_MAX entries (Redis's acllog-max-len default); the oldest is dropped. The lock
 * is the log's own, taken only on a failure or by ACL LOG. */
enum { ACL_LOG_MAX = 128, ACL_LOG_USER_MAX = 512, ACL_LOG_GROUP_MS = 60000 };

struct acl_log_entry {
    long long count;
    const char *object; /* "AUTH" or "HELLO" */
    int64_t ctime_ms;
    size_t ulen;
    char user[ACL_LOG_USER_MAX];
    char cinfo[1024];
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct acl_log_entry *log_ents[ACL_LOG_MAX]; /* [0] newest */
static int log_n;

void acl_log_auth_failure(struct conn *c, const char *object, const struct slice *user)
{
    const char *u = user ? user->p : "default";
    size_t ul = user ? user->n : 7;
    char cinfo[1024];
    int64_t now = util_now_ms();
    struct acl_log_entry *e = NULL;
    int at;

    if (ul > ACL_LOG_USER_MAX)
        ul = ACL_LOG_USER_MAX;
    conn_client_info(c, cinfo, sizeof(cinfo));
    pthread_mutex_lock(&log_lock);
    for (at = 0; at < log_n; at++) {
        struct acl_log_entry *x = log_ents[at];
        if (x->object == object && x->ulen == ul && !memcmp(x->user, u, ul) &&
            now - x->ctime_ms < ACL_LOG_GROUP_MS) {
            e = x;
            break;
        }
    }
    if (e) {
        e->count++;
    } else {
        if (log_n == ACL_LOG_MAX) {
            e = log_ents[--log_n]; /* reuse the oldest */
        } else if (!(e = malloc(sizeof(*e)))) {
            pthread_mutex_unlock(&log_lock);
            return;
        }
        e->count = 1;
        e->object = object;
        e->ulen = ul;
        memcpy(e->user, u, ul);
        at = log_n++;
    }
    e->ctime_ms = now;
    memcpy(e->cinfo, cinfo, sizeof(cinfo));
    memmove(log_ents + 1, log_ents, (size_t)at * sizeof(log_ents[0]));
    log_ents[0] = e;
    pthread_mutex_unlock(&log_lock);
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
        reply_cstr(c, "auth");
        reply_cstr(c, "context");
        reply_cstr(c, "toplevel");
        reply_cstr(c, "object");
        reply_cstr(c, e->object);
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

/* SHA-256 (FIPS 180-4) of a short string into 64 hex digits: how ACL LIST and GETUSER show the
 * default user's password (requirepass) as Redis does. Not on any hot path. */
static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const unsigned char *b)
{
    uint32_t w[64], v[8];

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof(v));
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + S1 + ch + sha_k[i] + w[i];
        uint32_t S0 = ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22);
        uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        memmove(v + 1, v, 7 * sizeof(v[0]));
        v[4] += t1;
        v[0] = t1 + S0 + maj;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

static void sha256_hex(const char *p, size_t n, char out[65])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char tail[128];
    size_t full = n / 64 * 64, rest = n - full;

    for (size_t i = 0; i < full; i += 64)
        sha_block(h, (const unsigned char *)p + i);
    memset(tail, 0, sizeof(tail));
    memcpy(tail, p + full, rest);
    tail[rest] = 0x80;
    size_t tl = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t i = 0; i < tl; i += 64)
        sha_block(h, tail + i);
    for (int i = 0; i < 8; i++)
        snprintf(out + 8 * i, 9, "%08x", h[i]);
}

/* The default user's password hash (requirepass), or 0 when it has none (nopass). */
static int default_pass_hash(char out[65])
{
    char pw[sizeof(cfg.requirepass)];

    config_str(cfg.requirepass, pw, sizeof(pw));
    if (!pw[0])
        return 0;
    sha256_hex(pw, strlen(pw), out);
    return 1;
}

static int is_default(struct conn *c, int i)
{
    return c->argv[i].n == 7 && !memcmp(c->argv[i].p, "default", 7);
}

/* ACL LIST: the one user's rules in Redis's form. */
static void acl_list_command(struct conn *c)
{
    char hash[65], line[128];

    if (default_pass_hash(hash))
        snprintf(line, sizeof(line), "user default on #%s ~* &* +@all", hash);
    else
        snprintf(line, sizeof(line), "user default on nopass ~* &* +@all");
    reply_array(c, 1);
    reply_cstr(c, line);
}

/* ACL GETUSER name: the default user's description, or a null for any other name. */
static void acl_getuser_command(struct conn *c)
{
    char hash[65];
    int has = default_pass_hash(hash);

    if (!is_default(c, 2)) {
        reply_null(c);
        return;
    }
    reply_map(c, 6);
    reply_cstr(c, "flags");
    reply_set(c, has ? 1 : 2);
    reply_cstr(c, "on");
    if (!has)
        reply_cstr(c, "nopass");
    reply_cstr(c, "passwords");
    reply_array(c, has ? 1 : 0);
    if (has)
        reply_cstr(c, hash);
    reply_cstr(c, "commands");
    reply_cstr(c, "+@all");
    reply_cstr(c, "keys");
    reply_cstr(c, "~*");
    reply_cstr(c, "channels");
    reply_cstr(c, "&*");
    reply_cstr(c, "selectors");
    reply_array(c, 0);
}

/* ACL DRYRUN user command [arg ...]: the default user may run every command; the command
 * line is checked for existence and arity as Redis does. */
static void acl_dryrun_command(struct conn *c)
{
    const struct cmd *container = NULL, *cmd;
    int argc = c->argc - 3;

    if (!is_default(c, 2)) {
        reply_errorf(c, "ERR User '%.*s' not found", (int)(c->argv[2].n > 128 ? 128 : c->argv[2].n),
                     c->argv[2].p);
        return;
    }
    cmd = cmd_resolve(argc, c->argv + 3, &container);
    if (!cmd || (cmd->flags & CMD_INTERNAL)) {
        reply_errorf(c, "ERR Command '%.*s' not found", (int)(c->argv[3].n > 128 ? 128 : c->argv[3].n),
                     c->argv[3].p);
        return;
    }
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
        reply_arity_error(c, cmd->name);
        return;
    }
    reply_ok(c);
}

/* ACL SAVE / LOAD: no aclfile is configured (the setting does not exist yet). */
static void acl_file_command(struct conn *c)
{
    reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to "
                   "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
                   "(assuming you have a Redis configuration file set) in order to store users in "
                   "the Redis configuration.");
}

static void acl_help_command(struct conn *c)
{
    static const char *help[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
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
    {"acl|list", acl_list_command, 2, "admin noscript loading stale", "@slow", NULL, "server", "List the current ACL rules in ACL config file format"},
    {"acl|getuser", acl_getuser_command, 3, "admin noscript loading stale", "@slow", NULL, "server", "Get the rules for a specific ACL user"},
    {"acl|dryrun", acl_dryrun_command, -4, "admin noscript loading stale", "@slow", NULL, "server", "Returns whether the user can execute the given command without executing the command"},
    {"acl|save", acl_file_command, 2, "admin noscript loading stale", "@slow", NULL, "server", "Save the current ACL rules in the configured ACL file"},
    {"acl|load", acl_file_command, 2, "admin noscript loading stale", "@slow", NULL, "server", "Reload the ACLs from the configured ACL file"},
    {"acl|log", acl_log_command, -2, "admin noscript loading stale", "@slow", NULL, "server", "List latest events denied because of ACLs in place"},
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
