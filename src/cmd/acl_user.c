/* ACL users (issue 21): the users table (sorted by name, as Redis lists them), AUTH against
 * it, the permission check at dispatch and its log entries, and the connections of a deleted
 * user closed. The table has its own lock, taken by AUTH and the ACL command only; a user's
 * rules are read under the user's read lock by the check, which dispatch runs only for users
 * not allowed everything (acl_user.allperm). */
#include <stdarg.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/acl.h"
#include "net/worker.h"
#include "cmd/pubsub.h"
#include "core/config.h"

static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;
static struct acl_user **users;
static int nusers;
static struct acl_user *default_user;
static char last_requirepass[sizeof(cfg.requirepass)]; /* as the default user last took it */

struct acl_epoch acl_epochs[ACL_EPOCH_SLOTS];

static void wait_readers(void)
{
    for (int i = 0; i < ACL_EPOCH_SLOTS; i++) {
        uint64_t v = atomic_load(&acl_epochs[i].v);
        if (!(v & 1))
            continue;
        while (atomic_load(&acl_epochs[i].v) == v)
            sched_yield();
    }
}

static void kill_pubsub_if_needed(struct acl_user *u, const struct acl_body *old,
                                  const struct acl_body *b);

static void user_update_flags(struct acl_user *u)
{
    atomic_store(&u->allperm, acl_body_allperm(u->b));
}

static struct acl_user *user_new(const char *name, size_t n, struct acl_body *b)
{
    struct acl_user *u = calloc(1, sizeof(*u));
    if (!u || !(u->name = malloc(n + 1))) {
        free(u);
        return NULL;
    }
    memcpy(u->name, name, n);
    u->name[n] = 0;
    u->nlen = n;
    u->b = b;
    pthread_rwlock_init(&u->lock, NULL);
    atomic_store(&u->refs, 1);
    user_update_flags(u);
    return u;
}

void acl_user_ref(struct acl_user *u)
{
    atomic_fetch_add(&u->refs, 1);
}

void acl_user_unref(struct acl_user *u)
{
    if (u && atomic_fetch_sub(&u->refs, 1) == 1) {
        acl_body_free(u->b);
        pthread_rwlock_destroy(&u->lock);
        free(u->name);
        free(u);
    }
}

static int name_cmp(const struct acl_user *u, const char *n, size_t l)
{
    size_t m = u->nlen < l ? u->nlen : l;
    int r = memcmp(u->name, n, m);
    return r ? r : (u->nlen < l ? -1 : u->nlen > l);
}

