#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_output_order.sh: cluster arrays leave the plugin in uniqueId order
# even when the output threads finish their batches out of order, which
# NDFileHDF5's Stream files rely on. Four output threads, batches of up to
# 4 arrays, and output thread 0 made 20 ms late with each of its batches
# (NDCLUSTERCUDA_OUTPUT0_DELAY_MS, a test's hook): the three others
# finish theirs first and must wait for its publish turn. On two cores
# batches would otherwise never overtake each other, and a plugin that
# did not wait would pass. Nothing is lost meanwhile: every array and
# the core's clusters. SKIP (77) when the build has no EPICS.
. "$(dirname "$0")/common.sh"

. "$(dirname "$0")/ioc_common.sh"
dark=100 frames=240 cycle=20

"$builddir/tools/source_totals" --frames $frames --dark $dark \
    --pedestal $dark --cycle $cycle >"$work/expected.txt" ||
    fail "source_totals failed"
expected=$(sed -n 's/^clusters //p' "$work/expected.txt")
[ "$expected" -gt 0 ] || fail "source_totals found no clusters"

export CLUSTER_OUTPUT_THREADS=4 NDCLUSTERCUDA_OUTPUT0_DELAY_MS=20
start_ioc 1
grep -q "output thread 0 waits 20 ms" "$work/ioc1.log" ||
    fail "the IOC did not take NDCLUSTERCUDA_OUTPUT0_DELAY_MS"
for setting in cam1:MoenchDarkFrames:$dark cam1:MoenchCycleFrames:$cycle \
    cam1:AcquirePeriod:0 cam1:ImageMode:1 cam1:NumImages:$((dark + frames)) \
    cam1:ArrayCallbacks:1 Cluster1:EnableCallbacks:1 \
    Cluster1:PedestalFrames:$dark Cluster1:MaxBatch:4; do
    put "$P${setting%:*}" "${setting##*:}"
done
"$camonitor" -t n -F ' ' "${C}LastBatch_RBV" >"$work/batches.txt" 2>&1 &
monitor=$!
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null || fail "caput ${P}cam1:Acquire 1"
count_reaches "${C}ArrayCounter_RBV" $((dark + frames))
kill "$monitor"
largest=$(awk '$NF ~ /^[0-9]+$/ && $NF > m {m = $NF} END {print m + 0}' "$work/batches.txt")
[ "$largest" -gt 1 ] ||
    fail "no batch formed: output thread 0's delay did not hold the finder back"
# NDPluginDriver counts each cluster array whose uniqueId is not one above
# the last's: only the first, after the dark frames, which have none.
disordered=$(get "${C}DisorderedArrays_RBV")
[ "$disordered" -le 1 ] || fail "$disordered cluster arrays left out of uniqueId order"
[ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "arrays were dropped"
got=$("$caget" -t -f0 -w $ca_wait "${C}TotalClusters_RBV")
[ "$got" = "$expected" ] || fail "the IOC found $got clusters, the core $expected"
echo "ok: output thread 0 late by 20 ms, batches of up to $largest arrays on 4 output threads: every cluster array in uniqueId order, $got clusters as the core's"
