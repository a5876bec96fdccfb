/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAPipeline.cpp: the batch pipeline behind processCallbacks.
 * The processing thread hands batches of held arrays over; the finder
 * thread makes one core call a batch, in order; output threads take the
 * batches in turn and publish them in order. Batch k lives in slot
 * k % batchSlots_ from the moment it is filled until it is published.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include <epicsThread.h>

#include "NDPluginClusterCUDA.h"

/* What an output thread starts with. */
struct OutputStart {
    NDPluginClusterCUDA *plugin;
    unsigned index;
};

static void publisherTaskC(void *plugin)
{
    static_cast<NDPluginClusterCUDA *>(plugin)->publisherTask();
}

static void finderTaskC(void *plugin)
{
    static_cast<NDPluginClusterCUDA *>(plugin)->finderTask();
}

static void outputTaskC(void *start)
{
    OutputStart *output = static_cast<OutputStart *>(start);
    output->plugin->outputTask(output->index);
}

/* Starts the publisher, the finder and the output threads (constructor).
 * Without the finder or an output thread, batches are worked inline. */
void NDPluginClusterCUDA::startThreads(const char *portName)
{
    /* For the tests only: output thread 0 late with every batch, so that
     * the others would overtake it were the publish turn not awaited. */
    const char *delay = getenv("NDCLUSTERCUDA_OUTPUT0_DELAY_MS");
    output0Delay_ = delay != NULL ? atof(delay) / 1000 : 0;
    if (output0Delay_ > 0)
        printf("%s: NDCLUSTERCUDA_OUTPUT0_DELAY_MS: output thread 0 waits "
               "%g ms before each of its publish turns (a test's hook)\n",
               portName, output0Delay_ * 1000);
    if (epicsThreadCreate("NDClusterCUDAPublish", epicsThreadPriorityLow,
                          epicsThreadGetStackSize(epicsThreadStackMedium),
                          publisherTaskC, this) == NULL)
        setStatus("could not start the publisher thread: spectra are "
                  "published with frames only");
    /* Named after the port, so that a benchmark can find their CPU time;
     * as urgent as the processing thread, which feeds them. */
    char name[64];
    epicsSnprintf(name, sizeof name, "%s_Finder", portName);
    if (epicsThreadCreate(name, epicsThreadPriorityMedium,
                          epicsThreadGetStackSize(epicsThreadStackMedium),
                          finderTaskC, this) == NULL)
        threadsMissing_ = true;
    for (unsigned i = 0; i < outputThreads_; i++) {
        epicsSnprintf(name, sizeof name, "%s_Out%u", portName, i);
        OutputStart *start = new OutputStart; /* the thread's, for good */
        start->plugin = this;
        start->index = i;
        if (epicsThreadCreate(name, epicsThreadPriorityMedium,
                              epicsThreadGetStackSize(epicsThreadStackMedium),
                              outputTaskC, start) == NULL) {
            delete start;
            threadsMissing_ = true;
        }
    }
}

/* snprintf for messages to people, which may end cut short. */
void NDPluginClusterCUDA::formatMessage(char *message, size_t size,
                                        const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(message, size, format, args);
    va_end(args);
}

/* Adds more (unless empty) to message, NDCC_MESSAGE_SIZE bytes, after a
 * "; " when message holds something already. */
void NDPluginClusterCUDA::appendMessage(char *message, const char *more)
{
    size_t used = strlen(message);
    if (more[0] != '\0')
        formatMessage(message + used, NDCC_MESSAGE_SIZE - used, "%s%s",
                      used > 0 ? "; " : "", more);
}

void NDPluginClusterCUDA::releaseArrays(std::vector<NDArray *> &arrays)
{
    for (size_t k = 0; k < arrays.size(); k++)
        arrays[k]->release();
    arrays.clear();
}

/* Creates the finder, or reconfigures it (finder lock held, port not:
 * what to tell the user goes into message, NDCC_MESSAGE_SIZE bytes). */
int NDPluginClusterCUDA::applyConfig(const cc_config &config, bool newFrameSize,
                                     char *message)
{
    if (finder_ == NULL)
        return cc_finder_new(&finder_, &config, message);
    int rc = cc_finder_set_config(finder_, &config);
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE, "%s", cc_finder_last_error(finder_));
    else if (newFrameSize)
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "frame size changed to %u x %u: the pedestal is reset",
                 config.cols, config.rows);
    return rc;
}

