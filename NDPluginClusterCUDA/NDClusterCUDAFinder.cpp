/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAFinder.cpp: the finder and its settings. A setting the
 * core could not work with is refused at once, with the reason in
 * StatusMessage_RBV and the client's error, so that no batch ever meets
 * it; the setting keeps its value. The pedestal and mask commands run on
 * the finder between batches, or at the first frame when none has come.
 */
#include <stdio.h>

#include "NDPluginClusterCUDA.h"

NDClusterCUDAFinder::NDClusterCUDAFinder(NDPluginClusterCUDA &plugin)
    : NDClusterCUDAPart(plugin), finder(NULL), rows(0), cols(0), frameRows_(0),
      frameCols_(0), settingsChanged_(true), pendingLoad_(false),
      pendingMask_(false), framesSeen_(false)
{
    trainingNote[0] = '\0';
    cc_config defaults;
    cc_config_init(&defaults);
    auto setting = [this](asynUser *pasynUser, epicsInt32 &value) {
        return checkSetting(pasynUser, pasynUser->reason, value);
    };
    auto command = [this](asynUser *pasynUser, epicsInt32 &value) {
        if (value != 0)
            this->command(pasynUser->reason);
        value = 0; /* a command, not a state */
        return asynSuccess;
    };
    float64Param(ClusterNSigmaString, &NSigma, defaults.nsigma,
                 [this](asynUser *pasynUser, epicsFloat64 &value) {
                     if (!(value > 0))
                         return refuse(pasynUser, "NSigma %g must be above 0",
                                       value);
                     settingsChanged_ = true;
                     return asynSuccess;
                 });
    int32Param(ClusterNumStreamsString, &NumStreams, (int)defaults.streams,
               setting);
    int32Param(ClusterMaxClustersString, &MaxClusters, 5000, setting);
    int32Param(ClusterSizeXString, &SizeX, (int)defaults.cluster_size_x,
               setting);
    int32Param(ClusterSizeYString, &SizeY, (int)defaults.cluster_size_y,
               setting);
    int32Param(ClusterPedestalFramesString, &PedestalFrames,
               (int)defaults.pedestal_frames, setting);
    int32Param(ClusterBackendString, &Backend, defaults.backend, setting);
    int32Param(ClusterPrecisionString, &Precision, defaults.precision, setting);
    int32Param(ClusterAdcMaskString, &AdcMask, defaults.adc_mask, setting);
    float64Param(ClusterAutoMaskFactorString, &AutoMaskFactor, 0,
                 [this](asynUser *pasynUser, epicsFloat64 &value) {
                     if (!(value == 0 || value >= 1))
                         return refuse(pasynUser,
                                       "AutoMaskFactor %g must be 0 (off) "
                                       "or at least 1",
                                       value);
                     settingsChanged_ = true;
                     return asynSuccess;
                 });
    int32Param(ClusterResetPedestalString, &ResetPedestal, 0, command);
    int32Param(ClusterSavePedestalString, &SavePedestal, 0, command);
    int32Param(ClusterLoadPedestalString, &LoadPedestal, 0, command);
    octetParam(ClusterPedestalFileString, &PedestalFile, "");
    /* Read at the first frame (wanted), when every record has been
     * initialised and autosave has restored the file names. */
    int32Param(ClusterLoadFilesAtStartString, &LoadFilesAtStart, 0,
               [](asynUser *, epicsInt32 &value) {
                   value = value != 0;
                   return asynSuccess;
               });
    octetParam(ClusterMaskFileString, &MaskFile, "");
    int32Param(ClusterLoadMaskString, &LoadMask, 0, command);
    int32Param(ClusterPedestalStateString, &PedestalState,
               CC_PEDESTAL_TRAINING);
    int32Param(ClusterPedestalCountString, &PedestalCount, 0);
    int32Param(ClusterMaskedPixelsString, &MaskedPixels, 0);
    octetParam(ClusterBackendInUseString, &BackendInUse,
               "chosen at the first frame");
    int32Param(ClusterNumClustersString, &NumClusters, 0);
    float64Param(ClusterTotalClustersString, &TotalClusters, 0);
    float64Param(ClusterDroppedClustersString, &DroppedClusters, 0);
}

NDClusterCUDAFinder::~NDClusterCUDAFinder()
{
    cc_finder_destroy(finder);
}

/* The finder's configuration as the PVs say now, for frames of rows x
 * cols (port locked). */
