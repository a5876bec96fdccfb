/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_common.c: the CUDA tests' pools of frames, trained finders and
 * comparisons (gpu.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

uint32_t frames_to_run(uint32_t wanted)
{
    const char *limit = getenv("CC_GPU_TEST_FRAMES");
    uint32_t most = limit != NULL ? (uint32_t)strtoul(limit, NULL, 10) : 0;
    return most != 0 && most < wanted ? most : wanted;
}

struct pool make_pool_of(const cc_simulator_config *model)
{
    struct pool pool = {model->rows, model->cols,
                        (size_t)model->rows * model->cols, NULL, NULL};
    pool.dark = malloc(DARK * pool.pixels * sizeof *pool.dark);
    pool.frames = cc_host_alloc(POOL * pool.pixels * sizeof *pool.frames);
    ck_assert(pool.dark != NULL && pool.frames != NULL);
    cc_simulator *simulator = test_simulator(model);
    ck_assert_int_eq(cc_simulator_dark_frames(simulator, 0, DARK, pool.dark),
                     CC_OK);
    ck_assert_int_eq(cc_simulator_frames(simulator, DARK, POOL, pool.frames,
                                         NULL),
                     CC_OK);
    cc_simulator_destroy(simulator);
    return pool;
}

struct pool make_pool(uint32_t rows, uint32_t cols, uint32_t photons)
{
    cc_simulator_config model = test_simulator_config(rows, cols, 77, photons);
    model.threads = 0;
    return make_pool_of(&model);
}

void free_pool(struct pool *pool)
{
    free(pool->dark);
    cc_host_free(pool->frames);
}

cc_finder *trained_finder(const struct pool *pool, cc_config config,
                          const uint8_t *mask)
{
    cc_finder *finder = test_finder(&config);
    if (mask != NULL)
        ck_assert_int_eq(cc_finder_set_mask(finder, mask), CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, pool->dark, DARK), CC_OK);
    return finder;
}

void assert_same_clusters(const cc_clusters *want, const cc_clusters *got)
{
    ck_assert_uint_eq(got->n_frames, want->n_frames);
    ck_assert_uint_eq(got->n_clusters, want->n_clusters);
    size_t cells = (size_t)want->size_x * want->size_y;
    for (size_t k = 0; k < want->n_frames; k++) {
        cc_frame_clusters a, b;
        cc_clusters_frame(want, k, &a);
        cc_clusters_frame(got, k, &b);
        ck_assert_uint_eq(b.frame_number, a.frame_number);
        ck_assert_uint_eq(b.count, a.count);
        ck_assert_uint_eq(b.dropped, a.dropped);
        ck_assert_mem_eq(b.x, a.x, a.count * sizeof *a.x);
        ck_assert_mem_eq(b.y, a.y, a.count * sizeof *a.y);
        ck_assert_mem_eq(b.values, a.values,
                         a.count * cells * sizeof *a.values);
    }
}

void assert_same_pedestal(cc_finder *want, cc_finder *got, size_t pixels,
                          double *scratch)
{
    ck_assert_int_eq(cc_finder_pedestal_maps(want, scratch, scratch + pixels),
                     CC_OK);
    ck_assert_int_eq(cc_finder_pedestal_maps(got, scratch + 2 * pixels,
                                             scratch + 3 * pixels),
                     CC_OK);
    ck_assert_mem_eq(scratch + 2 * pixels, scratch,
                     2 * pixels * sizeof *scratch);
}

const cc_energy_window window = {CC_ENERGY_SUM2X2, 650, 1000};

/* The calibration of the pool's first 32 frames, in the window, by a
 * finder of its own (so that the finders compared start imaging from their
 * first batch); clusters is scratch. */
