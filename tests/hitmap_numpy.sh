#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# hitmap_numpy.sh: NumPy opens clusterfind's hit map as is (uint32, 2-D,
# the frame's shape, as many counts as clusters) and reads the spectrum
# CSV. Skipped, visibly, where python3 has no NumPy.
set -eu
# The first python3 on PATH may be another installation (pyenv) than
# Debian's, which is where python3-numpy goes.
python=""
for candidate in python3 /usr/bin/python3; do
    if "$candidate" -c 'import numpy' 2>/dev/null; then
        python=$candidate
        break
    fi
done
if [ -z "$python" ]; then
    echo "SKIP: no python3 can import numpy (Debian: apt-get install python3-numpy)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hitmap_numpy.XXXXXX")
trap 'rm -rf "$work"' EXIT
"${builddir:-.}/tools/clusterfind" --simulate 5 --pedestal-frames 20 \
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
