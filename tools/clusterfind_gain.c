/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterfind_gain.c: the gain of a run (docs/spec.md §9): the line on the
 * map in force, and the calibration of a flat field into a new map and
 * the mask of the pixels it could not calibrate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clusterfind.h"

int gain_open(struct gain_job *gain, const struct options *options,
              cc_finder *finder, uint32_t rows, uint32_t cols)
{
    *gain = (struct gain_job){.options = options, .rows = rows, .cols = cols};
    if (options->gain_calibrate == NULL)
        return 0;
    cc_gain_calibration_config config;
    cc_gain_calibration_config_init(&config);
    config.rows = rows;
    config.cols = cols;
    config.low = options->peak_low;
    config.high = options->peak_high;
    config.events = options->gain_events;
    config.min_photons = options->gain_min_photons;
    char message[CC_MESSAGE_SIZE];
    if (cc_gain_calibration_new(&gain->calibration, &config, message) !=
        CC_OK) {
        fprintf(stderr, "clusterfind: --gain-calibrate: %s\n", message);
        return EXIT_RUN_FAILED;
    }
    if (cc_finder_set_gain_calibration(finder, gain->calibration) != CC_OK) {
        fprintf(stderr, "clusterfind: --gain-calibrate: %s\n",
                cc_finder_last_error(finder));
        return EXIT_RUN_FAILED;
    }
    return 0;
}

int gain_write(struct gain_job *gain, cc_finder *finder, const char **written,
               int *n_written, char *message)
{
    const struct options *o = gain->options;
    if (gain->calibration == NULL)
        return CC_OK;
    int taken = cc_finder_take_gain_calibration(finder, gain->calibration);
    if (taken != CC_OK) {
        snprintf(message, CC_MESSAGE_SIZE, "%s", cc_finder_last_error(finder));
        return taken;
    }
    size_t pixels = (size_t)gain->rows * gain->cols;
    double *map = malloc(pixels * sizeof *map);
    double *prior = malloc(pixels * sizeof *prior);
    uint8_t *quality = malloc(pixels);
    int rc = map && prior && quality ? CC_OK : CC_ENOMEM;
    cc_gain_unit prior_unit = CC_GAIN_RELATIVE;
    bool with_prior = rc == CC_OK &&
                      cc_finder_get_gain(finder, prior, &prior_unit) == CC_OK;
    cc_gain_unit unit = o->gain_line_energy > 0 ? CC_GAIN_ADU_PER_KEV
                                                : CC_GAIN_RELATIVE;
    if (rc == CC_OK)
        rc = cc_gain_calibration_solve(gain->calibration,
                                       with_prior ? prior : NULL, prior_unit,
                                       unit, o->gain_line_energy, map, quality,
                                       &gain->result, message);
    if (rc == CC_OK)
        rc = cc_gain_map_write_npy(o->gain_calibrate, gain->rows, gain->cols,
                                   map, message);
    if (rc == CC_OK)
        written[(*n_written)++] = o->gain_calibrate;
    if (rc == CC_OK && o->gain_mask != NULL) {
        for (size_t p = 0; p < pixels; p++)
            quality[p] = quality[p] != CC_GAIN_GOOD;
        rc = cc_mask_write_npy(o->gain_mask, gain->rows, gain->cols, quality,
                               message);
        if (rc == CC_OK)
            written[(*n_written)++] = o->gain_mask;
    }
    if (rc == CC_ENOMEM)
        snprintf(message, CC_MESSAGE_SIZE, "no memory for the gain map");
    free(map);
    free(prior);
    free(quality);
    return rc;
}

/* The map in force: its spread over the pixels. */
static void map_summary(const struct gain_job *gain, const cc_finder *finder)
{
    const struct options *o = gain->options;
    size_t pixels = (size_t)gain->rows * gain->cols;
    double *map = o->gain_map != NULL ? malloc(pixels * sizeof *map) : NULL;
    cc_gain_unit unit;
    if (map == NULL || cc_finder_get_gain(finder, map, &unit) != CC_OK) {
        free(map);
        return;
    }
    double sum = 0, sum_sq = 0, low = map[0], high = map[0];
    for (size_t p = 0; p < pixels; p++) {
        sum += map[p];
        sum_sq += map[p] * map[p];
        low = map[p] < low ? map[p] : low;
        high = map[p] > high ? map[p] : high;
    }
    double mean = sum / (double)pixels;
    double var = sum_sq / (double)pixels - mean * mean;
    printf("gain:      %s (%s): mean %.4g, rms %.2f %% of it, %.4g to %.4g; "
           "clusters in %s\n",
           o->gain_map, cc_gain_unit_name(unit), mean,
           100 * (var > 0 ? sqrt(var) : 0) / mean, low, high,
           unit == CC_GAIN_ADU_PER_KEV ? "eV" : "ADU of a gain-1 pixel");
    free(map);
}

void gain_summary(const struct gain_job *gain, const cc_finder *finder)
{
    map_summary(gain, finder);
    if (gain->calibration == NULL)
        return;
    const struct options *o = gain->options;
    const cc_gain_calibration_result *r = &gain->result;
    printf("gain cal:  %llu %s events in [%g, %g) %s (%llu outside); pixels "
           "%llu calibrated, %llu with too few photons, %llu whose fit "
           "failed; median line %.2f %s, gain spread %.2f %%",
           (unsigned long long)r->photons,
           o->gain_events == CC_GAIN_EVENTS_SINGLE ? "single" : "sum",
           o->peak_low / o->energy_scale, o->peak_high / o->energy_scale,
           o->energy_unit, (unsigned long long)r->outside,
           (unsigned long long)r->pixels_good,
           (unsigned long long)r->pixels_few,
           (unsigned long long)r->pixels_failed, r->reference / o->energy_scale,
           o->energy_unit, 100 * r->spread);
    if (o->gain_line_energy > 0)
        printf(", ADU per keV at %g keV", o->gain_line_energy);
    printf("\n");
}

void gain_close(struct gain_job *gain)
{
    cc_gain_calibration_destroy(gain->calibration);
    gain->calibration = NULL;
}
