/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_gain.c: the per-pixel gain of docs/spec.md §9: units and hostile
 * maps refused with the reason, maps from .npy and TIFF files, the
 * arithmetic on hand-built frames (values and noise scaled, the pedestal
 * kept in ADU), the same bytes whatever the threads and batches, and,
 * against the simulator's truth, a run with 5 % of gain spread brought
 * back to the line width of a run without.
 */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "files/files.h"
#include "suites.h"

#ifdef CC_HAVE_TIFF /* config.h, through the core's headers, says */
#include <tiffio.h>
#endif

static double *filled(size_t n, double value)
{
    double *map = malloc(n * sizeof *map);
    ck_assert_ptr_nonnull(map);
    for (size_t i = 0; i < n; i++)
        map[i] = value;
    return map;
}

START_TEST(units_and_hostile_maps_refused)
{
    cc_gain_unit unit;
    ck_assert_int_eq(cc_gain_unit_parse("adu-per-kev", &unit, NULL), CC_OK);
    ck_assert_int_eq(unit, CC_GAIN_ADU_PER_KEV);
    ck_assert_str_eq(cc_gain_unit_name(CC_GAIN_RELATIVE), "relative");
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc_gain_unit_parse("keV", &unit, message), CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(message, "'keV'"));

    cc_config config = test_config(20, 30);
    cc_finder *finder = test_finder(&config);
    ck_assert_int_eq(cc_finder_get_gain(finder, NULL, NULL), CC_ESTATE);
    double *map = filled(600, 1.0);
    map[7] = 1.25;
    ck_assert_int_eq(cc_finder_set_gain(finder, map, CC_GAIN_RELATIVE), CC_OK);
    /* Each hostile value is refused whole, naming its pixel; the map in
     * force stays. */
    const double hostile[] = {NAN, INFINITY, 0.0, -1.0, 1.0 / 1024};
    for (size_t i = 0; i < 5; i++) {
        double *bad = filled(600, 1.0);
        bad[2 * 30 + 5] = hostile[i];
        ck_assert_int_eq(cc_finder_set_gain(finder, bad, CC_GAIN_RELATIVE),
                         CC_EINVAL);
        ck_assert_msg(strstr(cc_finder_last_error(finder), "(row 2, col 5)") !=
                          NULL,
                      "%s", cc_finder_last_error(finder));
        free(bad);
    }
    ck_assert_int_eq(cc_finder_set_gain(finder, map, (cc_gain_unit)5),
                     CC_EINVAL);
    double held[600];
    ck_assert_int_eq(cc_finder_get_gain(finder, held, &unit), CC_OK);
    ck_assert(held[7] == 1.25 && unit == CC_GAIN_RELATIVE);
    /* 1/400 fits 14 bits (k = 400 <= 512) but not 16: the change of
     * adc_mask is refused, the map and settings stay. */
    map[8] = 1.0 / 400;
    ck_assert_int_eq(cc_finder_set_gain(finder, map, CC_GAIN_RELATIVE), CC_OK);
    cc_config wider = config;
    wider.adc_mask = 0xFFFF;
    ck_assert_int_eq(cc_finder_set_config(finder, &wider), CC_EINVAL);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(finder), "row 0, col 8"));
    cc_config now;
    cc_finder_get_config(finder, &now);
    ck_assert_uint_eq(now.adc_mask, 0x3FFF);
    /* A change that keeps the frame's size keeps the map; another drops it. */
    cc_config doubled = config;
    doubled.precision = CC_PRECISION_DOUBLE;
    ck_assert_int_eq(cc_finder_set_config(finder, &doubled), CC_OK);
    ck_assert_int_eq(cc_finder_get_gain(finder, held, NULL), CC_OK);
    ck_assert(held[8] == 1.0 / 400);
    cc_config other = test_config(30, 20);
    ck_assert_int_eq(cc_finder_set_config(finder, &other), CC_OK);
    ck_assert_int_eq(cc_finder_get_gain(finder, NULL, NULL), CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_gain(finder, NULL, CC_GAIN_RELATIVE), CC_OK);
    free(map);
    cc_finder_destroy(finder);
}
END_TEST

