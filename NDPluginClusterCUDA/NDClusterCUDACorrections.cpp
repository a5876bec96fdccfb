/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDACorrections.cpp: the real-detector corrections' PVs. The
 * common mode is a finder setting (CommonMode); this file reports its
 * figures and draws them as a map (address 6). The gain map is held here,
 * loaded from GainMapFile or calibrated from a flat field, and given to
 * the finder while GainMode is Calibrate or Apply; the map in force is
 * published on address 7. While calibrating, the output threads add each
 * batch's clusters to the per-pixel spectra; SaveGainMap fits them.
 */
#include <stdio.h>
#include <string.h>

#include <cmath>
#include <utility>

#include "NDPluginClusterCUDA.h"

/* The flat field's spectra as the calibration's PVs ask (port locked). */
cc_gain_calibration_config NDPluginClusterCUDA::wantedGainCalibration(int rows,
                                                                      int cols)
{
    cc_gain_calibration_config c;
    cc_gain_calibration_config_init(&c);
    c.rows = (uint32_t)rows;
    c.cols = (uint32_t)cols;
    int value;
    getDoubleParam(ClusterGainCalLow, &c.low);
    getDoubleParam(ClusterGainCalHigh, &c.high);
    getIntegerParam(ClusterGainCalBins, &value);
    c.bins = (uint32_t)value;
    getIntegerParam(ClusterGainCalEvents, &value);
    c.events = (cc_gain_events)value;
    getIntegerParam(ClusterGainCalMinPhotons, &value);
    c.min_photons = (uint32_t)value;
    return c;
}

/* What GainMode and the calibration's PVs ask of a batch (port locked). */
NDPluginClusterCUDA::Gain NDPluginClusterCUDA::wantedGain(int rows, int cols)
{
    Gain gain;
    getIntegerParam(ClusterGainMode, &gain.mode);
    gain.restart = gainCalibrationRestart_;
    gainCalibrationRestart_ = false;
    gain.calibration = wantedGainCalibration(rows, cols);
    gain.load = pendingGainLoad_;
    pendingGainLoad_ = false;
    int unit;
    getIntegerParam(ClusterGainUnit, &unit);
    gain.unit = (cc_gain_unit)unit;
    getStringParam(ClusterGainMapFile, sizeof gain.path, gain.path);
    return gain;
}

/* Takes a gain setting only when what it makes is possible: the
 * calibration's settings as the core checks them, a mode the plugin
 * knows, Apply only with a map to apply (port locked). */
