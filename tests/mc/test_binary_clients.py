"""Real binary-protocol clients against twincache and memcached 1.6 side by side:
libmemcached's memccapable -b, memccp/memccat/memcslap --binary (with SASL PLAIN against
twincache), and spymemcached in binary mode (BinaryConnectionFactory), also with SASL PLAIN
against both (memcached -S with a cyrus-sasl sasldb, mcbin.start_memcached_sasl)."""

import os
import shutil
import subprocess

import pytest

import tcharness
from mcbin import start_memcached_sasl, start_with_auth
from mcharness import jvm_skip_reason

TOOLS = ["memccapable", "memccp", "memccat", "memcslap"]
JAR = "/usr/share/java/spymemcached.jar"
missing = [t for t in TOOLS if not shutil.which(t)]


def run(*argv, timeout=120):
    p = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def sasl_tc(tmp_path_factory):
    d = tmp_path_factory.mktemp("sasl")
    (d / "pw").write_text("spy:s3cret\n")
    srv = start_with_auth("twincache", "--memcache-sasl", "yes", "--memcache-auth-file",
                          str(d / "pw"))
    yield srv
    srv.stop(check=True)


@pytest.fixture(scope="module")
def sasl_mc():
    got = start_memcached_sasl({"spy": "s3cret"})
    if got is None:
        pytest.skip("saslpasswd2 (sasl2-bin) missing: scripts/install-deps.sh installs it")
    srv, d = got
    yield srv
    srv.stop(check=False)
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(bool(missing), reason="libmemcached-tools missing: %s" % missing)
def test_memccapable_binary(tc, memcached):
    for srv in (memcached, tc):
        rc, out = run("memccapable", "-h", "127.0.0.1", "-p", str(srv.mc_port), "-b")
        assert rc == 0 and "All tests passed" in out, (srv, out[-3000:])
        assert "[FAIL]" not in out


