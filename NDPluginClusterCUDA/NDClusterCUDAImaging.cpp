/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAImaging.cpp: η calibration and the interpolated image
 * (NDClusterCUDAImaging.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include "NDPluginClusterCUDA.h"

static const char *const etaNames[] = {"eta2", "eta2full", "eta3"};

NDClusterCUDAImaging::NDClusterCUDAImaging(NDPluginClusterCUDA &plugin)
    : NDClusterCUDAPart(plugin), inForce_(), calibration_(NULL),
      calibrationNumber_(0), image_(NULL), unpublished_(false)
{
    snprintf(calibrationNote_, sizeof calibrationNote_, "none");
    epicsTimeGetCurrent(&lastImage_);
    auto command = [this](asynUser *pasynUser, epicsInt32 &value) {
        if (value != 0)
            this->command(pasynUser->reason);
        value = 0; /* a command, not a state */
        return asynSuccess;
    };
    int32Param(ClusterEtaModeString, &EtaMode, ETA_OFF,
               [this](asynUser *pasynUser, epicsInt32 &value) {
                   return checkEtaMode(pasynUser, value);
               });
    int32Param(ClusterEtaFunctionString, &EtaFunction, CC_ETA2,
               [this](asynUser *pasynUser, epicsInt32 &value) {
                   double low, high;
                   if (cc_eta_range((cc_eta_function)value, &low, &high) !=
                       CC_OK)
                       return refuse(pasynUser,
                                     "EtaFunction %d is not eta2 (0), "
                                     "eta2full (1) or eta3 (2)",
                                     value);
                   return asynSuccess;
               });
    int32Param(ClusterEtaBinsString, &EtaBins, 100,
               [this](asynUser *pasynUser, epicsInt32 &value) {
                   if (value < 1 || value > (int)CC_ETA_BINS_MAX)
                       return refuse(pasynUser, "EtaBins %d must be 1 to %u",
                                     value, CC_ETA_BINS_MAX);
                   return asynSuccess;
               });
    octetParam(ClusterEtaFileString, &EtaFile, "");
    int32Param(ClusterSaveEtaString, &SaveEta, 0, command);
    int32Param(ClusterLoadEtaString, &LoadEta, 0, command);
    octetParam(ClusterEtaCalibrationString, &EtaCalibration, calibrationNote_);
    float64Param(ClusterCalibrationPhotonsString, &CalibrationPhotons, 0);
    int32Param(ClusterSubpixelsString, &Subpixels, 5,
               [this](asynUser *pasynUser, epicsInt32 &value) {
                   if (value < 1 || value > (int)CC_SUBPIXELS_MAX)
                       return refuse(pasynUser, "Subpixels %d must be 1 to %u",
                                     value, CC_SUBPIXELS_MAX);
                   return asynSuccess;
               });
    int32Param(ClusterImageResetString, &ImageReset, 0, command);
    float64Param(ClusterImagedPhotonsString, &ImagedPhotons, 0);
    float64Param(ClusterImageUninterpolableString, &ImageUninterpolable, 0);
    float64Param(ClusterImageClippedString, &ImageClipped, 0);
    float64Param(ClusterImageOutsideString, &ImageOutside, 0);
    float64Param(ClusterImageFlatnessString, &ImageFlatness, 0);
}

NDClusterCUDAImaging::~NDClusterCUDAImaging()
{
    cc_eta_calibration_destroy(calibration_);
    cc_interpolator_destroy(image_);
}

/* What EtaMode and the settings it uses ask now (port locked). */
NDClusterCUDAImaging::Wanted NDClusterCUDAImaging::wanted(int rows, int cols)
{
    const NDClusterCUDAOutputs &outputs = plugin_.outputs;
    Wanted wanted = {};
    wanted.mode = getInt(EtaMode);
    wanted.function = getInt(EtaFunction);
    wanted.bins = getInt(EtaBins);
    wanted.subpixels = getInt(Subpixels);
    wanted.windowed = getInt(outputs.WindowEnable) != 0;
    wanted.window.energy = (cc_energy)getInt(outputs.SpectrumEnergy);
    wanted.window.low = getDouble(outputs.WindowLow);
    wanted.window.high = getDouble(outputs.WindowHigh);
    wanted.rows = rows;
    wanted.cols = cols;
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
cc_eta_calibration *NDClusterCUDAImaging::mergedCalibration(char *message)
{
    cc_eta_calibration *merged = NULL;
    int rc = CC_OK;
    NDClusterCUDAPipeline &pipeline = plugin_.pipeline;
    for (unsigned i = 0; rc == CC_OK && i < pipeline.outputThreads(); i++) {
        NDClusterCUDAPipeline::Accumulator &part = pipeline.accumulator(i);
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
void NDClusterCUDAImaging::replaceCalibration(cc_eta_calibration *calibration,
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

void NDClusterCUDAImaging::stop()
{
    if (image_ == NULL)
        return;
    cc_finder *finder = plugin_.finder.finder;
    if (finder != NULL)
        cc_finder_set_interpolator(finder, NULL);
    cc_interpolator_destroy(image_);
    image_ = NULL;
    inForce_.rows = inForce_.cols = 0; /* to be made again */
}

/* What to tell the user goes into message (NDCC_MESSAGE_SIZE bytes). */
void NDClusterCUDAImaging::apply(const Wanted &asked, char *message)
{
    Wanted wanted = asked;
    const Wanted now = inForce_;
    NDClusterCUDAPipeline &pipeline = plugin_.pipeline;
    cc_finder *finder = plugin_.finder.finder;
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
        cc_eta_calibration *parts[NDClusterCUDAPipeline::MAX_OUTPUT_THREADS] = {
            NULL};
        int rc = CC_OK;
        for (unsigned i = 0; wanted.mode == ETA_CALIBRATE && rc == CC_OK &&
                             i < pipeline.outputThreads();
             i++)
            rc = cc_eta_calibration_new(&parts[i],
                                        (cc_eta_function)wanted.function,
                                        (uint32_t)wanted.bins, window, message);
        for (unsigned i = 0; i < pipeline.outputThreads(); i++) {
            if (rc != CC_OK) { /* no part, rather than some */
                cc_eta_calibration_destroy(parts[i]);
                parts[i] = NULL;
            }
            NDClusterCUDAPipeline::Accumulator &part = pipeline.accumulator(i);
            part.lock.lock();
            std::swap(part.calibration, parts[i]);
            part.lock.unlock();
            cc_eta_calibration_destroy(parts[i]);
        }
        cc_eta_calibration_info info;
        if (taken != NULL &&
            cc_eta_calibration_info_get(taken, &info) == CC_OK &&
            info.photons > 0) {
            replaceCalibration(taken, "taken live");
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "eta calibration taken: %" PRIu64 " photons",
                     info.photons);
        } else if (now.mode == ETA_CALIBRATE) {
            cc_eta_calibration_destroy(taken);
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "the eta calibration taken has no photons: the one in "
                     "force is kept");
        }
        if (wanted.mode == ETA_CALIBRATE && rc == CC_OK)
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "calibrating: %s in %d x %d bins of the photons that "
                     "flow",
                     etaNames[wanted.function], wanted.bins, wanted.bins);
    }
    wanted.calibration = calibrationNumber_;
    const bool imageKept = now.mode == ETA_INTERPOLATE &&
                           wanted.mode == ETA_INTERPOLATE &&
                           wanted.subpixels == now.subpixels &&
                           sameWindow(window, windowNow) &&
                           wanted.rows == now.rows && wanted.cols == now.cols &&
                           wanted.calibration == now.calibration;
    if (!imageKept)
        stop();
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
        if (rc == CC_OK &&
            cc_finder_set_interpolator(finder, image_) != CC_OK) {
            snprintf(message, NDCC_MESSAGE_SIZE, "%s",
                     cc_finder_last_error(finder));
            cc_interpolator_destroy(image_);
            image_ = NULL;
        } else if (rc == CC_OK) {
            formatMessage(message, NDCC_MESSAGE_SIZE,
                          "interpolating: %d x %d sub-pixels a pixel, by %s",
                          wanted.subpixels, wanted.subpixels, calibrationNote_);
        }
    }
    inForce_ = wanted;
}

