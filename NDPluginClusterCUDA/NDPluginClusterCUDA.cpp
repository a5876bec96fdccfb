/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDPluginClusterCUDA.cpp: the plugin's parameters and the NDPluginDriver
 * callbacks (arrays in, PV writes). The checks a write passes are in
 * NDClusterCUDASettings.cpp, the pedestal and mask commands in
 * NDClusterCUDAPedestal.cpp, the batch pipeline behind processCallbacks in
 * NDClusterCUDAPipeline.cpp, the output arrays in NDClusterCUDAOutputs.cpp,
 * the IOC shell command in NDClusterCUDARegister.cpp.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmath>

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
      rows_(0), cols_(0), frameRows_(0), frameCols_(0),
      settingsChanged_(true), spectrumChanged_(true), windowChanged_(true),
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
/* The asyn name ClusterNAMEString, its type, the index ClusterNAME. */
#define PARAMETER(NAME, type)                                                  \
    {Cluster##NAME##String, type, &NDPluginClusterCUDA::Cluster##NAME}
        PARAMETER(NSigma, asynParamFloat64),
        PARAMETER(NumStreams, asynParamInt32),
        PARAMETER(MaxClusters, asynParamInt32),
        PARAMETER(MaxBatch, asynParamInt32),
        PARAMETER(LastBatch, asynParamInt32),
        PARAMETER(SizeX, asynParamInt32),
        PARAMETER(SizeY, asynParamInt32),
        PARAMETER(PedestalFrames, asynParamInt32),
        PARAMETER(ResetPedestal, asynParamInt32),
        PARAMETER(FrameMode, asynParamInt32),
        PARAMETER(DetectorMode, asynParamInt32),
        PARAMETER(AnalogFrames, asynParamFloat64),
        PARAMETER(PedestalState, asynParamInt32),
        PARAMETER(PedestalCount, asynParamInt32),
        PARAMETER(SavePedestal, asynParamInt32),
        PARAMETER(LoadPedestal, asynParamInt32),
        PARAMETER(PedestalFile, asynParamOctet),
        PARAMETER(LoadFilesAtStart, asynParamInt32),
        PARAMETER(Backend, asynParamInt32),
        PARAMETER(BackendInUse, asynParamOctet),
        PARAMETER(Precision, asynParamInt32),
        PARAMETER(AdcMask, asynParamInt32),
        PARAMETER(NumClusters, asynParamInt32),
        PARAMETER(TotalClusters, asynParamFloat64),
        PARAMETER(DroppedClusters, asynParamFloat64),
        PARAMETER(NoiseMean, asynParamFloat64),
        PARAMETER(MaskFile, asynParamOctet),
        PARAMETER(LoadMask, asynParamInt32),
        PARAMETER(AutoMaskFactor, asynParamFloat64),
        PARAMETER(MaskedPixels, asynParamInt32),
        PARAMETER(FinderTime, asynParamFloat64),
        PARAMETER(BadArrays, asynParamInt32),
        PARAMETER(StatusMessage, asynParamOctet),
        PARAMETER(SpectrumEnergy, asynParamInt32),
        PARAMETER(SpectrumBins, asynParamInt32),
        PARAMETER(SpectrumMin, asynParamFloat64),
        PARAMETER(SpectrumMax, asynParamFloat64),
        PARAMETER(SpectrumPeriod, asynParamFloat64),
        PARAMETER(Spectrum, asynParamFloat64Array),
        PARAMETER(SpectrumX, asynParamFloat64Array),
        PARAMETER(SpectrumReset, asynParamInt32),
        PARAMETER(PeakLow, asynParamFloat64),
        PARAMETER(PeakHigh, asynParamFloat64),
        PARAMETER(PeakFitted, asynParamInt32),
        PARAMETER(HitMapReset, asynParamInt32),
        PARAMETER(WindowEnable, asynParamInt32),
        PARAMETER(WindowLow, asynParamFloat64),
        PARAMETER(WindowHigh, asynParamFloat64),
        PARAMETER(OutsideWindow, asynParamFloat64),
        PARAMETER(Publish, asynParamInt32),
        PARAMETER(Publications, asynParamInt32),
        PARAMETER(AduPerKeV, asynParamFloat64),
        PARAMETER(WindowLowKeV, asynParamFloat64),
        PARAMETER(WindowHighKeV, asynParamFloat64),
        PARAMETER(SpectrumAxis, asynParamFloat64Array),
        PARAMETER(SpectrumAxisUnit, asynParamOctet),
        PARAMETER(PeakPositionKeV, asynParamFloat64),
        PARAMETER(PeakFWHMKeV, asynParamFloat64),
        PARAMETER(EtaMode, asynParamInt32),
        PARAMETER(EtaFunction, asynParamInt32),
        PARAMETER(EtaBins, asynParamInt32),
        PARAMETER(EtaFile, asynParamOctet),
        PARAMETER(SaveEta, asynParamInt32),
        PARAMETER(LoadEta, asynParamInt32),
        PARAMETER(EtaCalibration, asynParamOctet),
        PARAMETER(CalibrationPhotons, asynParamFloat64),
        PARAMETER(Subpixels, asynParamInt32),
        PARAMETER(ImageReset, asynParamInt32),
        PARAMETER(ImagedPhotons, asynParamFloat64),
        PARAMETER(ImageUninterpolable, asynParamFloat64),
        PARAMETER(ImageClipped, asynParamFloat64),
        PARAMETER(ImageOutside, asynParamFloat64),
        PARAMETER(ImageFlatness, asynParamFloat64),
        PARAMETER(CommonMode, asynParamInt32),
        PARAMETER(CommonModeRegions, asynParamInt32),
        PARAMETER(CommonModeNow, asynParamFloat64),
        PARAMETER(CommonModeRms, asynParamFloat64),
        PARAMETER(CommonModeUnestimated, asynParamFloat64),
        PARAMETER(CommonModeLast, asynParamFloat64Array),
        PARAMETER(GainMode, asynParamInt32),
        PARAMETER(GainMapFile, asynParamOctet),
        PARAMETER(GainUnit, asynParamInt32),
        PARAMETER(LoadGainMap, asynParamInt32),
        PARAMETER(SaveGainMap, asynParamInt32),
        PARAMETER(GainMapInUse, asynParamOctet),
        PARAMETER(GainCalLow, asynParamFloat64),
        PARAMETER(GainCalHigh, asynParamFloat64),
        PARAMETER(GainCalBins, asynParamInt32),
        PARAMETER(GainCalEvents, asynParamInt32),
        PARAMETER(GainCalMinPhotons, asynParamInt32),
        PARAMETER(GainLineEnergy, asynParamFloat64),
        PARAMETER(GainMaskFlagged, asynParamInt32),
        PARAMETER(GainCalPhotons, asynParamFloat64),
        PARAMETER(GainCalOutside, asynParamFloat64),
        PARAMETER(GainCalGood, asynParamInt32),
        PARAMETER(GainCalFew, asynParamInt32),
        PARAMETER(GainCalFailed, asynParamInt32),
        PARAMETER(GainCalSpread, asynParamFloat64),
#undef PARAMETER
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
        /* A finder setting. */
        if (checkFinderSetting(pasynUser, function, value) != asynSuccess)
            return asynError;
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
