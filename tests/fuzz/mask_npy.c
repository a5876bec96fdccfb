/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mask_npy.c: a mask .npy loaded into an 8 x 16 finder. A refused file
 * leaves the mask in force as it was; an accepted one is all 0 and 1.
 */
#include <string.h>

#include "clustercore.h"
#include "targets.h"

enum { pixels = FUZZ_ROWS * FUZZ_COLS };

void fuzz_mask_npy(const uint8_t *data, size_t size)
{
    cc_finder *finder = fuzz_finder(CC_PRECISION_FLOAT);
    static uint8_t before[pixels], after[pixels];
    FUZZ_REQUIRE(cc_finder_get_mask(finder, before) == CC_OK);
    const char *path = fuzz_scratch_file("mask.npy", data, size);
    int rc = cc_finder_load_mask(finder, path);
    FUZZ_REQUIRE(cc_finder_get_mask(finder, after) == CC_OK);
    if (rc != CC_OK) {
        FUZZ_REQUIRE(cc_finder_last_error(finder)[0] != '\0');
        FUZZ_REQUIRE(memcmp(before, after, sizeof before) == 0);
        return;
    }
    for (int i = 0; i < pixels; i++)
        FUZZ_REQUIRE(after[i] <= 1);
}