asynStatus NDPluginClusterCUDA::checkGainWrite(asynUser *pasynUser,
                                               int function, double value)
{
    if (function == ClusterGainMode &&
        !(value == GAIN_OFF || value == GAIN_CALIBRATE || value == GAIN_APPLY))
        return refuseWrite(pasynUser, "GainMode %g is not Off (0), Calibrate "
                                      "(1) or Apply (2)", value);
    if (function == ClusterGainUnit &&
        cc_gain_unit_name((cc_gain_unit)(int)value) == NULL)
        return refuseWrite(pasynUser, "GainUnit %g is not relative (0) or "
                                      "ADU per keV (1)", value);
    if (function == ClusterGainLineEnergy &&
        !(value >= 0 && std::isfinite(value)))
        return refuseWrite(pasynUser, "GainLineEnergy %g must be 0 (a "
                                      "relative map) or the line's keV",
                           value);
    if (function == ClusterGainCalMinPhotons && value < 0)
        return refuseWrite(pasynUser, "GainCalMinPhotons %g must be 0 or more",
                           value);
    int mode;
    getIntegerParam(ClusterGainMode, &mode);
    /* The calibration's settings with this one, checked on a one-pixel
     * frame: the core says what is wrong. */
    cc_gain_calibration_config c = wantedGainCalibration(1, 1);
    const bool edge = function == ClusterGainCalLow ||
                      function == ClusterGainCalHigh;
    if (function == ClusterGainCalLow)
        c.low = value;
    else if (function == ClusterGainCalHigh)
        c.high = value;
    else if (function == ClusterGainCalBins)
        c.bins = (uint32_t)value;
    else if (function == ClusterGainCalEvents)
        c.events = (cc_gain_events)(int)value;
    const bool calibrating = function == ClusterGainMode
                                 ? value == GAIN_CALIBRATE
                                 : mode == GAIN_CALIBRATE;
    if (calibrating || edge || function == ClusterGainCalBins ||
        function == ClusterGainCalEvents) {
        char message[NDCC_MESSAGE_SIZE];
        cc_gain_calibration *trial = NULL;
        int rc = cc_gain_calibration_new(&trial, &c, message);
        cc_gain_calibration_destroy(trial);
        /* Low and High move one at a time: a range is refused only when
         * it is to be used. */
        if (rc != CC_OK && (calibrating || !edge))
            return refuseWrite(pasynUser, "gain calibration refused: %s%s",
                               message,
                               edge ? " (to move the range up, set "
                                      "GainCalHigh first)"
                                    : "");
    }
    if (function != ClusterGainMode)
        return asynSuccess;
    /* New spectra from the next batch, under the map held then: written
     * again after SaveGainMap, Calibrate iterates. */
    if (value == GAIN_CALIBRATE)
        gainCalibrationRestart_ = true;
    if (value != GAIN_APPLY)
        return asynSuccess;
    finderLock_.lock();
    bool held = !gainMap_.empty();
    finderLock_.unlock();
    if (held || pendingGainLoad_)
        return asynSuccess;
    char path[512];
    getStringParam(ClusterGainMapFile, sizeof path, path);
    if (path[0] == '\0')
        return refuseWrite(pasynUser, "Apply refused: no gain map held and "
                                      "GainMapFile is empty");
    /* As after an IOC restart: autosave gives GainMapFile, then Apply. */
    gainCommand(ClusterLoadGainMap);
    finderLock_.lock();
    held = !gainMap_.empty();
    finderLock_.unlock();
    if (!held && !pendingGainLoad_) {
        char status[NDCC_MESSAGE_SIZE];
        getStringParam(ClusterStatusMessage, sizeof status, status);
        return refuseWrite(pasynUser, "Apply refused: %s", status);
    }
    return asynSuccess;
}

/* Reads a gain map file into the map held (finder lock held, finder
 * made, rows x cols the finder's frame); the finder checks its values by
 * taking it, and keeps it until the next batch's applyGain says whether
 * GainMode wants it. An empty path lets the map go. A refused file
 * keeps the map held, and the finder its own. */
int NDPluginClusterCUDA::holdGainMap(const char *path, cc_gain_unit unit,
                                     int rows, int cols, char *message)
{
    if (path[0] == '\0') {
        gainMap_.clear();
        gainNumber_++;
        gainNote_ = "none";
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "GainMapFile empty: no gain map held");
        return CC_OK;
    }
    std::vector<double> map((size_t)rows * cols);
    char why[NDCC_MESSAGE_SIZE];
    int rc = cc_gain_map_read(path, (uint32_t)rows, (uint32_t)cols,
                              map.data(), why);
    if (rc == CC_OK) {
        rc = cc_finder_set_gain(finder_, map.data(), unit);
        if (rc != CC_OK)
            snprintf(why, sizeof why, "%s", cc_finder_last_error(finder_));
    }
    if (rc != CC_OK) {
        formatMessage(message, NDCC_MESSAGE_SIZE, "%s; the gain map held is kept",
                      why);
        return rc;
    }
    gainMap_.swap(map);
    gainUnit_ = unit;
    gainRows_ = rows;
    gainCols_ = cols;
    gainGiven_ = ++gainNumber_;
    gainNote_ = std::string(path) + " (" + cc_gain_unit_name(unit) + ")";
    formatMessage(message, NDCC_MESSAGE_SIZE, "gain map loaded from %s (%s)",
                  path, cc_gain_unit_name(unit));
    return CC_OK;
}

