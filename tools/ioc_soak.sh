#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_soak.sh: a long run of the example IOC (10^6 frames by default) at a
# fixed rate, checked against the core. ADMoenchSim sends PEDESTAL dark
# frames, then FRAMES data frames (MoenchCycleFrames repeated) in one
# acquisition; the IOC's resident memory, dropped arrays, queue and CPU
# are recorded every INTERVAL seconds; at the end the plugin's cluster
# totals, spectrum and hit map must equal what tools/source_totals finds
# in the same frames with the core alone (computed first, so that it does
# not share the CPUs with the IOC). Prints markdown; exits 1 on any
# difference or dropped array.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ioc_lib.sh"
usage() {
    cat <<EOF
usage: ioc_soak.sh [options]
  --frames N        data frames after the dark frames (default 1000000)
  --rate R          frames/s (default 1300, MÖNCH's standard rate)
  --pedestal N      dark frames, PedestalFrames (default 1000)
  --cycle K         MoenchCycleFrames (default 500)
  --seed N          MoenchSeed (default 1)
  --backend B       cpu, cuda or auto (default cpu)
  --interval T      seconds between samples (default 30)
  --expected FILE   where source_totals' results are kept (FILE,
                    FILE.spectrum, FILE.hitmap); when FILE exists, from an
                    earlier run with the same settings, it is not run again
EOF
    common_usage
}
frames=1000000 rate=1300 pedestal=1000 cycle=500 seed=1 backend=cpu
interval=30 expected=""
script_option() {
    case $1 in
    --frames) frames=$2 ;; --rate) rate=$2 ;; --pedestal) pedestal=$2 ;;
    --cycle) cycle=$2 ;; --seed) seed=$2 ;; --backend) backend=$2 ;;
    --interval) interval=$2 ;; --expected) expected=$2 ;;
    *) return 1 ;;
    esac
}
parse_options "$@"
ioc_set_up
max_clusters=5000 # the plugin's default, and source_totals'

expected=${expected:-$work/expected}
if [ ! -s "$expected" ]; then
    say "the core alone: $frames frames after $pedestal dark ones ($(date -u +%H:%M) UTC)"
    start=$(now)
    "$build/tools/source_totals" --frames "$frames" --dark "$pedestal" \
        --pedestal "$pedestal" --cycle "$cycle" --seed "$seed" \
        --max-clusters $max_clusters --spectrum "$expected.spectrum" \
        --hitmap "$expected.hitmap" >"$expected" || die "source_totals failed"
    say "the core alone took $(awk "BEGIN{printf \"%.0f\", $(now) - $start}") s"
fi
want() { sed -n "s/^$1 //p" "$expected"; }

echo "IOC soak: $(machine)"
echo
start_ioc
set_up_finder "$backend" 2 3 $max_clusters "$pedestal"
puts "${P}image1:" EnableCallbacks:1
puts "$S" MoenchSeed:"$seed" MoenchDarkFrames:"$pedestal" \
    MoenchCycleFrames:"$cycle" ImageMode:1 NumImages:$((pedestal + frames)) \
    AcquirePeriod:"$(awk "BEGIN{printf \"%.9f\", 1/$rate}")"
