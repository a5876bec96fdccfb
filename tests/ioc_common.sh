# SPDX-License-Identifier: BSD-3-Clause
# ioc_common.sh: what the IOC tests share, sourced after common.sh: the
# example IOC started and stopped on a Channel Access port of the test's
# own, on loopback (tools/ioc_process.sh), and caget/caput helpers. SKIP (77) without EPICS, and
# under ThreadSanitizer, which EPICS's own libraries are not built for.
# The IOC is the example IOC unless the test named another in $ioc.
ioc=${ioc:-$builddir/ioc/run-iocClusterCUDA}
[ -x "$ioc" ] || { echo "SKIP: the build has no EPICS (configure did not find base, asyn and ADCore)"; exit 77; }
case "${sanitizers:-no}" in
*thread*)
    echo "SKIP: EPICS's own libraries are not built for ThreadSanitizer; the IOC runs in the plain and ASan builds"
    exit 77 ;;
esac
. "$builddir/ioc/epicsTools"
# make -j runs tests side by side, and an IOC starved of the CPU misses
# Channel Access timeouts (a receiver, UDP frames). So each IOC test marks
# itself running in $running (test.PID); ioc_restart.sh, which runs its
# IOC flat out, marks alone.PID, the others wait for it, and it waits for
# them (alone_among_ioc_tests). Marks of ended processes do not count,
# and a test run by a test (ioc_slsdetector.sh's second attempt) is in.
running=$builddir/tests/ioc_running
mkdir -p "$running"
# others_running KIND: a live process other than this one marked KIND.
others_running() {
    for mark in "$running/$1".*; do
        [ -e "$mark" ] && [ "${mark##*.}" != $$ ] &&
            kill -0 "${mark##*.}" 2>/dev/null && return 0
    done
    return 1
}
while touch "$running/test.$$" && [ ! -e "$running/test.$PPID" ] &&
    others_running alone; do
    rm -f "$running/test.$$"
    sleep 1
done
# alone_among_ioc_tests: once the other IOC tests running have ended.
alone_among_ioc_tests() {
    touch "$running/alone.$$"
    while others_running test; do
        sleep 1
    done
}

. "$(dirname "$0")/../tools/ioc_process.sh"
ioc_loopback_ca "T$$:"
# Without real-time threads (launch_ioc): run as root, as CI runs, the
# busy SCHED_FIFO plugin threads of one test's IOC kept the other test's
# caget, receiver and plugin from running for seconds.
ioc_realtime=no

# ioc_report: whether the IOC still runs, and the end of its output: what
# a failure in CI, where the scratch folder is gone, needs.
ioc_report() {
    if [ -n "${ioc_log-}" ] && [ -f "$ioc_log" ]; then
        state="has ended"
        [ -n "${pid-}" ] && kill -0 "$pid" 2>/dev/null && state="still runs (pid $pid)"
        echo "the IOC $state; the end of its output:"
        tail -n 25 "$ioc_log" | sed 's/^/  | /'
        # What ran when it failed: a starved or hogging thread shows here.
        if [ "$state" != "has ended" ]; then
            echo "its busiest threads (class, real-time priority, CPU % of its life, state), load $(cut -d' ' -f1-3 /proc/loadavg):"
            ps -L -o cls=,rtprio=,pcpu=,stat=,comm= -p "$pid" 2>/dev/null |
                sort -k3 -n -r | head -n 12 | sed 's/^/  | /'
        fi
        # And the whole machine's, now (top's second half-second; a PR of
        # rt or below 0 is real-time): another test's IOC taking the CPUs
        # shows here.
        echo "the machine's busiest threads over half a second now:"
        top -b -H -n 2 -d 0.5 -w 160 2>/dev/null | awk '/^top -/ {n++} n == 2' |
            sed -n '7,17p' | sed 's/^/  | /'
    fi
}
# fail, as common.sh's, with the IOC's report.
fail() {
    failing=1
    echo "FAIL: $*"
    ioc_report
    exit 1
}
# exit_report STATUS (first in each test's EXIT trap): on an exit fail()
# did not make, as a caget that found no channel under set -e, the same
# report, so that the log says the test failed and where the IOC was.
exit_report() {
    case $1 in 0 | 77) return 0 ;; esac
    [ -n "${failing-}" ] && return 0
    echo "FAIL: a command failed (exit status $1); what it said is above"
    ioc_report
}

# start_ioc N: the IOC, its output in $work/iocN.log. Autosave (where the
# IOC has it) keeps its files in $autosave when the test sets it, else in
# a new folder for each start: an IOC restores only what the test means.
start_ioc() {
    AUTOSAVE_FILES=${autosave:-$work/autosave$1}
    mkdir -p "$AUTOSAVE_FILES" && export AUTOSAVE_FILES
    ioc_log=$work/ioc$1.log
    launch_ioc "$ioc_log" || fail "the IOC did not start"
}
# ioc_alive: fails, with the end of its output, when the IOC has ended.
ioc_alive() {
    [ -z "$pid" ] || kill -0 "$pid" 2>/dev/null && return 0
    tail -n 5 "$ioc_log" >&2
    status=0
    wait "$pid" || status=$?
    pid=""
    fail "the IOC ended (exit status $status) while the test waited for it"
}
trap 'exit_report $?; stop_ioc; rm -rf "$work"' EXIT