/* Gives the finder the map GainMode wants, and starts the flat field's
 * spectra when calibration starts, its settings change or a map is
 * loaded (finder thread, finder lock held, finder made). Spectra that go
 * on keep the map they were started under: a map saved meanwhile waits
 * for Calibrate to be written again, so that no spectrum mixes two maps. */
void NDPluginClusterCUDA::applyGain(const Gain &wanted, bool newFrameSize,
                                    char *message)
{
    char step[NDCC_MESSAGE_SIZE];
    bool loaded = false; /* the finder took the loaded map to check it */
    if (wanted.load) {
        loaded = holdGainMap(wanted.path, wanted.unit, rows_, cols_, step) ==
                 CC_OK;
        appendMessage(message, step);
    }
    if (newFrameSize) /* the finder let its map go */
        gainGiven_ = (unsigned)-1;
    const cc_gain_calibration_config &a = wanted.calibration,
                                     &b = gainCalibrationConfig_;
    const bool calibrating = wanted.mode == GAIN_CALIBRATE;
    const bool spectraGoOn =
        calibrating && gainSpectraStarted_ && !wanted.restart && !loaded &&
        !newFrameSize && a.rows == b.rows && a.cols == b.cols &&
        a.bins == b.bins && a.low == b.low && a.high == b.high &&
        a.events == b.events && a.fraction == b.fraction &&
        a.min_photons == b.min_photons;
    unsigned desired =
        wanted.mode != GAIN_OFF && !gainMap_.empty() ? gainNumber_ : 0;
    if (spectraGoOn)
        desired = gainGiven_;
    if (desired != gainGiven_) {
        /* Given once, taken or not: a refused map is not offered again at
         * every batch. Whether the finder has one, it says itself. */
        bool fits = gainRows_ == rows_ && gainCols_ == cols_;
        int rc = cc_finder_set_gain(
            finder_, desired != 0 && fits ? gainMap_.data() : NULL, gainUnit_);
        if (desired != 0 && !fits) {
            formatMessage(step, sizeof step,
                          "the gain map held is %d x %d, the frames %d x %d: "
                          "no gain applied",
                          gainCols_, gainRows_, cols_, rows_);
            appendMessage(message, step);
        } else if (rc != CC_OK) {
            formatMessage(step, sizeof step, "%s: no gain applied",
                          cc_finder_last_error(finder_));
            appendMessage(message, step);
        }
        gainGiven_ = desired;
    }
    if (!calibrating) /* what the finder entered stays, for a save */
        takeGainSpectra(true, message);
    if (!calibrating || spectraGoOn)
        return;
    cc_gain_calibration *made = NULL;
    if (cc_gain_calibration_new(&made, &a, step) != CC_OK) {
        appendMessage(message, step);
        return;
    }
    /* The finder's spectra of the settings before are dropped with the
     * host's they would be added to. */
    if (cc_finder_set_gain_calibration(finder_, made) != CC_OK) {
        formatMessage(step, sizeof step, "gain calibration not started: %s",
                      cc_finder_last_error(finder_));
        appendMessage(message, step);
        cc_gain_calibration_destroy(made);
        takeGainSpectra(true, NULL);
        return;
    }
    gainCalibrationLock_.lock();
    std::swap(gainCalibration_, made);
    gainCalibrationConfig_ = a;
    gainCalibrationLock_.unlock();
    cc_gain_calibration_destroy(made);
    gainSpectraStarted_ = true;
    formatMessage(step, sizeof step,
                  "gain calibration started: %s events on [%g, %g) in %u "
                  "bins a pixel",
                  a.events == CC_GAIN_EVENTS_SUM ? "sum" : "single", a.low,
                  a.high, a.bins);
    appendMessage(message, step);
}

/* Adds the spectra the finder entered since the last take to the flat
 * field's, unless a save is fitting them (then the finder keeps its own
 * until the next take); stop: the finder keeps none from now on (finder
 * lock held; takes the calibration's). A failure goes into message when
 * there is one. */
