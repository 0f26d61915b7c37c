"""The harness finds every kind of sanitizer report, a report fails the test (at stop, after a
test, at a failed start, and end to end in a pytest run), and servers are started on distinct
free ports, stopped by PID (SIGKILL after a timeout) and restarted on the same port."""

import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

import tcharness
from tcharness import SanitizerError, Server, ServerStartError, sanitizer_report

REPORTS = {
    "asan": textwrap.dedent("""\
        =================================================================
        ==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55
        READ of size 1 at 0x602000000010 thread T1
            #0 0x55d in store_get src/store/store.c:120
        SUMMARY: AddressSanitizer: heap-use-after-free src/store/store.c:120 in store_get
        ==4242==ABORTING
        """),
    "ubsan": textwrap.dedent("""\
        src/proto/resp.c:88:17: runtime error: signed integer overflow: 9223372036854775807 + 1
            #0 0x55 in resp_parse src/proto/resp.c:88
        SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior src/proto/resp.c:88:17 in
        """),
    "tsan": textwrap.dedent("""\
        ==================
        WARNING: ThreadSanitizer: data race (pid=4242)
          Write of size 8 at 0x7b0400000000 by thread T2:
            #0 aof_close src/persist/aof.c:348
          Previous read of size 8 at 0x7b0400000000 by thread T1:
            #0 aof_get_stats src/persist/aof.c:362
        SUMMARY: ThreadSanitizer: data race src/persist/aof.c:348 in aof_close
        ==================
        """),
    "lsan": textwrap.dedent("""\
        =================================================================
        ==4242==ERROR: LeakSanitizer: detected memory leaks

        Direct leak of 32 byte(s) in 1 object(s) allocated from:
            #0 0x7f in malloc
        SUMMARY: AddressSanitizer: 32 byte(s) leaked in 1 allocation(s).
        """),
}
HEADERS = {"asan": "ERROR: AddressSanitizer: heap-use-after-free", "ubsan": "runtime error:",
           "tsan": "WARNING: ThreadSanitizer: data race", "lsan": "ERROR: LeakSanitizer"}
CLEAN_LOG = ("4242:M 04 Dec 2026 07:00:00.000 * Ready to accept connections tcp\n"
             "4242:M 04 Dec 2026 07:00:01.000 # Error accepting a client: error: EMFILE\n")

# A stand-in for a sanitized server: listens on argv[1], answers every connection "+PONG",
# writes the sanitizer report argv[3] to stderr when a client sends REPORT and, as argv[2]
# says, "start": at start, "die": at start, then exits 1; it exits 0 on SIGTERM unless
# "ignore-term".
FAKE = textwrap.dedent("""\
    import signal, socket, sys
    port, mode, report = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    def emit():
        sys.stderr.write(report)
        sys.stderr.flush()
    if mode == "die":
        emit()
        sys.exit(1)
    if mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    signal.signal(signal.SIGUSR1, lambda *a: sys.exit(3))
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(16)
    print("ready", flush=True)
    if mode == "start":
        emit()
    while True:
        c, _ = ls.accept()
        if c.recv(100).startswith(b"REPORT"):
            emit()
        c.sendall(b"+PONG\\r\\n")
        c.close()
    """)


def fake_server(mode="clean", kind="tsan", **kw):
    port = tcharness.free_port()
    argv = [sys.executable, "-c", FAKE, port, mode, REPORTS[kind] if kind else ""]
    return Server(argv, port=port, kind="twincache", **kw)


def send(srv, data):
    with socket.create_connection((srv.host, srv.port), timeout=5) as s:
        s.sendall(data)
        return s.recv(100)


# -- finding reports ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_report_found(kind):
    log = CLEAN_LOG + REPORTS[kind] + CLEAN_LOG
    got = sanitizer_report(log)
    assert got is not None and HEADERS[kind] in got
    # from the report's first line (separator included) to its SUMMARY line, nothing else
    assert got == REPORTS[kind][:REPORTS[kind].index("\n", REPORTS[kind].index("SUMMARY:"))]


def test_clean_log_has_no_report():
    assert sanitizer_report(CLEAN_LOG * 100) is None


def test_report_after_offset_only():
    log = REPORTS["asan"] + CLEAN_LOG + REPORTS["tsan"]
    assert "AddressSanitizer" in sanitizer_report(log)
    assert "ThreadSanitizer" in sanitizer_report(log, pos=len(REPORTS["asan"]))
    assert sanitizer_report(log, pos=len(log)) is None


