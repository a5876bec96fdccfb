#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# slurm_batch.sh: clusterfind-batch on a real one-node Slurm cluster
# (slurm_common.sh): 4 simulated runs as one job array with a GPU each
# asked for, then the reduce job. Each run's outputs must be the bytes of
# a serial clusterfind run, the totals their sum, the manifest right. A
# run that fails is reported, left out of the totals, and resubmitted
# alone; finished runs are never redone.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/slurm_common.sh"
need_slurm
need_numpy
here=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH=$here/../python
PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH PYTHONDONTWRITEBYTECODE
clusterfind=$(cd "$(dirname "$clusterfind")" && pwd)/clusterfind
# The reduce job fits the summed spectrum with libclustercore: this
# build's, where a plain Python can load it (sbatch passes the environment
# on). Where no library loads, the totals must say why the line is not
# fitted.
fitted=no
library=${builddir:-.}/clusterCore/.libs/libclustercore.so
if [ "${sanitizers:-no}" = no ] && [ -f "$library" ]; then
    CLUSTERCORE_LIBRARY=$(cd "$(dirname "$library")" && pwd)/libclustercore.so
    export CLUSTERCORE_LIBRARY
    fitted=yes
fi
batch() { "$python" -m clustercore.batch "$@"; }

# The runs, and a flat-field calibration for their images.
for k in 1 2 3 4; do
    mkdir "$work/run$k"
    "$simulate_raw" "$work/run$k" 30 6 $k 400 >/dev/null || fail "simulate_raw failed"
    echo "run$k run$k/dark_master_0.json run$k/data_master_0.json" >>"$work/runs.txt"
done
"$clusterfind" --simulate 60 --pedestal-frames 30 --eta-calibrate "$work/flat.eta" >/dev/null ||
    fail "no calibration"
# The calibration is named relative to where submit runs: the tasks,
# which run elsewhere, must still find it.
set -- --cluster-size 3 --nsigma 5 --energy sum2x2 --energy-window 500:1100 \
    --eta-map flat.eta --threads 1
settings="$*"

# submit ARGS...: clusterfind-batch submit; sets array (may be empty) and
# reduce to the job ids it printed.
submit() {
    (cd "$work" && batch submit runs.txt -o beamtime --partition batch \
        --clusterfind "$clusterfind" "$@" -- $settings) >"$work/submit.log" 2>&1 ||
        { cat "$work/submit.log"; fail "submit $* failed"; }
    array=$(sed -n 's/^submitted job array \([0-9]*\):.*/\1/p' "$work/submit.log")
    reduce=$(sed -n 's/^submitted reduce job \([0-9]*\):.*/\1/p' "$work/submit.log")
    [ -n "$reduce" ] || fail "no reduce job: $(cat "$work/submit.log")"
    slurm_wait_jobs $array $reduce
}

