"""Each preset, scaled down, against Debian's redis-server and memcached (and
twincache when built): article-format output, JSON that parses, HTML with charts."""
import json
import re

import pytest

from conftest import run_tb


@pytest.fixture(scope="module")
def targets(redis_server, memcached_server):
    return ["--target", f"redis=redis://127.0.0.1:{redis_server.port}",
            "--target", f"memcached=memcache://127.0.0.1:{memcached_server.port}"]


def check_json(path, names):
    d = json.load(open(path))
    assert [t["name"] for t in d["targets"]] == names
    for t in d["targets"]:
        assert t["ops_per_sec"] > 0
        for k in ("min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"):
            assert t["latency_ms"][k] >= 0
        assert t["latency_ms"]["p50"] <= t["latency_ms"]["p99"] <= t["latency_ms"]["max"]
        for k in ("hits", "misses", "errors"):
            assert isinstance(t[k], int)
        assert t["server_info"]
        for run in t["runs"]:
            assert sum(c for _, _, c in run["histogram_ns"]) == run["ops"]
    assert d["machine"]["cpu_cores"]
    return d


def test_seed000(twinbench, targets, tmp_path):
    js, html = tmp_path / "s0.json", tmp_path / "s0.html"
    r = run_tb(twinbench, *targets, "--preset", "seed000", "--scale", "0.01",
               "--json", str(js), "--html", str(html))
    out = r.stdout
    header = re.search(r"^Интервал, мс\t(.*)$", out, re.M)
    assert header
    cols = header.group(1).split("\t")
    assert cols == [f"{t}_{n}_{q}" for t in ("redis", "memcached")
                    for n, q in ((1, 100), (10, 1), (50, 1), (100, 1), (500, 1))]
    rows = re.findall(r"^(\d+(?:,\d+)?)\t", out, re.M)
    assert rows[:4] == ["0", "0,025", "0,05", "0,075"] and rows[40] == "1"
    assert out.count("Histogram data:") == 2 * 10
    assert out.count("расшифровка диапазона") == 10
    assert re.search(r"^ \|[+ ]{26}\|\s+\d+,\d\d ms -\s+\d+,\d\d ms \|\s+\d+ \(\s*\d+,\d\d%\)$", out, re.M)
    assert re.search(r"^        min: \d+,\d{6} ms, max: \d+,\d{6} ms$", out, re.M)
    assert "500 threads - 500 requests (by 1)" in out
    d = check_json(js, ["redis", "memcached"])
    for t in d["targets"]:
        measured = [x for x in t["runs"] if not x["warmup"]]
        assert len(measured) == 5
        assert all(x["errors"] == 0 and x["misses"] == 0 for x in measured)
        assert [x["connections"] for x in measured] == [1, 10, 50, 100, 500]
    page = html.read_text()
    assert page.count("<svg") >= 3 and "polyline" in page and "class=\"bar\"" in page


def test_seed001(twinbench, targets, tmp_path):
    js = tmp_path / "s1.json"
    r = run_tb(twinbench, *targets, "--preset", "seed001", "--scale", "0.05", "--json", str(js))
    out = r.stdout
    for name in ("PING_INLINE", "PING_BULK", "SET", "GET", "INCR", "LPUSH", "LPOP", "SADD", "SPOP",
                 "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)",
                 "LRANGE_300 (first 300 elements)", "LRANGE_500 (first 450 elements)",
                 "LRANGE_600 (first 600 elements)", "MSET (10 keys)"):
        assert f"====== {name} ======" in out, name
    blocks = re.findall(r"====== (.*?) ======\n  (\d+) requests completed in ([\d.]+) seconds\n"
                        r"  50 parallel clients\n  3 bytes payload\n  keep alive: 1\n\n"
                        r"((?:[\d.]+% <= \d+ milliseconds\n)+)([\d.]+) requests per second\n", out)
    assert len(blocks) == 15 + 3  # redis: whole suite; memcached: SET, GET, INCR
    for title, n, secs, lines, rps in blocks:
        assert n == "500"
        assert lines.rstrip("\n").split("\n")[-1].startswith("100.00% <= ")
        assert float(rps) > 0
    assert re.search(r"^ requests per second \\ Target redis memcached$", out, re.M)
    assert re.search(r"^LRANGE_600 [\d.]+ n/a$", out, re.M)
    d = check_json(js, ["redis", "memcached"])
    assert all(x["errors"] == 0 for t in d["targets"] for x in t["runs"])


