/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu.c: the CUDA backend against the CPU backend, byte for byte: the
 * clusters of every frame and the pedestal after every batch, in both
 * precisions, for 1 to 8 streams, several launch shapes and frames a
 * launch, batch sizes from 1 to 100 and frame sizes that are and are not
 * multiples of a tile; the bad-pixel mask, the interpolated image and a
 * flat field's per-pixel spectra; and
 * GPU failures planted with CC_CUDA_FAULT, survived or reported; a pixel
 * whose decision turns on one rounding of its noise; common mode, with
 * its per-region figures.
 * Exits 77 (Automake's SKIP) with the reason when no GPU answers.
 * CC_GPU_TEST_FRAMES shortens the runs (for compute-sanitizer).
 */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frames.h"
#include "finder/finder.h"

enum { POOL = 128, DARK = 100, GPUS = 4 };

static uint32_t frames_to_run(uint32_t wanted)
{
    const char *limit = getenv("CC_GPU_TEST_FRAMES");
    uint32_t most = limit != NULL ? (uint32_t)strtoul(limit, NULL, 10) : 0;
    return most != 0 && most < wanted ? most : wanted;
}

/* A pool of frames with photons, and dark frames to train on. */
struct pool {
    uint32_t rows, cols;
    size_t pixels;
    uint16_t *dark, *frames; /* frames is page-locked */
};

static struct pool make_pool_of(const cc_simulator_config *model)
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

static struct pool make_pool(uint32_t rows, uint32_t cols, uint32_t photons)
{
    cc_simulator_config model = test_simulator_config(rows, cols, 77, photons);
    model.threads = 0;
    return make_pool_of(&model);
}

static void free_pool(struct pool *pool)
{
    free(pool->dark);
    cc_host_free(pool->frames);
}

static cc_finder *trained_finder(const struct pool *pool, cc_config config,
                                 const uint8_t *mask)
{
    cc_finder *finder = test_finder(&config);
    if (mask != NULL)
        ck_assert_int_eq(cc_finder_set_mask(finder, mask), CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, pool->dark, DARK), CC_OK);
    return finder;
}

static void assert_same_clusters(const cc_clusters *want,
                                 const cc_clusters *got)
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

static void assert_same_pedestal(cc_finder *want, cc_finder *got,
                                 size_t pixels, double *scratch)
{
    ck_assert_int_eq(cc_finder_pedestal_maps(want, scratch, scratch + pixels),
                     CC_OK);
    ck_assert_int_eq(cc_finder_pedestal_maps(got, scratch + 2 * pixels,
                                             scratch + 3 * pixels),
                     CC_OK);
    ck_assert_mem_eq(scratch + 2 * pixels, scratch, 2 * pixels * sizeof *scratch);
}

/* The common-mode figures of every region (docs/spec.md §8), byte for
 * byte; none when the correction is off. */
static void assert_same_common_mode(const cc_finder *want,
                                    const cc_finder *got,
                                    const cc_config *config)
{
    uint32_t n = cc_common_mode_regions(config);
    cc_common_mode_region *a = calloc(n + 1, sizeof *a);
    cc_common_mode_region *b = calloc(n + 1, sizeof *b);
    ck_assert(a != NULL && b != NULL);
    ck_assert_int_eq(cc_finder_common_mode(want, a, n), CC_OK);
    ck_assert_int_eq(cc_finder_common_mode(got, b, n), CC_OK);
    ck_assert_mem_eq(b, a, n * sizeof *a);
    free(a);
    free(b);
}

/* Frames estimated and not, over all regions. */
static void common_mode_frames(const cc_finder *finder,
                               const cc_config *config, uint64_t *estimated,
                               uint64_t *unestimated)
{
    uint32_t n = cc_common_mode_regions(config);
    cc_common_mode_region *regions = calloc(n + 1, sizeof *regions);
    ck_assert_ptr_nonnull(regions);
    ck_assert_int_eq(cc_finder_common_mode(finder, regions, n), CC_OK);
    *estimated = *unestimated = 0;
    for (uint32_t r = 0; r < n; r++) {
        *estimated += regions[r].frames_estimated;
        *unestimated += regions[r].frames_unestimated;
    }
    free(regions);
}

/* Runs n_frames through a CPU finder and GPUS CUDA finders with the given
 * streams and launch shapes, in batches of varying size, comparing the
 * clusters of every batch and the pedestal after it; some batches (7
 * frames as a list, 33 from pageable memory) are given as pedestal
 * frames (docs/spec.md §2.7), photons and all, and must move the
 * pedestal alike. Every finder sums the analog image (§4.8), compared
 * after every batch. Batches come from
 * page-locked memory, pageable memory and lists of frames. When masks is
 * not NULL, every finder takes masks[0] before training and masks[1]
 * (while READY: a new upload) after the fourth batch. */
