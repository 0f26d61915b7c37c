"""xmemcached (Maven; the scenario project tests/mc/xmemcached, built by
scripts/install-deps.sh) against memcached 1.6 and twincache side by side: binary protocol
(BinaryCommandFactory) without and with SASL PLAIN (AuthInfo.plain; memcached -S with a
cyrus-sasl sasldb), the text protocol, and a wrong password. Sets, gets, bulk gets (getMulti,
gets of many), CAS success and conflict (gets + cas, a CASOperation), incr/decr with initial
values, touch and getAndTouch, delete (with CAS), append/prepend, add/replace, noreply
variants, the serializing transcoder's types, values near and past the item size, stats,
version, flushAll. The scenario prints one JSON line per run: the client's results (never CAS
numbers), equal on both servers."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

from mcbin import start_memcached_sasl, start_with_auth
from mcharness import jvm_skip_reason

HERE = pathlib.Path(__file__).resolve().parent / "xmemcached"
JAR = HERE / "target" / "xmemcached-scenarios-1.jar"
CP = "%s:%s/*" % (JAR, HERE / "target" / "lib")
JAVA = shutil.which("java")

pytestmark = [
    pytest.mark.skipif(not (JAVA and JAR.exists()),
                       reason="java or the xmemcached scenarios (scripts/install-deps.sh) missing"),
    pytest.mark.skipif(jvm_skip_reason() is not None, reason=str(jvm_skip_reason())),
]

USER, PASSWORD = "xm", "s3cret:x"


@pytest.fixture(scope="module")
def sasl_servers(tmp_path_factory):
    got = start_memcached_sasl({USER: PASSWORD})
    if got is None:
        pytest.skip("saslpasswd2 (sasl2-bin) missing: scripts/install-deps.sh installs it")
    mc, d = got
    pw = tmp_path_factory.mktemp("xm") / "pw"
    pw.write_text("%s:%s\n" % (USER, PASSWORD))
    tc = start_with_auth("twincache", "--memcache-sasl", "yes", "--memcache-auth-file", str(pw))
    yield {"memcached": mc, "twincache": tc}
    tc.stop(check=True)
    mc.stop(check=False)
    shutil.rmtree(d, ignore_errors=True)


def scenarios(plain_port, sasl_port):
    """Run every scenario in one JVM: {scenario: steps}."""
    specs = ["binary:%d" % plain_port, "text:%d" % plain_port,
             "binary:%d:%s:%s" % (sasl_port, USER, PASSWORD),
             "badauth:%d:%s:wrong" % (sasl_port, USER)]
    p = subprocess.run([JAVA, "-cp", CP, "tc.XmemScenario"] + specs, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=180, cwd=str(HERE))
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0, out[-3000:] + p.stderr.decode("utf-8", "replace")[-3000:]
    runs = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    assert len(runs) == len(specs), out[-3000:]
    return {r["scenario"]: r["steps"] for r in runs}


@pytest.fixture(scope="module")
def results(tc, memcached, sasl_servers):
    return {"memcached": scenarios(memcached.mc_port, sasl_servers["memcached"].mc_port),
            "twincache": scenarios(tc.mc_port, sasl_servers["twincache"].mc_port)}


@pytest.mark.parametrize("scenario", ["binary", "text", "binary+sasl", "badauth+sasl"])
def test_xmemcached_same_as_memcached(results, scenario):
    want, got = results["memcached"][scenario], results["twincache"][scenario]
    assert list(got) == list(want)
    for step in want:
        assert got[step] == want[step], step


@pytest.mark.parametrize("scenario", ["binary", "binary+sasl"])
def test_xmemcached_binary_outcomes(results, scenario):
    """What the acceptance asks of the binary protocol, on twincache (the same on memcached,
    above): every operation did what it should, so a scenario that silently failed on both
    servers cannot pass."""
    s = results["twincache"][scenario]
    assert s["set"] == 300 and s["get"] == "value-7" and s["get miss"] == "null"
    assert s["getMulti"] == "300 entries, 300 right, missing in: false"
    assert s["getsMulti"] == {"distinct cas": 3, "x:1": "value-1", "x:2": "value-2",
                              "x:3": "value-3"}
    assert s["cas"] == {"gets": "value-1", "cas nonzero": True, "cas ok": True,
                        "cas conflict": False, "value": "changed", "cas changed": True,
                        "cas missing": False, "cas op": True, "after cas op": "value-2!"}
    d = s["incr decr"]
    assert (d["incr init"], d["incr"], d["decr"], d["decr floor"], d["decr init"]) == (
        10, 15, 12, 0, 7)
    assert d["incr wrap"] == 1 and d["incr text"].startswith("ERR MemcachedServerException")
    assert (d["counter inc"], d["counter add"], d["counter dec"]) == (1, 42, 41)
    assert s["touch"] == {"touch": True, "touch miss": False, "touch keeps cas": True,
                          "get and touch": "value-5", "get and touch miss": "null",
                          "touch past": True, "after touch past": "null",
                          "gat past": "value-8", "after gat past": "null"}
    assert s["delete"] == {"delete": True, "delete miss": False, "get deleted": "null",
                           "delete cas conflict": False, "delete cas": True}
    assert s["append prepend"]["value"] == "-value-11+"
    assert s["noreply"] == {"nr:1": "ac", "nr:2": "8", "x:13": "null"}
    assert s["large"]["get 1000000"] is True
    assert s["large"]["set 2000000"].startswith("ERR MemcachedServerException")
    assert s["flush all"] == "null"


def test_xmemcached_text_and_refused(results):
    t = results["twincache"]["text"]
    assert t["getMulti"] == "300 entries, 300 right, missing in: false"
    assert t["cas"]["cas ok"] is True and t["cas"]["cas conflict"] is False
    assert t["incr decr"]["incr init"] == 10
    bad = results["twincache"]["badauth+sasl"]
    assert bad == {"set": "refused", "get": "refused"}
