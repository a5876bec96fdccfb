# SPDX-License-Identifier: BSD-3-Clause
"""What clusters become (docs/spec.md §4, §7): spectrum, hit map, η, the
η calibration and the interpolated image, as numpy arrays."""
import collections
import ctypes

import numpy

from . import _library as C
from ._library import check, library

__all__ = ["EnergyWindow", "Spectrum", "Peak", "fit_peak", "HitMap", "eta",
           "eta_range", "ETA_DTYPE", "EtaCalibration", "Interpolator",
           "POSITION_DTYPE", "ENERGIES", "ETA_FUNCTIONS", "agreement"]

ENERGIES = {"sum": 0, "sum2x2": 1}
ETA_FUNCTIONS = {"eta2": 0, "eta2full": 1, "eta3": 2}
ESTATE = -3

# cc_eta_value and cc_position, as the library writes them.
ETA_DTYPE = numpy.dtype([("x", "<f8"), ("y", "<f8"), ("dx", "i1"), ("dy", "i1"),
                         ("valid", "u1")], align=True)
POSITION_DTYPE = numpy.dtype([("x", "<f8"), ("y", "<f8"), ("status", "u1")], align=True)
POSITION_STATUS = ("interpolated", "uninterpolable", "outside window")

Peak = collections.namedtuple("Peak", [name for name, _ in C.Peak._fields_])
Peak.__doc__ = "A fitted line (cc_peak): position, sigma, fwhm in ADU, ..."


class EnergyWindow(collections.namedtuple("EnergyWindow", "low high energy")):
    """The photons: clusters whose energy ("sum" or "sum2x2") lies in
    [low, high) ADU."""

    def __new__(cls, low, high, energy="sum"):
        return super().__new__(cls, float(low), float(high), energy)

    def c_struct(self):
        window = C.EnergyWindow(C.code_of(ENERGIES, "energy", self.energy), self.low, self.high)
        C.call(library().cc_energy_window_check, ctypes.byref(window))
        return window


def _window_pointer(window):
    """A window (an EnergyWindow or a (low, high[, energy]) tuple) for a
    call, or None."""
    if window is None:
        return None
    if not isinstance(window, EnergyWindow):
        window = EnergyWindow(*window)
    return ctypes.byref(window.c_struct())


def _copy(pointer, shape):
    return numpy.ctypeslib.as_array(pointer, shape).copy()


class Spectrum(C.Owned):
    """A histogram of cluster energies: bins equal bins on [min, max),
    with underflow and overflow."""
    destructor = "cc_spectrum_destroy"

    def __init__(self, bins=400, min=0.0, max=2000.0, energy="sum"):
        super().__init__(C.new_object(library().cc_spectrum_new,
                                      C.code_of(ENERGIES, "energy", energy), bins, min, max,
                                      message=False))

    def add(self, clusters):
        check(self._lib.cc_spectrum_add(self.handle, clusters.handle))

    def reset(self):
        self._lib.cc_spectrum_reset(self.handle)

    @property
    def edges(self):
        """bins + 1 edges, ADU."""
        bins = self._lib.cc_spectrum_bins(self.handle)
        return numpy.array([self._lib.cc_spectrum_edge(self.handle, i) for i in range(bins + 1)])

    @property
    def counts(self):
        return _copy(self._lib.cc_spectrum_counts(self.handle),
                     (self._lib.cc_spectrum_bins(self.handle),))

    @property
    def underflow(self):
        return self._lib.cc_spectrum_underflow(self.handle)

    @property
    def overflow(self):
        return self._lib.cc_spectrum_overflow(self.handle)

    def fit_peak(self, low=0.0, high=0.0):
        """The line fitted in [low, high) ADU (around the highest bin when
        low >= high), or None when there is none to fit."""
        peak = C.Peak()
        return _peak(self._lib.cc_spectrum_fit_peak(self.handle, low, high, ctypes.byref(peak)),
                     peak)

    def write_csv(self, path, peak=None):
        """clusterfind's spectrum CSV, with the fitted line when given."""
        c_peak = None if peak is None else ctypes.byref(C.Peak(*peak))
        C.call(self._lib.cc_spectrum_write_csv, self.handle, c_peak, str(path).encode())


def _peak(code, peak):
    if code == ESTATE:
        return None
    check(code)
    return Peak(*(getattr(peak, name) for name, _ in C.Peak._fields_))


def fit_peak(counts, centres, low=0.0, high=0.0):
    """The same fit on any histogram of equal bins (a sum of spectra)."""
    counts = numpy.ascontiguousarray(counts, numpy.float64)
    centres = numpy.ascontiguousarray(centres, numpy.float64)
    if counts.shape != centres.shape or counts.ndim != 1:
        raise ValueError("counts and centres must be 1-D arrays of one length")
    peak = C.Peak()
    return _peak(library().cc_fit_peak(counts.ctypes.data, centres.ctypes.data, len(counts),
                                       low, high, ctypes.byref(peak)), peak)