static void lockstep(const struct pool *pool, cc_config config,
                     uint32_t n_frames, const uint32_t streams[GPUS],
                     const struct cc__cuda_tuning tunings[GPUS],
                     const uint8_t *const *masks, const double *const *gains,
                     cc_gain_unit unit)
{
    static const uint32_t batches[] = {1, 3, 32, 33, 64, 100, 7, 2};
    config.backend = CC_BACKEND_CPU;
    config.threads = 0;
    config.pedestal_frames = DARK;
    const uint8_t *first_mask = masks != NULL ? masks[0] : NULL;
    cc_finder *cpu = trained_finder(pool, config, first_mask);
    cc_finder *gpu[GPUS];
    config.backend = CC_BACKEND_CUDA;
    for (int g = 0; g < GPUS; g++) {
        config.streams = streams[g];
        gpu[g] = trained_finder(pool, config, first_mask);
        ck_assert_int_eq(cc__finder_tune_cuda(gpu[g], &tunings[g]), CC_OK);
    }
    cc_finder *const *all[2] = {&cpu, gpu};
    const int counts[2] = {1, GPUS};
    for (int a = 0; gains != NULL && a < 2; a++)
        for (int g = 0; g < counts[a]; g++)
            ck_assert_int_eq(cc_finder_set_gain(all[a][g], gains[0], unit),
                             CC_OK);
    for (int a = 0; a < 2; a++)
        for (int g = 0; g < counts[a]; g++)
            ck_assert_int_eq(cc_finder_set_analog(all[a][g], 1), CC_OK);
    double *analog = malloc(2 * pool->pixels * sizeof *analog);
    ck_assert_ptr_nonnull(analog);
    cc_clusters *want, *got;
    ck_assert_int_eq(cc_clusters_new(&want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&got), CC_OK);
    uint16_t *pageable = malloc(100 * pool->pixels * sizeof *pageable);
    const uint16_t *list[100];
    double *scratch = malloc(4 * pool->pixels * sizeof *scratch);
    ck_assert(pageable != NULL && scratch != NULL);
    uint32_t done = 0;
    for (size_t b = 0; done < n_frames; b++) {
        uint32_t n = batches[b % (sizeof batches / sizeof *batches)];
        n = n < n_frames - done ? n : n_frames - done;
        n = n < POOL ? n : POOL;
        uint32_t first = (done * 7) % (POOL - n + 1);
        const uint16_t *frames = pool->frames + first * pool->pixels;
        if (b % 2 == 1) { /* every other batch from pageable memory */
            memcpy(pageable, frames, n * pool->pixels * sizeof *pageable);
            frames = pageable;
        }
        /* Every fourth batch goes to the GPUs as a list: runs of adjacent
         * page-locked frames broken by pairs of pageable copies. */
        bool as_list = b % 4 == 2;
        for (uint32_t i = 0; as_list && i < n; i++) {
            list[i] = frames + i * pool->pixels;
            if (i % 5 >= 3) {
                memcpy(pageable + i * pool->pixels, list[i],
                       pool->pixels * sizeof *pageable);
                list[i] = pageable + i * pool->pixels;
            }
        }
        if (masks != NULL && b == 4) {
            ck_assert_int_eq(cc_finder_set_mask(cpu, masks[1]), CC_OK);
            for (int g = 0; g < GPUS; g++)
                ck_assert_int_eq(cc_finder_set_mask(gpu[g], masks[1]), CC_OK);
        }
        /* A second map while READY, then none: each takes effect on the
         * next batch on both backends. */
        for (int a = 0; gains != NULL && (b == 5 || b == 11) && a < 2; a++)
            for (int g = 0; g < counts[a]; g++)
                ck_assert_int_eq(cc_finder_set_gain(all[a][g],
                                                    b == 5 ? gains[1] : NULL,
                                                    unit),
                                 CC_OK);
        bool pedestal_only = b % 8 == 6 || b % 16 == 3;
        if (pedestal_only)
            ck_assert_int_eq(cc_finder_add_pedestal(cpu, frames, n), CC_OK);
        else
            ck_assert_int_eq(cc_finder_process(cpu, frames, NULL, n, want),
                             CC_OK);
        for (int g = 0; g < GPUS; g++) {
            int rc;
            if (pedestal_only)
                rc = as_list ? cc_finder_add_pedestal_list(gpu[g], list, n)
                             : cc_finder_add_pedestal(gpu[g], frames, n);
            else
                rc = as_list
                         ? cc_finder_process_list(gpu[g], list, NULL, n, got)
                         : cc_finder_process(gpu[g], frames, NULL, n, got);
            ck_assert_msg(rc == CC_OK, "%s", cc_finder_last_error(gpu[g]));
            if (!pedestal_only)
                assert_same_clusters(want, got);
            assert_same_pedestal(cpu, gpu[g], pool->pixels, scratch);
            assert_same_common_mode(cpu, gpu[g], &config);
        }
        /* The CPU's analog sums of this batch, then each GPU's. */
        uint64_t frames_summed[2] = {0, 0};
        memset(analog, 0, pool->pixels * sizeof *analog);
        ck_assert_int_eq(cc_finder_take_analog(cpu, analog, &frames_summed[0]),
                         CC_OK);
        ck_assert_uint_eq(frames_summed[0], pedestal_only ? 0 : n);
        for (int g = 0; g < GPUS; g++) {
            double *gpu_sums = analog + pool->pixels;
            memset(gpu_sums, 0, pool->pixels * sizeof *gpu_sums);
            frames_summed[1] = 0;
            ck_assert_int_eq(cc_finder_take_analog(gpu[g], gpu_sums,
                                                   &frames_summed[1]),
                             CC_OK);
            ck_assert_uint_eq(frames_summed[1], frames_summed[0]);
            ck_assert_mem_eq(gpu_sums, analog,
                             pool->pixels * sizeof *gpu_sums);
        }
        done += n;
    }
    cc_finder_stats stats;
    cc_finder_get_stats(cpu, &stats);
    ck_assert_uint_eq(stats.frames_processed + stats.frames_pedestal, n_frames);
    ck_assert_uint_gt(stats.frames_pedestal, 0);
    ck_assert_uint_gt(stats.clusters, 0);
    printf("  %ux%u, %ux%u clusters, %s: %u frames, %llu clusters "
           "identical on CPU and GPU, %llu of them pedestal frames "
           "(streams %u %u %u %u)%s",
           pool->rows, pool->cols, config.cluster_size_x,
           config.cluster_size_y,
           config.precision == CC_PRECISION_DOUBLE ? "double" : "float",
           n_frames, (unsigned long long)stats.clusters,
           (unsigned long long)stats.frames_pedestal, streams[0],
           streams[1], streams[2], streams[3],
           masks != NULL ? ", masked" : "");
    if (gains != NULL)
        printf(", gain map in %s", cc_gain_unit_name(unit));
    if (config.common_mode != CC_COMMON_MODE_NONE) {
        uint64_t estimated, unestimated;
        common_mode_frames(cpu, &config, &estimated, &unestimated);
        printf(", common mode %s: %llu region-frames estimated, %llu not",
               cc_common_mode_name(config.common_mode),
               (unsigned long long)estimated,
               (unsigned long long)unestimated);
        /* The common-mode cases flood a region of some frames. */
        ck_assert_uint_gt(estimated, 0);
        ck_assert_uint_gt(unestimated, 0);
    }
    printf("\n");
    free(pageable);
    free(scratch);
    free(analog);
    cc_clusters_destroy(want);
    cc_clusters_destroy(got);
    cc_finder_destroy(cpu);
    for (int g = 0; g < GPUS; g++)
        cc_finder_destroy(gpu[g]);
}

static cc_config config_for(const struct pool *pool, int loop)
{
    cc_config config = test_config(pool->rows, pool->cols);
    config.cluster_size_x = config.cluster_size_y = loop % 2 ? 9 : 3;
    config.precision = loop / 2 ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT;
    return config;
}

/* 10,000 frames of 400 x 400 at 3x3 and 9x9, float and double, on 1, 2, 4
 * and 8 streams with four launch shapes and both ways of issuing copies. */
START_TEST(identical_full_frames)
{
    static const uint32_t streams[GPUS] = {1, 2, 4, 8};
    static const struct cc__cuda_tuning tunings[GPUS] = {
        {0, 0, 0, 0, 0, 0},
        {16, 3, 4, 64, 128, CC__COPIES_EACH},
        {7, 8, 1, 400, 512, CC__COPIES_BATCHED},
        {64, 5, 2, 32, 64, CC__COPIES_BATCHED}};
    struct pool pool = make_pool(400, 400, 2330);
    lockstep(&pool, config_for(&pool, _i), frames_to_run(10000), streams,
             tunings, NULL, NULL, CC_GAIN_RELATIVE);
    free_pool(&pool);
}
END_TEST

/* Reduced readout (160 rows) and a frame whose sides are not multiples of
 * any tile (37 x 53), whose frames in a list lie at odd multiples of
 * 2 bytes. */
START_TEST(identical_odd_frames)
{
    static const uint32_t streams[GPUS] = {1, 3, 2, 5};
    static const struct cc__cuda_tuning tunings[GPUS] = {
        {0, 0, 0, 0, 0, 0},
        {5, 2, 3, 17, 96, CC__COPIES_BATCHED},
        {1, 1, 8, 128, 256, CC__COPIES_BATCHED},
        {33, 16, 1, 64, 32, CC__COPIES_EACH}};
    struct pool pool = _i < 4 ? make_pool(160, 400, 930) : make_pool(37, 53, 30);
    lockstep(&pool, config_for(&pool, _i % 4), frames_to_run(2000), streams,
             tunings, NULL, NULL, CC_GAIN_RELATIVE);
    free_pool(&pool);
}
END_TEST

/* A per-frame cap stores the same clusters and counts the same drops. */
START_TEST(identical_under_cap)
{
    static const uint32_t streams[GPUS] = {1, 2, 4, 8};
    static const struct cc__cuda_tuning tunings[GPUS] = {{0, 0, 0, 0, 0, 0}};
    struct pool pool = make_pool(400, 400, 2330);
    cc_config config = config_for(&pool, _i);
    config.max_clusters = 1000;
    lockstep(&pool, config, frames_to_run(300), streams, tunings, NULL, NULL,
             CC_GAIN_RELATIVE);
    free_pool(&pool);
}
END_TEST

/* A bad-pixel mask (docs/spec.md §7.1) changes the same decisions on both
 * backends: a user's mask of scattered pixels, a block and a frame edge,
 * the rms rule on top, then another mask while processing. */
START_TEST(identical_with_mask)
{
    static const uint32_t streams[GPUS] = {1, 2, 3, 8};
    static const struct cc__cuda_tuning tunings[GPUS] = {
        {0, 0, 0, 0, 0, 0}, {9, 4, 3, 64, 96, 0}, {1, 1, 8, 128, 256, 0},
        {40, 16, 1, 64, 32, 0}};
    struct pool pool = make_pool(160, 400, 930);
    uint8_t *masks[2];
    for (int m = 0; m < 2; m++) {
        masks[m] = malloc(pool.pixels);
        ck_assert_ptr_nonnull(masks[m]);
        for (size_t p = 0; p < pool.pixels; p++) {
            size_t row = p / pool.cols, col = p % pool.cols;
            bool scattered = (p * 2654435761u + (size_t)m * 977) % 53 == 0;
            bool block = row >= 40 + 30 * (size_t)m &&
                         row < 60 + 30 * (size_t)m && col >= 100 && col < 131;
            bool edge = m == 0 ? col == 0 : row == pool.rows - 1;
            masks[m][p] = scattered || block || edge;
        }
    }
    cc_config config = config_for(&pool, _i);
    config.mask_rms_factor = 1.4; /* noise is 15..50 ADU: about a sixth */
    lockstep(&pool, config, frames_to_run(600), streams, tunings,
             (const uint8_t *const *)masks, NULL, CC_GAIN_RELATIVE);
    free(masks[0]);
    free(masks[1]);
    free_pool(&pool);
}
END_TEST

