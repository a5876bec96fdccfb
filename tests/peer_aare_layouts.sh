#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# peer_aare_layouts.sh: the same simulated runs written by our writer in
# rows and in each ADC order of older runs (docs/spec.md §5.2): aare reads
# each as our reader does, pixel for pixel, and as the frames written in
# rows (peer_aare_layouts.py). Skips, visibly, where no Python with aare
# is found ($AARE_PYTHON, default /opt/aare/venv/bin/python).
. "$(dirname "$0")/common.sh"
need_aare
need_shared_library
here=$(cd "$(dirname "$0")" && pwd)
for layout in rows moench03-old ctb-moench03 ctb-moench04; do
    mkdir "$work/$layout"
    "$simulate_raw" --layout $layout "$work/$layout" 5 4 9 >/dev/null ||
        fail "simulate_raw --layout $layout failed"
done
run_python "$here/peer_aare_layouts.py" "$library" "$work"
