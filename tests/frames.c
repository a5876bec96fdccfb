/* SPDX-License-Identifier: BSD-3-Clause */
/* frames.c: see frames.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "base/base.h"

cc_config test_config(uint32_t rows, uint32_t cols)
{
    cc_config config;
    cc_config_init(&config);
    config.rows = rows;
    config.cols = cols;
    config.backend = CC_BACKEND_CPU;
    return config;
}

cc_finder *test_finder(const cc_config *config)
{
    cc_finder *finder;
    char message[CC_MESSAGE_SIZE];
    ck_assert_msg(cc_finder_new(&finder, config, message) == CC_OK, "%s",
                  message);
    return finder;
}

cc_simulator_config test_simulator_config(uint32_t rows, uint32_t cols,
                                          uint64_t seed, double flux)
{
    cc_simulator_config config;
    cc_simulator_config_init(&config);
    config.rows = rows;
    config.cols = cols;
    config.seed = seed;
    config.flux = flux;
    return config;
}

cc_simulator *test_simulator(const cc_simulator_config *config)
{
    cc_simulator *simulator;
    char message[CC_MESSAGE_SIZE];
    ck_assert_msg(cc_simulator_new(&simulator, config, message) == CC_OK, "%s",
                  message);
    return simulator;
}

uint16_t *test_simulated_run(cc_simulator *simulator, size_t pixels,
                             uint32_t dark, uint64_t first_data, uint32_t data)
{
    uint16_t *frames = malloc(((size_t)dark + data) * pixels * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, dark, frames),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, first_data, data,
                                         frames + dark * pixels, NULL),
                     CC_OK);
    return frames;
}

void flat_open(struct flat *flat, uint32_t rows, uint32_t cols, uint32_t size_x,
               uint32_t size_y, cc_precision precision, uint32_t threads)
{
    cc_config config = test_config(rows, cols);
    config.cluster_size_x = size_x;
    config.cluster_size_y = size_y;
    config.precision = precision;
    config.threads = threads;
    config.pedestal_frames = 2;
    flat->finder = test_finder(&config);
    ck_assert_int_eq(cc_clusters_new(&flat->clusters), CC_OK);
    flat->rows = rows;
    flat->cols = cols;
    size_t pixels = (size_t)rows * cols;
    flat->frame = malloc(2 * pixels * sizeof *flat->frame);
    flat->rms = malloc(pixels * sizeof *flat->rms);
    ck_assert_ptr_nonnull(flat->frame);
    ck_assert_ptr_nonnull(flat->rms);
    flat_retrain(flat, BASE - 1, BASE + 1);
}

void flat_retrain(struct flat *flat, uint16_t first, uint16_t second)
{
    size_t pixels = (size_t)flat->rows * flat->cols;
    cc_finder_reset(flat->finder);
    for (size_t p = 0; p < pixels; p++) {
        flat->frame[p] = first;
        flat->frame[pixels + p] = second;
    }
    ck_assert_int_eq(cc_finder_train(flat->finder, flat->frame, 2), CC_OK);
    for (size_t p = 0; p < pixels; p++)
        flat->frame[p] = BASE;
}

void flat_close(struct flat *flat)
{
    cc_finder_destroy(flat->finder);
    cc_clusters_destroy(flat->clusters);
    free(flat->frame);
    free(flat->rms);
}

void flat_set(struct flat *flat, uint32_t x, uint32_t y, int signal)
{
    flat->frame[(size_t)y * flat->cols + x] = (uint16_t)(BASE + signal);
}

cc_frame_clusters flat_process(struct flat *flat)
{
    ck_assert_int_eq(cc_finder_process(flat->finder, flat->frame, NULL, 1,
                                       flat->clusters),
                     CC_OK);
    cc_frame_clusters frame;
    ck_assert_int_eq(cc_clusters_frame(flat->clusters, 0, &frame), CC_OK);
    return frame;
}

double flat_rms(struct flat *flat, uint32_t x, uint32_t y)
{
    ck_assert_int_eq(cc_finder_pedestal_maps(flat->finder, NULL, flat->rms),
                     CC_OK);
    return flat->rms[(size_t)y * flat->cols + x];
}

int find_cluster(const cc_frame_clusters *frame, uint32_t x, uint32_t y)
{
    for (uint32_t i = 0; i < frame->count; i++)
        if (frame->x[i] == x && frame->y[i] == y)
            return (int)i;
    return -1;
}

cc_clusters *test_clusters(uint32_t size_x, uint32_t size_y, size_t n,
                           const int32_t *values, const uint16_t *xy)
{
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    cc__clusters_clear(clusters, size_x, size_y);
    ck_assert_int_eq(cc__clusters_begin_frame(clusters, 7), CC_OK);
    const size_t cells = (size_t)size_x * size_y;
    for (size_t i = 0; i < n; i++) {
        int32_t *out;
        uint16_t x = xy != NULL ? xy[2 * i] : 10;
        uint16_t y = xy != NULL ? xy[2 * i + 1] : 20;
        ck_assert_int_eq(cc__clusters_push(clusters, 0, x, y, &out), CC_OK);
        for (size_t c = 0; c < cells; c++)
            out[c] = values[i * cells + c];
    }
    return clusters;
}

void scratch_open(struct scratch *scratch, const char *file_name)
{
    snprintf(scratch->directory, sizeof scratch->directory,
             "/tmp/cc_test_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch->directory));
    snprintf(scratch->path, sizeof scratch->path, "%s/%s", scratch->directory,
             file_name);
}

void scratch_close(struct scratch *scratch)
{
    unlink(scratch->path);
    rmdir(scratch->directory);
}

void test_write_file(const char *path, const void *data, size_t size)
{
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(data, 1, size, file), size);
    fclose(file);
}

unsigned char *test_read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    ck_assert_ptr_nonnull(file);
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    rewind(file);
    unsigned char *data = malloc(*size + 1);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(fread(data, 1, *size, file), *size);
    fclose(file);
    return data;
}

void test_edit_file(const char *path, const char *from, const char *to)
{
    size_t length;
    char *text = (char *)test_read_file(path, &length);
    text[length] = '\0';
    char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "no '%s' in %s", from, path);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    fwrite(text, 1, (size_t)(at - text), file);
    fputs(to, file);
    fputs(at + strlen(from), file);
    fclose(file);
    free(text);
}

void test_remove_directory(char *directory)
{
    char command[600];
    snprintf(command, sizeof command, "rm -rf '%s'", directory);
    ck_assert_int_eq(system(command), 0);
    memcpy(directory + strlen(directory) - 6, "XXXXXX", 6);
}

size_t test_read_raw_run(const char *master, cc_raw_chip chip,
                         size_t frame_pixels, uint16_t *out,
                         uint64_t *out_numbers, char *notices,
                         size_t notices_size, cc_raw_stats *stats,
                         cc_raw_info *info)
{
    char message[CC_MESSAGE_SIZE];
    cc_raw_reader *reader;
    ck_assert_msg(cc_raw_reader_open_chip(&reader, master, chip, message) ==
                      CC_OK,
                  "%s", message);
    if (info != NULL)
        cc_raw_reader_info(reader, info);
    size_t total = 0, n;
    do {
        ck_assert_int_eq(cc_raw_reader_read(reader, out + total * frame_pixels,
                                            out_numbers + total, 3, &n,
                                            message),
                         CC_OK);
        total += n;
    } while (n > 0);
    notices[0] = '\0';
    for (const char *notice = cc_raw_reader_notice(reader); notice != NULL;
         notice = cc_raw_reader_notice(reader)) {
        strncat(notices, notice, notices_size - strlen(notices) - 2);
        strcat(notices, "\n");
    }
    cc_raw_reader_stats(reader, stats);
    cc_raw_reader_close(reader);
    return total;
}

cc_clusters *test_process_in_batches(cc_finder *finder, const uint16_t *frames,
                                     size_t pixels, size_t n, size_t batch)
{
    cc_config config;
    ck_assert_int_eq(cc_finder_get_config(finder, &config), CC_OK);
    cc_clusters *all, *clusters;
    ck_assert_int_eq(cc_clusters_new(&all), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    cc__clusters_clear(all, config.cluster_size_x, config.cluster_size_y);
    for (size_t k = 0; k < n; k += batch) {
        size_t count = k + batch <= n ? batch : n - k;
        ck_assert_msg(cc_finder_process(finder, frames + k * pixels, NULL,
                                        count, clusters) == CC_OK,
                      "%s", cc_finder_last_error(finder));
        for (size_t f = 0; f < count; f++) {
            ck_assert_int_eq(cc__clusters_begin_frame(all, k + f), CC_OK);
            ck_assert_int_eq(cc__clusters_append(all, clusters, f, 0), CC_OK);
        }
    }
    cc_clusters_destroy(clusters);
    return all;
}
