#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_source_bench.sh: the example IOC's frame source alone. It starts the
# IOC on a private Channel Access port (loopback) with every plugin's
# EnableCallbacks off, so nothing consumes the frames, and for each rate
# (0 = as fast as the source makes frames) streams ADMoenchSim's cycled
# simulated frames and prints one markdown table row: the rate asked, the
# frames/s delivered (ArrayCounter_RBV), the frames skipped for want of a
# free NDArray (NumImagesCounter less ArrayCounter), the CPU time and the
# waits (voluntary context switches) of the source's thread per frame, and
# the IOC's CPU in cores.
# With --consumer stats, ADCore's NDPluginStats takes the frames with
# nothing to compute and nothing to pass on: what NDPluginDriver itself
# costs per array (the source's callback queueing each array, the
# plugin's thread taking it) with a plugin that does no work of its own. The row then adds its
# frames/s, dropped arrays, and its thread's CPU time and waits per frame.
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
  --consumer none|stats     what takes the frames: nothing, or NDPluginStats
                            computing nothing (default none)
  --queue N                 the consumer's QueueSize (default 2000)
EOF
    common_usage
}
rates=0,1300,6000,20000,50000 seconds=10 warmup=2 cycle=500 threads="" ring=0
consumer=none queue=2000
script_option() {
    case $1 in
    --consumer) consumer=$2 ;; --queue) queue=$2 ;;
    --rates) rates=$2 ;; --seconds) seconds=$2 ;; --warmup) warmup=$2 ;;
    --cycle) cycle=$2 ;; --threads) threads=$2 ;; --ring) ring=$2 ;;
    *) return 1 ;;
    esac
}
parse_options "$@"
case $consumer in none|stats) ;; *) usage >&2; exit 2 ;; esac
ioc_set_up
T=${P}Stats1:

start_ioc
# Every plugin of the example IOC off: the source's frames go nowhere.
for plugin in Cluster1: HDF1: Stats1: Stats1:TS: Proc1: image1:; do
    put "$P${plugin}EnableCallbacks" 0
done
# Or only to NDPluginStats, with all its computations off and no arrays
# of its own passed on (ArrayCallbacks 0: no copy of the frame).
[ "$consumer" = stats ] &&
    puts "$T" ComputeStatistics:0 ComputeCentroid:0 ComputeProfiles:0 \
        ComputeHistogram:0 ArrayCallbacks:0 QueueSize:"$queue" EnableCallbacks:1
puts "$S" ArrayCallbacks:1 MoenchDarkFrames:0 MoenchCycleFrames:"$cycle" MoenchFrameRing:"$ring" ImageMode:2
[ -n "$threads" ] && put "${S}MoenchSourceThreads" "$threads"

# One run: RATE -> a table row.
run() {
    local rate=$1 period
    if [ "$rate" = 0 ]; then period=0; else period=$(awk "BEGIN{printf \"%.9f\", 1/$rate}"); fi
    put "${S}AcquirePeriod" "$period"
    start_acquire
    sleep "$warmup"
    local s0 n0 t0 c0 s1 n1 t1 c1 st0 st1 sw0 sw1 k0 k1 d0 d1 kt0 kt1 kw0 kw1
    read -r s0 n0 <<<"$(source_counters)"
    t0=$(now) c0=$(cpu_ticks)
    st0=$(thread_ticks ADMoenchSimTask) sw0=$(thread_waits ADMoenchSimTask)
    read -r k0 d0 <<<"$(consumer_counters)"
    kt0=$(thread_ticks STATS1_Plugin) kw0=$(thread_waits STATS1_Plugin)
    sleep "$seconds"
    read -r s1 n1 <<<"$(source_counters)"
    t1=$(now) c1=$(cpu_ticks)
    st1=$(thread_ticks ADMoenchSimTask) sw1=$(thread_waits ADMoenchSimTask)
    read -r k1 d1 <<<"$(consumer_counters)"
    kt1=$(thread_ticks STATS1_Plugin) kw1=$(thread_waits STATS1_Plugin)
    put "${S}Acquire" 0
    wait_for "${S}DetectorState_RBV" 0 30 || say "the source did not stop"
    [ "$consumer" = stats ] && { wait_for "${T}QueueFree" "$queue" 60 || say "NDPluginStats's queue did not drain"; }
    awk -v rate="$rate" -v s="$((s1 - s0))" -v t="$(awk "BEGIN{print $t1 - $t0}")" \
        -v skipped="$(frames_skipped "$s0" "$n0" "$s1" "$n1")" \
        -v cpu="$((c1 - c0))" -v tck="$(getconf CLK_TCK)" \
        -v source_cpu="$((st1 - st0))" -v waits="$((sw1 - sw0))" \
        -v consumer="$consumer" -v k="$((k1 - k0))" -v d="$((d1 - d0))" \
        -v consumer_cpu="$((kt1 - kt0))" -v consumer_waits="$((kw1 - kw0))" \
        'BEGIN { printf "| %s | %.0f | %d | %.1f | %.2f | %.2f |", rate == 0 ? "max" : rate, s / t, skipped,
                 s ? source_cpu / tck / s * 1e6 : 0, s ? waits / s : 0, cpu / tck / t
                 if (consumer == "stats")
                     printf " %.0f | %d | %.1f | %.2f |", k / t, d,
                         k ? consumer_cpu / tck / k * 1e6 : 0, k ? consumer_waits / k : 0
                 printf "\n" }'
}
# The source's frames published and taken (published or skipped).
source_counters() { get "${S}ArrayCounter_RBV" "${S}NumImagesCounter_RBV" | tr '\n' ' '; }
# The consumer's frames and dropped arrays (0 0 without one).
consumer_counters() {
    if [ "$consumer" = stats ]; then
        get "${T}ArrayCounter_RBV" "${T}DroppedArrays_RBV" | tr '\n' ' '
    else
        echo 0 0
    fi
}

echo "Frame source alone: $(machine)"
echo
echo "- command: ioc_source_bench.sh --rates $rates --seconds $seconds --cycle $cycle --ring $ring${threads:+ --threads $threads} --consumer $consumer --queue $queue --scanrate \"${CLUSTER_SCANRATE:-I/O Intr}\""
echo "- MoenchSourceThreads: $(get "${S}MoenchSourceThreads_RBV" 2>/dev/null || echo "not in this IOC")"
echo "- load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
header="| rate asked (frames/s) | source frames/s | source skipped | source thread CPU us/frame | source thread waits/frame | IOC CPU (cores) |"
rule="|---|---|---|---|---|---|"
[ "$consumer" = stats ] &&
    header="$header NDPluginStats frames/s | NDPluginStats dropped | its thread CPU us/frame | its thread waits/frame |" rule="$rule---|---|---|---|"
echo "$header"
echo "$rule"
for rate in ${rates//,/ }; do
    say "rate ${rate/#0/max}"
    run "$rate"
done
