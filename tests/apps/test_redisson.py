"""Redisson (Maven) on redis-server 7.0 and twincache: RLock (reentrancy, a lease that expires,
another thread refused, 8 threads x 200 increments under the lock) and RMapCache (entries with
a TTL and a max idle time expiring, putIfAbsent, fastPut). Same outcome on both."""
import shutil

import pytest

from conftest import APPS, flush, run_json

JAVA = shutil.which("java")
JAR = APPS / "redisson" / "target" / "redisson-scenarios-1.jar"
pytestmark = pytest.mark.skipif(not (JAVA and JAR.exists()),
                                reason="java or the Redisson scenarios (scripts/install-deps.sh) missing")
CP = "%s:%s/*" % (JAR, APPS / "redisson" / "target" / "lib")

EXPECT = {
    "lock": {"held": True, "holds": 2, "holdsAfterOne": 1, "locked": False, "tryLease": True,
             "expired": True, "otherGot": False, "counter": 1600, "atomic": 12},
    "mapcache": {"size": 3, "short": "v2", "putIfAbsent": "v1", "shortAfter": "null",
                 "idleAfter": "null", "foreverAfter": "v1", "removed": "v1", "fastPut": True,
                 "ttlKnown": True},
}


@pytest.mark.parametrize("scenario", list(EXPECT))
def test_redisson_as_redis(servers, scenario):
    out = {}
    for kind, srv in servers.items():
        flush(srv)
        out[kind] = run_json([JAVA, "-cp", CP, "tc.Scenarios", str(srv.port), scenario],
                             srv.port, APPS / "redisson", timeout=120)
    assert out["twincache"] == out["redis"]
    for k, v in EXPECT[scenario].items():
        assert out["twincache"][k] == v, (k, out["twincache"])
