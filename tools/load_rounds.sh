#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# load_rounds.sh [--load N] BUILD ROUNDS [TEST...]: the tests that wait
# (every IOC, chain and screen test: tests/ioc_*.sh and opi_screens.sh,
# or the TESTs named) run ROUNDS times in BUILD (a configured build
# folder, e.g. build-asan), two at a time as CI's make -j2 runs them,
# beside N busy loops (default: one a CPU) that take the CPU from them as
# CI's other tests do. A test that passes only on a quiet machine fails
# here. Prints each round's results and time, keeps every failing test's
# log as BUILD/rounds/ROUND-TEST.log, and exits 1 if any round failed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
load=$(nproc 2>/dev/null || echo 2)
if [ "${1:-}" = --load ]; then
    load=$2
    shift 2
fi
[ $# -ge 2 ] || { sed -n '3,10s/^# \{0,1\}//p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
rounds=$2
shift 2
if [ $# -eq 0 ]; then
    set -- $(cd "$top" && ls tests/ioc_*.sh tests/opi_screens.sh | grep -v '^tests/ioc_common.sh$')
fi
tests="$*"
mkdir -p "$build/rounds"

loops=""
stop_load() { [ -z "$loops" ] || kill $loops 2>/dev/null || true; }
trap stop_load EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$load"); do
    sh -c 'while :; do :; done' &
    loops="$loops $!"
done

failed_rounds=0
for round in $(seq "$rounds"); do
    start=$(date +%s)
    status=0
    make -s -C "$build" -j2 check TESTS="$tests" >"$build/rounds/$round.out" 2>&1 || status=$?
    results=""
    for test in $tests; do
        log=$build/$test.log
        result=$(sed -n 's/^\(PASS\|FAIL\|SKIP\|ERROR\|XFAIL\|XPASS\) .*/\1/p' "$log" 2>/dev/null | head -n 1)
        results="$results $(basename "$test" .sh):${result:-none}"
        case $result in
        PASS | SKIP) ;;
        *) cp "$log" "$build/rounds/$round-$(basename "$test" .sh).log" 2>/dev/null || true ;;
        esac
    done
    [ $status -eq 0 ] || failed_rounds=$((failed_rounds + 1))
    echo "round $round: $([ $status -eq 0 ] && echo passed || echo FAILED) in $(($(date +%s) - start)) s:$results"
done
echo "$rounds rounds beside $load busy loops: $failed_rounds failed"
[ $failed_rounds -eq 0 ]
