#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# raw_layouts.sh: the same simulated runs written in rows and in each ADC
# order of older runs (docs/spec.md §5.2) give clusterfind the same
# clusters, byte for byte; a chip test board run is refused without
# --chip, saying why; and the old-order run read as rows (its readout
# keys removed from the master) gives other clusters: the map is what
# reads it. tests/peer_aare_layouts.sh checks the frames against aare.
. "$(dirname "$0")/common.sh"
clusterfind=${builddir:-.}/tools/clusterfind
for layout in rows moench03-old ctb-moench03 ctb-moench04; do
    mkdir "$work/$layout"
    "$simulate_raw" --layout $layout "$work/$layout" 30 6 7 >/dev/null ||
        fail "simulate_raw --layout $layout failed"
    case $layout in
    ctb-moench0*)
        chip=${layout#ctb-}
        status=0
        "$clusterfind" --pedestal "$work/$layout/dark_master_0.json" \
            --data "$work/$layout/data_master_0.json" >"$work/out" \
            2>"$work/err" || status=$?
        [ $status -eq 1 ] || fail "$layout without --chip: exit status $status, not 1"
        grep -q "does not say which chip.*--chip moench03|moench04" "$work/err" ||
            fail "$layout without --chip: $(cat "$work/err")"
        set -- --chip "$chip" ;;
    *) set -- ;;
    esac
    "$clusterfind" "$@" --pedestal "$work/$layout/dark_master_0.json" \
        --data "$work/$layout/data_master_0.json" --pedestal-frames 30 \
        --output "$work/$layout.clust" >"$work/$layout.out" 2>"$work/err" ||
        fail "clusterfind on $layout: $(cat "$work/err")"
    if [ $layout != rows ]; then
        grep -q "^layout: *$layout (pedestal), $layout (data)" "$work/$layout.out" ||
            fail "clusterfind does not say the layout $layout"
        cmp -s "$work/rows.clust" "$work/$layout.clust" ||
            fail "$layout gives other clusters than rows"
    fi
    echo "$layout: $(grep '^clusters:' "$work/$layout.out")"
done
# The old order read as rows: what the reader did before it knew the
# layout, and what a master without its readout keys would still do. The
# headers then say 50 packets of 6400 bytes, not 40 of 8144.
for run in dark data; do
    grep -v '"Ten Giga"\|"ADC Mask"\|"Analog Flag"\|"Analog Samples"' \
        "$work/moench03-old/${run}_master_0.json" >"$work/m"
    cp "$work/m" "$work/moench03-old/${run}_master_0.json"
    frames=$(($(wc -c <"$work/moench03-old/${run}_d0_f0_0.raw") / 320112))
    k=0
    while [ $k -lt $frames ]; do
        printf '\062' | dd of="$work/moench03-old/${run}_d0_f0_0.raw" bs=1 \
            seek=$((k * 320112 + 12)) conv=notrunc 2>/dev/null
        k=$((k + 1))
    done
done
"$clusterfind" --pedestal "$work/moench03-old/dark_master_0.json" \
    --data "$work/moench03-old/data_master_0.json" --pedestal-frames 30 \
    --output "$work/as-rows.clust" >"$work/as-rows.out" 2>"$work/err" ||
    fail "clusterfind on the old order as rows: $(cat "$work/err")"
cmp -s "$work/rows.clust" "$work/as-rows.clust" &&
    fail "the old order read as rows gives the same clusters: the test proves nothing"
echo "moench03-old read as rows: $(grep '^clusters:' "$work/as-rows.out") (other clusters)"
echo "PASS: every layout gives the clusters of rows"