cc_config NDClusterCUDAFinder::config(int frameRows, int frameCols)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = (uint32_t)frameRows;
    config.cols = (uint32_t)frameCols;
    config.nsigma = getDouble(NSigma);
    config.streams = (uint32_t)getInt(NumStreams);
    config.max_clusters = (uint32_t)getInt(MaxClusters);
    config.cluster_size_x = (uint32_t)getInt(SizeX);
    config.cluster_size_y = (uint32_t)getInt(SizeY);
    config.pedestal_frames = (uint32_t)getInt(PedestalFrames);
    config.backend = (cc_backend)getInt(Backend);
    config.precision = (cc_precision)getInt(Precision);
    config.adc_mask = (uint16_t)getInt(AdcMask);
    config.mask_rms_factor = getDouble(AutoMaskFactor);
    config.common_mode = (cc_common_mode)getInt(plugin_.corrections.CommonMode);
    config.threads = 0; /* the CPU backend uses every CPU */
    return config;
}

NDClusterCUDAFinder::Wanted NDClusterCUDAFinder::wanted(int frameRows,
                                                        int frameCols)
{
    Wanted wanted;
    frameRows_ = frameRows;
    frameCols_ = frameCols;
    wanted.config = config(frameRows, frameCols);
    wanted.settingsChanged = settingsChanged_;
    settingsChanged_ = false;
    /* The IOC's first frame: with LoadFilesAtStart, the pedestal and the
     * mask saved before a restart (PedestalFile and MaskFile, as autosave
     * restored them) are loaded before it, as a LoadPedestal and a
     * LoadMask asked then would be. An empty MaskFile loads nothing: it
     * would clear the mask saved with the pedestal. */
    getString(PedestalFile, wanted.loadPath, sizeof wanted.loadPath);
    getString(MaskFile, wanted.maskPath, sizeof wanted.maskPath);
    if (!framesSeen_) {
        framesSeen_ = true;
        if (getInt(LoadFilesAtStart)) {
            pendingLoad_ = pendingLoad_ || wanted.loadPath[0] != '\0';
            pendingMask_ = pendingMask_ || wanted.maskPath[0] != '\0';
        }
    }
    /* A LoadPedestal or LoadMask asked before the frame size was known
     * (as after an IOC restart) is done now, before these frames. */
    wanted.load = pendingLoad_;
    wanted.loadMask = pendingMask_;
    pendingLoad_ = pendingMask_ = false;
    return wanted;
}

int NDClusterCUDAFinder::configure(const cc_config &config, bool newFrameSize,
                                   char *message)
{
    if (finder == NULL)
        return cc_finder_new(&finder, &config, message);
    int rc = cc_finder_set_config(finder, &config);
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE, "%s",
                 cc_finder_last_error(finder));
    else if (newFrameSize)
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "frame size changed to %u x %u: the pedestal is reset",
                 config.cols, config.rows);
    return rc;
}

void NDClusterCUDAFinder::load(const Wanted &wanted, char *message)
{
    char step[NDCC_MESSAGE_SIZE];
    if (wanted.load) {
        /* A refused file keeps the pedestal (these frames then train a
         * new one): the frames are not lost. */
        if (cc_finder_load_pedestal(finder, wanted.loadPath) == CC_OK)
            formatMessage(step, sizeof step, "pedestal loaded from %s",
                          wanted.loadPath);
        else
            formatMessage(step, sizeof step,
                          "%s; the pedestal in force is kept",
                          cc_finder_last_error(finder));
        appendMessage(message, step);
    }
    if (wanted.loadMask) { /* after the pedestal, which brings a mask */
        loadMask(wanted.maskPath, step);
        appendMessage(message, step);
    }
}

int NDClusterCUDAFinder::loadMask(const char *path, char *message)
{
    int rc = path[0] != '\0' ? cc_finder_load_mask(finder, path)
                             : cc_finder_set_mask(finder, NULL);
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE, "%s; the mask in force is kept",
                 cc_finder_last_error(finder));
    else if (path[0] != '\0')
        snprintf(message, NDCC_MESSAGE_SIZE, "mask loaded from %s", path);
    else
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "MaskFile empty: the user's mask is cleared");
    return rc;
}

