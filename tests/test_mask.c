/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mask.c: the bad-pixel mask of docs/spec.md §7.1: a masked pixel
 * behaves exactly as a cell outside the frame; the rms rule with its
 * median; the user's mask through resets, configurations, pedestal files
 * of both versions and .npy files, with bad input refused and nothing
 * changed.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "files/files.h"
#include "suites.h"

enum { ROWS = 40, COLS = 48, DARK = 60, DATA = 40 };
enum { CUT_LEFT = 5, CUT_BOTTOM = 3 }; /* the masked border */

/* Dark and data frames of ROWS x COLS from the simulator. */
static uint16_t *simulated_run(uint64_t seed)
{
    cc_simulator_config model = test_simulator_config(ROWS, COLS, seed, 25);
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = test_simulated_run(simulator, (size_t)ROWS * COLS, DARK,
                                          DARK, DATA);
    cc_simulator_destroy(simulator);
    return frames;
}

/* The frames without their left CUT_LEFT columns and bottom CUT_BOTTOM
 * rows. */
static uint16_t *cropped(const uint16_t *frames, size_t n)
{
    const uint32_t rows = ROWS - CUT_BOTTOM, cols = COLS - CUT_LEFT;
    uint16_t *out = malloc(n * rows * cols * sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (size_t k = 0; k < n; k++)
        for (uint32_t r = 0; r < rows; r++)
            memcpy(out + (k * rows + r) * cols,
                   frames + (k * ROWS + r) * COLS + CUT_LEFT,
                   cols * sizeof *out);
    return out;
}

/* The mask of the border that cropped() cuts. */
static uint8_t *border_mask(void)
{
    uint8_t *mask = calloc((size_t)ROWS * COLS, 1);
    ck_assert_ptr_nonnull(mask);
    for (uint32_t r = 0; r < ROWS; r++)
        for (uint32_t c = 0; c < COLS; c++)
            mask[r * COLS + c] = c < CUT_LEFT || r >= ROWS - CUT_BOTTOM;
    return mask;
}

/* A finder on masked full frames and one on the same frames cropped to
 * the unmasked pixels give the same clusters, shifted, and the same
 * pedestal on the kept pixels; the masked pixels' pedestal never moves.
 * Loop: cluster size 3x3 or 5x7, float or double, 1 or 3 threads. */
START_TEST(masked_pixels_are_outside_the_frame)
{
    const uint32_t side_x = _i & 1 ? 5 : 3, side_y = _i & 1 ? 7 : 3;
    uint16_t *frames = simulated_run(41);
    uint16_t *small = cropped(frames, DARK + DATA);
    uint8_t *mask = border_mask();
    const uint32_t small_rows = ROWS - CUT_BOTTOM, small_cols = COLS - CUT_LEFT;
    cc_config config = test_config(ROWS, COLS);
    config.cluster_size_x = side_x;
    config.cluster_size_y = side_y;
    config.precision = _i & 2 ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT;
    config.threads = _i & 4 ? 3 : 1;
    config.pedestal_frames = DARK;
    cc_finder *masked = test_finder(&config);
    config.rows = small_rows;
    config.cols = small_cols;
    cc_finder *small_finder = test_finder(&config);
    ck_assert_int_eq(cc_finder_set_mask(masked, mask), CC_OK);
    ck_assert_int_eq(cc_finder_train(masked, frames, DARK), CC_OK);
    ck_assert_int_eq(cc_finder_train(small_finder, small, DARK), CC_OK);
    size_t pixels = (size_t)ROWS * COLS;
    double *before = malloc(pixels * sizeof *before);
    double *rms = malloc(pixels * sizeof *rms);
    double *small_rms = malloc(pixels * sizeof *small_rms);
    ck_assert(before != NULL && rms != NULL && small_rms != NULL);
    ck_assert_int_eq(cc_finder_pedestal_maps(masked, NULL, before), CC_OK);

    cc_clusters *a, *b;
    ck_assert_int_eq(cc_clusters_new(&a), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&b), CC_OK);
    ck_assert_int_eq(cc_finder_process(masked, frames + DARK * pixels, NULL,
                                       DATA, a),
                     CC_OK);
    ck_assert_int_eq(cc_finder_process(small_finder,
                                       small + DARK * small_rows * small_cols,
                                       NULL, DATA, b),
                     CC_OK);
    size_t cells = (size_t)side_x * side_y, seen = 0;
    for (size_t k = 0; k < DATA; k++) {
        cc_frame_clusters fa, fb;
        cc_clusters_frame(a, k, &fa);
        cc_clusters_frame(b, k, &fb);
        ck_assert_uint_eq(fa.count, fb.count);
        for (uint32_t i = 0; i < fa.count; i++) {
            ck_assert_uint_eq(fa.x[i], fb.x[i] + CUT_LEFT);
            ck_assert_uint_eq(fa.y[i], fb.y[i]);
        }
        ck_assert_mem_eq(fa.values, fb.values,
                         fa.count * cells * sizeof *fa.values);
        seen += fa.count;
    }
    ck_assert_uint_gt(seen, 20);

    ck_assert_int_eq(cc_finder_pedestal_maps(masked, NULL, rms), CC_OK);
    ck_assert_int_eq(cc_finder_pedestal_maps(small_finder, NULL, small_rms),
                     CC_OK);
    for (uint32_t r = 0; r < ROWS; r++)
        for (uint32_t c = 0; c < COLS; c++) {
            size_t p = (size_t)r * COLS + c;
            if (mask[p])
                ck_assert(rms[p] == before[p]); /* never updated */
            else
                ck_assert(rms[p] == small_rms[r * small_cols + c - CUT_LEFT]);
        }
    cc_finder_stats stats;
    cc_finder_get_stats(masked, &stats);
    ck_assert_uint_eq(stats.masked_pixels,
                      CUT_LEFT * ROWS + CUT_BOTTOM * (COLS - CUT_LEFT));
    cc_clusters_destroy(a);
    cc_clusters_destroy(b);
    cc_finder_destroy(masked);
    cc_finder_destroy(small_finder);
    free(before);
    free(rms);
    free(small_rms);
    free(mask);
    free(small);
    free(frames);
}
END_TEST

