#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_corrections.sh: common mode and gain in the example IOC, on frames
# of the simulated source, which makes both effects. Bad settings and
# hostile gain maps are refused with the reason and change nothing; with
# 30 ADU of supercolumn common mode, photon-free frames give thousands of
# false clusters uncorrected and (nearly) none with CommonMode
# Supercolumn, whose figures say 30 ADU and whose map is published on
# address 6; a flat field with a 5 % gain spread, taken with GainMode
# Calibrate, is fitted and saved by SaveGainMap, and the map applied is
# published on address 7 and loads back from its file; its flagged pixels
# are masked on request; a map saved while calibrating waits for
# Calibrate to be written again; a TIFF in ADU per keV puts clusters in
# eV, and is held, not applied, on frames of another size. SKIP (77) without
# EPICS or NumPy.
. "$(dirname "$0")/common.sh"
need_python "numpy" "python3-numpy"
. "$(dirname "$0")/ioc_common.sh"

start_ioc 1
put "${C}EnableCallbacks" 1
put "${P}cam1:ArrayCallbacks" 1
put "${P}cam1:AcquirePeriod" 0
put "${P}cam1:SizeX" 100
put "${P}cam1:SizeY" 100
put "${P}cam1:MoenchSource" 0
put "${P}cam1:ImageMode" 1
put "${C}PedestalFrames" 100
put "${C}SpectrumPeriod" 0.2
put "${P}commonMode1:EnableCallbacks" 1
put "${P}gain1:EnableCallbacks" 1

# acquire DARK FRAMES: a simulated acquisition of DARK dark frames and
# FRAMES in all, waited for until the plugin has taken them all.
acquire() {
    before=$(get "${C}ArrayCounter_RBV")
    put "${P}cam1:MoenchDarkFrames" "$1"
    put "${P}cam1:NumImages" "$2"
    "$caput" -w 2 "${P}cam1:Acquire" 1 >/dev/null # long: not waited on
    count_reaches "${C}ArrayCounter_RBV" $((before + $2))
    publish_now
}

# Bad settings and hostile maps are refused and change nothing.
refused GainCalBins 3 "6..1000"
refused GainCalBins 1001 "6..1000"
refused GainLineEnergy -1 "GainLineEnergy -1"
refused GainCalMinPhotons -5 "GainCalMinPhotons -5"
refused GainMode Apply "GainMapFile is empty"
put "${C}SaveGainMap" 1
getstr "${C}StatusMessage_RBV" | grep -q "no flat field" ||
    fail "SaveGainMap without a calibration: $(getstr "${C}StatusMessage_RBV")"
# The frame size is known from the first frame on.
acquire 100 100
$python - "$work" <<'PYTHON'
import sys
import numpy
work = sys.argv[1]
good = numpy.ones((100, 100))
for name, value in (("nan", numpy.nan), ("zero", 0.0), ("negative", -1.0)):
    bad = good.copy()
    bad[7, 3] = value
    numpy.save("%s/%s.npy" % (work, name), bad)
numpy.save(work + "/shape.npy", numpy.ones((100, 99)))
with open(work + "/truncated.npy", "wb") as f:
    f.write(open(work + "/shape.npy", "rb").read()[:300])
PYTHON
for bad in nan:"row 7, col 3" zero:"row 7, col 3" negative:"row 7, col 3" shape:"shape" truncated:""; do
    load_refused GainMapFile LoadGainMap "$work/${bad%%:*}.npy" "the gain map held is kept"
    [ -z "${bad#*:}" ] || getstr "${C}StatusMessage_RBV" | grep -q "${bad#*:}" ||
        fail "${bad%%:*}.npy: the status does not say \"${bad#*:}\": $(getstr "${C}StatusMessage_RBV")"
done
publish_now
[ "$(getstr "${C}GainMapInUse_RBV")" = none ] ||
    fail "a hostile map was taken: $(getstr "${C}GainMapInUse_RBV")"
putstr "${C}GainMapFile" "$work/map.tif5"
put "${C}GainMode" Calibrate
acquire 0 5 # the spectra start with the next frames
put "${C}SaveGainMap" 1
getstr "${C}StatusMessage_RBV" | grep -q "must end in .npy" ||
    fail "SaveGainMap to a .tif5: $(getstr "${C}StatusMessage_RBV")"
put "${C}GainMode" Off
echo "ok: bad gain settings, NaN, zero, negative, mis-shaped and truncated maps are refused with the reason"

# Common mode: photon-free frames with 30 ADU of it per supercolumn.
put "${P}cam1:MoenchFlux" 0
put "${P}cam1:MoenchCommonMode" Supercolumn
put "${P}cam1:MoenchCommonModeRms" 30
put "${C}ResetPedestal" 1
acquire 100 300
uncorrected=$(get "${C}TotalClusters_RBV")
put "${C}CommonMode" Supercolumn
acquire 100 300
corrected=$(get "${C}TotalClusters_RBV")
[ "$uncorrected" -gt 1000 ] && [ $((corrected * 100)) -lt "$uncorrected" ] ||
    fail "200 photon-free frames: $uncorrected false clusters uncorrected, $corrected corrected"
