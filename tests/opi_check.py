# SPDX-License-Identifier: BSD-3-Clause
"""opi_check.py: checks the control-room screens against the running IOC.

usage: opi_check.py RECORDS OPI_DIR OP_DIRS ST_CMD PREFIX

RECORDS is the IOC's dbl; ST_CMD the IOC's st.cmd (iocBoot/NAME/st.cmd:
its top-level screen is NAME). OP_DIRS are the op folders of ADCore and
of the IOC's driver, ":" between them. The top-level screen is opened
with the macros the IOC gives it: P is PREFIX, and each stage's macro
(CAM, CLUSTER, HDF, STATS, IMAGE, INTERP) is the R that st.cmd loads that
stage's template with; so are our screens of the stages that st.cmd
loads (NDClusterCUDA, ADMoenchSim), with P and R. From there every
composite, embedded screen and related display is followed, with the
macros it passes on: the file must exist (in OPI_DIR or the op folders),
and every PV that it names must be a record of the IOC. Other screens'
composites are checked too, but not their related displays (other
plugins, other macros). Prints one line per screen; exit status 1 on any
problem.
"""
import os
import re
import sys

# Which load of st.cmd gives each stage macro of the top-level screens:
# its template (the first of those loaded), and the finder's address that
# an NDStdArrays takes (the hit map 1, the interpolated image 5).
STAGES = {"CAM": (("ADMoenchSim.template", "slsDetector.template"), None),
          "CLUSTER": (("NDClusterCUDA.template",), None),
          "HDF": (("NDFileHDF5.template",), None), "STATS": (("NDStats.template",), None),
          "IMAGE": (("NDStdArrays.template",), "1"), "INTERP": (("NDStdArrays.template",), "5")}
# Our screens of a stage, opened on their own with P and R.
STAGE_SCREENS = {"NDClusterCUDA": "CLUSTER", "ADMoenchSim": "CAM"}
# MEDM: PV names; "composite file"; related display name and args.
ADL_PV = re.compile(r'\b(?:chan[A-D]?|xdata|ydata|trigger|erase|countPvName)="([^"]+)"')
ADL_COMPOSITE = re.compile(r'"composite file"="([^";]+)')
ADL_RELATED = re.compile(r'display\[\d+\] \{([^}]*)\}')
# Phoebus: every PV element (widgets, traces, rules); embedded and opened files.
BOB_PV = re.compile(r"<(?:pv_name|x_pv|y_pv|err_pv)>([^<]+)<")
BOB_EMBEDDED = re.compile(r'<widget type="embedded"[^>]*>.*?<file>([^<]+)</file>', re.S)
BOB_OPEN = re.compile(r'<action type="open_display">(.*?)</action>', re.S)
# caQtDM: channel, channels_1, channelData... (";" between several).
UI_PV = re.compile(r'<property name="channel\w*"[^>]*>\s*<string[^>]*>([^<]*)</string>')
UI_PROPERTY = r'<property name="%s"[^>]*>\s*<string[^>]*>([^<]*)</string>'
UI_WIDGET = re.compile(r'<widget class="(caInclude|caRelatedDisplay)".*?</widget>', re.S)


def expand(text, macros):
    return re.sub(r"\$\((\w+)\)", lambda m: macros.get(m.group(1), m.group(0)), text)


def parse_args(text, macros):
    """MEDM and caQtDM display arguments: "P=$(P), R=cam1:"."""
    pairs = (item.split("=", 1) for item in text.split(",") if "=" in item)
    return {k.strip(): expand(v.strip(), macros) for k, v in pairs}


