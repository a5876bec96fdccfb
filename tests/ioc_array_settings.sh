#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_array_settings.sh: the example IOC with st.cmd's defaults for how
# arrays move (NDClusterCUDAPinnedArrays on, the records that change with
# every array processed at each change: SCANRATE "I/O Intr"), then with
# neither (PINNED_ARRAYS=0, CLUSTER_SCANRATE=".1 second"): the IOC says
# what memory its arrays get (page-locked with a GPU, ordinary memory
# without), those records scan as asked, and either way the simulated
# source (dark frames, then cycled data frames) gives exactly the
# clusters, spectrum and hit map that the core finds in the same frames
# (tools/source_totals). SKIP (77) when the build has no EPICS.
. "$(dirname "$0")/common.sh"

. "$(dirname "$0")/ioc_common.sh"
export EPICS_CA_MAX_ARRAY_BYTES=10000000
dark=60 frames=150 cycle=40 seed=5

"$builddir/tools/source_totals" --frames $frames --dark $dark \
    --pedestal $dark --cycle $cycle --seed $seed \
    --spectrum "$work/spectrum.txt" --hitmap "$work/hitmap.txt" \
    >"$work/expected.txt" || fail "source_totals failed"
expected=$(sed -n 's/^clusters //p' "$work/expected.txt")
[ "$expected" -gt 0 ] || fail "source_totals found no clusters"

for pinned in 1 0; do
    export PINNED_ARRAYS=$pinned
    if [ $pinned = 1 ]; then scan="I/O Intr"; else scan=".1 second"; fi
    export CLUSTER_SCANRATE="$scan"
    start_ioc $pinned
    for record in cam1:ArrayCounter_RBV cam1:NumImagesCounter_RBV \
        Cluster1:QueueFree Cluster1:UniqueId_RBV Stats1:ArrayCounter_RBV; do
        got=$("$caget" -t -w $ca_wait "$P$record.SCAN")
        [ "$got" = "$scan" ] || fail "CLUSTER_SCANRATE=$scan: $record scans at $got"
    done
    if [ $pinned = 1 ]; then
        note=$(grep "^NDClusterCUDAPinnedArrays: .*cc_host_alloc: \(page-locked\|ordinary memory, not page-locked (.*)\)$" \
            "$work/ioc$pinned.log") || fail "no word from NDClusterCUDAPinnedArrays"
    else
        note=$(grep "^NDClusterCUDAPinnedArrays: .* from malloc$" "$work/ioc$pinned.log") ||
            fail "PINNED_ARRAYS=0 did not turn it off"
    fi
    for setting in cam1:MoenchDarkFrames:$dark cam1:MoenchCycleFrames:$cycle \
        cam1:MoenchSeed:$seed cam1:AcquirePeriod:0 cam1:ImageMode:1 \
        cam1:NumImages:$((dark + frames)) cam1:ArrayCallbacks:1 \
        Cluster1:EnableCallbacks:1 Cluster1:PedestalFrames:$dark \
        Cluster1:SpectrumPeriod:0.2 image1:EnableCallbacks:1; do
        put "$P${setting%:*}" "${setting##*:}"
    done
    put "${P}cam1:Acquire" 1
    count_reaches "${C}ArrayCounter_RBV" $((dark + frames))
    got=$("$caget" -t -f0 -w $ca_wait "${C}TotalClusters_RBV")
    [ "$got" = "$expected" ] ||
        fail "PINNED_ARRAYS=$pinned: the IOC found $got clusters, the core $expected"
    [ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "arrays were dropped"
    # The spectrum and hit map are published every SpectrumPeriod.
    published_equal "${C}Spectrum_RBV" "$work/spectrum.txt" ||
        fail "PINNED_ARRAYS=$pinned: the spectrum differs from the core's"
    published_equal "${P}image1:ArrayData" "$work/hitmap.txt" ||
        fail "PINNED_ARRAYS=$pinned: the hit map differs from the core's"
    echo "ok: ${note#*: }; per-array records $scan; $got clusters, spectrum and hit map as the core's"
    stop_ioc
done
echo "the example IOC gives the core's results with and without page-locked arrays, its per-array records scanned at each change or periodically"