/* Interpolate needs a calibration, in force or being taken, or one in
 * EtaFile, which is then loaded (as when autosave restores Interpolate). */
asynStatus NDClusterCUDAImaging::checkEtaMode(asynUser *pasynUser, int mode)
{
    if (mode != ETA_OFF && mode != ETA_CALIBRATE && mode != ETA_INTERPOLATE)
        return refuse(pasynUser,
                      "EtaMode %d is not Off (0), Calibrate (1) or "
                      "Interpolate (2)",
                      mode);
    if (mode != ETA_INTERPOLATE)
        return asynSuccess;
    int current = getInt(EtaMode);
    plugin_.finder.lock.lock();
    bool have = calibration_ != NULL;
    plugin_.finder.lock.unlock();
    char message[NDCC_MESSAGE_SIZE];
    if (!have && current != ETA_CALIBRATE && loadCalibration(message) != CC_OK)
        return refuse(pasynUser,
                      "Interpolate refused: no eta calibration in force, "
                      "and %s",
                      message);
    return asynSuccess;
}

/* Loads EtaFile as the calibration in force (port locked; takes the
 * finder lock). */
int NDClusterCUDAImaging::loadCalibration(char *message)
{
    char path[512];
    getString(EtaFile, path, sizeof path);
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
    plugin_.finder.lock.lock();
    replaceCalibration(loaded, how);
    formatMessage(message, NDCC_MESSAGE_SIZE, "eta calibration loaded: %s",
                  calibrationNote_);
    plugin_.setStringParam(EtaCalibration, calibrationNote_);
    plugin_.finder.lock.unlock();
    return CC_OK;
}

