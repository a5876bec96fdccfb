# SPDX-License-Identifier: BSD-3-Clause
"""Finding and loading libclustercore, and the C declarations of its
public header (clusterCore/clustercore.h) for ctypes.

ctypes, not a C extension or cffi: the library's calls each work on whole
batches of frames, so a call's few microseconds of ctypes overhead do not
show, and a binding without compiled code installs with pip anywhere the
library is, for any Python 3, with nothing to build. Every struct below
mirrors the header field for field; tests/test_layout.py compiles the
header and checks each size and offset, so a change there cannot go
unnoticed here.
"""
import ctypes
import ctypes.util
import glob
import os
import subprocess

__all__ = ["library", "check", "ClusterCoreError"]

c_int, c_uint8, c_int8, c_uint16 = ctypes.c_int, ctypes.c_uint8, ctypes.c_int8, ctypes.c_uint16
c_uint32, c_int32, c_uint64, c_int64 = ctypes.c_uint32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_int64
c_double, c_size_t, c_char_p, c_void_p = ctypes.c_double, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p
P = ctypes.POINTER

MESSAGE_SIZE = 256  # CC_MESSAGE_SIZE


class ClusterCoreError(Exception):
    """A call of libclustercore failed: code is its CC_E* value (negative),
    name its symbolic name ("CC_EINVAL"), and the message the library's
    sentence saying why."""

    def __init__(self, code, message):
        self.code = code
        self.name = library().cc_error_name(code).decode()
        super().__init__(message or library().cc_strerror(code).decode())


class Config(ctypes.Structure):
    _fields_ = [("rows", c_uint32), ("cols", c_uint32),
                ("cluster_size_x", c_uint32), ("cluster_size_y", c_uint32),
                ("nsigma", c_double), ("pedestal_frames", c_uint32),
                ("adc_mask", c_uint16), ("precision", c_int),
                ("backend", c_int), ("threads", c_uint32),
                ("max_clusters", c_uint32), ("streams", c_uint32),
                ("mask_rms_factor", c_double), ("common_mode", c_int)]


class FrameClusters(ctypes.Structure):
    _fields_ = [("frame_number", c_uint64), ("count", c_uint32),
                ("dropped", c_uint32), ("size_x", c_uint32),
                ("size_y", c_uint32), ("x", P(c_uint16)),
                ("y", P(c_uint16)), ("values", P(c_int32))]


class Agreement(ctypes.Structure):
    _fields_ = [("frames", c_uint64), ("clusters", c_uint64 * 2),
                ("same_place", c_uint64), ("same_values", c_uint64),
                ("largest_difference", c_int64), ("only", c_uint64 * 2),
                ("not_max", c_uint64 * 2), ("at_threshold", c_uint64 * 2)]


class AgreementThresholds(ctypes.Structure):
    _fields_ = [("rows", c_uint32), ("cols", c_uint32),
                ("threshold", P(c_double) * 2), ("pedestal_allowance", c_double)]


class CommonModeRegion(ctypes.Structure):
    _fields_ = [("frames_estimated", c_uint64),
                ("frames_unestimated", c_uint64), ("mean", c_double),
                ("rms", c_double), ("last", c_double)]


class FinderStats(ctypes.Structure):
    _fields_ = [("state", c_int), ("frames_trained", c_uint64),
                ("pedestal_window", c_uint32),
                ("frames_processed", c_uint64), ("clusters", c_uint64),
                ("clusters_dropped", c_uint64),
                ("frames_truncated", c_uint64),
                ("masked_pixels", c_uint64), ("frames_pedestal", c_uint64)]


class EnergyWindow(ctypes.Structure):
    _fields_ = [("energy", c_int), ("low", c_double), ("high", c_double)]