asynStatus NDClusterCUDAFinder::checkSetting(asynUser *pasynUser, int function,
                                             int value)
{
    int held = getInt(function);
    plugin_.setIntegerParam(function, value);
    /* For the size of the frames coming in: 400 x 400 before the first. */
    int frameRows = frameRows_ > 0 ? frameRows_ : 400;
    int frameCols = frameCols_ > 0 ? frameCols_ : 400;
    char message[NDCC_MESSAGE_SIZE];
    /* MaxClusters sizes every output array: no frame has more clusters
     * than pixels (tied maxima each emit one). */
    bool badMax = function == MaxClusters &&
                  (value < 1 || (double)value > (double)frameRows * frameCols);
    cc_config checked = config(frameRows, frameCols);
    if (badMax || cc_config_check(&checked, message) != CC_OK) {
        plugin_.setIntegerParam(function, held);
        if (badMax)
            snprintf(message, sizeof message,
                     "MaxClusters %d must be 1 to %d, the pixels of a "
                     "frame: it sizes the output",
                     value, frameRows * frameCols);
        return refuse(pasynUser, "%s", message);
    }
    settingsChanged_ = true;
    return asynSuccess;
}

void NDClusterCUDAFinder::report(const cc_finder_stats &stats)
{
    plugin_.setIntegerParam(PedestalState, stats.state);
    plugin_.setIntegerParam(PedestalCount, (int)stats.frames_trained);
    plugin_.setIntegerParam(MaskedPixels, (int)stats.masked_pixels);
    plugin_.setDoubleParam(TotalClusters, (double)stats.clusters);
    plugin_.setDoubleParam(DroppedClusters, (double)stats.clusters_dropped);
}

void NDClusterCUDAFinder::reportTraining(const cc_finder_stats &stats,
                                         int frameMode, size_t trained,
                                         size_t found, size_t noiseless,
                                         size_t pixels)
{
    if (frameMode != NDClusterCUDAModes::FRAME_MODE_FRAME &&
        stats.state == CC_PEDESTAL_READY && stats.frames_pedestal > 0) {
        status("FrameMode %s: %llu frames have updated the pedestal since "
               "it was ready; nothing is found",
               frameMode == NDClusterCUDAModes::FRAME_MODE_PEDESTAL
                   ? "Pedestal"
                   : "NewPedestal",
               (unsigned long long)stats.frames_pedestal);
        trainingNote[0] = '\0';
    } else if (trained > 0 && stats.state == CC_PEDESTAL_READY) {
        /* Without noise every change is a photon, and no change none:
         * say so, or a test pattern's empty results look like a fault. */
        if (noiseless == pixels)
            status("pedestal ready after %u dark frames, but its noise is 0 "
                   "in every pixel: the frames never changed (a test "
                   "pattern?); frames like them give no clusters",
                   stats.pedestal_window);
        else if (noiseless > 0)
            status("pedestal ready after %u dark frames; its noise is 0 in "
                   "%zu of %zu pixels, which never changed: any change "
                   "there is a cluster",
                   stats.pedestal_window, noiseless, pixels);
        else
            status("pedestal ready after %u dark frames",
                   stats.pedestal_window);
        trainingNote[0] = '\0';
    } else if (found == 0) {
        status("training the pedestal: %u of %u dark frames%s",
               (unsigned)stats.frames_trained, stats.pedestal_window,
               trainingNote);
    }
}

/* Reset, save or load the pedestal, or load the mask (port locked; takes
 * the finder lock). */
void NDClusterCUDAFinder::command(int function)
{
    char path[512];
    getString(function == LoadMask ? MaskFile : PedestalFile, path,
              sizeof path);
    lock.lock();
    if (finder == NULL && function == LoadPedestal) {
        pendingLoad_ = true;
        status("pedestal from %s will be loaded at the first frame", path);
    } else if (finder == NULL && function == LoadMask) {
        pendingMask_ = true;
        status("mask from %s will be loaded at the first frame", path);
    } else if (function == LoadMask) {
        char message[NDCC_MESSAGE_SIZE];
        loadMask(path, message);
        status("%s", message);
    } else if (finder == NULL) {
        status("no frame seen yet: the frame size, and so the pedestal, is "
               "not known");
    } else if (function == ResetPedestal) {
        cc_finder_reset(finder);
        snprintf(trainingNote, sizeof trainingNote, " (reset by the user)");
        status("pedestal reset: training on the next dark frames");
    } else {
        int rc = function == SavePedestal
                     ? cc_finder_save_pedestal(finder, path)
                     : cc_finder_load_pedestal(finder, path);
        if (rc != CC_OK)
            status("%s", cc_finder_last_error(finder));
        else
            status("pedestal %s %s",
                   function == SavePedestal ? "saved to" : "loaded from", path);
    }
    cc_finder_stats stats;
    if (finder != NULL && cc_finder_get_stats(finder, &stats) == CC_OK) {
        plugin_.setIntegerParam(PedestalState, stats.state);
        plugin_.setIntegerParam(PedestalCount, (int)stats.frames_trained);
        plugin_.setIntegerParam(MaskedPixels, (int)stats.masked_pixels);
    }
    lock.unlock();
}
