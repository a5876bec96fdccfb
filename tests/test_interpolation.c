/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_interpolation.c: the flat-field calibration, the transport map,
 * positions and the interpolated image of docs/spec.md §7.4-§7.8: on
 * hand-built clusters whose figures are worked out here from the
 * definitions, through calibration files good and bad, and against the
 * simulator's ground truth.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "analysis/analysis.h"
#include "suites.h"

/* Hand-built 3x3 clusters, centre at index 4. Under eta2:
 * P: bottom-right window (sum 500), ηx = 100/400, ηy = 100/400;
 * Q: bottom-right (410), ηx = 300/400, ηy = 10/110;
 * R: bottom-right (500), ηx = 100/200, ηy = 300/400;
 * T: top-left (400), ηx = 300/300, ηy = 300/300: dx = dy = -1. */
static const int32_t cluster_p[9] = {0, 0, 0, 0, 300, 100, 0, 100, 0};
static const int32_t cluster_q[9] = {0, 0, 0, 0, 100, 300, 0, 10, 0};
static const int32_t cluster_r[9] = {0, 0, 0, 0, 100, 100, 0, 300, 0};
static const int32_t cluster_t[9] = {100, 0, 0, 0, 300, 0, 0, 0, 0};

/* n clusters of the given 3x3 values (9 each), all at (10, 20). */
static cc_clusters *list_of(size_t n, const int32_t *const *values)
{
    int32_t all[16 * 9];
    ck_assert_uint_le(n, 16);
    for (size_t i = 0; i < n; i++)
        memcpy(all + 9 * i, values[i], sizeof(int32_t) * 9);
    return test_clusters(3, 3, n, all, NULL);
}

static cc_eta_calibration *new_calibration(cc_eta_function function,
                                           uint32_t bins,
                                           const cc_energy_window *window)
{
    cc_eta_calibration *calibration;
    char message[CC_MESSAGE_SIZE];
    ck_assert_msg(cc_eta_calibration_new(&calibration, function, bins, window,
                                         message) == CC_OK,
                  "%s", message);
    return calibration;
}

/* Photons land in the bins of their η; the window's outsiders and the
 * uninterpolable are counted, not entered; η = 1 goes to the last bin. */
START_TEST(calibration_bins)
{
    static const int32_t outside[9] = {0, 0, 0, 0, 2000, 0, 0, 0, 0};
    static const int32_t no_eta[9] = {0, 0, 0, 0, 0, 0, 0, 0, 50};
    static const int32_t edge[9] = {0, 0, 0, 0, 0, 50, 0, 0, 50};
    const cc_energy_window window = {CC_ENERGY_SUM, 0, 1000};
    cc_eta_calibration *calibration = new_calibration(CC_ETA2, 4, &window);
    cc_clusters *clusters =
        list_of(5, (const int32_t *const[]){cluster_p, cluster_q, cluster_q,
                                            outside, no_eta});
    ck_assert_int_eq(cc_eta_calibration_add(calibration, clusters), CC_OK);
    const uint64_t *h = cc_eta_calibration_counts(calibration);
    ck_assert_uint_eq(h[1 * 4 + 1], 1); /* P: 0.25, 0.25 */
    ck_assert_uint_eq(h[3 * 4 + 0], 2); /* Q: 0.75, 0.09 */
    cc_eta_calibration_info info;
    ck_assert_int_eq(cc_eta_calibration_info_get(calibration, &info), CC_OK);
    ck_assert_uint_eq(info.photons, 3);
    ck_assert_uint_eq(info.outside, 1);
    ck_assert_uint_eq(info.uninterpolable, 1);
    ck_assert(info.low == 0 && info.high == 1 && info.bins == 4);
    cc_clusters_destroy(clusters);
    cc_eta_calibration_reset(calibration);
    ck_assert_uint_eq(cc_eta_calibration_counts(calibration)[4], 0);
    ck_assert_int_eq(cc_eta_calibration_info_get(calibration, &info), CC_OK);
    ck_assert_uint_eq(info.photons + info.outside + info.uninterpolable, 0);
    cc_eta_calibration_destroy(calibration);

    /* eta2full of `edge`: right column 100 / 100 = 1, bottom row 50/100. */
    calibration = new_calibration(CC_ETA2_FULL, 4, NULL);
    clusters = list_of(1, (const int32_t *const[]){edge});
    ck_assert_int_eq(cc_eta_calibration_add(calibration, clusters), CC_OK);
    ck_assert_uint_eq(cc_eta_calibration_counts(calibration)[3 * 4 + 2], 1);
    cc_clusters_destroy(clusters);
    cc_eta_calibration_destroy(calibration);

    /* ηx = 29/100 = 0.29 is exactly the lower edge 0 + 29 * 0.01 of bin
     * 29, where (0.29 - 0) / 1 * 100 rounds to just below 29. */
    static const int32_t on_edge[9] = {0, 0, 0, 0, 71, 29, 0, 50, 0};
    ck_assert(0.0 + 29.0 * (1.0 / 100.0) == 29.0 / 100.0);
    calibration = new_calibration(CC_ETA2, 100, NULL);
    clusters = list_of(1, (const int32_t *const[]){on_edge});
    ck_assert_int_eq(cc_eta_calibration_add(calibration, clusters), CC_OK);
    uint64_t in_row = 0;
    for (int iy = 0; iy < 100; iy++)
        in_row += cc_eta_calibration_counts(calibration)[29 * 100 + iy];
    ck_assert_uint_eq(in_row, 1);
    cc_clusters_destroy(clusters);
    cc_eta_calibration_destroy(calibration);

    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_eta_calibration_new(&calibration, CC_ETA2, 0, NULL,
                                            message),
                     CC_EINVAL);
    ck_assert_ptr_null(calibration);
    ck_assert_int_eq(cc_eta_calibration_new(&calibration, CC_ETA2,
                                            CC_ETA_BINS_MAX + 1, NULL, message),
                     CC_EINVAL);
    ck_assert_int_eq(cc_eta_calibration_new(&calibration, (cc_eta_function)3,
                                            10, NULL, message),
                     CC_EINVAL);
    const cc_energy_window empty = {CC_ENERGY_SUM, 5, 5};
    ck_assert_int_eq(cc_eta_calibration_new(&calibration, CC_ETA2, 10, &empty,
                                            message),
                     CC_EINVAL);
}
END_TEST

