/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDASettings.cpp: the checks a PV write passes before the
 * plugin takes it, and the finder's configuration the PVs make. A write
 * the core could not work with is refused at once, with the reason in
 * StatusMessage_RBV and the client's error, so that no batch ever meets
 * it; the setting keeps its value. All of this runs with the port locked.
 */
#include <stdarg.h>
#include <stdio.h>

#include <cmath>

#include "NDPluginClusterCUDA.h"

static const char *driverName = "NDPluginClusterCUDA";

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

/* A finder setting (function, to value), checked with the others as the
 * core checks a configuration, for the size of the frames coming in (400 x
 * 400 before the first). */
asynStatus NDPluginClusterCUDA::checkFinderSetting(asynUser *pasynUser,
                                                   int function, int value)
{
    int held;
    getIntegerParam(function, &held);
    setIntegerParam(function, value);
    int rows = frameRows_ > 0 ? frameRows_ : 400;
    int cols = frameCols_ > 0 ? frameCols_ : 400;
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
    return asynSuccess;
}
