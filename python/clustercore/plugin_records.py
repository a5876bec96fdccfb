# SPDX-License-Identifier: BSD-3-Clause
"""The plugin's records (db/NDClusterCUDA.template) as the Bluesky and BEC
devices see them: one table, from which clustercore.ophyd_plugin and
clustercore.ophyd_async_plugin build their components, so that the two
cannot disagree. python/tests/test_plugin_records.py checks it against the
template: every record is here, with its access, type and states.

Each record is (attribute, PV suffix, value, kind):
- the value is float, int, str (a string or a long string in a char
  waveform), ARRAY (a waveform of doubles) or the tuple of an enum's states;
- the kind is Bluesky's: "hinted" and "normal" are read at every event,
  "config" once a run, "omitted" never (commands).
"""
from collections import namedtuple

ARRAY = "array"
Record = namedtuple("Record", "attribute suffix value kind")

_DONE = "Done"
OFF_ON = ("Off", "On")
NO_YES = ("No", "Yes")

# Written as SUFFIX and read back as SUFFIX_RBV.
SETTINGS = (
    Record("n_sigma", "NSigma", float, "config"),
    Record("cluster_size_x", "ClusterSizeX", int, "config"),
    Record("cluster_size_y", "ClusterSizeY", int, "config"),
    Record("max_clusters", "MaxClusters", int, "config"),
    Record("num_streams", "NumStreams", int, "config"),
    Record("max_batch", "MaxBatch", int, "config"),
    Record("pedestal_frames", "PedestalFrames", int, "config"),
    Record("frame_mode", "FrameMode", ("Frame", "Pedestal", "NewPedestal"), "config"),
    Record("detector_mode", "DetectorMode", ("Count", "Analog", "Interpolate"), "config"),
    Record("adc_mask", "AdcMask", int, "config"),
    Record("precision", "Precision", ("Float", "Double"), "config"),
    Record("pedestal_file", "PedestalFile", str, "config"),
    Record("mask_file", "MaskFile", str, "config"),
    Record("load_files_at_start", "LoadFilesAtStart", NO_YES, "config"),
    Record("auto_mask_factor", "AutoMaskFactor", float, "config"),
    Record("spectrum_energy", "SpectrumEnergy", ("Sum", "Sum2x2"), "config"),
    Record("spectrum_bins", "SpectrumBins", int, "config"),
    Record("spectrum_min", "SpectrumMin", float, "config"),
    Record("spectrum_max", "SpectrumMax", float, "config"),
    Record("spectrum_period", "SpectrumPeriod", float, "config"),
    Record("window_enable", "WindowEnable", OFF_ON, "config"),
    Record("window_low", "WindowLow", float, "config"),
    Record("window_high", "WindowHigh", float, "config"),
    Record("peak_low", "PeakLow", float, "config"),
    Record("peak_high", "PeakHigh", float, "config"),
    Record("adu_per_kev", "AduPerKeV", float, "config"),
    Record("window_low_kev", "WindowLowKeV", float, "config"),
    Record("window_high_kev", "WindowHighKeV", float, "config"),
    Record("eta_mode", "EtaMode", ("Off", "Calibrate", "Interpolate"), "config"),
    Record("eta_function", "EtaFunction", ("eta2", "eta2full", "eta3"), "config"),
    Record("eta_bins", "EtaBins", int, "config"),
    Record("eta_file", "EtaFile", str, "config"),
    Record("subpixels", "Subpixels", int, "config"),
    Record("common_mode", "CommonMode", ("None", "Supercolumn", "Row", "Half"), "config"),
    Record("gain_map_file", "GainMapFile", str, "config"),
    Record("gain_unit", "GainUnit", ("Relative", "ADU/keV"), "config"),
    Record("gain_mode", "GainMode", ("Off", "Calibrate", "Apply"), "config"),
    Record("gain_cal_low", "GainCalLow", float, "config"),
    Record("gain_cal_high", "GainCalHigh", float, "config"),
    Record("gain_cal_bins", "GainCalBins", int, "config"),
    Record("gain_cal_events", "GainCalEvents", ("Single", "Sum"), "config"),
    Record("gain_cal_min_photons", "GainCalMinPhotons", int, "config"),
    Record("gain_line_energy", "GainLineEnergy", float, "config"),
    Record("gain_mask_flagged", "GainMaskFlagged", NO_YES, "config"),
)

# Written only: the backend asked for (Backend_RBV says, in words, which
# one runs).
WRITTEN = (
    Record("backend", "Backend", ("Auto", "CUDA", "CPU"), "config"),
)

