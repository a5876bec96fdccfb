/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * corrections.c: the finder's corrections: the common mode's figures
 * (docs/spec.md §8), the bad-pixel mask (§7.1) and the gain map (§9),
 * set, loaded and read.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

/* Room for a batch's common-mode figures. */
int cc__finder_reserve_common_mode(cc_finder *finder, size_t n_frames)
{
    if (finder->regions.count == 0 || n_frames <= finder->batch_capacity)
        return CC_OK;
    size_t cells = n_frames * finder->regions.count;
    void *values = realloc(finder->batch_common_mode,
                           cells *
                               cc__precision_size(finder->config.precision));
    if (values != NULL)
        finder->batch_common_mode = values;
    uint8_t *estimated = realloc(finder->batch_estimated, cells);
    if (estimated != NULL)
        finder->batch_estimated = estimated;
    if (values == NULL || estimated == NULL)
        return FAIL(finder, CC_ENOMEM,
                    "no memory for the common mode of %zu frames", n_frames);
    finder->batch_capacity = n_frames;
    return CC_OK;
}

/* Adds a processed batch's common mode to each region's tally, frame by
 * frame, so that the figures do not depend on the batches. */
void cc__finder_tally_common_mode(cc_finder *finder, size_t n_frames)
{
    uint32_t regions = finder->regions.count;
    bool in_double = finder->config.precision == CC_PRECISION_DOUBLE;
    for (size_t k = 0; k < n_frames; k++)
        for (uint32_t r = 0; r < regions; r++) {
            size_t at = k * regions + r;
            struct region_tally *tally = &finder->tally[r];
            double c = in_double
                           ? ((const double *)finder->batch_common_mode)[at]
                           : ((const float *)finder->batch_common_mode)[at];
            tally->last = c;
            if (!finder->batch_estimated[at]) {
                tally->unestimated++;
                continue;
            }
            tally->estimated++;
            tally->sum += c;
            tally->sum_sq += c * c;
        }
}

/* The common-mode figures start again, with the counts (docs/spec.md §8.5). */
void cc__finder_clear_common_mode(cc_finder *finder)
{
    if (finder->tally != NULL)
        memset(finder->tally, 0, finder->regions.count * sizeof *finder->tally);
}

int cc_finder_common_mode(const cc_finder *finder,
                          cc_common_mode_region *regions, uint32_t n)
{
    if (finder == NULL || (regions == NULL && n > 0) ||
        n != finder->regions.count)
        return CC_EINVAL;
    for (uint32_t r = 0; r < n; r++) {
        const struct region_tally *tally = &finder->tally[r];
        double frames = (double)tally->estimated;
        double mean = frames > 0 ? tally->sum / frames : 0.0;
        double var = frames > 0 ? tally->sum_sq / frames - mean * mean : 0.0;
        regions[r] =
            (cc_common_mode_region){.frames_estimated = tally->estimated,
                                    .frames_unestimated = tally->unestimated,
                                    .mean = mean,
                                    .rms = var > 0 ? sqrt(var) : 0.0,
                                    .last = tally->last};
    }
    return CC_OK;
}

int cc_finder_set_mask(cc_finder *finder, const uint8_t *mask)
{
    if (finder == NULL)
        return CC_EINVAL;
    struct cc__pedestal *pedestal = &finder->pedestal;
    for (size_t p = 0; mask != NULL && p < pedestal->pixels; p++)
        if (mask[p] > 1)
            return FAIL(finder, CC_EINVAL,
                        "mask pixel (row %zu, col %zu) is %u; a mask holds "
                        "0 (good) or 1 (bad)",
                        p / finder->config.cols, p % finder->config.cols,
                        (unsigned)mask[p]);
    /* cc__finder_publish_state sends s and s2 too */
    int rc = cc__finder_sync_host_state(finder);
    if (rc != CC_OK)
        return rc;
    uint8_t *next = malloc(pedestal->pixels);
    if (next == NULL)
        return FAIL(finder, CC_ENOMEM, "no memory for a mask");
    for (size_t p = 0; p < pedestal->pixels; p++)
        next[p] = mask != NULL && mask[p] ? CC__MASKED_BY_USER : 0;
    uint8_t *held = pedestal->mask;
    pedestal->mask = next;
    /* The rms rule's median leaves out the user's pixels: judge again. */
    rc = cc__mask_by_rms(pedestal, finder->config.mask_rms_factor,
                         finder->last_error);
    if (rc == CC_OK)
        rc = cc__finder_publish_state(finder);
    if (rc != CC_OK) {
        pedestal->mask = held;
        free(next);
        return rc;
    }
    free(held);
    return CC_OK;
}

int cc_finder_load_mask(cc_finder *finder, const char *path)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (path == NULL)
        return FAIL(finder, CC_EINVAL, "path is NULL");
    uint8_t *mask = malloc(finder->pedestal.pixels);
    if (mask == NULL)
        return FAIL(finder, CC_ENOMEM, "no memory for a mask");
    int rc = cc__npy_read_bytes(path, finder->config.rows, finder->config.cols,
                                mask, finder->last_error);
    if (rc == CC_OK)
        rc = cc_finder_set_mask(finder, mask);
    free(mask);
    return rc;
}

int cc_finder_get_mask(cc_finder *finder, uint8_t *mask)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (mask == NULL)
        return FAIL(finder, CC_EINVAL, "mask is NULL");
    for (size_t p = 0; p < finder->pedestal.pixels; p++)
        mask[p] = finder->pedestal.mask[p] != 0;
    return CC_OK;
}

int cc_finder_set_gain(cc_finder *finder, const double *gain, cc_gain_unit unit)
{
    if (finder == NULL)
        return CC_EINVAL;
    struct cc__gain next;
    int rc = cc__gain_make(&next, gain, finder->pedestal.pixels,
                           finder->config.cols, unit, finder->config.precision,
                           finder->config.adc_mask, finder->last_error);
    if (rc != CC_OK)
        return rc;
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL)
        rc = cc__cuda_set_gain(finder->cuda, next.factor, finder->last_error);
#endif
    if (rc != CC_OK) { /* the GPU keeps the map in force: so does the host */
        cc__gain_free(&next);
        return rc;
    }
    cc__gain_free(&finder->gain);
    finder->gain = next;
    return CC_OK;
}

int cc_finder_load_gain(cc_finder *finder, const char *path, cc_gain_unit unit)
{
    if (finder == NULL)
        return CC_EINVAL;
    double *gain = malloc(finder->pedestal.pixels * sizeof *gain);
    if (gain == NULL)
        return FAIL(finder, CC_ENOMEM, "no memory for a gain map");
    int rc = cc_gain_map_read(path, finder->config.rows, finder->config.cols,
                              gain, finder->last_error);
    if (rc == CC_OK)
        rc = cc_finder_set_gain(finder, gain, unit);
    free(gain);
    return rc;
}

int cc_finder_get_gain(const cc_finder *finder, double *gain,
                       cc_gain_unit *unit)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (finder->gain.map == NULL)
        return CC_ESTATE;
    if (gain != NULL)
        memcpy(gain, finder->gain.map, finder->pedestal.pixels * sizeof *gain);
    if (unit != NULL)
        *unit = finder->gain.unit;
    return CC_OK;
}
