#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_demo.sh: ./quickstart ioc's program, tools/ioc_demo.sh, for real.
# Started with --seconds far off and --no-screen, it prints the PV prefix
# and the Channel Access environment another terminal needs, trains the
# pedestal and prints a live line a second; over Channel Access, with the
# environment it printed, the pedestal is Ready, frames flow, clusters
# are found and the spectrum's line is fitted. Then a SIGINT, as Ctrl-C
# sends, stops it long before --seconds, and nothing it started is left:
# the IOC's PID is gone, no process names its scratch folder in its
# command line or its environment, and the folder is removed. SKIP (77)
# without EPICS and under ThreadSanitizer (ioc_common.sh).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
getn() { "$caget" -t -n -f0 -w $ca_wait "$1"; } # integers exact, enums as numbers

# The demo in the background with SIGINT and SIGTERM as a terminal leaves
# them: a shell without job control starts a background command with
# SIGINT ignored, and bash cannot trap a signal ignored at its start.
# Its scratch folder goes inside ours.
start_demo() {
    if env --default-signal=INT true 2>/dev/null; then
        exec env --default-signal=INT,TERM TMPDIR="$work" "$@"
    fi
    TMPDIR=$work exec perl -e '$SIG{INT} = $SIG{TERM} = "DEFAULT"; exec @ARGV or die "$ARGV[0]: $!\n"' "$@"
}
seconds=600 rate=200 pedestal=100
start_demo "$top/tools/ioc_demo.sh" --build "$builddir" --seconds $seconds \
    --no-screen --rate $rate --pedestal $pedestal --cycle 50 >"$work/demo.out" 2>&1 &
demo=$!
trap 'exit_report $?; kill -TERM $demo 2>/dev/null || true; wait $demo 2>/dev/null || true; rm -rf "$work"' EXIT

# demo_said PATTERN SECONDS: until a line of the demo's output matches
# PATTERN (grep -E); fails, with the output, when the demo ends first or
# SECONDS pass.
demo_said() {
    for _ in $(seq $(($2 * 5))); do
        grep -Eq -- "$1" "$work/demo.out" && return 0
        kill -0 $demo 2>/dev/null || { cat "$work/demo.out"; fail "the demo ended before printing /$1/"; }
        sleep 0.2
    done
    cat "$work/demo.out"
    fail "the demo did not print /$1/ in $2 s"
}
# holders FOLDER: the processes, this test's shells aside, whose command
# line or environment names FOLDER.
holders() {
    for proc in /proc/[0-9]*; do
        for file in cmdline environ; do
            case $(tr '\0' ' ' 2>/dev/null <"$proc/$file") in
            *"$1"*) echo "${proc#/proc/}"; break ;;
            esac
        done
    done
}

# What it prints first: the IOC's PID, the prefix, the environment of
# Channel Access (a private port on loopback), its scratch folder.
demo_said '^Scratch folder: ' 60
ioc_pid=$(sed -n 's/^The example IOC is running (pid \([0-9]*\)).*/\1/p' "$work/demo.out")
prefix=$(sed -n 's/^PV prefix: \([^ ]*\) .*/\1/p' "$work/demo.out")
ca_env=$(sed -n 's/^  export //p' "$work/demo.out")
scratch=$(sed -n 's/^Scratch folder: \([^ ]*\) .*/\1/p' "$work/demo.out")
[ -n "$ioc_pid" ] && [ "$prefix" = CC: ] && [ -n "$ca_env" ] ||
    { cat "$work/demo.out"; fail "no IOC PID, prefix CC: or export line"; }
case $scratch in "$work"/ioc_demo.*) ;; *) fail "the scratch folder is $scratch" ;; esac
[ -d "$scratch" ] || fail "$scratch is not there"
for setting in $ca_env; do
    case $setting in
    EPICS_CA_SERVER_PORT=[0-9]* | EPICS_CA_ADDR_LIST=127.0.0.1 | \
        EPICS_CA_AUTO_ADDR_LIST=NO | EPICS_CA_MAX_ARRAY_BYTES=[0-9]*) export "$setting" ;;
    *) fail "the demo's export line holds $setting" ;;
    esac
