"""Byte-level builders of RDB encodings (Redis's RDB format, read from its documentation) for
the tests of DUMP/RESTORE payloads (tests/types/test_dump.py) and of RDB files of Redis 6 and
older (tests/persist/test_rdb_old.py): lengths, strings, ziplists, zipmaps, intsets, the
CRC64 of a payload or file."""

import struct


def crc64(data):
    """CRC-64/Jones (reflected 0xad93d23594c935a9, init 0), as Redis's crc64."""
    poly = 0x95AC9329AC4BC9B5  # the reflected polynomial
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def payload(body, version=10):
    """A DUMP payload for body (type byte + value): version and CRC64 appended."""
    b = bytes(body) + struct.pack("<H", version)
    return b + struct.pack("<Q", crc64(b))


def rlen(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rstr(s):
    return rlen(len(s)) + s


def ziplist(items):
    """A Redis < 7 ziplist of bytes / int items, each int in the smallest encoding, as Redis's
    ziplist writer picks it (4-bit immediate, int8, int16, int24, int32, int64)."""
    entries, prev = [], 0
    for it in items:
        pl = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
        if isinstance(it, int):
            if 0 <= it <= 12:
                enc = bytes([0xF1 + it])
            elif -128 <= it <= 127:
                enc = b"\xfe" + struct.pack("<b", it)
            elif -32768 <= it <= 32767:
                enc = b"\xc0" + struct.pack("<h", it)
            elif -(1 << 23) <= it < (1 << 23):
                enc = b"\xf0" + struct.pack("<i", it)[:3]
            elif -(1 << 31) <= it < (1 << 31):
                enc = b"\xd0" + struct.pack("<i", it)
            else:
                enc = b"\xe0" + struct.pack("<q", it)
        else:
            n = len(it)
            if n < 64:
                enc = bytes([n]) + it
            elif n < 16384:
                enc = bytes([0x40 | (n >> 8), n & 0xFF]) + it
            else:
                enc = b"\x80" + struct.pack(">I", n) + it
        e = pl + enc
        entries.append(e)
        prev = len(e)
    body = b"".join(entries)
    tail = 10 + len(body) - (len(entries[-1]) if entries else 0)
    return struct.pack("<IIH", 10 + len(body) + 1, tail, len(items)) + body + b"\xff"


def zipmap(pairs):
    out = bytes([len(pairs)])
    for k, v in pairs:
        out += bytes([len(k)]) + k + bytes([len(v)]) + b"\x00" + v
    return out + b"\xff"


def intset(vals, width=2):
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(vals)) + b"".join(struct.pack(fmt, v) for v in vals)


def listpack(items):
    """A listpack of bytes / int items (Redis 7 encodings; streams of RDB 9 use them too)."""
    out = b""
    for it in items:
        if isinstance(it, int):
            if 0 <= it <= 127:
                e = bytes([it])
            elif -4096 <= it <= 4095:
                u = it & 0x1FFF
                e = bytes([0xC0 | (u >> 8), u & 0xFF])
            elif -32768 <= it <= 32767:
                e = b"\xf1" + struct.pack("<h", it)
            elif -(1 << 31) <= it < (1 << 31):
                e = b"\xf3" + struct.pack("<i", it)
            else:
                e = b"\xf4" + struct.pack("<q", it)
        else:
            n = len(it)
            if n < 64:
                e = bytes([0x80 | n]) + it
            elif n < 4096:
                e = bytes([0xE0 | (n >> 8), n & 0xFF]) + it
            else:
                e = b"\xf0" + struct.pack("<I", n) + it
        ln = len(e)
        if ln <= 127:
            bl = bytes([ln])
        else:
            bl = bytes([ln >> 7, (ln & 127) | 128])
        out += e + bl
    return struct.pack("<IH", 6 + len(out) + 1, min(len(items), 65535)) + out + b"\xff"
