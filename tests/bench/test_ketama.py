"""Ketama placement must equal libmemcached's (Debian libmemcached11) and
twemproxy's for a fixed server list."""
import ctypes
import ctypes.util
import subprocess

import pytest

from conftest import run_tb

MEMCACHED_BEHAVIOR_HASH = 2
MEMCACHED_BEHAVIOR_KETAMA = 3
MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED = 16
MEMCACHED_HASH_MD5 = 1


def libmemcached():
    name = ctypes.util.find_library("memcached") or "libmemcached.so.11"
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        pytest.skip("libmemcached not installed (Debian libmemcached11)")
    lib.memcached_create.restype = ctypes.c_void_p
    lib.memcached_create.argtypes = [ctypes.c_void_p]
    lib.memcached_free.argtypes = [ctypes.c_void_p]
    lib.memcached_server_add.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint]
    lib.memcached_behavior_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
    lib.memcached_generate_hash.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.memcached_generate_hash.restype = ctypes.c_uint32
    lib.memcached_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.c_char_p, ctypes.c_size_t, ctypes.c_long, ctypes.c_uint32]
    lib.memcached_set.restype = ctypes.c_int
    return lib


LAYOUTS = {
    # twinbench --ketama name: behaviours set on libmemcached before adding servers
    "libmemcached": [(MEMCACHED_BEHAVIOR_KETAMA, 1)],
    "libmemcached-md5": [(MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_MD5), (MEMCACHED_BEHAVIOR_KETAMA, 1)],
    "twemproxy": [(MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1)],
}

HOSTS = [("127.0.0.1", 22122), ("127.0.0.1", 22123), ("10.1.2.3", 11211), ("cache-4.example", 11311)]
KEYS = [f"key:{i}" for i in range(4000)] + [f"user:{i}:session" for i in range(1000)] + ["a", "", "x" * 200]


def lib_placement(lib, behaviours, hosts, keys):
    m = lib.memcached_create(None)
    for b, v in behaviours:
        lib.memcached_behavior_set(m, b, v)
    for h, p in hosts:
        lib.memcached_server_add(m, h.encode(), p)
    out = [lib.memcached_generate_hash(m, k.encode(), len(k)) for k in keys]
    return m, out


def tb_placement(twinbench, layout, hosts, keys):
    url = "memcache://" + ",".join(f"{h}:{p}" for h, p in hosts)
    r = subprocess.run([twinbench, "--ketama", layout, "--target", "x=" + url, "--print-shard", "-"],
                       input="\n".join(keys) + "\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")[: len(keys)]
    return [int(line.split()[1]) for line in lines]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_placement_equals_libmemcached(twinbench, layout):
    lib = libmemcached()
    keys = [k for k in KEYS if k]  # libmemcached refuses the empty key
    hosts = HOSTS
    m, expected = lib_placement(lib, LAYOUTS[layout], hosts, keys)
    lib.memcached_free(m)
    got = tb_placement(twinbench, layout, hosts, keys)
    assert len(got) == len(expected)
    mismatches = [(k, e, g) for k, e, g in zip(keys, expected, got) if e != g]
    assert not mismatches, mismatches[:10]
    assert len(set(got)) == len(hosts)  # every host owns keys


def test_live_placement_two_memcached(twinbench, memcached_pair):
    """libmemcached stores keys in two live memcached instances; twinbench says
    the same host, and twinbench's own preload puts its keys on those hosts."""
    from pymemcache.client.base import Client

    lib = libmemcached()
    a, b = memcached_pair
    hosts = [("127.0.0.1", a.port), ("127.0.0.1", b.port)]
    keys = [f"lm:{i}" for i in range(300)]
    m, _ = lib_placement(lib, LAYOUTS["libmemcached"], hosts, [])
    for k in keys:
        rc = lib.memcached_set(m, k.encode(), len(k), b"v", 1, 0, 0)
        assert rc == 0, f"memcached_set rc={rc}"
    lib.memcached_free(m)
    clients = [Client(("127.0.0.1", p)) for _, p in hosts]
    where = []
    for k in keys:
        found = [i for i, c in enumerate(clients) if c.get(k) is not None]
        assert len(found) == 1, (k, found)
        where.append(found[0])
    assert sorted(set(where)) == [0, 1]
    assert tb_placement(twinbench, "libmemcached", hosts, keys) == where

    # twinbench writes key:0..999 through the sharded target; each key must be
    # on the host libmemcached would pick
    url = "memcache://" + ",".join(f"{h}:{p}" for h, p in hosts)
    run_tb(twinbench, "--target", "pair=" + url, "--preload", "--key-maximum", "999",
           "--ratio", "0:1", "-t", "1", "-c", "2", "-n", "50")
    keys = [f"key:{i}" for i in range(1000)]
    predicted = tb_placement(twinbench, "libmemcached", hosts, keys)
    for k, h in zip(keys, predicted):
        assert clients[h].get(k) is not None, k
        assert clients[1 - h].get(k) is None, k


def test_weighted_points_equal_libmemcached(twinbench):
    """KETAMA_WEIGHTED points per server use libmemcached's (and twemproxy's) float formula:
    unequal weights, and 25 equal servers (156 points each, not 160)."""
    lib = libmemcached()
    lib.memcached_server_add_with_weight.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                                      ctypes.c_uint, ctypes.c_uint32]
    keys = [f"w:{i}" for i in range(3000)]
    for hosts in ([("10.0.0.1", 7001, 1), ("10.0.0.2", 7002, 3), ("10.0.0.3", 7003, 2)],
                  [(f"10.0.1.{i}", 7000 + i, 1) for i in range(25)]):
        m = lib.memcached_create(None)
        lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1)
        for h, p, w in hosts:
            lib.memcached_server_add_with_weight(m, h.encode(), p, w)
        expected = [lib.memcached_generate_hash(m, k.encode(), len(k)) for k in keys]
        lib.memcached_free(m)
        url = "memcache://" + ",".join(f"{h}:{p}:{w}" for h, p, w in hosts)
        r = subprocess.run([twinbench, "--ketama", "twemproxy", "--target", "x=" + url,
                            "--print-shard", "-"], input="\n".join(keys) + "\n",
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        got = [int(line.split()[1]) for line in r.stdout.splitlines()]
        assert got == expected


def test_node_names_replace_host_port(twinbench):
    """'host:port:1 name' places keys by the name (twemproxy's node names): the same names
    on other addresses give the same placement."""
    keys = [f"n:{i}" for i in range(2000)]

    def place(url):
        r = subprocess.run([twinbench, "--ketama", "twemproxy", "--target", "x=" + url,
                            "--print-shard", "-"], input="\n".join(keys) + "\n",
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return [int(line.split()[1]) for line in r.stdout.splitlines()]

    a = place("redis://127.0.0.1:7001:1 node1,127.0.0.1:7002:1 node2,127.0.0.1:7003:1 node3")
    b = place("redis://10.9.9.9:9001:1 node1,10.9.9.8:9002:1 node2,10.9.9.7:9003 node3")
    c = place("redis://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003")
    assert a == b
    assert a != c
    assert sorted(set(a)) == [0, 1, 2]
