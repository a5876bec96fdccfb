# SPDX-License-Identifier: BSD-3-Clause
"""clusterfind's output files, read and summed with numpy alone: the
spectrum CSV, the hit map, the counting and interpolated images and the
noise map (docs/clusterfind.md, Outputs). No libclustercore needed."""
import collections
import os

import numpy

__all__ = ["SpectrumData", "read_spectrum", "write_spectrum", "save_npy", "write_atomically", "read_map", "RUN_FILES",
           "find_outputs", "sum_spectra"]

# The names clusterfind-batch gives a run's outputs, by kind.
RUN_FILES = {"spectrum": "spectrum.csv", "hitmap": "hitmap.npy", "counts": "counts.npy",
             "image": "image.npy", "noise": "noise.npy"}

# The '# peak:' line's values, in its order (cc_peak's fields).
PEAK_NAMES = ("position", "sigma", "fwhm", "resolution", "counts", "background",
              "background_slope", "chi2_per_dof", "low", "high", "bins")

SpectrumData = collections.namedtuple("SpectrumData", "edges counts underflow overflow peak")
SpectrumData.__doc__ = """A spectrum as clusterfind writes it: bins + 1 edges
(ADU), counts (uint64), underflow, overflow, and the fitted line (a dict
of the '# peak:' line's values) or None."""


def _peak(line):
    fields = dict(item.split("=", 1) for item in line[len("# peak:"):].split())
    return {key: float(value) for key, value in fields.items()}


def read_spectrum(path):
    """A spectrum CSV of clusterfind --spectrum, or ValueError saying why."""
    low, high, counts = [], [], []
    underflow = overflow = None
    peak = None
    with open(path, encoding="utf-8") as f:
        if f.readline().strip() != "low,high,count":
            raise ValueError("%s: not a clusterfind spectrum (no low,high,count header)" % path)
        for number, line in enumerate(f, 2):
            try:
                if line.startswith("# peak:"):
                    peak = _peak(line)
                    continue
                a, b, n = line.strip().split(",")
                if a == "-inf":
                    underflow = int(n)
                elif b == "inf":
                    overflow = int(n)
                else:
                    low.append(float(a))
                    high.append(float(b))
                    counts.append(int(n))
            except ValueError:
                raise ValueError("%s:%d: not a low,high,count line" % (path, number)) from None
    if not counts or underflow is None or overflow is None:
        raise ValueError("%s: no bins, or no underflow and overflow lines" % path)
    if low[1:] != high[:-1]:
        raise ValueError("%s: the bins do not follow each other" % path)
    return SpectrumData(numpy.array(low + high[-1:]), numpy.array(counts, numpy.uint64),
                    underflow, overflow, peak)


def write_spectrum(path, spectrum):
    """Writes a spectrum in clusterfind's CSV, its fitted line (a dict of
    the '# peak:' names, fitted to these counts) last when it has one,
    under a temporary name renamed when complete."""
    edges = spectrum.edges
    lines = ["low,high,count"]
    lines += ["%.17g,%.17g,%d" % (edges[i], edges[i + 1], n)
              for i, n in enumerate(spectrum.counts)]
    lines += ["-inf,%.17g,%d" % (edges[0], spectrum.underflow),
              "%.17g,inf,%d" % (edges[-1], spectrum.overflow)]
    if spectrum.peak is not None:
        lines.append("# peak: " + " ".join(
            "%s=%d" % (name, spectrum.peak[name]) if name == "bins" else
            "%s=%.17g" % (name, spectrum.peak[name]) for name in PEAK_NAMES))
    write_atomically(path, lambda f: f.write(("\n".join(lines) + "\n").encode()))


def write_atomically(path, write):
    """Calls write(file) on a temporary file beside path, synced and renamed
    to path when complete; nothing is left on failure."""
    temporary = "%s.%d.tmp" % (path, os.getpid())
    try:
        with open(temporary, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def save_npy(path, array):
    """numpy.save, under a temporary name renamed when complete."""
    write_atomically(path, lambda f: numpy.save(f, array, allow_pickle=False))


def sum_spectra(spectra):
    """The sum of spectra of the same bins, or ValueError."""
    first = spectra[0]
    for other in spectra[1:]:
        if not numpy.array_equal(other.edges, first.edges):
            raise ValueError("the spectra have different bins: they cannot be summed")
    return SpectrumData(first.edges, sum(s.counts for s in spectra),
                    sum(s.underflow for s in spectra), sum(s.overflow for s in spectra), None)


def read_map(path, kinds="iuf"):
    """A 2-D array that clusterfind wrote (.npy), or ValueError."""
    try:
        array = numpy.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ValueError("%s: not a NumPy .npy file (%s)" % (path, error)) from None
    if array.ndim != 2 or array.dtype.kind not in kinds:
        raise ValueError("%s: not a clusterfind map (2-D numbers needed, found %s of shape %s)"
                         % (path, array.dtype, array.shape))
    return array


def find_outputs(paths):
    """The outputs of a run, by kind, from files and directories (a
    directory stands for the files of RUN_FILES in it). A file's kind is
    its name's (clusterfind-batch's names, or a name containing the kind:
    run7_noise.npy); a .csv is a spectrum."""
    found = {}
    for path in paths:
        if os.path.isdir(path):
            files = [os.path.join(path, name) for name in RUN_FILES.values()
                     if os.path.exists(os.path.join(path, name))]
            if not files:
                raise ValueError("%s holds none of %s" % (path, ", ".join(RUN_FILES.values())))
        elif os.path.exists(path):
            files = [path]
        else:
            raise ValueError("%s: no such file or directory" % path)
        for name in files:
            kind = _kind(name)
            if kind in found:
                raise ValueError("two %s files: %s and %s" % (kind, found[kind], name))
            found[kind] = name
    return found


def _kind(path):
    base = os.path.basename(path).lower()
    if base.endswith(".csv"):
        return "spectrum"
    if base.endswith(".npy"):
        for kind in ("noise", "image", "counts", "hitmap"):
            if kind in base:
                return kind
    raise ValueError("%s: not one of clusterfind's outputs (a .csv spectrum, or a .npy "
                     "named hitmap, counts, image or noise)" % path)
