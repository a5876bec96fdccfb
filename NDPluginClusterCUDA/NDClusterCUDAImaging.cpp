/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAImaging.cpp: η calibration and the interpolated image
 * (docs/spec.md §7.4-§7.7) in the plugin. EtaMode Calibrate adds every
 * frame's clusters to the output threads' parts of a calibration;
 * Interpolate hands an interpolator to the finder, which places the
 * photons while it finds them (on the GPU when CUDA runs), and the image
 * is taken from it at each publication (address 5). Settings take effect
 * between batches, under the finder lock, so an image never mixes two.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include "NDPluginClusterCUDA.h"

static const char *const etaNames[] = {"eta2", "eta2full", "eta3"};

/* What EtaMode and the settings it uses ask now (port locked). */
NDPluginClusterCUDA::Imaging
NDPluginClusterCUDA::wantedImaging(const cc_config &config)
{
    Imaging wanted = {};
    int windowed, energy;
    getIntegerParam(ClusterEtaMode, &wanted.mode);
    getIntegerParam(ClusterEtaFunction, &wanted.function);
    getIntegerParam(ClusterEtaBins, &wanted.bins);
    getIntegerParam(ClusterSubpixels, &wanted.subpixels);
    getIntegerParam(ClusterWindowEnable, &windowed);
    getIntegerParam(ClusterSpectrumEnergy, &energy);
    wanted.windowed = windowed != 0;
    wanted.window.energy = (cc_energy)energy;
    getDoubleParam(ClusterWindowLow, &wanted.window.low);
    getDoubleParam(ClusterWindowHigh, &wanted.window.high);
    wanted.rows = (int)config.rows;
    wanted.cols = (int)config.cols;
    return wanted;
}

static bool sameWindow(const cc_energy_window *a, const cc_energy_window *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return a->energy == b->energy && a->low == b->low && a->high == b->high;
}

/* The output threads' parts of the calibration being taken, summed into
 * a new one; NULL when none is taken (finder lock held; takes the
 * accumulator locks). */
cc_eta_calibration *NDPluginClusterCUDA::mergedCalibration(char *message)
{
    cc_eta_calibration *merged = NULL;
    int rc = CC_OK;
    for (unsigned i = 0; rc == CC_OK && i < outputThreads_; i++) {
        Accumulator &part = accumulators_[i];
        part.lock.lock();
        cc_eta_calibration_info info;
        if (part.calibration != NULL && merged == NULL &&
            cc_eta_calibration_info_get(part.calibration, &info) == CC_OK)
            rc = cc_eta_calibration_new(&merged, info.function, info.bins,
                                        info.windowed ? &info.window : NULL,
                                        message);
        if (part.calibration != NULL && rc == CC_OK)
            rc = cc_eta_calibration_merge(merged, part.calibration);
        part.lock.unlock();
    }
    if (rc != CC_OK) {
        cc_eta_calibration_destroy(merged);
        return NULL;
    }
    return merged;
}

/* calibration (made by the caller) is in force from now on; how says
 * where it came from (finder lock held). */
void NDPluginClusterCUDA::replaceCalibration(cc_eta_calibration *calibration,
                                             const char *how)
{
    cc_eta_calibration_info info;
    cc_eta_calibration_info_get(calibration, &info);
    char window[96] = "every cluster";
    if (info.windowed)
        snprintf(window, sizeof window, "[%g, %g) ADU of %s", info.window.low,
                 info.window.high,
                 info.window.energy == CC_ENERGY_SUM ? "Sum" : "Sum2x2");
    snprintf(calibrationNote_, sizeof calibrationNote_,
             "%s, %" PRIu32 " x %" PRIu32 " bins, %" PRIu64
             " photons of %s, %s",
             etaNames[info.function], info.bins, info.bins, info.photons,
             window, how);
    cc_eta_calibration_destroy(calibration_);
    calibration_ = calibration;
    calibrationNumber_++;
}

/* Stops imaging: the finder is given no interpolator, the image goes
 * (finder lock held). */
void NDPluginClusterCUDA::stopImaging()
{
    if (image_ == NULL)
        return;
    if (finder_ != NULL)
        cc_finder_set_interpolator(finder_, NULL);
    cc_interpolator_destroy(image_);
    image_ = NULL;
    imaging_.rows = imaging_.cols = 0; /* to be made again */
}