/* SaveEta, LoadEta or ImageReset (port locked; takes the finder lock). */
void NDClusterCUDAImaging::command(int function)
{
    char message[NDCC_MESSAGE_SIZE];
    if (function == LoadEta) {
        loadCalibration(message);
        status("%s", message);
        return;
    }
    plugin_.finder.lock.lock();
    cc_finder *finder = plugin_.finder.finder;
    if (function == ImageReset) {
        if (image_ != NULL && finder != NULL)
            cc_finder_take_image(finder, image_); /* and drop it */
        cc_interpolator_reset(image_);
        /* The analog image too (DetectorMode Analog). */
        bool analog = plugin_.modes.resetAnalog();
        status("%s", image_ != NULL ? "interpolated image reset"
                     : analog       ? "analog image reset"
                                    : "no image: EtaMode is not Interpolate");
    } else {
        char path[512];
        getString(EtaFile, path, sizeof path);
        /* While calibrating, what was taken so far; else the one in force. */
        cc_eta_calibration *taken = inForce_.mode == ETA_CALIBRATE
                                        ? mergedCalibration(message)
                                        : NULL;
        const cc_eta_calibration *saved = taken != NULL ? taken : calibration_;
        cc_eta_calibration_info info;
        if (saved == NULL)
            status("no eta calibration to save: take one first (EtaMode "
                   "Calibrate)");
        else if (path[0] == '\0')
            status("EtaFile is empty: say where to save");
        else if (cc_eta_calibration_save(saved, path, message) != CC_OK)
            status("%s", message);
        else if (cc_eta_calibration_info_get(saved, &info) == CC_OK)
            status("eta calibration of %" PRIu64 " photons saved to %s",
                   info.photons, path);
        cc_eta_calibration_destroy(taken);
    }
    plugin_.finder.lock.unlock();
}

/* The image imaged since the last take added to image_, as an NDArray
 * for address 5, with its counters; NULL while not interpolating, or
 * with a reason in message (finder lock held, port not: the copy of up
 * to 100 MB must not hold up the arrays). */
