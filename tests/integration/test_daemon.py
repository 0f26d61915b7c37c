"""Daemon conventions (issue 39): daemonize, supervised (systemd's notify protocol, upstart),
syslog, signals, the process title, memcached's -u / -d / -P / root refusal. Each test starts
its own processes (twincache, and redis-server or memcached side by side where they behave
alike) on free loopback ports, and stops only those, by PID.

    TWINCACHE_BIN=build/twincache nice -n 19 /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/integration/test_daemon.py
"""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time

import pytest

from harness import IS_REDIS, tcharness, twincache_bin

pytestmark = pytest.mark.skipif(IS_REDIS, reason="starts twincache and the references itself")

HOST = "127.0.0.1"
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
MEMCACHED = shutil.which("memcached") or "/usr/bin/memcached"
ROOT = os.geteuid() == 0


def tc():
    tcharness.require_twincache()
    return str(twincache_bin())


def ping(port, timeout=2.0):
    """One PING on a new connection, no retry: the reply line."""
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(b"PING\r\n")
        return s.recv(64)


def send(port, line, timeout=2.0):
    with socket.create_connection((HOST, port), timeout=timeout) as s:
        s.sendall(line)
        try:
            return s.recv(4096)
        except OSError:
            return b""


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (not ours to reap) counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pid, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.02)
    return False


def kill_pid(pid):
    """Cleanup of a daemon this test started (it is not our child: by PID only)."""
    if pid and pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        wait_gone(pid, 5)


def proc_status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].split()
    return None


def proc_title(pid):
    """The command line as ps shows it: up to the first NUL once the title was rewritten."""
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read().split(b"\0")[0].decode()


def children(pid):
    """The pids whose parent is pid."""
    kids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        kids.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return kids


