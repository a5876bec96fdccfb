#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_bench.sh: the example IOC's chain at full rate. It starts the IOC on
# a private Channel Access port (loopback), trains the pedestal, then for
# each rate (0 = as fast as the source makes frames) and with NDFileHDF5
# off and on (writing every frame's clusters in Stream mode) streams
# ADMoenchSim's cycled simulated frames through NDPluginClusterCUDA and
# prints one markdown table row per run:
#   source and plugin frames/s (ArrayCounter rates), frames the source
#   lost for want of a free NDArray (NumImagesCounter less ArrayCounter,
#   read a moment apart: a difference below 0 reads as 0), dropped arrays of the plugin and of
#   the HDF5 writer, the plugin's queue (least free / size),
#   LastBatch_RBV and FinderTime_RBV (means of samples every 0.5 s: arrays
#   per core call, core time per array), the CPU time per frame of the
#   source's thread, of the plugin's thread (which gathers the arrays),
#   of its finder thread (the core's calls) and of its output threads
#   together (spectrum, hit map, cluster arrays):
#   a thread whose time per frame nears the frame period is the bound;
#   the waits per frame (voluntary context switches) of the source's and
#   the plugin's threads, which show a thread held up by locks or queues;
#   the IOC's CPU
#   (utime + stime from /proc, in cores) and everything else's on the
#   machine (from /proc/stat), which shows what else was running.
# Needs only bash, awk and EPICS's caget/caput; runs from a build tree or
# from the device bundle (tools/ioc_device_bundle.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ioc_lib.sh"
usage() {
    cat <<EOF
usage: ioc_bench.sh [options]
  --backend cpu|cuda|auto   the plugin's Backend (default cpu)
  --streams N               NumStreams, CUDA streams (default 2)
  --size N                  cluster size N x N (default 3)
  --rates LIST              frames/s, 0 = as fast as the source can
                            (default 0,1300,6000,20000,50000)
  --seconds T               measured seconds per run (default 10)
  --warmup T                seconds streamed before measuring (default 2)
  --hdf5 off|on|both        NDFileHDF5 writing the clusters (default both)
  --compression NAME        NDFileHDF5's compression of the clusters: none,
                            zlib (level 1), szip, blosc-lz4, blosc-zstd
                            (level 5, byte shuffle), bslz4, lz4 (default none)
  --chunk-frames N          NDFileHDF5's NumFramesChunks: arrays an HDF5
                            chunk holds (default 1)
  --hdf5-attributes yes|no  NDFileHDF5's StoreAttr and StorePerform: the
                            arrays' attributes (NumClusters, UniqueId, ...)
                            and timings, each a dataset written per array
                            (default yes)
  --cycle K                 MoenchCycleFrames (default 500)
  --max-clusters N          MaxClusters, rows of each output array (default 3000)
  --flux X                  MoenchFlux, photons a simulated frame (default
                            the source's, 2330: about 2,180 clusters at 3x3)
  --max-batch N             MaxBatch, queued arrays per core call (default 64)
  --queue N                 the plugin's QueueSize (default 2000, st.cmd's)
  --output-threads N        the plugin's output threads, its maxThreads
                            (st.cmd's CLUSTER_OUTPUT_THREADS, default 6)
  --source-threads N        MoenchSourceThreads, the source's copying
                            threads (default: the IOC's, min(4, CPUs))
  --ring N                  MoenchFrameRing: the source publishes the NDArrays
                            of its first N data frames again, without a copy
                            (default 0: a copy a frame)
  --pedestal N              PedestalFrames (default 1000)
  --pinned 0|1              PINNED_ARRAYS for st.cmd (default 1)
  --files DIR               where HDF5 files are written (default a
                            temporary folder; each run's file is deleted)
  --window LO:HI|off        the energy window, ADU of Sum, of the hit map
                            and the imaging (default off)
  --imaging off|on          on: every run interpolated at --subpixels by an
                            eta2 calibration of 100 x 100 bins taken live
                            (3 s at full rate before the runs; default off)
  --subpixels S             Subpixels for --imaging on (default 5)
  --corrections off|on      on: the source makes 30 ADU rms of supercolumn
                            common mode and a 5 % gain spread; the plugin
                            subtracts the common mode (CommonMode
                            Supercolumn) and applies a gain map calibrated
                            from 3 s of frames at full rate before the runs
                            (GainMode Calibrate, SaveGainMap, Apply)
                            (default off)
EOF
    common_usage
}
backend=cpu streams=2 size=3 rates=0,1300,6000,20000,50000 seconds=10
warmup=2 hdf5=both cycle=500 max_clusters=3000 pedestal=1000 pinned=1
max_batch=64 queue=2000 files="" source_threads="" ring=0 flux=""
imaging=off window=off subpixels=5 compression=none chunk_frames=1
corrections=off
hdf5_attributes=yes
script_option() {
    case $1 in
    --imaging) imaging=$2 ;; --window) window=$2 ;; --subpixels) subpixels=$2 ;;
    --corrections) corrections=$2 ;;
    --compression) compression=$2 ;; --chunk-frames) chunk_frames=$2 ;;
    --hdf5-attributes) hdf5_attributes=$2 ;;
    --backend) backend=$2 ;; --streams) streams=$2 ;; --size) size=$2 ;;
    --rates) rates=$2 ;; --seconds) seconds=$2 ;; --warmup) warmup=$2 ;;
    --hdf5) hdf5=$2 ;; --cycle) cycle=$2 ;; --max-clusters) max_clusters=$2 ;;
    --pedestal) pedestal=$2 ;; --pinned) pinned=$2 ;; --files) files=$2 ;;
    --max-batch) max_batch=$2 ;; --queue) queue=$2 ;;
    --source-threads) source_threads=$2 ;; --ring) ring=$2 ;; --flux) flux=$2 ;;
    --output-threads) export CLUSTER_OUTPUT_THREADS=$2 ;;
    *) return 1 ;;
    esac
}
parse_options "$@"
case $backend in cpu|cuda|auto) ;; *) usage >&2; exit 2 ;; esac
case $imaging in off|on) ;; *) usage >&2; exit 2 ;; esac
case $corrections in off|on) ;; *) usage >&2; exit 2 ;; esac
# NDFileHDF5's settings for each --compression (its Compression menu).
case $compression in
none) hdf5_compression="Compression:0" ;;
zlib) hdf5_compression="Compression:3 ZLevel:1" ;;
szip) hdf5_compression="Compression:2" ;;
blosc-lz4) hdf5_compression="Compression:4 BloscCompressor:1 BloscLevel:5 BloscShuffle:1" ;;
blosc-zstd) hdf5_compression="Compression:4 BloscCompressor:5 BloscLevel:5 BloscShuffle:1" ;;
bslz4) hdf5_compression="Compression:5" ;;
lz4) hdf5_compression="Compression:6" ;;
*) usage >&2; exit 2 ;;
esac
case $hdf5_attributes in yes) store=1 ;; no) store=0 ;; *) usage >&2; exit 2 ;; esac
case $hdf5 in off) hdf5_modes=0 ;; on) hdf5_modes=1 ;; both) hdf5_modes="0 1" ;;
    *) usage >&2; exit 2 ;; esac
