"""redis-py's Lock (its Lua scripts: release, extend, reacquire) against redis-server and
twincache: the same outcomes on both."""

import threading
import time

import pytest
from redis.exceptions import LockError, LockNotOwnedError


def test_acquire_extend_release_reacquire(server):
    c = server.client(decode=True)
    lock = c.lock("res:1", timeout=5)
    assert lock.acquire(blocking=False)
    assert c.exists("res:1") == 1
    assert 0 < c.pttl("res:1") <= 5000
    assert lock.extend(10)
    assert 5000 < c.pttl("res:1") <= 15000
    assert lock.extend(3, replace_ttl=True)
    assert 0 < c.pttl("res:1") <= 3000
    assert lock.reacquire()
    assert 0 < c.pttl("res:1") <= 5000
    other = c.lock("res:1", timeout=5)
    assert not other.acquire(blocking=False)
    assert lock.owned()
    lock.release()
    assert c.exists("res:1") == 0
    with pytest.raises(LockError):
        lock.release()
    assert other.acquire(blocking=False)
    # a token that is not ours: release, extend and reacquire refuse
    with pytest.raises(LockNotOwnedError):
        lock.local.token = b"someone-else"
        lock.release()
    other.release()


def test_lock_timeout_expires(server):
    c = server.client(decode=True)
    lock = c.lock("res:2", timeout=0.3)
    assert lock.acquire(blocking=False)
    time.sleep(0.6)
    assert c.exists("res:2") == 0
    with pytest.raises(LockNotOwnedError):
        lock.extend(1)
    with pytest.raises(LockNotOwnedError):
        lock.release()
    # blocking_timeout: give up while someone else holds it
    holder = c.lock("res:2", timeout=5)
    assert holder.acquire()
    waiter = c.lock("res:2", timeout=5, blocking_timeout=0.2)
    assert not waiter.acquire()
    holder.release()
    assert waiter.acquire()
    waiter.release()


def test_contention_no_lost_update(server):
    nthreads, per = 6, 40
    c0 = server.client(decode=True)
    c0.set("counter", 0)

    def work():
        c = server.client(decode=True)
        for _ in range(per):
            with c.lock("res:ctr", timeout=5, sleep=0.001):
                v = int(c.get("counter"))
                c.set("counter", v + 1)
        c.close()

    ts = [threading.Thread(target=work) for _ in range(nthreads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert int(c0.get("counter")) == nthreads * per
    assert c0.exists("res:ctr") == 0