total=$((pedestal + frames))
echo "- command: ioc_soak.sh --frames $frames --rate $rate --pedestal $pedestal --cycle $cycle --seed $seed --backend $backend --interval $interval"
echo "- NDArray buffers: $pinned_note"
echo "- load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| elapsed (s) | frames through the plugin | frames/s since last | IOC RSS (MiB) | NDArray pool (MiB) | RSS − pool (MiB) | plugin dropped | plugin queue free | IOC CPU (cores) | other CPU (cores) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
start_acquire
t_start=$(now) last_t=$t_start last_n=0 last_c=$(cpu_ticks) last_b=$(busy_ticks)
tck=$(getconf CLK_TCK)
while :; do
    sleep "$interval"
    read -r n dropped queue <<<"$(get "${C}ArrayCounter_RBV" "${C}DroppedArrays_RBV" "${C}QueueFree" | tr '\n' ' ')"
    # The pool that holds the frames (MiB): the source's (the plugin's
    # PoolUsedMem reports that pool too). The cluster arrays and hit maps
    # come from the plugin's own pool, which no PV reports: once it has
    # its largest size it stays put, in RSS − pool.
    pools=$(getf "${S}PoolUsedMem")
    t=$(now) c=$(cpu_ticks) b=$(busy_ticks)
    awk -v t="$t" -v t0="$t_start" -v lt="$last_t" -v n="$n" -v ln="$last_n" \
        -v rss="$(rss_kib)" -v pools="$pools" -v d="$dropped" -v q="$queue" \
        -v c="$((c - last_c))" -v b="$((b - last_b))" -v tck="$tck" 'BEGIN {
        printf "| %.0f | %d | %.0f | %.1f | %.1f | %.1f | %d | %d | %.2f | %.2f |\n", t - t0, n,
            (n - ln) / (t - lt), rss / 1024, pools, rss / 1024 - pools, d, q,
            c / tck / (t - lt), (b - c) / tck / (t - lt) }'
    last_t=$t last_n=$n last_c=$c last_b=$b
    [ "$n" -ge "$total" ] && break
    kill -0 "$pid" 2>/dev/null || die "the IOC ended: $(tail -5 "$log")"
    # Stalled: nothing processed in a whole interval after the source is done.
    [ "$(get "${S}Acquire")" = 0 ] && [ "$n" = "$(get "${C}ArrayCounter_RBV")" ] &&
        [ "$(get "${C}QueueFree")" = "$(get "${C}QueueSize_RBV")" ] && break
done
elapsed=$(awk "BEGIN{printf \"%.0f\", $(now) - $t_start}")

# The spectrum and hit map are published every SpectrumPeriod (1 s).
sleep 3
status=0
got_frames=$(($(get "${C}ArrayCounter_RBV") - pedestal))
got_clusters=$(get "${C}TotalClusters_RBV")
got_dropped=$(get "${C}DroppedClusters_RBV")
dropped_arrays=$(get "${C}DroppedArrays_RBV")
counts() { getf -f0 "$1" | tr ' ' '\n' | tail -n +2 | head -n "$(wc -l <"$2")"; }
same() { if [ "$1" = "$2" ]; then echo same; else echo DIFFERENT; status=1; fi; }
spectrum=$(counts "${C}Spectrum_RBV" "$expected.spectrum" | cmp -s - "$expected.spectrum" && echo same || echo DIFFERENT)
hitmap=$(counts "${P}image1:ArrayData" "$expected.hitmap" | cmp -s - "$expected.hitmap" && echo same || echo DIFFERENT)
[ "$spectrum$hitmap" = samesame ] || status=1
[ "$dropped_arrays" = 0 ] || status=1
echo
echo "| | IOC | core alone (source_totals) | |"
echo "|---|---|---|---|"
echo "| frames processed | $got_frames | $(want frames) | $(same "$got_frames" "$(want frames)") |"
echo "| clusters stored | $got_clusters | $(want clusters) | $(same "$got_clusters" "$(want clusters)") |"
echo "| clusters dropped (beyond MaxClusters) | $got_dropped | $(want dropped) | $(same "$got_dropped" "$(want dropped)") |"
echo "| spectrum ($(wc -l <"$expected.spectrum") bins) | | | $spectrum |"
echo "| hit map ($(wc -l <"$expected.hitmap") pixels) | | | $hitmap |"
echo
echo "$total arrays in $elapsed s; dropped arrays: plugin $dropped_arrays; IOC RSS at the end $(($(rss_kib) / 1024)) MiB (peak $(($(awk '/^VmHWM/{print $2}' "/proc/$pid/status") / 1024)) MiB)."
exit $status
