# SPDX-License-Identifier: BSD-3-Clause
"""What the tests share: the project's programs (CLUSTERCORE_BUILDDIR,
default the source tree's build/) and simulated raw runs on disk."""
import os
import subprocess

import pytest

SOURCE = os.environ.get("CLUSTERCORE_SOURCE",
                        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("CLUSTERCORE_BUILDDIR", os.path.join(SOURCE, "build"))


def program(name):
    path = os.path.join(BUILD, name)
    if not os.access(path, os.X_OK):
        pytest.skip("no %s: build the project first (./quickstart demo)" % path)
    return path


def run(*command, check=True):
    """Runs a program; its output, or a failure showing it."""
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError("%s exited %d:\n%s%s" % (" ".join(map(str, command)),
                                                      done.returncode, done.stdout, done.stderr))
    return done


@pytest.fixture
def clusterfind():
    return program("tools/clusterfind")


@pytest.fixture(scope="session")
def raw_run(tmp_path_factory):
    """A simulated dark run (60 frames) and data run (12 frames) of 400 x
    400 pixels as the receiver writes them: (dark master, data master)."""
    where = tmp_path_factory.mktemp("run")
    run(program("examples/simulate_raw"), where, 60, 12, 5, 800)
    return str(where / "dark_master_0.json"), str(where / "data_master_0.json")


@pytest.fixture
def shared_data():
    return os.path.join(SOURCE, "tests", "data")
