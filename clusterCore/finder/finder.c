/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * finder.c: the finder's life cycle and the checks in front of every
 * public call. The arithmetic lives in pedestal.c and pixel_cpu.c, the
 * batch machinery in the backends.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

struct cc_finder {
    cc_config config;
    cc_backend backend; /* the one that runs: CPU or CUDA */
    char backend_description[CC_MESSAGE_SIZE];
    struct cc__pedestal pedestal;
    struct cc__cpu *cpu;   /* when the CPU runs */
    struct cc__cuda *cuda; /* when CUDA runs */
    bool host_state_stale; /* the GPU has moved the pedestal on since the
                              host's copy in pedestal.s and s2 */
    cc_finder_stats counts; /* the fields that count work since reset */
    cc_interpolator *imaging; /* the map, and the photons imaged on the
                                 host since the last take; NULL: none */
    uint64_t *gpu_image;      /* room to take the GPU's image into */
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
    } *tally;
    struct cc__gain gain; /* docs/spec.md §9 */
    cc_clusters *no_clusters; /* what pedestal frames give; made on first use */
    /* The analog image (docs/spec.md §4.8): what the host summed since
     * the last take (the GPU keeps its own), a batch's sums on the CPU,
     * and the frames summed on either; NULL: off. */
    struct analog_image {
        double *sums, *batch;
        uint64_t frames;
    } *analog;
    char last_error[CC_MESSAGE_SIZE];
};

/* After a fall-back, which of a batch's frames the GPU had entered into
 * what the finder keeps across batches, so that the CPU enters each
 * photon once. */
enum { ENTERED_IN_IMAGE = 1, ENTERED_IN_SPECTRA = 2, ENTERED_IN_TALLY = 4 };

/* Whether the finder keeps a spectrum or a hit map (cc_finder_set_tally). */
static bool counting(const cc_finder *finder)
{
    return finder->counted_spectrum != NULL || finder->counted_hitmap != NULL;
}

/* Records the detail of a failure on the finder and returns code. */
#define FAIL(finder, code, ...) \
    cc__message((finder)->last_error, (code), __VA_ARGS__)

/* Builds the CPU backend; note says why it runs (may be empty). */
static int open_cpu(cc_finder *finder, const char *note, char *message)
{
    int rc = cc__cpu_new(&finder->cpu, &finder->config,
                         cc__resolve_threads(finder->config.threads), message);
    if (rc != CC_OK)
        return rc;
    finder->backend = CC_BACKEND_CPU;
    unsigned threads = cc__cpu_threads(finder->cpu);
    cc__message(finder->backend_description, CC_OK, "CPU, %u thread%s%s%s%s",
                threads, threads == 1 ? "" : "s", note[0] ? " (auto: " : "",
                note, note[0] ? ")" : "");
    return CC_OK;
}

/* Chooses the backend for the finder's config and builds it: CUDA when
 * asked for or, for auto, when it can; else the CPU, saying why. */
static int open_backend(cc_finder *finder, char *message)
{
    const cc_config *config = &finder->config;
    if (config->backend == CC_BACKEND_CPU)
        return open_cpu(finder, "", message);
#ifdef CC_HAVE_CUDA
    char why[CC_MESSAGE_SIZE] = "";
    int rc = cc__cuda_new(&finder->cuda, config, why, message);
    if (rc == CC_OK) {
        finder->backend = CC_BACKEND_CUDA;
        cc__message(finder->backend_description, CC_OK, "%s", why);
        return CC_OK;
    }
    if (config->backend == CC_BACKEND_CUDA)
        return rc;
    return open_cpu(finder, why, message);
#else
    if (config->backend == CC_BACKEND_CUDA)
        return cc__message(message, CC_ENOTSUP,
                           "the CUDA backend is not built into this "
                           "libclustercore (configure --with-cuda)");
    return open_cpu(finder, "this build has no CUDA backend", message);
#endif
}

/* Brings the host's copy of the pedestal up to date with the GPU's. */
static int sync_host_state(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->host_state_stale) {
        int rc = cc__cuda_download(finder->cuda, &finder->pedestal,
                                   finder->last_error);
        if (rc != CC_OK)
            return rc;
        finder->host_state_stale = false;
    }