/* Two parts of a run merged give what one calibration of the whole run
 * gives; a part of another shape or window is refused, adding nothing. */
START_TEST(calibration_merge)
{
    static const int32_t outside[9] = {0, 0, 0, 0, 2000, 0, 0, 0, 0};
    const cc_energy_window window = {CC_ENERGY_SUM, 0, 1000};
    cc_clusters *first = list_of(2,
                                 (const int32_t *const[]){cluster_p, outside});
    cc_clusters *second = list_of(2, (const int32_t *const[]){cluster_q,
                                                              cluster_p});
    cc_eta_calibration *whole = new_calibration(CC_ETA2, 4, &window);
    cc_eta_calibration *part = new_calibration(CC_ETA2, 4, &window);
    cc_eta_calibration *into = new_calibration(CC_ETA2, 4, &window);
    ck_assert_int_eq(cc_eta_calibration_add(whole, first), CC_OK);
    ck_assert_int_eq(cc_eta_calibration_add(whole, second), CC_OK);
    ck_assert_int_eq(cc_eta_calibration_add(into, first), CC_OK);
    ck_assert_int_eq(cc_eta_calibration_add(part, second), CC_OK);
    ck_assert_int_eq(cc_eta_calibration_merge(into, part), CC_OK);
    ck_assert_mem_eq(cc_eta_calibration_counts(into),
                     cc_eta_calibration_counts(whole), 16 * sizeof(uint64_t));
    cc_eta_calibration_info merged, expected;
    cc_eta_calibration_info_get(into, &merged);
    cc_eta_calibration_info_get(whole, &expected);
    ck_assert_uint_eq(merged.photons, 3);
    ck_assert_uint_eq(merged.photons, expected.photons);
    ck_assert_uint_eq(merged.outside, expected.outside);
    ck_assert_uint_eq(merged.uninterpolable, expected.uninterpolable);

    const cc_energy_window other = {CC_ENERGY_SUM, 0, 999};
    cc_eta_calibration *refused[3] = {new_calibration(CC_ETA2, 5, &window),
                                      new_calibration(CC_ETA3, 4, &window),
                                      new_calibration(CC_ETA2, 4, &other)};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(cc_eta_calibration_add(refused[i], second), CC_OK);
        ck_assert_int_eq(cc_eta_calibration_merge(into, refused[i]),
                         CC_EMISMATCH);
        cc_eta_calibration_destroy(refused[i]);
    }
    cc_eta_calibration *unwindowed = new_calibration(CC_ETA2, 4, NULL);
    ck_assert_int_eq(cc_eta_calibration_merge(into, unwindowed), CC_EMISMATCH);
    ck_assert_int_eq(cc_eta_calibration_merge(into, NULL), CC_EINVAL);
    cc_eta_calibration_info_get(into, &merged);
    ck_assert_uint_eq(merged.photons, 3);
    ck_assert_mem_eq(cc_eta_calibration_counts(into),
                     cc_eta_calibration_counts(whole), 16 * sizeof(uint64_t));
    cc_eta_calibration_destroy(unwindowed);
    cc_eta_calibration_destroy(whole);
    cc_eta_calibration_destroy(part);
    cc_eta_calibration_destroy(into);
    cc_clusters_destroy(first);
    cc_clusters_destroy(second);
}
END_TEST

