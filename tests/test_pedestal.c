/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pedestal.c: docs/spec.md §2: exact integer training, the centred
 * state, the EMA arithmetic, and the float failure that centring avoids.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "pedestal/pedestal.h"
#include "suites.h"

static cc_finder *new_finder(uint32_t rows, uint32_t cols, uint32_t window,
                             cc_precision precision)
{
    cc_config config = test_config(rows, cols);
    config.pedestal_frames = window;
    config.precision = precision;
    return test_finder(&config);
}

/* Training ends in X0 = round_half_away(sum / n) and the exact centred
 * integer sums. */
START_TEST(training_sums_are_exact)
{
    static const uint16_t frames[4][4] = {{0, 16383, 5, 100},
                                          {0, 16383, 6, 101},
                                          {1, 16383, 7, 101},
                                          {1, 16383, 9, 101}};
    static const uint16_t x0[4] = {1, 16383, 7, 101};
    static const float s[4] = {-2, 0, -1, -1}, s2[4] = {2, 0, 9, 1};
    struct cc__pedestal pedestal;
    ck_assert_int_eq(cc__pedestal_init(&pedestal, 4, CC_PRECISION_FLOAT, 4),
                     CC_OK);
    const struct cc__regions none = cc__regions_of(CC_COMMON_MODE_NONE, 1, 4);
    for (int k = 0; k < 4; k++)
        cc__pedestal_train(&pedestal, frames[k], 0x3FFF, &none, NULL);
    cc__pedestal_freeze(&pedestal);
    ck_assert_int_eq(pedestal.state, CC_PEDESTAL_READY);
    for (int p = 0; p < 4; p++) {
        ck_assert_uint_eq(pedestal.baseline[p], x0[p]);
        ck_assert(((float *)pedestal.s)[p] == s[p]);
        ck_assert(((float *)pedestal.s2)[p] == s2[p]);
    }
    cc__pedestal_free(&pedestal);
}
END_TEST

/* An independent implementation of docs/spec.md §2 in one precision. */
#define DEFINE_REFERENCE(real)                                                 \
    static void reference_##real(const uint16_t *frames, size_t pixels,        \
                                 uint32_t window, uint32_t steps,              \
                                 double *mean, double *rms)                    \
    {                                                                          \
        for (size_t p = 0; p < pixels; p++) {                                  \
            int64_t sum = 0, sum_sq = 0;                                       \
            for (uint32_t k = 0; k < window; k++) {                            \
                int64_t x = frames[k * pixels + p];                            \
                sum += x;                                                      \
                sum_sq += x * x;                                               \
            }                                                                  \
            int64_t x0 = (2 * sum + window) / (2 * (int64_t)window);           \
            real s = (real)(sum - (int64_t)window * x0);                       \
            real s2 = (real)(sum_sq - 2 * x0 * sum +                           \
                             (int64_t)window * x0 * x0);                       \
            real n = (real)window;                                             \
            for (uint32_t k = window; k < window + steps; k++) {               \
                real y = (real)((int64_t)frames[k * pixels + p] - x0);         \
                real r = s / n;                                                \
                real s2_mean = s2 / n;                                         \
                s = s + (y - r);                                               \
                s2 = s2 + (y * y - s2_mean);                                   \
            }                                                                  \
            real r = s / n;                                                    \
            real var = s2 / n - r * r;                                         \
            if (var < 0)                                                       \
                var = 0;                                                       \
            mean[p] = (double)x0 + (double)r;                                  \
            rms[p] = (double)(real)sqrt((double)var);                          \
        }                                                                      \
    }
DEFINE_REFERENCE(float)
DEFINE_REFERENCE(double)

/* After training and a run of quiet frames, the pedestal maps equal, to
 * the bit, an independent implementation of the spec's arithmetic. */