[ "$(get "${C}CommonModeRegions_RBV")" = 8 ] ||
    fail "100 x 100 frames have $(get "${C}CommonModeRegions_RBV") supercolumn regions, not 8"
rms=$(get "${C}CommonModeRms_RBV")
[ "$($python -c "print(25 < $rms < 35)")" = True ] ||
    fail "30 ADU of common mode measured as $rms ADU rms"
cat >"$work/common_mode_map.py" <<'PYTHON'
import sys
import numpy
values = numpy.array(open(sys.argv[1]).read().split()[1:10001], dtype=float)
regions = numpy.unique(values)
assert values.size == 10000 and regions.size == 8, regions
assert (abs(regions - float(sys.argv[2])) < 10).all(), regions
PYTHON
published array_passes "${P}commonMode1:ArrayData" "$work/common_mode_map.py" "$rms" ||
    fail "the common-mode map is not 8 regions near $rms ADU: $(tail -n 1 "$work/check.txt")"
echo "ok: 30 ADU of supercolumn common mode: $uncorrected false clusters uncorrected, $corrected corrected; measured $rms ADU rms in 8 regions, mapped on address 6"
put "${P}cam1:MoenchCommonModeRms" 0
put "${P}cam1:MoenchCommonMode" None
put "${C}CommonMode" None

# A flat field with a 5 % gain spread, calibrated live, fitted and saved.
put "${P}cam1:MoenchFlux" 1000
put "${P}cam1:MoenchGainSpread" 0.05
put "${C}ResetPedestal" 1
acquire 100 100
put "${C}GainCalMinPhotons" 50
put "${C}GainCalBins" 20
put "${C}GainMode" Calibrate
acquire 0 40000
photons=$(get "${C}GainCalPhotons_RBV")
[ "$($python -c "print($photons > 1.5e6)")" = True ] || fail "only $photons photons in the flat field's spectra"
putstr "${C}GainMapFile" "$work/map.npy"
masked_before=$(get "${C}MaskedPixels_RBV")
put "${C}GainMaskFlagged" 1
put "${C}SaveGainMap" 1
getstr "${C}StatusMessage_RBV" | grep -q "the flagged pixels are masked" ||
    fail "GainMaskFlagged: $(getstr "${C}StatusMessage_RBV")"
put "${C}GainMaskFlagged" 0
[ -f "$work/map.npy" ] && [ -f "$work/map_flagged.npy" ] ||
    fail "SaveGainMap wrote no map: $(getstr "${C}StatusMessage_RBV")"
good=$(get "${C}GainCalGood_RBV")
spread=$(get "${C}GainCalSpread_RBV")
[ "$good" -gt 9000 ] && [ "$($python -c "print(4 < $spread < 7)")" = True ] ||
    fail "$good pixels good, spread $spread %: $(getstr "${C}StatusMessage_RBV")"
flagged=$($python -c "import numpy; print(int(numpy.load('$work/map_flagged.npy').sum()))")
[ "$flagged" = $(($(get "${C}GainCalFew_RBV") + $(get "${C}GainCalFailed_RBV"))) ] ||
    fail "$flagged pixels in map_flagged.npy, $(get "${C}GainCalFew_RBV") with too few photons and $(get "${C}GainCalFailed_RBV") failed"
# Saved while calibrating: the spectra go on under the map they started
# with (none), so that none mixes two maps; Calibrate written again
# starts them afresh under the map saved.
acquire 0 20
[ "$masked_before" = 0 ] && [ "$(get "${C}MaskedPixels_RBV")" = "$flagged" ] ||
    fail "GainMaskFlagged: $masked_before pixels masked before, $(get "${C}MaskedPixels_RBV") after the next frames, $flagged flagged"
getstr "${C}GainMapInUse_RBV" | grep -q "map.npy (relative, fitted from .*): held, not applied" ||
    fail "saved while calibrating, the map in use: $(getstr "${C}GainMapInUse_RBV")"
put "${C}GainMode" Calibrate
acquire 0 20
getstr "${C}GainMapInUse_RBV" | grep -q "map.npy (relative, fitted from .*): applied" ||
    fail "Calibrate written again, the map in use: $(getstr "${C}GainMapInUse_RBV")"
again=$(get "${C}GainCalPhotons_RBV")
[ "$($python -c "print(0 < $again < $photons / 1000)")" = True ] ||
    fail "Calibrate written again kept the spectra: $again photons (before $photons)"
put "${C}GainMode" Apply
acquire 0 10
getstr "${C}GainMapInUse_RBV" | grep -q "map.npy (relative, fitted from .*): applied" ||
    fail "the map in use: $(getstr "${C}GainMapInUse_RBV")"
