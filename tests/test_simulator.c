/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_simulator.c: the simulator draws what its model says, and frame k
 * of a seed is the same whatever the thread count or batch.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "internal.h"
#include "suites.h"

enum { SIDE = 40 };

/* Frames and truth do not depend on threads, batch or order: frames 0..7
 * made one by one, backwards, on one thread equal the same frames made in
 * one batch on three threads. */
START_TEST(frames_independent_of_threads_and_batch)
{
    cc_simulator_config config = test_simulator_config(SIDE, SIDE, 5, 30);
    cc_simulator *serial = test_simulator(&config);
    config.threads = 3;
    cc_simulator *parallel = test_simulator(&config);
    size_t pixels = SIDE * SIDE;
    uint16_t *one = malloc(8 * pixels * sizeof *one);
    uint16_t *all = malloc(8 * pixels * sizeof *all);
    cc_truth *truth_one, *truth_all;
    ck_assert(one && all);
    ck_assert_int_eq(cc_truth_new(&truth_one), CC_OK);
    ck_assert_int_eq(cc_truth_new(&truth_all), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(parallel, 100, 8, all, truth_all),
                     CC_OK);
    for (int k = 7; k >= 0; k--) {
        ck_assert_int_eq(cc_simulator_frames(serial, 100 + k, 1,
                                             one + k * pixels, truth_one),
                         CC_OK);
        cc_frame_truth a, b;
        ck_assert_int_eq(cc_truth_frame(truth_one, 0, &a), CC_OK);
        ck_assert_int_eq(cc_truth_frame(truth_all, k, &b), CC_OK);
        ck_assert_uint_eq(a.frame_number, 100 + k);
        ck_assert_uint_eq(b.frame_number, 100 + k);
        ck_assert_uint_eq(a.count, b.count);
        for (uint32_t j = 0; j < a.count; j++) { /* fields: not the padding */
            ck_assert(a.photons[j].x == b.photons[j].x);
            ck_assert(a.photons[j].y == b.photons[j].y);
            ck_assert(a.photons[j].energy_kev == b.photons[j].energy_kev);
            ck_assert_uint_eq(a.photons[j].line, b.photons[j].line);
        }
    }
    ck_assert_mem_eq(one, all, 8 * pixels * sizeof *one);
    ck_assert_int_eq(cc_simulator_dark_frames(parallel, 100, 8, all), CC_OK);
    for (int k = 0; k < 8; k++)
        ck_assert_int_eq(cc_simulator_dark_frames(serial, 100 + k, 1,
                                                  one + k * pixels),
                         CC_OK);
    ck_assert_mem_eq(one, all, 8 * pixels * sizeof *one);
    /* Dark frame k is not data frame k without photons: its own noise. */
    ck_assert_int_eq(cc_simulator_frames(serial, 100, 1, one, NULL), CC_OK);
    ck_assert_int_ne(memcmp(one, all, pixels * sizeof *one), 0);
    cc_truth_destroy(truth_one);
    cc_truth_destroy(truth_all);
    free(one);
    free(all);
    cc_simulator_destroy(serial);
    cc_simulator_destroy(parallel);
}
END_TEST

/* Poisson draws have the right mean, variance and P(0), for a mean in
 * the inversion range and two in the transformed-rejection range. */
START_TEST(poisson_draws_are_poisson)
{
    const double means[] = {3.5, 47.0, 2330.0};
    enum { DRAWS = 40000 };
    for (int m = 0; m < 3; m++) {
        double mean = means[m], sum = 0, sum_sq = 0;
        unsigned zeros = 0;
        for (uint64_t i = 0; i < DRAWS; i++) {
            double k = (double)cc__random_poisson(cc__random_key(9, 0, i), mean);
            sum += k;
            sum_sq += k * k;
            zeros += k == 0;
        }
        double sample_mean = sum / DRAWS;
        double variance = sum_sq / DRAWS - sample_mean * sample_mean;
        /* Five standard errors: the mean's is sqrt(mean / DRAWS); the
         * variance's about mean * sqrt(2 / DRAWS). */
        ck_assert_double_le(fabs(sample_mean - mean), 5 * sqrt(mean / DRAWS));
        ck_assert_double_le(fabs(variance - mean), 5 * mean * sqrt(2.0 / DRAWS));
        if (m == 0) {
            double expected = DRAWS * exp(-mean);
            ck_assert_double_le(fabs(zeros - expected), 5 * sqrt(expected));
        }
    }
}
END_TEST