/* Common mode (docs/spec.md §8) for each kind of region, 3x3 and 9x9,
 * float and double: 30 ADU of it simulated, masked pixels on the regions'
 * edges, a mask changed while processing, and every 16th frame from the
 * first with one region flooded with charge, too few of whose pixels are
 * then quiet. */
/* Charge over a whole region of every 16th frame (the first batch has
 * frame 0): too few quiet pixels, so that region goes unestimated, as
 * lockstep checks of a run with common mode. */
static void flood_a_region(struct pool *pool, cc_common_mode mode)
{
    struct cc__regions regions = cc__regions_of((int)mode, pool->rows,
                                                pool->cols);
    uint32_t row0, row1, col0, col1;
    cc__region_rectangle(&regions, regions.count / 2 + 1, &row0, &row1, &col0,
                         &col1);
    for (size_t k = 0; k < POOL; k += 16)
        for (uint32_t row = row0; row < row1; row++)
            for (uint32_t col = col0; col < col1; col++)
                pool->frames[k * pool->pixels + (size_t)row * pool->cols +
                             col] += 3000;
}

START_TEST(identical_common_mode)
{
    static const uint32_t streams[GPUS] = {1, 2, 3, 8};
    static const struct cc__cuda_tuning tunings[GPUS] = {
        {0, 0, 0, 0, 0, 0}, {9, 4, 3, 64, 96, 0}, {1, 1, 8, 128, 256, 0},
        {40, 16, 1, 64, 32, 0}};
    const cc_common_mode mode = (cc_common_mode)(1 + _i % 3);
    cc_simulator_config model = test_simulator_config(160, 400, 77, 930);
    model.threads = 0;
    model.common_mode = mode;
    model.common_mode_rms = 30;
    struct pool pool = make_pool_of(&model);
    flood_a_region(&pool, mode);
    uint8_t *masks[2];
    for (int m = 0; m < 2; m++) {
        masks[m] = malloc(pool.pixels);
        ck_assert_ptr_nonnull(masks[m]);
        for (size_t p = 0; p < pool.pixels; p++) {
            size_t row = p / pool.cols, col = p % pool.cols;
            bool scattered = (p * 2654435761u + (size_t)m * 977) % 47 == 0;
            bool supercolumn_edge = col % 25 == (m == 0 ? 24 : 0);
            bool half_edge = row == pool.rows / 2 - (size_t)m;
            masks[m][p] = scattered || (supercolumn_edge && row % 3 == 0) ||
                          (half_edge && col % 2 == 0);
        }
    }
    cc_config config = config_for(&pool, _i % 4);
    config.common_mode = mode;
    lockstep(&pool, config, frames_to_run(600), streams, tunings,
             (const uint8_t *const *)masks, NULL, CC_GAIN_RELATIVE);
    free(masks[0]);
    free(masks[1]);
    free_pool(&pool);
}
END_TEST

/* A gain map (docs/spec.md §9) on both backends, with common mode and a
 * mask: 3x3 and 9x9, float and double, relative and in ADU per keV. */
START_TEST(identical_gain)
{
    static const uint32_t streams[GPUS] = {1, 2, 3, 8};
    static const struct cc__cuda_tuning tunings[GPUS] = {
        {0, 0, 0, 0, 0, 0}, {9, 4, 3, 64, 96, 0}, {1, 1, 8, 128, 256, 0},
        {40, 16, 1, 64, 32, 0}};
    cc_simulator_config model = test_simulator_config(160, 400, 78, 930);
    model.threads = 0;
    model.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    model.common_mode_rms = 30;
    model.gain_spread = 0.08;
    struct pool pool = make_pool_of(&model);
    flood_a_region(&pool, model.common_mode);
    cc_simulator *simulator = test_simulator(&model);
    double *gains[2];
    uint8_t *mask = malloc(pool.pixels);
    ck_assert_ptr_nonnull(mask);
    const cc_gain_unit unit = _i < 4 ? CC_GAIN_RELATIVE : CC_GAIN_ADU_PER_KEV;
    for (int m = 0; m < 2; m++) {
        gains[m] = malloc(pool.pixels * sizeof *gains[m]);
        ck_assert_ptr_nonnull(gains[m]);
        ck_assert_int_eq(cc_simulator_gain_map(simulator, gains[m]), CC_OK);
        for (size_t p = 0; p < pool.pixels; p++) {
            /* The second map: the first a little off, as a recalibration. */
            gains[m][p] *= (unit == CC_GAIN_ADU_PER_KEV ? model.gain : 1) *
                           (m == 0 ? 1 : 1 + 0.01 * (double)(p % 7));
            mask[p] = (p * 2654435761u) % 61 == 0;
        }
    }
    cc_simulator_destroy(simulator);
    cc_config config = config_for(&pool, _i % 4);
    config.common_mode = CC_COMMON_MODE_SUPERCOLUMN;
    const uint8_t *masks[2] = {mask, mask};
    lockstep(&pool, config, frames_to_run(600), streams, tunings, masks,
             (const double *const *)gains, unit);
    free(gains[0]);
    free(gains[1]);
    free(mask);
    free_pool(&pool);
}
END_TEST

static const cc_energy_window window = {CC_ENERGY_SUM2X2, 650, 1000};

/* The calibration of the pool's first 32 frames, in the window, by a
 * finder of its own (so that the finders compared start imaging from their
 * first batch); clusters is scratch. */
