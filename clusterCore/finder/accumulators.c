/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * accumulators.c: what the finder accumulates across batches, set and
 * taken: the interpolated image, the analog image, the spectrum and hit
 * map it counts, a flat field's spectra; and all of them handed to the
 * finder that replaces it (cc_finder_set_config).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "finder.h"

void cc__finder_free_analog(struct analog_image *analog)
{
    if (analog == NULL)
        return;
    free(analog->sums);
    free(analog->batch);
    free(analog);
}

/* The image, spectra, spectrum and hit map `from` keeps go to `to`. */
void cc__finder_hand_accumulators(cc_finder *from, cc_finder *to)
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
int cc__finder_move_accumulators(cc_finder *finder, cc_finder *next)
{
    int rc = cc__finder_pull_gpu_image(finder);
    if (rc == CC_OK)
        rc = cc__finder_pull_gpu_spectra(finder);
    if (rc == CC_OK)
        rc = cc__finder_pull_gpu_tally(finder);
    if (rc == CC_OK)
        rc = cc__finder_pull_gpu_analog(finder);
    if (rc != CC_OK)
        return rc;
    cc__finder_hand_accumulators(finder, next);
    rc = cc__finder_publish_imaging(next);
    if (rc == CC_OK)
        rc = cc__finder_publish_spectra(next);
    if (rc == CC_OK)
        rc = cc__finder_publish_tally(next);
    if (rc == CC_OK)
        rc = cc__finder_publish_analog(next);
    if (rc != CC_OK) {
        cc__message(finder->last_error, rc, "%s", next->last_error);
        cc__finder_hand_accumulators(next, finder);
    }
    return rc;
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
        int rc = cc__interpolator_copy(interpolator, &copy, finder->last_error);
        if (rc != CC_OK)
            return rc;
    }
    cc_interpolator *held = finder->imaging;
    finder->imaging = copy;
    int rc = cc__finder_publish_imaging(finder);
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
    int rc = cc__finder_pull_gpu_image(finder);
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
            cc__finder_free_analog(made);
            return FAIL(finder, CC_ENOMEM, "no memory for an analog image");
        }
    }
    finder->analog = made;
    int rc = cc__finder_publish_analog(finder);
    if (rc != CC_OK) { /* the GPU sums as it did */
        finder->analog = held;
        cc__finder_free_analog(made);
        return rc;
    }
    cc__finder_free_analog(held);
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
    int rc = cc__finder_pull_gpu_analog(finder);
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
        (hitmap != NULL &&
         cc__hitmap_copy_empty(hitmap, &hitmap_copy) != CC_OK)) {
        cc_spectrum_destroy(spectrum_copy);
        return FAIL(finder, CC_ENOMEM,
                    "no memory for the finder's spectrum and hit map");
    }
    cc_spectrum *held_spectrum = finder->counted_spectrum;
    cc_hitmap *held_hitmap = finder->counted_hitmap;
    finder->counted_spectrum = spectrum_copy;
    finder->counted_hitmap = hitmap_copy;
    int rc = cc__finder_publish_tally(finder);
    if (rc != CC_OK) { /* the GPU kept the cc__finder_counting it had */
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
    if (!cc__finder_counting(finder))
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
    int rc = cc__finder_pull_gpu_tally(finder);
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
        const cc_gain_calibration_config *c = cc__gain_calibration_config(
            calibration);
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
    int rc = cc__finder_publish_spectra(finder);
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
    int rc = cc__finder_pull_gpu_spectra(finder);
    if (rc != CC_OK)
        return rc;
    cc__gain_calibration_move(into, finder->spectra);
    return CC_OK;
}
