#!/usr/bin/python3
"""Memory per item: load N items into twincache, Debian's redis-server and Debian's memcached,
one after the other on free loopback ports, and print RSS growth per item and overhead per item
= (RSS growth - key and value bytes) / items, with ratios twincache/redis and
twincache/memcached. Shapes: (a) 16-byte keys, 32-byte values; (b) seed-000 records
(48 bytes of 2 longs + 4 doubles, plus a 50..400 character string).

Usage: bench/memory.py [--items N] [--twincache build/twincache] [--shape a|b|both]
This is a benchmark, not a test: it prints figures and never fails on them."""
import argparse, os, random, shutil, signal, socket, struct, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def wait_port(port, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"port {port} did not open")


def records(shape, n, seed=42):
    rnd = random.Random(seed)
    for i in range(n):
        if shape == "a":
            key = b"key:%012d" % i          # 16 bytes
            val = b"%032d" % i              # 32 bytes
        else:
            key = b"key:%012d" % i
            head = struct.pack("<qqdddd", i, i * 7, rnd.random(), rnd.random(), rnd.random(), rnd.random())
            s = bytes(rnd.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(50, 400)))
            val = head + s
        yield key, val


def load(proto, port, shape, n):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    batch, expect, total = [], 0, 0
    payload = 0

    def flush():
        nonlocal batch, expect
        if not batch:
            return
        sock.sendall(b"".join(batch))
        got, buf = 0, b""
        token = b"+OK\r\n" if proto == "redis" else b"STORED\r\n"
        while got < expect:
            d = sock.recv(1 << 20)
            if not d:
                raise RuntimeError("server closed")
            buf += d
            got = buf.count(token)
        batch, expect = [], 0

    for key, val in records(shape, n):
        payload += len(key) + len(val)
        if proto == "redis":
            batch.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(val), val))
        else:
            batch.append(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(val), val))
        expect += 1
        if expect == 2000:
            flush()
    flush()
    sock.close()
    return payload


def measure(name, cmd, port, proto, shape, n):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        time.sleep(0.3)
        base = rss(p.pid)
        payload = load(proto, port, shape, n)
        time.sleep(0.5)
        grown = rss(p.pid) - base
        return {"name": name, "rss_per_item": grown / n, "overhead": (grown - payload) / n,
                "payload_per_item": payload / n}
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--twincache", default=os.path.join(ROOT, "build", "twincache"))
    ap.add_argument("--shape", default="both", choices=["a", "b", "both"])
    a = ap.parse_args()
    shapes = ["a", "b"] if a.shape == "both" else [a.shape]
    labels = {"a": "16-byte keys, 32-byte values", "b": "seed-000 records (48 + 50..400 bytes)"}
    for shape in shapes:
        rows = []
        tp, rp, mp = free_port(), free_port(), free_port()
        rows.append(measure("twincache", [a.twincache, "--port", str(tp), "--memcache-port", "0",
                                          "--threads", "1"], tp, "redis", shape, a.items))
        if shutil.which("redis-server"):
            rows.append(measure("redis", ["redis-server", "--port", str(rp), "--save", "",
                                          "--appendonly", "no"], rp, "redis", shape, a.items))
        if shutil.which("memcached"):
            rows.append(measure("memcached", ["memcached", "-p", str(mp), "-U", "0", "-l", "127.0.0.1",
                                              "-m", "4096", "-t", "1"] + (["-u", "root"] if os.geteuid() == 0 else []), mp, "memcache", shape, a.items))
        print(f"\n{a.items} items, {labels[shape]}  (payload {rows[0]['payload_per_item']:.1f} B/item)")
        print(f"{'server':<12}{'RSS growth/item':>18}{'overhead/item':>16}")
        for r in rows:
            print(f"{r['name']:<12}{r['rss_per_item']:>16.1f} B{r['overhead']:>14.1f} B")
        tc = rows[0]["overhead"]
        for r in rows[1:]:
            print(f"overhead ratio twincache/{r['name']}: {tc / r['overhead']:.2f}" if r["overhead"] > 0 else "")


if __name__ == "__main__":
    main()
