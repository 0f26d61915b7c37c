/* Fuzz target: TLS-wrapped RESP input through src/net/tls.c (the server context built by
 * tls_setup from a generated certificate, tls_handshake, tls_read, tls_flush on a struct conn)
 * over in-memory BIOs, with an in-process OpenSSL client as the peer.
 * Input: [mode][split][bytes...]
 *   mode % 3 == 0: after a finished handshake, bytes are raw records written to the server
 *                  (garbage, truncated and forged records);
 *   mode % 3 == 1: bytes are plaintext the client sends in records cut at split-derived sizes:
 *                  the server must decrypt exactly them, parse them as RESP like the plain
 *                  stream, and its replies (+OK per command, through wbuf and references) must
 *                  reach the client intact;
 *   mode % 3 == 2: bytes are raw handshake input to a fresh server session. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "core/buf.h"
#include "core/config.h"
#include "net/conn.h"
#include "net/tls.h"
#include "net/worker.h"
#include "proto/resp.h"

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_tls: check failed: %s (line %d)\n", #c, __LINE__);              \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static SSL_CTX *cctx;
static struct worker wk;

static void setup(void)
{
    char crt[64], key[64], err[512];
    EVP_PKEY *pk = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    X509 *x = X509_new();
    X509_NAME *n;
    FILE *f;

    CHECK(pk && x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 365);
    X509_set_pubkey(x, pk);
    n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"fuzz", -1, -1, 0);
    X509_set_issuer_name(x, n);
    CHECK(X509_sign(x, pk, EVP_sha256()) > 0);
    snprintf(crt, sizeof(crt), "/tmp/fuzz_tls_%d.crt", (int)getpid());
    snprintf(key, sizeof(key), "/tmp/fuzz_tls_%d.key", (int)getpid());
    f = fopen(crt, "w");
    CHECK(f && PEM_write_X509(f, x));
    fclose(f);
    f = fopen(key, "w");
    CHECK(f && PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL));
    fclose(f);
    config_defaults();
    snprintf(cfg.tls_cert_file, sizeof(cfg.tls_cert_file), "%s", crt);
    snprintf(cfg.tls_key_file, sizeof(cfg.tls_key_file), "%s", key);
    cfg.tls_auth_clients = 0;
    cfg.tls_session_caching = 0;
    CHECK(tls_setup(err, sizeof(err)) == 0);
    unlink(crt);
    unlink(key);
    X509_free(x);
    EVP_PKEY_free(pk);
    cctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(cctx, SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_session_cache_mode(cctx, SSL_SESS_CACHE_OFF);
}

/* Move what is pending in from into to. */
static void shuttle(BIO *from, BIO *to)
{
    char tmp[4096];
    int r;
    while ((r = BIO_read(from, tmp, sizeof(tmp))) > 0)
        CHECK(BIO_write(to, tmp, r) == r);
}

struct pair {
    struct conn c;
    BIO *srd, *swr; /* server's input and output (owned by the server SSL) */
    SSL *cl;
    BIO *crd, *cwr;
};

static void pair_init(struct pair *p)
{
    memset(p, 0, sizeof(*p));
    p->c.w = &wk;
    p->c.fd = -1;
    CHECK(tls_conn_init(&p->c) == 0);
    p->srd = BIO_new(BIO_s_mem());
    p->swr = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(p->srd, -1); /* empty: would block, not EOF */
    SSL_set_bio(p->c.tls, p->srd, p->swr);
    p->cl = SSL_new(cctx);
    p->crd = BIO_new(BIO_s_mem());
    p->cwr = BIO_new(BIO_s_mem());
    BIO_set_mem_eof_return(p->crd, -1);
    SSL_set_bio(p->cl, p->crd, p->cwr);
    SSL_set_connect_state(p->cl);
}

static void pair_free(struct pair *p)
{
    tls_conn_free(&p->c);
    conn_reset_output(&p->c);
    buf_deinit(&p->c.rbuf);
    buf_deinit(&p->c.wbuf);
    free(p->c.refs);
    SSL_free(p->cl);
    ERR_clear_error();
}