void NDPluginClusterCUDA::takeGainSpectra(bool stop, char *message)
{
    if (finder_ == NULL || !gainSpectraStarted_)
        return;
    int rc = CC_OK;
    gainCalibrationLock_.lock();
    if (gainCalibration_ != NULL)
        rc = cc_finder_take_gain_calibration(finder_, gainCalibration_);
    gainCalibrationLock_.unlock();
    if (rc != CC_OK && message != NULL) {
        char step[NDCC_MESSAGE_SIZE];
        formatMessage(step, sizeof step, "gain calibration: %s",
                      cc_finder_last_error(finder_));
        appendMessage(message, step);
    }
    if (stop) {
        cc_finder_set_gain_calibration(finder_, NULL);
        gainSpectraStarted_ = false;
    }
}

/* The quality map's file beside the gain map's: x.npy -> x_flagged.npy. */
static std::string flaggedPath(const std::string &gainPath)
{
    size_t stem = gainPath.size() - 4; /* ".npy", checked by the caller */
    return gainPath.substr(0, stem) + "_flagged.npy";
}

/* Fits the flat field's spectra, writes the map to GainMapFile and the
 * pixels it flagged beside it, and holds the map (port locked; takes the
 * finder lock and the calibration's). The spectra are taken out while
 * they are fitted, so that the finder thread never waits for the fit;
 * the finder keeps entering the batches meanwhile, for the next take. */
int NDPluginClusterCUDA::saveGainMap(char *message)
{
    char path[512];
    getStringParam(ClusterGainMapFile, sizeof path, path);
    double lineEnergy;
    getDoubleParam(ClusterGainLineEnergy, &lineEnergy);
    int maskFlagged;
    getIntegerParam(ClusterGainMaskFlagged, &maskFlagged);
    gainCalibrationLock_.lock();
    bool spectra = gainCalibration_ != NULL;
    gainCalibrationLock_.unlock();
    if (!spectra) {
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "no flat field to fit: set GainMode to Calibrate and "
                      "take one first");
        return CC_ESTATE;
    }
    size_t length = strlen(path);
    if (length < 5 || strcmp(path + length - 4, ".npy") != 0) {
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "SaveGainMap writes NumPy: GainMapFile '%s' must end "
                      "in .npy", path);
        return CC_EINVAL;
    }
    finderLock_.lock();
    takeGainSpectra(false, NULL);
    finderLock_.unlock();
    gainCalibrationLock_.lock();
    cc_gain_calibration *taken = gainCalibration_;
    gainCalibration_ = NULL;
    cc_gain_calibration_config config = gainCalibrationConfig_;
    gainCalibrationLock_.unlock();
    if (taken == NULL) { /* another save has it */
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "the flat field is being fitted already");
        return CC_ESTATE;
    }
    const size_t pixels = (size_t)config.rows * config.cols;
    /* The clusters were found under the map the finder has: the new map
     * multiplies it. */
    std::vector<double> prior(pixels), gain(pixels);
    cc_gain_unit priorUnit = CC_GAIN_RELATIVE;
    finderLock_.lock();
    bool havePrior = finder_ != NULL && rows_ == (int)config.rows &&
                     cols_ == (int)config.cols &&
                     cc_finder_get_gain(finder_, prior.data(), &priorUnit) ==
                         CC_OK;
    finderLock_.unlock();
    std::vector<uint8_t> quality(pixels);
    cc_gain_unit unit = lineEnergy > 0 ? CC_GAIN_ADU_PER_KEV : CC_GAIN_RELATIVE;
    cc_gain_calibration_result result;
    char why[NDCC_MESSAGE_SIZE];
    int rc = cc_gain_calibration_solve(
        taken, havePrior ? prior.data() : NULL, priorUnit, unit, lineEnergy,
        gain.data(), quality.data(), &result, why);
    gainCalibrationLock_.lock();
    if (gainCalibration_ == NULL) /* not replaced meanwhile: goes on */
        std::swap(gainCalibration_, taken);
    gainCalibrationLock_.unlock();
    cc_gain_calibration_destroy(taken);
    if (rc != CC_OK) {
        formatMessage(message, NDCC_MESSAGE_SIZE, "gain map not saved: %s", why);
        return rc;
    }
    for (size_t p = 0; p < pixels; p++)
        quality[p] = quality[p] != CC_GAIN_GOOD;
    std::string flagged = flaggedPath(path);
    rc = cc_gain_map_write_npy(path, config.rows, config.cols, gain.data(),
                               why);
    if (rc == CC_OK)
        rc = cc_mask_write_npy(flagged.c_str(), config.rows, config.cols,
                               quality.data(), why);
    if (rc != CC_OK) {
        formatMessage(message, NDCC_MESSAGE_SIZE, "gain map not saved: %s", why);
        return rc;
    }
    setIntegerParam(ClusterGainCalGood, (int)result.pixels_good);
    setIntegerParam(ClusterGainCalFew, (int)result.pixels_few);
    setIntegerParam(ClusterGainCalFailed, (int)result.pixels_failed);
    setDoubleParam(ClusterGainCalSpread, 100 * result.spread);
    setIntegerParam(ClusterGainUnit, unit);
    finderLock_.lock();
    gainMap_.swap(gain);
    gainUnit_ = unit;
    gainRows_ = (int)config.rows;
    gainCols_ = (int)config.cols;
    gainNumber_++;
    gainNote_ = std::string(path) + " (" + cc_gain_unit_name(unit) +
                ", fitted from " + std::to_string(result.photons) +
                " photons)";
    char masked[NDCC_MESSAGE_SIZE] = "";
    if (maskFlagged && finder_ != NULL && rows_ == (int)config.rows &&
        cols_ == (int)config.cols) {
        std::vector<uint8_t> mask(pixels);
        if (cc_finder_get_mask(finder_, mask.data()) == CC_OK) {
            for (size_t p = 0; p < pixels; p++)
                mask[p] = mask[p] || quality[p];
            if (cc_finder_set_mask(finder_, mask.data()) == CC_OK)
                formatMessage(masked, sizeof masked,
                              "; the flagged pixels are masked");
            else
                formatMessage(masked, sizeof masked, "; %s",
                              cc_finder_last_error(finder_));
        }
    }
    finderLock_.unlock();
    formatMessage(message, NDCC_MESSAGE_SIZE,
                  "gain map saved to %s: %llu pixels good, %llu with too few "
                  "photons, %llu fits failed (flagged in %s), spread %.2f %%%s",
                  path, (unsigned long long)result.pixels_good,
                  (unsigned long long)result.pixels_few,
                  (unsigned long long)result.pixels_failed, flagged.c_str(),
                  100 * result.spread, masked);
    return CC_OK;
}