/* A masked photon pixel is never a centre and is 0 in its neighbour's
 * cluster. */
START_TEST(masked_pixel_never_a_centre)
{
    struct flat flat;
    flat_open(&flat, 12, 12, 3, 3, CC_PRECISION_FLOAT, 1);
    flat_set(&flat, 5, 5, 100);
    flat_set(&flat, 6, 5, 50);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_ge(find_cluster(&frame, 5, 5), 0);
    uint8_t mask[144] = {0};
    mask[5 * 12 + 5] = 1;
    ck_assert_int_eq(cc_finder_set_mask(flat.finder, mask), CC_OK);
    frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    int i = find_cluster(&frame, 6, 5);
    ck_assert_int_ge(i, 0);
    const int32_t *values = frame.values + 9 * i;
    ck_assert_int_eq(values[3], 0); /* (5, 5), left of the centre */
    ck_assert_int_eq(values[4], 50);
    flat_close(&flat);
}
END_TEST

/* Trains a 1 x 4 finder on two frames BASE -+ a_p: pixel p's rms is
 * exactly a_p. */
static cc_finder *finder_with_rms(const uint16_t a[4], double factor,
                                  const uint8_t *user)
{
    cc_config config = test_config(1, 4);
    config.pedestal_frames = 2;
    config.mask_rms_factor = factor;
    cc_finder *finder = test_finder(&config);
    if (user != NULL)
        ck_assert_int_eq(cc_finder_set_mask(finder, user), CC_OK);
    uint16_t frames[8];
    for (int p = 0; p < 4; p++) {
        frames[p] = (uint16_t)(BASE - a[p]);
        frames[4 + p] = (uint16_t)(BASE + a[p]);
    }
    ck_assert_int_eq(cc_finder_train(finder, frames, 2), CC_OK);
    return finder;
}