/* Hands the held arrays, with what the PVs ask now, to the finder thread
 * as one batch (port locked; it is unlocked while a batch slot is waited
 * for). Without the finder and output threads (blocking callbacks, or
 * they could not start) every batch out is published first, and this
 * one is worked and published here. */
void NDPluginClusterCUDA::processHeld()
{
    int blocking;
    getIntegerParam(NDPluginDriverBlockingCallbacks, &blocking);
    Job job;
    int cols = (int)held_[0]->dims[0].size, rows = (int)held_[0]->dims[1].size;
    frameRows_ = rows;
    frameCols_ = cols;
    job.config = wantedConfig(rows, cols);
    getIntegerParam(ClusterMaxClusters, &job.maxClusters);
    getIntegerParam(ClusterSpectrumEnergy, &job.energy);
    getIntegerParam(ClusterSpectrumBins, &job.bins);
    getDoubleParam(ClusterSpectrumMin, &job.min);
    getDoubleParam(ClusterSpectrumMax, &job.max);
    job.settingsChanged = settingsChanged_;
    job.spectrumChanged = spectrumChanged_;
    job.windowChanged = windowChanged_;
    settingsChanged_ = spectrumChanged_ = windowChanged_ = false;
    /* The IOC's first frame: with LoadFilesAtStart, the pedestal and the
     * mask saved before a restart (PedestalFile and MaskFile, as autosave
     * restored them) are loaded before it, as a LoadPedestal and a
     * LoadMask asked then would be. An empty MaskFile loads nothing: it
     * would clear the mask saved with the pedestal. */
    if (!framesSeen_) {
        framesSeen_ = true;
        int atStart;
        getIntegerParam(ClusterLoadFilesAtStart, &atStart);
        auto named = [this](int file) {
            char path[512];
            getStringParam(file, sizeof path, path);
            return path[0] != '\0';
        };
        if (atStart) {
            pendingLoad_ = pendingLoad_ || named(ClusterPedestalFile);
            pendingMask_ = pendingMask_ || named(ClusterMaskFile);
        }
    }
    /* A LoadPedestal asked for before the frame size was known (as after
     * an IOC restart) is done now, before these frames. */
    job.load = pendingLoad_;
    pendingLoad_ = false;
    job.loadPath[0] = '\0';
    if (job.load)
        getStringParam(ClusterPedestalFile, sizeof job.loadPath, job.loadPath);
    /* The same for a LoadMask, after the pedestal (which brings a mask of
     * its own). */
    job.loadMask = pendingMask_;
    pendingMask_ = false;
    job.maskPath[0] = '\0';
    if (job.loadMask)
        getStringParam(ClusterMaskFile, sizeof job.maskPath, job.maskPath);
    job.imaging = wantedImaging(job.config);
    job.gain = wantedGain(rows, cols);
    getIntegerParam(ClusterFrameMode, &job.frameMode);
    int detectorMode;
    getIntegerParam(ClusterDetectorMode, &detectorMode);
    job.analog = detectorMode == DETECTOR_MODE_ANALOG;
    job.newPedestal = newPedestalPending_;
    newPedestalPending_ = false;

    bool publishHere = blocking || threadsMissing_;
    this->unlock();
    Batch &batch = emptyBatch(publishHere);
    batch.job = job;
    batch.arrays.swap(held_); /* held_ is this thread's alone */
    if (publishHere) {
        runFinder(batch);
        prepareBatch(batch, accumulators_[0]);
        this->lock();
        publishBatch(batch);
    } else {
        handOver();
        this->lock();
    }
    callParamCallbacks();
}

/* Trains on, or finds the clusters of, a batch's arrays in one core call,
 * after any reconfiguration its job asks for (finder thread, or the
 * processing thread without one; port unlocked). What the user is to be
 * told waits in the batch for reportBatch. */
