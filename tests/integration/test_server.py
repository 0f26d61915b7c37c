"""Server commands: INFO, CONFIG, DBSIZE, FLUSHDB/FLUSHALL, TIME, MEMORY USAGE, SLOWLOG,
SHUTDOWN."""

import os
import re
import signal
import time

import pytest

from harness import IS_REDIS
from itutil import keyspace, parse_info, raises_exact, wait_until

pytestmark = pytest.mark.sanitize

SYNTAX = "ERR syntax error"

# Section -> fields that Redis has there and the foundation issue asks for.
INFO_FIELDS = {
    "server": ["redis_version", "redis_mode", "os", "arch_bits", "process_id", "tcp_port",
               "uptime_in_seconds", "uptime_in_days", "hz", "executable", "config_file"],
    "clients": ["connected_clients", "maxclients", "blocked_clients"],
    "memory": ["used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak",
               "maxmemory", "maxmemory_human", "maxmemory_policy", "mem_fragmentation_ratio"],
    "persistence": ["loading", "rdb_changes_since_last_save", "aof_enabled"],
    "stats": ["total_connections_received", "total_commands_processed",
              "instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes",
              "rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits",
              "keyspace_misses"],
    "replication": ["role", "connected_slaves"],
    "cpu": ["used_cpu_sys", "used_cpu_user"],
}


def info_text(r, *sections):
    return r.cmd("INFO", *sections)


def test_info_default_sections(server, r):
    r.set("a", "1")
    r.set("b", "2", ex=100)
    text = info_text(r)
    assert isinstance(text, str) and "\r\n" in text
    info = parse_info(text)
    for section, fields in INFO_FIELDS.items():
        assert section in info, "missing section # %s" % section
        for f in fields:
            assert f in info[section], "INFO %s lacks %s" % (section, f)
    assert "keyspace" in info
    s = info["server"]
    assert re.match(r"^\d+\.\d+\.\d+$", s["redis_version"])
    assert s["redis_mode"] == "standalone"
    assert int(s["tcp_port"]) == server.port
    assert int(s["process_id"]) == server.pid
    assert info["replication"]["role"] == "master"
    assert info["persistence"]["loading"] == "0"
    assert int(info["memory"]["used_memory"]) > 0
    assert re.match(r"^[0-9.]+[BKMG]$", info["memory"]["used_memory_human"])
    assert float(info["cpu"]["used_cpu_user"]) >= 0
    assert info["keyspace"]["db0"].startswith("keys=2,expires=1,avg_ttl=")
    # section headers are "# Name"
    assert re.search(r"^# Server\r$", text, re.M)
    assert re.search(r"^# Keyspace\r$", text, re.M)


def test_info_single_and_multiple_sections(r):
    r.set("k", "v")
    text = info_text(r, "server")
    assert text.startswith("# Server\r\n")
    assert "connected_clients" not in text and "db0:" not in text
    text = info_text(r, "keyspace")
    assert text == "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"
    text = info_text(r, "CLIENTS")  # case-insensitive
    assert text.startswith("# Clients\r\n")
    text = info_text(r, "server", "stats")  # Redis 7: several sections
    info = parse_info(text)
    assert "server" in info and "stats" in info and "clients" not in info
    for arg in ("all", "everything", "default"):
        info = parse_info(info_text(r, arg))
        for section in INFO_FIELDS:
            assert section in info, (arg, section)
    assert info_text(r, "nosuchsection") == ""
    # as Redis's section set: each section once, in the usual order, whatever the arguments
    heads = lambda *a: re.findall(r"^# (\w+)\r$", info_text(r, *a), re.M)  # noqa: E731
    assert heads("keyspace", "server", "server") == ["Server", "Keyspace"]
    assert heads("cpu", "all").count("CPU") == 1
    assert heads("cpu", "default") == heads("default")


def test_info_counters(server, r):
    before = r.info("stats")
    r.set("hit", "1")
    for _ in range(5):
        r.get("hit")
    for _ in range(3):
        r.get("miss")
    after = r.info("stats")
    assert after["keyspace_hits"] - before["keyspace_hits"] == 5
    assert after["keyspace_misses"] - before["keyspace_misses"] == 3
    assert after["total_commands_processed"] - before["total_commands_processed"] >= 10
    assert after["total_net_input_bytes"] > before["total_net_input_bytes"]
    base = r.info("clients")["connected_clients"]
    conns = [server.raw() for _ in range(5)]
    for c in conns:
        c.call("PING")
    assert r.info("clients")["connected_clients"] == base + 5
    stats = r.info("stats")
    assert stats["total_connections_received"] - after["total_connections_received"] >= 5
    for c in conns:
        c.close()
    wait_until(lambda: r.info("clients")["connected_clients"] == base,
               what="connected_clients to drop back to %d" % base)


