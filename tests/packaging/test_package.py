"""The install step and the Debian package (issue 39).

test_cmake_install: `cmake --install <build> --prefix <tmp>` of the release build puts the
binaries, man pages, configuration, unit and logrotate rule in place (no root needed).

The package tests run in order on one .deb, built once per session: the tracked files of the
repository are copied into a temporary directory and built there with `dpkg-buildpackage -b`
(its output goes to the parent directory, so nothing is written in the repository). Then:
lintian without errors, dpkg -i on this machine, the files in place, `systemd-analyze verify`
of the installed unit, the man pages through `man -l`, logrotate's dry run of the rule, the
installed /usr/bin/twincache started as the twincache user with /etc/twincache/twincache.conf
(ports overridden) and answering PING, and `dpkg --purge` leaving none of the package's paths,
its user or its dpkg-statoverride entries behind.

They need root (dpkg -i) and skip otherwise, or when the package is installed already, or a
twincache user exists that the package did not create (the test would remove it).
"""

import fcntl
import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import tcharness

REPO = tcharness.REPO_ROOT
NICE = ["nice", "-n", "19"]
PKG = "twincache"

# every path the package installs or its maintainer scripts create; none may survive a purge
PACKAGE_PATHS = [
    "/usr/bin/twincache",
    "/usr/bin/twinbench",
    "/usr/share/man/man1/twincache.1.gz",
    "/usr/share/man/man1/twinbench.1.gz",
    "/usr/share/doc/twincache",
    "/etc/twincache",
    "/etc/twincache/twincache.conf",
    "/etc/logrotate.d/twincache",
    "/lib/systemd/system/twincache.service",
    "/var/lib/twincache",
    "/var/log/twincache",
    "/run/twincache",
    # dh_installsystemd's enablement (deb-systemd-helper), made by postinst even without systemd
    "/etc/systemd/system/multi-user.target.wants/twincache.service",
    "/var/lib/systemd/deb-systemd-helper-enabled/twincache.service.dsh-also",
    "/var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/twincache.service",
]


def run(argv, cwd=None, env=None, timeout=1200, check=True):
    p = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and p.returncode != 0:
        pytest.fail("%s exited %d:\n%s" % (" ".join(map(str, argv)), p.returncode,
                                           p.stdout[-6000:]))
    return p


def dpkg(*args):
    """dpkg with args, waiting (up to 5 minutes) while another dpkg or apt holds its lock."""
    deadline = time.monotonic() + 300
    while True:
        p = run(["dpkg"] + list(args), check=False)
        if p.returncode == 0 or "locked by another process" not in p.stdout or time.monotonic() > deadline:
            break
        time.sleep(2)
    if p.returncode != 0:
        pytest.fail("dpkg %s exited %d:\n%s" % (" ".join(map(str, args)), p.returncode,
                                                 p.stdout[-6000:]))
    return p


def build_dir():
    """The release build directory of the binary under test (build/ by default)."""
    return tcharness.twincache_bin().parent


# -- cmake --install ----------------------------------------------------------------------------


def test_cmake_install(tmp_path):
    bdir = build_dir()
    if not (bdir / "cmake_install.cmake").exists():
        pytest.skip("no configured build in %s: run ./scripts/build.sh release" % bdir)
    if not (bdir / "packaging" / "cmake_install.cmake").exists():
        pytest.skip("%s was configured before the install rules: run ./scripts/build.sh "
                    "release" % bdir)
    prefix = tmp_path / "prefix"
    run(["cmake", "--install", bdir, "--prefix", prefix])
    expect = {
        "bin/twincache": 0o755,
        "bin/twinbench": 0o755,
        "share/man/man1/twincache.1": None,
        "share/man/man1/twinbench.1": None,
        "etc/twincache/twincache.conf": 0o640,
        "etc/logrotate.d/twincache": None,
        "lib/systemd/system/twincache.service": None,
    }
    for rel, mode in expect.items():
        p = prefix / rel
        assert p.is_file(), rel
        if mode is not None:
            assert p.stat().st_mode & 0o777 == mode, rel
    out = run([prefix / "bin/twincache", "--version"]).stdout
    assert out.startswith("twincache v=")
    assert "Usage: twinbench" in run([prefix / "bin/twinbench", "--help"]).stdout
    assert (prefix / "etc/twincache/twincache.conf").read_bytes() == \
        (REPO / "packaging/twincache.conf").read_bytes()


# -- the sources of the unit and the man pages (no root needed) ----------------------------------


