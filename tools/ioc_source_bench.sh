#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_source_bench.sh: the example IOC's frame source alone. It starts the
# IOC on a private Channel Access port (loopback) with every plugin's
# EnableCallbacks off, so nothing consumes the frames, and for each rate
# (0 = as fast as the source makes frames) streams ADMoenchSim's cycled
# simulated frames and prints one markdown table row: the rate asked, the
# frames/s delivered (ArrayCounter_RBV), the CPU time and the waits
# (voluntary context switches) of the source's thread per frame, and the
# IOC's CPU in cores.
# Needs only bash, awk and EPICS's caget/caput; runs from a build tree or
# from the device bundle (tools/ioc_device_bundle.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ioc_lib.sh"
usage() {
    cat <<EOF
usage: ioc_source_bench.sh [options]
  --rates LIST              frames/s, 0 = as fast as the source can
                            (default 0,1300,6000,20000,50000)
  --seconds T               measured seconds per run (default 10)
  --warmup T                seconds streamed before measuring (default 2)
  --cycle K                 MoenchCycleFrames (default 500)
  --threads N               MoenchSourceThreads (default: the IOC's)
  --ring N                  MoenchFrameRing: the NDArrays of the first N data
                            frames published again, without a copy (default 0)
EOF
    common_usage
}
rates=0,1300,6000,20000,50000 seconds=10 warmup=2 cycle=500 threads="" ring=0
script_option() {
    case $1 in
    --rates) rates=$2 ;; --seconds) seconds=$2 ;; --warmup) warmup=$2 ;;
    --cycle) cycle=$2 ;; --threads) threads=$2 ;; --ring) ring=$2 ;;
    *) return 1 ;;
    esac
}
parse_options "$@"
ioc_set_up

start_ioc
# Every plugin of the example IOC off: the source's frames go nowhere.
for plugin in Cluster1: HDF1: Stats1: Proc1: image1:; do
    put "$P${plugin}EnableCallbacks" 0
done
puts "$S" ArrayCallbacks:1 MoenchDarkFrames:0 MoenchCycleFrames:"$cycle" MoenchFrameRing:"$ring" ImageMode:2
[ -n "$threads" ] && put "${S}MoenchSourceThreads" "$threads"

# One run: RATE -> a table row.
run() {
    local rate=$1 period
    if [ "$rate" = 0 ]; then period=0; else period=$(awk "BEGIN{printf \"%.9f\", 1/$rate}"); fi
    put "${S}AcquirePeriod" "$period"
    start_acquire
    sleep "$warmup"
    local s0 t0 c0 s1 t1 c1 st0 st1 sw0 sw1
    s0=$(get "${S}ArrayCounter_RBV") t0=$(now) c0=$(cpu_ticks)
    st0=$(thread_ticks ADMoenchSimTask) sw0=$(thread_waits ADMoenchSimTask)
    sleep "$seconds"
    s1=$(get "${S}ArrayCounter_RBV") t1=$(now) c1=$(cpu_ticks)
    st1=$(thread_ticks ADMoenchSimTask) sw1=$(thread_waits ADMoenchSimTask)
    put "${S}Acquire" 0
    wait_for "${S}DetectorState_RBV" 0 30 || say "the source did not stop"
    awk -v rate="$rate" -v s="$((s1 - s0))" -v t="$(awk "BEGIN{print $t1 - $t0}")" \
        -v cpu="$((c1 - c0))" -v tck="$(getconf CLK_TCK)" \
        -v source_cpu="$((st1 - st0))" -v waits="$((sw1 - sw0))" \
        'BEGIN { printf "| %s | %.0f | %.1f | %.2f | %.2f |\n", rate == 0 ? "max" : rate, s / t,
                 s ? source_cpu / tck / s * 1e6 : 0, s ? waits / s : 0, cpu / tck / t }'
}

echo "Frame source alone: $(machine)"
echo
echo "- command: ioc_source_bench.sh --rates $rates --seconds $seconds --cycle $cycle --ring $ring${threads:+ --threads $threads}"
echo "- MoenchSourceThreads: $(get "${S}MoenchSourceThreads_RBV" 2>/dev/null || echo "not in this IOC")"
echo "- load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| rate asked (frames/s) | source frames/s | source thread CPU us/frame | source thread waits/frame | IOC CPU (cores) |"
echo "|---|---|---|---|---|"
for rate in ${rates//,/ }; do
    say "rate ${rate/#0/max}"
    run "$rate"
done
