/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_mirror.c: what the finder keeps, mirrored on the GPU while CUDA
 * runs: the pedestal's state, given to the GPU and brought back, and the
 * accumulators (image, spectra, spectrum and hit map, analog image),
 * their binning given and what the GPU added pulled into the host's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

/* Brings the host's copy of the pedestal up to date with the GPU's. */
int cc__finder_sync_host_state(cc_finder *finder)
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
int cc__finder_publish_state(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL && finder->pedestal.state == CC_PEDESTAL_READY)
        return cc__cuda_upload(finder->cuda, &finder->pedestal,
                               finder->last_error);
#else
    (void)finder;
#endif
    return CC_OK;
}

/* Adds the photons the GPU imaged since the last take to the host's. */
int cc__finder_pull_gpu_image(cc_finder *finder)
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
int cc__finder_pull_gpu_spectra(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL || finder->spectra == NULL)
        return CC_OK;
    const cc_gain_calibration_config *c = cc__gain_calibration_config(
        finder->spectra);
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
int cc__finder_pull_gpu_tally(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL || !cc__finder_counting(finder))
        return CC_OK;
    const struct cc__tally_binning binning = tally_binning(finder);
    const size_t bins = binning.counts_spectrum ? binning.bins : 0;
    if (finder->gpu_counts == NULL) {
        size_t pixels = binning.counts_hitmap
                            ? (size_t)binning.rows * binning.cols
                            : 0;
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
int cc__finder_publish_tally(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda == NULL)
        return CC_OK;
    const struct cc__tally_binning binning = tally_binning(finder);
    return cc__cuda_set_counting(finder->cuda,
                                 cc__finder_counting(finder) ? &binning : NULL,
                                 finder->last_error);
#else
    (void)finder;
    return CC_OK;
#endif
}

/* Gives the spectra's binning (or none) to the GPU. */
int cc__finder_publish_spectra(cc_finder *finder)
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
int cc__finder_publish_imaging(cc_finder *finder)
{
#ifdef CC_HAVE_CUDA
    if (finder->cuda != NULL)
        return cc__cuda_set_image(finder->cuda,
                                  finder->imaging != NULL
                                      ? cc__interpolator_map(finder->imaging)
                                      : NULL,
                                  finder->last_error);
#else
    (void)finder;
#endif
    return CC_OK;
}

/* Adds what the GPU summed into the analog image to the host's sums. */
int cc__finder_pull_gpu_analog(cc_finder *finder)
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
int cc__finder_publish_analog(cc_finder *finder)
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