static uint64_t masked_count(cc_finder *finder)
{
    cc_finder_stats stats;
    ck_assert_int_eq(cc_finder_get_stats(finder, &stats), CC_OK);
    return stats.masked_pixels;
}

/* rms 1, 2, 3, 100: the lower median is 2, so k = 40 masks the pixel of
 * rms 100 (the upper median 3 or the mean 2.5 would not); a user-masked
 * pixel leaves the median (then 3: k = 40 masks nothing), and rms 0 is
 * always masked while the rule is on. */
START_TEST(rms_rule_and_its_median)
{
    const uint16_t a[4] = {1, 2, 3, 100};
    cc_finder *finder = finder_with_rms(a, 40, NULL);
    uint8_t mask[4];
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 0, 0, 1}), 4);
    cc_finder_destroy(finder);

    finder = finder_with_rms(a, 40, (const uint8_t[4]){1, 0, 0, 0});
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){1, 0, 0, 0}), 4);
    cc_finder_destroy(finder);

    finder = finder_with_rms((const uint16_t[4]){0, 2, 3, 4}, 1000, NULL);
    ck_assert_uint_eq(masked_count(finder), 1);
    /* Off: nothing, not even rms 0. */
    cc_config config;
    cc_finder_get_config(finder, &config);
    config.mask_rms_factor = 0;
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_uint_eq(masked_count(finder), 0);
    /* On again with the pedestal kept: judged at once. */
    config.mask_rms_factor = 1.5; /* limit 3: rms 0 and 4 */
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){1, 0, 0, 1}), 4);
    /* A reset forgets what the rule found in the old pedestal. */
    cc_finder_reset(finder);
    ck_assert_uint_eq(masked_count(finder), 0);
    config.mask_rms_factor = 0.5;
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_EINVAL);
    ck_assert_str_ne(cc_finder_last_error(finder), "");
    cc_finder_destroy(finder);
}
END_TEST

/* Bad masks are refused and change nothing; the user's mask survives a
 * reset and configuration changes that keep the frame size. */
START_TEST(user_mask_life_cycle)
{
    cc_finder *finder = finder_with_rms((const uint16_t[4]){1, 2, 3, 4}, 0,
                                        (const uint8_t[4]){0, 1, 0, 0});
    uint8_t mask[4];
    ck_assert_int_eq(cc_finder_set_mask(finder, (const uint8_t[4]){0, 0, 2, 0}),
                     CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(finder), "col 2"));
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 1, 0, 0}), 4);
    ck_assert_int_eq(cc_finder_get_mask(finder, NULL), CC_EINVAL);

    cc_finder_reset(finder);
    ck_assert_uint_eq(masked_count(finder), 1);
    cc_config config;
    cc_finder_get_config(finder, &config);
    config.nsigma = 4; /* keeps the pedestal */
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_uint_eq(masked_count(finder), 1);
    config.precision = CC_PRECISION_DOUBLE; /* resets the pedestal */
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 1, 0, 0}), 4);
    config.cols = 2; /* another frame: no mask */
    ck_assert_int_eq(cc_finder_set_config(finder, &config), CC_OK);
    ck_assert_uint_eq(masked_count(finder), 0);
    ck_assert_int_eq(cc_finder_set_mask(finder, (const uint8_t[2]){1, 1}),
                     CC_OK);
    ck_assert_uint_eq(masked_count(finder), 2);
    ck_assert_int_eq(cc_finder_set_mask(finder, NULL), CC_OK);
    ck_assert_uint_eq(masked_count(finder), 0);
    cc_finder_destroy(finder);
}
END_TEST

static struct scratch scratch;

static void setup(void)
{
    scratch_open(&scratch, "file");
}

static void teardown(void)
{
    scratch_close(&scratch);
}

/* The header's version and payload CRC, rewritten after an edit. */
static void seal(unsigned char *data, size_t size, uint32_t version)
{
    memcpy(data + 8, &version, 4);
    uint32_t crc = cc__crc32(0, data + 48, size - 48);
    memcpy(data + 36, &crc, 4);
}