/* Brings calibration and imaging to what a batch's job asks, before its
 * frames (finder lock held; takes the accumulator locks). What to tell
 * the user goes into message (NDCC_MESSAGE_SIZE bytes). */
void NDPluginClusterCUDA::applyImaging(const Imaging &asked, char *message)
{
    Imaging wanted = asked;
    const Imaging now = imaging_;
    const cc_energy_window *window = wanted.windowed ? &wanted.window : NULL;
    const cc_energy_window *windowNow = now.windowed ? &now.window : NULL;
    const bool calibrationKept = now.mode == ETA_CALIBRATE &&
                                 wanted.mode == ETA_CALIBRATE &&
                                 wanted.function == now.function &&
                                 wanted.bins == now.bins &&
                                 sameWindow(window, windowNow);
    if ((now.mode == ETA_CALIBRATE || wanted.mode == ETA_CALIBRATE) &&
        !calibrationKept) {
        /* What was taken becomes the calibration in force, and new, empty
         * parts (or none) replace the old. */
        cc_eta_calibration *taken = now.mode == ETA_CALIBRATE
                                        ? mergedCalibration(message)
                                        : NULL;
        cc_eta_calibration *parts[MAX_OUTPUT_THREADS] = {NULL};
        int rc = CC_OK;
        for (unsigned i = 0; wanted.mode == ETA_CALIBRATE && rc == CC_OK &&
                             i < outputThreads_;
             i++)
            rc = cc_eta_calibration_new(&parts[i],
                                        (cc_eta_function)wanted.function,
                                        (uint32_t)wanted.bins, window,
                                        message);
        for (unsigned i = 0; i < outputThreads_; i++) {
            if (rc != CC_OK) { /* no part, rather than some */
                cc_eta_calibration_destroy(parts[i]);
                parts[i] = NULL;
            }
            Accumulator &part = accumulators_[i];
            part.lock.lock();
            std::swap(part.calibration, parts[i]);
            part.lock.unlock();
            cc_eta_calibration_destroy(parts[i]);
        }
        cc_eta_calibration_info info;
        if (taken != NULL && cc_eta_calibration_info_get(taken, &info) ==
                                 CC_OK && info.photons > 0) {
            replaceCalibration(taken, "taken live");
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "eta calibration taken: %" PRIu64 " photons", info.photons);
        } else if (now.mode == ETA_CALIBRATE) {
            cc_eta_calibration_destroy(taken);
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "the eta calibration taken has no photons: the one in "
                     "force is kept");
        }
        if (wanted.mode == ETA_CALIBRATE && rc == CC_OK)
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "calibrating: %s in %d x %d bins of the photons that "
                     "flow", etaNames[wanted.function], wanted.bins,
                     wanted.bins);
    }
    wanted.calibration = calibrationNumber_;
    const bool imageKept = now.mode == ETA_INTERPOLATE &&
                           wanted.mode == ETA_INTERPOLATE &&
                           wanted.subpixels == now.subpixels &&
                           sameWindow(window, windowNow) &&
                           wanted.rows == now.rows && wanted.cols == now.cols &&
                           wanted.calibration == now.calibration;
    if (!imageKept)
        stopImaging();
    if (wanted.mode == ETA_INTERPOLATE && !imageKept) {
        int rc = CC_EINVAL;
        if (calibration_ == NULL)
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "Interpolate: no eta calibration in force; load one "
                     "(EtaFile, LoadEta) or take one (EtaMode Calibrate)");
        else
            rc = cc_interpolator_new(&image_, calibration_, window,
                                     (uint32_t)wanted.rows,
                                     (uint32_t)wanted.cols,
                                     (uint32_t)wanted.subpixels, message);
        if (rc == CC_OK && cc_finder_set_interpolator(finder_, image_) != CC_OK) {
            snprintf(message, NDCC_MESSAGE_SIZE, "%s",
                     cc_finder_last_error(finder_));
            cc_interpolator_destroy(image_);
            image_ = NULL;
        } else if (rc == CC_OK) {
            formatMessage(message, NDCC_MESSAGE_SIZE,
                     "interpolating: %d x %d sub-pixels a pixel, by %s",
                     wanted.subpixels, wanted.subpixels, calibrationNote_);
        }
    }
    imaging_ = wanted;
}

/* Refuses an EtaMode the plugin cannot run: Interpolate needs a
 * calibration, in force or being taken, or one in EtaFile, which is then
 * loaded (as when autosave restores Interpolate). Port locked. */