/* LoadGainMap or SaveGainMap (port locked; takes the finder lock). */
void NDPluginClusterCUDA::gainCommand(int function)
{
    char message[NDCC_MESSAGE_SIZE];
    if (function == ClusterSaveGainMap) {
        saveGainMap(message);
        setStatus("%s", message);
        return;
    }
    char path[512];
    getStringParam(ClusterGainMapFile, sizeof path, path);
    int unit;
    getIntegerParam(ClusterGainUnit, &unit);
    finderLock_.lock();
    if (finder_ == NULL) {
        pendingGainLoad_ = true;
        setStatus("gain map from %s will be loaded at the first frame", path);
    } else {
        holdGainMap(path, (cc_gain_unit)unit, rows_, cols_, message);
        setStatus("%s", message);
    }
    finderLock_.unlock();
}

/* The corrections' figures and maps at a publication (port locked,
 * finder lock held): each region's common mode, its map, the gain map in
 * force and the calibration's counts. An array the pool cannot give, or
 * one with nothing to show, is left NULL. */
void NDPluginClusterCUDA::publishCorrections(NDArray **commonMode,
                                             NDArray **gain)
{
    *commonMode = *gain = NULL;
    const size_t pixels = (size_t)rows_ * cols_;
    size_t dims[2] = {(size_t)cols_, (size_t)rows_};
    cc_config config;
    uint32_t n = 0;
    if (finder_ != NULL && cc_finder_get_config(finder_, &config) == CC_OK)
        n = cc_common_mode_regions(&config);
    commonModeFigures_.resize(n);
    commonModeLast_.resize(n);
    setIntegerParam(ClusterCommonModeRegions, (int)n);
    if (n > 0 && cc_finder_common_mode(finder_, commonModeFigures_.data(), n) ==
                     CC_OK) {
        double lastSquares = 0, squares = 0, frames = 0, unestimated = 0;
        for (uint32_t r = 0; r < n; r++) {
            const cc_common_mode_region &region = commonModeFigures_[r];
            commonModeLast_[r] = region.last;
            lastSquares += region.last * region.last;
            double estimated = (double)region.frames_estimated;
            /* About each region's mean: the mean is the offset of the
             * frames the pedestal was trained on, not a frame's own. */
            squares += estimated * region.rms * region.rms;
            frames += estimated;
            unestimated += (double)region.frames_unestimated;
        }
        setDoubleParam(ClusterCommonModeNow, std::sqrt(lastSquares / n));
        setDoubleParam(ClusterCommonModeRms,
                       frames > 0 ? std::sqrt(squares / frames) : 0);
        setDoubleParam(ClusterCommonModeUnestimated, unestimated);
        doCallbacksFloat64Array(commonModeLast_.data(), n,
                                ClusterCommonModeLast, 0);
        if (commonModeRegion_.size() != pixels ||
            commonModeConfig_.common_mode != config.common_mode ||
            commonModeConfig_.rows != config.rows ||
            commonModeConfig_.cols != config.cols) {
            commonModeRegion_.resize(pixels);
            if (cc_common_mode_region_map(&config, commonModeRegion_.data()) !=
                CC_OK)
                commonModeRegion_.clear();
            commonModeConfig_ = config;
        }
        *commonMode = commonModeRegion_.size() == pixels
                          ? mapArray(dims[0], dims[1], NDFloat32,
                                     "common-mode rms of the pixel's region "
                                     "(ADU)")
                          : NULL;
        if (*commonMode != NULL) {
            float *to = (float *)(*commonMode)->pData;
            for (size_t p = 0; p < pixels; p++)
                to[p] = (float)commonModeFigures_[commonModeRegion_[p]].rms;
        }
    } else {
        setDoubleParam(ClusterCommonModeNow, 0);
        setDoubleParam(ClusterCommonModeRms, 0);
        setDoubleParam(ClusterCommonModeUnestimated, 0);
    }

    /* What the finder applies, as it says: a map it refused, or one that
     * does not fit the frames, is not shown as applied. */
    gainShown_.resize(pixels);
    cc_gain_unit shownUnit = CC_GAIN_RELATIVE;
    bool applied = finder_ != NULL &&
                   cc_finder_get_gain(finder_, gainShown_.data(), &shownUnit) ==
                       CC_OK;
    bool current = applied && gainGiven_ == gainNumber_;
    std::string inUse = gainNote_;
    if (!gainMap_.empty())
        inUse += current   ? ": applied"
                 : applied ? ": held; the calibration goes on under the map "
                             "before it (write Calibrate again to use it)"
                           : ": held, not applied";
    setStringParam(ClusterGainMapInUse, inUse.c_str());
    if (applied)
        *gain = mapArray(dims[0], dims[1], NDFloat32,
                         shownUnit == CC_GAIN_ADU_PER_KEV
                             ? "gain map (ADU per keV)"
                             : "gain map (relative)");
    if (*gain != NULL) {
        float *to = (float *)(*gain)->pData;
        for (size_t p = 0; p < pixels; p++)
            to[p] = (float)gainShown_[p];
    }
    uint64_t photons, outside;
    takeGainSpectra(false, NULL);
    gainCalibrationLock_.lock();
    cc_gain_calibration_entered(gainCalibration_, &photons, &outside);
    gainCalibrationLock_.unlock();
    setDoubleParam(ClusterGainCalPhotons, (double)photons);
    setDoubleParam(ClusterGainCalOutside, (double)outside);
}
