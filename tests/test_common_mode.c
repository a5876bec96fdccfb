/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_common_mode.c: the common-mode correction of docs/spec.md §8: its
 * regions and names, bad settings refused, the same bytes whatever the
 * threads and batches (with masked pixels and a region with too few
 * quiet pixels), and, against the simulator's truth, a run with 30 ADU
 * of common mode brought back to the figures of a run without.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "base/base.h"
#include "suites.h"

START_TEST(regions_names_and_refusals)
{
    cc_config config = test_config(400, 400);
    const uint32_t expected[] = {0, 32, 400, 2};
    for (int mode = 0; mode < 4; mode++) {
        config.common_mode = (cc_common_mode)mode;
        ck_assert_uint_eq(cc_common_mode_regions(&config), expected[mode]);
        cc_common_mode parsed;
        ck_assert_int_eq(cc_common_mode_parse(cc_common_mode_name(mode),
                                              &parsed, NULL),
                         CC_OK);
        ck_assert_int_eq(parsed, mode);
    }
    config = test_config(30, 60); /* supercolumns of 25, 25 and 10 */
    config.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    ck_assert_uint_eq(cc_common_mode_regions(&config), 6);
    char message[CC_MESSAGE_SIZE];
    cc_common_mode parsed = CC_COMMON_MODE_ROW;
    ck_assert_int_eq(cc_common_mode_parse("rows", &parsed, message), CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(message, "'rows'"));
    ck_assert_int_eq(parsed, CC_COMMON_MODE_ROW);
    config.common_mode = (cc_common_mode)7;
    ck_assert_int_eq(cc_config_check(&config, message), CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(message, "common mode 7"));
    cc_simulator_config model = test_simulator_config(30, 60, 1, 10);
    model.common_mode = CC_COMMON_MODE_ROW;
    model.common_mode_rms = -1;
    ck_assert_int_eq(cc_simulator_config_check(&model, message), CC_EINVAL);
    /* A finder of another mode has other regions: the count must match. */
    config.common_mode = CC_COMMON_MODE_HALF;
    cc_finder *finder = test_finder(&config);
    cc_common_mode_region regions[6];
    ck_assert_int_eq(cc_finder_common_mode(finder, regions, 6), CC_EINVAL);
    ck_assert_int_eq(cc_finder_common_mode(finder, regions, 2), CC_OK);
    ck_assert_uint_eq(regions[0].frames_estimated, 0);
    cc_finder_destroy(finder);
}
END_TEST

/* The region map names, for each pixel, the region whose figures are its
 * own: the plugin draws the common mode with it. */
