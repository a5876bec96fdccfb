# SPDX-License-Identifier: BSD-3-Clause
"""MÖNCH-like frames with their ground truth (cc_simulator): data to try
settings on, the same frames for any thread or batch."""
import ctypes

import numpy

from . import _library as C
from ._library import check, library

__all__ = ["Simulator", "PHOTON_DTYPE"]

PHOTON_DTYPE = numpy.dtype([("frame", "<u8"), ("x", "<f8"), ("y", "<f8"),
                            ("energy_kev", "<f8"), ("line", "<u4")])
_ENUMS = {"beam": {"uniform": 0, "spot": 1},
          "pattern": {"none": 0, "slits": 1, "grid": 2, "star": 3},
          "common_mode": {"none": 0, "supercolumn": 1, "row": 2, "half": 3}}


class Simulator(C.Owned):
    """Settings are cc_simulator_config's fields (docs/library.md), beam
    "uniform" or "spot", pattern "none", "slits", "grid" or "star", and
    lines a list of (energy_kev, weight)."""
    destructor = "cc_simulator_destroy"

    def __init__(self, **settings):
        config = C.SimulatorConfig()
        library().cc_simulator_config_init(ctypes.byref(config))
        fields = dict(C.SimulatorConfig._fields_)
        for key, value in settings.items():
            if key == "lines":
                if not 1 <= len(value) <= C.SIM_LINES_MAX:
                    raise ValueError("lines: 1 to %d (energy_kev, weight) pairs" % C.SIM_LINES_MAX)
                config.n_lines = len(value)
                for slot, (energy, weight) in zip(config.lines, value):
                    slot.energy_kev, slot.weight = energy, weight
            elif key in _ENUMS:
                setattr(config, key, C.code_of(_ENUMS[key], key, value))
            elif key in fields and key != "n_lines":
                setattr(config, key, value)
            else:
                raise TypeError("unknown simulator setting %r" % key)
        super().__init__(C.new_object(library().cc_simulator_new, ctypes.byref(config)))
        self.shape = (config.rows, config.cols)

    def _buffer(self, n):
        return numpy.empty((n,) + self.shape, numpy.uint16)

    def dark_frames(self, n, first=0):
        """Dark frames first .. first + n - 1, (n, rows, cols) uint16."""
        frames = self._buffer(n)
        check(self._lib.cc_simulator_dark_frames(self.handle, first, n, frames.ctypes.data))
        return frames

    def frames(self, n, first=0, truth=False):
        """Frames with photons; with truth, also their photons as one
        PHOTON_DTYPE record each."""
        frames = self._buffer(n)
        if not truth:
            check(self._lib.cc_simulator_frames(self.handle, first, n, frames.ctypes.data, None))
            return frames
        handle = C.new_object(self._lib.cc_truth_new, message=False)
        try:
            check(self._lib.cc_simulator_frames(self.handle, first, n, frames.ctypes.data, handle))
            parts, view = [], C.FrameTruth()
            for index in range(self._lib.cc_truth_frame_count(handle)):
                check(self._lib.cc_truth_frame(handle, index, ctypes.byref(view)))
                part = numpy.zeros(view.count, PHOTON_DTYPE)
                part["frame"] = view.frame_number
                if view.count:
                    photons = numpy.ctypeslib.as_array(
                        ctypes.cast(view.photons, ctypes.POINTER(ctypes.c_uint8)),
                        (view.count * ctypes.sizeof(C.Photon),))
                    raw = photons.view(numpy.dtype({
                        "names": ["x", "y", "energy_kev", "line"],
                        "formats": ["<f8", "<f8", "<f8", "<u4"],
                        "offsets": [C.Photon.x.offset, C.Photon.y.offset,
                                    C.Photon.energy_kev.offset, C.Photon.line.offset],
                        "itemsize": ctypes.sizeof(C.Photon)}))
                    for name in ("x", "y", "energy_kev", "line"):
                        part[name] = raw[name]
                parts.append(part)
        finally:
            self._lib.cc_truth_destroy(handle)
        return frames, numpy.concatenate(parts) if parts else numpy.zeros(0, PHOTON_DTYPE)

    def maps(self):
        """The model's dark level and noise rms, float64 (rows, cols) each."""
        pedestal, noise = numpy.empty(self.shape), numpy.empty(self.shape)
        check(self._lib.cc_simulator_maps(self.handle, pedestal.ctypes.data, noise.ctypes.data))
        return pedestal, noise

    def gain_map(self):
        """Each pixel's relative gain, float64 (rows, cols): all 1 without
        gain_spread; the truth a gain map is checked against."""
        out = numpy.empty(self.shape)
        check(self._lib.cc_simulator_gain_map(self.handle, out.ctypes.data))
        return out

    def defects(self):
        """The planted defects, uint8 (rows, cols): 0 good, 1 hot, 2 dead."""
        out = numpy.empty(self.shape, numpy.uint8)
        check(self._lib.cc_simulator_defects(self.handle, out.ctypes.data))
        return out
