/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu.h: what the CUDA tests (tests/gpu, gpu_*.c) share: pools of
 * simulated frames, finders trained on them, and the comparisons of a
 * CUDA finder's results with a CPU finder's, byte for byte.
 */
#ifndef CC_TESTS_GPU_H
#define CC_TESTS_GPU_H

#include "config.h"

#include <check.h>
#include <stdint.h>

#include "frames.h"
#include "finder/finder.h"

enum { POOL = 128, DARK = 100, GPUS = 4 };

/* A pool of frames with photons, and dark frames to train on. */
struct pool {
    uint32_t rows, cols;
    size_t pixels;
    uint16_t *dark, *frames; /* frames is page-locked */
};

/* CC_GPU_TEST_FRAMES shortens the runs (for compute-sanitizer): wanted,
 * or that limit when lower. */
uint32_t frames_to_run(uint32_t wanted);
/* A pool of frames of model (or of rows x cols with photons a frame) with
 * DARK dark frames; freed with free_pool. */
struct pool make_pool_of(const cc_simulator_config *model);
struct pool make_pool(uint32_t rows, uint32_t cols, uint32_t photons);
void free_pool(struct pool *pool);
/* A finder of config trained on the pool's dark frames (mask: NULL or
 * the pool's pixels). */
cc_finder *trained_finder(const struct pool *pool, cc_config config,
                          const uint8_t *mask);
void assert_same_clusters(const cc_clusters *want, const cc_clusters *got);
void assert_same_pedestal(cc_finder *want, cc_finder *got, size_t pixels,
                          double *scratch);

/* The pool's settings for loop number loop: clusters 3x3 (even loops) or
 * 9x9 (odd), in float (loops 0, 1) or double. */
cc_config config_for(const struct pool *pool, int loop);

/* The energy window of the image, spectra and tally tests. */
extern const cc_energy_window window;
/* The streams of the GPU finders compared with one CPU finder. */
extern const uint32_t gpu_streams[GPUS];
cc_eta_calibration *pool_calibration(const struct pool *pool, cc_config config,
                                     cc_eta_function function,
                                     cc_clusters *clusters);
void process_alike(const struct pool *pool, cc_finder *cpu,
                   cc_finder *const *gpu, uint32_t n_frames,
                   cc_clusters *clusters,
                   void (*midway)(cc_finder *, int, void *), void *context);
void gpu_finders(const struct pool *pool, cc_config config, cc_finder **gpu);
cc_config accumulating_config(const struct pool *pool, uint32_t side);

enum { SPECTRA_BINS = 40 };
cc_gain_calibration *pool_spectra(const struct pool *pool,
                                  cc_gain_events events);
uint64_t assert_same_spectra(const cc_gain_calibration *want,
                             const cc_gain_calibration *got, size_t pixels);

/* A spectrum and a hit map that count as the finder's (cc_finder_set_tally). */
struct tally {
    cc_spectrum *spectrum;
    cc_hitmap *hitmap;
};
struct tally new_tally(const struct pool *pool, int loop);
void free_tally(struct tally *tally);
void take_tally(cc_finder *finder, int g, void *tallies);
uint64_t assert_same_tally(const struct tally *want, const struct tally *got,
                           size_t pixels);

/* A case of an hour's time out, added to suite. */
void add_gpu_case(Suite *suite, TCase *tcase);
/* Each file's cases, added to the suite (one case per kind of check, so
 * that CK_RUN_CASE can spread a slow run over several processes). */
void gpu_identity_cases(Suite *suite);
void gpu_accumulator_cases(Suite *suite);
void gpu_move_cases(Suite *suite);
void gpu_fault_cases(Suite *suite);

#endif
