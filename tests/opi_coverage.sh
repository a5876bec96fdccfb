#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# opi_coverage.sh: every setting of db/NDClusterCUDA.template is on the
# plugin's MEDM, Phoebus and caQtDM screens (tests/opi_coverage.py).
set -eu
python=$(command -v python3 || command -v /usr/bin/python3 || true)
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }
exec "$python" "$(dirname "$0")/opi_coverage.py" "$(dirname "$0")/.."
