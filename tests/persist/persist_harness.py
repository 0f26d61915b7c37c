"""Servers for the persistence tests: twincache and Debian's redis-server started on free ports
in a temporary directory, stopped by PID (used by conftest.py and bench_bgsave.py).

Run with Debian's interpreter:  /usr/bin/python3 -m pytest tests/persist
TWINCACHE_BIN overrides the binary (default: build/twincache of the repository).
"""

import os
import shutil
import signal
import socket
import subprocess
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def twincache_bin():
    # relative paths are relative to the repository (servers run in their own directories)
    return os.path.join(ROOT, os.environ.get("TWINCACHE_BIN", os.path.join("build", "twincache")))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, argv, port, dir_, logfile, mc_port=None):
        self.argv, self.port, self.dir, self.logfile, self.mc_port = argv, port, dir_, logfile, mc_port
        self.proc = None

    def start(self, timeout=20):
        self.log = open(self.logfile, "ab")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=self.dir)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited %s:\n%s" % (self.proc.returncode, self.output()))
            try:
                if self.client().ping():
                    return self
            except (redis.ConnectionError, redis.BusyLoadingError):
                time.sleep(0.05)
        raise RuntimeError("server did not start:\n" + self.output())

    def client(self, db=0, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, db=db, socket_timeout=60, **kw)

    def output(self):
        try:
            with open(self.logfile, "rb") as f:
                return f.read().decode(errors="replace")[-20000:]
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Stop by PID; returns the exit code."""
        if not self.alive():
            return self.proc.returncode if self.proc else None
        os.kill(self.proc.pid, sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        self.log.close()
        return rc

    def restart(self):
        self.stop()
        return self.start()

    @property
    def dump(self):
        return os.path.join(self.dir, "dump.rdb")


def make_twincache(dir_, *extra):
    port, mc = free_port(), free_port()
    argv = [twincache_bin(), "--port", str(port), "--memcache-port", str(mc), "--threads", "2",
            "--dir", dir_] + list(extra)
    return Server(argv, port, dir_, os.path.join(dir_, "twincache.log"), mc_port=mc)


def make_redis(dir_, *extra):
    port = free_port()
    argv = [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port),
            "--bind", "127.0.0.1", "--dir", dir_, "--save", "", "--appendonly", "no",
            "--daemonize", "no"] + list(extra)
    return Server(argv, port, dir_, os.path.join(dir_, "redis.log"))
