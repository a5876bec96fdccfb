# SPDX-License-Identifier: BSD-3-Clause
"""docs_check.py TOP: the documents hold together.

- Every relative link in README.md and docs/*.md resolves: the file
  exists, and a #anchor names a heading of it (GitHub's slugs).
- A fenced block after "<!-- example: PATH -->" is PATH, byte for byte,
  so the example the docs show is the one the tests build.
- A table after "<!-- files: DIR -->" names every file under DIR
  (recursively) and no other, in its first column, as links or as
  `paths` relative to DIR: a file added or removed without its row fails.
- No file of the project refers to a specification or data outside the
  repository (the steering folder "../shared"), but for ../shared/deps,
  the folder of third-party source tarballs that tools/deps/build.sh
  takes by default (no third-party source is committed).
Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import sys
import unicodedata

top = sys.argv[1]
problems = []

link = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|!\[[^\]]*\]\(([^)\s]+)\)")
heading = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
fence = re.compile(r"^(```|~~~)")


def slug(text):
    """GitHub's anchor for a heading: lower case, markup and punctuation
    other than '-' and '_' removed, spaces to '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    kept = "".join(c for c in text
                   if c in "-_ " or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if fence.match(line):
                in_fence = not in_fence
                continue
            m = None if in_fence else heading.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                result.add(base if n == 0 else "%s-%d" % (base, n))
    return result


documents = [os.path.join(top, "README.md")]
documents += sorted(os.path.join(top, "docs", name)
                    for name in os.listdir(os.path.join(top, "docs"))
                    if name.endswith(".md"))
checked = 0
for document in documents:
    where = os.path.relpath(document, top)
    text = open(document, encoding="utf-8").read()
    in_fence = False
    for number, line in enumerate(text.split("\n"), 1):
        if fence.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in link.finditer(line):
            target = m.group(1) or m.group(2)
            if re.match(r"^[a-z]+:", target):
                continue  # a URL or mailto: not ours to check offline
            checked += 1
            path, _, anchor = target.partition("#")
            resolved = (os.path.normpath(os.path.join(os.path.dirname(document), path))
                        if path else document)
            if not os.path.exists(resolved):
                problems.append("%s:%d: %s: no such file" % (where, number, target))
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append("%s:%d: %s: no heading with that anchor" % (where, number, target))

    for m in re.finditer(r"<!-- example: (\S+) -->\n```[a-z]*\n(.*?)^```$", text, re.S | re.M):
        example = os.path.join(top, m.group(1))
        checked += 1
        if not os.path.exists(example):
            problems.append("%s: example %s: no such file" % (where, m.group(1)))
        elif open(example, encoding="utf-8").read() != m.group(2):
            problems.append("%s: the example block differs from %s" % (where, m.group(1)))

# File tables: every file of the folder named, and no other.
marker = re.compile(r"^<!-- files: (\S+) -->$")
backticked = re.compile(r"`([^`]+)`")


def files_under(folder):
    found = set()
    for here, dirs, names in os.walk(os.path.join(top, folder)):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("corpus",)]
        for name in names:
            if not name.startswith(".") and not name.endswith((".o", ".lo", ".la")):
                found.add(os.path.relpath(os.path.join(here, name), top))
    return found


for document in documents:
    where = os.path.relpath(document, top)
    lines = open(document, encoding="utf-8").read().split("\n")
    for number, line in enumerate(lines):
        m = marker.match(line)
        if not m:
            continue
        folder = m.group(1).rstrip("/")
        named = set()
        for row in lines[number + 1:]:
            if not row.startswith("|"):
                break
            cell = row.split("|")[1]
            if set(cell.strip()) <= set("-: "):
                continue
            for target in re.findall(r"\]\(([^)\s#]+)", cell):
                named.add(os.path.relpath(os.path.normpath(
                    os.path.join(os.path.dirname(document), target)), top))
            for name in backticked.findall(re.sub(r"\[[^\]]*\]\([^)]*\)", "", cell)):
                named.add(os.path.normpath(os.path.join(folder, name)))
        expected = files_under(folder)
        checked += 1
        for path in sorted(expected - named):
            problems.append("%s:%d: %s is missing from the table of %s/" % (where, number + 1, path, folder))
        for path in sorted(named - expected):
            problems.append("%s:%d: the table of %s/ names %s, which is not there" % (where, number + 1, folder, path))

# Any text file of the project (as the distribution holds it).
outside = re.compile(r"\.\./shared(?!/deps)|shared/SPEC|steering repo")
for folder, dirs, files in os.walk(top):
    dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")
               and d not in ("autom4te.cache",)]
    for name in files:
        path = os.path.join(folder, name)
        if name == "docs_check.py" or name.endswith((".png", ".clust", ".raw", ".npy")):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.split("\n"), 1):
            if outside.search(line):
                problems.append("%s:%d: refers outside the repository: %s"
                                % (os.path.relpath(path, top), number, line.strip()))

for problem in problems:
    print(problem)
print("%d links and examples checked in %d documents, %d problems"
      % (checked, len(documents), len(problems)))
sys.exit(1 if problems else 0)
