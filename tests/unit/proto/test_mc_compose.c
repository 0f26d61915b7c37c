/* memcached reply composition, byte for byte: status lines, VALUE headers and blocks (with and
 * without CAS, header only for values sent by reference), incr numbers, STAT lines, and meta
 * response lines with their return flags (base64 keys, opaque and key in request order).
 * Links only tc_proto and tc_core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "proto/mc.h"
#include "proto/mc_compose.h"
#include "tap.h"

static struct buf b;

static void reset(void)
{
    b.rpos = b.wpos = 0;
}

#define is_out(want, ...) is_mem(b.data + b.rpos, buf_len(&b), (want), strlen(want), __VA_ARGS__)

static void test_text(void)
{
    reset();
    ok(mc_compose_line(&b, "STORED") == 0, "line appended");
    mc_compose_line(&b, "");
    is_out("STORED\r\n\r\n", "status line and a bare CRLF");

    reset();
    mc_compose_u64(&b, 18446744073709551615ULL);
    is_out("18446744073709551615\r\n", "incr number");

    reset();
    mc_compose_value(&b, "key", 3, 42, "hello", 5, 0, 0);
    is_out("VALUE key 42 5\r\nhello\r\n", "get hit");
    reset();
    mc_compose_value(&b, "k", 1, 0, "", 0, 1, 99);
    is_out("VALUE k 0 0 99\r\n\r\n", "gets hit of an empty value");
    reset();
    mc_compose_value(&b, "big", 3, 4294967295u, NULL, 100000, 1, 1);
    is_out("VALUE big 4294967295 100000 1\r\n", "header only for a value sent by reference");

    reset();
    mc_compose_stat_u64(&b, "curr_items", 12);
    mc_compose_stat(&b, "version", "%s", "1.6.18");
    is_out("STAT curr_items 12\r\nSTAT version 1.6.18\r\n", "STAT lines");
    reset();
    {
        char big[1000];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        mc_compose_stat(&b, "long", "%s", big);
        ok(buf_len(&b) == 511 && !memcmp(b.data + b.wpos - 2, "\r\n", 2),
           "a STAT line is cut to fit 512 bytes, CRLF kept");
    }
}

/* A meta request's tokens: tok[0] the command, tok[1] the key, then the flags; ntok counts
 * one more, as memcached does. */
static void meta_req(struct mc_req *r, const char *key, int b64, const char **flags, int n)
{
    memset(r, 0, sizeof(*r));
    r->tok[0].p = "mg";
    r->tok[0].n = 2;
    r->tok[1].p = key;
    r->tok[1].n = strlen(key);
    for (int i = 0; i < n; i++) {
        r->tok[2 + i].p = flags[i];
        r->tok[2 + i].n = strlen(flags[i]);
    }
    r->ntok = 3 + n;
    r->key_b64 = (uint8_t)b64;
    if (b64) {
        size_t kn = mc_base64_decode(key, strlen(key), r->keybuf, sizeof(r->keybuf));
        r->key.p = r->keybuf;
        r->key.n = kn;
    } else {
        r->key = r->tok[1];
    }
}

static void test_meta(void)
{
    struct mc_req r;
    struct mc_line l;
    const char *f1[] = {"k", "Oabc", "v", "c"};
    const char *f2[] = {"Oxyz", "b", "k"};

    meta_req(&r, "foo", 0, f1, 4);
    reset();
    l.n = 0;
    mc_line_put(&l, "HD", 2);
    mc_line_flag_u64(&l, 'c', 123);
    mc_line_put(&l, " t", 2);
    mc_line_i64(&l, -1);
    mc_line_opaque_key(&l, &r);
    ok(mc_line_end(&b, &l) == 0, "meta line appended");
    is_out("HD c123 t-1 kfoo Oabc\r\n", "return flags, then k and O in request order");

    meta_req(&r, "Zm9v", 1, f2, 3); /* "foo" in base64 */
    reset();
    l.n = 0;
    mc_line_str(&l, "EN");
    mc_line_opaque_key(&l, &r);
    mc_line_end(&b, &l);
    is_out("EN Oxyz kZm9v b\r\n", "a base64 key is returned encoded, with b");

    reset();
    l.n = 0;
    mc_line_put(&l, "HD", 2);
    for (int i = 0; i < 2000; i++)
        mc_line_put(&l, " s1", 3);
    mc_line_end(&b, &l);
    ok(buf_len(&b) <= MC_LINE_CAP, "pieces past the line's capacity are dropped");
}

int main(void)
{
    test_text();
    test_meta();
    buf_deinit(&b);
    return tap_done();
}