class HitMap(C.Owned):
    """Cluster centres per pixel; with a window, the counting image."""
    destructor = "cc_hitmap_destroy"

    def __init__(self, rows, cols, window=None):
        super().__init__(C.new_object(library().cc_hitmap_new, rows, cols, message=False))
        self.shape = (rows, cols)
        if window is not None:
            check(self._lib.cc_hitmap_set_window(self.handle, _window_pointer(window)))

    def add(self, clusters):
        check(self._lib.cc_hitmap_add(self.handle, clusters.handle))

    def reset(self):
        self._lib.cc_hitmap_reset(self.handle)

    @property
    def counts(self):
        """uint32 (rows, cols): [y, x] counts the clusters centred there."""
        return _copy(self._lib.cc_hitmap_counts(self.handle), self.shape)

    @property
    def outside(self):
        """Clusters left out for lying outside the window."""
        return self._lib.cc_hitmap_outside(self.handle)


def eta_range(function="eta2"):
    low, high = ctypes.c_double(), ctypes.c_double()
    check(library().cc_eta_range(C.code_of(ETA_FUNCTIONS, "function", function),
                                 ctypes.byref(low), ctypes.byref(high)))
    return low.value, high.value


def eta(clusters, function="eta2"):
    """The η of every cluster, one ETA_DTYPE record each (x, y, dx, dy,
    valid), in the order of Clusters.array()."""
    out = numpy.zeros(len(clusters), ETA_DTYPE)
    check(library().cc_eta(C.code_of(ETA_FUNCTIONS, "function", function), clusters.handle,
                           out.ctypes.data))
    return out


def agreement(a, b, thresholds=None, pedestal_allowance=1.0):
    """How two lists of clusters of the same frames agree, frame i of a
    with frame i of b (another finder's against ours, aare's for
    instance), as a dict: frames; clusters, only, not_max and
    at_threshold as pairs (a, b); same_place, same_values and
    largest_difference. thresholds: a pair of each list's per-pixel
    threshold maps (rows x cols, nsigma * rms) to weigh the one-sided
    clusters against; pedestal_allowance: ADU a cell the two pedestals
    may stand apart. docs/library.md says what each count means."""
    result = C.Agreement()
    limits = None
    if thresholds is not None:
        maps = [numpy.ascontiguousarray(m, dtype=numpy.float64) for m in thresholds]
        if len(maps) != 2 or maps[0].ndim != 2 or maps[0].shape != maps[1].shape:
            raise ValueError("thresholds: two maps of one shape (rows, cols)")
        limits = C.AgreementThresholds(maps[0].shape[0], maps[0].shape[1])
        for side, m in enumerate(maps):
            limits.threshold[side] = m.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        limits.pedestal_allowance = pedestal_allowance
    C.call(library().cc_clusters_agreement, ctypes.byref(result), a.handle, b.handle,
           ctypes.byref(limits) if limits is not None else None)
    pairs = ("clusters", "only", "not_max", "at_threshold")
    return {name: tuple(getattr(result, name)) if name in pairs else getattr(result, name)
            for name, _ in C.Agreement._fields_}


class EtaCalibration(C.Owned):
    """The flat-field calibration: a bins x bins histogram of (ηx, ηy) of
    the photons of a uniformly lit run (docs/spec.md §7.4)."""
    destructor = "cc_eta_calibration_destroy"

    def __init__(self, function="eta2", bins=100, window=None, _handle=None):
        if _handle is None:
            _handle = C.new_object(library().cc_eta_calibration_new,
                                   C.code_of(ETA_FUNCTIONS, "function", function), bins,
                                   _window_pointer(window))
        super().__init__(_handle)

    @classmethod
    def read(cls, path):
        """A calibration saved by save() or clusterfind --eta-calibrate."""
        return cls(_handle=C.new_object(library().cc_eta_calibration_read, str(path).encode()))

    def save(self, path):
        C.call(self._lib.cc_eta_calibration_save, self.handle, str(path).encode())

    def add(self, clusters):
        check(self._lib.cc_eta_calibration_add(self.handle, clusters.handle))

    def merge(self, other):
        check(self._lib.cc_eta_calibration_merge(self.handle, other.handle))

    def reset(self):
        self._lib.cc_eta_calibration_reset(self.handle)

    @property
    def info(self):
        info = C.EtaCalibrationInfo()
        check(self._lib.cc_eta_calibration_info_get(self.handle, ctypes.byref(info)))
        window = info.window
        return {"function": C.name_of(ETA_FUNCTIONS, info.function),
                "bins": info.bins, "range": (info.low, info.high),
                "window": EnergyWindow(window.low, window.high,
                                       C.name_of(ENERGIES, window.energy))
                if info.windowed else None,
                "photons": info.photons, "outside": info.outside,
                "uninterpolable": info.uninterpolable}

    @property
    def counts(self):
        """H, uint64 (bins, bins): [ix, iy]."""
        bins = self.info["bins"]
        return _copy(self._lib.cc_eta_calibration_counts(self.handle), (bins, bins))


