#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_plugin.sh: the example IOC for real, driven over Channel Access on
# loopback with caget/caput: setpoints read back; the pedestal trains to
# PedestalFrames; the plugin finds exactly the clusters clusterfind finds
# in the same raw run, and NDFileHDF5 writes the same clusters; an NSigma
# change takes effect; a small MaxClusters counts drops in a MAJOR alarm;
# a wrong data type and new frame dimensions give an error status and no
# crash; a backlog is worked off in batches with the same clusters; a
# mask from a file, hot pixels auto-masked, the pedestal maps and the
# counting image are the core's; a pedestal saved, then loaded after an
# IOC restart, gives the same clusters. SKIP (77) when the build has no
# EPICS.
. "$(dirname "$0")/common.sh"

. "$(dirname "$0")/ioc_common.sh"
python=python3
command -v /usr/bin/python3 >/dev/null && python=/usr/bin/python3
$python -c "import h5py, numpy" 2>/dev/null ||
    { echo "SKIP: python3 with h5py and numpy is needed (apt-get install python3-h5py)"; exit 77; }


raw_run 11
"$clusterfind" --pedestal "$dark" --data "$data" --pedestal-frames 100 \
    --backend cpu --output "$work/ours.clust" >"$work/clusterfind.txt" 2>&1 ||
    fail "clusterfind: $(cat "$work/clusterfind.txt")"
expected=$(sed -n 's/^clusters: *\([0-9]*\) .*/\1/p' "$work/clusterfind.txt")
[ -n "$expected" ] && [ "$expected" -gt 0 ] || fail "no cluster count from clusterfind"

export CLUSTER_OUTPUT_THREADS=3 # the second IOC has the default, 6
start_ioc 1
unset CLUSTER_OUTPUT_THREADS
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0

# Setpoints read back.
for setting in NSigma:4.5 ClusterSizeX:5 ClusterSizeY:7 MaxClusters:1234 \
    NumStreams:3 SpectrumBins:200; do
    put "${C}${setting%%:*}" "${setting#*:}"
    [ "$(get "${C}${setting%%:*}_RBV")" = "${setting#*:}" ] ||
        fail "${setting%%:*}_RBV reads $(get "${C}${setting%%:*}_RBV")"
done
"$caput" -c -w 5 "${C}ClusterSizeX" 4 >/dev/null 2>&1 || true
[ "$(get "${C}ClusterSizeX_RBV")" = 5 ] || fail "an even cluster size was taken"
# A spectrum range the core cannot make is refused at the write, so that
# no batch meets it (the bins are clamped by the record): the readbacks
# keep the values in force, and the status says why.
for setting in SpectrumMin:2500 SpectrumMax:-1; do
    "$caput" -c -w 5 "${C}${setting%%:*}" "${setting#*:}" >/dev/null 2>&1 || true
done
[ "$(get "${C}SpectrumMin_RBV")" = 0 ] && [ "$(get "${C}SpectrumMax_RBV")" = 2000 ] ||
    fail "a spectrum range the core refuses was taken: $(get "${C}SpectrumMin_RBV")..$(get "${C}SpectrumMax_RBV")"
getstr "${C}StatusMessage_RBV" | grep -q "spectrum refused: 200 bins of energy 0 on \[0, -1) ADU" ||
    fail "no word of the refused spectrum: $(getstr "${C}StatusMessage_RBV")"
echo "ok: setpoints read back, an even cluster size and an impossible spectrum are refused"
# The pedestal needs frames in order: one processing thread and one
# finder thread, whatever maxThreads says; maxThreads (3 here) output
# threads publish.
[ "$(get "${C}MaxThreads_RBV")" = 1 ] && [ "$(get "${C}NumThreads_RBV")" = 1 ] ||
    fail "the plugin runs $(get "${C}NumThreads_RBV") threads"
grep -q "3 output threads publish them (maxThreads 3)" "$work/ioc1.log" ||
    fail "no note of the output threads"