START_TEST(ema_matches_reference)
{
    cc_precision precision = _i ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT;
    enum { ROWS = 9, COLS = 11, WINDOW = 8, STEPS = 40 };
    size_t pixels = ROWS * COLS;
    uint16_t *frames = malloc((WINDOW + STEPS) * pixels * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    uint32_t state = 12345;
    for (size_t i = 0; i < (WINDOW + STEPS) * pixels; i++) {
        state = state * 1664525u + 1013904223u;
        /* Training: 900..1099; then quiet frames: 997..1003. */
        frames[i] = i < WINDOW * pixels ? 900 + (state >> 16) % 200
                                        : 997 + (state >> 16) % 7;
    }
    cc_finder *finder = new_finder(ROWS, COLS, WINDOW, precision);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, frames, WINDOW), CC_OK);
    for (int k = WINDOW; k < WINDOW + STEPS; k++) {
        ck_assert_int_eq(cc_finder_process(finder, frames + k * pixels, NULL, 1,
                                           clusters),
                         CC_OK);
        ck_assert_uint_eq(cc_clusters_total(clusters), 0);
    }
    double mean[ROWS * COLS], rms[ROWS * COLS];
    double want_mean[ROWS * COLS], want_rms[ROWS * COLS];
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_OK);
    if (precision == CC_PRECISION_DOUBLE)
        reference_double(frames, pixels, WINDOW, STEPS, want_mean, want_rms);
    else
        reference_float(frames, pixels, WINDOW, STEPS, want_mean, want_rms);
    for (size_t p = 0; p < pixels; p++) {
        ck_assert_msg(mean[p] == want_mean[p], "mean of pixel %zu", p);
        ck_assert_msg(rms[p] == want_rms[p], "rms of pixel %zu", p);
    }
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    free(frames);
}
END_TEST

/* ---- the planted failure: pedestal 16000 ADU, noise 3 ADU, float ---- */

enum { QUIET_SIDE = 32, QUIET_WINDOW = 1000, QUIET_FRAMES = 3000 };

/* The property: every pixel's estimated noise is within 1/6 of the true
 * 3 ADU (the EMA's statistical spread is about 3 %). */
static int noise_estimates_hold(const double *rms, size_t pixels)
{
    for (size_t p = 0; p < pixels; p++)
        if (!(rms[p] > 2.5 && rms[p] < 3.5))
            return 0;
    return 1;
}

static cc_simulator *quiet_model(void)
{
    cc_simulator_config model = test_simulator_config(QUIET_SIDE, QUIET_SIDE, 7,
                                                      0);
    model.pedestal = 16000;
    model.pedestal_spread = 50;
    model.noise_min = model.noise_max = 3;
    return test_simulator(&model);
}

/* The textbook estimator that docs/spec.md warns about: running means of x and x^2
 * in float, var = E[x^2] - E[x]^2. Fills rms after the same frames. */
static void naive_float_noise(cc_simulator *model, double *rms)
{
    size_t pixels = QUIET_SIDE * QUIET_SIDE;
    float *mean = calloc(pixels, sizeof *mean);
    float *mean_sq = calloc(pixels, sizeof *mean_sq);
    uint16_t *frame = malloc(pixels * sizeof *frame);
    ck_assert(mean && mean_sq && frame);
    const float n = QUIET_WINDOW;
    for (uint64_t k = 0; k < QUIET_WINDOW + QUIET_FRAMES; k++) {
        ck_assert_int_eq(cc_simulator_dark_frames(model, k, 1, frame), CC_OK);
        for (size_t p = 0; p < pixels; p++) {
            float x = frame[p];
            if (k < QUIET_WINDOW) {
                mean[p] += x / n;
                mean_sq[p] += x * x / n;
            } else {
                mean[p] += (x - mean[p]) / n;
                mean_sq[p] += (x * x - mean_sq[p]) / n;
            }
        }
    }
    for (size_t p = 0; p < pixels; p++) {
        float var = mean_sq[p] - mean[p] * mean[p];
        rms[p] = var > 0 ? sqrtf(var) : 0;
    }
    free(mean);
    free(mean_sq);
    free(frame);
}

/* Ours keeps the noise of quiet pixels on a high pedestal in float, and
 * finds no more false clusters than 2e-6 per pixel per frame; the naive
 * estimator fails the same property, which shows the test can fail. */
