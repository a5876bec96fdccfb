#!/bin/sh
# opi_screens.sh: the control-room screens against the live example IOC.
# The Phoebus (.bob) and caQtDM (.ui) screens must be well-formed XML, and
# every PV that any of the three screens names must be a record of the
# IOC (its dbl). Where MEDM and Xvfb are installed, the MEDM screen is
# rendered against the running IOC, frames flowing, and the screenshot
# kept as tests/NDClusterCUDA_medm.png. SKIP (77) without EPICS.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/ioc_common.sh"
screens=$(cd "$(dirname "$0")/../opi" && pwd)

for screen in "$screens/NDClusterCUDA.bob" "$screens/NDClusterCUDA.ui"; do
    python3 -c "import sys, xml.etree.ElementTree as t; t.parse(sys.argv[1])" \
        "$screen" || fail "$screen is not well-formed XML"
done
echo "ok: the .bob and .ui screens are well-formed XML"

start_ioc 1
ioc_shell "dbl > $work/records.txt"
sleep 1
[ -s "$work/records.txt" ] || fail "dbl wrote nothing"
# Every PV named on a screen, with P and R as the example IOC's finder.
python3 - "$screens" "$C" >"$work/pvs.txt" <<'PYTHON'
import re, sys
screens, prefix = sys.argv[1], sys.argv[2]
adl = open(screens + "/NDClusterCUDA.adl").read()
bob = open(screens + "/NDClusterCUDA.bob").read()
ui = open(screens + "/NDClusterCUDA.ui").read()
names = re.findall(r'(?:chan|xdata|ydata)="([^"]+)"', adl)
names += [n for n in re.findall(r"<(?:pv_name|x_pv|y_pv)>([^<]+)<", bob)
          if n != "$(pv_name)"]
for channels in re.findall(
        r'<property name="channels?(?:_1)?">\s*<string>([^<]+)</string>', ui):
    names += channels.split(";")
for name in sorted(set(names)):
    print(name.replace("$(P)$(R)", prefix))
PYTHON
missing=$(grep -v -x -F -f "$work/records.txt" "$work/pvs.txt" || true)
[ -z "$missing" ] || fail "PVs on the screens that the IOC lacks: $missing"
echo "ok: all $(wc -l <"$work/pvs.txt") PVs on the screens are records of the IOC"

medm=$(command -v medm || true)
[ -n "$medm" ] || [ ! -x /opt/epics/bin/medm ] || medm=/opt/epics/bin/medm
if [ -z "$medm" ] || ! command -v Xvfb >/dev/null || ! command -v import >/dev/null; then
    echo "not rendered: MEDM, Xvfb and ImageMagick's import are needed; the files are checked"
    exit 0
fi
# Frames flowing: dark frames to train, then photons, at 20 Hz.
put "${C}EnableCallbacks" 1
put "${C}PedestalFrames" 20
put "${C}SpectrumPeriod" 0.5
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:MoenchDarkFrames" 20
put "${P}cam1:AcquirePeriod" 0.05
put "${P}cam1:ImageMode" 2
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
wait_for "${C}PedestalState_RBV" 1
display=:$((50 + $$ % 40))
Xvfb "$display" -screen 0 1280x1024x24 >"$work/xvfb.log" 2>&1 &
xvfb=$!
sleep 2
EPICS_DISPLAY_PATH="$screens:$ADCORE_OP_ADL" DISPLAY=$display \
    "$medm" -x -macro "P=${P},R=Cluster1:" "$screens/NDClusterCUDA.adl" \
    >"$work/medm.log" 2>&1 &
medm_pid=$!
sleep 13 # MEDM's own splash window closes by itself after about 12 s
shot=$builddir/tests/NDClusterCUDA_medm.png
DISPLAY=$display import -window root "$shot" || fail "no screenshot"
kill "$medm_pid" "$xvfb" 2>/dev/null || true
put "${P}cam1:Acquire" 0
colours=$(convert "$shot" -format %k info:)
[ "$colours" -gt 8 ] || fail "the screenshot has only $colours colours: $(cat "$work/medm.log")"
echo "ok: MEDM rendered the screen against the live IOC: $shot ($colours colours)"