@pytest.mark.skipif(bool(missing), reason="libmemcached-tools missing: %s" % missing)
def test_memccp_memccat_binary(tc, tmp_path):
    f = tmp_path / "blob.bin"
    data = os.urandom(300000)
    f.write_bytes(data)
    servers = "--servers=127.0.0.1:%d" % tc.mc_port
    rc, out = run("memccp", "--binary", servers, str(f))
    assert rc == 0, out
    p = subprocess.run(["memccat", "--binary", servers, "blob.bin"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0 and p.stdout == data + b"\n"  # memccat adds a newline


@pytest.mark.skipif(bool(missing), reason="libmemcached-tools missing: %s" % missing)
@pytest.mark.parametrize("kind", ["memcached", "twincache"])
def test_memccp_memccat_sasl(kind, request, tmp_path):
    srv = request.getfixturevalue("sasl_mc" if kind == "memcached" else "sasl_tc")
    f = tmp_path / "small.txt"
    f.write_bytes(b"hello sasl")
    servers = "--servers=127.0.0.1:%d" % srv.mc_port
    rc, out = run("memccp", "--binary", "-u", "spy", "-p", "s3cret", servers, str(f))
    assert rc == 0, out
    p = subprocess.run(["memccat", "--binary", "-u", "spy", "-p", "s3cret", servers,
                        "small.txt"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0 and p.stdout == b"hello sasl\n", p.stderr
    p = subprocess.run(["memccat", "--binary", "-u", "spy", "-p", "wrong", servers,
                        "small.txt"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert b"hello sasl" not in p.stdout


@pytest.mark.skipif(bool(missing), reason="libmemcached-tools missing: %s" % missing)
def test_memcslap_binary(tc):
    for test in ("set", "get", "mget"):
        rc, out = run("memcslap", "--binary", "--servers=127.0.0.1:%d" % tc.mc_port,
                      "--concurrency=2", "--execute-number=2000", "--test=" + test)
        assert rc == 0, out
        assert "Failure" not in out and "error" not in out.lower(), out[-2000:]


SOURCE = r"""
import java.net.InetSocketAddress;
import java.util.*;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.*;
import net.spy.memcached.auth.*;

public class SpyBin {
    static void check(boolean ok, String what) {
        if (!ok) { System.out.println("FAIL " + what); System.exit(1); }
    }
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        ConnectionFactoryBuilder b = new ConnectionFactoryBuilder()
            .setProtocol(ConnectionFactoryBuilder.Protocol.BINARY);
        if (args.length > 2)
            b.setAuthDescriptor(new AuthDescriptor(new String[]{"PLAIN"},
                                new PlainCallbackHandler(args[1], args[2])));
        MemcachedClient c = new MemcachedClient(b.build(),
            Arrays.asList(new InetSocketAddress("127.0.0.1", port)));
        boolean flushed;
        try {
            flushed = c.flush().get(args.length > 2 && args[2].equals("wrong") ? 1500 : 10000,
                                    TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            flushed = false;
        }
        if (!flushed && args.length > 2) { /* not logged in (a wrong password) */
            System.out.println("SPYBIN-REFUSED");
            System.exit(0);
        }
        check(flushed, "flush");
        int n = 2000;
        List<String> keys = new ArrayList<>();
        List<net.spy.memcached.internal.OperationFuture<Boolean>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String k = "spy:" + i;
            keys.add(k);
            fs.add(c.set(k, 3600, "value-" + i));
        }
        for (net.spy.memcached.internal.OperationFuture<Boolean> f : fs)
            check(f.get(30, TimeUnit.SECONDS), "set");
        check("value-7".equals(c.get("spy:7")), "get");
        check(c.get("nope") == null, "get miss");
        Map<String, Object> all = c.getBulk(keys);
        check(all.size() == n, "bulk size " + all.size());
        for (int i = 0; i < n; i++)
            check(("value-" + i).equals(all.get("spy:" + i)), "bulk value " + i);
        CASValue<Object> cv = c.gets("spy:1");
        check(cv != null && "value-1".equals(cv.getValue()), "gets");
        check(c.cas("spy:1", cv.getCas(), "changed") == CASResponse.OK, "cas ok");
        check(c.cas("spy:1", cv.getCas(), "again") == CASResponse.EXISTS, "cas conflict");
        check(c.cas("nope:1", 1L, "x") == CASResponse.NOT_FOUND, "cas not found");
        check("changed".equals(c.get("spy:1")), "value after cas");
        check(c.incr("counter", 1, 10) == 10, "incr default");
        check(c.incr("counter", 5) == 15, "incr");
        check(c.decr("counter", 20) == 0, "decr floor");
        check(c.incr("nocreate", 1) == -1, "incr miss");
        check(c.add("spy:2", 0, "x").get() == false, "add existing");
        check(c.delete("spy:2").get(), "delete");
        check(c.get("spy:2") == null, "get deleted");
        check(c.append(0, "spy:3", "+").get(), "append");
        check("value-3+".equals(c.get("spy:3")), "appended");
        check(c.touch("spy:4", 100).get(), "touch");
        check(!c.touch("nope", 100).get(), "touch miss");
        CASValue<Object> gt = c.getAndTouch("spy:5", 100);
        check(gt != null && "value-5".equals(gt.getValue()), "get and touch");
        check(c.getAndTouch("nope", 100) == null, "get and touch miss");
        check(gt.getCas() == c.gets("spy:5").getCas(), "get and touch cas");
        check(c.touch("spy:6", 1000000000).get(), "touch to the past");
        check(c.get("spy:6") == null, "expired by touch");
        check(c.getAndTouch("spy:8", 1000000000) != null, "gat to the past");
        check(c.get("spy:8") == null, "expired by gat");
        CASValue<Object> c9 = c.gets("spy:9");
        check(c.touch("spy:9", 200).get() && c.gets("spy:9").getCas() == c9.getCas(),
              "touch keeps cas");
        check(c.cas("spy:9", c9.getCas(), "nine") == CASResponse.OK, "cas after touch");
        check(c.set("big", 0, "18446744073709551615").get(), "set max");
        check(c.incr("big", 2) == 1, "incr wraps");
        check(c.set("txt", 0, "abc").get(), "set text");
        boolean threw = false;
        try {
            c.incr("txt", 1);
        } catch (RuntimeException e) {
            threw = true;
        }
        check(threw || c.incr("txt", 1) == -1, "incr non-numeric");
        Map<String, Object> some = c.getBulk(Arrays.asList("spy:10", "nope:1", "spy:11"));
        check(some.size() == 2 && "value-10".equals(some.get("spy:10")), "bulk with misses");
        check(c.getVersions().size() == 1, "version");
        Map<java.net.SocketAddress, Map<String, String>> st = c.getStats();
        check(st.values().iterator().next().containsKey("curr_items"), "stats");
        c.shutdown(5, TimeUnit.SECONDS);
        System.out.println("SPYBIN-OK");
    }
}
"""


@pytest.fixture(scope="module")
def spy_class(tmp_path_factory):
    if not (os.path.exists(JAR) and shutil.which("javac")):
        pytest.skip("libspymemcached-java or a JDK missing")
    if jvm_skip_reason():
        pytest.skip(jvm_skip_reason())
    d = tmp_path_factory.mktemp("spybin")
    (d / "SpyBin.java").write_text(SOURCE)
    p = subprocess.run(["javac", "-nowarn", "-cp", JAR, "-d", str(d), str(d / "SpyBin.java")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert p.returncode == 0, p.stdout.decode()
    return d


def spy(spy_class, port, *auth, expect="SPYBIN-OK"):
    cp = "%s:%s" % (spy_class, JAR)
    p = subprocess.run(["java", "-cp", cp, "SpyBin", str(port)] + list(auth),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0 and expect in out, out[-4000:]


def test_spymemcached_binary(tc, memcached, spy_class):
    spy(spy_class, memcached.mc_port)
    spy(spy_class, tc.mc_port)


def test_spymemcached_binary_sasl(sasl_mc, sasl_tc, spy_class):
    spy(spy_class, sasl_mc.mc_port, "spy", "s3cret")
    spy(spy_class, sasl_tc.mc_port, "spy", "s3cret")


def test_spymemcached_sasl_wrong_password(sasl_mc, sasl_tc, spy_class):
    """A wrong password: the client's first operation fails on both servers alike."""
    for srv in (sasl_mc, sasl_tc):
        spy(spy_class, srv.mc_port, "spy", "wrong", expect="SPYBIN-REFUSED")


def test_twinbench_binary(tc, memcached):
    """twinbench -P memcache-binary: sets then gets, no errors, every get a hit."""
    tb = os.path.join(os.path.dirname(str(tcharness.twincache_bin())), "twinbench")
    if not os.path.exists(tb):
        pytest.skip("twinbench not built next to the server binary")
    for srv in (tc, memcached):
        rc, out = run(tb, "-P", "memcache-binary", "-p", str(srv.mc_port), "-t", "1", "-c", "4",
                      "--pipeline", "8", "-n", "500", "--ratio", "1:1", "--key-maximum", "99",
                      "--preload")
        assert rc == 0, out
        line = [ln for ln in out.splitlines() if "misses" in ln and "errors" in ln][0]
        assert "misses 0 errors 0 timeouts 0" in line and "hits 0" not in line, out