# Commands: written 1 to act, reading back 0.
COMMANDS = (
    Record("reset_pedestal", "ResetPedestal", (_DONE, "Reset"), "omitted"),
    Record("save_pedestal", "SavePedestal", (_DONE, "Save"), "omitted"),
    Record("load_pedestal", "LoadPedestal", (_DONE, "Load"), "omitted"),
    Record("load_mask", "LoadMask", (_DONE, "Load"), "omitted"),
    Record("spectrum_reset", "SpectrumReset", (_DONE, "Reset"), "omitted"),
    Record("hit_map_reset", "HitMapReset", (_DONE, "Reset"), "omitted"),
    Record("publish", "Publish", (_DONE, "Publish"), "omitted"),
    Record("save_eta", "SaveEta", (_DONE, "Save"), "omitted"),
    Record("load_eta", "LoadEta", (_DONE, "Load"), "omitted"),
    Record("image_reset", "ImageReset", (_DONE, "Reset"), "omitted"),
    Record("load_gain_map", "LoadGainMap", (_DONE, "Load"), "omitted"),
    Record("save_gain_map", "SaveGainMap", (_DONE, "Save"), "omitted"),
)

# Read only. What a run's events carry: the finder's counts, the fitted
# line and the spectrum; the rest describes the state it ran in.
READINGS = (
    Record("backend_in_use", "Backend_RBV", str, "config"),
    Record("last_batch", "LastBatch_RBV", int, "normal"),
    Record("masked_pixels", "MaskedPixels_RBV", int, "config"),
    Record("pedestal_state", "PedestalState_RBV", ("Training", "Ready"), "config"),
    Record("pedestal_count", "PedestalCount_RBV", int, "config"),
    Record("noise_mean", "NoiseMean_RBV", float, "config"),
    Record("finder_time", "FinderTime_RBV", float, "normal"),
    Record("num_clusters", "NumClusters_RBV", int, "normal"),
    Record("total_clusters", "TotalClusters_RBV", float, "hinted"),
    Record("dropped_clusters", "DroppedClusters_RBV", float, "normal"),
    Record("bad_arrays", "BadArrays_RBV", int, "normal"),
    Record("status_message", "StatusMessage_RBV", str, "normal"),
    Record("publications", "Publications_RBV", int, "normal"),
    Record("spectrum", "Spectrum_RBV", ARRAY, "normal"),
    Record("spectrum_x", "SpectrumX_RBV", ARRAY, "config"),
    Record("outside_window", "OutsideWindow_RBV", float, "normal"),
    Record("peak_fitted", "PeakFitted_RBV", ("No line", "Fitted"), "normal"),
    Record("peak_position", "PeakPosition_RBV", float, "hinted"),
    Record("peak_sigma", "PeakSigma_RBV", float, "hinted"),
    Record("peak_fwhm", "PeakFWHM_RBV", float, "normal"),
    Record("peak_resolution", "PeakResolution_RBV", float, "normal"),
    Record("peak_counts", "PeakCounts_RBV", float, "normal"),
    Record("peak_chi2", "PeakChi2_RBV", float, "normal"),
    Record("spectrum_axis", "SpectrumAxis_RBV", ARRAY, "config"),
    Record("spectrum_axis_unit", "SpectrumAxisUnit_RBV", str, "config"),
    Record("peak_position_kev", "PeakPositionKeV_RBV", float, "normal"),
    Record("peak_fwhm_kev", "PeakFWHMKeV_RBV", float, "normal"),
    Record("eta_calibration", "EtaCalibration_RBV", str, "config"),
    Record("calibration_photons", "CalibrationPhotons_RBV", float, "normal"),
    Record("imaged_photons", "ImagedPhotons_RBV", float, "normal"),
    Record("analog_frames", "AnalogFrames_RBV", float, "normal"),
    Record("image_uninterpolable", "ImageUninterpolable_RBV", float, "normal"),
    Record("image_clipped", "ImageClipped_RBV", float, "normal"),
    Record("image_outside", "ImageOutside_RBV", float, "normal"),
    Record("image_flatness", "ImageFlatness_RBV", float, "normal"),
    Record("common_mode_regions", "CommonModeRegions_RBV", int, "config"),
    Record("common_mode_now", "CommonModeNow_RBV", float, "normal"),
    Record("common_mode_rms", "CommonModeRms_RBV", float, "normal"),
    Record("common_mode_unestimated", "CommonModeUnestimated_RBV", float, "normal"),
    Record("common_mode_last", "CommonModeLast_RBV", ARRAY, "normal"),
    Record("gain_map_in_use", "GainMapInUse_RBV", str, "config"),
    Record("gain_cal_photons", "GainCalPhotons_RBV", float, "normal"),
    Record("gain_cal_outside", "GainCalOutside_RBV", float, "normal"),
    Record("gain_cal_good", "GainCalGood_RBV", int, "normal"),
    Record("gain_cal_few", "GainCalFew_RBV", int, "normal"),
    Record("gain_cal_failed", "GainCalFailed_RBV", int, "normal"),
    Record("gain_cal_spread", "GainCalSpread_RBV", float, "normal"),
)

PLUGIN_TYPE = "NDPluginClusterCUDA"  # its PluginType_RBV
