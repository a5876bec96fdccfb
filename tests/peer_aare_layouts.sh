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
# variant OF NAME SED: a copy of run OF whose master files SED edits.
variant() {
    mkdir "$work/$2"
    cp "$work/$1/"* "$work/$2/"
    for run in dark data; do
        sed "$3" "$work/$1/${run}_master_0.json" >"$work/$2/${run}_master_0.json"
    done
}
# As MÖNCH's receivers of the chip test board's time wrote them: "Analog
# Samples" without "Analog Flag"; and in 8.0 keys, "ADC Mask" a number.
variant moench03-old moench03-old-noflag '/"Analog Flag"/d'
v8='s/"Version": 7.2/"Version": 8.0/; s/"Image Size in bytes"/"Image Size"/; s/"ADC Mask": "0xffffffff"/"ADC Mask": 4294967295/'
variant moench03-old moench03-old-v8 "$v8"
variant ctb-moench04 ctb-moench04-v8 "$v8"
run_python "$here/peer_aare_layouts.py" "$library" "$work" rows:rows \
    moench03-old:moench03-old moench03-old-noflag:moench03-old \
    moench03-old-v8:moench03-old ctb-moench03:ctb-moench03 \
    ctb-moench04:ctb-moench04 ctb-moench04-v8:ctb-moench04
