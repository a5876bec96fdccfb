#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check_failures.sh LOG: the Check cases that failed or erred in LOG (a
# Check runner's output, file:line:F:case:test:...), as "case:test, ...";
# nothing when none did.
sed -n 's/^[^:]*:[0-9]*:[FE]:\([^:]*\):\([^:]*\):.*/\1:\2/p' "$1" 2>/dev/null |
    sort -u | paste -sd ';' - | sed 's/;/, /g'
