/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eta_file.c: an η calibration file read, and when accepted, made into an
 * interpolator for 8 x 16 pixels that places a photon inside its frame.
 */
#include "clustercore.h"
#include "targets.h"

void fuzz_eta_file(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch_file("calibration.eta", data, size);
    char message[CC_MESSAGE_SIZE];
    cc_eta_calibration *calibration = NULL;
    if (cc_eta_calibration_read(&calibration, path, message) != CC_OK) {
        FUZZ_REQUIRE(calibration == NULL && message[0] != '\0');
        return;
    }
    cc_eta_calibration_info info;
    FUZZ_REQUIRE(cc_eta_calibration_info_get(calibration, &info) == CC_OK);
    cc_interpolator *interpolator;
    if (cc_interpolator_new(&interpolator, calibration, NULL, FUZZ_ROWS,
                            FUZZ_COLS, 5, message) == CC_OK) {
        /* One 3 x 3 photon at (6, 3), its charge shared to the lower right. */
        static const int32_t values[9] = {0, 0, 0, 0, 600, 200, 0, 150, 50};
        static const uint16_t x = 6, y = 3;
        cc_frame_clusters frame = {.frame_number = 1,
                                   .count = 1,
                                   .size_x = 3,
                                   .size_y = 3,
                                   .x = &x,
                                   .y = &y,
                                   .values = values};
        cc_position position;
        FUZZ_REQUIRE(cc_interpolator_positions(interpolator, &frame,
                                               &position) == CC_OK);
        FUZZ_REQUIRE(position.status != CC_POSITION_OUTSIDE_WINDOW);
        FUZZ_REQUIRE(position.x >= x - 1 && position.x <= x + 2 &&
                     position.y >= y - 1 && position.y <= y + 2);
        FUZZ_REQUIRE(cc_interpolator_add_frame(interpolator, &frame) == CC_OK);
        cc_image_stats stats;
        FUZZ_REQUIRE(cc_interpolator_stats(interpolator, &stats) == CC_OK);
        FUZZ_REQUIRE(stats.photons == 1);
        cc_interpolator_destroy(interpolator);
    } else {
        FUZZ_REQUIRE(message[0] != '\0');
    }
    cc_eta_calibration_destroy(calibration);
}