NDArray *NDClusterCUDAImaging::takeImage(cc_image_stats *stats,
                                         double *flatness, char *message)
{
    cc_finder *finder = plugin_.finder.finder;
    if (image_ == NULL || finder == NULL)
        return NULL;
    if (cc_finder_take_image(finder, image_) != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE, "%s",
                 cc_finder_last_error(finder));
    cc_interpolator_stats(image_, stats);
    *flatness = 0;
    cc_interpolator_flatness(image_, flatness); /* 0 for S = 1 or empty */
    const size_t s = (size_t)inForce_.subpixels;
    size_t dims[2] = {(size_t)inForce_.cols * s, (size_t)inForce_.rows * s};
    NDArray *pImage =
        plugin_.outputs.mapArray(dims[0], dims[1], NDUInt32,
                                 "interpolated image (photons per sub-pixel)");
    if (pImage == NULL) {
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "no NDArray for the interpolated image: the pool is "
                 "exhausted");
        return NULL;
    }
    memcpy(pImage->pData, cc_interpolator_image(image_),
           dims[0] * dims[1] * sizeof(uint32_t));
    epicsInt32 subpixels = inForce_.subpixels;
    double photons = (double)stats->photons;
    pImage->pAttributeList->add("Subpixels", "sub-pixels a pixel, a side",
                                NDAttrInt32, &subpixels);
    pImage->pAttributeList->add("EtaCalibration", "the calibration imaged by",
                                NDAttrString, calibrationNote_);
    pImage->pAttributeList->add("ImagedPhotons", "photons in the image",
                                NDAttrFloat64, &photons);
    return pImage;
}

void NDClusterCUDAImaging::publishImage(bool force, double period)
{
    epicsTimeStamp now;
    epicsTimeGetCurrent(&now);
    plugin_.lock();
    bool due = force || (unpublished_ &&
                         epicsTimeDiffInSeconds(&now, &lastImage_) >= period);
    if (due)
        unpublished_ = false;
    plugin_.unlock();
    if (!due)
        return;
    lastImage_ = now;
    cc_image_stats stats;
    double flatness;
    char message[NDCC_MESSAGE_SIZE] = "";
    plugin_.finder.lock.lock();
    bool imaging = image_ != NULL;
    NDArray *pImage = takeImage(&stats, &flatness, message);
    plugin_.finder.lock.unlock();
    if (!imaging)
        return;
    plugin_.lock();
    plugin_.setDoubleParam(ImagedPhotons, (double)stats.photons);
    plugin_.setDoubleParam(ImageUninterpolable, (double)stats.uninterpolable);
    plugin_.setDoubleParam(ImageClipped, (double)stats.clipped);
    plugin_.setDoubleParam(ImageOutside, (double)stats.outside);
    plugin_.setDoubleParam(ImageFlatness, flatness);
    if (message[0] != '\0')
        status("%s", message);
    plugin_.callParamCallbacks();
    plugin_.publishArray(pImage, NDPluginClusterCUDA::ADDRESS_IMAGE);
    plugin_.unlock();
}

/* The calibration's PVs: the photons of the one being taken, while
 * calibrating, else of the one in force (port and finder lock held). */
void NDClusterCUDAImaging::publishCalibration()
{
    uint64_t photons = 0;
    cc_eta_calibration_info info;
    NDClusterCUDAPipeline &pipeline = plugin_.pipeline;
    if (inForce_.mode == ETA_CALIBRATE) {
        for (unsigned i = 0; i < pipeline.outputThreads(); i++) {
            NDClusterCUDAPipeline::Accumulator &part = pipeline.accumulator(i);
            part.lock.lock();
            if (cc_eta_calibration_info_get(part.calibration, &info) == CC_OK)
                photons += info.photons;
            part.lock.unlock();
        }
    } else if (cc_eta_calibration_info_get(calibration_, &info) == CC_OK) {
        photons = info.photons;
    }
    plugin_.setDoubleParam(CalibrationPhotons, (double)photons);
    plugin_.setStringParam(EtaCalibration, calibrationNote_);
}