def test_info_keyspace_multiple_dbs(server, r):
    r.mset({"a": "1", "b": "2"})
    server.client(db=3).set("c", "3", ex=100)
    ks = keyspace(info_text(r, "keyspace"))
    assert ks == {0: (2, 0), 3: (1, 1)}
    r.flushall()
    assert info_text(r, "keyspace") == "# Keyspace\r\n"


def test_config_get(server, r):
    assert r.config_get("port") == {"port": str(server.port)}
    assert r.cmd("CONFIG", "GET", "port") == ["port", str(server.port)]
    assert r.config_get("databases") == {"databases": "16"}
    assert r.config_get("nosuchparameter") == {}
    # glob patterns
    got = r.config_get("maxmemory*")
    assert {"maxmemory", "maxmemory-policy"} <= set(got)
    assert all(k.startswith("maxmemory") for k in got)
    got = r.config_get("*port*")
    assert "port" in got and all("port" in k for k in got)
    got = r.config_get("*")
    for name in ("port", "bind", "databases", "maxmemory", "maxmemory-policy", "maxclients",
                 "timeout", "requirepass", "save", "appendonly", "loglevel", "logfile", "dir",
                 "hz", "proto-max-bulk-len", "slowlog-log-slower-than", "slowlog-max-len"):
        assert name in got, name
    assert got["save"] == ""
    assert got["appendonly"] == "no"
    assert got["proto-max-bulk-len"] == "536870912"
    # Redis 7: several parameters in one call
    got = r.cmd("CONFIG", "GET", "port", "databases")
    assert dict(zip(got[0::2], got[1::2])) == {"port": str(server.port), "databases": "16"}
    with raises_exact("ERR wrong number of arguments for 'config|get' command"):
        r.cmd("CONFIG", "GET")
    with raises_exact("ERR unknown subcommand 'foo'. Try CONFIG HELP."):
        r.cmd("CONFIG", "foo")


def test_config_set(r):
    old = r.config_get("maxmemory")["maxmemory"]
    try:
        assert r.cmd("CONFIG", "SET", "maxmemory", "100mb") == "OK"
        assert r.config_get("maxmemory") == {"maxmemory": str(100 * 1024 * 1024)}
        assert int(r.info("memory")["maxmemory"]) == 100 * 1024 * 1024
        assert r.cmd("CONFIG", "SET", "maxmemory", "1gb") == "OK"
        assert r.config_get("maxmemory") == {"maxmemory": str(1024 ** 3)}
        with raises_exact("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - "
                          "argument must be a memory value"):
            r.cmd("CONFIG", "SET", "maxmemory", "lots")
        assert r.config_get("maxmemory") == {"maxmemory": str(1024 ** 3)}
    finally:
        r.config_set("maxmemory", old)
    with raises_exact("ERR Unknown option or number of arguments for CONFIG SET - "
                      "'nosuchparameter'"):
        r.cmd("CONFIG", "SET", "nosuchparameter", "1")
    with raises_exact("ERR CONFIG SET failed (possibly related to argument 'databases') - "
                      "can't set immutable config"):
        r.cmd("CONFIG", "SET", "databases", "3")
    with raises_exact("ERR wrong number of arguments for 'config|set' command"):
        r.cmd("CONFIG", "SET", "maxmemory")
    old = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        assert r.cmd("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu") == "OK"
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lfu"}
        assert r.info("memory")["maxmemory_policy"] == "allkeys-lfu"
        with raises_exact("ERR CONFIG SET failed (possibly related to argument "
                          "'maxmemory-policy') - argument(s) must be one of the following: "
                          "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, "
                          "allkeys-lru, allkeys-lfu, allkeys-random, noeviction"):
            r.cmd("CONFIG", "SET", "maxmemory-policy", "sometimes")
    finally:
        r.config_set("maxmemory-policy", old)


def test_config_resetstat(r):
    r.set("k", "v")
    for _ in range(10):
        r.get("k")
        r.get("nokey")
    assert r.info("stats")["keyspace_hits"] >= 10
    assert r.cmd("CONFIG", "RESETSTAT") == "OK"
    stats = r.info("stats")
    assert stats["keyspace_hits"] == 0
    assert stats["keyspace_misses"] == 0
    assert stats["expired_keys"] == 0
    assert stats["total_commands_processed"] <= 2
    assert r.get("k") == "v"  # data untouched