def test_seed001_all_tests(twinbench, redis_server):
    r = run_tb(twinbench, "--target", f"redis=redis://127.0.0.1:{redis_server.port}",
               "--preset", "seed001", "--scale", "0.02", "--tests", "all")
    for name in ("RPUSH", "RPOP", "HSET", "ZADD", "ZPOPMIN", "XADD"):
        assert f"====== {name} ======" in r.stdout


def test_seed002(twinbench, targets, tmp_path):
    js = tmp_path / "s2.json"
    r = run_tb(twinbench, *targets, "--preset", "seed002", "--scale", "0.01", "--json", str(js))
    out = r.stdout
    lines = re.findall(r"^threads=(\d+),repeats=(\d+),valueLength=64,tps=(\d+),miss=(\d+),"
                       r"fail=(\d+),hit=(\d+),all=(\d+),hitRate=(\d\.\d\d)$", out, re.M)
    assert [int(x[0]) for x in lines] == [1, 10, 50, 100, 300] * 2
    for thr, rep, tps, miss, fail, hit, all_, rate in lines:
        assert int(rep) == 400 and int(all_) == int(thr) * 400
        assert int(hit) == int(all_) * 4 // 5  # 4:1 reads, every key preloaded
        assert miss == "0" and fail == "0" and rate == "1.00" and int(tps) > 0
    assert out.count("warm up") == 2
    check_json(js, ["redis", "memcached"])


def test_seed003(twinbench, targets, tmp_path):
    js, html = tmp_path / "s3.json", tmp_path / "s3.html"
    r = run_tb(twinbench, *targets, "--preset", "seed003", "--scale", "0.01",
               "--json", str(js), "--html", str(html))
    out = r.stdout
    assert re.search(r"^\|  \| redis \| memcached \|$", out, re.M)
    rows = re.findall(r"^\| (\d+) thread \| (\d+) \| (\d+) \|$", out, re.M)
    assert [int(x[0]) for x in rows] == [1, 2, 4, 8, 16, 32, 64, 128]
    avg = re.search(r"^\| Ortalama \| (\d+) \| (\d+) \|$", out, re.M)
    assert avg
    for col in (1, 2):
        vals = [int(x[col]) for x in rows]
        assert abs(sum(vals) / len(vals) - int(avg.group(col))) <= 1
    d = check_json(js, ["redis", "memcached"])
    for t in d["targets"]:
        combined = [x for x in t["runs"] if not x["detail"]]
        assert [x["label"] for x in combined] == [f"{n} thread" for n in (1, 2, 4, 8, 16, 32, 64, 128)]
        assert all(x["ops"] == 2 * 1311 and x["hits"] == 1311 for x in combined)
    assert "Throughput (ops/s)" in html.read_text()


def test_presets_against_twincache(twinbench, twincache_server, tmp_path):
    tc = ["--target", f"twincache=redis://127.0.0.1:{twincache_server.port}",
          "--target", f"twincache-mc=memcache://127.0.0.1:{twincache_server.mport}"]
    r = run_tb(twinbench, *tc, "--preset", "seed002", "--scale", "0.005")
    assert r.stdout.count("threads=") == 10
    r = run_tb(twinbench, *tc, "--preset", "seed003", "--scale", "0.005")
    assert "| Ortalama |" in r.stdout