static cc_interpolator *new_interpolator(const cc_eta_calibration *calibration,
                                         const cc_energy_window *window,
                                         uint32_t rows, uint32_t cols,
                                         uint32_t subpixels)
{
    cc_interpolator *interpolator;
    char message[CC_MESSAGE_SIZE];
    ck_assert_msg(cc_interpolator_new(&interpolator, calibration, window, rows,
                                      cols, subpixels, message) == CC_OK,
                  "%s", message);
    return interpolator;
}

/* The transport map by hand. With B = 2, H[0][0] = 1 (P) and H[1][0] = 3
 * (Q): along x the row iy = 0 has the CDF 1/4, 1 and the row iy = 1 is
 * empty (identity); along y the columns have CDF 1, 1. */
START_TEST(positions_by_hand)
{
    cc_eta_calibration *calibration = new_calibration(CC_ETA2, 2, NULL);
    cc_clusters *flat = list_of(4,
                                (const int32_t *const[]){cluster_p, cluster_q,
                                                         cluster_q, cluster_q});
    ck_assert_int_eq(cc_eta_calibration_add(calibration, flat), CC_OK);
    cc_clusters_destroy(flat);
    const uint16_t xy[] = {10, 20, 10, 20, 10, 20, 10, 20};
    int32_t values[4 * 9];
    const int32_t *const which[4] = {cluster_p, cluster_q, cluster_r,
                                     cluster_t};
    for (int i = 0; i < 4; i++)
        memcpy(values + 9 * i, which[i], sizeof(int32_t) * 9);
    cc_clusters *clusters = test_clusters(3, 3, 4, values, xy);
    cc_interpolator *interpolator = new_interpolator(calibration, NULL, 30, 30,
                                                     4);
    cc_eta_calibration_destroy(calibration); /* the map is the interpolator's */
    cc_frame_clusters frame;
    ck_assert_int_eq(cc_clusters_frame(clusters, 0, &frame), CC_OK);
    cc_position at[4];
    ck_assert_int_eq(cc_interpolator_positions(interpolator, &frame, at),
                     CC_OK);
    const double w = 0.5;
    /* P, bin (0, 0): ux = 0 + (0.25 - 0) / w * (1/4 - 0), uy = ... * 1. */
    ck_assert_uint_eq(at[0].status, CC_POSITION_INTERPOLATED);
    ck_assert(at[0].x == 10.0 + 0.5 + 0.0 + (0.25 - 0.0) / w * 0.25);
    ck_assert(at[0].y == 20.0 + 0.5 + 0.0 + (0.25 - 0.0) / w * 1.0);
    /* Q, bin (1, 0): ux from the CDF 1/4 at the bin's lower edge to 1. */
    double qy = 10.0 / 110.0;
    ck_assert(at[1].x == 10.5 + (0.25 + (0.75 - 0.5) / w * (1.0 - 0.25)));
    ck_assert(at[1].y == 10.5 + 10.0 + (qy - 0.0) / w * 1.0);
    /* R, bin (1, 1): its row is empty, so ux is η itself. */
    ck_assert(at[2].x == 10.5 + 0.5);
    ck_assert(at[2].y == 20.5 + (1.0 + (0.75 - 0.5) / w * (1.0 - 1.0)));
    /* T: the top-left window moves the position a pixel left and up. */
    ck_assert(at[3].x == 10.0 + 0.5 - 1.0 + 1.0);
    ck_assert(at[3].y == 20.0 + 0.5 - 1.0 + (1.0 + (1.0 - 0.5) / w * 0.0));
    cc_interpolator_destroy(interpolator);
    cc_clusters_destroy(clusters);
}
END_TEST

