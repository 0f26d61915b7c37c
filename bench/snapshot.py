#!/usr/bin/python3
"""Snapshot benchmark (issue 24): what a BGSAVE costs the clients of a loaded server, for
twincache forking (snapshot-fork yes), twincache forkless (snapshot-fork no: the snapshot
thread and copy-before-write) and redis-server 7.0, side by side in one run.

Each server (pinned to --server-cpus with taskset, one worker thread / io-thread) gets N keys
key:0..key:N-1 with seed-000-like values (100..450 random bytes), then twinbench (pinned to
--client-cpus) drives a P=1 1:10 SET:GET load from 50 connections over the same keys:

1. without a snapshot, for --base-time seconds: longest request, p99.9, p99;
2. with one: twinbench starts, BGSAVE follows 0.2 s later, and the run lasts 0.2 s more than
   a calibration BGSAVE under the same load took, so the window is the snapshot: the same
   figures, plus the BGSAVE's duration and the peak memory during it above the RSS before
   (the server's RSS plus its fork child's private pages, sampled every 10 ms), against the
   dataset (used_memory before).

usage: bench/snapshot.py [--keys N] [--out FILE.md]
Numbers from one run on a shared machine: quote ratios, not absolutes. Stops only the PIDs it
started."""

import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TC = os.environ.get("TWINCACHE_BIN", os.path.join(REPO, "build", "twincache"))
TB = os.path.join(REPO, "build", "twinbench")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start(kind, d, cpus, extra):
    port = free_port()
    if kind == "redis":
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
                "--save", "", "--appendonly", "no"]
    else:
        argv = [TC, "--port", str(port), "--memcache-port", "0", "--bind", "127.0.0.1",
                "--dir", d, "--save", "", "--threads", "1", "--loglevel", "verbose"] + extra
    argv = ["taskset", "-c", cpus] + argv
    log = open(os.path.join(d, "server-%d.log" % port), "w")
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    c = redis.Redis(port=port, socket_timeout=120)
    for _ in range(400):
        try:
            c.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return p, port, c


def stop(p):
    p.terminate()
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def gen_load(path, n):
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return
    rnd = random.Random(24)
    with open(path + ".tmp", "wb") as f:
        buf = []
        for i in range(n):
            k = b"key:%d" % i
            v = rnd.randbytes(225).hex().encode()[:rnd.randint(100, 450)]
            buf.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
            if len(buf) == 10000:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))
    os.rename(path + ".tmp", path)


def rss_tree(pid):
    """RSS of pid plus the private pages (copy-on-write, own allocations) of its children."""
    total, kids = 0, []
    try:
        with open("/proc/%d/statm" % pid) as f:
            total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        for t in os.listdir("/proc/%d/task" % pid):  # any thread may have forked
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        return total
    for k in kids:
        try:
            with open("/proc/%d/smaps_rollup" % k) as f:
                for line in f:
                    if line.startswith(("Private_Clean:", "Private_Dirty:")):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def twinbench(port, keys, secs, cpus, out):
    argv = ["taskset", "-c", cpus, TB, "-s", "127.0.0.1", "-p", str(port), "--threads", "1",
            "--clients", "50", "--pipeline", "1", "--ratio", "1:10", "--key-pattern", "R",
            "--key-maximum", str(keys - 1), "--data-size-range", "100-450",
            "--test-time", "%.2f" % secs, "--no-progress", "--json", out]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def lat(js):
    t = js["targets"][0]
    lm = t["latency_ms"]
    return {"max": lm["max"], "p999": lm["p99.9"], "p99": lm["p99"], "ops": t["ops_per_sec"]}


def wait_save(c):
    while True:
        i = c.info("persistence")
        if not i["rdb_bgsave_in_progress"]:
            return i
        time.sleep(0.005)


def bgsave_under_load(c, pid, port, keys, cpus, secs, tmp, calibrate=False):
    """twinbench for secs; BGSAVE 0.2 s in; returns (latencies, bgsave seconds, peak RSS)."""
    out = os.path.join(tmp, "tb-%d.json" % time.monotonic_ns())
    tb = twinbench(port, keys, secs, cpus, out)
    time.sleep(0.2)
    peak = [rss_tree(pid)]
    stop_s = threading.Event()

    def sampler():
        while not stop_s.is_set():
            peak[0] = max(peak[0], rss_tree(pid))
            time.sleep(0.01)

    th = threading.Thread(target=sampler)
    th.start()
    t0 = time.monotonic()
    c.bgsave()
    info = wait_save(c)
    dt = time.monotonic() - t0
    stop_s.set()
    th.join()
    if calibrate:  # only the duration counts
        tb.terminate()
        tb.wait()
        return None, dt, peak[0], 0
    _, err = tb.communicate()
    assert tb.returncode == 0, err.decode()
    assert info["rdb_last_bgsave_status"] == "ok"
    with open(out) as f:
        js = json.load(f)
    fork_us = info.get("rdb_latest_fork_usec", c.info("stats").get("latest_fork_usec", 0))
    return lat(js), dt, peak[0], fork_us


