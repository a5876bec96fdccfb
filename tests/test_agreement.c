/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_agreement.c: cc_agreement_add_frame and cc_clusters_agreement,
 * which weigh two lists of clusters of the same frames (aare's against
 * ours in tools/peers/): matched by centre whatever their order, values
 * compared, every one-sided cluster under the first cause that fits it.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "suites.h"

enum { ROWS = 8, COLS = 8, CELLS = 9, MOST = 8 };

/* A frame of 3x3 clusters built by hand: centres and values. */
struct hand_frame {
    uint16_t x[MOST], y[MOST];
    int32_t values[MOST * CELLS];
    cc_frame_clusters view;
};

static void hand_init(struct hand_frame *f)
{
    memset(f, 0, sizeof *f);
    f->view = (cc_frame_clusters){
        .size_x = 3, .size_y = 3, .x = f->x, .y = f->y, .values = f->values};
}

/* Adds a cluster at (x, y) whose cells are all `cell` but the centre. */
static void hand_add(struct hand_frame *f, uint16_t x, uint16_t y,
                     int32_t centre, int32_t cell)
{
    uint32_t i = f->view.count++;
    f->x[i] = x;
    f->y[i] = y;
    for (int c = 0; c < CELLS; c++)
        f->values[i * CELLS + c] = c == CELLS / 2 ? centre : cell;
}

/* Thresholds of 100 ADU (list a) and 110 (list b) everywhere, pedestals
 * at most 1 ADU apart: a cluster's largest value is at the thresholds in
 * [98.5, 111.5]. */
static double a_thresholds[ROWS * COLS], b_thresholds[ROWS * COLS];
static const cc_agreement_thresholds thresholds = {ROWS,
                                                   COLS,
                                                   {a_thresholds, b_thresholds},
                                                   1.0};

static void setup_thresholds(void)
{
    for (int p = 0; p < ROWS * COLS; p++) {
        a_thresholds[p] = 100.0;
        b_thresholds[p] = 110.0;
    }
}

/* Adds a frame pair; the test fails if the call does. */
static void add(cc_agreement *agreement, const struct hand_frame *a,
                const struct hand_frame *b, const cc_agreement_thresholds *t)
{
    char message[CC_MESSAGE_SIZE] = "";
    ck_assert_msg(cc_agreement_add_frame(agreement, &a->view, &b->view, t,
                                         message) == CC_OK,
                  "%s", message);
}

/* The same clusters in another order agree in every cluster and value. */
START_TEST(order_does_not_matter)
{
    struct hand_frame a, b;
    hand_init(&a);
    hand_init(&b);
    hand_add(&a, 1, 1, 500, 10);
    hand_add(&a, 5, 1, 400, 20);
    hand_add(&a, 2, 6, 300, 30);
    for (int i = 2; i >= 0; i--)
        hand_add(&b, a.x[i], a.y[i], a.values[i * CELLS + 4],
                 a.values[i * CELLS]);
    cc_agreement agreement = {0};
    add(&agreement, &a, &b, &thresholds);
    ck_assert_uint_eq(agreement.frames, 1);
    ck_assert_uint_eq(agreement.clusters[0], 3);
    ck_assert_uint_eq(agreement.clusters[1], 3);
    ck_assert_uint_eq(agreement.same_place, 3);
    ck_assert_uint_eq(agreement.same_values, 3);
    ck_assert_int_eq(agreement.largest_difference, 0);
    ck_assert_uint_eq(agreement.only[0] + agreement.only[1], 0);
}
END_TEST

/* A value that differs leaves the cluster at the same place with other
 * values; the largest difference, either sign, is kept over frames. */
