/* config: CONFIG SET/GET semantics on the settings table, formatting, glob listing, and
 * redis.conf-style file loading (quotes, comments, errors with file:line). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "tap.h"

static char err[1024];

static int set1(const char *name, const char *v, int boot)
{
    const char *argv[1] = {v};
    err[0] = '\0';
    return config_set(name, argv, 1, boot, err, sizeof(err));
}

static const char *fmt(const char *name)
{
    static char out[2048];
    if (config_format(name, out, sizeof(out)))
        return "(unknown)";
    return out;
}

static void test_defaults(void)
{
    config_defaults();
    is_str(fmt("port"), "6379", "default port");
    is_str(fmt("bind"), "* -::*", "default bind (Redis 7.0's)");
    is_str(fmt("databases"), "16", "default databases");
    is_str(fmt("proto-max-bulk-len"), "536870912", "default proto-max-bulk-len (512mb)");
    is_str(fmt("appendonly"), "no", "default appendonly");
    is_str(fmt("appendfsync"), "everysec", "default appendfsync");
    is_str(fmt("loglevel"), "notice", "default loglevel");
    is_str(fmt("save"), "3600 1 300 100 60 10000", "default save rules (Redis 7.0's)");
    ok(cfg.threads >= 1, "threads defaults to the number of cores (%d)", cfg.threads);
    is_int(config_format("no-such-setting", err, sizeof(err)), -1, "format of an unknown name");
}

static void test_set(void)
{
    const char *two[2] = {"127.0.0.1", "::1"};

    config_defaults();
    ok(set1("port", "7000", 1) == 0 && cfg.port == 7000, "set port at boot");
    ok(set1("PoRt", "7001", 1) == 0 && cfg.port == 7001, "setting names are case-insensitive");
    ok(set1("databases", "7", 0) == -1 && cfg.databases == 16, "databases is immutable at runtime");
    ok(strstr(err, "can't set immutable config") != NULL, "immutable error text: %s", err);
    ok(set1("port", "7002", 0) == 0 && cfg.port == 7002, "port is set at runtime (rebinding)");
    ok(set1("port", "7001", 0) == 0, "port back");
    ok(set1("port", "65536", 1) == -1 && cfg.port == 7001, "port out of range");
    ok(strstr(err, "CONFIG SET failed (possibly related to argument 'port')") == err,
       "error names the argument: %s", err);
    ok(set1("port", "-1", 1) == -1, "negative port");
    ok(set1("port", "12a", 1) == -1, "non-numeric port");
    ok(set1("port", "+80", 1) == -1, "'+' rejected as in Redis");
    ok(set1("timeout", "30", 0) == 0 && cfg.timeout == 30, "timeout is mutable");
    is_str(fmt("timeout"), "30", "timeout formatted");

    ok(set1("maxmemory", "1gb", 0) == 0 && cfg.maxmemory == 1073741824LL, "maxmemory 1gb");
    is_str(fmt("maxmemory"), "1073741824", "maxmemory formatted in bytes");
    ok(set1("maxmemory", "100MB", 0) == 0 && cfg.maxmemory == 104857600LL, "units are nocase");
    ok(set1("maxmemory", "1.5gb", 0) == -1 && cfg.maxmemory == 104857600LL, "1.5gb rejected");
    ok(strstr(err, "argument must be a memory value") != NULL, "memory error text: %s", err);
    ok(set1("proto-max-bulk-len", "1000", 0) == -1, "proto-max-bulk-len below its minimum");
    ok(set1("proto-max-bulk-len", "1mb", 0) == 0 && cfg.proto_max_bulk_len == 1048576,
       "proto-max-bulk-len 1mb");

    ok(set1("maxmemory-policy", "ALLKEYS-LFU", 0) == 0 &&
           cfg.maxmemory_policy == MM_ALLKEYS_LFU,
       "enum values are nocase");
    is_str(fmt("maxmemory-policy"), "allkeys-lfu", "enum formatted canonically");
    is_str(config_policy_name(MM_VOLATILE_TTL), "volatile-ttl", "policy names");
    ok(set1("maxmemory-policy", "lru", 0) == -1, "unknown enum value");
    ok(strstr(err, "must be one of the following") != NULL, "enum error text: %s", err);

    ok(set1("appendonly", "YES", 0) == 0 && cfg.appendonly == 1, "bool yes");
    is_str(fmt("appendonly"), "yes", "bool formatted");
    ok(set1("appendonly", "no", 0) == 0 && cfg.appendonly == 0, "bool no");
    ok(set1("appendonly", "1", 0) == -1, "bool rejects 1");
    ok(strstr(err, "'appendonly'") != NULL, "bool error names the setting: %s", err);

    ok(set1("loglevel", "warning", 0) == 0 && cfg.loglevel == LOG_WARNING &&
           log_level_get() == LOG_WARNING,
       "loglevel applies to the logger");
    ok(set1("loglevel", "notice", 0) == 0 && log_level_get() == LOG_NOTICE, "loglevel back");
    ok(set1("loglevel", "loud", 0) == -1, "unknown loglevel");

    ok(set1("requirepass", "s3cret", 0) == 0 && !strcmp(cfg.requirepass, "s3cret"),
       "requirepass");
    ok(set1("requirepass", "", 0) == 0 && cfg.requirepass[0] == '\0', "requirepass cleared");
    char longv[600];
    memset(longv, 'p', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    ok(set1("requirepass", longv, 0) == -1 && cfg.requirepass[0] == '\0',
       "string longer than its field rejected, old value kept");
    char path[1100];
    memset(path, 'd', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    ok(set1("dir", "/tmp", 0) == 0, "dir /tmp");
    ok(set1("dir", path, 0) == -1 && !strcmp(cfg.dir, "/tmp"),
       "a value longer than any field is rejected, not truncated");
    const char *words[3] = {path + 700, path + 700, path + 700};
    ok(config_set("dir", words, 3, 0, err, sizeof(err)) == -1 && !strcmp(cfg.dir, "/tmp"),
       "words joined beyond 1 KiB are rejected");
    ok(config_set("bind", two, 2, 1, err, sizeof(err)) == 0, "multi-word value");
    is_str(fmt("bind"), "127.0.0.1 ::1", "words joined with a space");
    ok(config_set("save", NULL, 0, 0, err, sizeof(err)) == 0, "save with no words");
    is_str(fmt("save"), "", "empty save");

    ok(set1("no-such-setting", "1", 1) == -1, "unknown setting");
    ok(!strncmp(err, "Unknown option", 14) && strstr(err, "'no-such-setting'"),
       "unknown setting error text: %s", err);
    ok(set1("slowlog-log-slower-than", "-1", 0) == 0 && cfg.slowlog_log_slower_than == -1,
       "long long setting with a negative minimum");
    ok(set1("slowlog-log-slower-than", "-2", 0) == -1, "below minimum");
    ok(set1("io-threads", "3", 1) == 0 && cfg.threads == 3, "io-threads aliases threads");
}

struct seen {
    char names[64][64];
    char values[64][128];
    int n;
};

static void collect(const char *name, const char *value, void *arg)
{
    struct seen *s = arg;
    if (s->n < 64) {
        snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
        snprintf(s->values[s->n], sizeof(s->values[0]), "%s", value);
    }
    s->n++;
}

static int has(const struct seen *s, const char *name)
{
    for (int i = 0; i < s->n && i < 64; i++)
        if (!strcmp(s->names[i], name))
            return 1;
    return 0;
}

static void test_get(void)
{
    struct seen s;

    config_defaults();
    memset(&s, 0, sizeof(s));
    is_int(config_get("port", collect, &s), 1, "get an exact name");
    ok(s.n == 1 && !strcmp(s.names[0], "port") && !strcmp(s.values[0], "6379"), "port 6379");

    memset(&s, 0, sizeof(s));
    is_int(config_get("PORT", collect, &s), 1, "glob is case-insensitive");

    memset(&s, 0, sizeof(s));
    int n = config_get("*port", collect, &s);
    ok(n >= 2 && has(&s, "port") && has(&s, "memcache-port") && !has(&s, "maxclients"),
       "*port lists port and memcache-port (%d)", n);
    int allmatch = 1;
    for (int i = 0; i < s.n && i < 64; i++)
        allmatch &= util_glob_match("*port", 5, s.names[i], strlen(s.names[i]), 1);
    ok(allmatch, "every listed name matches the pattern");

    memset(&s, 0, sizeof(s));
    config_get("*threads*", collect, &s);
    ok(!has(&s, "threads") && has(&s, "io-threads"),
       "threads (fixed at start-up, twincache's own) is hidden, its io-threads alias listed "
       "as Redis lists it (redis_exporter's redis_config_io_threads)");
    memset(&s, 0, sizeof(s));
    config_get("threads", collect, &s);
    ok(s.n == 1 && has(&s, "threads"), "... threads is returned by its exact name");

    memset(&s, 0, sizeof(s));
    config_get("maxmemory-polic?", collect, &s);
    ok(s.n == 1 && !strcmp(s.values[0], "noeviction"), "'?' glob");
    memset(&s, 0, sizeof(s));
    config_get("[pd]*", collect, &s);
    ok(has(&s, "port") && has(&s, "dir") && has(&s, "databases") && !has(&s, "bind"),
       "class glob");
    memset(&s, 0, sizeof(s));
    is_int(config_get("no-such-*", collect, &s), 0, "no match");

    memset(&s, 0, sizeof(s));
    n = config_get("*", collect, &s);
    ok(n >= 30, "* lists every setting (%d)", n);
    int consistent = 1;
    for (int i = 0; i < s.n && i < 64; i++)
        consistent &= !strcmp(fmt(s.names[i]), s.values[i]);
    ok(consistent, "listed values equal config_format");
}

static char tmpl[] = "/tmp/tc_test_config_XXXXXX";

static int load(const char *text)
{
    int fd = mkstemp(tmpl);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    err[0] = '\0';
    int r = config_load_file(tmpl, err, sizeof(err));
    unlink(tmpl);
    strcpy(tmpl + strlen(tmpl) - 6, "XXXXXX");
    return r;
}

static void test_file(void)
{
    config_defaults();
    ok(load("# a comment\n"
            "   # an indented comment\n"
            "\n"
            "port 7777\n"
            "bind 127.0.0.1 ::1\n"
            "requirepass \"with space \\\"quoted\\\"\"\n"
            "dbfilename 'single quoted'\n"
            "save \"\"\n"
            "maxmemory 100mb\n"
            "MAXMEMORY-POLICY volatile-ttl\n"
            "\ttimeout\t30\t\n"
            "databases 4\r\n"
            "logfile \"\"") == 0,
       "load a file: %s", err);
    is_int(cfg.port, 7777, "port from file");
    is_str(cfg.bind, "127.0.0.1 ::1", "multi-word bind");
    is_str(cfg.requirepass, "with space \"quoted\"", "double quotes with escaped quotes");
    is_str(cfg.dbfilename, "single quoted", "single quotes");
    is_str(cfg.save, "", "empty quoted value");
    is_int(cfg.maxmemory, 104857600, "memory unit");
    is_int(cfg.maxmemory_policy, MM_VOLATILE_TTL, "case-insensitive name");
    is_int(cfg.timeout, 30, "tabs separate words");
    is_int(cfg.databases, 4, "CRLF line ending");
    is_str(cfg.logfile, "", "last line without a newline");

    ok(load("port 1\nport 2\nbogus-option 1\nport 3\n") == -1, "unknown option fails");
    ok(strstr(err, "at line 3\n>>> 'bogus-option 1'\nBad directive or wrong number of arguments") != NULL, "error has line 3: %s", err);
    is_int(cfg.port, 2, "settings before the bad line were applied");

    ok(load("requirepass \"abc\n") == -1 &&
           strstr(err, "at line 1\n>>> 'requirepass \"abc'\nUnbalanced quotes in configuration line"),
       "unbalanced double quote: %s", err);
    /* as redis-server: comments are skipped before words are split (Debian's redis.conf) */
    ok(load("# Each address can be prefixed by \"-\", which means ...\nport 5\n") == 0 &&
           cfg.port == 5, "a comment with an odd quote: %s", err);
    ok(load("   # indented comment 'x\n\t\nport 6\n") == 0 && cfg.port == 6,
       "indented comment and blank line: %s", err);
    ok(load("requirepass \"a\\x41\\tb\\\"\"\n") == 0 &&
           !strcmp(cfg.requirepass, "aA\tb\""), "escapes in double quotes: %s", cfg.requirepass);
    ok(load("requirepass 'it\\'s'\n") == 0 && !strcmp(cfg.requirepass, "it's"),
       "\\' in single quotes: %s", cfg.requirepass);
    ok(load("unixsocketperm 700\n") == 0 && cfg.unixsocketperm == 0700, "unixsocketperm is octal");
    ok(load("unixsocketperm 800\n") == -1, "unixsocketperm 800 is not octal");
    ok(load("rename-command FLUSHALL \"\"\nrename-command get myget\n") == 0 &&
           config_nrenames >= 4 && !strcmp(config_renames[config_nrenames - 1], "myget") &&
           !strcmp(config_renames[config_nrenames - 3], ""),
       "rename-command lines are kept for the command table");
    ok(load("loadmodule /x.so\n") == -1, "loadmodule is refused");
    ok(load("always-show-logo yes\npropagation-error-behavior panic\nactivedefrag no\n") == 0,
       "Redis 7.0's other settings load: %s", err);
    ok(load("activedefrag yes\n") == -1, "activedefrag yes is refused as without defrag");
    ok(load("requirepass 'abc\n") == -1, "unbalanced single quote");
    ok(load("requirepass \"abc\"def\n") == -1, "closing quote followed by a letter");
    ok(load("port 70000\n") == -1 && strstr(err, "at line 1\n>>> 'port 70000'\nargument must be between"),
       "bad value: %s", err);
    ok(load("port\n") == -1, "missing value");

    ok(config_load_file("/nonexistent/twincache.conf", err, sizeof(err)) == -1 &&
           strstr(err, "can't open config file '/nonexistent/twincache.conf'"),
       "missing file: %s", err);

    /* a line longer than the read buffer must not have its tail read as a new directive */
    char *big = malloc(20000);
    size_t n = 0;
    n += (size_t)sprintf(big + n, "# ");
    memset(big + n, 'x', 9000);
    n += 9000;
    n += (size_t)sprintf(big + n, " port 1234\nport 4321\n");
    config_defaults();
    ok(load(big) == 0, "a comment longer than 4 KiB is skipped whole: %s", err);
    is_int(cfg.port, 4321, "... and the next line still applies");
    n = (size_t)sprintf(big, "requirepass ");
    memset(big + n, 'y', 9000);
    n += 9000;
    strcpy(big + n, "\n");
    ok(load(big) == -1 && strstr(err, "at line 1\n"), "an overlong directive is an error on line 1: %s",
       err);
    free(big);
}