def need(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        pytest.skip("missing %s: run scripts/install-deps.sh" % ", ".join(missing))


def test_unit_file_verifies(tmp_path):
    """packaging/twincache.service through `systemd-analyze verify`, its ExecStart pointed at
    the built binary and its man: reference at man/ (the package test verifies it installed)."""
    need("systemd-analyze", "man")
    binary = tcharness.twincache_bin()
    if not binary.exists():
        pytest.skip("%s not built" % binary)
    (tmp_path / "man" / "man1").mkdir(parents=True)
    shutil.copy(REPO / "man" / "twincache.1", tmp_path / "man" / "man1")
    unit = tmp_path / "twincache.service"
    text = (REPO / "packaging" / "twincache.service").read_text()
    assert "ExecStart=/usr/bin/twincache /etc/twincache/twincache.conf " in text
    assert "Type=notify" in text and "User=twincache" in text
    unit.write_text(text.replace("/usr/bin/twincache", str(binary)))
    p = run(["systemd-analyze", "verify", unit], env=dict(os.environ, MANPATH=tmp_path / "man"),
            check=False)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout


def render_man(path):
    """man --warnings -l path: the page on stdout, and no warning from groff on stderr."""
    p = subprocess.run(["man", "--warnings", "-l", str(path)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60,
                       env=dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8"))
    assert p.returncode == 0 and not p.stderr, p.stderr
    return p.stdout


def test_man_sources_render():
    need("man")
    for page in ("twincache", "twinbench"):
        assert page.upper() + "(1)" in render_man(REPO / "man" / (page + ".1"))[:200]


# -- the Debian package -------------------------------------------------------------------------


def need_root_and_tools():
    if os.geteuid() != 0:
        pytest.skip("the package tests install a .deb: run them as root")
    missing = [t for t in ("dpkg-buildpackage", "dh", "lintian", "fakeroot", "man",
                           "systemd-analyze", "logrotate", "adduser", "git")
               if not shutil.which(t)]
    if missing:
        pytest.skip("missing %s: run scripts/install-deps.sh" % ", ".join(missing))
    if run(["dpkg-query", "-W", "-f=${Status}", PKG], check=False).stdout.startswith(
            "install ok"):
        pytest.skip("the twincache package is installed on this machine already; the test "
                    "would remove it (dpkg --purge twincache first)")
    try:
        pwd.getpwnam(PKG)
        pytest.skip("a twincache user exists without the package; the purge would remove it")
    except KeyError:
        pass


# lintian's warnings and informational tags on the package, each accepted with its reason;
# a new one fails test_lintian
LINTIAN_ACCEPTED = {
    "package-supports-alternative-init-but-no-init.d-script",  # systemd only, as intended
}


@pytest.fixture(scope="module")
def machine_lock():
    """One run of these tests at a time on this machine (they install and purge the package)."""
    fd = os.open("/run/lock/twincache-packaging-test.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


@pytest.fixture(scope="module")
def deb(request, tmp_path_factory):
    """The .deb built from the repository's tracked files, in a temporary directory (its
    .changes beside it)."""
    if os.geteuid() != 0:
        pytest.skip("the package tests install a .deb: run them as root")
    request.getfixturevalue("machine_lock")
    need_root_and_tools()
    top = tmp_path_factory.mktemp("debbuild")
    src = top / "twincache-0.1.0"
    files = run(["git", "-C", REPO, "ls-files", "-z"]).stdout.split("\0")
    for rel in filter(None, files):
        s = REPO / rel
        if not s.is_symlink() and not s.is_file():
            continue  # deleted in the worktree, not committed yet
        d = src / rel
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(s, d, follow_symlinks=False)
    env = dict(os.environ)
    env["DEB_BUILD_OPTIONS"] = "nocheck parallel=%d" % (os.cpu_count() or 1)
    t0 = time.monotonic()
    run(NICE + ["dpkg-buildpackage", "-b", "-uc", "-us"], cwd=src, env=env, timeout=1800)
    print("dpkg-buildpackage: %.0f s" % (time.monotonic() - t0))
    shutil.rmtree(src)  # the build tree (hundreds of MB); the package files stay
    debs = sorted(top.glob("twincache_*.deb"))
    assert len(debs) == 1, sorted(p.name for p in top.iterdir())
    return debs[0]


@pytest.fixture(scope="module")
def installed(deb):
    """The package installed with dpkg; purged at the end (the last test checks the purge)."""
    dpkg("-i", deb)
    yield deb
    if run(["dpkg-query", "-W", "-f=${Status}", PKG], check=False).stdout.startswith(
            "install ok"):
        dpkg("--purge", PKG)


def test_deb_contents(deb):
    listing = run(["dpkg-deb", "-c", deb]).stdout
    for path in ("./usr/bin/twincache", "./usr/bin/twinbench",
                 "./etc/twincache/twincache.conf", "./etc/logrotate.d/twincache",
                 "./lib/systemd/system/twincache.service",
                 "./usr/share/man/man1/twincache.1.gz", "./usr/share/man/man1/twinbench.1.gz",
                 "./usr/share/doc/twincache/copyright"):
        assert path in listing, path
    # nothing of the build tree but the two programs (no unit tests, no fuzz replays)
    assert "./usr/bin/test_" not in listing and "replay_" not in listing
    assert run(["dpkg-deb", "-f", deb, "Package"]).stdout.strip() == PKG
    ctrl = tempfile.mkdtemp(prefix="tc-debctl-")
    try:
        run(["dpkg-deb", "-e", deb, ctrl])
        cf = Path(ctrl, "conffiles").read_text().split()
        assert sorted(cf) == ["/etc/logrotate.d/twincache", "/etc/twincache/twincache.conf"]
    finally:
        shutil.rmtree(ctrl)


def test_lintian(deb):
    """No error on the .changes (the package, its -dbgsym and the build's files); the warnings
    and informational tags are the accepted ones."""
    changes = sorted(deb.parent.glob("twincache_*.changes"))
    p = run(["lintian", "--fail-on", "error", "-I", "--pedantic", changes[0]], check=False,
            timeout=600)
    print(p.stdout)
    assert p.returncode == 0, p.stdout
    tags = set(re.findall(r"^[WIPX]: [^:]+: (\S+)", p.stdout, re.M))
    assert tags <= set(LINTIAN_ACCEPTED), sorted(tags - set(LINTIAN_ACCEPTED))


def test_installed_files(installed):
    for path in ("/usr/bin/twincache", "/usr/bin/twinbench"):
        assert os.access(path, os.X_OK), path
    for path in PACKAGE_PATHS:
        if path != "/run/twincache":  # systemd's RuntimeDirectory, made when the unit starts
            assert os.path.exists(path), path
    user = pwd.getpwnam(PKG)
    assert user.pw_dir == "/var/lib/twincache"
    assert grp.getgrgid(user.pw_gid).gr_name == PKG
    for path, owner, group, mode in (("/var/lib/twincache", PKG, PKG, 0o750),
                                     ("/var/log/twincache", PKG, "adm", 0o2750),
                                     ("/etc/twincache/twincache.conf", PKG, PKG, 0o640)):
        st = os.stat(path)
        assert (pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name,
                st.st_mode & 0o7777) == (owner, group, mode), path


def test_unit_verifies(installed):
    p = run(["systemd-analyze", "verify", "/lib/systemd/system/twincache.service"],
            check=False)
    assert p.returncode == 0 and not p.stdout.strip(), p.stdout


def test_man_pages_render(installed):
    for page in ("twincache", "twinbench"):
        out = render_man("/usr/share/man/man1/%s.1.gz" % page)
        assert page.upper() + "(1)" in out[:200]


def test_logrotate_rule(installed):
    p = run(["logrotate", "-d", "/etc/logrotate.d/twincache"], check=False)
    assert p.returncode == 0 and "error" not in p.stdout.lower(), p.stdout


def ask(port, data, expect_end, timeout=10.0):
    with socket.create_connection((tcharness.HOST, port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while not out.endswith(expect_end):
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
        return out


def test_installed_server_answers(installed):
    """/usr/bin/twincache as the twincache user with the packaged configuration, on free ports,
    with the packaged paths (/run/twincache made as systemd's RuntimeDirectory= would)."""
    port, mc_port = tcharness.free_ports(2)
    user = pwd.getpwnam(PKG)
    os.makedirs("/run/twincache", exist_ok=True)
    os.chown("/run/twincache", user.pw_uid, user.pw_gid)
    argv = ["setpriv", "--reuid", PKG, "--regid", PKG, "--clear-groups", "--",
            "/usr/bin/twincache", "/etc/twincache/twincache.conf",
            "--port", str(port), "--memcache-port", str(mc_port), "--threads", "2"]
    proc = subprocess.Popen(argv, cwd="/", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                reply = ask(port, b"PING\r\n", b"\r\n", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, proc.stdout.read().decode(errors="replace")
                assert time.monotonic() < deadline, "no answer on port %d" % port
                time.sleep(0.1)
        assert reply == b"+PONG\r\n"
        assert ask(mc_port, b"version\r\n", b"\r\n").startswith(b"VERSION ")
        cfg = ask(port, b"CONFIG GET dir\r\n", b"twincache\r\n")
        assert b"/var/lib/twincache" in cfg
        pid = int(Path("/run/twincache/twincache.pid").read_text())
        assert pid == proc.pid
        log = Path("/var/log/twincache/twincache.log").read_text()
        assert "Ready to accept connections" in log
        assert os.stat("/var/log/twincache/twincache.log").st_uid == user.pw_uid
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)  # by its PID: it saves (save rules) and exits
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 0
    assert not os.path.exists("/run/twincache/twincache.pid")
    assert os.path.exists("/var/lib/twincache/dump.rdb")  # removed by the purge below


def test_purge_leaves_nothing(installed):
    dpkg("--purge", PKG)
    left = [p for p in PACKAGE_PATHS if os.path.lexists(p)]
    assert not left, left
    with pytest.raises(KeyError):
        pwd.getpwnam(PKG)
    with pytest.raises(KeyError):
        grp.getgrnam(PKG)
    overrides = run(["dpkg-statoverride", "--list"], check=False).stdout
    assert "twincache" not in overrides, overrides
    status = run(["dpkg-query", "-W", "-f=${Status}", PKG], check=False)
    assert not status.stdout.startswith("install ok")
    assert not Path("/var/lib/dpkg/info/twincache.list").exists()