START_TEST(maps_from_npy_files)
{
    struct scratch scratch;
    scratch_open(&scratch, "gain.npy");
    enum { R = 4, C = 5 };
    const uint64_t shape[2] = {R, C};
    double wide[R * C], read[R * C];
    float narrow[R * C];
    for (int i = 0; i < R * C; i++) {
        wide[i] = 0.9 + 0.01 * i;
        narrow[i] = (float)wide[i];
    }
    char message[CC_MESSAGE_SIZE];
    ck_assert_int_eq(cc__npy_write(scratch.path, "'<f8'", 2, shape, wide,
                                   sizeof wide, message),
                     CC_OK);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_OK);
    ck_assert(memcmp(read, wide, sizeof wide) == 0);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, C, R, read, message),
                     CC_EMISMATCH);
    ck_assert_ptr_nonnull(strstr(message, "(5, 4) is needed"));
    ck_assert_int_eq(cc__npy_write(scratch.path, "'<f4'", 2, shape, narrow,
                                   sizeof narrow, message),
                     CC_OK);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_OK);
    for (int i = 0; i < R * C; i++)
        ck_assert(read[i] == (double)narrow[i]);
    /* Truncated by one byte, and a type that is not a float. */
    size_t size;
    unsigned char *bytes = test_read_file(scratch.path, &size);
    test_write_file(scratch.path, bytes, size - 1);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "truncated"));
    free(bytes);
    ck_assert_int_eq(cc__npy_write(scratch.path, "'<i4'", 2, shape, narrow,
                                   sizeof narrow, message),
                     CC_OK);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "'<i4'"));
    test_write_file(scratch.path, "gain,1.0\n", 9);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "neither"));
    scratch_close(&scratch);
}
END_TEST

#ifdef CC_HAVE_TIFF
/* A TIFF of `pages` images of width x height samples of `bits` bits in
 * `format`, the value of sample i being 1 + i / 1000. */
static void write_tiff(const char *path, uint32_t width, uint32_t height,
                       uint16_t bits, uint16_t format, int pages)
{
    TIFF *tiff = TIFFOpen(path, "w");
    ck_assert_ptr_nonnull(tiff);
    for (int page = 0; page < pages; page++) {
        TIFFSetField(tiff, TIFFTAG_IMAGEWIDTH, width);
        TIFFSetField(tiff, TIFFTAG_IMAGELENGTH, height);
        TIFFSetField(tiff, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField(tiff, TIFFTAG_BITSPERSAMPLE, bits);
        TIFFSetField(tiff, TIFFTAG_SAMPLEFORMAT, format);
        TIFFSetField(tiff, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tiff, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(tiff, TIFFTAG_ROWSPERSTRIP, 2);
        unsigned char line[8 * 64];
        for (uint32_t row = 0; row < height; row++) {
            for (uint32_t col = 0; col < width; col++) {
                double value = 1 + (row * width + col) / 1000.0;
                float single = (float)value;
                uint16_t whole = (uint16_t)(value * 1000);
                if (format == SAMPLEFORMAT_IEEEFP && bits == 64)
                    memcpy(line + 8 * col, &value, 8);
                else if (format == SAMPLEFORMAT_IEEEFP)
                    memcpy(line + 4 * col, &single, 4);
                else
                    memcpy(line + 2 * col, &whole, 2);
            }
            ck_assert_int_eq(TIFFWriteScanline(tiff, line, row, 0), 1);
        }
        ck_assert_int_eq(TIFFWriteDirectory(tiff), 1);
    }
    TIFFClose(tiff);
}

START_TEST(maps_from_tiff_files)
{
    struct scratch scratch;
    scratch_open(&scratch, "gain.tiff");
    enum { R = 5, C = 7 };
    double read[R * C];
    char message[CC_MESSAGE_SIZE];
    /* slsDetectorCalibration's: 32-bit floats, width = columns. */
    write_tiff(scratch.path, C, R, 32, SAMPLEFORMAT_IEEEFP, 1);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_OK);
    for (int i = 0; i < R * C; i++)
        ck_assert(read[i] == (double)(float)(1 + i / 1000.0));
    write_tiff(scratch.path, C, R, 64, SAMPLEFORMAT_IEEEFP, 1);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_OK);
    ck_assert(read[R * C - 1] == 1 + (R * C - 1) / 1000.0);
    /* Refused, each with its reason. */
    write_tiff(scratch.path, R, C, 32, SAMPLEFORMAT_IEEEFP, 1);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EMISMATCH);
    ck_assert_ptr_nonnull(strstr(message, "5 x 7 pixels"));
    write_tiff(scratch.path, C, R, 16, SAMPLEFORMAT_UINT, 1);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "IEEE float is needed"));
    write_tiff(scratch.path, C, R, 32, SAMPLEFORMAT_IEEEFP, 2);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EFORMAT);
    ck_assert_ptr_nonnull(strstr(message, "several images"));
    /* Cut inside the image data, then inside the header. */
    write_tiff(scratch.path, C, R, 32, SAMPLEFORMAT_IEEEFP, 1);
    size_t size;
    unsigned char *bytes = test_read_file(scratch.path, &size);
    test_write_file(scratch.path, bytes, 40);
    ck_assert_int_ne(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_OK);
    test_write_file(scratch.path, bytes, 6);
    ck_assert_int_eq(cc_gain_map_read(scratch.path, R, C, read, message),
                     CC_EFORMAT);
    free(bytes);
    scratch_close(&scratch);
}
END_TEST
#endif

