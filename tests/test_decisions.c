/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_decisions.c: docs/spec.md §3, one test per rule, on hand-built
 * frames. A flat finder has rms = 1 and nsigma = 5 everywhere, so thr = 5
 * and, at 3x3, thr3 = 15. A pixel left alone keeps rms exactly 1; a quiet
 * pixel of v = 0 is updated to rms = sqrt(0.5).
 */
#include <check.h>
#include <math.h>

#include "frames.h"
#include "suites.h"

static struct flat flat;

static void open_3x3(void)
{
    flat_open(&flat, 12, 12, 3, 3, CC_PRECISION_FLOAT, 1);
}

static void close_flat(void)
{
    flat_close(&flat);
}

/* A quiet pixel is updated: the control that makes "no update" mean
 * something in the tests below. */
static void assert_updated(uint32_t x, uint32_t y)
{
    ck_assert(flat_rms(&flat, x, y) != 1.0);
}

static void assert_not_updated(uint32_t x, uint32_t y)
{
    ck_assert(flat_rms(&flat, x, y) == 1.0);
}

/* Rule 1: v < -thr is skipped with no cluster and no update; v = -thr is
 * not negative enough and the pixel is quiet. */
START_TEST(negative_skip_without_update)
{
    flat_set(&flat, 3, 3, -6);
    flat_set(&flat, 8, 8, -5);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 0);
    assert_not_updated(3, 3);
    assert_updated(8, 8);
    assert_updated(0, 0);
}
END_TEST

/* Rule 2: a pixel whose window max clears thr but is not that max is in a
 * photon's shadow: no cluster, no update, even when it clears thr itself. */
START_TEST(shadow_without_update)
{
    flat_set(&flat, 5, 5, 10);
    flat_set(&flat, 6, 5, 7);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(find_cluster(&frame, 5, 5), 0);
    assert_not_updated(6, 5); /* over thr, not the max */
    assert_not_updated(4, 4); /* v = 0 next to the photon */
    assert_not_updated(7, 6); /* sees the 7 only: max 7 > thr, v 0 < 7 */
    assert_updated(9, 9);
}
END_TEST

/* Rule 2: the maximum over thr stores a cluster of its window's values,
 * and is not updated; v = thr exactly does not clear thr. */
START_TEST(test1_store)
{
    flat_set(&flat, 5, 5, 6);
    flat_set(&flat, 1, 9, 5);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_uint_eq(frame.x[0], 5);
    ck_assert_uint_eq(frame.y[0], 5);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(frame.values[i], i == 4 ? 6 : 0);
    assert_not_updated(5, 5);
    assert_updated(1, 9);
}
END_TEST

/* A 4 at (5,5) ringed by eight 3s: none over thr, the centre's sum 28. */
static void plant_ring(void)
{
    flat_set(&flat, 5, 5, 4);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            if (dx != 0 || dy != 0)
                flat_set(&flat, 5 + dx, 5 + dy, 3);
}

/* Rule 3: no pixel over thr, but the window sum clears thr3 = 3 * 5 and
 * the pixel is its window's max: a cluster. */
START_TEST(test3_store)
{
    plant_ring();
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(find_cluster(&frame, 5, 5), 0);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(frame.values[i], i == 4 ? 4 : 3);
    assert_not_updated(5, 5);
}
END_TEST

/* Rule 3: a pixel that passes the sum test but is not its window's max
 * gives no cluster and is not updated. (4,5) sees 5 threes and the 4:
 * sum 19 > 15, v = 3 < max = 4. (3,5) sees 3 threes: sum 9, quiet. */
START_TEST(test3_pass_not_max)
{
    plant_ring();
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    assert_not_updated(4, 5);
    assert_not_updated(5, 6);
    assert_updated(6, 6); /* a corner of the ring: sum 13, quiet */
    assert_updated(2, 5);
}
END_TEST

/* Equal maxima each emit a cluster, in row-then-column order. */
START_TEST(equal_maxima)
{
    flat_set(&flat, 6, 5, 10);
    flat_set(&flat, 5, 5, 10);
    flat_set(&flat, 2, 2, 8);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 3);
    ck_assert_uint_eq(frame.y[0], 2);
    ck_assert_uint_eq(frame.x[0], 2);
    ck_assert_uint_eq(frame.x[1], 5);
    ck_assert_uint_eq(frame.x[2], 6);
    ck_assert_uint_eq(frame.y[1], 5);
    ck_assert_uint_eq(frame.y[2], 5);
    ck_assert_int_eq(frame.values[9 + 5], 10); /* (5,5) sees (6,5) */
}
END_TEST

