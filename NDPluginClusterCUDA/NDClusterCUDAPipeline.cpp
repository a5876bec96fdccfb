/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAPipeline.cpp: the batches behind processCallbacks
 * (NDClusterCUDAPipeline.h). The finder thread brings each part to what
 * the batch's job asks, between batches, then makes the core call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <epicsThread.h>

#include "NDPluginClusterCUDA.h"

static const char *driverName = "NDPluginClusterCUDA";

/* Held arrays come from the source's pool: a bound keeps the plugin from
 * taking all of it. */
static const int maxBatchLimit = 4096;

NDClusterCUDAPipeline::NDClusterCUDAPipeline(NDPluginClusterCUDA &plugin,
                                             size_t maxMemory,
                                             unsigned outputThreads)
    : NDClusterCUDAPart(plugin), outputThreads_(outputThreads),
      batchSlots_(2 * outputThreads + 2), handedOver_(0), found_(0),
      published_(0), threadsMissing_(false), output0Delay_(0)
{
    int32Param(ClusterMaxBatchString, &MaxBatch, 64,
               [this](asynUser *pasynUser, epicsInt32 &value) {
                   if (value < 1 || value > maxBatchLimit)
                       return refuse(pasynUser, "MaxBatch %d must be 1 to %d",
                                     value, maxBatchLimit);
                   return asynSuccess;
               });
    int32Param(ClusterLastBatchString, &LastBatch, 0);
    float64Param(ClusterFinderTimeString, &FinderTime, 0);
    int32Param(ClusterBadArraysString, &BadArrays, 0);
    for (unsigned i = 0; i < MAX_OUTPUT_THREADS; i++) {
        accumulators_[i].calibration = NULL;
        /* For the IOC's life, as arrays handed on may outlive the plugin. */
        accumulators_[i].clusterPool = i < outputThreads_
                                           ? new NDArrayPool(&plugin,
                                                             maxMemory /
                                                                 outputThreads_)
                                           : NULL;
    }
    for (unsigned b = 0; b < batchSlots_; b++) {
        batches_[b].trained = batches_[b].found = 0;
        if (cc_clusters_new(&batches_[b].clusters) != CC_OK)
            status("out of memory for the cluster lists");
    }
}

NDClusterCUDAPipeline::~NDClusterCUDAPipeline()
{
    releaseArrays(held_);
    for (unsigned b = 0; b < batchSlots_; b++) {
        releaseArrays(batches_[b].arrays);
        cc_clusters_destroy(batches_[b].clusters);
    }
    for (unsigned i = 0; i < MAX_OUTPUT_THREADS; i++)
        cc_eta_calibration_destroy(accumulators_[i].calibration);
}

/* What an output thread starts with. */
struct OutputStart {
    NDClusterCUDAPipeline *pipeline;
    unsigned index;
};

static void finderTaskC(void *pipeline)
{
    static_cast<NDClusterCUDAPipeline *>(pipeline)->finderTask();
}

static void outputTaskC(void *start)
{
    OutputStart *output = static_cast<OutputStart *>(start);
    output->pipeline->outputTask(output->index);
}

void NDClusterCUDAPipeline::startThreads(const char *portName)
{
    /* For the tests only: output thread 0 late with every batch, so that
     * the others would overtake it were the publish turn not awaited. */
    const char *delay = getenv("NDCLUSTERCUDA_OUTPUT0_DELAY_MS");
    output0Delay_ = delay != NULL ? atof(delay) / 1000 : 0;
    if (output0Delay_ > 0)
        printf("%s: NDCLUSTERCUDA_OUTPUT0_DELAY_MS: output thread 0 waits "
               "%g ms before each of its publish turns (a test's hook)\n",
               portName, output0Delay_ * 1000);
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
        start->pipeline = this;
        start->index = i;
        if (epicsThreadCreate(name, epicsThreadPriorityMedium,
                              epicsThreadGetStackSize(epicsThreadStackMedium),
                              outputTaskC, start) == NULL) {
            delete start;
            threadsMissing_ = true;
        }
    }
}

void NDClusterCUDAPipeline::releaseArrays(std::vector<NDArray *> &arrays)
{
    for (size_t k = 0; k < arrays.size(); k++)
        arrays[k]->release();
    arrays.clear();
}

void NDClusterCUDAPipeline::refuseArray(NDArray *pArray, const char *why)
{
    plugin_.setIntegerParam(BadArrays, getInt(BadArrays) + 1);
    status("array %d refused: %s", pArray->uniqueId, why);
    asynPrint(plugin_.pasynUserSelf, ASYN_TRACE_ERROR,
              "%s: array %d refused: %s\n", driverName, pArray->uniqueId, why);
    plugin_.callParamCallbacks();
}