/* eta3 stays inside the centre pixel: x = cx + u. An uninterpolable
 * cluster sits at its centre's middle, one outside the window nowhere. */
START_TEST(positions_eta3_and_status)
{
    static const int32_t right[9] = {0, 0, 0, 0, 100, 100, 0, 0, 0};
    static const int32_t negative[9] = {0, 0, 0, 0, 100, 0, -300, 0, 0};
    static const int32_t high[9] = {0, 0, 0, 0, 5000, 0, 0, 0, 0};
    const cc_energy_window window = {CC_ENERGY_SUM, -1000, 1000};
    cc_eta_calibration *calibration = new_calibration(CC_ETA3, 10, NULL);
    cc_interpolator *interpolator = new_interpolator(calibration, &window, 30,
                                                     30, 5);
    cc_clusters *clusters = list_of(3, (const int32_t *const[]){right, negative,
                                                                high});
    cc_frame_clusters frame;
    ck_assert_int_eq(cc_clusters_frame(clusters, 0, &frame), CC_OK);
    cc_position at[3];
    ck_assert_int_eq(cc_interpolator_positions(interpolator, &frame, at),
                     CC_OK);
    /* ηx = 100/200 = 0.5: identity (empty H), u = (0.5 + 0.5) / 1. */
    ck_assert_uint_eq(at[0].status, CC_POSITION_INTERPOLATED);
    ck_assert(at[0].x == 11.0 && at[0].y == 20.5);
    ck_assert_uint_eq(at[1].status, CC_POSITION_UNINTERPOLABLE);
    ck_assert(at[1].x == 10.5 && at[1].y == 20.5);
    ck_assert_uint_eq(at[2].status, CC_POSITION_OUTSIDE_WINDOW);
    cc_clusters_destroy(clusters);
    cc_interpolator_destroy(interpolator);
    cc_eta_calibration_destroy(calibration);
}
END_TEST

/* Every photon is in the image exactly once; what is left out or clipped
 * is counted; a centre outside the frame adds nothing. */
START_TEST(image_counts_every_photon)
{
    /* At the frame's corner the top-left window puts ηx = 0.25 at x =
     * 0 + 0.5 - 1 + 0.25 < 0: clipped to column 0. */
    static const int32_t corner[9] = {0, 0, 0, 300, 100, 0, 0, 0, 0};
    static const int32_t outside[9] = {0, 0, 0, 0, 2000, 0, 0, 0, 0};
    static const int32_t no_eta[9] = {0, 0, 0, 0, 0, 0, 0, 0, 50};
    const cc_energy_window window = {CC_ENERGY_SUM, 0, 1000};
    cc_eta_calibration *calibration = new_calibration(CC_ETA2, 20, NULL);
    cc_interpolator *interpolator = new_interpolator(calibration, &window, 30,
                                                     30, 4);
    cc_eta_calibration_destroy(calibration);
    int32_t values[5 * 9];
    const int32_t *const which[5] = {cluster_p, corner, outside, no_eta,
                                     cluster_p};
    for (int i = 0; i < 5; i++)
        memcpy(values + 9 * i, which[i], sizeof(int32_t) * 9);
    const uint16_t xy[] = {10, 20, 0, 0, 5, 5, 7, 8, 10, 20};
    cc_clusters *clusters = test_clusters(3, 3, 5, values, xy);
    ck_assert_int_eq(cc_interpolator_add(interpolator, clusters), CC_OK);
    cc_image_stats stats;
    ck_assert_int_eq(cc_interpolator_stats(interpolator, &stats), CC_OK);
    ck_assert_uint_eq(stats.photons, 4);
    ck_assert_uint_eq(stats.uninterpolable, 1);
    ck_assert_uint_eq(stats.clipped, 1);
    ck_assert_uint_eq(stats.outside, 1);
    const uint32_t *image = cc_interpolator_image(interpolator);
    uint64_t total = 0;
    for (size_t i = 0; i < 120 * 120; i++)
        total += image[i];
    ck_assert_uint_eq(total, stats.photons);
    /* P with the identity map: x = 10.75, y = 20.75, bin (83, 43). */
    ck_assert_uint_eq(image[83 * 120 + 43], 2);
    ck_assert_uint_eq(image[(0 * 4 + 2) * 120 + 0], 1); /* corner: y 0.5 */
    ck_assert_uint_eq(image[(8 * 4 + 2) * 120 + 7 * 4 + 2], 1); /* no_eta */

    const uint16_t beyond[] = {30, 0};
    cc_clusters *bad = test_clusters(3, 3, 1, cluster_p, beyond);
    ck_assert_int_eq(cc_interpolator_add(interpolator, bad), CC_EINVAL);
    ck_assert_int_eq(cc_interpolator_stats(interpolator, &stats), CC_OK);
    ck_assert_uint_eq(stats.photons, 4);
    cc_clusters_destroy(bad);
    cc_interpolator_reset(interpolator);
    ck_assert_int_eq(cc_interpolator_stats(interpolator, &stats), CC_OK);
    ck_assert_uint_eq(stats.photons + stats.outside + stats.clipped, 0);
    ck_assert_uint_eq(cc_interpolator_image(interpolator)[83 * 120 + 43], 0);
    double chi2;
    ck_assert_int_eq(cc_interpolator_flatness(interpolator, &chi2), CC_ESTATE);
    cc_interpolator_destroy(interpolator);
    cc_clusters_destroy(clusters);

    char message[CC_MESSAGE_SIZE];
    calibration = new_calibration(CC_ETA2, 20, NULL);
    ck_assert_int_eq(cc_interpolator_new(&interpolator, calibration, NULL, 30,
                                         30, 26, message),
                     CC_EINVAL);
    ck_assert_ptr_null(interpolator);
    ck_assert_int_eq(cc_interpolator_new(&interpolator, calibration, NULL, 0,
                                         30, 5, message),
                     CC_EINVAL);
    cc_eta_calibration_destroy(calibration);
}
END_TEST

