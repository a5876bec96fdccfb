#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# python_wheel.sh: the package as pip builds it on its own. From a clean
# copy of the source, python -m build makes the sdist and, from the sdist,
# the wheel, which builds libclustercore and clusterfind into the package;
# installed into an empty venv (numpy from PyPI), clustercore.Finder loads
# the bundled library, and the clusterfind command writes the same bytes
# as this build's tools/clusterfind.
. "$(dirname "$0")/common.sh"
if [ "${sanitizers:-no}" != no ]; then
    echo "SKIP: the wheel builds its own library, without sanitizers: this runs in the plain build"
    exit 77
fi
need_python venv python3-venv
top=$(cd "$(dirname "$0")/.." && pwd)
# The copy: a checkout's files as they are now, new ones too, without
# what git ignores (builds, configure); or make distcheck's unpacked
# tarball, read-only, without its build (_build) and install (_inst).
mkdir "$work/src"
if [ -e "$top/.git" ] && command -v git >/dev/null; then
    (cd "$top" && git ls-files -z --cached --others --exclude-standard) |
        tar -C "$top" --null -T - -cf - | tar -C "$work/src" -xf -
else
    tar -C "$top" --exclude=./_build --exclude=./_inst -cf - . | tar -C "$work/src" -xf -
    chmod -R u+w "$work/src"
fi

"$python" -m venv "$work/tools" ||
    { echo "SKIP: $python cannot make a venv (Debian: apt-get install python3-venv)"; exit 77; }
"$work/tools/bin/pip" install -q build >"$work/pip.log" 2>&1 ||
    { echo "SKIP: cannot install build from PyPI: $(tail -1 "$work/pip.log")"; exit 77; }
# The package's build is its own, whatever make check runs with.
unset MAKEFLAGS MFLAGS MAKELEVEL CLUSTERCORE_BUNDLE CLUSTERCORE_LIBRARY
if ! "$work/tools/bin/python" -m build --outdir "$work/dist" "$work/src/python" \
    >"$work/python-build.log" 2>&1; then
    # Without the programs it runs, the build says which are missing.
    missing=$(sed -n 's/.*\(clustercore: building libclustercore needs .*\)/\1/p' \
        "$work/python-build.log")
    [ -n "$missing" ] && { echo "SKIP: $missing"; exit 77; }
    tail -40 "$work/python-build.log"
    fail "python -m build failed"
fi
set -- "$work/dist"/clustercore-*.tar.gz
[ -f "$1" ] || fail "python -m build made no sdist"
set -- "$work/dist"/clustercore-*.whl
[ -f "$1" ] || fail "python -m build made no wheel"
wheel=$1

"$python" -m venv "$work/venv" || fail "$python cannot make an empty venv"
"$work/venv/bin/pip" install -q "$wheel" >"$work/pip.log" 2>&1 ||
    { cat "$work/pip.log"; fail "pip install $(basename "$wheel") failed"; }
for script in clusterfind clusterfind-plot clusterfind-batch; do
    [ -x "$work/venv/bin/$script" ] || fail "the wheel installed no $script"
done

clusterfind=$(cd "$(dirname "$clusterfind")" && pwd)/clusterfind
cd "$work"
venv/bin/python -c '
import clustercore
simulator = clustercore.Simulator(seed=7)
finder = clustercore.Finder(*simulator.shape, pedestal_frames=20, threads=1)
finder.train(simulator.dark_frames(20))
clusters = finder.process(simulator.frames(2))
assert len(clusters) > 0, "no clusters"
print(clustercore.library_path())
' >found.txt || fail "clustercore.Finder does not work from the wheel"
case $(cat found.txt) in
"$work"/venv/lib/*/clustercore/_bundled/libclustercore.so*) ;;
*) fail "the installed package loads $(cat found.txt), not its bundled library" ;;
esac

# The same run through both programs: every output byte for byte.
outputs() {
    echo "--simulate 12 --pedestal-frames 20 --seed 7 --threads 1 --output $1.clust" \
        "--spectrum $1.csv --hitmap $1_hitmap.npy --noise $1_noise.npy --counts $1_counts.npy"
}
venv/bin/clusterfind $(outputs wheel) >wheel.log 2>&1 ||
    { cat wheel.log; fail "the clusterfind command failed"; }
"$clusterfind" $(outputs build) >build.log 2>&1 || { cat build.log; fail "tools/clusterfind failed"; }
for output in .clust .csv _hitmap.npy _noise.npy _counts.npy; do
    cmp "wheel$output" "build$output" || fail "clusterfind from the wheel writes another $output"
done
echo "$(basename "$wheel"): clustercore.Finder on its bundled library; clusterfind's outputs identical to this build's"