/* A flat finder (rms 1 everywhere) and a map of 1 but for pixel (x, y). */
static void flat_with_gain(struct flat *flat, uint32_t x, uint32_t y, double g,
                           cc_gain_unit unit, double others)
{
    flat_open(flat, 9, 9, 3, 3, CC_PRECISION_FLOAT, 1);
    double *map = filled(81, others);
    map[y * 9 + x] = g;
    ck_assert_int_eq(cc_finder_set_gain(flat->finder, map, unit), CC_OK);
    free(map);
}

START_TEST(values_and_noise_scaled_pedestal_in_adu)
{
    struct flat flat;
    /* Pixel (4, 4) has twice the gain: its 100 ADU are 50 of a gain-1
     * pixel; its neighbour's 60 ADU now hold the window's maximum. */
    flat_with_gain(&flat, 4, 4, 2.0, CC_GAIN_RELATIVE, 1.0);
    flat_set(&flat, 4, 4, 100);
    flat_set(&flat, 5, 4, 60);
    cc_frame_clusters frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(find_cluster(&frame, 5, 4), 0);
    ck_assert_int_eq(frame.values[3], 50); /* (4, 4), left of the centre */
    ck_assert_int_eq(frame.values[4], 60);
    flat_close(&flat);

    /* Thresholds stay in noise units: 6 rms clears 5 sigma whatever the
     * gain, 4 rms does not. */
    flat_with_gain(&flat, 4, 4, 40.0, CC_GAIN_RELATIVE, 1.0);
    flat_set(&flat, 4, 4, 6);
    frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    flat_set(&flat, 4, 4, 4);
    frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 0);
    /* That frame updated the quiet pixel's pedestal with 4 ADU, not 0.1:
     * its rms moved as without a map. */
    double with_gain = flat_rms(&flat, 4, 4);
    flat_close(&flat);
    flat_open(&flat, 9, 9, 3, 3, CC_PRECISION_FLOAT, 1);
    flat_set(&flat, 4, 4, 6);
    flat_process(&flat);
    flat_set(&flat, 4, 4, 4);
    flat_process(&flat);
    ck_assert(flat_rms(&flat, 4, 4) == with_gain);
    flat_close(&flat);

    /* ADU per keV: values in eV. 100 ADU at 50 ADU/keV are 2000 eV. */
    flat_with_gain(&flat, 4, 4, 50.0, CC_GAIN_ADU_PER_KEV, 100.0);
    flat_set(&flat, 4, 4, 100);
    flat_set(&flat, 3, 4, 30);
    frame = flat_process(&flat);
    ck_assert_uint_eq(frame.count, 1);
    ck_assert_int_eq(frame.values[4], 2000);
    ck_assert_int_eq(frame.values[3], 300);
    flat_close(&flat);
}
END_TEST

enum { ROWS = 40, COLS = 60, DARK = 40, DATA = 12 };

/* Every frame's clusters of a run with a gain map of `spread`, common
 * mode and masked pixels, `threads` threads taking `batch` frames a call;
 * an identity map when spread is 0. */
