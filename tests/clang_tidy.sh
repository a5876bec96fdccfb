#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# clang_tidy.sh: clang-tidy, with the checks of .clang-tidy, on every C and
# C++ source of the project that the build compiled, as
# compile_commands.json at the top records them (quickstart's build
# writes it through bear); any finding fails the test. The CUDA sources
# are nvcc's and not checked.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
database=$top/compile_commands.json
command -v clang-tidy >/dev/null ||
    { echo "SKIP: clang-tidy is not installed (apt-get install clang-tidy)"; exit 77; }
[ -f "$database" ] ||
    { echo "SKIP: no $database: build through bear (./quickstart check writes it)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/clang_tidy.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The project's sources in the database, each once (the per-pixel code is
# compiled twice, for float and double: the first entry is checked), into
# a database of the test's own without GCC's flags that clang does not
# know (-fvect-cost-model, of the vectorised per-pixel code).
python3 - "$database" "$top" "$work" >"$work/sources" <<'PYTHON'
import json, os, sys
database, top, work = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3]
gcc_only = ("-fvect-cost-model",)
seen, kept = set(), []
for entry in json.load(open(database)):
    path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
    inside = os.path.relpath(path, top)
    if inside.startswith("..") or inside.split(os.sep)[0].startswith("build"):
        continue
    if os.path.splitext(path)[1] in (".c", ".cpp") and path not in seen:
        seen.add(path)
        if "command" in entry:  # one string instead of a list: split it
            entry["arguments"] = entry.pop("command").split()
        entry["arguments"] = [a for a in entry["arguments"]
                              if not a.startswith(gcc_only)]
        kept.append(entry)
        print(path)
json.dump(kept, open(os.path.join(work, "compile_commands.json"), "w"))
PYTHON
count=$(wc -l <"$work/sources")
[ "$count" -gt 0 ] || { echo "FAIL: $database names none of the project's sources"; exit 1; }
[ -e "$top/clusterCore/clustercore.h" ] && grep -q "clusterCore/finder/finder.c" "$work/sources" ||
    { echo "FAIL: $database lacks the core's finder.c: an incomplete build recorded"; exit 1; }

status=0
xargs -P "$(nproc 2>/dev/null || echo 2)" -n 4 clang-tidy -p "$work" --quiet \
    <"$work/sources" >"$work/findings" 2>"$work/errors" || status=$?
if [ $status -ne 0 ] || grep -q "warning:\|error:" "$work/findings"; then
    grep -E "warning:|error:" "$work/findings" | sort -u | head -n 40
    tail -n 5 "$work/errors"
    echo "FAIL: clang-tidy found the above in the $count sources"
    exit 1
fi
echo "ok: clang-tidy ($(clang-tidy --version | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -n 1)) finds nothing in the $count sources"
