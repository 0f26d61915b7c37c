"""WAIT with no replica connected, against redis-server 7.0: 0 at once for 0 replicas, 0 after
the timeout otherwise, 0 inside MULTI, CLIENT UNBLOCK answering it early, Redis's errors."""
import threading
import time

from conftest import call


def test_wait_replies_as_redis(d):
    for args in ((0, 0), (-1, 10), ("x", 1), (1, -1), (1, 1.5), (1, "x"), (1,), (1, 2, 3)):
        d("WAIT", *args)
    d("MULTI")
    d("WAIT", 1, 0)
    d("EXEC")


def test_wait_times_out_and_unblocks(tc_server, redis_server):
    for srv in (tc_server, redis_server):
        c = srv.client()
        t0 = time.time()
        assert call(c, "WAIT", 1, 250) == 0
        assert time.time() - t0 >= 0.2
        waiter = srv.client(socket_timeout=10)
        wid = call(waiter, "CLIENT", "ID")
        got = []
        t = threading.Thread(target=lambda: got.append(call(waiter, "WAIT", 3, 0)))
        t.start()
        time.sleep(0.2)
        assert call(c, "CLIENT", "UNBLOCK", wid) == 1
        t.join(5)
        assert got == [0]