export PINNED_ARRAYS=$pinned
ioc_set_up
files=${files:-$work}
mkdir -p "$files"

start_ioc
set_up_finder "$backend" "$streams" "$size" "$max_clusters" "$pedestal"
put "${C}MaxBatch" "$max_batch"
put "${C}QueueSize" "$queue"
[ -n "$source_threads" ] && put "${S}MoenchSourceThreads" "$source_threads"
# The detector's effects, and the common mode's correction, before the
# pedestal: CommonMode is a finder setting.
[ "$corrections" = off ] || {
    puts "$S" MoenchCommonMode:1 MoenchCommonModeRms:30 MoenchGainSpread:0.05
    put "${C}CommonMode" 1
}
train_pedestal "$pedestal"
backend_in_use "$backend"
queue_size=$(get "${C}QueueSize_RBV")
puts "$S" MoenchDarkFrames:0 MoenchCycleFrames:"$cycle" MoenchFrameRing:"$ring" ImageMode:2
[ -n "$flux" ] && put "${S}MoenchFlux" "$flux"

[ "$window" = off ] ||
    puts "$C" WindowHigh:"${window#*:}" WindowLow:"${window%:*}" WindowEnable:1
# Gain: a map fitted from 3 s of frames at full rate, then applied.
if [ "$corrections" = on ]; then
    put "${C}GainMode" 1
    put "${S}AcquirePeriod" 0
    start_acquire
    sleep 3
    put "${S}Acquire" 0
    wait_for "${C}QueueFree" "$queue_size" 120 || say "the plugin's queue did not drain"
    "$caput" -S -w 10 "${C}GainMapFile" "$work/gain.npy" >/dev/null
    put "${C}SaveGainMap" 1
    say "gain: $(getstr "${C}StatusMessage_RBV")"
    put "${C}GainMode" 2
fi
# Imaging: the calibration taken from 3 s of frames, then every run
# interpolated with it.
if [ "$imaging" = on ]; then
    puts "$C" EtaFunction:0 EtaBins:100 Subpixels:"$subpixels" EtaMode:1
    put "${S}AcquirePeriod" 0
    start_acquire
    sleep 3
    put "${S}Acquire" 0
    wait_for "${C}QueueFree" "$queue_size" 120 || say "the plugin's queue did not drain"
    put "${C}EtaMode" 2
    say "imaging: $(getstr "${C}StatusMessage_RBV")"
