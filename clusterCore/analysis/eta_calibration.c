/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eta_calibration.c: the flat-field histogram of η (docs/spec.md §7.4),
 * from which the interpolator learns how η maps to where in the pixel a
 * photon landed.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"

int cc__eta_calibration_check(const cc_eta_calibration_info *info,
                              char *message)
{
    double low, high;
    if (cc_eta_range(info->function, &low, &high) != CC_OK)
        return cc__message(message, CC_EINVAL, "unknown eta function %d",
                           (int)info->function);
    if (info->bins == 0 || info->bins > CC_ETA_BINS_MAX)
        return cc__message(message, CC_EINVAL,
                           "eta bins %" PRIu32 " is outside 1..%u", info->bins,
                           CC_ETA_BINS_MAX);
    if (info->low != low || info->high != high)
        return cc__message(message, CC_EINVAL,
                           "eta range [%g, %g] is not the function's [%g, %g]",
                           info->low, info->high, low, high);
    if (info->windowed != 0 && info->windowed != 1)
        return cc__message(message, CC_EINVAL, "windowed is %d, not 0 or 1",
                           info->windowed);
    if (info->windowed)
        return cc_energy_window_check(&info->window, message);
    return CC_OK;
}

cc_eta_calibration *
cc__eta_calibration_alloc(const cc_eta_calibration_info *info)
{
    size_t cells = (size_t)info->bins * info->bins;
    cc_eta_calibration *made = calloc(1,
                                      sizeof *made + cells * sizeof(uint64_t));
    if (made != NULL)
        made->info = *info;
    return made;
}

int cc_eta_calibration_new(cc_eta_calibration **calibration,
                           cc_eta_function function, uint32_t bins,
                           const cc_energy_window *window, char *message)
{
    if (calibration == NULL)
        return cc__message(message, CC_EINVAL, "calibration pointer is NULL");
    *calibration = NULL;
    cc_eta_calibration_info info = {.function = function,
                                    .bins = bins,
                                    .windowed = window != NULL};
    if (window != NULL)
        info.window = *window;
    /* An unknown function leaves the range 0, 0: the check names it. */
    cc_eta_range(function, &info.low, &info.high);
    int rc = cc__eta_calibration_check(&info, message);
    if (rc != CC_OK)
        return rc;
    *calibration = cc__eta_calibration_alloc(&info);
    if (*calibration == NULL)
        return cc__message(message, CC_ENOMEM,
                           "no memory for %" PRIu32 " x %" PRIu32 " eta bins",
                           bins, bins);
    return CC_OK;
}

void cc_eta_calibration_destroy(cc_eta_calibration *calibration)
{
    free(calibration);
}

int cc_eta_calibration_add_frame(cc_eta_calibration *calibration,
                                 const cc_frame_clusters *frame)
{
    if (calibration == NULL || frame == NULL ||
        (frame->count > 0 && frame->values == NULL) ||
        frame->size_x < CC_CLUSTER_SIZE_MIN ||
        frame->size_y < CC_CLUSTER_SIZE_MIN)
        return CC_EINVAL;
    cc_eta_calibration_info *info = &calibration->info;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    /* As the interpolator computes it, so that both bin alike. */
    const double width = (info->high - info->low) / (double)info->bins;
    for (uint32_t i = 0; i < frame->count; i++) {
        const int32_t *values = frame->values + i * cells;
        if (info->windowed && !cluster_in_window(&info->window, frame->size_x,
                                                 frame->size_y, values)) {
            info->outside++;
            continue;
        }
        cc_eta_value eta = cluster_eta(info->function, info->low, info->high,
                                       frame->size_x, frame->size_y, values);
        if (!eta.valid) {
            info->uninterpolable++;
            continue;
        }
        uint32_t ix = eta_bin(eta.x, info->low, width, info->bins);
        uint32_t iy = eta_bin(eta.y, info->low, width, info->bins);
        calibration->counts[(size_t)ix * info->bins + iy]++;
        info->photons++;
    }
    return CC_OK;
}

int cc_eta_calibration_add(cc_eta_calibration *calibration,
                           const cc_clusters *clusters)
{
    if (calibration == NULL || clusters == NULL)
        return CC_EINVAL;
    for (size_t k = 0; k < cc_clusters_frame_count(clusters); k++) {
        cc_frame_clusters frame;
        int rc = cc_clusters_frame(clusters, k, &frame);
        if (rc == CC_OK)
            rc = cc_eta_calibration_add_frame(calibration, &frame);
        if (rc != CC_OK)
            return rc;
    }
    return CC_OK;
}

void cc_eta_calibration_reset(cc_eta_calibration *calibration)
{
    if (calibration == NULL)
        return;
    cc_eta_calibration_info *info = &calibration->info;
    memset(calibration->counts, 0,
           (size_t)info->bins * info->bins * sizeof(uint64_t));
    info->photons = info->outside = info->uninterpolable = 0;
}

int cc_eta_calibration_merge(cc_eta_calibration *into,
                             const cc_eta_calibration *from)
{
    if (into == NULL || from == NULL)
        return CC_EINVAL;
    cc_eta_calibration_info *to = &into->info;
    const cc_eta_calibration_info *add = &from->info;
    if (to->function != add->function || to->bins != add->bins ||
        to->windowed != add->windowed ||
        (to->windowed && (to->window.energy != add->window.energy ||
                          to->window.low != add->window.low ||
                          to->window.high != add->window.high)))
        return CC_EMISMATCH;
    for (size_t c = 0; c < (size_t)to->bins * to->bins; c++)
        into->counts[c] += from->counts[c];
    to->photons += add->photons;
    to->outside += add->outside;
    to->uninterpolable += add->uninterpolable;
    return CC_OK;
}

int cc_eta_calibration_info_get(const cc_eta_calibration *calibration,
                                cc_eta_calibration_info *info)
{
    if (calibration == NULL || info == NULL)
        return CC_EINVAL;
    *info = calibration->info;
    return CC_OK;
}

const uint64_t *cc_eta_calibration_counts(const cc_eta_calibration *calibration)
{
    return calibration == NULL ? NULL : calibration->counts;
}
