/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * result_files.c: the spectrum as CSV, and the hit map and the pedestal's
 * maps as NumPy .npy files, the forms beamline scientists open directly
 * (a spreadsheet or pandas; numpy.load).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int cc_spectrum_write_csv(const cc_spectrum *spectrum, const cc_peak *peak,
                          const char *path, char *message)
{
    if (spectrum == NULL || path == NULL)
        return cc__message(message, CC_EINVAL, "spectrum and path are needed");
    struct cc__output output;
    int rc = cc__output_open(&output, path, message);
    if (rc != CC_OK)
        return rc;
    uint32_t bins = cc_spectrum_bins(spectrum);
    const uint64_t *counts = cc_spectrum_counts(spectrum);
    /* %.17g keeps every edge exact, so the bins can be rebuilt. */
    fprintf(output.file, "low,high,count\n");
    for (uint32_t i = 0; i < bins; i++)
        fprintf(output.file, "%.17g,%.17g,%" PRIu64 "\n",
                cc_spectrum_edge(spectrum, i), cc_spectrum_edge(spectrum, i + 1),
                counts[i]);
    fprintf(output.file, "-inf,%.17g,%" PRIu64 "\n",
            cc_spectrum_edge(spectrum, 0), cc_spectrum_underflow(spectrum));
    fprintf(output.file, "%.17g,inf,%" PRIu64 "\n",
            cc_spectrum_edge(spectrum, bins), cc_spectrum_overflow(spectrum));
    /* Last, as a comment: a first line that is not the column names would
     * be taken for them by numpy.genfromtxt(names=True). */
    if (peak != NULL)
        fprintf(output.file,
                "# peak: position=%.17g sigma=%.17g fwhm=%.17g "
                "resolution=%.17g counts=%.17g background=%.17g "
                "background_slope=%.17g chi2_per_dof=%.17g low=%.17g "
                "high=%.17g bins=%" PRIu32 "\n",
                peak->position, peak->sigma, peak->fwhm, peak->resolution,
                peak->counts, peak->background, peak->background_slope,
                peak->chi2_per_dof, peak->low, peak->high, peak->bins);
    if (ferror(output.file)) {
        cc__output_abort(&output);
        return cc__message(message, CC_EIO, "cannot write %s", path);
    }
    return cc__output_commit(&output, message);
}

int cc_hitmap_write_npy(const cc_hitmap *hitmap, const char *path,
                        char *message)
{
    if (hitmap == NULL || path == NULL)
        return cc__message(message, CC_EINVAL, "hit map and path are needed");
    uint32_t rows, cols;
    cc__hitmap_size(hitmap, &rows, &cols);
    const uint64_t shape[2] = {rows, cols};
    return cc__npy_write(path, "'<u4'", 2, shape, cc_hitmap_counts(hitmap),
                         (size_t)rows * cols * sizeof(uint32_t), message);
}

int cc_finder_write_analog(cc_finder *finder, const char *path,
                           uint64_t *frames, char *message)
{
    cc_config config;
    if (finder == NULL || path == NULL ||
        cc_finder_get_config(finder, &config) != CC_OK)
        return cc__message(message, CC_EINVAL, "a finder and a path are needed");
    size_t pixels = (size_t)config.rows * config.cols;
    double *sums = calloc(pixels, sizeof *sums);
    if (sums == NULL)
        return cc__message(message, CC_ENOMEM,
                           "no memory for %zu pixels' sums", pixels);
    uint64_t summed = 0;
    int rc = cc_finder_take_analog(finder, sums, &summed);
    if (rc != CC_OK)
        cc__message(message, rc, "%s", cc_finder_last_error(finder));
    const uint64_t shape[2] = {config.rows, config.cols};
    if (rc == CC_OK)
        rc = cc__npy_write(path, "'<f8'", 2, shape, sums,
                           pixels * sizeof *sums, message);
    if (rc == CC_OK && frames != NULL)
        *frames = summed;
    /* Written or not, the sums were taken: give them back on failure. */
    if (rc != CC_OK && summed > 0)
        cc__finder_return_analog(finder, sums, summed);
    free(sums);
    return rc;
}

int cc_finder_write_pedestal_maps(cc_finder *finder, const char *mean_path,
                                  const char *rms_path, char *message)
{
    cc_config config;
    if (finder == NULL || cc_finder_get_config(finder, &config) != CC_OK)
        return cc__message(message, CC_EINVAL, "a finder is needed");
    size_t pixels = (size_t)config.rows * config.cols;
    double *maps = malloc(2 * pixels * sizeof *maps);
    if (maps == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for %zu pixels' maps",
                           pixels);
    int rc = cc_finder_pedestal_maps(finder, maps, maps + pixels);
    if (rc != CC_OK)
        cc__message(message, rc, "%s", cc_finder_last_error(finder));
    const uint64_t shape[2] = {config.rows, config.cols};
    bool mean_written = false;
    if (rc == CC_OK && mean_path != NULL)
        mean_written = (rc = cc__npy_write(mean_path, "'<f8'", 2, shape, maps,
                                           pixels * sizeof *maps, message)) ==
                       CC_OK;
    if (rc == CC_OK && rms_path != NULL)
        rc = cc__npy_write(rms_path, "'<f8'", 2, shape, maps + pixels,
                           pixels * sizeof *maps, message);
    if (rc != CC_OK && mean_written)
        unlink(mean_path);
    free(maps);
    return rc;
}
