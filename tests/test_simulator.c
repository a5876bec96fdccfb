/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_simulator.c: the simulator draws what its model says, masks and
 * defects included, and frame k of a seed is the same whatever the thread
 * count or batch.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "simulation/simulation.h"
#include "suites.h"

enum { SIDE = 40 };

/* Frame index_a of a and frame index_b of b hold the same photons, field
 * by field (not the padding). */
static void assert_same_frame_truth(const cc_truth *a, size_t index_a,
                                    const cc_truth *b, size_t index_b)
{
    cc_frame_truth x, y;
    ck_assert_int_eq(cc_truth_frame(a, index_a, &x), CC_OK);
    ck_assert_int_eq(cc_truth_frame(b, index_b, &y), CC_OK);
    ck_assert_uint_eq(x.frame_number, y.frame_number);
    ck_assert_uint_eq(x.count, y.count);
    for (uint32_t j = 0; j < x.count; j++) {
        ck_assert(x.photons[j].x == y.photons[j].x);
        ck_assert(x.photons[j].y == y.photons[j].y);
        ck_assert(x.photons[j].energy_kev == y.photons[j].energy_kev);
        ck_assert_uint_eq(x.photons[j].line, y.photons[j].line);
    }
}

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
        cc_frame_truth a;
        ck_assert_int_eq(cc_truth_frame(truth_one, 0, &a), CC_OK);
        ck_assert_uint_eq(a.frame_number, 100 + k);
        assert_same_frame_truth(truth_one, 0, truth_all, (size_t)k);
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
            double k = (double)cc__random_poisson(cc__random_key(9, 0, i),
                                                  mean);
            sum += k;
            sum_sq += k * k;
            zeros += k == 0;
        }
        double sample_mean = sum / DRAWS;
        double variance = sum_sq / DRAWS - sample_mean * sample_mean;
        /* Five standard errors: the mean's is sqrt(mean / DRAWS); the
         * variance's about mean * sqrt(2 / DRAWS). */
        ck_assert_double_le(fabs(sample_mean - mean), 5 * sqrt(mean / DRAWS));
        ck_assert_double_le(fabs(variance - mean),
                            5 * mean * sqrt(2.0 / DRAWS));
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
        ck_assert_double_le(fabs(mean - pedestal[p]),
                            5 * noise[p] / sqrt(FRAMES) + 0.5);
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
            ck_assert_double_eq(p->energy_kev,
                                config.lines[p->line].energy_kev);
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

/* FNV-1a over the 8 bytes of word, least significant first. */
static uint64_t hash_word(uint64_t hash, uint64_t word)
{
    for (int byte = 0; byte < 8; byte++) {
        hash ^= (word >> (8 * byte)) & 0xFF;
        hash *= 0x100000001B3ull;
    }
    return hash;
}

static uint64_t hash_double(uint64_t hash, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return hash_word(hash, bits);
}

/* A hash of dark and data frames 10..13 of config and of their photons. */
static uint64_t frames_hash(const cc_simulator_config *config)
{
    enum { FRAMES = 4 };
    cc_simulator *simulator = test_simulator(config);
    size_t pixels = (size_t)config->rows * config->cols;
    uint16_t *frames = malloc(2 * FRAMES * pixels * sizeof *frames);
    cc_truth *truth;
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 10, FRAMES, frames),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, 10, FRAMES,
                                         frames + FRAMES * pixels, truth),
                     CC_OK);
    uint64_t hash = 0xCBF29CE484222325ull;
    for (size_t p = 0; p < 2 * FRAMES * pixels; p++)
        hash = hash_word(hash, frames[p]);
    for (size_t f = 0; f < cc_truth_frame_count(truth); f++) {
        cc_frame_truth t;
        ck_assert_int_eq(cc_truth_frame(truth, f, &t), CC_OK);
        hash = hash_word(hash, t.count);
        for (uint32_t j = 0; j < t.count; j++) {
            hash = hash_double(hash, t.photons[j].x);
            hash = hash_double(hash, t.photons[j].y);
            hash = hash_word(hash, t.photons[j].line);
        }
    }
    cc_truth_destroy(truth);
    free(frames);
    cc_simulator_destroy(simulator);
    return hash;
}

/* Without a mask or defects, frames and photons are bit for bit those of
 * the simulator before masks and defects existed: the hashes are that
 * simulator's (x86-64, glibc's libm, whose erf, log and cos the frames
 * depend on). The mask's own fields do nothing while there is no mask. */
