/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_accumulators.c: cluster energies, the spectrum and the hit map
 * (docs/spec.md §4).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "base/base.h"
#include "suites.h"

/* sum adds every value; sum2x2 takes the best of the four 2x2 windows
 * that hold the centre. */
START_TEST(cluster_energies)
{
    static const int32_t values[9] = {1, 2, 3, 4, 50, 6, 7, 8, 90};
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM, 3, 3, values), 171);
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM2X2, 3, 3, values),
                     50 + 6 + 8 + 90);
    static const int32_t negative[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM2X2, 3, 3, negative),
                     -1 - 2 - 4 - 5);
    int32_t wide[15] = {0};
    wide[7] = 10;   /* centre of 5x3 */
    wide[1] = 100;  /* (dx=-1, dy=-1): in the top-left 2x2 window */
    wide[0] = 1000; /* (dx=-2, dy=-1): in no window holding the centre */
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM2X2, 5, 3, wide), 110);
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM, 5, 3, wide), 1110);
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM, 2, 3, wide), 0);
}
END_TEST

/* Processes one flat frame with photons of the given heights at (2 + 3i, 2). */
static void photons(struct flat *flat, const int *heights, int n)
{
    for (int i = 0; i < n; i++)
        flat_set(flat, (uint32_t)(2 + 3 * i), 2, heights[i]);
    flat_process(flat);
}

/* Bins are [min + i w, min + (i+1) w); below min and at or above max are
 * counted apart, nothing is lost, and reset empties everything. */
START_TEST(spectrum_bins_and_overflow)
{
    struct flat flat;
    flat_open(&flat, 8, 32, 3, 3, CC_PRECISION_FLOAT, 1);
    cc_spectrum *spectrum;
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 4, 10, 50),
                     CC_OK);
    static const int heights[8] = {6, 10, 19, 20, 49, 50, 200, 35};
    photons(&flat, heights, 8);
    ck_assert_int_eq(cc_spectrum_add(spectrum, flat.clusters), CC_OK);
    const uint64_t *counts = cc_spectrum_counts(spectrum);
    ck_assert_uint_eq(cc_spectrum_underflow(spectrum), 1); /* 6 */
    ck_assert_uint_eq(counts[0], 2);                       /* 10, 19 */
    ck_assert_uint_eq(counts[1], 1);                       /* 20 */
    ck_assert_uint_eq(counts[2], 1);                       /* 35 */
    ck_assert_uint_eq(counts[3], 1);                       /* 49 */
    ck_assert_uint_eq(cc_spectrum_overflow(spectrum), 2);  /* 50, 200 */
    ck_assert(cc_spectrum_edge(spectrum, 0) == 10.0);
    ck_assert(cc_spectrum_edge(spectrum, 1) == 20.0);
    ck_assert(cc_spectrum_edge(spectrum, 4) == 50.0);
    cc_spectrum_reset(spectrum);
    ck_assert_uint_eq(counts[0] + counts[3] + cc_spectrum_underflow(spectrum) +
                          cc_spectrum_overflow(spectrum),
                      0);
    cc_spectrum_destroy(spectrum);
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 0, 0, 1),
                     CC_EINVAL);
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 4, 5, 5),
                     CC_EINVAL);
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 4, NAN, 5),
                     CC_EINVAL);
    ck_assert_int_eq(cc_spectrum_new(&spectrum, (cc_energy)7, 4, 0, 5),
                     CC_EINVAL);
    flat_close(&flat);
}
END_TEST

/* Every integer energy lands in the bin the spec's formula gives, whether
 * the spectrum tabulates its range or (too wide) computes each bin. */