#else
    (void)finder;
#endif
    return CC_OK;
}

/* Gives a pedestal that became READY on the host to the GPU. */
static int publish_state(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL &&
        finder->pedestal.state == CC_PEDESTAL_READY)
        return cc__cuda_upload(finder->cuda, &finder->pedestal,
                               finder->last_error);
#else
    (void)finder;
#endif
    return CC_OK;
}

/* Adds the photons the GPU imaged since the last take to the host's. */
static int pull_gpu_image(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL || finder->imaging == NULL)
        return CC_OK;
    if (finder->gpu_image == NULL) {
        const struct cc__image_map *map = cc__interpolator_map(finder->imaging);
        size_t bins = (size_t)map->rows * map->subpixels * map->cols *
                      map->subpixels;
        finder->gpu_image = malloc(bins * sizeof *finder->gpu_image);
        if (finder->gpu_image == NULL)
            return FAIL(finder, CC_ENOMEM, "no memory for the GPU's image");
    }
    cc_image_stats stats;
    int rc = cc__cuda_take_image(finder->cuda, finder->gpu_image, &stats,
                                 finder->last_error);
    if (rc == CC_OK)
        cc__interpolator_absorb(finder->imaging, NULL, finder->gpu_image,
                                &stats);
    return rc;
#else
    (void)finder;
    return CC_OK;
#endif
}

/* Adds the spectra the GPU entered since the last take to the host's. */
static int pull_gpu_spectra(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL || finder->spectra == NULL)
        return CC_OK;
    const cc_gain_calibration_config *c =
        cc__gain_calibration_config(finder->spectra);
    if (finder->gpu_spectra == NULL) {
        size_t n = (size_t)c->rows * c->cols * c->bins;
        finder->gpu_spectra = malloc(n * sizeof *finder->gpu_spectra);
        if (finder->gpu_spectra == NULL)
            return FAIL(finder, CC_ENOMEM, "no memory for the GPU's spectra");
    }
    uint64_t photons, outside;
    int rc = cc__cuda_take_spectra(finder->cuda, finder->gpu_spectra, &photons,
                                   &outside, finder->last_error);
    if (rc == CC_OK)
        cc__gain_calibration_absorb(finder->spectra, finder->gpu_spectra,
                                    photons, outside);
    return rc;
#else
    (void)finder;
    return CC_OK;
#endif
}

#ifdef CC_HAVE_CUDA
/* What the GPU needs to count as the finder's spectrum and hit map. */
static struct cc__tally_binning tally_binning(const cc_finder *finder)
{
    struct cc__tally_binning binning = {0};
    if (finder->counted_spectrum != NULL)
        cc__spectrum_binning(finder->counted_spectrum, &binning);
    if (finder->counted_hitmap != NULL)
        cc__hitmap_binning(finder->counted_hitmap, &binning);
    return binning;
}
#endif

/* Adds the spectrum and hit map the GPU counted since the last take to
 * the host's. */
static int pull_gpu_tally(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL || !counting(finder))
        return CC_OK;
    const struct cc__tally_binning binning = tally_binning(finder);
    const size_t bins = binning.counts_spectrum ? binning.bins : 0;
    if (finder->gpu_counts == NULL) {
        size_t pixels =
            binning.counts_hitmap ? (size_t)binning.rows * binning.cols : 0;
        finder->gpu_counts = malloc((bins + pixels) * sizeof(uint64_t));
        if (finder->gpu_counts == NULL)
            return FAIL(finder, CC_ENOMEM,
                        "no memory for the GPU's spectrum and hit map");
    }
    uint64_t totals[3]; /* underflow, overflow, outside the window */
    int rc = cc__cuda_take_counting(finder->cuda, finder->gpu_counts, totals,
                                    finder->last_error);
    if (rc == CC_OK && finder->counted_spectrum != NULL)
        cc__spectrum_absorb(finder->counted_spectrum, finder->gpu_counts,
                            totals[0], totals[1]);
    if (rc == CC_OK && finder->counted_hitmap != NULL)
        cc__hitmap_absorb(finder->counted_hitmap, finder->gpu_counts + bins,
                          totals[2]);
    return rc;
#else
    (void)finder;
    return CC_OK;
#endif
}

