#!/bin/sh
# Run every libFuzzer target for a bounded time.
#   tests/fuzz/run.sh [build-dir] [seconds-per-target] [target...]
# build-dir must be configured with -DTC_FUZZ=ON -DCMAKE_C_COMPILER=clang (preset fuzz). New
# inputs go to <build-dir>/fuzz-corpus/<target>; the committed seeds in tests/fuzz/corpus are
# read, not written. A crash leaves crash-* in <build-dir>/fuzz-artifacts and fails the script.
set -eu
src=$(cd "$(dirname "$0")" && pwd)
build=${1:-build-fuzz}
secs=${2:-60}
[ $# -gt 2 ] && shift 2 || set -- fuzz_resp fuzz_resp_roundtrip fuzz_config fuzz_mc fuzz_mcbin fuzz_mc_udp fuzz_cmdkeys fuzz_script fuzz_restore fuzz_funcpayload fuzz_ldb fuzz_replstream fuzz_tls fuzz_aclrules fuzz_http
mkdir -p "$build/fuzz-artifacts"
for t in "$@"; do
    case $t in fuzz_config) dict=config.dict ;; fuzz_mc|fuzz_mc_udp) dict=mc.dict ;; fuzz_mcbin) dict=mcbin.dict ;; fuzz_cmdkeys) dict=cmdkeys.dict ;; fuzz_script) dict=script.dict ;; fuzz_restore) dict=restore.dict ;; fuzz_aclrules) dict=aclrules.dict ;; fuzz_http) dict=http.dict ;; *) dict=resp.dict ;; esac
    mkdir -p "$build/fuzz-corpus/$t"
    echo "== $t for ${secs}s"
    "$build/tests/fuzz/$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
        -rss_limit_mb=2048 -dict="$src/$dict" -artifact_prefix="$build/fuzz-artifacts/$t-" \
        "$build/fuzz-corpus/$t" "$src/corpus/$t" 2>&1 | grep -E '^(stat::|#[0-9]+ +DONE|==[0-9]+==|SUMMARY|Done)' || true
    if ls "$build/fuzz-artifacts/$t-"* >/dev/null 2>&1; then
        echo "$t: crash artifacts in $build/fuzz-artifacts" >&2
        exit 1
    fi
done
