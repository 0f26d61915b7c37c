/* The facts of a command's table entry: flag and ACL category words, Redis 7 key specs, the
 * legacy key range derived from them, and the one key-spec walker every user of key
 * positions goes through (stripe locking, WATCH, blocking, the AOF, COMMAND GETKEYS). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/log.h"
#include "core/util.h"

static const struct {
    const char *name;
    uint64_t bit;
} flag_words[] = {
    {"write", CMD_WRITE},
    {"readonly", CMD_READONLY},
    {"denyoom", CMD_DENYOOM},
    {"module", CMD_MODULE},
    {"admin", CMD_ADMIN},
    {"pubsub", CMD_PUBSUB},
    {"noscript", CMD_NOSCRIPT},
    {"blocking", CMD_BLOCKING},
    {"loading", CMD_LOADING},
    {"stale", CMD_STALE},
    {"skip_monitor", CMD_SKIP_MONITOR},
    {"skip_slowlog", CMD_SKIP_SLOWLOG},
    {"asking", CMD_ASKING},
    {"fast", CMD_FAST},
    {"no_auth", CMD_NOAUTH},
    {"may_replicate", CMD_MAY_REPLICATE},
    {"no_mandatory_keys", CMD_NO_MANDATORY_KEYS},
    {"no_async_loading", CMD_NO_ASYNC_LOADING},
    {"no_multi", CMD_NO_MULTI},
    {"movablekeys", CMD_MOVABLE},
    {"allow_busy", CMD_ALLOW_BUSY},
    {"tc:txcontrol", CMD_TX_CONTROL},
    {"tc:subscribed", CMD_SUBSCRIBED},
    {"tc:signals", CMD_SIGNALS},
    {"tc:keep-watch", CMD_KEEP_WATCH},
    {"tc:prop-explicit", CMD_PROP_EXPLICIT},
    {"tc:prop-state", CMD_PROP_STATE},
    {"tc:prop-expire", CMD_PROP_EXPIRE},
    {"tc:prop-argv3", CMD_PROP_ARGV3},
    {"tc:allstripes", CMD_ALL_STRIPES},
    {"tc:internal", CMD_INTERNAL},
};

static const char *const acl_names[] = {
    "keyspace", "read", "write", "set", "sortedset", "list", "hash",
    "string", "bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin",
    "fast", "slow", "blocking", "dangerous", "connection", "transaction", "scripting",
};
enum { ACL_N = sizeof(acl_names) / sizeof(acl_names[0]) };

static const struct {
    const char *name;
    uint16_t bit;
} ks_words[] = {
    {"RO", KS_RO},
    {"RW", KS_RW},
    {"OW", KS_OW},
    {"RM", KS_RM},
    {"access", KS_ACCESS},
    {"update", KS_UPDATE},
    {"insert", KS_INSERT},
    {"delete", KS_DELETE},
    {"not_key", KS_NOT_KEY},
    {"incomplete", KS_INCOMPLETE},
    {"variable_flags", KS_VARIABLE_FLAGS},
};

int acl_category_count(void)
{
    return ACL_N;
}

const char *acl_category_name(int i)
{
    return acl_names[i];
}

int cmd_flag_count(void)
{
    return (int)(sizeof(flag_words) / sizeof(flag_words[0]));
}

const char *cmd_flag_name(int i, uint64_t *bit)
{
    *bit = flag_words[i].bit;
    return flag_words[i].name;
}

int keyspec_flag_count(void)
{
    return (int)(sizeof(ks_words) / sizeof(ks_words[0]));
}

const char *keyspec_flag_name(int i, unsigned *bit)
{
    *bit = ks_words[i].bit;
    return ks_words[i].name;
}

/* A table entry that does not parse is a programming error: stop at start-up. */
static void bad_entry(const struct cmd *c, const char *what, const char *word, size_t n)
{
    log_warn("command table: %s: bad %s '%.*s'", c->name, what, (int)n, word);
    abort();
}

/* The next space-separated word of *p, or NULL. */
static const char *next_word(const char **p, size_t *n)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s)
        return NULL;
    *n = strcspn(s, " ");
    *p = s + *n;
    return s;
}

static uint64_t parse_flags(const struct cmd *c)
{
    const char *p = c->flagstr ? c->flagstr : "", *w;
    uint64_t f = 0;
    size_t n;

    while ((w = next_word(&p, &n))) {
        size_t i;
        for (i = 0; i < sizeof(flag_words) / sizeof(flag_words[0]); i++)
            if (strlen(flag_words[i].name) == n && !memcmp(flag_words[i].name, w, n))
                break;
        if (i == sizeof(flag_words) / sizeof(flag_words[0]) || flag_words[i].bit == CMD_MOVABLE)
            bad_entry(c, "flag", w, n);
        f |= flag_words[i].bit;
    }
    return f;
}