done
[ "$EPICS_CA_SERVER_PORT" != 5064 ] || fail "the demo uses CA's default port"
C=${prefix}Cluster1: S=${prefix}cam1:
holders "$scratch" | grep -qx "$ioc_pid" ||
    fail "the IOC (pid $ioc_pid) does not name $scratch: the check below would see nothing"
echo "ok: the demo printed the IOC's PID $ioc_pid, the prefix $prefix and $ca_env"

# The pedestal trained, then live lines: frames, clusters, the line.
demo_said '^Pedestal: Ready, trained on '"$pedestal"' dark frames' 120
[ "$(getn "${C}PedestalState_RBV")" = 1 ] ||
    fail "PedestalState_RBV is $(getn "${C}PedestalState_RBV") over Channel Access"
[ "$(getn "${C}PedestalFrames_RBV")" = $pedestal ] ||
    fail "PedestalFrames_RBV is $(getn "${C}PedestalFrames_RBV")"
live=' [0-9.]+ frames/s \(source [0-9. ]+\) +[0-9.]+ clusters/frame '
demo_said "$live" 60
demo_said ' [1-9][0-9.]* frames/s .* [1-9][0-9.]* clusters/frame  line at [0-9.]+ ADU, sigma [0-9.]+ ADU  dropped ' 120
grep -E "$live" "$work/demo.out" | tail -n 2 | sed 's/^/ok: live: /'
[ "$(getn "${C}PeakFitted_RBV")" = 1 ] || fail "PeakFitted_RBV is $(getn "${C}PeakFitted_RBV")"
[ "$(getn "${S}ImageMode_RBV")" = 2 ] && [ "$(getn "${S}Acquire")" = 1 ] ||
    fail "the source is not acquiring continuously"
period=$("$caget" -t -f9 -w $ca_wait "${S}AcquirePeriod_RBV")
[ "$period" = "$(awk "BEGIN{printf \"%.9f\", 1/$rate}")" ] || fail "AcquirePeriod_RBV is $period, not 1/$rate"
frames=$(getn "${C}ArrayCounter_RBV")
clusters=$(getn "${C}TotalClusters_RBV")
# ArrayCounter_RBV counts an array as it arrives, TotalClusters_RBV its
# clusters once its batch is found: each is waited for on its own.
poll eval '[ "$(getn "${C}ArrayCounter_RBV")" -gt "$frames" ]' ||
    fail "no frame reached the plugin in 60 s"
poll eval '[ "$(getn "${C}TotalClusters_RBV")" -gt "$clusters" ]' ||
    fail "the frames gave no cluster in 60 s"
echo "ok: over Channel Access: the pedestal Ready, frames flowing ($frames, then $(getn "${C}ArrayCounter_RBV")), clusters found ($(getn "${C}TotalClusters_RBV")), the line fitted at $("$caget" -t -w $ca_wait "${C}PeakPosition_RBV") ADU"

# Ctrl-C: everything stopped, long before --seconds.
kill -INT $demo
for _ in $(seq 300); do
    kill -0 $demo 2>/dev/null || break
    sleep 0.2
done
kill -0 $demo 2>/dev/null && fail "the demo runs 60 s after SIGINT"
status=0
wait $demo || status=$?
[ $status = 130 ] || { cat "$work/demo.out"; fail "the demo's exit status after SIGINT is $status, not 130"; }
grep -q "^ioc_demo: stopped (interrupted (SIGINT)): the IOC (pid $ioc_pid)" "$work/demo.out" ||
    { cat "$work/demo.out"; fail "the demo did not say it stopped the IOC"; }
! kill -0 "$ioc_pid" 2>/dev/null || fail "the IOC (pid $ioc_pid) is still running"
left=$(holders "$scratch")
[ -z "$left" ] || fail "still running after SIGINT: $(for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline"; echo " (pid $p)"; done)"
[ ! -e "$scratch" ] || fail "$scratch is still there"
echo "ok: SIGINT stopped the demo (exit status 130): the IOC is gone, no process names $scratch, the folder is removed"
