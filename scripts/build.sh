#!/usr/bin/env bash
# Configure and build one preset (default: release) into its build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j"$(nproc)"