# states JOB: the states of its tasks, on one line.
states() { slurm_job_state "$1" | sort | uniq -c | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

slurm_start
submit --gpu
grep -q "4 of 4 runs (run1, run2, run3, run4)" "$work/submit.log" || fail "not 4 runs: $(cat "$work/submit.log")"
[ "$(states "$array")" = "4 COMPLETED" ] || fail "array $array: $(states "$array")"
scontrol -o show job "$array" | grep -q "gres/gpu=1\|gpu:1" || fail "no GPU asked for each task"
[ "$(states "$reduce")" = "1 COMPLETED" ] || fail "reduce: $(states "$reduce"): $(cat "$work"/beamtime/logs/reduce_*.out)"

# The same runs, serially, by hand.
for k in 1 2 3 4; do
    mkdir -p "$work/serial/run$k"
    (cd "$work" && "$clusterfind" --pedestal run$k/dark_master_0.json --data run$k/data_master_0.json \
        $settings --spectrum serial/run$k/spectrum.csv --hitmap serial/run$k/hitmap.npy \
        --noise serial/run$k/noise.npy --counts serial/run$k/counts.npy \
        --image serial/run$k/image.npy >serial/run$k/summary.txt 2>/dev/null) ||
        fail "serial run$k failed"
    for file in spectrum.csv hitmap.npy noise.npy counts.npy image.npy; do
        cmp -s "$work/serial/run$k/$file" "$work/beamtime/runs/run$k/$file" ||
            fail "run$k: $file differs from the serial run's"
    done
done

# check_totals RUNS... FAILURES: the totals are the sum of the serial runs
# named, the manifest lists them and the failures given (a Python list).
check_totals() {
    "$python" - "$work" "$fitted" "$@" <<'PY' || fail "the totals or the manifest are wrong"
import json, re, sys
import numpy
from clustercore import outputs
work, fitted, runs, failures = sys.argv[1], sys.argv[2], sys.argv[3:-1], json.loads(sys.argv[-1])
total = work + "/beamtime/total/"
manifest = json.load(open(total + "manifest.json"))
ok = True
def expect(what, good):
    global ok
    if not good:
        print("FAIL: " + what)
        ok = False
serial = [work + "/serial/" + run + "/" for run in runs]
spectra = [outputs.read_spectrum(s + "spectrum.csv") for s in serial]
summed = outputs.read_spectrum(total + "spectrum.csv")
expect("spectrum", numpy.array_equal(summed.counts, sum(s.counts for s in spectra)) and
       summed.overflow == sum(s.overflow for s in spectra) and
       numpy.array_equal(summed.edges, spectra[0].edges))
for kind in ("hitmap", "counts", "image"):
    want = sum(numpy.load(s + kind + ".npy").astype(numpy.uint64) for s in serial)
    got = numpy.load(total + kind + ".npy")
    expect(kind, got.dtype == numpy.uint64 and numpy.array_equal(got, want))
clusters = [int(re.search(r"^clusters: +(\d+)", open(s + "summary.txt").read(), re.M).group(1))
            for s in serial]
finished = [r["name"] for r in manifest["runs"] if r["state"] == "finished"]
expect("finished runs %s" % finished, finished == runs)
expect("failures %s" % manifest["failures"], manifest["failures"] == failures)
expect("frames %d" % manifest["totals"]["frames"], manifest["totals"]["frames"] == 6 * len(runs))
expect("clusters", manifest["totals"]["clusters"] == sum(clusters) > 0)
expect("versions", manifest["versions"]["clusterfind"].startswith("clusterfind (libclustercore)"))
expect("settings", "--eta-map" in manifest["settings"])
line = manifest["totals"]["line"]
if "peak" in line:
    expect("the summed spectrum's line %s" % line, summed.peak == line["peak"]
           and summed.edges[0] < line["peak"]["position"] < summed.edges[-1])
else:  # only where this build's library cannot be loaded
    expect("no line, where this build's library loads: %s" % line, fitted == "no"
           and "libclustercore" in line.get("not_fitted", "") and summed.peak is None)
sys.exit(0 if ok else 1)
PY
}
check_totals run1 run2 run3 run4 '[]'

# A fifth run whose data run is missing: its task fails, the reduce job
# still makes the totals of the four, and says what is missing.
echo "run5 run5/dark_master_0.json run5/data_master_0.json" >>"$work/runs.txt"
submit
grep -q "1 of 5 runs (run5)" "$work/submit.log" || fail "not run5 alone: $(cat "$work/submit.log")"
[ "$(states "$array")" = "1 FAILED" ] || fail "run5's task: $(states "$array")"
grep -q "not in the totals: run5" "$work"/beamtime/logs/reduce_$reduce.out ||
    fail "the reduce job does not say run5 is missing"
batch status "$work/beamtime" >"$work/status.txt"
grep -q "^run5 *failed: clusterfind exited 1" "$work/status.txt" || fail "status: $(cat "$work/status.txt")"
check_totals run1 run2 run3 run4 '["run5"]'

# Mended, it is resubmitted alone, and the totals are whole.
mkdir "$work/run5"
"$simulate_raw" "$work/run5" 30 6 5 400 >/dev/null || fail "simulate_raw failed"
submit
grep -q "1 of 5 runs (run5)" "$work/submit.log" || fail "not run5 alone: $(cat "$work/submit.log")"
[ "$(states "$array")" = "1 COMPLETED" ] || fail "run5's task again: $(states "$array")"
mkdir -p "$work/serial/run5"
(cd "$work" && "$clusterfind" --pedestal run5/dark_master_0.json --data run5/data_master_0.json \
    $settings --spectrum serial/run5/spectrum.csv --hitmap serial/run5/hitmap.npy \
    --counts serial/run5/counts.npy --image serial/run5/image.npy \
    >serial/run5/summary.txt 2>/dev/null) || fail "serial run5 failed"
check_totals run1 run2 run3 run4 run5 '[]'

# Nothing left to do: only the totals are made again.
submit
[ -z "$array" ] && grep -q "all 5 runs are finished" "$work/submit.log" ||
    fail "finished runs were submitted again: $(cat "$work/submit.log")"

# Refused: other settings in the same beamtime, a setting clusterfind
# refuses, an output the batch names itself.
refused() {
    message=$1
    beamtime=$2
    shift 2
    if batch submit "$work/runs.txt" -o "$work/$beamtime" --clusterfind "$clusterfind" -- "$@" \
        >"$work/refused.log" 2>&1; then
        fail "submit -- $* was not refused"
    fi
    grep -q "$message" "$work/refused.log" || fail "no clear refusal of $*: $(cat "$work/refused.log")"
}
refused "made with other settings" beamtime --nsigma 4
refused "clusterfind refuses the settings" other --nsgima 4
refused "the batch sets these itself" other --spectrum x.csv
echo "clusterfind-batch on Slurm: 4 runs = their serial runs, totals = their sum; a failed run reported and redone alone"
