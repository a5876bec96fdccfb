/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDPluginClusterCUDA.cpp: the plugin's parameters, its PV writes and the
 * NDPluginDriver callbacks. The batch pipeline behind processCallbacks is
 * in NDClusterCUDAPipeline.cpp, the output arrays in NDClusterCUDAOutputs.cpp.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmath>

#include <epicsExport.h>
#include <iocsh.h>

#include "NDPluginClusterCUDA.h"

static const char *driverName = "NDPluginClusterCUDA";

/* The asyn names of the line fit's figures: position, sigma, FWHM (ADU),
 * FWHM / position, counts in the line, chi^2 per degree of freedom. */
static const char *const peakResultNames[] = {
    "CLUSTER_PEAK_POSITION", "CLUSTER_PEAK_SIGMA",  "CLUSTER_PEAK_FWHM",
    "CLUSTER_PEAK_RESOLUTION", "CLUSTER_PEAK_COUNTS", "CLUSTER_PEAK_CHI2"};
static const int maxBatchLimit = 4096;

NDPluginClusterCUDA::NDPluginClusterCUDA(const char *portName, int queueSize,
                                         int blockingCallbacks,
                                         const char *NDArrayPort,
                                         int NDArrayAddr, int maxBuffers,
                                         size_t maxMemory, int priority,
                                         int stackSize, int outputThreads)
    /* One processing thread: the pedestal is one ordered sequence. */
    : NDPluginDriver(portName, queueSize, blockingCallbacks, NDArrayPort,
                     NDArrayAddr, NUM_ADDRESSES, maxBuffers, maxMemory,
                     asynInt32ArrayMask | asynFloat64ArrayMask |
                         asynGenericPointerMask,
                     asynInt32ArrayMask | asynFloat64ArrayMask |
                         asynGenericPointerMask,
                     ASYN_MULTIDEVICE, 1, priority, stackSize, 1),
      finder_(NULL), outputPool_(new NDArrayPool(this, maxMemory)),
      spectrum_(NULL), hitmap_(NULL), hitmapWindowed_(false), mapArrays_(0),
      counting_(false), analogOn_(false), analogFrames_(0),
      outputThreads_((unsigned)outputThreads),
      batchSlots_(2 * outputThreads_ + 2), handedOver_(0), found_(0),
      published_(0), threadsMissing_(false), output0Delay_(0),
      rows_(0), cols_(0), settingsChanged_(true), spectrumChanged_(true),
      windowChanged_(true),
      spectrumCounts_(NULL),
      spectrumCentres_(NULL), rms_(NULL), mean_(NULL),
      unpublished_(false), imageUnpublished_(false), publishWanted_(false),
      pendingLoad_(false), newPedestalPending_(false), pendingMask_(false), framesSeen_(false),
      spectrumAxis_(NULL), imaging_(),
      calibration_(NULL), calibrationNumber_(0), image_(NULL),
      gainUnit_(CC_GAIN_RELATIVE), gainRows_(0), gainCols_(0),
      gainNumber_(0), gainGiven_(0), gainSpectraStarted_(false),
      gainCalibrationRestart_(false),
      pendingGainLoad_(false), gainNote_("none"), commonModeConfig_(),
      gainCalibration_(NULL), gainCalibrationConfig_()
{
    /* Every parameter, in the order asyn numbers them (ClusterNSigma,
     * FIRST_CLUSTER_PARAM, first). */
    static const struct {
        const char *name;
        asynParamType type;
        int NDPluginClusterCUDA::*index;
    } parameters[] = {
        {ClusterNSigmaString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterNSigma},
        {ClusterNumStreamsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterNumStreams},
        {ClusterMaxClustersString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterMaxClusters},
        {ClusterMaxBatchString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterMaxBatch},
        {ClusterLastBatchString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterLastBatch},
        {ClusterSizeXString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSizeX},
        {ClusterSizeYString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSizeY},
        {ClusterPedestalFramesString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPedestalFrames},
        {ClusterResetPedestalString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterResetPedestal},
        {ClusterFrameModeString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterFrameMode},
        {ClusterDetectorModeString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterDetectorMode},
        {ClusterAnalogFramesString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterAnalogFrames},
        {ClusterPedestalStateString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPedestalState},
        {ClusterPedestalCountString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPedestalCount},
        {ClusterSavePedestalString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSavePedestal},
        {ClusterLoadPedestalString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterLoadPedestal},
        {ClusterPedestalFileString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterPedestalFile},
        {ClusterLoadFilesAtStartString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterLoadFilesAtStart},
        {ClusterBackendString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterBackend},
        {ClusterBackendInUseString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterBackendInUse},
        {ClusterPrecisionString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPrecision},
        {ClusterAdcMaskString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterAdcMask},
        {ClusterNumClustersString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterNumClusters},
        {ClusterTotalClustersString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterTotalClusters},
        {ClusterDroppedClustersString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterDroppedClusters},
        {ClusterNoiseMeanString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterNoiseMean},
        {ClusterMaskFileString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterMaskFile},
        {ClusterLoadMaskString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterLoadMask},
        {ClusterAutoMaskFactorString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterAutoMaskFactor},
        {ClusterMaskedPixelsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterMaskedPixels},
        {ClusterFinderTimeString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterFinderTime},
        {ClusterBadArraysString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterBadArrays},
        {ClusterStatusMessageString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterStatusMessage},
        {ClusterSpectrumEnergyString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSpectrumEnergy},
        {ClusterSpectrumBinsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSpectrumBins},
        {ClusterSpectrumMinString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterSpectrumMin},
        {ClusterSpectrumMaxString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterSpectrumMax},
        {ClusterSpectrumPeriodString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterSpectrumPeriod},
        {ClusterSpectrumString, asynParamFloat64Array,
         &NDPluginClusterCUDA::ClusterSpectrum},
        {ClusterSpectrumXString, asynParamFloat64Array,
         &NDPluginClusterCUDA::ClusterSpectrumX},
        {ClusterSpectrumResetString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSpectrumReset},
        {ClusterPeakLowString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterPeakLow},
        {ClusterPeakHighString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterPeakHigh},
        {ClusterPeakFittedString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPeakFitted},
        {ClusterHitMapResetString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterHitMapReset},
        {ClusterWindowEnableString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterWindowEnable},
        {ClusterWindowLowString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterWindowLow},
        {ClusterWindowHighString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterWindowHigh},
        {ClusterOutsideWindowString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterOutsideWindow},
        {ClusterPublishString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPublish},
        {ClusterPublicationsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterPublications},
        {ClusterAduPerKeVString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterAduPerKeV},
        {ClusterWindowLowKeVString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterWindowLowKeV},
        {ClusterWindowHighKeVString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterWindowHighKeV},
        {ClusterSpectrumAxisString, asynParamFloat64Array,
         &NDPluginClusterCUDA::ClusterSpectrumAxis},
        {ClusterSpectrumAxisUnitString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterSpectrumAxisUnit},
        {ClusterPeakPositionKeVString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterPeakPositionKeV},
        {ClusterPeakFWHMKeVString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterPeakFWHMKeV},
        {ClusterEtaModeString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterEtaMode},
        {ClusterEtaFunctionString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterEtaFunction},
        {ClusterEtaBinsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterEtaBins},
        {ClusterEtaFileString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterEtaFile},
        {ClusterSaveEtaString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSaveEta},
        {ClusterLoadEtaString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterLoadEta},
        {ClusterEtaCalibrationString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterEtaCalibration},
        {ClusterCalibrationPhotonsString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterCalibrationPhotons},
        {ClusterSubpixelsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSubpixels},
        {ClusterImageResetString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterImageReset},
        {ClusterImagedPhotonsString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterImagedPhotons},
        {ClusterImageUninterpolableString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterImageUninterpolable},
        {ClusterImageClippedString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterImageClipped},
        {ClusterImageOutsideString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterImageOutside},
        {ClusterImageFlatnessString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterImageFlatness},
        {ClusterCommonModeString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterCommonMode},
        {ClusterCommonModeRegionsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterCommonModeRegions},
        {ClusterCommonModeNowString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterCommonModeNow},
        {ClusterCommonModeRmsString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterCommonModeRms},
        {ClusterCommonModeUnestimatedString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterCommonModeUnestimated},
        {ClusterCommonModeLastString, asynParamFloat64Array,
         &NDPluginClusterCUDA::ClusterCommonModeLast},
        {ClusterGainModeString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainMode},
        {ClusterGainMapFileString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterGainMapFile},
        {ClusterGainUnitString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainUnit},
        {ClusterLoadGainMapString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterLoadGainMap},
        {ClusterSaveGainMapString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterSaveGainMap},
        {ClusterGainMapInUseString, asynParamOctet,
         &NDPluginClusterCUDA::ClusterGainMapInUse},
        {ClusterGainCalLowString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterGainCalLow},
        {ClusterGainCalHighString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterGainCalHigh},
        {ClusterGainCalBinsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainCalBins},
        {ClusterGainCalEventsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainCalEvents},
        {ClusterGainCalMinPhotonsString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainCalMinPhotons},
        {ClusterGainLineEnergyString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterGainLineEnergy},
        {ClusterGainMaskFlaggedString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainMaskFlagged},
        {ClusterGainCalPhotonsString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterGainCalPhotons},
        {ClusterGainCalOutsideString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterGainCalOutside},
        {ClusterGainCalGoodString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainCalGood},
        {ClusterGainCalFewString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainCalFew},
        {ClusterGainCalFailedString, asynParamInt32,
         &NDPluginClusterCUDA::ClusterGainCalFailed},
        {ClusterGainCalSpreadString, asynParamFloat64,
         &NDPluginClusterCUDA::ClusterGainCalSpread},
    };
    for (size_t i = 0; i < sizeof parameters / sizeof parameters[0]; i++)
        createParam(parameters[i].name, parameters[i].type,
                    &(this->*parameters[i].index));
    for (int i = 0; i < PEAK_RESULTS; i++) {
        createParam(peakResultNames[i], asynParamFloat64,
                    &ClusterPeakResult[i]);
        setDoubleParam(ClusterPeakResult[i], 0);
    }

    cc_config defaults;
    cc_config_init(&defaults);
    setDoubleParam(ClusterNSigma, defaults.nsigma);
    setIntegerParam(ClusterNumStreams, (int)defaults.streams);
    setIntegerParam(ClusterMaxClusters, 5000);
    setIntegerParam(ClusterMaxBatch, 64);
    setIntegerParam(ClusterLastBatch, 0);
    setIntegerParam(ClusterPublications, 0);
    setIntegerParam(ClusterSizeX, (int)defaults.cluster_size_x);
    setIntegerParam(ClusterSizeY, (int)defaults.cluster_size_y);
    setIntegerParam(ClusterPedestalFrames, (int)defaults.pedestal_frames);
    setIntegerParam(ClusterPedestalState, CC_PEDESTAL_TRAINING);
    setIntegerParam(ClusterFrameMode, FRAME_MODE_FRAME);
    setIntegerParam(ClusterDetectorMode, DETECTOR_MODE_COUNT);
    setDoubleParam(ClusterAnalogFrames, 0);
    setIntegerParam(ClusterPedestalCount, 0);
    setIntegerParam(ClusterBackend, 0);
    setIntegerParam(ClusterPrecision, (int)defaults.precision);
    setIntegerParam(ClusterAdcMask, defaults.adc_mask);
    setIntegerParam(ClusterNumClusters, 0);
    setDoubleParam(ClusterTotalClusters, 0);
    setDoubleParam(ClusterDroppedClusters, 0);
    setDoubleParam(ClusterNoiseMean, 0);
    setStringParam(ClusterMaskFile, "");
    setDoubleParam(ClusterAutoMaskFactor, 0);
    setIntegerParam(ClusterMaskedPixels, 0);
    setDoubleParam(ClusterFinderTime, 0);
    setIntegerParam(ClusterBadArrays, 0);
    setIntegerParam(ClusterSpectrumEnergy, CC_ENERGY_SUM);
    setIntegerParam(ClusterSpectrumBins, 400);
    setDoubleParam(ClusterSpectrumMin, 0);
    setDoubleParam(ClusterSpectrumMax, 2000);
    setDoubleParam(ClusterSpectrumPeriod, 1.0);
    setIntegerParam(ClusterWindowEnable, 0);
    setDoubleParam(ClusterWindowLow, 0);
    setDoubleParam(ClusterWindowHigh, 2000);
    setDoubleParam(ClusterOutsideWindow, 0);
    setDoubleParam(ClusterPeakLow, 0);
    setDoubleParam(ClusterPeakHigh, 0);
    setIntegerParam(ClusterPeakFitted, 0);
    setDoubleParam(ClusterAduPerKeV, 0);
    setDoubleParam(ClusterWindowLowKeV, 0);
    setDoubleParam(ClusterWindowHighKeV, 0);
    setStringParam(ClusterSpectrumAxisUnit, "ADU");
    setDoubleParam(ClusterPeakPositionKeV, 0);
    setDoubleParam(ClusterPeakFWHMKeV, 0);
    setIntegerParam(ClusterEtaMode, ETA_OFF);
    setIntegerParam(ClusterEtaFunction, CC_ETA2);
    setIntegerParam(ClusterEtaBins, 100);
    setStringParam(ClusterEtaFile, "");
    snprintf(calibrationNote_, sizeof calibrationNote_, "none");
    setStringParam(ClusterEtaCalibration, calibrationNote_);
    setDoubleParam(ClusterCalibrationPhotons, 0);
    setIntegerParam(ClusterSubpixels, 5);
    setDoubleParam(ClusterImagedPhotons, 0);
    setDoubleParam(ClusterImageUninterpolable, 0);
    setDoubleParam(ClusterImageClipped, 0);
    setDoubleParam(ClusterImageOutside, 0);
    setDoubleParam(ClusterImageFlatness, 0);
    setIntegerParam(ClusterCommonMode, CC_COMMON_MODE_NONE);
    setIntegerParam(ClusterCommonModeRegions, 0);
    setDoubleParam(ClusterCommonModeNow, 0);
    setDoubleParam(ClusterCommonModeRms, 0);
    setDoubleParam(ClusterCommonModeUnestimated, 0);
    cc_gain_calibration_config gainDefaults;
    cc_gain_calibration_config_init(&gainDefaults);
    setIntegerParam(ClusterGainMode, GAIN_OFF);
    setStringParam(ClusterGainMapFile, "");
    setIntegerParam(ClusterGainUnit, CC_GAIN_RELATIVE);
    setStringParam(ClusterGainMapInUse, "none");
    setDoubleParam(ClusterGainCalLow, 600);   /* around Cu Ka, 805 ADU */
    setDoubleParam(ClusterGainCalHigh, 1000); /*   at the simulator's gain */
    setIntegerParam(ClusterGainCalBins, (int)gainDefaults.bins);
    setIntegerParam(ClusterGainCalEvents, gainDefaults.events);
    setIntegerParam(ClusterGainCalMinPhotons, (int)gainDefaults.min_photons);
    setDoubleParam(ClusterGainLineEnergy, 0);
    setIntegerParam(ClusterGainMaskFlagged, 0);
    setDoubleParam(ClusterGainCalPhotons, 0);
    setDoubleParam(ClusterGainCalOutside, 0);
    setIntegerParam(ClusterGainCalGood, 0);
    setIntegerParam(ClusterGainCalFew, 0);
    setIntegerParam(ClusterGainCalFailed, 0);
    setDoubleParam(ClusterGainCalSpread, 0);
    setStringParam(ClusterPedestalFile, "");
    setIntegerParam(ClusterLoadFilesAtStart, 0);
    setStringParam(ClusterBackendInUse, "chosen at the first frame");
    setStringParam(ClusterStatusMessage, "waiting for frames");
    setStringParam(NDPluginDriverPluginType, "NDPluginClusterCUDA");
    epicsTimeGetCurrent(&lastPublished_);
    lastImage_ = lastPublished_;
    trainingNote_[0] = '\0';
    for (unsigned i = 0; i < MAX_OUTPUT_THREADS; i++) {
        accumulators_[i].calibration = NULL;
        /* maxMemory shared evenly (0: no limit); like outputPool_, for
         * the IOC's life. */
        accumulators_[i].clusterPool =
            i < outputThreads_ ? new NDArrayPool(this, maxMemory / outputThreads_)
                               : NULL;
    }
    for (unsigned b = 0; b < batchSlots_; b++) {
        batches_[b].trained = batches_[b].found = 0;
        if (cc_clusters_new(&batches_[b].clusters) != CC_OK)
            setStatus("out of memory for the cluster lists");
    }
    connectToArrayPort();
    startThreads(portName);
}