/* A version 2 file brings back both parts of the mask; a version 1 file
 * (the same without its mask) loads and keeps the finder's own mask; a
 * mask byte that is not a known reason is refused as corrupt. */
START_TEST(mask_in_pedestal_files)
{
    const uint16_t a[4] = {1, 2, 3, 100};
    cc_finder *saver = finder_with_rms(a, 40, (const uint8_t[4]){1, 0, 0, 0});
    ck_assert_uint_eq(masked_count(saver), 1); /* median 3: rms 100 kept */
    ck_assert_int_eq(cc_finder_set_mask(saver, (const uint8_t[4]){0, 0, 1, 0}),
                     CC_OK); /* median 2: rms 100 masked */
    ck_assert_uint_eq(masked_count(saver), 2);
    ck_assert_int_eq(cc_finder_save_pedestal(saver, scratch.path), CC_OK);
    cc_finder_destroy(saver);

    cc_finder *loader = finder_with_rms(a, 0, (const uint8_t[4]){0, 1, 0, 0});
    ck_assert_int_eq(cc_finder_load_pedestal(loader, scratch.path), CC_OK);
    uint8_t mask[4];
    ck_assert_int_eq(cc_finder_get_mask(loader, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 0, 1, 1}), 4);
    cc_finder_reset(loader); /* the rule's mark goes, the user's stays */
    ck_assert_int_eq(cc_finder_get_mask(loader, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 0, 1, 0}), 4);
    cc_finder_destroy(loader);

    size_t size;
    unsigned char *data = test_read_file(scratch.path, &size);
    ck_assert_mem_eq(data + size - 4,
                     ((uint8_t[4]){0, 0, CC__MASKED_BY_USER,
                                   CC__MASKED_BY_RMS}),
                     4);
    seal(data, size - 4, 1);
    test_write_file(scratch.path, data, size - 4);
    loader = finder_with_rms(a, 0, (const uint8_t[4]){0, 1, 0, 0});
    ck_assert_int_eq(cc_finder_load_pedestal(loader, scratch.path), CC_OK);
    ck_assert_int_eq(cc_finder_get_mask(loader, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 1, 0, 0}), 4);

    data[size - 2] = 4;
    seal(data, size, 2);
    test_write_file(scratch.path, data, size);
    ck_assert_int_eq(cc_finder_load_pedestal(loader, scratch.path), CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(loader), "mask byte"));
    ck_assert_int_eq(cc_finder_get_mask(loader, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[4]){0, 1, 0, 0}), 4);
    seal(data, size, 3);
    test_write_file(scratch.path, data, size);
    ck_assert_int_eq(cc_finder_load_pedestal(loader, scratch.path), CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(loader), "version 3"));
    cc_finder_destroy(loader);
    free(data);
}
END_TEST

/* Writes an .npy file whose header dict is `dict` (padded as numpy pads
 * it) followed by `payload` bytes of data. */
static void write_npy(const char *dict, const void *payload, size_t size)
{
    unsigned char file[512];
    size_t length = strlen(dict);
    size_t total = (10 + length + 1 + 63) / 64 * 64;
    ck_assert_uint_le(total + size, sizeof file);
    memcpy(file, "\x93NUMPY\x01\x00", 8);
    uint16_t header = (uint16_t)(total - 10);
    memcpy(file + 8, &header, 2);
    memcpy(file + 10, dict, length);
    memset(file + 10 + length, ' ', total - 10 - length);
    file[total - 1] = '\n';
    memcpy(file + total, payload, size);
    test_write_file(scratch.path, file, total + size);
}

static void assert_npy_refused(cc_finder *finder, int want, const char *why)
{
    ck_assert_int_eq(cc_finder_load_mask(finder, scratch.path), want);
    ck_assert_msg(strstr(cc_finder_last_error(finder), why) != NULL,
                  "'%s' does not say '%s'", cc_finder_last_error(finder), why);
    uint8_t mask[6];
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, ((uint8_t[6]){0, 0, 0, 0, 0, 1}), 6);
}

