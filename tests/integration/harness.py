"""Starting and stopping the server under test, and the clients the tests use.

Which server (environment):
    TC_SERVER=twincache (default)  $TWINCACHE_BIN (default <repo>/build/twincache)
                                    --port P --memcache-port 0 --threads 2
    TC_SERVER=redis                 redis-server --port P --save '' --appendonly no
    TC_SERVER_ARGS="--x y"          extra arguments appended for either server
    TC_START_TIMEOUT=10             seconds to wait for the first PONG
"""

import os
import shlex
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import redis

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_KIND = os.environ.get("TC_SERVER", "twincache").strip().lower()
if SERVER_KIND not in ("twincache", "redis"):
    raise pytest.UsageError("TC_SERVER must be 'twincache' or 'redis', not %r" % SERVER_KIND)
IS_REDIS = SERVER_KIND == "redis"

# Text that means a sanitizer found a bug, whatever the exit code says.
SANITIZER_MARKERS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "runtime error:",
    "WARNING: ThreadSanitizer",
)
STOP_TIMEOUT = 5.0
START_TIMEOUT = float(os.environ.get("TC_START_TIMEOUT", "10"))


def twincache_bin():
    p = Path(os.environ.get("TWINCACHE_BIN", "build/twincache"))
    if not p.is_absolute():
        p = REPO_ROOT / p
    return p


def free_port():
    """A TCP port that was free a moment ago on 127.0.0.1 (the server may still lose a race;
    start_server retries on a bind failure)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(port, extra_args=(), config_file=None):
    """The command line: binary, optional config file, then --name value settings (later ones
    win, as in redis-server)."""
    conf = [str(config_file)] if config_file else []
    if IS_REDIS:
        cmd = ["redis-server"] + conf + ["--port", str(port), "--save", "", "--appendonly", "no"]
    else:
        binary = twincache_bin()
        if not binary.exists():
            pytest.exit(
                "twincache binary %s not found: build it first (see README), set TWINCACHE_BIN, "
                "or run the suite against Debian's redis with TC_SERVER=redis" % binary,
                returncode=2,
            )
        cmd = [str(binary)] + conf + ["--port", str(port), "--memcache-port", "0",
                                      "--threads", "2"]
    cmd += shlex.split(os.environ.get("TC_SERVER_ARGS", ""))
    cmd += [str(a) for a in extra_args]
    return cmd


class ExactErrorParser(redis.connection.PythonParser):
    """redis-py parser that keeps an error reply's full text ("ERR syntax error",
    "WRONGTYPE ...", "NOAUTH ...") as the message of a plain ResponseError, so tests can compare
    the exact wire text instead of whatever redis-py maps it to."""

    def parse_error(self, response):
        return redis.exceptions.ResponseError(response)


class TCRedis(redis.Redis):
    """redis.Redis plus cmd(): run a command and return the reply exactly as parsed from the
    wire, without redis-py's per-command response callbacks (which turn "OK" into True, an
    INFO text into a dict, SET ... GET's old value into True, and so on)."""

    def cmd(self, *args):
        pool = self.connection_pool
        conn = self.connection or pool.get_connection(args[0])
        try:
            conn.send_command(*args)
            return conn.read_response()
        finally:
            if not self.connection:
                pool.release(conn)