START_TEST(region_map_follows_the_regions)
{
    cc_config config = test_config(30, 60);
    uint32_t map[30 * 60];
    ck_assert_int_eq(cc_common_mode_region_map(&config, map), CC_EINVAL);
    config.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    ck_assert_int_eq(cc_common_mode_region_map(&config, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_common_mode_region_map(&config, map), CC_OK);
    /* Supercolumns of 25, 25 and 10 columns; the bottom half from row 15. */
    ck_assert_uint_eq(map[0], 0);
    ck_assert_uint_eq(map[24], 0);
    ck_assert_uint_eq(map[25], 1);
    ck_assert_uint_eq(map[59], 2);
    ck_assert_uint_eq(map[14 * 60 + 59], 2);
    ck_assert_uint_eq(map[15 * 60], 3);
    ck_assert_uint_eq(map[29 * 60 + 59], 5);
    config.common_mode = CC_COMMON_MODE_ROW;
    ck_assert_int_eq(cc_common_mode_region_map(&config, map), CC_OK);
    ck_assert_uint_eq(map[7 * 60 + 33], 7);
    config.common_mode = CC_COMMON_MODE_HALF;
    ck_assert_int_eq(cc_common_mode_region_map(&config, map), CC_OK);
    ck_assert_uint_eq(map[14 * 60 + 59], 0);
    ck_assert_uint_eq(map[15 * 60], 1);
    config.cluster_size_x = 4; /* a configuration the finder refuses */
    ck_assert_int_eq(cc_common_mode_region_map(&config, map), CC_EINVAL);
}
END_TEST

enum { ROWS = 40, COLS = 60, DARK = 40, DATA = 12 };

struct run {
    cc_clusters *all; /* every frame's clusters, in order */
    cc_common_mode_region regions[2 * 3];
};

/* The frames of a run with common mode, the bottom-left supercolumn of
 * frame DATA / 2 all charge (0 to 3000 ADU, spread so that no offset
 * makes a quarter of it quiet), and pixels
 * masked on region edges, through a finder of `threads` threads taking
 * `batch` frames a call. */
static void run_with(const uint16_t *frames, uint32_t threads, size_t batch,
                     struct run *run)
{
    cc_config config = test_config(ROWS, COLS);
    config.pedestal_frames = DARK;
    config.threads = threads;
    config.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    cc_finder *finder = test_finder(&config);
    uint8_t mask[ROWS * COLS] = {0};
    const uint32_t masked[][2] = {{24, 0}, {25, 19}, {0, 20}, {59, 39}};
    for (size_t i = 0; i < 4; i++)
        mask[masked[i][1] * COLS + masked[i][0]] = 1;
    ck_assert_int_eq(cc_finder_set_mask(finder, mask), CC_OK);
    size_t pixels = (size_t)ROWS * COLS;
    ck_assert_int_eq(cc_finder_train(finder, frames, DARK), CC_OK);
    run->all = test_process_in_batches(finder, frames + DARK * pixels, pixels,
                                       DATA, batch);
    ck_assert_int_eq(cc_finder_common_mode(finder, run->regions, 6), CC_OK);
    cc_finder_destroy(finder);
}

static uint16_t *run_frames(void)
{
    size_t pixels = (size_t)ROWS * COLS;
    cc_simulator_config model = test_simulator_config(ROWS, COLS, 5, 30);
    model.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    model.common_mode_rms = 30;
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = test_simulated_run(simulator, pixels, DARK, 0, DATA);
    cc_simulator_destroy(simulator);
    uint16_t *flooded = frames + (DARK + DATA / 2) * pixels;
    for (uint32_t row = ROWS / 2; row < ROWS; row++)
        for (uint32_t col = 0; col < 25; col++)
            flooded[row * COLS + col] += (row * 37 + col * 53) % 3000;
    return frames;
}

START_TEST(same_bytes_whatever_threads_and_batches)
{
    uint16_t *frames = run_frames();
    struct run reference, other;
    run_with(frames, 1, DATA, &reference);
    /* The flooded region had too few quiet pixels in one frame. */
    ck_assert_uint_eq(reference.regions[3].frames_unestimated, 1);
    ck_assert_uint_eq(reference.regions[0].frames_unestimated, 0);
    ck_assert_uint_eq(reference.regions[0].frames_estimated, DATA);
    ck_assert(reference.regions[0].rms > 10); /* it saw the 30 ADU */
    const uint32_t threads[] = {3, 2, 1};
    const size_t batches[] = {DATA, 5, 1};
    for (int i = 0; i < 3; i++) {
        run_with(frames, threads[i], batches[i], &other);
        ck_assert_uint_eq(cc_clusters_total(other.all),
                          cc_clusters_total(reference.all));
        ck_assert_uint_eq(cc_clusters_frame_count(other.all), DATA);
        for (size_t f = 0; f < DATA; f++) {
            cc_frame_clusters a, b;
            cc_clusters_frame(reference.all, f, &a);
            cc_clusters_frame(other.all, f, &b);
            ck_assert_uint_eq(a.count, b.count);
            size_t cells = (size_t)a.count * a.size_x * a.size_y;
            ck_assert(memcmp(a.x, b.x, a.count * sizeof *a.x) == 0);
            ck_assert(memcmp(a.y, b.y, a.count * sizeof *a.y) == 0);
            ck_assert(memcmp(a.values, b.values, cells * sizeof *a.values) ==
                      0);
        }
        ck_assert(memcmp(reference.regions, other.regions,
                         sizeof reference.regions) == 0);
        cc_clusters_destroy(other.all);
    }
    cc_clusters_destroy(reference.all);
    free(frames);
}
END_TEST

/* The truth's figures of a 200 x 200 run with `simulated` ADU of
 * supercolumn common mode, found with or without the correction. */
#ifndef __SANITIZE_THREAD__
static cc_score scored_run(double simulated, cc_common_mode correction)
{
    enum { SIDE = 200, TRAIN = 400, FRAMES = 200, BATCH = 50 };
    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 11, 600);
    model.threads = 0;
    model.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    model.common_mode_rms = simulated;
    cc_simulator *simulator = test_simulator(&model);
    cc_config config = test_config(SIDE, SIDE);
    config.pedestal_frames = TRAIN;
    config.threads = 0;
    config.common_mode = correction;
    cc_finder *finder = test_finder(&config);
    cc_truth_score *score;
    ck_assert_int_eq(cc_truth_score_new(&score, SIDE, SIDE, model.gain), CC_OK);
    cc_clusters *clusters;
    cc_truth *truth;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    uint16_t *frames = malloc((size_t)BATCH * SIDE * SIDE * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    for (uint64_t k = 0; k < TRAIN; k += BATCH) {
        ck_assert_int_eq(cc_simulator_dark_frames(simulator, k, BATCH, frames),
                         CC_OK);
        ck_assert_int_eq(cc_finder_train(finder, frames, BATCH), CC_OK);
    }
    for (uint64_t k = 0; k < FRAMES; k += BATCH) {
        ck_assert_int_eq(cc_simulator_frames(simulator, k, BATCH, frames,
                                             truth),
                         CC_OK);
        uint64_t numbers[BATCH];
        for (int i = 0; i < BATCH; i++)
            numbers[i] = k + i;
        ck_assert_int_eq(cc_finder_process(finder, frames, numbers, BATCH,
                                           clusters),
                         CC_OK);
        ck_assert_int_eq(cc_truth_score_add(score, clusters, truth), CC_OK);
    }
    cc_score result;
    ck_assert_int_eq(cc_truth_score_get(score, &result), CC_OK);
    free(frames);
    cc_truth_destroy(truth);
    cc_clusters_destroy(clusters);
    cc_truth_score_destroy(score);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
    return result;
}

/* The bounds the issue sets: efficiency >= 99.9 %, false clusters <=
 * 2e-6 a pixel and frame, Ka within 1 % and its spread within 10 % of
 * the ideal run's. */
static bool within_ideal(const cc_score *run, const cc_score *ideal)
{
    return run->efficiency >= 0.999 && run->false_rate <= 2e-6 &&
           fabs(run->line0_ratio / ideal->line0_ratio - 1) <= 0.01 &&
           fabs(run->line0_spread / ideal->line0_spread - 1) <= 0.10;
}

START_TEST(correction_restores_the_ideal_run)
{
    cc_score ideal = scored_run(0, CC_COMMON_MODE_NONE);
    cc_score corrected = scored_run(30, CC_COMMON_MODE_SUPERCOLUMN);
    cc_score uncorrected = scored_run(30, CC_COMMON_MODE_NONE);
    ck_assert_msg(within_ideal(&ideal, &ideal), "ideal: eff %.5f false %g",
                  ideal.efficiency, ideal.false_rate);
    ck_assert_msg(within_ideal(&corrected, &ideal),
                  "corrected: eff %.5f false %g Ka ratio %.4f spread %.4f "
                  "(ideal %.4f, %.4f)",
                  corrected.efficiency, corrected.false_rate,
                  corrected.line0_ratio, corrected.line0_spread,
                  ideal.line0_ratio, ideal.line0_spread);
    /* Without the correction the same run is far outside. */
    ck_assert_msg(!within_ideal(&uncorrected, &ideal),
                  "uncorrected: eff %.5f false %g", uncorrected.efficiency,
                  uncorrected.false_rate);
}
END_TEST
#endif

Suite *suite_common_mode(void)
{
    Suite *suite = suite_create("common mode");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, regions_names_and_refusals);
    tcase_add_test(rules, region_map_follows_the_regions);
    tcase_add_test(rules, same_bytes_whatever_threads_and_batches);
    suite_add_tcase(suite, rules);
    /* Like the ground-truth suite's physics run: minutes under TSan. */
#ifndef __SANITIZE_THREAD__
    TCase *physics = tcase_create("physics");
    tcase_set_timeout(physics, 900);
    tcase_add_test(physics, correction_restores_the_ideal_run);
    suite_add_tcase(suite, physics);
#endif
    return suite;
}
