"""The integration suite's servers, on the one harness (tests/tcharness.py).

Which server (environment):
    TC_SERVER=twincache (default)  $TWINCACHE_BIN (default <repo>/build/twincache)
                                    --port P --memcache-port 0 --threads 2
    TC_SERVER=redis                 redis-server --port P --save '' --appendonly no
    TC_SERVER_ARGS="--x y"          extra arguments appended for either server
    TC_START_TIMEOUT, TC_STOP_TIMEOUT  see tcharness.py
"""

import os
import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tcharness  # noqa: E402
from tcharness import ExactErrorParser, TCRedis, free_port, twincache_bin  # noqa: E402,F401

SERVER_KIND = os.environ.get("TC_SERVER", "twincache").strip().lower()
if SERVER_KIND not in ("twincache", "redis"):
    raise pytest.UsageError("TC_SERVER must be 'twincache' or 'redis', not %r" % SERVER_KIND)
IS_REDIS = SERVER_KIND == "redis"


class ServerProcess(tcharness.Server):
    """A server of this suite: client() keeps exact error texts and decodes replies by default,
    raw() is a resp.RespConn, stop() checks a clean exit by default."""

    def raw(self, timeout=5.0):
        """A raw RESP connection (resp.RespConn)."""
        from resp import RespConn
        return RespConn(self.host, self.port, timeout=timeout)


def server_command(port, extra_args=(), config_file=None):
    """The command line: binary, optional config file, then --name value settings (later ones
    win, as in redis-server)."""
    if IS_REDIS:
        conf = [str(config_file)] if config_file else []
        return (["redis-server"] + conf + ["--port", str(port), "--save", "", "--appendonly", "no"]
                + shlex.split(os.environ.get("TC_SERVER_ARGS", "")) + [str(a) for a in extra_args])
    tcharness.require_twincache()
    return tcharness.twincache_argv(port, 0, extra_args, config_file)


def start_server(extra_args=(), config_file=None, wrap=()):
    """Start a server on a free port with extra `--name value` arguments (and optionally a
    redis.conf-style file; wrap: a command prefix such as prlimit) and wait for PING. The caller
    owns the result and must .stop() it."""
    def make(ports):
        cmd = list(wrap) + server_command(ports[0], extra_args, config_file)
        return ServerProcess(cmd, port=ports[0], kind=SERVER_KIND, check=True,
                             client_defaults={"decode": True, "exact_errors": True})
    return tcharness.start_fresh(make, 1)
