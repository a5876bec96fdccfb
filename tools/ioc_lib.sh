# SPDX-License-Identifier: BSD-3-Clause
# ioc_lib.sh: what tools/ioc_bench.sh, ioc_soak.sh and ioc_source_bench.sh
# share, sourced by them (bash) first thing: the options every script
# takes (--ioc, --epics-bin, --build, --log, --scanrate, --help), the
# example IOC started on a private Channel Access port on loopback and
# stopped on exit (ioc_process.sh), Channel Access helpers, and /proc
# readings. A script
# defines usage and script_option, calls parse_options "$@", then
# ioc_set_up.
. "$(dirname "${BASH_SOURCE[0]}")/ioc_process.sh"
ioc="" epics_bin="" log=""
build=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build
P="" C="" H="" S="" work=""

# common_option OPTION VALUE: takes an option every script has, or fails.
common_option() {
    case $1 in
    --ioc) ioc=$2 ;;              # the command that starts the IOC
    --epics-bin) epics_bin=$2 ;;  # where caget and caput are
    --build) build=$2 ;;          # the build tree (or the device bundle)
    --log) log=$2 ;;              # where the IOC's output goes
    --scanrate) export CLUSTER_SCANRATE=$2 ;;  # st.cmd's SCANRATE
    -h|--help) usage; exit 0 ;;
    *) return 1 ;;
    esac
}

# common_usage: the lines of usage that describe common_option's options.
common_usage() {
    cat <<EOF
  --ioc COMMAND             starts the IOC (default BUILD/ioc/run-iocClusterCUDA)
  --epics-bin DIR           caget and caput (default: the build's EPICS base)
  --build DIR               the build tree (default: build/ beside tools/)
  --log FILE                keep the IOC's output there
  --scanrate RATE           SCAN of the records that change with every array
                            (st.cmd's CLUSTER_SCANRATE; default I/O Intr:
                            processed at every change; e.g. ".1 second")
EOF
}

# parse_options ARGUMENTS: each "--name value" pair to the script's own
# script_option, else to common_option; usage and exit 2 on anything else.
parse_options() {
    while [ $# -gt 0 ]; do
        script_option "$1" "${2-}" || common_option "$1" "${2-}" ||
            { usage >&2; exit 2; }
        shift 2 || { usage >&2; exit 2; }
    done
}

# ioc_set_up: checks the programs, makes the scratch folder and the
# Channel Access environment of the IOC to come.
ioc_set_up() {
    ioc=${ioc:-$build/ioc/run-iocClusterCUDA}
    if [ -z "$epics_bin" ]; then
        caget=""
        [ -r "$build/ioc/epicsTools" ] && . "$build/ioc/epicsTools"
        [ -n "$caget" ] || { echo "$0: no --epics-bin and no $build/ioc/epicsTools" >&2; exit 2; }
        epics_bin=$(dirname "$caget")
    fi
    caget=$epics_bin/caget caput=$epics_bin/caput
    [ -x "$caget" ] && [ -x "$caput" ] || { echo "$0: no caget/caput in $epics_bin" >&2; exit 2; }
    [ -x "$ioc" ] || { echo "$0: cannot run $ioc" >&2; exit 2; }
    work=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
    trap 'stop_ioc; rm -rf "$work"' EXIT
    # Autosave (where the IOC has it) in the scratch folder: a run
    # restores nothing of an earlier one.
    export AUTOSAVE_FILES=$work
    log=${log:-$work/ioc.log}
    ioc_loopback_ca "B$$:"
    H=${P}HDF1: S=${P}cam1:
}
say() { echo "$(basename "$0" .sh): $*" >&2; }
die() { say "$*"; exit 1; }

# start_ioc: the IOC, its output in $log; pinned_note says what NDArray
# buffers get.
start_ioc() {
    launch_ioc "$log" || die "the IOC did not start"
    pinned_note=$(sed -n 's/^NDClusterCUDAPinnedArrays: NDArray frame buffers come from //p' "$log" | head -1)
    pinned_note=${pinned_note:-malloc (NDClusterCUDAPinnedArrays not called)}
}
get() { "$caget" -t -n -f0 -w 5 "$@"; }   # numbers, integers exact
getf() { "$caget" -t -w 5 "$@"; }         # as the record formats them
getstr() { "$caget" -t -S -w 5 "$1"; }
put() { "$caput" -c -w 30 "$1" "$2" >/dev/null || die "caput $1 $2 failed"; }
putstr() { "$caput" -S -w 5 "$1" "$2" >/dev/null || die "caput $1 $2 failed"; }
# puts PREFIX NAME:VALUE...: put PREFIX+NAME VALUE for each.
puts() {
    local prefix=$1 setting
    shift
    for setting in "$@"; do put "$prefix${setting%%:*}" "${setting#*:}"; done
}
# wait_for PV VALUE SECONDS: until PV reads VALUE; false after SECONDS.
wait_for() {
    for _ in $(seq $(($3 * 5))); do [ "$(get "$1")" = "$2" ] && return 0; sleep 0.2; done
    return 1
}
# start_acquire: Acquire=1 without waiting for completion.
start_acquire() { "$caput" -w 1 "${S}Acquire" 1 >/dev/null 2>&1 || true; }

# The finder's settings, and the pedestal trained on simulated dark frames.
# set_up_finder BACKEND(cpu|cuda|auto) STREAMS SIZE MAX_CLUSTERS PEDESTAL
set_up_finder() {
    local state
    case $1 in cpu) state=CPU ;; cuda) state=CUDA ;; *) state=Auto ;; esac
    put "${C}EnableCallbacks" 1
    putstr "${C}Backend" "$state"
    puts "$C" NumStreams:"$2" ClusterSizeX:"$3" ClusterSizeY:"$3" \
        MaxClusters:"$4" PedestalFrames:"$5"
    put "${S}ArrayCallbacks" 1
}
train_pedestal() { # FRAMES
    puts "$S" AcquirePeriod:0 MoenchCycleFrames:0 MoenchDarkFrames:"$1" \
        ImageMode:1 NumImages:"$1"
    say "training the pedestal on $1 simulated dark frames"
    "$caput" -c -w 600 "${S}Acquire" 1 >/dev/null
    wait_for "${C}PedestalState_RBV" 1 60 ||
        die "the pedestal did not train: $(getstr "${C}StatusMessage_RBV")"
}
# The finder in use, and a warning when it is not the backend asked for.
backend_in_use() { # ASKED
    backend_rbv=$(getstr "${C}Backend_RBV")
    case $1:$backend_rbv in
    cuda:CUDA*|cpu:CPU*|auto:*) ;;
    *) say "asked for $1, running: $backend_rbv" ;;
    esac
}

