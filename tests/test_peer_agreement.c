/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_peer_agreement.c: tools/peers/agreement.c, which weighs a peer
 * finder's clusters (aare's GPU finder's, on a GPU) against ours: matched
 * by centre whatever their order, values compared, and every one-sided
 * cluster put in the first cause that fits it.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/peers/agreement.h"
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

/* Thresholds of 100 ADU (ours) and 110 (the peer's) everywhere. */
static float ours_thr[ROWS * COLS], peer_thr[ROWS * COLS];
static const struct agreement_thresholds thresholds = {ROWS, COLS, ours_thr,
                                                       peer_thr, 1.0};

static void setup_thresholds(void)
{
    for (int p = 0; p < ROWS * COLS; p++) {
        ours_thr[p] = 100.0f;
        peer_thr[p] = 110.0f;
    }
}

/* The same clusters in another order agree in every cluster and value. */
START_TEST(order_does_not_matter)
{
    struct hand_frame ours, peer;
    hand_init(&ours);
    hand_init(&peer);
    hand_add(&ours, 1, 1, 500, 10);
    hand_add(&ours, 5, 1, 400, 20);
    hand_add(&ours, 2, 6, 300, 30);
    for (int i = 2; i >= 0; i--)
        hand_add(&peer, ours.x[i], ours.y[i], ours.values[i * CELLS + 4],
                 ours.values[i * CELLS]);
    struct agreement a;
    agreement_init(&a);
    char message[128] = "";
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view,
                                         &thresholds, message, sizeof message),
                     0);
    ck_assert_uint_eq(a.frames, 1);
    ck_assert_uint_eq(a.ours, 3);
    ck_assert_uint_eq(a.peer, 3);
    ck_assert_uint_eq(a.same_place, 3);
    ck_assert_uint_eq(a.same_values, 3);
    ck_assert_int_eq(a.largest_difference, 0);
    ck_assert_uint_eq(a.only_ours + a.only_peer, 0);
}
END_TEST

/* A value that differs counts the cluster as same place, other values,
 * and the largest difference is kept over frames. */
START_TEST(values_compared)
{
    struct hand_frame ours, peer;
    hand_init(&ours);
    hand_init(&peer);
    hand_add(&ours, 3, 3, 500, 10);
    hand_add(&peer, 3, 3, 500, 10);
    peer.values[0] = 13;
    struct agreement a;
    agreement_init(&a);
    char message[128];
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view, NULL,
                                         message, sizeof message),
                     0);
    peer.values[0] = 9;
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view, NULL,
                                         message, sizeof message),
                     0);
    ck_assert_uint_eq(a.same_place, 2);
    ck_assert_uint_eq(a.same_values, 0);
    ck_assert_int_eq(a.largest_difference, 3);
}
END_TEST

/* One-sided clusters go to the first cause that fits: the peer's centre
 * below a neighbour; a largest value between the thresholds (100 and 110,
 * 1.5 ADU of slack); else unexplained. */
START_TEST(one_sided_sorted_by_cause)
{
    struct hand_frame ours, peer;
    hand_init(&ours);
    hand_init(&peer);
    hand_add(&peer, 1, 1, 50, 60); /* a neighbour over the centre */
    hand_add(&peer, 3, 1, 105, 0); /* between the thresholds */
    hand_add(&peer, 5, 1, 111, 0); /* within the slack above */
    hand_add(&peer, 1, 5, 400, 0); /* far over both */
    hand_add(&ours, 3, 5, 99, 0);  /* within the slack below */
    hand_add(&ours, 5, 5, 97, 0);  /* under both by more than the slack */
    struct agreement a;
    agreement_init(&a);
    char message[128];
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view,
                                         &thresholds, message, sizeof message),
                     0);
    ck_assert_uint_eq(a.only_peer, 4);
    ck_assert_uint_eq(a.peer_not_max, 1);
    ck_assert_uint_eq(a.peer_at_threshold, 2);
    ck_assert_uint_eq(a.peer_unexplained, 1);
    ck_assert_uint_eq(a.only_ours, 2);
    ck_assert_uint_eq(a.ours_at_threshold, 1);
    ck_assert_uint_eq(a.ours_unexplained, 1);
    /* Without thresholds nothing is at one. */
    agreement_init(&a);
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view, NULL,
                                         message, sizeof message),
                     0);
    ck_assert_uint_eq(a.peer_at_threshold + a.ours_at_threshold, 0);
    ck_assert_uint_eq(a.peer_unexplained, 3);
    ck_assert_uint_eq(a.ours_unexplained, 2);
}
END_TEST