START_TEST(spectrum_bins_match_the_formula)
{
    enum { LOW = -20, HIGH = 60 };
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    cc__clusters_clear(clusters, 3, 3);
    ck_assert_int_eq(cc__clusters_begin_frame(clusters, 0), CC_OK);
    for (int e = LOW; e <= HIGH; e++) {
        int32_t *values;
        ck_assert_int_eq(cc__clusters_push(clusters, 0, 1, 1, &values), CC_OK);
        for (int c = 0; c < 9; c++)
            values[c] = c == 4 ? e : 0;
    }
    static const double ranges[][2] = {{-3.5, 17.25}, {0, 50}, {-7, 3e6}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        double min = ranges[r][0], max = ranges[r][1];
        cc_spectrum *spectrum;
        ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 7, min, max),
                         CC_OK);
        ck_assert_int_eq(cc_spectrum_add(spectrum, clusters), CC_OK);
        uint64_t want[7] = {0}, under = 0, over = 0;
        for (int e = LOW; e <= HIGH; e++) {
            if (e < min) {
                under++;
            } else if (e >= max) {
                over++;
            } else {
                uint32_t bin = (uint32_t)((e - min) / (max - min) * 7);
                want[bin < 7 ? bin : 6]++;
            }
        }
        ck_assert_mem_eq(cc_spectrum_counts(spectrum), want, sizeof want);
        ck_assert_uint_eq(cc_spectrum_underflow(spectrum), under);
        ck_assert_uint_eq(cc_spectrum_overflow(spectrum), over);
        cc_spectrum_destroy(spectrum);
    }
    cc_clusters_destroy(clusters);
}
END_TEST

/* The hit map counts centres per pixel across frames until reset, and
 * refuses, whole, clusters that fall outside it. */
START_TEST(hitmap_counts_centres)
{
    struct flat flat;
    flat_open(&flat, 8, 32, 3, 3, CC_PRECISION_FLOAT, 1);
    cc_hitmap *hitmap;
    ck_assert_int_eq(cc_hitmap_new(&hitmap, 8, 32), CC_OK);
    static const int heights[2] = {30, 40};
    photons(&flat, heights, 2);
    ck_assert_int_eq(cc_hitmap_add(hitmap, flat.clusters), CC_OK);
    ck_assert_int_eq(cc_hitmap_add(hitmap, flat.clusters), CC_OK);
    const uint32_t *counts = cc_hitmap_counts(hitmap);
    ck_assert_uint_eq(counts[2 * 32 + 2], 2);
    ck_assert_uint_eq(counts[2 * 32 + 5], 2);
    uint64_t total = 0;
    for (int p = 0; p < 8 * 32; p++)
        total += counts[p];
    ck_assert_uint_eq(total, 4);
    cc_hitmap *small;
    ck_assert_int_eq(cc_hitmap_new(&small, 8, 4), CC_OK);
    ck_assert_int_eq(cc_hitmap_add(small, flat.clusters), CC_EINVAL);
    ck_assert_uint_eq(cc_hitmap_counts(small)[2 * 4 + 2], 0);
    cc_hitmap_reset(hitmap);
    ck_assert_uint_eq(counts[2 * 32 + 2], 0);
    cc_hitmap_destroy(small);
    ck_assert_int_eq(cc_hitmap_new(&small, 0, 4), CC_EINVAL);
    cc_hitmap_destroy(hitmap);
    flat_close(&flat);
}
END_TEST

/* Frame by frame (cc_clusters_frame) adds up to what the whole list adds,
 * and a frame the map or the spectrum cannot take is refused, whole. */
