#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_restart.sh: restarts and overload. The example IOC with autosave,
# set up (settings off their defaults, a pedestal trained and saved, a
# mask and an η calibration loaded, a gain map applied, LoadFilesAtStart
# Yes) and killed with SIGKILL mid-acquisition, comes back with every
# setting and with that pedestal, mask, calibration and gain map in
# force: a replayed run gives the clusters, spectrum, counting image and
# interpolated image clusterfind finds with them. Then under full load: the plugin disabled and enabled
# again and again while frames flow, and its queue overflowing, the
# source faster than the finder, for OVERLOAD_SECONDS (default 60, at
# least 20; the resident memory is sampled every 10 s): no crash; frames
# sent while the plugin is disabled are not taken; enabled throughout,
# its arrays and its counted drops add up to the frames sent; every
# cluster array is published once, in order; the IOC's resident memory
# stays flat. SKIP (77) without EPICS, without autosave in the IOC, or
# without NumPy and h5py.
. "$(dirname "$0")/common.sh"
need_python "numpy h5py" "python3-numpy python3-h5py"
. "$(dirname "$0")/ioc_common.sh"
grep -q '^epicsEnvSet("AUTOSAVE"' "$builddir/ioc/envPaths" ||
    { echo "SKIP: the example IOC has no autosave (configure found no autosave beside asyn)"; exit 77; }
# Its IOC runs flat out (replays, overload): alone among the IOC tests
# (ioc_common.sh), and niced for the other tests that make -j runs.
alone_among_ioc_tests
ioc_nice=10
overload_seconds=${OVERLOAD_SECONDS:-60}
[ "$overload_seconds" -ge 20 ] || overload_seconds=20

# What the IOC must find after the restart, offline: clusterfind with the
# same pedestal (trained on the same dark run; a saved pedestal restores
# exactly), mask, settings and η calibration.
raw_run 11
$python -c "import numpy, sys; m = numpy.zeros((400, 400), numpy.uint8); m[100:140, :] = 1; numpy.save(sys.argv[1], m)" \
    "$work/mask.npy" || fail "cannot write the mask"
$python -c "import numpy, sys; numpy.save(sys.argv[1], numpy.random.default_rng(5).uniform(0.9, 1.1, (400, 400)))" \
    "$work/gain.npy" || fail "cannot write the gain map"
find() {
    "$clusterfind" --pedestal "$dark" --data "$data" --pedestal-frames 100 \
        --backend cpu --cluster-size 5 --nsigma 4.5 --mask "$work/mask.npy" \
        --energy-window 600:1100 --bins 300 --min 100 --max 1600 \
        --gain-map "$work/gain.npy" "$@" \
        >"$work/find.txt" 2>&1 || fail "clusterfind $*: $(cat "$work/find.txt")"
}
find --eta-bins 20 --eta-calibrate "$work/saved.eta"
find --eta-map "$work/saved.eta" --subpixels 3 --image "$work/image.npy" \
    --counts "$work/counts.npy" --spectrum "$work/spectrum.csv"
expected=$(sed -n 's/^clusters: *\([0-9]*\) .*/\1/p' "$work/find.txt")
[ -n "$expected" ] && [ "$expected" -gt 0 ] || fail "no cluster count from clusterfind"
awk -F, 'NR > 1 && $1 !~ /inf/ && $2 !~ /inf/ && !/^#/ {print $3}' \
    "$work/spectrum.csv" >"$work/spectrum.txt"
# The finder's settings, each off its default, as clusterfind has them,
# and some of the source's.
settings="NSigma:4.5 ClusterSizeX:5 ClusterSizeY:5 MaxClusters:3000 NumStreams:3
    MaxBatch:16 PedestalFrames:100 SpectrumBins:300 SpectrumMin:100
    SpectrumMax:1600 SpectrumPeriod:0.5 WindowHigh:1100 WindowLow:600
    WindowEnable:1 PeakLow:700 PeakHigh:1000 AduPerKeV:100 EtaBins:20
    Subpixels:3"
source_settings="AcquirePeriod:0.002 MoenchFlux:2000 MoenchSeed:7 MoenchCycleFrames:20"

# saved PV VALUE: until autosave's file holds PV at VALUE (60 s at most).
# Autosave writes every PV of the set at once: when the last one written
# is in, every earlier one is.
saved() {
    for _ in $(seq 300); do
        grep -q "^$1 $2\$" "$autosave/iocClusterCUDA.sav" 2>/dev/null && return 0
        sleep 0.2
    done
    fail "autosave did not save $1 $2"
}
# kill_ioc: SIGKILL, as a crash or a power cut would: nothing shuts down.
kill_ioc() {
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    exec 9>&-
    pid=""
}

