/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_imaging.c: the imaging of docs/spec.md §7 on hand-built clusters,
 * whose values are worked out here from the definitions: the η functions
 * (and the ties, signs and sizes that decide them), the energy window's
 * edges and the counting image.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "frames.h"
#include "analysis/analysis.h"
#include "suites.h"

/* Exactly the quotient the definition gives: one double division of the
 * exact integer sums. */
#define ck_assert_share(got, num, den)                                         \
    ck_assert_msg((got) == (double)(num) / (double)(den),                      \
                  "%s is %.17g, not %lld/%lld", #got, (got), (long long)(num), \
                  (long long)(den))

/* A photon right of and below the centre: the bottom-right 2x2 window
 * wins (sum 190 of TL 100, TR 150, BL 130), and each function takes its
 * shares of it, or of the central 3x3. */
START_TEST(eta_functions_on_one_cluster)
{
    static const int32_t v[9] = {0, 0, 0, 0, 100, 50, 0, 30, 10};
    cc_clusters *clusters = test_clusters(3, 3, 1, v, NULL);
    cc_eta_value eta;
    ck_assert_int_eq(cc_eta(CC_ETA2, clusters, &eta), CC_OK);
    ck_assert_uint_eq(eta.valid, 1);
    ck_assert_int_eq(eta.dx, 0);
    ck_assert_int_eq(eta.dy, 0);
    ck_assert_share(eta.x, 50, 100 + 50); /* R / (L + R) in the centre's row */
    ck_assert_share(eta.y, 30, 100 + 30); /* B / (T + B) in its column */
    ck_assert_int_eq(cc_eta(CC_ETA2_FULL, clusters, &eta), CC_OK);
    ck_assert_share(eta.x, 50 + 10, 190); /* right column of the window */
    ck_assert_share(eta.y, 30 + 10, 190); /* bottom row */
    ck_assert_int_eq(cc_eta(CC_ETA3, clusters, &eta), CC_OK);
    ck_assert_uint_eq(eta.valid, 1);
    ck_assert_int_eq(eta.dx, 0);
    ck_assert_share(eta.x, (0 + 50 + 10) - 0, 190);
    ck_assert_share(eta.y, (0 + 30 + 10) - 0, 190);
    cc_clusters_destroy(clusters);
}
END_TEST

/* Left of and above the centre the window lies at dx = dy = -1, and the
 * centre is then the window's right (bottom) pixel; equal sums go to the
 * first window in the order top-left, top-right, bottom-left,
 * bottom-right, as for sum2x2. */
START_TEST(eta2_window_and_ties)
{
    static const int32_t v[2 * 9] = {
        40, 20, 0, 10, 100, 0, 0, 0, 0, /* the top-left window wins */
        0,  0,  0, 0,  100, 0, 0, 0, 0, /* four equal windows: top-left */
    };
    cc_clusters *clusters = test_clusters(3, 3, 2, v, NULL);
    cc_eta_value eta[2];
    ck_assert_int_eq(cc_eta(CC_ETA2, clusters, eta), CC_OK);
    ck_assert_int_eq(eta[0].dx, -1);
    ck_assert_int_eq(eta[0].dy, -1);
    ck_assert_share(eta[0].x, 100, 10 + 100); /* L = (1,0), R = the centre */
    ck_assert_share(eta[0].y, 100, 20 + 100); /* T = (0,1), B = the centre */
    ck_assert_int_eq(eta[1].dx, -1);
    ck_assert_int_eq(eta[1].dy, -1);
    ck_assert_share(eta[1].x, 1, 1);
    /* The same tie through the energy: sum2x2 takes the same window. */
    ck_assert_int_eq(cc_cluster_energy(CC_ENERGY_SUM2X2, 3, 3, v),
                     40 + 20 + 10 + 100);
    cc_clusters_destroy(clusters);
}
END_TEST

/* A denominator that is not positive, or a share outside the function's
 * range (a negative neighbour), makes the cluster uninterpolable: valid
 * 0, η 0. */
