/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal_file.c: a pedestal file loaded into an 8 x 16 finder of each
 * precision. A refused file leaves the finder as it was; an accepted one
 * gives finite maps and a finder that processes frames.
 */
#include <math.h>
#include <string.h>

#include "clustercore.h"
#include "targets.h"

enum { pixels = FUZZ_ROWS * FUZZ_COLS };

static void load(cc_finder *finder, const char *path)
{
    static double mean[pixels], rms[pixels], mean_after[pixels],
        rms_after[pixels];
    int before = cc_finder_pedestal_maps(finder, mean, rms);
    if (cc_finder_load_pedestal(finder, path) != CC_OK) {
        FUZZ_REQUIRE(cc_finder_last_error(finder)[0] != '\0');
        FUZZ_REQUIRE(cc_finder_pedestal_maps(finder, mean_after, rms_after) ==
                     before);
        FUZZ_REQUIRE(before != CC_OK ||
                     (memcmp(mean, mean_after, sizeof mean) == 0 &&
                      memcmp(rms, rms_after, sizeof rms) == 0));
        return;
    }
    FUZZ_REQUIRE(cc_finder_pedestal_maps(finder, mean, rms) == CC_OK);
    for (int i = 0; i < pixels; i++)
        FUZZ_REQUIRE(isfinite(mean[i]) && isfinite(rms[i]) && rms[i] >= 0);
    static uint16_t frame[pixels];
    for (int i = 0; i < pixels; i++)
        frame[i] = (uint16_t)(1000 + 37 * i % 300);
    static cc_clusters *clusters;
    if (clusters == NULL)
        FUZZ_REQUIRE(cc_clusters_new(&clusters) == CC_OK);
    FUZZ_REQUIRE(cc_finder_process(finder, frame, NULL, 1, clusters) == CC_OK);
    FUZZ_REQUIRE(cc_clusters_frame_count(clusters) == 1);
}

void fuzz_pedestal_file(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch_file("pedestal", data, size);
    load(fuzz_finder(CC_PRECISION_FLOAT), path);
    load(fuzz_finder(CC_PRECISION_DOUBLE), path);
}
