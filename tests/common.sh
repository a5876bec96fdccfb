# SPDX-License-Identifier: BSD-3-Clause
# common.sh: what the program tests share, sourced by each: the programs
# under test, a scratch directory removed on exit, and fail.
set -eu
clusterfind=${builddir:-.}/tools/clusterfind
simulate_raw=${builddir:-.}/examples/simulate_raw
work=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# need_python MODULES PACKAGE: sets python to a python3 that imports every
# module of MODULES ("numpy" or "matplotlib numpy"), or skips the test,
# visibly, naming the Debian package. The first python3 on PATH may be
# another installation (pyenv) than Debian's, where python3-* packages go.
need_python() {
    imports=$(echo "$1" | tr ' ' ',')
    python=""
    for candidate in python3 /usr/bin/python3; do
        if "$candidate" -c "import $imports" 2>/dev/null; then
            python=$candidate
            return 0
        fi
    done
    echo "SKIP: no python3 can import $(echo "$1" | sed 's/ / and /g') (Debian: apt-get install $2)"
    exit 77
}

need_numpy() { need_python numpy python3-numpy; }

# need_pyclients [SET]: sets pyclients to the python of a venv with the
# client libraries of tests/pyclients.txt (p4p, ...) or of
# tests/pyclients-SET.txt, made once in the build ($builddir/tests/pyclients
# or pyclients-SET) from PyPI, under a lock (tests run side by side); fails
# when they cannot be installed. The first sees the system's NumPy and
# h5py; a SET brings its own (ophyd-async wants NumPy 2).
need_pyclients() {
    name=pyclients${1:+-$1}
    venv=${builddir:-.}/tests/$name
    requirements=$(dirname "$0")/$name.txt
    site=--system-site-packages
    [ -z "${1-}" ] || site=
    mkdir -p "$(dirname "$venv")"
    if ! (
        flock 9
        cmp -s "$requirements" "$venv/requirements.txt" && exit 0
        rm -rf "$venv"
        /usr/bin/python3 -m venv $site "$venv" &&
            "$venv/bin/pip" install --quiet --disable-pip-version-check \
                -r "$requirements" >"$work/pip.log" 2>&1 &&
            cp "$requirements" "$venv/requirements.txt"
    ) 9>"$venv.lock"; then
        tail -n 5 "$work/pip.log" 2>/dev/null
        rm -rf "$venv"
        fail "the clients of $requirements could not be installed from PyPI"
    fi
    pyclients=$venv/bin/python
}

# need_aare: sets python to $AARE_PYTHON (default /opt/aare/venv/bin/python)
# when it imports aare, or skips; and skips under ThreadSanitizer, since
# the peer checks compare physics, not threads.
need_aare() {
    python=${AARE_PYTHON:-/opt/aare/venv/bin/python}
    if ! "$python" -c 'import aare' 2>/dev/null; then
        echo "SKIP: no Python with aare at $python (set AARE_PYTHON; pip install aare builds it from source)"
        exit 77
    fi
    case "${sanitizers:-no}" in
    *thread*)
        echo "SKIP: the peer check compares physics, not threads: it runs in the plain and ASan builds"
        exit 77 ;;
    esac
}

# need_shared_library: sets library to the build's libclustercore.so, and
# preload to the sanitizer runtimes that a Python loading it with ctypes
# must have first in the process (their leak check off: Python's own
# allocations are not ours); skips, visibly, without the shared library,
# and under ThreadSanitizer, whose runtime cannot be loaded so late.
need_shared_library() {
    library=${builddir:-.}/clusterCore/.libs/libclustercore.so
    if [ ! -f "$library" ]; then
        echo "SKIP: no shared library at $library (configured with --disable-shared?)"
        exit 77
    fi
    preload=
    case "${sanitizers:-no}" in
    *thread*)
        echo "SKIP: Python cannot load a ThreadSanitizer library: this runs in the plain and ASan builds"
        exit 77 ;;
    *address*|*undefined*)
        preload=$(ldd "$library" | awk '/lib(asan|ubsan)\.so/ { print $3 }' | tr '\n' ' ')
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
        export ASAN_OPTIONS ;;
    esac
}

# run_python ARGS...: $python with need_shared_library's preload.
run_python() {
    if [ -n "$preload" ]; then LD_PRELOAD=$preload "$python" "$@"; else "$python" "$@"; fi
}
