#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ioc_demo.sh: the plugin's first run in one command (./quickstart ioc).
# It starts the example IOC (iocBoot/iocClusterCUDA/st.cmd) on a private
# Channel Access port on loopback (tools/ioc_lib.sh), prints the PV
# prefix and the environment another terminal needs to reach the PVs,
# opens the NDClusterCUDA screen in caQtDM or MEDM when there is a
# display, trains the pedestal on simulated dark frames, then streams
# ADMoenchSim's simulated photons through the finder at --rate frames/s
# (default MÖNCH's 1.3 kHz) and prints, once a second, the frames/s, the
# clusters a frame, the fitted line of the spectrum and what was dropped,
# read from the plugin's PVs. Ctrl-C (SIGINT) or SIGTERM, or the end of
# --seconds, stops the IOC, the screen and everything else it started,
# and removes its scratch folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ioc_lib.sh"
usage() {
    cat <<EOF
usage: ioc_demo.sh [options]
  --rate HZ                 frames/s streamed after the pedestal (default
                            1300, MÖNCH's rate: AcquirePeriod 1/1300 s;
                            0 = as fast as the source makes frames)
  --seconds N               stream N seconds, then stop (default 0: until
                            Ctrl-C)
  --prefix PFX              the PV prefix (default CC:, st.cmd's)
  --no-screen               open no screen
  --screen auto|caqtdm|medm|no
                            the NDClusterCUDA screen (default auto: caQtDM,
                            else MEDM, when \$DISPLAY is set and the tool is
                            found: caQtDM on PATH or through \$CAQTDM_ENV,
                            default /opt/caqtdm/run_env.sh; medm on PATH)
  --backend cpu|cuda|auto   the plugin's Backend (default auto)
  --pedestal N              dark frames the pedestal trains on,
                            PedestalFrames (default 1000)
  --cycle K                 MoenchCycleFrames: K simulated data frames
                            repeated (default 500; 0 simulates every frame,
                            about 435 frames/s on two cores)
  --flux X                  MoenchFlux, photons a simulated frame (default
                            the source's, 2330)
EOF
    common_usage
}
rate=1300 seconds=0 prefix=CC: screen=auto backend=auto pedestal=1000 cycle=500 flux=""
script_option() {
    case $1 in
    --rate) rate=$2 ;; --seconds) seconds=$2 ;; --prefix) prefix=$2 ;;
    --screen) screen=$2 ;; --backend) backend=$2 ;; --pedestal) pedestal=$2 ;;
    --cycle) cycle=$2 ;; --flux) flux=$2 ;;
    *) return 1 ;;
    esac
}
# --no-screen takes no value; parse_options takes the rest in pairs.
args=()
for arg in "$@"; do
    case $arg in --no-screen) screen=no ;; *) args+=("$arg") ;; esac
done
parse_options "${args[@]}"
number() { [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; }
number "$rate" && [[ $seconds =~ ^[0-9]+$ ]] && [[ $pedestal =~ ^[0-9]+$ ]] &&
    [[ $cycle =~ ^[0-9]+$ ]] && { [ -z "$flux" ] || number "$flux"; } &&
    [ "$pedestal" -gt 0 ] || { usage >&2; exit 2; }
case $screen in auto|caqtdm|medm|no) ;; *) usage >&2; exit 2 ;; esac
case $backend in cpu|cuda|auto) ;; *) usage >&2; exit 2 ;; esac

[ -n "$ioc" ] || [ -x "$build/ioc/run-iocClusterCUDA" ] ||
    die "$build has no example IOC: configure did not find EPICS base, asyn and ADCore (./quickstart deps builds them, then ./quickstart ioc; or --build a build tree that has them)"
ioc_set_up
# The prefix asked for (ioc_set_up names the PVs B<pid>:), on the same
# private port.
ioc_loopback_ca "$prefix"
H=${P}HDF1: S=${P}cam1:

# Stopping: on Ctrl-C, SIGTERM, the end of --seconds or an error, the
# screen, then the IOC (its shell closed; killed if it has not ended in
# 5 s), then the scratch folder.
screen_pid="" stopping="" font_path=""
stop_screen() {
    [ -n "$screen_pid" ] || return 0
    kill -TERM "$screen_pid" 2>/dev/null || true
    for _ in $(seq 25); do
        kill -0 "$screen_pid" 2>/dev/null || break
        sleep 0.2
    done
    kill -KILL "$screen_pid" 2>/dev/null || true
    wait "$screen_pid" 2>/dev/null || true
    screen_pid=""
}
finish() {
    local status=$?
    trap '' INT TERM # a second Ctrl-C does not cut the clean-up short
    local ioc_pid=$pid had_screen=$screen_pid
    [ -z "$ioc_pid" ] || kill -0 "$ioc_pid" 2>/dev/null || ioc_pid=""
    [ -z "$had_screen" ] || kill -0 "$had_screen" 2>/dev/null || had_screen=""
    stop_screen
    [ -z "$font_path" ] || xset -fp "$font_path" 2>/dev/null || true
    stop_ioc
    rm -rf "$work"
    local what=${ioc_pid:+the IOC (pid $ioc_pid)}
    what=$what${had_screen:+${what:+, }the screen (pid $had_screen)}
    echo "ioc_demo: stopped${stopping:+ ($stopping)}: ${what:+$what; }$work removed"
    exit "$status"
}
trap finish EXIT
trap 'stopping="interrupted (SIGINT)"; exit 130' INT
trap 'stopping="terminated (SIGTERM)"; exit 143' TERM

