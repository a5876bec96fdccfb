#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_sls_bench.sh: the rate of the real MÖNCH chain. It starts PSI's
# virtual MÖNCH server, a receiver (moenchSimReceiver, with simulated
# photons, or PSI's plain slsReceiver) and the example IOC on PSI's
# driver (iocMoench) on loopback, trains the pedestal, then for each rate
# acquires RATE x SECONDS frames and prints one markdown row: frames the
# receiver caught and the packets it missed, the arrays the driver made
# from its ZMQ stream and those the plugin took and dropped, the rate
# reached, and the CPU (in cores) of the server, the receiver, the IOC
# and, of the IOC's, the plugin's threads. A rate loses nothing when every
# frame is caught whole and every frame but the first one or two (which
# the driver's late subscription to the stream can miss) reaches the
# plugin, none dropped. The rate reached is the plugin's, from its first
# array of the acquisition to its last.
# Needs bash, awk, pgrep, EPICS's caget/caput and slsDetectorPackage's
# programs; runs from a build tree or from the device bundle.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ioc_lib.sh"
. "$here/sls_chain.sh"
usage() {
    cat <<EOF
usage: ioc_sls_bench.sh [options]
  --rates LIST              frames/s (default 500,1000,1500,2000)
  --seconds T               seconds of frames per rate (default 5)
  --backend cpu|cuda|auto   the plugin's Backend (default auto)
  --receiver sim|plain      moenchSimReceiver (photons) or slsReceiver
                            (the server's pattern) (default sim)
  --dark N                  dark frames that train the pedestal (default 200)
  --cycle K                 moenchSimReceiver's distinct data frames (default 500)
  --output-threads N        the plugin's output threads (default 2)
  --sls-bin DIR             slsDetectorPackage's programs (default: the build's)
EOF
    common_usage
}
rates=500,1000,1500,2000 seconds=5 backend=auto receiver=sim dark=200
cycle=500 sls_bin="" output_threads=2
script_option() {
    case $1 in
    --rates) rates=$2 ;; --seconds) seconds=$2 ;; --backend) backend=$2 ;;
    --receiver) receiver=$2 ;; --dark) dark=$2 ;; --cycle) cycle=$2 ;;
    --output-threads) output_threads=$2 ;; --sls-bin) sls_bin=$2 ;;
    *) return 1 ;;
    esac
}
parse_options "$@"
case $backend in cpu|cuda|auto) ;; *) usage >&2; exit 2 ;; esac
case $receiver in sim|plain) ;; *) usage >&2; exit 2 ;; esac
ioc=${ioc:-$build/ioc/run-iocMoench}
ioc_set_up
SLS_BIN=${sls_bin:-}
[ -n "$SLS_BIN" ] || SLS_BIN=$(sed -n 's/^SLS_BIN=//p' "$build/ioc/epicsTools" 2>/dev/null)
[ -x "$SLS_BIN/moenchDetectorServer_virtual" ] ||
    { echo "$0: no slsDetectorPackage programs in '$SLS_BIN' (--sls-bin)" >&2; exit 2; }
sim_receiver=$build/moenchSimReceiver/moenchSimReceiver
[ -x "$sim_receiver" ] || sim_receiver=$build/bin/moenchSimReceiver

sls_chain_ports $((port_base + 8))
trap 'stop_ioc; stop_sls; rm -rf "$work"' EXIT
export SLS_CONFIG="$work/moench.config"
export CLUSTER_OUTPUT_THREADS=$output_threads
start_sls_server || die "the virtual server did not start"
if [ "$receiver" = sim ]; then
    start_sls_receiver "$sim_receiver" --port "$receiver_port" --dark "$dark" \
        --cycle "$cycle" || die "moenchSimReceiver did not start"
else
    start_sls_receiver "$SLS_BIN/slsReceiver" -t "$receiver_port" || die "slsReceiver did not start"
