/* ACL rules (issue 21): Redis 7.0's user model without the users table. A body is a user's
 * flags, password hashes and selectors; acl_body_apply takes one ACL SETUSER rule with Redis's
 * semantics and error texts; acl_body_describe writes what ACL LIST prints, found as Redis
 * does (+@all or -@all, then the categories that fit best, then the single commands that
 * differ); acl_body_check is the permission test. Needs only the command table (cmd_count,
 * cmd_at, cmd_lookup_full, the categories), so the fuzz target links it alone. */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/acl.h"

int acl_pubsub_default_all;

int acl_has_spaces(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == 0)
            return 1;
    return 0;
}

/* ---- Redis's error texts (ACLSetUserStringError) ---- */
#define E_SYNTAX "Syntax error"
#define E_NOENT "Unknown command or category name in ACL"
#define E_ALLKEYS                                                                                  \
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have " \
    "any effect. Try 'resetkeys' to start with an empty list of patterns"
#define E_ALLCHANNELS                                                                              \
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "  \
    "have any effect. Try 'resetchannels' to start with an empty list of channels"
#define E_NOPASS "The password you are trying to remove from the user does not exist"
#define E_BADHASH                                                                                  \
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "     \
    "characters"
#define E_FIRSTARG "Allowing first-arg of a subcommand is not supported"
#define E_LIMIT "Too many patterns, passwords or selectors"
#define E_OOM "Out of memory"

