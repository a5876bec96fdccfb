/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAOutputs.cpp: the spectrum, the hit map and the maps
 * published every SpectrumPeriod (NDClusterCUDAOutputs.h). A spectrum or
 * window setting the core could not work with is refused when written, so
 * that no batch meets it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>

#include <epicsThread.h>

#include "NDPluginClusterCUDA.h"

/* The asyn names of the line fit's figures (PeakResult). */
static const char *const peakResultNames[] = {
    "CLUSTER_PEAK_POSITION",   "CLUSTER_PEAK_SIGMA",  "CLUSTER_PEAK_FWHM",
    "CLUSTER_PEAK_RESOLUTION", "CLUSTER_PEAK_COUNTS", "CLUSTER_PEAK_CHI2"};

/* The spectrum's energies and its most bins. */
static const int maxSpectrumBins = 1 << 24;

NDClusterCUDAOutputs::NDClusterCUDAOutputs(NDPluginClusterCUDA &plugin,
                                           size_t maxMemory)
    : NDClusterCUDAPart(plugin), pool_(new NDArrayPool(&plugin, maxMemory)),
      mapArrays_(0), spectrum_(NULL), hitmap_(NULL), hitmapWindowed_(false),
      counting_(false), counts_(NULL), centres_(NULL), axis_(NULL), rms_(NULL),
      mean_(NULL), spectrumChanged_(true), windowChanged_(true),
      unpublished_(false), publishWanted_(false)
{
    epicsTimeGetCurrent(&lastPublished_);
    auto spectrum = [this](asynUser *pasynUser, auto &value) {
        return checkSpectrum(pasynUser, pasynUser->reason, value);
    };
    /* What the finder counted so far is taken first, so that the other of
     * the two keeps it. */
    auto reset = [this](asynUser *pasynUser, epicsInt32 &value) {
        char message[NDCC_MESSAGE_SIZE];
        plugin_.finder.lock.lock();
        if (takeCounts(message) != CC_OK)
            status("%s", message);
        if (pasynUser->reason == SpectrumReset)
            cc_spectrum_reset(spectrum_);
        else
            cc_hitmap_reset(hitmap_);
        plugin_.finder.lock.unlock();
        value = 0; /* a command, not a state */
        return asynSuccess;
    };
    auto finite = [this](asynUser *pasynUser, epicsFloat64 &value) {
        if (!std::isfinite(value))
            return refuse(pasynUser, "the fit's range edge %g must be finite",
                          value);
        return asynSuccess;
    };
    /* The window is kept in ADU; its keV PVs follow it and the gain. */
    auto window = [this](asynUser *pasynUser, epicsFloat64 &value) {
        if (checkWindow(pasynUser, pasynUser->reason, value) != asynSuccess)
            return asynError;
        plugin_.setDoubleParam(pasynUser->reason, value);
        setKeV();
        return asynSuccess;
    };
    auto windowKeV = [this](asynUser *pasynUser, epicsFloat64 &value) {
        const double gain = getDouble(AduPerKeV);
        if (!(gain > 0))
            return refuse(pasynUser, "the window in keV needs the gain: set "
                                     "AduPerKeV first");
        int edge = pasynUser->reason == WindowLowKeV ? WindowLow : WindowHigh;
        const double adu = value * gain;
        if (checkWindow(pasynUser, edge, adu) != asynSuccess)
            return asynError;
        plugin_.setDoubleParam(edge, adu);
        setKeV();
        value = adu / gain;
        return asynSuccess;
    };
    int32Param(ClusterSpectrumEnergyString, &SpectrumEnergy, CC_ENERGY_SUM,
               spectrum);
    int32Param(ClusterSpectrumBinsString, &SpectrumBins, 400, spectrum);
    float64Param(ClusterSpectrumMinString, &SpectrumMin, 0, spectrum);
    float64Param(ClusterSpectrumMaxString, &SpectrumMax, 2000, spectrum);
    float64Param(ClusterSpectrumPeriodString, &SpectrumPeriod, 1.0,
                 [this](asynUser *pasynUser, epicsFloat64 &value) {
                     if (!(value >= 0 && std::isfinite(value)))
                         return refuse(pasynUser,
                                       "SpectrumPeriod %g must be 0 (as "
                                       "often as batches come) or more "
                                       "seconds",
                                       value);
                     return asynSuccess;
                 });
    arrayParam(ClusterSpectrumString, &Spectrum);
    arrayParam(ClusterSpectrumXString, &SpectrumX);
    int32Param(ClusterSpectrumResetString, &SpectrumReset, 0, reset);
    float64Param(ClusterPeakLowString, &PeakLow, 0, finite);
    float64Param(ClusterPeakHighString, &PeakHigh, 0, finite);
    int32Param(ClusterPeakFittedString, &PeakFitted, 0);
    for (int i = 0; i < PEAK_RESULTS; i++)
        float64Param(peakResultNames[i], &PeakResult[i], 0);
    int32Param(ClusterHitMapResetString, &HitMapReset, 0, reset);
    int32Param(ClusterWindowEnableString, &WindowEnable, 0,
               [this](asynUser *, epicsInt32 &value) {
                   value = value != 0;
                   if (value != getInt(WindowEnable))
                       windowChanged_ = true;
                   return asynSuccess;
               });
    float64Param(ClusterWindowLowString, &WindowLow, 0, window);
    float64Param(ClusterWindowHighString, &WindowHigh, 2000, window);
    float64Param(ClusterOutsideWindowString, &OutsideWindow, 0);
    int32Param(ClusterPublishString, &Publish, 0,
               [this](asynUser *, epicsInt32 &value) {
                   publishWanted_ = value != 0;
                   publishNow_.signal();
                   value = 0;
                   return asynSuccess;
               });
    int32Param(ClusterPublicationsString, &Publications, 0);
    float64Param(ClusterAduPerKeVString, &AduPerKeV, 0,
                 [this](asynUser *pasynUser, epicsFloat64 &value) {
                     if (!(value >= 0 && std::isfinite(value)))
                         return refuse(pasynUser,
                                       "AduPerKeV %g must be 0 (no gain) or "
                                       "above",
                                       value);
                     plugin_.setDoubleParam(AduPerKeV, value);
                     setKeV();
                     return asynSuccess;
                 });
    float64Param(ClusterWindowLowKeVString, &WindowLowKeV, 0, windowKeV);
    float64Param(ClusterWindowHighKeVString, &WindowHighKeV, 0, windowKeV);
    arrayParam(ClusterSpectrumAxisString, &SpectrumAxis);
    octetParam(ClusterSpectrumAxisUnitString, &SpectrumAxisUnit, "ADU");
    float64Param(ClusterPeakPositionKeVString, &PeakPositionKeV, 0);
    float64Param(ClusterPeakFWHMKeVString, &PeakFWHMKeV, 0);
    float64Param(ClusterNoiseMeanString, &NoiseMean, 0);
}