# The IOC's threads: scheduling class and name.
threads=$(ps -L -o cls=,comm= -p "$pid")
stages=$(echo "$threads" | awk '{print $2}' | grep -c '^CLUSTER1_\(Finder\|Out[0-9]\)$')
[ "$stages" = 4 ] || fail "$stages finder and output threads, not 1 + 3"
echo "ok: one processing thread, one finder thread and, as maxThreads asked, 3 output threads"
# As root, EPICS gives the IOC's threads real-time priorities (ps: FF);
# the plugin's finder, output and publisher threads and the source's
# acquisition thread work for as long as frames come, and must leave the
# CPUs to Channel Access and its clients: time-shared (TS).
ours='^(CLUSTER1_(Finder|Out[0-9]|Publis.*)|ADMoenchSimTask)$'
[ "$(echo "$threads" | awk '{print $2}' | grep -Ec "$ours")" = 6 ] ||
    fail "not the 6 threads of the finder, outputs, publisher and source: $threads"
if echo "$threads" | grep -q '^ *FF '; then
    real_time=$(echo "$threads" | awk -v ours="$ours" '$1 != "TS" && $2 ~ ours')
    [ -z "$real_time" ] || fail "real-time threads of the plugin or the source: $real_time"
    echo "ok: the finder, output, publisher and source threads are time-shared beside EPICS's real-time ones"
else
    echo "ok: no thread of the IOC is real-time here (not run as root): the time-sharing is not seen"
fi
for setting in NSigma:5 ClusterSizeX:3 ClusterSizeY:3 MaxClusters:5000 \
    NumStreams:2 SpectrumBins:400 PedestalFrames:100; do
    put "${C}${setting%%:*}" "${setting#*:}"
done

# Training counts up to PedestalFrames; then the pedestal is saved.
replay "$dark" 100
[ "$(get "${C}PedestalCount_RBV")" = 100 ] || fail "PedestalCount_RBV is not 100"
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] || fail "the pedestal is not Ready"
putstr "${C}PedestalFile" "$work/pedestal.ccped"
put "${C}SavePedestal" 1
[ -s "$work/pedestal.ccped" ] || fail "no pedestal file: $(getstr "${C}StatusMessage_RBV")"
echo "ok: the pedestal trained on 100 frames and was saved"

# The data run, with NDFileHDF5 streaming every frame's clusters.
hdf5_stream first 40
replay "$data" 40
wait_for "${P}HDF1:Capture_RBV" 0
got=$(get "${C}TotalClusters_RBV")
[ "$got" = "$expected" ] || fail "the IOC found $got clusters, clusterfind $expected"
$python "$(dirname "$0")/ioc_hdf5.py" "$work/first.h5" "$work/ours.clust" ||
    fail "the HDF5 file and clusterfind's .clust differ"
echo "ok: $got clusters, as clusterfind finds; NDFileHDF5 wrote the same"

# ProcessPlugin hands the last array over again: it must not reach the
# pedestal (or the counts) a second time.
put "${C}ProcessPlugin" 1
poll eval 'getstr "${C}StatusMessage_RBV" | grep -q "processed already"' ||
    fail "no word of the repeated array: $(getstr "${C}StatusMessage_RBV")"
[ "$(get "${C}TotalClusters_RBV")" = "$expected" ] || fail "ProcessPlugin counted a frame twice"
echo "ok: ProcessPlugin does not feed the last array twice"

# NSigma takes effect: at 10 sigma the same frames give fewer clusters.
put "${C}NSigma" 10
replay "$data" 40
fewer=$(( $(get "${C}TotalClusters_RBV") - expected ))
[ "$fewer" -lt "$expected" ] || fail "NSigma 10 found $fewer clusters, 5 found $expected"
put "${C}NSigma" 5
echo "ok: NSigma 10 finds $fewer clusters where 5 found $expected"

# Settings change while frames flow (the data run, looped): after each,
# an array goes through; nothing refused, nothing stopped.
putstr "${P}cam1:MoenchRawFile" "$data"
put "${P}cam1:MoenchSource" 1
put "${P}cam1:ImageMode" 2
put "${P}cam1:AcquirePeriod" 0.02
before=$(get "${C}ArrayCounter_RBV")
source_mark
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
for setting in NSigma:6 ClusterSizeX:5 ClusterSizeY:5 SpectrumBins:100 \
    SpectrumMax:3000 NSigma:5 ClusterSizeX:3 ClusterSizeY:3 SpectrumBins:400; do
    put "${C}${setting%%:*}" "${setting#*:}"
    taken=$(get "${C}ArrayCounter_RBV")
    poll eval '[ "$(get "${C}ArrayCounter_RBV")" -gt "$taken" ]' ||
        fail "no array went through after ${setting%%:*} ${setting#*:}"