START_TEST(centred_float_survives_high_pedestal)
{
    cc_simulator *model = quiet_model();
    size_t pixels = QUIET_SIDE * QUIET_SIDE;
    uint16_t *frame = malloc(pixels * sizeof *frame);
    double *rms = malloc(pixels * sizeof *rms);
    ck_assert(frame && rms);
    cc_finder *finder = new_finder(QUIET_SIDE, QUIET_SIDE, QUIET_WINDOW,
                                   CC_PRECISION_FLOAT);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    uint64_t k = 0;
    for (; k < QUIET_WINDOW; k++) {
        ck_assert_int_eq(cc_simulator_dark_frames(model, k, 1, frame), CC_OK);
        ck_assert_int_eq(cc_finder_train(finder, frame, 1), CC_OK);
    }
    size_t false_clusters = 0;
    for (; k < QUIET_WINDOW + QUIET_FRAMES; k++) {
        ck_assert_int_eq(cc_simulator_dark_frames(model, k, 1, frame), CC_OK);
        ck_assert_int_eq(cc_finder_process(finder, frame, NULL, 1, clusters),
                         CC_OK);
        false_clusters += cc_clusters_total(clusters);
    }
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, NULL, rms), CC_OK);
    ck_assert_msg(noise_estimates_hold(rms, pixels),
                  "centred float lost the noise of quiet pixels");
    ck_assert_uint_le(false_clusters, 2e-6 * pixels * QUIET_FRAMES);

    naive_float_noise(model, rms);
    ck_assert_msg(!noise_estimates_hold(rms, pixels),
                  "the naive float estimator should fail this property");
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    cc_simulator_destroy(model);
    free(frame);
    free(rms);
}
END_TEST

/* finish_training with n < N makes n the window. */
START_TEST(finish_training_early)
{
    cc_finder *finder = new_finder(2, 2, 100, CC_PRECISION_FLOAT);
    uint16_t frames[3][4] = {{10, 20, 30, 40},
                             {12, 20, 30, 40},
                             {14, 20, 30, 43}};
    ck_assert_int_eq(cc_finder_train(finder, frames[0], 1), CC_OK);
    ck_assert_int_eq(cc_finder_finish_training(finder), CC_ESTATE);
    ck_assert_int_eq(cc_finder_train(finder, frames[1], 2), CC_OK);
    ck_assert_int_eq(cc_finder_finish_training(finder), CC_OK);
    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_READY);
    ck_assert_uint_eq(stats.pedestal_window, 3);
    ck_assert_uint_eq(stats.frames_trained, 3);
    double mean[4], rms[4];
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_OK);
    ck_assert(mean[0] == 12.0);
    ck_assert(mean[3] == 41.0);
    ck_assert(rms[1] == 0.0);
    ck_assert_double_eq_tol(rms[0], sqrt(8.0 / 3.0), 1e-6);
    ck_assert_int_eq(cc_finder_finish_training(finder), CC_ESTATE);
    cc_finder_destroy(finder);
}
END_TEST

/* A training batch that would pass the window is refused whole. */
START_TEST(training_past_window_refused)
{
    cc_finder *finder = new_finder(1, 2, 4, CC_PRECISION_FLOAT);
    uint16_t frames[3][2] = {{1, 2}, {3, 4}, {5, 6}};
    ck_assert_int_eq(cc_finder_train(finder, frames[0], 3), CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, frames[0], 2), CC_EINVAL);
    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    ck_assert_uint_eq(stats.frames_trained, 3);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_TRAINING);
    ck_assert_int_eq(cc_finder_train(finder, frames[2], 1), CC_OK);
    cc_finder_get_stats(finder, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_READY);
    ck_assert_int_eq(cc_finder_train(finder, frames[2], 1), CC_ESTATE);
    cc_finder_destroy(finder);
}
END_TEST

