/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * finder.h: the front end (clusterCore/finder/), above every other
 * folder: the finder's state and what its files share.
 */
#ifndef CLUSTERCORE_FINDER_H
#define CLUSTERCORE_FINDER_H

#include "../analysis/analysis.h"
#include "../cpu/cpu.h"
#include "../cuda/backend.h"
#include "../files/files.h"

struct cc_finder {
    cc_config config;
    cc_backend backend; /* the one that runs: CPU or CUDA */
    char backend_description[CC_MESSAGE_SIZE];
    struct cc__pedestal pedestal;
    struct cc__cpu *cpu;          /* when the CPU runs */
    struct cc__cuda *cuda;        /* when CUDA runs */
    bool host_state_stale;        /* the GPU has moved the pedestal on since the
                              host's copy in pedestal.s and s2 */
    cc_finder_stats counts;       /* the fields that count work since reset */
    cc_interpolator *imaging;     /* the map, and the photons imaged on the
                                 host since the last take; NULL: none */
    uint64_t *gpu_image;          /* room to take the GPU's image into */
    cc_gain_calibration *spectra; /* a flat field's spectra entered on the
                                     host since the last take; NULL: none */
    uint64_t *gpu_spectra;        /* room to take the GPU's spectra into */
    cc_spectrum *counted_spectrum; /* the clusters counted on the host */
    cc_hitmap *counted_hitmap;     /* since the last take; NULL: none */
    uint64_t *gpu_counts;          /* room to take the GPU's counts into */
    /* Common mode (docs/spec.md §8): the regions, room for the training's
     * region sums and for a batch's figures, and each region's tally. */
    struct cc__regions regions;
    int64_t *region_sums;
    void *batch_common_mode;
    uint8_t *batch_estimated;
    size_t batch_capacity; /* frames the two above hold */
    struct region_tally {
        uint64_t estimated, unestimated;
        double sum, sum_sq, last;
    } * tally;
    struct cc__gain gain;     /* docs/spec.md §9 */
    cc_clusters *no_clusters; /* what pedestal frames give; made on first use */
    /* The analog image (docs/spec.md §4.8): what the host summed since
     * the last take (the GPU keeps its own), a batch's sums on the CPU,
     * and the frames summed on either; NULL: off. */
    struct analog_image {
        double *sums, *batch;
        uint64_t frames;
    } * analog;
    char last_error[CC_MESSAGE_SIZE];
};

/* After a fall-back, which of a batch's frames the GPU had entered into
 * what the finder keeps across batches, so that the CPU enters each
 * photon once. */
enum { ENTERED_IN_IMAGE = 1, ENTERED_IN_SPECTRA = 2, ENTERED_IN_TALLY = 4 };

/* Whether the finder keeps a spectrum or a hit map (cc_finder_set_tally). */
static inline bool cc__finder_counting(const cc_finder *finder)
{
    return finder->counted_spectrum != NULL || finder->counted_hitmap != NULL;
}

/* Records the detail of a failure on the finder and returns code. */
#define FAIL(finder, code, ...)                                                \
    cc__message((finder)->last_error, (code), __VA_ARGS__)

/* backends.c: builds the backend the finder's config asks for, saying
 * in backend_description what runs and why. */
int cc__finder_open_backend(cc_finder *finder, char *message);
#ifdef CC_HAVE_CUDA
/* After the GPU failed in a batch of n_frames under CC_BACKEND_AUTO: the
 * CPU takes over, with the pedestal if the GPU can still hand it back
 * (CC_OK: the caller does the batch again on the CPU, entering into the
 * image and spectra the frames that *entered, when not NULL, does not
 * mark as in them already), else from training (CC_EDEVICE). last_error
 * says which. */
int cc__finder_fall_back_to_cpu(cc_finder *finder, size_t n_frames,
                                uint8_t **entered);
#endif

/* gpu_mirror.c: the pedestal's state to and from the GPU, and each
 * accumulator's binning given to it (publish) and its additions taken
 * from it (pull); CC_OK without CUDA or with nothing to do. */
int cc__finder_sync_host_state(cc_finder *finder);
int cc__finder_publish_state(cc_finder *finder);
int cc__finder_pull_gpu_image(cc_finder *finder);
int cc__finder_pull_gpu_spectra(cc_finder *finder);
int cc__finder_pull_gpu_tally(cc_finder *finder);
int cc__finder_pull_gpu_analog(cc_finder *finder);
int cc__finder_publish_imaging(cc_finder *finder);
int cc__finder_publish_spectra(cc_finder *finder);
int cc__finder_publish_tally(cc_finder *finder);
int cc__finder_publish_analog(cc_finder *finder);

/* accumulators.c: an analog image freed; the accumulators handed from
 * one finder to another; moved with what the GPU added (if the next
 * finder's GPU cannot take them, they stay). */
void cc__finder_free_analog(struct analog_image *analog);
void cc__finder_hand_accumulators(cc_finder *from, cc_finder *to);
int cc__finder_move_accumulators(cc_finder *finder, cc_finder *next);

/* corrections.c: room for a batch's common-mode figures, a processed
 * batch's added to each region's tally, the tally cleared. */
int cc__finder_reserve_common_mode(cc_finder *finder, size_t n_frames);
void cc__finder_tally_common_mode(cc_finder *finder, size_t n_frames);
void cc__finder_clear_common_mode(cc_finder *finder);

/* Adds sums and frames taken with cc_finder_take_analog back into the
 * finder's analog image, which must be on (accumulators.c): a write that failed
 * loses nothing. */
void cc__finder_return_analog(cc_finder *finder, const double *sums,
                              uint64_t frames);

/* The same for a finder: CC_ESTATE unless it runs on CUDA. */
int cc__finder_tune_cuda(cc_finder *finder,
                         const struct cc__cuda_tuning *tuning);

#endif /* CLUSTERCORE_FINDER_H */
