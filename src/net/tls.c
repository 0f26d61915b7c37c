/* TLS with OpenSSL 3: the server context (tls-* settings, Redis's names and defaults) and the
 * non-blocking per-connection handshake, read and write. OpenSSL keeps its read and write
 * buffers per connection for the connection's life (no SSL_MODE_RELEASE_BUFFERS: releasing
 * them would cost two allocations per request on the hot path, keeping them costs ~34 KiB per
 * idle TLS client). */
#define _GNU_SOURCE
#include "net/tls.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "core/config.h"
#include "core/log.h"
#include "net/conn.h"

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER; /* guards ctx (leaf lock) */
static SSL_CTX *ctx;                                         /* for new connections */

/* The last OpenSSL error as text (and the queue cleared). */
static void ssl_errstr(char *out, size_t cap)
{
    unsigned long e = ERR_get_error();
    if (e)
        ERR_error_string_n(e, out, cap);
    else
        snprintf(out, cap, "unknown error");
    ERR_clear_error();
}

/* tls-protocols: "TLSv1.2 TLSv1.3" (any of TLSv1 TLSv1.1 TLSv1.2 TLSv1.3); empty: 1.2 and 1.3. */
static int parse_protocols(const char *s, int *minv, int *maxv, char *err, size_t cap)
{
    static const struct {
        const char *name;
        int v;
    } names[] = {{"TLSv1", TLS1_VERSION}, {"TLSv1.1", TLS1_1_VERSION},
                 {"TLSv1.2", TLS1_2_VERSION}, {"TLSv1.3", TLS1_3_VERSION}};
    char buf[128], *save = NULL, *w;

    *minv = 0;
    *maxv = 0;
    if (!s[0]) {
        *minv = TLS1_2_VERSION;
        *maxv = TLS1_3_VERSION;
        return 0;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        size_t i;
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (!strcasecmp(w, names[i].name))
                break;
        if (i == sizeof(names) / sizeof(names[0])) {
            snprintf(err, cap, "Invalid tls-protocols specified. Use a combination of "
                               "'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
            return -1;
        }
        if (!*minv || names[i].v < *minv)
            *minv = names[i].v;
        if (names[i].v > *maxv)
            *maxv = names[i].v;
    }
    if (!*minv) {
        snprintf(err, cap, "Failed to enable any TLS protocol");
        return -1;
    }
    return 0;
}

/* A snapshot of the string settings (CONFIG SET may write them meanwhile). */
struct tls_strs {
    char cert[1024], key[1024], pass[256], ca_file[1024], ca_dir[1024], dh[1024];
    char protocols[128], ciphers[1024], suites[1024];
};

static SSL_CTX *build_ctx(char *err, size_t cap)
{
    static struct tls_strs s; /* big: not on a worker's stack; callers are serialized */
    static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;
    SSL_CTX *c = NULL;
    char why[256];
    int minv, maxv, auth = __atomic_load_n(&cfg.tls_auth_clients, __ATOMIC_RELAXED);
    long opts = SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;

    pthread_mutex_lock(&build_lock);
    config_str(cfg.tls_cert_file, s.cert, sizeof(s.cert));
    config_str(cfg.tls_key_file, s.key, sizeof(s.key));
    config_str(cfg.tls_key_file_pass, s.pass, sizeof(s.pass));
    config_str(cfg.tls_ca_cert_file, s.ca_file, sizeof(s.ca_file));
    config_str(cfg.tls_ca_cert_dir, s.ca_dir, sizeof(s.ca_dir));
    config_str(cfg.tls_dh_params_file, s.dh, sizeof(s.dh));
    config_str(cfg.tls_protocols, s.protocols, sizeof(s.protocols));
    config_str(cfg.tls_ciphers, s.ciphers, sizeof(s.ciphers));
    config_str(cfg.tls_ciphersuites, s.suites, sizeof(s.suites));
    if (!s.cert[0] || !s.key[0]) {
        snprintf(err, cap, "No tls-cert-file or tls-key-file configured");
        goto out;
    }
    if (auth && !s.ca_file[0] && !s.ca_dir[0]) {
        snprintf(err, cap, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when "
                           "tls-cluster, tls-replication or tls-auth-clients are enabled!");
        goto out;
    }
    if (parse_protocols(s.protocols, &minv, &maxv, err, cap))
        goto out;
    c = SSL_CTX_new(TLS_server_method());
    if (!c) {
        snprintf(err, cap, "Failed to create the TLS context");
        goto out;
    }
    if (__atomic_load_n(&cfg.tls_prefer_server_ciphers, __ATOMIC_RELAXED))
        opts |= SSL_OP_CIPHER_SERVER_PREFERENCE;
    SSL_CTX_set_options(c, (uint64_t)opts);
    SSL_CTX_set_min_proto_version(c, minv);
    SSL_CTX_set_max_proto_version(c, maxv);
    /* a write may stop part-way (socket full) and resume from a moved buffer with more bytes */
    SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* one read(2) per request instead of two (record header, then body): OpenSSL reads what
     * the socket has; the worker then asks SSL_has_pending, not the socket, for the rest */
    SSL_CTX_set_read_ahead(c, 1);
    if (__atomic_load_n(&cfg.tls_session_caching, __ATOMIC_RELAXED)) {
        static const unsigned char sid[] = "twincache";
        SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(c, __atomic_load_n(&cfg.tls_session_cache_size,
                                                       __ATOMIC_RELAXED));
        SSL_CTX_set_timeout(c, __atomic_load_n(&cfg.tls_session_cache_timeout,
                                               __ATOMIC_RELAXED));
        SSL_CTX_set_session_id_context(c, sid, sizeof(sid) - 1);
    } else {
        SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(c, SSL_OP_NO_TICKET);
    }
    if (s.pass[0])
        SSL_CTX_set_default_passwd_cb_userdata(c, s.pass);
    if (SSL_CTX_use_certificate_chain_file(c, s.cert) <= 0) {
        ssl_errstr(why, sizeof(why));
        snprintf(err, cap, "Failed to load certificate: %s: %s", s.cert, why);
        goto out_free;
    }
    if (SSL_CTX_use_PrivateKey_file(c, s.key, SSL_FILETYPE_PEM) <= 0) {
        ssl_errstr(why, sizeof(why));
        snprintf(err, cap, "Failed to load private key: %s: %s", s.key, why);
        goto out_free;
    }
    SSL_CTX_set_default_passwd_cb_userdata(c, NULL); /* s.pass is reused */
    if (!SSL_CTX_check_private_key(c)) {
        ssl_errstr(why, sizeof(why));
        snprintf(err, cap, "Private key does not match the certificate: %s", why);
        goto out_free;
    }
    if ((s.ca_file[0] || s.ca_dir[0]) &&
        SSL_CTX_load_verify_locations(c, s.ca_file[0] ? s.ca_file : NULL,
                                      s.ca_dir[0] ? s.ca_dir : NULL) <= 0) {
        ssl_errstr(why, sizeof(why));
        snprintf(err, cap, "Failed to configure CA certificate(s) file/directory: %s", why);
        goto out_free;
    }
    if (s.dh[0]) {
        BIO *b = BIO_new_file(s.dh, "r");
        EVP_PKEY *dh = b ? PEM_read_bio_Parameters(b, NULL) : NULL;
        BIO_free(b);
        if (!dh || !SSL_CTX_set0_tmp_dh_pkey(c, dh)) {
            EVP_PKEY_free(dh);
            ssl_errstr(why, sizeof(why));
            snprintf(err, cap, "Failed to load DH params file: %s: %s", s.dh, why);
            goto out_free;
        }
    } else {
        SSL_CTX_set_dh_auto(c, 1);
    }
    if (s.ciphers[0] && !SSL_CTX_set_cipher_list(c, s.ciphers)) {
        snprintf(err, cap, "Failed to configure ciphers: %s", s.ciphers);
        goto out_free;
    }
    if (s.suites[0] && !SSL_CTX_set_ciphersuites(c, s.suites)) {
        snprintf(err, cap, "Failed to configure ciphersuites: %s", s.suites);
        goto out_free;
    }
    SSL_CTX_set_verify(c, auth == 0   ? SSL_VERIFY_NONE
                          : auth == 1 ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT
                                      : SSL_VERIFY_PEER,
                       NULL);
    goto out;
out_free:
    SSL_CTX_free(c);
    c = NULL;
out:
    memset(s.pass, 0, sizeof(s.pass));
    ERR_clear_error();
    pthread_mutex_unlock(&build_lock);
    return c;
}

int tls_reload(char *err, size_t cap)
{
    SSL_CTX *n = build_ctx(err, cap), *old;

    if (!n) {
        log_warn("Failed to configure TLS: %s", err);
        return -1;
    }
    pthread_mutex_lock(&ctx_lock);
    old = ctx;
    ctx = n;
    pthread_mutex_unlock(&ctx_lock);
    SSL_CTX_free(old); /* refcounted: open connections keep their sessions' reference */
    return 0;
}

int tls_setup(char *err, size_t cap)
{
    OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
    if (tls_reload(err, cap))
        return -1;
    config_tls_apply = tls_reload;
    return 0;
}

void tls_teardown(void)
{
    pthread_mutex_lock(&ctx_lock);
    SSL_CTX_free(ctx);
    ctx = NULL;
    pthread_mutex_unlock(&ctx_lock);
}

int tls_conn_init(struct conn *c)
{
    SSL *s = NULL;

    pthread_mutex_lock(&ctx_lock);
    if (ctx)
        s = SSL_new(ctx);
    pthread_mutex_unlock(&ctx_lock);
    if (!s)
        return -1;
    if (!SSL_set_fd(s, c->fd)) {
        SSL_free(s);
        return -1;
    }
    SSL_set_accept_state(s);
    c->tls = s;
    c->flags |= CONN_TLS_HS;
    return 0;
}

void tls_conn_free(struct conn *c)
{
    SSL *s = c->tls;

    if (!s)
        return;
    if (!(c->flags & CONN_TLS_HS))
        SSL_shutdown(s); /* close_notify if the socket takes it; never waits */
    SSL_free(s);
    ERR_clear_error();
    c->tls = NULL;
}

int tls_handshake(struct conn *c)
{
    SSL *s = c->tls;
    int r = SSL_do_handshake(s);

    if (r == 1) {
        c->flags &= ~(CONN_TLS_HS | CONN_TLS_HSW);
        return 1;
    }
    switch (SSL_get_error(s, r)) {
    case SSL_ERROR_WANT_READ:
        c->flags &= ~CONN_TLS_HSW;
        return 0;
    case SSL_ERROR_WANT_WRITE:
        c->flags |= CONN_TLS_HSW;
        return 0;
    default: {
        char why[256];
        ssl_errstr(why, sizeof(why));
        log_verbose("Error accepting a client connection: %s (addr=%s laddr=%s)", why, c->addr,
                    c->laddr);
        return -1;
    }
    }
}

ssize_t tls_read(struct conn *c, char *buf, size_t cap, int *err)
{
    SSL *s = c->tls;
    int r = SSL_read(s, buf, cap > INT_MAX ? INT_MAX : (int)cap);

    if (r > 0)
        return r;
    switch (SSL_get_error(s, r)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
        *err = EAGAIN;
        return -1;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        SSL_set_quiet_shutdown(s, 1); /* no close_notify after a failed session */
        if (errno == 0 || errno == EAGAIN) /* EOF without close_notify */
            return 0;
        *err = errno;
        return -1;
    default:
        ERR_clear_error();
        SSL_set_quiet_shutdown(s, 1);
        *err = EPROTO;
        return -1;
    }
}

int tls_pending(const struct conn *c)
{
    return SSL_has_pending(c->tls);
}

/* One TLS record's payload: small output pieces are gathered into one record. */
#define TLS_GATHER 16384
static __thread char gather[TLS_GATHER];

int tls_flush(struct conn *c)
{
    SSL *s = c->tls;

    for (;;) {
        struct iovec iov[CONN_IOV_MAX];
        int n = conn_out_iov(c, iov, CONN_IOV_MAX), r;
        const char *p;
        size_t len;

        if (n == 0) {
            conn_reset_output(c);
            return 0;
        }
        if (n == 1 || iov[0].iov_len >= TLS_GATHER) {
            p = iov[0].iov_base;
            len = iov[0].iov_len;
        } else {
            /* A retry after WANT_WRITE passes the same leading bytes again (the pending output
             * only grows at its end) and at least as many as the record OpenSSL holds. */
            len = 0;
            for (int i = 0; i < n && len < TLS_GATHER; i++) {
                size_t k = iov[i].iov_len < TLS_GATHER - len ? iov[i].iov_len : TLS_GATHER - len;
                memcpy(gather + len, iov[i].iov_base, k);
                len += k;
            }
            p = gather;
        }
        r = SSL_write(s, p, len > INT_MAX ? INT_MAX : (int)len);
        if (r > 0) {
            if (conn_sent(c, (size_t)r))
                return 0;
            continue;
        }
        switch (SSL_get_error(s, r)) {
        case SSL_ERROR_WANT_WRITE:
        case SSL_ERROR_WANT_READ:
            return 0;
        default:
            ERR_clear_error();
            SSL_set_quiet_shutdown(s, 1);
            return -1;
        }
    }
}

/* ---- the client side: a replica's link to its primary (tls-replication) ---- */

void *tls_client_open(int fd, int timeout_ms, char *err, size_t cap)
{
    char cert[1024], key[1024], pass[512], ca_file[1024], ca_dir[1024], why[256];
    SSL_CTX *c = SSL_CTX_new(TLS_client_method());
    SSL *s = NULL;

    if (!c) {
        snprintf(err, cap, "Failed to create the TLS client context");
        return NULL;
    }
    /* Redis: the client certificate is tls-client-cert-file when set, else tls-cert-file */
    config_str(cfg.tls_client_cert_file, cert, sizeof(cert));
    config_str(cfg.tls_client_key_file, key, sizeof(key));
    config_str(cfg.tls_client_key_file_pass, pass, sizeof(pass));
    if (!cert[0]) {
        config_str(cfg.tls_cert_file, cert, sizeof(cert));
        config_str(cfg.tls_key_file, key, sizeof(key));
        config_str(cfg.tls_key_file_pass, pass, sizeof(pass));
    }
    config_str(cfg.tls_ca_cert_file, ca_file, sizeof(ca_file));
    config_str(cfg.tls_ca_cert_dir, ca_dir, sizeof(ca_dir));
    SSL_CTX_set_options(c, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    if (pass[0])
        SSL_CTX_set_default_passwd_cb_userdata(c, pass);
    if (cert[0] && (SSL_CTX_use_certificate_chain_file(c, cert) <= 0 ||
                    SSL_CTX_use_PrivateKey_file(c, key, SSL_FILETYPE_PEM) <= 0)) {
        ssl_errstr(why, sizeof(why));
        snprintf(err, cap, "Failed to load the client certificate %s: %s", cert, why);
        goto fail;
    }
    SSL_CTX_set_default_passwd_cb_userdata(c, NULL);
    if (ca_file[0] || ca_dir[0]) {
        if (SSL_CTX_load_verify_locations(c, ca_file[0] ? ca_file : NULL,
                                          ca_dir[0] ? ca_dir : NULL) <= 0) {
            ssl_errstr(why, sizeof(why));
            snprintf(err, cap, "Failed to configure CA certificate(s): %s", why);
            goto fail;
        }
        SSL_CTX_set_verify(c, SSL_VERIFY_PEER, NULL);
    }
    s = SSL_new(c);
    if (!s || !SSL_set_fd(s, fd)) {
        snprintf(err, cap, "Failed to create the TLS session");
        goto fail;
    }
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)); /* a stuck handshake ends */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (SSL_connect(s) != 1) {
        ssl_errstr(why, sizeof(why));
        snprintf(err, cap, "TLS handshake with the primary failed: %s", why);
        goto fail;
    }
    memset(pass, 0, sizeof(pass));
    SSL_CTX_free(c); /* the session keeps its reference */
    return s;
fail:
    memset(pass, 0, sizeof(pass));
    SSL_free(s);
    SSL_CTX_free(c);
    ERR_clear_error();
    return NULL;
}

ssize_t tls_client_read(void *s, void *buf, size_t n)
{
    size_t got = 0;
    int r = SSL_read_ex(s, buf, n, &got);
    if (r == 1)
        return (ssize_t)got;
    int e = SSL_get_error(s, r);
    ERR_clear_error();
    return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

int tls_client_write(void *s, const void *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t w = 0;
        if (SSL_write_ex(s, (const char *)p + done, n - done, &w) != 1) {
            ERR_clear_error();
            return -1;
        }
        done += w;
    }
    return 0;
}

int tls_client_pending(void *s)
{
    return SSL_pending(s) > 0;
}

void tls_client_close(void *s)
{
    if (!s)
        return;
    SSL_shutdown(s);
    SSL_free(s);
    ERR_clear_error();
}
