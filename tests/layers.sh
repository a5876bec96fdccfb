#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# layers.sh: no source includes one from a layer above it, and the core
# never includes EPICS (tests/layers.py says the rules).
set -eu
python=$(command -v python3 || command -v /usr/bin/python3 || true)
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }
exec "$python" "$(dirname "$0")/layers.py" "$(dirname "$0")/.."
