#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_hdf5_writers.sh: the example IOC's writers for rates one NDFileHDF5
# cannot take (iocBoot/clusterWriters.cmd): with HDF1 moved behind
# Scatter1 and HDF1 to HDF3 capturing, each cluster array of a raw run is
# written by one of them, every writer gets some, and the files together,
# in NDArrayUniqueId order, hold the clusters clusterfind finds. SKIP (77)
# when the build has no EPICS.
. "$(dirname "$0")/common.sh"

. "$(dirname "$0")/ioc_common.sh"
python=python3
command -v /usr/bin/python3 >/dev/null && python=/usr/bin/python3
$python -c "import h5py, numpy" 2>/dev/null ||
    { echo "SKIP: python3 with h5py and numpy is needed (apt-get install python3-h5py)"; exit 77; }

mkdir -p "$work/run"
"$simulate_raw" "$work/run" 100 40 23 >/dev/null || fail "simulate_raw failed"
dark=$work/run/dark_master_0.json
data=$work/run/data_master_0.json
"$clusterfind" --pedestal "$dark" --data "$data" --pedestal-frames 100 \
    --backend cpu --output "$work/ours.clust" >"$work/clusterfind.txt" 2>&1 ||
    fail "clusterfind: $(cat "$work/clusterfind.txt")"

start_ioc 1
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0
put "${C}PedestalFrames" 100
replay "$dark" 100
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] || fail "the pedestal is not Ready"

writers="HDF1 HDF2 HDF3"
put "${P}HDF1:NDArrayPort" SCATTER1
put "${P}Scatter1:EnableCallbacks" 1
for w in $writers; do
    putstr "${P}$w:FilePath" "$work/"
    putstr "${P}$w:FileName" "$w"
    putstr "${P}$w:FileTemplate" "%s%s.h5"
    put "${P}$w:AutoIncrement" 0
    put "${P}$w:FileWriteMode" 2
    put "${P}$w:LazyOpen" 1
    put "${P}$w:NumCapture" 0 # until Capture is set to 0
    put "${P}$w:EnableCallbacks" 1
    "$caput" -w 1 "${P}$w:Capture" 1 >/dev/null 2>&1 || true
done
replay "$data" 40
captured() {
    total=0
    for w in $writers; do total=$((total + $(get "${P}$w:NumCaptured_RBV"))); done
    [ "$total" = 40 ]
}
poll captured || fail "the writers captured $total of 40 arrays"
files=""
for w in $writers; do
    n=$(get "${P}$w:NumCaptured_RBV")
    [ "$n" -gt 0 ] || fail "$w was given no array: Scatter1 did not share them out"
    put "${P}$w:Capture" 0
    wait_for "${P}$w:Capture_RBV" 0
    files="$files $work/$w.h5"
    shares="${shares:+$shares, }$w $n"
done
[ "$(get "${P}Scatter1:DroppedArrays_RBV")" = 0 ] || fail "Scatter1 dropped arrays"
# shellcheck disable=SC2086
$python "$(dirname "$0")/ioc_hdf5.py" $files "$work/ours.clust" ||
    fail "the writers' files and clusterfind's .clust differ"
echo "ok: 40 arrays shared out by Scatter1 ($shares), each written once, the clusters clusterfind finds"
echo "the example IOC's several HDF5 writers pass"