fi

# HDF5 in Stream mode, every cluster array, one file per run.
hdf5_start() {
    putstr "${H}FilePath" "$files/"
    putstr "${H}FileName" "bench"
    putstr "${H}FileTemplate" "%s%s_%d.h5"
    # NumCapture 0: until stopped (a large number would size HDF5's chunk
    # cache and NDFileHDF5's performance buffer by it).
    puts "$H" AutoIncrement:1 FileWriteMode:2 LazyOpen:1 NumCapture:0 \
        $hdf5_compression NumFramesChunks:"$chunk_frames" StoreAttr:"$store" \
        StorePerform:"$store" EnableCallbacks:1
    "$caput" -w 1 "${H}Capture" 1 >/dev/null 2>&1 || true
}
hdf5_stop() {
    "$caput" -w 1 "${H}Capture" 0 >/dev/null 2>&1 || true
    wait_for "${H}Capture_RBV" 0 120 || say "HDF5 capture did not stop"
    hdf5_frames=$(get "${H}NumCaptured_RBV")
    hdf5_bytes=$(du -cb "$files"/bench_*.h5 2>/dev/null | awk 'END{print $1 + 0}')
    rm -f "$files"/bench_*.h5
    put "${H}EnableCallbacks" 0
}

counters() { # source, plugin and HDF5 counters, drops, clusters, source frames taken
    get "${S}ArrayCounter_RBV" "${C}ArrayCounter_RBV" "${C}DroppedArrays_RBV" \
        "${H}ArrayCounter_RBV" "${H}DroppedArrays_RBV" "${C}TotalClusters_RBV" \
        "${S}NumImagesCounter_RBV" | tr '\n' ' '
}

# One run: RATE HDF5 -> a table row.
run() {
    rate=$1 with_hdf5=$2
    if [ "$rate" = 0 ]; then period=0; else period=$(awk "BEGIN{printf \"%.9f\", 1/$rate}"); fi
    put "${S}AcquirePeriod" "$period"
    [ "$with_hdf5" = 1 ] && hdf5_start
    start_acquire
    sleep "$warmup"
    read -r s0 p0 d0 h0 hd0 k0 n0 <<<"$(counters)"
    t0=$(now) c0=$(cpu_ticks) b0=$(busy_ticks)
    st0=$(thread_ticks ADMoenchSimTask) pt0=$(thread_ticks CLUSTER1_Plugin)
    ft0=$(thread_ticks CLUSTER1_Finder) ot0=$(thread_ticks CLUSTER1_Out)
    sw0=$(thread_waits ADMoenchSimTask) pw0=$(thread_waits CLUSTER1_Plugin)
    : >"$work/samples"
    end=$(awk "BEGIN{printf \"%.3f\", $t0 + $seconds}")
    while awk "BEGIN{exit !($(now) < $end)}"; do
        getf "${C}LastBatch_RBV" "${C}FinderTime_RBV" "${C}QueueFree" |
            tr '\n' ' ' >>"$work/samples"
        echo >>"$work/samples"
        sleep 0.5
    done
    read -r s1 p1 d1 h1 hd1 k1 n1 <<<"$(counters)"
    t1=$(now) c1=$(cpu_ticks) b1=$(busy_ticks)
    st1=$(thread_ticks ADMoenchSimTask) pt1=$(thread_ticks CLUSTER1_Plugin)
    ft1=$(thread_ticks CLUSTER1_Finder) ot1=$(thread_ticks CLUSTER1_Out)
    sw1=$(thread_waits ADMoenchSimTask) pw1=$(thread_waits CLUSTER1_Plugin)
    put "${S}Acquire" 0
    hdf5_bytes=0 hdf5_frames=0
    [ "$with_hdf5" = 1 ] && hdf5_stop
    # Let the plugin's queue drain before the next run.
    wait_for "${C}QueueFree" "$queue_size" 120 || say "the plugin's queue did not drain"
    awk -v rate="$rate" -v hdf5="$with_hdf5" -v t="$(awk "BEGIN{printf \"%.6f\", $t1 - $t0}")" \
        -v s="$((s1 - s0))" -v p="$((p1 - p0))" -v d="$((d1 - d0))" \
        -v sd="$(frames_skipped "$s0" "$n0" "$s1" "$n1")" \
        -v h="$((h1 - h0))" -v hd="$((hd1 - hd0))" -v k="$(awk "BEGIN{printf \"%.0f\", $k1 - $k0}")" \
        -v cpu="$((c1 - c0))" -v busy="$((b1 - b0))" -v tck="$(getconf CLK_TCK)" \
        -v source_cpu="$((st1 - st0))" -v plugin_cpu="$((pt1 - pt0))" \
        -v finder_cpu="$((ft1 - ft0))" -v output_cpu="$((ot1 - ot0))" \
        -v source_waits="$((sw1 - sw0))" -v plugin_waits="$((pw1 - pw0))" \
        -v qsize="$queue_size" -v bytes="$hdf5_bytes" -v written="$hdf5_frames" \
        -v compression="$compression" -v chunk="$chunk_frames" -v store="$store" '
        # A sample Channel Access could not take (an IOC saturating every
        # CPU starves its server) is left out.
        NF == 3 { n++; batch += $1; finder += $2; if (n == 1 || $3 < qmin) qmin = $3; qsum += $3 }
        END {
            queue = n ? sprintf("%d/%d (mean %.0f)", qmin, qsize, qsum / n) : "no samples"
            b = n ? sprintf("%.1f", batch / n) : "-"; f = n ? sprintf("%.3f", finder / n) : "-"
            printf "| %s | %s | %.0f | %d | %.0f | %d | %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f / %.2f | %.2f | %.2f | %.1f | %s | %s |\n",
                rate == 0 ? "max" : rate, hdf5 ? "Stream, " (store ? "" : "no attributes, ") compression ", " chunk " a chunk" : "off", s / t, sd, p / t, d,
                hdf5 ? hd : "-", queue, b, f,
                s ? source_cpu / tck / s * 1e6 : 0, p ? plugin_cpu / tck / p * 1e6 : 0,
                p ? finder_cpu / tck / p * 1e6 : 0, p ? output_cpu / tck / p * 1e6 : 0,
                s ? source_waits / s : 0, p ? plugin_waits / p : 0,
                cpu / tck / t, (busy - cpu) / tck / t, p ? k / p : 0,
                hdf5 && written ? sprintf("%.0f", bytes / written * h / 1048576 / t) : "-",
                hdf5 && written ? sprintf("%.1f", bytes / written / 1024) : "-"
        }' "$work/samples"
}

