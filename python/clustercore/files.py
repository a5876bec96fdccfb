# SPDX-License-Identifier: BSD-3-Clause
"""Files: MÖNCH raw runs (the slsDetector receiver's format) and aare's
.clust cluster files. Pedestal, η calibration and mask files belong to
Finder and EtaCalibration."""
import ctypes
import warnings

import numpy

from . import _library as C
from ._library import check, library
from .finder import Clusters, _is_uint16, cluster_dtype

__all__ = ["RawRun", "RawRunWarning", "RawWriter", "ClustReader", "ClustWriter", "read_clust",
           "RAW_LAYOUTS", "RAW_CHIPS"]

# How a run's data files hold the pixels (cc_raw_layout, docs/spec.md
# §5.2): RawRun reads every one into rows; RawWriter writes each.
RAW_LAYOUTS = {"rows": 0, "moench03-old": 1, "ctb-moench03": 2, "ctb-moench04": 3}
# The chip of a chip test board run, which its master file does not say.
RAW_CHIPS = {None: 0, "moench03": 1, "moench04": 2}


def _choice(table, value, what):
    if value not in table:
        raise ValueError("%s must be one of %s, not %r"
                         % (what, ", ".join(map(repr, table)), value))
    return table[value]


class RawRunWarning(UserWarning):
    """A raw run was damaged: a data file missing or truncated, or a
    padded frame. Its complete frames are still read."""


class RawRun(C.Owned):
    """A raw run opened by its master file NAME_master_I.json: read()
    returns its complete frames, batch by batch, in rows whatever the
    run's layout (info["layout"], a name of RAW_LAYOUTS). chip names the
    chip of a chip test board run, "moench03" or "moench04": its master
    file does not say it, and such a run is refused without it."""
    destructor = "cc_raw_reader_close"

    def __init__(self, master_path, chip=None):
        chip = _choice(RAW_CHIPS, chip, "chip")
        super().__init__(C.new_object(library().cc_raw_reader_open_chip,
                                      str(master_path).encode(), chip))
        info = C.RawInfo()
        check(self._lib.cc_raw_reader_info(self.handle, ctypes.byref(info)))
        self.info = C.as_dict(info)
        self.info["layout"] = self._lib.cc_raw_layout_name(info.layout).decode()
        self.shape = (info.rows, info.cols)

    def read(self, max_frames=32):
        """Up to max_frames frames, (n, rows, cols) uint16, and their
        numbers from the headers; n is 0 at the end. Damage is skipped and
        said as a RawRunWarning."""
        frames = numpy.empty((max_frames,) + self.shape, numpy.uint16)
        numbers = numpy.empty(max_frames, numpy.uint64)
        n = ctypes.c_size_t()
        C.call(self._lib.cc_raw_reader_read, self.handle, frames.ctypes.data,
               numbers.ctypes.data, max_frames, ctypes.byref(n))
        while True:
            notice = self._lib.cc_raw_reader_notice(self.handle)
            if notice is None:
                break
            warnings.warn(notice.decode("utf-8", "replace"), RawRunWarning, stacklevel=2)
        return frames[:n.value], numbers[:n.value]

    def __iter__(self):
        """(frames, numbers) batches of up to 32 frames to the end."""
        while True:
            frames, numbers = self.read()
            if len(frames) == 0:
                return
            yield frames, numbers

    @property
    def stats(self):
        stats = C.RawStats()
        check(self._lib.cc_raw_reader_stats(self.handle, ctypes.byref(stats)))
        out = C.as_dict(stats)
        out["padded_by_interface"] = list(stats.padded_by_interface)
        return out


class RawWriter(C.Owned):
    """Writes a raw run as the receiver does, or in another layout of
    RAW_LAYOUTS (an ADC order takes 400 x 400 frames); frames are given in
    rows. Nothing appears under its names until finish(). A writer closed
    unfinished leaves nothing."""
    destructor = "cc_raw_writer_destroy"

    def __init__(self, master_path, rows, cols, max_frames_per_file=1000, layout="rows"):
        layout = _choice(RAW_LAYOUTS, layout, "layout")
        super().__init__(C.new_object(library().cc_raw_writer_new_layout,
                                      str(master_path).encode(), rows, cols,
                                      max_frames_per_file, layout))
        self.shape = (rows, cols)

    def write(self, frames, frame_numbers):
        """Appends frames, (n, rows, cols) uint16, numbered frame_numbers."""
        if not isinstance(frames, numpy.ndarray) or not _is_uint16(frames.dtype):
            raise TypeError("frames must be a numpy array of uint16")
        frames = numpy.ascontiguousarray(frames, "<u2")
        numbers = numpy.ascontiguousarray(frame_numbers, "<u8")
        if frames.ndim != 3 or frames.shape[1:] != self.shape or numbers.shape != frames.shape[:1]:
            raise ValueError("frames must be (n, %d, %d) with n frame numbers" % self.shape)
        C.call(self._lib.cc_raw_writer_write, self.handle, frames.ctypes.data,
               numbers.ctypes.data, len(frames))

    def finish(self):
        C.call(self._lib.cc_raw_writer_finish, self.handle)


class ClustReader(C.Owned):
    """A .clust file (aare's ClusterFile format) of clusters of one size,
    which the file does not record: the caller says it."""
    destructor = "cc_clust_reader_close"

    def __init__(self, path, cluster_size=3):
        x, y = (cluster_size, cluster_size) if isinstance(cluster_size, int) else cluster_size
        super().__init__(C.new_object(library().cc_clust_reader_open, str(path).encode(), x, y))

    def read(self, max_frames=64, into=None):
        """The next frames' clusters as a Clusters (no frames at the end)."""
        clusters = into if into is not None else Clusters()
        C.call(self._lib.cc_clust_reader_read, self.handle, max_frames, clusters.handle)
        return clusters

    def __iter__(self):
        while True:
            clusters = self.read()
            if clusters.frame_count == 0:
                return
            yield clusters


def read_clust(path, cluster_size=3):
    """Every cluster of a .clust file as one array (Clusters.array())."""
    with ClustReader(path, cluster_size) as reader:
        parts = [clusters.array() for clusters in reader]
    x, y = (cluster_size, cluster_size) if isinstance(cluster_size, int) else cluster_size
    return numpy.concatenate(parts) if parts else numpy.zeros(0, cluster_dtype(x, y))


class ClustWriter(C.Owned):
    """Writes clusters as a .clust file; it appears under its name at
    finish(), and a writer closed unfinished leaves nothing."""
    destructor = "cc_clust_writer_destroy"

    def __init__(self, path):
        super().__init__(C.new_object(library().cc_clust_writer_new, str(path).encode()))

    def write(self, clusters):
        C.call(self._lib.cc_clust_writer_write, self.handle, clusters.handle)

    def finish(self):
        C.call(self._lib.cc_clust_writer_finish, self.handle)
