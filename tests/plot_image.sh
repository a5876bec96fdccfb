#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# plot_image.sh: tools/plot_image.py draws clusterfind's interpolated and
# counting images as a PNG, and refuses files that are not such images,
# or a region off the detector, with a message and no picture. Skipped,
# visibly, where python3 has no matplotlib.
. "$(dirname "$0")/common.sh"
need_python "matplotlib numpy" python3-matplotlib
plot=$(dirname "$0")/../tools/plot_image.py

"$clusterfind" --simulate 20 --pedestal-frames 20 --eta-calibrate "$work/flat.eta" \
    >/dev/null || fail "clusterfind --eta-calibrate failed"
"$clusterfind" --simulate 5 --pedestal-frames 20 --pattern slits --pattern-period 4 \
    --eta-map "$work/flat.eta" --subpixels 4 --image "$work/i.npy" \
    --counts "$work/c.npy" >/dev/null || fail "clusterfind --image failed"
"$python" "$plot" "$work/i.npy" --counts "$work/c.npy" --region 10:50,20:40 \
    -o "$work/i.png" || fail "plot_image.py failed"
[ "$(head -c 8 "$work/i.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] ||
    fail "no PNG written"

# refused FILE... MESSAGE: plot_image.py refuses, says MESSAGE, draws nothing.
refused() {
    message=$1
    shift
    if "$python" "$plot" "$@" -o "$work/bad.png" 2>"$work/err.txt"; then
        fail "$* was drawn"
    fi
    grep -q -- "$message" "$work/err.txt" || fail "$*: no clear message: $(cat "$work/err.txt")"
    [ ! -e "$work/bad.png" ] || fail "$*: a picture was left"
}
printf 'not numpy' >"$work/bad.npy"
refused "not a NumPy .npy file" "$work/bad.npy"
refused "not an S-fold image" "$work/c.npy" --counts "$work/i.npy"
refused "outside the 400 x 400 pixels" "$work/i.npy" --counts "$work/c.npy" --region 390:410,0:10
echo "plot_image.py: a PNG of clusterfind's images, clear refusals of other files"
