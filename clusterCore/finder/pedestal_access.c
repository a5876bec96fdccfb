/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal_access.c: the finder's pedestal read out as its mean and rms
 * maps, saved to a file and loaded from one.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

int cc_finder_pedestal_maps(cc_finder *finder, double *mean, double *rms)
{
    if (finder == NULL)
        return CC_EINVAL;
    int rc = cc__finder_sync_host_state(finder);
    if (rc != CC_OK)
        return rc;
    const struct cc__pedestal *pedestal = &finder->pedestal;
    if (pedestal->state == CC_PEDESTAL_READY) {
        if (pedestal->precision == CC_PRECISION_DOUBLE)
            cc__pedestal_maps_double(pedestal, mean, rms);
        else
            cc__pedestal_maps_float(pedestal, mean, rms);
        return CC_OK;
    }
    if (pedestal->frames_trained == 0)
        return CC_ESTATE;
    /* While training: the plain statistics of the frames summed so far. */
    double n = (double)pedestal->frames_trained;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        /* Read as signed: common mode's shifts may take a sum below 0. */
        double m = (double)(int64_t)pedestal->sum[p] / n;
        double var = (double)pedestal->sum_sq[p] / n - m * m;
        if (mean != NULL)
            mean[p] = m;
        if (rms != NULL)
            rms[p] = var > 0 ? sqrt(var) : 0.0;
    }
    return CC_OK;
}

int cc_finder_save_pedestal(cc_finder *finder, const char *path)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (path == NULL)
        return FAIL(finder, CC_EINVAL, "path is NULL");
    int rc = cc__finder_sync_host_state(finder);
    if (rc != CC_OK)
        return rc;
    return cc__pedestal_save(&finder->pedestal, finder->config.rows,
                             finder->config.cols, finder->config.adc_mask, path,
                             finder->last_error);
}

int cc_finder_load_pedestal(cc_finder *finder, const char *path)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (path == NULL)
        return FAIL(finder, CC_EINVAL, "path is NULL");
    struct cc__pedestal loaded;
    int rc = cc__pedestal_init(&loaded, finder->pedestal.pixels,
                               finder->pedestal.precision,
                               finder->config.pedestal_frames);
    if (rc != CC_OK)
        return FAIL(finder, rc, "no memory to load a pedestal");
    bool with_mask = false;
    rc = cc__pedestal_load(&loaded, finder->config.rows, finder->config.cols,
                           finder->config.adc_mask,
                           finder->config.pedestal_frames, path, &with_mask,
                           finder->last_error);
    if (rc == CC_OK && !with_mask) { /* a version 1 file: keep the mask */
        cc__pedestal_copy_user_mask(&loaded, &finder->pedestal);
        rc = cc__mask_by_rms(&loaded, finder->config.mask_rms_factor,
                             finder->last_error);
    }
    if (rc == CC_OK) {
        if (loaded.state == CC_PEDESTAL_READY)
            cc__pedestal_take_reference(&loaded);
        cc__pedestal_swap(&finder->pedestal, &loaded);
        rc = cc__finder_publish_state(finder);
        if (rc == CC_OK) {
            finder->counts = (cc_finder_stats){0};
            cc__finder_clear_common_mode(finder);
            finder->host_state_stale = false;
        } else { /* the GPU kept the old state: keep the old pedestal */
            cc__pedestal_swap(&finder->pedestal, &loaded);
        }
    }
    cc__pedestal_free(&loaded);
    return rc;
}
