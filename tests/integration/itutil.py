"""Small helpers shared by the integration tests."""

import contextlib
import re
import time

import pytest
import redis


@contextlib.contextmanager
def raises_exact(text):
    """Expect a redis-py call to fail with exactly this error reply (complete wire text, as kept
    by conftest.ExactErrorParser), e.g. raises_exact("ERR syntax error")."""
    with pytest.raises(redis.exceptions.ResponseError) as ei:
        yield ei
    assert str(ei.value) == text, "error reply %r, expected %r" % (str(ei.value), text)


def call_error(client, *args):
    """Run a command that must fail; return the full error text."""
    try:
        reply = client.cmd(*args)
    except redis.exceptions.ResponseError as e:
        return str(e)
    raise AssertionError("%r succeeded with %r, expected an error" % (args, reply))


def unknown_command_error(name, *args):
    """Redis 7's text for an unknown command: the name (at most 128 bytes), then each argument
    quoted and followed by a space, while the argument text so far is under 128 bytes (an
    argument is cut so the text stays near 128)."""
    text = ""
    for a in args:
        if len(text) >= 128:
            break
        text += "'%s' " % a[:128 - len(text)]
    return "ERR unknown command '%s', with args beginning with: %s" % (name[:128], text)


def skip_if_unknown(client, *cmd):
    """Run cmd; if the server does not know the command, skip the test (later issues add the
    other data types); otherwise return the reply."""
    try:
        return client.cmd(*cmd)
    except redis.exceptions.ResponseError as e:
        if str(e).startswith("ERR unknown command '%s'" % cmd[0].lower()) or \
                str(e).startswith("ERR unknown command '%s'" % cmd[0]):
            pytest.skip("server does not implement %s yet: %s" % (cmd[0], e))
        raise


def parse_info(text):
    """Parse an INFO reply into {section: {field: value}} keeping the raw string values, plus
    a flat dict under key None."""
    if isinstance(text, bytes):
        text = text.decode()
    sections, flat, cur = {}, {}, None
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("# "):
            cur = line[2:].strip().lower()
            sections[cur] = {}
            continue
        assert ":" in line, "INFO line without ':' %r" % line
        k, v = line.split(":", 1)
        sections.setdefault(cur, {})[k] = v
        flat[k] = v
    sections[None] = flat
    return sections


def keyspace(info_text):
    """{db_index: (keys, expires)} from an INFO (keyspace) reply."""
    out = {}
    for m in re.finditer(r"^db(\d+):keys=(\d+),expires=(\d+)", info_text, re.M):
        out[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    return out


def wait_until(pred, timeout=5.0, interval=0.01, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


def rss_of(pid):
    """Resident set size of a process in bytes (0 when unknown)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0