done
put "${P}cam1:Acquire" 0
source_drained
flowed=$(( $(get "${C}ArrayCounter_RBV") - before ))
[ "$(get "${C}BadArrays_RBV")" = 0 ] || fail "arrays were refused while settings changed"
[ "$(get "${C}ClusterSizeX_RBV")" = 3 ] || fail "ClusterSizeX_RBV is not 3"
echo "ok: $flowed arrays processed while 9 settings changed"

# A small MaxClusters counts what it drops, in a MAJOR alarm.
put "${C}MaxClusters" 100
replay "$data" 5
dropped=$(get "${C}DroppedClusters_RBV")
[ "${dropped%.*}" -gt 0 ] || fail "MaxClusters 100 dropped nothing"
"$caget" -w $ca_wait -a "${C}DroppedClusters_RBV" | grep -q MAJOR || fail "no MAJOR alarm on drops"
[ "$(get "${C}NumClusters_RBV")" -gt 100 ] || fail "NumClusters_RBV does not count what was found"
put "${C}MaxClusters" 5000
echo "ok: MaxClusters 100 dropped $dropped clusters, in a MAJOR alarm"

# A wrong data type (Float64 from NDProcess) is refused, counted, survived.
put "${P}Proc1:EnableCallbacks" 1
put "${P}Proc1:DataTypeOut" Float64
put "${C}NDArrayPort" PROC1
replay "$data" 3 || true
bad=$(get "${C}BadArrays_RBV")
[ "$bad" -ge 1 ] || fail "no array refused: $(getstr "${C}StatusMessage_RBV")"
getstr "${C}StatusMessage_RBV" | grep -q "refused" || fail "no refusal in the status"
put "${C}NDArrayPort" MOENCH
# Off again: it would convert every later frame, and hold the source's.
put "${P}Proc1:EnableCallbacks" 0
echo "ok: $bad Float64 arrays refused: $(getstr "${C}StatusMessage_RBV")"

# A backlog is worked off in batches of up to MaxBatch arrays, with the
# clusters the core finds in the same frames: 9x9 clusters on the CPU fall
# behind the simulated source's cycled frames, copied on 3 threads and
# published in order.
"${builddir:-.}/tools/source_totals" --frames 60 --dark 100 --pedestal 100 \
    --cycle 20 --size 9 --spectrum "$work/spectrum9.txt" >"$work/totals9.txt" ||
    fail "source_totals failed"
expected9=$(sed -n 's/^clusters //p' "$work/totals9.txt")
for setting in ClusterSizeX:9 ClusterSizeY:9 MaxBatch:8 SpectrumMin:0 \
    SpectrumMax:2000 SpectrumBins:400 ResetPedestal:1 SpectrumReset:1; do
    put "${C}${setting%%:*}" "${setting#*:}"
done
for setting in MoenchSource:0 MoenchDarkFrames:100 MoenchCycleFrames:20 AcquirePeriod:0 \
    MoenchSourceThreads:3 ImageMode:1 NumImages:160; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done
"$camonitor" -t n -F ' ' "${C}LastBatch_RBV" >"$work/batches.txt" 2>&1 &
monitor=$!
before=$(get "${C}ArrayCounter_RBV")
disordered=$(get "${C}DisorderedArrays_RBV")
put "${P}cam1:Acquire" 1
count_reaches "${C}ArrayCounter_RBV" $((before + 160))
wait_for "${C}QueueFree" "$(get "${C}QueueSize_RBV")"
kill "$monitor"
largest=$(awk '$NF ~ /^[0-9]+$/ && $NF > m {m = $NF} END {print m + 0}' "$work/batches.txt")
[ "$largest" -gt 1 ] ||
    fail "no batch formed: the finder kept up with the source ($(tr '\n' ' ' <"$work/batches.txt"))"