/* Gives the spectrum and hit map's binning (or none) to the GPU. */
static int publish_tally(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL)
        return CC_OK;
    const struct cc__tally_binning binning = tally_binning(finder);
    return cc__cuda_set_counting(finder->cuda,
                                 counting(finder) ? &binning : NULL,
                                 finder->last_error);
#else
    (void)finder;
    return CC_OK;
#endif
}

/* Gives the spectra's binning (or none) to the GPU. */
static int publish_spectra(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL)
        return CC_OK;
    if (finder->spectra == NULL)
        return cc__cuda_set_spectra(finder->cuda, NULL, 0, 0,
                                    finder->last_error);
    struct cc__gain_binning binning;
    cc__gain_calibration_binning(finder->spectra, &binning);
    return cc__cuda_set_spectra(finder->cuda, &binning, finder->config.rows,
                                finder->config.cols, finder->last_error);
#else
    (void)finder;
    return CC_OK;
#endif
}

/* Gives the imaging map (or none) to the GPU. */
static int publish_imaging(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL)
        return cc__cuda_set_image(
            finder->cuda,
            finder->imaging != NULL ? cc__interpolator_map(finder->imaging)
                                    : NULL,
            finder->last_error);
#else
    (void)finder;
#endif
    return CC_OK;
}

static void free_analog(struct analog_image *analog)
{
    if (analog == NULL)
        return;
    free(analog->sums);
    free(analog->batch);
    free(analog);
}

/* Adds what the GPU summed into the analog image to the host's sums. */
static int pull_gpu_analog(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL && finder->analog != NULL)
        return cc__cuda_take_analog(finder->cuda, finder->analog->sums,
                                    finder->last_error);
#else
    (void)finder;
#endif
    return CC_OK;
}

/* Has the GPU sum the analog image, or not. */
static int publish_analog(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL)
        return cc__cuda_set_analog(finder->cuda, finder->analog != NULL,
                                   finder->last_error);
#else
    (void)finder;
#endif
    return CC_OK;
}

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
        finder->region_sums =
            malloc(3 * (size_t)finder->regions.count * sizeof(int64_t));
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
    rc = open_backend(finder, message);
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
    free_analog(finder->analog);
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
           old->adc_mask == new->adc_mask &&
           old->precision == new->precision &&
           old->backend == new->backend &&
           old->common_mode == new->common_mode;
}

/* The user's part of src's mask, into dst's (of the same size). */
static void copy_user_mask(struct cc__pedestal *dst,
                           const struct cc__pedestal *src)
{
    for (size_t p = 0; p < dst->pixels; p++)
        dst->mask[p] = (uint8_t)((dst->mask[p] & ~CC__MASKED_BY_USER) |
                                 (src->mask[p] & CC__MASKED_BY_USER));
}

/* The image, spectra, spectrum and hit map `from` keeps go to `to`. */
static void hand_accumulators(cc_finder *from, cc_finder *to)
{
    to->imaging = from->imaging;
    to->spectra = from->spectra;
    to->counted_spectrum = from->counted_spectrum;
    to->counted_hitmap = from->counted_hitmap;
    to->analog = from->analog;
    from->analog = NULL;
    from->imaging = NULL;
    from->spectra = NULL;
    from->counted_spectrum = NULL;
    from->counted_hitmap = NULL;
}

/* What finder accumulates moves to next, with what its GPU added so far;
 * if next's GPU cannot take it, it stays with finder. */
