#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# clusterfind_identity.sh: the same run twice, and one thread against
# several, give byte-identical .clust files, from the built-in simulator
# and from raw files; 3x3 and 9x9. A run without clusters says so.
. "$(dirname "$0")/common.sh"

# run NAME ARGS...: runs clusterfind, its summary into NAME.log.
run() {
    name=$1
    shift
    "$clusterfind" "$@" --output "$work/$name.clust" >"$work/$name.log" 2>&1 ||
        { cat "$work/$name.log"; fail "clusterfind $* exited $?"; }
}

for size in 3 9; do
    common="--simulate 12 --pedestal-frames 20 --cluster-size $size --seed 7"
    run sim1 $common --threads 1
    run sim1again $common --threads 1
    run sim3 $common --threads 3
    cmp "$work/sim1.clust" "$work/sim1again.clust" || fail "$size: run twice differs"
    cmp "$work/sim1.clust" "$work/sim3.clust" || fail "$size: 1 vs 3 threads differ"
    grep -q "isolated photons found" "$work/sim1.log" || fail "no ground-truth summary"
    test -s "$work/sim1.clust" || fail "empty .clust"
done

"$simulate_raw" "$work" 20 8 5 >/dev/null || fail "simulate_raw failed"
for size in 3 9; do
    common="--pedestal $work/dark_master_0.json --data $work/data_master_0.json --cluster-size $size"
    run raw1 $common --threads 1
    run raw2 $common --threads 2
    cmp "$work/raw1.clust" "$work/raw2.clust" || fail "$size: raw 1 vs 2 threads differ"
    grep -q "only 20 complete frames" "$work/raw1.log" ||
        fail "a short dark run is not reported"
    grep -q "^frames: *8 " "$work/raw1.log" || fail "not 8 frames: $(cat "$work/raw1.log")"
done
# A threshold no photon clears: the summary says there is no peak.
run none --simulate 4 --pedestal-frames 20 --nsigma 1000000
grep -q "^clusters: *0 (0.0 per frame)" "$work/none.log" || fail "not 0 clusters: $(cat "$work/none.log")"
grep -q "^spectrum: *no clusters in \[0, 2000) ADU (sum), 0 below, 0 above the range" "$work/none.log" ||
    fail "an empty spectrum is not said to be empty: $(grep spectrum "$work/none.log")"
grep -q "no Ka photon found" "$work/none.log" || fail "a median of no photons is printed"
echo "identical .clust files: run twice, 1 vs 3 threads, raw 1 vs 2 threads, 3x3 and 9x9"