# -- a report fails the test --------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(REPORTS))
def test_report_fails_stop(kind):
    srv = fake_server("start", kind).start()
    send(srv, b"PING\r\n")
    with pytest.raises(SanitizerError) as ei:
        srv.stop()
    assert HEADERS[kind] in str(ei.value) and "SUMMARY:" in str(ei.value)
    assert srv.proc.returncode == 0  # exit code 0 does not hide the report
    assert srv.stop() == 0  # reported once


def test_clean_server_stops_quietly():
    srv = fake_server("clean", check=True).start()
    assert send(srv, b"PING\r\n") == b"+PONG\r\n"
    assert srv.stop() == 0


def test_report_during_a_test_fails_the_after_test_check():
    srv = fake_server("clean", "ubsan").start()
    srv.check_running()  # nothing yet
    send(srv, b"REPORT\r\n")
    with pytest.raises(SanitizerError, match="runtime error:"):
        srv.check_running()
    srv.check_running()  # the same report is not raised again
    send(srv, b"REPORT\r\n")  # a second one is
    with pytest.raises(SanitizerError, match="runtime error:"):
        srv.check_running()
    srv.stop()


def test_death_fails_the_after_test_check():
    srv = fake_server("clean").start()
    os.kill(srv.pid, signal.SIGKILL)
    srv.proc.wait()
    with pytest.raises(AssertionError, match="died"):
        srv.check_running()


def test_report_at_a_failed_start():
    srv = fake_server("die", "asan")
    with pytest.raises(SanitizerError, match="heap-use-after-free"):
        srv.start()
    srv = fake_server("die", None)
    with pytest.raises(ServerStartError, match="exited during startup with code 1"):
        srv.start()


def test_reference_servers_are_not_scanned():
    srv = fake_server("start", "asan", sanitized=False).start()
    assert srv.stop() == 0


def test_report_fails_a_pytest_run(tmp_path):
    """End to end: a test whose fixture stops a server that printed a ThreadSanitizer report
    fails (an error at teardown) with the report; so does one whose server reports mid-test."""
    (tmp_path / "conftest.py").write_text("import sys\nsys.path.insert(0, %r)\n"
                                          % str(tcharness.TESTS_DIR))
    (tmp_path / "test_fake.py").write_text(textwrap.dedent("""\
        import socket, sys
        import pytest
        import tcharness

        def start(mode, report):
            port = tcharness.free_port()
            return tcharness.Server([sys.executable, "-c", %r, port, mode, report],
                                    port=port).start()

        @pytest.fixture
        def reported():
            srv = start("start", %r)
            yield srv
            srv.stop()

        @pytest.fixture
        def clean():
            srv = start("clean", %r)  # writes the report when asked to
            yield srv
            srv.stop()

        def test_uses_a_server_that_reported(reported):
            pass

        def test_report_mid_test(clean):
            with socket.create_connection(("127.0.0.1", clean.port)) as s:
                s.sendall(b"REPORT")
                assert s.recv(100) == b"+PONG\\r\\n"

        def test_clean(clean):
            pass
        """) % (FAKE, REPORTS["tsan"], REPORTS["tsan"]))
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    out = res.stdout
    assert res.returncode == 1, out
    assert "3 passed, 2 errors" in out, out
    i = out.index("ERROR at teardown of test_uses_a_server_that_reported")
    j = out.index("ERROR at teardown of test_report_mid_test")
    for section in (out[i:j], out[j:]):
        assert "WARNING: ThreadSanitizer: data race" in section, out
        assert "SUMMARY: ThreadSanitizer: data race" in section, out


# -- ports and lifecycle ------------------------------------------------------------------------


def test_free_ports_distinct_and_not_reused():
    a = tcharness.free_ports(20)
    b = tcharness.free_ports(20)
    assert len(set(a + b)) == 40
    for p in a + b:
        with socket.socket() as s:
            s.bind(("127.0.0.1", p))  # still free


def test_restart_same_port_and_log():
    srv = fake_server("clean").start()
    port, pid = srv.port, srv.pid
    srv.restart()
    assert srv.port == port and srv.pid != pid
    assert send(srv, b"PING\r\n") == b"+PONG\r\n"
    assert srv.output().count("ready") == 2  # both runs in one log
    srv.stop()


def test_sigkill_after_stop_timeout():
    srv = fake_server("ignore-term", check=True, stop_timeout=0.5).start()
    with pytest.raises(AssertionError, match="ignored SIGTERM"):
        srv.stop()
    assert srv.proc.returncode == -signal.SIGKILL and srv.killed


def test_exit_code_checked():
    srv = fake_server("clean", check=True).start()
    assert srv.stop(sig=signal.SIGKILL, check=False) == -signal.SIGKILL
    srv.start()
    with pytest.raises(AssertionError, match="exited with code 3"):
        srv.stop(sig=signal.SIGUSR1)

