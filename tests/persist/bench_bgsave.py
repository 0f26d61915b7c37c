"""BGSAVE of N keys under load: the longest stall a client sees while the save runs, the time
every stripe is held for the fork, and the child's copy-on-write (Private_Dirty).

    /usr/bin/python3 tests/persist/bench_bgsave.py [--keys 1000000] [--bin build/twincache]

Not a test (timings depend on the machine); prints one summary line per run.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persist_harness import make_twincache  # noqa: E402


def load(port, n, vsize):
    cmd = []
    val = b"v" * vsize
    for i in range(n):
        k = b"key:%d" % i
        cmd.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(val), val))
    subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=b"".join(cmd), check=True,
                   stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--value", type=int, default=50)
    ap.add_argument("--bin")
    ap.add_argument("--threads", default="2")
    args = ap.parse_args()
    if args.bin:
        os.environ["TWINCACHE_BIN"] = args.bin
    d = tempfile.mkdtemp(prefix="tc-bgsave-")
    tc = make_twincache(d)
    tc.argv[tc.argv.index("--threads") + 1] = args.threads
    tc.start()
    try:
        load(tc.port, args.keys, args.value)
        r = tc.client()
        assert r.dbsize() == args.keys, r.dbsize()
        # background load: redis-benchmark writing random keys of the same key space
        bench = subprocess.Popen(["redis-benchmark", "-p", str(tc.port), "-c", "20", "-n",
                                  "100000000", "-r", str(args.keys), "-t", "set,get", "-d",
                                  str(args.value), "-q", "-P", "4"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lat = []
        stop = threading.Event()
        marks = {}

        def probe():
            c = tc.client()
            i = 0
            while not stop.is_set():
                t0 = time.perf_counter()
                c.set("probe:%d" % (i % 1000), i)
                lat.append((t0, time.perf_counter() - t0))
                i += 1

        th = threading.Thread(target=probe)
        th.start()
        time.sleep(2)
        base = [l for _, l in lat]
        marks["start"] = time.perf_counter()
        r.bgsave()
        while r.info("persistence")["rdb_bgsave_in_progress"]:
            time.sleep(0.01)
        marks["end"] = time.perf_counter()
        time.sleep(0.5)
        stop.set()
        th.join()
        bench.terminate()
        bench.wait()
        info = r.info("persistence")
        during = [l for t, l in lat if marks["start"] - 0.01 <= t <= marks["end"]]
        base.sort()
        during.sort()
        mem = r.info("memory")["used_memory"]
        print("keys=%d value=%dB threads=%s used_memory=%.1fMB dump=%.1fMB" % (
            args.keys, args.value, args.threads, mem / 2**20,
            os.path.getsize(tc.dump) / 2**20))
        print("bgsave: %.2fs  stripes-held (fork) pause=%.2fms  cow=%.1fMB (%.1f%% of used)" % (
            marks["end"] - marks["start"], info["rdb_latest_fork_usec"] / 1000,
            info["rdb_last_cow_size"] / 2**20, 100.0 * info["rdb_last_cow_size"] / mem))
        print("probe SET latency before: p50=%.3fms p99=%.3fms max=%.3fms (n=%d)" % (
            base[len(base) // 2] * 1e3, base[int(len(base) * .99)] * 1e3, base[-1] * 1e3,
            len(base)))
        print("probe SET latency during: p50=%.3fms p99=%.3fms max(p100)=%.3fms (n=%d)" % (
            during[len(during) // 2] * 1e3, during[int(len(during) * .99)] * 1e3,
            during[-1] * 1e3, len(during)))
        worst = sorted(((l, t) for t, l in lat if marks["start"] - 0.01 <= t <= marks["end"]),
                       reverse=True)[:5]
        print("worst stalls during the save (ms, at s after BGSAVE): " + ", ".join(
            "%.1f@%.2f" % (l * 1e3, t - marks["start"]) for l, t in worst))
    finally:
        tc.stop()


if __name__ == "__main__":
    main()