asynStatus NDPluginClusterCUDA::checkEtaMode(asynUser *pasynUser, int mode)
{
    if (mode != ETA_OFF && mode != ETA_CALIBRATE && mode != ETA_INTERPOLATE)
        return refuseWrite(pasynUser, "EtaMode %d is not Off (0), Calibrate "
                                      "(1) or Interpolate (2)", mode);
    if (mode != ETA_INTERPOLATE)
        return asynSuccess;
    int current;
    getIntegerParam(ClusterEtaMode, &current);
    finderLock_.lock();
    bool have = calibration_ != NULL;
    finderLock_.unlock();
    char message[NDCC_MESSAGE_SIZE];
    if (!have && current != ETA_CALIBRATE &&
        loadCalibration(message) != CC_OK)
        return refuseWrite(pasynUser, "Interpolate refused: no eta "
                                      "calibration in force, and %s",
                           message);
    return asynSuccess;
}

/* Loads EtaFile as the calibration in force (port locked; takes the
 * finder lock). */
int NDPluginClusterCUDA::loadCalibration(char *message)
{
    char path[512];
    getStringParam(ClusterEtaFile, sizeof path, path);
    if (path[0] == '\0') {
        snprintf(message, NDCC_MESSAGE_SIZE, "EtaFile is empty");
        return CC_EINVAL;
    }
    cc_eta_calibration *loaded;
    char why[NDCC_MESSAGE_SIZE];
    int rc = cc_eta_calibration_read(&loaded, path, why);
    if (rc != CC_OK) {
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "%s; the eta calibration in force is kept", why);
        return rc;
    }
    char how[NDCC_MESSAGE_SIZE];
    formatMessage(how, sizeof how, "from %s", path);
    finderLock_.lock();
    replaceCalibration(loaded, how);
    formatMessage(message, NDCC_MESSAGE_SIZE, "eta calibration loaded: %s",
             calibrationNote_);
    setStringParam(ClusterEtaCalibration, calibrationNote_);
    finderLock_.unlock();
    return CC_OK;
}

/* SaveEta, LoadEta or ImageReset (port locked; takes the finder lock). */
void NDPluginClusterCUDA::etaCommand(int function)
{
    char message[NDCC_MESSAGE_SIZE];
    if (function == ClusterLoadEta) {
        loadCalibration(message);
        setStatus("%s", message);
        return;
    }
    finderLock_.lock();
    if (function == ClusterImageReset) {
        if (image_ != NULL && finder_ != NULL)
            cc_finder_take_image(finder_, image_); /* and drop it */
        cc_interpolator_reset(image_);
        /* The analog image too (DetectorMode Analog). */
        bool analog = !analogSums_.empty();
        takeAnalog(message); /* and drop it */
        std::fill(analogSums_.begin(), analogSums_.end(), 0.0);
        analogFrames_ = 0;
        setStatus(image_ != NULL ? "interpolated image reset"
                  : analog        ? "analog image reset"
                                  : "no image: EtaMode is not Interpolate");
    } else {
        char path[512];
        getStringParam(ClusterEtaFile, sizeof path, path);
        /* While calibrating, what was taken so far; else the one in force. */
        cc_eta_calibration *taken = imaging_.mode == ETA_CALIBRATE
                                        ? mergedCalibration(message)
                                        : NULL;
        const cc_eta_calibration *saved = taken != NULL ? taken : calibration_;
        cc_eta_calibration_info info;
        if (saved == NULL)
            setStatus("no eta calibration to save: take one first (EtaMode "
                      "Calibrate)");
        else if (path[0] == '\0')
            setStatus("EtaFile is empty: say where to save");
        else if (cc_eta_calibration_save(saved, path, message) != CC_OK)
            setStatus("%s", message);
        else if (cc_eta_calibration_info_get(saved, &info) == CC_OK)
            setStatus("eta calibration of %" PRIu64 " photons saved to %s",
                      info.photons, path);
        cc_eta_calibration_destroy(taken);
    }
    finderLock_.unlock();
}

/* The image imaged since the last take added to image_, as an NDArray
 * for address 5, with its counters; NULL while not interpolating, or
 * with a reason in message (finder lock held, port not: the copy of up
 * to 100 MB must not hold up the arrays). */
