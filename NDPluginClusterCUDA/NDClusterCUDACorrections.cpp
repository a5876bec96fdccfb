/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDACorrections.cpp: the corrections' parameters and checks,
 * the gain map given to the finder batch by batch, the flat field's
 * spectra, and the figures and maps published (NDClusterCUDACorrections.h;
 * the gain map's files in NDClusterCUDAGainMap.cpp).
 */
#include <stdio.h>
#include <string.h>

#include <cmath>
#include <utility>

#include "NDPluginClusterCUDA.h"

NDClusterCUDACorrections::NDClusterCUDACorrections(NDPluginClusterCUDA &plugin)
    : NDClusterCUDAPart(plugin), gainUnit_(CC_GAIN_RELATIVE), gainRows_(0),
      gainCols_(0), gainNumber_(0), gainGiven_(0), gainSpectraStarted_(false),
      calibrationRestart_(false), pendingGainLoad_(false), gainNote_("none"),
      commonModeConfig_(), calibration_(NULL), calibrationConfig_()
{
    auto gainInt = [this](asynUser *pasynUser, epicsInt32 &value) {
        return checkGainWrite(pasynUser, pasynUser->reason, value);
    };
    auto gainFloat = [this](asynUser *pasynUser, epicsFloat64 &value) {
        return checkGainWrite(pasynUser, pasynUser->reason, value);
    };
    auto command = [this](asynUser *pasynUser, epicsInt32 &value) {
        if (value != 0)
            gainCommand(pasynUser->reason);
        value = 0; /* a command, not a state */
        return asynSuccess;
    };
    /* A finder setting, checked as the others are. */
    int32Param(ClusterCommonModeString, &CommonMode, CC_COMMON_MODE_NONE,
               [this](asynUser *pasynUser, epicsInt32 &value) {
                   return plugin_.finder.checkSetting(pasynUser,
                                                      pasynUser->reason, value);
               });
    int32Param(ClusterCommonModeRegionsString, &CommonModeRegions, 0);
    float64Param(ClusterCommonModeNowString, &CommonModeNow, 0);
    float64Param(ClusterCommonModeRmsString, &CommonModeRms, 0);
    float64Param(ClusterCommonModeUnestimatedString, &CommonModeUnestimated, 0);
    arrayParam(ClusterCommonModeLastString, &CommonModeLast);
    cc_gain_calibration_config defaults;
    cc_gain_calibration_config_init(&defaults);
    int32Param(ClusterGainModeString, &GainMode, GAIN_OFF, gainInt);
    octetParam(ClusterGainMapFileString, &GainMapFile, "");
    int32Param(ClusterGainUnitString, &GainUnit, CC_GAIN_RELATIVE, gainInt);
    int32Param(ClusterLoadGainMapString, &LoadGainMap, 0, command);
    int32Param(ClusterSaveGainMapString, &SaveGainMap, 0, command);
    octetParam(ClusterGainMapInUseString, &GainMapInUse, "none");
    /* Around Cu Ka, 805 ADU at the simulator's gain. */
    float64Param(ClusterGainCalLowString, &GainCalLow, 600, gainFloat);
    float64Param(ClusterGainCalHighString, &GainCalHigh, 1000, gainFloat);
    int32Param(ClusterGainCalBinsString, &GainCalBins, (int)defaults.bins,
               gainInt);
    int32Param(ClusterGainCalEventsString, &GainCalEvents, defaults.events,
               gainInt);
    int32Param(ClusterGainCalMinPhotonsString, &GainCalMinPhotons,
               (int)defaults.min_photons, gainInt);
    float64Param(ClusterGainLineEnergyString, &GainLineEnergy, 0, gainFloat);
    int32Param(ClusterGainMaskFlaggedString, &GainMaskFlagged, 0,
               [](asynUser *, epicsInt32 &value) {
                   value = value != 0;
                   return asynSuccess;
               });
    float64Param(ClusterGainCalPhotonsString, &GainCalPhotons, 0);
    float64Param(ClusterGainCalOutsideString, &GainCalOutside, 0);
    int32Param(ClusterGainCalGoodString, &GainCalGood, 0);
    int32Param(ClusterGainCalFewString, &GainCalFew, 0);
    int32Param(ClusterGainCalFailedString, &GainCalFailed, 0);
    float64Param(ClusterGainCalSpreadString, &GainCalSpread, 0);
}

NDClusterCUDACorrections::~NDClusterCUDACorrections()
{
    cc_gain_calibration_destroy(calibration_);
}

NDClusterCUDACorrections::Wanted NDClusterCUDACorrections::wanted(int rows,
                                                                  int cols)
{
    Wanted wanted;
    wanted.mode = getInt(GainMode);
    wanted.restart = calibrationRestart_;
    calibrationRestart_ = false;
    wanted.calibration = wantedCalibration(rows, cols);
    wanted.load = pendingGainLoad_;
    pendingGainLoad_ = false;
    wanted.unit = (cc_gain_unit)getInt(GainUnit);
    getString(GainMapFile, wanted.path, sizeof wanted.path);
    return wanted;
}

/* The flat field's spectra as the calibration's PVs ask (port locked). */
cc_gain_calibration_config NDClusterCUDACorrections::wantedCalibration(int rows,
                                                                       int cols)
{
    cc_gain_calibration_config c;
    cc_gain_calibration_config_init(&c);
    c.rows = (uint32_t)rows;
    c.cols = (uint32_t)cols;
    c.low = getDouble(GainCalLow);
    c.high = getDouble(GainCalHigh);
    c.bins = (uint32_t)getInt(GainCalBins);
    c.events = (cc_gain_events)getInt(GainCalEvents);
    c.min_photons = (uint32_t)getInt(GainCalMinPhotons);
    return c;
}

/* Takes a gain setting only when what it makes is possible: the
 * calibration's settings as the core checks them, a mode the plugin
 * knows, Apply only with a map to apply (port locked). */
asynStatus NDClusterCUDACorrections::checkGainWrite(asynUser *pasynUser,
                                                    int function, double value)
{
    if (function == GainMode &&
        !(value == GAIN_OFF || value == GAIN_CALIBRATE || value == GAIN_APPLY))
        return refuse(pasynUser,
                      "GainMode %g is not Off (0), Calibrate "
                      "(1) or Apply (2)",
                      value);
    if (function == GainUnit &&
        cc_gain_unit_name((cc_gain_unit)(int)value) == NULL)
        return refuse(pasynUser,
                      "GainUnit %g is not relative (0) or "
                      "ADU per keV (1)",
                      value);
    if (function == GainLineEnergy && !(value >= 0 && std::isfinite(value)))
        return refuse(pasynUser,
                      "GainLineEnergy %g must be 0 (a "
                      "relative map) or the line's keV",
                      value);
    if (function == GainCalMinPhotons && value < 0)
        return refuse(pasynUser, "GainCalMinPhotons %g must be 0 or more",
                      value);
    int mode = getInt(GainMode);
    /* The calibration's settings with this one, checked on a one-pixel
     * frame: the core says what is wrong. */
    cc_gain_calibration_config c = wantedCalibration(1, 1);
    const bool edge = function == GainCalLow || function == GainCalHigh;
    if (function == GainCalLow)
        c.low = value;
    else if (function == GainCalHigh)
        c.high = value;
    else if (function == GainCalBins)
        c.bins = (uint32_t)value;
    else if (function == GainCalEvents)
        c.events = (cc_gain_events)(int)value;
    const bool calibrating = function == GainMode ? value == GAIN_CALIBRATE
                                                  : mode == GAIN_CALIBRATE;
    if (calibrating || edge || function == GainCalBins ||
        function == GainCalEvents) {
        char message[NDCC_MESSAGE_SIZE];
        cc_gain_calibration *trial = NULL;
        int rc = cc_gain_calibration_new(&trial, &c, message);
        cc_gain_calibration_destroy(trial);
        /* Low and High move one at a time: a range is refused only when
         * it is to be used. */
        if (rc != CC_OK && (calibrating || !edge))
            return refuse(pasynUser, "gain calibration refused: %s%s", message,
                          edge ? " (to move the range up, set "
                                 "GainCalHigh first)"
                               : "");
    }
    if (function != GainMode)
        return asynSuccess;
    /* New spectra from the next batch, under the map held then: written
     * again after SaveGainMap, Calibrate iterates. */
    if (value == GAIN_CALIBRATE)
        calibrationRestart_ = true;
    if (value != GAIN_APPLY)
        return asynSuccess;
    plugin_.finder.lock.lock();
    bool held = !gainMap_.empty();
    plugin_.finder.lock.unlock();
    if (held || pendingGainLoad_)
        return asynSuccess;
    char path[512];
    getString(GainMapFile, path, sizeof path);
    if (path[0] == '\0')
        return refuse(pasynUser, "Apply refused: no gain map held and "
                                 "GainMapFile is empty");
    /* As after an IOC restart: autosave gives GainMapFile, then Apply. */
    char message[NDCC_MESSAGE_SIZE];
    loadGainMap(message);
    status("%s", message);
    plugin_.finder.lock.lock();
    held = !gainMap_.empty();
    plugin_.finder.lock.unlock();
    if (!held && !pendingGainLoad_)
        return refuse(pasynUser, "Apply refused: %s", message);
    return asynSuccess;
}

/* Spectra that go on keep the map they were started under: a map saved
 * meanwhile waits for Calibrate to be written again, so that no spectrum
 * mixes two maps. */
void NDClusterCUDACorrections::apply(const Wanted &wanted, bool newFrameSize,
                                     char *message)
{
    char step[NDCC_MESSAGE_SIZE];
    bool loaded = false; /* the finder took the loaded map to check it */
    if (wanted.load) {
        loaded = holdGainMap(wanted.path, wanted.unit, plugin_.finder.rows,
                             plugin_.finder.cols, step) == CC_OK;
        appendMessage(message, step);
    }
    if (newFrameSize) /* the finder let its map go */
        gainGiven_ = (unsigned)-1;
    const cc_gain_calibration_config &a = wanted.calibration,
                                     &b = calibrationConfig_;
    const bool calibrating = wanted.mode == GAIN_CALIBRATE;
    const bool spectraGoOn = calibrating && gainSpectraStarted_ &&
                             !wanted.restart && !loaded && !newFrameSize &&
                             a.rows == b.rows && a.cols == b.cols &&
                             a.bins == b.bins && a.low == b.low &&
                             a.high == b.high && a.events == b.events &&
                             a.fraction == b.fraction &&
                             a.min_photons == b.min_photons;
    unsigned desired = wanted.mode != GAIN_OFF && !gainMap_.empty()
                           ? gainNumber_
                           : 0;
    if (spectraGoOn)
        desired = gainGiven_;
    if (desired != gainGiven_) {
        /* Given once, taken or not: a refused map is not offered again at
         * every batch. Whether the finder has one, it says itself. */
        bool fits = gainRows_ == plugin_.finder.rows &&
                    gainCols_ == plugin_.finder.cols;
        int rc = cc_finder_set_gain(plugin_.finder.finder,
                                    desired != 0 && fits ? gainMap_.data()
                                                         : NULL,
                                    gainUnit_);
        if (desired != 0 && !fits) {
            formatMessage(step, sizeof step,
                          "the gain map held is %d x %d, the frames %d x %d: "
                          "no gain applied",
                          gainCols_, gainRows_, plugin_.finder.cols,
                          plugin_.finder.rows);
            appendMessage(message, step);
        } else if (rc != CC_OK) {
            formatMessage(step, sizeof step, "%s: no gain applied",
                          cc_finder_last_error(plugin_.finder.finder));
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
    if (cc_finder_set_gain_calibration(plugin_.finder.finder, made) != CC_OK) {
        formatMessage(step, sizeof step, "gain calibration not started: %s",
                      cc_finder_last_error(plugin_.finder.finder));
        appendMessage(message, step);
        cc_gain_calibration_destroy(made);
        takeGainSpectra(true, NULL);
        return;
    }
    calibrationLock_.lock();
    std::swap(calibration_, made);
    calibrationConfig_ = a;
    calibrationLock_.unlock();
    cc_gain_calibration_destroy(made);
    gainSpectraStarted_ = true;
    formatMessage(step, sizeof step,
                  "gain calibration started: %s events on [%g, %g) in %u "
                  "bins a pixel",
                  a.events == CC_GAIN_EVENTS_SUM ? "sum" : "single", a.low,
                  a.high, a.bins);
    appendMessage(message, step);
}

/* Unless a save is fitting them (then the finder keeps its own until the
 * next take). A failure goes into message when there is one. */
void NDClusterCUDACorrections::takeGainSpectra(bool stop, char *message)
{
    if (plugin_.finder.finder == NULL || !gainSpectraStarted_)
        return;
    int rc = CC_OK;
    calibrationLock_.lock();
    if (calibration_ != NULL)
        rc = cc_finder_take_gain_calibration(plugin_.finder.finder,
                                             calibration_);
    calibrationLock_.unlock();
    if (rc != CC_OK && message != NULL) {
        char step[NDCC_MESSAGE_SIZE];
        formatMessage(step, sizeof step, "gain calibration: %s",
                      cc_finder_last_error(plugin_.finder.finder));
        appendMessage(message, step);
    }
    if (stop) {
        cc_finder_set_gain_calibration(plugin_.finder.finder, NULL);
        gainSpectraStarted_ = false;
    }
}

/* Each region's common mode, its map, the gain map in force and the
 * calibration's counts. */
void NDClusterCUDACorrections::publish(NDArray **commonMode, NDArray **gain)
{
    *commonMode = commonModeMap();
    *gain = gainMapInForce();
    uint64_t photons, outside;
    takeGainSpectra(false, NULL);
    calibrationLock_.lock();
    cc_gain_calibration_entered(calibration_, &photons, &outside);
    calibrationLock_.unlock();
    plugin_.setDoubleParam(GainCalPhotons, (double)photons);
    plugin_.setDoubleParam(GainCalOutside, (double)outside);
}

/* Each region's common mode into its PVs, and the map of each pixel's
 * region's rms; NULL without common mode or an array. */
NDArray *NDClusterCUDACorrections::commonModeMap()
{
    NDArray *map = NULL;
    cc_finder *finder = plugin_.finder.finder;
    const size_t pixels = (size_t)plugin_.finder.rows * plugin_.finder.cols;
    size_t dims[2] = {(size_t)plugin_.finder.cols, (size_t)plugin_.finder.rows};
    cc_config config;
    uint32_t n = 0;
    if (finder != NULL && cc_finder_get_config(finder, &config) == CC_OK)
        n = cc_common_mode_regions(&config);
    commonModeFigures_.resize(n);
    commonModeLast_.resize(n);
    plugin_.setIntegerParam(CommonModeRegions, (int)n);
    if (n > 0 &&
        cc_finder_common_mode(finder, commonModeFigures_.data(), n) == CC_OK) {
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
        plugin_.setDoubleParam(CommonModeNow, std::sqrt(lastSquares / n));
        plugin_.setDoubleParam(CommonModeRms,
                               frames > 0 ? std::sqrt(squares / frames) : 0);
        plugin_.setDoubleParam(CommonModeUnestimated, unestimated);
        plugin_.doCallbacksFloat64Array(commonModeLast_.data(), n,
                                        CommonModeLast, 0);
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
        map = commonModeRegion_.size() == pixels
                  ? plugin_.outputs.mapArray(
                        dims[0], dims[1], NDFloat32,
                        "common-mode rms of the pixel's region (ADU)")
                  : NULL;
        if (map != NULL) {
            float *to = (float *)map->pData;
            for (size_t p = 0; p < pixels; p++)
                to[p] = (float)commonModeFigures_[commonModeRegion_[p]].rms;
        }
    } else {
        plugin_.setDoubleParam(CommonModeNow, 0);
        plugin_.setDoubleParam(CommonModeRms, 0);
        plugin_.setDoubleParam(CommonModeUnestimated, 0);
    }
    return map;
}

/* The gain map the finder applies, as it says: a map it refused, or one
 * that does not fit the frames, is not shown as applied. */
NDArray *NDClusterCUDACorrections::gainMapInForce()
{
    NDArray *map = NULL;
    cc_finder *finder = plugin_.finder.finder;
    const size_t pixels = (size_t)plugin_.finder.rows * plugin_.finder.cols;
    gainShown_.resize(pixels);
    cc_gain_unit shownUnit = CC_GAIN_RELATIVE;
    bool applied = finder != NULL &&
                   cc_finder_get_gain(finder, gainShown_.data(), &shownUnit) ==
                       CC_OK;
    bool current = applied && gainGiven_ == gainNumber_;
    std::string inUse = gainNote_;
    if (!gainMap_.empty())
        inUse += current   ? ": applied"
                 : applied ? ": held; the calibration goes on under the map "
                             "before it (write Calibrate again to use it)"
                           : ": held, not applied";
    plugin_.setStringParam(GainMapInUse, inUse.c_str());
    if (applied)
        map = plugin_.outputs.mapArray((size_t)plugin_.finder.cols,
                                       (size_t)plugin_.finder.rows, NDFloat32,
                                       shownUnit == CC_GAIN_ADU_PER_KEV
                                           ? "gain map (ADU per keV)"
                                           : "gain map (relative)");
    if (map != NULL) {
        float *to = (float *)map->pData;
        for (size_t p = 0; p < pixels; p++)
            to[p] = (float)gainShown_[p];
    }
    return map;
}