[ "$largest" -le 8 ] || fail "a batch of $largest arrays, above MaxBatch 8"
# Cluster arrays leave in uniqueId order: NDPluginDriver counts each one
# not one above the last; here only the first, after the dark frames.
jumps=$(( $(get "${C}DisorderedArrays_RBV") - disordered ))
[ "$jumps" -le 1 ] || fail "$jumps cluster arrays left out of order"
got9=$(get "${C}TotalClusters_RBV")
[ "$got9" = "$expected9" ] || fail "in batches: $got9 clusters, the core alone $expected9"
publish_now
published_equal "${C}Spectrum_RBV" "$work/spectrum9.txt" ||
    fail "in batches the spectrum differs from the core alone's"
# The line fitted to that spectrum: the core's fit to the same counts.
expected_peak=$(sed -n 's/^peak //p' "$work/totals9.txt")
got_peak="$("$caget" -w $ca_wait -t -f4 "${C}PeakPosition_RBV") $("$caget" -w $ca_wait -t -f4 "${C}PeakSigma_RBV")"
[ "$(get "${C}PeakFitted_RBV")" = 1 ] && [ "$got_peak" = "$expected_peak" ] ||
    fail "the line fitted: $got_peak ($(get "${C}PeakFitted_RBV")), the core's $expected_peak"
for setting in ClusterSizeX:3 ClusterSizeY:3 MaxBatch:64; do
    put "${C}${setting%%:*}" "${setting#*:}"
done
put "${P}cam1:MoenchDarkFrames" 0
put "${P}cam1:MoenchCycleFrames" 0
echo "ok: batches of up to $largest arrays found $got9 clusters at 9x9 and their spectrum, as the core alone, with its line at $got_peak ADU (position, sigma)"

# The source's frame ring: the first 40 data frames' NDArrays go out again
# in turn, without a copy, with the content MoenchCycleFrames 40 gives; the
# plugin finds what the core finds in that sequence, and nothing is lost.
# With blocking callbacks each array is found and released in the source's
# thread before the next goes out: a plugin that falls 40 frames behind
# (under AddressSanitizer on a loaded machine) would otherwise still hold
# the ring's next array, and the source drop that frame, as it should.
"${builddir:-.}/tools/source_totals" --frames 120 --dark 100 --pedestal 100 \
    --cycle 40 --size 3 >"$work/totals_ring.txt" || fail "source_totals failed"
expected_ring=$(sed -n 's/^clusters //p' "$work/totals_ring.txt")
put "${C}ResetPedestal" 1
put "${C}BlockingCallbacks" 1
for setting in MoenchDarkFrames:100 MoenchCycleFrames:40 MoenchFrameRing:40 \
    AcquirePeriod:0.03 ImageMode:1 NumImages:220; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done
before=$(get "${C}ArrayCounter_RBV")
source_before=$(get "${P}cam1:ArrayCounter_RBV")
put "${P}cam1:Acquire" 1
count_reaches "${C}ArrayCounter_RBV" $((before + 220))
wait_for "${C}QueueFree" "$(get "${C}QueueSize_RBV")"
published=$(( $(get "${P}cam1:ArrayCounter_RBV") - source_before ))
[ "$published" = 220 ] || fail "the ring source published $published of 220 frames"
replayed=$(get "${P}cam1:MoenchRingFrames_RBV")
# The copying threads' last frames (3 threads, 2 each) go out before the ring.
[ "$replayed" -ge 74 ] && [ "$replayed" -le 80 ] ||
    fail "$replayed frames from the ring, not 74 to 80"
got_ring=$(get "${C}TotalClusters_RBV")
[ "$got_ring" = "$expected_ring" ] ||
    fail "from the ring: $got_ring clusters, the core alone $expected_ring"
for setting in MoenchFrameRing:0 MoenchCycleFrames:0 MoenchDarkFrames:0 AcquirePeriod:0; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done
put "${C}BlockingCallbacks" 0
echo "ok: $replayed of 220 frames from the source's ring of 40 NDArrays, $got_ring clusters, as the core alone"