/* pool_ stays: arrays handed on may outlive the plugin. */
NDClusterCUDAOutputs::~NDClusterCUDAOutputs()
{
    cc_spectrum_destroy(spectrum_);
    cc_hitmap_destroy(hitmap_);
    free(counts_);
    free(centres_);
    free(axis_);
    free(rms_);
    free(mean_);
}

/* The window's edges in keV, with a gain (port locked). */
void NDClusterCUDAOutputs::setKeV()
{
    const double gain = getDouble(AduPerKeV);
    plugin_.setDoubleParam(WindowLowKeV,
                           gain > 0 ? getDouble(WindowLow) / gain : 0);
    plugin_.setDoubleParam(WindowHighKeV,
                           gain > 0 ? getDouble(WindowHigh) / gain : 0);
}

/* Refuses a window that is empty or not finite; the window moves with the
 * spectrum's energy (port locked). */
asynStatus NDClusterCUDAOutputs::checkWindow(asynUser *pasynUser, int function,
                                             double value)
{
    double low = getDouble(WindowLow), high = getDouble(WindowHigh);
    const double held = function == WindowLow ? low : high;
    (function == WindowLow ? low : high) = value;
    cc_energy_window window = {CC_ENERGY_SUM, low, high};
    char message[NDCC_MESSAGE_SIZE];
    if (cc_energy_window_check(&window, message) != CC_OK)
        return refuse(pasynUser,
                      "%s (to move the window up, set WindowHigh "
                      "first)",
                      message);
    /* The same value again changes nothing: the counting image goes on. */
    if (value != held)
        windowChanged_ = true;
    return asynSuccess;
}