START_TEST(no_mask_no_change)
{
    cc_simulator_config config = test_simulator_config(40, 48, 5, 30);
    ck_assert_uint_eq(frames_hash(&config), 0x59F4E7ED29DF63CFull);
    config.beam = CC_BEAM_SPOT;
    config.spot_x = 20;
    config.spot_y = 24;
    config.spot_sigma = 8;
    config.flux = 60;
    ck_assert_uint_eq(frames_hash(&config), 0xFCBBCD6D19DEC773ull);
    config.pattern_period = 7;
    config.pattern_spokes = 5;
    config.threads = 2;
    ck_assert_uint_eq(frames_hash(&config), 0xFCBBCD6D19DEC773ull);
}
END_TEST

/* The patterns' rules, written out from the header's words. */
typedef bool open_rule(const cc_simulator_config *config, double x, double y);

static double frac(double v)
{
    return v - floor(v);
}

static bool slits_open(const cc_simulator_config *config, double x, double y)
{
    (void)y;
    return frac(x / config->pattern_period) < 0.5;
}

static bool grid_open(const cc_simulator_config *config, double x, double y)
{
    return slits_open(config, x, y) && frac(y / config->pattern_period) < 0.5;
}

static bool star_open(const cc_simulator_config *config, double x, double y)
{
    double angle = atan2(y - config->spot_y, x - config->spot_x);
    return frac(config->pattern_spokes * angle / (2 * 3.14159265358979323846)) <
           0.5;
}

/* Frames 0..9 of masked keep exactly those photons of the same frames
 * without the mask that open calls open, in their order and where they
 * were: so every photon kept lies on an open part, and every photon of an
 * open part is kept. Returns the fraction kept. */
static double kept_fraction(const cc_simulator_config *masked, open_rule *open)
{
    enum { FRAMES = 10 };
    cc_simulator_config flat = *masked;
    flat.pattern = CC_PATTERN_NONE;
    cc_simulator *with_mask = test_simulator(masked);
    cc_simulator *without = test_simulator(&flat);
    uint16_t *frames = malloc(FRAMES * (size_t)masked->rows * masked->cols *
                              sizeof *frames);
    cc_truth *kept, *all;
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_truth_new(&kept), CC_OK);
    ck_assert_int_eq(cc_truth_new(&all), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(with_mask, 0, FRAMES, frames, kept),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(without, 0, FRAMES, frames, all),
                     CC_OK);
    uint64_t n_kept = 0, n_all = 0;
    for (size_t f = 0; f < FRAMES; f++) {
        cc_frame_truth k, a;
        ck_assert_int_eq(cc_truth_frame(kept, f, &k), CC_OK);
        ck_assert_int_eq(cc_truth_frame(all, f, &a), CC_OK);
        uint32_t next = 0;
        for (uint32_t j = 0; j < a.count; j++) {
            const cc_photon *p = &a.photons[j];
            if (!open(masked, p->x, p->y))
                continue;
            ck_assert_uint_lt(next, k.count);
            const cc_photon *q = &k.photons[next++];
            ck_assert(q->x == p->x && q->y == p->y);
            ck_assert(q->energy_kev == p->energy_kev && q->line == p->line);
        }
        ck_assert_uint_eq(next, k.count);
        n_kept += k.count;
        n_all += a.count;
    }
    ck_assert_uint_gt(n_kept, 0);
    cc_truth_destroy(kept);
    cc_truth_destroy(all);
    free(frames);
    cc_simulator_destroy(with_mask);
    cc_simulator_destroy(without);
    return (double)n_kept / (double)n_all;
}

/* About 20000 photons a pattern: the fraction kept has a standard error
 * near 0.0035, and the bounds are more than 5 of them. */
START_TEST(slits_keep_half_the_pixel)
{
    cc_simulator_config config = test_simulator_config(40, 48, 8, 2000);
    config.pattern = CC_PATTERN_SLITS;
    config.pattern_period = 1.0; /* open where frac(x) < 0.5 */
    ck_assert_double_le(fabs(kept_fraction(&config, slits_open) - 0.5), 0.02);
}
END_TEST

START_TEST(grid_keeps_its_holes)
{
    cc_simulator_config config = test_simulator_config(40, 48, 9, 2000);
    config.pattern = CC_PATTERN_GRID;
    config.pattern_period = 2.5;
    /* Open: half of y, and 19 * 1.25 + 0.5 of x's 48 pixels. */
    double open = 0.5 * (19 * 1.25 + 0.5) / 48;
    ck_assert_double_le(fabs(kept_fraction(&config, grid_open) - open), 0.02);
}
END_TEST