NDPluginClusterCUDA::~NDPluginClusterCUDA()
{
    releaseArrays(held_);
    for (unsigned b = 0; b < batchSlots_; b++) {
        releaseArrays(batches_[b].arrays);
        cc_clusters_destroy(batches_[b].clusters);
    }
    cc_finder_destroy(finder_);
    for (unsigned i = 0; i < MAX_OUTPUT_THREADS; i++)
        cc_eta_calibration_destroy(accumulators_[i].calibration);
    cc_spectrum_destroy(spectrum_);
    cc_hitmap_destroy(hitmap_);
    cc_eta_calibration_destroy(calibration_);
    cc_interpolator_destroy(image_);
    cc_gain_calibration_destroy(gainCalibration_);
    free(spectrumAxis_);
    free(spectrumCounts_);
    free(spectrumCentres_);
    free(rms_);
    free(mean_);
}

void NDPluginClusterCUDA::setStatus(const char *format, ...)
{
    char message[NDCC_MESSAGE_SIZE];
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
    getDoubleParam(ClusterAutoMaskFactor, &config.mask_rms_factor);
    getIntegerParam(ClusterCommonMode, &value);
    config.common_mode = (cc_common_mode)value;
    config.threads = 0; /* the CPU backend uses every CPU */
    return config;
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

/* The mask from a .npy file, or none for an empty path (finder lock
 * held, finder made); what to tell the user goes into message
 * (NDCC_MESSAGE_SIZE bytes), as the port may not be locked. */
int NDPluginClusterCUDA::loadMask(const char *path, char *message)
{
    int rc = path[0] != '\0' ? cc_finder_load_mask(finder_, path)
                              : cc_finder_set_mask(finder_, NULL);
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE, "%s; the mask in force is kept",
                 cc_finder_last_error(finder_));
    else if (path[0] != '\0')
        snprintf(message, NDCC_MESSAGE_SIZE, "mask loaded from %s", path);
    else
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "MaskFile empty: the user's mask is cleared");
    return rc;
}