static int acl_bit(const char *w, size_t n)
{
    for (int i = 0; i < ACL_N; i++)
        if (strlen(acl_names[i]) == n && !memcmp(acl_names[i], w, n))
            return i;
    return -1;
}

/* The categories written in the entry plus those its flags imply, as Redis 7.0 sets them. */
static uint32_t parse_acl(const struct cmd *c)
{
    const char *p = c->aclstr ? c->aclstr : "", *w;
    uint32_t a = 0;
    size_t n;

    while ((w = next_word(&p, &n))) {
        int b = w[0] == '@' ? acl_bit(w + 1, n - 1) : -1;
        if (b < 0)
            bad_entry(c, "ACL category", w, n);
        a |= 1u << b;
    }
#define CAT(name) (1u << acl_bit(name, strlen(name)))
    if (c->flags & CMD_WRITE)
        a |= CAT("write");
    if ((c->flags & CMD_READONLY) && !(a & CAT("scripting")))
        a |= CAT("read");
    if (c->flags & CMD_ADMIN)
        a |= CAT("admin") | CAT("dangerous");
    if (c->flags & CMD_PUBSUB)
        a |= CAT("pubsub");
    if (c->flags & CMD_FAST)
        a |= CAT("fast");
    if (c->flags & CMD_BLOCKING)
        a |= CAT("blocking");
    if (!(c->flags & CMD_FAST))
        a |= CAT("slow");
#undef CAT
    return a;
}

/* "a,b,c" integers into v[0..2]. */
static int three_ints(const char *s, size_t n, int v[3])
{
    char tmp[48];
    if (n >= sizeof(tmp))
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    return sscanf(tmp, "%d,%d,%d", &v[0], &v[1], &v[2]) == 3 ? 0 : -1;
}

/* One spec: "FLAG,FLAG begin find" with begin index:N | keyword:WORD:N | unknown and find
 * range:lastkey,step,limit | keynum:idx,first,step | unknown. */
static void parse_spec(struct cmd *c, struct keyspec *ks, const char *s, size_t len)
{
    const char *end = s + len, *p = s;
    size_t n;
    int v[3];

    memset(ks, 0, sizeof(*ks));
    /* flags */
    n = strcspn(p, " ");
    for (const char *f = p; f < p + n;) {
        size_t fl = strcspn(f, ", ");
        size_t i;
        for (i = 0; i < sizeof(ks_words) / sizeof(ks_words[0]); i++)
            if (strlen(ks_words[i].name) == fl && !memcmp(ks_words[i].name, f, fl))
                break;
        if (i == sizeof(ks_words) / sizeof(ks_words[0]))
            bad_entry(c, "key spec flag", f, fl);
        ks->flags |= ks_words[i].bit;
        f += fl + (f[fl] == ',');
    }
    p += n + 1;
    if (p >= end)
        bad_entry(c, "key spec", s, len);
    /* begin search */
    n = strcspn(p, " ");
    if (!strncmp(p, "index:", 6)) {
        ks->bs = KS_BS_INDEX;
        ks->pos = atoi(p + 6);
    } else if (!strncmp(p, "keyword:", 8)) {
        const char *colon = memchr(p + 8, ':', n - 8);
        if (!colon || (size_t)(colon - (p + 8)) >= sizeof(ks->kw))
            bad_entry(c, "key spec keyword", p, n);
        ks->bs = KS_BS_KEYWORD;
        memcpy(ks->kw, p + 8, (size_t)(colon - (p + 8)));
        for (size_t i = 0; ks->kw[i]; i++)
            ks->kwl[i] = (char)tolower((unsigned char)ks->kw[i]);
        ks->pos = atoi(colon + 1);
    } else if (n == 7 && !strncmp(p, "unknown", 7)) {
        ks->bs = KS_BS_UNKNOWN;
    } else {
        bad_entry(c, "key spec begin", p, n);
    }
    p += n + 1;
    if (p >= end)
        bad_entry(c, "key spec", s, len);
    n = (size_t)(end - p);
    if (!strncmp(p, "range:", 6) && !three_ints(p + 6, n - 6, v)) {
        ks->fk = KS_FK_RANGE;
    } else if (!strncmp(p, "keynum:", 7) && !three_ints(p + 7, n - 7, v)) {
        ks->fk = KS_FK_KEYNUM;
    } else if (n == 7 && !strncmp(p, "unknown", 7)) {
        ks->fk = KS_FK_UNKNOWN;
        v[0] = v[1] = v[2] = 0;
    } else {
        bad_entry(c, "key spec find", p, n);
    }
    ks->a = v[0];
    ks->b = v[1];
    ks->l = v[2];
}