static int move_accumulators(cc_finder *finder, cc_finder *next)
{
    int rc = pull_gpu_image(finder);
    if (rc == CC_OK)
        rc = pull_gpu_spectra(finder);
    if (rc == CC_OK)
        rc = pull_gpu_tally(finder);
    if (rc == CC_OK)
        rc = pull_gpu_analog(finder);
    if (rc != CC_OK)
        return rc;
    hand_accumulators(finder, next);
    rc = publish_imaging(next);
    if (rc == CC_OK)
        rc = publish_spectra(next);
    if (rc == CC_OK)
        rc = publish_tally(next);
    if (rc == CC_OK)
        rc = publish_analog(next);
    if (rc != CC_OK) {
        cc__message(finder->last_error, rc, "%s", next->last_error);
        hand_accumulators(next, finder);
    }
    return rc;
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
                    "the finder sums an analog image of %" PRIu32
                    " x %" PRIu32 " pixels: take it and turn it off before "
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
    rc = move_accumulators(finder, next);
    if (rc != CC_OK) {
        cc_finder_destroy(next);
        return rc;
    }
    if (pedestal_survives(&finder->config, config)) {
        rc = sync_host_state(finder);
        if (rc == CC_OK) {
            cc__pedestal_swap(&next->pedestal, &finder->pedestal);
            if (config->mask_rms_factor != finder->config.mask_rms_factor)
                rc = cc__mask_by_rms(&next->pedestal, config->mask_rms_factor,
                                     next->last_error);
            if (rc == CC_OK)
                rc = publish_state(next);
            if (rc != CC_OK) /* give the pedestal back untouched */
                cc__pedestal_swap(&next->pedestal, &finder->pedestal);
        }
        if (rc != CC_OK) {
            cc__message(finder->last_error, rc, "%s", next->last_error);
            hand_accumulators(next, finder); /* given back */
            cc_finder_destroy(next);
            return rc;
        }
        next->counts = finder->counts;
        struct region_tally *tally = next->tally; /* the same regions */
        next->tally = finder->tally;
        finder->tally = tally;
    } else if (!resized) {
        copy_user_mask(&next->pedestal, &finder->pedestal);
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

/* The common-mode figures start again, with the counts (docs/spec.md §8.5). */
static void clear_tally(cc_finder *finder)
{
    if (finder->tally != NULL)
        memset(finder->tally, 0, finder->regions.count * sizeof *finder->tally);
}

void cc_finder_reset(cc_finder *finder)
{
    if (finder == NULL)
        return;
    finder->host_state_stale = false;
    cc__pedestal_reset(&finder->pedestal, finder->config.pedestal_frames);
    finder->counts = (cc_finder_stats){0};
    clear_tally(finder);
    finder->last_error[0] = '\0';
}

/* Ends training and gives the pedestal to the backend. If the GPU cannot
 * take it, training is reopened with the same sums, so nothing is lost. */
static int freeze(cc_finder *finder)
{
    cc__pedestal_freeze(&finder->pedestal);
    int rc = cc__mask_by_rms(&finder->pedestal,
                             finder->config.mask_rms_factor,
                             finder->last_error);
    if (rc == CC_OK)
        rc = publish_state(finder);
    if (rc != CC_OK) {
        finder->pedestal.state = CC_PEDESTAL_TRAINING;
        finder->pedestal.window = finder->config.pedestal_frames;
        cc__mask_by_rms(&finder->pedestal, 0, NULL); /* clears its marks */
    }
    return rc;
}

int cc_finder_train(cc_finder *finder, const uint16_t *frames,
                    size_t n_frames)
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

#ifdef CC_HAVE_CUDA
/* After the GPU failed in a batch of n_frames under CC_BACKEND_AUTO: the
 * CPU takes over, with the pedestal if the GPU can still hand it back
 * (CC_OK: the caller does the batch again on the CPU, entering into the
 * image and spectra the frames that *entered, when not NULL, does not
 * mark as in them already), else from training (CC_EDEVICE). last_error
 * says which. */
static int fall_back_to_cpu(cc_finder *finder, size_t n_frames,
                            uint8_t **entered)
{
    char failure[CC_MESSAGE_SIZE];
    cc__message(failure, CC_OK, "%s", finder->last_error);
    bool kept = sync_host_state(finder) == CC_OK;
    bool all_taken = finder->imaging == NULL && finder->spectra == NULL &&
                     !counting(finder);
    *entered = NULL;
    if (!all_taken && (*entered = malloc(n_frames)) != NULL) {
        cc__cuda_frames_entered(finder->cuda, n_frames, *entered);
        /* What could not be taken from the GPU is lost whole: the CPU
         * enters all of the batch into it. */
        uint8_t taken =
            (pull_gpu_image(finder) == CC_OK ? ENTERED_IN_IMAGE : 0) |
            (pull_gpu_spectra(finder) == CC_OK ? ENTERED_IN_SPECTRA : 0) |
            (pull_gpu_tally(finder) == CC_OK ? ENTERED_IN_TALLY : 0);
        all_taken = taken ==
                    (ENTERED_IN_IMAGE | ENTERED_IN_SPECTRA | ENTERED_IN_TALLY);
        for (size_t k = 0; k < n_frames; k++)
            (*entered)[k] = (*entered)[k] ? taken : 0;
    }
    /* The GPU's analog sums hold whole batches only, not this one: they
     * come over whole, or the image starts again. */
    bool analog_kept = pull_gpu_analog(finder) == CC_OK;
    if (!analog_kept) {
        memset(finder->analog->sums, 0,
               finder->pedestal.pixels * sizeof *finder->analog->sums);
        finder->analog->frames = 0;
    }
    cc__cuda_destroy(finder->cuda);
    finder->cuda = NULL;
    finder->host_state_stale = false;
    if (!kept)
        cc__pedestal_reset(&finder->pedestal, finder->config.pedestal_frames);
    char note[CC_MESSAGE_SIZE];
    cc__message(note, CC_OK, "the GPU failed: %s", failure);
    int rc = open_cpu(finder, note, finder->last_error);
    if (rc != CC_OK) { /* last_error says why; no backend is left */
        free(*entered);
        *entered = NULL;
        return rc;
    }
    cc__message(finder->last_error, CC_EDEVICE,
                "%s; switched to the CPU backend, %s%s%s", failure,
                kept ? "pedestal kept, the batch done again on the CPU"
                     : "pedestal lost: train it again",
                all_taken ? ""
                          : "; what the GPU imaged, entered into spectra or "
                            "counted since the last take is lost",
                analog_kept ? "" : "; the analog image since the last take "
                                   "is lost");
    if (!kept) {
        free(*entered);
        *entered = NULL;
    }
    return kept ? CC_OK : CC_EDEVICE;
}
#endif

/* Room for a batch's common-mode figures. */
static int reserve_common_mode(cc_finder *finder, size_t n_frames)
{
    if (finder->regions.count == 0 || n_frames <= finder->batch_capacity)
        return CC_OK;
    size_t cells = n_frames * finder->regions.count;
    void *values = realloc(finder->batch_common_mode,
                           cells * cc__precision_size(finder->config.precision));
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
static void tally_common_mode(cc_finder *finder, size_t n_frames)
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
        regions[r] = (cc_common_mode_region){
            .frames_estimated = tally->estimated,
            .frames_unestimated = tally->unestimated,
            .mean = mean,
            .rms = var > 0 ? sqrt(var) : 0.0,
            .last = tally->last};
    }
    return CC_OK;
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
static struct cc__frames frames_from(const struct cc__frames *frames,
                                     size_t k)
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
    int rc = reserve_common_mode(finder, n_frames);
    if (rc != CC_OK)
        return rc;
    uint8_t *entered = NULL; /* after a fall-back: what the GPU entered of
                                each frame (ENTERED_IN_IMAGE, ...) */
#ifdef CC_HAVE_CUDA
    /* A fall-back whose CPU backend could not be made left no backend. */
    if (finder->backend == CC_BACKEND_CUDA && finder->cuda == NULL)
        return FAIL(finder, CC_EDEVICE,
                    "no backend: the GPU failed and the CPU backend could "
                    "not be made; set the configuration again");
    if (finder->backend == CC_BACKEND_CUDA) {
        rc = cc__cuda_process(finder->cuda, &finder->config, &frames,
                              frame_numbers, finder->counts.frames_processed,
                              n_frames, clusters, finder->batch_common_mode,
                              finder->batch_estimated, finder->last_error);
        if (rc == CC_EDEVICE && finder->config.backend == CC_BACKEND_AUTO)
            rc = fall_back_to_cpu(finder, n_frames, &entered);
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
        rc = cc__cpu_process(finder->cpu, &finder->config, &finder->pedestal,
                             &frames, frame_numbers,
                             finder->counts.frames_processed, n_frames,
                             clusters, finder->gain.factor,
                             finder->batch_common_mode,
                             finder->batch_estimated, analog,
                             finder->last_error);
        /* A batch's sums, frame after frame from zero, then into the
         * image's (docs/spec.md §4.8), as the GPU adds them. */
        for (size_t p = 0; rc == CC_OK && analog != NULL &&
                           p < finder->pedestal.pixels;
             p++)
            finder->analog->sums[p] += analog[p];
        /* The centres lie in the frame, so adding cannot fail. */
        bool keeping = !frames.pedestal_only &&
                       (finder->imaging != NULL || finder->spectra != NULL ||
                        counting(finder));
        for (size_t k = 0; rc == CC_OK && keeping && k < clusters->n_frames;
             k++) {
            cc_frame_clusters frame;
            cc_clusters_frame(clusters, k, &frame);
            uint8_t already = entered != NULL ? entered[k] : 0;
            if (finder->imaging != NULL && !(already & ENTERED_IN_IMAGE))
                cc_interpolator_add_frame(finder->imaging, &frame);
            if (finder->spectra != NULL && !(already & ENTERED_IN_SPECTRA))
                cc__gain_calibration_add_frame(finder->spectra, &frame);
            if (counting(finder) && !(already & ENTERED_IN_TALLY))
                cc_tally_frame(finder->counted_spectrum,
                               finder->counted_hitmap, &frame);
        }
        free(entered);
        if (rc != CC_OK)
            return rc;
    }
    tally_common_mode(finder, n_frames);
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
    for (; rc == CC_OK && k < n_frames &&
           pedestal->state == CC_PEDESTAL_TRAINING;
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
                                const uint16_t *const *frames,
                                size_t n_frames)
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
    int rc = sync_host_state(finder); /* publish_state sends s and s2 too */
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
        rc = publish_state(finder);
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
    int rc = cc__npy_read_bytes(path, finder->config.rows,
                                finder->config.cols, mask,
                                finder->last_error);
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

int cc_finder_set_gain(cc_finder *finder, const double *gain,
                       cc_gain_unit unit)
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

int cc_finder_load_gain(cc_finder *finder, const char *path,
                        cc_gain_unit unit)
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
        memcpy(gain, finder->gain.map,
               finder->pedestal.pixels * sizeof *gain);
    if (unit != NULL)
        *unit = finder->gain.unit;
    return CC_OK;
}

int cc_finder_set_interpolator(cc_finder *finder,
                               const cc_interpolator *interpolator)
{
    if (finder == NULL)
        return CC_EINVAL;
    cc_interpolator *copy = NULL;
    if (interpolator != NULL) {
        const struct cc__image_map *map = cc__interpolator_map(interpolator);
        if (map->rows != finder->config.rows ||
            map->cols != finder->config.cols)
            return FAIL(finder, CC_EMISMATCH,
                        "the interpolator images %" PRIu32 " x %" PRIu32
                        " pixels; the finder's frames are %" PRIu32
                        " x %" PRIu32,
                        map->rows, map->cols, finder->config.rows,
                        finder->config.cols);
        int rc = cc__interpolator_copy(interpolator, &copy,
                                       finder->last_error);
        if (rc != CC_OK)
            return rc;
    }
    cc_interpolator *held = finder->imaging;
    finder->imaging = copy;
    int rc = publish_imaging(finder);
    if (rc != CC_OK) { /* the GPU kept the imaging it had */
        finder->imaging = held;
        cc_interpolator_destroy(copy);
        return rc;
    }
    cc_interpolator_destroy(held);
    free(finder->gpu_image);
    finder->gpu_image = NULL;
    return CC_OK;
}

int cc_finder_take_image(cc_finder *finder, cc_interpolator *into)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (into == NULL)
        return FAIL(finder, CC_EINVAL, "into is NULL");
    if (finder->imaging == NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder images nothing: set an interpolator first");
    if (!cc__interpolator_same_image(into, finder->imaging))
        return FAIL(finder, CC_EMISMATCH,
                    "into makes an image of another size than the "
                    "finder's interpolator");
    int rc = pull_gpu_image(finder);
    if (rc != CC_OK)
        return rc;
    cc__interpolator_move(into, finder->imaging);
    return CC_OK;
}

int cc_finder_set_analog(cc_finder *finder, int on)
{
    if (finder == NULL)
        return CC_EINVAL;
    struct analog_image *held = finder->analog, *made = NULL;
    if (on && held != NULL)
        return CC_OK; /* summing goes on */
    if (on) {
        size_t pixels = finder->pedestal.pixels;
        made = calloc(1, sizeof *made);
        if (made != NULL) {
            made->sums = calloc(pixels, sizeof *made->sums);
            made->batch = malloc(pixels * sizeof *made->batch);
        }
        if (made == NULL || made->sums == NULL || made->batch == NULL) {
            free_analog(made);
            return FAIL(finder, CC_ENOMEM, "no memory for an analog image");
        }
    }
    finder->analog = made;
    int rc = publish_analog(finder);
    if (rc != CC_OK) { /* the GPU sums as it did */
        finder->analog = held;
        free_analog(made);
        return rc;
    }
    free_analog(held);
    return CC_OK;
}

int cc_finder_take_analog(cc_finder *finder, double *sums, uint64_t *frames)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (sums == NULL || frames == NULL)
        return FAIL(finder, CC_EINVAL, "sums or frames is NULL");
    if (finder->analog == NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder sums no analog image: turn it on first");
    int rc = pull_gpu_analog(finder);
    if (rc != CC_OK)
        return rc;
    struct analog_image *analog = finder->analog;
    for (size_t p = 0; p < finder->pedestal.pixels; p++) {
        sums[p] += analog->sums[p];
        analog->sums[p] = 0;
    }
    *frames += analog->frames;
    analog->frames = 0;
    return CC_OK;
}

void cc__finder_return_analog(cc_finder *finder, const double *sums,
                              uint64_t frames)
{
    struct analog_image *analog = finder->analog;
    for (size_t p = 0; p < finder->pedestal.pixels; p++)
        analog->sums[p] += sums[p];
    analog->frames += frames;
}

int cc_finder_set_tally(cc_finder *finder, const cc_spectrum *spectrum,
                        const cc_hitmap *hitmap)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (hitmap != NULL) {
        uint32_t rows, cols;
        cc__hitmap_size(hitmap, &rows, &cols);
        if (rows != finder->config.rows || cols != finder->config.cols)
            return FAIL(finder, CC_EMISMATCH,
                        "the hit map is %" PRIu32 " x %" PRIu32
                        " pixels; the finder's frames are %" PRIu32
                        " x %" PRIu32,
                        rows, cols, finder->config.rows, finder->config.cols);
    }
    cc_spectrum *spectrum_copy = NULL;
    cc_hitmap *hitmap_copy = NULL;
    if ((spectrum != NULL &&
         cc__spectrum_copy_empty(spectrum, &spectrum_copy) != CC_OK) ||
        (hitmap != NULL && cc__hitmap_copy_empty(hitmap, &hitmap_copy) != CC_OK)) {
        cc_spectrum_destroy(spectrum_copy);
        return FAIL(finder, CC_ENOMEM,
                    "no memory for the finder's spectrum and hit map");
    }
    cc_spectrum *held_spectrum = finder->counted_spectrum;
    cc_hitmap *held_hitmap = finder->counted_hitmap;
    finder->counted_spectrum = spectrum_copy;
    finder->counted_hitmap = hitmap_copy;
    int rc = publish_tally(finder);
    if (rc != CC_OK) { /* the GPU kept the counting it had */
        finder->counted_spectrum = held_spectrum;
        finder->counted_hitmap = held_hitmap;
        held_spectrum = spectrum_copy;
        held_hitmap = hitmap_copy;
    }
    cc_spectrum_destroy(held_spectrum);
    cc_hitmap_destroy(held_hitmap);
    if (rc == CC_OK) {
        free(finder->gpu_counts);
        finder->gpu_counts = NULL;
    }
    return rc;
}