static cc_clusters *run_with(const uint16_t *frames, const double *map,
                             uint32_t threads, size_t batch)
{
    cc_config config = test_config(ROWS, COLS);
    config.pedestal_frames = DARK;
    config.threads = threads;
    config.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    cc_finder *finder = test_finder(&config);
    uint8_t mask[ROWS * COLS] = {0};
    mask[3 * COLS + 24] = mask[20 * COLS + 25] = 1;
    ck_assert_int_eq(cc_finder_set_mask(finder, mask), CC_OK);
    if (map != NULL)
        ck_assert_int_eq(cc_finder_set_gain(finder, map, CC_GAIN_RELATIVE),
                         CC_OK);
    size_t pixels = (size_t)ROWS * COLS;
    ck_assert_int_eq(cc_finder_train(finder, frames, DARK), CC_OK);
    cc_clusters *all = test_process_in_batches(finder, frames + DARK * pixels,
                                               pixels, DATA, batch);
    cc_finder_destroy(finder);
    return all;
}

static bool same_clusters(const cc_clusters *a, const cc_clusters *b)
{
    if (cc_clusters_frame_count(a) != cc_clusters_frame_count(b))
        return false;
    for (size_t f = 0; f < cc_clusters_frame_count(a); f++) {
        cc_frame_clusters x, y;
        cc_clusters_frame(a, f, &x);
        cc_clusters_frame(b, f, &y);
        size_t cells = (size_t)x.count * x.size_x * x.size_y;
        if (x.count != y.count ||
            memcmp(x.x, y.x, x.count * sizeof *x.x) != 0 ||
            memcmp(x.y, y.y, x.count * sizeof *x.y) != 0 ||
            memcmp(x.values, y.values, cells * sizeof *x.values) != 0)
            return false;
    }
    return true;
}

START_TEST(same_bytes_whatever_threads_and_batches)
{
    size_t pixels = (size_t)ROWS * COLS;
    cc_simulator_config model = test_simulator_config(ROWS, COLS, 9, 30);
    model.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    model.common_mode_rms = 20;
    model.gain_spread = 0.1;
    cc_simulator *simulator = test_simulator(&model);
    uint16_t *frames = test_simulated_run(simulator, pixels, DARK, 0, DATA);
    double *map = malloc(pixels * sizeof *map);
    ck_assert_ptr_nonnull(map);
    ck_assert_int_eq(cc_simulator_gain_map(simulator, map), CC_OK);
    cc_simulator_destroy(simulator);

    cc_clusters *reference = run_with(frames, map, 1, DATA);
    const uint32_t threads[] = {3, 2, 1};
    const size_t batches[] = {DATA, 5, 1};
    for (int i = 0; i < 3; i++) {
        cc_clusters *other = run_with(frames, map, threads[i], batches[i]);
        ck_assert_msg(same_clusters(reference, other), "threads %u batch %zu",
                      threads[i], batches[i]);
        cc_clusters_destroy(other);
    }
    /* The map changes the output; an identity map gives no map's bytes. */
    cc_clusters *none = run_with(frames, NULL, 2, 5);
    ck_assert(!same_clusters(reference, none));
    for (size_t p = 0; p < pixels; p++)
        map[p] = 1.0;
    cc_clusters *identity = run_with(frames, map, 2, 5);
    ck_assert(same_clusters(none, identity));
    cc_clusters_destroy(identity);
    cc_clusters_destroy(none);
    cc_clusters_destroy(reference);
    free(map);
    free(frames);
}
END_TEST

#ifndef __SANITIZE_THREAD__
/* The physics runs: a 64 x 64 detector at 5-8 ADU of noise, 150 photons a
 * frame, `spread` of gain spread (seed 13 for all, so that the flat field
 * and the data share their pixels' gains). */
enum { SIDE = 64, TRAIN = 400, BATCH = 500 };

static cc_simulator *physics_simulator(double spread)
{
    cc_simulator_config model = test_simulator_config(SIDE, SIDE, 13, 150);
    model.threads = 0;
    model.noise_min = 5;
    model.noise_max = 8;
    model.gain_spread = spread;
    return test_simulator(&model);
}

/* A finder trained on the simulator's dark frames, with map (relative) or
 * none. */