/* ---- selectors ---- */
static void pats_free(struct acl_pat **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void fargs_clear(struct acl_sel *s)
{
    for (int i = 0; i < s->nfargs; i++)
        free(s->fargs[i]);
    free(s->fargs);
    s->fargs = NULL;
    s->nfargs = 0;
}

/* Rebuild s->kidx / kstart from s->keys (after any change of the key patterns). */
static const char *sel_index(struct acl_sel *s)
{
    struct acl_pat **v = NULL;
    int at = 0;

    free(s->kidx);
    s->kidx = NULL;
    memset(s->kstart, 0, sizeof(s->kstart));
    if (!s->nkeys)
        return NULL;
    if (!(v = malloc(sizeof(*v) * (size_t)s->nkeys))) {
        pats_free(s->keys, s->nkeys); /* fail closed: no key allowed */
        s->keys = NULL;
        s->nkeys = 0;
        return E_OOM;
    }
    /* a counting sort: O(patterns), as a huge SETUSER adds them one by one */
    uint16_t fill[257];
    for (int i = 0; i < s->nkeys; i++) {
        const struct acl_pat *p = s->keys[i];
        s->kstart[(p->lit ? (unsigned char)p->p[0] : 256) + 1]++;
    }
    for (int b = 0; b < 257; b++) {
        at += s->kstart[b + 1];
        s->kstart[b + 1] = (uint16_t)at;
        fill[b] = s->kstart[b];
    }
    for (int i = 0; i < s->nkeys; i++) {
        const struct acl_pat *p = s->keys[i];
        v[fill[p->lit ? (unsigned char)p->p[0] : 256]++] = s->keys[i];
    }
    s->kidx = v;
    return NULL;
}

static void sel_deinit(struct acl_sel *s)
{
    pats_free(s->keys, s->nkeys);
    pats_free(s->chans, s->nchans);
    free(s->kidx);
    fargs_clear(s);
    memset(s, 0, sizeof(*s));
}

static void sel_init(struct acl_sel *s)
{
    memset(s, 0, sizeof(*s));
    if (acl_pubsub_default_all)
        s->flags |= SEL_ALLCHANNELS;
}

static struct acl_pat **pats_dup(struct acl_pat *const *v, int n, int *ok)
{
    struct acl_pat **r;

    if (!n)
        return NULL;
    if (!(r = calloc((size_t)n, sizeof(*r)))) {
        *ok = 0;
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        size_t sz = sizeof(struct acl_pat) + v[i]->n + 1;
        if (!(r[i] = malloc(sz)))
            *ok = 0;
        else
            memcpy(r[i], v[i], sz);
    }
    return r;
}

static int sel_copy(struct acl_sel *d, const struct acl_sel *s)
{
    int ok = 1;

    *d = *s;
    d->kidx = NULL;
    d->keys = pats_dup(s->keys, s->nkeys, &ok);
    d->chans = pats_dup(s->chans, s->nchans, &ok);
    d->fargs = NULL;
    if (s->nfargs) {
        if (!(d->fargs = calloc((size_t)s->nfargs, sizeof(*d->fargs)))) {
            ok = 0;
        } else {
            for (int i = 0; i < s->nfargs; i++) {
                size_t sz = sizeof(struct acl_farg) + s->fargs[i]->n + 1;
                if (!(d->fargs[i] = malloc(sz)))
                    ok = 0;
                else
                    memcpy(d->fargs[i], s->fargs[i], sz);
            }
        }
    }
    if (!d->keys)
        d->nkeys = 0;
    if (!d->chans)
        d->nchans = 0;
    if (!d->fargs)
        d->nfargs = 0;
    if (sel_index(d))
        ok = 0;
    return ok;
}

static void bit_set(uint64_t *bits, int id, int v)
{
    if (id < 0 || id >= CMDSTATS_MAX_IDS)
        return;
    if (v)
        bits[id / 64] |= 1ULL << (id % 64);
    else
        bits[id / 64] &= ~(1ULL << (id % 64));
}

static int bit_get(const uint64_t *bits, int id)
{
    return id >= 0 && id < CMDSTATS_MAX_IDS && ((bits[id / 64] >> (id % 64)) & 1);
}

static void sel_bit(struct acl_sel *s, int id, int v)
{
    bit_set(s->bits, id, v);
    if (!v)
        s->flags &= ~SEL_ALLCOMMANDS;
}

static void fargs_reset_cmd(struct acl_sel *s, int id)
{
    int j = 0;

    for (int i = 0; i < s->nfargs; i++) {
        if (s->fargs[i]->id == id)
            free(s->fargs[i]);
        else
            s->fargs[j++] = s->fargs[i];
    }
    s->nfargs = j;
}

/* ACLChangeSelectorPerm: the command, its first-args gone, and all its subcommands */
static void sel_change(struct acl_sel *s, const struct cmd *cmd, int allow)
{
    sel_bit(s, cmd->id, allow);
    if (s->nfargs)
        fargs_reset_cmd(s, cmd->id);
    for (int j = 0; j < cmd->nsubs; j++)
        sel_bit(s, cmd->subs[j].id, allow);
}

static void bits_change(uint64_t *bits, const struct cmd *cmd, int allow)
{
    bit_set(bits, cmd->id, allow);
    for (int j = 0; j < cmd->nsubs; j++)
        bit_set(bits, cmd->subs[j].id, allow);
}

static int category_find(const char *p, size_t n)
{
    for (int i = 0; i < acl_category_count(); i++)
        if (util_eq_nocase(p, n, acl_category_name(i)))
            return i;
    return -1;
}

static void sel_category(struct acl_sel *s, int cat, int allow)
{
    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *cmd = cmd_at(i);
        if ((cmd->acl >> cat) & 1)
            sel_change(s, cmd, allow);
        for (int j = 0; j < cmd->nsubs; j++)
            if ((cmd->subs[j].acl >> cat) & 1)
                sel_change(s, &cmd->subs[j], allow);
    }
}

static const struct cmd *lookup(const char *p, size_t n)
{
    const struct cmd *cmd = cmd_lookup_full(p, n);
    return cmd && !(cmd->flags & CMD_INTERNAL) ? cmd : NULL;
}

static struct acl_pat *pat_new(const char *p, size_t n, int flags)
{
    struct acl_pat *x = malloc(sizeof(*x) + n + 1);
    if (!x)
        return NULL;
    x->n = (uint32_t)n;
    x->flags = (uint8_t)flags;
    memcpy(x->p, p, n);
    x->p[n] = 0;
    x->lit = 0;
    while (x->lit < n && !strchr("*?[\\", p[x->lit]))
        x->lit++;
    x->kind = x->lit == n ? PAT_EXACT : x->lit == n - 1 && p[n - 1] == '*' ? PAT_PREFIX : PAT_GLOB;
    x->w0 = x->w1 = 0;
    if (x->lit >= 4) {
        memcpy(&x->w0, x->p, 4);
        memcpy(&x->w1, x->p + x->lit - 4, 4);
    }
    return x;
}