/* Cells outside the frame are 0 in emitted clusters (corners and edges). */
START_TEST(edges_and_corners_zero_padded)
{
    uint32_t last = flat.cols - 1;
    flat_set(&flat, 0, 0, 10);
    flat_set(&flat, 1, 0, 2);
    flat_set(&flat, 0, 1, 3);
    flat_set(&flat, 1, 1, 4);
    flat_set(&flat, last, last, 13);
    flat_set(&flat, last - 1, last, 2);
    flat_set(&flat, last, last - 1, 3);
    flat_set(&flat, last - 1, last - 1, 4);
    flat_set(&flat, 6, 0, 20);
    flat_set(&flat, 6, 1, 5);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 3);
    static const int32_t top_left[9] = {0, 0, 0, 0, 10, 2, 0, 3, 4};
    static const int32_t top_edge[9] = {0, 0, 0, 0, 20, 0, 0, 5, 0};
    static const int32_t bottom_right[9] = {4, 3, 0, 2, 13, 0, 0, 0, 0};
    ck_assert_int_eq(find_cluster(&frame, 0, 0), 0);
    ck_assert_int_eq(find_cluster(&frame, 6, 0), 1);
    ck_assert_int_eq(find_cluster(&frame, last, last), 2);
    for (int i = 0; i < 9; i++) {
        ck_assert_int_eq(frame.values[i], top_left[i]);
        ck_assert_int_eq(frame.values[9 + i], top_edge[i]);
        ck_assert_int_eq(frame.values[18 + i], bottom_right[i]);
    }
}
END_TEST

/* Test 3 at a corner sums the in-frame cells only: four cells of 4 give
 * 16 > 15 at (0,0); the pixel is the max and emits. */
START_TEST(corner_sum_counts_in_frame_cells)
{
    flat_set(&flat, 0, 0, 4);
    flat_set(&flat, 1, 0, 4);
    flat_set(&flat, 0, 1, 4);
    flat_set(&flat, 1, 1, 4);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_int_ge(find_cluster(&frame, 0, 0), 0);
}
END_TEST

/* 9x9 windows: thr3 = 9 * 5 = 45. A 4 inside a 9x9 block of ones sums to
 * 84 and is the only maximum; an edge photon keeps its padding. */
START_TEST(nine_by_nine_windows)
{
    struct flat big;
    flat_open(&big, 30, 30, 9, 9, CC_PRECISION_FLOAT, 1);
    for (int dy = -4; dy <= 4; dy++)
        for (int dx = -4; dx <= 4; dx++)
            flat_set(&big, 10 + dx, 10 + dy, dx == 0 && dy == 0 ? 4 : 1);
    flat_set(&big, 1, 27, 30);
    flat_set(&big, 0, 27, 5);
    cc_frame_clusters frame = flat_process(&big);
    ck_assert_uint_eq(frame.size_x, 9);
    ck_assert_uint_eq(frame.count, 2);
    ck_assert_int_eq(find_cluster(&frame, 10, 10), 0);
    ck_assert_int_eq(find_cluster(&frame, 1, 27), 1);
    for (int i = 0; i < 81; i++)
        ck_assert_int_eq(frame.values[i], i == 40 ? 4 : 1);
    const int32_t *edge = frame.values + 81;
    for (int i = 0; i < 81; i++)
        ck_assert_int_eq(edge[i], i == 40 ? 30 : i == 39 ? 5 : 0);
    flat_close(&big);
}
END_TEST

/* Nx != Ny: a 5x3 cluster holds 3 rows of 5, row-major from top-left. */
START_TEST(rectangular_windows)
{
    struct flat wide;
    flat_open(&wide, 12, 12, 5, 3, CC_PRECISION_DOUBLE, 1);
    flat_set(&wide, 5, 5, 10);
    flat_set(&wide, 7, 5, 2);
    flat_set(&wide, 5, 6, 3);
    cc_frame_clusters frame = flat_process(&wide);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_uint_eq(frame.size_x, 5);
    ck_assert_uint_eq(frame.size_y, 3);
    for (int i = 0; i < 15; i++)
        ck_assert_int_eq(frame.values[i], i == 7    ? 10
                                          : i == 9  ? 2
                                          : i == 12 ? 3
                                                    : 0);
    flat_close(&wide);
}
END_TEST

/* Frozen model: P = (5,5) is quiet and updated in frame 1, which moves
 * its r from 0 to 2. Q = (6,5) decides in the same frame with P's old v
 * = 4: sum 4 + 4 + 3 * 3 = 17 > 15, a cluster. Had P's update leaked into
 * frame 1 (as in a raster scan that updates in place), v_P would be 2,
 * the sum 15, and no cluster. In frame 2 the update is seen. _i 1 turns
 * the picture over the diagonal, Q = (5,6) below P: a row's window sums
 * are made before its decisions, so only an update leaking into the rows
 * below (a row updated once it is decided) shows there. */