void NDClusterCUDAPipeline::take(NDArray *pArray)
{
    /* A batch holds frames of one size. */
    if (!held_.empty() && (held_[0]->dims[0].size != pArray->dims[0].size ||
                           held_[0]->dims[1].size != pArray->dims[1].size))
        processHeld();
    int maxBatch = getInt(MaxBatch);
    if (held_.capacity() < (size_t)maxBatch)
        held_.reserve((size_t)maxBatch);
    pArray->reserve();
    held_.push_back(pArray);
    /* processTask read QueueFree just before this call: arrays still
     * queued will come next, so this one can wait for them. */
    bool moreQueued = !getInt(plugin_.NDPluginDriverBlockingCallbacks) &&
                      getInt(plugin_.NDPluginDriverQueueFree) <
                          getInt(plugin_.NDPluginDriverQueueSize);
    if (moreQueued && held_.size() < (size_t)maxBatch)
        return;
    processHeld();
}

/* Hands the held arrays, with what the PVs ask now, to the finder thread
 * as one batch (port locked; it is unlocked while a batch slot is waited
 * for). Without the finder and output threads (blocking callbacks, or
 * they could not start) every batch out is published first, and this
 * one is worked and published here. */
void NDClusterCUDAPipeline::processHeld()
{
    int cols = (int)held_[0]->dims[0].size, rows = (int)held_[0]->dims[1].size;
    Job job;
    job.finder = plugin_.finder.wanted(rows, cols);
    job.maxClusters = getInt(plugin_.finder.MaxClusters);
    job.outputs = plugin_.outputs.wanted();
    job.imaging = plugin_.imaging.wanted(rows, cols);
    job.gain = plugin_.corrections.wanted(rows, cols);
    job.modes = plugin_.modes.wanted();

    bool publishHere = getInt(plugin_.NDPluginDriverBlockingCallbacks) ||
                       threadsMissing_;
    plugin_.unlock();
    Batch &batch = emptyBatch(publishHere);
    batch.job = job;
    batch.arrays.swap(held_); /* held_ is this thread's alone */
    if (publishHere) {
        runFinder(batch);
        prepareBatch(batch, accumulators_[0]);
        plugin_.lock();
        publishBatch(batch);
    } else {
        handOver();
        plugin_.lock();
    }
    plugin_.callParamCallbacks();
}

/* Brings the finder and every part to what the batch's job asks (finder
 * lock held): CC_OK, or the finder cannot work the batch. What the loads
 * and parts did is added to the message, so that the status after a
 * restart says what came back. */
int NDClusterCUDAPipeline::prepareFinder(Batch &batch)
{
    const Job &job = batch.job;
    NDClusterCUDAFinder &finder = plugin_.finder;
    int rows = (int)job.finder.config.rows, cols = (int)job.finder.config.cols;
    batch.newFrameSize = rows != finder.rows || cols != finder.cols;
    bool reconfigure = job.finder.settingsChanged || batch.newFrameSize ||
                       finder.finder == NULL;
    if (batch.newFrameSize) { /* images, spectra and maps of one size */
        plugin_.imaging.stop();
        plugin_.corrections.takeGainSpectra(true, NULL);
        plugin_.outputs.stopCounting();
        plugin_.modes.stopAnalog();
    }
    int rc = CC_OK;
    if (reconfigure)
        rc = finder.configure(job.finder.config,
                              batch.newFrameSize && finder.finder != NULL,
                              batch.message);
    if (reconfigure && finder.finder != NULL)
        batch.backend = cc_finder_backend_description(finder.finder);
    if (rc == CC_OK && (job.outputs.spectrumChanged || batch.newFrameSize))
        rc = plugin_.outputs.prepare(rows, cols, job.outputs, batch.message);
    if (rc != CC_OK)
        return rc;
    finder.rows = rows;
    finder.cols = cols;
    char step[NDCC_MESSAGE_SIZE] = "";
    if ((job.outputs.windowChanged || job.outputs.spectrumChanged ||
         batch.newFrameSize) &&
        plugin_.outputs.applyWindow(job.imaging, step) != CC_OK)
        appendMessage(batch.message, step); /* the frames are found still */
    finder.load(job.finder, batch.message);
    step[0] = '\0';
    plugin_.corrections.apply(job.gain, batch.newFrameSize, step);
    appendMessage(batch.message, step);
    step[0] = '\0';
    plugin_.imaging.apply(job.imaging, step);
    appendMessage(batch.message, step);
    step[0] = '\0';
    plugin_.modes.applyAnalog(job.modes.analog, step);
    appendMessage(batch.message, step);
    return CC_OK;
}

