/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAModes.cpp: PSI's MÖNCH frame modes (FrameMode). Frame: the
 * arrays are found. Pedestal: they are pedestal frames (docs/spec.md
 * §2.7), which train the pedestal or update it, and nothing is found.
 * NewPedestal: the pedestal is reset before the next batch, whose arrays
 * and those after it are pedestal frames. A mode written takes effect
 * between batches: each batch carries the mode of its job. In iocMoench
 * the mode follows the driver's JsonFrameMode_RBV
 * (db/NDClusterCUDAFollow.template).
 */
#include <stdio.h>

#include "NDPluginClusterCUDA.h"

/* A FrameMode write (port locked): one of the three, and NewPedestal asks
 * for a reset at the next batch, each time it is written. */
asynStatus NDPluginClusterCUDA::checkFrameMode(asynUser *pasynUser, int mode)
{
    if (mode != FRAME_MODE_FRAME && mode != FRAME_MODE_PEDESTAL &&
        mode != FRAME_MODE_NEW_PEDESTAL)
        return refuseWrite(pasynUser,
                           "FrameMode %d is not Frame (0), Pedestal (1) or "
                           "NewPedestal (2)",
                           mode);
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
