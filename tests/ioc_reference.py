# SPDX-License-Identifier: BSD-3-Clause
"""ioc_reference.py TOP: docs/ioc-reference.md names every PV of the plugin.

The records are those of db/NDClusterCUDA.template and
db/NDClusterCUDAFollow.template, record(TYPE, "$(P)$(R)Name"): the name
is what follows the leading macros. The reference's tables are those
whose header starts "| PV | record |": in each row the PV cell names
one or more PVs in backticks, and the record cell their types, in the
same order (one type for all of them, or one each). It checks that

- every record is in a table, and every PV of the tables is a record,
  listed once;
- the record type is the template's;
- an enumerated record's states (mbbo/mbbi ZRST, ONST, ...; bo/bi ZNAM,
  ONAM) are those the values cell lists first, in backticks, in order;
- the autosaved cell says "yes" exactly when a request file (db/*.req,
  iocBoot/*/*.req) names one of the row's records.
Prints one line per problem and exits 1 if there is any.
"""
import glob
import os
import re
import sys

top = sys.argv[1]
TEMPLATES = ["db/NDClusterCUDA.template", "db/NDClusterCUDAFollow.template"]
REFERENCE = "docs/ioc-reference.md"
STATE_FIELDS = ["ZR", "ON", "TW", "TH", "FR", "FV", "SX", "SV",
                "EI", "NI", "TE", "EL", "TV", "TT", "FT", "FF"]
problems = []


def records():
    """{name: (type, [states], template)} of the templates' records."""
    found = {}
    record = re.compile(r'^\s*record\(\s*(\w+)\s*,\s*"([^"]+)"\s*\)\s*\{(.*?)^\s*\}',
                        re.S | re.M)
    for template in TEMPLATES:
        text = open(os.path.join(top, template), encoding="utf-8").read()
        for kind, full, body in record.findall(text):
            name = re.sub(r"^(\$\(\w+(=[^)]*)?\))+", "", full)
            fields = dict(re.findall(r'field\(\s*(\w+)\s*,\s*"([^"]*)"\s*\)', body))
            if kind in ("bo", "bi"):
                states = [fields[f] for f in ("ZNAM", "ONAM") if f in fields]
            else:
                states = [fields[f + "ST"] for f in STATE_FIELDS if f + "ST" in fields]
            found[name] = (kind, states, template)
    return found


def autosaved():
    """Names the request files list: "$(P)$(R)Name" or "$(P)Cluster1:Name"."""
    names = set()
    for path in glob.glob(os.path.join(top, "db", "*.req")) + \
            glob.glob(os.path.join(top, "iocBoot", "*", "*.req")):
        for line in open(path, encoding="utf-8"):
            m = re.match(r"\s*\$\(P\)(?:\$\(R\)|\w+:)(\w+)\s*$", line)
            if m:
                names.add(m.group(1))
    return names


def cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def rows():
    """(line number, {column: cell}) of each row of the PV tables."""
    header = None
    for number, line in enumerate(open(os.path.join(top, REFERENCE),
                                       encoding="utf-8"), 1):
        if not line.startswith("|"):
            header = None
        elif header is None:
            header = cells(line)
            if header[:2] != ["PV", "record"]:
                header = []  # another kind of table: skipped to its end
        elif header and not re.match(r"^\|[-|: ]+\|\s*$", line):
            yield number, dict(zip(header, cells(line)))


templates = records()
saved = autosaved()
where = {}
for number, row in rows():
    at = "%s:%d" % (REFERENCE, number)
    names = re.findall(r"`(\w+)`", row.get("PV", ""))
    kinds = [k.strip() for k in row.get("record", "").split(",")]
    if len(kinds) == 1:
        kinds *= len(names)
    if not names or len(kinds) != len(names):
        problems.append("%s: %d PVs and %d record types" % (at, len(names), len(kinds)))
        continue
    listed = re.match(r"\s*((?:`[^`]+`\s*,\s*)*`[^`]+`)", row.get("values", ""))
    states = re.findall(r"`([^`]+)`", listed.group(1)) if listed else []
    says_saved = row.get("autosaved", "").lower().startswith("yes")
    for name, kind in zip(names, kinds):
        if name in where:
            problems.append("%s: %s is listed already, at line %d" % (at, name, where[name]))
            continue
        where[name] = number
        if name not in templates:
            problems.append("%s: %s: no template has this record" % (at, name))
            continue
        real_kind, real_states, template = templates[name]
        if kind != real_kind:
            problems.append("%s: %s: record type %s, but %s's is %s"
                            % (at, name, kind, template, real_kind))
        if real_states and states != real_states:
            problems.append("%s: %s: states %s, but %s's are %s"
                            % (at, name, ", ".join(states) or "(none listed)",
                               template, ", ".join(real_states)))
    if says_saved != any(name in saved for name in names):
        problems.append("%s: %s: autosaved says %s, the request files %s"
                        % (at, ", ".join(names), "yes" if says_saved else "no",
                           "name it" if not says_saved else "do not"))
for name, (kind, states, template) in sorted(templates.items()):
    if name not in where:
        problems.append("%s: %s (%s) is not in %s" % (template, name, kind, REFERENCE))

for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
