#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_bad_writes.sh: bad writes while frames flow. Out-of-range, absurd
# and wrong-type values to every setting of the plugin, and missing or
# corrupt pedestal, mask and η files, are each refused: the write fails,
# the readback keeps the value in force and StatusMessage_RBV says why.
# (An mbbo given a state it lacks writes state 0's value: the same value
# again, which must change nothing.) Afterwards the arrays, clusters and
# spectrum are exactly what the core finds in the same frames: nothing
# dropped, nothing changed. SKIP (77) without EPICS.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"

frames=600
"${builddir:-.}/tools/source_totals" --frames $frames --dark 100 --pedestal 100 \
    --cycle 20 --size 3 --spectrum "$work/spectrum.txt" >"$work/totals.txt" ||
    fail "source_totals failed"
expected=$(sed -n 's/^clusters //p' "$work/totals.txt")
head -c 3000 /dev/urandom >"$work/corrupt.bin"

start_ioc 1
put "${C}EnableCallbacks" 1
put "${C}PedestalFrames" 100
put "${C}SpectrumPeriod" 0.5
put "${P}cam1:ArrayCallbacks" 1
for setting in MoenchDarkFrames:100 MoenchCycleFrames:20 ImageMode:1 \
    NumImages:$((100 + frames)) AcquirePeriod:0.01; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done
before=$(get "${C}ArrayCounter_RBV")
"$caput" -w 1 "${P}cam1:Acquire" 1 >/dev/null 2>&1 || true # 7 s of frames
wait_for "${C}PedestalState_RBV" 1

refused NSigma 0 "NSigma 0 must be above 0"
refused NSigma -3 "must be above 0"
refused NSigma nan "NSigma nan must be above 0"
refused NSigma abc "" # not a number: Channel Access refuses it
refused ClusterSizeX 4 "cluster size 4 x 3"
refused ClusterSizeX 11 "cluster size 11 x 3"
refused ClusterSizeY 2 "cluster size 3 x 2"
refused MaxClusters 0 "MaxClusters 0 must be 1 to 160000"
refused MaxClusters -5 "MaxClusters -5"
refused MaxClusters 1000000000 "MaxClusters 1000000000"
refused PedestalFrames 0 "pedestal_frames 0"
refused PedestalFrames 1 "pedestal_frames 1"
refused NumStreams 0 "streams 0"
refused NumStreams 9 "streams 9"
refused MaxBatch 0 "MaxBatch 0 must be 1 to 4096"
refused MaxBatch 5000 "MaxBatch 5000"
refused AdcMask 0 "adc_mask 0 would discard"
refused Precision 7 "" Precision_RBV
refused AutoMaskFactor 0.5 "AutoMaskFactor 0.5"
refused SpectrumMin 3000 "spectrum refused"
refused SpectrumMax -1 "spectrum refused"
refused SpectrumEnergy 5 "" SpectrumEnergy_RBV
refused WindowLow 2500 "empty"
refused WindowHigh -10 "empty"
refused WindowLowKeV 5 "needs the gain"
refused AduPerKeV -2 "AduPerKeV -2"
refused PeakLow inf "range edge inf must be finite"
refused PeakHigh nan "must be finite"
refused SpectrumPeriod -1 "SpectrumPeriod -1 must be 0"
refused SpectrumPeriod nan "SpectrumPeriod nan"
refused EtaBins 0 "EtaBins 0 must be 1 to 1000"
refused EtaBins 5000 "EtaBins 5000"
refused Subpixels 0 "Subpixels 0 must be 1 to 25"
refused Subpixels 1000 "Subpixels 1000"
refused EtaFunction 9 "" EtaFunction_RBV
refused EtaMode Interpolate "no eta calibration" EtaMode_RBV
# Files: missing and corrupt ones are refused and what is in force kept.
for file in "$work/missing" "$work/corrupt.bin"; do
    load_refused PedestalFile LoadPedestal "$file" "$(basename "$file")"
    [ "$(get "${C}PedestalState_RBV")" = 1 ] || fail "LoadPedestal $file lost the pedestal"
    load_refused MaskFile LoadMask "$file" "the mask in force is kept"
    load_refused EtaFile LoadEta "$file" "the eta calibration in force is kept"
    refusals=$((refusals + 3))
done
[ "$(get "${C}MaskedPixels_RBV")" = 0 ] || fail "a refused mask masked pixels"
[ "$(getstr "${C}EtaCalibration_RBV")" = none ] || fail "a refused calibration was taken"
flowing=$(($(get "${C}ArrayCounter_RBV") - before))
[ "$flowing" -lt $((100 + frames)) ] ||
    echo "note: the frames had all passed before the last refusal; the writes still met the flow for most of them"

# What the frames gave: the core's, to the cluster.
count_reaches "${C}ArrayCounter_RBV" $((before + 100 + frames))
[ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "$(get "${C}DroppedArrays_RBV") arrays dropped"
[ "$(get "${C}BadArrays_RBV")" = 0 ] || fail "arrays refused"
got=$("$caget" -w $ca_wait -t -f0 "${C}TotalClusters_RBV")
[ "$got" = "$expected" ] || fail "$got clusters after the bad writes, the core $expected"
published_equal "${C}Spectrum_RBV" "$work/spectrum.txt" ||
    fail "the spectrum differs from the core's after the bad writes"
echo "ok: $refusals bad writes and file loads refused while frames flowed (the last at frame $flowing of $((100 + frames))); then $got clusters and the spectrum, as the core finds, 0 dropped"
