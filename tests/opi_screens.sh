#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# opi_screens.sh: the control-room screens against the live example IOC.
# The Phoebus (.bob) and caQtDM (.ui) screens must be well-formed XML.
# tests/opi_check.py opens the plugin's screen, the source's and the
# example IOC's top-level screen with the macros st.cmd gives them, follows
# every composite, embedded screen and related display, and checks that
# each linked file exists and that every PV named is a record of the IOC
# (its dbl); tests/ioc_slsdetector.sh does the same for iocMoench's.
# Where Xvfb and ImageMagick are installed, the three screens are
# rendered in MEDM and in caQtDM, each that is installed, against the
# running IOC: frames flowing, the HDF5 writer capturing, an eta
# calibration taken and the interpolated image made; the screenshots are
# kept as tests/<screen>_medm.png and tests/<screen>_caqtdm.png, and
# caQtDM must have built every widget and include. SKIP (77) without
# EPICS.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"
top=$(cd "$(dirname "$0")/.." && pwd)
screens=$top/opi

for screen in "$screens"/*.bob "$screens"/*.ui; do
    python3 -c "import sys, xml.etree.ElementTree as t; t.parse(sys.argv[1])" \
        "$screen" || fail "$screen is not well-formed XML"
done
echo "ok: the $(ls "$screens"/*.bob "$screens"/*.ui | wc -l) .bob and .ui screens are well-formed XML"

start_ioc 1
ioc_shell "dbl > $work/records.txt"
sleep 1
[ -s "$work/records.txt" ] || fail "dbl wrote nothing"
python3 "$top/tests/opi_check.py" "$work/records.txt" "$screens" \
    "$(dirname "$ADCORE_OP_ADL")" "$top/iocBoot/iocClusterCUDA/st.cmd" "$P" \
    >"$work/check.txt" || { cat "$work/check.txt"; fail "the screens do not match the IOC"; }
sed 's/^/ok: /' "$work/check.txt"

medm=$(command -v medm || true)
[ -n "$medm" ] || [ ! -x /opt/epics/bin/medm ] || medm=/opt/epics/bin/medm
# caQtDM: on PATH, or built under /opt/caqtdm with its environment
# (CAQTDM_ENV names another run_env.sh).
caqtdm_env=${CAQTDM_ENV:-/opt/caqtdm/run_env.sh}
caqtdm=$(command -v caQtDM || true)
[ -n "$caqtdm" ] || [ ! -r "$caqtdm_env" ] || caqtdm=$(. "$caqtdm_env" && command -v caQtDM || true)
if ! command -v Xvfb >/dev/null || ! command -v import >/dev/null; then
    echo "not rendered: Xvfb and ImageMagick's import are needed; the files are checked"
    exit 0
fi
[ -n "$medm" ] || echo "not rendered: no MEDM (medm); the .adl files are checked"
[ -n "$caqtdm" ] || echo "not rendered: no caQtDM (caQtDM, or $caqtdm_env); the .ui files are checked"
[ -n "$medm$caqtdm" ] || exit 0
# Frames flowing: dark frames to train, then photons, at 20 Hz; the
# clusters written to HDF5, the hit map served; then a flat-field eta
# calibration from them and the interpolated image, every photon in it.
put "${C}EnableCallbacks" 1
put "${C}PedestalFrames" 20
put "${C}AduPerKeV" 100 # the energies, the spectrum's axis too, in keV
put "${C}SpectrumPeriod" 0.5
put "${P}image1:EnableCallbacks" 1
put "${P}interp1:EnableCallbacks" 1
putstr "${P}HDF1:FilePath" "$work/"
putstr "${P}HDF1:FileName" "screens"
putstr "${P}HDF1:FileTemplate" "%s%s.h5"
put "${P}HDF1:EnableCallbacks" 1
put "${P}HDF1:FileWriteMode" 2
put "${P}HDF1:LazyOpen" 1
put "${P}HDF1:NumCapture" 100000
"$caput" -w 1 "${P}HDF1:Capture" 1 >/dev/null 2>&1 || true # done when all are captured
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:MoenchDarkFrames" 20
put "${P}cam1:AcquirePeriod" 0.05
put "${P}cam1:ImageMode" 2
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
wait_for "${C}PedestalState_RBV" 1
put "${C}EtaMode" 1
sleep 4
put "${C}WindowEnable" 0
put "${C}EtaMode" 2
# Each screen in each tool on an X server of its own (-displayfd: a free
# display), with the example IOC's macros.
set -- NDClusterCUDA "P=${P},R=Cluster1:" ADMoenchSim "P=${P},R=cam1:" \
    iocClusterCUDA "P=${P},CAM=cam1:,CLUSTER=Cluster1:,HDF=HDF1:,IMAGE=image1:,INTERP=interp1:"
pids="" caqtdm_pids=""
trap 'kill $pids $caqtdm_pids 2>/dev/null; stop_ioc; rm -rf "$work"' EXIT
# xserver NAME: an X server, its display number in $work/NAME.display.
xserver() {
    Xvfb -displayfd 1 -screen 0 1600x1200x24 >"$work/$1.display" 2>"$work/$1.xvfb.log" &
    pids="$pids $!"
    for _ in $(seq 50); do
        [ -s "$work/$1.display" ] && return 0
        sleep 0.1
    done
    fail "Xvfb did not start: $(cat "$work/$1.xvfb.log")"
}
while [ $# -gt 0 ]; do
    if [ -n "$medm" ]; then
        xserver "$1_medm"
        EPICS_DISPLAY_PATH="$screens:$ADCORE_OP_ADL" DISPLAY=:$(cat "$work/$1_medm.display") \
            "$medm" -x -macro "$2" "$screens/$1.adl" >"$work/$1_medm.log" 2>&1 &
        pids="$pids $!"
    fi
    if [ -n "$caqtdm" ]; then
        # The include path: ours, ADCore's NDPluginBase.ui, and caQtDM's
        # own tests folder, which holds its stylesheet. The interpolated
        # image is 16 MB.
        xserver "$1_caqtdm"
        (
            [ ! -r "$caqtdm_env" ] || . "$caqtdm_env"
            CAQTDM_DISPLAY_PATH="$screens:$(dirname "$ADCORE_OP_ADL")/ui/autoconvert:$(dirname "$(dirname "$caqtdm")")/caQtDM_Tests" \
                EPICS_CA_MAX_ARRAY_BYTES=20000000 DISPLAY=:$(cat "$work/$1_caqtdm.display") \
                exec "$caqtdm" -noMsg -macro "$2" "$screens/$1.ui"
        ) >"$work/$1_caqtdm.log" 2>&1 &
        caqtdm_pids="$caqtdm_pids $!"
    fi
    screens_shown="${screens_shown:-} $1"
    shift 2
done
sleep 13 # MEDM's own splash window closes by itself after about 12 s
mkdir -p "$builddir/tests"
for screen in $screens_shown; do
    for tool in medm caqtdm; do
        [ -s "$work/${screen}_$tool.display" ] || continue
        shot=$builddir/tests/${screen}_$tool.png
        DISPLAY=:$(cat "$work/${screen}_$tool.display") import -window root "$shot" ||
            fail "no screenshot of $screen in $tool"
        colours=$(convert "$shot" -format %k info:)
        [ "$colours" -gt 8 ] ||
            fail "the $tool screenshot of $screen has only $colours colours: $(cat "$work/${screen}_$tool.log")"
        echo "ok: $tool rendered $screen against the live IOC: $shot ($colours colours)"
    done
done
# caQtDM ends on TERM (a KILL if it does not), and says what it could
# not build.
for p in $caqtdm_pids; do
    kill -TERM "$p"
    for _ in $(seq 25); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.2
    done
    kill -KILL "$p" 2>/dev/null || true
done
caqtdm_pids=""
for log in "$work"/*_caqtdm.log; do
    [ -e "$log" ] || continue
    ! grep -E "unable to create a widget of the class|could not load include file" "$log" ||
        fail "caQtDM could not build all of $(basename "$log" _caqtdm.log).ui"
done
put "${P}cam1:Acquire" 0
put "${P}HDF1:Capture" 0