static cc_eta_calibration *pool_calibration(const struct pool *pool,
                                            cc_config config,
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
static const uint32_t gpu_streams[GPUS] = {1, 2, 4, 3};

/* Runs n_frames of the pool through cpu and each of gpu[GPUS] in batches
 * of 1 to 100 frames; after the fourth batch, midway(gpu[g], g, context)
 * takes what each GPU finder keeps across batches. */
static void process_alike(const struct pool *pool, cc_finder *cpu,
                          cc_finder *const *gpu, uint32_t n_frames,
                          cc_clusters *clusters,
                          void (*midway)(cc_finder *, int, void *),
                          void *context)
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
static void gpu_finders(const struct pool *pool, cc_config config,
                        cc_finder **gpu)
{
    config.backend = CC_BACKEND_CUDA;
    for (int g = 0; g < GPUS; g++) {
        config.streams = gpu_streams[g];
        gpu[g] = trained_finder(pool, config, NULL);
    }
}

/* The settings of the image and spectra tests: clusters side x side. */
static cc_config accumulating_config(const struct pool *pool, uint32_t side)
{
    cc_config config = test_config(pool->rows, pool->cols);
    config.cluster_size_x = config.cluster_size_y = side;
    config.pedestal_frames = DARK;
    config.threads = 0;
    return config;
}

static void take_image(cc_finder *finder, int g, void *images)
{
    ck_assert_int_eq(
        cc_finder_take_image(finder, ((cc_interpolator **)images)[g]), CC_OK);
}

/* The image a CUDA finder makes on the GPU is the CPU finder's, byte for
 * byte, with the same statistics: eta2, eta2full and eta3 at 3x3 and 9x9
 * (loop), on 1 to 4 streams, over batches of 1 to 100 frames, one of
 * them retaken halfway; at 6,000 photons a frame the first batches
 * outgrow the GPU's cluster arrays and run again, which must not image
 * their photons twice. */
START_TEST(identical_images)
{
    const cc_eta_function function = (cc_eta_function)(_i % 3);
    const uint32_t side = _i < 3 ? 3 : 9;
    struct pool pool = make_pool(400, 400, _i % 2 ? 6000 : 2330);
    cc_config config = accumulating_config(&pool, side);
    cc_finder *cpu = trained_finder(&pool, config, NULL);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    cc_eta_calibration *calibration =
        pool_calibration(&pool, config, function, clusters);
    char message[CC_MESSAGE_SIZE];
    cc_interpolator *want, *got[GPUS];
    ck_assert_int_eq(cc_interpolator_new(&want, calibration, &window, 400, 400,
                                         5, message),
                     CC_OK);
    for (int g = 0; g < GPUS; g++)
        ck_assert_int_eq(cc_interpolator_new(&got[g], calibration, &window,
                                             400, 400, 5, message),
                         CC_OK);
    cc_finder *gpu[GPUS];
    gpu_finders(&pool, config, gpu);
    for (int g = 0; g < GPUS; g++)
        ck_assert_int_eq(cc_finder_set_interpolator(gpu[g], want), CC_OK);
    ck_assert_int_eq(cc_finder_set_interpolator(cpu, want), CC_OK);
    uint32_t n_frames = frames_to_run(600);
    process_alike(&pool, cpu, gpu, n_frames, clusters, take_image, got);
    ck_assert_int_eq(cc_finder_take_image(cpu, want), CC_OK);
    cc_image_stats a;
    cc_interpolator_stats(want, &a);
    ck_assert_uint_gt(a.photons, 0);
    for (int g = 0; g < GPUS; g++) {
        ck_assert_int_eq(cc_finder_take_image(gpu[g], got[g]), CC_OK);
        cc_image_stats b;
        cc_interpolator_stats(got[g], &b);
        ck_assert_uint_eq(b.photons, a.photons);
        ck_assert_uint_eq(b.uninterpolable, a.uninterpolable);
        ck_assert_uint_eq(b.clipped, a.clipped);
        ck_assert_uint_eq(b.outside, a.outside);
        ck_assert_mem_eq(cc_interpolator_image(got[g]),
                         cc_interpolator_image(want),
                         2000 * 2000 * sizeof(uint32_t));
        cc_interpolator_destroy(got[g]);
    }
    static const char *const names[] = {"eta2", "eta2full", "eta3"};
    printf("  %s %ux%u: %u frames, %llu photons imaged (%llu "
           "uninterpolable), image identical on CPU and GPU\n",
           names[function], side, side, n_frames,
           (unsigned long long)a.photons,
           (unsigned long long)a.uninterpolable);
    for (int g = 0; g < GPUS; g++)
        cc_finder_destroy(gpu[g]);
    cc_finder_destroy(cpu);
    cc_interpolator_destroy(want);
    cc_eta_calibration_destroy(calibration);
    cc_clusters_destroy(clusters);
    free_pool(&pool);
}
END_TEST

enum { SPECTRA_BINS = 40 };

/* Empty spectra of a flat field of the pool's frames, around its line. */
static cc_gain_calibration *pool_spectra(const struct pool *pool,
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

static void take_spectra(cc_finder *finder, int g, void *spectra)
{
    ck_assert_int_eq(
        cc_finder_take_gain_calibration(finder,
                                        ((cc_gain_calibration **)spectra)[g]),
        CC_OK);
}

/* got's spectra are want's, count for count; returns the photons. */
static uint64_t assert_same_spectra(const cc_gain_calibration *want,
                                    const cc_gain_calibration *got,
                                    size_t pixels)
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

/* The spectra of a flat field a CUDA finder enters on the GPU are the CPU
 * finder's, count for count: single events and every cluster's sum, at
 * 3x3 and 9x9, on 1 to 4 streams, taken once halfway; at 6,000 photons a
 * frame the first batches outgrow the GPU's cluster arrays and run again,
 * which must not enter their photons twice. */
START_TEST(identical_spectra)
{
    const uint32_t side = _i < 2 ? 3 : 9;
    const cc_gain_events events = _i == 1 || _i == 2 ? CC_GAIN_EVENTS_SUM
                                                     : CC_GAIN_EVENTS_SINGLE;
    struct pool pool = make_pool(400, 400, _i % 2 ? 6000 : 2330);
    cc_config config = accumulating_config(&pool, side);
    cc_finder *cpu = trained_finder(&pool, config, NULL);
    cc_gain_calibration *want = pool_spectra(&pool, events), *got[GPUS];
    ck_assert_int_eq(cc_finder_set_gain_calibration(cpu, want), CC_OK);
    cc_finder *gpu[GPUS];
    gpu_finders(&pool, config, gpu);
    for (int g = 0; g < GPUS; g++) {
        ck_assert_int_eq(cc_finder_set_gain_calibration(gpu[g], want), CC_OK);
        got[g] = pool_spectra(&pool, events);
    }
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    uint32_t n_frames = frames_to_run(600);
    process_alike(&pool, cpu, gpu, n_frames, clusters, take_spectra, got);
    ck_assert_int_eq(cc_finder_take_gain_calibration(cpu, want), CC_OK);
    uint64_t photons = 0;
    for (int g = 0; g < GPUS; g++) {
        take_spectra(gpu[g], g, got);
        photons = assert_same_spectra(want, got[g], pool.pixels);
        cc_gain_calibration_destroy(got[g]);
        cc_finder_destroy(gpu[g]);
    }
    printf("  spectra of %s %ux%u: %u frames, %llu photons entered, "
           "identical on CPU and GPU\n",
           events == CC_GAIN_EVENTS_SUM ? "every cluster" : "single events",
           side, side, n_frames, (unsigned long long)photons);
    cc_finder_destroy(cpu);
    cc_gain_calibration_destroy(want);
    cc_clusters_destroy(clusters);
    free_pool(&pool);
}
END_TEST

/* A spectrum and a hit map that count as the finder's (cc_finder_set_tally). */
struct tally {
    cc_spectrum *spectrum;
    cc_hitmap *hitmap;
};

/* Loop 0: a spectrum of sums and a hit map of the window's photons; 1:
 * of sum2x2, and every centre; 2: the spectrum alone; 3: the hit map
 * alone. Bins narrower than an ADU, a fractional edge and a range that
 * ends inside the photons' line test the bins' edges. */
static struct tally new_tally(const struct pool *pool, int loop)
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

static void free_tally(struct tally *tally)
{
    cc_spectrum_destroy(tally->spectrum);
    cc_hitmap_destroy(tally->hitmap);
}

static void take_tally(cc_finder *finder, int g, void *tallies)
{
    struct tally *tally = &((struct tally *)tallies)[g];
    ck_assert_int_eq(cc_finder_take_tally(finder, tally->spectrum,
                                          tally->hitmap),
                     CC_OK);
}

/* got counts as want, bin for bin and pixel for pixel; returns the
 * clusters counted. */
static uint64_t assert_same_tally(const struct tally *want,
                                  const struct tally *got, size_t pixels)
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

/* The spectrum and hit map a CUDA finder counts on the GPU are the CPU
 * finder's, count for count (loop: new_tally's four), at 3x3 and 9x9, on
 * 1 to 4 streams, taken once halfway; at 6,000 photons a frame the first
 * batches outgrow the GPU's cluster arrays and run again, which must not
 * count their clusters twice. */
START_TEST(identical_tallies)
{
    const uint32_t side = _i % 2 ? 9 : 3;
    struct pool pool = make_pool(400, 400, _i % 2 ? 6000 : 2330);
    cc_config config = accumulating_config(&pool, side);
    cc_finder *cpu = trained_finder(&pool, config, NULL);
    struct tally want = new_tally(&pool, _i), got[GPUS];
    ck_assert_int_eq(cc_finder_set_tally(cpu, want.spectrum, want.hitmap),
                     CC_OK);
    cc_finder *gpu[GPUS];
    gpu_finders(&pool, config, gpu);
    for (int g = 0; g < GPUS; g++) {
        ck_assert_int_eq(
            cc_finder_set_tally(gpu[g], want.spectrum, want.hitmap), CC_OK);
        got[g] = new_tally(&pool, _i);
    }
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    uint32_t n_frames = frames_to_run(600);
    process_alike(&pool, cpu, gpu, n_frames, clusters, take_tally, got);
    take_tally(cpu, 0, &want);
    uint64_t counted = 0;
    for (int g = 0; g < GPUS; g++) {
        take_tally(gpu[g], g, got);
        counted = assert_same_tally(&want, &got[g], pool.pixels);
        free_tally(&got[g]);
        cc_finder_destroy(gpu[g]);
    }
    printf("  spectrum %s, hit map %s, %ux%u: %u frames, %llu clusters "
           "counted, identical on CPU and GPU\n",
           want.spectrum == NULL ? "off" : _i == 1 ? "of sum2x2" : "of sums",
           want.hitmap == NULL ? "off" : _i == 1 ? "of every centre"
                                                 : "of the window",
           side, side, n_frames, (unsigned long long)counted);
    cc_finder_destroy(cpu);
    free_tally(&want);
    cc_clusters_destroy(clusters);
    free_pool(&pool);
}
END_TEST

/* A pedestal saved from the GPU and loaded on the CPU (and the other way)
 * continues with identical output. */
START_TEST(pedestal_moves_between_backends)
{
    struct pool pool = make_pool(400, 400, 2330);
    cc_config config = config_for(&pool, 0);
    config.pedestal_frames = DARK;
    config.backend = CC_BACKEND_CUDA;
    cc_finder *gpu = trained_finder(&pool, config, NULL);
    config.backend = CC_BACKEND_CPU;
    cc_finder *cpu = test_finder(&config);
    cc_clusters *want, *got;
    ck_assert_int_eq(cc_clusters_new(&want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&got), CC_OK);
    char path[] = "/tmp/cc_gpu_pedestal_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(cc_finder_process(gpu, pool.frames, NULL, 50, got), CC_OK);
    ck_assert_int_eq(cc_finder_save_pedestal(gpu, path), CC_OK);
    ck_assert_int_eq(cc_finder_load_pedestal(cpu, path), CC_OK);
    /* Loading restarts the counts, so the frames are numbered here. */
    uint64_t numbers[40];
    for (int k = 0; k < 40; k++)
        numbers[k] = 50 + (uint64_t)k;
    const uint16_t *next = pool.frames + 50 * pool.pixels;
    ck_assert_int_eq(cc_finder_process(cpu, next, numbers, 40, want), CC_OK);
    ck_assert_int_eq(cc_finder_process(gpu, next, numbers, 40, got), CC_OK);
    assert_same_clusters(want, got);
    ck_assert_int_eq(cc_finder_save_pedestal(cpu, path), CC_OK);
    ck_assert_int_eq(cc_finder_load_pedestal(gpu, path), CC_OK);
    next += 40 * pool.pixels;
    ck_assert_int_eq(cc_finder_process(cpu, next, numbers, 30, want), CC_OK);
    ck_assert_int_eq(cc_finder_process(gpu, next, numbers, 30, got), CC_OK);
    assert_same_clusters(want, got);
    unlink(path);
    close(fd);
    cc_clusters_destroy(want);
    cc_clusters_destroy(got);
    cc_finder_destroy(cpu);
    cc_finder_destroy(gpu);
    free_pool(&pool);
}
END_TEST

/* A pool with a trained CPU finder and a trained CUDA finder for it
 * (config_for(loop)), and a cluster list for each. */
struct pair {
    struct pool pool;
    cc_finder *cpu, *gpu;
    cc_clusters *want, *got;
};

static struct pair open_pair(int loop)
{
    struct pair pair;
    pair.pool = make_pool(400, 400, 2330);
    cc_config config = config_for(&pair.pool, loop);
    config.pedestal_frames = DARK;
    config.backend = CC_BACKEND_CUDA;
    pair.gpu = trained_finder(&pair.pool, config, NULL);
    config.backend = CC_BACKEND_CPU;
    pair.cpu = trained_finder(&pair.pool, config, NULL);
    ck_assert_int_eq(cc_clusters_new(&pair.want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&pair.got), CC_OK);
    return pair;
}

static void close_pair(struct pair *pair)
{
    cc_clusters_destroy(pair->want);
    cc_clusters_destroy(pair->got);
    cc_finder_destroy(pair->cpu);
    cc_finder_destroy(pair->gpu);
    free_pool(&pair->pool);
}

/* Frames in memory registered with cc_host_register give the same. */
START_TEST(registered_frames)
{
    struct pair pair = open_pair(1);
    size_t bytes = 64 * pair.pool.pixels * sizeof(uint16_t);
    uint16_t *frames = malloc(bytes);
    ck_assert_ptr_nonnull(frames);
    memcpy(frames, pair.pool.frames, bytes);
    ck_assert_int_eq(cc_host_register(frames, bytes), CC_OK);
    ck_assert_int_eq(cc_finder_process(pair.cpu, frames, NULL, 64, pair.want),
                     CC_OK);
    ck_assert_int_eq(cc_finder_process(pair.gpu, frames, NULL, 64, pair.got),
                     CC_OK);
    assert_same_clusters(pair.want, pair.got);
    ck_assert_int_eq(cc_host_unregister(frames), CC_OK);
    free(frames);
    close_pair(&pair);
}
END_TEST

/* One rounding an operation (docs/spec.md §2): were the variance
 * s2/N - r*r contracted into one FMA, as nvcc does unless told not to,
 * the noise of some pixels would round otherwise, and a value lying
 * between the two thresholds would decide otherwise. Random frames almost
 * never meet such a pixel, so one is searched for on the host (in the
 * core's arithmetic, this file being built without contraction): 53
 * dark values within 1 ADU of 1000 whose rms differs the two ways (a
 * window that makes such pixels common), then an NSigma between the two
 * thresholds of a value 3 ADU above the baseline. Pixel (3, 3) gets them;
 * every other pixel is 1000 ADU flat, so it has rms 0 and is 0. */
enum { FMA_SIDE = 8, FMA_WINDOW = 53, FMA_AT = 3 * FMA_SIDE + 3 };

struct fma_pixel {
    uint16_t dark[FMA_WINDOW];
    uint16_t value;
    double nsigma;
    int cluster; /* what the arithmetic without FMA decides */
};

#define DEFINE_FMA_SEARCH(real, fused, root, next)                            \
    static int fma_search_##real(uint32_t seed, struct fma_pixel *pixel)      \
    {                                                                         \
        int64_t sum = 0, sum_sq = 0, n = FMA_WINDOW;                          \
        for (int k = 0; k < FMA_WINDOW; k++) {                                \
            seed = seed * 1664525u + 1013904223u;                             \
            pixel->dark[k] = (uint16_t)(1000 - 1 + (seed >> 16) % 3);         \
            sum += pixel->dark[k];                                            \
            sum_sq += (int64_t)pixel->dark[k] * pixel->dark[k];               \
        }                                                                     \
        int64_t x0 = (2 * sum + n) / (2 * n);                                 \
        real frames = (real)n;                                                \
        real r = (real)(sum - n * x0) / frames;                               \
        real mean_sq = (real)(sum_sq - 2 * x0 * sum + n * x0 * x0) / frames;  \
        real plain = mean_sq - r * r, contracted = fused(-r, r, mean_sq);     \
        real rms = root(plain < 0 ? 0 : plain);                               \
        real rms_fma = root(contracted < 0 ? 0 : contracted);                 \
        if (rms == rms_fma)                                                   \
            return 0;                                                         \
        pixel->value = (uint16_t)(x0 + 3);                                    \
        real v = (real)3 - r, low = rms < rms_fma ? rms : rms_fma;            \
        real high = rms < rms_fma ? rms_fma : rms;                            \
        real ns = v / high;                                                   \
        for (int step = 0; step < 64; step++)                                 \
            ns = next(ns, (real)0);                                           \
        for (int step = 0; step < 128; step++, ns = next(ns, (real)10)) {     \
            if (ns * low < v && !(ns * high < v)) {                           \
                pixel->nsigma = (double)ns;                                   \
                pixel->cluster = v > ns * rms;                                \
                return 1;                                                     \
            }                                                                 \
        }                                                                     \
        return 0;                                                             \
    }
DEFINE_FMA_SEARCH(float, fmaf, sqrtf, nextafterf)
DEFINE_FMA_SEARCH(double, fma, sqrt, nextafter)

static size_t fma_pixel_clusters(const struct fma_pixel *pixel,
                                 cc_precision precision, cc_backend backend)
{
    cc_config config = test_config(FMA_SIDE, FMA_SIDE);
    config.precision = precision;
    config.backend = backend;
    config.pedestal_frames = FMA_WINDOW;
    config.nsigma = pixel->nsigma;
    cc_finder *finder = test_finder(&config);
    uint16_t frames[FMA_WINDOW + 1][FMA_SIDE * FMA_SIDE];
    for (int k = 0; k <= FMA_WINDOW; k++) {
        for (int p = 0; p < FMA_SIDE * FMA_SIDE; p++)
            frames[k][p] = 1000;
        frames[k][FMA_AT] = k < FMA_WINDOW ? pixel->dark[k] : pixel->value;
    }
    ck_assert_int_eq(cc_finder_train(finder, frames[0], FMA_WINDOW), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frames[FMA_WINDOW], NULL, 1,
                                       clusters),
                     CC_OK);
    size_t found = cc_clusters_total(clusters);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
    return found;
}

/* In float (_i 0) and double (_i 1), for the first 20 such pixels. */
START_TEST(noise_rounded_once)
{
    cc_precision precision = _i ? CC_PRECISION_DOUBLE : CC_PRECISION_FLOAT;
    int found = 0;
    for (uint32_t seed = 1; seed < 100000 && found < 20; seed++) {
        struct fma_pixel pixel;
        if (!(_i ? fma_search_double(seed, &pixel)
                 : fma_search_float(seed, &pixel)))
            continue;
        found++;
        size_t cpu = fma_pixel_clusters(&pixel, precision, CC_BACKEND_CPU);
        ck_assert_uint_eq(cpu, (size_t)pixel.cluster);
        size_t gpu = fma_pixel_clusters(&pixel, precision, CC_BACKEND_CUDA);
        ck_assert_msg(gpu == cpu,
                      "seed %u (NSigma %.17g): the CUDA backend found %zu "
                      "clusters, the CPU %zu",
                      seed, pixel.nsigma, gpu, cpu);
    }
    ck_assert_int_eq(found, 20);
}
END_TEST

/* A list of frames each in its own page-locked buffer, as in an NDArray
 * pool (buffers that may lie side by side), gives the same, whichever way
 * copies are issued (loop: CC__COPIES_*), in chunks of 64 frames:
 * among them a frame in pageable memory (copied alone, through the
 * staging buffer), one in registered memory and one 2 bytes into its
 * buffer. */
START_TEST(list_of_separate_buffers)
{
    enum { N = 150, PAGEABLE = 5, REGISTERED = 70, SHIFTED = 131 };
    struct pair pair = open_pair(0);
    const struct cc__cuda_tuning tuning = {64, 0, 0, 0, 0, (uint32_t)_i};
    ck_assert_int_eq(cc__finder_tune_cuda(pair.gpu, &tuning), CC_OK);
    size_t bytes = pair.pool.pixels * sizeof(uint16_t);
    const uint16_t *list[N];
    uint16_t *buffers[N];
    for (int k = 0; k < N; k++) {
        bool plain = k == PAGEABLE || k == REGISTERED;
        buffers[k] = plain ? malloc(bytes + 2) : cc_host_alloc(bytes + 2);
        ck_assert_ptr_nonnull(buffers[k]);
        if (k == REGISTERED)
            ck_assert_int_eq(cc_host_register(buffers[k], bytes + 2), CC_OK);
        list[k] = buffers[k] + (k == SHIFTED);
        memcpy((uint16_t *)list[k],
               pair.pool.frames + (size_t)(k % POOL) * pair.pool.pixels,
               bytes);
    }
    for (int k = 0; k < N; k += POOL) {
        int n = N - k < POOL ? N - k : POOL;
        ck_assert_int_eq(cc_finder_process(pair.cpu, pair.pool.frames, NULL,
                                           n, pair.want),
                         CC_OK);
        int rc = cc_finder_process_list(pair.gpu, list + k, NULL, n, pair.got);
        ck_assert_msg(rc == CC_OK, "%s", cc_finder_last_error(pair.gpu));
        assert_same_clusters(pair.want, pair.got);
    }
    for (int k = 0; k < N; k++) {
        if (k == REGISTERED)
            cc_host_unregister(buffers[k]);
        if (k == PAGEABLE || k == REGISTERED)
            free(buffers[k]);
        else
            cc_host_free(buffers[k]);
    }
    close_pair(&pair);
}
END_TEST

/* ---- planted GPU faults (CC_CUDA_FAULT, clusterCore/cuda/fault.h) ---- */

enum { FAULT_BATCHES = 6 };

/* CC_CUDA_FAULT for the finders made until the next call; NULL: none. */
static void plant(const char *fault)
{
    if (fault != NULL)
        ck_assert_int_eq(setenv("CC_CUDA_FAULT", fault, 1), 0);
    else
        ck_assert_int_eq(unsetenv("CC_CUDA_FAULT"), 0);
}

/* Batch b (from 0) of the fault tests: 48 frames (three chunks, the fault
 * in the second), fewer under compute-sanitizer. */
static const uint16_t *fault_batch(const struct pool *pool, int b, size_t *n)
{
    *n = frames_to_run(48);
    return pool->frames + ((size_t)b * 13 % (POOL - *n + 1)) * pool->pixels;
}

static cc_config fault_config(const struct pool *pool, cc_backend backend)
{
    cc_config config = test_config(pool->rows, pool->cols);
    config.pedestal_frames = DARK;
    config.threads = 0;
    config.streams = 2;
    config.backend = backend;
    return config;
}

/* A finder of config, made while CC_CUDA_FAULT is fault, and trained. */
static cc_finder *planted_finder(const struct pool *pool, cc_config config,
                                 const char *fault)
{
    plant(fault);
    cc_finder *finder = trained_finder(pool, config, NULL);
    plant(NULL);
    return finder;
}

/* Under auto, a GPU that fails in the third batch but can still hand the
 * pedestal back (a copy that fails, a launch that fails): the finder goes
 * on on the CPU, doing that batch again, and its clusters, pedestal,
 * interpolated image, flat-field spectra, spectrum and hit map are a
 * CPU-only finder's, byte for byte; the call succeeds, and the backend and the message say what happened. */
START_TEST(fault_auto_falls_back)
{
    const char *fault = _i == 0 ? "copy:3" : "launch:3";
    struct pool pool = make_pool(400, 400, 2330);
    cc_clusters *want, *got;
    ck_assert_int_eq(cc_clusters_new(&want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&got), CC_OK);
    cc_finder *cpu = trained_finder(&pool, fault_config(&pool, CC_BACKEND_CPU),
                                    NULL);
    cc_finder *gpu = planted_finder(&pool, fault_config(&pool, CC_BACKEND_AUTO),
                                    fault);
    ck_assert_int_eq(cc_finder_backend(gpu), CC_BACKEND_CUDA);
    cc_eta_calibration *calibration = pool_calibration(
        &pool, fault_config(&pool, CC_BACKEND_CPU), CC_ETA2, want);
    char message[CC_MESSAGE_SIZE];
    cc_interpolator *image[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(cc_interpolator_new(&image[i], calibration, &window,
                                             400, 400, 5, message),
                         CC_OK);
    ck_assert_int_eq(cc_finder_set_interpolator(cpu, image[0]), CC_OK);
    ck_assert_int_eq(cc_finder_set_interpolator(gpu, image[0]), CC_OK);
    cc_gain_calibration *spectra[2];
    for (int i = 0; i < 2; i++) {
        spectra[i] = pool_spectra(&pool, CC_GAIN_EVENTS_SUM);
        ck_assert_int_eq(cc_finder_set_gain_calibration(i ? gpu : cpu,
                                                        spectra[0]),
                         CC_OK);
    }
    struct tally tally[2];
    for (int i = 0; i < 2; i++) {
        tally[i] = new_tally(&pool, 0);
        ck_assert_int_eq(cc_finder_set_tally(i ? gpu : cpu, tally[0].spectrum,
                                             tally[0].hitmap),
                         CC_OK);
        ck_assert_int_eq(cc_finder_set_analog(i ? gpu : cpu, 1), CC_OK);
    }
    for (int b = 0; b < FAULT_BATCHES; b++) {
        size_t n;
        const uint16_t *frames = fault_batch(&pool, b, &n);
        ck_assert_int_eq(cc_finder_process(cpu, frames, NULL, n, want), CC_OK);
        int rc = cc_finder_process(gpu, frames, NULL, n, got);
        ck_assert_msg(rc == CC_OK, "batch %d: %s", b, cc_finder_last_error(gpu));
        assert_same_clusters(want, got);
        ck_assert_int_eq(cc_finder_backend(gpu),
                         b < 2 ? CC_BACKEND_CUDA : CC_BACKEND_CPU);
    }
    const char *description = cc_finder_backend_description(gpu);
    ck_assert_msg(strstr(description, "the GPU failed") &&
                      strstr(description, "planted by CC_CUDA_FAULT"),
                  "%s", description);
    ck_assert_msg(strstr(cc_finder_last_error(gpu), "pedestal kept"), "%s",
                  cc_finder_last_error(gpu));
    double *scratch = malloc(4 * pool.pixels * sizeof *scratch);
    ck_assert_ptr_nonnull(scratch);
    assert_same_pedestal(cpu, gpu, pool.pixels, scratch);
    free(scratch);
    ck_assert_int_eq(cc_finder_take_image(cpu, image[0]), CC_OK);
    ck_assert_int_eq(cc_finder_take_image(gpu, image[1]), CC_OK);
    cc_image_stats a, b;
    cc_interpolator_stats(image[0], &a);
    cc_interpolator_stats(image[1], &b);
    ck_assert_uint_gt(a.photons, 0);
    ck_assert_mem_eq(&b, &a, sizeof a);
    ck_assert_mem_eq(cc_interpolator_image(image[1]),
                     cc_interpolator_image(image[0]),
                     2000 * 2000 * sizeof(uint32_t));
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(
            cc_finder_take_gain_calibration(i ? gpu : cpu, spectra[i]), CC_OK);
    uint64_t entered = assert_same_spectra(spectra[0], spectra[1], pool.pixels);
    for (int i = 0; i < 2; i++)
        take_tally(i ? gpu : cpu, i, tally);
    uint64_t counted = assert_same_tally(&tally[0], &tally[1], pool.pixels);
    /* The analog image: the GPU's whole batches, then the CPU's. */
    double *analog = calloc(2 * pool.pixels, sizeof *analog);
    uint64_t summed[2] = {0, 0};
    ck_assert_ptr_nonnull(analog);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(cc_finder_take_analog(i ? gpu : cpu,
                                               analog + i * pool.pixels,
                                               &summed[i]),
                         CC_OK);
    ck_assert_uint_gt(summed[0], 0);
    ck_assert_uint_eq(summed[1], summed[0]);
    ck_assert_mem_eq(analog + pool.pixels, analog,
                     pool.pixels * sizeof *analog);
    free(analog);
    printf("  %s under auto: %s; %llu photons imaged, %llu entered into "
           "spectra, %llu counted and %llu frames' analog image, as on the "
           "CPU alone\n",
           fault, description, (unsigned long long)a.photons,
           (unsigned long long)entered, (unsigned long long)counted,
           (unsigned long long)summed[0]);
    for (int i = 0; i < 2; i++) {
        cc_interpolator_destroy(image[i]);
        cc_gain_calibration_destroy(spectra[i]);
        free_tally(&tally[i]);
    }
    cc_eta_calibration_destroy(calibration);
    cc_finder_destroy(gpu);
    cc_finder_destroy(cpu);
    cc_clusters_destroy(got);
    cc_clusters_destroy(want);
    free_pool(&pool);
}
END_TEST

/* Under auto, a GPU lost in the second batch cannot hand the pedestal
 * back: the call fails with CC_EDEVICE saying so, the finder is on the CPU
 * and training again, and once trained it finds what a new CPU finder
 * finds. */
START_TEST(fault_auto_lost_retrains)
{
    struct pool pool = make_pool(400, 400, 2330);
    cc_clusters *want, *got;
    ck_assert_int_eq(cc_clusters_new(&want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&got), CC_OK);
    cc_finder *gpu = planted_finder(&pool, fault_config(&pool, CC_BACKEND_AUTO),
                                    "lost:2");
    size_t n;
    const uint16_t *frames = fault_batch(&pool, 0, &n);
    ck_assert_int_eq(cc_finder_process(gpu, frames, NULL, n, got), CC_OK);
    frames = fault_batch(&pool, 1, &n);
    ck_assert_int_eq(cc_finder_process(gpu, frames, NULL, n, got), CC_EDEVICE);
    ck_assert_msg(strstr(cc_finder_last_error(gpu), "pedestal lost: train it again"),
                  "%s", cc_finder_last_error(gpu));
    ck_assert_int_eq(cc_finder_backend(gpu), CC_BACKEND_CPU);
    cc_finder_stats stats;
    ck_assert_int_eq(cc_finder_get_stats(gpu, &stats), CC_OK);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_TRAINING);
    ck_assert_uint_eq(stats.frames_trained, 0);
    ck_assert_int_eq(cc_finder_train(gpu, pool.dark, DARK), CC_OK);
    cc_finder *cpu = trained_finder(&pool, fault_config(&pool, CC_BACKEND_CPU),
                                    NULL);
    /* The frames are numbered alike: the GPU's finder has counted more. */
    uint64_t numbers[48];
    for (size_t k = 0; k < n; k++)
        numbers[k] = 1000 + k;
    ck_assert_int_eq(cc_finder_process(cpu, frames, numbers, n, want), CC_OK);
    ck_assert_int_eq(cc_finder_process(gpu, frames, numbers, n, got), CC_OK);
    assert_same_clusters(want, got);
    cc_finder_destroy(gpu);
    cc_finder_destroy(cpu);
    cc_clusters_destroy(got);
    cc_clusters_destroy(want);
    free_pool(&pool);
}
END_TEST

/* Under cuda, the batch the GPU fails in fails with CC_EDEVICE and leaves
 * the finder as it was: the same batch given again, and the batches after
 * it, give a CPU finder's clusters and pedestal, still on the GPU. */
START_TEST(fault_cuda_fails_unchanged)
{
    const char *fault = _i == 0 ? "copy:3" : "launch:3";
    struct pool pool = make_pool(400, 400, 2330);
    cc_clusters *want, *got;
    ck_assert_int_eq(cc_clusters_new(&want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&got), CC_OK);
    cc_finder *cpu = trained_finder(&pool, fault_config(&pool, CC_BACKEND_CPU),
                                    NULL);
    cc_finder *gpu = planted_finder(&pool, fault_config(&pool, CC_BACKEND_CUDA),
                                    fault);
    double *scratch = malloc(4 * pool.pixels * sizeof *scratch);
    ck_assert_ptr_nonnull(scratch);
    for (int b = 0; b < FAULT_BATCHES; b++) {
        size_t n;
        const uint16_t *frames = fault_batch(&pool, b, &n);
        ck_assert_int_eq(cc_finder_process(cpu, frames, NULL, n, want), CC_OK);
        if (b == 2) {
            cc_finder_stats before, after;
            cc_finder_get_stats(gpu, &before);
            ck_assert_int_eq(cc_finder_process(gpu, frames, NULL, n, got),
                             CC_EDEVICE);
            ck_assert_msg(strstr(cc_finder_last_error(gpu),
                                 "planted by CC_CUDA_FAULT"),
                          "%s", cc_finder_last_error(gpu));
            ck_assert_uint_eq(cc_clusters_frame_count(got), 0);
            cc_finder_get_stats(gpu, &after);
            ck_assert_mem_eq(&after, &before, sizeof before);
        }
        int rc = cc_finder_process(gpu, frames, NULL, n, got);
        ck_assert_msg(rc == CC_OK, "batch %d: %s", b, cc_finder_last_error(gpu));
        assert_same_clusters(want, got);
        assert_same_pedestal(cpu, gpu, pool.pixels, scratch);
    }
    ck_assert_int_eq(cc_finder_backend(gpu), CC_BACKEND_CUDA);
    free(scratch);
    cc_finder_destroy(gpu);
    cc_finder_destroy(cpu);
    cc_clusters_destroy(got);
    cc_clusters_destroy(want);
    free_pool(&pool);
}
END_TEST

/* A replacement of what the GPU keeps across batches that fails at its
 * wait for the GPU's work (sync:2: the second replacement, planted) fails
 * with CC_EDEVICE and keeps what was in force: the image, the spectra,
 * the spectrum and hit map or the analog image (loop) set first goes on
 * being added to, and holds a CPU finder's counts at the end. What the
 * failed replacement made is freed: compute-sanitizer's leak check runs
 * this case (tools/gpu_check.sh memcheck). */
START_TEST(fault_replacement_kept)
{
    struct pool pool = make_pool(400, 400, 2330);
    cc_clusters *want, *got;
    ck_assert_int_eq(cc_clusters_new(&want), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&got), CC_OK);
    cc_finder *cpu = trained_finder(&pool, fault_config(&pool, CC_BACKEND_CPU),
                                    NULL);
    cc_finder *gpu = planted_finder(&pool, fault_config(&pool, CC_BACKEND_CUDA),
                                    "sync:2");
    cc_finder *both[2] = {cpu, gpu};
    char message[CC_MESSAGE_SIZE];
    cc_eta_calibration *calibration = NULL;
    cc_interpolator *image[2] = {NULL, NULL};
    cc_gain_calibration *spectra[2] = {NULL, NULL};
    struct tally tally[2] = {{NULL, NULL}, {NULL, NULL}};
    if (_i == 0)
        calibration = pool_calibration(&pool, fault_config(&pool, CC_BACKEND_CPU),
                                       CC_ETA2, want);
    for (int i = 0; i < 2; i++) {
        if (_i == 0)
            ck_assert_int_eq(cc_interpolator_new(&image[i], calibration,
                                                 &window, 400, 400, 5, message),
                             CC_OK);
        else if (_i == 1)
            spectra[i] = pool_spectra(&pool, CC_GAIN_EVENTS_SUM);
        else if (_i == 2)
            tally[i] = new_tally(&pool, 0);
    }
    /* set: replacement 1 on the GPU; again on the GPU: replacement 2,
     * which fails. */
    for (int attempt = 0; attempt < 3; attempt++) {
        cc_finder *finder = both[attempt > 0];
        int rc = _i == 0 ? cc_finder_set_interpolator(finder, image[0])
                 : _i == 1 ? cc_finder_set_gain_calibration(finder, spectra[0])
                 : _i == 2 ? cc_finder_set_tally(finder, tally[0].spectrum,
                                                 tally[0].hitmap)
                           : cc_finder_set_analog(finder, attempt < 2);
        ck_assert_int_eq(rc, attempt < 2 ? CC_OK : CC_EDEVICE);
        if (attempt == 2) {
            ck_assert_msg(strstr(cc_finder_last_error(gpu),
                                 "finishing the GPU's work"),
                          "%s", cc_finder_last_error(gpu));
            break;
        }
        if (attempt == 1) { /* a batch into what the GPU keeps, first */
            size_t n;
            const uint16_t *frames = fault_batch(&pool, 0, &n);
            ck_assert_int_eq(cc_finder_process(cpu, frames, NULL, n, want),
                             CC_OK);
            ck_assert_int_eq(cc_finder_process(gpu, frames, NULL, n, got),
                             CC_OK);
        }
    }
    for (int b = 1; b < 3; b++) {
        size_t n;
        const uint16_t *frames = fault_batch(&pool, b, &n);
        ck_assert_int_eq(cc_finder_process(cpu, frames, NULL, n, want), CC_OK);
        int rc = cc_finder_process(gpu, frames, NULL, n, got);
        ck_assert_msg(rc == CC_OK, "batch %d: %s", b, cc_finder_last_error(gpu));
        assert_same_clusters(want, got);
    }
    if (_i == 0) {
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(cc_finder_take_image(both[i], image[i]), CC_OK);
        cc_image_stats a, b;
        cc_interpolator_stats(image[0], &a);
        cc_interpolator_stats(image[1], &b);
        ck_assert_uint_gt(a.photons, 0);
        ck_assert_mem_eq(&b, &a, sizeof a);
        ck_assert_mem_eq(cc_interpolator_image(image[1]),
                         cc_interpolator_image(image[0]),
                         2000 * 2000 * sizeof(uint32_t));
    } else if (_i == 1) {
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(cc_finder_take_gain_calibration(both[i],
                                                             spectra[i]),
                             CC_OK);
        assert_same_spectra(spectra[0], spectra[1], pool.pixels);
    } else if (_i == 2) {
        for (int i = 0; i < 2; i++)
            take_tally(both[i], i, tally);
        assert_same_tally(&tally[0], &tally[1], pool.pixels);
    } else {
        double *analog = calloc(2 * pool.pixels, sizeof *analog);
        uint64_t summed[2] = {0, 0};
        ck_assert_ptr_nonnull(analog);
        for (int i = 0; i < 2; i++)
            ck_assert_int_eq(cc_finder_take_analog(both[i],
                                                   analog + i * pool.pixels,
                                                   &summed[i]),
                             CC_OK);
        ck_assert_uint_gt(summed[0], 0);
        ck_assert_uint_eq(summed[1], summed[0]);
        ck_assert_mem_eq(analog + pool.pixels, analog,
                         pool.pixels * sizeof *analog);
        free(analog);
    }
    for (int i = 0; i < 2; i++) {
        cc_interpolator_destroy(image[i]);
        cc_gain_calibration_destroy(spectra[i]);
        free_tally(&tally[i]);
    }
    cc_eta_calibration_destroy(calibration);
    cc_finder_destroy(gpu);
    cc_finder_destroy(cpu);
    cc_clusters_destroy(got);
    cc_clusters_destroy(want);
    free_pool(&pool);
}
END_TEST

