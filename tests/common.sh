# SPDX-License-Identifier: BSD-3-Clause
# common.sh: what the program tests share, sourced by each: the programs
# under test, a scratch directory removed on exit, and fail.
set -eu
clusterfind=${builddir:-.}/tools/clusterfind
simulate_raw=${builddir:-.}/examples/simulate_raw
work=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
