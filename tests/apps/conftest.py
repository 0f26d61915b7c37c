"""Real applications against redis-server 7.0 and twincache side by side (tests/apps): each
scenario runs the application's own client library (BullMQ from npm, Celery and RQ from PyPI,
Redisson from Maven; the client-side caches of redis-py, node-redis and rueidis) on both servers and must see the same outcome. The installs are made by
scripts/install-deps.sh; a scenario whose toolchain is missing is skipped with the reason.

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/apps"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tcharness  # noqa: E402

APPS = Path(__file__).resolve().parent
REPO = APPS.parents[1]
VENV_PY = REPO / ".venv-apps" / "bin" / "python"


@pytest.fixture(scope="session")
def servers():
    """{"redis": port, "twincache": port}: one of each for the session (noeviction, as queue
    libraries ask for), stopped by PID at the end."""
    tcharness.require_twincache()
    tc = tcharness.start_twincache("--maxmemory-policy", "noeviction", check=True)
    rs = tcharness.start_redis()
    yield {"redis": rs, "twincache": tc}
    tc.stop()
    rs.stop()


def run_json(argv, port, cwd, timeout=120, env=None):
    """Run argv with TC_APP_PORT=port; its last stdout line parsed as JSON."""
    e = dict(os.environ, TC_APP_PORT=str(port))
    e.update(env or {})
    p = subprocess.run(argv, cwd=cwd, env=e, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    assert lines, "no result from %s (exit %d):\n%s\n%s" % (argv, p.returncode, p.stdout[-3000:],
                                                            p.stderr[-3000:])
    return json.loads(lines[-1])


def flush(srv):
    c = srv.client()
    c.flushall()
    c.connection_pool.disconnect()


@pytest.fixture(params=["redis", "twincache"])
def server(request, servers):
    """Each server in turn (flushed), for scenarios whose outcome is asserted on each alone."""
    srv = servers[request.param]
    flush(srv)
    return srv