def run_target(name, kind, extra, args, loadfile, tmp):
    d = tempfile.mkdtemp(prefix="snap-", dir=tmp)
    p, port, c = start(kind, d, args.server_cpus, extra)
    try:
        with open(loadfile, "rb") as f:
            subprocess.run(["taskset", "-c", args.client_cpus, "redis-cli", "-p", str(port),
                            "--pipe"], stdin=f, check=True, stdout=subprocess.DEVNULL)
        assert c.dbsize() == args.keys, c.dbsize()
        used = c.info("memory")["used_memory"]
        # calibration: how long a BGSAVE takes under this load
        _, cal, _, _ = bgsave_under_load(c, p.pid, port, args.keys, args.client_cpus, 60, tmp,
                                       calibrate=True)
        out = os.path.join(tmp, "base-%s.json" % name)
        tb = twinbench(port, args.keys, args.base_time, args.client_cpus, out)
        _, err = tb.communicate()
        assert tb.returncode == 0, err.decode()
        with open(out) as f:
            base = lat(json.load(f))
        rss0 = rss_tree(p.pid)
        during, dt, peak, fork_us = bgsave_under_load(c, p.pid, port, args.keys,
                                                      args.client_cpus, cal + 0.4, tmp)
        cow = ""
        for fn in os.listdir(d):  # forkless: the snapshot thread's summary (loglevel verbose)
            if fn.startswith("server-"):
                with open(os.path.join(d, fn), errors="replace") as f:
                    text = f.read()
                m = re.findall(r"Snapshot: (\d+) of (\d+) stripes copied first .*?"
                               r"\(longest (\d+) us, mean (\d+) us\)", text)
                if m:
                    cow = "%s/%s, longest %s us, mean %s us" % m[-1]
                m = re.findall(r"(\d+) keys kept apart by one-key writes \(longest (\d+) us\)",
                               text)
                if m:
                    cow += "; %s keys kept apart, longest %s us" % m[-1]
        return {"name": name, "base": base, "during": during, "bgsave_s": dt, "cal_s": cal,
                "rss0": rss0, "peak_extra": max(0, peak - rss0), "used": used,
                "fork_us": fork_us, "cow": cow or "-"}
    finally:
        stop(p)
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--base-time", type=float, default=5.0)
    ap.add_argument("--server-cpus", default="0")
    ap.add_argument("--client-cpus", default="1")
    ap.add_argument("--targets", default="fork,forkless,forkless8k,redis")
    ap.add_argument("--out", help="also append the table to this markdown file")
    args = ap.parse_args()
    for tool in ("redis-cli", "redis-server"):
        if not shutil.which(tool):
            sys.exit("%s not installed" % tool)
    tmp = tempfile.mkdtemp(prefix="tc-snapbench-")
    try:
        loadfile = os.path.join(tmp, "load.resp")
        gen_load(loadfile, args.keys)
        targets = {"fork": ("twincache fork", "twincache", ["--snapshot-fork", "yes"]),
                   "forkless": ("twincache forkless", "twincache", ["--snapshot-fork", "no"]),
                   "forkless8k": ("twincache forkless, 8192 stripes", "twincache",
                                  ["--snapshot-fork", "no", "--stripes", "8192"]),
                   "redis": ("redis-server 7.0", "redis", [])}
        rows = []
        for t in args.targets.split(","):
            name, kind, extra = targets[t]
            rows.append(run_target(name, kind, extra, args, loadfile, tmp))
            print("done: %s" % name, file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines = ["%d keys (100-450 B values), P=1 1:10 SET:GET from 50 connections, server on CPU "
             "%s, twinbench on CPU %s; latencies in ms over the whole run without a snapshot "
             "(%.0f s) / over the BGSAVE window" % (args.keys, args.server_cpus,
                                                     args.client_cpus, args.base_time), "",
             "| server | max no snap | max during | p99.9 no snap | p99.9 during | p99 no snap "
             "| p99 during | ops/s no snap | ops/s during | BGSAVE s | start pause us "
             "| peak extra MB | dataset MB | extra/dataset | stripes copied by clients (keys kept apart) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b, d = r["base"], r["during"]
        lines.append("| %s | %.2f | %.2f | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f | %.2f | %d "
                     "| %.0f | %.0f | %.0f %% | %s |" % (
                         r["name"], b["max"], d["max"], b["p999"], d["p999"], b["p99"],
                         d["p99"], b["ops"], d["ops"], r["bgsave_s"], r["fork_us"],
                         r["peak_extra"] / 2**20, r["used"] / 2**20,
                         100.0 * r["peak_extra"] / max(1, r["used"]), r["cow"]))
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
