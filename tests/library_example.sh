#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# library_example.sh: the complete example of docs/library.md
# (examples/find_clusters.c, which tests/docs_check.py holds equal to the
# page) builds against the public header and runs to success.
. "$(dirname "$0")/common.sh"
example=$builddir/examples/find_clusters
[ -x "$example" ] || fail "the example was not built"
"$example" >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "the example exited $?"; }
cat "$work/out.txt"
grep -q "^pedestal:  ready after 100 dark frames" "$work/out.txt" || fail "the pedestal did not train"
grep -q "^clusters:  [1-9][0-9]* in 20 frames" "$work/out.txt" || fail "no clusters found"
