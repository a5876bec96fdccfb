/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * find_clusters.c: the life cycle of a libclustercore finder, end to end.
 * It simulates 100 dark frames and 20 data frames of 400 x 400 MÖNCH
 * pixels, trains the pedestal on the dark frames, finds the 3x3 clusters
 * of the data frames in batches, walks through them frame by frame into
 * an energy spectrum and a hit map, and destroys everything. Every return
 * code is checked; the program exits 0 on success and 1 on any failure.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <clustercore.h>

enum {
    ROWS = 400,
    COLS = 400,
    DARK_FRAMES = 100, /* also the pedestal window N */
    DATA_FRAMES = 20,
    BATCH = 10 /* frames per simulator, train and process call */
};

/* Everything the program creates, so that main() can destroy it all. */
struct objects {
    cc_simulator *simulator;
    cc_finder *finder;
    cc_clusters *clusters;
    cc_spectrum *spectrum;
    cc_hitmap *hitmap;
    uint16_t *frames; /* BATCH frames, back to back */
};

/* Says which call failed and why; returns 1, the exit status. */
static int failed(const char *call, int rc, const char *detail)
{
    fprintf(stderr, "find_clusters: %s: %s (%s)%s%s\n", call, cc_strerror(rc),
            cc_error_name(rc), detail[0] ? ": " : "", detail);
    return 1;
}

/* Trains the pedestal on DARK_FRAMES simulated dark frames. */
static int train(struct objects *o)
{
    for (uint64_t first = 0; first < DARK_FRAMES; first += BATCH) {
        int rc = cc_simulator_dark_frames(o->simulator, first, BATCH,
                                          o->frames);
        if (rc != CC_OK)
            return failed("cc_simulator_dark_frames", rc, "");
        rc = cc_finder_train(o->finder, o->frames, BATCH);
        if (rc != CC_OK)
            return failed("cc_finder_train", rc,
                          cc_finder_last_error(o->finder));
    }
    cc_finder_stats stats;
    int rc = cc_finder_get_stats(o->finder, &stats);
    if (rc != CC_OK)
        return failed("cc_finder_get_stats", rc, "");
    if (stats.state != CC_PEDESTAL_READY)
        return failed("training", CC_ESTATE, "the pedestal is not ready");
    printf("pedestal:  ready after %" PRIu64 " dark frames\n",
           stats.frames_trained);

    /* A call that is not allowed fails with a code and a sentence, and
     * leaves the finder as it was: here, training a ready pedestal. */
    rc = cc_finder_train(o->finder, o->frames, 1);
    if (rc != CC_ESTATE)
        return failed("cc_finder_train on a ready pedestal", rc,
                      "CC_ESTATE was expected");
    printf("refused:   %s: %s\n", cc_error_name(rc),
           cc_finder_last_error(o->finder));
    return 0;
}

/* Finds the clusters of DATA_FRAMES simulated frames, BATCH at a time,
 * and adds them to the spectrum and the hit map frame by frame. */