static cc_finder *physics_finder(cc_simulator *simulator, const double *map)
{
    cc_config config = test_config(SIDE, SIDE);
    config.pedestal_frames = TRAIN;
    config.threads = 0;
    cc_finder *finder = test_finder(&config);
    if (map != NULL)
        ck_assert_int_eq(cc_finder_set_gain(finder, map, CC_GAIN_RELATIVE),
                         CC_OK);
    uint16_t *frames = malloc((size_t)TRAIN * SIDE * SIDE * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, TRAIN, frames),
                     CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, frames, TRAIN), CC_OK);
    free(frames);
    return finder;
}

/* Frames [first, first + n) of the simulator through finder, each batch's
 * clusters to score (with truth) and to calibration (when not NULL). */
static void physics_frames(cc_simulator *simulator, cc_finder *finder,
                           uint64_t first, uint64_t n, cc_truth_score *score,
                           cc_gain_calibration *calibration)
{
    cc_clusters *clusters;
    cc_truth *truth;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_truth_new(&truth), CC_OK);
    uint16_t *frames = malloc((size_t)BATCH * SIDE * SIDE * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    for (uint64_t k = first; k < first + n; k += BATCH) {
        ck_assert_int_eq(cc_simulator_frames(simulator, k, BATCH, frames,
                                             truth),
                         CC_OK);
        uint64_t numbers[BATCH];
        for (int i = 0; i < BATCH; i++)
            numbers[i] = k + i;
        ck_assert_int_eq(cc_finder_process(finder, frames, numbers, BATCH,
                                           clusters),
                         CC_OK);
        if (score != NULL)
            ck_assert_int_eq(cc_truth_score_add(score, clusters, truth), CC_OK);
        if (calibration != NULL)
            ck_assert_int_eq(cc_gain_calibration_add(calibration, clusters),
                             CC_OK);
    }
    free(frames);
    cc_truth_destroy(truth);
    cc_clusters_destroy(clusters);
}

/* The gains of the physics runs' detector with 5 % of spread. */
static void true_gains(double *truth)
{
    cc_simulator *simulator = physics_simulator(0.05);
    ck_assert_int_eq(cc_simulator_gain_map(simulator, truth), CC_OK);
    cc_simulator_destroy(simulator);
}

/* The truth's figures of 2000 data frames found with map or none. */
static cc_score scored_run(double spread, const double *map)
{
    cc_simulator *simulator = physics_simulator(spread);
    cc_finder *finder = physics_finder(simulator, map);
    cc_truth_score *score;
    ck_assert_int_eq(cc_truth_score_new(&score, SIDE, SIDE, 100), CC_OK);
    physics_frames(simulator, finder, 1000000, 2000, score, NULL);
    cc_score result;
    ck_assert_int_eq(cc_truth_score_get(score, &result), CC_OK);
    cc_truth_score_destroy(score);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
    return result;
}

/* The bound: with the map, the Ka spread within 15 % of the run
 * without gain spread, the efficiency and the line's place kept. */
static bool line_restored(const cc_score *run, const cc_score *ideal)
{
    return run->line0_spread <= 1.15 * ideal->line0_spread &&
           run->efficiency >= 0.999 &&
           fabs(run->line0_ratio / ideal->line0_ratio - 1) <= 0.01;
}

START_TEST(gain_map_restores_the_line_width)
{
    double truth[SIDE * SIDE];
    true_gains(truth);
    cc_score ideal = scored_run(0, NULL);
    cc_score corrected = scored_run(0.05, truth);
    cc_score uncorrected = scored_run(0.05, NULL);
    ck_assert_msg(line_restored(&corrected, &ideal),
                  "corrected: spread %.4f (ideal %.4f), eff %.5f, Ka %.4f",
                  corrected.line0_spread, ideal.line0_spread,
                  corrected.efficiency, corrected.line0_ratio);
    /* Without the map the same run's line is far wider. */
    ck_assert_msg(uncorrected.line0_spread > 1.15 * ideal.line0_spread,
                  "uncorrected: spread %.4f (ideal %.4f)",
                  uncorrected.line0_spread, ideal.line0_spread);
}
END_TEST

/* The rms of map / truth over the good pixels, each ratio over their
 * mean: how far the calibration is from the truth, the scale aside. */