/* Masks from numpy's files, uint8 and bool; every other file refused with
 * its reason and the mask in force kept. */
START_TEST(mask_from_npy)
{
    cc_config config = test_config(2, 3);
    cc_finder *finder = test_finder(&config);
    const uint8_t values[6] = {1, 0, 0, 1, 0, 0};
    const uint64_t shape[2] = {2, 3};
    ck_assert_int_eq(cc__npy_write(scratch.path, "'|u1'", 2, shape, values, 6,
                                   NULL),
                     CC_OK);
    ck_assert_int_eq(cc_finder_load_mask(finder, scratch.path), CC_OK);
    uint8_t mask[6];
    ck_assert_int_eq(cc_finder_get_mask(finder, mask), CC_OK);
    ck_assert_mem_eq(mask, values, 6);
    const uint8_t last[6] = {0, 0, 0, 0, 0, 1};
    write_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }",
              last, 6);
    ck_assert_int_eq(cc_finder_load_mask(finder, scratch.path), CC_OK);

    write_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }",
              last, 6);
    assert_npy_refused(finder, CC_EFORMAT, "uint8 or bool");
    write_npy("{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
              last, 6);
    assert_npy_refused(finder, CC_EFORMAT, "Fortran");
    write_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (3, 2), }",
              last, 6);
    assert_npy_refused(finder, CC_EMISMATCH, "(2, 3) is needed");
    write_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (6,), }", last,
              6);
    assert_npy_refused(finder, CC_EMISMATCH, "not 2-D");
    write_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
              last, 5);
    assert_npy_refused(finder, CC_EFORMAT, "truncated");
    write_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
              (const uint8_t[7]){0}, 7);
    assert_npy_refused(finder, CC_EFORMAT, "longer");
    write_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
              (const uint8_t[6]){0, 3, 0, 0, 0, 0}, 6);
    assert_npy_refused(finder, CC_EINVAL, "0 (good) or 1 (bad)");
    static const char *const garbage[] = {
        "{'descr': '|u1', 'shape': (2, 3), }",
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
        "{'descr': '|u1', 'descr': '|u1', 'fortran_order': False, }",
        "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3)",
        ("{'descr': '|u1', 'fortran_order': False, 'shape': "
         "(99999999999999999999, 3), }"),
        "[1, 2]"};
    for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
        write_npy(garbage[i], last, 6);
        assert_npy_refused(finder, CC_EFORMAT, "does not understand");
    }
    test_write_file(scratch.path, "\x93NUMPY\x01\x00\xff\xff", 10);
    assert_npy_refused(finder, CC_EFORMAT, "truncated");
    test_write_file(scratch.path, "\x93NUMPY\x02\x00\x01\x00\x01\x00", 12);
    assert_npy_refused(finder, CC_EFORMAT, "-byte header");
    test_write_file(scratch.path, "\x93NUMPY\x04\x00", 8);
    assert_npy_refused(finder, CC_EFORMAT, "version 4");
    test_write_file(scratch.path, "PK\x03\x04", 4);
    assert_npy_refused(finder, CC_EFORMAT, "not a NumPy");
    unlink(scratch.path);
    assert_npy_refused(finder, CC_EIO, "cannot open");
    cc_finder_destroy(finder);
}
END_TEST

Suite *suite_mask(void)
{
    Suite *suite = suite_create("mask");
    TCase *decisions = tcase_create("decisions");
    tcase_set_timeout(decisions, 60);
    tcase_add_loop_test(decisions, masked_pixels_are_outside_the_frame, 0, 8);
    tcase_add_test(decisions, masked_pixel_never_a_centre);
    suite_add_tcase(suite, decisions);
    TCase *settings = tcase_create("settings");
    tcase_add_test(settings, rms_rule_and_its_median);
    tcase_add_test(settings, user_mask_life_cycle);
    suite_add_tcase(suite, settings);
    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, setup, teardown);
    tcase_add_test(files, mask_in_pedestal_files);
    tcase_add_test(files, mask_from_npy);
    suite_add_tcase(suite, files);
    return suite;
}
