# SPDX-License-Identifier: BSD-3-Clause
"""The clusterfind command: the C program that pip install built into the
package (docs/clusterfind.md), which finds the library beside it."""
import os
import sys

from ._library import BUNDLED


def main():
    program = os.path.join(BUNDLED, "clusterfind")
    if not os.access(program, os.X_OK):
        sys.exit("clusterfind: this clustercore was installed without it "
                 "(CLUSTERCORE_BUNDLE=no); run the project's build of it")
    os.execv(program, ["clusterfind"] + sys.argv[1:])