/* The centre is inside the frame, so angles of both signs occur. */
START_TEST(star_keeps_its_sectors)
{
    cc_simulator_config config = test_simulator_config(40, 48, 10, 2000);
    config.pattern = CC_PATTERN_STAR;
    config.spot_x = 17.3;
    config.spot_y = 23.6;
    config.pattern_spokes = 12;
    ck_assert_double_le(fabs(kept_fraction(&config, star_open) - 0.5), 0.03);
}
END_TEST

/* An absorbed photon leaves no charge: behind the closed half of slits
 * of period 16, pixels 2 or more from the open parts (a cloud of 0.25 px
 * reaches 2 pixels) read the bare dark level without noise, which they do
 * not without the mask. */
START_TEST(absorbed_photons_leave_no_charge)
{
    enum { FRAMES = 5, COLS = 48 };
    cc_simulator_config config = test_simulator_config(SIDE, COLS, 4, 200);
    config.pedestal = 1000;
    config.pedestal_spread = 0;
    config.noise_min = config.noise_max = 0;
    config.pattern = CC_PATTERN_SLITS;
    config.pattern_period = 16;
    uint16_t *frames = malloc(FRAMES * SIDE * COLS * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    for (int masked = 1; masked >= 0; masked--) {
        config.pattern = masked ? CC_PATTERN_SLITS : CC_PATTERN_NONE;
        cc_simulator *simulator = test_simulator(&config);
        ck_assert_int_eq(cc_simulator_frames(simulator, 0, FRAMES, frames,
                                             NULL),
                         CC_OK);
        unsigned lit = 0;
        for (size_t p = 0; p < FRAMES * SIDE * COLS; p++)
            if (p % COLS % 16 >= 10 && p % COLS % 16 <= 13)
                lit += frames[p] != 1000;
        if (masked)
            ck_assert_uint_eq(lit, 0);
        else
            ck_assert_uint_gt(lit, 100);
        cc_simulator_destroy(simulator);
    }
    free(frames);
}
END_TEST

/* The sample rms of pixel p over n_frames frames. */
static double pixel_rms(const uint16_t *frames, size_t n_frames, size_t pixels,
                        size_t p)
{
    double sum = 0, sum_sq = 0;
    for (size_t k = 0; k < n_frames; k++) {
        double x = frames[k * pixels + p];
        sum += x;
        sum_sq += x * x;
    }
    double mean = sum / n_frames;
    return sqrt(sum_sq / n_frames - mean * mean);
}

/* Defects change only their own pixels: good pixels read what they read
 * without defects, dead ones 0. */
static void assert_only_defects_differ(const uint8_t *map,
                                       const uint16_t *frames,
                                       const uint16_t *clean, size_t n_frames,
                                       size_t pixels)
{
    for (size_t k = 0; k < n_frames; k++)
        for (size_t p = 0; p < pixels; p++) {
            size_t i = k * pixels + p;
            if (map[p] == CC_PIXEL_GOOD)
                ck_assert_uint_eq(frames[i], clean[i]);
            else if (map[p] == CC_PIXEL_DEAD)
                ck_assert_uint_eq(frames[i], 0);
        }
}

/* The defects are as many as asked, distinct, fixed by the seed, and read
 * as the model says in dark and data frames and in the maps. */
START_TEST(defects_read_as_planted)
{
    enum { HOT = 7, DEAD = 5, DARK = 200, DATA = 10, PIXELS = SIDE * SIDE };
    cc_simulator_config config = test_simulator_config(SIDE, SIDE, 21, 500);
    cc_simulator *clean = test_simulator(&config);
    config.hot_pixels = HOT;
    config.dead_pixels = DEAD;
    cc_simulator *simulator = test_simulator(&config);
    cc_simulator *again = test_simulator(&config);
    uint8_t map[PIXELS], map_again[PIXELS];
    ck_assert_int_eq(cc_simulator_defects(simulator, map), CC_OK);
    ck_assert_int_eq(cc_simulator_defects(again, map_again), CC_OK);
    ck_assert_mem_eq(map, map_again, PIXELS);
    unsigned kinds[3] = {0, 0, 0};
    for (size_t p = 0; p < PIXELS; p++) {
        ck_assert_uint_le(map[p], CC_PIXEL_DEAD);
        kinds[map[p]]++;
    }
    ck_assert_uint_eq(kinds[CC_PIXEL_HOT], HOT);
    ck_assert_uint_eq(kinds[CC_PIXEL_DEAD], DEAD);

    uint16_t *frames = malloc(DARK * PIXELS * sizeof *frames);
    uint16_t *clean_frames = malloc(DARK * PIXELS * sizeof *clean_frames);
    double pedestal[PIXELS], noise[PIXELS];
    ck_assert(frames && clean_frames);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, DARK, frames),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_dark_frames(clean, 0, DARK, clean_frames),
                     CC_OK);
    assert_only_defects_differ(map, frames, clean_frames, DARK, PIXELS);
    double good_rms_max = 0, hot_rms_min = INFINITY;
    for (size_t p = 0; p < PIXELS; p++) {
        double rms = pixel_rms(frames, DARK, PIXELS, p);
        if (map[p] == CC_PIXEL_GOOD && rms > good_rms_max)
            good_rms_max = rms;
        if (map[p] == CC_PIXEL_HOT && rms < hot_rms_min)
            hot_rms_min = rms;
    }
    /* Clipping at 0, 2.3 hot_noise below the dark level, trims the rms a
     * little. */
    ck_assert_double_ge(hot_rms_min, 0.8 * config.hot_noise);
    ck_assert_double_gt(hot_rms_min, 10 * good_rms_max);

    ck_assert_int_eq(cc_simulator_frames(simulator, 0, DATA, frames, NULL),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(clean, 0, DATA, clean_frames, NULL),
                     CC_OK);
    assert_only_defects_differ(map, frames, clean_frames, DATA, PIXELS);
    ck_assert_int_eq(cc_simulator_maps(simulator, pedestal, noise), CC_OK);
    for (size_t p = 0; p < PIXELS; p++) {
        if (map[p] == CC_PIXEL_HOT) {
            for (size_t k = 0; k < DATA; k++)
                ck_assert_uint_eq(frames[k * PIXELS + p], config.adc_max);
            ck_assert_double_eq(noise[p], config.hot_noise);
        } else if (map[p] == CC_PIXEL_DEAD) {
            ck_assert_double_eq(pedestal[p], 0);
            ck_assert_double_eq(noise[p], 0);
        }
    }
    free(frames);
    free(clean_frames);
    cc_simulator_destroy(clean);
    cc_simulator_destroy(simulator);
    cc_simulator_destroy(again);

    /* Every pixel of the frame may be defective, and a pixel is one kind. */
    config = test_simulator_config(4, 4, 3, 10);
    config.hot_pixels = 10;
    config.dead_pixels = 6;
    simulator = test_simulator(&config);
    ck_assert_int_eq(cc_simulator_defects(simulator, map), CC_OK);
    kinds[CC_PIXEL_HOT] = kinds[CC_PIXEL_DEAD] = 0;
    for (size_t p = 0; p < 16; p++)
        kinds[map[p]] += map[p] != CC_PIXEL_GOOD;
    ck_assert_uint_eq(kinds[CC_PIXEL_HOT], 10);
    ck_assert_uint_eq(kinds[CC_PIXEL_DEAD], 6);
    cc_simulator_destroy(simulator);
}
END_TEST

