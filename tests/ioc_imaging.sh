#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_imaging.sh: η calibration and the interpolated image in the example
# IOC, against clusterfind on the same raw run. Bad imaging settings are
# refused and change nothing; the window is set in keV through a gain; a
# calibration taken live from the frames that flow is clusterfind's
# --eta-calibrate file, byte for byte; interpolating with it gives
# clusterfind's --image and --counts images and photon counts, which
# NDPluginStats and NDFileHDF5 see on address 5 too; settings changed while
# frames flow leave a consistent image; after an IOC restart the saved
# calibration, loaded, gives the same image. SKIP (77) without EPICS or
# NumPy and h5py.
. "$(dirname "$0")/common.sh"
need_python "numpy h5py" "python3-numpy python3-h5py"
. "$(dirname "$0")/ioc_common.sh"

raw_run 11
find() {
    "$clusterfind" --pedestal "$dark" --data "$data" --pedestal-frames 100 \
        --backend cpu --energy-window 600:1100 "$@" >"$work/find.txt" 2>&1 ||
        fail "clusterfind $*: $(cat "$work/find.txt")"
}
find --eta-bins 20 --eta-calibrate "$work/offline.eta"
calibrated=$(sed -n 's/^eta: *eta2 calibration of \([0-9]*\) photons.*/\1/p' "$work/find.txt")
find --eta-map "$work/offline.eta" --subpixels 3 --image "$work/offline.npy" \
    --counts "$work/counts.npy"
imaged=$(sed -n 's/^image: *\([0-9]*\) photons imaged.*/\1/p' "$work/find.txt")
uninterpolable=$(sed -n 's/^image:.*(\([0-9]*\) uninterpolable.*/\1/p' "$work/find.txt")
[ -n "$calibrated" ] && [ -n "$imaged" ] && [ -n "$uninterpolable" ] ||
    fail "no imaging figures from clusterfind: $(cat "$work/find.txt")"

settings() {
    put "${C}EnableCallbacks" 1
    put "${P}cam1:ArrayCallbacks" 1
    put "${P}cam1:AcquirePeriod" 0
    put "${C}PedestalFrames" 100
    put "${C}SpectrumPeriod" 0.5
    put "${C}WindowHigh" 1100
    put "${C}WindowLow" 600
    put "${C}WindowEnable" 1
    put "${C}EtaFunction" 0
    put "${C}EtaBins" 20
    put "${C}Subpixels" 3
    put "${P}interp1:EnableCallbacks" 1
    put "${P}image1:EnableCallbacks" 1
}
# above PV N: until PV counts past N (60 s at most).
above() {
    above_pv=$1 above_count=$2
    poll eval '[ "$(get "$above_pv")" -gt "$above_count" ]' ||
        fail "$1 is $(get "$1"), not above $2"
}
# publish_all: once every array the source sent is through the plugin, a
# publication of what it imaged (Publish), the periodic ones held off, so
# that once the last is read, it stays; the checks then poll (published)
# until the plugins downstream have it.
publish_all() {
    sent=$(get "${P}cam1:ArrayCounter_RBV")
    poll eval '[ $(($(get "${C}ArrayCounter_RBV") + $(get "${C}DroppedArrays_RBV"))) -ge "$sent" ]' ||
        fail "$sent arrays sent, $(get "${C}ArrayCounter_RBV") taken and $(get "${C}DroppedArrays_RBV") dropped"
    put "${C}SpectrumPeriod" 1000
    put "${C}Publish" 1
}
# imaged_as_clusterfind: the imaged and uninterpolable counts are
# clusterfind's.
imaged_as_clusterfind() {
    [ "$(getcount "${C}ImagedPhotons_RBV")" = "$imaged" ] &&
        [ "$(getcount "${C}ImageUninterpolable_RBV")" = "$uninterpolable" ]
}
start_ioc 1
settings

# Bad settings are refused and change nothing; Interpolate needs a
# calibration; a truncated file is refused and the calibration kept.
refused EtaMode 3 ""
refused EtaFunction 5 ""
refused EtaBins 1001 "EtaBins 1001"
refused Subpixels 26 "Subpixels 26"
refused Subpixels 0 "Subpixels 0"
refused EtaMode Interpolate "no eta calibration"
head -c 200 "$work/offline.eta" >"$work/truncated.eta"
load_refused EtaFile LoadEta "$work/truncated.eta" "the eta calibration in force is kept"
[ "$(getstr "${C}EtaCalibration_RBV")" = none ] ||
    fail "a truncated file was taken: $(getstr "${C}EtaCalibration_RBV")"
