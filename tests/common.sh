# SPDX-License-Identifier: BSD-3-Clause
# common.sh: what the program tests share, sourced by each: the programs
# under test, a scratch directory removed on exit, and fail.
set -eu
clusterfind=${builddir:-.}/tools/clusterfind
simulate_raw=${builddir:-.}/examples/simulate_raw
work=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# need_numpy: sets python to a python3 that imports NumPy, or skips the
# test, visibly. The first python3 on PATH may be another installation
# (pyenv) than Debian's, which is where python3-numpy goes.
need_numpy() {
    python=""
    for candidate in python3 /usr/bin/python3; do
        if "$candidate" -c 'import numpy' 2>/dev/null; then
            python=$candidate
            return 0
        fi
    done
    echo "SKIP: no python3 can import numpy (Debian: apt-get install python3-numpy)"
    exit 77
}
