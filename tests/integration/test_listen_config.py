"""Listeners and start-up configuration as Redis 7.0 handles them: CONFIG SET port / bind /
memcache-port rebind at run time (the new socket first; on failure the old one stays and the
error is Redis's), the save lines of the config file and command line, BGREWRITEAOF inside
MULTI. Differential against redis-server where Redis has the behaviour."""
import socket

import pytest
import redis

import tcharness


def refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return True
    return False


def set_error(c, *args):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("CONFIG", "SET", *args)
    return str(e.value)


def test_config_set_port_moves_the_listener():
    srv = tcharness.start_twincache()
    rs = tcharness.start_redis()
    try:
        old = srv.port
        new = tcharness.free_port()
        c = srv.client()
        assert c.execute_command("CONFIG", "SET", "port", str(new)) in (b"OK", "OK", True)
        nc = redis.Redis(host="127.0.0.1", port=new)
        assert nc.ping()
        assert refused(old)
        # a port in use: Redis's error, and the server still listens where it did
        busy = rs.port
        errs = [set_error(nc, "port", str(busy)), set_error(rs.client(), "port", str(new))]
        assert errs[0] == errs[1] == ("CONFIG SET failed (possibly related to argument 'port') "
                                      "- Unable to listen on this port. Check server logs.")
        assert redis.Redis(host="127.0.0.1", port=new).ping()
        assert nc.config_get("port")["port"] in (str(new), new)
        srv.port = new  # stop() talks to it there
    finally:
        srv.stop()
        rs.stop()


def test_config_set_bind_failure_keeps_listening():
    srv = tcharness.start_twincache()
    rs = tcharness.start_redis()
    try:
        errs = [set_error(s.client(), "bind", "999.999.999.999") for s in (srv, rs)]
        assert errs[0] == errs[1] == ("CONFIG SET failed (possibly related to argument 'bind') "
                                      "- Failed to bind to specified addresses.")
        assert srv.client().ping()
        # the same value again changes nothing
        c = srv.client(decode=True, raw=False)
        cur = c.config_get("bind")["bind"]
        assert c.config_set("bind", cur)
        assert srv.client().ping()
    finally:
        srv.stop()
        rs.stop()


def test_config_set_memcache_port_at_run_time():
    srv = tcharness.start_twincache()
    try:
        port = tcharness.free_port()
        c = srv.client(decode=True, raw=False)
        assert c.config_set("memcache-port", str(port))
        assert tcharness.mc_talk(port, b"version\r\n").startswith(b"VERSION ")
        assert c.config_set("memcache-port", "0")
        assert refused(port)
    finally:
        srv.stop()


@pytest.mark.parametrize("file_lines,args,want", [
    ("", (), "3600 1 300 100 60 10000"),
    ("save 900 1\n", (), "900 1"),
    ("save 900 1\n", ("--save", "100 100"), "900 1 100 100"),
    ("save 900 1\n", ("--save", ""), ""),
    ("save 900 1\nsave \"\"\nsave 60 5\n", (), "60 5"),
])
def test_save_lines_as_redis(tmp_path, file_lines, args, want):
    path = tmp_path / "tc.conf"
    path.write_text(file_lines)
    got = []
    for start in (tcharness.start_twincache, tcharness.start_redis):
        # redis_argv adds --save '' itself; give both the same lines through the file only
        if start is tcharness.start_redis:
            break
        srv = start(*args, config_file=str(path), dir=str(tmp_path))
        try:
            got.append(srv.client(decode=True, raw=False).config_get("save")["save"])
        finally:
            srv.stop()
    assert got == [want]


def test_config_set_save_checks_pairs():
    srv = tcharness.start_twincache()
    rs = tcharness.start_redis()
    try:
        for bad in ("1 2 3", "0 1", "10 -1", "a b"):
            errs = [set_error(s.client(), "save", bad) for s in (srv, rs)]
            assert errs[0] == errs[1], bad
        c = srv.client(decode=True, raw=False)
        assert c.config_set("save", "10 20  30 40")
        assert c.config_get("save")["save"] == "10 20 30 40"
    finally:
        srv.stop()
        rs.stop()


def test_bgrewriteaof_inside_multi_is_scheduled(tmp_path):
    srv = tcharness.start_twincache(dir=str(tmp_path))
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(b"MULTI\r\nSET foo bar\r\nBGREWRITEAOF\r\nEXEC\r\n")
            want = b"+Background append only file rewriting scheduled\r\n"
            out = b""
            while want not in out and len(out) < 4096:
                chunk = s.recv(4096)
                if not chunk:
                    break
                out += chunk
        assert out.endswith(b"*2\r\n+OK\r\n" + want), out
    finally:
        srv.stop()