int cc_finder_take_tally(cc_finder *finder, cc_spectrum *spectrum,
                         cc_hitmap *hitmap)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (!counting(finder))
        return FAIL(finder, CC_ESTATE,
                    "the finder counts nothing: set a tally first");
    if ((spectrum == NULL) != (finder->counted_spectrum == NULL) ||
        (spectrum != NULL &&
         !cc__spectrum_same(spectrum, finder->counted_spectrum)))
        return FAIL(finder, CC_EMISMATCH,
                    finder->counted_spectrum == NULL
                        ? "the finder counts no spectrum: pass NULL"
                    : spectrum == NULL
                        ? "the finder counts a spectrum: pass one"
                        : "the spectrum is not binned as the finder's");
    if ((hitmap == NULL) != (finder->counted_hitmap == NULL) ||
        (hitmap != NULL && !cc__hitmap_same(hitmap, finder->counted_hitmap)))
        return FAIL(finder, CC_EMISMATCH,
                    finder->counted_hitmap == NULL
                        ? "the finder counts no hit map: pass NULL"
                    : hitmap == NULL
                        ? "the finder counts a hit map: pass one"
                        : "the hit map is not of the finder's size and "
                          "window");
    int rc = pull_gpu_tally(finder);
    if (rc != CC_OK)
        return rc;
    if (spectrum != NULL)
        cc__spectrum_move(spectrum, finder->counted_spectrum);
    if (hitmap != NULL)
        cc__hitmap_move(hitmap, finder->counted_hitmap);
    return CC_OK;
}

