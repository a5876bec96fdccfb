/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_pedestal_file.c: saving and loading the pedestal: exact round
 * trips in both states, and clear errors that change nothing on bad files.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frames.h"
#include "suites.h"
#include "clustercore.h"

enum { ROWS = 24, COLS = 20, WINDOW = 40 };

static struct scratch scratch;
static uint16_t *frames; /* WINDOW dark frames, then 30 with photons */

static void setup(void)
{
    scratch_open(&scratch, "pedestal.ccped");
    cc_simulator_config model = test_simulator_config(ROWS, COLS, 99, 12);
    cc_simulator *simulator = test_simulator(&model);
    size_t pixels = ROWS * COLS;
    frames = malloc((WINDOW + 30) * pixels * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, WINDOW, frames),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, WINDOW, 30,
                                         frames + WINDOW * pixels, NULL),
                     CC_OK);
    cc_simulator_destroy(simulator);
}

static void teardown(void)
{
    scratch_close(&scratch);
    free(frames);
}

static const uint16_t *frame(int k)
{
    return frames + (size_t)k * ROWS * COLS;
}

static cc_finder *new_finder(cc_precision precision, uint32_t rows,
                             uint16_t adc_mask)
{
    cc_config config = test_config(rows, COLS);
    config.pedestal_frames = WINDOW;
    config.precision = precision;
    config.adc_mask = adc_mask;
    return test_finder(&config);
}

/* Processes frames [first, first + count) on both finders and asserts
 * that their clusters are the same bytes. Returns the clusters seen. */
static size_t assert_same_output(cc_finder *a, cc_finder *b, int first,
                                 int count)
{
    cc_clusters *ca, *cb;
    ck_assert_int_eq(cc_clusters_new(&ca), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&cb), CC_OK);
    size_t seen = 0;
    for (int k = first; k < first + count; k++) {
        ck_assert_int_eq(cc_finder_process(a, frame(k), NULL, 1, ca), CC_OK);
        ck_assert_int_eq(cc_finder_process(b, frame(k), NULL, 1, cb), CC_OK);
        cc_frame_clusters fa, fb;
        cc_clusters_frame(ca, 0, &fa);
        cc_clusters_frame(cb, 0, &fb);
        ck_assert_uint_eq(fa.count, fb.count);
        ck_assert_mem_eq(fa.x, fb.x, fa.count * sizeof *fa.x);
        ck_assert_mem_eq(fa.y, fb.y, fa.count * sizeof *fa.y);
        ck_assert_mem_eq(fa.values, fb.values, fa.count * 9 * sizeof(int32_t));
        seen += fa.count;
    }
    cc_clusters_destroy(ca);
    cc_clusters_destroy(cb);
    return seen;
}

/* Save after processing, load into a new finder: identical output after. */
START_TEST(round_trip_ready)
{
    cc_precision precision = _i ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT;
    cc_finder *saver = new_finder(precision, ROWS, 0x3FFF);
    cc_finder *loader = new_finder(precision, ROWS, 0x3FFF);
    ck_assert_int_eq(cc_finder_train(saver, frame(0), WINDOW), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_process(saver, frame(WINDOW), NULL, 10,
                                       clusters),
                     CC_OK);
    cc_clusters_destroy(clusters);
    ck_assert_int_eq(cc_finder_save_pedestal(saver, scratch.path), CC_OK);
    ck_assert_int_eq(cc_finder_load_pedestal(loader, scratch.path), CC_OK);
    ck_assert_uint_gt(assert_same_output(saver, loader, WINDOW + 10, 20), 0);
    cc_finder_destroy(saver);
    cc_finder_destroy(loader);
}
END_TEST

/* Save part-way through training, load, and finish training on both. */
START_TEST(round_trip_training)
{
    cc_finder *saver = new_finder(CC_PRECISION_FLOAT, ROWS, 0x3FFF);
    cc_finder *loader = new_finder(CC_PRECISION_FLOAT, ROWS, 0x3FFF);
    ck_assert_int_eq(cc_finder_train(saver, frame(0), 15), CC_OK);
    ck_assert_int_eq(cc_finder_save_pedestal(saver, scratch.path), CC_OK);
    ck_assert_int_eq(cc_finder_load_pedestal(loader, scratch.path), CC_OK);
    cc_finder_stats stats;
    cc_finder_get_stats(loader, &stats);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_TRAINING);
    ck_assert_uint_eq(stats.frames_trained, 15);
    ck_assert_int_eq(cc_finder_train(saver, frame(15), WINDOW - 15), CC_OK);
    ck_assert_int_eq(cc_finder_train(loader, frame(15), WINDOW - 15), CC_OK);
    ck_assert_uint_gt(assert_same_output(saver, loader, WINDOW, 30), 0);
    cc_finder_destroy(saver);
    cc_finder_destroy(loader);
}
END_TEST

/* Loads a damaged file into a ready finder: the load fails with want and
 * the finder then gives the same output as an untouched twin. */
