"""packaging/twincache.conf, the commented default configuration (/etc/twincache/twincache.conf
in the Debian package): it lists every setting, loads, and says the truth about the defaults.

Each setting is a line "name value" (its default) or, when it has no default value or an old
name, a commented line "# name ...". The packaged lines (bind, dir, logfile, pidfile,
supervised) differ from the built-in defaults on purpose.
"""

import re
import shlex
from pathlib import Path

import pytest

import tcharness

CONF = tcharness.REPO_ROOT / "packaging" / "twincache.conf"
PACKAGED = {"bind", "dir", "logfile", "pidfile", "supervised"}
# hidden from CONFIG GET * (asked by their exact names); threads depends on the machine
HIDDEN = ["stripes", "io-uring", "memcache-sasl", "lua-enable-deprecated-api", "threads"]
SIZE = re.compile(r"^(\d+)(k|kb|m|mb|g|gb)$", re.I)
UNITS = {"k": 1000, "kb": 1024, "m": 1000 ** 2, "mb": 1024 ** 2, "g": 1000 ** 3,
         "gb": 1024 ** 3}


def directives():
    """{name: value as CONFIG GET writes it} of the active lines, and the names of the
    commented ones ("# name ..." where name looks like a setting)."""
    active, commented = {}, set()
    for line in CONF.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"#\s*([a-z][a-z0-9_-]+)(\s|$)", line)
            if m:
                commented.add(m.group(1))
            # "# rdb-key-save-delay 0, key-load-delay 0, ...": several in one comment
            for m in re.finditer(r"(?:^#|,)\s*([a-z][a-z0-9_-]+-[a-z0-9_-]+) ", line):
                commented.add(m.group(1))
            continue
        words = shlex.split(line)
        name = words[0].lower()
        assert name not in active, "%s is set twice" % name
        active[name] = normalize(" ".join(words[1:]))
    return active, commented


def normalize(value):
    """The value as CONFIG GET writes it: sizes in bytes, Redis's "slave" class name."""
    out = []
    for w in value.split():
        m = SIZE.match(w)
        if m:
            w = str(int(m.group(1)) * UNITS[m.group(2).lower()])
        out.append("slave" if w == "replica" else w)
    return " ".join(out)


def config_all(srv):
    c = srv.client()
    try:
        return {k: v for k, v in c.config_get("*").items()}
    finally:
        c.close()


def config_one(srv, name):
    c = srv.client()
    try:
        return c.config_get(name).get(name)
    finally:
        c.close()


@pytest.fixture(scope="module")
def builtin(tmp_path_factory):
    """A twincache with an empty configuration file: the built-in defaults."""
    tcharness.require_twincache()
    d = tmp_path_factory.mktemp("builtin")
    empty = d / "empty.conf"
    empty.write_text("")
    srv = tcharness.start_twincache(config_file=empty, dir=d, threads=None)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    """A twincache with the packaged file; the paths the test cannot use overridden."""
    tcharness.require_twincache()
    d = tmp_path_factory.mktemp("packaged")
    # dir is a chdir read in the file's order, as redis-server reads it: the packaged
    # /var/lib/twincache must exist before a later --dir could apply, so the copy names d
    conf = d / "twincache.conf"
    conf.write_text("".join("dir %s\n" % d if line.startswith("dir ") else line
                            for line in CONF.read_text().splitlines(keepends=True)))
    srv = tcharness.start_twincache("--logfile", "", "--pidfile", d / "tc.pid",
                                    config_file=conf, dir=d, threads=None)
    yield srv
    srv.stop()


def test_every_setting_is_in_the_file(builtin):
    active, commented = directives()
    listed = set(config_all(builtin))
    missing = sorted(listed - set(active) - commented)
    assert not missing, "settings CONFIG GET * lists that twincache.conf does not: %s" % missing
    for name in HIDDEN:
        assert name in active or name in commented, name


def test_every_line_is_a_setting(builtin):
    active, _ = directives()
    listed = set(config_all(builtin))
    unknown = [n for n in active if n not in listed and config_one(builtin, n) is None]
    assert not unknown, unknown


def test_file_loads_with_its_values(packaged):
    active, _ = directives()
    got = config_all(packaged)
    overridden = {"port", "memcache-port", "dir", "logfile", "pidfile"}
    wrong = {}
    for name, value in active.items():
        if name in overridden:
            continue
        v = got[name] if name in got else config_one(packaged, name)
        if v != value:
            wrong[name] = (value, v)
    assert not wrong, "file value, CONFIG GET value: %s" % wrong
    assert got["bind"] == "127.0.0.1 -::1" and got["supervised"] == "auto"
    assert got["save"] == "3600 1 300 100 60 10000"
    assert got["port"] == str(packaged.port)
    assert Path(packaged.dir, "tc.pid").read_text().strip() == str(packaged.pid)


def test_documented_values_are_the_defaults(builtin):
    """Every active line but the packaged ones states the built-in default."""
    active, _ = directives()
    got = config_all(builtin)
    wrong = {}
    for name, value in active.items():
        if name in PACKAGED or name in ("port", "memcache-port"):
            continue
        v = got[name] if name in got else config_one(builtin, name)
        if v != value:
            wrong[name] = (value, v)
    assert not wrong, "file value, built-in default: %s" % wrong
    for name in PACKAGED:
        assert got[name] != active[name], "%s is marked packaged but is the default" % name
    text = CONF.read_text()
    for name in PACKAGED:
        block = text.split("\n%s " % name)[0].rsplit("\n\n", 1)[-1]
        assert "packaged" in block, "the comment above %s does not say it is packaged" % name