void NDPluginClusterCUDA::runFinder(Batch &batch)
{
    const Job &job = batch.job;
    const size_t n = batch.arrays.size();
    int rows = (int)job.config.rows, cols = (int)job.config.cols;
    finderLock_.lock();
    batch.message[0] = '\0';
    batch.backend.clear();
    batch.newFrameSize = rows != rows_ || cols != cols_;
    bool reconfigure = job.settingsChanged || batch.newFrameSize ||
                       finder_ == NULL;
    int rc = CC_OK;
    if (batch.newFrameSize) { /* its image, spectra and hit map are of one
                                 size */
        stopImaging();
        takeGainSpectra(true, NULL);
        stopCounting();
        stopAnalog();
    }
    if (reconfigure)
        rc = applyConfig(job.config, batch.newFrameSize && finder_ != NULL,
                         batch.message);
    if (rc == CC_OK && (job.spectrumChanged || batch.newFrameSize))
        rc = prepareAccumulators(rows, cols, job.energy, job.bins, job.min,
                                 job.max, batch.message);
    if (rc == CC_OK) {
        rows_ = rows;
        cols_ = cols;
    }
    /* What the loads and imaging did is added to the message, so that
     * the status after a restart says what came back. */
    char step[NDCC_MESSAGE_SIZE];
    if (rc == CC_OK &&
        (job.windowChanged || job.spectrumChanged || batch.newFrameSize) &&
        applyWindow(job, step) != CC_OK)
        appendMessage(batch.message, step); /* the frames are found still */
    if (rc == CC_OK && job.load) {
        /* A refused file keeps the pedestal (these frames then train a
         * new one): the frames are not lost. */
        if (cc_finder_load_pedestal(finder_, job.loadPath) == CC_OK)
            formatMessage(step, sizeof step, "pedestal loaded from %s",
                          job.loadPath);
        else
            formatMessage(step, sizeof step,
                          "%s; the pedestal in force is kept",
                          cc_finder_last_error(finder_));
        appendMessage(batch.message, step);
    }
    if (rc == CC_OK && job.loadMask) { /* a refused file keeps the mask */
        loadMask(job.maskPath, step);
        appendMessage(batch.message, step);
    }
    if (rc == CC_OK) {
        step[0] = '\0';
        applyGain(job.gain, batch.newFrameSize, step);
        appendMessage(batch.message, step);
        step[0] = '\0';
        applyImaging(job.imaging, step);
        appendMessage(batch.message, step);
        step[0] = '\0';
        applyAnalog(job.analog, step);
        appendMessage(batch.message, step);
    }
    if (reconfigure && finder_ != NULL)
        batch.backend = cc_finder_backend_description(finder_);
    batch.trained = 0;
    batch.found = 0;
    batch.finderTime = -1;
    if (rc == CC_OK) {
        epicsTimeStamp start, end;
        epicsTimeGetCurrent(&start);
        cc_finder_get_stats(finder_, &batch.stats);
        if (job.frameMode != FRAME_MODE_FRAME || job.newPedestal)
            rc = runPedestalFrames(batch);
        /* Dark frames first while training; once the pedestal is ready
         * the rest go to the finder together. */
        while (rc == CC_OK && batch.trained < n &&
               batch.stats.state == CC_PEDESTAL_TRAINING) {
            rc = cc_finder_train(
                finder_, (const uint16_t *)batch.arrays[batch.trained]->pData,
                1);
            if (rc == CC_OK)
                batch.trained++;
            cc_finder_get_stats(finder_, &batch.stats);
        }
        /* The pixels without noise, once training is done: the status
         * says how many (reportBatch). */
        batch.noiseless = 0;
        if (batch.trained > 0 && batch.stats.state == CC_PEDESTAL_READY &&
            cc_finder_pedestal_maps(finder_, NULL, rms_) == CC_OK)
            batch.noiseless = (size_t)std::count(
                rms_, rms_ + (size_t)rows * cols, 0.0);
        /* The pointer and number lists are the finder thread's (or,
         * without it, the processing thread's). */
        finderFrames_.clear();
        finderNumbers_.clear();
        for (size_t k = batch.trained; rc == CC_OK && k < n; k++) {
            finderFrames_.push_back((const uint16_t *)batch.arrays[k]->pData);
            finderNumbers_.push_back((uint64_t)batch.arrays[k]->uniqueId);
        }
        if (!finderFrames_.empty()) {
            cc_backend before = cc_finder_backend(finder_);
            rc = cc_finder_process_list(finder_, finderFrames_.data(),
                                        finderNumbers_.data(),
                                        finderFrames_.size(), batch.clusters);
            if (rc == CC_OK)
                batch.found = finderFrames_.size();
            /* The GPU failed and the finder moved to the CPU (having done
             * the batch again, or to train again): Backend_RBV and the
             * status say so. */
            if (cc_finder_backend(finder_) != before) {
                batch.backend = cc_finder_backend_description(finder_);
                snprintf(batch.message, sizeof batch.message, "%s",
                         cc_finder_last_error(finder_));
            }
        }
        epicsTimeGetCurrent(&end);
        batch.finderTime =
            epicsTimeDiffInSeconds(&end, &start) * 1e3 / (double)n;
        if (rc != CC_OK)
            snprintf(batch.message, sizeof batch.message, "%s",
                     cc_finder_last_error(finder_));
        cc_finder_get_stats(finder_, &batch.stats);
    }
    finderLock_.unlock();
    batch.rc = rc;
    if (rc != CC_OK && n > 1 && batch.trained + batch.found < n) {
        /* Say how many arrays the failure cost, not only why. */
        size_t used = strlen(batch.message);
        snprintf(batch.message + used, sizeof batch.message - used,
                 " (%zu of %zu arrays not processed)",
                 n - batch.trained - batch.found, n);
    }
}