NDArray *NDPluginClusterCUDA::takeImage(cc_image_stats *stats,
                                        double *flatness, char *message)
{
    if (image_ == NULL || finder_ == NULL)
        return NULL;
    if (cc_finder_take_image(finder_, image_) != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE, "%s", cc_finder_last_error(finder_));
    cc_interpolator_stats(image_, stats);
    *flatness = 0;
    cc_interpolator_flatness(image_, flatness); /* 0 for S = 1 or empty */
    const size_t s = (size_t)imaging_.subpixels;
    size_t dims[2] = {(size_t)imaging_.cols * s, (size_t)imaging_.rows * s};
    NDArray *pImage = mapArray(dims[0], dims[1], NDUInt32,
                               "interpolated image (photons per sub-pixel)");
    if (pImage == NULL) {
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "no NDArray for the interpolated image: the pool is "
                 "exhausted");
        return NULL;
    }
    memcpy(pImage->pData, cc_interpolator_image(image_),
           dims[0] * dims[1] * sizeof(uint32_t));
    epicsInt32 subpixels = imaging_.subpixels;
    double photons = (double)stats->photons;
    pImage->pAttributeList->add("Subpixels", "sub-pixels a pixel, a side",
                                NDAttrInt32, &subpixels);
    pImage->pAttributeList->add("EtaCalibration", "the calibration imaged by",
                                NDAttrString, calibrationNote_);
    pImage->pAttributeList->add("ImagedPhotons", "photons in the image",
                                NDAttrFloat64, &photons);
    return pImage;
}

/* The interpolated image on address 5 and its counters, at most once per
 * period unless forced, while frames were imaged since the last
 * (publisher thread; takes the finder lock, then the port's). */
void NDPluginClusterCUDA::publishImage(bool force, double period)
{
    epicsTimeStamp now;
    epicsTimeGetCurrent(&now);
    lock();
    bool due = force || (imageUnpublished_ &&
                         epicsTimeDiffInSeconds(&now, &lastImage_) >= period);
    if (due)
        imageUnpublished_ = false;
    unlock();
    if (!due)
        return;
    lastImage_ = now;
    cc_image_stats stats;
    double flatness;
    char message[NDCC_MESSAGE_SIZE] = "";
    finderLock_.lock();
    bool imaging = image_ != NULL;
    NDArray *pImage = takeImage(&stats, &flatness, message);
    finderLock_.unlock();
    if (!imaging)
        return;
    lock();
    setDoubleParam(ClusterImagedPhotons, (double)stats.photons);
    setDoubleParam(ClusterImageUninterpolable, (double)stats.uninterpolable);
    setDoubleParam(ClusterImageClipped, (double)stats.clipped);
    setDoubleParam(ClusterImageOutside, (double)stats.outside);
    setDoubleParam(ClusterImageFlatness, flatness);
    if (message[0] != '\0')
        setStatus("%s", message);
    callParamCallbacks();
    if (pImage != NULL) {
        getTimeStamp(&pImage->epicsTS);
        doCallbacksGenericPointer(pImage, NDArrayData, ADDRESS_IMAGE);
    }
    unlock();
    if (pImage != NULL)
        pImage->release();
}

/* The calibration's PVs: the photons of the one being taken, while
 * calibrating, else of the one in force (port and finder lock held). */
void NDPluginClusterCUDA::publishCalibration()
{
    uint64_t photons = 0;
    cc_eta_calibration_info info;
    if (imaging_.mode == ETA_CALIBRATE) {
        for (unsigned i = 0; i < outputThreads_; i++) {
            Accumulator &part = accumulators_[i];
            part.lock.lock();
            if (cc_eta_calibration_info_get(part.calibration, &info) == CC_OK)
                photons += info.photons;
            part.lock.unlock();
        }
    } else if (cc_eta_calibration_info_get(calibration_, &info) == CC_OK) {
        photons = info.photons;
    }
    setDoubleParam(ClusterCalibrationPhotons, (double)photons);
    setStringParam(ClusterEtaCalibration, calibrationNote_);
}

/* The window's keV readbacks from the ADU window and the gain (port
 * locked). */
void NDPluginClusterCUDA::setKeV()
{
    double gain, low, high;
    getDoubleParam(ClusterAduPerKeV, &gain);
    getDoubleParam(ClusterWindowLow, &low);
    getDoubleParam(ClusterWindowHigh, &high);
    setDoubleParam(ClusterWindowLowKeV, gain > 0 ? low / gain : 0);
    setDoubleParam(ClusterWindowHighKeV, gain > 0 ? high / gain : 0);
}
