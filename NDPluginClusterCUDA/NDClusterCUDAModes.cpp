/* SPDX-License-Identifier: BSD-3-Clause */
/* NDClusterCUDAModes.cpp: PSI's MÖNCH modes (NDClusterCUDAModes.h). */
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "NDPluginClusterCUDA.h"

NDClusterCUDAModes::NDClusterCUDAModes(NDPluginClusterCUDA &plugin)
    : NDClusterCUDAPart(plugin), newPedestalPending_(false), analogOn_(false),
      analogFrames_(0)
{
    /* One of the three, and NewPedestal asks for a reset at the next
     * batch, each time it is written. */
    int32Param(ClusterFrameModeString, &FrameMode, FRAME_MODE_FRAME,
               [this](asynUser *pasynUser, epicsInt32 &mode) {
                   static const char *const states[3] = {"Frame", "Pedestal",
                                                         "NewPedestal"};
                   if (checkModeState(pasynUser, "FrameMode", mode, states) !=
                       asynSuccess)
                       return asynError;
                   if (mode == FRAME_MODE_NEW_PEDESTAL)
                       newPedestalPending_ = true;
                   return asynSuccess;
               });
    /* One of the three; Interpolate is EtaMode Interpolate, with its
     * refusal when no η calibration can be had. */
    int32Param(
        ClusterDetectorModeString, &DetectorMode, DETECTOR_MODE_COUNT,
        [this](asynUser *pasynUser, epicsInt32 &mode) {
            static const char *const states[3] = {"Count", "Analog",
                                                  "Interpolate"};
            if (checkModeState(pasynUser, "DetectorMode", mode, states) !=
                asynSuccess)
                return asynError;
            if (mode != DETECTOR_MODE_INTERPOLATE)
                return asynSuccess;
            if (plugin_.imaging.checkEtaMode(
                    pasynUser, NDClusterCUDAImaging::ETA_INTERPOLATE) !=
                asynSuccess)
                return asynError;
            plugin_.setIntegerParam(plugin_.imaging.EtaMode,
                                    NDClusterCUDAImaging::ETA_INTERPOLATE);
            return asynSuccess;
        });
    float64Param(ClusterAnalogFramesString, &AnalogFrames, 0);
}

/* Refuses a write of mode to the PV named unless it is one of its three
 * states, 0 to 2 (port locked). */
asynStatus NDClusterCUDAModes::checkModeState(asynUser *pasynUser,
                                              const char *pv, int mode,
                                              const char *const states[3])
{
    if (mode >= 0 && mode <= 2)
        return asynSuccess;
    return refuse(pasynUser, "%s %d is not %s (0), %s (1) or %s (2)", pv, mode,
                  states[0], states[1], states[2]);
}

NDClusterCUDAModes::Wanted NDClusterCUDAModes::wanted()
{
    Wanted wanted;
    wanted.frameMode = getInt(FrameMode);
    wanted.analog = getInt(DetectorMode) == DETECTOR_MODE_ANALOG;
    wanted.newPedestal = newPedestalPending_;
    newPedestalPending_ = false;
    return wanted;
}

int NDClusterCUDAModes::pedestalFrames(const Wanted &wanted,
                                       const std::vector<NDArray *> &arrays,
                                       size_t *trained, cc_finder_stats *stats)
{
    cc_finder *finder = plugin_.finder.finder;
    if (wanted.newPedestal) {
        cc_finder_reset(finder);
        snprintf(plugin_.finder.trainingNote,
                 sizeof plugin_.finder.trainingNote,
                 " (reset by FrameMode NewPedestal)");
    }
    if (wanted.frameMode == FRAME_MODE_FRAME) {
        cc_finder_get_stats(finder, stats); /* after the reset */
        return CC_OK;
    }
    frames_.clear();
    for (size_t k = 0; k < arrays.size(); k++)
        frames_.push_back((const uint16_t *)arrays[k]->pData);
    int rc = cc_finder_add_pedestal_list(finder, frames_.data(),
                                         frames_.size());
    if (rc == CC_OK)
        *trained = arrays.size();
    cc_finder_get_stats(finder, stats);
    return rc;
}

/* What it summed stays in the image when it stops. */
void NDClusterCUDAModes::applyAnalog(bool wanted, char *message)
{
    if (wanted == analogOn_)
        return;
    cc_finder *finder = plugin_.finder.finder;
    const size_t pixels = (size_t)plugin_.finder.rows * plugin_.finder.cols;
    if (wanted) {
        if (analogSums_.size() != pixels) {
            analogSums_.assign(pixels, 0.0);
            analogFrames_ = 0;
        }
        if (cc_finder_set_analog(finder, 1) == CC_OK)
            analogOn_ = true;
        else
            snprintf(message, NDCC_MESSAGE_SIZE, "no analog image: %s",
                     cc_finder_last_error(finder));
        return;
    }
    takeAnalog(message);
    cc_finder_set_analog(finder, 0);
    analogOn_ = false;
}

void NDClusterCUDAModes::stopAnalog()
{
    if (analogOn_)
        cc_finder_set_analog(plugin_.finder.finder, 0);
    analogOn_ = false;
    analogSums_.clear();
    analogFrames_ = 0;
}

int NDClusterCUDAModes::takeAnalog(char *message)
{
    cc_finder *finder = plugin_.finder.finder;
    int rc = analogOn_ ? cc_finder_take_analog(finder, analogSums_.data(),
                                               &analogFrames_)
                       : CC_OK;
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "the analog image could not be taken: %s",
                 cc_finder_last_error(finder));
    return rc;
}

NDArray *NDClusterCUDAModes::analogArray()
{
    if (analogSums_.empty())
        return NULL;
    NDArray *array = plugin_.outputs.mapArray(
        (size_t)plugin_.finder.cols, (size_t)plugin_.finder.rows, NDFloat64,
        "analog image (the summed values a pixel)");
    if (array != NULL)
        memcpy(array->pData, analogSums_.data(),
               analogSums_.size() * sizeof(double));
    return array;
}

bool NDClusterCUDAModes::resetAnalog()
{
    bool analog = !analogSums_.empty();
    char message[NDCC_MESSAGE_SIZE];
    takeAnalog(message); /* and drop it */
    std::fill(analogSums_.begin(), analogSums_.end(), 0.0);
    analogFrames_ = 0;
    return analog;
}