static double map_error(const double *map, const double *truth,
                        const uint8_t *quality)
{
    double sum = 0, sum_sq = 0;
    size_t n = 0;
    for (size_t p = 0; p < SIDE * SIDE; p++) {
        if (quality[p] != CC_GAIN_GOOD)
            continue;
        double ratio = map[p] / truth[p];
        sum += ratio;
        sum_sq += ratio * ratio;
        n++;
    }
    ck_assert_uint_gt(n, SIDE * SIDE * 95 / 100);
    double mean = sum / (double)n;
    return sqrt(sum_sq / (double)n - mean * mean) / mean;
}

/* Empty spectra of the simulated flat field's line, binned as config
 * (rows, cols, range and events filled in) says. */
static cc_gain_calibration *physics_spectra(cc_gain_calibration_config *config,
                                            cc_gain_events events)
{
    config->rows = config->cols = SIDE;
    config->low = 600;
    config->high = 1000;
    config->events = events;
    char message[CC_MESSAGE_SIZE];
    cc_gain_calibration *calibration;
    ck_assert_int_eq(cc_gain_calibration_new(&calibration, config, message),
                     CC_OK);
    return calibration;
}

/* A calibration of `events` from 16,000 flat-field frames found with
 * prior (or none), into map and quality. */
static cc_gain_calibration_result calibrate(cc_gain_events events,
                                            const double *prior, double *map,
                                            uint8_t *quality)
{
    cc_simulator *simulator = physics_simulator(0.05);
    cc_finder *finder = physics_finder(simulator, prior);
    cc_gain_calibration_config config;
    cc_gain_calibration_config_init(&config);
    char message[CC_MESSAGE_SIZE];
    cc_gain_calibration *calibration = physics_spectra(&config, events);
    physics_frames(simulator, finder, 0, 64000, NULL, calibration);
    cc_gain_calibration_result result;
    ck_assert_msg(cc_gain_calibration_solve(calibration, prior,
                                            CC_GAIN_RELATIVE, CC_GAIN_RELATIVE,
                                            0, map, quality, &result,
                                            message) == CC_OK,
                  "%s", message);
    /* The running count is what the solve reports. */
    uint64_t entered, outside;
    cc_gain_calibration_entered(calibration, &entered, &outside);
    ck_assert_uint_eq(entered, result.photons);
    ck_assert_uint_eq(outside, result.outside);
    ck_assert_uint_gt(entered, 0);
    cc_gain_calibration_destroy(calibration);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
    return result;
}

/* The spectra a finder keeps while finding (cc_finder_set_gain_calibration)
 * are those of its clusters entered by cc_gain_calibration_add, count for
 * count, across a change of settings; wrong shapes are refused. */
START_TEST(finder_keeps_the_flat_field_spectra)
{
    cc_simulator *simulator = physics_simulator(0.05);
    cc_finder *finder = physics_finder(simulator, NULL);
    cc_gain_calibration_config config;
    cc_gain_calibration_config_init(&config);
    cc_gain_calibration *direct = physics_spectra(&config,
                                                  CC_GAIN_EVENTS_SINGLE);
    cc_gain_calibration *taken = physics_spectra(&config,
                                                 CC_GAIN_EVENTS_SINGLE);
    char message[CC_MESSAGE_SIZE];
    cc_gain_calibration *other;
    ck_assert_int_eq(cc_finder_take_gain_calibration(finder, taken), CC_ESTATE);
    ck_assert_int_eq(cc_finder_set_gain_calibration(finder, direct), CC_OK);
    physics_frames(simulator, finder, 0, 2000, NULL, direct);
    /* A setting that keeps the pedestal keeps the spectra too. */
    cc_config settings;
    ck_assert_int_eq(cc_finder_get_config(finder, &settings), CC_OK);
    settings.nsigma += 0.5;
    ck_assert_int_eq(cc_finder_set_config(finder, &settings), CC_OK);
    physics_frames(simulator, finder, 2000, 1000, NULL, direct);
    config.bins += 1;
    ck_assert_int_eq(cc_gain_calibration_new(&other, &config, message), CC_OK);
    ck_assert_int_eq(cc_finder_take_gain_calibration(finder, other),
                     CC_EMISMATCH);
    cc_gain_calibration_destroy(other);
    config.bins -= 1;
    config.rows = SIDE / 2;
    ck_assert_int_eq(cc_gain_calibration_new(&other, &config, message), CC_OK);
    ck_assert_int_eq(cc_finder_set_gain_calibration(finder, other),
                     CC_EMISMATCH);
    cc_gain_calibration_destroy(other);
    ck_assert_int_eq(cc_finder_take_gain_calibration(finder, taken), CC_OK);
    uint64_t photons[2], outside[2];
    cc_gain_calibration_entered(direct, &photons[0], &outside[0]);
    cc_gain_calibration_entered(taken, &photons[1], &outside[1]);
    ck_assert_uint_gt(photons[0], 0);
    ck_assert_uint_eq(photons[0], photons[1]);
    ck_assert_uint_eq(outside[0], outside[1]);
    for (size_t p = 0; p < SIDE * SIDE; p++)
        ck_assert_mem_eq(cc_gain_calibration_counts(direct, p),
                         cc_gain_calibration_counts(taken, p),
                         config.bins * sizeof(uint32_t));
    /* A take empties the finder's spectra. */
    ck_assert_int_eq(cc_finder_take_gain_calibration(finder, taken), CC_OK);
    cc_gain_calibration_entered(taken, &photons[1], NULL);
    ck_assert_uint_eq(photons[0], photons[1]);
    cc_gain_calibration_destroy(taken);
    cc_gain_calibration_destroy(direct);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
}
END_TEST