/* The batch's pedestal frames, then dark frames while the pedestal
 * trains, then the rest in one core call (finder lock held). */
void NDClusterCUDAPipeline::findClusters(Batch &batch)
{
    cc_finder *finder = plugin_.finder.finder;
    const size_t n = batch.arrays.size();
    epicsTimeStamp start, end;
    epicsTimeGetCurrent(&start);
    cc_finder_get_stats(finder, &batch.stats);
    batch.rc = plugin_.modes.pedestalFrames(batch.job.modes, batch.arrays,
                                            &batch.trained, &batch.stats);
    while (batch.rc == CC_OK && batch.trained < n &&
           batch.stats.state == CC_PEDESTAL_TRAINING) {
        batch.rc = cc_finder_train(
            finder, (const uint16_t *)batch.arrays[batch.trained]->pData, 1);
        if (batch.rc == CC_OK)
            batch.trained++;
        cc_finder_get_stats(finder, &batch.stats);
    }
    /* The status says how many pixels are without noise (reportBatch). */
    if (batch.trained > 0 && batch.stats.state == CC_PEDESTAL_READY)
        batch.noiseless = plugin_.outputs.noiselessPixels();
    finderFrames_.clear();
    finderNumbers_.clear();
    for (size_t k = batch.trained; batch.rc == CC_OK && k < n; k++) {
        finderFrames_.push_back((const uint16_t *)batch.arrays[k]->pData);
        finderNumbers_.push_back((uint64_t)batch.arrays[k]->uniqueId);
    }
    if (!finderFrames_.empty()) {
        cc_backend before = cc_finder_backend(finder);
        batch.rc = cc_finder_process_list(finder, finderFrames_.data(),
                                          finderNumbers_.data(),
                                          finderFrames_.size(), batch.clusters);
        if (batch.rc == CC_OK)
            batch.found = finderFrames_.size();
        /* The GPU failed and the finder moved to the CPU (having done the
         * batch again, or to train again): BackendInUse and the status
         * say so. */
        if (cc_finder_backend(finder) != before) {
            batch.backend = cc_finder_backend_description(finder);
            formatMessage(batch.message, sizeof batch.message, "%s",
                          cc_finder_last_error(finder));
        }
    }
    epicsTimeGetCurrent(&end);
    batch.finderTime = epicsTimeDiffInSeconds(&end, &start) * 1e3 / (double)n;
    if (batch.rc != CC_OK)
        formatMessage(batch.message, sizeof batch.message, "%s",
                      cc_finder_last_error(finder));
    cc_finder_get_stats(finder, &batch.stats);
}

/* Trains on, or finds the clusters of, a batch's arrays (finder thread,
 * or the processing thread without one; port unlocked). What the user is
 * to be told waits in the batch for reportBatch. */
void NDClusterCUDAPipeline::runFinder(Batch &batch)
{
    const size_t n = batch.arrays.size();
    batch.message[0] = '\0';
    batch.backend.clear();
    batch.trained = batch.found = batch.noiseless = 0;
    batch.finderTime = -1;
    plugin_.finder.lock.lock();
    batch.rc = prepareFinder(batch);
    if (batch.rc == CC_OK)
        findClusters(batch);
    plugin_.finder.lock.unlock();
    if (batch.rc != CC_OK && n > 1 && batch.trained + batch.found < n) {
        /* Say how many arrays the failure cost, not only why. */
        char cost[64];
        formatMessage(cost, sizeof cost, "(%zu of %zu arrays not processed)",
                      n - batch.trained - batch.found, n);
        size_t used = strlen(batch.message);
        formatMessage(batch.message + used, sizeof batch.message - used, " %s",
                      cost);
    }
}

/* Tells the user what the finder made of a batch (port locked). */
void NDClusterCUDAPipeline::reportBatch(const Batch &batch)
{
    NDClusterCUDAFinder &finder = plugin_.finder;
    if (batch.message[0] != '\0')
        status("%s", batch.message);
    if (batch.finderTime >= 0)
        plugin_.setDoubleParam(FinderTime, batch.finderTime);
    plugin_.setIntegerParam(LastBatch, (int)batch.arrays.size());
    if (batch.newFrameSize && batch.rc == CC_OK && batch.message[0] != '\0')
        formatMessage(finder.trainingNote, sizeof finder.trainingNote, " (%s)",
                      batch.message);
    if (!batch.backend.empty())
        plugin_.setStringParam(finder.BackendInUse, batch.backend.c_str());
    if (batch.trained + batch.found == 0)
        return;
    finder.report(batch.stats);
    if (batch.rc == CC_OK && batch.message[0] == '\0')
        finder.reportTraining(batch.stats, batch.job.modes.frameMode,
                              batch.trained, batch.found, batch.noiseless,
                              (size_t)batch.job.finder.config.rows *
                                  batch.job.finder.config.cols);
}