cc_eta_calibration *pool_calibration(const struct pool *pool, cc_config config,
                                     cc_eta_function function,
                                     cc_clusters *clusters)
{
    config.backend = CC_BACKEND_CPU;
    cc_finder *flat = trained_finder(pool, config, NULL);
    char message[CC_MESSAGE_SIZE];
    cc_eta_calibration *calibration;
    ck_assert_int_eq(cc_eta_calibration_new(&calibration, function, 100,
                                            &window, message),
                     CC_OK);
    ck_assert_int_eq(cc_finder_process(flat, pool->frames, NULL, 32, clusters),
                     CC_OK);
    ck_assert_int_eq(cc_eta_calibration_add(calibration, clusters), CC_OK);
    cc_finder_destroy(flat);
    return calibration;
}

/* The streams of the GPU finders compared with one CPU finder. */
const uint32_t gpu_streams[GPUS] = {1, 2, 4, 3};

/* Runs n_frames of the pool through cpu and each of gpu[GPUS] in batches
 * of 1 to 100 frames; after the fourth batch, midway(gpu[g], g, context)
 * takes what each GPU finder keeps across batches. */
void process_alike(const struct pool *pool, cc_finder *cpu,
                   cc_finder *const *gpu, uint32_t n_frames,
                   cc_clusters *clusters,
                   void (*midway)(cc_finder *, int, void *), void *context)
{
    static const uint32_t batches[] = {100, 1, 3, 32, 64, 7};
    uint32_t done = 0;
    for (size_t b = 0; done < n_frames; b++) {
        uint32_t n = batches[b % 6] < n_frames - done ? batches[b % 6]
                                                      : n_frames - done;
        n = n < POOL ? n : POOL;
        const uint16_t *frames = pool->frames +
                                 ((done * 7) % (POOL - n + 1)) * pool->pixels;
        ck_assert_int_eq(cc_finder_process(cpu, frames, NULL, n, clusters),
                         CC_OK);
        for (int g = 0; g < GPUS; g++) {
            int rc = cc_finder_process(gpu[g], frames, NULL, n, clusters);
            ck_assert_msg(rc == CC_OK, "%s", cc_finder_last_error(gpu[g]));
        }
        if (b == 3) /* taking in the middle loses and doubles nothing */
            for (int g = 0; g < GPUS; g++)
                midway(gpu[g], g, context);
        done += n;
    }
}

/* GPUS CUDA finders of config on 1 to 4 streams, trained as
 * trained_finder trains. */
void gpu_finders(const struct pool *pool, cc_config config, cc_finder **gpu)
{
    config.backend = CC_BACKEND_CUDA;
    for (int g = 0; g < GPUS; g++) {
        config.streams = gpu_streams[g];
        gpu[g] = trained_finder(pool, config, NULL);
    }
}

/* The settings of the image and spectra tests: clusters side x side. */
cc_config accumulating_config(const struct pool *pool, uint32_t side)
{
    cc_config config = test_config(pool->rows, pool->cols);
    config.cluster_size_x = config.cluster_size_y = side;
    config.pedestal_frames = DARK;
    config.threads = 0;
    return config;
}

/* Empty spectra of a flat field of the pool's frames, around its line. */
cc_gain_calibration *pool_spectra(const struct pool *pool,
                                  cc_gain_events events)
{
    cc_gain_calibration_config config;
    cc_gain_calibration_config_init(&config);
    config.rows = pool->rows;
    config.cols = pool->cols;
    config.bins = SPECTRA_BINS;
    config.low = 500;
    config.high = 1100;
    config.events = events;
    char message[CC_MESSAGE_SIZE];
    cc_gain_calibration *spectra;
    ck_assert_int_eq(cc_gain_calibration_new(&spectra, &config, message),
                     CC_OK);
    return spectra;
}

/* got's spectra are want's, count for count; returns the photons. */
uint64_t assert_same_spectra(const cc_gain_calibration *want,
                             const cc_gain_calibration *got, size_t pixels)
{
    uint64_t photons[2], outside[2];
    cc_gain_calibration_entered(want, &photons[0], &outside[0]);
    cc_gain_calibration_entered(got, &photons[1], &outside[1]);
    ck_assert_uint_gt(photons[0], 0);
    ck_assert_uint_eq(photons[1], photons[0]);
    ck_assert_uint_eq(outside[1], outside[0]);
    for (size_t p = 0; p < pixels; p++)
        ck_assert_mem_eq(cc_gain_calibration_counts(got, p),
                         cc_gain_calibration_counts(want, p),
                         SPECTRA_BINS * sizeof(uint32_t));
    return photons[0];
}

