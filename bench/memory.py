#!/usr/bin/python3
"""Memory per item: load N items into twincache, Debian's redis-server and Debian's memcached,
one after the other on free loopback ports, and print RSS growth per item and overhead per item
= (RSS growth - key and value bytes) / items, with ratios twincache/redis and
twincache/memcached. Shapes: (a) 16-byte keys, 32-byte values; (b) seed-000 records
(48 bytes of 2 longs + 4 doubles, plus a 50..400 character string); (bt) as b with a TTL
(EX 3600 / exptime 3600) on every key; (hash, set, zset) N/100 keys of 100 small
elements each (8-byte fields with 8-byte values, 8-byte members, 8-byte members with
integer scores); their overhead is per field/member, the payload counting key bytes once per
key plus field+value (or member) bytes; memcached has no collections and is left out there.

Usage: bench/memory.py [--items N] [--twincache build/twincache] [--shape a,b,bt,hash,set,zset|all]
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


COLL = 100  # elements per collection key
LETTERS = bytes(b"abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(256))
_cache = {}


def cached(shape, n):
    """The same records for every server in a run, generated once."""
    k = ("b" if shape == "bt" else shape, n)
    if k not in _cache:
        _cache.clear()
        _cache[k] = list(records(k[0], n))
    return _cache[k]


def records(shape, n, seed=42):
    rnd = random.Random(seed)
    if shape in ("hash", "set", "zset"):
        for k in range(n // COLL):
            key = b"key:%012d" % k
            elems = [b"m%07d" % j for j in range(COLL)]  # 8 bytes
            yield key, elems
        return
    for i in range(n):
        if shape == "a":
            key = b"key:%012d" % i          # 16 bytes
            val = b"%032d" % i              # 32 bytes
        else:
            key = b"key:%012d" % i
            head = struct.pack("<qqdddd", i, i * 7, rnd.random(), rnd.random(), rnd.random(), rnd.random())
            s = rnd.randbytes(rnd.randint(50, 400)).translate(LETTERS)
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
        if shape in ("hash", "set", "zset"):
            token = b":%d\r\n" % COLL
        else:
            token = b"+OK\r\n" if proto == "redis" else b"STORED\r\n"
        while got < expect:
            d = sock.recv(1 << 20)
            if not d:
                raise RuntimeError("server closed")
            buf += d
            got = buf.count(token)
        batch, expect = [], 0

    def bulk(args):
        return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args)

    ttl = shape == "bt"
    for key, val in cached(shape, n):
        if shape in ("hash", "set", "zset"):
            if proto != "redis":
                raise RuntimeError("collections need the redis protocol")
            payload += len(key)
            if shape == "hash":
                args = [b"HSET", key]
                for m in val:
                    args += [m, m]
                    payload += 2 * len(m)
            elif shape == "set":
                args = [b"SADD", key] + val
                payload += sum(len(m) for m in val)
            else:
                args = [b"ZADD", key]
                for j, m in enumerate(val):
                    args += [b"%d" % j, m]
                    payload += len(m)
            batch.append(bulk(args))  # each answers :100
        elif proto == "redis":
            args = [b"SET", key, val] + ([b"EX", b"3600"] if ttl else [])
            batch.append(bulk(args))
            payload += len(key) + len(val)
        else:
            batch.append(b"set %s 0 %d %d\r\n%s\r\n" % (key, 3600 if ttl else 0, len(val), val))
            payload += len(key) + len(val)
        expect += 1
        if expect == (2000 if shape not in ("hash", "set", "zset") else 50):
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
        if shape in ("hash", "set", "zset"):
            n = (n // COLL) * COLL  # per field/member
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
    global COLL
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--twincache", default=os.path.join(ROOT, "build", "twincache"))
    ap.add_argument("--elements", type=int, default=COLL, help="elements per hash/set/zset (default 100)")
    ap.add_argument("--shape", default="all", help="comma list of a,b,bt,hash,set,zset or all")
    a = ap.parse_args()
    COLL = a.elements
    allshapes = ["a", "b", "bt", "hash", "set", "zset"]
    shapes = allshapes if a.shape in ("all", "both") else a.shape.split(",")
    labels = {"a": "16-byte keys, 32-byte values", "b": "seed-000 records (48 + 50..400 bytes)",
              "bt": "seed-000 records with a TTL on every key",
              "hash": f"hashes of {COLL} fields (8 B field, 8 B value), per field",
              "set": f"sets of {COLL} members (8 B), per member",
              "zset": f"sorted sets of {COLL} members (8 B, integer scores), per member"}
    summary = []
    for shape in shapes:
        rows = []
        tp, rp, mp = free_port(), free_port(), free_port()
        rows.append(measure("twincache", [a.twincache, "--port", str(tp), "--memcache-port", "0",
                                          "--threads", "1"], tp, "redis", shape, a.items))
        if shutil.which("redis-server"):
            rows.append(measure("redis", ["redis-server", "--port", str(rp), "--save", "",
                                          "--appendonly", "no"], rp, "redis", shape, a.items))
        if shutil.which("memcached") and shape not in ("hash", "set", "zset"):
            rows.append(measure("memcached", ["memcached", "-p", str(mp), "-U", "0", "-l", "127.0.0.1",
                                              "-m", "4096", "-t", "1"] + (["-u", "root"] if os.geteuid() == 0 else []), mp, "memcache", shape, a.items))
        print(f"\n{a.items} items, {labels[shape]}  (payload {rows[0]['payload_per_item']:.1f} B/item)")
        print(f"{'server':<12}{'RSS growth/item':>18}{'overhead/item':>16}")
        for r in rows:
            print(f"{r['name']:<12}{r['rss_per_item']:>16.1f} B{r['overhead']:>14.1f} B")
        tc = rows[0]["overhead"]
        for r in rows[1:]:
            print(f"overhead ratio twincache/{r['name']}: {tc / r['overhead']:.2f}" if r["overhead"] > 0 else "")
        summary.append((shape, {r["name"]: r["overhead"] for r in rows}))
    print("\n| dataset | twincache B/item | redis-server B/item | memcached B/item |")
    print("|---|---:|---:|---:|")
    for shape, o in summary:
        cell = lambda k: f"{o[k]:.1f}" if k in o else "n/a"
        print(f"| {labels[shape]} | {cell('twincache')} | {cell('redis')} | {cell('memcached')} |")


if __name__ == "__main__":
    main()