/* Takes a spectrum setting (function, to value) only when the core can
 * make the spectrum it gives with the others, so that a batch never meets
 * one it cannot; else refuses the write (port locked). */
asynStatus NDClusterCUDAOutputs::checkSpectrum(asynUser *pasynUser,
                                               int function, double value)
{
    const int heldEnergy = getInt(SpectrumEnergy),
              heldBins = getInt(SpectrumBins);
    const double heldMin = getDouble(SpectrumMin),
                 heldMax = getDouble(SpectrumMax);
    int energy = function == SpectrumEnergy ? (int)value : heldEnergy;
    int bins = function == SpectrumBins ? (int)value : heldBins;
    double min = function == SpectrumMin ? value : heldMin;
    double max = function == SpectrumMax ? value : heldMax;
    if ((energy != CC_ENERGY_SUM && energy != CC_ENERGY_SUM2X2) || bins < 1 ||
        bins > maxSpectrumBins || !std::isfinite(min) || !std::isfinite(max) ||
        !(min < max))
        return refuse(pasynUser,
                      "spectrum refused: %d bins of energy %d on [%g, %g) "
                      "ADU; it takes 1 to %d bins of Sum (0) or Sum2x2 (1), "
                      "SpectrumMin below SpectrumMax (to move the range up, "
                      "set SpectrumMax first)",
                      bins, energy, min, max, maxSpectrumBins);
    /* The same settings again keep the spectrum (an mbbo given a state
     * it lacks writes state 0's value). */
    if (energy != heldEnergy || bins != heldBins || min != heldMin ||
        max != heldMax)
        spectrumChanged_ = true;
    return asynSuccess;
}

NDClusterCUDAOutputs::Wanted NDClusterCUDAOutputs::wanted()
{
    Wanted wanted;
    wanted.energy = getInt(SpectrumEnergy);
    wanted.bins = getInt(SpectrumBins);
    wanted.min = getDouble(SpectrumMin);
    wanted.max = getDouble(SpectrumMax);
    wanted.spectrumChanged = spectrumChanged_;
    wanted.windowChanged = windowChanged_;
    spectrumChanged_ = windowChanged_ = false;
    return wanted;
}

/* applyWindow then has the finder count into them. */
int NDClusterCUDAOutputs::prepare(int rows, int cols, const Wanted &wanted,
                                  char *message)
{
    const NDClusterCUDAFinder &finder = plugin_.finder;
    bool newHitmap = rows != finder.rows || cols != finder.cols ||
                     hitmap_ == NULL;
    const size_t bins = (size_t)wanted.bins, pixels = (size_t)rows * cols;
    cc_spectrum *spectrum = NULL;
    cc_hitmap *hitmap = NULL;
    /* Checked when written: only memory can fail here. */
    int rc = cc_spectrum_new(&spectrum, (cc_energy)wanted.energy,
                             (uint32_t)wanted.bins, wanted.min, wanted.max);
    double *counts = (double *)calloc(bins, sizeof *counts);
    double *centres = (double *)calloc(bins, sizeof *centres);
    double *axis = (double *)calloc(bins, sizeof *axis);
    double *rms = newHitmap ? (double *)malloc(pixels * sizeof *rms) : NULL;
    double *mean = newHitmap ? (double *)malloc(pixels * sizeof *mean) : NULL;
    if (rc == CC_OK && newHitmap)
        rc = cc_hitmap_new(&hitmap, (uint32_t)rows, (uint32_t)cols);
    if (rc != CC_OK || counts == NULL || centres == NULL || axis == NULL ||
        (newHitmap && (rms == NULL || mean == NULL))) {
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      rc == CC_EINVAL
                          ? "spectrum settings refused: %d bins on [%g, %g)"
                          : "out of memory for the spectrum (%d bins on "
                            "[%g, %g)) and hit map",
                      wanted.bins, wanted.min, wanted.max);
        cc_spectrum_destroy(spectrum);
        cc_hitmap_destroy(hitmap);
        free(counts);
        free(centres);
        free(axis);
        free(rms);
        free(mean);
        return rc != CC_OK ? rc : CC_ENOMEM;
    }
    for (size_t i = 0; i < bins; i++)
        centres[i] = 0.5 * (cc_spectrum_edge(spectrum, (uint32_t)i) +
                            cc_spectrum_edge(spectrum, (uint32_t)i + 1));
    stopCounting();
    std::swap(counts_, counts);
    std::swap(centres_, centres);
    std::swap(axis_, axis);
    std::swap(spectrum_, spectrum);
    free(counts);
    free(centres);
    free(axis);
    cc_spectrum_destroy(spectrum);
    if (newHitmap) {
        std::swap(rms_, rms);
        std::swap(mean_, mean);
        std::swap(hitmap_, hitmap);
        free(rms);
        free(mean);
        cc_hitmap_destroy(hitmap);
    }
    return CC_OK;
}