# acquire_cycled: trains the pedestal again on 100 dark frames and finds
# the clusters of 60 more, 20 frames cycled, as source_totals --frames 60
# --dark 100 --pedestal 100 --cycle 20 computes them; waits for all.
acquire_cycled() {
    put "${C}ResetPedestal" 1
    for setting in MoenchDarkFrames:100 MoenchCycleFrames:20 ImageMode:1 NumImages:160; do
        put "${P}cam1:${setting%%:*}" "${setting#*:}"
    done
    before=$(get "${C}ArrayCounter_RBV")
    put "${P}cam1:Acquire" 1
    count_reaches "${C}ArrayCounter_RBV" $((before + 160))
    wait_for "${C}QueueFree" "$(get "${C}QueueSize_RBV")"
}

# A bad-pixel mask from a file, with the rms rule on top: the clusters the
# core finds with the same mask, and as many pixels masked; a file of the
# wrong shape is refused and the mask kept.
$python -c "import numpy, sys; m = numpy.zeros((400, 400), numpy.uint8); m[100:140, :] = 1; numpy.save(sys.argv[1], m); numpy.save(sys.argv[2], m[:200])" \
    "$work/mask.npy" "$work/short_mask.npy" || fail "cannot write the masks"
"${builddir:-.}/tools/source_totals" --frames 60 --dark 100 --pedestal 100 \
    --cycle 20 --size 3 --mask "$work/mask.npy" --auto-mask 1.5 \
    --maps "$work/maps" >"$work/totals_mask.txt" ||
    fail "source_totals --mask failed"
expected_mask=$(sed -n 's/^clusters //p' "$work/totals_mask.txt")
expected_masked=$(sed -n 's/^masked //p' "$work/totals_mask.txt")
put "${C}AutoMaskFactor" 0.5
[ "$(get "${C}AutoMaskFactor_RBV")" = 0 ] || fail "AutoMaskFactor 0.5 was taken"
put "${C}AutoMaskFactor" 1.5
load_refused MaskFile LoadMask "$work/short_mask.npy" \
    "(400, 400) is needed; the mask in force is kept"
putstr "${C}MaskFile" "$work/mask.npy"
put "${C}LoadMask" 1
for map in pedestal1 noise1 mask1; do
    put "${P}${map}:EnableCallbacks" 1
done
acquire_cycled
got_mask=$(get "${C}TotalClusters_RBV")
got_masked=$(get "${C}MaskedPixels_RBV")
[ "$got_mask" = "$expected_mask" ] && [ "$got_masked" = "$expected_masked" ] ||
    fail "masked: $got_mask clusters and $got_masked pixels, the core $expected_mask and $expected_masked"
# The maps on addresses 2 to 4 (published every SpectrumPeriod): the
# core's pedestal mean and rms after the same frames, and the same mask.
published_equal "${P}pedestal1:ArrayData" "$work/maps_mean.txt" 6 ||
    fail "the pedestal map differs from the core's"
published_equal "${P}noise1:ArrayData" "$work/maps_rms.txt" 6 ||
    fail "the noise map differs from the core's"
published_equal "${P}mask1:ArrayData" "$work/maps_mask.txt" ||
    fail "the mask map differs from the core's"
for map in pedestal1 noise1 mask1; do
    put "${P}${map}:EnableCallbacks" 0
done
putstr "${C}MaskFile" ""
put "${C}LoadMask" 1
put "${C}AutoMaskFactor" 0
put "${P}cam1:MoenchDarkFrames" 0
put "${P}cam1:MoenchCycleFrames" 0
echo "ok: a mask of 40 rows and the rms rule (1.5) mask $got_masked pixels and leave $got_mask clusters, as the core alone; the pedestal, noise and mask maps are the core's"

# Hot pixels planted in the source: the rms rule (5) masks them, with the
# clusters and the mask the core gives.
"${builddir:-.}/tools/source_totals" --frames 60 --dark 100 --pedestal 100 \
    --cycle 20 --size 3 --hot-pixels 3 --auto-mask 5 --maps "$work/hot" \
    >"$work/totals_hot.txt" || fail "source_totals --hot-pixels failed"
grep -q "^hot 3 masked 3$" "$work/totals_hot.txt" ||
    fail "the core leaves hot pixels: $(cat "$work/totals_hot.txt")"
