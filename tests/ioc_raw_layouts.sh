#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_raw_layouts.sh: the simulated source replays a run of the chip test
# board in MÖNCH04's ADC order (docs/spec.md §5.2) into rows: refused,
# saying why, while MoenchRawChip is Unsaid; with MOENCH04 the plugin
# finds exactly the clusters clusterfind finds in the same run. SKIP (77)
# when the build has no EPICS.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"

mkdir "$work/run"
"$simulate_raw" --layout ctb-moench04 "$work/run" 100 20 13 >/dev/null ||
    fail "simulate_raw failed"
dark=$work/run/dark_master_0.json
data=$work/run/data_master_0.json
"$clusterfind" --chip moench04 --pedestal "$dark" --data "$data" \
    --pedestal-frames 100 --backend cpu >"$work/clusterfind.txt" 2>&1 ||
    fail "clusterfind: $(cat "$work/clusterfind.txt")"
expected=$(sed -n 's/^clusters: *\([0-9]*\) .*/\1/p' "$work/clusterfind.txt")
[ -n "$expected" ] && [ "$expected" -gt 0 ] || fail "no cluster count from clusterfind"

start_ioc 1
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0
put "${C}PedestalFrames" 100

# Unsaid: the acquisition ends at once, saying what is missing.
putstr "${P}cam1:MoenchRawFile" "$dark"
put "${P}cam1:MoenchSource" 1
put "${P}cam1:ImageMode" 1
put "${P}cam1:NumImages" 100
put "${P}cam1:Acquire" 1
wait_for "${P}cam1:Acquire" 0
getstr "${P}cam1:StatusMessage_RBV" | grep -q "does not say which chip.*(MoenchRawChip)" ||
    fail "no word of the chip: $(getstr "${P}cam1:StatusMessage_RBV")"
[ "$(get "${C}ArrayCounter_RBV")" = 0 ] || fail "frames flowed from a run of no chip"
echo "ok: a chip test board run is refused while MoenchRawChip is Unsaid"

"$caput" -c -w 5 "${P}cam1:MoenchRawChip" 3 >/dev/null 2>&1 || true
put "${P}cam1:MoenchRawChip" 2
[ "$(getstr "${P}cam1:MoenchRawChip_RBV")" = MOENCH04 ] ||
    fail "MoenchRawChip_RBV reads $(getstr "${P}cam1:MoenchRawChip_RBV")"
replay "$dark" 100
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] || fail "the pedestal is not Ready"
replay "$data" 20
got=$(get "${C}TotalClusters_RBV")
[ "$got" = "$expected" ] || fail "the IOC found $got clusters, clusterfind $expected"
echo "ok: MOENCH04's ADC order replayed into rows: $got clusters, as clusterfind finds"
