#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_slsdetector.sh: the real MÖNCH chain. PSI's virtual MÖNCH server,
# moenchSimReceiver (PSI's receiver code, our simulated photons in its
# frames), the receiver's ZMQ stream and PSI's slsDetector areaDetector
# driver feed NDPluginClusterCUDA in the example IOC iocMoench:
# - dark frames train the pedestal, then 2,000 data frames at 500 Hz:
#   every array the driver made reaches the plugin (the two ArrayCounters
#   equal, 0 DroppedArrays); the frames missing against the receiver's
#   count are the first of an acquisition (the driver subscribes to the
#   stream only once acquire() runs), are counted, and the plugin's
#   clusters, spectrum and hit map are what the core finds in exactly the
#   frames that arrived (tools/source_totals, given their frame numbers
#   from the receiver's raw files: on two busy cores the receiver's UDP
#   socket, a dozen frames deep at the kernel's rmem_max, overflows now
#   and then, and those frames never exist for anything of ours);
# - the hit map over PV Access (NDPluginPva) is the core's too, where the
#   IOC is built with PVA;
# - the receiver's raw files of the same run, cut to those frames, give
#   clusterfind the clusters NDFileHDF5 wrote from the plugin, frame by
#   frame;
# - PSI's plain slsReceiver with the server's fixed pattern: no clusters,
#   and a status that says the noise is 0;
# - an acquisition stopped and another with new NumFrames and period,
#   and ReceiverMode 0 (the stream's timer mode, a frame now and then):
#   every frame accounted for, what the receiver caught, what it streamed
#   (a subscriber of the test's own, tests/sls_stream.py), what the
#   driver made of the stream and what the plugin took; driver and
#   plugin agree exactly, and the stream's frames the driver did not get
#   are the first, streamed before its subscription joined;
# - PSI's frame modes set on the driver (JsonFrameMode NewPedestal, then
#   Pedestal, then Frame; the plugin's own FrameMode Pedestal midway
#   through an acquisition, stopped once it has taken effect, where the
#   driver's is refused) take the
#   plugin from dark frames to data: its clusters, spectrum,
#   hit map and pedestal are the core's on exactly those arrays, and
#   FollowDriverModes turns the following off and on;
# - the iocMoench screens name records of this IOC (tests/opi_check.py),
#   and are rendered in MEDM and caQtDM (where installed) against it,
#   frames flowing and the interpolated image made (tests/opi_render.sh);
# - the driver refused no write while acquiring (iocMoench holds ADCore's
#   pool poll then: db/slsDetectorIdlePoll.template).
# Everything on loopback, on ports and shared memory of this test's own;
# every process is stopped by PID and the shared memory removed, also on
# failure. SKIP (77) without the sls stack or PSI's driver.
. "$(dirname "$0")/common.sh"
ioc=$builddir/ioc/run-iocMoench
# (A "." of a missing file would end the shell: without EPICS there is none.)
[ -r "$builddir/ioc/epicsTools" ] && . "$builddir/ioc/epicsTools"
if [ ! -x "$ioc" ] || [ -z "${SLS_BIN:-}" ]; then
    echo "SKIP: the build has no iocMoench (configure did not find slsDetectorPackage, PSI's slsDetector driver and autosave beside EPICS)"
    exit 77
fi
. "$(dirname "$0")/ioc_common.sh"
python=python3
command -v /usr/bin/python3 >/dev/null && python=/usr/bin/python3
$python -c "import h5py, numpy" 2>/dev/null ||
    { echo "SKIP: python3 with h5py and numpy is needed (apt-get install python3-h5py)"; exit 77; }
top=$(cd "$(dirname "$0")/.." && pwd)
need_pyclients # sls_stream.py listens with pyzmq