class Peak(ctypes.Structure):
    _fields_ = [("position", c_double), ("sigma", c_double),
                ("fwhm", c_double), ("resolution", c_double),
                ("counts", c_double), ("background", c_double),
                ("background_slope", c_double),
                ("chi2_per_dof", c_double), ("low", c_double),
                ("high", c_double), ("bins", c_uint32)]


class EtaCalibrationInfo(ctypes.Structure):
    _fields_ = [("function", c_int), ("bins", c_uint32),
                ("low", c_double), ("high", c_double),
                ("windowed", c_int), ("window", EnergyWindow),
                ("photons", c_uint64), ("outside", c_uint64),
                ("uninterpolable", c_uint64)]


class GainCalibrationConfig(ctypes.Structure):
    _fields_ = [("rows", c_uint32), ("cols", c_uint32), ("bins", c_uint32),
                ("low", c_double), ("high", c_double), ("events", c_int),
                ("fraction", c_double), ("min_photons", c_uint32)]


class GainCalibrationResult(ctypes.Structure):
    _fields_ = [("photons", c_uint64), ("outside", c_uint64),
                ("pixels_good", c_uint64), ("pixels_few", c_uint64),
                ("pixels_failed", c_uint64), ("reference", c_double),
                ("spread", c_double)]


class ImageStats(ctypes.Structure):
    _fields_ = [("photons", c_uint64), ("uninterpolable", c_uint64),
                ("clipped", c_uint64), ("outside", c_uint64)]


class RawInfo(ctypes.Structure):
    _fields_ = [("version", c_double), ("rows", c_uint32),
                ("cols", c_uint32), ("interfaces", c_uint32),
                ("image_bytes", c_uint64), ("frames", c_uint64),
                ("total_frames", c_uint64),
                ("max_frames_per_file", c_uint32), ("files", c_uint32),
                ("frame_padding", c_uint32),
                ("packets_per_frame", c_uint32), ("layout", c_int)]


class RawStats(ctypes.Structure):
    _fields_ = [("frames_read", c_uint64), ("frames_padded", c_uint64),
                ("files_missing", c_uint64),
                ("files_truncated", c_uint64),
                ("padded_by_interface", c_uint64 * 2)]


SIM_LINES_MAX = 8  # CC_SIM_LINES_MAX


class EmissionLine(ctypes.Structure):
    _fields_ = [("energy_kev", c_double), ("weight", c_double)]


class SimulatorConfig(ctypes.Structure):
    _fields_ = [("rows", c_uint32), ("cols", c_uint32),
                ("seed", c_uint64), ("pedestal", c_double),
                ("pedestal_spread", c_double), ("noise_min", c_double),
                ("noise_max", c_double), ("flux", c_double),
                ("beam", c_int), ("spot_x", c_double),
                ("spot_y", c_double), ("spot_sigma", c_double),
                ("n_lines", c_uint32),
                ("lines", EmissionLine * SIM_LINES_MAX),
                ("gain", c_double), ("cloud_sigma", c_double),
                ("adc_max", c_uint16), ("threads", c_uint32),
                ("pattern", c_int), ("pattern_period", c_double),
                ("pattern_spokes", c_uint32), ("hot_pixels", c_uint32),
                ("dead_pixels", c_uint32), ("hot_noise", c_double),
                ("common_mode", c_int), ("common_mode_rms", c_double),
                ("gain_spread", c_double)]


class Photon(ctypes.Structure):
    _fields_ = [("x", c_double), ("y", c_double),
                ("energy_kev", c_double), ("line", c_uint32)]


class FrameTruth(ctypes.Structure):
    _fields_ = [("frame_number", c_uint64), ("count", c_uint32),
                ("photons", P(Photon))]