/* Dark frames scatter around the model's pedestal with its noise. */
START_TEST(dark_frames_follow_the_maps)
{
    enum { FRAMES = 400 };
    cc_simulator_config config = test_simulator_config(SIDE, SIDE, 11, 0);
    cc_simulator *simulator = test_simulator(&config);
    size_t pixels = SIDE * SIDE;
    uint16_t *frames = malloc(FRAMES * pixels * sizeof *frames);
    double *pedestal = malloc(pixels * sizeof *pedestal);
    double *noise = malloc(pixels * sizeof *noise);
    ck_assert(frames && pedestal && noise);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, FRAMES, frames),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_maps(simulator, pedestal, noise), CC_OK);
    double ratio_sum = 0, level_sum = 0, level_sq = 0;
    for (size_t p = 0; p < pixels; p++) {
        double sum = 0, sum_sq = 0;
        for (size_t k = 0; k < FRAMES; k++) {
            double x = frames[k * pixels + p];
            sum += x;
            sum_sq += x * x;
        }
        double mean = sum / FRAMES;
        double rms = sqrt(sum_sq / FRAMES - mean * mean);
        ck_assert_double_le(fabs(mean - pedestal[p]), 5 * noise[p] / sqrt(FRAMES) + 0.5);
        ck_assert(noise[p] >= config.noise_min && noise[p] <= config.noise_max);
        ratio_sum += rms / noise[p];
        level_sum += pedestal[p];
        level_sq += pedestal[p] * pedestal[p];
    }
    /* Rounding adds 1/12 ADU^2 of variance: negligible at 15..50 ADU. */
    ck_assert_double_le(fabs(ratio_sum / pixels - 1), 0.01);
    double level_mean = level_sum / pixels;
    double spread = sqrt(level_sq / pixels - level_mean * level_mean);
    ck_assert_double_le(fabs(level_mean - config.pedestal), 5 * 100 / 40.0);
    ck_assert_double_le(fabs(spread - config.pedestal_spread), 10);
    cc_simulator_destroy(simulator);
    free(frames);
    free(pedestal);
    free(noise);
}
END_TEST

/* Without noise, a photon's charge lands, rounded, on the pixels around
 * where it hit, most of it on its own pixel; values clip at adc_max. */
START_TEST(photon_charge_is_conserved)
{
    cc_simulator_config config = test_simulator_config(SIDE, SIDE, 3, 1);
    config.pedestal = 1000;
    config.pedestal_spread = 0;
    config.noise_min = config.noise_max = 0;
    config.beam = CC_BEAM_SPOT;
    config.spot_x = config.spot_y = SIDE / 2;
    config.spot_sigma = 2;
    cc_simulator *simulator = test_simulator(&config);
    uint16_t frame[SIDE * SIDE];
    cc_truth *truth;
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    unsigned photons = 0;
    for (uint64_t k = 0; k < 50; k++) {
        ck_assert_int_eq(cc_simulator_frames(simulator, k, 1, frame, truth),
                         CC_OK);
        cc_frame_truth t;
        ck_assert_int_eq(cc_truth_frame(truth, 0, &t), CC_OK);
        double energy = 0, deposited = 0;
        for (uint32_t j = 0; j < t.count; j++)
            energy += t.photons[j].energy_kev * config.gain;
        for (size_t p = 0; p < SIDE * SIDE; p++)
            deposited += frame[p] - 1000.0;
        /* Each of the <= 25 pixels a cloud touches rounds by <= 0.5. */
        ck_assert_double_le(fabs(deposited - energy), 12.5 * (t.count + 1));
        if (t.count == 1) {
            const cc_photon *p = &t.photons[0];
            size_t own = (size_t)p->y * SIDE + (size_t)p->x;
            ck_assert_double_ge(frame[own] - 1000.0, 0.25 * energy - 1);
        }
        photons += t.count;
    }
    ck_assert_uint_gt(photons, 20);
    cc_simulator_destroy(simulator);
    config.pedestal = 16380;
    config.adc_max = 16383;
    simulator = test_simulator(&config);
    ck_assert_int_eq(cc_simulator_frames(simulator, 0, 1, frame, truth), CC_OK);
    for (size_t p = 0; p < SIDE * SIDE; p++)
        ck_assert_uint_le(frame[p], 16383);
    cc_simulator_destroy(simulator);
    cc_truth_destroy(truth);
}
END_TEST

