"""A small memcached binary-protocol client for the tests: packet building, a raw connection
that reads whole response packets, and helpers to compare replies with the CAS masked."""

import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import mcharness  # noqa: F401  (puts tests/ on sys.path for tcharness)
import tcharness

HDR = struct.Struct(">BBHBBHIIQ")

OP = dict(get=0x00, set=0x01, add=0x02, replace=0x03, delete=0x04, incr=0x05, decr=0x06,
          quit=0x07, flush=0x08, getq=0x09, noop=0x0a, version=0x0b, getk=0x0c, getkq=0x0d,
          append=0x0e, prepend=0x0f, stat=0x10, setq=0x11, addq=0x12, replaceq=0x13,
          deleteq=0x14, incrq=0x15, decrq=0x16, quitq=0x17, flushq=0x18, appendq=0x19,
          prependq=0x1a, verbosity=0x1b, touch=0x1c, gat=0x1d, gatq=0x1e, sasl_list=0x20,
          sasl_auth=0x21, sasl_step=0x22, gatk=0x23, gatkq=0x24)


def req(op, key=b"", extras=b"", value=b"", cas=0, opaque=0, magic=0x80, bodylen=None,
        keylen=None, extlen=None, datatype=0, vbucket=0):
    """One request packet; the length fields may be overridden to make bad input."""
    if isinstance(op, str):
        op = OP[op]
    if isinstance(key, str):
        key = key.encode()
    body = extras + key + value
    return HDR.pack(magic, op, len(key) if keylen is None else keylen,
                    len(extras) if extlen is None else extlen, datatype, vbucket,
                    len(body) if bodylen is None else bodylen, opaque, cas) + body


def set_(op, key, value, flags=0, exp=0, cas=0, opaque=0):
    return req(op, key, struct.pack(">II", flags, exp), value, cas=cas, opaque=opaque)


def arith(op, key, delta, initial=0, exp=0, cas=0, opaque=0):
    return req(op, key, struct.pack(">QQI", delta, initial, exp), cas=cas, opaque=opaque)


def touch(op, key, exp, opaque=0):
    return req(op, key, struct.pack(">I", exp), opaque=opaque)


class Resp(tuple):
    """(magic, opcode, status, extras, key, value, opaque, cas, datatype)"""

    @property
    def status(self):
        return self[2]

    @property
    def value(self):
        return self[5]

    @property
    def cas(self):
        return self[7]

    def masked(self):
        return Resp(self[:7] + (1 if self[7] else 0,) + self[8:])


class Bin:
    """A raw binary-protocol connection."""

    def __init__(self, port, timeout=5.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.closed = False

    def send(self, data):
        self.s.sendall(data)

    def _fill(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("short read after %r" % self.buf[-200:])
            self.s.settimeout(left)
            try:
                d = self.s.recv(1 << 20)
            except ConnectionResetError:
                d = b""
            if not d:
                self.closed = True
                return False
            self.buf += d
        return True

    def read(self, timeout=5.0):
        """One response packet, or None when the server closed the connection."""
        deadline = time.time() + timeout
        if not self._fill(24, deadline):
            return None
        magic, op, klen, elen, dt, status, blen, opaque, cas = HDR.unpack(self.buf[:24])
        if not self._fill(24 + blen, deadline):
            return None
        body = self.buf[24:24 + blen]
        self.buf = self.buf[24 + blen:]
        return Resp((magic, op, status, body[:elen], body[elen:elen + klen], body[elen + klen:],
                     opaque, cas, dt))

    def call(self, data):
        self.send(data)
        return self.read()

    def until_noop(self, data, timeout=5.0):
        """Send data and a NOOP; return every response before the NOOP's (a trailing None
        when the server closed instead)."""
        self.send(data + req("noop", opaque=0xfeedf00d))
        out = []
        while True:
            r = self.read(timeout)
            if r is None:
                out.append(None)
                return out
            if r[1] == OP["noop"] and r[6] == 0xfeedf00d:
                return out
            out.append(r)

    def close(self):
        self.s.close()


def masked(resps):
    return [r.masked() if r is not None else None for r in resps]


def start_with_auth(kind, *args):
    """twincache or memcached whose memcached port needs a login (its text probe would fail):
    ready once the port accepts connections."""
    def make(ports):
        if kind == "memcached":
            return tcharness.Server(tcharness.memcached_argv(ports[0], args), port=ports[0],
                                    mc_port=ports[0], kind=kind, ready=[(ports[0], "tcp")])
        return tcharness.Server(tcharness.twincache_argv(ports[0], ports[1], args),
                                port=ports[0], mc_port=ports[1], check=True,
                                ready=[(ports[0], "resp"), (ports[1], "tcp")])
    tcharness.require_twincache()
    return tcharness.start_fresh(make, 1 if kind == "memcached" else 2)


def start_memcached_sasl(users):
    """Debian's memcached (built with cyrus-sasl) with -S -B binary, SASL PLAIN against a sasldb
    holding users {name: password}: SASL_CONF_PATH names a directory whose memcached.conf sets
    mech_list and sasldb_path; the users are made with saslpasswd2 (sasl2-bin) in memcached's
    realm, the host name. Returns (server, directory to remove after stopping it), or None when
    saslpasswd2 is missing. The directory is readable by memcached's user nobody."""
    tool = shutil.which("saslpasswd2") or "/usr/sbin/saslpasswd2"
    if not os.path.exists(tool):
        return None
    d = tempfile.mkdtemp(prefix="tc-sasldb-")
    db = os.path.join(d, "sasldb2")
    for user, password in users.items():
        subprocess.run([tool, "-p", "-c", "-a", "memcached", "-u", socket.gethostname(),
                        "-f", db, user], input=password.encode(), check=True, timeout=30)
    with open(os.path.join(d, "memcached.conf"), "w") as f:
        f.write("mech_list: plain\nsasldb_path: %s\n" % db)
    os.chmod(d, 0o755)
    os.chmod(db, 0o644)

    def make(ports):
        return tcharness.Server(tcharness.memcached_argv(ports[0], ("-S", "-B", "binary")),
                                port=ports[0], mc_port=ports[0], kind="memcached",
                                ready=[(ports[0], "tcp")], env={"SASL_CONF_PATH": d})
    return tcharness.start_fresh(make, 1), d
