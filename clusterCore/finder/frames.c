/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frames.c: frames into the finder, with the checks in front of every
 * public call: dark frames train the pedestal; pedestal frames update it
 * and data frames are found, a batch at a time, on the backend in use.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

/* Ends training and gives the pedestal to the backend. If the GPU cannot
 * take it, training is reopened with the same sums, so nothing is lost. */
static int freeze(cc_finder *finder)
{
    cc__pedestal_freeze(&finder->pedestal);
    int rc = cc__mask_by_rms(&finder->pedestal, finder->config.mask_rms_factor,
                             finder->last_error);
    if (rc == CC_OK)
        rc = cc__finder_publish_state(finder);
    if (rc != CC_OK) {
        finder->pedestal.state = CC_PEDESTAL_TRAINING;
        finder->pedestal.window = finder->config.pedestal_frames;
        cc__mask_by_rms(&finder->pedestal, 0, NULL); /* clears its marks */
    }
    return rc;
}

int cc_finder_train(cc_finder *finder, const uint16_t *frames, size_t n_frames)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (frames == NULL && n_frames > 0)
        return FAIL(finder, CC_EINVAL, "frames is NULL");
    struct cc__pedestal *pedestal = &finder->pedestal;
    if (pedestal->state != CC_PEDESTAL_TRAINING)
        return FAIL(finder, CC_ESTATE,
                    "the pedestal is ready; reset it to train again");
    uint64_t missing = pedestal->window - pedestal->frames_trained;
    if (n_frames > missing)
        return FAIL(finder, CC_EINVAL,
                    "%zu dark frames given but only %" PRIu64
                    " are still needed",
                    n_frames, missing);
    for (size_t k = 0; k < n_frames; k++)
        cc__pedestal_train(pedestal, frames + k * pedestal->pixels,
                           finder->config.adc_mask, &finder->regions,
                           finder->region_sums);
    if (pedestal->frames_trained == pedestal->window)
        return freeze(finder);
    return CC_OK;
}

int cc_finder_finish_training(cc_finder *finder)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (finder->pedestal.state != CC_PEDESTAL_TRAINING)
        return FAIL(finder, CC_ESTATE, "the pedestal is already ready");
    if (finder->pedestal.frames_trained < 2)
        return FAIL(finder, CC_ESTATE,
                    "%" PRIu64 " dark frames trained; at least 2 are needed",
                    finder->pedestal.frames_trained);
    return freeze(finder);
}

/* The frames of a call: first (back to back) or each (frame k at
 * each[k]), checked for NULLs. */
static int frames_given(cc_finder *finder, const uint16_t *first,
                        const uint16_t *const *each, size_t n_frames,
                        bool pedestal_only, struct cc__frames *frames)
{
    if (first == NULL && each == NULL && n_frames > 0)
        return FAIL(finder, CC_EINVAL, "frames is NULL");
    for (size_t k = 0; each != NULL && k < n_frames; k++)
        if (each[k] == NULL)
            return FAIL(finder, CC_EINVAL, "frame %zu of the list is NULL", k);
    *frames = (struct cc__frames){first, each, finder->pedestal.pixels,
                                  pedestal_only};
    return CC_OK;
}

/* Frames k and on of frames. */
static struct cc__frames frames_from(const struct cc__frames *frames, size_t k)
{
    struct cc__frames rest = *frames;
    if (rest.each != NULL)
        rest.each += k;
    else if (rest.first != NULL)
        rest.first += k * rest.pixels;
    return rest;
}

/* A batch through the backend of a READY finder: data frames into
 * clusters, and what the finder keeps; pedestal frames into the pedestal
 * alone (docs/spec.md §2.7). */