int cc_finder_set_gain_calibration(cc_finder *finder,
                                   const cc_gain_calibration *calibration)
{
    if (finder == NULL)
        return CC_EINVAL;
    cc_gain_calibration *made = NULL;
    if (calibration != NULL) {
        const cc_gain_calibration_config *c =
            cc__gain_calibration_config(calibration);
        if (c->rows != finder->config.rows || c->cols != finder->config.cols)
            return FAIL(finder, CC_EMISMATCH,
                        "the calibration's spectra are for %" PRIu32
                        " x %" PRIu32 " pixels; the finder's frames are "
                        "%" PRIu32 " x %" PRIu32,
                        c->rows, c->cols, finder->config.rows,
                        finder->config.cols);
        int rc = cc_gain_calibration_new(&made, c, finder->last_error);
        if (rc != CC_OK)
            return rc;
    }
    cc_gain_calibration *held = finder->spectra;
    finder->spectra = made;
    int rc = publish_spectra(finder);
    if (rc != CC_OK) { /* the GPU kept the spectra it had */
        finder->spectra = held;
        cc_gain_calibration_destroy(made);
        return rc;
    }
    cc_gain_calibration_destroy(held);
    free(finder->gpu_spectra);
    finder->gpu_spectra = NULL;
    return CC_OK;
}

