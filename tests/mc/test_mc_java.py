"""spymemcached (Debian libspymemcached-java, the client of one of our source articles):
10,000 sets, a bulk get of all of them, CAS success and conflict, incr."""

import os
import shutil
import subprocess

import pytest

from mcharness import jvm_skip_reason

JAR = "/usr/share/java/spymemcached.jar"
pytestmark = [pytest.mark.skipif(not (os.path.exists(JAR) and shutil.which("javac")),
                                 reason="libspymemcached-java or a JDK missing"),
              pytest.mark.skipif(jvm_skip_reason() is not None, reason=str(jvm_skip_reason()))]

SOURCE = r"""
import java.net.InetSocketAddress;
import java.util.*;
import java.util.concurrent.TimeUnit;
import net.spy.memcached.*;

public class SpyCheck {
    static void check(boolean ok, String what) {
        if (!ok) { System.out.println("FAIL " + what); System.exit(1); }
    }
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        MemcachedClient c = new MemcachedClient(new InetSocketAddress("127.0.0.1", port));
        check(c.flush().get(10, TimeUnit.SECONDS), "flush");
        int n = 10000;
        List<String> keys = new ArrayList<>();
        List<net.spy.memcached.internal.OperationFuture<Boolean>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String k = "spy:" + i;
            keys.add(k);
            fs.add(c.set(k, 3600, "value-" + i));
        }
        for (net.spy.memcached.internal.OperationFuture<Boolean> f : fs)
            check(f.get(30, TimeUnit.SECONDS), "set");
        Map<String, Object> all = c.getBulk(keys);
        check(all.size() == n, "bulk size " + all.size());
        for (int i = 0; i < n; i++)
            check(("value-" + i).equals(all.get("spy:" + i)), "bulk value " + i);
        c.set("obj", 0, new Integer(42)).get();
        check(Integer.valueOf(42).equals(c.get("obj")), "serialized int");
        CASValue<Object> cv = c.gets("spy:1");
        check(cv != null && "value-1".equals(cv.getValue()), "gets");
        check(c.cas("spy:1", cv.getCas(), "changed") == CASResponse.OK, "cas ok");
        check(c.cas("spy:1", cv.getCas(), "again") == CASResponse.EXISTS, "cas conflict");
        check(c.cas("nope:1", 1L, "x") == CASResponse.NOT_FOUND, "cas not found");
        check("changed".equals(c.get("spy:1")), "value after cas");
        check(c.incr("counter", 1, 10) == 10, "incr default");
        check(c.incr("counter", 5) == 15, "incr");
        check(c.decr("counter", 20) == 0, "decr floor");
        check(c.add("spy:2", 0, "x").get() == false, "add existing");
        check(c.delete("spy:2").get(), "delete");
        check(c.get("spy:2") == null, "get deleted");
        check(c.append(0, "spy:3", "+").get(), "append");
        check("value-3+".equals(c.get("spy:3")), "appended");
        check(c.touch("spy:4", 100).get(), "touch");
        Map<SocketAddress, String> v = c.getVersions();
        check(v.size() == 1, "version");
        Map<SocketAddress, Map<String, String>> st = c.getStats();
        check(st.values().iterator().next().containsKey("curr_items"), "stats");
        c.shutdown(5, TimeUnit.SECONDS);
        System.out.println("OK");
    }
}
""".replace("Map<SocketAddress", "Map<java.net.SocketAddress")


@pytest.fixture(scope="module")
def spy_class(tmp_path_factory):
    d = tmp_path_factory.mktemp("spy")
    (d / "SpyCheck.java").write_text(SOURCE)
    p = subprocess.run(["javac", "-nowarn", "-cp", JAR, "-d", str(d), str(d / "SpyCheck.java")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert p.returncode == 0, p.stdout.decode()
    return d


def test_spymemcached(tc, spy_class):
    cp = "%s:%s" % (spy_class, JAR)
    # stdout apart from the client's log (stderr): the two interleave on one pipe
    p = subprocess.run(["java", "-cp", cp, "SpyCheck", str(tc.mc_port)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0 and "OK" in out.splitlines(), \
        out[-4000:] + p.stderr.decode("utf-8", "replace")[-4000:]