/* The bounds: a flat field's calibration recovers the 5 % spread
 * to 2 % rms, and data found with it have the line of a detector without
 * spread (15 %). Single events do it in one pass; every cluster's sum
 * mixes the neighbours' gains and needs a second pass with its own map. */
START_TEST(flat_field_calibration_recovers_the_map)
{
    double truth[SIDE * SIDE];
    true_gains(truth);
    static double single[SIDE * SIDE], sum1[SIDE * SIDE], sum2[SIDE * SIDE];
    static uint8_t quality[SIDE * SIDE];
    cc_gain_calibration_result r = calibrate(CC_GAIN_EVENTS_SINGLE, NULL,
                                             single, quality);
    double single_error = map_error(single, truth, quality);
    ck_assert_msg(single_error <= 0.02,
                  "single events: %.4f rms (%" PRIu64 " photons, %" PRIu64
                  " pixels good)",
                  single_error, r.photons, r.pixels_good);
    calibrate(CC_GAIN_EVENTS_SUM, NULL, sum1, quality);
    double sum_error = map_error(sum1, truth, quality);
    calibrate(CC_GAIN_EVENTS_SUM, sum1, sum2, quality);
    double iterated_error = map_error(sum2, truth, quality);
    ck_assert_msg(iterated_error < sum_error && iterated_error <= 0.02,
                  "sums: %.4f rms, then %.4f", sum_error, iterated_error);
    cc_score ideal = scored_run(0, NULL);
    cc_score calibrated = scored_run(0.05, single);
    ck_assert_msg(line_restored(&calibrated, &ideal),
                  "calibrated: spread %.4f (ideal %.4f), eff %.5f, Ka %.4f",
                  calibrated.line0_spread, ideal.line0_spread,
                  calibrated.efficiency, calibrated.line0_ratio);
    printf("  gain calibration: single events %.4f rms, sums %.4f then "
           "%.4f; Ka spread %.4f (ideal %.4f)\n",
           single_error, sum_error, iterated_error, calibrated.line0_spread,
           ideal.line0_spread);
}
END_TEST
#endif

Suite *suite_gain(void)
{
    Suite *suite = suite_create("gain");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, units_and_hostile_maps_refused);
    tcase_add_test(rules, maps_from_npy_files);
#ifdef CC_HAVE_TIFF
    tcase_add_test(rules, maps_from_tiff_files);
#endif
    tcase_add_test(rules, values_and_noise_scaled_pedestal_in_adu);
    tcase_add_test(rules, same_bytes_whatever_threads_and_batches);
    suite_add_tcase(suite, rules);
#ifndef __SANITIZE_THREAD__
    TCase *physics = tcase_create("physics");
    tcase_set_timeout(physics, 900);
    tcase_add_test(physics, gain_map_restores_the_line_width);
    tcase_add_test(physics, flat_field_calibration_recovers_the_map);
    tcase_add_test(physics, finder_keeps_the_flat_field_spectra);
    suite_add_tcase(suite, physics);
#endif
    return suite;
}
