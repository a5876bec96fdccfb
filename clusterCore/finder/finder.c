/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * finder.c: the finder's life cycle: made for a configuration, on the
 * backend it chooses, configured again with what it keeps carried over,
 * its counts and state read, destroyed. The frames go through frames.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

int cc_finder_new(cc_finder **result, const cc_config *config, char *message)
{
    if (result == NULL)
        return cc__message(message, CC_EINVAL, "finder pointer is NULL");
    *result = NULL;
    int rc = cc_config_check(config, message);
    if (rc != CC_OK)
        return rc;
    cc_finder *finder = calloc(1, sizeof *finder);
    if (finder == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for a finder");
    finder->config = *config;
    finder->regions = cc__regions_of((int)config->common_mode, config->rows,
                                     config->cols);
    rc = cc__pedestal_init(&finder->pedestal,
                           (size_t)config->rows * config->cols,
                           config->precision, config->pedestal_frames);
    if (rc == CC_OK && finder->regions.count > 0) {
        finder->region_sums = malloc(3 * (size_t)finder->regions.count *
                                     sizeof(int64_t));
        finder->tally = calloc(finder->regions.count, sizeof *finder->tally);
        if (finder->region_sums == NULL || finder->tally == NULL) {
            cc__pedestal_free(&finder->pedestal);
            rc = CC_ENOMEM;
        }
    }
    if (rc != CC_OK) {
        free(finder->region_sums);
        free(finder->tally);
        free(finder);
        return cc__message(message, rc,
                           "no memory for the pedestal of %" PRIu32
                           " x %" PRIu32 " pixels",
                           config->rows, config->cols);
    }
    rc = cc__finder_open_backend(finder, message);
    if (rc != CC_OK) {
        cc_finder_destroy(finder);
        return rc;
    }
    *result = finder;
    return CC_OK;
}

void cc_finder_destroy(cc_finder *finder)
{
    if (finder == NULL)
        return;
    cc__cpu_destroy(finder->cpu);
#ifdef CC_HAVE_CUDA
    cc__cuda_destroy(finder->cuda);
#endif
    cc__pedestal_free(&finder->pedestal);
    cc_interpolator_destroy(finder->imaging);
    free(finder->gpu_image);
    cc_gain_calibration_destroy(finder->spectra);
    free(finder->gpu_spectra);
    cc_spectrum_destroy(finder->counted_spectrum);
    cc_hitmap_destroy(finder->counted_hitmap);
    free(finder->gpu_counts);
    free(finder->region_sums);
    free(finder->batch_common_mode);
    free(finder->batch_estimated);
    free(finder->tally);
    cc__gain_free(&finder->gain);
    cc_clusters_destroy(finder->no_clusters);
    cc__finder_free_analog(finder->analog);
    free(finder);
}

const char *cc_finder_last_error(const cc_finder *finder)
{
    return finder == NULL ? "finder is NULL" : finder->last_error;
}

cc_backend cc_finder_backend(const cc_finder *finder)
{
    return finder == NULL ? CC_BACKEND_AUTO : finder->backend;
}

const char *cc_finder_backend_description(const cc_finder *finder)
{
    return finder == NULL ? "finder is NULL" : finder->backend_description;
}

uint32_t cc_finder_threads(const cc_finder *finder)
{
    return finder == NULL || finder->cpu == NULL ? 0
                                                 : cc__cpu_threads(finder->cpu);
}

int cc_finder_get_config(const cc_finder *finder, cc_config *config)
{
    if (finder == NULL || config == NULL)
        return CC_EINVAL;
    *config = finder->config;
    return CC_OK;
}

/* Whether the pedestal learnt under old still means the same under new. */
static bool pedestal_survives(const cc_config *old, const cc_config *new)
{
    return old->rows == new->rows && old->cols == new->cols &&
           old->pedestal_frames == new->pedestal_frames &&
           old->adc_mask == new->adc_mask && old->precision == new->precision &&
           old->backend == new->backend && old->common_mode == new->common_mode;
}

int cc_finder_set_config(cc_finder *finder, const cc_config *config)
{
    if (finder == NULL)
        return CC_EINVAL;
    const bool resized = config != NULL &&
                         (config->rows != finder->config.rows ||
                          config->cols != finder->config.cols);
    if (resized && finder->imaging != NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder images %" PRIu32 " x %" PRIu32
                    " pixels: take the image and set no interpolator "
                    "before changing the frame size",
                    finder->config.rows, finder->config.cols);
    if (resized && finder->spectra != NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder keeps spectra of %" PRIu32 " x %" PRIu32
                    " pixels: take them and set no gain calibration before "
                    "changing the frame size",
                    finder->config.rows, finder->config.cols);
    if (resized && finder->counted_hitmap != NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder counts a hit map of %" PRIu32 " x %" PRIu32
                    " pixels: take it and set no tally before changing the "
                    "frame size",
                    finder->config.rows, finder->config.cols);
    if (resized && finder->analog != NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder sums an analog image of %" PRIu32 " x %" PRIu32
                    " pixels: take it and turn it off before "
                    "changing the frame size",
                    finder->config.rows, finder->config.cols);
    cc_finder *next;
    int rc = cc_finder_new(&next, config, finder->last_error);
    if (rc != CC_OK)
        return rc;
    /* The gain map is a setting of the same pixels: it moves over, or the
     * change is refused when the new precision or adc_mask cannot take it. */
    if (finder->gain.map != NULL && !resized) {
        rc = cc_finder_set_gain(next, finder->gain.map, finder->gain.unit);
        if (rc != CC_OK) {
            cc__message(finder->last_error, rc, "%s", next->last_error);
            cc_finder_destroy(next);
            return rc;
        }
    }
    rc = cc__finder_move_accumulators(finder, next);
    if (rc != CC_OK) {
        cc_finder_destroy(next);
        return rc;
    }
    if (pedestal_survives(&finder->config, config)) {
        rc = cc__finder_sync_host_state(finder);
        if (rc == CC_OK) {
            cc__pedestal_swap(&next->pedestal, &finder->pedestal);
            if (config->mask_rms_factor != finder->config.mask_rms_factor)
                rc = cc__mask_by_rms(&next->pedestal, config->mask_rms_factor,
                                     next->last_error);
            if (rc == CC_OK)
                rc = cc__finder_publish_state(next);
            if (rc != CC_OK) /* give the pedestal back untouched */
                cc__pedestal_swap(&next->pedestal, &finder->pedestal);
        }
        if (rc != CC_OK) {
            cc__message(finder->last_error, rc, "%s", next->last_error);
            cc__finder_hand_accumulators(next, finder); /* given back */
            cc_finder_destroy(next);
            return rc;
        }
        next->counts = finder->counts;
        struct region_tally *tally = next->tally; /* the same regions */
        next->tally = finder->tally;
        finder->tally = tally;
    } else if (!resized) {
        cc__pedestal_copy_user_mask(&next->pedestal, &finder->pedestal);
    }
    /* Swap contents so the caller's handle stays valid. */
    cc_finder held = *finder;
    *finder = *next;
    *next = held;
    cc_finder_destroy(next);
    return CC_OK;
}

int cc_finder_get_stats(const cc_finder *finder, cc_finder_stats *stats)
{
    if (finder == NULL || stats == NULL)
        return CC_EINVAL;
    *stats = finder->counts;
    stats->state = finder->pedestal.state;
    stats->frames_trained = finder->pedestal.frames_trained;
    stats->pedestal_window = finder->pedestal.window;
    stats->masked_pixels = cc__mask_count(&finder->pedestal);
    return CC_OK;
}

void cc_finder_reset(cc_finder *finder)
{
    if (finder == NULL)
        return;
    finder->host_state_stale = false;
    cc__pedestal_reset(&finder->pedestal, finder->config.pedestal_frames);
    finder->counts = (cc_finder_stats){0};
    cc__finder_clear_common_mode(finder);
    finder->last_error[0] = '\0';
}

int cc__finder_tune_cuda(cc_finder *finder,
                         const struct cc__cuda_tuning *tuning)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL)
        return cc__cuda_tune(finder->cuda, tuning);
#else
    (void)finder;
    (void)tuning;
#endif
    return CC_ESTATE;
}
