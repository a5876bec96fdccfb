/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAModes.cpp: PSI's MÖNCH modes. FrameMode: Frame, the
 * arrays are found; Pedestal, they are pedestal frames (docs/spec.md
 * §2.7), which train the pedestal or update it, and nothing is found;
 * NewPedestal, the pedestal is reset before the next batch, whose arrays
 * and those after it are pedestal frames. DetectorMode: Count, the
 * counting image (always made); Analog, the finder sums the analog image
 * too (§4.8, published on address 8); Interpolate, the interpolated image
 * (it sets EtaMode Interpolate, refused without an η calibration). A mode
 * written takes effect between batches: each batch carries the modes of
 * its job. In iocMoench both follow the driver's JsonFrameMode_RBV and
 * JsonDetectorMode_RBV (db/NDClusterCUDAFollow.template).
 */
#include <stdio.h>
#include <string.h>

#include "NDPluginClusterCUDA.h"

/* Refuses a write of mode to the PV named unless it is one of its three
 * states, 0 to 2 (port locked). */
asynStatus NDPluginClusterCUDA::checkModeState(asynUser *pasynUser,
                                              const char *pv, int mode,
                                              const char *const states[3])
{
    if (mode >= 0 && mode <= 2)
        return asynSuccess;
    return refuseWrite(pasynUser, "%s %d is not %s (0), %s (1) or %s (2)", pv,
                       mode, states[0], states[1], states[2]);
}

/* A FrameMode write (port locked): one of the three, and NewPedestal asks
 * for a reset at the next batch, each time it is written. */
asynStatus NDPluginClusterCUDA::checkFrameMode(asynUser *pasynUser, int mode)
{
    static const char *const states[3] = {"Frame", "Pedestal", "NewPedestal"};
    if (checkModeState(pasynUser, "FrameMode", mode, states) != asynSuccess)
        return asynError;
    if (mode == FRAME_MODE_NEW_PEDESTAL)
        newPedestalPending_ = true;
    return asynSuccess;
}

/* A batch's job of FrameMode Pedestal or NewPedestal, or the first batch
 * after NewPedestal was written (finder lock held): the reset it asks for,
 * then every array a pedestal frame, unless the mode is Frame again. */
int NDPluginClusterCUDA::runPedestalFrames(Batch &batch)
{
    const size_t n = batch.arrays.size();
    if (batch.job.newPedestal) {
        cc_finder_reset(finder_);
        snprintf(trainingNote_, sizeof trainingNote_,
                 " (reset by FrameMode NewPedestal)");
    }
    if (batch.job.frameMode == FRAME_MODE_FRAME)
        return CC_OK;
    finderFrames_.clear();
    for (size_t k = 0; k < n; k++)
        finderFrames_.push_back((const uint16_t *)batch.arrays[k]->pData);
    int rc = cc_finder_add_pedestal_list(finder_, finderFrames_.data(), n);
    if (rc == CC_OK)
        batch.trained = n;
    cc_finder_get_stats(finder_, &batch.stats);
    return rc;
}

/* A DetectorMode write (port locked): one of the three; Interpolate is
 * EtaMode Interpolate, with its refusal when no η calibration can be had. */
asynStatus NDPluginClusterCUDA::checkDetectorMode(asynUser *pasynUser, int mode)
{
    static const char *const states[3] = {"Count", "Analog", "Interpolate"};
    if (checkModeState(pasynUser, "DetectorMode", mode, states) != asynSuccess)
        return asynError;
    if (mode != DETECTOR_MODE_INTERPOLATE)
        return asynSuccess;
    if (checkEtaMode(pasynUser, ETA_INTERPOLATE) != asynSuccess)
        return asynError;
    setIntegerParam(ClusterEtaMode, ETA_INTERPOLATE);
    return asynSuccess;
}

/* The finder sums the analog image while the job asks for it (finder
 * lock held); what it summed stays in analogSums_ when it stops. */
void NDPluginClusterCUDA::applyAnalog(bool wanted, char *message)
{
    if (wanted == analogOn_)
        return;
    const size_t pixels = (size_t)rows_ * cols_;
    if (wanted) {
        if (analogSums_.size() != pixels) {
            analogSums_.assign(pixels, 0.0);
            analogFrames_ = 0;
        }
        if (cc_finder_set_analog(finder_, 1) == CC_OK)
            analogOn_ = true;
        else
            snprintf(message, NDCC_MESSAGE_SIZE,
                     "no analog image: %s", cc_finder_last_error(finder_));
        return;
    }
    takeAnalog(message);
    cc_finder_set_analog(finder_, 0);
    analogOn_ = false;
}

/* Before a new frame size (finder lock held): the finder stops summing
 * and the image of the old size goes. */
void NDPluginClusterCUDA::stopAnalog()
{
    if (analogOn_)
        cc_finder_set_analog(finder_, 0);
    analogOn_ = false;
    analogSums_.clear();
    analogFrames_ = 0;
}

/* Adds what the finder summed since the last take to analogSums_
 * (finder lock held; message: NDCC_MESSAGE_SIZE bytes). */
int NDPluginClusterCUDA::takeAnalog(char *message)
{
    int rc = analogOn_ ? cc_finder_take_analog(finder_, analogSums_.data(),
                                               &analogFrames_)
                       : CC_OK;
    if (rc != CC_OK)
        snprintf(message, NDCC_MESSAGE_SIZE,
                 "the analog image could not be taken: %s",
                 cc_finder_last_error(finder_));
    return rc;
}

/* The analog image as an NDArray for address 8, or NULL when there is
 * none or the pool has no array (finder lock held, after takeAnalog). */
NDArray *NDPluginClusterCUDA::analogArray()
{
    if (analogSums_.empty())
        return NULL;
    NDArray *array = mapArray(cols_, rows_, NDFloat64,
                              "analog image (the summed values a pixel)");
    if (array != NULL)
        memcpy(array->pData, analogSums_.data(),
               analogSums_.size() * sizeof(double));
    return array;
}
