#!/bin/sh
# clusterfind_identity.sh: the same run twice, and one thread against
# several, give byte-identical .clust files, from the built-in simulator
# and from raw files; 3x3 and 9x9.
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
echo "identical .clust files: run twice, 1 vs 3 threads, raw 1 vs 2 threads, 3x3 and 9x9"
