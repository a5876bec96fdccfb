#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# docs_check.sh: README.md and docs/ hold together (tests/docs_check.py:
# every relative link and anchor resolves, the examples shown are the
# files built, nothing refers outside the repository).
set -eu
python=$(command -v python3 || command -v /usr/bin/python3 || true)
[ -n "$python" ] || { echo "SKIP: no python3"; exit 77; }
exec "$python" "$(dirname "$0")/docs_check.py" "$(dirname "$0")/.."