/* Photon energies follow the line weights (87 % Ka, 13 % Kb) and
 * positions cover the sensor uniformly. */
START_TEST(lines_and_positions)
{
    cc_simulator_config config = test_simulator_config(SIDE, SIDE, 8, 2000);
    cc_simulator *simulator = test_simulator(&config);
    uint16_t *frames = malloc(10 * SIDE * SIDE * sizeof *frames);
    cc_truth *truth;
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, 0, 10, frames, truth),
                     CC_OK);
    unsigned counts[2] = {0, 0}, left = 0, total = 0;
    for (size_t f = 0; f < cc_truth_frame_count(truth); f++) {
        cc_frame_truth t;
        cc_truth_frame(truth, f, &t);
        for (uint32_t j = 0; j < t.count; j++) {
            const cc_photon *p = &t.photons[j];
            ck_assert_uint_lt(p->line, 2);
            ck_assert_double_eq(p->energy_kev, config.lines[p->line].energy_kev);
            ck_assert(p->x >= 0 && p->x < SIDE && p->y >= 0 && p->y < SIDE);
            counts[p->line]++;
            left += p->x < SIDE / 2;
            total++;
        }
    }
    ck_assert_double_le(fabs((double)counts[0] / total - 0.87), 0.01);
    ck_assert_double_le(fabs((double)left / total - 0.5), 0.015);
    cc_truth_destroy(truth);
    cc_simulator_destroy(simulator);
    free(frames);
}
END_TEST

/* Impossible models are refused with a message; nothing is made. */
START_TEST(bad_models_refused)
{
    cc_simulator_config good = test_simulator_config(SIDE, SIDE, 1, 10);
    cc_simulator_config bad[7];
    for (int i = 0; i < 7; i++)
        bad[i] = good;
    bad[0].rows = 0;
    bad[1].noise_max = bad[1].noise_min - 1;
    bad[2].flux = -1;
    bad[3].n_lines = 0;
    bad[4].gain = 0;
    bad[5].cloud_sigma = 0;
    bad[6].beam = CC_BEAM_SPOT;
    bad[6].spot_sigma = 0;
    for (int i = 0; i < 7; i++) {
        char message[CC_MESSAGE_SIZE] = "";
        cc_simulator *simulator = (cc_simulator *)&simulator;
        ck_assert_int_eq(cc_simulator_new(&simulator, &bad[i], message),
                         CC_EINVAL);
        ck_assert_ptr_null(simulator);
        ck_assert_msg(message[0] != '\0', "model %d refused silently", i);
    }
    ck_assert_int_eq(cc_simulator_config_check(&good, NULL), CC_OK);
}
END_TEST

Suite *suite_simulator(void)
{
    Suite *suite = suite_create("simulator");
    TCase *model = tcase_create("model");
    tcase_set_timeout(model, 120);
    tcase_add_test(model, frames_independent_of_threads_and_batch);
    tcase_add_test(model, poisson_draws_are_poisson);
    tcase_add_test(model, dark_frames_follow_the_maps);
    tcase_add_test(model, photon_charge_is_conserved);
    tcase_add_test(model, lines_and_positions);
    tcase_add_test(model, bad_models_refused);
    suite_add_tcase(suite, model);
    return suite;
}
