# SPDX-License-Identifier: BSD-3-Clause
"""layers.py TOP: no file includes one from a layer above it.

The layers, bottom up: clusterCore (the C core, which knows nothing of
EPICS), then what uses it: tools/, examples/, tests/, the plugin
(NDPluginClusterCUDA/) and the frame source (moenchSource/), then the
example IOC (ioc/). Checked on every #include of every C, C++ and CUDA
source:
- clusterCore includes only its own files, config.h and system headers,
  never an EPICS, asyn or areaDetector header;
- within clusterCore a concern's folder includes only its own files and
  the core's shared headers (clustercore.h, internal.h and the
  per-cluster formulas, cluster_arithmetic.h); the CUDA
  kernels may include the finder's per-pixel formulas, which they share;
- the plugin, the frame source and the programs of tools/ and examples/
  use the public header only (clusterbench also reaches a tuning knob
  through internal.h); nothing below the IOC includes the plugin's or
  the source's headers but themselves.
Prints one line per breach and exits 1 if there is any.
"""
import os
import re
import sys

top = sys.argv[1]
include = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
epics = re.compile(r"^(epics|asyn|ND|AD[A-Z]|iocsh|db[A-Z]|dbAccess|registry|"
                   r"errlog|cantProceed|ellLib|alarm|recGbl|shareLib|osi)")
shared_core = {"clustercore.h", "internal.h", "cluster_arithmetic.h",
               "common_mode_regions.h", "config.h"}
public_only = {"NDPluginClusterCUDA", "moenchSource", "tools", "examples"}
internal_allowed = {"tools/clusterbench.c"}
# The CUDA kernels share the CPU's per-pixel formulas (one file, so that
# both backends round alike).
cross_concern = {("cuda", "finder/pixel_arithmetic.h")}
problems = []
sources = 0

for folder, dirs, files in os.walk(top):
    dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
    for name in files:
        if not name.endswith((".c", ".h", ".cpp", ".cu", ".cuh")):
            continue
        path = os.path.join(folder, name)
        relative = os.path.relpath(path, top)
        parts = relative.split(os.sep)
        layer = parts[0]
        sources += 1
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            m = include.match(line)
            if not m:
                continue
            quoted, header = m.group(1) == '"', m.group(2)
            where = "%s:%d: #include %s" % (relative, number, header)
            base = os.path.basename(header)
            if layer == "clusterCore":
                if not quoted:
                    if epics.match(base):
                        problems.append(where + ": the core includes EPICS")
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(relative), header))
                if base in shared_core:
                    continue
                if not target.startswith("clusterCore" + os.sep) or not os.path.exists(os.path.join(top, target)):
                    problems.append(where + ": not a file of the core")
                    continue
                concern = parts[1] if len(parts) > 2 else ""
                target_concern = target.split(os.sep)[1]
                if concern != target_concern and \
                        (concern, "/".join(target.split(os.sep)[1:])) not in cross_concern:
                    problems.append(where + ": another concern's private file")
            elif quoted and base in ("NDPluginClusterCUDA.h", "ADMoenchSim.h", "MoenchFrameFiller.h") \
                    and layer not in ("NDPluginClusterCUDA", "moenchSource", "ioc"):
                problems.append(where + ": a layer above this one")
            elif quoted and base == "internal.h" and layer in public_only \
                    and relative not in internal_allowed:
                problems.append(where + ": the core's internals, not its public header")
            elif quoted and layer in public_only and base not in shared_core \
                    and os.path.exists(os.path.join(top, "clusterCore", header)):
                problems.append(where + ": the core's internals, not its public header")

for problem in problems:
    print(problem)
print("%d sources checked, %d includes across layers" % (sources, len(problems)))
sys.exit(1 if problems else 0)
