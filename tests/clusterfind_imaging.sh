#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# clusterfind_imaging.sh: clusterfind's imaging options end to end on
# simulated runs. A planted hot pixel makes a cluster every frame until
# --auto-mask takes it out, and a --mask file does the same; a flat field
# calibrates eta; interpolating a run through slits of half a pixel puts
# most photons on the open halves, where the centres' middles would put
# none in; the image, the counting image and the photon list each hold
# exactly the photons the summary counts. Needs NumPy to read the .npy
# outputs (skipped, visibly, without).
. "$(dirname "$0")/common.sh"
need_numpy
clusterfind=$(cd "$(dirname "$clusterfind")" && pwd)/clusterfind
cd "$work"
find() { "$clusterfind" --pedestal-frames 100 "$@"; }
number() { sed -n "s/^$1 *\([0-9]*\) .*/\1/p" summary; }

# Hot pixels: a cluster in every one of the 40 frames, then none.
find --simulate 40 --flux 200 --hot-pixels 3 --dead-pixels 2 \
    --hitmap unmasked.npy >summary
find --simulate 40 --flux 200 --hot-pixels 3 --dead-pixels 2 --auto-mask 5 \
    --hitmap masked.npy >summary
grep -q "^mask: *5 bad pixels masked" summary || fail "auto-mask: $(cat summary)"
"$python" - <<'PYTHON'
import numpy
unmasked, masked = numpy.load('unmasked.npy'), numpy.load('masked.npy')
hot = numpy.argwhere(unmasked == 40)
assert len(hot) == 3, hot
assert all(masked[tuple(p)] == 0 for p in hot), masked[tuple(hot.T)]
numpy.save('hot.npy', (unmasked == 40).astype(numpy.uint8))
print("3 hot pixels: a cluster in each of 40 frames unmasked, none auto-masked")
PYTHON
find --simulate 40 --flux 200 --hot-pixels 3 --mask hot.npy \
    --hitmap masked.npy >summary
grep -q "^mask: *3 bad pixels masked" summary || fail "--mask: $(cat summary)"
"$python" -c "
import numpy
assert numpy.load('masked.npy')[numpy.load('hot.npy') == 1].sum() == 0"

# A flat field calibrates, then a run through slits is interpolated.
window="--energy sum2x2 --energy-window 650:1000"
find --simulate 150 --seed 3 $window --eta-bins 50 --eta-calibrate flat.eta \
    >summary
grep -q "^eta: *eta2 calibration of [1-9][0-9]* photons in 50 x 50 bins" \
    summary || fail "calibration: $(cat summary)"
find --simulate 150 --seed 4 --flux 800 --pattern slits --pattern-period 0.5 \
    $window --eta-map flat.eta --image image.npy --counts counts.npy \
    --photons photons.npy >summary
imaged=$(number "image:")
in_window=$(number "photons:")
[ -n "$imaged" ] && [ "$imaged" = "$in_window" ] ||
    fail "imaged $imaged of $in_window photons: $(cat summary)"
grep -q "^truth: *position error 0\.[01]" summary ||
    fail "position error: $(cat summary)"
"$python" - "$imaged" <<'PYTHON'
import sys
import numpy
imaged = int(sys.argv[1])
image, counts = numpy.load('image.npy'), numpy.load('counts.npy')
photons = numpy.load('photons.npy')
assert image.dtype == numpy.dtype('<u4') and image.shape == (2000, 2000)
assert counts.dtype == numpy.dtype('<u4') and counts.shape == (400, 400)
assert photons.dtype.names == ('frame', 'x', 'y', 'energy'), photons.dtype
assert image.sum() == counts.sum() == len(photons) == imaged, \
    (image.sum(), counts.sum(), len(photons), imaged)
assert ((photons['energy'] >= 650) & (photons['energy'] < 1000)).all()
assert photons['frame'].min() >= 0 and photons['frame'].max() < 150
open_halves = numpy.mean((photons['x'] / 0.5) % 1 < 0.5)
assert open_halves > 0.7, open_halves
print("slits of 0.25 px: %.1f %% of %d interpolated photons on the open "
      "halves (50 %% by chance, 0 at the centres' middles)"
      % (100 * open_halves, imaged))
PYTHON

# A calibration of another function or size is refused; nothing written.
set +e
find --simulate 5 --eta eta3 --eta-map flat.eta --image refused.npy \
    >summary 2>stderr
status=$?
set -e
[ "$status" -eq 2 ] && grep -q "calibration of eta2 with 50 bins" stderr ||
    fail "mismatched map: status $status, $(cat stderr)"
[ ! -e refused.npy ] || fail "a refused run wrote refused.npy"
echo "ok: $(cat stderr)"