/* A counting image of two windows would mean neither: the hit map starts
 * again from empty. */
int NDClusterCUDAOutputs::applyWindow(const NDClusterCUDAImaging::Wanted &asked,
                                      char *message)
{
    cc_finder *finder = plugin_.finder.finder;
    int rc = takeCounts(message); /* the spectrum keeps them */
    stopCounting();
    /* Checked when written; the spectrum's energy is checked too. */
    cc_hitmap_set_window(hitmap_, asked.windowed ? &asked.window : NULL);
    hitmapWindowed_ = asked.windowed;
    cc_hitmap_reset(hitmap_);
    int counted = cc_finder_set_tally(finder, spectrum_, hitmap_);
    counting_ = counted == CC_OK;
    if (!counting_)
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "the spectrum and hit map count nothing: %s",
                      cc_finder_last_error(finder));
    return rc != CC_OK ? rc : counted;
}

/* What the finder counted since the last take is dropped with the
 * spectrum or hit map it was for. */
void NDClusterCUDAOutputs::stopCounting()
{
    if (counting_)
        cc_finder_set_tally(plugin_.finder.finder, NULL, NULL);
    counting_ = false;
}

/* Adds what the finder counted since the last take to the spectrum and
 * hit map (finder lock held; message: NDCC_MESSAGE_SIZE bytes). */
int NDClusterCUDAOutputs::takeCounts(char *message)
{
    cc_finder *finder = plugin_.finder.finder;
    int rc = counting_ ? cc_finder_take_tally(finder, spectrum_, hitmap_)
                       : CC_OK;
    if (rc != CC_OK)
        formatMessage(message, NDCC_MESSAGE_SIZE,
                      "the spectrum and hit map could not be taken: %s",
                      cc_finder_last_error(finder));
    return rc;
}

size_t NDClusterCUDAOutputs::noiselessPixels()
{
    const NDClusterCUDAFinder &finder = plugin_.finder;
    if (cc_finder_pedestal_maps(finder.finder, NULL, rms_) != CC_OK)
        return 0;
    return (size_t)std::count(rms_, rms_ + (size_t)finder.rows * finder.cols,
                              0.0);
}

/* Its attributes only a Map (a pool gives back arrays with the attributes
 * of their last use), its uniqueId the next of the maps' own numbering,
 * so that a viewer sees a new array. */
NDArray *NDClusterCUDAOutputs::mapArray(size_t cols, size_t rows,
                                        NDDataType_t type, const char *map)
{
    size_t dims[2] = {cols, rows};
    NDArray *array = pool_->alloc(2, dims, type, 0, NULL);
    if (array == NULL)
        return NULL;
    array->uniqueId = ++mapArrays_;
    array->pAttributeList->clear();
    array->pAttributeList->add("Map", "what the array holds", NDAttrString,
                               (void *)map);
    return array;
}

void NDClusterCUDAOutputs::batchPublished()
{
    unpublished_ = true;
    publish(false);
}

