/* ACL users (issue 21): Redis 7.0's user model. A user's rules live in a body (flags,
 * password hashes, selectors); ACL SETUSER applies rules to a copy and swaps it in under the
 * user's write lock, so a check holds the read lock only for users that are not allowed
 * everything (allperm: the default user's test is one load). acl_rules.c is the model (rule
 * parsing, the description ACL LIST prints, the permission check) and needs only the command
 * table; acl_user.c is the users table, AUTH and the check at dispatch; acl.c the command. */
#ifndef TC_ACL_H
#define TC_ACL_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cmd/cmd.h"

#define ACL_CMD_WORDS (CMDSTATS_MAX_IDS / 64)

enum { ACL_KEY_R = 1, ACL_KEY_W = 2, ACL_KEY_RW = 3 };
enum { SEL_ALLKEYS = 1, SEL_ALLCHANNELS = 2, SEL_ALLCOMMANDS = 4, SEL_FUTURE = 8 };
enum { USER_ON = 1, USER_OFF = 2, USER_NOPASS = 4, USER_SKIP_SANITIZE = 8, USER_SANITIZE = 16 };
enum { ACL_OK = 0, ACL_DENIED_CMD = 1, ACL_DENIED_KEY = 2, ACL_DENIED_AUTH = 3,
       ACL_DENIED_CHANNEL = 4 };
/* Limits checked before anything is allocated */
enum { ACL_MAX_PATS = 4096, ACL_MAX_PASS = 4096, ACL_MAX_SELS = 1024, ACL_MAX_FARGS = 4096 };

enum { PAT_GLOB, PAT_PREFIX, PAT_EXACT };
struct acl_pat {
    uint32_t n;
    uint32_t lit;  /* bytes before the first glob character: a key must start with them */
    uint8_t flags; /* ACL_KEY_* (keys); channels: 0 */
    uint8_t kind;  /* PAT_PREFIX: "lit*"; PAT_EXACT: no glob character */
    uint32_t w0, w1;  /* lit 4..8: the literal's first and last 4 bytes (the fast check) */
    char p[];
};

struct acl_farg { /* +cmd|firstarg of a command without subcommands */
    int id;
    uint32_t n;
    char p[];
};

struct acl_sel {
    unsigned flags; /* SEL_* */
    uint64_t bits[ACL_CMD_WORDS];
    struct acl_pat **keys; /* in the order given (descriptions) */
    int nkeys;
    /* the same patterns by the first byte of their literal prefix (the check): bucket c is
     * kidx[kstart[c] .. kstart[c + 1]), bucket 256 the patterns starting with a glob */
    struct acl_pat **kidx;
    uint16_t kstart[258];
    struct acl_pat **chans;
    int nchans;
    struct acl_farg **fargs;
    int nfargs;
};

struct acl_body {
    unsigned flags; /* USER_* */
    int npass;
    char (*pass)[65]; /* SHA-256 hex digests */
    int nsels;        /* sels[0] is the root selector */
    struct acl_sel *sels;
    uint64_t id;      /* unique for the process's life (a connection's check cache key) */
};

struct acl_user {
    char *name;
    size_t nlen;
    struct acl_body *b;    /* under lock */
    pthread_rwlock_t lock;
    _Atomic int allperm;   /* b allows every command, key and channel (dispatch skips the check) */
    _Atomic int refs;      /* the table's and each connection's */
    _Atomic int deleted;
};

/* ---- acl_rules.c: the model ---- */
/* acl-pubsub-default: 1 allchannels, 0 resetchannels (Redis 7.0's default) */
extern int acl_pubsub_default_all;
struct acl_body *acl_body_new(void);
struct acl_body *acl_body_copy(const struct acl_body *b);
void acl_body_free(struct acl_body *b);
/* One rule (ACL SETUSER argument, selectors in parentheses): NULL, or Redis's error text. */
const char *acl_body_apply(struct acl_body *b, const char *op, size_t n);
/* ACL LIST's description (without "user <name> "), appended to out */
void acl_body_describe(const struct acl_body *b, struct buf *out);
void acl_sel_describe_commands(const struct acl_sel *s, struct buf *out);
void acl_sel_describe_keys(const struct acl_sel *s, struct buf *out);
void acl_sel_describe_channels(const struct acl_sel *s, struct buf *out);
int acl_body_allperm(const struct acl_body *b);
/* 1 when a password of b (or nopass) matches p */
int acl_body_check_pass(const struct acl_body *b, const char *p, size_t n);
/* ACL_OK or ACL_DENIED_*: *pos the argv index of the denied key / channel */
int acl_body_check(const struct acl_body *b, const struct cmd *cmd, int argc,
                   const struct slice *argv, int *pos);
int acl_user_flag_count(void);
const char *acl_user_flag(int i, unsigned *bit);
int acl_body_full_key_access(const struct acl_body *b, const struct cmd *cmd, int argc,
                             const struct slice *argv);
