#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ioc_reference.sh: docs/ioc-reference.md names every PV of the plugin
# (tests/ioc_reference.py: every record of db/NDClusterCUDA.template and
# db/NDClusterCUDAFollow.template in its tables and no other, with its
# record type, its states and whether a request file autosaves it).
set -eu
python=$(command -v python3 || command -v /usr/bin/python3 || true)
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }
exec "$python" "$(dirname "$0")/ioc_reference.py" "$(dirname "$0")/.."
