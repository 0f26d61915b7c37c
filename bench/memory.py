#!/usr/bin/python3
"""Memory per item: load N items into twincache, Debian's redis-server and Debian's memcached,
one after the other on free loopback ports, and print RSS growth per item and overhead per item
= (RSS growth - key and value bytes) / items, with ratios twincache/redis and
twincache/memcached. Shapes: (a) 16-byte keys, 32-byte values; (b) seed-000 records
(48 bytes of 2 longs + 4 doubles, plus a 50..400 character string).

Usage: bench/memory.py [--items N] [--twincache build/twincache] [--shape a|b|both]
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
BATCH = 100  # requests per pipelined batch (Hazelcast stalled on 2000 seed-000 records)


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
        if expect == BATCH:
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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--twincache", default=os.path.join(ROOT, "build", "twincache"))
    ap.add_argument("--shape", default="both", choices=["a", "b", "both"])
    ap.add_argument("--with", dest="with_", action="append", default=[], help="hazelcast: also a Hazelcast member")
    ap.add_argument("--hz-heap", default="8g", help="the Hazelcast member's -Xmx (default 8g)")
    ap.add_argument("--jbench-dir", default=os.path.join(ROOT, "bench", "java", "target"))
    ap.add_argument("--json", help="write the figures here (bench/compare --memory puts them in the HTML report)")
    a = ap.parse_args()
    result = {"method": "RSS growth per item (VmRSS after minus before loading, same pipelined loader for "
                        "every server); the JVM member gets a full GC (jcmd GC.run) before each reading",
              "items": a.items, "shapes": {}}
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
        if "hazelcast" in a.with_:
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
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
