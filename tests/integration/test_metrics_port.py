"""twincache's own Prometheus endpoint (metrics-port, docs/metrics.md).

The exposition is parsed with prometheus_client's text parser (PyPI, in .venv-metrics from
scripts/install-deps.sh; without it the parsing tests skip): every family has HELP and TYPE,
the values follow known traffic on both protocols. Then HTTP itself: 404 for other paths, 405
for other methods, keep-alive and pipelining, and bad or oversized requests get a 4xx answer and
a clean close while the server keeps serving.
"""

import glob
import http.client
import socket
import sys
import time
from pathlib import Path

import pytest

from harness import IS_REDIS, tcharness

# sanitize: scripts/test.sh runs these under ASan+UBSan and TSan too (the endpoint's thread
# reads what the workers write)
pytestmark = [pytest.mark.skipif(IS_REDIS, reason="twincache's own endpoint"), pytest.mark.sanitize]

ROOT = Path(__file__).resolve().parents[2]
for sp in glob.glob(str(ROOT / ".venv-metrics" / "lib" / "python3*" / "site-packages")):
    if sp not in sys.path:
        sys.path.append(sp)
try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # pragma: no cover
    text_string_to_metric_families = None

N = 30


@pytest.fixture(scope="module")
def srv():
    port = tcharness.free_port()
    s = tcharness.start_twincache("--metrics-port", str(port), mc=True)
    s.metrics_port = port
    yield s
    s.stop(check=True)


def get(port, path="/metrics", method="GET", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, headers=headers or {})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r, body


def families(port):
    if text_string_to_metric_families is None:
        pytest.skip("prometheus_client missing: run scripts/install-deps.sh (.venv-metrics)")
    r, body = get(port)
    assert r.status == 200
    assert r.getheader("Content-Type") == "text/plain; version=0.0.4; charset=utf-8"
    text = body.decode()
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    return fams, text


def value(fams, name, **labels):
    for s in fams[name].samples:
        if all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    raise AssertionError("no sample %s %r in %r" % (name, labels, fams[name].samples))


