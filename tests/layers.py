# SPDX-License-Identifier: BSD-3-Clause
"""layers.py TOP: every dependency points down the layers.

The layers, bottom up: the C core (clusterCore/, which knows nothing of
EPICS), then what uses it: tools/, examples/, tests/, the plugin
(NDPluginClusterCUDA/) and the frame source (moenchSource/), then the
example IOC (ioc/). Inside the core, its folders are layers too
(docs/design.md draws them):

  3  finder/                                  the front end
  2  cpu/  cuda/  files/  simulation/         backends, files, simulator
  1  pedestal/  analysis/                     per-pixel state, from clusters
  0  base/                                    what every folder uses

A folder uses its own files and those of lower layers, never one of its
own layer or above. Checked on every C, C++ and CUDA source:
- includes: the core includes only its own files, config.h and system
  headers, never an EPICS, asyn or areaDetector header, and a folder only
  its own headers and those of lower layers;
- calls: every cc_ and cc__ function a core file calls is defined in its
  own folder or a lower layer (definitions and calls found in the
  sources; PRECISION_FN(name) defines name_float and name_double);
- the plugin, the frame source and the programs of tools/ and examples/
  use the public header only (clusterbench also reaches a tuning knob
  through finder/finder.h); nothing below the IOC includes the plugin's
  or the source's headers but themselves.
Prints one line per breach and exits 1 if there is any.
"""
import os
import re
import sys

top = sys.argv[1]
RANKS = {"base": 0, "pedestal": 1, "analysis": 1, "cpu": 2, "cuda": 2,
         "files": 2, "simulation": 2, "finder": 3}
include = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
epics = re.compile(r"^(epics|asyn|ND|AD[A-Z]|iocsh|db[A-Z]|dbAccess|registry|"
                   r"errlog|cantProceed|ellLib|alarm|recGbl|shareLib|osi)")
public_only = {"NDPluginClusterCUDA", "moenchSource", "tools", "examples"}
internal_allowed = {"tools/clusterbench.h"}
# A definition: a name at the start of a line's declarator, its
# parameters, then a body (not a ';'), or PRECISION_FN(name)(...).
definition = re.compile(
    r"^[A-Za-z_][\w \t\*]*?\b(?:PRECISION_FN\((cc_\w+)\)|(cc_\w+))\s*\(([^;{]*?)\)\s*\{",
    re.M | re.S)
call = re.compile(r"\b(cc_\w+)\s*\(")
comment = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
problems = []
sources = 0


def folder_of(relative):
    """The core folder of a path under clusterCore/, or None."""
    parts = relative.split(os.sep)
    if parts[0] != "clusterCore" or len(parts) < 3:
        return None
    return parts[1]


def source_files():
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith(".") and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith((".c", ".h", ".cpp", ".cu", ".cuh")):
                path = os.path.join(folder, name)
                yield path, os.path.relpath(path, top)


def check_includes(path, relative):
    parts = relative.split(os.sep)
    layer = parts[0]
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
            if base in ("clustercore.h", "config.h"):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(relative), header))
            if not target.startswith("clusterCore" + os.sep) or \
                    not os.path.exists(os.path.join(top, target)):
                problems.append(where + ": not a file of the core")
                continue
            mine, theirs = folder_of(relative), folder_of(target)
            if mine not in RANKS or theirs not in RANKS:
                problems.append(where + ": a folder outside the layers")
            elif theirs != mine and RANKS[theirs] >= RANKS[mine]:
                problems.append(where + ": %s/ (layer %d) includes %s/ (layer %d)"
                                % (mine, RANKS[mine], theirs, RANKS[theirs]))
        elif quoted and base in ("NDPluginClusterCUDA.h", "ADMoenchSim.h", "MoenchFrameFiller.h") \
                and layer not in ("NDPluginClusterCUDA", "moenchSource", "ioc"):
            problems.append(where + ": a layer above this one")
        elif quoted and layer in public_only and base != "clustercore.h" \
                and relative not in internal_allowed \
                and os.path.exists(os.path.join(top, "clusterCore", header)):
            problems.append(where + ": the core's internals, not its public header")


def core_calls():
    """Checks every call of a core function against where it is defined."""
    defined = {}
    calls = []
    for path, relative in source_files():
        folder = folder_of(relative)
        if folder is None:
            continue
        text = comment.sub(" ", open(path, encoding="utf-8").read())
        own = set()
        for m in definition.finditer(text):
            if m.group(1):
                names = [m.group(1) + "_float", m.group(1) + "_double"]
            else:
                names = [m.group(2)]
            for name in names:
                defined.setdefault(name, folder)
                own.add(name)
        for m in call.finditer(text):
            if m.group(1) not in own:
                line = text.count("\n", 0, m.start()) + 1
                calls.append((relative, line, folder, m.group(1)))
    for relative, line, folder, name in calls:
        theirs = defined.get(name)
        if theirs is None or theirs == folder or folder not in RANKS:
            continue
        if RANKS.get(theirs, 99) >= RANKS[folder]:
            problems.append("%s:%d: %s() of %s/ (layer %d), called from %s/ (layer %d)"
                            % (relative, line, name, theirs, RANKS.get(theirs, -1),
                               folder, RANKS[folder]))
    return len(calls)


for path, relative in source_files():
    sources += 1
    check_includes(path, relative)
checked_calls = core_calls()

for problem in problems:
    print(problem)
print("%d sources and %d calls between the core's files checked, %d breaches"
      % (sources, checked_calls, len(problems)))
sys.exit(1 if problems else 0)
