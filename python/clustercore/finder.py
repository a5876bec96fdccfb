# SPDX-License-Identifier: BSD-3-Clause
"""The finder and its cluster lists: cc_finder and cc_clusters."""
import collections
import ctypes

import numpy

from . import _library as C
from ._library import check, library

__all__ = ["Finder", "Clusters", "cluster_dtype", "BACKENDS", "PRECISIONS",
           "COMMON_MODES", "COMMON_MODE_DTYPE", "GAIN_UNITS", "read_gain_map",
           "write_gain_map"]

BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
PRECISIONS = {"float": 0, "double": 1}
COMMON_MODES = {"none": 0, "supercolumn": 1, "row": 2, "half": 3}
# A gain map's unit (docs/spec.md §9): relative gains leave clusters in ADU
# of a gain-1 pixel, ADU per keV puts them in eV.
GAIN_UNITS = {"relative": 0, "adu-per-kev": 1}
_NAMES = {"backend": BACKENDS, "precision": PRECISIONS,
          "common_mode": COMMON_MODES}
# One common-mode region's figures since the reset (docs/spec.md §8).
COMMON_MODE_DTYPE = numpy.dtype([("frames_estimated", "<u8"),
                                 ("frames_unestimated", "<u8"),
                                 ("mean", "<f8"), ("rms", "<f8"),
                                 ("last", "<f8")])


def cluster_dtype(size_x, size_y):
    """The record of one cluster: aare's ClusterVector record (x, y, data)
    after the number of its frame. data is (size_y, size_x), row-major
    from the top-left cell, 0 outside the frame. Packed, like aare's."""
    return numpy.dtype([("frame", "<u8"), ("x", "<u2"), ("y", "<u2"),
                        ("data", "<i4", (size_y, size_x))])


FRAME_DTYPE = numpy.dtype([("frame", "<u8"), ("count", "<u4"), ("dropped", "<u4")])


def _exact(values, kind, name):
    """values as a contiguous array of kind, or ValueError if any changes."""
    converted = numpy.ascontiguousarray(values, kind)
    if not numpy.array_equal(converted, values):
        raise ValueError("%s holds values that %s cannot hold" % (name, numpy.dtype(kind)))
    return converted


def _as_array(pointer, count, kind):
    return numpy.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(kind)), (count,))