/* Loop 0: a spectrum of sums and a hit map of the window's photons; 1:
 * of sum2x2, and every centre; 2: the spectrum alone; 3: the hit map
 * alone. Bins narrower than an ADU, a fractional edge and a range that
 * ends inside the photons' line test the bins' edges. */
struct tally new_tally(const struct pool *pool, int loop)
{
    struct tally made = {NULL, NULL};
    if (loop != 3)
        ck_assert_int_eq(cc_spectrum_new(&made.spectrum,
                                         loop == 1 ? CC_ENERGY_SUM2X2
                                                   : CC_ENERGY_SUM,
                                         loop == 2 ? 3001 : 400, 300.5, 800),
                         CC_OK);
    if (loop != 2) {
        ck_assert_int_eq(cc_hitmap_new(&made.hitmap, pool->rows, pool->cols),
                         CC_OK);
        if (loop != 1)
            ck_assert_int_eq(cc_hitmap_set_window(made.hitmap, &window), CC_OK);
    }
    return made;
}

void free_tally(struct tally *tally)
{
    cc_spectrum_destroy(tally->spectrum);
    cc_hitmap_destroy(tally->hitmap);
}

void take_tally(cc_finder *finder, int g, void *tallies)
{
    struct tally *tally = &((struct tally *)tallies)[g];
    ck_assert_int_eq(cc_finder_take_tally(finder, tally->spectrum,
                                          tally->hitmap),
                     CC_OK);
}

/* got counts as want, bin for bin and pixel for pixel; returns the
 * clusters counted. */
uint64_t assert_same_tally(const struct tally *want, const struct tally *got,
                           size_t pixels)
{
    uint64_t counted = 0;
    if (want->spectrum != NULL) {
        uint32_t bins = cc_spectrum_bins(want->spectrum);
        ck_assert_mem_eq(cc_spectrum_counts(got->spectrum),
                         cc_spectrum_counts(want->spectrum),
                         bins * sizeof(uint64_t));
        ck_assert_uint_eq(cc_spectrum_underflow(got->spectrum),
                          cc_spectrum_underflow(want->spectrum));
        ck_assert_uint_eq(cc_spectrum_overflow(got->spectrum),
                          cc_spectrum_overflow(want->spectrum));
        ck_assert_uint_gt(cc_spectrum_overflow(want->spectrum), 0);
        counted = cc_spectrum_underflow(want->spectrum) +
                  cc_spectrum_overflow(want->spectrum);
        for (uint32_t b = 0; b < bins; b++)
            counted += cc_spectrum_counts(want->spectrum)[b];
    }
    if (want->hitmap != NULL) {
        ck_assert_mem_eq(cc_hitmap_counts(got->hitmap),
                         cc_hitmap_counts(want->hitmap),
                         pixels * sizeof(uint32_t));
        ck_assert_uint_eq(cc_hitmap_outside(got->hitmap),
                          cc_hitmap_outside(want->hitmap));
        uint64_t hits = cc_hitmap_outside(want->hitmap);
        for (size_t p = 0; p < pixels; p++)
            hits += cc_hitmap_counts(want->hitmap)[p];
        ck_assert(counted == 0 || counted == hits);
        counted = hits;
    }
    ck_assert_uint_gt(counted, 0);
    return counted;
}

cc_config config_for(const struct pool *pool, int loop)
{
    cc_config config = test_config(pool->rows, pool->cols);
    config.cluster_size_x = config.cluster_size_y = loop % 2 ? 9 : 3;
    config.precision = loop / 2 ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT;
    return config;
}

void add_gpu_case(Suite *suite, TCase *tcase)
{
    tcase_set_timeout(tcase, 3600);
    suite_add_tcase(suite, tcase);
}
