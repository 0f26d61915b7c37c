/* HTTP/1.x request heads (RFC 9112): request line, header fields, the empty line. Lines end in
 * CRLF or a bare LF (which RFC 9112 lets a recipient accept). The target is origin-form
 * ("/path?query"), absolute-form ("http://host/path": its path) or "*". */
#define _GNU_SOURCE
#include <string.h>
#include <strings.h>

#include "proto/http.h"

static int is_tchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
        return 1;
    return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* The line starting at p (within end): its length without the CR LF in *len, and where the
 * next line starts. NULL when no LF is there yet. */
static const char *line_end(const char *p, const char *end, size_t *len)
{
    const char *lf = memchr(p, '\n', (size_t)(end - p));
    if (!lf)
        return NULL;
    *len = (size_t)(lf - p);
    if (*len && p[*len - 1] == '\r')
        (*len)--;
    return lf + 1;
}

/* method SP request-target SP HTTP-version */
static int request_line(const char *p, size_t len, struct http_req *req)
{
    size_t i = 0, m, t0;

    while (i < len && is_tchar((unsigned char)p[i]))
        i++;
    if (i == 0 || i > 16 || i == len || p[i] != ' ')
        return HTTP_ERR_SYNTAX;
    m = i;
    if (m == 3 && !memcmp(p, "GET", 3))
        req->method = HTTP_GET;
    else if (m == 4 && !memcmp(p, "HEAD", 4))
        req->method = HTTP_HEAD;
    else
        req->method = HTTP_OTHER;
    t0 = ++i;
    while (i < len && (unsigned char)p[i] > ' ' && (unsigned char)p[i] < 0x7f)
        i++;
    if (i == t0 || i == len || p[i] != ' ')
        return HTTP_ERR_SYNTAX;
    req->path = p + t0;
    req->path_len = i - t0;
    if (req->path[0] != '/' && !(req->path_len == 1 && req->path[0] == '*')) {
        /* absolute-form (RFC 9112 3.2.2, which a server must accept): scheme://authority/path */
        const char *sep = memmem(req->path, req->path_len, "://", 3), *slash;
        if (!sep)
            return HTTP_ERR_SYNTAX;
        sep += 3;
        slash = memchr(sep, '/', (size_t)(req->path + req->path_len - sep));
        if (!slash)
            return HTTP_ERR_SYNTAX; /* no path: not a resource this server has */
        req->path_len -= (size_t)(slash - req->path);
        req->path = slash;
    }
    {
        const char *q = memchr(req->path, '?', req->path_len);
        if (q)
            req->path_len = (size_t)(q - req->path);
    }
    i++;
    if (len - i != 8 || memcmp(p + i, "HTTP/", 5) || p[i + 6] != '.' || p[i + 5] < '0' ||
        p[i + 5] > '9' || p[i + 7] < '0' || p[i + 7] > '9')
        return HTTP_ERR_SYNTAX;
    if (p[i + 5] != '1')
        return HTTP_ERR_VERSION;
    req->minor = p[i + 7] - '0';
    req->keep_alive = req->minor >= 1;
    return HTTP_OK;
}

/* 1 when the comma-separated list v[0..n) holds token tok (any case) */
static int list_has(const char *v, size_t n, const char *tok)
{
    size_t tl = strlen(tok), i = 0;

    while (i < n) {
        size_t s, e;
        while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
            i++;
        s = i;
        while (i < n && v[i] != ',')
            i++;
        e = i;
        while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
            e--;
        if (e - s == tl && !strncasecmp(v + s, tok, tl))
            return 1;
    }
    return 0;
}

/* field-name ":" OWS field-value OWS */
static int header(const char *p, size_t len, struct http_req *req)
{
    size_t i = 0, v, e;

    while (i < len && is_tchar((unsigned char)p[i]))
        i++;
    if (i == 0 || i == len || p[i] != ':')
        return HTTP_ERR_SYNTAX; /* also obsolete line folding (a line starting with SP/HT) */
    for (v = i + 1; v < len; v++) {
        unsigned char ch = (unsigned char)p[v];
        if ((ch < ' ' && ch != '\t') || ch == 0x7f)
            return HTTP_ERR_SYNTAX;
    }
    v = i + 1;
    while (v < len && (p[v] == ' ' || p[v] == '\t'))
        v++;
    e = len;
    while (e > v && (p[e - 1] == ' ' || p[e - 1] == '\t'))
        e--;
    if (i == 10 && !strncasecmp(p, "Connection", 10)) {
        if (list_has(p + v, e - v, "close"))
            req->keep_alive = 0;
        else if (list_has(p + v, e - v, "keep-alive"))
            req->keep_alive = 1;
    } else if (i == 14 && !strncasecmp(p, "Content-Length", 14)) {
        if (e == v)
            return HTTP_ERR_SYNTAX;
        for (size_t k = v; k < e; k++) {
            if (p[k] < '0' || p[k] > '9')
                return HTTP_ERR_SYNTAX;
            if (p[k] != '0')
                return HTTP_ERR_BODY;
        }
    } else if (i == 17 && !strncasecmp(p, "Transfer-Encoding", 17)) {
        return HTTP_ERR_BODY;
    }
    return HTTP_OK;
}

int http_parse(const char *p, size_t n, struct http_req *req, size_t *used)
{
    const char *end = p + (n < HTTP_MAX_HEAD ? n : HTTP_MAX_HEAD), *cur = p, *next;
    size_t len;
    int r, nheaders = 0;

    memset(req, 0, sizeof(*req));
    /* RFC 9112 2.2: empty lines before the request line are ignored */
    while (cur < end && (*cur == '\r' || *cur == '\n')) {
        if (*cur == '\r' && (cur + 1 == end || cur[1] != '\n'))
            break;
        cur += *cur == '\r' ? 2 : 1;
    }
    next = line_end(cur, end, &len);
    if (!next)
        return n >= HTTP_MAX_HEAD ? HTTP_ERR_TOO_LARGE : HTTP_NEED_MORE;
    if ((r = request_line(cur, len, req)) != HTTP_OK)
        return r;
    for (cur = next;; cur = next) {
        next = line_end(cur, end, &len);
        if (!next)
            return n >= HTTP_MAX_HEAD ? HTTP_ERR_TOO_LARGE : HTTP_NEED_MORE;
        if (len == 0)
            break;
        if (++nheaders > HTTP_MAX_HEADERS)
            return HTTP_ERR_TOO_LARGE;
        if ((r = header(cur, len, req)) != HTTP_OK)
            return r;
    }
    *used = (size_t)(next - p);
    return HTTP_OK;
}

int http_error_code(int status, const char **reason)
{
    switch (status) {
    case HTTP_ERR_TOO_LARGE:
        *reason = "Request Header Fields Too Large";
        return 431;
    case HTTP_ERR_VERSION:
        *reason = "HTTP Version Not Supported";
        return 505;
    case HTTP_ERR_BODY:
        *reason = "Content Too Large";
        return 413;
    default:
        *reason = "Bad Request";
        return 400;
    }
}