static void assert_load_fails(const unsigned char *data, size_t size, int want)
{
    cc_finder *victim = new_finder(CC_PRECISION_FLOAT, ROWS, 0x3FFF);
    cc_finder *twin = new_finder(CC_PRECISION_FLOAT, ROWS, 0x3FFF);
    ck_assert_int_eq(cc_finder_train(victim, frame(0), WINDOW), CC_OK);
    ck_assert_int_eq(cc_finder_train(twin, frame(0), WINDOW), CC_OK);
    test_write_file(scratch.path, data, size);
    ck_assert_int_eq(cc_finder_load_pedestal(victim, scratch.path), want);
    ck_assert_str_ne(cc_finder_last_error(victim), "");
    assert_same_output(victim, twin, WINDOW, 5);
    cc_finder_destroy(victim);
    cc_finder_destroy(twin);
}

/* Truncated, overlong and corrupted files are refused as malformed. */
START_TEST(damaged_files_refused)
{
    cc_finder *saver = new_finder(CC_PRECISION_FLOAT, ROWS, 0x3FFF);
    ck_assert_int_eq(cc_finder_train(saver, frame(0), WINDOW), CC_OK);
    ck_assert_int_eq(cc_finder_save_pedestal(saver, scratch.path), CC_OK);
    cc_finder_destroy(saver);
    size_t size;
    unsigned char *data = test_read_file(scratch.path, &size);
    static const size_t cuts[] = {0, 10, 47, 48, 100};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++)
        assert_load_fails(data, cuts[i], CC_EFORMAT);
    assert_load_fails(data, size - 1, CC_EFORMAT);
    data[size] = 0;
    assert_load_fails(data, size + 1, CC_EFORMAT);
    data[size / 2] ^= 0x10;
    assert_load_fails(data, size, CC_EFORMAT);
    data[size / 2] ^= 0x10;
    data[0] = 'X';
    assert_load_fails(data, size, CC_EFORMAT);
    free(data);
}
END_TEST

/* Saves the trained pedestal of other, which differs from the finders of
 * assert_load_fails, and checks that they refuse it as a mismatch. */
static void assert_foreign_refused(cc_finder *other)
{
    ck_assert_int_eq(cc_finder_train(other, frame(0), WINDOW), CC_OK);
    ck_assert_int_eq(cc_finder_save_pedestal(other, scratch.path), CC_OK);
    size_t size;
    unsigned char *data = test_read_file(scratch.path, &size);
    assert_load_fails(data, size, CC_EMISMATCH);
    free(data);
    cc_finder_destroy(other);
}

/* A pedestal of another frame size, precision or ADC mask is refused. */
START_TEST(mismatched_files_refused)
{
    assert_foreign_refused(new_finder(CC_PRECISION_FLOAT, ROWS - 8, 0x3FFF));
    assert_foreign_refused(new_finder(CC_PRECISION_DOUBLE, ROWS, 0x3FFF));
    assert_foreign_refused(new_finder(CC_PRECISION_FLOAT, ROWS, 0x0FFF));
}
END_TEST

/* Missing and unwritable paths give CC_EIO, and a failed save leaves no
 * file behind, not even the temporary one. */
START_TEST(missing_and_unwritable_paths)
{
    cc_finder *finder = new_finder(CC_PRECISION_FLOAT, ROWS, 0x3FFF);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/dir/p.ccped",
             scratch.directory);
    ck_assert_int_eq(cc_finder_load_pedestal(finder, missing), CC_EIO);
    ck_assert_int_eq(cc_finder_save_pedestal(finder, missing), CC_EIO);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(finder), missing));
    /* A directory where the file should be: the rename fails. */
    char blocked[300];
    snprintf(blocked, sizeof blocked, "%s/blocked", scratch.directory);
    ck_assert_int_eq(mkdir(blocked, 0700), 0);
    ck_assert_int_eq(cc_finder_save_pedestal(finder, blocked), CC_EIO);
    ck_assert_int_eq(rmdir(blocked), 0);
    DIR *listing = opendir(scratch.directory);
    ck_assert_ptr_nonnull(listing);
    struct dirent *entry;
    while ((entry = readdir(listing)) != NULL)
        ck_assert_msg(strcmp(entry->d_name, ".") == 0 ||
                          strcmp(entry->d_name, "..") == 0,
                      "left behind: %s", entry->d_name);
    closedir(listing);
    cc_finder_destroy(finder);
}
END_TEST

Suite *suite_pedestal_file(void)
{
    Suite *suite = suite_create("pedestal file");
    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, setup, teardown);
    tcase_add_loop_test(files, round_trip_ready, 0, 2);
    tcase_add_test(files, round_trip_training);
    tcase_add_test(files, damaged_files_refused);
    tcase_add_test(files, mismatched_files_refused);
    tcase_add_test(files, missing_and_unwritable_paths);
    suite_add_tcase(suite, files);
    return suite;
}
