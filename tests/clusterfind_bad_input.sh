#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# clusterfind_bad_input.sh: missing files, wrong JSON, a truncated raw
# file, a wrong image size, an unwritable output and bad options: a clear
# one-line error, a non-zero exit status, and no output presented as
# complete (nothing left under an output's name or a temporary one).
. "$(dirname "$0")/common.sh"

mkdir -p "$work/good" "$work/out"
"$simulate_raw" "$work/good" 20 6 3 >/dev/null || fail "simulate_raw failed"

# expect STATUS MESSAGE ARGS...: clusterfind ARGS exits STATUS and says
# MESSAGE on stderr; out/ then holds no file at all.
expect() {
    status=$1
    message=$2
    shift 2
    set +e
    "$clusterfind" --output "$work/out/r.clust" --spectrum "$work/out/r.csv" \
        --hitmap "$work/out/r.npy" --noise "$work/out/noise.npy" "$@" \
        >"$work/stdout" 2>"$work/stderr"
    got=$?
    set -e
    [ "$got" -eq "$status" ] ||
        fail "$*: exit status $got, expected $status; stderr: $(cat "$work/stderr")"
    grep -E -q -- "$message" "$work/stderr" ||
        fail "$*: stderr lacks '$message': $(cat "$work/stderr")"
    if [ "$status" -ne 3 ] && [ -n "$(ls -A "$work/out")" ]; then
        fail "$*: left $(ls -A "$work/out")"
    fi
    echo "ok: status $got, $(head -n 1 "$work/stderr")"
}

dark=$work/good/dark_master_0.json
# copy_run NAME: a copy of the data run as NAME/data_master_0.json.
copy_run() {
    rm -rf "$work/$1"
    mkdir -p "$work/$1"
    cp "$work/good/data_"* "$work/$1/"
    echo "$work/$1/data_master_0.json"
}

expect 1 "cannot open .*missing_master_0.json" \
    --pedestal "$dark" --data "$work/missing_master_0.json"
expect 1 "not named like a master file" --pedestal "$dark" --data "$work/good"

data=$(copy_run badjson)
sed 's/"Frames in File": 6/"Frames in File": 6,/' "$work/good/data_master_0.json" >"$data"
expect 1 "not valid JSON" --pedestal "$dark" --data "$data"

data=$(copy_run imagesize)
sed 's/"Image Size in bytes": 320000/"Image Size in bytes": 160000/' \
    "$work/good/data_master_0.json" >"$data"
expect 1 "Image Size in bytes" --pedestal "$dark" --data "$data"

data=$(copy_run pixels)
sed 's/"Pixels": {"x": 400, "y": 400}/"Pixels": {"x": 400, "y": 200}/; s/"Image Size in bytes": 320000/"Image Size in bytes": 160000/' \
    "$work/good/data_master_0.json" >"$data"
expect 1 "must match" --pedestal "$dark" --data "$data"

data=$(copy_run nodata)
rm "$work/nodata/data_d0_f0_0.raw"
expect 1 "has no complete frames" --pedestal "$dark" --data "$data"

# (The noise map, written when training ends, is removed again when the
# data run then fails: the case above.)

# A truncated data file: its complete frames are used, the damage said,
# and the status is 3, not 0.
data=$(copy_run truncated)
truncate -s -1000 "$work/truncated/data_d0_f0_0.raw"
expect 3 "is truncated" --pedestal "$dark" --data "$data"
grep -q "^frames: *5 " "$work/stdout" || fail "truncated: not 5 frames: $(cat "$work/stdout")"
for output in r.clust r.csv r.npy noise.npy; do
    test -s "$work/out/$output" || fail "truncated: $output missing"
done
rm -f "$work/out/"*

expect 1 "cannot create /nonexistent" --pedestal "$dark" \
    --data "$work/good/data_master_0.json" --output /nonexistent/x.clust
expect 1 "cannot write /nonexistent/x.npy" --pedestal "$dark" \
    --data "$work/good/data_master_0.json" --hitmap /nonexistent/x.npy

