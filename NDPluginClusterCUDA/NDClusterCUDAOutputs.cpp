/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAOutputs.cpp: the NDArrays and waveforms the plugin makes:
 * each frame's cluster array (address 0), and the spectrum, the hit map
 * (address 1), the pedestal's maps (2 to 4), the interpolated image (5)
 * and the corrections' maps (6, 7), summed over the output threads' parts and published every
 * SpectrumPeriod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include <epicsThread.h>

#include "NDPluginClusterCUDA.h"

void NDPluginClusterCUDA::publisherTask()
{
    for (;;) {
        double period;
        lock();
        getDoubleParam(ClusterSpectrumPeriod, &period);
        bool force = publishWanted_;
        publishWanted_ = false;
        if (unpublished_ || force) {
            publishSlow(force);
            callParamCallbacks();
        }
        unlock();
        publishImage(force, period);
        publishNow_.wait(period > 0.05 ? period / 2 : 0.05);
    }
}

/* The finder counts no more; what it counted since the last take is
 * dropped with the spectrum or hit map it was for (finder lock held). */
void NDPluginClusterCUDA::stopCounting()
{
    if (counting_)
        cc_finder_set_tally(finder_, NULL, NULL);
    counting_ = false;
}

/* Adds what the finder counted since the last take to the spectrum and
 * hit map (finder lock held; message: NDCC_MESSAGE_SIZE bytes). */
int NDPluginClusterCUDA::takeCounts(char *message)
{
    int rc = counting_ ? cc_finder_take_tally(finder_, spectrum_, hitmap_)
                       : CC_OK;
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "the spectrum and hit map could not be taken: %s",
                 cc_finder_last_error(finder_));
    return rc;
}

/* A spectrum as asked and, for a new frame size, a hit map (finder lock
 * held, port not); applyWindow then has the finder count into them. */
int NDPluginClusterCUDA::prepareAccumulators(int rows, int cols, int energy,
                                             int bins, double min, double max,
                                             char *message)
{
    bool newHitmap = rows != rows_ || cols != cols_ || hitmap_ == NULL;
    cc_spectrum *spectrum = NULL;
    cc_hitmap *hitmap = NULL;
    double *counts = NULL, *centres = NULL, *axis = NULL, *rms = NULL,
           *mean = NULL;
    int rc = bins > 0 ? cc_spectrum_new(&spectrum, (cc_energy)energy,
                                        (uint32_t)bins, min, max)
                      : CC_EINVAL;
    if (rc != CC_OK) {
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "spectrum settings refused: %d bins on [%g, %g)", bins, min,
                 max);
    } else {
        counts = (double *)calloc((size_t)bins, sizeof *counts);
        centres = (double *)calloc((size_t)bins, sizeof *centres);
        axis = (double *)calloc((size_t)bins, sizeof *axis);
        if (newHitmap) {
            rms = (double *)malloc((size_t)rows * cols * sizeof *rms);
            mean = (double *)malloc((size_t)rows * cols * sizeof *mean);
        }
        rc = counts != NULL && centres != NULL && axis != NULL &&
                     ((rms != NULL && mean != NULL) || !newHitmap)
                 ? CC_OK
                 : CC_ENOMEM;
        if (rc == CC_OK && newHitmap)
            rc = cc_hitmap_new(&hitmap, (uint32_t)rows, (uint32_t)cols);
        if (rc != CC_OK)
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "out of memory for the spectrum and hit map");
    }
    if (rc != CC_OK) {
        cc_spectrum_destroy(spectrum);
        free(counts);
        free(centres);
        free(axis);
        free(rms);
        free(mean);
        return rc;
    }
    for (int i = 0; i < bins; i++)
        centres[i] = 0.5 * (cc_spectrum_edge(spectrum, (uint32_t)i) +
                            cc_spectrum_edge(spectrum, (uint32_t)i + 1));
    stopCounting();
    free(spectrumCounts_);
    free(spectrumCentres_);
    free(spectrumAxis_);
    spectrumCounts_ = counts;
    spectrumCentres_ = centres;
    spectrumAxis_ = axis;
    cc_spectrum_destroy(spectrum_);
    spectrum_ = spectrum;
    if (newHitmap) {
        free(rms_);
        free(mean_);
        rms_ = rms;
        mean_ = mean;
        cc_hitmap_destroy(hitmap_);
        hitmap_ = hitmap;
    }
    return CC_OK;
}

/* An array of the plugin's pool for one of its maps (addresses 1 to 7),
 * of cols x rows, its attributes only a Map saying what it holds (a pool
 * gives back arrays with the attributes of their last use), its uniqueId
 * the next of the maps' own numbering, so that a viewer sees a new array
 * (the pool has its own lock). NULL when the pool is exhausted. */
NDArray *NDPluginClusterCUDA::mapArray(size_t cols, size_t rows,
                                       NDDataType_t type, const char *map)
{
    size_t dims[2] = {cols, rows};
    NDArray *array = outputPool_->alloc(2, dims, type, 0, NULL);
    if (array == NULL)
        return NULL;
    array->uniqueId = ++mapArrays_;
    array->pAttributeList->clear();
    array->pAttributeList->add("Map", "what the array holds", NDAttrString,
                               (void *)map);
    return array;
}

