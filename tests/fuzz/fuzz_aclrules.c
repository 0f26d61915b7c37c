/* Fuzz target: ACL SETUSER rule parsing (src/cmd/acl_rules.c) on hostile rule lists: any
 * bytes, selectors in parentheses, patterns built to backtrack, first-args, huge lists.
 * Properties: no crash or leak (ASan); the description of the command rules, applied to a
 * fresh user, gives the same permission bitmap (ACL LIST's rules load back as they were); a
 * copy describes as the original; the permission check on a command line from the input
 * answers one of the four results, and a denied key or channel is an argument index.
 * The command table is a small one shaped like the real one (categories, subcommands, key
 * specs). Input: [rules separated by 0 bytes] 0xff [a command line separated by 0 bytes]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/acl.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_aclrules: check failed: %s (line %d)\n", #c, __LINE__);        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static struct cmd config_subs[] = {
    {"config|get", NULL, -3, "admin noscript loading stale", "@slow @dangerous"},
    {"config|set", NULL, -4, "admin noscript loading stale", "@slow @dangerous"},
    {NULL},
};

static struct cmd table[] = {
    {"get", NULL, 2, "readonly fast", "@string", "RO,access index:1 range:0,1,0"},
    {"set", NULL, -3, "write denyoom", "@string", "RW,access,update,variable_flags index:1 range:0,1,0",
     NULL, NULL, NULL, cmd_getkeys_set},
    {"mset", NULL, -3, "write denyoom", "@string", "OW,update index:1 range:-1,2,0"},
    {"del", NULL, -2, "write", "@keyspace", "RM,delete index:1 range:-1,1,0"},
    {"lmove", NULL, 5, "write denyoom", "@list",
     "RW,access,delete index:1 range:0,1,0; RW,insert index:2 range:0,1,0"},
    {"zunionstore", NULL, -4, "write denyoom", "@sortedset",
     "OW,update index:1 range:0,1,0; RO,access index:2 keynum:0,1,1"},
    {"flushall", NULL, -1, "write", "@keyspace @dangerous"},
    {"select", NULL, 2, "loading stale fast", "@connection"},
    {"publish", NULL, 3, "pubsub loading stale fast", ""},
    {"subscribe", NULL, -2, "pubsub noscript loading stale", ""},
    {"psubscribe", NULL, -2, "pubsub noscript loading stale", ""},
    {"auth", NULL, -2, "noscript loading stale fast no_auth", "@connection"},
    {"config", NULL, -2, "", "", NULL, "server", NULL, config_subs},
};
enum { NT = sizeof(table) / sizeof(table[0]) };

int cmd_count(void)
{
    return NT;
}

const struct cmd *cmd_at(int i)
{
    return &table[i];
}

const struct cmd *cmd_lookup_full(const char *name, size_t len)
{
    for (int i = 0; i < NT; i++) {
        if (util_eq_nocase(name, len, table[i].name))
            return &table[i];
        for (int j = 0; j < table[i].nsubs; j++)
            if (util_eq_nocase(name, len, table[i].subs[j].name))
                return &table[i].subs[j];
    }
    return NULL;
}

static void setup(void)
{
    static int done;
    int id = 0;
    if (done)
        return;
    done = 1;
    for (int i = 0; i < NT; i++) {
        cmd_entry_setup(&table[i], NULL);
        table[i].id = id++;
        for (int j = 0; j < table[i].nsubs; j++) {
            cmd_entry_setup(&table[i].subs[j], &table[i]);
            table[i].subs[j].id = id++;
        }
    }
}

static void describe_all(const struct acl_body *b, struct buf *o)
{
    o->rpos = o->wpos = 0;
    acl_body_describe(b, o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct acl_body *b, *r, *cp;
    struct buf d1 = {0}, d2 = {0};
    size_t i = 0;

    setup();
    acl_pubsub_default_all = size && (data[0] & 1);
    if (!(b = acl_body_new()))
        return 0;
    /* rules until 0xff */
    while (i < size && data[i] != 0xff) {
        size_t j = i;
        while (j < size && data[j] != 0 && data[j] != 0xff)
            j++;
        acl_body_apply(b, (const char *)data + i, j - i);
        i = j < size && data[j] == 0 ? j + 1 : j;
    }
    /* the command rules describe back to the same bitmap (unless a first-arg holds a space:
     * Redis accepts those and describes them as they are, so they cannot load back) */
    int spaced = 0;
    for (int k = 0; k < b->sels[0].nfargs; k++)
        spaced |= acl_has_spaces(b->sels[0].fargs[k]->p, b->sels[0].fargs[k]->n);
    acl_sel_describe_commands(&b->sels[0], &d1);
    buf_append(&d1, "", 1);
    CHECK((r = acl_body_new()) != NULL);
    for (char *p = d1.data + d1.rpos; *p && !spaced;) {
        char *sp = strchr(p, ' ');
        size_t n = sp ? (size_t)(sp - p) : strlen(p);
        CHECK(acl_body_apply(r, p, n) == NULL);
        p += n + (sp != NULL);
    }
    CHECK(spaced || !memcmp(r->sels[0].bits, b->sels[0].bits, sizeof(r->sels[0].bits)));
    acl_body_free(r);
    /* a copy describes as the original */
    if ((cp = acl_body_copy(b)) != NULL) {
        describe_all(b, &d1);
        describe_all(cp, &d2);
        CHECK(buf_len(&d1) == buf_len(&d2) && !memcmp(d1.data + d1.rpos, d2.data + d2.rpos, buf_len(&d1)));
        acl_body_free(cp);
    }
    /* the check on a command line */
    if (i < size && data[i] == 0xff) {
        struct slice argv[32];
        int argc = 0;
        i++;
        while (i <= size && argc < 32) {
            size_t j = i;
            while (j < size && data[j] != 0)
                j++;
            argv[argc].p = (const char *)data + i;
            argv[argc].n = j - i;
            argc++;
            i = j + 1;
        }
        if (argc) {
            const struct cmd *cmd = cmd_lookup_full(argv[0].p, argv[0].n);
            if (cmd && cmd->nsubs && argc > 1) {
                char full[96];
                int n = snprintf(full, sizeof(full), "%s|%.*s", cmd->name,
                                 (int)(argv[1].n > 64 ? 64 : argv[1].n), argv[1].p);
                cmd = cmd_lookup_full(full, (size_t)n);
            }
            if (cmd && !cmd->nsubs) {
                int pos = -1, res = acl_body_check(b, cmd, argc, argv, &pos);
                CHECK(res == ACL_OK || res == ACL_DENIED_CMD || res == ACL_DENIED_KEY ||
                      res == ACL_DENIED_CHANNEL);
                if (res == ACL_DENIED_KEY || res == ACL_DENIED_CHANNEL)
                    CHECK(pos >= 1 && pos < argc);
                (void)acl_body_full_key_access(b, cmd, argc, argv);
            }
        }
    }
    acl_body_check_pass(b, (const char *)data, size < 64 ? size : 64);
    buf_deinit(&d1);
    buf_deinit(&d2);
    acl_body_free(b);
    return 0;
}
