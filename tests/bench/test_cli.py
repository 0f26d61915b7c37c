"""Command line, generic runs, open loop and JSON."""
import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import run_tb

FLAGS = ["--server", "--port", "--protocol", "--target", "--ketama", "--server-pid", "--threads",
         "--clients", "--pipeline", "--pipeline-batch", "--requests", "--test-time", "--rate", "--arrivals", "--timeout",
         "--warmup", "--preload", "--preload-pipeline", "--flush", "--ratio", "--command", "--incr", "--multi-get",
         "--data-size", "--data-size-range", "--data-size-list", "--data-record", "--key-pattern",
         "--key-minimum", "--key-maximum", "--key-prefix", "--key-zipf-exp", "--preset", "--scale",
         "--tests", "--json", "--html", "--help"]


def test_help_explains_every_flag(twinbench):
    r = subprocess.run([twinbench, "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for f in FLAGS:
        assert f in r.stdout, f


def test_bad_arguments(twinbench):
    for args in (["--ratio", "x"], ["--key-pattern", "Q"], ["--target", "x=http://a:1"],
                 ["--preset", "seed999"], ["--bogus"]):
        r = subprocess.run([twinbench, "--no-progress", *args], capture_output=True, text=True)
        assert r.returncode != 0, args


def test_unreachable_target_fails_cleanly(twinbench):
    r = run_tb(twinbench, "-p", "1", "-n", "10", check=False)
    assert r.returncode == 1
    assert "cannot connect" in r.stderr


def parse_json(path):
    d = json.load(open(path))
    return d["targets"][0]


def test_generic_redis_mixed_pipeline(twinbench, redis_server, tmp_path):
    js = tmp_path / "g.json"
    run_tb(twinbench, "-p", str(redis_server.port), "-t", "2", "-c", "4", "--pipeline", "16",
           "-n", "1000", "--ratio", "1:3", "--key-maximum", "499", "--preload", "--json", str(js))
    t = parse_json(js)
    run = t["runs"][0]
    assert run["ops"] == 8000 and run["connections"] == 8 and run["pipeline"] == 16
    assert run["sets"] == 2000 and run["hits"] == 6000 and run["misses"] == 0 and run["errors"] == 0


def test_preload_pipeline(twinbench, memcached_server):
    """--preload-pipeline N: the preload keeps N requests in flight per connection (bench/compare
    --with hazelcast uses 16); every key is written, so the reads all hit."""
    r = run_tb(twinbench, "-P", "memcache", "-p", str(memcached_server.port), "-t", "1", "-c", "2", "-n", "200",
               "--ratio", "0:1", "--key-prefix", "pp:", "--key-maximum", "999", "--preload",
               "--preload-pipeline", "3")
    assert "preloaded 1000 keys" in r.stderr
    assert re.search(r"hits 400 misses 0 errors 0", r.stdout), r.stdout


def test_generic_memcached_multiget_and_patterns(twinbench, memcached_server, tmp_path):
    for pat in ("S", "R", "G", "Z"):
        js = tmp_path / f"m{pat}.json"
        run_tb(twinbench, "-P", "memcache", "-p", str(memcached_server.port), "-t", "1", "-c", "2",
               "-n", "200", "--multi-get", "5", "--key-pattern", pat, "--key-maximum", "99",
               "--preload", "--data-size-range", "10-500", "--json", str(js))
        run = parse_json(js)["runs"][0]
        assert run["ops"] == 400 and run["hits"] == 2000 and run["misses"] == 0, pat


def test_command_template(twinbench, redis_server, tmp_path):
    import redis
    r = redis.Redis(port=redis_server.port)
    r.delete("tb:list")
    run_tb(twinbench, "-p", str(redis_server.port), "-t", "1", "-c", "3", "-n", "100",
           "--command", "LPUSH tb:list __data__", "-d", "7")
    assert r.llen("tb:list") == 300
    assert len(r.lindex("tb:list", 0)) == 7
    run_tb(twinbench, "-p", str(redis_server.port), "-t", "1", "-c", "1", "-n", "10",
           "--command", "PING", "--command-inline")


def test_zipf_skew(twinbench, redis_server):
    import redis
    r = redis.Redis(port=redis_server.port)
    r.flushall()
    run_tb(twinbench, "-p", str(redis_server.port), "-t", "1", "-c", "4", "-n", "2000",
           "--command", "INCR __key__", "--key-pattern", "Z", "--key-maximum", "999",
           "--key-prefix", "z:")
    hot = int(r.get("z:0") or 0)
    cold = sum(int(r.get(f"z:{i}") or 0) for i in range(900, 1000))
    assert hot > 300 and hot > cold  # rank 1 of a 0.99 zipf over 1000 keys ~ 13%


def test_open_loop_exposes_stall(twinbench, tmp_path):
    """A server paused 1 s under --rate shows a p99.9 of about a second."""
    from conftest import start_redis
    srv = start_redis()
    try:
        js = tmp_path / "o.json"

        def pause():
            time.sleep(1.0)
            os.kill(srv.pid, signal.SIGSTOP)
            time.sleep(1.0)
            os.kill(srv.pid, signal.SIGCONT)

        th = threading.Thread(target=pause)
        th.start()
        run_tb(twinbench, "-p", str(srv.port), "-t", "1", "-c", "4", "--rate", "4000",
               "--test-time", "3", "--json", str(js))
        th.join()
        run = parse_json(js)["runs"][0]
        assert 0.8 * 4000 * 3 <= run["ops"] <= 1.2 * 4000 * 3
        # about the 1 s pause: neither hidden (coordinated omission) nor inflated
        assert 800 <= run["latency_ms"]["p99.9"] <= 1500, run["latency_ms"]
        assert run["latency_ms"]["p50"] < 50
    finally:
        os.kill(srv.pid, signal.SIGCONT)
        srv.stop()


def test_server_pid_cpu(twinbench, redis_server, tmp_path):
    js = tmp_path / "c.json"
    run_tb(twinbench, "--target", f"r=redis://127.0.0.1:{redis_server.port}", "--server-pid",
           f"r={redis_server.pid}", "-t", "1", "-c", "10", "--pipeline", "8", "-n", "5000",
           "--json", str(js))
    run = parse_json(js)["runs"][0]
    assert run["server_cpu_s"] is not None and run["server_cpu_s"] >= 0
    assert run["client_requests_per_cpu_s"] > 0


def test_timeout_counts(twinbench):
    from conftest import start_redis
    srv = start_redis()
    try:
        os.kill(srv.pid, signal.SIGSTOP)
        r = run_tb(twinbench, "-p", str(srv.port), "-t", "1", "-c", "2", "--timeout", "200",
                   "--test-time", "1", check=False)
        assert re.search(r"timeouts [1-9]", r.stdout + r.stderr) or "no replies" in r.stderr
    finally:
        os.kill(srv.pid, signal.SIGCONT)
        srv.stop()


def _split_frames(buf):
    """Complete RESP multibulk frames (or inline lines) at the start of buf: returns the first
    argument of each and the bytes left over."""
    cmds = []
    while buf:
        e = buf.find(b"\r\n")
        if e < 0:
            break
        if buf[:1] != b"*":
            cmds.append(buf[:e])
            buf = buf[e + 2:]
            continue
        p, args = e + 2, []
        for _ in range(int(buf[1:e])):
            e2 = buf.find(b"\r\n", p)
            if e2 < 0 or len(buf) < e2 + 2 + int(buf[p + 1:e2]) + 2:
                return cmds, buf
            ln = int(buf[p + 1:e2])
            args.append(buf[e2 + 2:e2 + 2 + ln])
            p = e2 + 2 + ln + 2
        cmds.append(args[0] if args else b"")
        buf = buf[p:]
    return cmds, buf


def _held_reply_server(result):
    """A RESP server answering SETs one at a time that, after every fourth reply's first
    (replies 1, 5, 9, ...), waits 0.3 s and records whether the client sent anything meanwhile:
    a sliding window refills at once, a redis-benchmark-style batch waits for all its replies.
    INFO gets an empty bulk."""
    import socket as so
    ls = so.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)

    def serve():
        while True:
            c, _ = ls.accept()
            c.settimeout(5)
            buf = b""
            try:
                while True:
                    cmds, buf = _split_frames(buf)
                    if not cmds:
                        d = c.recv(65536)
                        if not d:
                            raise EOFError
                        buf += d
                        continue
                    for cmd in cmds:
                        if cmd.upper() == b"INFO":
                            c.sendall(b"$0\r\n\r\n")
                            continue
                        result["sets"] += 1
                        c.sendall(b"+OK\r\n")
                        if result["sets"] % 4 == 1:
                            c.settimeout(0.3)
                            try:
                                d = c.recv(65536)
                                if d:
                                    result["early"] += 1
                                    buf += d
                            except so.timeout:
                                pass
                            c.settimeout(5)
            except (EOFError, OSError):
                c.close()
                if result["sets"] >= result["want"]:
                    ls.close()
                    return

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return ls.getsockname()[1], t

def test_pipeline_batch_waits_for_every_reply(twinbench):
    """--pipeline-batch sends P requests and the next P only after all P replies (as
    redis-benchmark -P); the default window sends a request as soon as a reply frees a slot."""
    for batch, expect_early in ((True, False), (False, True)):
        res = {"sets": 0, "early": 0, "want": 16}
        port, th = _held_reply_server(res)
        args = ["-p", str(port), "-t", "1", "-c", "1", "--pipeline", "4", "-n", "16",
                "--ratio", "1:0", "--timeout", "10000"]
        run_tb(twinbench, *args, *(["--pipeline-batch"] if batch else []))
        th.join(10)
        assert res["sets"] == 16, res
        assert (res["early"] > 0) == expect_early, (batch, res)


def _lockstep_server(n, started):
    """A RESP server for n connections (plus twinbench's INFO connection, answered with an
    empty bulk) that waits until every connection has a request in, stops twinbench
    (SIGSTOP), answers them all, and lets it go on (SIGCONT): each of twinbench's loop turns
    then finds all n sockets readable. started["pid"] is twinbench's pid."""
    import socket as so
    ls = so.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(n + 4)

    def one_cmd(c, buf):
        while True:
            cmds, rest = _split_frames(buf)
            if cmds:
                assert len(cmds) == 1, cmds  # P=1: one request per connection and turn
                return cmds[0], rest
            d = c.recv(65536)
            if not d:
                return None, b""
            buf += d

    def serve():
        conns = []
        while len(conns) < n:
            c, _ = ls.accept()
            c.settimeout(10)
            cmd, rest = one_cmd(c, b"")
            if cmd is None:
                c.close()
            elif cmd.upper() == b"INFO":
                c.sendall(b"$0\r\n\r\n")
                c.close()
            else:
                conns.append([c, rest])
        ls.close()
        started["ready"].wait(10)
        pid = started["pid"]
        while True:
            for cs in conns:
                if cs[1] is None:
                    return
            os.kill(pid, signal.SIGSTOP)
            for _ in range(500):
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "T":
                        break
                time.sleep(0.001)
            for cs in conns:
                cs[0].sendall(b"+OK\r\n")
            os.kill(pid, signal.SIGCONT)
            for cs in conns:
                cmd, rest = one_cmd(cs[0], b"")
                if cmd is None:
                    cs[1] = None
                    cs[0].close()
                else:
                    started["served"] += 1

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return ls.getsockname()[1], t


def test_io_uring_batches_each_turn(twinbench, tmp_path):
    """--io-uring yes reads every readable socket of a loop turn with one io_uring submission
    and writes every request of the turn with one more; no does a read and a write system
    call per socket. The server answers 8 connections at once while twinbench is stopped, so
    every turn finds 8 sockets readable; /proc/PID/io (read after exit, before reaping) counts
    twinbench's read and write system calls."""
    n, per = 8, 25
    calls = {}
    for mode in ("yes", "no"):
        started = {"ready": threading.Event(), "pid": 0, "served": 0}
        port, th = _lockstep_server(n, started)
        p = subprocess.Popen([twinbench, "--no-progress", "-p", str(port), "-t", "1", "-c", str(n),
                              "-n", str(per), "--ratio", "1:0", "--io-uring", mode,
                              "--json", str(tmp_path / f"{mode}.json")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started["pid"] = p.pid
        started["ready"].set()
        try:
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            io = dict(ln.split(": ") for ln in open(f"/proc/{p.pid}/io").read().splitlines())
        finally:
            out, err = p.communicate(timeout=30)
        th.join(10)
        assert p.returncode == 0, (mode, out, err)
        if mode == "yes" and b"using read and write" in err:
            pytest.skip(err.decode().strip())
        run = parse_json(tmp_path / f"{mode}.json")["runs"][0]
        assert run["ops"] == n * per and run["errors"] == 0, run
        assert started["served"] == n * (per - 1), started
        calls[mode] = (int(io["syscr"]), int(io["syscw"]))
    reqs = n * per
    # plain: a read and a write per request (plus a few for INFO and the report)
    assert calls["no"][0] >= reqs and calls["no"][1] >= reqs, calls
    # batched: all of it in io_uring submissions; what is left is INFO and the report
    assert calls["yes"][0] < reqs / 4 and calls["yes"][1] < reqs / 4, calls
