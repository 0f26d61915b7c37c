"""Scripts are atomic across worker threads, whatever stripes they hold (see the "Locking"
comment of src/script/cmd_script.c): clients run read-modify-write scripts over shared keys on
both workers while others send plain commands on both protocols, and invariants are checked
during and after 100,000 scripts (TC_SCRIPT_N), on the release and the sanitizer builds, from 8
script clients:

- transfers between 16 accounts (a script that declares its keys, so it runs holding only
  their stripes once learned) keep the total, and an audit script reading every account never
  sees a different total (no torn read);
- a counter bumped by a script that names its key only in ARGV (undeclared: it learns to hold
  every stripe) and by memcached `incr` on the same key loses no update;
- a script that declares one key and, on some runs, writes an undeclared one after writing the
  first (it takes that stripe mid-run) loses no update against plain INCRs of that key (500
  variants of it, as a script does that only once per worker thread)."""
import os
import random
import socket
import threading

import pytest

import tcharness

pytestmark = pytest.mark.sanitize

TOTAL_SCRIPTS = int(os.environ.get("TC_SCRIPT_N", "100000"))
ACCOUNTS = ["acc:%d" % i for i in range(16)]
START = 1000

TRANSFER = """
local a = tonumber(redis.call('GET', KEYS[1]))
local amt = tonumber(ARGV[1])
if a < amt then return 0 end
for i = 1, 300 do a = a + 0 end -- widen the window a torn read needs
redis.call('SET', KEYS[1], a - amt)
local b = tonumber(redis.call('GET', KEYS[2]))
redis.call('SET', KEYS[2], b + amt)
return 1
"""
AUDIT = """
local s = 0
for i = 1, #KEYS do s = s + tonumber(redis.call('GET', KEYS[i])) end
return s
"""
UNDECLARED = """
local k = 'ctr:' .. ARGV[1]
local v = tonumber(redis.call('GET', k))
redis.call('SET', k, v + 1)
return v + 1
"""
BRANCHY = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
redis.call('SET', KEYS[1], v + 1)
if ARGV[1] == '1' then
  local w = tonumber(redis.call('GET', ARGV[2]) or '0')
  for i = 1, 3000 do w = w + 0 end -- widen the window a lost update needs
  redis.call('SET', ARGV[2], w + 1)
end
return v + 1
"""


@pytest.fixture
def tc():
    srv = tcharness.start_twincache(mc=True, check=True)
    yield srv
    srv.stop()


def run_threads(targets):
    errors = []

    def wrap(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=wrap, args=(fn,)) for fn in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join(600)
    assert not any(t.is_alive() for t in ts), "a client thread hangs"
    assert not errors, errors


def test_scripts_atomic_across_workers(tc):
    r = tc.client()
    r.mset({k: START for k in ACCOUNTS})
    r.set("ctr:x", 0)
    r.set("br:a", 0)
    r.set("br:b", 0)
    sha = {name: r.script_load(body) for name, body in
           (("t", TRANSFER), ("a", AUDIT), ("u", UNDECLARED), ("b", BRANCHY))}
    per = TOTAL_SCRIPTS // 10
    counts = {"u": 0, "b": 0, "b1": 0, "incr": 0, "mc": 0}
    stop = threading.Event()

    def transfers(seed):
        def go():
            rnd = random.Random(seed)
            c = tc.client()
            done = 0
            while done < per * 1.6:
                p = c.pipeline(transaction=False)
                for _ in range(50):
                    a, b = rnd.sample(ACCOUNTS, 2)
                    p.evalsha(sha["t"], 2, a, b, rnd.randint(1, 50))
                p.execute()
                done += 50
        return go

    def audits():
        c = tc.client()
        done = 0
        while done < per:
            p = c.pipeline(transaction=False)
            for _ in range(20):
                p.evalsha(sha["a"], len(ACCOUNTS), *ACCOUNTS)
            for s in p.execute():
                assert s == START * len(ACCOUNTS), "torn read: total %d" % s
            done += 20

    def undeclared():
        c = tc.client()
        for _ in range(per // 50):
            p = c.pipeline(transaction=False)
            for _ in range(50):
                p.evalsha(sha["u"], 0, "x")
            p.execute()
            counts["u"] += 50

    def branchy():
        # a script stops taking stripes mid-run once it touched an undeclared one (it holds
        # every stripe from then on), so each of many variants is taught that it declares its
        # keys (a first run that does not branch), then branches
        c = tc.client()
        rnd = random.Random(7)
        for i in range(per // 20):
            v = c.script_load("-- variant %d\n%s" % (i, BRANCHY))
            p = c.pipeline(transaction=False)
            p.evalsha(v, 1, "br:a", "0", "br:b")
            counts["b"] += 1
            for _ in range(9):
                one = rnd.random() < 0.7
                p.evalsha(v, 1, "br:a", "1" if one else "0", "br:b")
                counts["b"] += 1
                counts["b1"] += one
            p.execute()

    def plain_incr():
        c = tc.client()
        while not stop.is_set():
            p = c.pipeline(transaction=False)
            for _ in range(20):
                p.incr("br:b")
            p.execute()
            counts["incr"] += 20

    def mc_incr():
        s = socket.create_connection(("127.0.0.1", tc.mc_port), timeout=30)
        f = s.makefile("rb")
        while not stop.is_set():
            s.sendall(b"incr ctr:x 1\r\n" * 20)
            for _ in range(20):
                line = f.readline()
                assert line.strip().isdigit(), line
            counts["mc"] += 20
        s.close()

    def scripts():
        run_threads([transfers(1), transfers(2), transfers(3), transfers(4), transfers(5),
                     audits, undeclared, branchy])
        stop.set()

    # several plain clients, so that both workers serve some (a connection stays on the worker
    # that accepted it)
    run_threads([scripts, plain_incr, plain_incr, plain_incr, mc_incr, mc_incr])

    vals = [int(v) for v in r.mget(ACCOUNTS)]
    assert sum(vals) == START * len(ACCOUNTS)
    assert int(r.get("ctr:x")) == counts["u"] + counts["mc"]
    assert int(r.get("br:a")) == counts["b"]
    assert int(r.get("br:b")) == counts["b1"] + counts["incr"]
    assert counts["mc"] > 0 and counts["incr"] > 0
    print("scripts", counts, r.info("stats")["total_commands_processed"])
