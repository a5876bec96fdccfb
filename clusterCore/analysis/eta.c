/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eta.c: the η of clusters, where in its pixel each photon landed from how
 * its charge is shared (docs/spec.md §7.3). A pure function of a cluster's
 * int32 values: sums are exact integers and each quotient one division in
 * double, so every program gets the same bits (cluster_arithmetic.h).
 */
#include "analysis.h"

int cc_eta_range(cc_eta_function function, double *low, double *high)
{
    if (low == NULL || high == NULL)
        return CC_EINVAL;
    switch (function) {
    case CC_ETA2:
    case CC_ETA2_FULL:
        *low = 0.0;
        *high = 1.0;
        return CC_OK;
    case CC_ETA3:
        *low = -0.5;
        *high = 0.5;
        return CC_OK;
    }
    return CC_EINVAL;
}

int cc_eta_frame(cc_eta_function function, const cc_frame_clusters *frame,
                 cc_eta_value *eta)
{
    double low, high;
    if (frame == NULL || (eta == NULL && frame->count > 0) ||
        cc_eta_range(function, &low, &high) != CC_OK ||
        frame->size_x < CC_CLUSTER_SIZE_MIN ||
        frame->size_y < CC_CLUSTER_SIZE_MIN)
        return CC_EINVAL;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    for (uint32_t i = 0; i < frame->count; i++)
        eta[i] = cluster_eta(function, low, high, frame->size_x, frame->size_y,
                             frame->values + i * cells);
    return CC_OK;
}

int cc_eta(cc_eta_function function, const cc_clusters *clusters,
           cc_eta_value *eta)
{
    double low, high;
    if (clusters == NULL || cc_eta_range(function, &low, &high) != CC_OK ||
        (eta == NULL && cc_clusters_total(clusters) > 0))
        return CC_EINVAL;
    size_t done = 0;
    for (size_t k = 0; k < cc_clusters_frame_count(clusters); k++) {
        cc_frame_clusters frame;
        int rc = cc_clusters_frame(clusters, k, &frame);
        if (rc == CC_OK)
            rc = cc_eta_frame(function, &frame,
                              eta == NULL ? NULL : eta + done);
        if (rc != CC_OK)
            return rc;
        done += frame.count;
    }
    return CC_OK;
}