static int run_frames(cc_finder *finder, const struct cc__frames *given,
                      const uint64_t *frame_numbers, size_t n_frames,
                      cc_clusters *clusters)
{
    const struct cc__frames frames = *given;
    const bool summing = finder->analog != NULL && !frames.pedestal_only;
    int rc = cc__finder_reserve_common_mode(finder, n_frames);
    if (rc != CC_OK)
        return rc;
    const struct cc__batch_request request = {
        .config = &finder->config,
        .frames = &frames,
        .numbers = frame_numbers,
        .first_number = finder->counts.frames_processed,
        .n_frames = n_frames,
        .out = clusters,
        .common_mode = finder->batch_common_mode,
        .estimated = finder->batch_estimated,
    };
    uint8_t *entered = NULL; /* after a fall-back: what the GPU entered of
                                each frame (ENTERED_IN_IMAGE, ...) */
#ifdef CC_HAVE_CUDA
    /* A fall-back whose CPU backend could not be made left no backend. */
    if (finder->backend == CC_BACKEND_CUDA && finder->cuda == NULL)
        return FAIL(finder, CC_EDEVICE,
                    "no backend: the GPU failed and the CPU backend could "
                    "not be made; set the configuration again");
    if (finder->backend == CC_BACKEND_CUDA) {
        rc = cc__cuda_process(finder->cuda, &request, finder->last_error);
        if (rc == CC_EDEVICE && finder->config.backend == CC_BACKEND_AUTO)
            rc = cc__finder_fall_back_to_cpu(finder, n_frames, &entered);
        else if (rc == CC_OK)
            finder->host_state_stale = true;
        if (rc != CC_OK)
            return rc;
    }
    if (finder->backend == CC_BACKEND_CPU)
#endif
    {
        double *analog = summing ? finder->analog->batch : NULL;
        if (analog != NULL)
            memset(analog, 0, finder->pedestal.pixels * sizeof *analog);
        rc = cc__cpu_process(finder->cpu, &request, &finder->pedestal,
                             finder->gain.factor, analog, finder->last_error);
        /* A batch's sums, frame after frame from zero, then into the
         * image's (docs/spec.md §4.8), as the GPU adds them. */
        for (size_t p = 0;
             rc == CC_OK && analog != NULL && p < finder->pedestal.pixels; p++)
            finder->analog->sums[p] += analog[p];
        /* The centres lie in the frame, so adding cannot fail. */
        bool keeping = !frames.pedestal_only &&
                       (finder->imaging != NULL || finder->spectra != NULL ||
                        cc__finder_counting(finder));
        for (size_t k = 0; rc == CC_OK && keeping && k < clusters->n_frames;
             k++) {
            cc_frame_clusters frame;
            cc_clusters_frame(clusters, k, &frame);
            uint8_t already = entered != NULL ? entered[k] : 0;
            if (finder->imaging != NULL && !(already & ENTERED_IN_IMAGE))
                cc_interpolator_add_frame(finder->imaging, &frame);
            if (finder->spectra != NULL && !(already & ENTERED_IN_SPECTRA))
                cc__gain_calibration_add_frame(finder->spectra, &frame);
            if (cc__finder_counting(finder) && !(already & ENTERED_IN_TALLY))
                cc_tally_frame(finder->counted_spectrum, finder->counted_hitmap,
                               &frame);
        }
        free(entered);
        if (rc != CC_OK)
            return rc;
    }
    cc__finder_tally_common_mode(finder, n_frames);
    if (summing)
        finder->analog->frames += n_frames;
    if (frames.pedestal_only) {
        finder->counts.frames_pedestal += n_frames;
        return CC_OK;
    }
    finder->counts.frames_processed += n_frames;
    finder->counts.clusters += clusters->n_clusters;
    for (size_t k = 0; k < clusters->n_frames; k++) {
        finder->counts.clusters_dropped += clusters->frames[k].dropped;
        finder->counts.frames_truncated += clusters->frames[k].dropped > 0;
    }
    return CC_OK;
}

/* cc_finder_process() and cc_finder_process_list(). */
static int process_frames(cc_finder *finder, const uint16_t *first,
                          const uint16_t *const *each,
                          const uint64_t *frame_numbers, size_t n_frames,
                          cc_clusters *clusters)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (clusters == NULL)
        return FAIL(finder, CC_EINVAL, "clusters is NULL");
    struct cc__frames frames;
    int rc = frames_given(finder, first, each, n_frames, false, &frames);
    if (rc != CC_OK)
        return rc;
    if (finder->pedestal.state != CC_PEDESTAL_READY)
        return FAIL(finder, CC_ESTATE,
                    "the pedestal is still training (%" PRIu64 " of %" PRIu32
                    " dark frames)",
                    finder->pedestal.frames_trained, finder->pedestal.window);
    return run_frames(finder, &frames, frame_numbers, n_frames, clusters);
}

/* cc_finder_add_pedestal() and cc_finder_add_pedestal_list(): the
 * frames a training pedestal still needs are summed, the rest update the
 * ready one. */
static int add_pedestal(cc_finder *finder, const uint16_t *first,
                        const uint16_t *const *each, size_t n_frames)
{
    if (finder == NULL)
        return CC_EINVAL;
    struct cc__frames frames;
    int rc = frames_given(finder, first, each, n_frames, true, &frames);
    struct cc__pedestal *pedestal = &finder->pedestal;
    size_t k = 0;
    for (;
         rc == CC_OK && k < n_frames && pedestal->state == CC_PEDESTAL_TRAINING;
         k++) {
        cc__pedestal_train(pedestal, cc__frame_at(&frames, k),
                           finder->config.adc_mask, &finder->regions,
                           finder->region_sums);
        if (pedestal->frames_trained == pedestal->window)
            rc = freeze(finder);
    }
    if (rc != CC_OK || k == n_frames)
        return rc;
    if (finder->no_clusters == NULL &&
        cc_clusters_new(&finder->no_clusters) != CC_OK)
        return FAIL(finder, CC_ENOMEM, "no memory for a cluster list");
    struct cc__frames rest = frames_from(&frames, k);
    return run_frames(finder, &rest, NULL, n_frames - k, finder->no_clusters);
}

int cc_finder_add_pedestal(cc_finder *finder, const uint16_t *frames,
                           size_t n_frames)
{
    return add_pedestal(finder, frames, NULL, n_frames);
}

int cc_finder_add_pedestal_list(cc_finder *finder,
                                const uint16_t *const *frames, size_t n_frames)
{
    return add_pedestal(finder, NULL, frames, n_frames);
}

int cc_finder_process(cc_finder *finder, const uint16_t *frames,
                      const uint64_t *frame_numbers, size_t n_frames,
                      cc_clusters *clusters)
{
    return process_frames(finder, frames, NULL, frame_numbers, n_frames,
                          clusters);
}

int cc_finder_process_list(cc_finder *finder, const uint16_t *const *frames,
                           const uint64_t *frame_numbers, size_t n_frames,
                           cc_clusters *clusters)
{
    return process_frames(finder, NULL, frames, frame_numbers, n_frames,
                          clusters);
}