class Clusters(C.Owned):
    """The clusters of a batch of frames, as the library keeps them; the
    analysis classes take them as they are. array() copies them out."""
    destructor = "cc_clusters_destroy"

    def __init__(self):
        super().__init__(C.new_object(library().cc_clusters_new, message=False))

    def __len__(self):
        """Clusters stored, over all frames."""
        return self._lib.cc_clusters_total(self.handle)

    @property
    def frame_count(self):
        return self._lib.cc_clusters_frame_count(self.handle)

    def _frames(self):
        view = C.FrameClusters()
        for index in range(self.frame_count):
            check(self._lib.cc_clusters_frame(self.handle, index, ctypes.byref(view)))
            yield view

    @property
    def cluster_size(self):
        """(size_x, size_y), or None while the list holds no frame."""
        for view in self._frames():
            return view.size_x, view.size_y
        return None

    def frames(self):
        """One record a frame: its number, clusters stored and dropped
        (found beyond max_clusters)."""
        out = numpy.zeros(self.frame_count, FRAME_DTYPE)
        for index, view in enumerate(self._frames()):
            out[index] = (view.frame_number, view.count, view.dropped)
        return out

    @classmethod
    def from_array(cls, records, frames=None):
        """A list made from clusters found elsewhere (another program's, a
        selection of a finder's), for the analyses: records with fields
        frame, x, y and data (n, size_y, size_x), as array() gives them
        (aare's ClusterVector records after a frame number). Each run of
        records with one frame number is a frame, in the order given; or
        frames (frame, count, dropped, as frames() gives them) names the
        frames, empty ones and dropped counts included. So
        Clusters.from_array(c.array(), c.frames()) is c again. ValueError
        for records that do not fit; the library refuses sizes it lacks."""
        records = numpy.asarray(records)
        names = records.dtype.names or ()
        if not {"frame", "x", "y", "data"} <= set(names) or records.ndim != 1 \
                or records.dtype["data"].ndim != 2:
            raise ValueError("records need fields frame, x, y and data (size_y, size_x), "
                             "one a cluster (cluster_dtype), not %s" % (records.dtype,))
        size_y, size_x = records.dtype["data"].shape
        x, y = (_exact(records[name], numpy.uint16, name) for name in ("x", "y"))
        values = _exact(records["data"], numpy.int32, "data")
        numbers = _exact(records["frame"], numpy.uint64, "frame")
        if frames is None:
            starts = numpy.flatnonzero(numpy.diff(numbers, prepend=numbers[:1] + 1))
            counts = numpy.diff(numpy.append(starts, len(numbers)))
            frames = numpy.zeros(len(starts), FRAME_DTYPE)
            frames["frame"], frames["count"] = numbers[starts], counts
        frames = numpy.asarray(frames)
        if int(frames["count"].sum()) != len(records) or not numpy.array_equal(
                numpy.repeat(frames["frame"], frames["count"]), numbers):
            raise ValueError("frames (%d clusters) do not describe the records (%d): their "
                             "counts and frame numbers must match the records, in order"
                             % (int(frames["count"].sum()), len(records)))
        made = cls()
        view, at = C.FrameClusters(), 0
        for frame in frames:
            count = int(frame["count"])
            view.frame_number, view.count = int(frame["frame"]), count
            view.dropped, view.size_x, view.size_y = int(frame["dropped"]), size_x, size_y
            view.x = x[at:].ctypes.data_as(ctypes.POINTER(ctypes.c_uint16))
            view.y = y[at:].ctypes.data_as(ctypes.POINTER(ctypes.c_uint16))
            view.values = values[at:].ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
            C.call(made._lib.cc_clusters_append_frame, made.handle, ctypes.byref(view))
            at += count
        return made

    def array(self):
        """Every cluster as one structured array of cluster_dtype, frame
        after frame, in the library's order (row, then column)."""
        size = self.cluster_size or (3, 3)
        out = numpy.empty(len(self), cluster_dtype(*size))
        at = 0
        for view in self._frames():
            n = view.count
            if n == 0:
                continue
            part = out[at:at + n]
            part["frame"] = view.frame_number
            part["x"] = _as_array(view.x, n, ctypes.c_uint16)
            part["y"] = _as_array(view.y, n, ctypes.c_uint16)
            part["data"] = _as_array(view.values, n * size[0] * size[1],
                                     ctypes.c_int32).reshape(n, size[1], size[0])
            at += n
        return out


FrameArgument = collections.namedtuple("FrameArgument", "pointer count frames listed")


def _frames_argument(frames, rows, cols):
    """Frames as the library takes them, copied only where the memory
    does not allow otherwise: one pointer to back-to-back frames (listed
    False), or an array of one pointer a frame (listed True) when they are
    each contiguous but not together. frames keeps what the pointers
    point into alive through the call."""
    if isinstance(frames, (list, tuple)):
        parts = [_one_frame(frame, rows, cols) for frame in frames]
        pointers = (ctypes.c_void_p * len(parts))(*[p.ctypes.data for p in parts])
        return FrameArgument(pointers, len(parts), parts, True)
    if not isinstance(frames, numpy.ndarray):
        raise TypeError("frames must be a numpy array of uint16, not %s" % type(frames).__name__)
    if not _is_uint16(frames.dtype):
        raise TypeError("frames must be uint16 (the detector's raw values), not %s" % frames.dtype)
    if frames.ndim == 2:
        frames = frames[numpy.newaxis]
    if frames.ndim != 3 or frames.shape[1:] != (rows, cols):
        raise ValueError("frames must have shape (n, %d, %d), not %s" % (rows, cols, frames.shape))
    if frames.dtype.byteorder == ">":
        frames = frames.astype("<u2")
    if frames.flags.c_contiguous:
        return FrameArgument(frames.ctypes.data, frames.shape[0], frames, False)
    if frames.strides[1:] == (2 * cols, 2):  # frames apart, each in one piece
        pointers = (ctypes.c_void_p * frames.shape[0])(
            *[frames.ctypes.data + k * frames.strides[0] for k in range(frames.shape[0])])
        return FrameArgument(pointers, frames.shape[0], frames, True)
    frames = numpy.ascontiguousarray(frames)
    return FrameArgument(frames.ctypes.data, frames.shape[0], frames, False)


