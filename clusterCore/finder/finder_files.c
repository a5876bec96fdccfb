/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * finder_files.c: what the finder holds, written as NumPy .npy files: its
 * analog image and its pedestal's mean and rms maps.
 */
#include <stdlib.h>
#include <unistd.h>

#include "finder.h"

int cc_finder_write_analog(cc_finder *finder, const char *path,
                           uint64_t *frames, char *message)
{
    cc_config config;
    if (finder == NULL || path == NULL ||
        cc_finder_get_config(finder, &config) != CC_OK)
        return cc__message(message, CC_EINVAL,
                           "a finder and a path are needed");
    size_t pixels = (size_t)config.rows * config.cols;
    double *sums = calloc(pixels, sizeof *sums);
    if (sums == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for %zu pixels' sums",
                           pixels);
    uint64_t summed = 0;
    int rc = cc_finder_take_analog(finder, sums, &summed);
    if (rc != CC_OK)
        cc__message(message, rc, "%s", cc_finder_last_error(finder));
    const uint64_t shape[2] = {config.rows, config.cols};
    if (rc == CC_OK)
        rc = cc__npy_write(path, "'<f8'", 2, shape, sums, pixels * sizeof *sums,
                           message);
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