expect 1 "must be odd" --simulate 2 --pedestal-frames 2 --cluster-size 4x3
expect 2 "give N or NxM" --simulate 2 --cluster-size big
expect 2 "leave out --pedestal" --simulate 2 --pedestal "$dark"
expect 2 "give --pedestal" --data "$dark"
expect 2 "below --max" --simulate 2 --min 5 --max 1
# Imaging: bad settings and bad files, refused before anything is written.
expect 2 "give --eta-map" --simulate 2 --image "$work/out/i.npy"
expect 2 "LO:HI" --simulate 2 --energy-window 900:700
expect 2 "LO:HI" --simulate 2 --peak-range 800
expect 2 "1..25 sub-pixels" --simulate 2 --subpixels 26
expect 2 "eta2, eta2full or eta3" --simulate 2 --eta eta4
expect 2 "factor of at least 1" --simulate 2 --auto-mask 0.5
expect 2 "give --simulate" --pedestal "$dark" --data "$dark" --pattern slits
printf 'CCETACAL short' >"$work/short.eta"
expect 1 "short.eta is truncated" --simulate 2 --pedestal-frames 2 \
    --eta-map "$work/short.eta" --image "$work/out/i.npy"
printf '\223NUMPY\001\000\020\000{"descr": 1}   \n' >"$work/mask.npy"
expect 1 "mask.npy has a header this reader does not understand" \
    --simulate 2 --pedestal-frames 2 --mask "$work/mask.npy"
expect 1 "cannot open .*nomask.npy" --simulate 2 --pedestal-frames 2 \
    --mask "$work/nomask.npy"
# Gain maps: a missing file, one that is no map, a map with a gain of 0,
# and the gain options without what they need.
"$clusterfind" --simulate 2 --pedestal-frames 2 --sim-gain-spread 0.05 \
    --sim-gain-map "$work/gain.npy" >/dev/null || fail "no simulated gain map"
header=$(od -An -tu2 -j8 -N2 "$work/gain.npy" | tr -d ' ')
dd if=/dev/zero of="$work/gain.npy" bs=1 count=8 \
    seek=$((10 + header + 8 * (400 + 2))) conv=notrunc 2>/dev/null
expect 1 "gain map pixel \(row 1, col 2\) is 0: a gain must be finite and above 0" \
    --simulate 2 --pedestal-frames 2 --gain-map "$work/gain.npy"
expect 1 "cannot open .*nogain.npy" --simulate 2 --pedestal-frames 2 \
    --gain-map "$work/nogain.npy"
expect 1 "neither a NumPy .npy file nor a TIFF" --simulate 2 \
    --pedestal-frames 2 --gain-map "$dark"
expect 2 "give --gain-map" --simulate 2 --gain-unit adu-per-kev
expect 2 "give --peak-range" --simulate 2 --gain-calibrate "$work/out/g.npy"
expect 2 "give --gain-calibrate" --simulate 2 --gain-mask "$work/out/m.npy"
expect 2 "spread in \[0, 0.2\]" --simulate 2 --sim-gain-spread 0.5
# Where CUDA cannot run (not built, or no GPU), asking for it is refused
# with the reason; where a GPU answers, there is nothing to refuse.
if "$clusterfind" --simulate 2 --pedestal-frames 2 --backend cuda \
    >/dev/null 2>&1; then
    echo "ok: --backend cuda runs here: a GPU answers"
else
    expect 1 "CUDA backend is not built|no usable GPU" \
        --simulate 2 --pedestal-frames 2 --backend cuda
fi
# A run the real receiver took with two UDP interfaces, its second
# interface's file cut and one of its halves padded: the frames both
# halves hold whole are found, the damage is said per interface.
two=$(dirname "$0")/data/slsreceiver-9.2.0-2udp
mkdir -p "$work/two"
cp "$two"/moench_2udp_* "$work/two/"
half=$((112 + 200 * 400 * 2))
dd if=/dev/zero of="$work/two/moench_2udp_d1_f0_0.raw" bs=1 count=4 seek=$((half + 12)) conv=notrunc 2>/dev/null
truncate -s $((4 * half + 100)) "$work/two/moench_2udp_d1_f0_0.raw"
expect 3 "padded frames skipped: 0 padded on UDP interface 0, 1 on interface 1" \
    --pedestal "$two/moench_2udp_master_0.json" --data "$work/two/moench_2udp_master_0.json"
grep -q "^frames: *3 " "$work/stdout" || fail "not the 3 whole frames: $(cat "$work/stdout")"
echo "bad input: every case refused clearly"