START_TEST(frame_by_frame_equals_the_list)
{
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    cc__clusters_clear(clusters, 3, 3);
    for (uint64_t f = 0; f < 3; f++) {
        ck_assert_int_eq(cc__clusters_begin_frame(clusters, f), CC_OK);
        for (int k = 0; k < 5 + 7 * (int)f; k++) {
            int32_t *values;
            ck_assert_int_eq(cc__clusters_push(clusters, 0, (uint16_t)(k % 6),
                                               (uint16_t)f, &values),
                             CC_OK);
            for (int c = 0; c < 9; c++)
                values[c] = c == 4 ? 13 * k - 20 : (int32_t)f;
        }
    }
    cc_spectrum *whole, *framed;
    ck_assert_int_eq(cc_spectrum_new(&whole, CC_ENERGY_SUM, 9, 0, 150), CC_OK);
    ck_assert_int_eq(cc_spectrum_new(&framed, CC_ENERGY_SUM, 9, 0, 150), CC_OK);
    cc_hitmap *whole_map, *framed_map;
    ck_assert_int_eq(cc_hitmap_new(&whole_map, 3, 6), CC_OK);
    ck_assert_int_eq(cc_hitmap_new(&framed_map, 3, 6), CC_OK);
    ck_assert_int_eq(cc_spectrum_add(whole, clusters), CC_OK);
    ck_assert_int_eq(cc_hitmap_add(whole_map, clusters), CC_OK);
    for (size_t f = 0; f < cc_clusters_frame_count(clusters); f++) {
        cc_frame_clusters frame;
        ck_assert_int_eq(cc_clusters_frame(clusters, f, &frame), CC_OK);
        ck_assert_int_eq(cc_spectrum_add_frame(framed, &frame), CC_OK);
        ck_assert_int_eq(cc_hitmap_add_frame(framed_map, &frame), CC_OK);
    }
    ck_assert_mem_eq(cc_spectrum_counts(framed), cc_spectrum_counts(whole),
                     9 * sizeof(uint64_t));
    ck_assert_uint_gt(cc_spectrum_underflow(whole), 0);
    ck_assert_uint_gt(cc_spectrum_overflow(whole), 0);
    ck_assert_uint_eq(cc_spectrum_underflow(framed),
                      cc_spectrum_underflow(whole));
    ck_assert_uint_eq(cc_spectrum_overflow(framed),
                      cc_spectrum_overflow(whole));
    ck_assert_mem_eq(cc_hitmap_counts(framed_map), cc_hitmap_counts(whole_map),
                     3 * 6 * sizeof(uint32_t));

    cc_frame_clusters last;
    ck_assert_int_eq(cc_clusters_frame(clusters, 2, &last), CC_OK);
    cc_hitmap *narrow;
    ck_assert_int_eq(cc_hitmap_new(&narrow, 3, 5), CC_OK);
    ck_assert_int_eq(cc_hitmap_add_frame(narrow, &last), CC_EINVAL);
    for (int p = 0; p < 3 * 5; p++)
        ck_assert_uint_eq(cc_hitmap_counts(narrow)[p], 0);
    cc_frame_clusters odd = last;
    odd.size_x = 2;
    ck_assert_int_eq(cc_spectrum_add_frame(framed, &odd), CC_EINVAL);
    ck_assert_int_eq(cc_spectrum_add_frame(framed, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_hitmap_add_frame(framed_map, NULL), CC_EINVAL);
    ck_assert_mem_eq(cc_spectrum_counts(framed), cc_spectrum_counts(whole),
                     9 * sizeof(uint64_t));
    cc_hitmap_destroy(narrow);
    cc_hitmap_destroy(whole_map);
    cc_hitmap_destroy(framed_map);
    cc_spectrum_destroy(whole);
    cc_spectrum_destroy(framed);
    cc_clusters_destroy(clusters);
}
END_TEST

/* One pass (cc_tally_frame) counts what the spectrum and the hit map
 * count apart, and what the window's own test says, over chunks of
 * clusters, negative and fractional window edges, edges on an energy,
 * and a window on another energy than the spectrum's; a frame the hit
 * map cannot take is refused whole, the spectrum untouched. */
START_TEST(tally_equals_spectrum_and_hitmap)
{
    enum { N = 700, SIDE = 5, CELLS = SIDE * SIDE, ROWS = 9, COLS = 11 };
    static uint16_t x[N], y[N];
    static int32_t values[N * CELLS];
    uint64_t state = 12345;
    for (size_t i = 0; i < N * CELLS; i++) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        values[i] = (int32_t)(state >> 40 & 0xff) - 100;
    }
    for (size_t i = 0; i < N; i++) {
        x[i] = (uint16_t)(i * 7 % COLS);
        y[i] = (uint16_t)(i * 5 % ROWS);
    }
    const cc_frame_clusters frame = {0, N, 0, SIDE, SIDE, x, y, values};
    const int64_t on_edge = cc_cluster_energy(CC_ENERGY_SUM, SIDE, SIDE,
                                              values);
    const cc_energy_window windows[] = {
        {CC_ENERGY_SUM, -10.5, 200.25},
        {CC_ENERGY_SUM, (double)on_edge, (double)on_edge + 40},
        {CC_ENERGY_SUM2X2, -3, 150},
        {CC_ENERGY_SUM, -1e300, 1e300},
    };
    for (int w = -1; w < (int)(sizeof windows / sizeof windows[0]); w++) {
        const cc_energy_window *window = w < 0 ? NULL : &windows[w];
        cc_spectrum *apart, *one;
        cc_hitmap *apart_map, *one_map;
        ck_assert_int_eq(cc_spectrum_new(&apart, CC_ENERGY_SUM, 17, -300, 900),
                         CC_OK);
        ck_assert_int_eq(cc_spectrum_new(&one, CC_ENERGY_SUM, 17, -300, 900),
                         CC_OK);
        ck_assert_int_eq(cc_hitmap_new(&apart_map, ROWS, COLS), CC_OK);
        ck_assert_int_eq(cc_hitmap_new(&one_map, ROWS, COLS), CC_OK);
        ck_assert_int_eq(cc_hitmap_set_window(apart_map, window), CC_OK);
        ck_assert_int_eq(cc_hitmap_set_window(one_map, window), CC_OK);
        ck_assert_int_eq(cc_spectrum_add_frame(apart, &frame), CC_OK);
        ck_assert_int_eq(cc_hitmap_add_frame(apart_map, &frame), CC_OK);
        ck_assert_int_eq(cc_tally_frame(one, one_map, &frame), CC_OK);
        ck_assert_mem_eq(cc_spectrum_counts(one), cc_spectrum_counts(apart),
                         17 * sizeof(uint64_t));
        ck_assert_uint_eq(cc_spectrum_underflow(one),
                          cc_spectrum_underflow(apart));
        ck_assert_uint_eq(cc_spectrum_overflow(one),
                          cc_spectrum_overflow(apart));
        ck_assert_mem_eq(cc_hitmap_counts(one_map), cc_hitmap_counts(apart_map),
                         ROWS * COLS * sizeof(uint32_t));
        uint32_t expected[ROWS * COLS] = {0};
        uint64_t outside = 0;
        for (size_t i = 0; i < N; i++) {
            int in = window == NULL ||
                     cc_energy_window_contains(window, SIDE, SIDE,
                                               values + i * CELLS);
            expected[y[i] * COLS + x[i]] += (uint32_t)in;
            outside += !in;
        }
        ck_assert_mem_eq(cc_hitmap_counts(one_map), expected, sizeof expected);
        ck_assert_uint_eq(cc_hitmap_outside(one_map), outside);
        ck_assert_uint_eq(cc_hitmap_outside(apart_map), outside);
        if (w == 0 || w == 2) /* windows that take some and leave some */
            ck_assert(outside > 0 && outside < N);
        /* Each alone, as the other NULL. */
        ck_assert_int_eq(cc_tally_frame(one, NULL, &frame), CC_OK);
        ck_assert_int_eq(cc_tally_frame(NULL, one_map, &frame), CC_OK);
        ck_assert_uint_eq(cc_hitmap_outside(one_map), 2 * outside);
        cc_spectrum_destroy(apart);
        cc_spectrum_destroy(one);
        cc_hitmap_destroy(apart_map);
        cc_hitmap_destroy(one_map);
    }
    cc_spectrum *spectrum;
    cc_hitmap *narrow;
    ck_assert_int_eq(cc_spectrum_new(&spectrum, CC_ENERGY_SUM, 17, -300, 900),
                     CC_OK);
    ck_assert_int_eq(cc_hitmap_new(&narrow, ROWS, COLS - 1), CC_OK);
    ck_assert_int_eq(cc_tally_frame(spectrum, narrow, &frame), CC_EINVAL);
    uint64_t counted = cc_spectrum_underflow(spectrum) +
                       cc_spectrum_overflow(spectrum);
    for (uint32_t b = 0; b < 17; b++)
        counted += cc_spectrum_counts(spectrum)[b];
    ck_assert_uint_eq(counted, 0);
    ck_assert_int_eq(cc_tally_frame(NULL, NULL, &frame), CC_EINVAL);
    ck_assert_int_eq(cc_tally_frame(spectrum, NULL, NULL), CC_EINVAL);
    cc_spectrum_destroy(spectrum);
    cc_hitmap_destroy(narrow);
}
END_TEST

