/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NDClusterCUDAPedestal.cpp: the pedestal and mask commands (ResetPedestal,
 * SavePedestal, LoadPedestal, LoadMask), done on the finder between
 * batches, or at the first frame when none has come yet.
 */
#include <stdio.h>

#include "NDPluginClusterCUDA.h"

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