START_TEST(eta_uninterpolable)
{
    static const int32_t v[3 * 9] = {
        0,    -200, 0,    -300, 100,
        -300, 0,    -200, 0, /* four windows of -400:
                                                    top-left, L + R = -200 */
        0,    0,    0,    0,    100,
        -60,  0,    200,  300, /* bottom-right wins (540), but
                                              R / (L + R) = -60 / 40 */
        -50,  -50,  -50,  0,    100,
        0,    0,    0,    0 /* eta3: the 3x3 sum is -50 */
    };
    cc_clusters *clusters = test_clusters(3, 3, 3, v, NULL);
    cc_eta_value eta[3];
    ck_assert_int_eq(cc_eta(CC_ETA2, clusters, eta), CC_OK);
    ck_assert_uint_eq(eta[0].valid, 0);
    ck_assert_uint_eq(eta[1].valid, 0);
    ck_assert(eta[1].x == 0 && eta[1].y == 0);
    ck_assert_int_eq(cc_eta(CC_ETA3, clusters, eta), CC_OK);
    ck_assert_uint_eq(eta[2].valid, 0);
    double low, high;
    ck_assert_int_eq(cc_eta_range(CC_ETA3, &low, &high), CC_OK);
    ck_assert(low == -0.5 && high == 0.5);
    ck_assert_int_eq(cc_eta_range((cc_eta_function)7, &low, &high), CC_EINVAL);
    ck_assert_int_eq(cc_eta((cc_eta_function)7, clusters, eta), CC_EINVAL);
    ck_assert_int_eq(cc_eta(CC_ETA2, clusters, NULL), CC_EINVAL);
    cc_clusters_destroy(clusters);
}
END_TEST

/* In larger clusters eta2 looks at the windows holding the centre and
 * eta3 at the central 3x3 only: cells further out change neither. */
START_TEST(eta_in_larger_clusters)
{
    int32_t v[25] = {0};
    v[12] = 100; /* the centre of 5x5 */
    v[13] = 60;  /* right of it */
    v[17] = 20;  /* below it */
    v[18] = 5;
    int32_t far[25];
    for (int c = 0; c < 25; c++)
        far[c] = v[c];
    far[0] = far[4] = far[20] = far[24] = far[14] = 1000; /* the outer ring */
    int32_t both[50];
    for (int c = 0; c < 25; c++) {
        both[c] = v[c];
        both[25 + c] = far[c];
    }
    cc_clusters *clusters = test_clusters(5, 5, 2, both, NULL);
    for (cc_eta_function f = CC_ETA2; f <= CC_ETA3; f++) {
        cc_eta_value eta[2];
        ck_assert_int_eq(cc_eta(f, clusters, eta), CC_OK);
        ck_assert_msg(eta[0].valid && eta[1].valid, "function %d", f);
        ck_assert_msg(eta[0].x == eta[1].x && eta[0].y == eta[1].y,
                      "function %d sees the outer ring", f);
    }
    cc_eta_value eta[2];
    ck_assert_int_eq(cc_eta(CC_ETA2, clusters, eta), CC_OK);
    ck_assert_share(eta[0].x, 60, 160);
    ck_assert_share(eta[0].y, 20, 120);
    cc_clusters_destroy(clusters);
}
END_TEST

/* The window is [low, high): an energy at the low edge is inside, one at
 * the high edge outside, on either energy; empty, inverted or infinite
 * windows are refused with a message. */