/* The folded image's chi^2 by hand: S = 2, counts 1, 2, 3, 6 in the four
 * sub-pixel positions: mean 3, chi^2 = (4 + 1 + 0 + 9) / 3, over 3. */
START_TEST(flatness_by_hand)
{
    cc_eta_calibration *calibration = new_calibration(CC_ETA3, 10, NULL);
    cc_interpolator *interpolator = new_interpolator(calibration, NULL, 4, 4,
                                                     2);
    cc_eta_calibration_destroy(calibration);
    /* Identity map: eta3 of these puts the photon in sub-pixel (0, 0),
     * (0, 1), (1, 0) and (1, 1) of pixel (1, 1). */
    static const int32_t tl[9] = {0, 10, 0, 10, 100, 0, 0, 0, 0};
    static const int32_t tr[9] = {0, 10, 0, 0, 100, 10, 0, 0, 0};
    static const int32_t bl[9] = {0, 0, 0, 10, 100, 0, 0, 10, 0};
    static const int32_t br[9] = {0, 0, 0, 0, 100, 10, 0, 10, 0};
    const int32_t *const order[12] = {tl, tr, tr, bl, bl, bl,
                                      br, br, br, br, br, br};
    int32_t values[12 * 9];
    uint16_t xy[24];
    for (int i = 0; i < 12; i++) {
        memcpy(values + 9 * i, order[i], sizeof(int32_t) * 9);
        xy[2 * i] = xy[2 * i + 1] = 1;
    }
    cc_clusters *clusters = test_clusters(3, 3, 12, values, xy);
    ck_assert_int_eq(cc_interpolator_add(interpolator, clusters), CC_OK);
    const uint32_t *image = cc_interpolator_image(interpolator);
    ck_assert_uint_eq(image[2 * 8 + 2], 1);
    ck_assert_uint_eq(image[3 * 8 + 3], 6);
    double chi2;
    ck_assert_int_eq(cc_interpolator_flatness(interpolator, &chi2), CC_OK);
    ck_assert_double_eq_tol(chi2, 14.0 / 3.0 / 3.0, 1e-12);
    cc_clusters_destroy(clusters);
    cc_interpolator_destroy(interpolator);
}
END_TEST

static struct scratch scratch;

static void setup(void)
{
    scratch_open(&scratch, "flat.eta");
}

static void teardown(void)
{
    scratch_close(&scratch);
}

static void assert_refused(const unsigned char *data, size_t size,
                           const char *why)
{
    test_write_file(scratch.path, data, size);
    cc_eta_calibration *calibration = (cc_eta_calibration *)scratch.path;
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_eta_calibration_read(&calibration, scratch.path,
                                             message),
                     CC_EFORMAT);
    ck_assert_ptr_null(calibration);
    ck_assert_msg(strstr(message, why) != NULL, "'%s' does not say '%s'",
                  message, why);
}