/* Reset, save or load the pedestal, or load the mask (port locked). */
void NDPluginClusterCUDA::pedestalCommand(int function)
{
    char path[512];
    getStringParam(function == ClusterLoadMask ? ClusterMaskFile
                                               : ClusterPedestalFile,
                   sizeof path, path);
    finderLock_.lock();
    if (finder_ == NULL && function == ClusterLoadPedestal) {
        pendingLoad_ = true;
        setStatus("pedestal from %s will be loaded at the first frame", path);
    } else if (finder_ == NULL && function == ClusterLoadMask) {
        pendingMask_ = true;
        setStatus("mask from %s will be loaded at the first frame", path);
    } else if (function == ClusterLoadMask) {
        char message[NDCC_MESSAGE_SIZE];
        loadMask(path, message);
        setStatus("%s", message);
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
        setIntegerParam(ClusterMaskedPixels, (int)stats.masked_pixels);
    }
    finderLock_.unlock();
}

/* Refuses a PV write: the setting keeps its value, StatusMessage and the
 * client's error say why (port locked). */
asynStatus NDPluginClusterCUDA::refuseWrite(asynUser *pasynUser,
                                            const char *format, ...)
{
    char message[NDCC_MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    setStatus("%s", message);
    callParamCallbacks();
    epicsSnprintf(pasynUser->errorMessage, pasynUser->errorMessageSize,
                  "%s: %s", driverName, message);
    return asynError;
}

/* Refuses a window that is empty or not finite; the window moves with the
 * spectrum's energy. */
asynStatus NDPluginClusterCUDA::checkWindow(asynUser *pasynUser, int function,
                                            double value)
{
    double low, high;
    getDoubleParam(ClusterWindowLow, &low);
    getDoubleParam(ClusterWindowHigh, &high);
    const double held = function == ClusterWindowLow ? low : high;
    if (function == ClusterWindowLow)
        low = value;
    else if (function == ClusterWindowHigh)
        high = value;
    cc_energy_window window = {CC_ENERGY_SUM, low, high};
    char message[NDCC_MESSAGE_SIZE];
    if (cc_energy_window_check(&window, message) != CC_OK)
        return refuseWrite(pasynUser, "%s (to move the window up, set "
                                      "WindowHigh first)",
                           message);
    /* The same value again changes nothing: the counting image goes on. */
    if (value != held)
        windowChanged_ = true;
    return asynSuccess;
}

/* Takes a spectrum setting (function, to value) only when the core can
 * make the spectrum it gives with the others, so that a batch never meets
 * one it cannot; else refuses the write (port locked). */
asynStatus NDPluginClusterCUDA::checkSpectrum(asynUser *pasynUser,
                                              int function, double value)
{
    int energy, bins;
    double min, max;
    getIntegerParam(ClusterSpectrumEnergy, &energy);
    getIntegerParam(ClusterSpectrumBins, &bins);
    getDoubleParam(ClusterSpectrumMin, &min);
    getDoubleParam(ClusterSpectrumMax, &max);
    const int heldEnergy = energy, heldBins = bins;
    const double heldMin = min, heldMax = max;
    if (function == ClusterSpectrumEnergy)
        energy = (int)value;
    else if (function == ClusterSpectrumBins)
        bins = (int)value;
    else if (function == ClusterSpectrumMin)
        min = value;
    else
        max = value;
    if ((energy != CC_ENERGY_SUM && energy != CC_ENERGY_SUM2X2) || bins < 1 ||
        bins > (1 << 24) || !std::isfinite(min) || !std::isfinite(max) ||
        !(min < max))
        return refuseWrite(pasynUser,
                           "spectrum refused: %d bins of energy %d on [%g, "
                           "%g) ADU; it takes 1 to %d bins of Sum (0) or "
                           "Sum2x2 (1), SpectrumMin below SpectrumMax (to "
                           "move the range up, set SpectrumMax first)",
                           bins, energy, min, max, 1 << 24);
    /* The same settings again keep the spectrum (an mbbo given a state
     * it lacks writes state 0's value). */
    if (energy != heldEnergy || bins != heldBins || min != heldMin ||
        max != heldMax)
        spectrumChanged_ = true;
    return asynSuccess;
}

asynStatus NDPluginClusterCUDA::writeInt32(asynUser *pasynUser,
                                           epicsInt32 value)
{
    int function = pasynUser->reason;
    if (function < FIRST_CLUSTER_PARAM)
        return NDPluginDriver::writeInt32(pasynUser, value);
    if (function == ClusterResetPedestal || function == ClusterSavePedestal ||
        function == ClusterLoadPedestal || function == ClusterLoadMask) {
        if (value != 0)
            pedestalCommand(function);
        value = 0; /* a command, not a state */
    } else if (function == ClusterSpectrumReset ||
               function == ClusterHitMapReset) {
        /* What the finder counted so far is taken first, so that the
         * other of the two keeps it. */
        char message[NDCC_MESSAGE_SIZE];
        finderLock_.lock();
        if (takeCounts(message) != CC_OK)
            setStatus("%s", message);
        if (function == ClusterSpectrumReset)
            cc_spectrum_reset(spectrum_);
        else
            cc_hitmap_reset(hitmap_);
        finderLock_.unlock();
        value = 0;
    } else if (function == ClusterSpectrumEnergy ||
               function == ClusterSpectrumBins) {
        if (checkSpectrum(pasynUser, function, value) != asynSuccess)
            return asynError;
    } else if (function == ClusterLoadFilesAtStart) {
        /* Read at the first frame (processHeld), when every record has
         * been initialised and autosave has restored the file names. */
        value = value != 0;
    } else if (function == ClusterWindowEnable) {
        int held;
        getIntegerParam(ClusterWindowEnable, &held);
        value = value != 0;
        if (value != held)
            windowChanged_ = true;
    } else if (function == ClusterPublish) {
        publishWanted_ = value != 0;
        publishNow_.signal();
        value = 0;
    } else if (function == ClusterSaveEta || function == ClusterLoadEta ||
               function == ClusterImageReset) {
        if (value != 0)
            etaCommand(function);
        value = 0;
    } else if (function == ClusterEtaMode) {
        if (checkEtaMode(pasynUser, value) != asynSuccess)
            return asynError;
    } else if (function == ClusterFrameMode) {
        if (checkFrameMode(pasynUser, value) != asynSuccess)
            return asynError;
    } else if (function == ClusterDetectorMode) {
        if (checkDetectorMode(pasynUser, value) != asynSuccess)
            return asynError;
    } else if (function == ClusterLoadGainMap ||
               function == ClusterSaveGainMap) {
        if (value != 0)
            gainCommand(function);
        value = 0;
    } else if (function == ClusterGainMode || function == ClusterGainUnit ||
               function == ClusterGainCalBins ||
               function == ClusterGainCalEvents ||
               function == ClusterGainCalMinPhotons ||
               function == ClusterGainMaskFlagged) {
        if (checkGainWrite(pasynUser, function, value) != asynSuccess)
            return asynError;
        value = function == ClusterGainMaskFlagged ? value != 0 : value;
    } else if (function == ClusterEtaFunction || function == ClusterEtaBins ||
               function == ClusterSubpixels) {
        double low, high;
        if (function == ClusterEtaFunction &&
            cc_eta_range((cc_eta_function)value, &low, &high) != CC_OK)
            return refuseWrite(pasynUser, "EtaFunction %d is not eta2 (0), "
                                          "eta2full (1) or eta3 (2)", value);
        if (function == ClusterEtaBins &&
            (value < 1 || value > (int)CC_ETA_BINS_MAX))
            return refuseWrite(pasynUser, "EtaBins %d must be 1 to %u", value,
                               CC_ETA_BINS_MAX);
        if (function == ClusterSubpixels &&
            (value < 1 || value > (int)CC_SUBPIXELS_MAX))
            return refuseWrite(pasynUser, "Subpixels %d must be 1 to %u",
                               value, CC_SUBPIXELS_MAX);
    } else if (function == ClusterMaxBatch) {
        /* Held arrays come from the source's pool: a bound keeps the
         * plugin from taking all of it. */
        if (value < 1 || value > maxBatchLimit)
            return refuseWrite(pasynUser, "MaxBatch %d must be 1 to %d", value,
                               maxBatchLimit);
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
        char message[NDCC_MESSAGE_SIZE];
        /* MaxClusters sizes every output array: no frame has more
         * clusters than pixels (tied maxima each emit one). */
        bool badMax = function == ClusterMaxClusters &&
                      (value < 1 || (double)value > (double)rows * cols);
        if (badMax || cc_config_check(&config, message) != CC_OK) {
            setIntegerParam(function, held);
            if (badMax)
                snprintf(message, sizeof message,
                         "MaxClusters %d must be 1 to %d, the pixels of a "
                         "frame: it sizes the output",
                         value, rows * cols);
            return refuseWrite(pasynUser, "%s", message);
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
    if (function == ClusterNSigma && !(value > 0))
        return refuseWrite(pasynUser, "NSigma %g must be above 0", value);
    if (function == ClusterAutoMaskFactor && !(value == 0 || value >= 1))
        return refuseWrite(pasynUser,
                           "AutoMaskFactor %g must be 0 (off) or at least 1",
                           value);
    if (function == ClusterNSigma || function == ClusterAutoMaskFactor)
        settingsChanged_ = true;
    if ((function == ClusterSpectrumMin || function == ClusterSpectrumMax) &&
        checkSpectrum(pasynUser, function, value) != asynSuccess)
        return asynError;
    if ((function == ClusterPeakLow || function == ClusterPeakHigh) &&
        !std::isfinite(value))
        return refuseWrite(pasynUser, "the fit's range edge %g must be finite",
                           value);
    if (function == ClusterSpectrumPeriod &&
        !(value >= 0 && std::isfinite(value)))
        return refuseWrite(pasynUser,
                           "SpectrumPeriod %g must be 0 (as often as batches "
                           "come) or more seconds",
                           value);
    if (function == ClusterAduPerKeV && !(value >= 0 && std::isfinite(value)))
        return refuseWrite(pasynUser,
                           "AduPerKeV %g must be 0 (no gain) or above", value);
    if ((function == ClusterGainCalLow || function == ClusterGainCalHigh ||
         function == ClusterGainLineEnergy) &&
        checkGainWrite(pasynUser, function, value) != asynSuccess)
        return asynError;
    if (function == ClusterWindowLowKeV || function == ClusterWindowHighKeV) {
        /* The window is kept in ADU: the keV PVs write it. */
        double gain;
        getDoubleParam(ClusterAduPerKeV, &gain);
        if (!(gain > 0))
            return refuseWrite(pasynUser, "the window in keV needs the gain: "
                                          "set AduPerKeV first");
        function = function == ClusterWindowLowKeV ? ClusterWindowLow
                                                   : ClusterWindowHigh;
        value *= gain;
    }
    if ((function == ClusterWindowLow || function == ClusterWindowHigh) &&
        checkWindow(pasynUser, function, value) != asynSuccess)
        return asynError;
    asynStatus status = setDoubleParam(function, value);
    setKeV();
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