# frames_skipped S0 N0 S1 N1: the frames the source took but did not
# publish for want of a free NDArray between two readings of its
# ArrayCounter_RBV (S) and NumImagesCounter_RBV (N); read a moment apart,
# a difference below 0 reads as 0.
frames_skipped() {
    local skipped=$(( ($4 - $2) - ($3 - $1) ))
    echo $(( skipped > 0 ? skipped : 0 ))
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }  # the IOC's
# threads_sum NAME FILE PROGRAM: PROGRAM (awk) on /proc/PID/task/*/FILE of
# the IOC's threads whose name starts with NAME, summed (Linux keeps 15
# characters of a name: CLUSTER1_Plugin_1 is CLUSTER1_Plugin).
threads_sum() {
    for task in /proc/"$pid"/task/*; do
        case $(cat "$task/comm" 2>/dev/null) in
        "$1"*) awk "$3" "$task/$2" 2>/dev/null ;;
        esac
    done | awk '{t += $1} END {print t + 0}'
}
# CPU ticks of those threads.
thread_ticks() { threads_sum "$1" stat '{print $14 + $15}'; }
# Their voluntary context switches: each is a wait (for a lock, a queue,
# a condition or a sleep).
thread_waits() { threads_sum "$1" status '/^voluntary_ctxt_switches/{print $2}'; }
busy_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }
rss_kib() { awk '/^VmRSS/{print $2}' "/proc/$pid/status"; }
now() { date +%s.%N; }
machine() {
    echo "$(uname -n), $(getconf _NPROCESSORS_ONLN) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(date -u '+%Y-%m-%d %H:%M UTC')"
}