void acl_sha256_hex(const char *p, size_t n, char out[65]);
/* 1 when s has a space or control character (names, patterns) */
int acl_has_spaces(const char *p, size_t n);

/* 1 when a key pattern of s allows key k with the access of key spec flags ksflags */
int acl_sel_key_allowed(const struct acl_sel *s, const char *k, size_t n, unsigned ksflags);
/* One selector's check (acl_body_check for users of one selector) */
int acl_sel_check(const struct acl_sel *s, const struct cmd *cmd, int argc,
                  const struct slice *argv, int *pos);

/* ---- acl_user.c: users table, AUTH, dispatch check ---- */
/* The dispatch check reads a user's rules without a lock: each worker's counter is odd while
 * its check runs; a writer publishes new rules, then waits until no check that began before
 * is still running (acl_user.c) before it frees the old ones. */
#define ACL_EPOCH_SLOTS 256
struct acl_epoch {
    _Atomic uint64_t v;
    char pad[56];
};
extern struct acl_epoch acl_epochs[ACL_EPOCH_SLOTS];

/* The common case of one selector, decided inline at dispatch: 1 when s allows cmd for sure
 * (its command bit, and a one-key command's key under a literal-prefix or exact pattern of at
 * most 8 literal bytes with the access the key spec needs, compared by two 4-byte loads); 0:
 * run the full check (acl_sel_check), which also gives the denial's reason. */
static inline __attribute__((always_inline)) int acl_sel_fast_ok(const struct acl_sel *s,
                                                                 const struct cmd *cmd, int argc,
                                                                 const struct slice *argv,
                                                                 const struct acl_pat **hit)
{
    unsigned f = s->flags;
    uint64_t cf = cmd->flags;
    unsigned id = (unsigned)cmd->id;

    if (!(f & SEL_ALLCOMMANDS) && !((s->bits[id / 64] >> (id % 64)) & 1) && !(cf & CMD_NOAUTH))
        return 0;
    if ((cf & CMD_PUBSUB) && !(f & SEL_ALLCHANNELS))
        return 0;
    *hit = NULL;
    if (f & SEL_ALLKEYS)
        return 1;
    if (!(cf & CMD_ONE_KEY) || cmd->first >= argc)
        return 0;
    const struct slice *k = &argv[cmd->first];
    unsigned ks = cmd->ks[0].flags;
    unsigned need = ((ks & KS_ACCESS) ? ACL_KEY_R : 0) |
                    ((ks & (KS_INSERT | KS_DELETE | KS_UPDATE)) ? ACL_KEY_W : 0);
    if (k->n == 0)
        return 0;
    unsigned b = (unsigned char)k->p[0];
    for (int i = s->kstart[b]; i < s->kstart[b + 1]; i++) {
        const struct acl_pat *p = s->kidx[i];
        uint32_t lit = p->lit;
        if ((p->flags & need) != need || lit - 1 > 7 || k->n < lit ||
            (p->kind != PAT_PREFIX && !(p->kind == PAT_EXACT && k->n == lit)))
            continue;
        if (lit >= 4) { /* two 4-byte loads, overlapping when lit < 8, cover the literal */
            uint32_t a, z;
            memcpy(&a, k->p, 4);
            memcpy(&z, k->p + lit - 4, 4);
            if (a == p->w0 && z == p->w1) {
                *hit = p;
                return 1;
            }
        } else if (k->p[lit / 2] == p->p[lit / 2] && k->p[lit - 1] == p->p[lit - 1]) {
            *hit = p; /* lit 1..3: byte 0 matched the bucket */
            return 1;
        }
    }
    return 0;
}

/* The check at dispatch for a user not allowed everything: ACL_OK or a denial (not logged) */
static inline __attribute__((always_inline)) int acl_check_fast(struct conn *c, const struct cmd *cmd,
                                                                int *pos)
{
    _Atomic uint64_t *e = &acl_epochs[(unsigned)c->w->idx % ACL_EPOCH_SLOTS].v;
    uint64_t v = atomic_load_explicit(e, memory_order_relaxed);
    const struct acl_body *b;
    int r;

    atomic_store(e, v + 1); /* seq_cst: before the load of the rules */
    b = __atomic_load_n(&c->user->b, __ATOMIC_ACQUIRE);
    *pos = 0;
    if (b->id == c->acl_ck_body && cmd == c->acl_ck_cmd) {
        /* the connection's last command again under the same rules: only its key is new */
        const struct acl_pat *p = c->acl_ck_pat;
        if (!p) {
            r = ACL_OK;
            goto done;
        }
        if (cmd->first < c->argc) {
            const struct slice *k = &c->argv[cmd->first];
            uint32_t lit = p->lit;
            if (k->n >= lit && (p->kind == PAT_PREFIX || k->n == lit) && k->p[0] == p->p[0]) {
                if (lit >= 4) {
                    uint32_t x, z;
                    memcpy(&x, k->p, 4);
                    memcpy(&z, k->p + lit - 4, 4);
                    if (x == p->w0 && z == p->w1) {
                        r = ACL_OK;
                        goto done;
                    }
                } else if (k->p[lit / 2] == p->p[lit / 2] && k->p[lit - 1] == p->p[lit - 1]) {
                    r = ACL_OK;
                    goto done;
                }
            }
        }
    }
    if (b->nsels == 1) {
        const struct acl_pat *hit;
        if (acl_sel_fast_ok(&b->sels[0], cmd, c->argc, c->argv, &hit)) {
            c->acl_ck_body = b->id;
            c->acl_ck_cmd = cmd;
            c->acl_ck_pat = hit;
            r = ACL_OK;
        } else {
            r = acl_sel_check(&b->sels[0], cmd, c->argc, c->argv, pos);
        }
    } else {
        r = acl_body_check(b, cmd, c->argc, c->argv, pos);
    }
done:
    atomic_store_explicit(e, v + 2, memory_order_release);
    return r;
}