autosave=$work/autosave # both IOCs' own, shared
export AUTOSAVE_PERIOD=4  # autosave's least
start_ioc 1
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
for setting in $settings; do
    put "${C}${setting%%:*}" "${setting#*:}"
done
for setting in $source_settings; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done
replay "$dark" 100
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] || fail "the pedestal did not train"
putstr "${C}PedestalFile" "$work/pedestal.ccped"
put "${C}SavePedestal" 1
[ -s "$work/pedestal.ccped" ] || fail "no pedestal file: $(getstr "${C}StatusMessage_RBV")"
# The mask comes after the pedestal was saved, so that only MaskFile
# brings it back.
putstr "${C}MaskFile" "$work/mask.npy"
put "${C}LoadMask" 1
masked=$(get "${C}MaskedPixels_RBV")
[ "$masked" = 16000 ] || fail "the mask takes out $masked pixels, not 16000"
putstr "${C}EtaFile" "$work/saved.eta"
put "${C}EtaMode" Interpolate
putstr "${C}GainMapFile" "$work/gain.npy"
put "${C}GainMode" Apply # loads GainMapFile: no map is held
put "${C}LoadFilesAtStart" Yes
replay "$data" 40
before=$(get "${C}TotalClusters_RBV")
[ "$before" = "$expected" ] || fail "before the restart: $before clusters, clusterfind $expected"
for setting in $settings EtaMode GainMode LoadFilesAtStart PedestalFile MaskFile EtaFile GainMapFile; do
    echo "${setting%%:*} $(getstr "${C}${setting%%:*}_RBV")"
done >"$work/settings.txt"
for setting in $source_settings; do
    echo "${setting%%:*} $(getstr "${P}cam1:${setting%%:*}_RBV")"
done >"$work/source_settings.txt"
saved "${P}cam1:NumImages" 40 # the last setting written
echo "ok: set up and saved: $(tr '\n' ' ' <"$work/settings.txt")"

# Killed mid-acquisition (the data run looped).
put "${P}cam1:ImageMode" 2
flowing=$(get "${C}ArrayCounter_RBV")
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
for _ in $(seq 300); do
    [ "$(get "${C}ArrayCounter_RBV")" -gt $((flowing + 20)) ] && break
    sleep 0.2
done
[ "$(get "${P}cam1:Acquire_RBV")" = 1 ] && [ "$(get "${C}ArrayCounter_RBV")" -gt $((flowing + 20)) ] ||
    fail "no acquisition under way to kill"
kill_ioc
start_ioc 2
for setting in $settings EtaMode GainMode LoadFilesAtStart PedestalFile MaskFile EtaFile GainMapFile; do
    echo "${setting%%:*} $(getstr "${C}${setting%%:*}_RBV")"
done | cmp -s - "$work/settings.txt" || fail "after the restart, the settings differ"
for setting in $source_settings; do
    echo "${setting%%:*} $(getstr "${P}cam1:${setting%%:*}_RBV")"
done | cmp -s - "$work/source_settings.txt" || fail "after the restart, the source's settings differ"
[ "$(get "${C}EnableCallbacks_RBV")" = 1 ] || fail "the plugin's callbacks were not restored"
getstr "${C}EtaCalibration_RBV" | grep -q "from $work/saved.eta" ||
    fail "the calibration in force: $(getstr "${C}EtaCalibration_RBV")"
echo "ok: after SIGKILL mid-acquisition and a restart, every setting is autosave's, the calibration $work/saved.eta is in force"

# The first frame loads the saved pedestal and mask: the run's clusters,
# spectrum, counting image and interpolated image are clusterfind's.
put "${P}image1:EnableCallbacks" 1
put "${P}interp1:EnableCallbacks" 1
replay "$data" 40
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] ||
    fail "the pedestal is not the saved one: $(getstr "${C}StatusMessage_RBV")"
[ "$(get "${C}MaskedPixels_RBV")" = 16000 ] ||
    fail "$(get "${C}MaskedPixels_RBV") pixels masked after the restart, not 16000"
getstr "${C}StatusMessage_RBV" |
    grep -q "pedestal loaded from $work/pedestal.ccped; mask loaded from $work/mask.npy; gain map loaded from $work/gain.npy" ||
    fail "the status does not say what was loaded: $(getstr "${C}StatusMessage_RBV")"