START_TEST(frozen_model)
{
    const int below = _i;
#define AT(x, y) (below ? (y) : (x)), (below ? (x) : (y))
    flat_set(&flat, AT(5, 5), 4);
    flat_set(&flat, AT(6, 5), 4);
    for (uint32_t y = 4; y <= 6; y++)
        flat_set(&flat, AT(7, y), 3);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(find_cluster(&frame, AT(6, 5)), 0);
    ck_assert_int_eq(frame.values[below ? 1 : 3], 4); /* P, old v */
#undef AT
    assert_updated(5, 5);
    frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 0);
}
END_TEST

/* The same decisions hold in double precision. */
START_TEST(double_precision_decisions)
{
    struct flat exact;
    flat_open(&exact, 12, 12, 3, 3, CC_PRECISION_DOUBLE, 1);
    flat_set(&exact, 5, 5, 10);
    flat_set(&exact, 6, 5, 7);
    flat_set(&exact, 2, 9, -6);
    cc_frame_clusters frame = flat_process(&exact);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(find_cluster(&frame, 5, 5), 0);
    ck_assert(flat_rms(&exact, 6, 5) == 1.0);
    ck_assert(flat_rms(&exact, 2, 9) == 1.0);
    ck_assert(flat_rms(&exact, 10, 1) == sqrt(0.5));
    flat_close(&exact);
}
END_TEST

/* The ADC mask is applied before anything else, training included: the
 * two top bits set change nothing. */
START_TEST(adc_mask_applied_first)
{
    struct flat masked;
    flat_open(&masked, 12, 12, 3, 3, CC_PRECISION_FLOAT, 1);
    flat_retrain(&masked, 0xC000 | (BASE - 1), 0x4000 | (BASE + 1));
    flat_set(&flat, 5, 5, 10);
    flat_set(&masked, 5, 5, 10);
    masked.frame[5 * masked.cols + 5] |= 0x8000;
    cc_frame_clusters plain = flat_process(&flat);
    cc_frame_clusters high = flat_process(&masked);
    ck_assert_uint_eq(high.count, plain.count);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(high.values[i], plain.values[i]);
    ck_assert(flat_rms(&masked, 0, 0) == flat_rms(&flat, 0, 0));
    flat_close(&masked);
}
END_TEST

/* Cluster values are round_half_away(v): with X0 = BASE + 1 and r = -0.5
 * (training frames BASE and BASE + 1), raw BASE + 1 + k gives v = k + 0.5. */
START_TEST(values_round_half_away)
{
    struct flat half;
    flat_open(&half, 8, 8, 3, 3, _i ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT,
              1);
    flat_retrain(&half, BASE, BASE + 1);
    /* rms = 0.5, thr = 2.5: the centre's v = 6.5 clears it. */
    flat_set(&half, 4, 4, 1 + 6); /* v = 6.5 -> 7 */
    flat_set(&half, 3, 3, 0);     /* v = -0.5 -> -1 */
    flat_set(&half, 5, 3, 1);     /* v = 0.5 -> 1 */
    flat_set(&half, 4, 5, 1 + 1); /* v = 1.5 -> 2 */
    flat_set(&half, 3, 5, -1);    /* v = -1.5 -> -2 */
    for (uint32_t y = 3; y <= 5; y++)
        for (uint32_t x = 3; x <= 5; x++)
            if (half.frame[y * half.cols + x] == BASE)
                flat_set(&half, x, y, 1); /* v = 0.5 */
    flat_set(&half, 3, 3, 0);
    cc_frame_clusters frame = flat_process(&half);
    ck_assert_uint_eq(frame.count, 1);
    static const int32_t want[9] = {-1, 1, 1, 1, 7, 1, -2, 2, 1};
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(frame.values[i], want[i]);
    flat_close(&half);
}
END_TEST

Suite *suite_decisions(void)
{
    Suite *suite = suite_create("decisions");
    TCase *rules = tcase_create("rules");
    tcase_add_checked_fixture(rules, open_3x3, close_flat);
    tcase_add_test(rules, negative_skip_without_update);
    tcase_add_test(rules, shadow_without_update);
    tcase_add_test(rules, test1_store);
    tcase_add_test(rules, test3_store);
    tcase_add_test(rules, test3_pass_not_max);
    tcase_add_test(rules, equal_maxima);
    tcase_add_test(rules, edges_and_corners_zero_padded);
    tcase_add_test(rules, corner_sum_counts_in_frame_cells);
    tcase_add_test(rules, nine_by_nine_windows);
    tcase_add_test(rules, rectangular_windows);
    tcase_add_loop_test(rules, frozen_model, 0, 2);
    tcase_add_test(rules, double_precision_decisions);
    tcase_add_test(rules, adc_mask_applied_first);
    tcase_add_loop_test(rules, values_round_half_away, 0, 2);
    suite_add_tcase(suite, rules);
    return suite;
}