static void publisherTaskC(void *outputs)
{
    static_cast<NDClusterCUDAOutputs *>(outputs)->publisherTask();
}

void NDClusterCUDAOutputs::startPublisher(const char *portName)
{
    char name[64];
    epicsSnprintf(name, sizeof name, "%s_Publish", portName);
    if (epicsThreadCreate(name, epicsThreadPriorityLow,
                          epicsThreadGetStackSize(epicsThreadStackMedium),
                          publisherTaskC, this) == NULL)
        status("could not start the publisher thread: spectra are "
               "published with frames only");
}

/* Time-shared, as the finder's threads (NDClusterCUDAPipeline.cpp): a
 * publication of large images is no reason to hold a CPU from Channel
 * Access's clients and the finder, as the real-time priority an IOC run
 * as root gives its threads would. */
void NDClusterCUDAOutputs::publisherTask()
{
    cc_thread_share_cpus();
    for (;;) {
        plugin_.lock();
        double period = getDouble(SpectrumPeriod);
        bool force = publishWanted_;
        publishWanted_ = false;
        if (unpublished_ || force) {
            publish(force);
            plugin_.callParamCallbacks();
        }
        plugin_.unlock();
        plugin_.imaging.publishImage(force, period);
        publishNow_.wait(period > 0.05 ? period / 2 : 0.05);
    }
}

/* The line of the summed spectrum (docs/spec.md §4.7), in ADU and, with a
 * gain, in keV (port and finder lock held). */
void NDClusterCUDAOutputs::fitLine(uint32_t bins)
{
    cc_peak peak = {};
    bool fitted = cc_fit_peak(counts_, centres_, bins, getDouble(PeakLow),
                              getDouble(PeakHigh), &peak) == CC_OK;
    const double results[PEAK_RESULTS] = {peak.position, peak.sigma,
                                          peak.fwhm,     peak.resolution,
                                          peak.counts,   peak.chi2_per_dof};
    for (int i = 0; i < PEAK_RESULTS; i++)
        plugin_.setDoubleParam(PeakResult[i], fitted ? results[i] : 0);
    plugin_.setIntegerParam(PeakFitted, fitted);
    /* In keV too, with a gain: the screens' axis. */
    const double gain = getDouble(AduPerKeV);
    for (uint32_t i = 0; i < bins; i++)
        axis_[i] = centres_[i] / (gain > 0 ? gain : 1);
    /* With a map in ADU per keV applied, clusters are in eV. */
    cc_gain_unit unit;
    cc_finder *finder = plugin_.finder.finder;
    const bool inEV = finder != NULL &&
                      cc_finder_get_gain(finder, NULL, &unit) == CC_OK &&
                      unit == CC_GAIN_ADU_PER_KEV;
    plugin_.setStringParam(SpectrumAxisUnit, gain > 0 ? "keV"
                                             : inEV   ? "eV"
                                                      : "ADU");
    plugin_.setDoubleParam(PeakPositionKeV,
                           fitted && gain > 0 ? peak.position / gain : 0);
    plugin_.setDoubleParam(PeakFWHMKeV,
                           fitted && gain > 0 ? peak.fwhm / gain : 0);
}

/* Spectrum, hit map and maps, at most once per SpectrumPeriod unless
 * forced (Publish), port locked; takes the finder lock. */