def _is_uint16(dtype):
    return dtype.kind == "u" and dtype.itemsize == 2  # either byte order


def _one_frame(frame, rows, cols):
    if not isinstance(frame, numpy.ndarray) or not _is_uint16(frame.dtype):
        raise TypeError("each frame must be a numpy array of uint16")
    if frame.shape != (rows, cols):
        raise ValueError("each frame must have shape (%d, %d), not %s" % (rows, cols, frame.shape))
    return numpy.ascontiguousarray(frame, "<u2")


class Finder(C.Owned):
    """The photon cluster finder (docs/spec.md): train(dark frames), then
    process(frames) gives their clusters. Settings are the core's cc_config
    (docs/library.md); cluster_size is N (N x N) or (Nx, Ny); backend is
    "auto" (the GPU when one answers), "cpu" or "cuda"; precision "float"
    or "double"; mask a (rows, cols) array of bad pixels (1 or True);
    gain a (rows, cols) gain map or the path of one (.npy or TIFF), in
    gain_unit "relative" or "adu-per-kev" (docs/spec.md §9)."""

    destructor = "cc_finder_destroy"

    def __init__(self, rows, cols, *, mask=None, gain=None,
                 gain_unit="relative", **settings):
        config = C.Config()
        library().cc_config_init(ctypes.byref(config))
        config.rows, config.cols = rows, cols
        _apply(config, settings)
        super().__init__(C.new_object(library().cc_finder_new, ctypes.byref(config)))
        self.rows, self.cols = rows, cols
        if mask is not None:
            self.set_mask(mask)
        if gain is not None:
            self.set_gain(gain, gain_unit)

    def _check(self, code):
        check(code, self._lib.cc_finder_last_error(self.handle))

    @property
    def settings(self):
        """The configuration in force, as Finder() takes it."""
        config = C.Config()
        self._check(self._lib.cc_finder_get_config(self.handle, ctypes.byref(config)))
        out = C.as_dict(config)
        for key, names in _NAMES.items():
            out[key] = C.name_of(names, out[key])
        out["cluster_size"] = (out.pop("cluster_size_x"), out.pop("cluster_size_y"))
        return out

    def configure(self, **changes):
        """Changes settings (see cc_finder_set_config for which keep the
        pedestal)."""
        config = C.Config()
        self._check(self._lib.cc_finder_get_config(self.handle, ctypes.byref(config)))
        _apply(config, changes)
        self._check(self._lib.cc_finder_set_config(self.handle, ctypes.byref(config)))

    @property
    def backend(self):
        """"cpu" or "cuda": the backend that runs."""
        code = self._lib.cc_finder_backend(self.handle)
        return C.name_of(BACKENDS, code)

    @property
    def backend_description(self):
        return self._lib.cc_finder_backend_description(self.handle).decode()

    @property
    def stats(self):
        stats = C.FinderStats()
        self._check(self._lib.cc_finder_get_stats(self.handle, ctypes.byref(stats)))
        out = C.as_dict(stats)
        out["state"] = ("training", "ready")[out["state"]]
        return out

    def common_mode(self):
        """Each common-mode region's figures since the reset, in ADU: a
        COMMON_MODE_DTYPE array (empty when the correction is off)."""
        config = C.Config()
        self._check(self._lib.cc_finder_get_config(self.handle, ctypes.byref(config)))
        n = self._lib.cc_common_mode_regions(ctypes.byref(config))
        out = numpy.zeros(n, COMMON_MODE_DTYPE)
        self._check(self._lib.cc_finder_common_mode(
            self.handle, out.ctypes.data_as(ctypes.c_void_p), n))
        return out

    def reset(self):
        self._lib.cc_finder_reset(self.handle)

    def train(self, dark_frames):
        """Sums dark frames, (n, rows, cols) uint16, into the pedestal."""
        given = _frames_argument(dark_frames, self.rows, self.cols)
        # Training takes one buffer: listed frames are gathered into one.
        frames = numpy.stack(given.frames) if given.listed else given.frames
        self._check(self._lib.cc_finder_train(self.handle, frames.ctypes.data,
                                               frames.shape[0]))

    def finish_training(self):
        self._check(self._lib.cc_finder_finish_training(self.handle))

    def process(self, frames, frame_numbers=None, into=None):
        """The clusters of frames: a (n, rows, cols) uint16 array, or a
        list of (rows, cols) arrays. frame_numbers (n values) label them;
        by default they count on from the frames processed. into, a
        Clusters, is reused when given."""
        given = _frames_argument(frames, self.rows, self.cols)
        n = given.count
        numbers = None
        if frame_numbers is not None:
            numbers = numpy.ascontiguousarray(frame_numbers, "<u8")
            if numbers.shape != (n,):
                raise ValueError("frame_numbers must hold %d numbers, not %s" % (n, numbers.shape))
        clusters = into if into is not None else Clusters()
        call = self._lib.cc_finder_process_list if given.listed else self._lib.cc_finder_process
        self._check(call(self.handle, given.pointer,
                         None if numbers is None else numbers.ctypes.data, n,
                         clusters.handle))
        return clusters

    def add_pedestal(self, frames):
        """Pedestal frames (docs/spec.md §2.7; PSI's frame modes Pedestal
        and NewPedestal): a (n, rows, cols) uint16 array, or a list of
        (rows, cols) arrays. While the pedestal trains they are summed (and
        may make it ready); once ready, each updates every unmasked pixel.
        No clusters."""
        given = _frames_argument(frames, self.rows, self.cols)
        call = (self._lib.cc_finder_add_pedestal_list if given.listed
                else self._lib.cc_finder_add_pedestal)
        self._check(call(self.handle, given.pointer, given.count))

    def set_analog(self, on=True):
        """Sums the analog image (docs/spec.md §4.8) from now on: each
        pixel's pedestal-subtracted value over the data frames processed,
        on the GPU when CUDA runs. False stops and drops it."""
        self._check(self._lib.cc_finder_set_analog(self.handle, 1 if on else 0))

    def take_analog(self):
        """(sums, frames): the analog image summed since the last take,
        float64 (rows, cols), and the frames in it; starts again."""
        sums = numpy.zeros((self.rows, self.cols))
        frames = ctypes.c_uint64(0)
        self._check(self._lib.cc_finder_take_analog(self.handle, sums.ctypes.data,
                                                    ctypes.byref(frames)))
        return sums, frames.value

    def pedestal_maps(self):
        """(mean, rms) per pixel in ADU, float64 (rows, cols) each."""
        mean = numpy.empty((self.rows, self.cols))
        rms = numpy.empty((self.rows, self.cols))
        self._check(self._lib.cc_finder_pedestal_maps(self.handle, mean.ctypes.data,
                                                      rms.ctypes.data))
        return mean, rms

    @property
    def mask(self):
        """The bad pixels in force (user's and automatic), uint8 (rows, cols)."""
        out = numpy.empty((self.rows, self.cols), numpy.uint8)
        self._check(self._lib.cc_finder_get_mask(self.handle, out.ctypes.data))
        return out

    def set_mask(self, mask):
        """The user's bad pixels, (rows, cols) of 0/1 or bool; None clears."""
        if mask is None:
            self._check(self._lib.cc_finder_set_mask(self.handle, None))
            return
        mask = numpy.asarray(mask)
        if mask.shape != (self.rows, self.cols):
            raise ValueError("the mask must have shape (%d, %d), not %s"
                             % (self.rows, self.cols, mask.shape))
        if mask.dtype != numpy.bool_ and mask.dtype.kind not in "iu":
            raise TypeError("the mask must be bool or integers of 0 and 1, not %s" % mask.dtype)
        if mask.dtype.kind in "iu" and not numpy.isin(mask, (0, 1)).all():
            raise ValueError("the mask must hold 0 (good) and 1 (bad) only")
        mask = numpy.ascontiguousarray(mask, numpy.uint8)
        self._check(self._lib.cc_finder_set_mask(self.handle, mask.ctypes.data))

    def load_mask(self, path):
        self._check(self._lib.cc_finder_load_mask(self.handle, _path(path)))

    def set_gain(self, gain, unit="relative"):
        """The gain map from now on: a (rows, cols) array of gains, or the
        path of a .npy or TIFF file; None removes it. Values that are not
        finite or not above 0 are refused, naming the pixel."""
        code = C.code_of(GAIN_UNITS, "gain_unit", unit)
        if gain is None:
            self._check(self._lib.cc_finder_set_gain(self.handle, None, code))
            return
        if isinstance(gain, (str, bytes)) or hasattr(gain, "__fspath__"):
            self._check(self._lib.cc_finder_load_gain(self.handle, _path(gain), code))
            return
        gain = numpy.asarray(gain)
        if gain.shape != (self.rows, self.cols):
            raise ValueError("the gain map must have shape (%d, %d), not %s"
                             % (self.rows, self.cols, gain.shape))
        if gain.dtype.kind not in "fiu":
            raise TypeError("the gain map must hold numbers, not %s" % gain.dtype)
        gain = numpy.ascontiguousarray(gain, numpy.float64)
        self._check(self._lib.cc_finder_set_gain(self.handle, gain.ctypes.data, code))

    @property
    def gain(self):
        """(map, unit) in force, map float64 (rows, cols); None without one."""
        out = numpy.empty((self.rows, self.cols))
        unit = ctypes.c_int()
        code = self._lib.cc_finder_get_gain(self.handle, out.ctypes.data, ctypes.byref(unit))
        if code == -3:  # CC_ESTATE: no map
            return None
        self._check(code)
        return out, C.name_of(GAIN_UNITS, unit.value)

    def save_pedestal(self, path):
        self._check(self._lib.cc_finder_save_pedestal(self.handle, _path(path)))

    def load_pedestal(self, path):
        self._check(self._lib.cc_finder_load_pedestal(self.handle, _path(path)))

    def set_interpolator(self, interpolator):
        """Images every batch processed from now on with a copy of the
        interpolator's map (on the GPU when CUDA runs); None stops."""
        self._check(self._lib.cc_finder_set_interpolator(
            self.handle, None if interpolator is None else interpolator.handle))

    def take_image(self, into):
        """Adds the photons imaged since the last take into into (an
        Interpolator of the same image size)."""
        self._check(self._lib.cc_finder_take_image(self.handle, into.handle))

    def set_gain_calibration(self, calibration):
        """Enters the clusters of every batch processed from now on into a
        flat field's spectra binned as calibration's (a GainCalibration;
        on the GPU when CUDA runs); None stops."""
        self._check(self._lib.cc_finder_set_gain_calibration(
            self.handle, None if calibration is None else calibration.handle))

    def take_gain_calibration(self, into):
        """Adds the spectra entered since the last take into into (a
        GainCalibration binned the same way)."""
        self._check(self._lib.cc_finder_take_gain_calibration(self.handle,
                                                              into.handle))