START_TEST(energy_window_edges)
{
    static const int32_t v[9] = {0, 0, 0, 0, 500, 300, 0, 10, 1}; /* sum 811 */
    /* sum 840; sum2x2 840 (the top-right window), not 800 (bottom-right) */
    static const int32_t w[9] = {0, 40, 0, 0, 500, 300, 0, 0, 0};
    cc_energy_window window = {CC_ENERGY_SUM, 811, 900};
    ck_assert_int_eq(cc_energy_window_contains(&window, 3, 3, v), 1);
    window.low = 811.5;
    ck_assert_int_eq(cc_energy_window_contains(&window, 3, 3, v), 0);
    window = (cc_energy_window){CC_ENERGY_SUM, 0, 811};
    ck_assert_int_eq(cc_energy_window_contains(&window, 3, 3, v), 0);
    window.high = 811.000001;
    ck_assert_int_eq(cc_energy_window_contains(&window, 3, 3, v), 1);
    window = (cc_energy_window){CC_ENERGY_SUM2X2, 800, 840};
    ck_assert_int_eq(cc_energy_window_contains(&window, 3, 3, w), 0);
    window.high = 841;
    ck_assert_int_eq(cc_energy_window_contains(&window, 3, 3, w), 1);
    char message[CC_MESSAGE_SIZE];
    static const cc_energy_window bad[] = {{CC_ENERGY_SUM, 700, 700},
                                           {CC_ENERGY_SUM, 900, 700},
                                           {CC_ENERGY_SUM, -INFINITY, 700},
                                           {CC_ENERGY_SUM, 0, NAN},
                                           {(cc_energy)5, 0, 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(cc_energy_window_check(&bad[i], message), CC_EINVAL);
        ck_assert_msg(strstr(message, "energy window") != NULL, "%s", message);
        ck_assert_int_eq(cc_energy_window_contains(&bad[i], 3, 3, v), 0);
    }
}
END_TEST

/* With a window the hit map is the counting image: it counts the photons
 * inside and counts the rest as outside, never losing one; a bad window
 * changes nothing, NULL counts every cluster again, reset zeroes both. */
START_TEST(counting_image)
{
    static const int32_t v[3 * 9] = {
        0, 0, 0, 0, 800, 0, 0, 0, 0, /* sum 800: a photon of [700, 900) */
        0, 0, 0, 0, 950, 0, 0, 0, 0, /* 950: outside */
        0, 0, 0, 0, 700, 0, 0, 0, 0, /* 700: the low edge, inside */
    };
    cc_clusters *clusters = test_clusters(3, 3, 3, v,
                                          NULL); /* all at (10, 20) */
    cc_hitmap *hitmap;
    ck_assert_int_eq(cc_hitmap_new(&hitmap, 30, 30), CC_OK);
    const cc_energy_window window = {CC_ENERGY_SUM, 700, 900};
    ck_assert_int_eq(cc_hitmap_set_window(hitmap, &window), CC_OK);
    ck_assert_int_eq(cc_hitmap_add(hitmap, clusters), CC_OK);
    ck_assert_uint_eq(cc_hitmap_counts(hitmap)[20 * 30 + 10], 2);
    ck_assert_uint_eq(cc_hitmap_outside(hitmap), 1);
    const cc_energy_window empty = {CC_ENERGY_SUM, 900, 700};
    ck_assert_int_eq(cc_hitmap_set_window(hitmap, &empty), CC_EINVAL);
    cc_frame_clusters frame;
    ck_assert_int_eq(cc_clusters_frame(clusters, 0, &frame), CC_OK);
    ck_assert_int_eq(cc_hitmap_add_frame(hitmap, &frame), CC_OK);
    ck_assert_uint_eq(cc_hitmap_counts(hitmap)[20 * 30 + 10], 4);
    ck_assert_uint_eq(cc_hitmap_outside(hitmap), 2);
    ck_assert_int_eq(cc_hitmap_set_window(hitmap, NULL), CC_OK);
    ck_assert_int_eq(cc_hitmap_add(hitmap, clusters), CC_OK);
    ck_assert_uint_eq(cc_hitmap_counts(hitmap)[20 * 30 + 10], 7);
    ck_assert_uint_eq(cc_hitmap_outside(hitmap), 2);
    cc_hitmap_reset(hitmap);
    ck_assert_uint_eq(cc_hitmap_counts(hitmap)[20 * 30 + 10], 0);
    ck_assert_uint_eq(cc_hitmap_outside(hitmap), 0);
    cc_hitmap_destroy(hitmap);
    cc_clusters_destroy(clusters);
}
END_TEST

Suite *suite_imaging(void)
{
    Suite *suite = suite_create("imaging");
    TCase *eta = tcase_create("eta");
    tcase_add_test(eta, eta_functions_on_one_cluster);
    tcase_add_test(eta, eta2_window_and_ties);
    tcase_add_test(eta, eta_uninterpolable);
    tcase_add_test(eta, eta_in_larger_clusters);
    suite_add_tcase(suite, eta);
    TCase *window = tcase_create("window");
    tcase_add_test(window, energy_window_edges);
    tcase_add_test(window, counting_image);
    suite_add_tcase(suite, window);
    return suite;
}