# open_screen: the plugin's screen, NDClusterCUDA, in caQtDM or MEDM (as
# tests/opi_render.sh opens it), with the IOC's Channel Access
# environment (exported); says which, or why none.
open_screen() {
    local caqtdm="" medm="" caqtdm_env=${CAQTDM_ENV:-/opt/caqtdm/run_env.sh}
    local opi=$here/../opi adl_dir="" macros="P=${P},R=Cluster1:"
    if [ "$screen" = no ]; then echo "Screen: none (--no-screen)"; return 0; fi
    if [ -z "${DISPLAY:-}" ]; then echo "Screen: none (no \$DISPLAY)"; return 0; fi
    if [ ! -r "$opi/NDClusterCUDA.ui" ]; then echo "Screen: none (no $opi)"; return 0; fi
    opi=$(cd "$opi" && pwd)
    # ADCore's screens (NDPluginBase, embedded): epicsTools says where.
    [ -r "$build/ioc/epicsTools" ] &&
        adl_dir=$(. "$build/ioc/epicsTools" && echo "${ADCORE_OP_ADL:-}")
    if [ "$screen" != medm ]; then
        caqtdm=$(command -v caQtDM || true)
        [ -n "$caqtdm" ] || [ ! -r "$caqtdm_env" ] ||
            caqtdm=$(set +u; . "$caqtdm_env" >/dev/null 2>&1 && command -v caQtDM || true)
    fi
    if [ "$screen" != caqtdm ] && [ -z "$caqtdm" ]; then
        medm=$(command -v medm || true)
        [ -n "$medm" ] || [ ! -x /opt/epics/bin/medm ] || medm=/opt/epics/bin/medm
    fi
    # The screen must not hold the IOC's shell (fd 9) open.
    if [ -n "$caqtdm" ]; then
        (
            set +u
            [ -n "$(command -v caQtDM)" ] || [ ! -r "$caqtdm_env" ] || . "$caqtdm_env"
            CAQTDM_DISPLAY_PATH="$opi${adl_dir:+:$(dirname "$adl_dir")/ui/autoconvert}:$(dirname "$(dirname "$caqtdm")")/caQtDM_Tests" \
                exec "$caqtdm" -noMsg -macro "$macros" "$opi/NDClusterCUDA.ui"
        ) 9>&- </dev/null >"$work/screen.log" 2>&1 &
        screen_pid=$!
        echo "Screen: caQtDM $opi/NDClusterCUDA.ui -macro \"$macros\" (pid $screen_pid)"
    elif [ -n "$medm" ]; then
        # MEDM's widgetDM_* font names, where its build gives them
        # (tools/deps/build.sh: MEDM_FONT_PATH, a fonts.alias onto
        # Debian's fonts), for as long as the demo runs.
        if [ -n "${MEDM_FONT_PATH:-}" ] && command -v xset >/dev/null &&
            xset +fp "$MEDM_FONT_PATH" 2>/dev/null; then
            font_path=$MEDM_FONT_PATH
        fi
        # -local: a MEDM of our own, not a display handed to one running.
        EPICS_DISPLAY_PATH="$opi${adl_dir:+:$adl_dir}" \
            "$medm" -x -local -macro "$macros" "$opi/NDClusterCUDA.adl" \
            9>&- </dev/null >"$work/screen.log" 2>&1 &
        screen_pid=$!
        echo "Screen: MEDM $opi/NDClusterCUDA.adl -macro \"$macros\" (pid $screen_pid)"
    else
        case $screen in
        caqtdm) echo "Screen: none (no caQtDM on PATH, nor $caqtdm_env)" ;;
        medm) echo "Screen: none (no medm on PATH)" ;;
        *) echo "Screen: none (neither caQtDM, on PATH or $caqtdm_env, nor medm on PATH)" ;;
        esac
    fi
}