static int process(struct objects *o)
{
    uint64_t numbers[BATCH];
    uint32_t fewest = UINT32_MAX, most = 0;
    for (uint64_t first = 0; first < DATA_FRAMES; first += BATCH) {
        int rc = cc_simulator_frames(o->simulator, first, BATCH, o->frames,
                                     NULL);
        if (rc != CC_OK)
            return failed("cc_simulator_frames", rc, "");
        for (size_t k = 0; k < BATCH; k++)
            numbers[k] = first + k;
        rc = cc_finder_process(o->finder, o->frames, numbers, BATCH,
                               o->clusters);
        if (rc != CC_OK)
            return failed("cc_finder_process", rc,
                          cc_finder_last_error(o->finder));
        for (size_t k = 0; k < cc_clusters_frame_count(o->clusters); k++) {
            cc_frame_clusters frame;
            rc = cc_clusters_frame(o->clusters, k, &frame);
            if (rc == CC_OK)
                rc = cc_spectrum_add_frame(o->spectrum, &frame);
            if (rc == CC_OK)
                rc = cc_hitmap_add_frame(o->hitmap, &frame);
            if (rc != CC_OK)
                return failed("reading the clusters of a frame", rc, "");
            if (frame.frame_number == 0 && frame.count > 0)
                printf("frame 0:   %u clusters, the first at x %u, y %u, "
                       "sum %" PRId64 " ADU\n",
                       (unsigned)frame.count, (unsigned)frame.x[0],
                       (unsigned)frame.y[0],
                       cc_cluster_energy(CC_ENERGY_SUM, frame.size_x,
                                         frame.size_y, frame.values));
            fewest = frame.count < fewest ? frame.count : fewest;
            most = frame.count > most ? frame.count : most;
        }
    }
    cc_finder_stats stats;
    int rc = cc_finder_get_stats(o->finder, &stats);
    if (rc != CC_OK)
        return failed("cc_finder_get_stats", rc, "");
    printf("clusters:  %" PRIu64 " in %" PRIu64 " frames (%.1f per frame, "
           "%u to %u), %" PRIu64 " dropped\n",
           stats.clusters, stats.frames_processed,
           (double)stats.clusters / (double)stats.frames_processed,
           (unsigned)fewest, (unsigned)most, stats.clusters_dropped);

    const uint64_t *counts = cc_spectrum_counts(o->spectrum);
    uint32_t peak = 0;
    for (uint32_t i = 1; i < cc_spectrum_bins(o->spectrum); i++)
        if (counts[i] > counts[peak])
            peak = i;
    printf("spectrum:  peak in bin %u, %g..%g ADU (%" PRIu64 " clusters), "
           "%" PRIu64 " below, %" PRIu64 " above the range\n",
           (unsigned)peak, cc_spectrum_edge(o->spectrum, peak),
           cc_spectrum_edge(o->spectrum, peak + 1), counts[peak],
           cc_spectrum_underflow(o->spectrum),
           cc_spectrum_overflow(o->spectrum));

    const uint32_t *hits = cc_hitmap_counts(o->hitmap);
    uint64_t centres = 0;
    for (size_t p = 0; p < (size_t)ROWS * COLS; p++)
        centres += hits[p];
    printf("hit map:   %" PRIu64 " cluster centres\n", centres);
    if (centres != stats.clusters)
        return failed("the hit map", CC_EINVAL,
                      "it does not count every cluster");
    return 0;
}

static int run(struct objects *o)
{
    char message[CC_MESSAGE_SIZE];

    /* The simulator: the default MÖNCH model, 400 x 400, seed 1. */
    cc_simulator_config simulation;
    cc_simulator_config_init(&simulation);
    simulation.rows = ROWS;
    simulation.cols = COLS;
    int rc = cc_simulator_new(&o->simulator, &simulation, message);
    if (rc != CC_OK)
        return failed("cc_simulator_new", rc, message);

    /* The finder: the defaults (3x3, nsigma 5, float, auto backend, one
     * thread) but for the frame size, which has no default, and a window
     * of DARK_FRAMES dark frames. */
    cc_config config;
    cc_config_init(&config);
    config.rows = ROWS;
    config.cols = COLS;
    config.pedestal_frames = DARK_FRAMES;
    rc = cc_finder_new(&o->finder, &config, message);
    if (rc != CC_OK)
        return failed("cc_finder_new", rc, message);
    printf("backend:   %s\n", cc_finder_backend_description(o->finder));

    /* Page-locked when a GPU is used, so that frames go to it directly;
     * ordinary memory otherwise. */
    o->frames = cc_host_alloc(sizeof *o->frames * BATCH * ROWS * COLS);
    if (o->frames == NULL)
        return failed("cc_host_alloc", CC_ENOMEM, "");

    /* One cluster list reused by every batch, a spectrum of cluster sums
     * (200 bins of 10 ADU on [0, 2000): 20 frames are too few for finer
     * bins to show the Cu K-alpha peak clearly) and a hit map. */
    rc = cc_clusters_new(&o->clusters);
    if (rc == CC_OK)
        rc = cc_spectrum_new(&o->spectrum, CC_ENERGY_SUM, 200, 0.0, 2000.0);
    if (rc == CC_OK)
        rc = cc_hitmap_new(&o->hitmap, ROWS, COLS);
    if (rc != CC_OK)
        return failed("creating the outputs", rc, "");

    int status = train(o);
    return status != 0 ? status : process(o);
}

int main(void)
{
    struct objects o = {0};
    int status = run(&o);
    /* Every destroy call accepts NULL. */
    cc_hitmap_destroy(o.hitmap);
    cc_spectrum_destroy(o.spectrum);
    cc_clusters_destroy(o.clusters);
    cc_host_free(o.frames);
    cc_finder_destroy(o.finder);
    cc_simulator_destroy(o.simulator);
    return status;
}
