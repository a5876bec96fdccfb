#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_gpu_fault.sh: the plugin when the GPU fails mid-run, the failure
# planted with CC_CUDA_FAULT (docs/cuda.md) in the IOC's environment.
# Backend Auto, a copy failing: Backend_RBV and StatusMessage_RBV say the
# finder moved to the CPU with the pedestal kept, every array is taken,
# and the clusters and spectrum are the core's on the same frames.
# Backend Auto, the GPU lost: the status says the pedestal is lost, the
# plugin trains a new one from the next frames and goes on. Backend CUDA,
# a launch failing: the status says the batch failed, its clusters are
# lost, the plugin stays on the GPU and later frames are found. SKIP (77) without EPICS or
# without a GPU.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"

frames=600
"$builddir/tools/source_totals" --frames $frames --dark 100 --pedestal 100 \
    --cycle 20 --spectrum "$work/spectrum.txt" >"$work/totals.txt" ||
    fail "source_totals failed"
expected=$(sed -n 's/^clusters //p' "$work/totals.txt")

# run N FAULT BACKEND: IOC N with CC_CUDA_FAULT=FAULT, Backend BACKEND,
# fed 100 dark frames and $frames frames at 500 Hz; waits for them all.
run() {
    export CC_CUDA_FAULT="$2"
    start_ioc "$1"
    unset CC_CUDA_FAULT
    put "${C}EnableCallbacks" 1
    put "${C}Backend" "$3"
    put "${C}PedestalFrames" 100
    put "${C}SpectrumPeriod" 0.5
    put "${P}cam1:ArrayCallbacks" 1
    for setting in MoenchDarkFrames:100 MoenchCycleFrames:20 ImageMode:1 \
        NumImages:$((100 + frames)) AcquirePeriod:0.002; do
        put "${P}cam1:${setting%%:*}" "${setting#*:}"
    done
    # Every status the run shows, for the ones that do not last.
    "$camonitor" -t n -S "${C}StatusMessage_RBV" >"$work/status$1.log" 2>&1 &
    monitor=$!
    put "${P}cam1:Acquire" 1
    count_reaches "${C}ArrayCounter_RBV" $((100 + frames))
    kill "$monitor"
    [ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "$(get "${C}DroppedArrays_RBV") arrays dropped"
    backend=$(getstr "${C}Backend_RBV")
    status=$(cat "$work/status$1.log")
}

run 1 copy:5 Auto
case $backend in
CUDA*) fail "the plugin stayed on the GPU after the planted fault: $backend" ;;
"CPU"*"(auto: no usable GPU"*)
    echo "SKIP: the GPU tests of the plugin need a GPU: $backend"
    exit 77 ;;
esac
echo "$backend" | grep -q "auto: the GPU failed: CUDA: copying frames to the GPU (planted by CC_CUDA_FAULT)" ||
    fail "Backend_RBV does not say the GPU failed: $backend"
echo "$status" | grep -q "switched to the CPU backend, pedestal kept, the batch done again on the CPU" ||
    fail "the status did not say what happened: $status"
got=$("$caget" -w $ca_wait -t -f0 "${C}TotalClusters_RBV")
[ "$got" = "$expected" ] || fail "$got clusters after the fall-back, the core $expected"
published_equal "${C}Spectrum_RBV" "$work/spectrum.txt" ||
    fail "the spectrum after the fall-back differs from the core's"
echo "ok: auto, a copy failing: on the CPU with the pedestal kept, every array taken, $got clusters and the spectrum as the core's"
stop_ioc

run 2 lost:5 Auto
echo "$status" | grep -q "planted by CC_CUDA_FAULT.*pedestal lost: train it again" ||
    fail "the status did not say the pedestal was lost: $status"
wait_for "${C}PedestalState_RBV" 1
[ "$(get "${C}TotalClusters_RBV")" != 0 ] || fail "no clusters after the pedestal was trained again"
echo "ok: auto, the GPU lost: the status says the pedestal is lost, a new one is trained from the next frames, and clusters are found"
stop_ioc

run 3 launch:5 CUDA
case $backend in
CUDA*) ;;
*) fail "Backend CUDA left the GPU: $backend" ;;
esac
echo "$status" | grep -q "launching the decide kernel (planted by CC_CUDA_FAULT)" ||
    fail "the status did not say the batch failed: $status"
got=$("$caget" -w $ca_wait -t -f0 "${C}TotalClusters_RBV")
[ "$got" -gt 0 ] && [ "$got" -lt "$expected" ] ||
    fail "$got clusters: the failed batch should cost some of the core's $expected, and only it"
echo "ok: cuda, a launch failing: the status says so, still on the GPU, $got of $expected clusters (the failed batch's lost)"
