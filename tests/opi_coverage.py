# SPDX-License-Identifier: BSD-3-Clause
"""opi_coverage.py TOP: every setting of the plugin is on its screens.

A setting is a record of db/NDClusterCUDA.template whose name does not end
in _RBV (what a client writes: values, file names, commands). Each of the
three screen formats (MEDM .adl, Phoebus .bob, caQtDM .ui) must name it as
$(P)$(R)NAME on the plugin's screen or on the screen it opens for common
mode and gain (opi/NDClusterCUDA.*, opi/NDClusterCUDACorrections.*). The
running IOC checks that what the screens name exists (opi_check.py); this
checks the other way, without EPICS. Prints one line per setting missing
and exits 1 if any is.
"""
import os
import re
import sys

top = sys.argv[1]
RECORD = re.compile(r'record\(\s*(\w+)\s*,\s*"\$\(P\)\$\(R\)([^"]+)"')
SCREENS = ("NDClusterCUDA", "NDClusterCUDACorrections")

with open(os.path.join(top, "db", "NDClusterCUDA.template"), encoding="utf-8") as f:
    settings = [name for _, name in RECORD.findall(f.read()) if not name.endswith("_RBV")]
problems = []
if not settings:
    problems.append("db/NDClusterCUDA.template: no records found")
for extension in ("adl", "bob", "ui"):
    text = ""
    for screen in SCREENS:
        with open(os.path.join(top, "opi", "%s.%s" % (screen, extension)), encoding="utf-8") as f:
            text += f.read()
    named = set(re.findall(r"\$\(P\)\$\(R\)(\w+)", text))
    problems += ["opi/NDClusterCUDA.%s: the setting %s is on no screen" % (extension, name)
                 for name in settings if name not in named]
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