refused EtaMode Interpolate "no eta calibration"
refused AduPerKeV -1 "AduPerKeV -1"
refused WindowLowKeV 6 "needs the gain"
for setting in EtaMode:Off EtaFunction:eta2 EtaBins:20 Subpixels:3 AduPerKeV:0 WindowLowKeV:0; do
    [ "$(getstr "${C}${setting%%:*}_RBV")" = "${setting#*:}" ] ||
        fail "${setting%%:*}_RBV reads $(getstr "${C}${setting%%:*}_RBV"), not ${setting#*:}"
done
echo "ok: bad EtaMode, EtaFunction, EtaBins, Subpixels, AduPerKeV, a truncated .eta file and Interpolate without a calibration are refused"

# The window in keV through the gain, and the spectrum's axis in keV.
put "${C}AduPerKeV" 100
put "${C}WindowHighKeV" 11
put "${C}WindowLowKeV" 6
[ "$(get "${C}WindowLow_RBV")" = 600 ] && [ "$(get "${C}WindowHigh_RBV")" = 1100 ] ||
    fail "6 to 11 keV at 100 ADU/keV is $(get "${C}WindowLow_RBV") to $(get "${C}WindowHigh_RBV") ADU"

# A calibration taken live is clusterfind's, byte for byte.
put "${C}EtaMode" Calibrate
replay "$dark" 100
replay "$data" 40
wait_for "${C}QueueFree" "$(get "${C}QueueSize_RBV")"
put "${C}Publish" 1
wait_for "${C}CalibrationPhotons_RBV" "$calibrated"
putstr "${C}EtaFile" "$work/live.eta"
put "${C}SaveEta" 1
cmp -s "$work/live.eta" "$work/offline.eta" ||
    fail "the live calibration differs from clusterfind's: $(getstr "${C}StatusMessage_RBV")"
[ "$(getstr "${C}SpectrumAxisUnit_RBV")" = keV ] ||
    fail "the spectrum's axis is in $(getstr "${C}SpectrumAxisUnit_RBV") with a gain"
axis=$("$caget" -w $ca_wait -t "${C}SpectrumAxis_RBV" | cut -d' ' -f2)
x=$("$caget" -w $ca_wait -t "${C}SpectrumX_RBV" | cut -d' ' -f2)
[ "$($python -c "print(abs($axis * 100 - $x) < 1e-6)")" = True ] ||
    fail "the first bin is at $x ADU and $axis keV"
echo "ok: a calibration of $calibrated photons taken live is clusterfind's file; the window set in keV, the axis in keV"

# Interpolating with it: clusterfind's image and counting image.
put "${C}EtaMode" Interpolate
put "${C}ResetPedestal" 1
put "${C}HitMapReset" 1
replay "$dark" 100
replay "$data" 40
publish_all
getstr "${C}EtaCalibration_RBV" | grep -q "taken live" ||
    fail "the calibration in force: $(getstr "${C}EtaCalibration_RBV")"
published image_equal "${P}interp1:ArrayData" "$work/offline.npy" ||
    fail "the interpolated image differs from clusterfind's"
published image_equal "${P}image1:ArrayData" "$work/counts.npy" ||
    fail "the counting image differs from clusterfind's"
published imaged_as_clusterfind ||
    fail "imaged $(getcount "${C}ImagedPhotons_RBV") ($(getcount "${C}ImageUninterpolable_RBV") uninterpolable), clusterfind $imaged ($uninterpolable)"
[ "$(get "${P}interp1:ArraySize0_RBV")" = 1200 ] || fail "the image is not 1200 wide"
echo "ok: interpolated, $imaged photons ($uninterpolable uninterpolable) in clusterfind's 1200 x 1200 image and counting image"