/* While training, the maps are the plain mean and rms so far. */
START_TEST(maps_while_training)
{
    cc_finder *finder = new_finder(1, 2, 10, CC_PRECISION_FLOAT);
    double mean[2], rms[2];
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_ESTATE);
    uint16_t frames[2][2] = {{10, 7}, {12, 7}};
    ck_assert_int_eq(cc_finder_train(finder, frames[0], 2), CC_OK);
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_OK);
    ck_assert(mean[0] == 11.0 && rms[0] == 1.0);
    ck_assert(mean[1] == 7.0 && rms[1] == 0.0);
    cc_finder_destroy(finder);
}
END_TEST

/* reset returns to training with every count at zero. */
START_TEST(reset_starts_over)
{
    struct flat flat;
    flat_open(&flat, 8, 8, 3, 3, CC_PRECISION_FLOAT, 1);
    flat_set(&flat, 4, 4, 10);
    flat_process(&flat);
    cc_finder_reset(flat.finder);
    cc_finder_stats stats;
    cc_finder_get_stats(flat.finder, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_TRAINING);
    ck_assert_uint_eq(stats.frames_trained + stats.frames_processed +
                          stats.clusters,
                      0);
    ck_assert_int_eq(cc_finder_process(flat.finder, flat.frame, NULL, 1,
                                       flat.clusters),
                     CC_ESTATE);
    flat_close(&flat);
}
END_TEST

/* set_config keeps the pedestal across settings that do not touch it (a
 * changed nsigma takes effect at once) and resets it on a new frame size. */
START_TEST(set_config_keeps_or_resets)
{
    struct flat flat;
    flat_open(&flat, 8, 8, 3, 3, CC_PRECISION_FLOAT, 1);
    flat_set(&flat, 4, 4, 8);
    cc_config config;
    ck_assert_int_eq(cc_finder_get_config(flat.finder, &config), CC_OK);
    config.nsigma = 10;
    config.threads = 2;
    ck_assert_int_eq(cc_finder_set_config(flat.finder, &config), CC_OK);
    cc_finder_stats stats;
    cc_finder_get_stats(flat.finder, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_READY);
    ck_assert_uint_eq(flat_process(&flat).count, 0); /* 8 < 10 * 1 */
    config.nsigma = 5;
    ck_assert_int_eq(cc_finder_set_config(flat.finder, &config), CC_OK);
    flat_set(&flat, 4, 4, 0);
    flat_set(&flat, 1, 6, 8); /* over 5 * sqrt(0.5) after the quiet update */
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(find_cluster(&frame, 1, 6), 0);
    config.rows = 6;
    ck_assert_int_eq(cc_finder_set_config(flat.finder, &config), CC_OK);
    cc_finder_get_stats(flat.finder, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_TRAINING);
    ck_assert_uint_eq(stats.frames_processed, 0);
    flat_close(&flat);
}
END_TEST

/* Four training frames of 99 and 101 give X0 = 100, s = 0, s2 = 4 (rms
 * 1) in every pixel of an 8 x 8 finder in double; pixel (4, 4) of
 * `frame` is 200, the rest 100. */
static cc_finder *trained_with_photon(uint16_t frame[64])
{
    cc_finder *finder = new_finder(8, 8, 4, CC_PRECISION_DOUBLE);
    uint16_t dark[4][64];
    for (int k = 0; k < 4; k++)
        for (int p = 0; p < 64; p++)
            dark[k][p] = k % 2 ? 101 : 99;
    ck_assert_int_eq(cc_finder_train(finder, dark[0], 4), CC_OK);
    for (int p = 0; p < 64; p++)
        frame[p] = 100;
    frame[4 * 8 + 4] = 200;
    return finder;
}

/* docs/spec.md §2.7: a pedestal frame updates every pixel as a quiet one,
 * the photon's too, and gives no clusters; processed, the photon's pixel
 * and its window would have kept their state. */
