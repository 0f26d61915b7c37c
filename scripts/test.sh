#!/usr/bin/env bash
# Fresh Debian 12 to a full test run: install dependencies, build the release and the
# sanitizer (ASan+UBSan) variants, run the unit tests of both, the integration suites against
# the release build and the concurrency/hostile-input suites against the ASan build.
# Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each section's header says when it starts and how long the one before took: the CI log shows
# where the time goes (the whole run must stay well under .ci/run's limit).
T0=$SECONDS
TS=$SECONDS
section() {
    echo "== $* == [at $(((SECONDS - T0) / 60))m$(((SECONDS - T0) % 60))s; previous section $((SECONDS - TS)) s]"
    TS=$SECONDS
}

section "install dependencies, fetch the reference suites"
./scripts/install-deps.sh
section "build: release, ASan+UBSan"
./scripts/build.sh release
./scripts/build.sh asan
PY=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1
section "unit tests (release)"
ctest --test-dir build --output-on-failure -j2
section "unit tests (asan)"
ctest --test-dir build-asan --output-on-failure -j2

section "conformance: Redis 7.0.15's and memcached 1.6.18's own suites (Debian's source packages) against twincache"
# Redis: normal mode (the harness starts build/twincache as src/redis-server), TLS mode, external
# mode; memcached: t/*.t with twincache as memcached. A unit that fails is rerun once alone;
# tests/conformance/expected-failures.txt lists what does not pass yet, each with its reason.
# (sync first: the builds' dirty pages written back now, not under the suites' fsyncs, which
# the replication units time)
sync
$PY tests/conformance/run.py --bin build/twincache --jobs 2

section "tests/harness: the one Python test harness (tests/tcharness.py) itself"
$PY -m pytest -q -p no:cacheprovider tests/harness

section "tests/acl: ACL against redis-server 7.0 side by side (release build)"
TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider tests/acl

section "integration tests (release build)"
TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider tests/integration
for suite in tests/mc tests/types tests/persist tests/snapshot tests/repl; do
    if [ -d "$suite" ]; then
        section "$suite (release build)"
        TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider "$suite"
    fi
done

section "tests/apps: BullMQ, Celery, RQ, Redisson and the client-side caches of redis-py, node-redis and rueidis on redis-server and twincache (release build)"
TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider tests/apps

section "tests/tls: TLS on both protocols and protected mode, beside redis-server 7.0 and memcached -Z (release build)"
TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider tests/tls

section "connection-level integration tests + memcached suite with plain read/writev (io-uring no: the fallback path)"
TC_SERVER_ARGS="--io-uring no" TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider \
    tests/integration/test_connection.py tests/integration/test_hostile.py \
    tests/integration/test_limits.py tests/integration/test_drain.py \
    tests/integration/test_pubsub.py tests/integration/test_maxclients.py \
    tests/integration/test_concurrency.py tests/mc

# twinbench's pytest suite runs inside ctest (test bench_pytest) above.

section "bench/java: the JVM driver's unit tests (Maven Surefire)"
(cd bench/java && mvn -B -ntp test 2>&1 | grep -E "Tests run:|FAIL|ERROR|BUILD")

section "tests/pool: three twincache nodes behind nutcracker + client-side ketama (release build)"
TWINCACHE_BIN=build/twincache TWINBENCH_BIN=build/twinbench $PY -m pytest -q -p no:cacheprovider tests/pool

section "tests/packaging: the default configuration, cmake --install, and the Debian package (built in a temporary directory, lintian, dpkg -i, the installed server, dpkg --purge)"
TWINCACHE_BIN=build/twincache $PY -m pytest -q -p no:cacheprovider tests/packaging

section "integration tests under ASan+UBSan (protocol, hostile input, concurrency)"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider -m "sanitize" tests/integration
if [ -d tests/mc ]; then
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider -m "sanitize" tests/mc
fi
if [ -d tests/types ]; then
    section "tests/types under ASan+UBSan"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TYPES_BENCH_N=2000 TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider tests/types
fi
if [ -d tests/persist ]; then
    section "tests/persist under ASan+UBSan"
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider tests/persist
fi
section "tests/repl under ASan+UBSan (replication, Sentinel failover)"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider tests/repl
section "tests/acl and tests/snapshot under ASan+UBSan (lock-free rule reads, the snapshot thread)"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider tests/acl
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
TWINCACHE_BIN=build-asan/twincache $PY -m pytest -q -p no:cacheprovider tests/snapshot
section "threaded suites under ThreadSanitizer (transactions, Pub/Sub, blocking, concurrency, limits, memcached, data types, persistence)"
# detect_deadlocks=0: EXEC and BGSAVE hold every stripe mutex (in ascending order), more than
# the 64 TSan's deadlock detector can track. tests/tsan.supp documents its only exception.
./scripts/build.sh tsan >/dev/null
export TSAN_OPTIONS="detect_deadlocks=0:halt_on_error=0:suppressions=$PWD/tests/tsan.supp"
TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider -m "sanitize" tests/integration
TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider tests/mc
# tests/types and tests/persist run whole on the release and ASan builds; under TSan only their
# tests where threads meet (several clients, blocking, pauses, scripts, writes during a
# snapshot or rewrite, start-up loading), which keeps the whole run within its time budget
section "tests/types under ThreadSanitizer (the concurrent tests)"
TYPES_BENCH_N=2000 TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider \
    -k "concurrent or busy or pause or wake or wait or watch or notify or tracking" tests/types
section "tests/persist under ThreadSanitizer (writes during snapshots and rewrites, signals, loading)"
TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider \
    -k "while_writing or auto_rewrite or crash or sigterm or appendonly or boot_loading" tests/persist
section "tests/repl under ThreadSanitizer"
TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider tests/repl
section "tests/acl and tests/snapshot under ThreadSanitizer"
TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider tests/acl
TWINCACHE_BIN=build-tsan/twincache $PY -m pytest -q -p no:cacheprovider tests/snapshot
unset TSAN_OPTIONS
section "fuzzers (libFuzzer, 15 s per target; their corpora are replayed by ctest above)"
./scripts/build.sh fuzz >/dev/null
tests/fuzz/run.sh build-fuzz 15
section "end"
echo "ALL TESTS PASSED"
