#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# plot_spectrum.sh: tools/plot_spectrum.py draws clusterfind's spectrum
# CSV as a PNG, and refuses a file that is not one with a message and no
# picture. Skipped, visibly, where python3 has no matplotlib.
. "$(dirname "$0")/common.sh"
need_python "matplotlib numpy" python3-matplotlib
plot=$(dirname "$0")/../tools/plot_spectrum.py

"$clusterfind" --simulate 3 --pedestal-frames 20 --spectrum "$work/s.csv" >/dev/null ||
    fail "clusterfind --spectrum failed"
"$python" "$plot" "$work/s.csv" -o "$work/s.png" --gain 100 || fail "plot_spectrum.py failed"
[ "$(head -c 8 "$work/s.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ] ||
    fail "no PNG written"

printf 'x,y\n1,2\n' >"$work/bad.csv"
if "$python" "$plot" "$work/bad.csv" -o "$work/bad.png" 2>"$work/err.txt"; then
    fail "a file that is not a spectrum was drawn"
fi
grep -q "not a clusterfind spectrum" "$work/err.txt" || fail "no clear message: $(cat "$work/err.txt")"
[ ! -e "$work/bad.png" ] || fail "a picture was left for a refused file"
echo "plot_spectrum.py: a PNG from clusterfind's spectrum, a clear refusal of another CSV"