# The structs that tests/test_layout.py compares with the header.
STRUCTS = {"cc_config": Config, "cc_frame_clusters": FrameClusters,
           "cc_agreement": Agreement, "cc_agreement_thresholds": AgreementThresholds,
           "cc_finder_stats": FinderStats, "cc_energy_window": EnergyWindow,
           "cc_peak": Peak, "cc_eta_calibration_info": EtaCalibrationInfo,
           "cc_image_stats": ImageStats,
           "cc_gain_calibration_config": GainCalibrationConfig,
           "cc_gain_calibration_result": GainCalibrationResult, "cc_raw_info": RawInfo,
           "cc_raw_stats": RawStats, "cc_emission_line": EmissionLine,
           "cc_simulator_config": SimulatorConfig, "cc_photon": Photon,
           "cc_frame_truth": FrameTruth}

pp = P(c_void_p)  # an object's out-parameter: cc_x **x
# name: (result, arguments). Opaque objects are void pointers.
PROTOTYPES = {
    "cc_strerror": (c_char_p, [c_int]),
    "cc_error_name": (c_char_p, [c_int]),
    "cc_version": (c_char_p, []),
    "cc_config_init": (None, [P(Config)]),
    "cc_config_check": (c_int, [P(Config), c_char_p]),
    "cc_clusters_new": (c_int, [pp]),
    "cc_clusters_destroy": (None, [c_void_p]),
    "cc_clusters_frame_count": (c_size_t, [c_void_p]),
    "cc_clusters_total": (c_size_t, [c_void_p]),
    "cc_clusters_frame": (c_int, [c_void_p, c_size_t, P(FrameClusters)]),
    "cc_clusters_append_frame": (c_int, [c_void_p, P(FrameClusters), c_char_p]),
    "cc_clusters_agreement": (c_int, [P(Agreement), c_void_p, c_void_p,
                                      P(AgreementThresholds), c_char_p]),
    "cc_finder_new": (c_int, [pp, P(Config), c_char_p]),
    "cc_finder_destroy": (None, [c_void_p]),
    "cc_finder_last_error": (c_char_p, [c_void_p]),
    "cc_finder_backend": (c_int, [c_void_p]),
    "cc_finder_backend_description": (c_char_p, [c_void_p]),
    "cc_finder_threads": (c_uint32, [c_void_p]),
    "cc_finder_get_config": (c_int, [c_void_p, P(Config)]),
    "cc_finder_set_config": (c_int, [c_void_p, P(Config)]),
    "cc_finder_get_stats": (c_int, [c_void_p, P(FinderStats)]),
    "cc_finder_reset": (None, [c_void_p]),
    "cc_common_mode_regions": (c_uint32, [P(Config)]),
    "cc_finder_common_mode": (c_int, [c_void_p, c_void_p, c_uint32]),
    "cc_finder_train": (c_int, [c_void_p, c_void_p, c_size_t]),
    "cc_finder_finish_training": (c_int, [c_void_p]),
    "cc_finder_process": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p]),
    "cc_finder_process_list": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_void_p]),
    "cc_finder_set_mask": (c_int, [c_void_p, c_void_p]),
    "cc_finder_load_mask": (c_int, [c_void_p, c_char_p]),
    "cc_finder_set_gain": (c_int, [c_void_p, c_void_p, c_int]),
    "cc_finder_load_gain": (c_int, [c_void_p, c_char_p, c_int]),
    "cc_finder_get_gain": (c_int, [c_void_p, c_void_p, P(c_int)]),
    "cc_gain_map_read": (c_int, [c_char_p, c_uint32, c_uint32, c_void_p, c_char_p]),
    "cc_gain_map_write_npy": (c_int, [c_char_p, c_uint32, c_uint32, c_void_p, c_char_p]),
    "cc_mask_write_npy": (c_int, [c_char_p, c_uint32, c_uint32, c_void_p, c_char_p]),
    "cc_gain_calibration_config_init": (None, [P(GainCalibrationConfig)]),
    "cc_gain_calibration_new": (c_int, [pp, P(GainCalibrationConfig), c_char_p]),
    "cc_gain_calibration_destroy": (None, [c_void_p]),
    "cc_gain_calibration_add": (c_int, [c_void_p, c_void_p]),
    "cc_gain_calibration_counts": (c_void_p, [c_void_p, c_size_t]),
    "cc_gain_calibration_solve": (c_int, [c_void_p, c_void_p, c_int, c_int, c_double,
                                          c_void_p, c_void_p,
                                          P(GainCalibrationResult), c_char_p]),
    "cc_finder_get_mask": (c_int, [c_void_p, c_void_p]),
    "cc_finder_add_pedestal": (c_int, [c_void_p, c_void_p, c_size_t]),
    "cc_finder_add_pedestal_list": (c_int, [c_void_p, c_void_p, c_size_t]),
    "cc_finder_set_analog": (c_int, [c_void_p, c_int]),
    "cc_finder_take_analog": (c_int, [c_void_p, c_void_p, P(c_uint64)]),
    "cc_finder_set_interpolator": (c_int, [c_void_p, c_void_p]),
    "cc_finder_take_image": (c_int, [c_void_p, c_void_p]),
    "cc_finder_set_gain_calibration": (c_int, [c_void_p, c_void_p]),
    "cc_finder_take_gain_calibration": (c_int, [c_void_p, c_void_p]),
    "cc_finder_pedestal_maps": (c_int, [c_void_p, c_void_p, c_void_p]),
    "cc_finder_save_pedestal": (c_int, [c_void_p, c_char_p]),
    "cc_finder_load_pedestal": (c_int, [c_void_p, c_char_p]),
    "cc_cluster_energy": (c_int64, [c_int, c_uint32, c_uint32, c_void_p]),
    "cc_energy_window_check": (c_int, [P(EnergyWindow), c_char_p]),
    "cc_spectrum_new": (c_int, [pp, c_int, c_uint32, c_double, c_double]),
    "cc_spectrum_destroy": (None, [c_void_p]),
    "cc_spectrum_add": (c_int, [c_void_p, c_void_p]),
    "cc_spectrum_reset": (None, [c_void_p]),
    "cc_spectrum_bins": (c_uint32, [c_void_p]),
    "cc_spectrum_edge": (c_double, [c_void_p, c_uint32]),
    "cc_spectrum_counts": (P(c_uint64), [c_void_p]),
    "cc_spectrum_underflow": (c_uint64, [c_void_p]),
    "cc_spectrum_overflow": (c_uint64, [c_void_p]),
    "cc_spectrum_fit_peak": (c_int, [c_void_p, c_double, c_double, P(Peak)]),
    "cc_fit_peak": (c_int, [c_void_p, c_void_p, c_uint32, c_double, c_double, P(Peak)]),
    "cc_spectrum_write_csv": (c_int, [c_void_p, P(Peak), c_char_p, c_char_p]),
    "cc_hitmap_new": (c_int, [pp, c_uint32, c_uint32]),
    "cc_hitmap_destroy": (None, [c_void_p]),
    "cc_hitmap_add": (c_int, [c_void_p, c_void_p]),
    "cc_hitmap_reset": (None, [c_void_p]),
    "cc_hitmap_counts": (P(c_uint32), [c_void_p]),
    "cc_hitmap_set_window": (c_int, [c_void_p, P(EnergyWindow)]),
    "cc_hitmap_outside": (c_uint64, [c_void_p]),
    "cc_hitmap_write_npy": (c_int, [c_void_p, c_char_p, c_char_p]),
    "cc_eta_range": (c_int, [c_int, P(c_double), P(c_double)]),
    "cc_eta": (c_int, [c_int, c_void_p, c_void_p]),
    "cc_eta_calibration_new": (c_int, [pp, c_int, c_uint32, P(EnergyWindow), c_char_p]),
    "cc_eta_calibration_destroy": (None, [c_void_p]),
    "cc_eta_calibration_add": (c_int, [c_void_p, c_void_p]),
    "cc_eta_calibration_reset": (None, [c_void_p]),
    "cc_eta_calibration_merge": (c_int, [c_void_p, c_void_p]),
    "cc_eta_calibration_info_get": (c_int, [c_void_p, P(EtaCalibrationInfo)]),
    "cc_eta_calibration_counts": (P(c_uint64), [c_void_p]),
    "cc_eta_calibration_save": (c_int, [c_void_p, c_char_p, c_char_p]),
    "cc_eta_calibration_read": (c_int, [pp, c_char_p, c_char_p]),
    "cc_interpolator_new": (c_int, [pp, c_void_p, P(EnergyWindow), c_uint32,
                                    c_uint32, c_uint32, c_char_p]),
    "cc_interpolator_destroy": (None, [c_void_p]),
    "cc_interpolator_positions": (c_int, [c_void_p, P(FrameClusters), c_void_p]),
    "cc_interpolator_add": (c_int, [c_void_p, c_void_p]),
    "cc_interpolator_reset": (None, [c_void_p]),
    "cc_interpolator_image": (P(c_uint32), [c_void_p]),
    "cc_interpolator_stats": (c_int, [c_void_p, P(ImageStats)]),
    "cc_interpolator_flatness": (c_int, [c_void_p, P(c_double)]),
    "cc_interpolator_write_npy": (c_int, [c_void_p, c_char_p, c_char_p]),
    "cc_host_alloc": (c_void_p, [c_size_t]),
    "cc_host_free": (None, [c_void_p]),
    "cc_host_is_locked": (c_int, [c_void_p]),
    "cc_simulator_config_init": (None, [P(SimulatorConfig)]),
    "cc_simulator_new": (c_int, [pp, P(SimulatorConfig), c_char_p]),
    "cc_simulator_destroy": (None, [c_void_p]),
    "cc_simulator_dark_frames": (c_int, [c_void_p, c_uint64, c_size_t, c_void_p]),
    "cc_simulator_frames": (c_int, [c_void_p, c_uint64, c_size_t, c_void_p, c_void_p]),
    "cc_simulator_maps": (c_int, [c_void_p, c_void_p, c_void_p]),
    "cc_simulator_defects": (c_int, [c_void_p, c_void_p]),
    "cc_simulator_gain_map": (c_int, [c_void_p, c_void_p]),
    "cc_truth_new": (c_int, [pp]),
    "cc_truth_destroy": (None, [c_void_p]),
    "cc_truth_frame_count": (c_size_t, [c_void_p]),
    "cc_truth_frame": (c_int, [c_void_p, c_size_t, P(FrameTruth)]),
    "cc_raw_reader_open": (c_int, [pp, c_char_p, c_char_p]),
    "cc_raw_reader_open_chip": (c_int, [pp, c_char_p, c_int, c_char_p]),
    "cc_raw_layout_name": (c_char_p, [c_int]),
    "cc_raw_reader_close": (None, [c_void_p]),
    "cc_raw_reader_info": (c_int, [c_void_p, P(RawInfo)]),
    "cc_raw_reader_stats": (c_int, [c_void_p, P(RawStats)]),
    "cc_raw_reader_read": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t,
                                   P(c_size_t), c_char_p]),
    "cc_raw_reader_notice": (c_char_p, [c_void_p]),
    "cc_raw_writer_new": (c_int, [pp, c_char_p, c_uint32, c_uint32, c_uint32, c_char_p]),
    "cc_raw_writer_new_layout": (c_int, [pp, c_char_p, c_uint32, c_uint32, c_uint32, c_int,
                                         c_char_p]),
    "cc_raw_writer_write": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t, c_char_p]),
    "cc_raw_writer_finish": (c_int, [c_void_p, c_char_p]),
    "cc_raw_writer_destroy": (None, [c_void_p]),
    "cc_clust_writer_new": (c_int, [pp, c_char_p, c_char_p]),
    "cc_clust_writer_write": (c_int, [c_void_p, c_void_p, c_char_p]),
    "cc_clust_writer_finish": (c_int, [c_void_p, c_char_p]),
    "cc_clust_writer_destroy": (None, [c_void_p]),
    "cc_clust_reader_open": (c_int, [pp, c_char_p, c_uint32, c_uint32, c_char_p]),
    "cc_clust_reader_close": (None, [c_void_p]),
    "cc_clust_reader_read": (c_int, [c_void_p, c_size_t, c_void_p, c_char_p]),
}