echo "IOC chain: $(machine)"
echo
echo "- command: ioc_bench.sh --backend $backend --streams $streams --size $size --rates $rates --seconds $seconds --hdf5 $hdf5 --compression $compression --chunk-frames $chunk_frames --hdf5-attributes $hdf5_attributes --cycle $cycle --flux $(getf "${S}MoenchFlux_RBV") --max-clusters $max_clusters --max-batch $max_batch --queue $queue --output-threads ${CLUSTER_OUTPUT_THREADS:-6} --source-threads $(get "${S}MoenchSourceThreads_RBV") --ring $ring --pedestal $pedestal --pinned $pinned --imaging $imaging --window $window --subpixels $subpixels --corrections $corrections --scanrate \"${CLUSTER_SCANRATE:-I/O Intr}\""
echo "- finder: $backend_rbv"
echo "- NDArray buffers: $pinned_note"
echo "- load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| rate asked (frames/s) | HDF5 | source frames/s | source dropped | plugin frames/s | plugin dropped | HDF5 dropped | plugin queue free min/size | arrays per core call | FinderTime ms/array | source thread CPU us/frame | plugin thread CPU us/frame | finder thread CPU us/frame | output threads CPU us/frame | source / plugin thread waits/frame | IOC CPU (cores) | other CPU (cores) | clusters/frame | HDF5 MB/s | HDF5 KiB/array on disk |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for with_hdf5 in $hdf5_modes; do
    for rate in ${rates//,/ }; do
        say "rate ${rate/#0/max}, HDF5 $([ "$with_hdf5" = 1 ] && echo on || echo off)"
        run "$rate" "$with_hdf5"
    done
done
echo
[ "$corrections" = on ] && echo "Corrections: common mode $(getf "${C}CommonModeRms_RBV") ADU rms in $(get "${C}CommonModeRegions_RBV") regions; gain map $(getstr "${C}GainMapInUse_RBV")"
[ "$imaging" = on ] && echo "Imaging: $(get "${C}ImagedPhotons_RBV") photons imaged in the runs ($(get "${C}ImageUninterpolable_RBV") uninterpolable, $(get "${C}ImageOutside_RBV") clusters outside the window), by $(getstr "${C}EtaCalibration_RBV"); status: $(getstr "${C}StatusMessage_RBV")"
echo "IOC resident memory at the end: $(($(rss_kib) / 1024)) MiB (peak $(($(awk '/^VmHWM/{print $2}' "/proc/$pid/status") / 1024)) MiB)."