start_ioc
cat <<EOF
The example IOC is running (pid $pid) on the simulated MÖNCH source.
PV prefix: $P (source ${S}, cluster finder ${C}, HDF5 writer ${H})
Channel Access is private to this machine: loopback only, port $EPICS_CA_SERVER_PORT. From another terminal:
  export EPICS_CA_SERVER_PORT=$EPICS_CA_SERVER_PORT EPICS_CA_ADDR_LIST=$EPICS_CA_ADDR_LIST EPICS_CA_AUTO_ADDR_LIST=$EPICS_CA_AUTO_ADDR_LIST EPICS_CA_MAX_ARRAY_BYTES=$EPICS_CA_MAX_ARRAY_BYTES
  $caget ${C}ArrayCounter_RBV ${C}NumClusters_RBV ${C}PeakPosition_RBV ${C}PeakSigma_RBV
Scratch folder: $work (IOC output: $log)
EOF
open_screen

set_up_finder "$backend" 2 3 5000 "$pedestal"
train_pedestal "$pedestal"
backend_in_use "$backend"
echo "Pedestal: $(getstr "${C}PedestalState_RBV"), trained on $pedestal dark frames (noise $(getf -f2 "${C}NoiseMean_RBV") ADU a pixel); finder: $backend_rbv"

if [ "$(awk "BEGIN{print ($rate > 0)}")" = 1 ]; then
    period=$(awk "BEGIN{printf \"%.9f\", 1/$rate}")
    rate_words="$rate frames/s (AcquirePeriod $period s)"
else
    period=0 rate_words="as fast as the source makes frames (AcquirePeriod 0)"
fi
puts "$S" MoenchDarkFrames:0 MoenchCycleFrames:"$cycle" ImageMode:2 AcquirePeriod:"$period"
[ -z "$flux" ] || put "${S}MoenchFlux" "$flux"
start_acquire
echo "Streaming at $rate_words, $(getf "${S}MoenchFlux_RBV") photons a frame$([ "$cycle" -gt 0 ] && echo ", $cycle simulated frames repeated"); $([ "$seconds" -gt 0 ] && echo "$seconds s" || echo "until Ctrl-C"):"

# About once a second (each reading starts a second after the last, or
# at once when Channel Access took longer): the plugin's frames/s and the
# source's (their ArrayCounter_RBV), the clusters a frame over that time
# (TotalClusters_RBV over ArrayCounter_RBV; NumClusters_RBV, the last
# frame's, when no frame came), the spectrum's fitted line (published
# every SpectrumPeriod) and the arrays and clusters dropped.
live_pvs=("${S}ArrayCounter_RBV" "${C}ArrayCounter_RBV" "${C}TotalClusters_RBV"
    "${C}NumClusters_RBV" "${C}PeakFitted_RBV" "${C}PeakPosition_RBV"
    "${C}PeakSigma_RBV" "${C}DroppedArrays_RBV" "${C}DroppedClusters_RBV")
microseconds() { echo "${EPOCHREALTIME/./}"; }
# reading: the time (microseconds) and the values of live_pvs, on one
# line; nothing when the IOC did not answer for them all. (caget reads
# the values once it has connected, which is most of its time: the time
# is taken when it returns.)
reading() {
    local values
    values=$("$caget" -t -n -f2 -w 5 "${live_pvs[@]}" 2>/dev/null | tr '\n' ' ')
    [[ $values =~ ^([0-9.e+-]+\ ){9}$ ]] && echo "$(microseconds) $values"
}
started=$(microseconds) last=$started
previous=$(reading)
while [ "$seconds" -eq 0 ] || [ $(($(microseconds) - started)) -lt $((seconds * 1000000)) ]; do
    wait_us=$((last + 1000000 - $(microseconds)))
    [ $wait_us -le 0 ] || sleep "$((wait_us / 1000000)).$(printf %06d $((wait_us % 1000000)))"
    kill -0 "$pid" 2>/dev/null || { pid=""; tail -n 5 "$log" >&2; die "the IOC ended"; }
    last=$(microseconds)
    current=$(reading)
    if [ -z "$current" ]; then
        printf '%6s s  (no answer from the IOC)\n' "$(((last - started) / 1000000)).$(((last - started) % 1000000 / 100000))"
    elif [ -n "$previous" ]; then
        awk -v started="$started" -v a="$previous" -v b="$current" 'BEGIN {
            split(a, p, " "); split(b, q, " ")
            dt = (q[1] - p[1]) / 1e6; frames = q[3] - p[3]
            line = q[6] == 1 ? sprintf("line at %s ADU, sigma %s ADU", q[7], q[8]) : "line not fitted yet"
            printf "%6.1f s  %7.1f frames/s (source %7.1f)  %7.1f clusters/frame  %s  dropped %d arrays, %d clusters\n",
                (q[1] - started) / 1e6, frames / dt, (q[2] - p[2]) / dt,
                (frames > 0 ? (q[4] - p[4]) / frames : q[5]), line, q[9], q[10]
        }'
    fi
    [ -z "$current" ] || previous=$current
done
stopping="$seconds s done"
put "${S}Acquire" 0
exit 0