/* A star and defects keep frame k independent of threads and batch:
 * frames 40..45 in one batch on one thread equal the same frames in two
 * batches on two threads. */
START_TEST(masked_frames_independent_of_threads_and_batch)
{
    enum { FRAMES = 6, HALF = FRAMES / 2, PIXELS = SIDE * SIDE };
    cc_simulator_config config = test_simulator_config(SIDE, SIDE, 13, 300);
    config.pattern = CC_PATTERN_STAR;
    config.spot_x = 17.5;
    config.spot_y = 22.25;
    config.pattern_spokes = 12;
    config.hot_pixels = 9;
    config.dead_pixels = 4;
    cc_simulator *serial = test_simulator(&config);
    config.threads = 2;
    cc_simulator *parallel = test_simulator(&config);
    uint16_t *one = malloc(FRAMES * PIXELS * sizeof *one);
    uint16_t *two = malloc(FRAMES * PIXELS * sizeof *two);
    cc_truth *truth_one, *truth_two;
    ck_assert(one && two);
    ck_assert_int_eq(cc_truth_new(&truth_one), CC_OK);
    ck_assert_int_eq(cc_truth_new(&truth_two), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(serial, 40, FRAMES, one, truth_one),
                     CC_OK);
    for (size_t half = 0; half < 2; half++) {
        ck_assert_int_eq(cc_simulator_frames(parallel, 40 + half * HALF, HALF,
                                             two + half * HALF * PIXELS,
                                             truth_two),
                         CC_OK);
        for (size_t k = 0; k < HALF; k++)
            assert_same_frame_truth(truth_one, half * HALF + k, truth_two, k);
    }
    ck_assert_mem_eq(one, two, FRAMES * PIXELS * sizeof *one);
    ck_assert_int_eq(cc_simulator_dark_frames(serial, 40, FRAMES, one), CC_OK);
    for (size_t half = 0; half < 2; half++)
        ck_assert_int_eq(cc_simulator_dark_frames(parallel, 40 + half * HALF,
                                                  HALF,
                                                  two + half * HALF * PIXELS),
                         CC_OK);
    ck_assert_mem_eq(one, two, FRAMES * PIXELS * sizeof *one);
    cc_truth_destroy(truth_one);
    cc_truth_destroy(truth_two);
    free(one);
    free(two);
    cc_simulator_destroy(serial);
    cc_simulator_destroy(parallel);
}
END_TEST