START_TEST(values_compared)
{
    struct hand_frame a, b;
    hand_init(&a);
    hand_init(&b);
    hand_add(&a, 3, 3, 500, 10);
    hand_add(&b, 3, 3, 500, 10);
    cc_agreement agreement = {0};
    b.values[0] = 13;
    add(&agreement, &a, &b, NULL);
    b.values[0] = 6;
    add(&agreement, &a, &b, NULL);
    b.values[0] = 10;
    add(&agreement, &a, &b, NULL);
    ck_assert_uint_eq(agreement.same_place, 3);
    ck_assert_uint_eq(agreement.same_values, 1);
    ck_assert_int_eq(agreement.largest_difference, 4);
}
END_TEST

/* One-sided clusters go to the first cause that fits: a centre below a
 * neighbour; a largest value between the thresholds, with the slack; the
 * rest unexplained. */
START_TEST(one_sided_sorted_by_cause)
{
    struct hand_frame a, b;
    hand_init(&a);
    hand_init(&b);
    hand_add(&b, 1, 1, 50, 60); /* a neighbour over the centre */
    hand_add(&b, 3, 1, 105, 0); /* between the thresholds */
    hand_add(&b, 5, 1, 111, 0); /* within the slack above */
    hand_add(&b, 1, 5, 400, 0); /* far over both */
    hand_add(&a, 3, 5, 99, 0);  /* within the slack below */
    hand_add(&a, 5, 5, 97, 0);  /* under both by more than the slack */
    cc_agreement agreement = {0};
    add(&agreement, &a, &b, &thresholds);
    ck_assert_uint_eq(agreement.only[1], 4);
    ck_assert_uint_eq(agreement.not_max[1], 1);
    ck_assert_uint_eq(agreement.at_threshold[1], 2);
    ck_assert_uint_eq(agreement.only[0], 2);
    ck_assert_uint_eq(agreement.not_max[0], 0);
    ck_assert_uint_eq(agreement.at_threshold[0], 1);
    /* Without thresholds no cluster is at one. */
    agreement = (cc_agreement){0};
    add(&agreement, &a, &b, NULL);
    ck_assert_uint_eq(agreement.not_max[1], 1);
    ck_assert_uint_eq(agreement.at_threshold[0] + agreement.at_threshold[1], 0);
}
END_TEST

/* The window test: a sum over the square root of the cells between the
 * thresholds, no cell over either. */
START_TEST(window_sum_at_threshold)
{
    struct hand_frame a, b;
    hand_init(&a);
    hand_init(&b);
    hand_add(&b, 2, 2, 36, 35); /* sum 316, / 3 = 105.3 */
    hand_add(&b, 5, 5, 30, 29); /* sum 262, / 3 = 87.3: under both */
    cc_agreement agreement = {0};
    add(&agreement, &a, &b, &thresholds);
    ck_assert_uint_eq(agreement.only[1], 2);
    ck_assert_uint_eq(agreement.at_threshold[1], 1);
}
END_TEST

/* Refuses the pair with CC_EINVAL and a message holding phrase. */
static void assert_refused(cc_agreement *agreement, const struct hand_frame *a,
                           const struct hand_frame *b,
                           const cc_agreement_thresholds *t, const char *phrase)
{
    char message[CC_MESSAGE_SIZE] = "";
    ck_assert_int_eq(cc_agreement_add_frame(agreement, &a->view, &b->view, t,
                                            message),
                     CC_EINVAL);
    ck_assert_msg(strstr(message, phrase) != NULL, "'%s' lacks '%s'", message,
                  phrase);
}

/* Frames that cannot be compared are refused with the reason and change
 * nothing. */
START_TEST(incomparable_refused)
{
    struct hand_frame a, b;
    hand_init(&a);
    hand_init(&b);
    hand_add(&a, 1, 1, 500, 10);
    hand_add(&b, 1, 1, 500, 10);
    cc_agreement agreement = {0};
    b.view.size_x = 5;
    assert_refused(&agreement, &a, &b, NULL, "sizes differ");
    b.view.size_x = 3;
    hand_add(&b, 1, 1, 500, 10);
    assert_refused(&agreement, &a, &b, NULL, "two clusters");
    b.view.count = 1;
    a.x[0] = COLS;
    assert_refused(&agreement, &a, &b, &thresholds, "outside");
    a.x[0] = 1;
    a.view.values = NULL;
    assert_refused(&agreement, &a, &b, NULL, "no arrays");
    cc_agreement empty = {0};
    ck_assert_mem_eq(&agreement, &empty, sizeof agreement);
}
END_TEST