def raw(port, data, wait_close=True, timeout=5.0):
    """Send data on a new connection; everything answered until the server closes (or the
    timeout passes: then the second element is False)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    s.sendall(data)
    out, closed = b"", False
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            b = s.recv(65536)
            if not b:
                closed = True
                break
            out += b
            if not wait_close:
                break
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out, closed


def test_config_get_and_immutable(srv):
    c = srv.client(decode=True)
    assert c.config_get("metrics-port") == {"metrics-port": str(srv.metrics_port)}
    assert "metrics-port" not in c.config_get("*")  # hidden from CONFIG GET *, as threads
    with pytest.raises(Exception, match="immutable"):
        c.config_set("metrics-port", "0")
    c.close()


def test_families_and_values(srv):
    c = srv.client(decode=True)
    c.flushall()
    c.config_resetstat()
    for i in range(N):
        c.set("k%d" % i, "v")
    c.expire("k0", 1000)
    c.select(3)
    c.set("other", "x")
    c.select(0)
    for _ in range(3):
        try:
            c.execute_command("INCR", "k1")  # "v" is not an integer: a failed call
        except Exception:
            pass
    try:
        c.execute_command("GET")  # wrong arity: a rejected call
    except Exception:
        pass
    mc = socket.create_connection(("127.0.0.1", srv.mc_port))
    mc.sendall(b"set m1 0 0 1\r\na\r\nget m1 m2\r\n")
    assert b"END" in mc.recv(4096) or True
    time.sleep(0.2)
    fams, text = families(srv.metrics_port)

    for line in text.splitlines():  # every sample's family has HELP and TYPE before it
        if line and not line.startswith("#"):
            name = line.split("{")[0].split(" ")[0]
            assert name.startswith("twincache_"), line
    assert text.count("# TYPE ") == text.count("# HELP ") == len(fams)

    # prometheus_client names counters without _total
    assert value(fams, "twincache_commands", cmd="set") == N + 1
    assert value(fams, "twincache_commands_failed_calls", cmd="incr") == 3
    assert value(fams, "twincache_commands_rejected_calls", cmd="get") == 1
    assert value(fams, "twincache_commands_duration_seconds", cmd="set") > 0
    assert value(fams, "twincache_error_replies") >= 4
    assert fams["twincache_commands"].type == "counter"
    assert value(fams, "twincache_db_keys", db="db0") == N + 1  # + the memcached item
    assert value(fams, "twincache_db_keys", db="db3") == 1
    assert value(fams, "twincache_db_keys_expiring", db="db0") == 1
    assert fams["twincache_db_keys"].type == "gauge"
    assert value(fams, "twincache_memory_used_bytes") > 0
    assert value(fams, "twincache_memory_rss_bytes") > 0
    assert value(fams, "twincache_connected_clients") >= 2
    assert value(fams, "twincache_replication_role", role="master") == 1
    assert value(fams, "twincache_replication_role", role="slave") == 0
    assert "twincache_replication_offset" in fams
    assert value(fams, "twincache_expired_keys") == 0
    assert value(fams, "twincache_evicted_keys") == 0
    workers = [s for s in fams["twincache_worker_connections"].samples]
    assert len(workers) == 2
    assert sum(s.value for s in workers) >= 2
    per_worker = sum(s.value for s in fams["twincache_worker_commands"].samples)
    assert per_worker == value(fams, "twincache_commands_processed") >= N
    assert value(fams, "twincache_memcached_connections") >= 1
    assert value(fams, "twincache_memcached_cmd_set") >= 1
    assert value(fams, "twincache_memcached_get_hits") >= 1
    assert value(fams, "twincache_memcached_get_misses") >= 1
    mc.close()
    c.close()


def test_expired_keys_counted(srv):
    c = srv.client(decode=True)
    before = value(families(srv.metrics_port)[0], "twincache_expired_keys")
    c.set("gone", "1", px=1)
    time.sleep(0.05)
    assert c.get("gone") is None
    assert value(families(srv.metrics_port)[0], "twincache_expired_keys") == before + 1
    c.close()


def test_not_found_and_methods(srv):
    r, body = get(srv.metrics_port, "/")
    assert r.status == 404
    r, body = get(srv.metrics_port, "/metricsx")
    assert r.status == 404
    r, body = get(srv.metrics_port, "/metrics?name[]=x")  # the query is not the path
    assert r.status == 200
    out, _ = raw(srv.metrics_port, b"GET http://h:1/metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK\r\n")  # absolute-form
    r, body = get(srv.metrics_port, "/metrics", method="POST")
    assert r.status == 405 and r.getheader("Allow") == "GET, HEAD"
    r, body = get(srv.metrics_port, "/metrics", method="HEAD")
    assert r.status == 200 and body == b"" and int(r.getheader("Content-Length")) > 1000


def test_keep_alive_and_pipelining(srv):
    c = http.client.HTTPConnection("127.0.0.1", srv.metrics_port, timeout=10)
    for _ in range(3):
        c.request("GET", "/metrics")
        r = c.getresponse()
        assert r.status == 200 and b"twincache_info" in r.read()
    c.close()
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n" \
          b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    out, closed = raw(srv.metrics_port, req)
    assert closed
    assert out.count(b"HTTP/1.1 200 OK\r\n") == 2 and out.count(b"HTTP/1.1 404 ") == 1
    out, closed = raw(srv.metrics_port, b"GET /metrics HTTP/1.0\r\n\r\n")  # 1.0: closes
    assert closed and out.startswith(b"HTTP/1.1 200 OK\r\n") and b"Connection: close" in out


BAD = [
    (b"GARBAGE\r\n\r\n", 400),
    (b"GET /metrics\r\n\r\n", 400),
    (b"GET  /metrics HTTP/1.1\r\n\r\n", 400),
    (b"GET ?me/ HTTP/1.1\r\n\r\n", 400),  # neither origin- nor absolute-form
    (b"GET http://host HTTP/1.1\r\n\r\n", 400),
    (b"GET /metrics HTTP/2.0\r\n\r\n", 505),
    (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\n folded: x\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nBad\x01: x\r\n\r\n", 400),
    (b"GET /metrics HTTP/1.1\r\nX: a\x00b\r\n\r\n", 400),
    (b"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 413),
    (b"GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 413),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64 + b"\r\n", 400),  # TLS
    (b"*1\r\n$4\r\nPING\r\n", 400),  # RESP
    (b"GET /metrics HTTP/1.1\r\n" + b"X-Long: " + b"a" * 9000 + b"\r\n\r\n", 431),
    (b"GET /metrics HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(80)) + b"\r\n",
     431),
    (b"GET /" + b"m" * 10000, 431),  # no end of line within the limit
]


@pytest.mark.parametrize("data,code", BAD, ids=range(len(BAD)))
def test_bad_requests_answered_and_closed(srv, data, code):
    out, closed = raw(srv.metrics_port, data)
    assert out.startswith(b"HTTP/1.1 %d " % code), out[:200]
    assert b"Connection: close\r\n" in out
    assert closed, "the server closes after a bad request"
    r, _ = get(srv.metrics_port)  # and keeps serving
    assert r.status == 200
    assert srv.client().ping()


def test_half_sent_and_many_connections(srv):
    socks = []
    for _ in range(40):  # more than the endpoint's 32 at once: the rest wait in the backlog
        s = socket.create_connection(("127.0.0.1", srv.metrics_port))
        s.sendall(b"GET /metr")
        socks.append(s)
    for s in socks[:10]:
        s.close()
    r, _ = get(srv.metrics_port)
    assert r.status == 200
    for s in socks[10:]:
        s.close()
    assert srv.client().ping()


def test_off_by_default():
    s = tcharness.start_twincache()
    try:
        c = s.client(decode=True)
        assert c.config_get("metrics-port") == {"metrics-port": "0"}
        c.close()
        tid_names = []
        for t in glob.glob("/proc/%d/task/*/comm" % s.pid):
            with open(t) as fh:
                tid_names.append(fh.read().strip())
        assert "tc-metrics" not in tid_names  # no thread, no socket
    finally:
        s.stop(check=True)


def test_port_in_use_fails_start():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        s = tcharness.start_twincache("--metrics-port", str(port), "--bind", "127.0.0.1",
                                      start=False)
        s.spawn()
        assert s.wait_exit(10) is not None
        assert "metrics port" in s.output()


def test_grafana_dashboard_uses_exported_names(srv):
    """docs/grafana/twincache.json is valid JSON and every twincache_ name its panels query is
    a family the endpoint exports."""
    import json
    import re
    dash = json.loads((ROOT / "docs" / "grafana" / "twincache.json").read_text())
    _, body = get(srv.metrics_port)
    exported = set(re.findall(r"^# TYPE (twincache_\w+) ", body.decode(), re.M))
    used = set()
    for p in dash["panels"]:
        for t in p["targets"]:
            used |= set(re.findall(r"twincache_\w+", t["expr"]))
    assert len(dash["panels"]) >= 10
    assert used and used <= exported, used - exported


def test_scrapes_during_traffic(srv):
    """Scrapes while clients of both protocols run commands: counters never go back, and the
    traffic is not disturbed (bounded: a few hundred commands per client)."""
    import threading
    stop = threading.Event()
    errors = []

    def resp_load():
        c = srv.client()
        try:
            for i in range(400):
                if stop.is_set():
                    break
                c.set("load:%d" % (i % 50), "x" * 100)
                c.get("load:%d" % (i % 50))
        except Exception as e:  # noqa: BLE001
            errors.append(e)
        finally:
            c.close()

    def mc_load():
        try:
            s = socket.create_connection(("127.0.0.1", srv.mc_port))
            s.settimeout(10)
            for i in range(200):
                if stop.is_set():
                    break
                s.sendall(b"set mload%d 0 0 1\r\nx\r\n" % (i % 20))
                assert s.recv(100) == b"STORED\r\n"
            s.close()
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=f) for f in (resp_load, resp_load, mc_load)]
    for t in threads:
        t.start()
    last = -1
    try:
        for _ in range(15):
            r, body = get(srv.metrics_port)
            assert r.status == 200
            line = [x for x in body.decode().splitlines()
                    if x.startswith("twincache_commands_processed_total ")][0]
            v = float(line.split()[1])
            assert v >= last
            last = v
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not errors, errors


def test_config_file_and_rewrite():
    """metrics-port from the config file; CONFIG REWRITE keeps it."""
    d = Path(tcharness.scratch_dir("metrics-conf"))
    port = tcharness.free_port()
    conf = d / "twincache.conf"
    conf.write_text("metrics-port %d\n" % port)
    s = tcharness.start_twincache(config_file=conf, dir=d)
    try:
        r, body = get(port)
        assert r.status == 200 and b"twincache_info" in body
        c = s.client(decode=True)
        c.config_set("maxmemory", "10mb")
        assert c.config_rewrite()
        c.close()
        assert ("metrics-port %d" % port) in conf.read_text().splitlines()
    finally:
        s.stop(check=True)


def test_replication_families(srv):
    """A replica of the module's server: its role and offset, the primary's replica count."""
    port = tcharness.free_port()
    rep = tcharness.start_twincache("--metrics-port", str(port))
    try:
        r = rep.client(decode=True)
        r.replicaof("127.0.0.1", srv.port)
        deadline = time.time() + 20
        while r.info("replication").get("master_link_status") != "up":
            assert time.time() < deadline, "replica never linked"
            time.sleep(0.05)
        p = srv.client(decode=True)
        p.set("repl:x", "1")
        while r.get("repl:x") is None:
            assert time.time() < deadline
            time.sleep(0.05)
        fams, text = families(port)
        assert value(fams, "twincache_replication_role", role="slave") == 1
        assert value(fams, "twincache_replication_offset") > 0
        assert value(fams, "twincache_net_repl_input_bytes") > 0
        pf, _ = families(srv.metrics_port)
        assert value(pf, "twincache_connected_replicas") == 1
        assert value(pf, "twincache_net_repl_output_bytes") > 0
        assert value(pf, "twincache_replication_offset") >= value(fams, "twincache_replication_offset")
        r.replicaof("no", "one")
        r.close()
        p.close()
    finally:
        rep.stop(check=True)