# 500 Hz: the rate the chain kept on two cores loaded by CI's other tests
# and two busy loops, under AddressSanitizer too. At 1 kHz the virtual
# server and receiver lost UDP packets under ASan (8,899 of 10,000 frames
# caught), and with the IOC's threads time-shared (tests/ioc_common.sh)
# the plain build's driver fell behind the stream in CI: ZMQ dropped
# 4,000 of 10,000 frames in mid-acquisition. 2,000 data frames: the same
# checks account for each one by one.
dark=300 pedestal=196 frames=2000 cycle=500 seed=3 period=0.002
# Ports of this test's own: the upper half of the slot ioc_common.sh
# claimed (tools/ioc_process.sh's claim_ports).
. "$top/tools/sls_chain.sh"
sls_chain_ports $((port_base + 8))
export SLS_CONFIG="$work/moench.config" PINNED_ARRAYS=1
export CLUSTER_OUTPUT_THREADS=2
. "$top/tests/opi_render.sh"
trap 'exit_report $?; render_stop; stop_ioc; stop_sls; rm -rf "$work"' EXIT

sls_put() { "$SLS_BIN/sls_detector_put" "$@" >"$work/sls_put.log" 2>&1 || { cat "$work/sls_put.log"; fail "sls_detector_put $*"; }; }
# acquire FRAMES PERIOD: one acquisition through the driver, to its end.
acquire() {
    put "${P}cam1:NumFrames" "$1"
    put "${P}cam1:AcquirePeriod" "$2"
    "$caput" -c -w 120 "${P}cam1:Acquire" 1 >/dev/null || fail "the acquisition of $1 frames did not end"
    # The driver's last arrays may still be in the plugin's queue.
    caught_up "${C}ArrayCounter_RBV" "${P}cam1:ArrayCounter_RBV"
}

# Where the frames of an acquisition went: listen_stream before it starts,
# stream_heard after it ended. A subscriber of the test's own
# (tests/sls_stream.py) sees what the receiver streamed; the driver's
# ArrayCounter counts what reached the driver, the plugin's what it took.
# Driver and plugin must agree exactly; what the stream carried and the
# driver did not get are the acquisition's first frames, sent before the
# driver's subscription joined (PSI's client connects it only as it
# starts the acquisition: docs/ioc.md, troubleshooting). The driver must
# keep up with the stream: ZMQ drops what a subscriber 1000 frames behind
# cannot take, in mid-acquisition, and the test would not know which
# frames the plugin saw.
listen_stream() {
    rm -f "$work/stream_ready"
    "$pyclients" "$top/tests/sls_stream.py" "$zmq_port" "$work/streamed.txt" \
        "$work/stream_ready" >"$work/stream.log" 2>&1 &
    listener=$!
    poll test -e "$work/stream_ready" || fail "sls_stream.py did not subscribe: $(cat "$work/stream.log")"
    made=$(get "${P}cam1:ArrayCounter_RBV") took=$(get "${C}ArrayCounter_RBV")
}
# stream_heard: sets caught (rx_framescaught), streamed (the frames the
# stream carried, their numbers in $work/streamed.txt), made (the
# driver's arrays) and took (the plugin's), once the plugin has taken
# every array the driver made.
stream_heard() {
    wait $listener || fail "sls_stream.py: $(cat "$work/stream.log")"
    caught_up "${C}ArrayCounter_RBV" "${P}cam1:ArrayCounter_RBV"
    made=$(($(get "${P}cam1:ArrayCounter_RBV") - made))
    took=$(($(get "${C}ArrayCounter_RBV") - took))
    caught=$(sls_get rx_framescaught)
    streamed=$(wc -l <"$work/streamed.txt")
    [ "$took" = "$made" ] || fail "the driver made $made arrays, the plugin took $took"
    [ "$made" -le "$streamed" ] ||
        fail "the driver made $made arrays of the $streamed frames streamed"
}
# streamed_acquire FRAMES PERIOD: acquire, listened to.
streamed_acquire() {
    listen_stream
    acquire "$1" "$2"
    stream_heard
}

