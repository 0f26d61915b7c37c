#!/usr/bin/env bash
# Fresh Debian 12 to a running server: install dependencies, build, start twincache in the
# foreground on 127.0.0.1:6379 (RESP) and 127.0.0.1:11211 (memcached). Extra arguments are
# passed to the server (e.g. --threads 4 --maxmemory 1gb).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh release
exec ./build/twincache "$@"