static void parse_specs(struct cmd *c)
{
    const char *p = c->keystr;

    c->nks = 0;
    while (p && *p) {
        size_t n = strcspn(p, ";");
        if (c->nks == CMD_MAX_KEYSPECS)
            bad_entry(c, "key spec count", p, n);
        parse_spec(c, &c->ks[c->nks++], p, n);
        p += n;
        while (*p == ';' || *p == ' ')
            p++;
    }
}

/* The legacy (first, last, step) range and the movablekeys flag, derived from the specs the
 * way Redis 7.0 derives them, so COMMAND INFO's old fields agree with its key specs. */
static void derive_range(struct cmd *c)
{
    int first = 0, last = 0, prev = 0, have = 0;

    c->first = c->last = c->step = 0;
    if (c->nks == 0)
        return;
    for (int i = 0; i < c->nks; i++) {
        const struct keyspec *ks = &c->ks[i];
        if (ks->bs != KS_BS_INDEX || ks->fk != KS_FK_RANGE) {
            c->flags |= CMD_MOVABLE;
            continue;
        }
        if (c->nks == 1) {
            c->first = ks->pos;
            c->last = ks->a >= 0 ? ks->pos + ks->a : ks->a;
            c->step = ks->b;
            if (ks->flags & KS_INCOMPLETE)
                c->flags |= CMD_MOVABLE;
            return;
        }
        if (ks->b != 1 || (prev && prev != ks->pos - 1)) {
            c->flags |= CMD_MOVABLE;
            continue;
        }
        if (ks->flags & KS_INCOMPLETE)
            c->flags |= CMD_MOVABLE;
        if (!have || ks->pos < first)
            first = ks->pos;
        have = 1;
        int abs_last = ks->a >= 0 ? ks->a + ks->pos : ks->a;
        /* unsigned: a negative (relative to the end) last key is larger than any index */
        if ((unsigned)abs_last > (unsigned)last)
            last = abs_last;
        prev = last;
    }
    if (!have) {
        c->flags |= CMD_MOVABLE;
        return;
    }
    c->first = first;
    c->last = last;
    c->step = 1;
}

void cmd_entry_setup(struct cmd *c, const struct cmd *parent)
{
    c->flags = parse_flags(c);
    c->acl = parse_acl(c);
    parse_specs(c);
    derive_range(c);
    if (c->nks == 1 && !(c->flags & CMD_MOVABLE) && !c->getkeys && c->first >= 1 &&
        c->last == c->first && !(c->ks[0].flags & KS_NOT_KEY))
        c->flags |= CMD_ONE_KEY;
    c->parent = parent;
    c->nsubs = 0;
    if (c->subs)
        while (c->subs[c->nsubs].name)
            c->nsubs++;
}

int cmd_has_keys(const struct cmd *cmd)
{
    if (cmd->getkeys)
        return 1;
    for (int i = 0; i < cmd->nks; i++)
        if (!(cmd->ks[i].flags & KS_NOT_KEY))
            return 1;
    return 0;
}

/* The keys one spec finds in argv: calls fn, returns their count, -1 when the arguments do
 * not fit it, -2 when fn stopped the walk. */
static int spec_keys(const struct cmd *cmd, const struct keyspec *ks, int argc,
                     const struct slice *argv, cmd_key_fn *fn, void *arg)
{
    int first = 0, last, step, n = 0;

    if (ks->bs == KS_BS_INDEX) {
        first = ks->pos;
    } else if (ks->bs == KS_BS_KEYWORD) {
        int start = ks->pos > 0 ? ks->pos : argc + ks->pos;
        int end = ks->pos > 0 ? argc - 1 : 1;
        for (int i = start; i != end; i = start <= end ? i + 1 : i - 1) {
            if (i >= argc || i < 1)
                break;
            if (util_eq_nocase(argv[i].p, argv[i].n, ks->kwl)) {
                first = i + 1;
                break;
            }
        }
        if (!first)
            return 0; /* the keyword is optional: no keys from this spec */
    } else {
        return -1;
    }
    if (ks->fk == KS_FK_RANGE) {
        step = ks->b;
        if (ks->a >= 0)
            last = first + ks->a;
        else if (!ks->l)
            last = argc + ks->a;
        else
            last = first + ((argc - first) / ks->l + ks->a);
    } else if (ks->fk == KS_FK_KEYNUM) {
        long long numkeys;
        int at = first + ks->a;
        step = ks->l;
        if (at >= argc || !util_str2ll(argv[at].p, argv[at].n, &numkeys) || numkeys < 0 ||
            numkeys > argc)
            return -1;
        first += ks->b;
        last = first + (int)numkeys - 1;
    } else {
        return -1;
    }
    if (last >= argc || last < first || first >= argc)
        return -1;
    for (int i = first; i <= last; i += step) {
        if (i >= argc || i < first) {
            if (cmd->arity < 0)
                continue; /* the command reports its own syntax error */
            return -1;
        }
        n++;
        if (fn && fn(arg, i, ks->flags))
            return -2;
    }
    return n;
}