/* A saved calibration reads back the same; damaged files are refused
 * with the reason. */
START_TEST(calibration_file)
{
    const cc_energy_window window = {CC_ENERGY_SUM2X2, 100, 1000};
    cc_eta_calibration *saved = new_calibration(CC_ETA2, 3, &window);
    cc_clusters *clusters =
        list_of(3, (const int32_t *const[]){cluster_p, cluster_q, cluster_r});
    ck_assert_int_eq(cc_eta_calibration_add(saved, clusters), CC_OK);
    cc_clusters_destroy(clusters);
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_eta_calibration_save(saved, scratch.path, message),
                     CC_OK);
    cc_eta_calibration *read;
    ck_assert_int_eq(cc_eta_calibration_read(&read, scratch.path, message),
                     CC_OK);
    cc_eta_calibration_info a, b;
    cc_eta_calibration_info_get(saved, &a);
    cc_eta_calibration_info_get(read, &b);
    ck_assert(a.function == b.function && a.bins == b.bins && a.low == b.low &&
              a.high == b.high && a.windowed == b.windowed &&
              a.window.energy == b.window.energy &&
              a.window.low == b.window.low && a.window.high == b.window.high &&
              a.photons == b.photons && a.outside == b.outside &&
              a.uninterpolable == b.uninterpolable);
    ck_assert_mem_eq(cc_eta_calibration_counts(saved),
                     cc_eta_calibration_counts(read), 9 * sizeof(uint64_t));
    ck_assert_uint_eq(b.photons, 3);
    cc_eta_calibration_destroy(read);
    cc_eta_calibration_destroy(saved);

    size_t size;
    unsigned char *data = test_read_file(scratch.path, &size);
    ck_assert_uint_eq(size, 88 + 9 * 8);
    static const size_t cuts[] = {0, 8, 87, 88, 100};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++)
        assert_refused(data, cuts[i], "truncated");
    data[size] = 0;
    assert_refused(data, size + 1, "longer");
    data[100] ^= 1;
    assert_refused(data, size, "checksum");
    data[100] ^= 1;
    uint64_t photons = 4;
    memcpy(data + 64, &photons, 8);
    assert_refused(data, size, "inconsistent");
    photons = 3;
    memcpy(data + 64, &photons, 8);
    const struct {
        size_t offset;
        uint32_t value;
        const char *why;
    } fields[] = {{8, 2, "version 2"},   {12, 7, "function 7"},
                  {16, 0, "bins 0"},     {16, 5000, "bins 5000"},
                  {20, 2, "windowed 2"}, {24, 9, "energy 9"}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        uint32_t kept;
        memcpy(&kept, data + fields[i].offset, 4);
        memcpy(data + fields[i].offset, &fields[i].value, 4);
        assert_refused(data, size, fields[i].why);
        memcpy(data + fields[i].offset, &kept, 4);
    }
    double wrong = 0.5;
    memcpy(data + 40, &wrong, 8); /* high */
    assert_refused(data, size, "range");
    wrong = 1.0;
    memcpy(data + 40, &wrong, 8);
    wrong = 2000;
    memcpy(data + 48, &wrong, 8); /* window low above high */
    assert_refused(data, size, "corrupt");
    data[0] = 'X';
    assert_refused(data, size, "not a clustercore eta calibration");
    free(data);
    unlink(scratch.path);
    ck_assert_int_eq(cc_eta_calibration_read(&read, scratch.path, message),
                     CC_EIO);
}
END_TEST

/* ---- against the ground truth ---- */

enum { SIDE = 100, DARK = 100, FLUX = 40 };

/* Simulates a dark run and `frames` frames of seed and finds their
 * clusters (Nx = Ny = size); truth gets the photons. */
static cc_clusters *simulated_clusters(uint64_t seed, uint32_t frames,
                                       uint32_t size, cc_truth *truth)
{
    cc_simulator_config model = test_simulator_config(SIDE, SIDE, seed, FLUX);
    model.threads = 0;
    cc_simulator *simulator = test_simulator(&model);
    size_t pixels = (size_t)SIDE * SIDE;
    uint16_t *buffer = malloc(frames * pixels * sizeof *buffer);
    ck_assert_ptr_nonnull(buffer);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, DARK, buffer),
                     CC_OK);
    cc_config config = test_config(SIDE, SIDE);
    config.cluster_size_x = config.cluster_size_y = size;
    config.pedestal_frames = DARK;
    config.threads = 0;
    cc_finder *finder = test_finder(&config);
    ck_assert_int_eq(cc_finder_train(finder, buffer, DARK), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, DARK, frames, buffer,
                                         truth),
                     CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    uint64_t *numbers = malloc(frames * sizeof *numbers);
    ck_assert_ptr_nonnull(numbers);
    for (uint32_t k = 0; k < frames; k++)
        numbers[k] = DARK + k; /* as the simulator numbers them */
    ck_assert_int_eq(cc_finder_process(finder, buffer, numbers, frames,
                                       clusters),
                     CC_OK);
    free(numbers);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
    free(buffer);
    return clusters;
}