getstr "${C}GainMapInUse_RBV" | grep -q "gain.npy (relative): applied" ||
    fail "after the restart, the gain map in use: $(getstr "${C}GainMapInUse_RBV")"
after=$(get "${C}TotalClusters_RBV")
[ "$after" = "$expected" ] || fail "after the restart: $after clusters, clusterfind $expected"
published_equal "${C}Spectrum_RBV" "$work/spectrum.txt" ||
    fail "after the restart, the spectrum differs from clusterfind's"
published image_equal "${P}image1:ArrayData" "$work/counts.npy" ||
    fail "after the restart, the counting image differs from clusterfind's"
published image_equal "${P}interp1:ArrayData" "$work/image.npy" ||
    fail "after the restart, the interpolated image differs from clusterfind's"
echo "ok: the saved pedestal and mask, and the gain map of GainMode Apply, loaded at the first frame; $after clusters, the spectrum, the counting image and the interpolated image are clusterfind's"

# Under full load: simulated frames (20 cycled) as fast as the source
# makes them, without a gain map. MaxClusters 4 keeps the cluster arrays
# small, so that NDFileHDF5 writes every one, with its uniqueId and
# cluster counts.
put "${C}EtaMode" Off
put "${C}GainMode" Off
put "${C}WindowEnable" 0
for setting in ClusterSizeX:3 ClusterSizeY:3 MaxClusters:4; do
    put "${C}${setting%%:*}" "${setting#*:}"
done
put "${P}image1:EnableCallbacks" 0
put "${P}interp1:EnableCallbacks" 0
for setting in MoenchSource:0 MoenchDarkFrames:0 MoenchCycleFrames:20 AcquirePeriod:0; do
    put "${P}cam1:${setting%%:*}" "${setting#*:}"
done
putstr "${P}HDF1:FilePath" "$work/"
putstr "${P}HDF1:FileTemplate" "%s%s.h5"
for setting in AutoIncrement:0 FileWriteMode:2 LazyOpen:1 NumCapture:0 EnableCallbacks:1; do
    put "${P}HDF1:${setting%%:*}" "${setting#*:}"
done
# stream NAME: frames flow, continuously, and NDFileHDF5 writes every
# cluster array to NAME.h5; counters before are kept.
stream() {
    putstr "${P}HDF1:FileName" "$1"
    "$caput" -w 1 "${P}HDF1:Capture" 1 >/dev/null 2>&1 || true # until Capture 0
    sent=$(get "${P}cam1:ArrayCounter_RBV")
    taken=$(get "${C}ArrayCounter_RBV")
    dropped=$(get "${C}DroppedArrays_RBV")
    stored=$("$caget" -w $ca_wait -t -f0 "${C}TotalClusters_RBV")
    cut=$("$caget" -w $ca_wait -t -f0 "${C}DroppedClusters_RBV")
    written_dropped=$(get "${P}HDF1:DroppedArrays_RBV")
    put "${P}cam1:ImageMode" 2
    "$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
}
# settle: stops the source, waits for the plugin's queue to empty, then
# sends one frame more and waits until it is out of the plugin and of
# NDFileHDF5: arrays leave in order, so every one before is out too. The
# counters then say what the stream did: frames sent, taken and dropped
# by the plugin, clusters stored and cut by it, arrays written and
# dropped by NDFileHDF5.
settle() {
    put "${P}cam1:Acquire" 0
    wait_for "${P}cam1:DetectorState_RBV" 0 # Idle: its last frame is out
    wait_for "${C}QueueFree" "$(get "${C}QueueSize_RBV")"
    put "${P}cam1:ImageMode" 0
    put "${P}cam1:Acquire" 1
    last=$(get "${P}cam1:ArrayCounter_RBV")
    wait_for "${C}UniqueId_RBV" "$last"
    wait_for "${P}HDF1:UniqueId_RBV" "$last"
    put "${P}HDF1:Capture" 0
    sent=$(($(get "${P}cam1:ArrayCounter_RBV") - sent))
    taken=$(($(get "${C}ArrayCounter_RBV") - taken))
    dropped=$(($(get "${C}DroppedArrays_RBV") - dropped))
    stored=$(($("$caget" -w $ca_wait -t -f0 "${C}TotalClusters_RBV") - stored))
    cut=$(($("$caget" -w $ca_wait -t -f0 "${C}DroppedClusters_RBV") - cut))
    written_dropped=$(($(get "${P}HDF1:DroppedArrays_RBV") - written_dropped))
    [ "$(get "${C}BadArrays_RBV")" = 0 ] || fail "arrays were refused"
}
# published_once NAME: NAME.h5 holds every cluster array the plugin
# published (those NDFileHDF5 dropped aside), each once, in uniqueId
# order, and (when it dropped none) their clusters are the plugin's count.
published_once() {
    $python - "$work/$1.h5" "$taken" "$written_dropped" "$stored" "$cut" <<'PYTHON' ||
import sys
import h5py
import numpy
path, taken, written_dropped, stored, cut = sys.argv[1], *map(int, sys.argv[2:])
with h5py.File(path, 'r') as f:
    attributes = f['/entry/instrument/NDAttributes']
    ids = attributes['NDArrayUniqueId'][()].astype(numpy.int64)
    counts = attributes['NumClusters'][()].astype(numpy.int64)
    beyond = attributes['DroppedClusters'][()].astype(numpy.int64)
problems = []
if len(ids) + written_dropped != taken:
    problems.append('%d arrays written and %d dropped by NDFileHDF5, %d taken'
                    % (len(ids), written_dropped, taken))
if (numpy.diff(ids) <= 0).any():
    k = int(numpy.argmax(numpy.diff(ids) <= 0))
    problems.append('uniqueId %d follows %d' % (ids[k + 1], ids[k]))
if written_dropped == 0 and (counts.sum() != stored or beyond.sum() != cut):
    problems.append('the arrays hold %d clusters (%d cut), the plugin counted %d (%d)'
                    % (counts.sum(), beyond.sum(), stored, cut))
print('; '.join(problems) if problems else
      '%d arrays, uniqueIds %d to %d, strictly increasing' % (len(ids), ids[0], ids[-1]))
sys.exit(1 if problems else 0)
PYTHON
        fail "$1.h5: not every cluster array once and in order"
}