fi
write_sls_config "$SLS_CONFIG"
start_ioc
D=${P}cam1:
case $backend in cpu) state=CPU ;; cuda) state=CUDA ;; *) state=Auto ;; esac
putstr "${C}Backend" "$state"
puts "$D" ReceiverMode:1 AcquireTime:0.00001 ArrayCallbacks:1 AutoSave:0
puts "$C" EnableCallbacks:1 PedestalFrames:"$dark"
# acquire FRAMES PERIOD: one acquisition, to its end and the plugin's.
acquire() {
    puts "$D" NumFrames:"$1" AcquirePeriod:"$2"
    "$caput" -c -w 600 "${D}Acquire" 1 >/dev/null || die "the acquisition of $1 frames did not end"
    wait_for "${C}ArrayCounter_RBV" "$(get "${D}ArrayCounter_RBV")" 60 ||
        say "the plugin took $(get "${C}ArrayCounter_RBV") of the driver's $(get "${D}ArrayCounter_RBV") arrays"
}
say "training the pedestal on $dark dark frames"
acquire "$dark" 0.001
[ "$(getstr "${C}PedestalState_RBV")" = Ready ] || die "the pedestal did not train: $(getstr "${C}StatusMessage_RBV")"
backend_in_use "$backend"

ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null; done | awk '{t += $1} END {print t + 0}'; }
hz=$(getconf CLK_TCK)
echo "### The real MÖNCH chain: virtual server, $receiver receiver, iocMoench"
echo
echo "- $(machine); plugin: $backend_rbv; $output_threads output threads; receiver: $receiver"
echo
echo "| asked frames/s | frames | caught | missed packets | driver arrays | plugin arrays | dropped | reached frames/s | server cores | receiver cores | IOC cores | plugin threads' cores | nothing lost |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for rate in ${rates//,/ }; do
    frames=$((rate * seconds))
    period=$(awk -v r="$rate" 'BEGIN {printf "%.9f", 1 / r}')
    driver0=$(get "${D}ArrayCounter_RBV") plugin0=$(get "${C}ArrayCounter_RBV")
    dropped0=$(get "${C}DroppedArrays_RBV")
    server0=$(ticks $sls_pids) receiver0=$(ticks "$receiver_pid") ioc0=$(ticks "$pid")
    plugin_threads0=$(thread_ticks CLUSTER1_)
    # The rate is the plugin's, from its first array of the acquisition
    # to its last, sampled every 0.1 s; the CPU is over the same span.
    puts "$D" NumFrames:"$frames" AcquirePeriod:"$period"
    "$caput" -c -w 600 "${D}Acquire" 1 >/dev/null 2>&1 &
    acquiring=$!
    first_t="" first_n="" last_t="" last_n=$plugin0
    while :; do
        n=$(get "${C}ArrayCounter_RBV") t=$(now)
        if [ "$n" -gt "$last_n" ]; then
            [ -n "$first_t" ] || { first_t=$t first_n=$n; }
            last_t=$t last_n=$n
        fi
        if ! kill -0 $acquiring 2>/dev/null &&
            [ "$n" = "$(get "${D}ArrayCounter_RBV")" ]; then
            break
        fi
        sleep 0.1
    done
    wait $acquiring || die "the acquisition of $frames frames did not end"
    elapsed=$(awk -v a="${first_t:-0}" -v b="${last_t:-1}" 'BEGIN {print (b > a ? b - a : 1)}')
    caught=$(sls_get rx_framescaught) missed=$(sls_get rx_missingpackets)
    driver=$(($(get "${D}ArrayCounter_RBV") - driver0))
    plugin=$(($(get "${C}ArrayCounter_RBV") - plugin0))
    dropped=$(($(get "${C}DroppedArrays_RBV") - dropped0))
    cores() { awk -v t="$1" -v hz="$hz" -v s="$elapsed" 'BEGIN {printf "%.2f", t / hz / s}'; }
    server=$(cores $(($(ticks $sls_pids) - server0)))
    receiver_cores=$(cores $(($(ticks "$receiver_pid") - receiver0)))
    ioc_cores=$(cores $(($(ticks "$pid") - ioc0)))
    plugin_cores=$(cores $(($(thread_ticks CLUSTER1_) - plugin_threads0)))
    whole=no
    [ "$caught" = "$frames" ] && [ "${missed:-1}" = 0 ] && [ "$plugin" = "$driver" ] &&
        [ $((frames - driver)) -le 2 ] && [ "$dropped" = 0 ] && whole=yes
    reached=$(awk -v n="$((last_n - ${first_n:-$last_n}))" -v s="$elapsed" 'BEGIN {printf "%.0f", n / s}')
    echo "| $rate | $frames | $caught | $missed | $driver | $plugin | $dropped | $reached | $server | $receiver_cores | $ioc_cores | $plugin_cores | $whole |"
done
