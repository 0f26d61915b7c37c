"""The one test harness of every Python suite (tests/integration, mc, types, persist, pool,
bench, harness): free loopback ports, server processes, readiness, stop by PID, restart, and
the sanitizer check. Each suite's conftest.py puts tests/ on sys.path and builds its fixtures
on this module.

A Server is one server process: twincache (the binary under test) or a reference server
(redis-server, memcached, nutcracker). Its stdout and stderr go to one log file in its
directory, appended to across restarts. It is stopped by its PID only (SIGTERM, SIGKILL after
a timeout). Whenever a twincache server is stopped, or a suite checks it after a test, a
sanitizer report in its output (AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer
"runtime error:", ThreadSanitizer) fails the test with the report.

Environment:
    TWINCACHE_BIN     binary under test (default build/twincache; relative to the repository)
    TC_SERVER_ARGS    extra arguments appended for every twincache started (e.g. "--io-uring no")
    TC_START_TIMEOUT  seconds a server has to accept connections (default 30)
    TC_STOP_TIMEOUT   seconds from SIGTERM to SIGKILL (default 30)
    ASAN_OPTIONS, UBSAN_OPTIONS, TSAN_OPTIONS  passed on; when unset, twincache gets the
                      defaults of scripts/test.sh (see SANITIZER_ENV)
"""

import atexit
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis

REPO_ROOT = Path(__file__).resolve().parents[1]
TESTS_DIR = REPO_ROOT / "tests"
HOST = "127.0.0.1"
START_TIMEOUT = float(os.environ.get("TC_START_TIMEOUT", "30"))
STOP_TIMEOUT = float(os.environ.get("TC_STOP_TIMEOUT", "30"))

# Text that means a sanitizer found a bug, whatever the exit code says.
SANITIZER_MARKERS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "ERROR: UndefinedBehaviorSanitizer",
    "runtime error:",
    "WARNING: ThreadSanitizer",
    "ERROR: ThreadSanitizer",
)
_MARKER_RE = re.compile("|".join(re.escape(m) for m in SANITIZER_MARKERS))

# Defaults for a twincache process when the environment does not set them: reports reach the
# log and make the exit code non-zero (as in scripts/test.sh).
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
    "TSAN_OPTIONS": "detect_deadlocks=0:halt_on_error=0:suppressions=%s"
                    % (TESTS_DIR / "tsan.supp"),
}


# -- paths and ports ----------------------------------------------------------------------------


def repo_path(env, default):
    """The path in environment variable env (else default); relative paths are relative to the
    repository root, as servers run in their own directories."""
    p = Path(os.environ.get(env) or default)
    return p if p.is_absolute() else REPO_ROOT / p


def twincache_bin():
    return repo_path("TWINCACHE_BIN", "build/twincache")


def tool(name, fallback):
    """A reference program (redis-server, memcached, nutcracker): on PATH, else fallback."""
    return shutil.which(name) or fallback


_handed_out = set()


def free_ports(n):
    """n distinct TCP ports that were free on 127.0.0.1 a moment ago (all bound at once, so they
    differ) and that this process has not handed out before, so servers started one after the
    other do not get the same port. Another process may still take one before the server binds
    it: start_fresh() retries with new ports when a server reports EADDRINUSE."""
    ports, socks = [], []
    try:
        while len(ports) < n:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)
            s.bind((HOST, 0))
            p = s.getsockname()[1]
            if p not in _handed_out:
                ports.append(p)
            elif len(socks) > n + 200:
                raise RuntimeError("no free loopback port not handed out already")
    finally:
        for s in socks:
            s.close()
    _handed_out.update(ports)
    return ports


def free_port():
    return free_ports(1)[0]


# -- sanitizer reports --------------------------------------------------------------------------


def sanitizer_report(text, pos=0, max_lines=120):
    """The first sanitizer report in a server's output whose marker ends after offset pos (the
    report's lines from its header up to its SUMMARY line, at most max_lines), or None."""
    m = next((m for m in _MARKER_RE.finditer(text) if m.end() > pos), None)
    if m is None:
        return None
    lines = text[:m.start()].split("\n")
    first = len(lines) - 1
    # include the "=====" separator line the sanitizers print before a report
    if first > 0 and lines[first - 1].startswith("=="):
        first -= 1
    body = ("\n".join(lines[first:]) + text[m.start():]).split("\n")
    out = []
    for line in body[:max_lines]:
        out.append(line)
        if line.startswith("SUMMARY:"):
            break
    return "\n".join(out)