static const char *pats_add(struct acl_pat ***v, int *nv, const char *p, size_t n, int flags)
{
    for (int i = 0; i < *nv; i++)
        if ((*v)[i]->n == n && !memcmp((*v)[i]->p, p, n)) {
            (*v)[i]->flags |= (uint8_t)flags;
            return NULL;
        }
    if (*nv >= ACL_MAX_PATS)
        return E_LIMIT;
    struct acl_pat **nvv = realloc(*v, (size_t)(*nv + 1) * sizeof(**v));
    if (!nvv)
        return E_OOM;
    *v = nvv;
    if (!(nvv[*nv] = pat_new(p, n, flags)))
        return E_OOM;
    (*nv)++;
    return NULL;
}

static const char *sel_apply(struct acl_sel *s, const char *op, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && !strncasecmp(op, lit, n))
    if (IS("allkeys") || (n == 2 && !memcmp(op, "~*", 2))) {
        s->flags |= SEL_ALLKEYS;
        pats_free(s->keys, s->nkeys);
        s->keys = NULL;
        s->nkeys = 0;
        sel_index(s);
    } else if (IS("resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        pats_free(s->keys, s->nkeys);
        s->keys = NULL;
        s->nkeys = 0;
        sel_index(s);
    } else if (IS("allchannels") || (n == 2 && !memcmp(op, "&*", 2))) {
        s->flags |= SEL_ALLCHANNELS;
        pats_free(s->chans, s->nchans);
        s->chans = NULL;
        s->nchans = 0;
    } else if (IS("resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        pats_free(s->chans, s->nchans);
        s->chans = NULL;
        s->nchans = 0;
    } else if (IS("allcommands") || IS("+@all")) {
        memset(s->bits, 0xff, sizeof(s->bits));
        s->flags |= SEL_ALLCOMMANDS | SEL_FUTURE;
        fargs_clear(s);
    } else if (IS("nocommands") || IS("-@all")) {
        memset(s->bits, 0, sizeof(s->bits));
        s->flags &= ~(SEL_ALLCOMMANDS | SEL_FUTURE);
        fargs_clear(s);
    } else if (n && (op[0] == '~' || op[0] == '%')) {
        int flags = 0;
        size_t off = 1;
        if (s->flags & SEL_ALLKEYS)
            return E_ALLKEYS;
        if (op[0] == '%') {
            for (; off < n; off++) {
                int ch = toupper((unsigned char)op[off]);
                if (ch == 'R' && !(flags & ACL_KEY_R)) {
                    flags |= ACL_KEY_R;
                } else if (ch == 'W' && !(flags & ACL_KEY_W)) {
                    flags |= ACL_KEY_W;
                } else if (op[off] == '~') {
                    off++;
                    break;
                } else {
                    return E_SYNTAX;
                }
            }
            if (!flags)
                return E_SYNTAX;
        } else {
            flags = ACL_KEY_RW;
        }
        if (acl_has_spaces(op + off, n - off))
            return E_SYNTAX;
        const char *e = pats_add(&s->keys, &s->nkeys, op + off, n - off, flags);
        const char *e2 = sel_index(s);
        s->flags &= ~SEL_ALLKEYS;
        return e ? e : e2;
    } else if (n && op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS)
            return E_ALLCHANNELS;
        if (acl_has_spaces(op + 1, n - 1))
            return E_SYNTAX;
        return pats_add(&s->chans, &s->nchans, op + 1, n - 1, 0);
    } else if (n >= 2 && (op[0] == '+' || op[0] == '-') && op[1] == '@') {
        int cat = category_find(op + 2, n - 2);
        if (cat < 0)
            return E_NOENT;
        sel_category(s, cat, op[0] == '+');
    } else if (n && op[0] == '+') {
        const char *bar = NULL;
        for (size_t k = n; k > 1 && !bar; k--)
            if (op[k - 1] == '|')
                bar = op + k - 1;
        if (!bar) {
            const struct cmd *cmd = lookup(op + 1, n - 1);
            if (!cmd)
                return E_NOENT;
            sel_change(s, cmd, 1);
        } else {
            const struct cmd *cmd = lookup(op + 1, (size_t)(bar - op - 1));
            size_t sublen = n - (size_t)(bar - op) - 1;
            if (!cmd)
                return E_NOENT;
            if (cmd->parent)
                return E_FIRSTARG;
            if (!sublen)
                return E_SYNTAX;
            if (cmd->nsubs) {
                const struct cmd *sub = lookup(op + 1, n - 1);
                if (!sub)
                    return E_NOENT;
                sel_change(s, sub, 1);
            } else {
                for (int i = 0; i < s->nfargs; i++)
                    if (s->fargs[i]->id == cmd->id && s->fargs[i]->n == sublen &&
                        !strncasecmp(s->fargs[i]->p, bar + 1, sublen))
                        return NULL;
                if (s->nfargs >= ACL_MAX_FARGS)
                    return E_LIMIT;
                struct acl_farg **nf = realloc(s->fargs, (size_t)(s->nfargs + 1) * sizeof(*nf));
                if (!nf)
                    return E_OOM;
                s->fargs = nf;
                struct acl_farg *f = malloc(sizeof(*f) + sublen + 1);
                if (!f)
                    return E_OOM;
                f->id = cmd->id;
                f->n = (uint32_t)sublen;
                memcpy(f->p, bar + 1, sublen);
                f->p[sublen] = 0;
                for (size_t k = 0; k < sublen; k++)
                    f->p[k] = (char)tolower((unsigned char)f->p[k]);
                nf[s->nfargs++] = f;
            }
        }
    } else if (n && op[0] == '-') {
        const struct cmd *cmd = lookup(op + 1, n - 1);
        if (!cmd)
            return E_NOENT;
        sel_change(s, cmd, 0);
    } else {
        return E_SYNTAX;
    }
    return NULL;
#undef IS
}

