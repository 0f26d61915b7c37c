#!/usr/bin/env bash
# Installs everything twincache needs to build, run and test, from Debian 12's archive.
# Idempotent: skips apt-get when every package is already installed.
set -euo pipefail
SUDO_CMD=""
[ "$(id -u)" = 0 ] || SUDO_CMD=sudo
PKGS=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libjemalloc-dev libxxhash-dev liburing-dev libssl-dev openssl liblua5.1-0-dev lua-cjson-dev lua-bitop-dev libluajit-5.1-dev
      redis-server redis-tools redis-sentinel memcached libmemcached-tools sasl2-bin
      python3 python3-pytest python3-redis python3-pymemcache python3-venv
      default-jdk-headless libspymemcached-java procps iproute2 nutcracker chromium
      debhelper dpkg-dev fakeroot lintian man-db groff-base systemd logrotate adduser)
# (the last line: tests/packaging builds and checks the .deb: dpkg-buildpackage with debhelper,
# lintian, man -l, systemd-analyze verify, logrotate -d)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
    # Debian starts redis-server and memcached as services on 6379/11211, the ports twincache
    # uses by default. Tests use their own ports; stop the services so `make run` can bind.
    for s in redis-server redis-sentinel memcached; do
        if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$s" 2>/dev/null; then
            $SUDO systemctl disable --now "$s" >/dev/null 2>&1 || true
        elif command -v service >/dev/null 2>&1; then
            $SUDO service "$s" stop >/dev/null 2>&1 || true
        fi
    done
fi

# The reference suites (Redis's and memcached's own tests), from Debian 12's source packages
# into a cache outside git: tests/conformance runs them.
"$(dirname "$0")/fetch-suites.sh" >/dev/null

# The real applications of tests/apps, from their own registries (each skipped when its
# toolchain is absent; the tests then skip with the reason): BullMQ (npm), Celery and RQ (PyPI,
# into .venv-apps), Redisson (Maven); and tests/mc's xmemcached scenarios (Maven, rebuilt when
# their sources change). Idempotent: each is installed once. (sasl2-bin above: saslpasswd2
# makes the sasldb of memcached -S in tests/mc.)
cd "$(dirname "$0")/.."
if command -v npm >/dev/null 2>&1 && [ ! -d tests/apps/bullmq/node_modules/bullmq ]; then
    (cd tests/apps/bullmq && npm ci --no-audit --no-fund --loglevel=error)
fi
# node-redis (client-side cache, tests/apps/test_client_cache.py), pinned by its lock file
if command -v npm >/dev/null 2>&1 && [ ! -d tests/apps/csc-node/node_modules/redis ]; then
    (cd tests/apps/csc-node && npm ci --no-audit --no-fund --loglevel=error)
fi
# rueidis (Go module proxy, pinned by go.mod/go.sum): the client of tests/apps/csc-go, built
# once (again when its sources change). Go comes with the machine; else Debian's golang-go
# (older than rueidis asks for: then the test fails with the build's error).
GO=$(command -v go || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true)
if [ -z "$GO" ]; then
    $SUDO_CMD apt-get install -y -qq --no-install-recommends golang-go >/dev/null 2>&1 || true
    GO=$(command -v go || true)
fi
if [ -n "$GO" ] && { [ ! -x tests/apps/csc-go/csc-go ] ||
        [ -n "$(find tests/apps/csc-go -newer tests/apps/csc-go/csc-go -name '*.go' -o \
                 -newer tests/apps/csc-go/csc-go -name 'go.*')" ]; }; then
    (cd tests/apps/csc-go && GOFLAGS="-mod=mod -buildvcs=false" "$GO" build -o csc-go .) ||
        echo "install-deps: tests/apps/csc-go did not build with $("$GO" version)" >&2
fi
# The Prometheus exporters of tests/integration/test_exporters.py (Go module proxy), built once
# into a cache outside git; and prometheus_client (PyPI) for test_metrics_port.py's parser, in
# .venv-metrics.
GO_BIN=${TC_GO_BIN:-$HOME/.cache/twincache/go-bin}
if [ -n "$GO" ]; then
    for m in github.com/oliver006/redis_exporter@v1.97.0 \
             github.com/prometheus/memcached_exporter/cmd/memcached_exporter@v0.15.0; do
        bin=${m%@*}; bin=${bin##*/}
        if [ ! -x "$GO_BIN/$bin" ]; then
            mkdir -p "$GO_BIN"
            (cd /tmp && GOBIN="$GO_BIN" GOFLAGS=-buildvcs=false "$GO" install "$m") ||
                echo "install-deps: $m did not build with $("$GO" version)" >&2
        fi
    done
fi
if [ ! -x .venv-metrics/bin/python ] || ! .venv-metrics/bin/python -c 'import prometheus_client' 2>/dev/null; then
    /usr/bin/python3 -m venv .venv-metrics
    .venv-metrics/bin/pip install -q 'prometheus_client==0.26.0'
fi
if [ ! -x .venv-apps/bin/celery ] || ! cmp -s tests/apps/requirements.txt .venv-apps/requirements.txt; then
    if ! python3 -m venv .venv-apps 2>/dev/null; then
        $SUDO_CMD apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
        /usr/bin/python3 -m venv .venv-apps
    fi
    .venv-apps/bin/pip install -q -r tests/apps/requirements.txt
    cp tests/apps/requirements.txt .venv-apps/requirements.txt
fi
if command -v mvn >/dev/null 2>&1 && [ ! -f tests/apps/redisson/target/redisson-scenarios-1.jar ]; then
    (cd tests/apps/redisson && mvn -q -B package -DskipTests)
fi
XMJAR=tests/mc/xmemcached/target/xmemcached-scenarios-1.jar
if command -v mvn >/dev/null 2>&1 && { [ ! -f "$XMJAR" ] ||
        [ -n "$(find tests/mc/xmemcached/pom.xml tests/mc/xmemcached/src -newer "$XMJAR")" ]; }; then
    (cd tests/mc/xmemcached && mvn -q -B package -DskipTests)
fi
# bench/java: twinbench's JVM driver (Jedis, spymemcached, xmemcached, Whalin's client, the
# Hazelcast client and a Hazelcast member for bench/compare --with hazelcast); rebuilt when its
# sources change. Its jar and target/lib/ are the classpath of bench/compare --java.
JBJAR=bench/java/target/jbench-1.jar
if command -v mvn >/dev/null 2>&1 && { [ ! -f "$JBJAR" ] ||
        [ -n "$(find bench/java/pom.xml bench/java/src -newer "$JBJAR")" ]; }; then
    (cd bench/java && mvn -q -B package -DskipTests)
fi
