#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# layers.sh: no source includes one from a layer above it, no core file
# calls a function of its own layer's other folders or of a layer above,
# and the core never includes EPICS (tests/layers.py says the rules).
set -eu
python=$(command -v python3 || command -v /usr/bin/python3 || true)
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }
exec "$python" "$(dirname "$0")/layers.py" "$(dirname "$0")/.."
