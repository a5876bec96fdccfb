/*
 * quickstart.c: the finder through its public API on synthetic MÖNCH-like
 * frames: train a pedestal on dark frames, find the clusters of frames
 * with photons, and histogram their energies.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "clustercore.h"
#include "synthetic.h"

enum { ROWS = 400, COLS = 400, DARK_FRAMES = 200, DATA_FRAMES = 100,
       PHOTONS = 500 };

static int fail(const char *what, int rc, const char *detail)
{
    fprintf(stderr, "quickstart: %s: %s%s%s\n", what, cc_strerror(rc),
            detail[0] ? ": " : "", detail);
    return EXIT_FAILURE;
}

int main(void)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = ROWS;
    config.cols = COLS;
    config.pedestal_frames = DARK_FRAMES;
    config.threads = 0; /* one per CPU */

    char message[CC_MESSAGE_SIZE];
    cc_finder *finder;
    int rc = cc_finder_new(&finder, &config, message);
    if (rc != CC_OK)
        return fail("creating the finder", rc, message);
    printf("clustercore %s: %s\n", cc_version(),
           cc_finder_backend_description(finder));

    struct synthetic_model model;
    synthetic_defaults(&model, ROWS, COLS, 42);
    uint16_t *frame = malloc(sizeof(uint16_t) * ROWS * COLS);
    cc_clusters *clusters = NULL;
    cc_spectrum *spectrum = NULL;
    if (frame == NULL || cc_clusters_new(&clusters) != CC_OK ||
        cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 100, 0, 2000) != CC_OK)
        return fail("allocating", CC_ENOMEM, "");

    for (uint64_t k = 0; k < DARK_FRAMES; k++) {
        synthetic_dark_frame(&model, k, frame);
        if ((rc = cc_finder_train(finder, frame, 1)) != CC_OK)
            return fail("training", rc, cc_finder_last_error(finder));
    }

    model.photons = PHOTONS;
    for (uint64_t k = DARK_FRAMES; k < DARK_FRAMES + DATA_FRAMES; k++) {
        if (synthetic_frame(&model, k, frame, NULL) != 0)
            return fail("simulating", CC_ENOMEM, "");
        rc = cc_finder_process(finder, frame, &k, 1, clusters);
        if (rc != CC_OK)
            return fail("processing", rc, cc_finder_last_error(finder));
        cc_spectrum_add(spectrum, clusters);
    }

    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    printf("%" PRIu64 " dark frames trained, %" PRIu64
           " frames processed with %d photons each\n",
           stats.frames_trained, stats.frames_processed, PHOTONS);
    printf("%" PRIu64 " clusters (%.1f per frame), %" PRIu64 " dropped\n",
           stats.clusters, (double)stats.clusters / stats.frames_processed,
           stats.clusters_dropped);

    const uint64_t *counts = cc_spectrum_counts(spectrum);
    uint32_t peak = 0;
    for (uint32_t i = 1; i < cc_spectrum_bins(spectrum); i++)
        peak = counts[i] > counts[peak] ? i : peak;
    printf("spectrum peak at %.0f-%.0f ADU (photon charge %.0f ADU)\n",
           cc_spectrum_edge(spectrum, peak), cc_spectrum_edge(spectrum, peak + 1),
           model.photon_adu);

    cc_spectrum_destroy(spectrum);
    cc_clusters_destroy(clusters);
    free(frame);
    cc_finder_destroy(finder);
    return EXIT_SUCCESS;
}