# The plugin disabled and enabled again, 20 times, while frames flow.
stream toggled
for _ in $(seq 20); do
    put "${C}EnableCallbacks" 0
    sleep 0.3
    put "${C}EnableCallbacks" 1
    sleep 0.3
done
kill -0 "$pid" 2>/dev/null || fail "the IOC died while the plugin was disabled and enabled"
settle
[ "$taken" -gt 0 ] && [ $((taken + dropped)) -lt "$sent" ] ||
    fail "$sent frames sent, $taken taken and $dropped dropped by the plugin: disabled, it took frames, or enabled, none"
published_once toggled
echo "ok: disabled and enabled 20 times while $sent frames flowed: $taken taken, $dropped dropped, the rest sent while it was disabled; every cluster array published once, in order"

# Overload: a queue of 10 arrays, the source faster than the finder.
put "${C}QueueSize" 10
stream overload
rss() { awk '$1 == "VmRSS:" {print $2}' /proc/"$pid"/status; }
: >"$work/rss.txt"
for _ in $(seq $((overload_seconds / 10))); do
    sleep 10
    kill -0 "$pid" 2>/dev/null || fail "the IOC died under overload"
    rss >>"$work/rss.txt"
done
settle
[ "$dropped" -gt 0 ] || fail "no array dropped: the source did not outrun the plugin ($sent frames)"
[ $((taken + dropped)) = "$sent" ] ||
    fail "$sent frames sent; the plugin took $taken and dropped $dropped"
published_once overload
echo "ok: overloaded for $overload_seconds s: $sent frames sent, $taken taken, $dropped dropped and counted; every cluster array published once, in order"
# Flat: the NDArray pools keep their largest size, reached before the
# first sample, so what is resident stays put (it did not move by a kB in
# the runs measured). 16 MiB is a generous bound that a leak of frames
# still crosses: one 320 KB frame lost in every 1,000 arrays taken grows
# it by 20 MB over the 60,000 a minute takes on two cores. Under
# AddressSanitizer the resident memory also holds its quarantine of
# freed memory, which fills as the IOC runs.
samples=$(paste -s -d ' ' "$work/rss.txt")
case ${sanitizers:-no} in
*address*)
    echo "ok: resident memory (kB, every 10 s) $samples; not judged under AddressSanitizer, whose quarantine grows" ;;
*)
    growth=$(awk 'NR == 1 {first = $1} $1 - first > most {most = $1 - first} END {print most + 0}' "$work/rss.txt")
    [ "$growth" -lt 16384 ] ||
        fail "the IOC's resident memory grew by $growth kB under overload: $samples"
    echo "ok: resident memory flat under overload, grown by $growth kB (kB, every 10 s: $samples)" ;;
esac
echo "the example IOC survives restarts and overload"
