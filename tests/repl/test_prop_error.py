"""propagation-error-behavior and INFO unexpected_error_replies, side by side with redis-server
7.0: a command of the primary's stream (or of the AOF being loaded) that fails here is logged
("== CRITICAL == This replica is sending an error to its master ..."), counted, and with
`panic` (both) or `panic-on-replicas` (a read-only replica's link) ends the server with
Redis's panic lines; a writable replica only logs."""
import re
import threading
import time

import pytest
import redis

from test_replication import cli, follow, info, wait_for

KINDS = ["redis", "twincache"]


def start(servers, kind, *args, **kw):
    if kind == "redis":
        return servers.redis(*args, **kw)
    return servers.tc("--enable-debug-command", "yes", *args, **kw)


def critical_lines(srv):
    return [re.sub(r"^.*?== CRITICAL ==", "== CRITICAL ==", ln)
            for ln in srv.output().splitlines() if "== CRITICAL ==" in ln]


def stream_error(servers, kind, behavior, read_only="yes"):
    """A primary and its replica (propagation-error-behavior behavior on the replica); the
    primary replicates a command the replica does not know, then a SET. Returns the replica,
    whether it is still alive, and its INFO unexpected_error_replies when it is."""
    p = start(servers, kind)
    r = start(servers, kind, "--replica-read-only", read_only)
    follow(r, p)
    cli(r).config_set("propagation-error-behavior", behavior)
    cli(p).execute_command("DEBUG", "REPLICATE", "fake-command-1")
    cli(p).set("foo", "bar2")
    if behavior == "ignore" or read_only == "no":
        assert cli(p).execute_command("WAIT", 1, 5000) == 1
        wait_for(lambda: cli(r).get("foo") == b"bar2", what="the SET after the bad command")
        return r, True, int(info(r, "stats")["unexpected_error_replies"])
    deadline = time.time() + 10
    while time.time() < deadline and r.alive():
        time.sleep(0.05)
    return r, r.alive(), None


@pytest.mark.parametrize("behavior,read_only", [("ignore", "yes"), ("panic-on-replicas", "no"),
                                                ("panic", "yes"), ("panic-on-replicas", "yes")])
def test_stream_error(servers, behavior, read_only):
    seen = {}
    for kind in KINDS:
        r, alive, count = stream_error(servers, kind, behavior, read_only)
        lines = critical_lines(r)
        out = r.output()
        seen[kind] = (alive, count, lines,
                      "!!! Software Failure. Press left mouse button to continue" in out,
                      re.findall(r"Guru Meditation: (.*?) #", out))
    assert seen["twincache"] == seen["redis"], seen
    alive, count, lines, failure, guru = seen["twincache"]
    assert len(lines) == 1 and "fake-command-1" in lines[0], lines
    assert alive == (behavior == "ignore" or read_only == "no")
    if alive:
        assert count == 1
    else:
        assert failure and guru == ["This replica panicked sending an error to its master after "
                                    "processing the command '<unknown>'"]


def aof_with_failing_command(servers, kind, tmp_path, behavior):
    """A server whose AOF holds an INCR of a string that is not a number, restarted with
    propagation-error-behavior behavior: (alive after the load, its INFO count, the log's
    CRITICAL lines)."""
    d = tmp_path / kind
    d.mkdir()
    s = start(servers, kind, "--appendonly", "yes", "--appendfsync", "always", dir=str(d))
    c = cli(s)
    c.set("k", "text")
    c.set("n", "1")
    # an INCR that succeeded in the primary's time, replayed over a changed value: written by
    # hand into the newest incremental file, as a hand-edited or mixed-up AOF would have it
    s.stop()
    incr = sorted(p for p in (d / "appendonlydir").iterdir() if ".incr." in p.name)[-1]
    with open(incr, "ab") as f:
        f.write(b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n*3\r\n$3\r\nSET\r\n$4\r\nlast\r\n$1\r\n1\r\n")
    s2 = start(servers, kind, "--appendonly", "yes", "--propagation-error-behavior", behavior,
               dir=str(d), start=False)
    s2.spawn()
    deadline = time.time() + 10
    ready = False
    while time.time() < deadline and s2.alive():
        try:
            if cli(s2).ping():
                ready = True
                break
        except Exception:
            time.sleep(0.05)
    if not ready:
        s2.wait_exit(10)
        return False, None, critical_lines(s2), None
    return True, int(info(s2, "stats")["unexpected_error_replies"]), critical_lines(s2), \
        cli(s2).get("last")


@pytest.mark.parametrize("behavior", ["ignore", "panic"])
def test_aof_load_error(servers, tmp_path, behavior):
    seen = {}
    for kind in KINDS:
        alive, count, lines, last = aof_with_failing_command(servers, kind, tmp_path, behavior)
        seen[kind] = (alive, count, lines, last if alive else None)
    assert seen["twincache"] == seen["redis"], seen
    alive, count, lines, last = seen["twincache"]
    assert lines == ["== CRITICAL == This server is sending an error to its AOF-loading-client: "
                     "'value is not an integer or out of range' after processing the "
                     "command 'incr'"], lines
    assert alive == (behavior == "ignore")
    if alive:
        assert count == 1 and last == b"1"



def busy_now(srv):
    try:
        cli(srv).execute_command("PING")
    except redis.ResponseError as e:
        return str(e).startswith("BUSY")
    return False


def test_stream_waits_while_a_script_is_busy(servers):
    """A script past busy-reply-threshold on the replica: the primary's commands are not
    answered -BUSY (each one lost, and a panic under propagation-error-behavior panic) but
    read on and applied once the script ends, as Redis's replica does."""
    spin = ("local t = redis.call('time') local s = t[1] * 1000000 + t[2] "
            "while true do t = redis.call('time') "
            "if t[1] * 1000000 + t[2] - s > 1500000 then break end end return 1")
    seen = {}
    for kind in KINDS:
        p = start(servers, kind)
        r = start(servers, kind, "--propagation-error-behavior", "panic",
                  "--busy-reply-threshold", "100")
        follow(r, p)
        runner = redis.Redis(host="127.0.0.1", port=r.port, socket_timeout=30)
        done = []
        t = threading.Thread(target=lambda: done.append(runner.eval(spin, 0)))
        t.start()
        wait_for(lambda: busy_now(r), what="the script busy")
        for i in range(20):
            cli(p).set("k%d" % i, i)
        t.join(30)
        wait_for(lambda: cli(r).get("k19") == b"19", what="the primary's writes applied")
        seen[kind] = (done, r.alive(), critical_lines(r), cli(r).dbsize(),
                      int(info(r, "stats")["unexpected_error_replies"]))
    assert seen["twincache"] == seen["redis"] == ([1], True, [], 20, 0), seen
