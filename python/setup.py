# SPDX-License-Identifier: BSD-3-Clause
"""Records, in the installed package, which libclustercore it was built
against (CLUSTERCORE_LIBRARY, else this source tree's build/), so that
`pip install ./python` after `./quickstart demo` finds the library
without an installed one. The rest of the metadata is pyproject.toml's."""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    given = os.environ.get("CLUSTERCORE_LIBRARY")
    if given:
        return os.path.abspath(given)
    tree = os.path.join(HERE, "..", "build", "clusterCore", ".libs", "libclustercore.so")
    return os.path.realpath(tree) if os.path.exists(tree) else None


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "clustercore", "_built_with.py")
        with open(target, "w", encoding="utf-8") as f:
            f.write("# Written by setup.py: the library found at install time.\n"
                    "LIBRARY = %r\n" % built_library())


setup(cmdclass={"build_py": BuildWithLibrary})