int cmd_keys(const struct cmd *cmd, int argc, const struct slice *argv, cmd_key_fn *fn,
             void *arg)
{
    int total = 0, reliable = 1;

    for (int i = 0; i < cmd->nks; i++)
        if (cmd->ks[i].flags & (KS_VARIABLE_FLAGS | KS_INCOMPLETE) ||
            cmd->ks[i].bs == KS_BS_UNKNOWN || cmd->ks[i].fk == KS_FK_UNKNOWN)
            reliable = 0;
    if (!reliable && cmd->getkeys)
        return cmd->getkeys(cmd, argc, argv, fn, arg);
    for (int i = 0; i < cmd->nks; i++) {
        int n;
        if (cmd->ks[i].flags & KS_NOT_KEY)
            continue;
        n = spec_keys(cmd, &cmd->ks[i], argc, argv, fn, arg);
        if (n == -2)
            return total;
        if (n < 0)
            return cmd->getkeys ? cmd->getkeys(cmd, argc, argv, fn, arg) : -1;
        total += n;
    }
    return total;
}

/* ---- getkeys functions of the commands whose specs are not enough ---- */

static int arg_eq(const struct slice *a, const char *lower)
{
    return util_eq_nocase(a->p, a->n, lower);
}

/* SET: the key is read too when GET is among the options. */
int cmd_getkeys_set(const struct cmd *cmd, int argc, const struct slice *argv, cmd_key_fn *fn,
                    void *arg)
{
    unsigned fl = KS_OW | KS_UPDATE;

    (void)cmd;
    for (int i = 3; i < argc; i++)
        if (arg_eq(&argv[i], "get")) {
            fl = KS_RW | KS_ACCESS | KS_UPDATE;
            break;
        }
    if (argc > 1 && fn)
        fn(arg, 1, fl);
    return argc > 1;
}

/* BITFIELD: read-only when every operation is a GET (OVERFLOW aside). */
int cmd_getkeys_bitfield(const struct cmd *cmd, int argc, const struct slice *argv,
                         cmd_key_fn *fn, void *arg)
{
    int ro = 1;

    (void)cmd;
    for (int i = 2; i < argc; i++) {
        int rem = argc - i - 1;
        if (arg_eq(&argv[i], "get") && rem >= 2) {
            i += 2;
        } else if ((arg_eq(&argv[i], "set") || arg_eq(&argv[i], "incrby")) && rem >= 3) {
            ro = 0;
            break;
        } else if (arg_eq(&argv[i], "overflow") && rem >= 1) {
            i += 1;
        } else {
            ro = 0; /* a syntax error: assume a write */
            break;
        }
    }
    if (argc > 1 && fn)
        fn(arg, 1, ro ? KS_RO | KS_ACCESS : KS_RW | KS_ACCESS | KS_UPDATE);
    return argc > 1;
}

/* SORT: the sorted key, and the last STORE destination (BY and GET name patterns, not keys). */
int cmd_getkeys_sort(const struct cmd *cmd, int argc, const struct slice *argv, cmd_key_fn *fn,
                     void *arg)
{
    int store = 0;

    (void)cmd;
    if (argc < 2)
        return 0;
    for (int i = 2; i < argc; i++) {
        if (arg_eq(&argv[i], "limit"))
            i += 2;
        else if (arg_eq(&argv[i], "get") || arg_eq(&argv[i], "by"))
            i += 1;
        else if (arg_eq(&argv[i], "store") && i + 1 < argc)
            store = i + 1;
    }
    if (fn && fn(arg, 1, KS_RO | KS_ACCESS))
        return 1;
    if (store && fn)
        fn(arg, store, KS_OW | KS_UPDATE);
    return 1 + (store != 0);
}

/* SORT_RO: only the sorted key. */
int cmd_getkeys_sort_ro(const struct cmd *cmd, int argc, const struct slice *argv,
                        cmd_key_fn *fn, void *arg)
{
    (void)cmd;
    (void)argv;
    if (argc < 2)
        return 0;
    if (fn)
        fn(arg, 1, KS_RO | KS_ACCESS);
    return 1;
}
