#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# hitmap_numpy.sh: NumPy opens clusterfind's hit map as is (uint32, 2-D,
# the frame's shape, as many counts as clusters) and reads the spectrum
# CSV. Skipped, visibly, where python3 has no NumPy.
. "$(dirname "$0")/common.sh"
need_numpy
"$clusterfind" --simulate 5 --pedestal-frames 20 \
    --hitmap "$work/h.npy" --spectrum "$work/s.csv" >"$work/summary"
clusters=$(sed -n 's/^clusters: *\([0-9]*\) .*/\1/p' "$work/summary")
"$python" - "$work/h.npy" "$work/s.csv" "$clusters" <<'PYTHON'
import sys
import numpy
hitmap = numpy.load(sys.argv[1])
assert hitmap.dtype == numpy.dtype('<u4'), hitmap.dtype
assert hitmap.shape == (400, 400), hitmap.shape
assert int(hitmap.sum()) == int(sys.argv[3]), (hitmap.sum(), sys.argv[3])
spectrum = numpy.genfromtxt(sys.argv[2], delimiter=',', names=True)
assert spectrum.dtype.names == ('low', 'high', 'count'), spectrum.dtype.names
assert int(spectrum['count'].sum()) == int(sys.argv[3])
print("numpy %s reads the hit map (%d counts) and the spectrum (%d bins)"
      % (numpy.__version__, hitmap.sum(), len(spectrum) - 2))
PYTHON
