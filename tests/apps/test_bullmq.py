"""BullMQ (npm) on redis-server 7.0 and twincache: a queue and a worker completing 100 jobs,
a delayed job, retries with exponential backoff, a job failing for good, a repeatable job and a
parent/child flow (tests/apps/bullmq/scenario.js). Both servers must give the same outcome,
and the outcome must be the right one."""
import shutil

import pytest

from conftest import APPS, flush, run_json

NODE = shutil.which("node")
HAVE = NODE and (APPS / "bullmq" / "node_modules" / "bullmq").is_dir()
pytestmark = pytest.mark.skipif(not HAVE, reason="node or BullMQ (scripts/install-deps.sh) missing")

EXPECT = {
    "basic": {"ok": True, "sum": 9900},
    "delayed": {"ok": True, "delayedBefore": 1, "notEarly": True},
    "retries": {"ok": True, "attemptsMade": 3, "returnvalue": "third time", "backoffGrows": True},
    "failing": {"ok": True, "attemptsMade": 2, "failedReason": "always"},
    "repeatable": {"ok": True, "repeatables": 1, "every": 250, "after": 0},
    "flow": {"ok": True, "seen": [0, 10, 20], "parentLast": True, "children": 3,
             "returnvalue": "parent done"},
}


@pytest.mark.parametrize("scenario", list(EXPECT))
def test_bullmq_as_redis(servers, scenario):
    out = {}
    for kind, srv in servers.items():
        flush(srv)
        res = run_json([NODE, "scenario.js", str(srv.port), scenario], srv.port,
                       APPS / "bullmq", timeout=90)
        res.pop("ms", None)
        out[kind] = res
    assert out["twincache"] == out["redis"]
    for k, v in EXPECT[scenario].items():
        assert out["twincache"][k] == v, (k, out["twincache"])
