# SPDX-License-Identifier: BSD-3-Clause
"""Builds libclustercore and the clusterfind program into the package
(clustercore/_bundled/) with the project's own Autotools build, so that
`pip install ./python` needs nothing built first; the sdist carries the
project's sources that this build needs (project/). CLUSTERCORE_BUNDLE=no
installs the Python code alone, for a library installed otherwise (make
install). The rest of the metadata is pyproject.toml's."""
import glob
import os
import shutil
import subprocess
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.errors import ExecError

HERE = os.path.dirname(os.path.abspath(__file__))
BUNDLE = os.environ.get("CLUSTERCORE_BUNDLE", "yes") != "no"
CARRIED = "project"  # where the sdist carries the project's sources
# What the build needs of the project, as patterns (no second list of its
# sources): the Autotools inputs, and the sources of the library and of
# the programs of tools/, clusterfind's among them.
PROJECT = ("configure.ac", "Makefile.am", "clustercore.pc.in", "LICENSE", "NOTICE",
           "m4/*.m4", "clusterCore/**/*.[ch]", "clusterCore/**/*.cu",
           "clusterCore/**/*.cuh", "clusterCore/cuda/nvcc-libtool", "tools/*.[ch]")
# The programs the build runs, by Debian package; autoreconf's only
# when there is no configure yet.
PROGRAMS = {"make": "make", "pkg-config": "pkg-config"}
BOOTSTRAP = {"autoreconf": "autoconf", "automake": "automake", "libtoolize": "libtool"}
DEBIAN = "build-essential autoconf automake libtool pkg-config libjansson-dev"


class BuildError(ExecError):
    """The library cannot be built: setuptools prints the sentence alone."""


def project_source():
    """The project's tree: carried in this sdist, else the one that holds
    python/."""
    for root in (os.path.join(HERE, CARRIED), os.path.dirname(HERE)):
        if os.path.exists(os.path.join(root, "clusterCore", "clustercore.h")):
            return root
    raise BuildError("clustercore: the project's sources (configure.ac, clusterCore/) are "
                     "neither in %s nor above it: install from the project's tree or its "
                     "sdist, or set CLUSTERCORE_BUNDLE=no to install without the library"
                     % os.path.join(HERE, CARRIED))


def project_files(source):
    """The files of PROJECT in source, relative to it."""
    for pattern in PROJECT:
        for path in sorted(glob.glob(os.path.join(source, pattern), recursive=True)):
            yield os.path.relpath(path, source)


def run(command, where):
    print("clustercore: in %s: %s" % (where, " ".join(command)), flush=True)
    try:
        subprocess.run(command, cwd=where, check=True)
    except subprocess.CalledProcessError as error:
        raise BuildError("clustercore: %s failed (exit status %d): the lines above say why "
                         "(the build needs, on Debian: %s)"
                         % (command[0], error.returncode, DEBIAN)) from None


def libtool_dlname(archive):
    """The file name a libtool library is loaded by (its soname), from its
    .la file."""
    with open(archive, encoding="utf-8") as f:
        dlname = next((line.split("=", 1)[1].strip().strip("'") for line in f
                       if line.startswith("dlname=")), "")
    if not dlname:
        raise BuildError("clustercore: %s names no shared library (--disable-shared?)" % archive)
    return dlname


def build_project(source, bundle):
    """Builds the library and clusterfind from source in a temporary folder,
    configured as a plain build (the CUDA backend when configure finds
    nvcc), and copies them into bundle."""
    configured = os.path.exists(os.path.join(source, "configure"))
    needed = dict(PROGRAMS, **({} if configured else BOOTSTRAP))
    missing = ["%s (%s)" % item for item in needed.items() if shutil.which(item[0]) is None]
    if missing:
        raise BuildError("clustercore: building libclustercore needs %s; on Debian: "
                         "apt-get install %s" % (", ".join(missing), DEBIAN))
    if not configured:
        run(["autoreconf", "-fi"], source)  # in the tree, as ./quickstart bootstraps
    with tempfile.TemporaryDirectory(prefix="clustercore-build-") as build:
        # The package loads the shared library only: static objects would
        # double the compilation.
        run([os.path.join(source, "configure"), "--without-epics-base",
             "--without-slsdetector", "--disable-unit-tests", "--disable-static"], build)
        # Linked with the RPATH $ORIGIN, which LD_LIBRARY_PATH does not
        # override: clusterfind runs on the library beside it. ($$ is make's
        # $, and the backslash keeps the shell from expanding it.)
        run(["make", "-j%d" % len(os.sched_getaffinity(0)),
             r"AM_LDFLAGS=-Wl,--disable-new-dtags,-rpath,\$$ORIGIN",
             "clusterCore/libclustercore.la", "tools/clusterfind"], build)
        # libtool keeps what it built in .libs/.
        dlname = libtool_dlname(os.path.join(build, "clusterCore", "libclustercore.la"))
        os.makedirs(bundle, exist_ok=True)
        for built in (os.path.join("clusterCore", ".libs", dlname),
                      os.path.join("tools", ".libs", "clusterfind")):
            target = os.path.join(bundle, os.path.basename(built))
            shutil.copyfile(os.path.join(build, built), target)
            os.chmod(target, 0o755)


class BuildWithLibrary(build_py):
    """The package's Python files, then the library and clusterfind."""

    def run(self):
        super().run()
        if BUNDLE:
            build_project(project_source(),
                          os.path.join(self.build_lib, "clustercore", "_bundled"))


class SdistWithProject(sdist):
    """Carries PROJECT in project/: the build of an unpacked sdist cannot
    reach the tree above it."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        source = project_source()
        for name in project_files(source):
            target = os.path.join(base_dir, CARRIED, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(source, name), target)


commands = {"build_py": BuildWithLibrary, "sdist": SdistWithProject}
platform = {}
if BUNDLE:
    class PlatformDistribution(Distribution):
        """A distribution with compiled code: a platform wheel, installed
        in platlib."""

        def has_ext_modules(self):
            return True

    class PlatformWheel(Distribution().get_command_class("bdist_wheel")):
        """Tagged py3-none-PLATFORM: any Python 3 loads the library with
        ctypes, but only this platform runs it."""

        def get_tag(self):
            return ("py3", "none", super().get_tag()[2])

    commands["bdist_wheel"] = PlatformWheel
    platform["distclass"] = PlatformDistribution

setup(cmdclass=commands, **platform)