def test_dbsize_flushdb_flushall(server, r):
    r3 = server.client(db=3)
    r.mset({"k%d" % i: "v" for i in range(100)})
    r3.mset({"x%d" % i: "v" for i in range(10)})
    assert r.dbsize() == 100 and r3.dbsize() == 10
    assert r.cmd("FLUSHDB") == "OK"
    assert r.dbsize() == 0 and r3.dbsize() == 10
    r.mset({"k%d" % i: "v" for i in range(100)})
    assert r.cmd("FLUSHDB", "ASYNC") == "OK"
    assert r.dbsize() == 0
    r.mset({"k%d" % i: "v" for i in range(100)})
    assert r.cmd("FLUSHDB", "SYNC") == "OK"
    assert r.dbsize() == 0 and r3.dbsize() == 10
    r.set("a", "1")
    assert r.cmd("FLUSHALL", "ASYNC") == "OK"
    assert r.dbsize() == 0 and r3.dbsize() == 0
    r.set("a", "1")
    r3.set("b", "1")
    assert r.cmd("FLUSHALL", "SYNC") == "OK"
    assert r.dbsize() == 0 and r3.dbsize() == 0
    assert r.cmd("FLUSHALL") == "OK"
    with raises_exact(SYNTAX):
        r.cmd("FLUSHDB", "FOO")
    with raises_exact(SYNTAX):
        r.cmd("FLUSHALL", "SYNC", "ASYNC")
    with raises_exact("ERR wrong number of arguments for 'dbsize' command"):
        r.cmd("DBSIZE", "x")
    # writes right after an async flush land in the new, empty keyspace
    r.mset({"k%d" % i: "v" for i in range(1000)})
    r.flushall(asynchronous=True)
    r.set("after", "1")
    assert r.dbsize() == 1 and r.get("after") == "1"


def test_time(r):
    sec, usec = r.cmd("TIME")
    assert re.match(r"^\d+$", sec) and re.match(r"^\d+$", usec)
    assert 0 <= int(usec) < 1000000
    server_now = int(sec) + int(usec) / 1e6
    assert abs(server_now - time.time()) < 2
    t1 = r.time()
    time.sleep(0.01)
    t2 = r.time()
    assert t2 > t1


def test_memory_usage(r):
    r.set("small", "v")
    r.set("big", "x" * 10000)
    small = r.memory_usage("small")
    big = r.memory_usage("big")
    assert isinstance(small, int) and small > 0
    assert big >= 10000 and big > small
    assert r.memory_usage("nokey") is None
    assert r.cmd("MEMORY", "USAGE", "big", "SAMPLES", "0") >= 10000
    with raises_exact(SYNTAX):
        r.cmd("MEMORY", "USAGE", "big", "FOO")
    with raises_exact("ERR wrong number of arguments for 'memory|usage' command"):
        r.cmd("MEMORY", "USAGE")


def test_slowlog(server, r):
    old = r.config_get("slowlog-log-slower-than")["slowlog-log-slower-than"]
    c = server.client(single_connection_client=True)
    c.client_setname("slowpoke")
    try:
        r.config_set("slowlog-log-slower-than", "1000000")
        assert r.cmd("SLOWLOG", "RESET") == "OK"
        assert r.cmd("SLOWLOG", "LEN") == 0
        assert r.cmd("SLOWLOG", "GET") == []
        r.config_set("slowlog-log-slower-than", "0")  # log everything
        c.cmd("SET", "slowkey", "slowvalue")
        c.cmd("GET", "slowkey")
        r.config_set("slowlog-log-slower-than", "1000000")
        n = r.cmd("SLOWLOG", "LEN")
        assert n >= 2
        entries = r.cmd("SLOWLOG", "GET", "100")
        assert len(entries) == n
        ids = [e[0] for e in entries]
        assert ids == sorted(ids, reverse=True)  # newest first
        by_args = {tuple(e[3]): e for e in entries}
        e = by_args[("SET", "slowkey", "slowvalue")]
        assert abs(e[1] - time.time()) < 5  # unix time
        assert isinstance(e[2], int) and e[2] >= 0  # microseconds
        assert re.match(r"^127\.0\.0\.1:\d+$", e[4])
        assert e[5] == "slowpoke"
        assert ("GET", "slowkey") in by_args
        assert len(r.cmd("SLOWLOG", "GET", "1")) == 1
        assert r.cmd("SLOWLOG", "RESET") == "OK"
        assert r.cmd("SLOWLOG", "LEN") == 0
        with raises_exact("ERR unknown subcommand 'FOO'. Try SLOWLOG HELP."):
            r.cmd("SLOWLOG", "FOO")
    finally:
        r.config_set("slowlog-log-slower-than", old)
        c.close()