/* ---- bodies ---- */
static _Atomic uint64_t body_ids; /* acl_body ids given */

struct acl_body *acl_body_new(void)
{
    struct acl_body *b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    if (!(b->sels = calloc(1, sizeof(*b->sels)))) {
        free(b);
        return NULL;
    }
    b->nsels = 1;
    b->flags = USER_OFF;
    b->id = atomic_fetch_add(&body_ids, 1) + 1;
    sel_init(&b->sels[0]);
    return b;
}

void acl_body_free(struct acl_body *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->nsels; i++)
        sel_deinit(&b->sels[i]);
    free(b->sels);
    free(b->pass);
    free(b);
}

struct acl_body *acl_body_copy(const struct acl_body *s)
{
    struct acl_body *b = calloc(1, sizeof(*b));
    int ok = 1;

    if (!b)
        return NULL;
    b->id = atomic_fetch_add(&body_ids, 1) + 1;
    b->flags = s->flags;
    if (s->npass) {
        if (!(b->pass = malloc((size_t)s->npass * sizeof(*b->pass))))
            ok = 0;
        else {
            memcpy(b->pass, s->pass, (size_t)s->npass * sizeof(*b->pass));
            b->npass = s->npass;
        }
    }
    if (!(b->sels = calloc((size_t)s->nsels, sizeof(*b->sels)))) {
        free(b->pass);
        free(b);
        return NULL;
    }
    b->nsels = s->nsels;
    for (int i = 0; i < s->nsels; i++)
        ok &= sel_copy(&b->sels[i], &s->sels[i]);
    if (!ok) {
        acl_body_free(b);
        return NULL;
    }
    return b;
}

static int pass_find(const struct acl_body *b, const char *hex)
{
    for (int i = 0; i < b->npass; i++)
        if (!memcmp(b->pass[i], hex, 64))
            return i;
    return -1;
}

static const char *pass_add(struct acl_body *b, const char *hex)
{
    b->flags &= ~USER_NOPASS;
    if (pass_find(b, hex) >= 0)
        return NULL;
    if (b->npass >= ACL_MAX_PASS)
        return E_LIMIT;
    char(*np)[65] = realloc(b->pass, (size_t)(b->npass + 1) * sizeof(*np));
    if (!np)
        return E_OOM;
    b->pass = np;
    memcpy(np[b->npass], hex, 64);
    np[b->npass][64] = 0;
    b->npass++;
    return NULL;
}

static const char *pass_del(struct acl_body *b, const char *hex)
{
    int i = pass_find(b, hex);
    if (i < 0)
        return E_NOPASS;
    memmove(b->pass + i, b->pass + i + 1, (size_t)(b->npass - i - 1) * sizeof(*b->pass));
    b->npass--;
    return NULL;
}

