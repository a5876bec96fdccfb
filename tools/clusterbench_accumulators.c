/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterbench_accumulators.c: what a plugin does with the clusters,
 * timed for clusterbench --accumulators: the spectrum, the hit map and
 * the interpolated image, each added to from one cluster list
 * (clusterbench.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "clusterbench.h"

static int add_to_image(void *interpolator, const cc_clusters *clusters)
{
    return cc_interpolator_add(interpolator, clusters);
}

int make_interpolator(const struct options *options,
                      const cc_clusters *clusters,
                      cc_interpolator **interpolator)
{
    const cc_energy_window window = {CC_ENERGY_SUM2X2, 650, 1000};
    cc_eta_calibration *calibration;
    char message[CC_MESSAGE_SIZE];
    int rc = cc_eta_calibration_new(&calibration, CC_ETA2, 100, &window,
                                    message);
    if (rc == CC_OK)
        rc = cc_eta_calibration_add(calibration, clusters);
    if (rc == CC_OK)
        rc = cc_interpolator_new(interpolator, calibration, &window,
                                 options->rows, options->cols, 5, message);
    cc_eta_calibration_destroy(calibration);
    return rc;
}

/* Median frames/s of add(accumulator, clusters) over the workload's
 * clusters (one call for all its frames), as bench_one times. */
static double time_accumulator(const struct options *options,
                               int (*add)(void *, const cc_clusters *),
                               void *accumulator, const cc_clusters *clusters)
{
    double *rates = calloc(options->repeats, sizeof *rates);
    if (rates == NULL)
        return -1;
    size_t frames = cc_clusters_frame_count(clusters);
    for (uint32_t r = 0; r < options->repeats; r++) {
        uint64_t done = 0;
        double start = now(), elapsed = 0;
        while (elapsed < options->seconds) {
            add(accumulator, clusters);
            done += frames;
            elapsed = now() - start;
        }
        rates[r] = (double)done / elapsed;
    }
    qsort(rates, options->repeats, sizeof *rates, compare_doubles);
    double median = rates[options->repeats / 2];
    free(rates);
    return median;
}

static int add_to_spectrum(void *spectrum, const cc_clusters *clusters)
{
    return cc_spectrum_add(spectrum, clusters);
}

static int add_to_hitmap(void *hitmap, const cc_clusters *clusters)
{
    return cc_hitmap_add(hitmap, clusters);
}

int bench_accumulators(const struct options *options, struct workload *work,
                       uint32_t nx, uint32_t ny)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = options->rows;
    config.cols = options->cols;
    config.cluster_size_x = nx;
    config.cluster_size_y = ny;
    config.pedestal_frames = work->dark_frames;
    config.backend = CC_BACKEND_CPU;
    config.threads = 0;
    char message[CC_MESSAGE_SIZE];
    cc_finder *finder;
    cc_clusters *clusters = NULL;
    cc_spectrum *spectrum = NULL;
    cc_hitmap *hitmap = NULL;
    cc_interpolator *interpolator = NULL;
    int rc = cc_finder_new(&finder, &config, message);
    if (rc == CC_OK)
        rc = cc_clusters_new(&clusters);
    if (rc == CC_OK)
        rc = cc_finder_train(finder, work->dark, work->dark_frames);
    if (rc == CC_OK)
        rc = cc_finder_process(finder, work->frames[INPUT_PAGEABLE], NULL,
                               options->frames, clusters);
    if (rc == CC_OK)
        rc = cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 400, 0, 2000);
    if (rc == CC_OK)
        rc = cc_hitmap_new(&hitmap, options->rows, options->cols);
    if (rc == CC_OK)
        rc = make_interpolator(options, clusters, &interpolator);
    if (rc != CC_OK) {
        fprintf(stderr, "clusterbench: accumulators: %s\n", cc_strerror(rc));
    } else {
        double per_frame = (double)cc_clusters_total(clusters) /
                           (double)cc_clusters_frame_count(clusters);
        const char *names[3] = {"spectrum", "hit map",
                                "image (window, eta2, 5x5)"};
        double rates[3] = {
            time_accumulator(options, add_to_spectrum, spectrum, clusters),
            time_accumulator(options, add_to_hitmap, hitmap, clusters),
            time_accumulator(options, add_to_image, interpolator, clusters)};
        for (int a = 0; a < 3; a++)
            printf("| %s | %ux%u | %.1f | %.0f | %.2f | %.2f |\n", names[a], nx,
                   ny, per_frame, rates[a], 1e6 / rates[a],
                   1e9 / rates[a] / per_frame);
    }
    cc_hitmap_destroy(hitmap);
    cc_interpolator_destroy(interpolator);
    cc_spectrum_destroy(spectrum);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    return rc == CC_OK ? 0 : -1;
}