/* The window test: a sum over the square root of the cells between the
 * thresholds, no cell over either. */
START_TEST(window_sum_at_threshold)
{
    struct hand_frame ours, peer;
    hand_init(&ours);
    hand_init(&peer);
    hand_add(&peer, 2, 2, 36, 35); /* sum 316, / 3 = 105.3 */
    hand_add(&peer, 5, 5, 30, 29); /* sum 262, / 3 = 87.3: under both */
    struct agreement a;
    agreement_init(&a);
    char message[128];
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view,
                                         &thresholds, message, sizeof message),
                     0);
    ck_assert_uint_eq(a.peer_at_threshold, 1);
    ck_assert_uint_eq(a.peer_unexplained, 1);
}
END_TEST

/* Frames that cannot be compared are refused with the reason and change
 * nothing. */
START_TEST(incomparable_refused)
{
    struct hand_frame ours, peer;
    hand_init(&ours);
    hand_init(&peer);
    hand_add(&ours, 1, 1, 500, 10);
    hand_add(&peer, 1, 1, 500, 10);
    struct agreement a;
    agreement_init(&a);
    char message[128] = "";
    peer.view.size_x = 5;
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view, NULL,
                                         message, sizeof message),
                     -1);
    ck_assert_ptr_nonnull(strstr(message, "sizes differ"));
    peer.view.size_x = 3;
    hand_add(&peer, 1, 1, 500, 10);
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view, NULL,
                                         message, sizeof message),
                     -1);
    ck_assert_ptr_nonnull(strstr(message, "two clusters"));
    peer.view.count = 1;
    ours.x[0] = COLS;
    ck_assert_int_eq(agreement_add_frame(&a, &ours.view, &peer.view,
                                         &thresholds, message, sizeof message),
                     -1);
    ck_assert_ptr_nonnull(strstr(message, "outside"));
    struct agreement empty;
    agreement_init(&empty);
    ck_assert_mem_eq(&a, &empty, sizeof a);
}
END_TEST

/* A finder's own clusters of a simulated run, given back in reverse
 * order, agree with themselves cluster for cluster. */
START_TEST(finder_agrees_with_itself)
{
    cc_config config = test_config(64, 64);
    config.pedestal_frames = 20;
    cc_finder *finder = test_finder(&config);
    cc_simulator_config model = test_simulator_config(64, 64, 5, 40.0);
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = test_simulated_run(simulator, 64 * 64, 20, 20, 4);
    ck_assert_int_eq(cc_finder_train(finder, frames, 20), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frames + 20 * 64 * 64, NULL, 4,
                                       clusters),
                     CC_OK);
    struct agreement a;
    agreement_init(&a);
    for (size_t k = 0; k < 4; k++) {
        cc_frame_clusters ours;
        ck_assert_int_eq(cc_clusters_frame(clusters, k, &ours), CC_OK);
        uint16_t *x = malloc((ours.count + 1) * sizeof *x);
        uint16_t *y = malloc((ours.count + 1) * sizeof *y);
        int32_t *values = malloc((ours.count + 1) * 9 * sizeof *values);
        ck_assert(x != NULL && y != NULL && values != NULL);
        for (uint32_t i = 0; i < ours.count; i++) {
            uint32_t from = ours.count - 1 - i;
            x[i] = ours.x[from];
            y[i] = ours.y[from];
            memcpy(values + i * 9, ours.values + from * 9, 9 * sizeof *values);
        }
        cc_frame_clusters peer = ours;
        peer.x = x;
        peer.y = y;
        peer.values = values;
        char message[128];
        ck_assert_int_eq(agreement_add_frame(&a, &ours, &peer, NULL, message,
                                             sizeof message),
                         0);
        free(x);
        free(y);
        free(values);
    }
    ck_assert_uint_gt(a.ours, 4);
    ck_assert_uint_eq(a.same_values, a.ours);
    ck_assert_uint_eq(a.peer, a.ours);
    free(frames);
    cc_clusters_destroy(clusters);
    cc_simulator_destroy(simulator);
    cc_finder_destroy(finder);
}
END_TEST

Suite *suite_peer_agreement(void)
{
    Suite *s = suite_create("peer_agreement");
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