/* got counts as want does, bin for bin and pixel for pixel. */
static void assert_same_tally(const cc_spectrum *want, const cc_spectrum *got,
                              const cc_hitmap *want_map,
                              const cc_hitmap *got_map, size_t pixels)
{
    uint32_t bins = cc_spectrum_bins(want);
    ck_assert_mem_eq(cc_spectrum_counts(got), cc_spectrum_counts(want),
                     bins * sizeof(uint64_t));
    ck_assert_uint_eq(cc_spectrum_underflow(got), cc_spectrum_underflow(want));
    ck_assert_uint_eq(cc_spectrum_overflow(got), cc_spectrum_overflow(want));
    ck_assert_mem_eq(cc_hitmap_counts(got_map), cc_hitmap_counts(want_map),
                     pixels * sizeof(uint32_t));
    ck_assert_uint_eq(cc_hitmap_outside(got_map), cc_hitmap_outside(want_map));
}

/* A finder that counts while it finds (cc_finder_set_tally) gives what
 * cc_tally_frame gives on its clusters: over batches of 1 to 100 frames,
 * across a setting that keeps the pedestal, taken midway; a take starts
 * the finder's counts again; binnings and sizes that differ are refused,
 * and so is a new frame size while a hit map is counted. */
START_TEST(finder_tallies_while_finding)
{
    enum { SIDE = 64, DARK = 50, FRAMES = 200 };
    const size_t pixels = (size_t)SIDE * SIDE;
    const cc_energy_window window = {CC_ENERGY_SUM2X2, 500, 900};
    cc_spectrum *want, *got, *other;
    cc_hitmap *want_map, *got_map, *unwindowed;
    ck_assert_int_eq(cc_spectrum_new(&want, CC_ENERGY_SUM, 300, -100, 1400),
                     CC_OK);
    ck_assert_int_eq(cc_spectrum_new(&got, CC_ENERGY_SUM, 300, -100, 1400),
                     CC_OK);
    ck_assert_int_eq(cc_spectrum_new(&other, CC_ENERGY_SUM, 299, -100, 1400),
                     CC_OK);
    ck_assert_int_eq(cc_hitmap_new(&want_map, SIDE, SIDE), CC_OK);
    ck_assert_int_eq(cc_hitmap_new(&got_map, SIDE, SIDE), CC_OK);
    ck_assert_int_eq(cc_hitmap_new(&unwindowed, SIDE, SIDE), CC_OK);
    ck_assert_int_eq(cc_hitmap_set_window(want_map, &window), CC_OK);
    ck_assert_int_eq(cc_hitmap_set_window(got_map, &window), CC_OK);

    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 31, 40);
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = malloc(FRAMES * pixels * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, DARK, frames),
                     CC_OK);
    cc_config config = test_config(SIDE, SIDE);
    config.pedestal_frames = DARK;
    config.threads = 2;
    cc_finder *finder = test_finder(&config);
    ck_assert_int_eq(cc_finder_train(finder, frames, DARK), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, DARK, FRAMES, frames, NULL),
                     CC_OK);
    cc_simulator_destroy(simulator);

    ck_assert_int_eq(cc_finder_take_tally(finder, got, got_map), CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_tally(finder, want, want_map), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    static const uint32_t batches[] = {1, 7, 32, 60, 100};
    uint32_t done = 0;
    for (size_t b = 0; done < FRAMES; b++) {
        uint32_t n = batches[b % 5] < FRAMES - done ? batches[b % 5]
                                                    : FRAMES - done;
        ck_assert_int_eq(cc_finder_process(finder, frames + done * pixels, NULL,
                                           n, clusters),
                         CC_OK);
        for (size_t k = 0; k < n; k++) {
            cc_frame_clusters frame;
            ck_assert_int_eq(cc_clusters_frame(clusters, k, &frame), CC_OK);
            ck_assert_int_eq(cc_tally_frame(want, want_map, &frame), CC_OK);
        }
        done += n;
        if (b == 1) /* taken midway: nothing lost, nothing twice */
            ck_assert_int_eq(cc_finder_take_tally(finder, got, got_map), CC_OK);
        if (b == 2) { /* a setting that keeps the pedestal keeps counting */
            config.nsigma = 5.5;
            ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
        }
    }
    ck_assert_int_eq(cc_finder_take_tally(finder, other, got_map),
                     CC_EMISMATCH);
    ck_assert_int_eq(cc_finder_take_tally(finder, got, unwindowed),
                     CC_EMISMATCH);
    ck_assert_int_eq(cc_finder_take_tally(finder, NULL, got_map), CC_EMISMATCH);
    ck_assert_int_eq(cc_finder_take_tally(finder, got, NULL), CC_EMISMATCH);
    ck_assert_int_eq(cc_finder_take_tally(finder, got, got_map), CC_OK);
    uint64_t counted = cc_spectrum_underflow(want) + cc_spectrum_overflow(want);
    for (uint32_t b = 0; b < cc_spectrum_bins(want); b++)
        counted += cc_spectrum_counts(want)[b];
    ck_assert_uint_gt(counted, 1000);
    ck_assert_uint_gt(cc_hitmap_outside(want_map), 0);
    assert_same_tally(want, got, want_map, got_map, pixels);
    /* Taken: the finder's counts start again from empty. */
    ck_assert_int_eq(cc_finder_take_tally(finder, got, got_map), CC_OK);
    assert_same_tally(want, got, want_map, got_map, pixels);

    /* A hit map of another size is refused, and so is a new frame size
     * under a hit map; a spectrum alone moves to any size. */
    cc_hitmap *small;
    ck_assert_int_eq(cc_hitmap_new(&small, SIDE, SIDE / 2), CC_OK);
    ck_assert_int_eq(cc_finder_set_tally(finder, got, small), CC_EMISMATCH);
    config.cols = SIDE / 2;
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_tally(finder, got, NULL), CC_OK);
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_int_eq(cc_finder_set_tally(finder, got, small), CC_OK);
    ck_assert_int_eq(cc_finder_set_tally(finder, NULL, NULL), CC_OK);
    ck_assert_int_eq(cc_finder_take_tally(finder, got, small), CC_ESTATE);
    cc_hitmap_destroy(small);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    cc_spectrum_destroy(want);
    cc_spectrum_destroy(got);
    cc_spectrum_destroy(other);
    cc_hitmap_destroy(want_map);
    cc_hitmap_destroy(got_map);
    cc_hitmap_destroy(unwindowed);
    free(frames);
}
END_TEST