START_TEST(pedestal_frames_update_every_pixel)
{
    uint16_t frame[64];
    cc_finder *finder = trained_with_photon(frame);
    ck_assert_int_eq(cc_finder_add_pedestal(finder, frame, 1), CC_OK);
    double mean[64], rms[64];
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_OK);
    /* s = 0 + (100 - 0), s2 = 4 + (100^2 - 4/4): mean 100 + 100/4 and
     * var 10003/4 - 25^2; elsewhere s2 = 4 + (0 - 1): var 3/4. */
    ck_assert(mean[4 * 8 + 4] == 125.0);
    ck_assert_double_eq_tol(rms[4 * 8 + 4], sqrt(10003.0 / 4 - 625), 1e-9);
    ck_assert(mean[0] == 100.0 && mean[3 * 8 + 3] == 100.0);
    ck_assert_double_eq_tol(rms[3 * 8 + 3], sqrt(0.75), 1e-12);
    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    ck_assert_uint_eq(stats.frames_pedestal, 1);
    ck_assert_uint_eq(stats.frames_processed + stats.clusters, 0);
    cc_finder_destroy(finder);

    finder = trained_with_photon(frame);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frame, NULL, 1, clusters),
                     CC_OK);
    ck_assert_uint_eq(cc_clusters_total(clusters), 1);
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_OK);
    ck_assert(mean[4 * 8 + 4] == 100.0 && rms[4 * 8 + 4] == 1.0);
    ck_assert(rms[3 * 8 + 3] == 1.0); /* in the photon's window */
    ck_assert_double_eq_tol(rms[0], sqrt(0.75), 1e-12);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
}
END_TEST

/* Pedestal frames train a training pedestal up to its window, in one
 * batch or several, from a list or back to back, and update it after:
 * the same state every way. A masked pixel is never updated. */
START_TEST(pedestal_frames_train_then_update)
{
    enum { FRAMES = 7, PIXELS = 12 };
    uint16_t frames[FRAMES][PIXELS];
    for (int k = 0; k < FRAMES; k++)
        for (int p = 0; p < PIXELS; p++)
            frames[k][p] = (uint16_t)(500 + (k * 7 + p * 3) % 11 +
                                      40 * (k == 5));
    const uint16_t *list[FRAMES];
    for (int k = 0; k < FRAMES; k++)
        list[k] = frames[k];
    double expected_mean[PIXELS], expected_rms[PIXELS];
    cc_finder *once = new_finder(3, 4, 4, CC_PRECISION_FLOAT);
    ck_assert_int_eq(cc_finder_add_pedestal(once, frames[0], FRAMES), CC_OK);
    cc_finder_stats stats;
    cc_finder_get_stats(once, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_READY);
    ck_assert_uint_eq(stats.frames_trained, 4);
    ck_assert_uint_eq(stats.frames_pedestal, 3);
    ck_assert_int_eq(cc_finder_pedestal_maps(once, expected_mean, expected_rms),
                     CC_OK);
    for (int way = 0; way < 3; way++) {
        cc_finder *finder = new_finder(3, 4, 4, CC_PRECISION_FLOAT);
        if (way == 0) { /* trained, then the rest */
            ck_assert_int_eq(cc_finder_train(finder, frames[0], 4), CC_OK);
            ck_assert_int_eq(cc_finder_add_pedestal(finder, frames[4], 3),
                             CC_OK);
        } else if (way == 1) { /* from a list, a frame at a time */
            for (int k = 0; k < FRAMES; k++)
                ck_assert_int_eq(cc_finder_add_pedestal_list(finder, list + k,
                                                             1),
                                 CC_OK);
        } else { /* a list in two batches across the window */
            ck_assert_int_eq(cc_finder_add_pedestal_list(finder, list, 3),
                             CC_OK);
            ck_assert_int_eq(cc_finder_add_pedestal_list(finder, list + 3, 4),
                             CC_OK);
        }
        double mean[PIXELS], rms[PIXELS];
        ck_assert_int_eq(cc_finder_pedestal_maps(finder, mean, rms), CC_OK);
        ck_assert_mem_eq(mean, expected_mean, sizeof mean);
        ck_assert_mem_eq(rms, expected_rms, sizeof rms);
        cc_finder_destroy(finder);
    }
    /* The photon-free frames 4 and 6 moved the pedestal; frame 5's 40 ADU
     * did too. */
    cc_finder *trained = new_finder(3, 4, 4, CC_PRECISION_FLOAT);
    ck_assert_int_eq(cc_finder_train(trained, frames[0], 4), CC_OK);
    double mean[PIXELS], rms[PIXELS];
    ck_assert_int_eq(cc_finder_pedestal_maps(trained, mean, rms), CC_OK);
    ck_assert(memcmp(mean, expected_mean, sizeof mean) != 0);
    /* A masked pixel keeps its state. */
    uint8_t mask[PIXELS] = {0};
    mask[5] = 1;
    ck_assert_int_eq(cc_finder_set_mask(trained, mask), CC_OK);
    ck_assert_int_eq(cc_finder_add_pedestal(trained, frames[4], 3), CC_OK);
    double after[PIXELS];
    ck_assert_int_eq(cc_finder_pedestal_maps(trained, after, rms), CC_OK);
    ck_assert(after[5] == mean[5]);
    ck_assert(after[4] == expected_mean[4]);
    cc_finder_destroy(trained);
    cc_finder_destroy(once);
}
END_TEST