class Interpolator(C.Owned):
    """Photon positions and the interpolated image of rows x cols frames,
    subpixels x subpixels a pixel, from a calibration's map."""
    destructor = "cc_interpolator_destroy"

    def __init__(self, calibration, rows, cols, subpixels=5, window=None):
        super().__init__(C.new_object(library().cc_interpolator_new, calibration.handle,
                                      _window_pointer(window), rows, cols, subpixels))
        self.shape = (rows * subpixels, cols * subpixels)

    def positions(self, clusters):
        """One POSITION_DTYPE record a cluster (x, y in frame coordinates,
        status: 0 interpolated, 1 uninterpolable, 2 outside the window)."""
        out = numpy.zeros(len(clusters), POSITION_DTYPE)
        at = 0
        for view in clusters._frames():
            if view.count:
                check(self._lib.cc_interpolator_positions(self.handle, ctypes.byref(view),
                                                          out[at:].ctypes.data))
            at += view.count
        return out

    def add(self, clusters):
        check(self._lib.cc_interpolator_add(self.handle, clusters.handle))

    def reset(self):
        self._lib.cc_interpolator_reset(self.handle)

    @property
    def image(self):
        """uint32 (rows * S, cols * S)."""
        return _copy(self._lib.cc_interpolator_image(self.handle), self.shape)

    @property
    def stats(self):
        stats = C.ImageStats()
        check(self._lib.cc_interpolator_stats(self.handle, ctypes.byref(stats)))
        return C.as_dict(stats)

    def flatness(self):
        """χ²/dof of the image folded into one pixel, or None (S = 1 or
        an empty image)."""
        chi2 = ctypes.c_double()
        code = self._lib.cc_interpolator_flatness(self.handle, ctypes.byref(chi2))
        if code == ESTATE:
            return None
        check(code)
        return chi2.value

    def write_npy(self, path):
        C.call(self._lib.cc_interpolator_write_npy, self.handle, str(path).encode())


GAIN_EVENTS = {"single": 0, "sum": 1}


class GainCalibration(C.Owned):
    """A gain map from a flat field (docs/spec.md §9.3): per-pixel spectra
    of bins bins on [low, high) around the line, of single events (the
    centre holds fraction of the sum) or of every cluster's sum; solve()
    fits each pixel's line."""
    destructor = "cc_gain_calibration_destroy"

    def __init__(self, rows, cols, low, high, bins=40, events="single",
                 fraction=0.8, min_photons=50):
        config = C.GainCalibrationConfig()
        library().cc_gain_calibration_config_init(ctypes.byref(config))
        config.rows, config.cols, config.low, config.high = rows, cols, low, high
        config.bins, config.fraction, config.min_photons = bins, fraction, min_photons
        config.events = C.code_of(GAIN_EVENTS, "events", events)
        super().__init__(C.new_object(library().cc_gain_calibration_new,
                                      ctypes.byref(config)))
        self.shape, self.bins = (rows, cols), bins

    def add(self, clusters):
        check(self._lib.cc_gain_calibration_add(self.handle, clusters.handle))

    def counts(self):
        """Every pixel's spectrum, uint32 (rows, cols, bins)."""
        rows, cols = self.shape
        pointer = self._lib.cc_gain_calibration_counts(self.handle, 0)
        flat = numpy.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_uint32)),
                                        (rows * cols * self.bins,))
        return flat.reshape(rows, cols, self.bins).copy()

    def solve(self, prior=None, prior_unit="relative", unit="relative",
              line_energy_kev=0.0):
        """(gain, quality, result): the map (float64, relative or in ADU
        per keV of line_energy_kev), each pixel's quality (uint8: 0 good,
        1 too few photons, 2 fit failed) and the figures. prior is the map
        the clusters were found under."""
        from .finder import GAIN_UNITS
        gain = numpy.empty(self.shape)
        quality = numpy.empty(self.shape, numpy.uint8)
        prior_pointer = None
        if prior is not None:
            prior = numpy.ascontiguousarray(prior, numpy.float64)
            if prior.shape != self.shape:
                raise ValueError("prior must have shape %s, not %s" % (self.shape, prior.shape))
            prior_pointer = prior.ctypes.data
        result = C.GainCalibrationResult()
        C.call(self._lib.cc_gain_calibration_solve, self.handle, prior_pointer,
               C.code_of(GAIN_UNITS, "prior_unit", prior_unit),
               C.code_of(GAIN_UNITS, "unit", unit), line_energy_kev,
               gain.ctypes.data, quality.ctypes.data, ctypes.byref(result))
        return gain, quality, C.as_dict(result)