/* docs/spec.md §4.8: the analog image sums each pixel's value as the
 * decisions see it, 0 where masked, over data frames only, in any
 * batches; it refuses what it cannot do. An 8 x 8 pedestal of 100 with s
 * = 0 and an rms of 1 (frames of 99 and 101), frames of 101 with a
 * photon of 200 at (1, 1) and pixel 5 masked. */
START_TEST(analog_image_sums_values)
{
    cc_config config = test_config(8, 8);
    config.pedestal_frames = 4;
    config.precision = CC_PRECISION_DOUBLE;
    uint16_t dark[4][64], frames[2][64];
    for (int p = 0; p < 64; p++) {
        for (int k = 0; k < 4; k++)
            dark[k][p] = k % 2 ? 101 : 99;
        frames[0][p] = frames[1][p] = 101;
    }
    frames[0][9] = frames[1][9] = 200;
    uint8_t mask[64] = {0};
    mask[5] = 1;
    double sums[2][64];
    uint64_t summed[2];
    for (int way = 0; way < 2; way++) { /* two calls, or one of 2 frames */
        cc_finder *finder = test_finder(&config);
        ck_assert_int_eq(cc_finder_set_mask(finder, mask), CC_OK);
        ck_assert_int_eq(cc_finder_train(finder, dark[0], 4), CC_OK);
        ck_assert_int_eq(cc_finder_set_analog(finder, 1), CC_OK);
        cc_clusters *clusters;
        ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
        for (int call = 0; call < (way == 0 ? 2 : 1); call++)
            ck_assert_int_eq(cc_finder_process(finder, frames[call], NULL,
                                               way == 0 ? 1 : 2, clusters),
                             CC_OK);
        ck_assert_int_eq(cc_finder_add_pedestal(finder, frames[0], 1), CC_OK);
        memset(sums[way], 0, sizeof sums[way]);
        summed[way] = 0;
        ck_assert_int_eq(cc_finder_take_analog(finder, sums[way], &summed[way]),
                         CC_OK);
        /* A take starts again from zero. */
        double again[64] = {0};
        uint64_t none = 0;
        ck_assert_int_eq(cc_finder_take_analog(finder, again, &none), CC_OK);
        ck_assert_uint_eq(none, 0);
        ck_assert(again[54] == 0);
        /* The frame size stays while it sums; off, a take is refused. */
        cc_config resized = config;
        resized.rows = 6;
        ck_assert_int_eq(cc_finder_set_config(finder, &resized), CC_ESTATE);
        ck_assert_int_eq(cc_finder_take_analog(finder, NULL, &none), CC_EINVAL);
        ck_assert_int_eq(cc_finder_set_analog(finder, 0), CC_OK);
        ck_assert_int_eq(cc_finder_take_analog(finder, again, &none),
                         CC_ESTATE);
        ck_assert_int_eq(cc_finder_set_config(finder, &resized), CC_OK);
        cc_clusters_destroy(clusters);
        cc_finder_destroy(finder);
    }
    ck_assert_uint_eq(summed[0], 2);
    /* Far from the photon: 1, then 1 - 1/4 once the quiet update moved r
     * to 1/4; the photon's pixel, never quiet: 100 twice; masked: 0. */
    ck_assert(sums[0][54] == 1.75);
    ck_assert(sums[0][9] == 200.0);
    ck_assert(sums[0][5] == 0.0);
    ck_assert_uint_eq(summed[1], summed[0]);
    ck_assert_mem_eq(sums[1], sums[0], sizeof sums[0]);
}
END_TEST

