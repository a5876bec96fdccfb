/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frames.h: hand-built frames for the unit tests. A "flat" finder is
 * trained on two frames BASE-1 and BASE+1, which gives every pixel X0 =
 * BASE, r = 0 and rms = 1 exactly, so a frame of BASE + k holds v = k.
 */
#ifndef FRAMES_H
#define FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "clustercore.h"

#define BASE 1000

struct flat {
    cc_finder *finder;
    cc_clusters *clusters;
    uint16_t *frame; /* BASE everywhere; tests set signals on it */
    uint32_t rows, cols;
    double *rms; /* scratch for pedestal maps */
};

/* The default configuration for rows x cols on the CPU backend. */
cc_config test_config(uint32_t rows, uint32_t cols);
/* A new finder for config; the test fails with the library's message if
 * it cannot be made. */
cc_finder *test_finder(const cc_config *config);

/* The simulator's defaults for rows x cols, seed and flux (photons per
 * frame); a new simulator for a configuration, or the test fails. */
cc_simulator_config test_simulator_config(uint32_t rows, uint32_t cols,
                                          uint64_t seed, double flux);
cc_simulator *test_simulator(const cc_simulator_config *config);
/* dark dark frames (numbers 0 on) then data frames (first_data on) of
 * pixels pixels each from simulator, in one buffer to free. */
uint16_t *test_simulated_run(cc_simulator *simulator, size_t pixels,
                             uint32_t dark, uint64_t first_data, uint32_t data);

/* One frame (number 7) of n clusters of size_x * size_y values each, all
 * centred at (10, 20) unless xy gives (x, y) pairs. */
cc_clusters *test_clusters(uint32_t size_x, uint32_t size_y, size_t n,
                           const int32_t *values, const uint16_t *xy);

/* A scratch folder under /tmp with one file's path in it, for the file
 * tests' fixtures: scratch_open makes the folder, scratch_close removes
 * the file and the folder. */
struct scratch {
    char directory[64];
    char path[256];
};
void scratch_open(struct scratch *scratch, const char *file_name);
void scratch_close(struct scratch *scratch);
/* Writes size bytes to path, or the test fails. */
void test_write_file(const char *path, const void *data, size_t size);
/* The bytes of path, with one spare byte allocated after them (to make
 * an overlong copy), or the test fails. */
unsigned char *test_read_file(const char *path, size_t *size);
/* Replaces the first occurrence of from by to in the text file at path,
 * or the test fails. */
void test_edit_file(const char *path, const char *from, const char *to);
/* Removes a folder that mkdtemp made of directory, and puts back the
 * XXXXXX of its template for the next. */
void test_remove_directory(char *directory);

/* Reads the whole raw run of master, opened with chip, into out
 * (frame_pixels a frame) and out_numbers; the notices joined, one a line,
 * into notices; its stats and, unless NULL, its info. Returns the frames
 * read; the test fails if the run does not open or a read fails. */
size_t test_read_raw_run(const char *master, cc_raw_chip chip,
                         size_t frame_pixels, uint16_t *out,
                         uint64_t *out_numbers, char *notices,
                         size_t notices_size, cc_raw_stats *stats,
                         cc_raw_info *info);

/* The clusters of frames [0, n) (pixels each, back to back) processed
 * `batch` at a time, gathered into one list numbered 0.. in order; the
 * test fails if a batch fails. */
cc_clusters *test_process_in_batches(cc_finder *finder, const uint16_t *frames,
                                     size_t pixels, size_t n, size_t batch);

/* Creates and trains a flat finder (nsigma 5) and an empty frame. */
void flat_open(struct flat *flat, uint32_t rows, uint32_t cols, uint32_t size_x,
               uint32_t size_y, cc_precision precision, uint32_t threads);
void flat_close(struct flat *flat);
/* Resets the finder and trains it on two frames of the given raw values. */
void flat_retrain(struct flat *flat, uint16_t first, uint16_t second);
/* Sets v = signal at (x, y) of the flat frame. */
void flat_set(struct flat *flat, uint32_t x, uint32_t y, int signal);
/* Processes the flat frame and returns its clusters. */
cc_frame_clusters flat_process(struct flat *flat);
/* The rms of pixel (x, y) after the last frame. */
double flat_rms(struct flat *flat, uint32_t x, uint32_t y);
/* Index of the cluster centred at (x, y) in frame, or -1. */
int find_cluster(const cc_frame_clusters *frame, uint32_t x, uint32_t y);

#endif