/* Impossible models are refused with a message that names what is wrong;
 * nothing is made. */
START_TEST(bad_models_refused)
{
    enum { BAD = 17 };
    cc_simulator_config good = test_simulator_config(SIDE, SIDE, 1, 10);
    cc_simulator_config bad[BAD];
    const char *named[BAD] = {
        "frame size",     "noise",          "flux",           "n_lines",
        "gain",           "cloud_sigma",    "spot",           "pattern_period",
        "pattern_period", "pattern_period", "pattern_spokes", "pattern_spokes",
        "dead_pixels",    "hot_noise",      "hot_noise",      "pattern",
        "spot_x"};
    for (int i = 0; i < BAD; i++)
        bad[i] = good;
    bad[0].rows = 0;
    bad[1].noise_max = bad[1].noise_min - 1;
    bad[2].flux = -1;
    bad[3].n_lines = 0;
    bad[4].gain = 0;
    bad[5].cloud_sigma = 0;
    bad[6].beam = CC_BEAM_SPOT;
    bad[6].spot_sigma = 0;
    bad[7].pattern = CC_PATTERN_SLITS;
    bad[7].pattern_period = 0;
    bad[8].pattern = CC_PATTERN_GRID;
    bad[8].pattern_period = NAN;
    bad[9].pattern_period = SIDE + 0.5; /* more than the frame */
    bad[10].pattern = CC_PATTERN_STAR;
    bad[10].spot_x = bad[10].spot_y = SIDE / 2;
    bad[10].pattern_spokes = 0;
    bad[11].pattern_spokes = 1001;
    bad[12].hot_pixels = SIDE * SIDE / 2;
    bad[12].dead_pixels = SIDE * SIDE / 2 + 1;
    bad[13].hot_noise = -1;
    bad[14].hot_noise = NAN;
    bad[15].pattern = (cc_sim_pattern)4;
    bad[16].pattern = CC_PATTERN_STAR;
    bad[16].spot_x = NAN;
    for (int i = 0; i < BAD; i++) {
        char message[CC_MESSAGE_SIZE] = "";
        cc_simulator *simulator = (cc_simulator *)&simulator;
        ck_assert_int_eq(cc_simulator_new(&simulator, &bad[i], message),
                         CC_EINVAL);
        ck_assert_ptr_null(simulator);
        ck_assert_msg(strstr(message, named[i]) != NULL,
                      "model %d: \"%s\" does not name %s", i, message,
                      named[i]);
    }
    ck_assert_int_eq(cc_simulator_config_check(&good, NULL), CC_OK);
    /* The limits themselves are allowed. */
    good.pattern = CC_PATTERN_GRID;
    good.pattern_period = SIDE;
    good.pattern_spokes = 1000;
    good.hot_pixels = SIDE * SIDE / 2;
    good.dead_pixels = SIDE * SIDE / 2;
    good.hot_noise = 0;
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
    tcase_add_test(model, no_mask_no_change);
    tcase_add_test(model, slits_keep_half_the_pixel);
    tcase_add_test(model, grid_keeps_its_holes);
    tcase_add_test(model, star_keeps_its_sectors);
    tcase_add_test(model, absorbed_photons_leave_no_charge);
    tcase_add_test(model, defects_read_as_planted);
    tcase_add_test(model, masked_frames_independent_of_threads_and_batch);
    suite_add_tcase(suite, model);
    return suite;
}
