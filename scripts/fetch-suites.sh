#!/usr/bin/env bash
# Fetches the reference test suites the way a distribution gets them: Debian 12's source
# packages of redis and memcached (`apt-get source`), into a cache folder outside git
# (default ~/.cache/twincache/suites, or $TWINCACHE_SUITES). Nothing from them enters the
# repository; tests/conformance/run.py runs them against twincache.
# Idempotent: each source tree is unpacked once. Prints the cache folder on its last line.
set -euo pipefail
REDIS_VER="5:7.0.15-1~deb12u10"
MEMCACHED_VER="1.6.18-1+deb12u1"
CACHE=${TWINCACHE_SUITES:-$HOME/.cache/twincache/suites}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

# Tools the suites need: dpkg-source (dpkg-dev) to unpack, tcl-tls for Redis's --tls mode,
# Perl's IO::Socket::SSL for memcached's TLS tests (skipped when memcached is built without).
PKGS=(dpkg-dev tcl tcl-tls libio-socket-ssl-perl)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

redis_dir="$CACHE/redis-7.0.15"
mc_dir="$CACHE/memcached-1.6.18"
if [ ${#missing[@]} -gt 0 ] || [ ! -d "$redis_dir/tests" ] || [ ! -d "$mc_dir/t" ]; then
    # A deb-src twin of every deb entry of the system's own sources (same archive, same
    # suites), so `apt-get source` fetches the exact versions Debian ships as binaries.
    src_list=/etc/apt/sources.list.d/twincache-deb-src.sources
    if [ ! -f "$src_list" ]; then
        tmp=$(mktemp)
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] && [ "$f" != "$src_list" ] || continue
            grep -q '^Types:.*deb-src' "$f" && continue
            sed -e 's/^Types: *deb *$/Types: deb-src/' "$f" >> "$tmp"
            echo >> "$tmp"
        done
        if [ -f /etc/apt/sources.list ]; then
            grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' > "$tmp.list" || true
            [ -s "$tmp.list" ] && $SUDO cp "$tmp.list" /etc/apt/sources.list.d/twincache-deb-src.list
            rm -f "$tmp.list"
        fi
        [ -s "$tmp" ] && $SUDO cp "$tmp" "$src_list"
        rm -f "$tmp"
    fi
    $SUDO apt-get update -qq
    if [ ${#missing[@]} -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
    mkdir -p "$CACHE"
    cd "$CACHE"
    [ -d "$redis_dir/tests" ] || apt-get source -qq "redis=$REDIS_VER"
    [ -d "$mc_dir/t" ] || apt-get source -qq "memcached=$MEMCACHED_VER"
fi
[ -d "$redis_dir/tests" ] && [ -d "$mc_dir/t" ] || { echo "fetch-suites: unpack failed in $CACHE" >&2; exit 1; }
echo "$CACHE"