int cc_finder_take_gain_calibration(cc_finder *finder,
                                    cc_gain_calibration *into)
{
    if (finder == NULL)
        return CC_EINVAL;
    if (into == NULL)
        return FAIL(finder, CC_EINVAL, "into is NULL");
    if (finder->spectra == NULL)
        return FAIL(finder, CC_ESTATE,
                    "the finder keeps no spectra: set a gain calibration "
                    "first");
    if (!cc__gain_calibration_same(into, finder->spectra))
        return FAIL(finder, CC_EMISMATCH,
                    "into bins its spectra otherwise than the finder's "
                    "calibration");
    int rc = pull_gpu_spectra(finder);
    if (rc != CC_OK)
        return rc;
    cc__gain_calibration_move(into, finder->spectra);
    return CC_OK;
}

int cc_finder_pedestal_maps(cc_finder *finder, double *mean, double *rms)
{
    if (finder == NULL)
        return CC_EINVAL;
    int rc = sync_host_state(finder);
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
    int rc = sync_host_state(finder);
    if (rc != CC_OK)
        return rc;
    return cc__pedestal_save(&finder->pedestal, finder->config.rows,
                             finder->config.cols, finder->config.adc_mask,
                             path, finder->last_error);
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
        copy_user_mask(&loaded, &finder->pedestal);
        rc = cc__mask_by_rms(&loaded, finder->config.mask_rms_factor,
                             finder->last_error);
    }
    if (rc == CC_OK) {
        if (loaded.state == CC_PEDESTAL_READY)
            cc__pedestal_take_reference(&loaded);
        cc__pedestal_swap(&finder->pedestal, &loaded);
        rc = publish_state(finder);
        if (rc == CC_OK) {
            finder->counts = (cc_finder_stats){0};
            clear_tally(finder);
            finder->host_state_stale = false;
        } else { /* the GPU kept the old state: keep the old pedestal */
            cc__pedestal_swap(&finder->pedestal, &loaded);
        }
    }
    cc__pedestal_free(&loaded);
    return rc;
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