/* index of name, or -(insertion point)-1; under users_lock */
static int find(const char *n, size_t l)
{
    int lo = 0, hi = nusers - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, r = name_cmp(users[mid], n, l);
        if (!r)
            return mid;
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

static int insert(struct acl_user *u)
{
    int at = find(u->name, u->nlen);
    if (at >= 0)
        return -1;
    at = -at - 1;
    struct acl_user **nu = realloc(users, (size_t)(nusers + 1) * sizeof(*nu));
    if (!nu)
        return -1;
    users = nu;
    memmove(users + at + 1, users + at, (size_t)(nusers - at) * sizeof(*users));
    users[at] = u;
    nusers++;
    return 0;
}

/* Swap b in as u's rules (users_lock held) */
static void user_set_body(struct acl_user *u, struct acl_body *b)
{
    struct acl_body *old;
    pthread_rwlock_wrlock(&u->lock);
    old = u->b;
    __atomic_store_n(&u->b, b, __ATOMIC_SEQ_CST);
    user_update_flags(u);
    pthread_rwlock_unlock(&u->lock);
    if (old)
        kill_pubsub_if_needed(u, old, b);
    wait_readers();
    acl_body_free(old);
}

/* The default user's passwords become the n bytes at pw (none: nopass). users_lock held. */
static void set_default_pass(const char *pw, size_t n)
{
    struct acl_body *b;
    char *op;

    if (!(b = acl_body_copy(default_user->b)))
        return;
    acl_body_apply(b, "resetpass", 9);
    if (n && (op = malloc(n + 1))) {
        op[0] = '>';
        memcpy(op + 1, pw, n);
        acl_body_apply(b, op, n + 1);
        free(op);
    } else {
        acl_body_apply(b, "nopass", 6);
    }
    user_set_body(default_user, b);
}

/* requirepass is the default user's password: a change made by CONFIG SET (or the config
 * file) is taken when the table is next used. users_lock held. */
static void sync_requirepass(void)
{
    char pw[sizeof(cfg.requirepass)];

    config_str(cfg.requirepass, pw, sizeof(pw));
    if (!strcmp(pw, last_requirepass))
        return;
    memcpy(last_requirepass, pw, sizeof(pw));
    set_default_pass(pw, strlen(pw));
}

void acl_requirepass_changed(void)
{
    pthread_mutex_lock(&users_lock);
    sync_requirepass();
    pthread_mutex_unlock(&users_lock);
}

void acl_requirepass_set(const char *p, size_t n)
{
    pthread_mutex_lock(&users_lock);
    sync_requirepass(); /* the config's C string is now the one taken */
    set_default_pass(p, n);
    pthread_mutex_unlock(&users_lock);
}

void acl_users_init(void)
{
    static const char *rules[] = {"+@all", "~*", "&*", "on", "nopass"};
    struct acl_body *b;

    if (default_user)
        return;
    net_default_nopass_hook = acl_default_has_nopass; /* protected-mode asks as Redis does */
    b = acl_body_new();
    for (size_t i = 0; b && i < sizeof(rules) / sizeof(rules[0]); i++)
        acl_body_apply(b, rules[i], strlen(rules[i]));
    if (!b || !(default_user = user_new("default", 7, b)) || insert(default_user)) {
        fprintf(stderr, "ACL: out of memory creating the default user\n");
        abort();
    }
    acl_requirepass_changed();
}

struct acl_user *acl_default_user(void)
{
    return default_user;
}

/* 1 when a new connection starts authenticated (the default user is on and nopass) */
int acl_default_nopass(void)
{
    int r;
    pthread_mutex_lock(&users_lock);
    sync_requirepass();
    r = (default_user->b->flags & (USER_NOPASS | USER_ON)) == (USER_NOPASS | USER_ON);
    pthread_mutex_unlock(&users_lock);
    return r;
}

struct acl_user *acl_user_get(const char *name, size_t n)
{
    struct acl_user *u = NULL;
    int at;
    pthread_mutex_lock(&users_lock);
    sync_requirepass();
    at = find(name, n);
    if (at >= 0) {
        u = users[at];
        acl_user_ref(u);
    }
    pthread_mutex_unlock(&users_lock);
    return u;
}

int acl_authenticate(const char *name, size_t nlen, const char *p, size_t n,
                     struct acl_user **out)
{
    struct acl_user *u = acl_user_get(name, nlen);
    int ok;

    if (!u)
        return 0;
    pthread_rwlock_rdlock(&u->lock);
    ok = (u->b->flags & USER_ON) && acl_body_check_pass(u->b, p, n);
    pthread_rwlock_unlock(&u->lock);
    if (!ok) {
        acl_user_unref(u);
        return 0;
    }
    *out = u;
    return 1;
}

void acl_conn_set_user(struct conn *c, struct acl_user *u)
{
    struct acl_user *old = c->user;
    acl_user_ref(u);
    /* CLIENT LIST on another worker reads the name under the list lock */
    pthread_mutex_lock(&c->w->list_lock);
    __atomic_store_n(&c->user, u, __ATOMIC_RELEASE); /* pubsub_each_sub reads it elsewhere */
    pthread_mutex_unlock(&c->w->list_lock);
    acl_user_unref(old);
}

void acl_denied_text(int reason, const struct cmd *cmd, char *out, size_t cap)
{
    if (reason == ACL_DENIED_CMD)
        snprintf(out, cap, "NOPERM this user has no permissions to run the '%s' command",
                 cmd->name);
    else if (reason == ACL_DENIED_KEY)
        snprintf(out, cap,
                 "NOPERM this user has no permissions to access one of the keys used as arguments");
    else
        snprintf(out, cap, "NOPERM this user has no permissions to access one of the channels "
                           "used as arguments");
}

int acl_check_conn(struct conn *c, const struct cmd *cmd, int argc, const struct slice *argv,
                   const char *ctx, int *pos)
{
    struct acl_user *u = c->user;
    _Atomic uint64_t *e = &acl_epochs[(unsigned)c->w->idx % ACL_EPOCH_SLOTS].v;
    uint64_t v = atomic_load_explicit(e, memory_order_relaxed);
    int r;

    *pos = 0;
    atomic_store(e, v + 1); /* seq_cst: before the load of the rules */
    r = acl_body_check(__atomic_load_n(&u->b, __ATOMIC_ACQUIRE), cmd, argc, argv, pos);
    atomic_store_explicit(e, v + 2, memory_order_release);
    if (r != ACL_OK && ctx)
        acl_log_denial(c, r, ctx, cmd, r == ACL_DENIED_CMD ? NULL : &argv[*pos], u);
    return r;
}

/* ---- SETUSER / DELUSER ---- */
const char *acl_setuser(const char *name, size_t nlen, int nargs, const struct slice *args,
                        char *err, size_t cap)
{
    struct acl_body *b;
    struct acl_user *u;
    const char *e = NULL;
    struct buf op = {0};
    int at;

    acl_sync_pubsub_default();
    pthread_mutex_lock(&users_lock);
    sync_requirepass();
    at = find(name, nlen);
    u = at >= 0 ? users[at] : NULL;
    b = u ? acl_body_copy(u->b) : acl_body_new();
    if (!b) {
        pthread_mutex_unlock(&users_lock);
        snprintf(err, cap, "ERR Out of memory");
        return err;
    }
    for (int i = 0; i < nargs && !e; i++) {
        const struct slice *a = &args[i];
        int j = i;
        op.rpos = op.wpos = 0;
        if (a->n && a->p[0] == '(' && a->p[a->n - 1] != ')') {
            /* a selector spread over several arguments: joined with spaces */
            buf_append(&op, a->p, a->n);
            while (++j < nargs) {
                buf_append(&op, " ", 1);
                if (args[j].n)
                    buf_append(&op, args[j].p, args[j].n);
                if (args[j].n && args[j].p[args[j].n - 1] == ')')
                    break;
            }
            if (j == nargs) {
                snprintf(err, cap, "ERR Unmatched parenthesis in acl selector starting at '%.*s'.",
                         (int)(a->n > 512 ? 512 : a->n), a->p);
                e = err;
                break;
            }
            i = j;
        } else if (a->n) {
            buf_append(&op, a->p, a->n);
        }
        const char *r = acl_body_apply(b, op.data ? op.data + op.rpos : "", buf_len(&op));
        if (r) {
            snprintf(err, cap, "ERR Error in ACL SETUSER modifier '%.*s': %s",
                     (int)(buf_len(&op) > 512 ? 512 : buf_len(&op)), op.data + op.rpos, r);
            e = err;
        }
    }
    buf_deinit(&op);
    if (e) {
        pthread_mutex_unlock(&users_lock);
        acl_body_free(b);
        return e;
    }
    if (u) {
        user_set_body(u, b);
    } else if (!(u = user_new(name, nlen, b)) || insert(u)) {
        if (u)
            acl_user_unref(u);
        else
            acl_body_free(b);
        pthread_mutex_unlock(&users_lock);
        snprintf(err, cap, "ERR Out of memory");
        return err;
    }
    pthread_mutex_unlock(&users_lock);
    return NULL;
}

struct kill_arg {
    struct acl_user *u;
    struct conn *self;
};

void acl_kill_user_conns(struct conn *c, struct acl_user *u)
{
    struct srv *srv = c->w->srv;
    for (int i = 0; i < srv->nworkers; i++) {
        struct worker *w = &srv->workers[i];
        pthread_mutex_lock(&w->list_lock);
        for (struct conn *x = w->conns; x; x = x->next) {
            if (x->proto != PROTO_RESP || x->user != u)
                continue;
            if (x == c) {
                c->flags |= CONN_CLOSE_AFTER_REPLY;
            } else {
                atomic_store(&x->kill, 1);
                worker_wake(x->w);
            }
        }
        pthread_mutex_unlock(&w->list_lock);
    }
}

/* 1 when deleted, 0 when no such user */
int acl_deluser(struct conn *c, const char *name, size_t nlen)
{
    struct acl_user *u;
    int at;

    pthread_mutex_lock(&users_lock);
    at = find(name, nlen);
    if (at < 0) {
        pthread_mutex_unlock(&users_lock);
        return 0;
    }
    u = users[at];
    memmove(users + at, users + at + 1, (size_t)(nusers - at - 1) * sizeof(*users));
    nusers--;
    atomic_store(&u->deleted, 1);
    pthread_mutex_unlock(&users_lock);
    acl_kill_user_conns(c, u);
    acl_user_unref(u);
    return 1;
}

void acl_users_each(void (*fn)(struct acl_user *u, void *arg), void *arg)
{
    pthread_mutex_lock(&users_lock);
    sync_requirepass();
    for (int i = 0; i < nusers; i++) {
        pthread_rwlock_rdlock(&users[i]->lock);
        fn(users[i], arg);
        pthread_rwlock_unlock(&users[i]->lock);
    }
    pthread_mutex_unlock(&users_lock);
}

int acl_users_count(void)
{
    int n;
    pthread_mutex_lock(&users_lock);
    n = nusers;
    pthread_mutex_unlock(&users_lock);
    return n;
}

int acl_default_has_nopass(void)
{
    int r;
    pthread_mutex_lock(&users_lock);
    sync_requirepass();
    r = (default_user->b->flags & USER_NOPASS) != 0;
    pthread_mutex_unlock(&users_lock);
    return r;
}

int acl_full_key_access(struct conn *c, const struct cmd *cmd)
{
    struct acl_user *u = c->user;
    int r;

    if (!u || !cmd || atomic_load_explicit(&u->allperm, memory_order_relaxed))
        return 1;
    pthread_rwlock_rdlock(&u->lock);
    r = acl_body_full_key_access(u->b, cmd, c->argc, c->argv);
    pthread_rwlock_unlock(&u->lock);
    return r;
}

/* ACL LOAD: the users of nu (sorted, unique, n of them; "default" among them or not) replace
 * the table's. The default user object stays (connections point at it) and takes the loaded
 * rules, or the initial ones; every other old user is dropped and its connections closed. */
void acl_users_replace(struct conn *c, struct acl_user **nu, int n)
{
    struct acl_user **old, *def = NULL;
    int nold;
    struct acl_body *b;

    for (int i = 0; i < n; i++)
        if (nu[i]->nlen == 7 && !memcmp(nu[i]->name, "default", 7))
            def = nu[i];
    if (def) {
        b = def->b;
        def->b = NULL;
    } else if (!c) {
        b = NULL; /* start-up: the default user keeps its rules (requirepass) */
    } else {
        static const char *rules[] = {"+@all", "~*", "&*", "on", "nopass"};
        b = acl_body_new();
        for (size_t i = 0; b && i < sizeof(rules) / sizeof(rules[0]); i++)
            acl_body_apply(b, rules[i], strlen(rules[i]));
    }
    pthread_mutex_lock(&users_lock);
    old = users;
    nold = nusers;
    users = nu;
    nusers = n;
    if (def) {
        for (int i = 0; i < n; i++)
            if (nu[i] == def)
                nu[i] = default_user;
    } else {
        insert(default_user);
    }
    if (b)
        user_set_body(default_user, b);
    pthread_mutex_unlock(&users_lock);
    if (def)
        acl_user_unref(def);
    for (int i = 0; i < nold; i++) {
        if (old[i] == default_user)
            continue;
        atomic_store(&old[i]->deleted, 1);
        if (c)
            acl_kill_user_conns(c, old[i]);
        acl_user_unref(old[i]);
    }
    free(old);
}

/* A new user outside the table (ACL LOAD, start-up) */
struct acl_user *acl_user_new(const char *name, size_t n, struct acl_body *b)
{
    return user_new(name, n, b);
}

void acl_sync_pubsub_default(void)
{
    acl_pubsub_default_all = cfg.acl_pubsub_default == 1;
}

int acl_exec_denied(struct conn *c, const struct cmd *cmd)
{
    const char *why;
    int pos, r = acl_check_conn(c, cmd, c->argc, c->argv, "multi", &pos);

    if (r == ACL_OK)
        return 0;
    why = r == ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
          : r == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                : "no permission to access one of the channels used as arguments";
    reply_errorf(c, "NOPERM ACLs rules changed between the moment the transaction was "
                    "accumulated and the EXEC call. This command is no longer allowed for the "
                    "following reason: %s", why);
    return 1;
}

int acl_mc_key_allowed(struct conn *c, const char *k, size_t n, int write)
{
    struct acl_user *u = c->user;
    _Atomic uint64_t *e = &acl_epochs[(unsigned)c->w->idx % ACL_EPOCH_SLOTS].v;
    uint64_t v = atomic_load_explicit(e, memory_order_relaxed);
    const struct acl_body *b;
    int ok = 0;

    if (!u)
        return 1;
    atomic_store(e, v + 1);
    b = __atomic_load_n(&u->b, __ATOMIC_ACQUIRE);
    for (int i = 0; i < b->nsels && !ok; i++) {
        const struct acl_sel *s = &b->sels[i];
        if (s->flags & SEL_ALLKEYS)
            ok = 1;
        else if (k)
            ok = acl_sel_key_allowed(s, k, n, write ? KS_RW | KS_UPDATE : KS_RO | KS_ACCESS);
    }
    atomic_store_explicit(e, v + 2, memory_order_release);
    if (!ok) {
        struct slice obj = {k ? k : "*", k ? n : 1};
        acl_log_denial(c, ACL_DENIED_KEY, "toplevel", NULL, &obj, u);
    }
    return ok;
}

/* ---- subscribers of channels their user may no longer use (Redis 7.0 closes them) ---- */
struct unsub_arg {
    struct acl_user *u;
    const struct acl_sel *s;
};

static int unsub_one(struct conn *x, const char *p, size_t n, int pattern, void *arg)
{
    struct unsub_arg *a = arg;
    int ok = 0;

    if (__atomic_load_n(&x->user, __ATOMIC_ACQUIRE) != a->u)
        return 0;
    for (int i = 0; i < a->s->nchans && !ok; i++) {
        const struct acl_pat *q = a->s->chans[i];
        ok = pattern ? (q->n == n && !memcmp(q->p, p, n)) : util_glob_match(q->p, q->n, p, n, 0);
    }
    if (!ok) {
        atomic_store(&x->kill, 1);
        worker_wake(x->w);
    }
    return 0;
}

/* After u's rules changed to b (users_lock held): when its root selector's channels got
 * narrower, close its connections subscribed to a channel or pattern they no longer allow. */
static void kill_pubsub_if_needed(struct acl_user *u, const struct acl_body *old,
                                  const struct acl_body *b)
{
    const struct acl_sel *o = &old->sels[0], *s = &b->sels[0];
    int narrower = 0;

    if (s->flags & SEL_ALLCHANNELS)
        return;
    if (o->flags & SEL_ALLCHANNELS) {
        narrower = 1;
    } else {
        for (int i = 0; i < o->nchans && !narrower; i++) {
            int found = 0;
            for (int j = 0; j < s->nchans && !found; j++)
                found = o->chans[i]->n == s->chans[j]->n &&
                        !memcmp(o->chans[i]->p, s->chans[j]->p, s->chans[j]->n);
            narrower = !found;
        }
    }
    if (narrower && pubsub_active()) {
        struct unsub_arg a = {u, s};
        pubsub_each_sub(unsub_one, &a);
    }
}

void acl_user_line(const struct acl_user *u, struct buf *out)
{
    buf_append(out, "user ", 5);
    buf_append(out, u->name, u->nlen);
    buf_append(out, " ", 1);
    acl_body_describe(u->b, out);
}
