#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# peer_aare_imaging.sh: aare's η functions and its Interpolator against
# clusterfind's imaging (docs/spec.md §7.3-§7.6), for eta2, eta2full and
# eta3 at 3x3: a simulated flat field is calibrated, a second one imaged
# with that calibration, and peer_aare_imaging.py compares. η must be the
# same doubles; positions must differ from aare's only by what aare's step
# map does differently from our linear one (bounded photon by photon).
# Prints the figures; skips, visibly, where no Python with aare is found
# ($AARE_PYTHON, default /opt/aare/venv/bin/python).
. "$(dirname "$0")/common.sh"
need_aare
here=$(cd "$(dirname "$0")" && pwd)
build=${builddir:-.}
need_shared_library
frames=300
subpixels=5
for eta in eta2 eta2full eta3; do
    # The photons' energy as aare's Interpolator gives it (its η's sum).
    case $eta in eta3) energy=sum ;; *) energy=sum2x2 ;; esac
    "$build/tools/clusterfind" --simulate $frames --seed 1 --cluster-size 3 \
        --eta $eta --eta-bins 100 --eta-calibrate "$work/cal.eta" \
        --output "$work/cal.clust" >/dev/null 2>"$work/log" ||
        { cat "$work/log"; exit 1; }
    "$build/tools/clusterfind" --simulate $frames --seed 2 --cluster-size 3 \
        --eta $eta --eta-map "$work/cal.eta" --subpixels $subpixels \
        --energy $energy \
        --photons "$work/photons.npy" --image "$work/image.npy" \
        --output "$work/run.clust" >/dev/null 2>"$work/log" ||
        { cat "$work/log"; exit 1; }
    # aare's map is a step per bin where ours is linear within it: about
    # 4.5 % of photons land in another of the 5x5 sub-pixels (B = 100),
    # every one within 0.05 pixel of aare's; the limits leave room for 2x.
    run_python "$here/peer_aare_imaging.py" "$library" \
        $eta 3 "$work/cal.clust" "$work/cal.eta" "$work/run.clust" \
        "$work/photons.npy" "$work/image.npy" $subpixels 0.1 0.999
done
