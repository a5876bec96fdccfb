# SPDX-License-Identifier: BSD-3-Clause
"""The ctypes structs mirror clustercore.h: the header, compiled, gives
every struct's size and every field's offset, and they must be ctypes'."""
import os
import shutil
import subprocess

import pytest

from clustercore import _library as C
from conftest import SOURCE


def test_structs_match_the_header(tmp_path):
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        pytest.skip("no C compiler (%s) to read the header with" % compiler)
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "clustercore.h"',
             "int main(void) {"]
    for name, struct in C.STRUCTS.items():
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (name, name))
        for field, _ in struct._fields_:
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));'
                         % (name, field, name, field))
    lines.append("return 0; }")
    source = tmp_path / "layout.c"
    source.write_text("\n".join(lines))
    subprocess.run([compiler, "-std=c11", "-I", os.path.join(SOURCE, "clusterCore"),
                    str(source), "-o", str(tmp_path / "layout")], check=True)
    header = dict(line.split() for line in
                  subprocess.run([str(tmp_path / "layout")], capture_output=True, text=True,
                                 check=True).stdout.splitlines())
    ours = {}
    for name, struct in C.STRUCTS.items():
        ours[name] = str(C.ctypes.sizeof(struct))
        for field, _ in struct._fields_:
            ours["%s.%s" % (name, field)] = str(getattr(struct, field).offset)
    assert ours == header


def test_every_prototype_is_in_the_library():
    lib = C.library()
    missing = [name for name in C.PROTOTYPES if not hasattr(lib, name)]
    assert not missing