# What pip install built into the package (python/setup.py): the library
# under its soname, and clusterfind.
BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bundled")


def _candidates():
    """Where the library may be, in the order tried."""
    given = os.environ.get("CLUSTERCORE_LIBRARY")
    if given:
        yield given, "CLUSTERCORE_LIBRARY"
        return
    for bundled in glob.glob(os.path.join(BUNDLED, "libclustercore.so*")):
        yield bundled, "the library pip install built into the package"
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "clustercore"],
                                capture_output=True, text=True, check=True).stdout.strip()
        for name in ("libclustercore.so", "libclustercore.so.0"):
            yield os.path.join(libdir, name), "pkg-config"
    except (OSError, subprocess.CalledProcessError):
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    yield (os.path.join(here, "..", "..", "build", "clusterCore", ".libs",
                        "libclustercore.so"), "the source tree's build/")
    found = ctypes.util.find_library("clustercore")
    if found:
        yield found, "the system's library path"


def _load():
    tried = []
    for path, how in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as error:
            tried.append("%s (%s): %s" % (path, how, error))
            continue
        for name, (result, arguments) in PROTOTYPES.items():
            function = getattr(lib, name)
            function.restype = result
            function.argtypes = arguments
        lib.path = path
        return lib
    raise ImportError("clustercore: libclustercore not found; install the package "
                      "with it (pip install ./python), build it (./quickstart demo) or "
                      "install it (make install), or set CLUSTERCORE_LIBRARY to its path. "
                      "Tried: "
                      + ("; ".join(tried) or "nothing"))