/* Pedestal frames enter no spectrum or hit map; bad arguments are
 * refused with the pedestal kept. */
START_TEST(pedestal_frames_count_nothing)
{
    uint16_t frame[64];
    cc_finder *finder = trained_with_photon(frame);
    cc_spectrum *spectrum;
    cc_hitmap *hitmap;
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 100, 0, 1000),
                     CC_OK);
    ck_assert_int_eq(cc_hitmap_new(&hitmap, 8, 8), CC_OK);
    ck_assert_int_eq(cc_finder_set_tally(finder, spectrum, hitmap), CC_OK);
    ck_assert_int_eq(cc_finder_add_pedestal(finder, frame, 1), CC_OK);
    ck_assert_int_eq(cc_finder_take_tally(finder, spectrum, hitmap), CC_OK);
    uint64_t counted = cc_spectrum_underflow(spectrum) +
                       cc_spectrum_overflow(spectrum);
    for (uint32_t i = 0; i < cc_spectrum_bins(spectrum); i++)
        counted += cc_spectrum_counts(spectrum)[i];
    ck_assert_uint_eq(counted, 0);
    const uint16_t *list[2] = {frame, NULL};
    ck_assert_int_eq(cc_finder_add_pedestal(finder, NULL, 1), CC_EINVAL);
    ck_assert_int_eq(cc_finder_add_pedestal_list(finder, list, 2), CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(finder), "frame 1"));
    ck_assert_int_eq(cc_finder_add_pedestal(NULL, frame, 1), CC_EINVAL);
    ck_assert_int_eq(cc_finder_add_pedestal(finder, NULL, 0), CC_OK);
    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    ck_assert_uint_eq(stats.frames_pedestal, 1);
    cc_spectrum_destroy(spectrum);
    cc_hitmap_destroy(hitmap);
    cc_finder_destroy(finder);
}
END_TEST

Suite *suite_pedestal(void)
{
    Suite *suite = suite_create("pedestal");
    TCase *arithmetic = tcase_create("arithmetic");
    tcase_set_timeout(arithmetic, 120);
    tcase_add_test(arithmetic, training_sums_are_exact);
    tcase_add_loop_test(arithmetic, ema_matches_reference, 0, 2);
    tcase_add_test(arithmetic, centred_float_survives_high_pedestal);
    suite_add_tcase(suite, arithmetic);
    TCase *life = tcase_create("life cycle");
    tcase_add_test(life, finish_training_early);
    tcase_add_test(life, training_past_window_refused);
    tcase_add_test(life, maps_while_training);
    tcase_add_test(life, reset_starts_over);
    tcase_add_test(life, set_config_keeps_or_resets);
    tcase_add_test(life, pedestal_frames_update_every_pixel);
    tcase_add_test(life, pedestal_frames_train_then_update);
    tcase_add_test(life, pedestal_frames_count_nothing);
    suite_add_tcase(suite, life);
    return suite;
}