def scan(path, macros):
    """(PV names, [(file, macros, related?)]) of one screen, expanded."""
    text = open(path, encoding="utf-8", errors="replace").read()
    kind = path.rsplit(".", 1)[1]
    links = []
    if kind == "adl":
        names = ADL_PV.findall(text)
        links += [(f, macros, False) for f in ADL_COMPOSITE.findall(text)]
        for body in ADL_RELATED.findall(text):
            name = re.search(r'name="([^"]+)"', body)
            args = re.search(r'args="([^"]*)"', body)
            if name:
                links.append((name.group(1), parse_args(args.group(1) if args else "",
                                                        macros), True))
    elif kind == "bob":
        names = [n for n in BOB_PV.findall(text) if n != "$(pv_name)"]
        links += [(f, macros, False) for f in BOB_EMBEDDED.findall(text)]
        for body in BOB_OPEN.findall(text):
            opened = dict(macros)  # Phoebus passes the caller's macros on
            block = re.search(r"<macros>(.*?)</macros>", body, re.S)
            for k, v in re.findall(r"<(\w+)>([^<]*)</\1>", block.group(1) if block else ""):
                opened[k] = expand(v, macros)
            links.append((re.search(r"<file>([^<]+)</file>", body).group(1), opened, True))
    else:
        names = [n for found in UI_PV.findall(text) for n in found.split(";")]
        for cls, widget in ((m.group(1), m.group(0)) for m in UI_WIDGET.finditer(text)):
            if cls == "caInclude":
                links += [(f, macros, False) for f in re.findall(UI_PROPERTY % "filename",
                                                                  widget)]
                continue
            files = re.search(UI_PROPERTY % "files", widget).group(1).split(";")
            args = re.search(UI_PROPERTY % "args", widget)
            args = args.group(1).split(";") if args else []
            for i, f in enumerate(files):
                links.append((f, parse_args(args[i] if i < len(args) else "", macros),
                              True))
    names = [expand(n.strip(), macros) for n in names if n.strip()]
    return names, [(f.strip(), m, related) for f, m, related in links]


def main():
    records_file, opi, ops, st_cmd, prefix = sys.argv[1:]
    records = {line.strip() for line in open(records_file) if line.strip()}
    loads = [(template, dict(kv.split("=", 1) for kv in args.split(",") if "=" in kv))
             for template, args in re.findall(r'dbLoadRecords\("([^"]+)",\s*"([^"]*)"',
                                              open(st_cmd).read())]
    r = {}
    for stage, (templates, addr) in STAGES.items():
        for template, macros in loads:
            if template in templates and addr in (None, macros.get("NDARRAY_ADDR")):
                r.setdefault(stage, macros["R"])
    ops = ops.split(":")
    search = {"adl": [opi] + [d + "/adl" for d in ops],
              "bob": [opi] + [d + sub for d in ops for sub in ("/bob", "/bob/autoconvert")],
              "ui": [opi] + [d + sub for d in ops for sub in ("/ui", "/ui/autoconvert")]}
    roots = [(screen, {"P": prefix, "R": r[stage]}) for screen, stage in STAGE_SCREENS.items()
             if stage in r and any(t == screen + ".template" for t, _ in loads)]
    roots.append((os.path.basename(os.path.dirname(os.path.abspath(st_cmd))), dict(r, P=prefix)))
    problems = []
    for base, macros in roots:
        for kind in ("adl", "bob", "ui"):
            top = "%s/%s.%s" % (opi, base, kind)
            todo, seen, pvs, screens = [(top, macros, True)], set(), set(), 0
            while todo:
                path, m, ours = todo.pop()
                key = (path, tuple(sorted(m.items())))
                if key in seen:
                    continue
                seen.add(key)
                screens += 1
                names, links = scan(path, m)
                pvs.update(names)
                for f, lm, related in links:
                    if related and not ours:
                        continue
                    found = [d + "/" + f for d in search[kind]
                             if os.path.isfile(d + "/" + f)]
                    if not found:
                        problems.append("%s links %s, which is in none of %s"
                                        % (path, f, search[kind]))
                        continue
                    todo.append((found[0], lm, ours and found[0].startswith(opi + "/")))
            # A record's field (X.SCAN) is a PV of the record X.
            missing = sorted(n for n in pvs if n.split(".")[0] not in records)
            problems += ["%s.%s (with what it opens) names %s, not a record of the IOC"
                         % (base, kind, n) for n in missing[:10]]
            if len(missing) > 10:
                problems.append("%s.%s: and %d more" % (base, kind, len(missing) - 10))
            print("%s.%s: %d screens opened from it, %d PVs, %d missing"
                  % (base, kind, screens, len(pvs), len(missing)))
    for p in problems:
        print("problem: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
