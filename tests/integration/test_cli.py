"""redis-cli against the server: one-shot commands, commands through a pipe, --pipe mass
insertion, -x, --no-raw formatting and RESP3 (-3)."""

import re
import subprocess

import pytest

from itutil import parse_info

pytestmark = pytest.mark.sanitize


def cli(server, *args, stdin=None, timeout=30):
    """Run redis-cli (stdout is not a tty, so it prints raw replies) and return the result."""
    cmd = ["redis-cli", "-h", server.host, "-p", str(server.port)] + [str(a) for a in args]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout)


def out(res):
    assert res.returncode == 0, (res.returncode, res.stdout, res.stderr)
    return res.stdout.decode()


def test_one_shot_ping(server):
    assert out(cli(server, "PING")) == "PONG\n"
    assert out(cli(server, "PING", "hello world")) == "hello world\n"


def test_one_shot_set_get(server, r):
    assert out(cli(server, "SET", "cli:key", "hello world")) == "OK\n"
    assert out(cli(server, "GET", "cli:key")) == "hello world\n"
    assert r.get("cli:key") == "hello world"
    # a missing key is an empty line in raw mode and (nil) in --no-raw mode
    assert out(cli(server, "GET", "cli:missing")) == "\n"
    assert out(cli(server, "--no-raw", "GET", "cli:missing")) == "(nil)\n"
    assert out(cli(server, "--no-raw", "GET", "cli:key")) == '"hello world"\n'
    assert out(cli(server, "--no-raw", "INCR", "cli:n")) == "(integer) 1\n"
    assert out(cli(server, "--no-raw", "NOSUCHCMD", "x")) == \
        "(error) ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' \n"


def test_one_shot_info(server, r):
    r.set("cli:info", "1")
    r.get("cli:info")
    text = out(cli(server, "INFO"))
    info = parse_info(text)
    for section in ("server", "clients", "memory", "persistence", "stats", "replication",
                    "cpu", "keyspace"):
        assert section in info, "INFO lacks section # %s" % section.capitalize()
    assert re.match(r"^\d+\.\d+\.\d+", info["server"]["redis_version"])
    assert int(info["server"]["tcp_port"]) == server.port
    assert int(info["clients"]["connected_clients"]) >= 1
    assert int(info["memory"]["used_memory"]) > 0
    assert int(info["stats"]["keyspace_hits"]) >= 1
    assert int(info["stats"]["total_commands_processed"]) >= 3
    assert re.search(r"^db0:keys=1,expires=0", text, re.M), text
    # one section only
    text = out(cli(server, "INFO", "keyspace"))
    assert text.startswith("# Keyspace"), text
    assert "redis_version" not in text


def test_one_shot_config_get_port(server):
    assert out(cli(server, "CONFIG", "GET", "port")) == "port\n%d\n" % server.port
    # RESP3 through redis-cli: CONFIG GET is a map
    assert out(cli(server, "-3", "--no-raw", "CONFIG", "GET", "port")) == \
        '1# "port" => "%d"\n' % server.port


def test_commands_through_a_pipe(server, r):
    script = (b"PING\n"
              b"SET pipe:k \"v v\"\n"
              b"GET pipe:k\n"
              b"INCR pipe:n\n"
              b"INCR pipe:n\n"
              b"NOSUCHCMD a b\n"
              b"CONFIG GET port\n"
              b"INFO server\n"
              b"DBSIZE\n")
    text = out(cli(server, stdin=script))
    lines = text.split("\n")
    assert lines[:7] == [
        "PONG", "OK", "v v", "1", "2",
        "ERR unknown command 'NOSUCHCMD', with args beginning with: 'a' 'b' ", "",
    ], lines
    assert lines[7:9] == ["port", str(server.port)]
    assert "redis_version:" in text
    assert lines[-2] == "2"  # DBSIZE: pipe:k and pipe:n
    assert r.get("pipe:k") == "v v"


def test_x_reads_last_argument_from_stdin(server, r):
    assert out(cli(server, "-x", "SET", "cli:x", stdin=b"line1\nline2\x00bin")) == "OK\n"
    assert server.client(decode=False).get("cli:x") == b"line1\nline2\x00bin"


def test_pipe_mass_insertion(server, r):
    n = 10000
    proto = bytearray()
    for i in range(n):
        k, v = b"mass:%d" % i, b"value-%d" % i
        proto += b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v)
    res = cli(server, "--pipe", stdin=bytes(proto), timeout=60)
    text = res.stdout.decode()
    assert res.returncode == 0, (text, res.stderr)
    assert "errors: 0, replies: %d" % n in text, text
    assert r.dbsize() == n
    assert r.get("mass:9999") == "value-9999"


def test_pipe_mass_insertion_reports_errors(server, r):
    proto = (b"*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$2\r\nv1\r\n"
             b"*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n"
             b"*1\r\n$5\r\nNOCMD\r\n")
    res = cli(server, "--pipe", stdin=proto)
    assert res.returncode == 1
    assert "errors: 1, replies: 3" in res.stdout.decode()
    assert "ERR unknown command 'NOCMD', with args beginning with: " in res.stderr.decode()