def _path(path):
    return str(path).encode()


def read_gain_map(path, rows, cols):
    """A gain map file (.npy float32/float64, or TIFF) as float64 (rows, cols)."""
    out = numpy.empty((rows, cols))
    C.call(library().cc_gain_map_read, _path(path), rows, cols, out.ctypes.data)
    return out


def write_gain_map(path, gain):
    """Writes a (rows, cols) gain map as a float64 .npy file."""
    gain = numpy.ascontiguousarray(gain, numpy.float64)
    if gain.ndim != 2:
        raise ValueError("a gain map is 2-D, not %s" % (gain.shape,))
    C.call(library().cc_gain_map_write_npy, _path(path), gain.shape[0], gain.shape[1],
           gain.ctypes.data)


def _apply(config, settings):
    """Sets cc_config fields from Finder()'s keywords."""
    for key, value in settings.items():
        if key == "cluster_size":
            x, y = (value, value) if isinstance(value, int) else value
            config.cluster_size_x, config.cluster_size_y = x, y
        elif key in _NAMES:
            setattr(config, key, C.code_of(_NAMES[key], key, value))
        elif key in dict(C.Config._fields_) and key not in ("rows", "cols"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError("%s must be a number, not %r" % (key, value))
            limits = {"adc_mask": 0xFFFF}
            if isinstance(value, int) and not 0 <= value <= limits.get(key, 0xFFFFFFFF):
                raise ValueError("%s %d is out of range" % (key, value))
            setattr(config, key, value)
        else:
            raise TypeError("unknown setting %r" % key)