/* Calibrates on one simulated flat field, interpolates another: the rms
 * position error of the photons is well below their centre pixels'
 * (about 0.289 pixel), and the interpolated image folded into one pixel
 * is flatter than with the raw η. (Not flat: the uninterpolable photons,
 * a few per cent whose neighbour's noise made η negative, pile up in the
 * middle sub-pixel.) Loop: eta2, eta2full, eta3 at 3x3 and
 * 5x5. */
START_TEST(positions_against_truth)
{
    static const char *const names[] = {"eta2", "eta2full", "eta3"};
    const cc_eta_function function = (cc_eta_function)(_i % 3);
    const uint32_t size = _i < 3 ? 3 : 5;
    const cc_energy_window window = {CC_ENERGY_SUM2X2, 650, 1000};
    cc_eta_calibration *calibration = new_calibration(function, 20, &window);
    cc_clusters *flat = simulated_clusters(11, 1500, size, NULL);
    ck_assert_int_eq(cc_eta_calibration_add(calibration, flat), CC_OK);
    cc_clusters_destroy(flat);
    cc_eta_calibration *raw = new_calibration(function, 20, &window);

    cc_truth *truth;
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    cc_clusters *run = simulated_clusters(12, 800, size, truth);
    cc_interpolator *mapped = new_interpolator(calibration, &window, SIDE, SIDE,
                                               5);
    cc_interpolator *unmapped = new_interpolator(raw, &window, SIDE, SIDE, 5);
    cc_truth_score *score;
    ck_assert_int_eq(cc_truth_score_new(&score, SIDE, SIDE, 100), CC_OK);
    ck_assert_int_eq(cc_truth_score_set_interpolator(score, mapped), CC_OK);
    ck_assert_int_eq(cc_truth_score_add(score, run, truth), CC_OK);
    cc_score result;
    ck_assert_int_eq(cc_truth_score_get(score, &result), CC_OK);
    ck_assert_int_eq(cc_interpolator_add(mapped, run), CC_OK);
    ck_assert_int_eq(cc_interpolator_add(unmapped, run), CC_OK);
    double flatness, raw_flatness;
    ck_assert_int_eq(cc_interpolator_flatness(mapped, &flatness), CC_OK);
    ck_assert_int_eq(cc_interpolator_flatness(unmapped, &raw_flatness), CC_OK);
    cc_image_stats stats;
    cc_interpolator_stats(mapped, &stats);
    printf("  %s %ux%u: %llu photons scored, rms error %.4f px (centre "
           "%.4f), folded chi2/dof %.2f (raw eta %.2f), %llu imaged, %llu "
           "uninterpolable\n",
           names[function], size, size, (unsigned long long)result.positioned,
           result.position_rms, result.centre_rms, flatness, raw_flatness,
           (unsigned long long)stats.photons,
           (unsigned long long)stats.uninterpolable);
    ck_assert_uint_gt(result.positioned, 5000);
    ck_assert_double_eq_tol(result.centre_rms, 1 / sqrt(12.0), 0.01);
    /* eta3 places within the centre pixel from a noisier 3x3 sum: about
     * 0.6 of the centre's error where the 2x2 functions reach 0.35. */
    double most = function == CC_ETA3 ? 0.7 : 0.45;
    ck_assert_double_lt(result.position_rms, most * result.centre_rms);
    ck_assert_double_lt(flatness, raw_flatness);
    cc_truth_score_destroy(score);
    cc_interpolator_destroy(mapped);
    cc_interpolator_destroy(unmapped);
    cc_eta_calibration_destroy(calibration);
    cc_eta_calibration_destroy(raw);
    cc_clusters_destroy(run);
    cc_truth_destroy(truth);
}
END_TEST

/* A finder with an interpolator images every batch it processes exactly
 * as the interpolator would image the clusters it returns; the image
 * follows the finder through settings; bad calls change nothing. */
