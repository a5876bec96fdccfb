#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# clang_format.sh: every C, C++ and CUDA source of the project is laid out
# as .clang-format says (clang-format --dry-run --Werror): a file that is
# not fails the test, with clang-format's word on where.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
command -v clang-format >/dev/null ||
    { echo "SKIP: clang-format is not installed (apt-get install clang-format)"; exit 77; }
cd "$top"
sources=$(find clusterCore NDPluginClusterCUDA moenchSource moenchSimReceiver \
    tools tests examples ioc -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' \) | sort)
count=$(echo "$sources" | wc -l)
# shellcheck disable=SC2086
if ! clang-format --dry-run --Werror $sources >"${TMPDIR:-/tmp}/clang_format.$$" 2>&1; then
    grep "error:" "${TMPDIR:-/tmp}/clang_format.$$" | sed 's/:[0-9]*:[0-9]*: error: .*//' | sort -u | head -n 20
    rm -f "${TMPDIR:-/tmp}/clang_format.$$"
    echo "FAIL: the files above are not laid out as .clang-format says: clang-format -i them"
    exit 1
fi
rm -f "${TMPDIR:-/tmp}/clang_format.$$"
echo "ok: the $count sources are laid out as .clang-format says ($(clang-format --version | sed -n 's/.*version \([0-9.]*\).*/\1/p'))"