/* A CC_CUDA_FAULT that says nothing sensible is refused: under cuda the
 * finder is not made, under auto it runs on the CPU and says why. */
START_TEST(fault_setting_refused)
{
    cc_config config = test_config(16, 16);
    config.backend = CC_BACKEND_CUDA;
    char message[CC_MESSAGE_SIZE];
    cc_finder *finder;
    plant("copy:0");
    ck_assert_int_eq(cc_finder_new(&finder, &config, message), CC_EINVAL);
    ck_assert_msg(strstr(message, "CC_CUDA_FAULT is \"copy:0\""), "%s", message);
    config.backend = CC_BACKEND_AUTO;
    plant("sometimes");
    ck_assert_int_eq(cc_finder_new(&finder, &config, message), CC_OK);
    plant(NULL);
    ck_assert_int_eq(cc_finder_backend(finder), CC_BACKEND_CPU);
    ck_assert_msg(strstr(cc_finder_backend_description(finder),
                         "CC_CUDA_FAULT is \"sometimes\""),
                  "%s", cc_finder_backend_description(finder));
    cc_finder_destroy(finder);
}
END_TEST

int main(void)
{
    cc_config config = test_config(8, 8);
    config.backend = CC_BACKEND_CUDA;
    char message[CC_MESSAGE_SIZE];
    cc_finder *probe;
    int rc = cc_finder_new(&probe, &config, message);
    if (rc != CC_OK) {
        printf("SKIP: CUDA tests: %s\n", message);
        return 77;
    }
    printf("CUDA tests on %s\n", cc_finder_backend_description(probe));
    cc_finder_destroy(probe);

    /* One case per kind of check, so that CK_RUN_CASE can spread a slow
     * run (compute-sanitizer) over several processes. */
    Suite *suite = suite_create("cuda");
    TCase *full = tcase_create("full");
    tcase_add_loop_test(full, identical_full_frames, 0, 4);
    TCase *odd = tcase_create("odd");
    tcase_add_loop_test(odd, identical_odd_frames, 0, 8);
    TCase *cap = tcase_create("cap");
    tcase_add_loop_test(cap, identical_under_cap, 0, 2);
    TCase *masked = tcase_create("masked");
    tcase_add_loop_test(masked, identical_with_mask, 0, 4);
    TCase *images = tcase_create("images");
    tcase_add_loop_test(images, identical_images, 0, 6);
    tcase_add_loop_test(images, identical_spectra, 0, 4);
    tcase_add_loop_test(images, identical_tallies, 0, 4);
    TCase *moves = tcase_create("moves");
    tcase_add_test(moves, pedestal_moves_between_backends);
    tcase_add_test(moves, registered_frames);
    tcase_add_loop_test(moves, list_of_separate_buffers, CC__COPIES_EACH,
                        CC__COPIES_BATCHED + 1);
    TCase *rounding = tcase_create("rounding");
    tcase_add_loop_test(rounding, noise_rounded_once, 0, 2);
    TCase *common = tcase_create("common");
    tcase_add_loop_test(common, identical_common_mode, 0, 6);
    TCase *gain = tcase_create("gain");
    tcase_add_loop_test(gain, identical_gain, 0, 8);
    TCase *faults = tcase_create("faults");
    tcase_add_loop_test(faults, fault_auto_falls_back, 0, 2);
    tcase_add_test(faults, fault_auto_lost_retrains);
    tcase_add_loop_test(faults, fault_cuda_fails_unchanged, 0, 2);
    tcase_add_test(faults, fault_setting_refused);
    tcase_add_loop_test(faults, fault_replacement_kept, 0, 4);
    /* Their CUDA calls fail on purpose: compute-sanitizer runs them apart
     * (CK_EXCLUDE_TAGS=planted_faults). */
    tcase_set_tags(faults, "planted_faults");
    TCase *cases[] = {full,  odd,      cap,    masked, images,
                      moves, rounding, common, gain, faults};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tcase_set_timeout(cases[i], 3600);
        suite_add_tcase(suite, cases[i]);
    }
    SRunner *runner = srunner_create(suite);
    /* CUDA is initialised in this process already: no forks. */
    srunner_set_fork_status(runner, CK_NOFORK);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