class ServerProcess:
    """One started server process. Attributes: host, port, pid, proc, cmd, workdir."""

    def __init__(self, cmd, port, workdir):
        self.host = "127.0.0.1"
        self.port = port
        self.cmd = cmd
        self.workdir = workdir
        self.stdout_path = os.path.join(workdir, "stdout.log")
        self.stderr_path = os.path.join(workdir, "stderr.log")
        self._out = open(self.stdout_path, "wb")
        self._err = open(self.stderr_path, "wb")
        env = dict(os.environ)
        # Sanitizer reports must reach stderr and make the exit code non-zero.
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        self.proc = subprocess.Popen(
            cmd, cwd=workdir, stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err,
            env=env, start_new_session=True)
        self.pid = self.proc.pid
        self.stopped = False

    def __repr__(self):
        return "<server pid=%d port=%d %s>" % (self.pid, self.port, " ".join(self.cmd))

    # -- output ---------------------------------------------------------------------------

    def output(self):
        """Everything the server wrote to stdout and stderr so far."""
        parts = []
        for p in (self.stdout_path, self.stderr_path):
            try:
                with open(p, "rb") as f:
                    parts.append(f.read().decode("utf-8", "replace"))
            except OSError:
                pass
        return "\n".join(parts)

    def output_tail(self, n=60):
        return "\n".join(self.output().splitlines()[-n:])

    def sanitizer_report(self):
        out = self.output()
        for marker in SANITIZER_MARKERS:
            if marker in out:
                return marker
        return None

    # -- clients --------------------------------------------------------------------------

    def client(self, decode=True, exact_errors=True, **kw):
        """A redis-py client. With exact_errors, every error reply raises a ResponseError whose
        message is the complete text the server sent."""
        single = kw.pop("single_connection_client", False)
        kw.setdefault("socket_timeout", 30)
        if exact_errors:
            kw.setdefault("parser_class", ExactErrorParser)
        pool = redis.ConnectionPool(host=self.host, port=self.port, decode_responses=decode, **kw)
        return TCRedis(connection_pool=pool, single_connection_client=single)

    def raw(self, timeout=5.0):
        """A raw RESP connection (resp.RespConn)."""
        from resp import RespConn
        return RespConn(self.host, self.port, timeout=timeout)

    def ping_raw(self, timeout=2.0):
        """Send an inline PING on a new connection and return the first reply line (bytes)."""
        with socket.create_connection((self.host, self.port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            data = b""
            while not data.endswith(b"\r\n"):
                d = s.recv(256)
                if not d:
                    break
                data += d
            return data

    def alive(self):
        return self.proc.poll() is None

    # -- lifecycle ------------------------------------------------------------------------

    def wait_ready(self, timeout=START_TIMEOUT):
        """Wait until the server answers PING (any reply counts: with requirepass it is NOAUTH).
        Returns False if the process exited first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                if self.ping_raw(timeout=1.0):
                    return True
            except OSError:
                pass
            time.sleep(0.02)
        raise AssertionError("server %r did not answer PING within %.0f s; output:\n%s"
                             % (self, timeout, self.output_tail()))

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, check=True):
        """SIGTERM exactly this PID, SIGKILL after 5 s; with check, assert a clean exit."""
        if self.stopped:
            return self.proc.returncode
        self.stopped = True
        killed = False
        if self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if self.wait_exit(STOP_TIMEOUT) is None:
                killed = True
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        self._out.close()
        self._err.close()
        if check:
            assert not killed, "server %r ignored SIGTERM for %.0f s (SIGKILLed); output:\n%s" % (
                self, STOP_TIMEOUT, self.output_tail())
            self.check_clean_exit()
        return self.proc.returncode

    def check_clean_exit(self):
        rc = self.proc.returncode
        marker = self.sanitizer_report()
        assert marker is None, "server %r reported %r; output:\n%s" % (
            self, marker, self.output_tail(200))
        assert rc == 0, "server %r exited with code %r; output:\n%s" % (
            self, rc, self.output_tail())


def start_server(extra_args=(), config_file=None, attempts=5):
    """Start a server on a free port with extra `--name value` arguments (and optionally a
    redis.conf-style file) and wait for PING. The caller owns the result and must .stop() it."""
    last = None
    for _ in range(attempts):
        port = free_port()
        workdir = tempfile.mkdtemp(prefix="tc-it-%d-" % port)
        srv = ServerProcess(server_command(port, extra_args, config_file), port, workdir)
        if srv.wait_ready():
            return srv
        srv.stop(check=False)
        last = srv
        out = srv.output().lower()
        if "address already in use" in out or "eaddrinuse" in out:
            continue  # lost the race for the port: try another
        break
    raise AssertionError("server %r exited during startup with code %r; output:\n%s"
                         % (last, last.proc.returncode, last.output_tail()))
