#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_output_pool.sh: the plugin's cluster arrays come from a pool of its
# own, bounded by NDClusterCUDAConfigure's maxMemory (CLUSTER_MAX_MEMORY in
# st.cmd), not from the source's, which has no bound: with less room than
# one cluster array of 3000 rows, no cluster array is published, the
# status says the pool is exhausted, and the finder still takes every
# frame and finds the clusters clusterfind finds. SKIP (77) when the build
# has no EPICS.
. "$(dirname "$0")/common.sh"

. "$(dirname "$0")/ioc_common.sh"

raw_run 31
"$clusterfind" --pedestal "$dark" --data "$data" --pedestal-frames 100 \
    --backend cpu >"$work/clusterfind.txt" 2>&1 ||
    fail "clusterfind: $(cat "$work/clusterfind.txt")"
expected=$(sed -n 's/^clusters: *\([0-9]*\) .*/\1/p' "$work/clusterfind.txt")

# A cluster array of 3000 rows of 3x3 clusters is 4 x 11 x 3000 bytes:
# the pool has room for less.
export CLUSTER_MAX_MEMORY=100000
start_ioc 1
put "${C}EnableCallbacks" 1
put "${C}MaxClusters" 3000
put "${C}PedestalFrames" 100
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0
replay "$dark" 100
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] || fail "the pedestal is not Ready"
hdf5_stream pool 40
replay "$data" 40
sleep 1
given=$(get "${P}HDF1:NumCaptured_RBV")
[ "$given" = 0 ] || fail "$given cluster arrays published from a pool without room for one"
"$caput" -w 5 "${P}HDF1:Capture" 0 >/dev/null 2>&1 || true
getstr "${C}StatusMessage_RBV" | grep -q "the pool is exhausted" ||
    fail "no word of the exhausted pool: $(getstr "${C}StatusMessage_RBV")"
[ "$(get "${C}TotalClusters_RBV")" = "$expected" ] ||
    fail "$(get "${C}TotalClusters_RBV") clusters found, clusterfind $expected"
[ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "the plugin dropped frames"
echo "ok: a pool of $CLUSTER_MAX_MEMORY bytes: no cluster array published, the status says the pool is exhausted, and all 40 frames gave the $expected clusters clusterfind finds"
echo "the plugin's own pool of output arrays passes"
