#!/usr/bin/python3
"""Eviction quality: hit ratio of a read-through cache on a zipfian key stream, twincache and
Debian's redis-server side by side, both with the same maxmemory and maxmemory-policy.

Each request GETs a key drawn from a zipfian distribution over --keys keys (exponent
--zipf); a miss SETs it (--value bytes). The first --warmup requests fill the cache and are not
counted; the hit ratio is over the rest. Requests go in pipelined batches (a batch's misses
are SET before the next batch), the same key stream for both servers.

Usage: bench/hitratio.py [--maxmemory 4mb] [--policy allkeys-lru] [--keys 200000]
       [--requests 1000000] [--zipf 0.99] [--value 100]
This is a benchmark, not a test: it prints figures and never fails on them."""
import argparse, bisect, os, random, shutil, signal, socket, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory import free_port, wait_port, ROOT  # noqa: E402


def zipf_stream(n_keys, s, count, seed=7):
    cdf, acc = [], 0.0
    for k in range(1, n_keys + 1):
        acc += 1.0 / k ** s
        cdf.append(acc)
    rnd = random.Random(seed)
    perm = list(range(n_keys))
    rnd.shuffle(perm)  # popular keys spread over the key space
    return [perm[bisect.bisect_left(cdf, rnd.random() * acc)] for _ in range(count)]


def bulk(args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 20)
            if not d:
                raise RuntimeError("server closed")
            self.buf += d
        ln, self.buf = self.buf.split(b"\r\n", 1)
        return ln

    def reply(self):
        ln = self.line()
        if ln[:1] == b"$":
            n = int(ln[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if ln[:1] == b"-":
            raise RuntimeError(ln.decode())
        return ln


def run(port, stream, warmup, value, batch=500):
    c = Conn(port)
    hits = total = 0
    for i in range(0, len(stream), batch):
        keys = [b"key:%012d" % k for k in stream[i:i + batch]]
        c.s.sendall(b"".join(bulk([b"GET", k]) for k in keys))
        missed = []
        for j, k in enumerate(keys):
            r = c.reply()
            if i + j >= warmup:
                total += 1
                hits += r is not None
            if r is None:
                missed.append(k)
        if missed:
            c.s.sendall(b"".join(bulk([b"SET", k, value]) for k in missed))
            for _ in missed:
                c.reply()
    c.s.sendall(bulk([b"INFO", b"stats"]))
    info = c.reply().decode()
    ev = [ln for ln in info.split("\r\n") if ln.startswith("evicted_keys:")]
    return hits / total, int(ev[0].split(":")[1]) if ev else -1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--twincache", default=os.path.join(ROOT, "build", "twincache"))
    ap.add_argument("--maxmemory", default="4mb")
    ap.add_argument("--policy", default="allkeys-lru")
    ap.add_argument("--keys", type=int, default=200_000)
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--warmup", type=int, default=200_000)
    ap.add_argument("--zipf", type=float, default=0.99)
    ap.add_argument("--value", type=int, default=100)
    a = ap.parse_args()
    stream = zipf_stream(a.keys, a.zipf, a.requests)
    value = b"v" * a.value
    servers = [("twincache", lambda p: [a.twincache, "--port", str(p), "--memcache-port", "0",
                                        "--threads", "1", "--maxmemory", a.maxmemory,
                                        "--maxmemory-policy", a.policy])]
    if shutil.which("redis-server"):
        servers.append(("redis", lambda p: ["redis-server", "--port", str(p), "--save", "",
                                            "--appendonly", "no", "--maxmemory", a.maxmemory,
                                            "--maxmemory-policy", a.policy]))
    print(f"zipf {a.zipf} over {a.keys} keys, {a.value}-byte values, {a.requests} requests "
          f"({a.warmup} warm-up), maxmemory {a.maxmemory}, {a.policy}")
    print(f"{'server':<12}{'hit ratio':>10}{'evicted':>10}")
    for name, argv in servers:
        port = free_port()
        p = subprocess.Popen(argv(port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(port)
            ratio, evicted = run(port, stream, a.warmup, value)
            print(f"{name:<12}{ratio:>10.4f}{evicted:>10}")
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


if __name__ == "__main__":
    main()