/* Waits on event until ready(), which is tested with batchLock_ held. */
template <typename Ready>
void NDClusterCUDAPipeline::awaitBatches(epicsEvent &event, Ready ready)
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
NDClusterCUDAPipeline::Batch &NDClusterCUDAPipeline::emptyBatch(bool all)
{
    uint64_t most = all ? 1 : batchSlots_;
    awaitBatches(batchEmptied_,
                 [&] { return handedOver_ - published_ < most; });
    /* handedOver_ changes only on this thread. */
    return batches_[handedOver_ % batchSlots_];
}

/* Gives the batch emptyBatch() returned to the finder thread. */
void NDClusterCUDAPipeline::handOver()
{
    batchLock_.lock();
    handedOver_++;
    batchLock_.unlock();
    batchHandedOver_.signal();
}

/* The finder and output threads, and the core's CPU threads the finder
 * starts, share the CPUs with every other process, also where EPICS gives
 * the IOC's threads real-time priorities (cc_thread_share_cpus): a finder
 * that keeps every CPU busy (the CPU backend behind frames it cannot keep
 * up with) must not keep Channel Access, whose threads run at lower
 * real-time priorities, nor PSI's receiver beside the IOC, from the CPUs
 * for as long as frames come. */
void NDClusterCUDAPipeline::finderTask()
{
    cc_thread_share_cpus();
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

void NDClusterCUDAPipeline::outputTask(unsigned index)
{
    cc_thread_share_cpus();
    for (uint64_t number = index;; number += outputThreads_) {
        Batch &batch = batches_[number % batchSlots_];
        awaitBatches(batchFound_[index], [&] { return found_ > number; });
        prepareBatch(batch, accumulators_[index]);
        if (index == 0 && output0Delay_ > 0)
            epicsThreadSleep(output0Delay_);
        /* Arrays leave in order: after the batch before. */
        awaitBatches(publishTurn_[index], [&] { return published_ == number; });
        plugin_.lock();
        publishBatch(batch);
        plugin_.callParamCallbacks();
        plugin_.unlock();
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
 * are the finder's to count. */
void NDClusterCUDAPipeline::prepareBatch(Batch &batch, Accumulator &accumulator)
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

/* The frame's clusters as NDInt32 [2 + Nx*Ny, maxClusters], zero padded,
 * with the input's uniqueId and timestamps (port unlocked: the pool has
 * its own lock). */
NDArray *NDClusterCUDAPipeline::clusterArray(NDArrayPool *pool, NDArray *pInput,
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
                              "clusters found beyond MaxClusters", NDAttrInt32,
                              &dropped);
    return pOut;
}

/* Reports and publishes a prepared batch's cluster arrays and releases
 * its inputs (port locked). */
void NDClusterCUDAPipeline::publishBatch(Batch &batch)
{
    /* Arrays count as through the plugin when their results are out, so
     * that ArrayCounter_RBV and TotalClusters_RBV agree. ArrayCounter
     * counts every array, but the other input parameters (UniqueId,
     * timestamps, dimensions) are set once, from the last, which is also
     * the one ProcessPlugin hands over again: their callbacks, per
     * array, cost more than the finder. */
    plugin_.setIntegerParam(plugin_.NDArrayCounter,
                            getInt(plugin_.NDArrayCounter) +
                                (int)batch.arrays.size() - 1);
    plugin_.beginProcessCallbacks(batch.arrays.back());
    reportBatch(batch);
    if (batch.found > 0) {
        cc_frame_clusters last;
        cc_clusters_frame(batch.clusters, batch.found - 1, &last);
        /* Found, stored or not: DroppedClusters_RBV says how many the
         * cap kept out of the array. */
        plugin_.setIntegerParam(plugin_.finder.NumClusters,
                                (int)(last.count + last.dropped));
    }
    for (size_t i = 0; i < batch.outputs.size(); i++) {
        if (batch.outputs[i] != NULL)
            plugin_.endProcessCallbacks(batch.outputs[i], false, true);
        else
            status("no NDArray for the clusters: the pool is exhausted");
    }
    releaseArrays(batch.arrays);
    plugin_.imaging.imaged();
    plugin_.outputs.batchPublished();
}