/* Tells the user what the finder made of a batch (port locked). */
void NDPluginClusterCUDA::reportBatch(const Batch &batch)
{
    const cc_finder_stats &stats = batch.stats;
    if (batch.message[0] != '\0')
        setStatus("%s", batch.message);
    if (batch.finderTime >= 0)
        setDoubleParam(ClusterFinderTime, batch.finderTime);
    setIntegerParam(ClusterLastBatch, (int)batch.arrays.size());
    if (batch.newFrameSize && batch.rc == CC_OK && batch.message[0] != '\0')
        formatMessage(trainingNote_, sizeof trainingNote_, " (%s)",
                      batch.message);
    if (!batch.backend.empty())
        setStringParam(ClusterBackendInUse, batch.backend.c_str());
    if (batch.trained + batch.found == 0)
        return;
    setIntegerParam(ClusterPedestalState, stats.state);
    setIntegerParam(ClusterPedestalCount, (int)stats.frames_trained);
    setIntegerParam(ClusterMaskedPixels, (int)stats.masked_pixels);
    setDoubleParam(ClusterTotalClusters, (double)stats.clusters);
    setDoubleParam(ClusterDroppedClusters, (double)stats.clusters_dropped);
    if (batch.rc != CC_OK || batch.message[0] != '\0')
        return;
    if (batch.job.frameMode != FRAME_MODE_FRAME &&
        stats.state == CC_PEDESTAL_READY && stats.frames_pedestal > 0) {
        setStatus("FrameMode %s: %llu frames have updated the pedestal since "
                  "it was ready; nothing is found",
                  batch.job.frameMode == FRAME_MODE_PEDESTAL ? "Pedestal"
                                                             : "NewPedestal",
                  (unsigned long long)stats.frames_pedestal);
        trainingNote_[0] = '\0';
    } else if (batch.trained > 0 && stats.state == CC_PEDESTAL_READY) {
        size_t pixels = (size_t)batch.job.config.rows * batch.job.config.cols;
        /* Without noise every change is a photon, and no change none:
         * say so, or a test pattern's empty results look like a fault. */
        if (batch.noiseless == pixels)
            setStatus("pedestal ready after %u dark frames, but its noise "
                      "is 0 in every pixel: the frames never changed (a "
                      "test pattern?); frames like them give no clusters",
                      stats.pedestal_window);
        else if (batch.noiseless > 0)
            setStatus("pedestal ready after %u dark frames; its noise is 0 "
                      "in %zu of %zu pixels, which never changed: any "
                      "change there is a cluster",
                      stats.pedestal_window, batch.noiseless, pixels);
        else
            setStatus("pedestal ready after %u dark frames",
                      stats.pedestal_window);
        trainingNote_[0] = '\0';
    } else if (batch.found == 0) {
        setStatus("training the pedestal: %u of %u dark frames%s",
                  (unsigned)stats.frames_trained, stats.pedestal_window,
                  trainingNote_);
    }
}

/* Waits on event until ready(), which is tested with batchLock_ held. */
template <typename Ready>
void NDPluginClusterCUDA::awaitBatches(epicsEvent &event, Ready ready)
{
    batchLock_.lock();
    while (!ready()) {
        batchLock_.unlock();
        event.wait();
        batchLock_.lock();
    }
    batchLock_.unlock();
}

/* The batch the processing thread fills next, once it is free (and,
 * when `all`, once every batch handed over is out), port unlocked. */
