#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_bluesky.sh: the example IOC driven by the control room's clients,
# pinned in tests/pyclients-control.txt and installed from PyPI
# (tests/ioc_bluesky.py says what each step checks). A bluesky RunEngine
# resets the pedestal and counts twice with the package's ophyd detector
# and ophyd-async readout (each trigger one acquisition: dark frames that
# train the pedestal, then data); each event must hold the core's figures
# for the arrays taken so far, and unstage must leave the plugin as it
# was. Then the package's BEC device, made from
# python/examples/bec_moench.yaml, is staged, triggered and read as BEC
# calls it. Channel Access must read the same figures after each client.
# Last, python/examples/moench_count.py runs as a user runs it.
# SKIP (77) without EPICS.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"
need_pyclients control
top=$(cd "$(dirname "$0")/.." && pwd)

dark=100 data=200 cycle=20
arrays=$((dark + data)) # one acquisition: the source's dark frames, then data
# What the core finds in the arrays of 1, 2 and 3 acquisitions: each starts
# again at the simulator's first dark frame (frame number 1).
for acquisitions in 1 2 3; do
    for _ in $(seq $acquisitions); do seq $arrays; done >"$work/numbers$acquisitions.txt"
    "${builddir:-.}/tools/source_totals" --frame-numbers "$work/numbers$acquisitions.txt" \
        --dark $dark --pedestal $dark --cycle $cycle --size 3 \
        --spectrum "$work/spectrum$acquisitions.txt" >"$work/expected$acquisitions.txt" ||
        fail "source_totals failed"
done
grep -q "^peak [0-9]" "$work/expected1.txt" || fail "no line in the core's spectrum"

start_ioc 1
put "${C}EnableCallbacks" 0 # the clients' staging enables it, and unstaging not
put "${C}PedestalFrames" $dark
for setting in MoenchDarkFrames:$dark MoenchCycleFrames:$cycle AcquirePeriod:0.005; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done

# ca_equal N: Channel Access reads what the core found in N acquisitions.
ca_equal() {
    [ "$(getcount "${C}TotalClusters_RBV")" = "$(sed -n 's/^clusters //p' "$work/expected$1.txt")" ] ||
        fail "TotalClusters_RBV is $(getcount "${C}TotalClusters_RBV") after $1 acquisitions"
    counts_equal "${C}Spectrum_RBV" "$work/spectrum$1.txt" ||
        fail "Spectrum_RBV is not the core's after $1 acquisitions"
    line="$("$caget" -w $ca_wait -t -f4 "${C}PeakPosition_RBV") $("$caget" -w $ca_wait -t -f4 "${C}PeakSigma_RBV")"
    [ "peak $line" = "$(grep '^peak' "$work/expected$1.txt")" ] ||
        fail "the line over Channel Access is $line after $1 acquisitions"
}

for client in bluesky:2 bec:3; do
    PYTHONPATH=$top/python "$pyclients" "$top/tests/ioc_bluesky.py" "${client%%:*}" "$P" \
        "$work" $arrays >"$work/${client%%:*}.txt" 2>&1 ||
        fail "$(grep -v '^ *$' "$work/${client%%:*}.txt" | tail -n 20)"
    cat "$work/${client%%:*}.txt" | grep '^ok'
    ca_equal "${client#*:}"
done
# The example as a user runs it: its table shows the hinted readings.
PYTHONPATH=$top/python "$pyclients" "$top/python/examples/moench_count.py" "$P" $arrays 1 \
    >"$work/example.txt" 2>&1 || fail "$(tail -n 20 "$work/example.txt")"
grep -q "moench_cluster_total_clusters" "$work/example.txt" ||
    fail "moench_count.py printed no table: $(tail -n 20 "$work/example.txt")"
echo "a RunEngine with the ophyd and ophyd-async devices, the BEC device and python/examples/moench_count.py read the core's figures"
