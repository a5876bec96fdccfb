# SPDX-License-Identifier: BSD-3-Clause
"""clustercore: Python on libclustercore, the photon cluster finder of
NDPluginClusterCUDA for PSI's MÖNCH detector (docs/python.md).

    import clustercore
    finder = clustercore.Finder(400, 400, cluster_size=3, nsigma=5)
    finder.train(dark)                 # (n, 400, 400) uint16
    clusters = finder.process(frames)  # the C library's list
    table = clusters.array()           # frame, x, y, data[Ny][Nx]

The library is found through CLUSTERCORE_LIBRARY, the one pip install
built into the package, pkg-config or the system's library path.
clustercore.batch and clustercore.plot work on clusterfind's files
without it.
"""
__version__ = "0.1.0"

_API = {"finder": ["Finder", "Clusters", "cluster_dtype", "COMMON_MODES",
                   "COMMON_MODE_DTYPE", "GAIN_UNITS", "read_gain_map",
                   "write_gain_map"],
        "analysis": ["EnergyWindow", "Spectrum", "Peak", "fit_peak", "HitMap", "eta",
                     "eta_range", "EtaCalibration", "Interpolator", "GainCalibration",
                     "agreement"],
        "files": ["RawRun", "RawRunWarning", "RawWriter", "ClustReader", "ClustWriter",
                  "read_clust", "RAW_LAYOUTS", "RAW_CHIPS"],
        "simulator": ["Simulator"],
        "_library": ["ClusterCoreError"]}
__all__ = [name for names in _API.values() for name in names] + ["library_version",
                                                                    "library_path"]


def __getattr__(name):
    """The API, imported on first use, so that the modules that need no
    library (batch, plot, outputs) import without one."""
    import importlib
    for module, names in _API.items():
        if name in names:
            return getattr(importlib.import_module("." + module, __name__), name)
    raise AttributeError("module 'clustercore' has no attribute %r" % name)


def library_version():
    """The loaded libclustercore's version."""
    from ._library import library
    return library().cc_version().decode()


def library_path():
    """The path of the loaded libclustercore."""
    from ._library import library
    return library().path