expected_hot=$(sed -n 's/^clusters //p' "$work/totals_hot.txt")
put "${P}cam1:MoenchHotPixels" 3
put "${C}AutoMaskFactor" 5
put "${P}mask1:EnableCallbacks" 1
acquire_cycled
published_equal "${P}mask1:ArrayData" "$work/hot_mask.txt" ||
    fail "with hot pixels, the mask differs from the core's"
got_hot=$(get "${C}TotalClusters_RBV")
[ "$got_hot" = "$expected_hot" ] ||
    fail "with hot pixels: $got_hot clusters, the core $expected_hot"
put "${P}mask1:EnableCallbacks" 0
put "${P}cam1:MoenchHotPixels" 0
put "${C}AutoMaskFactor" 0
put "${P}cam1:MoenchDarkFrames" 0
put "${P}cam1:MoenchCycleFrames" 0
echo "ok: 3 hot pixels planted in the source are auto-masked (k = 5): $(get "${C}MaskedPixels_RBV") pixels masked, $got_hot clusters, as the core"

# The energy window: the hit map becomes the counting image of [700, 900)
# ADU, the core's of the same frames, with as many clusters left out; an
# empty window is refused.
"${builddir:-.}/tools/source_totals" --frames 60 --dark 100 --pedestal 100 \
    --cycle 20 --size 3 --energy-window 700:900 --hitmap "$work/counts.txt" \
    >"$work/totals_window.txt" || fail "source_totals --energy-window failed"
expected_outside=$(sed -n 's/^outside //p' "$work/totals_window.txt")
put "${C}WindowHigh" 900
put "${C}WindowLow" 700
put "${C}WindowLow" 950
[ "$(get "${C}WindowLow_RBV")" = 700 ] || fail "an empty window was taken"
put "${C}WindowEnable" 1
put "${P}image1:EnableCallbacks" 1
acquire_cycled
publish_now
published_equal "${P}image1:ArrayData" "$work/counts.txt" ||
    fail "the counting image differs from the core's"
got_outside=$(get "${C}OutsideWindow_RBV")
[ "$got_outside" = "$expected_outside" ] ||
    fail "$got_outside clusters outside the window, the core $expected_outside"
for setting in WindowEnable:0 WindowLow:0 WindowHigh:2000; do
    put "${C}${setting%%:*}" "${setting#*:}"
done
put "${P}image1:EnableCallbacks" 0
put "${P}cam1:MoenchDarkFrames" 0
put "${P}cam1:MoenchCycleFrames" 0
echo "ok: the window [700, 900) ADU makes the hit map the core's counting image, $got_outside clusters left out"

# New frame dimensions reset the pedestal and say so.
put "${P}cam1:MoenchSource" 0
put "${P}cam1:SizeY" 160
put "${P}cam1:NumImages" 3
before=$(get "${C}ArrayCounter_RBV")
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
count_reaches "${C}ArrayCounter_RBV" $((before + 3))
getstr "${C}StatusMessage_RBV" | grep -q "frame size changed" ||
    fail "no word of the new frame size: $(getstr "${C}StatusMessage_RBV")"
[ "$(getstr "${C}PedestalState_RBV")" = Training ] || fail "the pedestal was kept"
echo "ok: 400 x 160 frames reset the pedestal: $(getstr "${C}StatusMessage_RBV")"
stop_ioc

# After a restart, the saved pedestal gives the same clusters, here with
# blocking callbacks (every array processed and published in the
# source's thread, one at a time).
start_ioc 2
put "${C}BlockingCallbacks" 1
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0
put "${C}PedestalFrames" 100
putstr "${C}PedestalFile" "$work/pedestal.ccped"
put "${C}LoadPedestal" 1
hdf5_stream second 40
replay "$data" 40
wait_for "${P}HDF1:Capture_RBV" 0
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] ||
    fail "the loaded pedestal is not Ready: $(getstr "${C}StatusMessage_RBV")"
again=$(get "${C}TotalClusters_RBV")
[ "$again" = "$expected" ] || fail "after a restart: $again clusters, before: $expected"
$python "$(dirname "$0")/ioc_hdf5.py" "$work/second.h5" "$work/ours.clust" ||
    fail "after a restart the HDF5 file differs"
echo "ok: after a restart, LoadPedestal and with blocking callbacks, the same $again clusters"
echo "the example IOC passes"
