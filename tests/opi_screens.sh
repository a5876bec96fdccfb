#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# opi_screens.sh: the control-room screens against the live example IOC.
# The Phoebus (.bob) and caQtDM (.ui) screens must be well-formed XML.
# tests/opi_check.py opens the plugin's screen, the source's and the
# example IOC's top-level screen with the macros st.cmd gives them, follows
# every composite, embedded screen and related display, and checks that
# each linked file exists and that every PV named is a record of the IOC
# (its dbl). Where MEDM, Xvfb and ImageMagick are installed, the three
# MEDM screens are rendered against the running IOC, frames flowing and
# the HDF5 writer capturing, and the screenshots kept as
# tests/<screen>_medm.png. SKIP (77) without EPICS.
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
if [ -z "$medm" ] || ! command -v Xvfb >/dev/null || ! command -v import >/dev/null; then
    echo "not rendered: MEDM, Xvfb and ImageMagick's import are needed; the files are checked"
    exit 0
fi
# Frames flowing: dark frames to train, then photons, at 20 Hz; the
# clusters written to HDF5 and the hit map served.
put "${C}EnableCallbacks" 1
put "${C}PedestalFrames" 20
put "${C}SpectrumPeriod" 0.5
put "${P}image1:EnableCallbacks" 1
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
# Each screen on an X server of its own (-displayfd: a free display),
# with the example IOC's macros.
set -- NDClusterCUDA "P=${P},R=Cluster1:" ADMoenchSim "P=${P},R=cam1:" \
    iocClusterCUDA "P=${P},CAM=cam1:,CLUSTER=Cluster1:,HDF=HDF1:,IMAGE=image1:"
pids=""
trap 'kill $pids 2>/dev/null; stop_ioc; rm -rf "$work"' EXIT
while [ $# -gt 0 ]; do
    Xvfb -displayfd 1 -screen 0 1400x1200x24 >"$work/$1.display" 2>"$work/$1.xvfb.log" &
    pids="$pids $!"
    for _ in $(seq 50); do
        [ -s "$work/$1.display" ] && break
        sleep 0.1
    done
    [ -s "$work/$1.display" ] || fail "Xvfb did not start: $(cat "$work/$1.xvfb.log")"
    EPICS_DISPLAY_PATH="$screens:$ADCORE_OP_ADL" DISPLAY=:$(cat "$work/$1.display") \
        "$medm" -x -macro "$2" "$screens/$1.adl" >"$work/$1.medm.log" 2>&1 &
    pids="$pids $!"
    shift 2
done
sleep 13 # MEDM's own splash window closes by itself after about 12 s
mkdir -p "$builddir/tests"
for screen in NDClusterCUDA ADMoenchSim iocClusterCUDA; do
    shot=$builddir/tests/${screen}_medm.png
    DISPLAY=:$(cat "$work/$screen.display") import -window root "$shot" ||
        fail "no screenshot of $screen"
    colours=$(convert "$shot" -format %k info:)
    [ "$colours" -gt 8 ] ||
        fail "the $screen screenshot has only $colours colours: $(cat "$work/$screen.medm.log")"
    echo "ok: MEDM rendered $screen.adl against the live IOC: $shot ($colours colours)"
done
put "${P}cam1:Acquire" 0
put "${P}HDF1:Capture" 0