class SanitizerError(AssertionError):
    """A sanitizer reported a bug in a server's output."""


class ServerStartError(RuntimeError):
    """A server exited, or did not accept connections, while starting."""


# -- readiness probes ---------------------------------------------------------------------------


def _probe(port, proto, timeout=1.0):
    """True when the server answers on port: "resp" any reply to an inline PING except -LOADING
    (NOAUTH counts: with requirepass it is the answer), "mc" a VERSION reply, "tcp" an accepted
    connection."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        if proto == "tcp":
            return True
        s.sendall(b"PING\r\n" if proto == "resp" else b"version\r\n")
        data = b""
        while not data.endswith(b"\n"):
            d = s.recv(256)
            if not d:
                return False
            data += d
        if proto == "resp":
            return not data.startswith(b"-LOADING")
        return data.startswith(b"VERSION")


# -- server processes ---------------------------------------------------------------------------

_running = {}  # pid -> Server, for the exit hook
_base_dir = None


def scratch_dir(prefix):
    """A new directory for a server, under one per-process directory removed at exit."""
    global _base_dir
    if _base_dir is None:
        _base_dir = tempfile.mkdtemp(prefix="tcharness-")
    return tempfile.mkdtemp(prefix=prefix + "-", dir=_base_dir)


@atexit.register
def _cleanup():
    for srv in list(_running.values()):
        srv.stop(sig=signal.SIGKILL, check=False, sanitizer=False)
    if _base_dir and not os.environ.get("TC_KEEP_LOGS"):
        shutil.rmtree(_base_dir, ignore_errors=True)


class Server:
    """One server process. argv may be changed between stop() and start() (the next start uses
    it). Attributes: kind, argv, port, mc_port, host, dir, logfile, proc, pid, stopped.

    ready: [(port, "resp" | "mc" | "tcp"), ...] to wait for (default from kind and ports).
    check: default of stop(check=...): require exit code 0 and no SIGKILL after SIGTERM.
    stop_timeout: default of stop(timeout=...), seconds from the signal to SIGKILL.
    sanitized: scan the output for sanitizer reports (default: kind == "twincache").
    client_defaults: default keyword arguments of client().
    """

    def __init__(self, argv, port=None, mc_port=None, kind="twincache", dir=None, logfile=None,
                 ready=None, check=False, sanitized=None, env=None, client_defaults=None,
                 stop_timeout=None):
        self.kind = kind
        self.argv = [str(a) for a in argv]
        self.host = HOST
        self.port = port
        self.mc_port = mc_port
        self.dir = str(dir) if dir else scratch_dir("%s-%s" % (kind, port or mc_port))
        self.logfile = str(logfile) if logfile else os.path.join(self.dir, kind + ".log")
        if ready is None:
            ready = []
            if port:
                ready.append((port, {"memcached": "mc", "nutcracker": "tcp"}.get(kind, "resp")))
            if mc_port:
                ready.append((mc_port, "mc"))
        self.ready = ready
        self.check = check
        self.stop_timeout = stop_timeout or STOP_TIMEOUT
        self.sanitized = kind == "twincache" if sanitized is None else sanitized
        self.env = dict(os.environ)
        if self.sanitized:
            for k, v in SANITIZER_ENV.items():
                self.env.setdefault(k, v)
        self.env.update(env or {})
        self.client_defaults = dict(client_defaults or {})
        self.proc = None
        self.stopped = True
        self.killed = False  # the last stop needed SIGKILL after SIGTERM
        self._scanned = 0  # log offset up to which the output was checked for reports

    def __repr__(self):
        args = " ".join(a if len(a) < 60 else a[:40] + "..." for a in self.argv)
        return "<%s pid=%s port=%s %s>" % (self.kind, self.pid, self.port or self.mc_port, args)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def dump(self):
        return os.path.join(self.dir, "dump.rdb")

    # -- output -----------------------------------------------------------------------------

    def output(self):
        """Everything the server wrote to stdout and stderr (all its runs)."""
        try:
            with open(self.logfile, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def output_tail(self, n=60):
        return "\n".join(self.output().splitlines()[-n:])

    def new_sanitizer_report(self):
        """The first sanitizer report written since the last call, or None."""
        if not self.sanitized:
            return None
        try:
            with open(self.logfile, "rb") as f:
                start = max(0, self._scanned - 64)  # a marker may straddle the last offset
                f.seek(start)
                data = f.read()
        except OSError:
            return None
        # latin-1: one character per byte, so offsets in the text are offsets in the file
        report = sanitizer_report(data.decode("latin-1"), self._scanned - start)
        self._scanned = start + len(data)
        return report

    def check_sanitizer(self):
        """Raise SanitizerError with the report if the output has a new sanitizer report."""
        report = self.new_sanitizer_report()
        if report:
            raise SanitizerError("%r: sanitizer report in its output:\n%s" % (self, report))

    def check_running(self):
        """For a suite's after-test check of a long-lived server: raise AssertionError if it died
        (with the tail of its output) or wrote a sanitizer report during the test."""
        if not self.stopped and not self.alive():
            self.stopped = True
            _running.pop(self.pid, None)
            report = self.new_sanitizer_report()
            raise AssertionError("%r died (exit code %r) during this test; output:\n%s"
                                 % (self, self.proc.returncode, report or self.output_tail(200)))
        self.check_sanitizer()

    # -- lifecycle --------------------------------------------------------------------------

    def spawn(self):
        """Start the process (output appended to the log) without waiting for it. A previous
        run that exited by itself is stop()ped first (its sanitizer check)."""
        if not self.stopped:
            assert not self.alive(), "%r is running" % self
            self.stop()
        with open(self.logfile, "ab") as log:
            self.proc = subprocess.Popen(
                self.argv, cwd=self.dir, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        _running[self.proc.pid] = self
        self.stopped = False
        self.killed = False
        return self

    def wait_ready(self, timeout=None):
        """Wait until every ready port answers. False if the process exited first; raises
        ServerStartError after timeout seconds (the process is left running)."""
        deadline = time.monotonic() + (timeout or START_TIMEOUT)
        pending = list(self.ready)
        while pending:
            if self.proc.poll() is not None:
                return False
            try:
                if _probe(*pending[0]):
                    pending.pop(0)
                    continue
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise ServerStartError("%r did not answer on port %d within %.0f s; output:\n%s"
                                       % (self, pending[0][0], timeout or START_TIMEOUT,
                                          self.output_tail()))
            time.sleep(0.02)
        return True

    def start(self, timeout=None):
        """spawn() and wait_ready(); returns self. If the server exits or does not answer in
        time, it is stopped and ServerStartError carries its output (a sanitizer report in it
        raises SanitizerError instead)."""
        self.spawn()
        try:
            ok = self.wait_ready(timeout)
        except ServerStartError:
            self.stop(sig=signal.SIGKILL, check=False)
            raise
        if not ok:
            rc = self.stop(check=False)
            raise ServerStartError("%r exited during startup with code %r; output:\n%s"
                                   % (self, rc, self.output_tail()))
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout):
        """The exit code once the process exits by itself within timeout s, else None."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, sig=signal.SIGTERM, timeout=None, check=None, sanitizer=True):
        """Send sig to exactly this PID (if it still runs), SIGKILL after timeout s (default: the
        server's stop_timeout); returns the exit code. A sanitizer report in the output raises
        SanitizerError (unless sanitizer=False). check (default: the server's): also require
        that SIGTERM was enough and the exit code is 0. Stopping a stopped server only returns
        the exit code."""
        if self.proc is None:
            return None
        if self.stopped:
            return self.proc.returncode
        self.stopped = True
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            if self.wait_exit(timeout or self.stop_timeout) is None:
                self.killed = True
                try:
                    os.kill(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()
        _running.pop(self.proc.pid, None)
        rc = self.proc.returncode
        if sanitizer:
            self.check_sanitizer()
        if self.check if check is None else check:
            assert not (self.killed and sig == signal.SIGTERM), (
                "%r ignored SIGTERM for %.0f s (SIGKILLed); output:\n%s"
                % (self, timeout or self.stop_timeout, self.output_tail()))
            assert rc == 0, "%r exited with code %r; output:\n%s" % (self, rc, self.output_tail())
        return rc

    def kill(self):
        """SIGKILL (no clean exit expected); returns the exit code."""
        return self.stop(sig=signal.SIGKILL, check=False)

    def restart(self, timeout=None):
        """stop() then start() with the same argv, ports and directory."""
        self.stop()
        return self.start(timeout)

    # -- clients ----------------------------------------------------------------------------

    def client(self, **kw):
        """A redis-py client (TCRedis) on the RESP port. Keywords (over client_defaults):
        decode (str replies), exact_errors (error replies keep their full text), raw (no
        redis-py reply conversions), db, and any redis.ConnectionPool argument."""
        kw = {**self.client_defaults, **kw}
        decode = kw.pop("decode", False)
        exact = kw.pop("exact_errors", False)
        raw = kw.pop("raw", False)
        single = kw.pop("single_connection_client", False)
        kw.setdefault("socket_timeout", 30)
        if exact:
            kw.setdefault("parser_class", ExactErrorParser)
        pool = redis.ConnectionPool(host=self.host, port=self.port, decode_responses=decode, **kw)
        c = TCRedis(connection_pool=pool, single_connection_client=single)
        if raw:
            c.response_callbacks = {}
        return c

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


class ExactErrorParser(redis.connection.PythonParser):
    """redis-py parser that keeps an error reply's full text ("ERR syntax error", "WRONGTYPE
    ...") as the message of a plain ResponseError, so tests compare the exact wire text."""

    def parse_error(self, response):
        return redis.exceptions.ResponseError(response)


class TCRedis(redis.Redis):
    """redis.Redis plus cmd(*args): the reply exactly as parsed from the wire, without
    redis-py's per-command response callbacks ("OK" stays "OK", INFO stays text)."""

    def cmd(self, *args):
        pool = self.connection_pool
        conn = self.connection or pool.get_connection(args[0])
        try:
            conn.send_command(*args)
            return conn.read_response()
        finally:
            if not self.connection:
                pool.release(conn)


# -- command lines ------------------------------------------------------------------------------


def twincache_argv(port, mc_port=0, args=(), config_file=None, threads=2):
    """twincache [config_file] --port P --memcache-port M [--save ''] [--threads N] $TC_SERVER_ARGS args
    (later settings win, as in redis-server)."""
    argv = [str(twincache_bin())] + ([str(config_file)] if config_file else [])
    argv += ["--port", str(port), "--memcache-port", str(mc_port)]
    if not config_file:
        # as redis_argv: no snapshots unless a test asks (Redis's default save rules would
        # write dump.rdb at every stop); a later --save adds its rules to none
        argv += ["--save", ""]
    if threads is not None:
        argv += ["--threads", str(threads)]
    return argv + shlex.split(os.environ.get("TC_SERVER_ARGS", "")) + [str(a) for a in args]


def redis_argv(port, args=(), config_file=None, dir=None):
    """redis-server [config_file] --port P --bind 127.0.0.1 --save '' --appendonly no [--dir D]
    args."""
    argv = [tool("redis-server", "/usr/bin/redis-server")]
    argv += ([str(config_file)] if config_file else [])
    argv += ["--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no",
             "--daemonize", "no"]
    if dir is not None:
        argv += ["--dir", str(dir)]
    return argv + [str(a) for a in args]


# twincache started with memcached's command line as root: memcached refuses to run as root
# without -u (exit 64), and so does twincache; memcached's own suite (t/lib.pm) adds "-u root"
MC_AS_ROOT = ["-u", "root"] if os.geteuid() == 0 else []


def memcached_argv(port, args=(), threads=2):
    argv = [tool("memcached", "/usr/bin/memcached"), "-l", HOST, "-p", str(port), "-U", "0",
            "-t", str(threads)]
    if os.geteuid() == 0:
        argv += ["-u", "nobody"]
    return argv + [str(a) for a in args]


def require_twincache():
    """Exit the pytest session with a clear message if the binary under test is missing."""
    binary = twincache_bin()
    if not binary.exists():
        import pytest
        pytest.exit("twincache binary %s not found: build it first (see README) or set "
                    "TWINCACHE_BIN" % binary, returncode=2)


# -- starting fresh servers ---------------------------------------------------------------------


def start_fresh(make, nports, attempts=5, timeout=None):
    """Start make(ports) -> Server (not yet started) on nports new free ports, retrying with
    other ports when the server lost a race for one (EADDRINUSE in its output)."""
    for attempt in range(attempts):
        srv = make(free_ports(nports))
        try:
            return srv.start(timeout)
        except ServerStartError:
            out = srv.output().lower()
            lost_race = "address already in use" in out or "eaddrinuse" in out
            if not lost_race or attempt == attempts - 1:
                raise


def start_twincache(*args, mc=False, threads=2, config_file=None, dir=None, wrap=(),
                    start=True, **kw):
    """A started twincache on free ports (mc: also a memcached port, else --memcache-port 0),
    running in dir (default: a new scratch directory). wrap is a command prefix (e.g. prlimit
    ...). Other keywords go to Server(). start=False returns it unstarted, on free ports."""
    def make(ports):
        port, mc_port = ports[0], (ports[1] if mc else 0)
        argv = list(wrap) + twincache_argv(port, mc_port, args, config_file, threads)
        return Server(argv, port=port, mc_port=mc_port or None, dir=dir, **kw)
    if not start:
        return make(free_ports(2 if mc else 1))
    return start_fresh(make, 2 if mc else 1)


def start_twincache_mc_login(auth_lines, *args, **kw):
    """A started twincache whose memcached port needs a login (memcache-auth-file holding
    auth_lines, in a scratch directory): ready once both ports accept connections."""
    auth = os.path.join(scratch_dir("mc-auth"), "auth")
    with open(auth, "w") as fh:
        fh.write("".join(line + "\n" for line in auth_lines))
    args = ("--memcache-auth-file", auth) + args

    def make(ports):
        return Server(twincache_argv(ports[0], ports[1], args), port=ports[0], mc_port=ports[1],
                      ready=[(ports[0], "resp"), (ports[1], "tcp")], **kw)
    require_twincache()
    return start_fresh(make, 2)


def mc_talk(port, data, wait=0.2):
    """Send data on a new memcached connection; everything it answers within wait + 0.5 s."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(data)
    time.sleep(wait)
    s.settimeout(0.5)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except socket.timeout:
        pass
    s.close()
    return out


def mc_login(user, pw):
    """memcached's ASCII authentication: a set whose data is "user password"."""
    cred = ("%s %s" % (user, pw)).encode()
    return b"set x 0 0 %d\r\n%s\r\n" % (len(cred), cred)


def start_redis(*args, config_file=None, dir=None, start=True, **kw):
    """A started redis-server on a free port (no persistence unless args enable it)."""
    def make(ports):
        return Server(redis_argv(ports[0], args, config_file, dir), port=ports[0], kind="redis",
                      dir=dir, **kw)
    if not start:
        return make(free_ports(1))
    return start_fresh(make, 1)


def start_memcached(*args, threads=2, **kw):
    """A started memcached on a free port (its port is both .port and .mc_port)."""
    def make(ports):
        return Server(memcached_argv(ports[0], args, threads), port=ports[0], mc_port=ports[0],
                      kind="memcached", ready=[(ports[0], "mc")], **kw)
    return start_fresh(make, 1)


def start_nutcracker(conf, listen_ports, stats_port=None, dir=None, **kw):
    """A started nutcracker (twemproxy) with config file conf, ready once every listen port
    accepts connections. Its log goes to stderr, i.e. the Server's log."""
    stats = stats_port or free_port()
    argv = [tool("nutcracker", "/usr/sbin/nutcracker"), "-c", str(conf), "-s", str(stats),
            "-a", HOST]
    srv = Server(argv, port=listen_ports[0], kind="nutcracker", dir=dir,
                 ready=[(p, "tcp") for p in listen_ports], **kw)
    return srv.start()