/* The frame's clusters as NDInt32 [2 + Nx*Ny, maxClusters], zero padded
 * (port unlocked: the pool has its own lock). */
NDArray *NDPluginClusterCUDA::clusterArray(NDArrayPool *pool,
                                           NDArray *pInput,
                                           const cc_frame_clusters &frame,
                                           int maxClusters)
{
    size_t cells = (size_t)frame.size_x * frame.size_y;
    size_t dims[2] = {2 + cells, (size_t)(maxClusters > 0 ? maxClusters : 1)};
    NDArray *pOut = pool->alloc(2, dims, NDInt32, 0, NULL);
    if (pOut == NULL)
        return NULL;
    epicsInt32 *row = (epicsInt32 *)pOut->pData;
    size_t rows = frame.count < dims[1] ? frame.count : dims[1];
    /* A plain loop: a call to memcpy for each short row costs more than
     * the copy. (Stores that bypass the cache were slower on the H200's
     * host: docs/benchmarks.md.) */
    const int32_t *values = frame.values;
    for (size_t i = 0; i < rows; i++) {
        row[0] = frame.x[i];
        row[1] = frame.y[i];
        for (size_t c = 0; c < cells; c++)
            row[2 + c] = values[c];
        values += cells;
        row += dims[0];
    }
    /* Only the padding is cleared: the array is written once. */
    memset(row, 0, (dims[1] - rows) * dims[0] * sizeof *row);
    pOut->uniqueId = pInput->uniqueId;
    pOut->timeStamp = pInput->timeStamp;
    pOut->epicsTS = pInput->epicsTS;
    epicsInt32 count = (epicsInt32)frame.count;
    epicsInt32 dropped = (epicsInt32)frame.dropped;
    pOut->pAttributeList->add("NumClusters", "clusters stored in this array",
                              NDAttrInt32, &count);
    pOut->pAttributeList->add("DroppedClusters",
                              "clusters found beyond MaxClusters",
                              NDAttrInt32, &dropped);
    return pOut;
}

/* The hit map counts from now on the photons of the job's window, or
 * every cluster, and starts again from empty: a counting image of two
 * windows would mean neither. The finder counts into the spectrum and
 * the hit map from now on (finder lock held; message: why not). */
int NDPluginClusterCUDA::applyWindow(const Job &job, char *message)
{
    const Imaging &asked = job.imaging;
    int rc = takeCounts(message); /* the spectrum keeps them */
    stopCounting();
    /* Checked when written; the spectrum's energy is checked too. */
    cc_hitmap_set_window(hitmap_, asked.windowed ? &asked.window : NULL);
    hitmapWindowed_ = asked.windowed;
    cc_hitmap_reset(hitmap_);
    int counted = cc_finder_set_tally(finder_, spectrum_, hitmap_);
    counting_ = counted == CC_OK;
    if (!counting_)
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "the spectrum and hit map count nothing: %s",
                 cc_finder_last_error(finder_));
    return rc != CC_OK ? rc : counted;
}

/* Spectrum, hit map and maps, at most once per SpectrumPeriod unless
 * forced (Publish), port locked; takes the finder and the accumulator
 * locks. The output threads' parts are summed. */
