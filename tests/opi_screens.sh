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
ioc_command "dbl > $work/records.txt"
[ -s "$work/records.txt" ] || fail "dbl wrote nothing"
python3 "$top/tests/opi_check.py" "$work/records.txt" "$screens" \
    "$(dirname "$ADCORE_OP_ADL")" "$top/iocBoot/iocClusterCUDA/st.cmd" "$P" \
    >"$work/check.txt" || { cat "$work/check.txt"; fail "the screens do not match the IOC"; }
sed 's/^/ok: /' "$work/check.txt"

. "$(dirname "$0")/opi_render.sh"
find_renderers || exit 0
trap 'exit_report $?; render_stop; stop_ioc; rm -rf "$work"' EXIT
# Frames flowing: dark frames to train, then photons, at 20 Hz; the
# clusters written to HDF5, the hit map served; then a flat-field eta
# calibration from them and the interpolated image, every photon in it.
put "${C}EnableCallbacks" 1
put "${C}PedestalFrames" 20
put "${C}AduPerKeV" 100 # the energies, the spectrum's axis too, in keV
put "${C}SpectrumPeriod" 0.5
put "${P}image1:EnableCallbacks" 1
put "${P}interp1:EnableCallbacks" 1
hdf5_stream screens 100000
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:MoenchDarkFrames" 20
put "${P}cam1:AcquirePeriod" 0.05
put "${P}cam1:ImageMode" 2
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
wait_for "${C}PedestalState_RBV" 1
put "${C}EtaMode" 1
poll eval '[ "$(getcount "${C}CalibrationPhotons_RBV")" -gt 10000 ]' ||
    fail "the calibration took $(getcount "${C}CalibrationPhotons_RBV") photons"
put "${C}WindowEnable" 0
put "${C}EtaMode" 2
# Each screen with the example IOC's macros.
render_screens NDClusterCUDA "P=${P},R=Cluster1:" ADMoenchSim "P=${P},R=cam1:" \
    iocClusterCUDA "P=${P},CAM=cam1:,CLUSTER=Cluster1:,HDF=HDF1:,IMAGE=image1:,INTERP=interp1:"
put "${P}cam1:Acquire" 0
put "${P}HDF1:Capture" 0
