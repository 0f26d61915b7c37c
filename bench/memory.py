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
                       [--with hazelcast] [--json FILE]
This is a benchmark, not a test: it prints figures and never fails on them.

Every server is measured the same way: RSS growth (VmRSS after loading minus VmRSS before,
/proc/PID/status) divided by the items, loaded by the same pipelined loader (RESP SET for
twincache and redis, memcached `set` for memcached and Hazelcast). --with hazelcast adds a
Hazelcast 5 member (bench/java's HzMember, loaded over its memcached protocol) run with
-Xms64m -XX:+UseG1GC -XX:MinHeapFreeRatio=5 -XX:MaxHeapFreeRatio=10 and a full GC
(`jcmd PID GC.run`) before both RSS readings, so its RSS follows the live heap (the other
servers have no garbage to collect); its heap used after that GC is printed beside it."""
import argparse, json, os, random, re, shutil, signal, socket, struct, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 2000  # requests per pipelined batch; 100 with Hazelcast (it stalled on 2000 seed-000 records)


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
        if expect == (BATCH if shape not in ("hash", "set", "zset") else 50):
            flush()
    flush()
    sock.close()
    return payload


def jvm_gc(pid):
    """Full GC of a JVM server (jcmd GC.run); returns its heap used afterwards in bytes, or None."""
    jcmd = shutil.which("jcmd")
    if not jcmd:
        return None
    subprocess.run([jcmd, str(pid), "GC.run"], capture_output=True, timeout=120)
    time.sleep(1.0)
    r = subprocess.run([jcmd, str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60)
    m = re.search(r"total \d+K, used (\d+)K", r.stdout)
    return int(m.group(1)) * 1024 if m else None


def measure(name, cmd, port, proto, shape, n, jvm=False):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, timeout=60 if jvm else 10)
        time.sleep(2.0 if jvm else 0.3)
        heap0 = jvm_gc(p.pid) if jvm else None
        base = rss(p.pid)
        payload = load(proto, port, shape, n)
        time.sleep(0.5)
        heap1 = jvm_gc(p.pid) if jvm else None
        grown = rss(p.pid) - base
        if shape in ("hash", "set", "zset"):
            n = (n // COLL) * COLL  # per field/member
        r = {"name": name, "items": n, "rss_per_item": grown / n, "overhead": (grown - payload) / n,
             "payload_per_item": payload / n}
        if heap0 is not None and heap1 is not None:
            r["heap_per_item"] = (heap1 - heap0) / n
        return r
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
    ap.add_argument("--with", dest="with_", action="append", default=[], help="hazelcast: also a Hazelcast member")
    ap.add_argument("--hz-heap", default="8g", help="the Hazelcast member's -Xmx (default 8g)")
    ap.add_argument("--jbench-dir", default=os.path.join(ROOT, "bench", "java", "target"))
    ap.add_argument("--json", help="write the figures here (bench/compare --memory puts them in the HTML report)")
    a = ap.parse_args()
    global BATCH
    COLL = a.elements
    if "hazelcast" in a.with_:
        BATCH = 100
    result = {"method": "RSS growth per item (VmRSS after minus before loading, same pipelined loader for "
                        "every server); the JVM member gets a full GC (jcmd GC.run) before each reading",
              "items": a.items, "shapes": {}}
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
        if "hazelcast" in a.with_ and shape not in ("hash", "set", "zset"):
            hp = free_port()
            cp = os.path.join(a.jbench_dir, "jbench-1.jar") + ":" + os.path.join(a.jbench_dir, "lib", "*")
            rows.append(measure("hazelcast", ["java", "-Xms64m", f"-Xmx{a.hz_heap}", "-XX:+UseG1GC",
                                              "-XX:MinHeapFreeRatio=5", "-XX:MaxHeapFreeRatio=10", "-cp", cp,
                                              "tc.jbench.HzMember", str(hp)], hp, "memcache", shape, a.items,
                                jvm=True))
        result["shapes"][shape] = {"label": labels[shape], "rows": rows}
        print(f"\n{a.items} items, {labels[shape]}  (payload {rows[0]['payload_per_item']:.1f} B/item)")
        print(f"{'server':<12}{'RSS growth/item':>18}{'overhead/item':>16}{'x payload':>11}{'JVM heap/item':>15}")
        for r in rows:
            hp_ = f"{r['heap_per_item']:>13.1f} B" if "heap_per_item" in r else ""
            print(f"{r['name']:<12}{r['rss_per_item']:>16.1f} B{r['overhead']:>14.1f} B"
                  f"{r['rss_per_item'] / r['payload_per_item']:>11.2f}{hp_}")
        tc = rows[0]["overhead"]
        for r in rows[1:]:
            print(f"overhead ratio twincache/{r['name']}: {tc / r['overhead']:.2f}" if r["overhead"] > 0 else "")
        summary.append((shape, {r["name"]: r["overhead"] for r in rows}))
    print("\n| dataset | twincache B/item | redis-server B/item | memcached B/item |")
    print("|---|---:|---:|---:|")
    for shape, o in summary:
        cell = lambda k: f"{o[k]:.1f}" if k in o else "n/a"
        print(f"| {labels[shape]} | {cell('twincache')} | {cell('redis')} | {cell('memcached')} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