START_TEST(finder_images_while_finding)
{
    const cc_energy_window window = {CC_ENERGY_SUM2X2, 650, 1000};
    cc_eta_calibration *calibration = new_calibration(CC_ETA2, 20, &window);
    cc_clusters *flat = simulated_clusters(21, 300, 3, NULL);
    ck_assert_int_eq(cc_eta_calibration_add(calibration, flat), CC_OK);
    cc_interpolator *map = new_interpolator(calibration, &window, SIDE, SIDE,
                                            4);
    cc_interpolator *want = new_interpolator(calibration, &window, SIDE, SIDE,
                                             4);
    cc_interpolator *got = new_interpolator(calibration, &window, SIDE, SIDE,
                                            4);
    cc_interpolator *other = new_interpolator(calibration, &window, SIDE, SIDE,
                                              5);
    cc_eta_calibration_destroy(calibration);
    cc_clusters_destroy(flat);

    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 22, FLUX);
    cc_simulator *simulator = test_simulator(&model);
    size_t pixels = (size_t)SIDE * SIDE;
    uint16_t *frames = malloc(200 * pixels * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, DARK, frames),
                     CC_OK);
    cc_config config = test_config(SIDE, SIDE);
    config.pedestal_frames = DARK;
    config.threads = 2;
    cc_finder *finder = test_finder(&config);
    ck_assert_int_eq(cc_finder_train(finder, frames, DARK), CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, DARK, 200, frames, NULL),
                     CC_OK);
    cc_simulator_destroy(simulator);

    ck_assert_int_eq(cc_finder_take_image(finder, got), CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_interpolator(finder, map), CC_OK);
    cc_interpolator_destroy(map); /* the finder keeps its own copy */
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    static const uint32_t batches[] = {1, 7, 32, 60, 100};
    uint32_t done = 0;
    for (size_t b = 0; done < 200; b++) {
        uint32_t n = batches[b % 5] < 200 - done ? batches[b % 5] : 200 - done;
        ck_assert_int_eq(cc_finder_process(finder, frames + done * pixels, NULL,
                                           n, clusters),
                         CC_OK);
        ck_assert_int_eq(cc_interpolator_add(want, clusters), CC_OK);
        done += n;
        if (b == 2) { /* a setting that keeps the pedestal keeps imaging */
            config.nsigma = 5.5;
            ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
        }
    }
    ck_assert_int_eq(cc_finder_take_image(finder, other), CC_EMISMATCH);
    ck_assert_int_eq(cc_finder_take_image(finder, got), CC_OK);
    cc_image_stats a, b;
    cc_interpolator_stats(want, &a);
    cc_interpolator_stats(got, &b);
    ck_assert_uint_gt(a.photons, 5000);
    ck_assert_mem_eq(&a, &b, sizeof a);
    ck_assert_mem_eq(cc_interpolator_image(want), cc_interpolator_image(got),
                     pixels * 16 * sizeof(uint32_t));
    /* Taken: the finder's image starts again from empty. */
    ck_assert_int_eq(cc_finder_take_image(finder, got), CC_OK);
    cc_interpolator_stats(got, &b);
    ck_assert_mem_eq(&a, &b, sizeof a);

    config.cols = SIDE / 2;
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_interpolator(finder, NULL), CC_OK);
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_int_eq(cc_finder_set_interpolator(finder, got), CC_EMISMATCH);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    cc_interpolator_destroy(want);
    cc_interpolator_destroy(got);
    cc_interpolator_destroy(other);
    free(frames);
}
END_TEST

Suite *suite_interpolation(void)
{
    Suite *suite = suite_create("interpolation");
    TCase *hand = tcase_create("by hand");
    tcase_add_test(hand, calibration_bins);
    tcase_add_test(hand, calibration_merge);
    tcase_add_test(hand, positions_by_hand);
    tcase_add_test(hand, positions_eta3_and_status);
    tcase_add_test(hand, image_counts_every_photon);
    tcase_add_test(hand, flatness_by_hand);
    suite_add_tcase(suite, hand);
    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, setup, teardown);
    tcase_add_test(files, calibration_file);
    suite_add_tcase(suite, files);
    TCase *truth = tcase_create("truth");
    tcase_set_timeout(truth, 120);
    tcase_add_loop_test(truth, positions_against_truth, 0, 6);
    tcase_add_test(truth, finder_images_while_finding);
    suite_add_tcase(suite, truth);
    return suite;
}
