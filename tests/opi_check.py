# SPDX-License-Identifier: BSD-3-Clause
"""opi_check.py: checks the control-room screens against the running IOC.

usage: opi_check.py RECORDS OPI_DIR ADCORE_OP_DIR ST_CMD PREFIX

RECORDS is the IOC's dbl. Each of our screens is opened with the macros
the example IOC gives it: P is PREFIX, and each stage's R is what st.cmd
loads that stage's template with (the top-level screen names them CAM,
CLUSTER, HDF and IMAGE). From there every composite, embedded screen and
related display is followed, with the macros it passes on: the file must
exist (in OPI_DIR or ADCore's op folders), and every PV that it names must
be a record of the IOC. ADCore's own screens are checked with their
composites, but their related displays (other plugins, other macros) are
not followed. Prints one line per screen; exit status 1 on any problem.
"""
import os
import re
import sys

# Which template of st.cmd gives each stage macro of the top-level screen.
STAGES = {"CAM": "ADMoenchSim.template", "CLUSTER": "NDClusterCUDA.template",
          "HDF": "NDFileHDF5.template", "IMAGE": "NDStdArrays.template"}
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
    records_file, opi, op, st_cmd, prefix = sys.argv[1:]
    records = {line.strip() for line in open(records_file) if line.strip()}
    loads = dict(re.findall(r'dbLoadRecords\("([^"]+)",\s*"[^"]*\bR=([^,"]+)',
                            open(st_cmd).read()))
    r = {stage: loads[template] for stage, template in STAGES.items()}
    search = {"adl": [opi, op + "/adl"],
              "bob": [opi, op + "/bob", op + "/bob/autoconvert"],
              "ui": [opi, op + "/ui", op + "/ui/autoconvert"]}
    roots = [("NDClusterCUDA", {"P": prefix, "R": r["CLUSTER"]}),
             ("ADMoenchSim", {"P": prefix, "R": r["CAM"]}),
             ("iocClusterCUDA", dict(r, P=prefix))]
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
