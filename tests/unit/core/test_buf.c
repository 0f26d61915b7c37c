/* buf: growth, append, compaction, shrink, deinit. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "tap.h"

static void test_append_grow(void)
{
    struct buf b = {0};
    char chunk[100];

    is_int(buf_len(&b), 0, "empty buffer has length 0");
    is_int(buf_free(&b), 0, "empty buffer has no room");
    ok(b.data == NULL, "no storage before the first reserve");
    ok(buf_append(&b, "hello", 5) == 0, "append");
    is_int(b.cap, 1024, "first capacity is 1024");
    is_mem(b.data + b.rpos, buf_len(&b), "hello", 5, "content");
    int fails = 0;
    for (int i = 0; i < 100; i++) {
        memset(chunk, 'a' + i % 26, sizeof(chunk));
        fails += buf_append(&b, chunk, sizeof(chunk)) != 0;
    }
    is_int(fails, 0, "100 appends succeed");
    is_int(buf_len(&b), 5 + 100 * 100, "length after many appends");
    ok(b.cap >= buf_len(&b) && (b.cap & (b.cap - 1)) == 0, "capacity is a power of two (%zu)",
       b.cap);
    int good = 1;
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < 100; j++)
            good &= b.data[5 + i * 100 + j] == 'a' + i % 26;
    ok(good, "every appended byte kept across reallocations");
    ok(buf_append(&b, "", 0) == 0, "append of 0 bytes");
    ok(buf_reserve(&b, 100000) == 0 && buf_free(&b) >= 100000, "reserve 100000");
    buf_deinit(&b);
    ok(b.data == NULL && b.cap == 0 && b.rpos == 0 && b.wpos == 0, "deinit clears");
    buf_deinit(&b);
    ok(1, "deinit twice is harmless");
}

static void test_compact(void)
{
    struct buf b = {0};
    char big[1000];

    memset(big, 'x', sizeof(big));
    buf_append(&b, big, 1000);
    b.rpos = 600; /* 600 bytes consumed, 400 unread */
    memcpy(b.data + 600, "UNREAD", 6);
    char *before = b.data;
    /* 24 free at the end; 624 after compaction: compacts in place instead of growing */
    ok(buf_reserve(&b, 500) == 0, "reserve that fits after compaction");
    ok(b.data == before && b.cap == 1024, "no reallocation when compaction makes room");
    is_int(b.rpos, 0, "rpos reset by compaction");
    is_int(b.wpos, 400, "wpos moved back");
    is_mem(b.data, 6, "UNREAD", 6, "unread bytes moved to the front");

    b.rpos = 100; /* below half: grows instead of compacting */
    ok(buf_reserve(&b, 700) == 0, "reserve beyond capacity");
    ok(b.cap >= 400 + 700, "grown");
    is_int(b.rpos, 100, "rpos kept when growing");

    b.rpos = b.wpos;
    buf_compact(&b);
    ok(b.rpos == 0 && b.wpos == 0, "compact of a fully read buffer empties it");
    buf_compact(&b);
    ok(b.rpos == 0 && b.wpos == 0, "compact at rpos 0 is a no-op");
    buf_deinit(&b);
}

static void test_shrink(void)
{
    struct buf b = {0};

    ok(buf_reserve(&b, 100000) == 0, "reserve large");
    size_t big = b.cap;
    buf_append(&b, "0123456789", 10);
    b.rpos = 4;
    buf_shrink(&b, 4096);
    is_int(b.cap, 4096, "shrunk to keep");
    is_int(b.rpos, 0, "compacted by shrink");
    is_mem(b.data, buf_len(&b), "456789", 6, "unread bytes survive a shrink");

    buf_shrink(&b, 8192);
    is_int(b.cap, 4096, "shrink to a larger keep does nothing");

    ok(buf_reserve(&b, big) == 0, "grow again");
    char *p = malloc(5000);
    memset(p, 'z', 5000);
    buf_append(&b, p, 5000);
    size_t cap = b.cap;
    buf_shrink(&b, 1024);
    is_int(b.cap, cap, "no shrink below the unread length");
    is_int(buf_len(&b), 5006, "content kept");

    b.rpos = b.wpos;
    buf_shrink(&b, 1024);
    ok(b.data == NULL && b.cap == 0, "shrink of an empty buffer releases the storage");
    ok(buf_append(&b, "again", 5) == 0 && buf_len(&b) == 5, "usable after release");
    free(p);
    buf_deinit(&b);
}

int main(void)
{
    test_append_grow();
    test_compact();
    test_shrink();
    return tap_done();
}