void NDClusterCUDAOutputs::publish(bool force)
{
    epicsTimeStamp now;
    epicsTimeGetCurrent(&now);
    if (!force && epicsTimeDiffInSeconds(&now, &lastPublished_) <
                      getDouble(SpectrumPeriod))
        return;
    NDClusterCUDAFinder &finder = plugin_.finder;
    NDClusterCUDAModes &modes = plugin_.modes;
    finder.lock.lock();
    if (spectrum_ == NULL || hitmap_ == NULL) {
        finder.lock.unlock();
        return;
    }
    lastPublished_ = now;
    unpublished_ = false;
    char message[NDCC_MESSAGE_SIZE];
    if (takeCounts(message) != CC_OK)
        status("%s", message);
    if (modes.takeAnalog(message) != CC_OK)
        status("%s", message);
    NDArray *analog = modes.analogArray();
    const size_t pixels = (size_t)finder.rows * finder.cols;
    NDArray *hits =
        mapArray(finder.cols, finder.rows, NDUInt32,
                 hitmapWindowed_
                     ? "counting image (photons of the energy window a pixel)"
                     : "hit map (cluster centres a pixel)");
    if (hits != NULL)
        memcpy(hits->pData, cc_hitmap_counts(hitmap_),
               pixels * sizeof(uint32_t));
    uint32_t bins = cc_spectrum_bins(spectrum_);
    const uint64_t *counts = cc_spectrum_counts(spectrum_);
    for (uint32_t i = 0; i < bins; i++)
        counts_[i] = (double)counts[i];
    fitLine(bins);
    bool haveNoise = finder.finder != NULL &&
                     cc_finder_pedestal_maps(finder.finder, mean_, rms_) ==
                         CC_OK;
    cc_finder_stats stats;
    NDArray *maps[3] = {NULL, NULL, NULL};
    if (haveNoise && cc_finder_get_stats(finder.finder, &stats) == CC_OK &&
        stats.state == CC_PEDESTAL_READY)
        makeMaps(maps);
    if (haveNoise) {
        double noise = 0;
        for (size_t p = 0; p < pixels; p++)
            noise += rms_[p];
        plugin_.setDoubleParam(NoiseMean, noise / (double)pixels);
    }
    /* The waveforms' arrays are replaced under the finder lock. */
    plugin_.doCallbacksFloat64Array(counts_, bins, Spectrum, 0);
    plugin_.doCallbacksFloat64Array(centres_, bins, SpectrumX, 0);
    plugin_.doCallbacksFloat64Array(axis_, bins, SpectrumAxis, 0);
    plugin_.imaging.publishCalibration();
    NDArray *corrections[2];
    plugin_.corrections.publish(&corrections[0], &corrections[1]);
    plugin_.setDoubleParam(OutsideWindow, (double)cc_hitmap_outside(hitmap_));
    plugin_.setDoubleParam(modes.AnalogFrames, modes.analogFrames());
    finder.lock.unlock();
    /* Set last, so posted last: a client that saw it change reads this
     * publication's spectrum, peak and counts (Bluesky's trigger). */
    plugin_.setIntegerParam(Publications, getInt(Publications) + 1);
    plugin_.publishArray(hits, NDPluginClusterCUDA::ADDRESS_HITMAP);
    for (int i = 0; i < 3; i++)
        plugin_.publishArray(maps[i],
                             NDPluginClusterCUDA::ADDRESS_PEDESTAL + i);
    for (int i = 0; i < 2; i++)
        plugin_.publishArray(corrections[i],
                             NDPluginClusterCUDA::ADDRESS_COMMON_MODE + i);
    plugin_.publishArray(analog, NDPluginClusterCUDA::ADDRESS_ANALOG);
}

/* The pedestal's mean and rms maps (in mean_ and rms_) and the mask as
 * NDArrays for addresses 2 to 4 (finder lock held); an array the pool
 * cannot give is left NULL. */
void NDClusterCUDAOutputs::makeMaps(NDArray *maps[3])
{
    static const char *const names[3] = {"pedestal mean (ADU)",
                                         "pedestal noise rms (ADU)",
                                         "bad-pixel mask (1 = masked)"};
    const NDClusterCUDAFinder &finder = plugin_.finder;
    const size_t pixels = (size_t)finder.rows * finder.cols;
    for (int i = 0; i < 3; i++) {
        maps[i] = mapArray(finder.cols, finder.rows,
                           i < 2 ? NDFloat32 : NDUInt8, names[i]);
        if (maps[i] == NULL)
            continue;
        if (i < 2) {
            const double *from = i == 0 ? mean_ : rms_;
            float *to = (float *)maps[i]->pData;
            for (size_t p = 0; p < pixels; p++)
                to[p] = (float)from[p];
        } else if (cc_finder_get_mask(finder.finder,
                                      (uint8_t *)maps[i]->pData) != CC_OK) {
            maps[i]->release();
            maps[i] = NULL;
        }
    }
}