void acl_users_init(void);
/* A user by name with a reference taken, or NULL */
struct acl_user *acl_user_get(const char *name, size_t n);
struct acl_user *acl_default_user(void);
int acl_default_nopass(void); /* the default user is on and nopass: new connections are authenticated */ /* no reference taken: it is never freed */
int acl_default_has_nopass(void); /* the default user has the nopass flag (AUTH pass errors) */
void acl_user_ref(struct acl_user *u);
void acl_user_unref(struct acl_user *u);
/* AUTH: 1 when name/pass authenticate (a reference in *out), else 0 */
int acl_authenticate(const char *name, size_t nlen, const char *p, size_t n,
                     struct acl_user **out);
/* c now runs as u (takes a reference, drops the old) */
void acl_conn_set_user(struct conn *c, struct acl_user *u);
/* The check of cmd for c's user (slow path of the dispatch), with ctx for the log
 * ("toplevel", "multi", "lua"; NULL: the caller logs): ACL_OK, or the reason. */
int acl_check_conn(struct conn *c, const struct cmd *cmd, int argc, const struct slice *argv,
                   const char *ctx, int *pos);
/* The NOPERM error for a denial (Redis 7.0.15's texts) into out */
void acl_denied_text(int reason, const struct cmd *cmd, char *out, size_t cap);
void acl_log_denial(struct conn *c, int reason, const char *ctx, const struct cmd *cmd,
                    const struct slice *obj, const struct acl_user *u);
/* SETUSER / DELUSER / LIST / USERS helpers */
const char *acl_setuser(const char *name, size_t nlen, int nargs, const struct slice *args,
                        char *err, size_t cap);
int acl_deluser(struct conn *c, const char *name, size_t nlen);
/* "user <name> <rules>" as ACL LIST, ACL SAVE and CONFIG REWRITE write it, appended to out
 * (no newline). Under the table lock (acl_users_each). */
void acl_user_line(const struct acl_user *u, struct buf *out);
/* Calls fn for each user in name order, under the table lock */
void acl_users_each(void (*fn)(struct acl_user *u, void *arg), void *arg);
int acl_users_count(void);
/* requirepass changed: the default user's passwords become it */
void acl_requirepass_changed(void);
/* CONFIG SET requirepass, after the config took the value: the default user's password
 * becomes all n bytes at p (copied). The config keeps a C string, which ends at the first
 * NUL byte; Redis compares every byte of a binary password, so AUTH must too. */
void acl_requirepass_set(const char *p, size_t n);
/* Kill connections authenticated as u (another worker's: through their kill flag) */
void acl_kill_user_conns(struct conn *c, struct acl_user *u);
/* The memcached port: 1 when c's ACL user may read (write: write) key k; k NULL: every key
 * (flush_all). A denied key is logged (reason key, object the key). */
int acl_mc_key_allowed(struct conn *c, const char *k, size_t n, int write);
/* EXEC: a queued command its user may no longer run is answered Redis's NOPERM (and logged,
 * context "multi"): 1, else 0 */
int acl_exec_denied(struct conn *c, const struct cmd *cmd);
/* SORT BY / GET patterns: 1 when c may read every key through cmd (a selector that allows the
 * command has allkeys or a read pattern "*"), as Redis 7.0 requires */
int acl_full_key_access(struct conn *c, const struct cmd *cmd);

void acl_users_replace(struct conn *c, struct acl_user **nu, int n);
struct acl_user *acl_user_new(const char *name, size_t n, struct acl_body *b);
void acl_sync_pubsub_default(void);

/* ---- acl_file.c: aclfile, `user` config lines, ACL SAVE / LOAD ---- */
/* Start-up, once the command table is complete: the config file's users, then the aclfile.
 * 0, or -1 with the reason in err */
int acl_startup(char *err, size_t cap);
/* ACL LOAD: 0, or -1 with Redis's error text (without "ERR ") in *errs */
int acl_load_file(struct conn *c, struct buf *errs);
/* ACL SAVE: 0, or -1 */
int acl_save_file(void);

#endif
