"""Celery (Redis broker and result backend) and RQ (PyPI, in .venv-apps) on redis-server 7.0
and twincache: tasks and their results, a group, a chord, a task retried until it succeeds and
one that fails; RQ jobs with results, a failed job and a retried one. Same outcome on both."""
import os
import signal
import subprocess
import time
import uuid

import pytest

from conftest import APPS, REPO, VENV_PY, flush, run_json

HAVE = VENV_PY.exists()
pytestmark = pytest.mark.skipif(not HAVE, reason=".venv-apps (scripts/install-deps.sh) missing")
PYAPPS = APPS / "pyapps"


def celery_run(srv):
    env = dict(os.environ, TC_APP_PORT=str(srv.port), PYTHONPATH=str(PYAPPS))
    worker = subprocess.Popen(
        [str(REPO / ".venv-apps" / "bin" / "celery"), "-A", "celery_app", "worker",
         "--pool=solo", "--concurrency=1", "--loglevel=WARNING", "--without-heartbeat",
         "--without-mingle", "--without-gossip"],
        cwd=PYAPPS, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        return run_json([str(VENV_PY), "celery_client.py", uuid.uuid4().hex], srv.port, PYAPPS,
                        timeout=120, env={"PYTHONPATH": str(PYAPPS)})
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def test_celery_as_redis(servers):
    out = {}
    for kind, srv in servers.items():
        flush(srv)
        out[kind] = celery_run(srv)
    assert out["twincache"] == out["redis"]
    assert out["twincache"] == {"add": 5, "group": [2 * i for i in range(10)], "chord": 15,
                                "retry": "ok after 3", "boom": "ValueError: kaboom"}


def test_rq_as_redis(servers):
    out = {}
    for kind, srv in servers.items():
        flush(srv)
        out[kind] = run_json([str(VENV_PY), "rq_scenario.py", uuid.uuid4().hex], srv.port,
                             PYAPPS, timeout=120, env={"PYTHONPATH": str(PYAPPS)})
    assert out["twincache"] == out["redis"]
    t = out["twincache"]
    assert t["results"] == [i * i for i in range(10)] and t["bad"] == "failed"
    assert t["retried"] == "finished" and t["retried_value"] == "done" and t["left"] == 0