@pytest.mark.parametrize("args", [[], ["NOSAVE"]], ids=["plain", "nosave"])
def test_shutdown(start_extra_server, args):
    srv = start_extra_server()
    c = srv.client()
    c.set("k", "v")
    other = srv.raw()
    other.call("PING")
    raw = srv.raw()
    raw.send(b"*%d\r\n$8\r\nSHUTDOWN\r\n" % (1 + len(args)) +
             b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
    data, closed = raw.read_all(timeout=5)
    assert closed and data == b"", data  # no reply: the server just goes away
    rc = srv.wait_exit(5)
    assert rc == 0, "exit code %r after SHUTDOWN; output:\n%s" % (rc, srv.output_tail())
    assert other.wait_closed(1)
    srv.stop(check=True)  # already exited: checks exit code and sanitizer output


def test_shutdown_errors(r):
    with raises_exact(SYNTAX):
        r.cmd("SHUTDOWN", "FOO")
    assert r.ping()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_shuts_down_cleanly(start_extra_server, sig):
    srv = start_extra_server()
    idle = srv.raw()
    assert idle.call("SET", "k", "v") == "OK"
    half = srv.raw()
    half.send(b"*3\r\n$3\r\nSET\r\n")  # a client in the middle of a command
    os.kill(srv.pid, sig)
    rc = srv.wait_exit(5)
    assert rc == 0, "exit code %r after %s; output:\n%s" % (rc, sig.name, srv.output_tail())
    assert idle.wait_closed(1) and half.wait_closed(1)
    srv.stop(check=True)


def test_config_file_and_command_line(start_extra_server, tmp_path):
    conf = tmp_path / "tc.conf"
    conf.write_text("# a redis.conf-style file\n"
                    "databases 4\n"
                    "\n"
                    "maxmemory 10mb\n"
                    "maxmemory-policy allkeys-random\n"
                    "timeout 300\n")
    srv = start_extra_server("--maxmemory", "20mb", "--bind", "127.0.0.1", config_file=conf)
    c = srv.client()
    got = c.config_get("*")
    assert got["databases"] == "4"
    assert got["maxmemory"] == str(20 * 1024 * 1024)  # the command line wins over the file
    assert got["maxmemory-policy"] == "allkeys-random"
    assert got["timeout"] == "300"
    assert got["bind"] == "127.0.0.1"
    assert got["port"] == str(srv.port)
    info = c.info("server")
    assert info["config_file"] == str(conf)


def test_logfile_and_loglevel(start_extra_server, tmp_path):
    log = tmp_path / "server.log"
    srv = start_extra_server("--loglevel", "notice", "--logfile", str(log))
    c = srv.client()
    assert c.config_get("logfile") == {"logfile": str(log)}
    assert c.config_get("loglevel") == {"loglevel": "notice"}
    wait_until(lambda: log.exists() and log.stat().st_size > 0, timeout=5,
               what="the server to write its log file")
    assert c.cmd("CONFIG", "SET", "loglevel", "warning") == "OK"
    assert c.config_get("loglevel") == {"loglevel": "warning"}
    srv.stop(check=True)
    assert log.stat().st_size > 0


@pytest.mark.skipif(IS_REDIS, reason="twincache's io-uring setting")
def test_io_uring_workers_in_info(start_extra_server):
    """INFO server io_uring_workers: every worker batches its socket I/O in io_uring with
    io-uring yes (unless the kernel refuses io_uring, which the log says), none with no; the
    server answers the same either way."""
    on = start_extra_server("--threads", "2", "--io-uring", "yes")
    c = on.client()
    c.set("k", "v")
    # each worker sets its ring up when its thread starts, which can be after the first
    # client is served
    unavailable = lambda: "io_uring is not available" in on.output()
    wait_until(lambda: int(c.info("server")["io_uring_workers"]) == 2 or unavailable(),
               what="both workers on io_uring")
    n = int(c.info("server")["io_uring_workers"])
    assert n == 2 or (n == 0 and unavailable()), n
    assert c.config_get("io-uring") == {"io-uring": "yes"}
    c.close()
    off = start_extra_server("--threads", "2", "--io-uring", "no")
    c = off.client()
    c.set("k", "v")
    assert c.get("k") == "v"
    assert int(c.info("server")["io_uring_workers"]) == 0
    assert c.config_get("io-uring") == {"io-uring": "no"}
    c.close()
