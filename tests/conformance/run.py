#!/usr/bin/env python3
"""Runs the references' own test suites against twincache, the way their authors run them.

Redis 7.0.15's Tcl suite (from Debian 12's source package, fetched by scripts/fetch-suites.sh):
normal mode, the harness starting our binary itself as src/redis-server with its own config
files; TLS mode (--tls); external mode (one twincache started here, the harness given
--host/--port). memcached 1.6.18's t/ suite: each t/*.t run with our binary as the suite's
memcached-debug, given exactly the suite's own flags.

Each Redis unit runs as its own harness (--single), up to --jobs at once, each in its own copy
of the suite's tests/ folder and port range. A unit whose result is not the expected one is
rerun once alone; only a second failure counts (both are printed). The expected result is:
every test passes except the entries of tests/conformance/expected-failures.txt (each with
its reason), and no fewer tests pass than redis-server passes in that unit on this machine
(tests/conformance/reference.txt, written by --reference --write-reference), less the listed
ones: a unit that stops early (an exception, a hang) fails. A listed test that passes fails
the run too: it must leave the list.

    tests/conformance/run.py                      # CI's set: every suite, CI's units
    tests/conformance/run.py --all-units          # every unit of unit/, unit/type, integration
    tests/conformance/run.py --suite memcached
    tests/conformance/run.py --suite redis --units unit/auth,integration/aof
    tests/conformance/run.py --reference          # Debian's redis-server/memcached instead
"""
import argparse
import concurrent.futures as cf
import fcntl
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(HERE, "expected-failures.txt")
REFERENCE = os.path.join(HERE, "reference.txt")
DURATIONS = os.path.join(HERE, "durations.txt")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Units of the Redis suite that belong to other issues: Redis Cluster, and modules (the
# suite's modules are Redis's C API, which twincache does not load).
CLUSTER_UNITS = {"unit/cluster", "unit/cluster-scripting", "unit/cluster/misc",
                 "unit/cluster/links"}


def suites_dir():
    d = os.environ.get("TWINCACHE_SUITES") or os.path.expanduser("~/.cache/twincache/suites")
    if not os.path.isdir(os.path.join(d, "redis-7.0.15", "tests")):
        out = subprocess.run([os.path.join(TOP, "scripts", "fetch-suites.sh")],
                             stdout=subprocess.PIPE, check=True, text=True).stdout
        d = out.strip().splitlines()[-1]
    return d


def redis_all_units(src):
    """The harness's own list (test_helper.tcl's all_tests), then every other unit file."""
    text = open(os.path.join(src, "tests", "test_helper.tcl")).read()
    m = re.search(r"set ::all_tests \{(.*?)\}", text, re.S)
    units = m.group(1).split() if m else []
    for sub in ("unit", "unit/type", "integration"):
        for f in sorted(os.listdir(os.path.join(src, "tests", sub))):
            u = sub + "/" + f[:-4]
            if f.endswith(".tcl") and u not in units and f != "list-common.tcl":
                units.append(u)
    return [u for u in units if u not in CLUSTER_UNITS and not u.startswith("unit/moduleapi")]


# ---------------------------------------------------------------------------------------
# expected failures and reference counts

def load_expected():
    """{(suite, unit): {test name or '*': reason}}"""
    exp = {}
    if not os.path.exists(EXPECTED):
        return exp
    for n, line in enumerate(open(EXPECTED), 1):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 4 or not parts[3].strip():
            sys.exit("%s:%d: want suite<TAB>unit<TAB>test<TAB>reason" % (EXPECTED, n))
        name = parts[2]
        m = re.fullmatch(r"\(aborted after (\d+)\)", name)
        if m:  # the abort comes after at least that many passing tests
            exp.setdefault((parts[0], parts[1]), {})["(aborted-min)"] = m.group(1)
            name = "(aborted)"
        exp.setdefault((parts[0], parts[1]), {})[name] = parts[3]
    return exp


def load_reference():
    ref = {}
    if os.path.exists(REFERENCE):
        for line in open(REFERENCE):
            if line.startswith("#") or not line.strip():
                continue
            s, u, ok = line.rstrip("\n").split("\t")[:3]
            ref[(s, u)] = int(ok)
    return ref


def load_durations():
    """{(suite, unit): seconds} of an earlier run here (--write-durations): the longest units
    start first, so two jobs end together instead of one long unit running alone at the end."""
    d = {}
    if os.path.exists(DURATIONS):
        for line in open(DURATIONS):
            if line.startswith("#") or not line.strip():
                continue
            s, u, secs = line.rstrip("\n").split("\t")[:3]
            d[(s, u)] = float(secs)
    return d


def longest_first(mode, names, durations):
    # unknown units count as long: a new unit's time is learnt, never hidden at the end
    return sorted(names, key=lambda u: -durations.get((mode, u), 120.0))


# ---------------------------------------------------------------------------------------
# Redis

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class RedisTree:
    """A private copy of the suite's tests/ with src/ pointing at the server under test."""

    def __init__(self, src, root, server, reference, tls):
        self.dir = tempfile.mkdtemp(prefix="redis-suite-", dir=root)
        shutil.copytree(os.path.join(src, "tests"), os.path.join(self.dir, "tests"),
                        symlinks=True)
        os.mkdir(os.path.join(self.dir, "src"))
        tools = ["redis-cli", "redis-benchmark", "redis-check-aof", "redis-check-rdb"]
        for t in tools:
            os.symlink("/usr/bin/" + t, os.path.join(self.dir, "src", t))
        os.symlink("/usr/bin/redis-server" if reference else server,
                   os.path.join(self.dir, "src", "redis-server"))
        os.symlink("/usr/bin/redis-sentinel", os.path.join(self.dir, "src", "redis-sentinel"))
        if tls:
            os.makedirs(os.path.join(self.dir, "utils"), exist_ok=True)
            shutil.copy(os.path.join(src, "utils", "gen-test-certs.sh"),
                        os.path.join(self.dir, "utils"))
            subprocess.run(["bash", "utils/gen-test-certs.sh"], cwd=self.dir, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def parse_redis(out):
    """(ok names list, failed {name: detail}, aborted detail or None)"""
    ok, failed, aborted = [], {}, None
    lines = ANSI.sub("", out).splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\[ok\]: (.*) \(\d+ ms\)$", line)
        if m:
            ok.append(m.group(1))
            continue
        m = re.match(r"\[err\]: (.*?)(?: in (tests/\S+))?$", line)
        if m:
            failed.setdefault(m.group(1), "\n".join(lines[i + 1:i + 4]))
            continue
        if line.startswith("[exception]") or line.startswith("[TIMEOUT]"):
            aborted = "\n".join(lines[i:i + 12])
    return ok, failed, aborted


class Slots:
    """Tree copies for harnesses running at once."""

    def __init__(self, n):
        self.free = list(range(n))
        self.lock = __import__("threading").Lock()

    def take(self):
        with self.lock:
            return self.free.pop()

    def give(self, s):
        with self.lock:
            self.free.append(s)


PORT_BLOCK, PORT_LO, PORT_HI = 500, 10000, 32000  # below the kernel's ephemeral ports


class PortBlock:
    """A block of ports no other run on this machine uses meanwhile (an flock per block, so
    runs started by different people or CI jobs at once do not collide)."""

    def __enter__(self):
        d = os.path.join(tempfile.gettempdir(), "tc-conformance-ports")
        os.makedirs(d, exist_ok=True)
        blocks = list(range(PORT_LO, PORT_HI, PORT_BLOCK))
        __import__("random").shuffle(blocks)
        while True:
            for b in blocks:
                fh = open(os.path.join(d, "%d.lock" % b), "w")
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    fh.close()
                    continue
                self.fh, self.base = fh, b
                return self
            time.sleep(1)

    def __exit__(self, *a):
        self.fh.close()


def run_redis_unit(tree, unit, mode, slot, timeout, ext_port=None):
    cmd = ["tclsh", "tests/test_helper.tcl", "--single", unit, "--clients", "1",
           "--timeout", str(timeout), "--dont-clean"]
    if mode == "redis-tls":
        cmd.append("--tls")
    if mode == "redis-external":
        # the harness's own port (baseport - 32 .., and +10000): away from the 21000.. ranges of normal-mode
        # runs, which other runs on this machine may be using
        cmd += ["--host", "127.0.0.1", "--port", str(ext_port),
                "--baseport", str(30032 + 64 * ((os.getpid() + slot) % 300))]
    t0 = time.time()
    for attempt in range(3):
        with PortBlock() as pb:
            out, rc = run_group(cmd + ["--baseport", str(pb.base), "--portcount",
                                       str(PORT_BLOCK)], tree.dir, timeout + 120)
        # the harness's own port taken by another process between its check and its bind
        # (nothing ran yet): a start-up failure of the harness, not a result; again elsewhere
        if not (rc != 0 and "couldn't open socket: address already in use" in out and
                "[ok]" not in ANSI.sub("", out)):
            break
    if rc != 0 and not re.search(r"\[(err|exception|TIMEOUT)\]", ANSI.sub("", out)):
        out += "\n[exception]: the harness exited with status %d:\n%s" % (
            rc, "\n".join(out.splitlines()[-8:]))
    return out, rc, time.time() - t0


def run_group(cmd, cwd, timeout):
    """Runs cmd in its own process group; on a hang the whole group (the harness and the
    servers it started) is killed. Returns (output, exit status; -1 for a hang)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        out += b"\n[TIMEOUT]: no result within %d s, killed" % timeout
        rc = -1
    try:
        os.killpg(p.pid, signal.SIGKILL)  # anything the run left behind in its group
    except ProcessLookupError:
        pass
    return out.decode("utf-8", "replace"), rc


class ExternalServer:
    def __init__(self, server, root, reference, tls_dir=None):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="ext-", dir=root)
        exe = "/usr/bin/redis-server" if reference else server
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", "--enable-debug-command", "yes", "--enable-module-command", "yes",
             "--enable-protected-configs", "yes", "--logfile", os.path.join(self.dir, "log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("external server did not start")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def judge_redis(mode, unit, out, exp, ref):
    """(verdict, counts, problems): verdict 'pass' or 'fail'."""
    ok, failed, aborted = parse_redis(out)
    listed = exp.get((mode, unit), {})
    problems = []
    okset = set(ok)
    whole = "*" in listed
    for name, detail in failed.items():
        if name not in listed and not whole:
            problems.append("FAILED  %s\n        %s" % (name, detail.replace("\n", "\n        ")))
    if aborted and not whole and "(aborted)" not in listed:
        problems.append("ABORTED\n        " + aborted.replace("\n", "\n        "))
    elif aborted and not whole and len(ok) < int(listed.get("(aborted-min)", 0)):
        problems.append("ABORTED after %d passing tests, earlier than the %s listed\n        %s"
                        % (len(ok), listed["(aborted-min)"],
                           aborted.replace("\n", "\n        ")))
    for name, why in listed.items():
        if why.startswith("flaky"):
            continue  # fails here only some of the time (the reason says why)
        if name not in ("*", "(aborted)", "(aborted-min)", "(count)") and name in okset and \
                name not in failed:
            problems.append("NOW PASSES (remove it from expected-failures.txt)  %s" % name)
        if name == "(aborted)" and not aborted and not whole:
            problems.append("NOW RUNS TO THE END (remove its (aborted) entry)")
    if whole and not failed and not aborted and ok and not listed["*"].startswith("flaky"):
        problems.append("NOW PASSES (remove the whole-unit entry from expected-failures.txt)")
    want = ref.get((mode, unit))
    if want is not None and not whole and "(count)" not in listed:
        still = sum(1 for n in listed if n in failed)
        if len(ok) + still < want and "(aborted)" not in listed:
            problems.append("only %d tests passed where redis-server passes %d (%d listed)"
                            % (len(ok), want, still))
    counts = (len(ok), len(failed), 1 if aborted else 0)
    return ("fail" if problems else "pass"), counts, problems


# ---------------------------------------------------------------------------------------
# memcached

class McTree:
    def __init__(self, src, root, server, reference):
        self.dir = tempfile.mkdtemp(prefix="mc-suite-", dir=root)
        shutil.copytree(os.path.join(src, "t"), os.path.join(self.dir, "t"), symlinks=True)
        subprocess.run(["gcc", "-O2", "-o", os.path.join(self.dir, "timedrun"),
                        os.path.join(src, "timedrun.c")], check=True)
        if reference:
            # Debian's memcached is built without drop-privileges support and refuses the
            # "-o relaxed_privileges" the suite always adds: the reference alone runs through
            # a wrapper that takes that one option out. twincache gets the suite's flags as is.
            exe = os.path.join(self.dir, "memcached-reference")
            with open(exe, "w") as fh:
                fh.write('#!/bin/sh\nexec /usr/bin/memcached $(echo " $* " | '
                         'sed "s/ -o relaxed_privileges / /")\n')
            os.chmod(exe, 0o755)
        else:
            exe = server
        for name in ("memcached-debug", "memcached"):
            os.symlink(exe, os.path.join(self.dir, name))


def run_mc_file(tree, f, timeout):
    t0 = time.time()
    out, rc = run_group(["perl", "-I", "t/lib", f], tree.dir, timeout)
    return out, rc, time.time() - t0


def judge_mc(f, out, rc, exp):
    plan = re.search(r"^1\.\.(\d+)(.*)$", out, re.M)
    oks = len(re.findall(r"^ok \d+", out, re.M))
    nots = re.findall(r"^not ok \d+.*$", out, re.M)
    skipped = bool(plan and plan.group(1) == "0")
    ran_all = plan is not None and (int(plan.group(1)) == oks + len(nots))
    good = rc == 0 and not nots and ran_all
    listed = exp.get(("memcached", f), {})
    problems = []
    if not good and "*" not in listed:
        tail = "\n".join(l for l in out.splitlines() if l.startswith(("not ok", "#")))[-1500:]
        problems.append("FAILED (exit %s, %d ok, %d not ok%s)\n        %s" % (
            rc, oks, len(nots), "" if ran_all else ", stopped early",
            tail.replace("\n", "\n        ")))
    if good and "*" in listed and not skipped and not listed["*"].startswith("flaky"):
        problems.append("NOW PASSES (remove it from expected-failures.txt)")
    return ("fail" if problems else "pass"), (oks, len(nots), 0 if ran_all else 1, skipped), problems


# ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", default="redis,redis-tls,redis-external,memcached",
                    help="comma list of redis, redis-tls, redis-external, memcached")
    ap.add_argument("--units", help="comma list of Redis units or memcached t/ files")
    ap.add_argument("--all-units", action="store_true",
                    help="every unit of unit/, unit/type and integration (not only CI's)")
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "twincache"))
    ap.add_argument("--reference", action="store_true",
                    help="run Debian's redis-server / memcached instead of twincache")
    ap.add_argument("--write-reference", action="store_true",
                    help="with --reference: record each unit's passing count")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="per test, seconds")
    ap.add_argument("--no-rerun", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the run folders (logs)")
    ap.add_argument("--table", help="also write the per-unit table to this file")
    ap.add_argument("--write-durations", action="store_true",
                    help="record each unit's time in tests/conformance/durations.txt (the "
                         "order of later runs: longest first)")
    ap.add_argument("--emit-expected", metavar="FILE",
                    help="append every unexpected failure to FILE in expected-failures.txt's "
                         "form (the reason: the failure's first line, to be edited)")
    args = ap.parse_args()

    src_root = suites_dir()
    rsrc = os.path.join(src_root, "redis-7.0.15")
    msrc = os.path.join(src_root, "memcached-1.6.18")
    server = os.path.abspath(args.bin)
    if not args.reference and not os.access(server, os.X_OK):
        sys.exit("no server binary at %s (./scripts/build.sh release)" % server)
    exp = {} if args.reference else load_expected()
    ref = {} if args.reference else load_reference()
    root = tempfile.mkdtemp(prefix="tc-conformance-")
    suites = args.suite.split(",")
    wanted = args.units.split(",") if args.units else None
    rows, failures, t_start = [], [], time.time()
    emitted = []
    durations = load_durations()
    took = {}

    def emit(mode, unit, out, mc_rc=None):
        if mode == "memcached":
            emitted.append((mode, unit, "*", "fails (exit %s)" % mc_rc))
            return
        ok, failed, aborted = parse_redis(out)
        listed = exp.get((mode, unit), {})
        for name, detail in failed.items():
            if name not in listed:
                first = (detail.strip().splitlines() or ["?"])[0].strip()
                emitted.append((mode, unit, name, first[:200]))
        if aborted and "(aborted)" not in listed:
            first = aborted.strip().splitlines()[0]
            emitted.append((mode, unit, "(aborted)", re.sub(r"^\[\w+\]: ", "", first)[:200]))

    def report(mode, unit, verdict, counts, secs, problems, rerun=False):
        tag = "rerun " if rerun else ""
        if mode == "memcached":
            oks, nots, early, skipped = counts
            status = "skip" if skipped and verdict == "pass" else verdict
            print("%s%-15s %-40s %-4s ok %4d  not ok %3d%s  %5.0fs" % (
                tag, mode, unit, status, oks, nots, "  stopped early" if early else "", secs),
                flush=True)
        else:
            print("%s%-15s %-40s %-4s ok %4d  err %3d%s  %5.0fs" % (
                tag, mode, unit, verdict, counts[0], counts[1],
                "  aborted" if counts[2] else "", secs), flush=True)
        for p in problems:
            print("      " + p, flush=True)

    for mode in suites:
        if mode.startswith("redis"):
            units = wanted or ci_units(rsrc, mode, args.all_units)
            units = [u for u in units if not u.startswith("t/")]
            # a whole unit listed "not run: ..." hangs here until the harness's timeout: it is
            # reported, not run (the list says why); --units still runs it
            for u in [u for u in units if exp.get((mode, u), {}).get("*", "").startswith("not run")]:
                if not wanted:
                    units.remove(u)
                    print("%-15s %-40s not run: %s" % (mode, u, exp[(mode, u)]["*"]), flush=True)
            if not units:
                continue
            print("== %s: %d units, %d at a time (%s) ==" % (
                mode, len(units), args.jobs, "redis-server" if args.reference else server),
                flush=True)
            trees = [RedisTree(rsrc, root, server, args.reference, mode == "redis-tls")
                     for _ in range(args.jobs)]
            ext = []
            if mode == "redis-external":
                ext = [ExternalServer(server, root, args.reference) for _ in range(args.jobs)]
            slots = Slots(args.jobs)
            results = {}

            def one(unit, solo=False):
                s = slots.take()
                try:
                    if ext:
                        # a fresh server per unit: a unit that fails midway leaves settings
                        # (min-replicas-to-write, maxmemory...) that would fail the next ones
                        ext[s].stop()
                        ext[s] = ExternalServer(server, root, args.reference)
                    out, rc, secs = run_redis_unit(trees[s], unit, mode, s, args.timeout,
                                                   ext[s].port if ext else None)
                    return unit, out, rc, secs
                finally:
                    slots.give(s)

            with cf.ThreadPoolExecutor(args.jobs) as pool:
                for unit, out, rc, secs in pool.map(one, longest_first(mode, units, durations)):
                    verdict, counts, problems = judge_redis(mode, unit, out, exp, ref)
                    results[unit] = (verdict, counts, secs, out)
                    took[(mode, unit)] = secs
                    report(mode, unit, verdict, counts, secs, problems)
            for unit in units:
                verdict, counts, secs, out = results[unit]
                if verdict == "fail" and not args.no_rerun and not args.reference:
                    _, out2, rc2, secs2 = one(unit)
                    v2, c2, p2 = judge_redis(mode, unit, out2, exp, ref)
                    report(mode, unit, v2, c2, secs2, p2, rerun=True)
                    results[unit] = (v2, c2, secs2, out2)
                    verdict, counts = v2, c2
                rows.append((mode, unit, verdict, counts))
                if verdict == "fail":
                    failures.append((mode, unit))
                    emit(mode, unit, results[unit][3])
            for e in ext:
                e.stop()
        elif mode == "memcached":
            files = sorted("t/" + f for f in os.listdir(os.path.join(msrc, "t"))
                           if f.endswith(".t"))
            if wanted:
                files = [f for f in files if f in wanted]
            for f in [f for f in files if exp.get((mode, f), {}).get("*", "").startswith("not run")]:
                if not wanted:
                    files.remove(f)
                    print("%-15s %-40s not run: %s" % (mode, f, exp[(mode, f)]["*"]), flush=True)
            if not files:
                continue
            print("== memcached: %d files, %d at a time (%s) ==" % (
                len(files), args.jobs, "memcached" if args.reference else server), flush=True)
            tree = McTree(msrc, root, server, args.reference)
            results = {}
            order = longest_first(mode, files, durations)
            with cf.ThreadPoolExecutor(args.jobs) as pool:
                for f, (out, rc, secs) in zip(order, pool.map(
                        lambda f: run_mc_file(tree, f, args.timeout), order)):
                    verdict, counts, problems = judge_mc(f, out, rc, exp)
                    results[f] = (verdict, counts, rc)
                    took[(mode, f)] = secs
                    report(mode, f, verdict, counts, secs, problems)
            for f in files:
                verdict, counts, rc = results[f]
                if verdict == "fail" and not args.no_rerun and not args.reference:
                    out, rc, secs = run_mc_file(tree, f, args.timeout)
                    verdict, counts, problems = judge_mc(f, out, rc, exp)
                    report(mode, f, verdict, counts, secs, problems, rerun=True)
                rows.append((mode, f, verdict, counts))
                if verdict == "fail":
                    failures.append((mode, f))
                    emit(mode, f, "", rc)

    # summary
    print("\n== conformance summary (%s) ==" % ("reference servers" if args.reference
                                                 else server))
    table = []
    for mode in suites:
        mine = [r for r in rows if r[0] == mode]
        if not mine:
            continue
        oks = sum(r[3][0] for r in mine)
        errs = sum(r[3][1] for r in mine)
        bad = sum(1 for r in mine if r[2] == "fail")
        listed = sum(len(v) for k, v in exp.items() if k[0] == mode)
        line = "%-15s units %3d  unexpected %2d  tests ok %5d  failed %4d  expected-failures %d" % (
            mode, len(mine), bad, oks, errs, listed)
        print(line)
        table.append(line)
    if args.table:
        with open(args.table, "w") as fh:
            for r in rows:
                fh.write("%s\t%s\t%s\t%s\n" % (r[0], r[1], r[2],
                                              "\t".join(str(int(x)) for x in r[3])))
    if args.emit_expected and emitted:
        with open(args.emit_expected, "a") as fh:
            for e in emitted:
                fh.write("\t".join(x.replace("\t", " ") for x in e) + "\n")
    if args.write_durations:
        durations.update(took)
        with open(DURATIONS, "w") as fh:
            fh.write("# seconds per unit of a run here (tests/conformance/run.py "
                     "--write-durations): the runner starts the longest first\n")
            for (m, u), secs in sorted(durations.items()):
                fh.write("%s\t%s\t%.0f\n" % (m, u, secs))
    if args.write_reference:
        with open(REFERENCE, "w") as fh:
            fh.write("# passing tests per unit, Debian's redis-server 7.0.15 on this machine "
                     "(tests/conformance/run.py --reference --write-reference)\n")
            for r in rows:
                if r[0].startswith("redis"):
                    fh.write("%s\t%s\t%d\n" % (r[0], r[1], r[3][0]))
    print("conformance: %s in %.0f s%s" % (
        "PASSED" if not failures else "FAILED (%d units)" % len(failures),
        time.time() - t_start,
        "" if not failures else ": " + " ".join("%s:%s" % f for f in failures)))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print("run folders kept in", root)
    return 1 if failures else 0


def ci_units(rsrc, mode, all_units):
    units = redis_all_units(rsrc)
    if all_units or mode == "redis":
        return units
    if mode == "redis-tls":
        return [u for u in units if u in TLS_UNITS]
    return units


# TLS mode in CI: the units where the transport matters (a replication link, the handshake,
# the client paths); the rest is the same command code as in normal mode.
TLS_UNITS = {"unit/tls", "unit/auth", "integration/replication-psync", "unit/introspection",
             "unit/networking", "unit/pubsub"}  # integration/replication (4 min): --all-units


if __name__ == "__main__":
    sys.exit(main())