cat >"$work/saved_map.py" <<'PYTHON'
import sys
import numpy
values = numpy.array(open(sys.argv[1]).read().split()[1:10001], dtype=numpy.float32)
saved = numpy.load(sys.argv[2])
flagged = numpy.load(sys.argv[3])
assert saved.shape == (100, 100) and flagged.dtype == numpy.uint8
assert set(numpy.unique(flagged)) <= {0, 1}
# caget prints 6 significant digits
assert numpy.allclose(values, saved.ravel(), rtol=1e-5, atol=0)
PYTHON
published array_passes "${P}gain1:ArrayData" "$work/saved_map.py" "$work/map.npy" "$work/map_flagged.npy" ||
    fail "the gain map on address 7 is not the one saved: $(tail -n 1 "$work/check.txt")"
# The saved file loads back as the map held, and empty lets it go.
put "${C}LoadGainMap" 1
getstr "${C}StatusMessage_RBV" | grep -q "gain map loaded from $work/map.npy" ||
    fail "the saved map did not load: $(getstr "${C}StatusMessage_RBV")"
put "${C}GainMode" Off
putstr "${C}GainMapFile" ""
put "${C}LoadGainMap" 1
publish_now
[ "$(getstr "${C}GainMapInUse_RBV")" = none ] ||
    fail "an empty GainMapFile kept $(getstr "${C}GainMapInUse_RBV")"
echo "ok: a flat field of $photons photons with a 5 % gain spread: $good pixels fitted, spread $spread %, $flagged flagged and masked; saved while calibrating, applied when Calibrate is written again; on address 7 and loaded back"

# slsDetectorCalibration's 32-bit float TIFF in ADU per keV: clusters in
# eV. Frames of another size: the map is held, not applied, and clusters
# are in ADU again; back at its size, it is applied again.
$python - "$work/map.tif" <<'PYTHON'
import struct
import sys
import numpy
rows, cols = 100, 100
pixels = numpy.full((rows, cols), 100.0, dtype="<f4").tobytes()
entries = [(256, 3, cols), (257, 3, rows), (258, 3, 32), (259, 3, 1),
           (262, 3, 1), (273, 4, 8), (277, 3, 1), (278, 3, rows),
           (279, 4, len(pixels)), (339, 3, 3)]
ifd = struct.pack("<H", len(entries))
for tag, kind, value in entries:
    ifd += struct.pack("<HHI", tag, kind, 1)
    ifd += struct.pack("<HH" if kind == 3 else "<I", *((value, 0) if kind == 3 else (value,)))
ifd += struct.pack("<I", 0)
with open(sys.argv[1], "wb") as f:
    f.write(b"II*\0" + struct.pack("<I", 8 + len(pixels)) + pixels + ifd)
PYTHON
putstr "${C}GainMapFile" "$work/map.tif"
put "${C}GainUnit" "ADU/keV"
put "${C}LoadGainMap" 1
getstr "${C}StatusMessage_RBV" | grep -q "gain map loaded from $work/map.tif (adu-per-kev)" ||
    fail "the TIFF did not load: $(getstr "${C}StatusMessage_RBV")"
put "${C}GainMode" Apply
acquire 0 10
[ "$(getstr "${C}SpectrumAxisUnit_RBV")" = eV ] ||
    fail "with a map in ADU per keV the spectrum is in $(getstr "${C}SpectrumAxisUnit_RBV")"
cat >"$work/flat_map.py" <<'PYTHON'
import sys
import numpy
v = numpy.array(open(sys.argv[1]).read().split()[1:10001], dtype=float)
assert v.size == 10000 and (v == 100).all(), v
PYTHON
published array_passes "${P}gain1:ArrayData" "$work/flat_map.py" ||
    fail "the TIFF's map on address 7 is not 100 ADU per keV everywhere: $(tail -n 1 "$work/check.txt")"
put "${P}cam1:SizeX" 90
acquire 100 110
getstr "${C}GainMapInUse_RBV" | grep -q "map.tif (adu-per-kev): held, not applied" ||
    fail "90 x 100 frames with a 100 x 100 map, the map in use: $(getstr "${C}GainMapInUse_RBV")"
[ "$(getstr "${C}SpectrumAxisUnit_RBV")" = ADU ] ||
    fail "no map applied, yet the spectrum is in $(getstr "${C}SpectrumAxisUnit_RBV")"
put "${P}cam1:SizeX" 100
acquire 100 110
getstr "${C}GainMapInUse_RBV" | grep -q "map.tif (adu-per-kev): applied" ||
    fail "back at 100 x 100, the map in use: $(getstr "${C}GainMapInUse_RBV")"
echo "ok: a TIFF map in ADU per keV loaded and applied (clusters in eV); held, not applied, on frames of another size"
echo "the example IOC corrects common mode and gain"