/* path's content after CONFIG REWRITE of text (the settings loaded from it, then changed by
 * the caller through set1 in between: pass them as pairs). */
static char *rewrite_of(const char *text, const char *const *sets)
{
    static char out[16384];
    char path[] = "/tmp/tc_test_rewrite_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    size_t n;

    fputs(text, f);
    fclose(f);
    config_defaults();
    err[0] = '\0';
    if (config_load_file(path, err, sizeof(err)))
        return NULL;
    for (int i = 0; sets && sets[i]; i += 2)
        set1(sets[i], sets[i + 1], 0);
    if (config_rewrite(path, 0, err, sizeof(err)))
        return NULL;
    f = fopen(path, "r");
    n = fread(out, 1, sizeof(out) - 1, f);
    out[n] = '\0';
    fclose(f);
    unlink(path);
    return out;
}

static void test_rewrite(void)
{
    char *dir = getcwd(NULL, 0), want[4096];
    const char *sets[] = {"maxmemory", "2gb", "save", "60 5", "hash-max-listpack-value", "1kb",
                          "notify-keyspace-events", "Ex", "bind", "* -::*", NULL};
    char *out = rewrite_of("# head\n  maxmemory 1mb  \n\n\n\nsave 900 1\nsave 300 10\n"
                           "hash-max-ziplist-value 64\nbind 127.0.0.1\n"
                           "rename-command KEYS \"\"\ninclude /dev/null\n"
                           "list-max-ziplist-entries 5\ntimeout 0\n", sets);
    /* Redis's rules: lines in place (an alias's too, under the setting's name), the
     * setting's other lines blanked, runs of blank lines made one, bind at its default
     * gone, rename-command and include kept, an unknown line commented, a default kept in
     * place; then the always-written settings after the signature */
    snprintf(want, sizeof(want),
             "# head\nmaxmemory 2gb\n\nsave 60 5\n\nhash-max-listpack-value 1kb\n\n"
             "rename-command KEYS \"\"\ninclude /dev/null\n# ??? list-max-ziplist-entries 5\n"
             "timeout 0\n\n# Generated by CONFIG REWRITE\ndir \"%s\"\n"
             "latency-tracking-info-percentiles 50 99 99.9\nnotify-keyspace-events \"xE\"\n",
             dir);
    ok(out && !strcmp(out, want), "rewrite as Redis: %s", out ? out : err);
    /* the signature already there: new lines go at the end, no second signature */
    out = rewrite_of("port 7000\n# Generated by CONFIG REWRITE\ndir /tmp\n", NULL);
    snprintf(want, sizeof(want), "port 7000\n# Generated by CONFIG REWRITE\ndir \"/tmp\"\n\n"
             "save 3600 1\nsave 300 100\nsave 60 10000\n"
             "latency-tracking-info-percentiles 50 99 99.9\n");
    ok(out && !strcmp(out, want), "signature kept, lines appended: %s", out ? out : err);
    out = rewrite_of("save \"\"\nrequirepass \"a b\\x01\"\npidfile \"\"\n", NULL);
    ok(out && strstr(out, "save \"\"\nrequirepass \"a b\\x01\"\n\n"),
       "save \"\" kept, strings quoted and escaped, an empty pidfile's line gone: %s",
       out ? out : err);
    if (chdir(dir) != 0)
        ok(0, "back to %s", dir);
    free(dir);
}

int main(void)
{
    test_defaults();
    test_set();
    test_get();
    test_file();
    test_rewrite();
    return tap_done();
}