# ca_wait: seconds a caget waits for its channel. An IOC under
# AddressSanitizer on a loaded two-core machine has taken over 2 s to
# answer a search; a wait only costs time when the IOC is that slow.
ca_wait=10
get() { "$caget" -t -n -w $ca_wait "$1"; }
# getcount PV: a count the record holds as a double, every digit (get
# prints a double to six significant digits: 1.32237e+06).
getcount() { "$caget" -t -n -f0 -w $ca_wait "$1"; }
put() { "$caput" -c -w $ca_wait "$1" "$2" >/dev/null || fail "caput $1 $2"; }
putstr() { "$caput" -S -w $ca_wait "$1" "$2" >/dev/null || fail "caput $1 $2"; }
getstr() { "$caget" -t -S -w $ca_wait "$1"; }
# poll COMMAND...: until COMMAND succeeds (poll_tries of poll_pause s: 60 s
# at most), failing at once should the IOC end meanwhile.
poll_tries=300 poll_pause=0.2
poll() {
    for _ in $(seq $poll_tries); do
        "$@" && return 0
        ioc_alive
        sleep $poll_pause
    done
    return 1
}
# ioc_command COMMAND: COMMAND in the IOC's shell, waited for: the shell
# runs its commands in turn, so once a mark written after it (dbpf into
# the DESC field of ${C}PluginType_RBV) reads back, COMMAND is done.
ioc_command() {
    ioc_commands=$((${ioc_commands:-0} + 1))
    ioc_shell "$1"
    ioc_shell "dbpf \"${C}PluginType_RBV.DESC\" \"command $ioc_commands\""
    poll eval '[ "$(getstr "${C}PluginType_RBV.DESC")" = "command $ioc_commands" ]' ||
        fail "the IOC's shell did not run: $1"
}
pv_is() { [ "$(get "$1")" = "$2" ]; }
# wait_for PV VALUE: until caget PV says VALUE.
wait_for() { poll pv_is "$1" "$2" || fail "$1 is $(get "$1"), not $2"; }
# count_follows COUNT WANT...: until the counter COUNT reads what the
# command WANT... prints, run anew each time (a source that still
# delivers). It waits as long as either moves, however long frames take
# on a loaded machine, and fails once both have stood still apart, COUNT
# past or short of what is wanted, for as long as poll waits.
count_follows() {
    count=$1
    shift
    last="" still=0
    while :; do
        want=$("$@")
        now=$(get "$count")
        [ "$now" = "$want" ] && return 0
        # A count past its source's is a plugin counting arrays it was not
        # given, unless the source's count is about to publish: PSI's
        # driver sets its ArrayCounter once its callbacks have returned,
        # after a plugin with blocking callbacks has counted the array.
        # So it fails only when neither count moves any more.
        if [ "$now $want" = "$last" ]; then
            still=$((still + 1))
            [ $still -lt $poll_tries ] || {
                [ "$now" -lt "$want" ] || fail "$count is $now, past $want"
                fail "$count stopped at $now, short of $want"
            }
        else
            still=0 last="$now $want"
        fi
        ioc_alive
        sleep $poll_pause
    done
}
# count_reaches COUNT N: until the array counter COUNT reads N.
count_reaches() { count_follows "$1" echo "$2"; }
# caught_up COUNT SOURCE_COUNT: until the array counter COUNT equals
# SOURCE_COUNT, which is read again each time, since a source can still
# be delivering when the wait starts.
caught_up() { count_follows "$1" get "$2"; }
# source_mark before a continuous acquisition of the simulated source,
# source_drained after its Acquire 0: until the source is idle and the
# plugin has taken, or dropped and counted, every array it made since, so
# that what a test counts next starts from rest.
source_mark() {
    marked_made=$(get "${P}cam1:ArrayCounter_RBV")
    marked_taken=$(get "${C}ArrayCounter_RBV")
    marked_dropped=$(get "${C}DroppedArrays_RBV")
}
source_drained() {
    wait_for "${P}cam1:DetectorState_RBV" 0 # Idle: its last frame is out
    made=$(($(get "${P}cam1:ArrayCounter_RBV") - marked_made))
    dropped=$(($(get "${C}DroppedArrays_RBV") - marked_dropped))
    count_reaches "${C}ArrayCounter_RBV" $((marked_taken + made - dropped))
}
# counts_equal PV FILE [DIGITS]: the first lines of PV's array, with
# DIGITS decimals (default 0), are FILE's lines.
counts_equal() {
    "$caget" -w $ca_wait -t -f"${3:-0}" "$1" | tr ' ' '\n' | tail -n +2 |
        head -n "$(wc -l <"$2")" | cmp -s - "$2"
}
# published CHECK ARGS...: CHECK ARGS holds, polled (60 s at most), for
# what the plugin publishes every SpectrumPeriod or on Publish, and the
# plugins downstream take in their own threads.
published() { poll "$@"; }
# array_passes PV CHECK ARGS...: PV's array (caget's words, the count
# first), in $work/array.txt, passes the Python script CHECK, given that
# file and ARGS (the test has set python: need_python); what CHECK said
# last is in $work/check.txt. With published, for maps downstream.
array_passes() {
    pv=$1 script=$2
    shift 2
    "$caget" -w $ca_wait -t "$pv" >"$work/array.txt" &&
        $python "$script" "$work/array.txt" "$@" >"$work/check.txt" 2>&1
}
# publish_now: a publication asked for (Publish) and waited for until
# Publications_RBV counts it; the parameters it sets (the peak, the
# counts, the corrections' state) are posted before that count.
publish_now() {
    publications=$(get "${C}Publications_RBV")
    put "${C}Publish" 1
    poll eval '[ "$(get "${C}Publications_RBV")" -gt "$publications" ]' ||
        fail "Publish made no publication"
}
# published_equal PV FILE [DIGITS]: counts_equal, published.
published_equal() { published counts_equal "$@"; }
# image_equal PV FILE.npy: PV's array is the image in FILE (the test has
# set python to one with NumPy: need_python).
image_equal() {
    "$caget" -w $ca_wait -t "$1" >"$work/array.txt" || return 1
    $python - "$work/array.txt" "$2" <<'PYTHON'
import sys
import numpy
values = open(sys.argv[1]).read().split()
expected = numpy.load(sys.argv[2])
got = numpy.array(values[1:1 + expected.size], dtype=numpy.int64)
sys.exit(0 if got.size == expected.size and
         (got == expected.ravel()).all() else 1)
PYTHON
}
# refused PV VALUE WORDS [RBV]: ${C}PV written VALUE is not taken:
# ${C}RBV (default PV_RBV) reads as before, and the status holds WORDS
# (unless empty); refusals counts them. (An mbbo given a state it lacks
# writes its first state's value: when that is the value in force, the
# write is taken and changes nothing.)
refused() {
    rbv=${4:-$1_RBV}
    held=$(getstr "${C}$rbv")
    "$caput" -c -w 5 "${C}$1" "$2" >/dev/null 2>&1 || true
    now=$(getstr "${C}$rbv")
    [ "$now" = "$held" ] || fail "$1 $2 was taken: $rbv reads $now, was $held"
    [ -z "$3" ] || getstr "${C}StatusMessage_RBV" | grep -q -- "$3" ||
        fail "$1 $2: the status does not say \"$3\": $(getstr "${C}StatusMessage_RBV")"
    refusals=$((${refusals:-0} + 1))
}
# load_refused FILE_PV COMMAND PATH WORDS: ${C}FILE_PV set to PATH, then
# ${C}COMMAND written 1; the status must hold WORDS.
load_refused() {
    putstr "${C}$1" "$3"
    put "${C}$2" 1
    getstr "${C}StatusMessage_RBV" | grep -q -- "$4" ||
        fail "$2 of $3: the status does not say \"$4\": $(getstr "${C}StatusMessage_RBV")"
}
# raw_run SEED: a simulated raw run of 100 dark and 40 data frames in
# $work/run; dark and data name its master files.
raw_run() {
    mkdir -p "$work/run"
    "$simulate_raw" "$work/run" 100 40 "$1" >/dev/null || fail "simulate_raw failed"
    dark=$work/run/dark_master_0.json
    data=$work/run/data_master_0.json
}
# hdf5_stream NAME FRAMES: HDF1 streams the cluster arrays it is given into
# $work/NAME.h5 (Stream mode), until FRAMES are captured.
hdf5_stream() {
    putstr "${P}HDF1:FilePath" "$work/"
    putstr "${P}HDF1:FileName" "$1"
    putstr "${P}HDF1:FileTemplate" "%s%s.h5"
    put "${P}HDF1:AutoIncrement" 0
    put "${P}HDF1:EnableCallbacks" 1
    put "${P}HDF1:FileWriteMode" 2
    put "${P}HDF1:LazyOpen" 1 # open at the first array, whose size it takes
    put "${P}HDF1:NumCapture" "$2"
    "$caput" -w 1 "${P}HDF1:Capture" 1 >/dev/null 2>&1 || true
}
# replay MASTER FRAMES: acquire FRAMES frames of a raw run, and wait until
# the plugin has taken them all.
replay() {
    before=$(get "${C}ArrayCounter_RBV")
    putstr "${P}cam1:MoenchRawFile" "$1"
    put "${P}cam1:MoenchSource" 1
    put "${P}cam1:ImageMode" 1
    put "${P}cam1:NumImages" "$2"
    put "${P}cam1:Acquire" 1
    count_reaches "${C}ArrayCounter_RBV" $((before + $2))
}