# Chained as areaDetector users chain: NDPluginStats and NDFileHDF5 on
# address 5.
put "${P}Stats1:NDArrayPort" CLUSTER1
put "${P}Stats1:NDArrayAddress" 5
put "${P}Stats1:ComputeStatistics" 1
put "${P}Stats1:EnableCallbacks" 1
putstr "${P}HDF1:FilePath" "$work/"
putstr "${P}HDF1:FileName" "interpolated"
putstr "${P}HDF1:FileTemplate" "%s%s.h5"
put "${P}HDF1:AutoIncrement" 0
put "${P}HDF1:NDArrayAddress" 5
put "${P}HDF1:FileWriteMode" 0
put "${P}HDF1:AutoSave" 1
put "${P}HDF1:EnableCallbacks" 1
before=$(get "${P}HDF1:ArrayCounter_RBV")
put "${C}Publish" 1
above "${P}HDF1:ArrayCounter_RBV" "$before"
wait_for "${P}Stats1:Total_RBV" "$imaged"
$python - "$work/interpolated.h5" "$work/offline.npy" <<'PYTHON' || fail "the HDF5 image differs from clusterfind's"
import sys
import h5py
import numpy
with h5py.File(sys.argv[1], 'r') as f:
    image = f['entry/data/data'][()]
    attributes = f['entry/instrument/NDAttributes']
    assert attributes['Subpixels'][()] == 3, attributes['Subpixels'][()]
assert (image == numpy.load(sys.argv[2])).all()
PYTHON
put "${P}HDF1:EnableCallbacks" 0
put "${P}Stats1:EnableCallbacks" 0
echo "ok: NDPluginStats counts $imaged photons on address 5; NDFileHDF5 writes clusterfind's image with its attributes"

# Settings changed while frames flow: each takes effect between batches;
# the image published then holds exactly the photons counted.
# 500 frames/s; 200 under AddressSanitizer, where the IOC, several times
# slower, once answered no Channel Access for 10 s on two busy cores.
period=0.002
case ${sanitizers:-no} in *address*) period=0.005 ;; esac
put "${P}cam1:MoenchSource" 0
put "${P}cam1:MoenchDarkFrames" 100
put "${P}cam1:AcquirePeriod" $period
put "${P}cam1:ImageMode" 2
put "${C}ResetPedestal" 1
source_mark
"$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # continuous: no completion to wait for
wait_for "${C}PedestalState_RBV" 1
for change in Subpixels:2 WindowHigh:1200 EtaMode:Calibrate EtaMode:Interpolate \
    ImageReset:1 Subpixels:4 EtaFunction:eta3 WindowEnable:0; do
    put "${C}${change%%:*}" "${change#*:}"
    taken=$(get "${C}ArrayCounter_RBV")
    poll eval '[ "$(get "${C}ArrayCounter_RBV")" -gt "$taken" ]' ||
        fail "no array went through after ${change%%:*} ${change#*:}"
done
put "${P}cam1:Acquire" 0
source_drained
publish_all
# holds_counted: the image is Subpixels 4's, and holds the photons
# counted (sum: its photons).
holds_counted() {
    [ "$(get "${P}interp1:ArraySize0_RBV")" = 1600 ] || return 1
    "$caget" -w $ca_wait -t "${P}interp1:ArrayData" >"$work/array.txt" || return 1
    sum=$($python -c "import sys; print(sum(int(v) for v in open(sys.argv[1]).read().split()[1:]))" "$work/array.txt")
    [ "$sum" -gt 0 ] && [ "$sum" = "$(getcount "${C}ImagedPhotons_RBV")" ]
}
published holds_counted ||
    fail "the image, $(get "${P}interp1:ArraySize0_RBV") wide, holds ${sum:-no} photons, ImagedPhotons_RBV $(getcount "${C}ImagedPhotons_RBV")"
echo "ok: eight settings changed while frames flowed; the image holds the $sum photons counted: $(getstr "${C}StatusMessage_RBV")"
stop_ioc

# After a restart the saved calibration, loaded, gives the same image.
start_ioc 2
settings
putstr "${C}EtaFile" "$work/live.eta"
put "${C}LoadEta" 1
put "${C}EtaMode" Interpolate
replay "$dark" 100
replay "$data" 40
publish_all
published image_equal "${P}interp1:ArrayData" "$work/offline.npy" ||
    fail "after a restart, the image differs"
echo "ok: after a restart, the calibration loaded from its file gives the same image"
echo "the example IOC images"
