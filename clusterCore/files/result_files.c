/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * result_files.c: the spectrum as CSV, and the hit map and the
 * interpolated image as NumPy .npy files, the forms beamline scientists
 * open directly (a spreadsheet or pandas; numpy.load).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"

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
                cc_spectrum_edge(spectrum, i),
                cc_spectrum_edge(spectrum, i + 1), counts[i]);
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

int cc_interpolator_write_npy(const cc_interpolator *interpolator,
                              const char *path, char *message)
{
    if (interpolator == NULL || path == NULL)
        return cc__message(message, CC_EINVAL,
                           "interpolator and path are needed");
    const struct cc__image_map *map = cc__interpolator_map(interpolator);
    const uint64_t shape[2] = {(uint64_t)map->rows * map->subpixels,
                               (uint64_t)map->cols * map->subpixels};
    return cc__npy_write(path, "'<u4'", 2, shape,
                         cc_interpolator_image(interpolator),
                         shape[0] * shape[1] * sizeof(uint32_t), message);
}