start_sls_server || fail "the virtual server did not start"
start_sls_receiver "$builddir/moenchSimReceiver/moenchSimReceiver" --port $receiver_port \
    --dark $dark --cycle $cycle --seed $seed || fail "moenchSimReceiver did not start"
write_sls_config "$SLS_CONFIG"
start_ioc 1
grep -q "moenchSimReceiver: slsReceiver .* on TCP port $receiver_port" "$work/receiver.log" ||
    fail "no word from moenchSimReceiver: $(cat "$work/receiver.log")"
# The top-level screen iocMoench (and what it opens) names records of
# this IOC (tests/opi_screens.sh checks the example IOC's screens); PSI's
# driver's screens are in its op folder.
ioc_command "dbl > $work/records.txt"
sls_op=$(sed -n 's/^epicsEnvSet("SLS_DRIVER", "\(.*\)")$/\1/p' "$builddir/ioc/envPaths")/slsDetectorApp/op
python3 "$top/tests/opi_check.py" "$work/records.txt" "$top/opi" \
    "$(dirname "$ADCORE_OP_ADL"):$sls_op" "$top/iocBoot/iocMoench/st.cmd" "$P" \
    >"$work/check.txt" || { cat "$work/check.txt"; fail "the iocMoench screens do not match the IOC"; }
sed 's/^/ok: /' "$work/check.txt"

# The driver's template writes ReceiverMode 0 (a frame every 500 ms to
# the stream) and its own NumFrames and times at start-up: set them.
mkdir -p "$work/raw"
for setting in cam1:ReceiverMode:1 cam1:AcquireTime:0.00001 \
    cam1:ArrayCallbacks:1 cam1:AutoSave:1 Cluster1:EnableCallbacks:1 \
    Cluster1:PedestalFrames:$pedestal Cluster1:MaxClusters:3000 \
    Cluster1:SpectrumPeriod:0.2 image1:EnableCallbacks:1; do
    put "$P${setting%:*}" "${setting##*:}"
done
putstr "${P}cam1:FilePath" "$work/raw"
# Every cluster array to HDF5, the dark frames beyond the pedestal's too.
putstr "${P}HDF1:FilePath" "$work/"
putstr "${P}HDF1:FileName" chain
putstr "${P}HDF1:FileTemplate" "%s%s.h5"
for setting in AutoIncrement:0 EnableCallbacks:1 FileWriteMode:2 LazyOpen:1 \
    NumCapture:$((frames + dark)); do
    put "${P}HDF1:${setting%:*}" "${setting#*:}"
done
"$caput" -w 1 "${P}HDF1:Capture" 1 >/dev/null 2>&1 || true

# caught NAME FRAMES PERIOD: an acquisition whose raw files are NAME;
# sets caught (frames the receiver caught), got (arrays the plugin got,
# the last of those) and late (the first ones the plugin did not get).
caught() {
    putstr "${P}cam1:FileName" "$1"
    put "${P}cam1:FileNumber" 0
    before=$(get "${C}ArrayCounter_RBV")
    acquire "$2" "$3"
    got=$(($(get "${C}ArrayCounter_RBV") - before))
    caught=$(sls_get rx_framescaught)
    late=$((caught - got))
    [ "$caught" -gt 0 ] && [ $late -ge 0 ] ||
        fail "the receiver caught $caught of $2 frames, the plugin got $got"
}
caught dark $dark $period
caught_dark=$caught lost_dark=$late got_dark=$got
[ $got_dark -ge $pedestal ] ||
    fail "$got_dark of $dark dark frames reached the plugin (the receiver caught $caught_dark): too few to train on"
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] ||
    fail "the pedestal did not train: $(getstr "${C}StatusMessage_RBV")"
caught data $frames $period
caught_data=$caught lost=$late got_data=$got
"$caput" -w 5 "${P}HDF1:Capture" 0 >/dev/null 2>&1 || true
wait_for "${P}HDF1:Capture_RBV" 0
[ "$(get "${P}cam1:ArrayCounter_RBV")" = "$(get "${C}ArrayCounter_RBV")" ] ||
    fail "the driver made $(get "${P}cam1:ArrayCounter_RBV") arrays, the plugin took $(get "${C}ArrayCounter_RBV")"
[ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "the plugin dropped $(get "${C}DroppedArrays_RBV") arrays"
echo "ok: the receiver caught $caught_dark of $dark dark and $caught_data of $frames data frames at a $period s period; $got_dark and $got_data reached the plugin (missing: $lost_dark and $lost, the first of their acquisitions, which the driver subscribes to late), every array the driver made, 0 dropped"

# The receiver's raw files, cut to what reached the plugin: the first
# PEDESTAL arrays trained it, the rest (the last dark frames, then the
# data frames) were searched. Their frame numbers say which frames those
# were.
$python "$top/tests/raw_subset.py" --numbers "$work/train_numbers.txt" \
    "$work/train_master_0.json" \
    "$work/raw/dark_master_0.json:$lost_dark:$pedestal" || fail "raw_subset.py failed"
$python "$top/tests/raw_subset.py" --numbers "$work/search_numbers.txt" \
    "$work/search_master_0.json" \
    "$work/raw/dark_master_0.json:$((lost_dark + pedestal)):$((got_dark - pedestal))" \
    "$work/raw/data_master_0.json:$lost:$got_data" || fail "raw_subset.py failed"
cat "$work/train_numbers.txt" "$work/search_numbers.txt" >"$work/frame_numbers.txt"

# The core alone on exactly the frames that arrived.
"$builddir/tools/source_totals" --frame-numbers "$work/frame_numbers.txt" \
    --dark $dark --pedestal $pedestal --cycle $cycle --seed $seed --max-clusters 3000 \
    --spectrum "$work/spectrum.txt" --hitmap "$work/hitmap.txt" \
    >"$work/expected.txt" || fail "source_totals failed"
expected=$(sed -n 's/^clusters //p' "$work/expected.txt")
total=$("$caget" -t -f0 -w $ca_wait "${C}TotalClusters_RBV")
[ "$total" = "$expected" ] || fail "the plugin found $total clusters, the core $expected in the same frames"
published_equal "${C}Spectrum_RBV" "$work/spectrum.txt" || fail "the spectrum differs from the core's"
published_equal "${P}image1:ArrayData" "$work/hitmap.txt" || fail "the hit map differs from the core's"
echo "ok: $total clusters, the spectrum and the hit map, as the core finds in the frames that arrived"
# The same hit map over PV Access, where the IOC is built with it.
if grep -q '"PVA"' "$builddir/ioc/envPaths"; then
    "$pyclients" - "${P}Pva:HitMap" "$work/hitmap.txt" <<'PYTHON' ||
import sys
import numpy
from p4p.client.thread import Context
hits = Context("pva").get(sys.argv[1], timeout=5)
want = numpy.loadtxt(sys.argv[2], dtype=numpy.int64)
sys.exit(0 if hits.size == want.size and (hits.ravel() == want).all() else 1)
PYTHON
        fail "the hit map over PV Access (${P}Pva:HitMap) differs from the core's"
    echo "ok: the hit map over PV Access is the core's too"
fi

"$clusterfind" --pedestal "$work/train_master_0.json" --data "$work/search_master_0.json" \
    --pedestal-frames $pedestal --output "$work/raw.clust" >"$work/clusterfind.log" 2>&1 ||
    { cat "$work/clusterfind.log"; fail "clusterfind failed on the receiver's files"; }
rm -f "$work"/raw/*.raw "$work"/search_d0_f0_0.raw
$python "$top/tests/ioc_hdf5.py" "$work/chain.h5" "$work/raw.clust" ||
    fail "NDFileHDF5's clusters differ from clusterfind's on the receiver's files"
rm -f "$work/chain.h5"
echo "ok: clusterfind on the receiver's raw files finds, frame by frame, the clusters the plugin published"

# PSI's frame modes from the driver, as its screen sets them
# (FollowDriverModes is Yes): JsonFrameMode NewPedestal resets the
# plugin's pedestal and makes the frames pedestal frames, Pedestal keeps
# them coming, Frame finds. The driver cannot change its mode while it
# acquires (the receiver refuses the write), but the plugin's own
# FrameMode can: written mid-acquisition, Pedestal and then Frame take
# effect between batches. The plugin's clusters, spectrum, hit map and pedestal
# must then be the core's on exactly those arrays, each a pedestal frame
# or not as the plugin took it: whole acquisitions by their mode, and in
# the acquisition whose mode changed midway, the arrays that left no
# cluster array in HDF5.
[ "$(getstr "${C}FollowDriverModes_RBV")" = Yes ] || fail "FollowDriverModes is not Yes at start"
put "${C}SpectrumReset" 1
put "${C}HitMapReset" 1
# The driver's detector mode Analog: the plugin sums the analog image too.
put "${P}cam1:JsonDetectorMode" Analog
wait_for "${C}DetectorMode_RBV" 1
# drive MODE N: the driver's JsonFrameMode MODE, which the plugin's
# FrameMode (state N) follows.
drive() {
    put "${P}cam1:JsonFrameMode" "$1"
    wait_for "${C}FrameMode_RBV" "$2"
}
# arrays NAME MARK: the frame numbers of the arrays of acquisition NAME
# that reached the plugin (after caught), each followed by MARK, added to
# modes_numbers.txt.
arrays() {
    $python "$top/tests/raw_subset.py" --numbers "$work/$1_numbers.txt" \
        "$work/$1_sub_master_0.json" "$work/raw/$1_master_0.json:$late:$got" ||
        fail "raw_subset.py failed"
    sed "s/\$/$2/" "$work/$1_numbers.txt" >>"$work/modes_numbers.txt"
    modes_arrays="$modes_arrays $1: $got of $caught caught;"
}
modes_arrays=""
drive NewPedestal 2
caught newdark 250 $period
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] ||
    fail "NewPedestal: the pedestal did not train again: $(getstr "${C}StatusMessage_RBV")"
[ "$(get "${C}TotalClusters_RBV")" = 0 ] || fail "NewPedestal: clusters found in pedestal frames"
arrays newdark " p"
drive Pedestal 1
caught moredark 40 $period
arrays moredark " p"
drive Frame 0
putstr "${P}HDF1:FileName" modes
put "${P}HDF1:NumCapture" 100000
"$caput" -w 1 "${P}HDF1:Capture" 1 >/dev/null 2>&1 || true
putstr "${P}cam1:FileName" midway
put "${P}cam1:FileNumber" 0
# A bounded acquisition: run until the mode changes were done, it
# streamed 7,550 frames under CI's load, of which the driver, 4,050 behind,
# got 3,500 (ZMQ dropped the rest in mid-acquisition). 1,200 frames at
# 250 Hz: fewer than the plugin's queue holds (2000), and a driver that
# took 230 frames a second there falls less than ZMQ's queues hold
# behind; the plugin cannot take them faster than they come, so the
# 1,050 after the first 150 leave seconds for the two mode changes.
put "${P}cam1:NumFrames" 1200
put "${P}cam1:AcquirePeriod" 0.004
# after N: until the plugin has taken N arrays more than it had.
after() {
    after_count=$(($(get "${C}ArrayCounter_RBV") + $1))
    poll eval '[ "$(get "${C}ArrayCounter_RBV")" -ge $after_count ]' ||
        fail "the plugin took $(get "${C}ArrayCounter_RBV") arrays, not $after_count"
}
listen_stream
"$caput" -c -w 120 "${P}cam1:Acquire" 1 >/dev/null &
acquiring=$!
after 100
put "${C}FrameMode" Pedestal
wait_for "${C}FrameMode_RBV" 1
after 50
put "${C}FrameMode" Frame
wait_for "${C}FrameMode_RBV" 0
after 100
put "${P}cam1:Acquire" 0
wait $acquiring || fail "the acquisition with modes changed midway did not end"
stream_heard
[ "$streamed" = "$caught" ] || fail "midway: the receiver caught $caught frames and streamed $streamed"
got=$took late=$((caught - made))
"$caput" -w 5 "${P}HDF1:Capture" 0 >/dev/null 2>&1 || true
wait_for "${P}HDF1:Capture_RBV" 0
[ "$(get "${P}HDF1:DroppedArrays_RBV")" = 0 ] || fail "NDFileHDF5 dropped cluster arrays"
[ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "the plugin dropped arrays while modes changed"
$python "$top/tests/raw_subset.py" --numbers "$work/midway_numbers.txt" \
    "$work/midway_sub_master_0.json" "$work/raw/midway_master_0.json:$late:$got" ||
    fail "raw_subset.py failed"
# Array j of the acquisition is the driver's array first + j; those with
# no cluster array were pedestal frames, a run of whole batches inside.
$python - "$work/midway_numbers.txt" "$work/modes.h5" >>"$work/modes_numbers.txt" <<'PYTHON' ||
import sys
import h5py
numbers = open(sys.argv[1]).read().split()
with h5py.File(sys.argv[2], "r") as h5:
    found = {int(u) for u in h5["/entry/instrument/NDAttributes/NDArrayUniqueId"][()]}
first = min(found)
marks = [first + j not in found for j in range(len(numbers))]
runs = sum(1 for j in range(1, len(marks)) if marks[j] != marks[j - 1])
if not any(marks) or marks[0] or marks[-1] or runs != 2:
    sys.exit("midway: pedestal frames at %s of %d arrays: not one run inside"
             % ([j for j, m in enumerate(marks) if m][:5], len(marks)))
sys.stderr.write("ok: %d of the %d arrays midway were pedestal frames\n"
                 % (sum(marks), len(marks)))
for number, mark in zip(numbers, marks):
    print(number + (" p" if mark else ""))
PYTHON
    fail "the modes changed midway are not a run of pedestal frames inside the acquisition"
rm -f "$work/modes.h5" "$work"/raw/*.raw "$work"/*_sub_d0_f0_0.raw
"$builddir/tools/source_totals" --frame-numbers "$work/modes_numbers.txt" \
    --dark $dark --pedestal $pedestal --cycle $cycle --seed $seed --max-clusters 3000 \
    --spectrum "$work/modes_spectrum.txt" --hitmap "$work/modes_hitmap.txt" \
    --maps "$work/modes" --analog "$work/modes_analog.txt" \
    >"$work/modes_expected.txt" || fail "source_totals failed"
expected=$(sed -n 's/^clusters //p' "$work/modes_expected.txt")
[ "$(getcount "${C}TotalClusters_RBV")" = "$expected" ] ||
    fail "after the frame modes the plugin found $(getcount "${C}TotalClusters_RBV") clusters, the core $expected (arrays reached the plugin:$modes_arrays midway: $got of $caught caught)"
publications=$(get "${C}Publications_RBV")
put "${C}Publish" 1
poll eval '[ "$(get "${C}Publications_RBV")" -gt "$publications" ]' || fail "no publication"
counts_equal "${C}Spectrum_RBV" "$work/modes_spectrum.txt" ||
    fail "after the frame modes the spectrum differs from the core's"
published counts_equal "${P}image1:ArrayData" "$work/modes_hitmap.txt" ||
    fail "after the frame modes the hit map differs from the core's"
if grep -q '"PVA"' "$builddir/ioc/envPaths"; then
    "$pyclients" - "$P" "$work/modes" <<'PYTHON' ||
import sys
from p4p.client.thread import Context
context = Context("pva")
# source_totals prints the maps' floats as the plugin's, to 6 decimals.
for name, suffix in (("PedestalMean", "mean"), ("PedestalNoise", "rms")):
    got = ["%.6f" % v for v in context.get(sys.argv[1] + "Pva:" + name, timeout=5).ravel()]
    want = open("%s_%s.txt" % (sys.argv[2], suffix)).read().split()
    if got != want:
        bad = [p for p, (a, b) in enumerate(zip(got, want)) if a != b]
        sys.exit("the pedestal's %s over PV Access differs from the core's in %d "
                 "pixels, e.g. %s" % (suffix, len(bad) + abs(len(got) - len(want)),
                                      [(p, got[p], want[p]) for p in bad[:3]]))
# The analog image, to the bit (the core's printed with 17 digits).
got = context.get(sys.argv[1] + "Pva:Analog", timeout=5).ravel()
want = [float(v) for v in open(sys.argv[2] + "_analog.txt").read().split()]
if list(got) != want:
    sys.exit("the analog image over PV Access differs from the core's in %d pixels"
             % sum(1 for a, b in zip(got, want) if a != b))
PYTHON
        fail "after the frame modes the pedestal or the analog image differs from the core's"
fi
found=$(grep -vc ' p$' "$work/modes_numbers.txt")
[ "$(getcount "${C}AnalogFrames_RBV")" = "$found" ] ||
    fail "the analog image holds $(getcount "${C}AnalogFrames_RBV") frames, not the $found found"
echo "ok: NewPedestal, Pedestal and Frame from the driver, and the plugin's Pedestal midway: $expected clusters, the spectrum, the hit map, the pedestal and the analog image of $(getcount "${C}AnalogFrames_RBV") frames (detector mode Analog from the driver), as the core finds in those arrays"
put "${P}cam1:JsonDetectorMode" Count
wait_for "${C}DetectorMode_RBV" 0
# Not following, the plugin keeps its mode; following again, it takes
# the driver's at once.
put "${C}FollowDriverModes" 0
put "${P}cam1:JsonFrameMode" Pedestal
sleep 1
[ "$(get "${C}FrameMode_RBV")" = 0 ] || fail "FrameMode followed the driver with FollowDriverModes No"
put "${C}FollowDriverModes" 1
wait_for "${C}FrameMode_RBV" 1
drive Frame 0
echo "ok: FollowDriverModes No keeps the plugin's FrameMode; Yes takes the driver's"

# The iocMoench screens rendered against it, frames flowing at 100 Hz
# (not saved), an eta calibration taken from them and the image made.
if find_renderers; then
    put "${P}cam1:AutoSave" 0
    put "${C}EtaMode" 1
    put "${P}image1:EnableCallbacks" 1
    put "${P}interp1:EnableCallbacks" 1
    put "${P}cam1:NumFrames" 100000
    put "${P}cam1:AcquirePeriod" 0.01
    "$caput" -w 1 "${P}cam1:Acquire" 1 >/dev/null 2>&1 || true
    poll eval '[ "$(getcount "${C}CalibrationPhotons_RBV")" -gt 10000 ]' ||
        fail "the calibration took $(getcount "${C}CalibrationPhotons_RBV") photons"
    put "${C}EtaMode" 2
    render_path=$sls_op/adl:$sls_op/ui render_screens iocMoench \
        "P=${P},CAM=cam1:,CLUSTER=Cluster1:,HDF=HDF1:,STATS=Stats1:,IMAGE=image1:,INTERP=interp1:"
    put "${P}cam1:Acquire" 0
    wait_for "${P}cam1:DetectorState_RBV" 0
    caught_up "${C}ArrayCounter_RBV" "${P}cam1:ArrayCounter_RBV"
    put "${C}EtaMode" 0
fi

# PSI's plain slsReceiver in its place: the server's fixed pattern.
stop_sls_receiver
start_sls_receiver "$SLS_BIN/slsReceiver" -t $receiver_port || fail "slsReceiver did not start"
sls_put rx_hostname "localhost:$receiver_port"
sls_put rx_zmqport $zmq_port
sls_put rx_zmqstream 1
put "${P}cam1:AutoSave" 0
put "${C}PedestalFrames" 10
put "${C}ResetPedestal" 1
acquire 10 0.002
acquire 40 0.002
[ "$(get "${C}TotalClusters_RBV")" = 0 ] || fail "$(get "${C}TotalClusters_RBV") clusters in a noiseless pattern"
getstr "${C}StatusMessage_RBV" | grep -q "noise is 0 in every pixel" ||
    fail "no word of a noiseless pedestal: $(getstr "${C}StatusMessage_RBV")"
echo "ok: the virtual pattern through slsReceiver: 0 clusters, and the status says why: $(getstr "${C}StatusMessage_RBV")"

# Stopped mid-acquisition, then new NumFrames and period; then
# ReceiverMode 0. Every frame is accounted for: what the receiver caught
# (rx_framescaught), what it streamed (a subscriber of the test's own,
# tests/sls_stream.py, joined before the acquisition), what the driver
# made of the stream (its ArrayCounter) and what the plugin took (its
# own). Driver and plugin must agree exactly; what the stream carried
# and the driver did not get are the acquisition's first frames, sent
# before the driver's subscription joined the stream (PSI's client
# connects it only as it starts the acquisition: docs/ioc.md,
# troubleshooting).
put "${P}cam1:NumFrames" 100000
put "${P}cam1:AcquirePeriod" 0.001
"$caput" -w 1 "${P}cam1:Acquire" 1 >/dev/null 2>&1 || true
poll eval '[ "$(sls_get rx_framescaught)" -gt 0 ]' || fail "no frame caught after the start"
put "${P}cam1:Acquire" 0
wait_for "${P}cam1:DetectorState_RBV" 0
caught_up "${C}ArrayCounter_RBV" "${P}cam1:ArrayCounter_RBV"
stopped=$(sls_get rx_framescaught)
[ "$stopped" -gt 0 ] && [ "$stopped" -lt 100000 ] || fail "the stop left $stopped frames caught"
streamed_acquire 300 0.002
[ "$streamed" = "$caught" ] ||
    fail "the receiver caught $caught frames (of 300) and streamed $streamed"
[ "$made" -gt 0 ] || fail "none of the $streamed frames streamed reached the driver"
[ "$(get "${C}DroppedArrays_RBV")" = 0 ] || fail "arrays dropped around the stop"
echo "ok: stopped after $stopped frames, then 300 at 2 ms: the receiver caught $caught and streamed them all (frame numbers $(head -n 1 "$work/streamed.txt") to $(tail -n 1 "$work/streamed.txt")); the driver made $made arrays, all of which the plugin took, 0 dropped; the first $((streamed - made)) were streamed before the driver's subscription joined"

# ReceiverMode 0 is the stream's timer mode: a frame every 500 ms.
put "${P}cam1:ReceiverMode" 0
streamed_acquire 500 0.001
[ "$caught" -gt 100 ] || fail "ReceiverMode 0: the receiver caught $caught of 500 frames"
[ "$streamed" -lt "$caught" ] || fail "ReceiverMode 0 streamed all $caught frames caught"
echo "ok: with ReceiverMode 0 the receiver caught $caught of 500 frames and streamed $streamed (a frame each 500 ms), of which the driver made $made arrays and the plugin took them all: set ReceiverMode 1"
# The driver refuses every write while it acquires; iocMoench holds
# ADCore's once-a-second pool poll meanwhile (slsDetectorIdlePoll.template).
! grep -q "detector is busy" "$ioc_log" ||
    fail "the driver refused writes $(grep -c "detector is busy" "$ioc_log") times while acquiring (\"detector is busy\")"
echo "ok: no write refused by the driver while it acquired"
echo "the real MÖNCH chain: PSI's server, receiver, stream and driver feed the plugin the core's results"