/* docs/spec.md §4.8: the image does not depend on how the frames fall
 * into calls and takes. Simulated frames, whose pedestal means (double
 * precision) hold bits far below the photons' values: summed as they
 * come, a double add would round differently when the same values are
 * grouped otherwise. One call and one take, or a call and a take for
 * each frame with the takes added up (as the plugin publishes), or
 * uneven calls: the same bytes. */
START_TEST(analog_image_whatever_calls_and_takes)
{
    enum { SIDE = 48, DARK = 64, DATA = 48 };
    const size_t pixels = (size_t)SIDE * SIDE;
    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 11, 40);
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = test_simulated_run(simulator, pixels, DARK, 0, DATA);
    cc_simulator_destroy(simulator);
    cc_config config = test_config(SIDE, SIDE);
    config.pedestal_frames = DARK;
    config.precision = CC_PRECISION_DOUBLE;
    static const uint32_t calls[3][4] = {{DATA}, {1, 1, 1, 1}, {5, 17, 3, 23}};
    double *sums[3];
    uint64_t summed[3];
    for (int way = 0; way < 3; way++) {
        cc_finder *finder = test_finder(&config);
        ck_assert_int_eq(cc_finder_train(finder, frames, DARK), CC_OK);
        ck_assert_int_eq(cc_finder_set_analog(finder, 1), CC_OK);
        cc_clusters *clusters;
        ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
        sums[way] = calloc(pixels, sizeof *sums[way]);
        ck_assert_ptr_nonnull(sums[way]);
        summed[way] = 0;
        for (uint32_t done = 0, call = 0; done < DATA; call++) {
            uint32_t n = calls[way][call % 4];
            ck_assert_int_eq(cc_finder_process(finder,
                                               frames + (DARK + done) * pixels,
                                               NULL, n, clusters),
                             CC_OK);
            done += n;
            if (way > 0)
                ck_assert_int_eq(cc_finder_take_analog(finder, sums[way],
                                                       &summed[way]),
                                 CC_OK);
        }
        ck_assert_int_eq(cc_finder_take_analog(finder, sums[way], &summed[way]),
                         CC_OK);
        cc_clusters_destroy(clusters);
        cc_finder_destroy(finder);
    }
    for (int way = 1; way < 3; way++) {
        ck_assert_uint_eq(summed[way], DATA);
        ck_assert_mem_eq(sums[way], sums[0], pixels * sizeof *sums[0]);
        free(sums[way]);
    }
    free(sums[0]);
    free(frames);
}
END_TEST

Suite *suite_accumulators(void)
{
    Suite *suite = suite_create("accumulators");
    TCase *cases = tcase_create("accumulators");
    tcase_add_test(cases, cluster_energies);
    tcase_add_test(cases, spectrum_bins_and_overflow);
    tcase_add_test(cases, spectrum_bins_match_the_formula);
    tcase_add_test(cases, hitmap_counts_centres);
    tcase_add_test(cases, frame_by_frame_equals_the_list);
    tcase_add_test(cases, tally_equals_spectrum_and_hitmap);
    tcase_add_test(cases, finder_tallies_while_finding);
    tcase_add_test(cases, analog_image_sums_values);
    tcase_add_test(cases, analog_image_whatever_calls_and_takes);
    suite_add_tcase(suite, cases);
    return suite;
}
