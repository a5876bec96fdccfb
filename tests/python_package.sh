#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# python_package.sh: the clustercore package on this build's
# libclustercore: a copy of python/ installed with pip into a fresh venv
# without a library of its own (CLUSTERCORE_BUNDLE=no; Debian's numpy,
# pytest and matplotlib seen through --system-site-packages, nothing
# downloaded), this build's library named by CLUSTERCORE_LIBRARY, then its
# pytest suite, run from outside the source so that the installed package
# is what is tested. tests/python_wheel.sh tests the package as pip builds
# it, with its own library.
. "$(dirname "$0")/common.sh"
need_python "numpy pytest venv" "python3-numpy python3-pytest python3-venv"
need_shared_library
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${builddir:-.}" && pwd)
# The source tree may be read-only (make distcheck): pip builds in a copy.
mkdir "$work/src"
cp -R "$here/../python/pyproject.toml" "$here/../python/setup.py" "$here/../python/README.md" \
    "$here/../python/clustercore" "$here/../python/tests" "$work/src/"
"$python" -m venv --system-site-packages "$work/venv" ||
    { echo "SKIP: $python cannot make a venv (Debian: apt-get install python3-venv)"; exit 77; }
CLUSTERCORE_BUNDLE=no "$work/venv/bin/pip" install -q --no-build-isolation --no-index \
    "$work/src" >"$work/pip.log" 2>&1 || { cat "$work/pip.log"; fail "pip install failed"; }
CLUSTERCORE_LIBRARY=$(cd "$(dirname "$library")" && pwd)/$(basename "$library")
export CLUSTERCORE_LIBRARY
python=$work/venv/bin/python
(cd "$work" && run_python -c 'import clustercore, sys; print(clustercore.library_path())') \
    >"$work/found.txt" || fail "the installed package does not load its library"
grep -q "$build/clusterCore/.libs/libclustercore.so" "$work/found.txt" ||
    fail "the installed package loads $(cat "$work/found.txt"), not this build's library"
[ -x "$work/venv/bin/clusterfind-plot" ] && [ -x "$work/venv/bin/clusterfind-batch" ] ||
    fail "pip installed no clusterfind-plot or clusterfind-batch"
cd "$work"
CLUSTERCORE_SOURCE=$here/.. CLUSTERCORE_BUILDDIR=$build CLUSTERCORE_SANITIZERS=${sanitizers:-no} \
    run_python -m pytest -q -p no:cacheprovider -rs "$work/src/tests" || fail "pytest failed"