static int hash_valid(const char *p, size_t n)
{
    if (n != 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return 0;
    return 1;
}

static void clear_selectors(struct acl_body *b)
{
    for (int i = 1; i < b->nsels; i++)
        sel_deinit(&b->sels[i]);
    b->nsels = 1;
}

const char *acl_body_apply(struct acl_body *b, const char *op, size_t n)
{
    char hex[65];

#define IS(lit) (n == sizeof(lit) - 1 && !strncasecmp(op, lit, n))
    if (n == 0) {
        return NULL;
    } else if (IS("on")) {
        b->flags = (b->flags | USER_ON) & ~USER_OFF;
    } else if (IS("off")) {
        b->flags = (b->flags | USER_OFF) & ~USER_ON;
    } else if (IS("skip-sanitize-payload")) {
        b->flags = (b->flags | USER_SKIP_SANITIZE) & ~USER_SANITIZE;
    } else if (IS("sanitize-payload")) {
        b->flags = (b->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
    } else if (IS("nopass")) {
        b->flags |= USER_NOPASS;
        b->npass = 0;
    } else if (IS("resetpass")) {
        b->flags &= ~USER_NOPASS;
        b->npass = 0;
    } else if (n && op[0] == '>') {
        acl_sha256_hex(op + 1, n - 1, hex);
        return pass_add(b, hex);
    } else if (n && op[0] == '#') {
        if (!hash_valid(op + 1, n - 1))
            return E_BADHASH;
        return pass_add(b, op + 1);
    } else if (n && op[0] == '<') {
        acl_sha256_hex(op + 1, n - 1, hex);
        return pass_del(b, hex);
    } else if (n && op[0] == '!') {
        if (!hash_valid(op + 1, n - 1))
            return E_BADHASH;
        return pass_del(b, op + 1);
    } else if (n >= 2 && op[0] == '(' && op[n - 1] == ')') {
        struct acl_sel s;
        const char *err = NULL;
        size_t i = 1, end = n - 1;
        if (b->nsels >= ACL_MAX_SELS)
            return E_LIMIT;
        sel_init(&s);
        while (i < end && !err) {
            size_t j = i;
            while (j < end && op[j] != ' ')
                j++;
            if (j > i)
                err = sel_apply(&s, op + i, j - i);
            i = j + 1;
        }
        if (err) {
            sel_deinit(&s);
            return err;
        }
        struct acl_sel *ns = realloc(b->sels, (size_t)(b->nsels + 1) * sizeof(*ns));
        if (!ns) {
            sel_deinit(&s);
            return E_OOM;
        }
        b->sels = ns;
        ns[b->nsels++] = s;
    } else if (IS("clearselectors")) {
        clear_selectors(b);
    } else if (IS("reset")) {
        b->flags &= ~USER_NOPASS;
        b->npass = 0;
        sel_apply(&b->sels[0], "resetkeys", 9);
        sel_apply(&b->sels[0], "resetchannels", 13);
        if (acl_pubsub_default_all)
            sel_apply(&b->sels[0], "allchannels", 11);
        b->flags = (b->flags | USER_OFF) & ~USER_ON;
        b->flags = (b->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
        clear_selectors(b);
        sel_apply(&b->sels[0], "-@all", 5);
    } else {
        return sel_apply(&b->sels[0], op, n);
    }
    return NULL;
#undef IS
}

/* ---- descriptions ---- */
static void out_str(struct buf *o, const char *s)
{
    buf_append(o, s, strlen(s));
}

static void count_category(const uint64_t *bits, int cat, unsigned long *on, unsigned long *off)
{
    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *cmd = cmd_at(i);
        if ((cmd->acl >> cat) & 1)
            (bit_get(bits, cmd->id) ? (*on)++ : (*off)++);
        for (int j = 0; j < cmd->nsubs; j++)
            if ((cmd->subs[j].acl >> cat) & 1)
                (bit_get(bits, cmd->subs[j].id) ? (*on)++ : (*off)++);
    }
}

static void bits_category(uint64_t *bits, int cat, int allow)
{
    for (int i = 0; i < cmd_count(); i++) {
        const struct cmd *cmd = cmd_at(i);
        if ((cmd->acl >> cat) & 1)
            bits_change(bits, cmd, allow);
        for (int j = 0; j < cmd->nsubs; j++)
            if ((cmd->subs[j].acl >> cat) & 1)
                bits_change(bits, &cmd->subs[j], allow);
    }
}

static void describe_single(const struct acl_sel *s, uint64_t *fake, const struct cmd *cmd,
                            struct buf *o)
{
    int ub = bit_get(s->bits, cmd->id), fb = bit_get(fake, cmd->id);

    if (ub != fb) {
        out_str(o, ub ? "+" : "-");
        out_str(o, cmd->name);
        out_str(o, " ");
        bits_change(fake, cmd, ub);
    }
    for (int j = 0; j < cmd->nsubs; j++)
        describe_single(s, fake, &cmd->subs[j], o);
    if (!ub)
        for (int i = 0; i < s->nfargs; i++)
            if (s->fargs[i]->id == cmd->id) {
                out_str(o, "+");
                out_str(o, cmd->name);
                out_str(o, "|");
                buf_append(o, s->fargs[i]->p, s->fargs[i]->n);
                out_str(o, " ");
            }
}

/* The command rules as Redis 7.0 describes them: +@all (the selector runs future commands)
 * or -@all; then, greedily, the category that needs the fewest exceptions among those that
 * cover more commands right than wrong (ties: the one covering most), each category's
 * commands taken out of the count once applied; then the single commands that still differ
 * and the first-args. */
void acl_sel_describe_commands(const struct acl_sel *s, struct buf *o)
{
    uint64_t fake[ACL_CMD_WORDS], temp[ACL_CMD_WORDS];
    int additive = !(s->flags & SEL_FUTURE), ncat = acl_category_count();
    char applied[64] = {0};
    size_t start = buf_len(o);

    memset(fake, additive ? 0 : 0xff, sizeof(fake));
    memcpy(temp, s->bits, sizeof(temp));
    out_str(o, additive ? "-@all " : "+@all ");
    for (;;) {
        int best = -1;
        unsigned long mindiff = ~0UL, maxsame = 0;
        for (int cat = 0; cat < ncat && cat < 64; cat++) {
            unsigned long on = 0, off = 0, diff, same;
            if (applied[cat])
                continue;
            count_category(temp, cat, &on, &off);
            diff = additive ? off : on;
            same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = cat;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0)
            break;
        out_str(o, additive ? "+@" : "-@");
        out_str(o, acl_category_name(best));
        out_str(o, " ");
        bits_category(fake, best, additive);
        bits_category(temp, best, !additive);
        applied[best] = 1;
    }
    for (int i = 0; i < cmd_count(); i++)
        describe_single(s, fake, cmd_at(i), o);
    if (buf_len(o) > start)
        o->wpos--; /* the last space */
}

static void describe_pat(const struct acl_pat *p, struct buf *o)
{
    if (p->flags == ACL_KEY_RW)
        out_str(o, "~");
    else if (p->flags == ACL_KEY_R)
        out_str(o, "%R~");
    else if (p->flags == ACL_KEY_W)
        out_str(o, "%W~");
    else
        out_str(o, "%~");
    buf_append(o, p->p, p->n);
}

void acl_sel_describe_keys(const struct acl_sel *s, struct buf *o)
{
    if (s->flags & SEL_ALLKEYS) {
        out_str(o, "~*");
        return;
    }
    for (int i = 0; i < s->nkeys; i++) {
        if (i)
            out_str(o, " ");
        describe_pat(s->keys[i], o);
    }
}

void acl_sel_describe_channels(const struct acl_sel *s, struct buf *o)
{
    if (s->flags & SEL_ALLCHANNELS) {
        out_str(o, "&*");
        return;
    }
    for (int i = 0; i < s->nchans; i++) {
        if (i)
            out_str(o, " ");
        out_str(o, "&");
        buf_append(o, s->chans[i]->p, s->chans[i]->n);
    }
}

static void describe_sel(const struct acl_sel *s, struct buf *o)
{
    if (s->flags & SEL_ALLKEYS) {
        out_str(o, "~* ");
    } else {
        for (int i = 0; i < s->nkeys; i++) {
            describe_pat(s->keys[i], o);
            out_str(o, " ");
        }
    }
    if (s->flags & SEL_ALLCHANNELS) {
        out_str(o, "&* ");
    } else {
        out_str(o, "resetchannels ");
        for (int i = 0; i < s->nchans; i++) {
            out_str(o, "&");
            buf_append(o, s->chans[i]->p, s->chans[i]->n);
            out_str(o, " ");
        }
    }
    acl_sel_describe_commands(s, o);
}

static const struct {
    const char *name;
    unsigned bit;
} user_flags[] = {
    {"on", USER_ON},
    {"off", USER_OFF},
    {"nopass", USER_NOPASS},
    {"skip-sanitize-payload", USER_SKIP_SANITIZE},
    {"sanitize-payload", USER_SANITIZE},
};

int acl_user_flag_count(void);
const char *acl_user_flag(int i, unsigned *bit);

int acl_user_flag_count(void)
{
    return (int)(sizeof(user_flags) / sizeof(user_flags[0]));
}

const char *acl_user_flag(int i, unsigned *bit)
{
    *bit = user_flags[i].bit;
    return user_flags[i].name;
}

void acl_body_describe(const struct acl_body *b, struct buf *o)
{
    for (int i = 0; i < acl_user_flag_count(); i++)
        if (b->flags & user_flags[i].bit) {
            out_str(o, user_flags[i].name);
            out_str(o, " ");
        }
    for (int i = 0; i < b->npass; i++) {
        out_str(o, "#");
        buf_append(o, b->pass[i], 64);
        out_str(o, " ");
    }
    describe_sel(&b->sels[0], o);
    for (int i = 1; i < b->nsels; i++) {
        out_str(o, " (");
        describe_sel(&b->sels[i], o);
        out_str(o, ")");
    }
}

int acl_body_allperm(const struct acl_body *b)
{
    const struct acl_sel *s = &b->sels[0];
    unsigned all = SEL_ALLKEYS | SEL_ALLCHANNELS | SEL_ALLCOMMANDS;
    return (s->flags & all) == all;
}

int acl_body_check_pass(const struct acl_body *b, const char *p, size_t n)
{
    char hex[65];
    int ok = 0;

    if (b->flags & USER_NOPASS)
        return 1;
    acl_sha256_hex(p, n, hex);
    for (int i = 0; i < b->npass; i++) {
        int diff = 0;
        for (int k = 0; k < 64; k++)
            diff |= hex[k] ^ b->pass[i][k];
        ok |= !diff;
    }
    return ok;
}

/* ---- the check ---- */
/* util_glob_match, after a test of the literal prefix (most patterns are "prefix*") */
static inline int pat_match(const struct acl_pat *p, const char *k, size_t n)
{
    uint32_t i = 0;

    if (n < p->lit)
        return 0;
    for (; i + 4 <= p->lit; i += 4) {
        uint32_t a, b;
        memcpy(&a, p->p + i, 4);
        memcpy(&b, k + i, 4);
        if (a != b)
            return 0;
    }
    for (; i < p->lit; i++)
        if (p->p[i] != k[i])
            return 0;
    if (p->kind == PAT_PREFIX)
        return 1;
    if (p->kind == PAT_EXACT)
        return n == p->lit;
    return util_glob_match(p->p, p->n, k, n, 0);
}

struct key_walk {
    const struct acl_sel *s;
    const struct slice *argv;
    int denied;
};

static inline __attribute__((always_inline)) int key_allowed(const struct acl_sel *s, const char *k, size_t n, unsigned ksflags)
{
    int need = 0;

    if (ksflags & KS_ACCESS)
        need |= ACL_KEY_R;
    if (ksflags & (KS_INSERT | KS_DELETE | KS_UPDATE))
        need |= ACL_KEY_W;
    if (n) {
        unsigned b = (unsigned char)k[0];
        for (int i = s->kstart[b]; i < s->kstart[b + 1]; i++) {
            const struct acl_pat *p = s->kidx[i];
            if ((p->flags & need) == need && pat_match(p, k, n))
                return 1;
        }
    }
    for (int i = s->kstart[256]; i < s->kstart[257]; i++) {
        const struct acl_pat *p = s->kidx[i];
        if ((p->flags & need) == need && pat_match(p, k, n))
            return 1;
    }
    return 0;
}

static int key_cb(void *arg, int pos, unsigned flags)
{
    struct key_walk *w = arg;

    if (!key_allowed(w->s, w->argv[pos].p, w->argv[pos].n, flags)) {
        w->denied = pos;
        return 1;
    }
    return 0;
}

static int chan_allowed(const struct acl_sel *s, const struct slice *ch, int is_pattern)
{
    for (int i = 0; i < s->nchans; i++) {
        const struct acl_pat *p = s->chans[i];
        if (is_pattern ? (p->n == ch->n && !memcmp(p->p, ch->p, ch->n))
                       : pat_match(p, ch->p, ch->n))
            return 1;
    }
    return 0;
}

/* Channel arguments of the publishing and subscribing commands: [first, last], pattern */
static int cmd_channels(const struct cmd *cmd, int argc, int *first, int *last, int *pattern)
{
    const char *n = cmd->name;

    *pattern = 0;
    if (!strcmp(n, "publish") || !strcmp(n, "spublish")) {
        *first = *last = 1;
    } else if (!strcmp(n, "subscribe") || !strcmp(n, "ssubscribe")) {
        *first = 1;
        *last = argc - 1;
    } else if (!strcmp(n, "psubscribe")) {
        *first = 1;
        *last = argc - 1;
        *pattern = 1;
    } else {
        return 0;
    }
    return argc > 1;
}

static inline __attribute__((always_inline)) int sel_check(const struct acl_sel *s, const struct cmd *cmd, int argc,
                     const struct slice *argv, int *pos)
{
    if (!(s->flags & SEL_ALLCOMMANDS) && !(cmd->flags & CMD_NOAUTH) && !bit_get(s->bits, cmd->id)) {
        int ok = 0;
        for (int i = 0; i < s->nfargs && !ok; i++)
            if (s->fargs[i]->id == cmd->id && argc > 1 &&
                util_eq_nocase(argv[1].p, argv[1].n, s->fargs[i]->p))
                ok = 1;
        if (!ok)
            return ACL_DENIED_CMD;
    }
    if (!(s->flags & SEL_ALLKEYS) && ((cmd->flags & CMD_ONE_KEY) || cmd_has_keys(cmd))) {
        if (cmd->flags & CMD_ONE_KEY) {
            if (cmd->first < argc &&
                !key_allowed(s, argv[cmd->first].p, argv[cmd->first].n, cmd->ks[0].flags)) {
                *pos = cmd->first;
                return ACL_DENIED_KEY;
            }
            goto keys_done;
        }
        struct key_walk w = {s, argv, 0};
        /* as Redis, a command line that does not fit one of the specs has no keys at all */
        if (cmd->nks < 2 || cmd_keys(cmd, argc, argv, NULL, NULL) > 0)
            cmd_keys(cmd, argc, argv, key_cb, &w);
        if (w.denied) {
            *pos = w.denied;
            return ACL_DENIED_KEY;
        }
    }
keys_done:
    if (!(s->flags & SEL_ALLCHANNELS) && (cmd->flags & CMD_PUBSUB)) {
        int first, last, pat;
        if (cmd_channels(cmd, argc, &first, &last, &pat))
            for (int i = first; i <= last; i++)
                if (!chan_allowed(s, &argv[i], pat)) {
                    *pos = i;
                    return ACL_DENIED_CHANNEL;
                }
    }
    return ACL_OK;
}

int acl_sel_check(const struct acl_sel *s, const struct cmd *cmd, int argc,
                  const struct slice *argv, int *pos)
{
    return sel_check(s, cmd, argc, argv, pos);
}

int acl_body_check(const struct acl_body *b, const struct cmd *cmd, int argc,
                   const struct slice *argv, int *pos)
{
    int best = ACL_OK, bestpos = 0;

    if (b->nsels == 1)
        return sel_check(&b->sels[0], cmd, argc, argv, pos);
    for (int i = 0; i < b->nsels; i++) {
        int p = 0, r = sel_check(&b->sels[i], cmd, argc, argv, &p);
        if (r == ACL_OK)
            return ACL_OK;
        if (r > best || (r == best && p > bestpos)) {
            best = r;
            bestpos = p;
        }
    }
    *pos = bestpos;
    return best;
}

int acl_body_full_key_access(const struct acl_body *b, const struct cmd *cmd, int argc,
                             const struct slice *argv)
{
    for (int i = 0; i < b->nsels; i++) {
        const struct acl_sel *s = &b->sels[i];
        int pos, full = (s->flags & SEL_ALLKEYS) != 0;
        for (int k = 0; k < s->nkeys && !full; k++)
            full = (s->keys[k]->flags & ACL_KEY_R) && s->keys[k]->n == 1 && s->keys[k]->p[0] == '*';
        if (full && sel_check(s, cmd, argc, argv, &pos) == ACL_OK)
            return 1;
    }
    return 0;
}

int acl_sel_key_allowed(const struct acl_sel *s, const char *k, size_t n, unsigned ksflags)
{
    return key_allowed(s, k, n, ksflags);
}