void NDPluginClusterCUDA::publishSlow(bool force)
{
    double period;
    getDoubleParam(ClusterSpectrumPeriod, &period);
    epicsTimeStamp now;
    epicsTimeGetCurrent(&now);
    if (!force && epicsTimeDiffInSeconds(&now, &lastPublished_) < period)
        return;
    finderLock_.lock();
    if (spectrum_ == NULL || hitmap_ == NULL) {
        finderLock_.unlock();
        return;
    }
    lastPublished_ = now;
    unpublished_ = false;
    char message[NDCC_MESSAGE_SIZE];
    if (takeCounts(message) != CC_OK)
        setStatus("%s", message);
    if (takeAnalog(message) != CC_OK)
        setStatus("%s", message);
    NDArray *analog = analogArray();
    const double analogFrames = (double)analogFrames_;
    size_t pixels = (size_t)rows_ * cols_;
    NDArray *pHits = mapArray(
        cols_, rows_, NDUInt32,
        hitmapWindowed_
            ? "counting image (photons of the energy window a pixel)"
            : "hit map (cluster centres a pixel)");
    if (pHits != NULL)
        memcpy(pHits->pData, cc_hitmap_counts(hitmap_),
               pixels * sizeof(uint32_t));
    uint32_t bins = cc_spectrum_bins(spectrum_);
    const uint64_t *counts = cc_spectrum_counts(spectrum_);
    for (uint32_t i = 0; i < bins; i++)
        spectrumCounts_[i] = (double)counts[i];
    uint64_t outside = cc_hitmap_outside(hitmap_);
    /* The line of the summed spectrum (docs/spec.md §4.7). */
    double low, high;
    getDoubleParam(ClusterPeakLow, &low);
    getDoubleParam(ClusterPeakHigh, &high);
    cc_peak peak = {};
    bool fitted = cc_fit_peak(spectrumCounts_, spectrumCentres_, bins, low,
                              high, &peak) == CC_OK;
    const double results[PEAK_RESULTS] = {
        peak.position, peak.sigma,  peak.fwhm,
        peak.resolution, peak.counts, peak.chi2_per_dof};
    for (int i = 0; i < PEAK_RESULTS; i++)
        setDoubleParam(ClusterPeakResult[i], fitted ? results[i] : 0);
    setIntegerParam(ClusterPeakFitted, fitted);
    /* In keV too, with a gain: the screens' axis. */
    double gain;
    getDoubleParam(ClusterAduPerKeV, &gain);
    const double perUnit = gain > 0 ? gain : 1;
    for (uint32_t i = 0; i < bins; i++)
        spectrumAxis_[i] = spectrumCentres_[i] / perUnit;
    /* With a map in ADU per keV applied, clusters are in eV. */
    cc_gain_unit unit;
    const bool inEV = finder_ != NULL &&
                      cc_finder_get_gain(finder_, NULL, &unit) == CC_OK &&
                      unit == CC_GAIN_ADU_PER_KEV;
    setStringParam(ClusterSpectrumAxisUnit,
                   gain > 0 ? "keV" : inEV ? "eV" : "ADU");
    setDoubleParam(ClusterPeakPositionKeV,
                   fitted && gain > 0 ? peak.position / gain : 0);
    setDoubleParam(ClusterPeakFWHMKeV, fitted && gain > 0 ? peak.fwhm / gain : 0);
    double noise = 0;
    bool haveNoise = finder_ != NULL &&
                     cc_finder_pedestal_maps(finder_, mean_, rms_) == CC_OK;
    for (size_t p = 0; haveNoise && p < pixels; p++)
        noise += rms_[p];
    noise /= (double)pixels;
    cc_finder_stats stats;
    NDArray *maps[3] = {NULL, NULL, NULL};
    if (haveNoise && cc_finder_get_stats(finder_, &stats) == CC_OK &&
        stats.state == CC_PEDESTAL_READY)
        makeMaps(maps);
    /* The waveforms' arrays are replaced under the finder lock. */
    doCallbacksFloat64Array(spectrumCounts_, bins, ClusterSpectrum, 0);
    doCallbacksFloat64Array(spectrumCentres_, bins, ClusterSpectrumX, 0);
    doCallbacksFloat64Array(spectrumAxis_, bins, ClusterSpectrumAxis, 0);
    publishCalibration();
    NDArray *corrections[2];
    publishCorrections(&corrections[0], &corrections[1]);
    finderLock_.unlock();
    if (haveNoise)
        setDoubleParam(ClusterNoiseMean, noise);
    setDoubleParam(ClusterOutsideWindow, (double)outside);
    setDoubleParam(ClusterAnalogFrames, analogFrames);
    /* Set last, so posted last: a client that saw it change reads this
     * publication's spectrum, peak and counts (Bluesky's trigger). */
    int publications;
    getIntegerParam(ClusterPublications, &publications);
    setIntegerParam(ClusterPublications, publications + 1);
    if (pHits != NULL) {
        getTimeStamp(&pHits->epicsTS);
        doCallbacksGenericPointer(pHits, NDArrayData, ADDRESS_HITMAP);
        pHits->release();
    }
    auto publish = [this](NDArray *array, int address) {
        if (array == NULL)
            return;
        getTimeStamp(&array->epicsTS);
        doCallbacksGenericPointer(array, NDArrayData, address);
        array->release();
    };
    for (int i = 0; i < 3; i++)
        publish(maps[i], ADDRESS_PEDESTAL + i);
    for (int i = 0; i < 2; i++)
        publish(corrections[i], ADDRESS_COMMON_MODE + i);
    publish(analog, ADDRESS_ANALOG);
}

/* The pedestal's mean and rms maps (in mean_ and rms_) and the mask as
 * NDArrays for addresses 2 to 4, each with a Map attribute saying what it
 * is (finder lock held); an array the pool cannot give is left NULL. */
void NDPluginClusterCUDA::makeMaps(NDArray *maps[3])
{
    static const char *const names[3] = {
        "pedestal mean (ADU)", "pedestal noise rms (ADU)",
        "bad-pixel mask (1 = masked)"};
    const size_t pixels = (size_t)rows_ * cols_;
    for (int i = 0; i < 3; i++) {
        maps[i] = mapArray(cols_, rows_, i < 2 ? NDFloat32 : NDUInt8,
                           names[i]);
        if (maps[i] == NULL)
            continue;
        if (i < 2) {
            const double *from = i == 0 ? mean_ : rms_;
            float *to = (float *)maps[i]->pData;
            for (size_t p = 0; p < pixels; p++)
                to[p] = (float)from[p];
        } else if (cc_finder_get_mask(finder_, (uint8_t *)maps[i]->pData) !=
                   CC_OK) {
            maps[i]->release();
            maps[i] = NULL;
        }
    }
}