NDPluginClusterCUDA::Batch &NDPluginClusterCUDA::emptyBatch(bool all)
{
    uint64_t most = all ? 1 : batchSlots_;
    awaitBatches(batchEmptied_,
                 [&] { return handedOver_ - published_ < most; });
    /* handedOver_ changes only on this thread. */
    return batches_[handedOver_ % batchSlots_];
}

/* Gives the batch emptyBatch() returned to the finder thread. */
void NDPluginClusterCUDA::handOver()
{
    batchLock_.lock();
    handedOver_++;
    batchLock_.unlock();
    batchHandedOver_.signal();
}

void NDPluginClusterCUDA::finderTask()
{
    for (uint64_t number = 0;; number++) {
        Batch &batch = batches_[number % batchSlots_];
        awaitBatches(batchHandedOver_, [&] { return handedOver_ > number; });
        runFinder(batch);
        batchLock_.lock();
        found_++;
        batchLock_.unlock();
        batchFound_[number % outputThreads_].signal();
    }
}

void NDPluginClusterCUDA::outputTask(unsigned index)
{
    for (uint64_t number = index;; number += outputThreads_) {
        Batch &batch = batches_[number % batchSlots_];
        awaitBatches(batchFound_[index], [&] { return found_ > number; });
        prepareBatch(batch, accumulators_[index]);
        if (index == 0 && output0Delay_ > 0)
            epicsThreadSleep(output0Delay_);
        /* Arrays leave in order: after the batch before. */
        awaitBatches(publishTurn_[index],
                     [&] { return published_ == number; });
        lock();
        publishBatch(batch);
        callParamCallbacks();
        unlock();
        batchLock_.lock();
        published_++;
        batchLock_.unlock();
        publishTurn_[(index + 1) % outputThreads_].signal();
        batchEmptied_.signal();
    }
}

/* Fills a batch's cluster arrays and, when calibrating η, adds its
 * clusters to one part of the calibration (its counts do not depend on
 * the order batches come in), port unlocked. The spectrum and hit map
 * are the finder's to count (applyWindow). */
void NDPluginClusterCUDA::prepareBatch(Batch &batch, Accumulator &accumulator)
{
    batch.outputs.clear();
    for (size_t i = 0; i < batch.found; i++) {
        cc_frame_clusters frame;
        cc_clusters_frame(batch.clusters, i, &frame);
        batch.outputs.push_back(clusterArray(accumulator.clusterPool,
                                             batch.arrays[batch.trained + i],
                                             frame, batch.job.maxClusters));
        accumulator.lock.lock(); /* the calibration is swapped under it */
        if (accumulator.calibration != NULL)
            cc_eta_calibration_add_frame(accumulator.calibration, &frame);
        accumulator.lock.unlock();
    }
}

/* Reports and publishes a prepared batch's cluster arrays and releases
 * its inputs (port locked). */
void NDPluginClusterCUDA::publishBatch(Batch &batch)
{
    /* Arrays count as through the plugin when their results are out, so
     * that ArrayCounter_RBV and TotalClusters_RBV agree. ArrayCounter
     * counts every array, but the other input parameters (UniqueId,
     * timestamps, dimensions) are set once, from the last, which is also
     * the one ProcessPlugin hands over again: their callbacks, per
     * array, cost more than the finder. */
    int counter;
    getIntegerParam(NDArrayCounter, &counter);
    setIntegerParam(NDArrayCounter, counter + (int)batch.arrays.size() - 1);
    NDPluginDriver::beginProcessCallbacks(batch.arrays.back());
    reportBatch(batch);
    if (batch.found > 0) {
        cc_frame_clusters last;
        cc_clusters_frame(batch.clusters, batch.found - 1, &last);
        /* Found, stored or not: DroppedClusters_RBV says how many the
         * cap kept out of the array. */
        setIntegerParam(ClusterNumClusters, (int)(last.count + last.dropped));
    }
    for (size_t i = 0; i < batch.outputs.size(); i++) {
        if (batch.outputs[i] != NULL)
            NDPluginDriver::endProcessCallbacks(batch.outputs[i], false, true);
        else
            setStatus("no NDArray for the clusters: the pool is exhausted");
    }
    releaseArrays(batch.arrays);
    unpublished_ = imageUnpublished_ = true;
    publishSlow(false);
}