/* A finder's clusters of a simulated run agree with themselves given back
 * frame by frame in reverse order; lists of other lengths are refused. */
START_TEST(finder_agrees_with_itself)
{
    cc_config config = test_config(64, 64);
    config.pedestal_frames = 20;
    cc_finder *finder = test_finder(&config);
    cc_simulator_config model = test_simulator_config(64, 64, 5, 40.0);
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = test_simulated_run(simulator, 64 * 64, 20, 20, 4);
    ck_assert_int_eq(cc_finder_train(finder, frames, 20), CC_OK);
    cc_clusters *found, *reversed;
    ck_assert_int_eq(cc_clusters_new(&found), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&reversed), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frames + 20 * 64 * 64, NULL, 4,
                                       found),
                     CC_OK);
    char message[CC_MESSAGE_SIZE];
    for (size_t k = 0; k < 4; k++) {
        cc_frame_clusters frame;
        ck_assert_int_eq(cc_clusters_frame(found, k, &frame), CC_OK);
        uint32_t n = frame.count;
        uint16_t *x = malloc((n + 1) * sizeof *x);
        uint16_t *y = malloc((n + 1) * sizeof *y);
        int32_t *values = malloc((n + 1) * CELLS * sizeof *values);
        ck_assert(x != NULL && y != NULL && values != NULL);
        for (uint32_t i = 0; i < n; i++) {
            x[i] = frame.x[n - 1 - i];
            y[i] = frame.y[n - 1 - i];
            memcpy(values + i * CELLS, frame.values + (n - 1 - i) * CELLS,
                   CELLS * sizeof *values);
        }
        cc_frame_clusters copy = frame;
        copy.x = x;
        copy.y = y;
        copy.values = values;
        ck_assert_int_eq(cc_clusters_append_frame(reversed, &copy, message),
                         CC_OK);
        free(x);
        free(y);
        free(values);
    }
    cc_agreement agreement = {0};
    ck_assert_int_eq(cc_clusters_agreement(&agreement, found, reversed, NULL,
                                           message),
                     CC_OK);
    ck_assert_uint_eq(agreement.frames, 4);
    ck_assert_uint_gt(agreement.clusters[0], 4);
    ck_assert_uint_eq(agreement.clusters[1], agreement.clusters[0]);
    ck_assert_uint_eq(agreement.same_values, agreement.clusters[0]);
    cc_frame_clusters first;
    ck_assert_int_eq(cc_clusters_frame(found, 0, &first), CC_OK);
    ck_assert_int_eq(cc_clusters_append_frame(reversed, &first, message),
                     CC_OK);
    ck_assert_int_eq(cc_clusters_agreement(&agreement, found, reversed, NULL,
                                           message),
                     CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(message, "frames"));
    ck_assert_uint_eq(agreement.frames, 4);
    free(frames);
    cc_clusters_destroy(found);
    cc_clusters_destroy(reversed);
    cc_simulator_destroy(simulator);
    cc_finder_destroy(finder);
}
END_TEST

Suite *suite_agreement(void)
{
    Suite *s = suite_create("agreement");
    TCase *tc = tcase_create("agreement");
    tcase_add_checked_fixture(tc, setup_thresholds, NULL);
    tcase_add_test(tc, order_does_not_matter);
    tcase_add_test(tc, values_compared);
    tcase_add_test(tc, one_sided_sorted_by_cause);
    tcase_add_test(tc, window_sum_at_threshold);
    tcase_add_test(tc, incomparable_refused);
    tcase_add_test(tc, finder_agrees_with_itself);
    suite_add_tcase(s, tc);
    return s;
}
