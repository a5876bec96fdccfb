/*
 * NDPluginClusterCUDA.cpp: PVs and NDArrays in, libclustercore calls, PVs
 * and NDArrays out.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <utility>

#include <epicsExport.h>
#include <epicsThread.h>
#include <iocsh.h>

#include "NDPluginClusterCUDA.h"

static const char *driverName = "NDPluginClusterCUDA";

static void publisherTaskC(void *plugin);
static void finderTaskC(void *plugin);
static void outputTaskC(void *start);

/* What an output thread starts with. */
struct OutputStart {
    NDPluginClusterCUDA *plugin;
    unsigned index;
};

enum { ADDR_CLUSTERS = 0, ADDR_HITMAP = 1, N_ADDR = 2 };
static const int maxBatchLimit = 4096;

NDPluginClusterCUDA::NDPluginClusterCUDA(const char *portName, int queueSize,
                                         int blockingCallbacks,
                                         const char *NDArrayPort,
                                         int NDArrayAddr, int maxBuffers,
                                         size_t maxMemory, int priority,
                                         int stackSize, int outputThreads)
    /* One processing thread: the pedestal is one ordered sequence. */
    : NDPluginDriver(portName, queueSize, blockingCallbacks, NDArrayPort,
                     NDArrayAddr, N_ADDR, maxBuffers, maxMemory,
                     asynInt32ArrayMask | asynFloat64ArrayMask |
                         asynGenericPointerMask,
                     asynInt32ArrayMask | asynFloat64ArrayMask |
                         asynGenericPointerMask,
                     ASYN_MULTIDEVICE, 1, priority, stackSize, 1),
      finder_(NULL), outputThreads_((unsigned)outputThreads),
      batchSlots_(2 * outputThreads_ + 2), handedOver_(0), found_(0),
      published_(0), threadsMissing_(false),
      rows_(0), cols_(0), settingsChanged_(true), spectrumChanged_(true),
      spectrumCounts_(NULL),
      spectrumCentres_(NULL), rms_(NULL),
      unpublished_(false), pendingLoad_(false)
{
    createParam(ClusterNSigmaString, asynParamFloat64, &ClusterNSigma);
    createParam(ClusterNumStreamsString, asynParamInt32, &ClusterNumStreams);
    createParam(ClusterMaxClustersString, asynParamInt32, &ClusterMaxClusters);
    createParam(ClusterMaxBatchString, asynParamInt32, &ClusterMaxBatch);
    createParam(ClusterLastBatchString, asynParamInt32, &ClusterLastBatch);
    createParam(ClusterSizeXString, asynParamInt32, &ClusterSizeX);
    createParam(ClusterSizeYString, asynParamInt32, &ClusterSizeY);
    createParam(ClusterPedestalFramesString, asynParamInt32,
                &ClusterPedestalFrames);
    createParam(ClusterResetPedestalString, asynParamInt32,
                &ClusterResetPedestal);
    createParam(ClusterPedestalStateString, asynParamInt32,
                &ClusterPedestalState);
    createParam(ClusterPedestalCountString, asynParamInt32,
                &ClusterPedestalCount);
    createParam(ClusterSavePedestalString, asynParamInt32, &ClusterSavePedestal);
    createParam(ClusterLoadPedestalString, asynParamInt32, &ClusterLoadPedestal);
    createParam(ClusterPedestalFileString, asynParamOctet, &ClusterPedestalFile);
    createParam(ClusterBackendString, asynParamInt32, &ClusterBackend);
    createParam(ClusterBackendInUseString, asynParamOctet, &ClusterBackendInUse);
    createParam(ClusterPrecisionString, asynParamInt32, &ClusterPrecision);
    createParam(ClusterAdcMaskString, asynParamInt32, &ClusterAdcMask);
    createParam(ClusterNumClustersString, asynParamInt32, &ClusterNumClusters);
    createParam(ClusterTotalClustersString, asynParamFloat64,
                &ClusterTotalClusters);
    createParam(ClusterDroppedClustersString, asynParamFloat64,
                &ClusterDroppedClusters);
    createParam(ClusterNoiseMeanString, asynParamFloat64, &ClusterNoiseMean);
    createParam(ClusterFinderTimeString, asynParamFloat64, &ClusterFinderTime);
    createParam(ClusterBadArraysString, asynParamInt32, &ClusterBadArrays);
    createParam(ClusterStatusMessageString, asynParamOctet,
                &ClusterStatusMessage);
    createParam(ClusterSpectrumEnergyString, asynParamInt32,
                &ClusterSpectrumEnergy);
    createParam(ClusterSpectrumBinsString, asynParamInt32, &ClusterSpectrumBins);
    createParam(ClusterSpectrumMinString, asynParamFloat64, &ClusterSpectrumMin);
    createParam(ClusterSpectrumMaxString, asynParamFloat64, &ClusterSpectrumMax);
    createParam(ClusterSpectrumPeriodString, asynParamFloat64,
                &ClusterSpectrumPeriod);
    createParam(ClusterSpectrumString, asynParamFloat64Array, &ClusterSpectrum);
    createParam(ClusterSpectrumXString, asynParamFloat64Array,
                &ClusterSpectrumX);
    createParam(ClusterSpectrumResetString, asynParamInt32,
                &ClusterSpectrumReset);
    createParam(ClusterHitMapResetString, asynParamInt32, &ClusterHitMapReset);

    cc_config defaults;
    cc_config_init(&defaults);
    setDoubleParam(ClusterNSigma, defaults.nsigma);
    setIntegerParam(ClusterNumStreams, (int)defaults.streams);
    setIntegerParam(ClusterMaxClusters, 5000);
    setIntegerParam(ClusterMaxBatch, 64);
    setIntegerParam(ClusterLastBatch, 0);
    setIntegerParam(ClusterSizeX, (int)defaults.cluster_size_x);
    setIntegerParam(ClusterSizeY, (int)defaults.cluster_size_y);
    setIntegerParam(ClusterPedestalFrames, (int)defaults.pedestal_frames);
    setIntegerParam(ClusterPedestalState, CC_PEDESTAL_TRAINING);
    setIntegerParam(ClusterPedestalCount, 0);
    setIntegerParam(ClusterBackend, 0);
    setIntegerParam(ClusterPrecision, (int)defaults.precision);
    setIntegerParam(ClusterAdcMask, defaults.adc_mask);
    setIntegerParam(ClusterNumClusters, 0);
    setDoubleParam(ClusterTotalClusters, 0);
    setDoubleParam(ClusterDroppedClusters, 0);
    setDoubleParam(ClusterNoiseMean, 0);
    setDoubleParam(ClusterFinderTime, 0);
    setIntegerParam(ClusterBadArrays, 0);
    setIntegerParam(ClusterSpectrumEnergy, CC_ENERGY_SUM);
    setIntegerParam(ClusterSpectrumBins, 400);
    setDoubleParam(ClusterSpectrumMin, 0);
    setDoubleParam(ClusterSpectrumMax, 2000);
    setDoubleParam(ClusterSpectrumPeriod, 1.0);
    setStringParam(ClusterPedestalFile, "");
    setStringParam(ClusterBackendInUse, "chosen at the first frame");
    setStringParam(ClusterStatusMessage, "waiting for frames");
    setStringParam(NDPluginDriverPluginType, "NDPluginClusterCUDA");
    epicsTimeGetCurrent(&lastPublished_);
    trainingNote_[0] = '\0';
    for (unsigned i = 0; i < MAX_OUTPUT_THREADS; i++) {
        accumulators_[i].spectrum = NULL;
        accumulators_[i].hitmap = NULL;
    }
    for (unsigned b = 0; b < batchSlots_; b++) {
        batches_[b].trained = batches_[b].found = 0;
        if (cc_clusters_new(&batches_[b].clusters) != CC_OK)
            setStatus("out of memory for the cluster lists");
    }
    connectToArrayPort();
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

/* snprintf for messages to people, which may end cut short. */
static void formatMessage(char *message, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(message, size, format, args);
    va_end(args);
}

static void releaseAll(std::vector<NDArray *> &arrays)
{
    for (size_t k = 0; k < arrays.size(); k++)
        arrays[k]->release();
    arrays.clear();
}

void NDPluginClusterCUDA::publisherTask()
{
    for (;;) {
        double period;
        lock();
        getDoubleParam(ClusterSpectrumPeriod, &period);
        if (unpublished_) {
            publishSlow(false);
            callParamCallbacks();
        }
        unlock();
        epicsThreadSleep(period > 0.05 ? period / 2 : 0.05);
    }
}

NDPluginClusterCUDA::~NDPluginClusterCUDA()
{
    releaseAll(held_);
    for (unsigned b = 0; b < batchSlots_; b++) {
        releaseAll(batches_[b].arrays);
        cc_clusters_destroy(batches_[b].clusters);
    }
    cc_finder_destroy(finder_);
    for (unsigned i = 0; i < MAX_OUTPUT_THREADS; i++) {
        cc_spectrum_destroy(accumulators_[i].spectrum);
        cc_hitmap_destroy(accumulators_[i].hitmap);
    }
    free(spectrumCounts_);
    free(spectrumCentres_);
    free(rms_);
}

void NDPluginClusterCUDA::setStatus(const char *format, ...)
{
    char message[CC_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    setStringParam(ClusterStatusMessage, message);
}

/* The finder's configuration as the PVs say now (port locked). */
cc_config NDPluginClusterCUDA::wantedConfig(int rows, int cols)
{
    static const cc_backend backends[] = {CC_BACKEND_AUTO, CC_BACKEND_CUDA,
                                          CC_BACKEND_CPU};
    cc_config config;
    cc_config_init(&config);
    int value;
    config.rows = (uint32_t)rows;
    config.cols = (uint32_t)cols;
    getDoubleParam(ClusterNSigma, &config.nsigma);
    getIntegerParam(ClusterNumStreams, &value);
    config.streams = (uint32_t)value;
    getIntegerParam(ClusterMaxClusters, &value);
    config.max_clusters = (uint32_t)value;
    getIntegerParam(ClusterSizeX, &value);
    config.cluster_size_x = (uint32_t)value;
    getIntegerParam(ClusterSizeY, &value);
    config.cluster_size_y = (uint32_t)value;
    getIntegerParam(ClusterPedestalFrames, &value);
    config.pedestal_frames = (uint32_t)value;
    getIntegerParam(ClusterBackend, &value);
    config.backend = value >= 0 && value <= 2 ? backends[value]
                                              : (cc_backend)value;
    getIntegerParam(ClusterPrecision, &value);
    config.precision = (cc_precision)value;
    getIntegerParam(ClusterAdcMask, &value);
    config.adc_mask = (uint16_t)value;
    config.threads = 0; /* the CPU backend uses every CPU */
    return config;
}

/* Creates the finder, or reconfigures it (finder lock held, port not:
 * what to tell the user goes into message, CC_MESSAGE_SIZE bytes). */
int NDPluginClusterCUDA::applyConfig(const cc_config &config, bool newFrameSize,
                                     char *message)
{
    if (finder_ == NULL)
        return cc_finder_new(&finder_, &config, message);
    int rc = cc_finder_set_config(finder_, &config);
    if (rc != CC_OK)
        snprintf(message, CC_MESSAGE_SIZE, "%s", cc_finder_last_error(finder_));
    else if (newFrameSize)
        snprintf(message, CC_MESSAGE_SIZE,
                 "frame size changed to %u x %u: the pedestal is reset",
                 config.cols, config.rows);
    return rc;
}

/* A spectrum as asked and, for a new frame size, a hit map, for every
 * output thread (finder lock held, port not; takes the accumulator locks). */
int NDPluginClusterCUDA::prepareAccumulators(int rows, int cols, int energy,
                                             int bins, double min, double max,
                                             char *message)
{
    const unsigned parts = outputThreads_;
    bool newHitmaps = rows != rows_ || cols != cols_ ||
                      accumulators_[0].hitmap == NULL;
    cc_spectrum *spectra[MAX_OUTPUT_THREADS] = {NULL};
    cc_hitmap *hitmaps[MAX_OUTPUT_THREADS] = {NULL};
    double *counts = NULL, *centres = NULL, *rms = NULL;
    int rc = bins > 0 ? CC_OK : CC_EINVAL;
    for (unsigned i = 0; rc == CC_OK && i < parts; i++)
        rc = cc_spectrum_new(&spectra[i], (cc_energy)energy, (uint32_t)bins,
                             min, max);
    if (rc != CC_OK) {
        snprintf(message, CC_MESSAGE_SIZE,
                 "spectrum settings refused: %d bins on [%g, %g)", bins, min,
                 max);
    } else {
        counts = (double *)calloc((size_t)bins, sizeof *counts);
        centres = (double *)calloc((size_t)bins, sizeof *centres);
        if (newHitmaps)
            rms = (double *)malloc((size_t)rows * cols * sizeof *rms);
        rc = counts != NULL && centres != NULL && (rms != NULL || !newHitmaps)
                 ? CC_OK
                 : CC_ENOMEM;
        for (unsigned i = 0; rc == CC_OK && newHitmaps && i < parts; i++)
            rc = cc_hitmap_new(&hitmaps[i], (uint32_t)rows, (uint32_t)cols);
        if (rc != CC_OK)
            snprintf(message, CC_MESSAGE_SIZE,
                     "out of memory for the spectrum and hit map");
    }
    if (rc != CC_OK) {
        for (unsigned i = 0; i < parts; i++) {
            cc_spectrum_destroy(spectra[i]);
            cc_hitmap_destroy(hitmaps[i]);
        }
        free(counts);
        free(centres);
        free(rms);
        return rc;
    }
    for (int i = 0; i < bins; i++)
        centres[i] = 0.5 * (cc_spectrum_edge(spectra[0], (uint32_t)i) +
                            cc_spectrum_edge(spectra[0], (uint32_t)i + 1));
    free(spectrumCounts_);
    free(spectrumCentres_);
    spectrumCounts_ = counts;
    spectrumCentres_ = centres;
    if (newHitmaps) {
        free(rms_);
        rms_ = rms;
    }
    for (unsigned i = 0; i < parts; i++) {
        Accumulator &part = accumulators_[i];
        part.lock.lock();
        std::swap(part.spectrum, spectra[i]);
        if (newHitmaps)
            std::swap(part.hitmap, hitmaps[i]);
        part.lock.unlock();
        cc_spectrum_destroy(spectra[i]);
        cc_hitmap_destroy(hitmaps[i]);
    }
    return CC_OK;
}

void NDPluginClusterCUDA::refuse(NDArray *pArray, const char *why)
{
    int bad;
    getIntegerParam(ClusterBadArrays, &bad);
    setIntegerParam(ClusterBadArrays, bad + 1);
    setStatus("array %d refused: %s", pArray->uniqueId, why);
    asynPrint(pasynUserSelf, ASYN_TRACE_ERROR, "%s: array %d refused: %s\n",
              driverName, pArray->uniqueId, why);
    callParamCallbacks();
}

void NDPluginClusterCUDA::processCallbacks(NDArray *pArray)
{
    if (pArray->ndims != 2 || pArray->dataType != NDUInt16) {
        NDPluginDriver::beginProcessCallbacks(pArray);
        refuse(pArray, "the finder takes 2-D NDUInt16 frames");
        return;
    }
    /* ProcessPlugin hands the last array published over again: it must
     * not be fed into the pedestal twice. (pPrevInputArray_ holds it, so
     * no new frame can come in that NDArray.) */
    if (pArray == pPrevInputArray_) {
        NDPluginDriver::beginProcessCallbacks(pArray);
        setStatus("array %d was processed already; not fed to the pedestal "
                  "again", pArray->uniqueId);
        callParamCallbacks();
        return;
    }
    /* A batch holds frames of one size. */
    if (!held_.empty() && (held_[0]->dims[0].size != pArray->dims[0].size ||
                           held_[0]->dims[1].size != pArray->dims[1].size))
        processHeld();
    int maxBatch, queueSize, queueFree, blocking;
    getIntegerParam(ClusterMaxBatch, &maxBatch);
    getIntegerParam(NDPluginDriverQueueSize, &queueSize);
    getIntegerParam(NDPluginDriverQueueFree, &queueFree);
    getIntegerParam(NDPluginDriverBlockingCallbacks, &blocking);
    if (held_.capacity() < (size_t)maxBatch)
        held_.reserve((size_t)maxBatch);
    pArray->reserve();
    held_.push_back(pArray);
    /* processTask read QueueFree just before this call: arrays still
     * queued will come next, so this one can wait for them. */
    bool moreQueued = !blocking && queueFree < queueSize;
    if (moreQueued && held_.size() < (size_t)maxBatch)
        return;
    processHeld();
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
    job.config = wantedConfig(rows, cols);
    getIntegerParam(ClusterMaxClusters, &job.maxClusters);
    getIntegerParam(ClusterSpectrumEnergy, &job.energy);
    getIntegerParam(ClusterSpectrumBins, &job.bins);
    getDoubleParam(ClusterSpectrumMin, &job.min);
    getDoubleParam(ClusterSpectrumMax, &job.max);
    job.settingsChanged = settingsChanged_;
    job.spectrumChanged = spectrumChanged_;
    settingsChanged_ = spectrumChanged_ = false;
    /* A LoadPedestal asked for before the frame size was known (as after
     * an IOC restart) is done now, before these frames. */
    job.load = pendingLoad_;
    pendingLoad_ = false;
    job.loadPath[0] = '\0';
    if (job.load)
        getStringParam(ClusterPedestalFile, sizeof job.loadPath, job.loadPath);

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
    if (rc == CC_OK && job.load) {
        rc = cc_finder_load_pedestal(finder_, job.loadPath);
        formatMessage(batch.message, sizeof batch.message, "%s%s",
                      rc == CC_OK ? "pedestal loaded from " : "",
                      rc == CC_OK ? job.loadPath
                                  : cc_finder_last_error(finder_));
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
        /* The pointer and number lists are the finder thread's (or,
         * without it, the processing thread's). */
        finderFrames_.clear();
        finderNumbers_.clear();
        for (size_t k = batch.trained; rc == CC_OK && k < n; k++) {
            finderFrames_.push_back((const uint16_t *)batch.arrays[k]->pData);
            finderNumbers_.push_back((uint64_t)batch.arrays[k]->uniqueId);
        }
        if (!finderFrames_.empty()) {
            rc = cc_finder_process_list(finder_, finderFrames_.data(),
                                        finderNumbers_.data(),
                                        finderFrames_.size(), batch.clusters);
            if (rc == CC_OK)
                batch.found = finderFrames_.size();
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
    setDoubleParam(ClusterTotalClusters, (double)stats.clusters);
    setDoubleParam(ClusterDroppedClusters, (double)stats.clusters_dropped);
    if (batch.rc == CC_OK && batch.found == 0 && batch.message[0] == '\0') {
        if (stats.state == CC_PEDESTAL_READY) {
            setStatus("pedestal ready after %u dark frames",
                      stats.pedestal_window);
            trainingNote_[0] = '\0';
        } else {
            setStatus("training the pedestal: %u of %u dark frames%s",
                      (unsigned)stats.frames_trained, stats.pedestal_window,
                      trainingNote_);
        }
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

/* Fills a batch's cluster arrays and adds its clusters to one part of
 * the spectrum and hit map (their counts do not depend on the order
 * batches come in), port unlocked. Frame by frame: a frame's clusters
 * are read from memory once, and are in cache for the spectrum and hit
 * map. */
void NDPluginClusterCUDA::prepareBatch(Batch &batch, Accumulator &accumulator)
{
    batch.outputs.clear();
    for (size_t i = 0; i < batch.found; i++) {
        cc_frame_clusters frame;
        cc_clusters_frame(batch.clusters, i, &frame);
        batch.outputs.push_back(clusterArray(batch.arrays[batch.trained + i],
                                             frame, batch.job.maxClusters));
        accumulator.lock.lock();
        cc_spectrum_add_frame(accumulator.spectrum, &frame);
        cc_hitmap_add_frame(accumulator.hitmap, &frame);
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
    releaseAll(batch.arrays);
    unpublished_ = true;
    publishSlow(false);
}

/* The frame's clusters as NDInt32 [2 + Nx*Ny, maxClusters], zero padded
 * (port unlocked: the pool has its own lock). */
NDArray *NDPluginClusterCUDA::clusterArray(NDArray *pInput,
                                           const cc_frame_clusters &frame,
                                           int maxClusters)
{
    size_t cells = (size_t)frame.size_x * frame.size_y;
    size_t dims[2] = {2 + cells, (size_t)(maxClusters > 0 ? maxClusters : 1)};
    NDArray *pOut = pNDArrayPool->alloc(2, dims, NDInt32, 0, NULL);
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

/* Spectrum, hit map and noise mean, at most once per SpectrumPeriod
 * (port locked; takes the finder and the accumulator locks). The output
 * threads' parts are summed. */
void NDPluginClusterCUDA::publishSlow(bool force)
{
    double period;
    getDoubleParam(ClusterSpectrumPeriod, &period);
    epicsTimeStamp now;
    epicsTimeGetCurrent(&now);
    if (!force && epicsTimeDiffInSeconds(&now, &lastPublished_) < period)
        return;
    finderLock_.lock();
    if (accumulators_[0].spectrum == NULL || accumulators_[0].hitmap == NULL) {
        finderLock_.unlock();
        return;
    }
    lastPublished_ = now;
    unpublished_ = false;
    size_t pixels = (size_t)rows_ * cols_;
    size_t dims[2] = {(size_t)cols_, (size_t)rows_};
    NDArray *pHits = pNDArrayPool->alloc(2, dims, NDUInt32, 0, NULL);
    uint32_t *hits = pHits != NULL ? (uint32_t *)pHits->pData : NULL;
    uint32_t bins = cc_spectrum_bins(accumulators_[0].spectrum);
    std::fill(spectrumCounts_, spectrumCounts_ + bins, 0.0);
    if (hits != NULL)
        std::fill(hits, hits + pixels, 0u);
    for (unsigned part = 0; part < outputThreads_; part++) {
        Accumulator &accumulator = accumulators_[part];
        accumulator.lock.lock();
        const uint64_t *counts = cc_spectrum_counts(accumulator.spectrum);
        for (uint32_t i = 0; i < bins; i++)
            spectrumCounts_[i] += (double)counts[i];
        /* The sum saturates, as each part does. */
        const uint32_t *partHits = cc_hitmap_counts(accumulator.hitmap);
        for (size_t p = 0; hits != NULL && p < pixels; p++)
            hits[p] = partHits[p] > UINT32_MAX - hits[p]
                          ? UINT32_MAX
                          : hits[p] + partHits[p];
        accumulator.lock.unlock();
    }
    double noise = 0;
    bool haveNoise = finder_ != NULL &&
                     cc_finder_pedestal_maps(finder_, NULL, rms_) == CC_OK;
    for (size_t p = 0; haveNoise && p < pixels; p++)
        noise += rms_[p];
    noise /= (double)pixels;
    /* The waveforms' arrays are replaced under the finder lock. */
    doCallbacksFloat64Array(spectrumCounts_, bins, ClusterSpectrum, 0);
    doCallbacksFloat64Array(spectrumCentres_, bins, ClusterSpectrumX, 0);
    finderLock_.unlock();
    if (haveNoise)
        setDoubleParam(ClusterNoiseMean, noise);
    if (pHits != NULL) {
        getTimeStamp(&pHits->epicsTS);
        doCallbacksGenericPointer(pHits, NDArrayData, ADDR_HITMAP);
        pHits->release();
    }
}

/* Reset, save or load the pedestal (port locked). */
void NDPluginClusterCUDA::pedestalCommand(int function)
{
    char path[512];
    getStringParam(ClusterPedestalFile, sizeof path, path);
    finderLock_.lock();
    if (finder_ == NULL && function == ClusterLoadPedestal) {
        pendingLoad_ = true;
        setStatus("pedestal from %s will be loaded at the first frame", path);
    } else if (finder_ == NULL) {
        setStatus("no frame seen yet: the frame size, and so the pedestal, "
                  "is not known");
    } else if (function == ClusterResetPedestal) {
        cc_finder_reset(finder_);
        snprintf(trainingNote_, sizeof trainingNote_, " (reset by the user)");
        setStatus("pedestal reset: training on the next dark frames");
    } else {
        int rc = function == ClusterSavePedestal
                     ? cc_finder_save_pedestal(finder_, path)
                     : cc_finder_load_pedestal(finder_, path);
        if (rc != CC_OK)
            setStatus("%s", cc_finder_last_error(finder_));
        else
            setStatus("pedestal %s %s",
                      function == ClusterSavePedestal ? "saved to"
                                                      : "loaded from",
                      path);
    }
    cc_finder_stats stats;
    if (finder_ != NULL && cc_finder_get_stats(finder_, &stats) == CC_OK) {
        setIntegerParam(ClusterPedestalState, stats.state);
        setIntegerParam(ClusterPedestalCount, (int)stats.frames_trained);
    }
    finderLock_.unlock();
}

asynStatus NDPluginClusterCUDA::writeInt32(asynUser *pasynUser,
                                           epicsInt32 value)
{
    int function = pasynUser->reason;
    if (function < FIRST_CLUSTER_PARAM)
        return NDPluginDriver::writeInt32(pasynUser, value);
    if (function == ClusterResetPedestal || function == ClusterSavePedestal ||
        function == ClusterLoadPedestal) {
        if (value != 0)
            pedestalCommand(function);
        value = 0; /* a command, not a state */
    } else if (function == ClusterSpectrumReset ||
               function == ClusterHitMapReset) {
        for (unsigned part = 0; part < outputThreads_; part++) {
            Accumulator &accumulator = accumulators_[part];
            accumulator.lock.lock();
            if (function == ClusterSpectrumReset)
                cc_spectrum_reset(accumulator.spectrum);
            else
                cc_hitmap_reset(accumulator.hitmap);
            accumulator.lock.unlock();
        }
        value = 0;
    } else if (function == ClusterSpectrumEnergy ||
               function == ClusterSpectrumBins) {
        spectrumChanged_ = true;
    } else if (function == ClusterMaxBatch) {
        /* Held arrays come from the source's pool: a bound keeps the
         * plugin from taking all of it. */
        if (value < 1 || value > maxBatchLimit) {
            setStatus("MaxBatch %d must be 1 to %d", value, maxBatchLimit);
            callParamCallbacks();
            epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                          "%s: MaxBatch must be 1 to %d", driverName,
                          maxBatchLimit);
            return asynError;
        }
    } else {
        /* A finder setting: check it against the rest before taking it
         * (rows_ and cols_ belong to the finder lock). */
        int held;
        getIntegerParam(function, &held);
        setIntegerParam(function, value);
        finderLock_.lock();
        int rows = rows_ > 0 ? rows_ : 400, cols = cols_ > 0 ? cols_ : 400;
        finderLock_.unlock();
        cc_config config = wantedConfig(rows, cols);
        char message[CC_MESSAGE_SIZE];
        if (cc_config_check(&config, message) != CC_OK ||
            (function == ClusterMaxClusters && value < 1)) {
            setIntegerParam(function, held);
            if (function == ClusterMaxClusters && value < 1)
                snprintf(message, sizeof message,
                         "MaxClusters must be at least 1: it sizes the output");
            setStatus("%s", message);
            callParamCallbacks();
            epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                          "%s: %s", driverName, message);
            return asynError;
        }
        settingsChanged_ = true;
    }
    asynStatus status = setIntegerParam(function, value);
    callParamCallbacks();
    return status;
}

asynStatus NDPluginClusterCUDA::writeFloat64(asynUser *pasynUser,
                                             epicsFloat64 value)
{
    int function = pasynUser->reason;
    if (function < FIRST_CLUSTER_PARAM)
        return NDPluginDriver::writeFloat64(pasynUser, value);
    if (function == ClusterNSigma && !(value > 0)) {
        setStatus("NSigma %g must be above 0", value);
        callParamCallbacks();
        epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                      "%s: NSigma must be above 0", driverName);
        return asynError;
    }
    if (function == ClusterNSigma)
        settingsChanged_ = true;
    if (function == ClusterSpectrumMin || function == ClusterSpectrumMax)
        spectrumChanged_ = true;
    asynStatus status = setDoubleParam(function, value);
    callParamCallbacks();
    return status;
}

extern "C" int NDClusterCUDAConfigure(const char *portName, int queueSize,
                                      int blockingCallbacks,
                                      const char *NDArrayPort,
                                      int NDArrayAddr, int maxBuffers,
                                      size_t maxMemory, int priority,
                                      int stackSize, int maxThreads)
{
    int outputThreads = maxThreads < 1 ? 1 : maxThreads;
    if (outputThreads > NDPluginClusterCUDA::MAX_OUTPUT_THREADS)
        outputThreads = NDPluginClusterCUDA::MAX_OUTPUT_THREADS;
    printf("%s: %s: one thread gathers the arrays, one finds their "
           "clusters, in order (the pedestal is one ordered sequence); %d "
           "output thread%s publish%s them (maxThreads %d)\n",
           driverName, portName, outputThreads, outputThreads > 1 ? "s" : "",
           outputThreads > 1 ? "" : "es", maxThreads);
    NDPluginClusterCUDA *pPlugin = new NDPluginClusterCUDA(
        portName, queueSize, blockingCallbacks, NDArrayPort, NDArrayAddr,
        maxBuffers, maxMemory, priority, stackSize, outputThreads);
    return pPlugin->start();
}

static const iocshArg initArg0 = {"portName", iocshArgString};
static const iocshArg initArg1 = {"frame queue size", iocshArgInt};
static const iocshArg initArg2 = {"blocking callbacks", iocshArgInt};
static const iocshArg initArg3 = {"NDArrayPort", iocshArgString};
static const iocshArg initArg4 = {"NDArrayAddr", iocshArgInt};
static const iocshArg initArg5 = {"maxBuffers", iocshArgInt};
static const iocshArg initArg6 = {"maxMemory", iocshArgInt};
static const iocshArg initArg7 = {"priority", iocshArgInt};
static const iocshArg initArg8 = {"stackSize", iocshArgInt};
static const iocshArg initArg9 = {"maxThreads", iocshArgInt};
static const iocshArg *const initArgs[] = {&initArg0, &initArg1, &initArg2,
                                           &initArg3, &initArg4, &initArg5,
                                           &initArg6, &initArg7, &initArg8,
                                           &initArg9};
static const iocshFuncDef initFuncDef = {
    "NDClusterCUDAConfigure", 10, initArgs,
#ifdef IOCSHFUNCDEF_HAS_USAGE
    "Creates an NDPluginClusterCUDA plugin: photon clusters from MÖNCH "
    "frames on address 0, the hit map on address 1. One thread gathers the "
    "arrays, one finds their clusters in order; maxThreads (1 to 8) output "
    "threads publish them.\n"
#endif
};
static void initCallFunc(const iocshArgBuf *args)
{
    NDClusterCUDAConfigure(args[0].sval, args[1].ival, args[2].ival,
                           args[3].sval, args[4].ival, args[5].ival,
                           (size_t)args[6].ival, args[7].ival, args[8].ival,
                           args[9].ival);
}

extern "C" void NDClusterCUDARegister(void)
{
    iocshRegister(&initFuncDef, initCallFunc);
}

extern "C" {
epicsExportRegistrar(NDClusterCUDARegister);
}
