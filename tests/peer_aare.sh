#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# peer_aare.sh: aare's own CPU cluster finder and clusterfind on the same
# simulated raw run, 3x3 and 9x9: the cluster centres must agree except
# for aare's in-scan pedestal updates. Prints the figure; skips, visibly,
# where no Python with aare is found ($AARE_PYTHON, default
# /opt/aare/venv/bin/python; PyPI's aare ships only an sdist to build).
. "$(dirname "$0")/common.sh"
need_aare
here=$(cd "$(dirname "$0")" && pwd)
"$simulate_raw" "$work" 200 60 3 >/dev/null
for size in 3 9; do
    "$clusterfind" --pedestal "$work/dark_master_0.json" \
        --data "$work/data_master_0.json" --pedestal-frames 200 \
        --cluster-size "$size" --output "$work/ours.clust" >/dev/null
    # With a window of 200 frames aare's in-scan updates weigh 1/200 each;
    # about 1.5e-4 of clusters differ here (1.4e-5 with 1000 frames).
    "$python" "$here/peer_aare.py" "$work/dark_master_0.json" \
        "$work/data_master_0.json" "$work/ours.clust" "$size" 1e-3
done
