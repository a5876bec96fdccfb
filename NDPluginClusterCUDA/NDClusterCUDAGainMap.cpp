/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAGainMap.cpp: the gain map's files (NDClusterCUDACorrections.h):
 * a map read into the map held, and the flat field's spectra fitted,
 * written and held (SaveGainMap).
 */
#include <stdio.h>
#include <string.h>

#include <string>
#include <utility>
#include <vector>

#include "NDPluginClusterCUDA.h"

/* Reads a gain map file into the map held (finder lock held, finder
 * made, rows x cols the finder's frame); the finder checks its values by
 * taking it, and keeps it until the next batch's apply says whether
 * GainMode wants it. An empty path lets the map go. A refused file
 * keeps the map held, and the finder its own. */
int NDClusterCUDACorrections::holdGainMap(const char *path, cc_gain_unit unit,
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
    int rc = cc_gain_map_read(path, (uint32_t)rows, (uint32_t)cols, map.data(),
                              why);
    if (rc == CC_OK) {
        rc = cc_finder_set_gain(plugin_.finder.finder, map.data(), unit);
        if (rc != CC_OK)
            snprintf(why, sizeof why, "%s",
                     cc_finder_last_error(plugin_.finder.finder));
    }
    if (rc != CC_OK) {
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "%s; the gain map held is kept", why);
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
int NDClusterCUDACorrections::saveGainMap(char *message)
{
    char path[512];
    getString(GainMapFile, path, sizeof path);
    double lineEnergy;
    lineEnergy = getDouble(GainLineEnergy);
    int maskFlagged;
    maskFlagged = getInt(GainMaskFlagged);
    calibrationLock_.lock();
    bool spectra = calibration_ != NULL;
    calibrationLock_.unlock();
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
                      "in .npy",
                      path);
        return CC_EINVAL;
    }
    plugin_.finder.lock.lock();
    takeGainSpectra(false, NULL);
    plugin_.finder.lock.unlock();
    calibrationLock_.lock();
    cc_gain_calibration *taken = calibration_;
    calibration_ = NULL;
    cc_gain_calibration_config config = calibrationConfig_;
    calibrationLock_.unlock();
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
    plugin_.finder.lock.lock();
    bool havePrior = plugin_.finder.finder != NULL &&
                     plugin_.finder.rows == (int)config.rows &&
                     plugin_.finder.cols == (int)config.cols &&
                     cc_finder_get_gain(plugin_.finder.finder, prior.data(),
                                        &priorUnit) == CC_OK;
    plugin_.finder.lock.unlock();
    std::vector<uint8_t> quality(pixels);
    cc_gain_unit unit = lineEnergy > 0 ? CC_GAIN_ADU_PER_KEV : CC_GAIN_RELATIVE;
    cc_gain_calibration_result result;
    char why[NDCC_MESSAGE_SIZE];
    int rc = cc_gain_calibration_solve(taken, havePrior ? prior.data() : NULL,
                                       priorUnit, unit, lineEnergy, gain.data(),
                                       quality.data(), &result, why);
    calibrationLock_.lock();
    if (calibration_ == NULL) /* not replaced meanwhile: goes on */
        std::swap(calibration_, taken);
    calibrationLock_.unlock();
    cc_gain_calibration_destroy(taken);
    if (rc != CC_OK) {
        formatMessage(message, NDCC_MESSAGE_SIZE, "gain map not saved: %s",
                      why);
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
        formatMessage(message, NDCC_MESSAGE_SIZE, "gain map not saved: %s",
                      why);
        return rc;
    }
    plugin_.setIntegerParam(GainCalGood, (int)result.pixels_good);
    plugin_.setIntegerParam(GainCalFew, (int)result.pixels_few);
    plugin_.setIntegerParam(GainCalFailed, (int)result.pixels_failed);
    plugin_.setDoubleParam(GainCalSpread, 100 * result.spread);
    plugin_.setIntegerParam(GainUnit, unit);
    plugin_.finder.lock.lock();
    gainMap_.swap(gain);
    gainUnit_ = unit;
    gainRows_ = (int)config.rows;
    gainCols_ = (int)config.cols;
    gainNumber_++;
    gainNote_ = std::string(path) + " (" + cc_gain_unit_name(unit) +
                ", fitted from " + std::to_string(result.photons) + " photons)";
    char masked[NDCC_MESSAGE_SIZE] = "";
    if (maskFlagged && plugin_.finder.finder != NULL &&
        plugin_.finder.rows == (int)config.rows &&
        plugin_.finder.cols == (int)config.cols) {
        std::vector<uint8_t> mask(pixels);
        if (cc_finder_get_mask(plugin_.finder.finder, mask.data()) == CC_OK) {
            for (size_t p = 0; p < pixels; p++)
                mask[p] = mask[p] || quality[p];
            if (cc_finder_set_mask(plugin_.finder.finder, mask.data()) == CC_OK)
                formatMessage(masked, sizeof masked,
                              "; the flagged pixels are masked");
            else
                formatMessage(masked, sizeof masked, "; %s",
                              cc_finder_last_error(plugin_.finder.finder));
        }
    }
    plugin_.finder.lock.unlock();
    formatMessage(message, NDCC_MESSAGE_SIZE,
                  "gain map saved to %s: %llu pixels good, %llu with too few "
                  "photons, %llu fits failed (flagged in %s), spread %.2f %%%s",
                  path, (unsigned long long)result.pixels_good,
                  (unsigned long long)result.pixels_few,
                  (unsigned long long)result.pixels_failed, flagged.c_str(),
                  100 * result.spread, masked);
    return CC_OK;
}

/* LoadGainMap: GainMapFile read into the map held, or at the first frame
 * when none has come (port locked; takes the finder lock). */
int NDClusterCUDACorrections::loadGainMap(char *message)
{
    char path[512];
    getString(GainMapFile, path, sizeof path);
    cc_gain_unit unit = (cc_gain_unit)getInt(GainUnit);
    NDClusterCUDAFinder &finder = plugin_.finder;
    int rc = CC_OK;
    finder.lock.lock();
    if (finder.finder == NULL) {
        pendingGainLoad_ = true;
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "gain map from %s will be loaded at the first frame",
                      path);
    } else {
        rc = holdGainMap(path, unit, finder.rows, finder.cols, message);
    }
    finder.lock.unlock();
    return rc;
}

/* LoadGainMap or SaveGainMap (port locked; takes the finder lock). */
void NDClusterCUDACorrections::gainCommand(int function)
{
    char message[NDCC_MESSAGE_SIZE];
    if (function == SaveGainMap)
        saveGainMap(message);
    else
        loadGainMap(message);
    status("%s", message);
}