def read_pidfile(path, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                text = f.read()
            if text.endswith("\n"):
                return int(text)
        except (OSError, ValueError):
            pass
        time.sleep(0.02)
    raise AssertionError("no pid in %s" % path)


# -- daemonize ----------------------------------------------------------------------------------


def test_daemonize_returns_once_listening(tmp_path):
    """--daemonize yes: the command returns 0 with the server accepting connections (PING at
    once, no retry), the pidfile holds the daemon's pid (detached: another session, not our
    child), and SHUTDOWN removes the pidfile."""
    port = tcharness.free_port()
    pidfile = tmp_path / "tc.pid"
    log = tmp_path / "tc.log"
    t0 = time.monotonic()
    p = subprocess.run([tc(), "--port", str(port), "--memcache-port", "0", "--save", "",
                        "--bind", HOST, "--daemonize", "yes", "--pidfile", str(pidfile),
                        "--logfile", str(log)], cwd=str(tmp_path), timeout=20,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    took = time.monotonic() - t0
    pid = None
    try:
        assert p.returncode == 0, p.stdout
        assert p.stdout == b""  # stdout and stderr went to /dev/null
        assert ping(port) == b"+PONG\r\n"
        pid = read_pidfile(str(pidfile), timeout=0.1)  # written before the parent returned
        assert pid != p.args and pid_alive(pid)
        assert os.getsid(pid) != os.getsid(0)
        assert os.getsid(pid) != pid  # double fork: no session leader, never a terminal
        assert proc_status(pid, "PPid") != [str(os.getpid())]
        text = log.read_text()
        assert "twincache is starting" in text and "Ready to accept connections" in text
        assert took < 10
        assert send(port, b"SHUTDOWN NOSAVE\r\n") == b""
        assert wait_gone(pid), "still running after SHUTDOWN"
        assert not pidfile.exists(), "pidfile left after a clean shutdown"
        assert "Removing the pid file." in log.read_text()
    finally:
        kill_pid(pid)


def test_daemonize_failed_start_exits_nonzero(tmp_path):
    """A daemonized start that cannot listen (port taken): the command exits non-zero, as a
    script needs to know; redis-server's parent returns 0 before it even tries."""
    with socket.socket() as busy:
        busy.bind((HOST, 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        pidfile = tmp_path / "tc.pid"
        p = subprocess.run([tc(), "--port", str(port), "--memcache-port", "0", "--save", "",
                            "--bind", HOST, "--daemonize", "yes", "--pidfile", str(pidfile)],
                           cwd=str(tmp_path), timeout=20)
        assert p.returncode == 1
        assert not pidfile.exists()


def test_daemonize_with_supervision_stays_in_foreground(tmp_path):
    """As redis-server: daemonize is not done when systemd supervises (NOTIFY_SOCKET)."""
    with NotifyListener(tmp_path / "notify") as nl:
        srv = start(tc_argv("--daemonize", "yes", "--supervised", "systemd"), nl.env())
        try:
            nl.wait_for(b"READY=1")
            assert srv.alive()  # the started process itself serves: it did not fork away
            assert ping(srv.port) == b"+PONG\r\n"
        finally:
            srv.stop(check=True)


# -- supervised systemd: sd_notify ---------------------------------------------------------------


class NotifyListener:
    """A test-owned $NOTIFY_SOCKET: AF_UNIX datagrams, at a path or, abstract, '@name'."""

    def __init__(self, path, abstract=False):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = "tc-notify-%d-%d" % (os.getpid(), time.monotonic_ns())
            self.sock.bind("\0" + name)
            self.addr = "@" + name
        else:
            self.sock.bind(str(path))
            self.addr = str(path)
        self.got = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def env(self):
        return {"NOTIFY_SOCKET": self.addr}

    def recv(self, timeout):
        self.sock.settimeout(timeout)
        msg = self.sock.recv(4096)
        self.got.append(msg)
        return msg

    def wait_for(self, prefix, timeout=10.0, on_each=None):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no %r; got %r" % (prefix, self.got))
            try:
                msg = self.recv(left)
            except socket.timeout:
                continue
            if on_each:
                on_each(msg)
            if msg.startswith(prefix):
                return msg


def tc_argv(*args, port=None):
    return tcharness.twincache_argv(port or 0, 0, ("--bind", HOST) + args)


def start(argv, env, kind="twincache", port=None, ready=False, unset=()):
    """A Server on a free port (argv built for port 0 gets it), not waited for unless ready;
    unset: environment variables it must not inherit."""
    port = port or tcharness.free_port()
    argv = [str(port) if a == "0" and argv[i - 1] == "--port" else a for i, a in enumerate(argv)]
    srv = tcharness.Server(argv, port=port, kind=kind, env=env)
    for name in unset:
        srv.env.pop(name, None)
    srv.spawn()
    if ready:
        assert srv.wait_ready(), srv.output_tail()
    return srv


def redis_argv(*args):
    return tcharness.redis_argv(0, args)


def notify_sequence(argv, env_extra, kind, tmp_path, abstract=False):
    """Start a server under a test-owned NOTIFY_SOCKET; return (messages up to READY=1, whether
    the port accepted a connection when READY=1 arrived, messages at shutdown, log)."""
    with NotifyListener(tmp_path / ("notify-" + kind), abstract) as nl:
        srv = start(argv, dict(nl.env(), **env_extra), kind=kind)
        accepting = {}

        def check_port(msg):
            if msg.startswith(b"READY=1"):
                try:
                    accepting["ready"] = ping(srv.port) == b"+PONG\r\n"
                except OSError:
                    accepting["ready"] = False
        try:
            nl.wait_for(b"READY=1", on_each=check_port)
            before = list(nl.got)
            nl.got.clear()
            srv.proc.send_signal(signal.SIGTERM)
            nl.wait_for(b"STOPPING=1")
            assert srv.wait_exit(10) == 0
            return before, accepting.get("ready"), list(nl.got), srv.output()
        finally:
            srv.stop(check=False)


def test_systemd_notify_ready_and_stopping(tmp_path):
    """--supervised systemd: STATUS while loading, then STATUS=Ready... and READY=1 only once
    the port answers, STOPPING=1 at shutdown; the same sequence as redis-server 7.0 (Debian's,
    built with libsystemd) sends, its name aside."""
    tc_before, tc_ready, tc_after, tc_log = notify_sequence(
        tc_argv("--supervised", "systemd"), {}, "twincache", tmp_path)
    assert tc_before == [b"STATUS=twincache is loading...\n",
                         b"STATUS=Ready to accept connections\n", b"READY=1\n"]
    assert tc_ready is True
    assert tc_after == [b"STOPPING=1\n"]
    assert ("Supervised by systemd. Please make sure you set appropriate values for "
            "TimeoutStartSec and TimeoutStopSec in your service unit.") in tc_log
    r_before, r_ready, r_after, r_log = notify_sequence(
        redis_argv("--supervised", "systemd"), {}, "redis", tmp_path)
    assert [m.replace(b"Redis", b"twincache") for m in r_before] == tc_before
    assert r_ready is True
    assert r_after == tc_after
    assert ("Supervised by systemd. Please make sure you set appropriate values for "
            "TimeoutStartSec and TimeoutStopSec in your service unit.") in r_log


def test_systemd_notify_abstract_socket_and_auto(tmp_path):
    """NOTIFY_SOCKET=@name (Linux abstract namespace), found by --supervised auto; INFO says
    process_supervised:systemd."""
    with NotifyListener(None, abstract=True) as nl:
        srv = start(tc_argv("--supervised", "auto"), nl.env())
        try:
            nl.wait_for(b"READY=1")
            assert srv.wait_ready()
            info = srv.client(decode=True).info("server")
            assert info["process_supervised"] == "systemd"
        finally:
            srv.stop(check=True)
    assert "Systemd supervision detected." not in srv.output()  # a verbose line


def test_systemd_without_notify_socket(tmp_path):
    """supervised systemd with no NOTIFY_SOCKET: Redis's error line, and the server runs
    unsupervised (INFO process_supervised:no), as redis-server."""
    for argv, kind in ((tc_argv("--supervised", "systemd"), "twincache"),
                       (redis_argv("--supervised", "systemd"), "redis")):
        srv = start(argv, {}, kind=kind, ready=True, unset=("NOTIFY_SOCKET",))
        try:
            assert srv.client(decode=True).info("server")["process_supervised"] == "no"
        finally:
            srv.stop(check=True)
        assert "systemd supervision error: NOTIFY_SOCKET not found!" in srv.output(), kind


def test_upstart_stops_itself(tmp_path):
    """--supervised upstart with UPSTART_JOB: the process stops itself (SIGSTOP) once set up,
    as upstart's "expect stop" waits for; SIGCONT and it serves."""
    srv = start(tc_argv("--supervised", "upstart"), {"UPSTART_JOB": "twincache-test"})
    try:
        deadline = time.monotonic() + 10
        while proc_status(srv.pid, "State")[0] != "T":
            assert time.monotonic() < deadline, "never stopped itself"
            time.sleep(0.02)
        assert "supervised by upstart, will stop to signal readiness." in srv.output()
        os.kill(srv.pid, signal.SIGCONT)
        assert srv.wait_ready()
        assert srv.client(decode=True).info("server")["process_supervised"] == "upstart"
    finally:
        os.kill(srv.pid, signal.SIGCONT)
        srv.stop(check=True)


# -- signals --------------------------------------------------------------------------------------


def test_sighup_ignored_like_redis(tmp_path):
    """SIGHUP changes nothing (redis-server 7.0 ignores it); SIGUSR1 to the server itself
    ends it by the signal's default action, as redis-server (only its fork children handle
    SIGUSR1)."""
    results = []
    for argv, kind in ((tc_argv(), "twincache"), (redis_argv(), "redis")):
        srv = start(argv, {}, kind=kind, ready=True)
        try:
            os.kill(srv.pid, signal.SIGHUP)
            time.sleep(0.3)
            hup_alive = srv.alive() and ping(srv.port) == b"+PONG\r\n"
            os.kill(srv.pid, signal.SIGUSR1)
            rc = srv.wait_exit(5)
        finally:
            srv.stop(check=False)
        results.append((hup_alive, rc))
    assert results[0] == results[1] == (True, -signal.SIGUSR1)


# -- process title ------------------------------------------------------------------------------


def test_proc_title_like_redis(tmp_path):
    """set-proc-title: /proc/<pid>/cmdline shows "<argv0> <bind>:<port>", as redis-server's;
    CONFIG SET proc-title-template rewrites it at once; a bad template is refused with Redis's
    text; set-proc-title no leaves the command line alone."""
    tc_srv = start(tc_argv(), {}, ready=True)
    r_srv = start(redis_argv(), {}, kind="redis", ready=True)
    try:
        assert proc_title(tc_srv.pid) == "%s %s:%d" % (tc_srv.argv[0], HOST, tc_srv.port)
        assert proc_title(r_srv.pid) == "%s %s:%d" % (r_srv.argv[0], HOST, r_srv.port)
        for srv in (tc_srv, r_srv):
            c = srv.client(decode=True, exact_errors=True)
            assert c.config_set("proc-title-template", "x{{ {port} {unixsocket}{server-mode}")
            assert proc_title(srv.pid) == "x{ %d" % srv.port
            assert c.config_set("proc-title-template", "{title} {config-file} {tls-port}")
            assert proc_title(srv.pid) == "%s - 0" % srv.argv[0]
        errors = []
        for srv in (tc_srv, r_srv):
            c = srv.client(decode=True, exact_errors=True)
            for bad in ("{nope}", "{title", "{", "  ", "{server-mode}"):
                try:
                    c.config_set("proc-title-template", bad)
                    errors.append((bad, None))
                except Exception as e:  # noqa: BLE001 (the reply's text is the point)
                    errors.append((bad, str(e)))
        n = len(errors) // 2
        assert errors[:n] == errors[n:]
        assert errors[0][1] == ("ERR CONFIG SET failed (possibly related to argument "
                                "'proc-title-template') - template format is invalid or "
                                "contains unknown variables")
        assert all(e is not None for _, e in errors)
    finally:
        tc_srv.stop(check=True)
        r_srv.stop(check=True)
    off = start(tc_argv("--set-proc-title", "no"), {}, ready=True)
    try:
        with open("/proc/%d/cmdline" % off.pid, "rb") as f:
            assert f.read().split(b"\0")[:-1] == [a.encode() for a in off.argv]
    finally:
        off.stop(check=True)


def test_disable_thp_as_redis(tmp_path):
    """disable-thp: Redis turns THP off (prctl) only when the kernel has it "always" on; the
    process's THP_enabled is then the same as redis-server's."""
    if proc_status(os.getpid(), "THP_enabled") is None:
        pytest.skip("this kernel has no THP_enabled in /proc/<pid>/status")
    got = []
    for argv, kind in ((tc_argv(), "twincache"), (redis_argv(), "redis")):
        srv = start(argv, {}, kind=kind, ready=True)
        try:
            got.append(proc_status(srv.pid, "THP_enabled"))
        finally:
            srv.stop(check=True)
    assert got[0] == got[1]


# -- syslog ---------------------------------------------------------------------------------------


def in_own_dev_log(tmp_path, argv):
    """argv run in a private mount namespace whose /dev/log is a socket of this test (a tmpfs
    on /dev there, with null and urandom linked back). None if namespaces are not allowed."""
    if not ROOT or not shutil.which("unshare"):
        return None
    old = tmp_path / "olddev"
    old.mkdir()
    script = ("mount --make-rprivate / && mount --rbind /dev {o} && mount -t tmpfs tmpfs /dev "
              "&& for f in null zero urandom random; do ln -s {o}/$f /dev/$f; done "
              "&& ln -s {log} /dev/log && exec \"$@\"").format(o=old, log=tmp_path / "log")
    return ["unshare", "-m", "sh", "-c", script, "sh"] + argv


def test_syslog_lines(tmp_path):
    """syslog-enabled yes: each log line also goes to syslog with syslog-ident (and the pid) at
    syslog-facility, levels mapped as Redis maps them (notice -> 5, warning -> 4); side by side
    with redis-server, both in a mount namespace whose /dev/log is this test's socket."""
    got = {}
    for kind in ("twincache", "redis"):
        d = tmp_path / kind
        d.mkdir()
        args = ("--syslog-enabled", "yes", "--syslog-ident", "tc-" + kind,
                "--syslog-facility", "local3")
        base = tc_argv(*args) if kind == "twincache" else redis_argv(*args)
        argv = in_own_dev_log(d, base)
        if argv is None:
            pytest.skip("needs root and unshare(1) for a private /dev/log")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.bind(str(d / "log"))
            srv = start(argv, {}, kind=kind)
            try:
                if not srv.wait_ready():
                    out = srv.output()
                    if "mount" in out or "unshare" in out:
                        pytest.skip("mount namespaces not permitted here: %s" % out[-200:])
                    raise AssertionError(out)
                pid = srv.pid
                lines = []
                s.settimeout(3)
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    try:
                        m = s.recv(8192).decode()
                    except socket.timeout:
                        break
                    lines.append(m)
                    if "Ready to accept connections" in m:
                        break
            finally:
                srv.stop(check=True)
        got[kind] = (pid, lines, srv.output())
    for kind, (pid, lines, out) in got.items():
        tag = "tc-%s[%d]: " % (kind, pid)
        ready = [m for m in lines if m.endswith(tag + "Ready to accept connections")]
        # local3 = 19: notice 19*8+5 = 157, warning 156
        assert ready and ready[0].startswith("<157>"), (kind, lines)
        # the first lines precede openlog (as in redis-server): syslog's defaults, the user
        # facility (1*8 + 4 = 12) and the program's name
        warn = [m for m in lines if "is starting oO0OoO0OoO0Oo" in m]
        prog = {"twincache": "twincache", "redis": "redis-server"}[kind]
        assert warn and warn[0].startswith("<12>") and (" %s: " % prog) in warn[0], (kind, lines)
        init = [m for m in lines if m.endswith(tag + "Server initialized")]
        assert init and init[0].startswith("<156>"), (kind, lines)
        # the file/stdout log keeps its lines; no logo with syslog on
        assert "Ready to accept connections" in out


def test_logfile_empty_is_stdout(tmp_path):
    """logfile "" logs to stdout (the harness captures stdout only in this check)."""
    port = tcharness.free_port()
    p = subprocess.Popen(tcharness.twincache_argv(port, 0, ("--bind", HOST, "--logfile", "")),
                         cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                if ping(port) == b"+PONG\r\n":
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=10)
    assert b"Ready to accept connections" in out


# -- memcached's command line -----------------------------------------------------------------------


def mc_start(args, kind="twincache"):
    """twincache or memcached with memcached's flags on a free port, ready once it answers."""
    def make(ports):
        prog = tc() if kind == "twincache" else MEMCACHED
        argv = [prog, "-l", HOST, "-p", str(ports[0]), "-U", "0", "-t", "2"] + list(args)
        return tcharness.Server(argv, port=ports[0], mc_port=ports[0], kind=kind,
                                ready=[(ports[0], "mc")])
    return tcharness.start_fresh(make, 1)


@pytest.mark.skipif(not ROOT, reason="needs root: -u only acts when started as root")
def test_mc_user_drops_privileges(tmp_path):
    """-u nobody: once listening the process is nobody (real, effective, saved and fs ids; no
    supplementary groups), as memcached."""
    for kind in ("twincache", "memcached"):
        srv = mc_start(["-u", "nobody"], kind)
        try:
            nobody = pwd.getpwnam("nobody")
            assert proc_status(srv.pid, "Uid") == [str(nobody.pw_uid)] * 4, kind
            assert proc_status(srv.pid, "Gid") == [str(nobody.pw_gid)] * 4, kind
            assert proc_status(srv.pid, "Groups") == [], kind
            assert tcharness.mc_talk(srv.port, b"version\r\n").startswith(b"VERSION")
        finally:
            srv.stop(check=True)


@pytest.mark.skipif(not ROOT, reason="needs root: the refusal is for root")
def test_mc_root_without_user_refused(tmp_path):
    """As root without -u: memcached's message on stderr and its status (EX_USAGE, 64); an
    unknown user: 67 (EX_NOUSER). Nothing listens."""
    for extra in ([], ["-u", "no-such-user-tc"]):
        got = []
        for prog in (tc(), MEMCACHED):
            p = subprocess.run([prog, "-l", HOST, "-p", "0", "-U", "0"] + extra,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10,
                               cwd=str(tmp_path))
            got.append((p.returncode, p.stderr, p.stdout))
        assert got[0] == got[1]
    assert got[0][0] == 67
    p = subprocess.run([tc(), "-l", HOST, "-p", "0", "-U", "0"], stderr=subprocess.PIPE,
                       timeout=10)
    assert (p.returncode, p.stderr) == (64, b"can't run as root without the -u switch\n")


def test_mc_daemon_and_pidfile(tmp_path):
    """-d -P: returns once listening, the pidfile holds the daemon's pid; SIGTERM removes it
    (memcached removes its pidfile only when daemonized)."""
    port = tcharness.free_port()
    pidfile = tmp_path / "mc.pid"
    p = subprocess.run([tc(), "-l", HOST, "-p", str(port), "-U", "0", "-t", "2", "-d", "-P",
                        str(pidfile)] + tcharness.MC_AS_ROOT, cwd=str(tmp_path), timeout=20,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    pid = None
    try:
        assert p.returncode == 0, p.stdout
        assert tcharness.mc_talk(port, b"version\r\n", wait=0).startswith(b"VERSION")
        pid = read_pidfile(str(pidfile), timeout=0.1)
        assert os.getsid(pid) != os.getsid(0)
        assert os.readlink("/proc/%d/cwd" % pid) == "/"  # memcached -d without -r: chdir /
        os.kill(pid, signal.SIGTERM)
        assert wait_gone(pid)
        assert not pidfile.exists()
    finally:
        kill_pid(pid)


def test_mc_pidfile_without_daemon_stays(tmp_path):
    """-P without -d: written, and left at exit, by memcached and twincache alike."""
    left = []
    for kind in ("twincache", "memcached"):
        pidfile = tmp_path / (kind + ".pid")
        srv = mc_start(["-P", str(pidfile)] + (["-u", "root"] if ROOT else []), kind)
        try:
            assert read_pidfile(str(pidfile)) == srv.pid
        finally:
            srv.stop(check=True)
        left.append(pidfile.exists())
    assert left == [True, True]


def test_mc_sigusr1_graceful_stop(tmp_path):
    """SIGUSR1: memcached's graceful stop ("Gracefully stopping" on stderr, exit 0); SIGHUP is
    survived."""
    res = []
    for kind in ("twincache", "memcached"):
        srv = mc_start(["-u", "root"] if ROOT else [], kind)
        try:
            os.kill(srv.pid, signal.SIGHUP)
            time.sleep(0.2)
            hup = srv.alive()
            os.kill(srv.pid, signal.SIGUSR1)
            rc = srv.wait_exit(10)
        finally:
            srv.stop(check=False)
        res.append((hup, rc, "Gracefully stopping" in srv.output()))
    assert res[0] == res[1] == (True, 0, True)


def test_mc_core_limit_and_lock_memory(tmp_path):
    """-r raises the core file limit; -k locks memory (mlockall; a failure is memcached's
    warning, and the server runs)."""
    srv = mc_start(["-r", "-k", "-m", "8"] + (["-u", "root"] if ROOT else []))
    try:
        with open("/proc/%d/limits" % srv.pid) as f:
            core = [line for line in f if line.startswith("Max core file size")][0]
        assert core.split()[4] != "0", core
        locked = proc_status(srv.pid, "VmLck")
        if "build-asan" in tc() or "build-tsan" in tc():
            return  # the sanitizers' runtimes make mlockall a no-op
        assert locked and (int(locked[0]) > 0 or "mlockall() failed" in srv.output())
    finally:
        srv.stop(check=True)


def test_fork_child_title_like_redis(tmp_path):
    """A BGSAVE child (snapshot-fork yes) titles itself with the template, its own name as
    {title}: "tc-rdb-bgsave 127.0.0.1:<port>", as redis-server's "redis-rdb-bgsave ..."."""
    titles = {}
    for argv, kind, name in ((tc_argv("--snapshot-fork", "yes"), "twincache", "tc-rdb-bgsave"),
                             (redis_argv(), "redis", "redis-rdb-bgsave")):
        d = tmp_path / kind
        d.mkdir()
        srv = start(argv + ["--dir", str(d), "--rdb-key-save-delay", "200000"], {}, kind=kind,
                    ready=True)
        try:
            c = srv.client(decode=True)
            c.mset({"a": 1, "b": 2, "c": 3})
            c.bgsave()
            deadline = time.monotonic() + 5
            kids = []
            while not kids and time.monotonic() < deadline:
                kids = children(srv.pid)  # (forked by a worker thread: any task's child)
                time.sleep(0.02)
            assert kids, "no child"
            deadline = time.monotonic() + 5
            while proc_title(kids[0]) != "%s %s:%d" % (name, HOST, srv.port):
                assert time.monotonic() < deadline, proc_title(kids[0])
                time.sleep(0.02)
            titles[kind] = proc_title(kids[0]).replace(name, "NAME").replace(str(srv.port), "P")
        finally:
            srv.stop(sig=signal.SIGKILL, check=False)
            for k in kids:
                kill_pid(k)
    assert titles["twincache"] == titles["redis"]


def test_systemd_ready_after_dataset_loaded(tmp_path):
    """READY=1 waits for the dataset: a slow load (key-load-delay) is over, every key is in,
    when it arrives; the port took connections (-LOADING) before."""
    d = tmp_path / "data"
    d.mkdir()
    srv = start(tc_argv("--dir", str(d)), {}, ready=True)
    try:
        c = srv.client(decode=True)
        c.mset({"k%d" % i: i for i in range(300)})
        c.save()
    finally:
        srv.stop(check=True)
    with NotifyListener(tmp_path / "notify") as nl:
        srv = start(tc_argv("--dir", str(d), "--key-load-delay", "2000", "--supervised",
                            "systemd"), nl.env())
        seen = {}

        def at_ready(msg):
            if msg.startswith(b"READY=1"):
                seen["dbsize"] = srv.client(decode=True).dbsize()
        try:
            assert nl.wait_for(b"STATUS=") == b"STATUS=twincache is loading...\n"
            deadline = time.monotonic() + 10
            while True:  # the port answers while the dataset loads, with -LOADING
                try:
                    reply = ping(srv.port)
                    break
                except OSError:
                    assert time.monotonic() < deadline
                    time.sleep(0.01)
            assert reply.startswith(b"-LOADING"), reply
            nl.wait_for(b"READY=1", on_each=at_ready)
            assert seen["dbsize"] == 300
        finally:
            srv.stop(check=True)
