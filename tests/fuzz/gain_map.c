/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gain_map.c: a gain map file (.npy or TIFF, told apart by its first
 * bytes) loaded into an 8 x 16 finder. A refused file leaves the map in
 * force as it was; an accepted one holds finite gains above 0.
 */
#include <math.h>
#include <string.h>

#include "clustercore.h"
#include "targets.h"

enum { pixels = FUZZ_ROWS * FUZZ_COLS };

void fuzz_gain_map(const uint8_t *data, size_t size)
{
    cc_finder *finder = fuzz_finder(CC_PRECISION_FLOAT);
    static double before[pixels], after[pixels];
    cc_gain_unit unit;
    int had = cc_finder_get_gain(finder, before, &unit);
    FUZZ_REQUIRE(had == CC_OK || had == CC_ESTATE);
    const char *path = fuzz_scratch_file("gain", data, size);
    int rc = cc_finder_load_gain(finder, path, CC_GAIN_RELATIVE);
    int has = cc_finder_get_gain(finder, after, &unit);
    if (rc != CC_OK) {
        FUZZ_REQUIRE(cc_finder_last_error(finder)[0] != '\0');
        FUZZ_REQUIRE(has == had);
        FUZZ_REQUIRE(had != CC_OK || memcmp(before, after, sizeof before) == 0);
        return;
    }
    FUZZ_REQUIRE(has == CC_OK && unit == CC_GAIN_RELATIVE);
    for (int i = 0; i < pixels; i++)
        FUZZ_REQUIRE(isfinite(after[i]) && after[i] > 0);
}