_lib = None


def library():
    """The loaded library (loaded on first use: clustercore.batch and
    clustercore.plot do not need it)."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def call(function, *arguments):
    """Calls a function whose last argument is the message buffer, and
    raises with its sentence when it fails."""
    buffer = ctypes.create_string_buffer(MESSAGE_SIZE)
    check(function(*arguments, buffer), buffer)


def check(code, message=None):
    """Raises ClusterCoreError for a failed call; message is the call's
    sentence (a buffer, bytes or str) when it wrote one."""
    if code == 0:
        return
    if isinstance(message, ctypes.Array):
        message = message.value
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    raise ClusterCoreError(code, message)


def new_object(constructor, *arguments, message=True):
    """Calls cc_X_new(&object, arguments..., [message]) and returns the
    object's pointer, or raises with the library's sentence."""
    handle = c_void_p()
    if message:
        call(constructor, ctypes.byref(handle), *arguments)
    else:
        check(constructor(ctypes.byref(handle), *arguments))
    return handle


def code_of(table, what, value):
    """The C value of a name of table ({"cpu": 1, ...}), or ValueError."""
    if value not in table:
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(table), value))
    return table[value]


def name_of(table, code):
    """The name of a C value of table."""
    return next(name for name, value in table.items() if value == code)


def as_dict(struct):
    """A ctypes struct's fields as a dict."""
    return {name: getattr(struct, name) for name, _ in type(struct)._fields_}


class Owned:
    """A library object that this Python object owns: destroyed by
    close(), at the end of a with block, or when collected. Subclasses
    name their destructor."""
    destructor = None

    def __init__(self, handle):
        self._lib = library()
        self._handle = handle

    @property
    def handle(self):
        if not self._handle:
            raise ValueError("%s is closed" % type(self).__name__)
        return self._handle

    def close(self):
        if getattr(self, "_handle", None):
            getattr(self._lib, self.destructor)(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()