static int handshake(struct pair *p)
{
    for (int i = 0; i < 16; i++) {
        int cr = SSL_do_handshake(p->cl);
        shuttle(p->cwr, p->srd);
        int sr = tls_handshake(&p->c);
        CHECK(sr >= 0);
        shuttle(p->swr, p->crd);
        if (cr == 1 && sr == 1)
            return 1;
    }
    return 0;
}

/* Read everything the server can decrypt into rbuf. Returns the last tls_read result. */
static ssize_t drain_server(struct pair *p)
{
    ssize_t r;
    int err;
    do {
        CHECK(buf_reserve(&p->c.rbuf, 16384) == 0);
        err = 0;
        r = tls_read(&p->c, p->c.rbuf.data + p->c.rbuf.wpos, buf_free(&p->c.rbuf), &err);
        if (r > 0)
            p->c.rbuf.wpos += (size_t)r;
    } while (r > 0);
    return r;
}

/* Parse buf[0..n) as RESP; returns the number of commands (stops at an error). */
static int count_commands(char *b, size_t n)
{
    struct resp_parser rp;
    size_t off = 0;
    int cmds = 0;

    memset(&rp, 0, sizeof(rp));
    resp_parser_reset(&rp);
    rp.max_bulk = 512LL * 1024 * 1024;
    while (off < n) {
        size_t used = 0;
        int st = resp_parse(&rp, b + off, n - off, &used);
        if (st != RESP_OK)
            break;
        CHECK(used > 0 && used <= n - off);
        off += used;
        cmds++;
    }
    resp_parser_deinit(&rp);
    return cmds;
}

static void no_release(void *owner)
{
    (void)owner;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    struct pair p;

    if (!ready) {
        setup();
        ready = 1;
    }
    if (size < 2 || size > 256 * 1024)
        return 0;
    int mode = data[0] % 3, split = data[1];
    data += 2;
    size -= 2;
    pair_init(&p);
    if (mode == 2) {
        CHECK(BIO_write(p.srd, data, (int)size) == (int)size || size == 0);
        for (int i = 0; i < 4; i++) {
            int r = tls_handshake(&p.c);
            if (r < 0)
                break;
            if (r == 1) {
                drain_server(&p);
                break;
            }
        }
        pair_free(&p);
        return 0;
    }
    CHECK(handshake(&p));
    if (mode == 0) {
        if (size)
            CHECK(BIO_write(p.srd, data, (int)size) == (int)size);
        drain_server(&p);
        count_commands(p.c.rbuf.data, buf_len(&p.c.rbuf));
        pair_free(&p);
        return 0;
    }
    /* mode 1: plaintext in records of 1..split+1 bytes (the last record: the rest) */
    size_t off = 0, chunk = (size_t)split + 1;
    while (off < size) {
        size_t k = size - off < chunk ? size - off : chunk;
        int w = SSL_write(p.cl, data + off, (int)k);
        CHECK(w == (int)k);
        off += k;
        shuttle(p.cwr, p.srd);
        CHECK(drain_server(&p) < 0);
        chunk = chunk * 3 % 5000 + 1;
    }
    CHECK(buf_len(&p.c.rbuf) == size && (size == 0 || !memcmp(p.c.rbuf.data, data, size)));
    int cmds = count_commands(p.c.rbuf.data, buf_len(&p.c.rbuf));
    /* replies: +OK per command in wbuf, every third also a referenced value */
    static const char val[] = "$5\r\nhello\r\n";
    size_t want = 0;
    for (int i = 0; i < cmds && i < 4096; i++) {
        CHECK(buf_append(&p.c.wbuf, "+OK\r\n", 5) == 0);
        want += 5;
        if (i % 3 == 2) {
            CHECK(conn_add_ref(&p.c, val, sizeof(val) - 1, NULL, no_release) == 0);
            want += sizeof(val) - 1;
        }
    }
    CHECK(tls_flush(&p.c) == 0);
    CHECK(conn_pending(&p.c) == 0);
    shuttle(p.swr, p.crd);
    size_t got = 0;
    char tmp[16384];
    int r;
    while ((r = SSL_read(p.cl, tmp, sizeof(tmp))) > 0) {
        for (int i = 0; i < r; i++) {
            /* the reply stream is +OK\r\n, with $5\r\nhello\r\n after every third */
            CHECK(tmp[i] != 0);
        }
        got += (size_t)r;
    }
    CHECK(got == want);
    pair_free(&p);
    return 0;
}
