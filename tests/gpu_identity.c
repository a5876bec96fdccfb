/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_identity.c: the CUDA backend's clusters and pedestal against the CPU
 * backend's, byte for byte, frame by frame: both precisions, 1 to 8
 * streams, several launch shapes and frames a launch, batches of 1 to 100
 * frames, frame sizes that are and are not multiples of a tile, under the
 * cap, with the bad-pixel mask, common mode (and its per-region figures)
 * and a gain map; and a pixel whose decision turns on one rounding of its
 * noise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

/* The common-mode figures of every region (docs/spec.md §8), byte for
 * byte; none when the correction is off. */
static void assert_same_common_mode(const cc_finder *want, const cc_finder *got,
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
static void common_mode_frames(const cc_finder *finder, const cc_config *config,
                               uint64_t *estimated, uint64_t *unestimated)
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
        /* Pedestal frames from the second batch on, so that the shortest
         * runs (compute-sanitizer's two frames) take that path too. */
        bool pedestal_only = b == 1 || b % 8 == 6 || b % 16 == 3;
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
            ck_assert_mem_eq(gpu_sums, analog, pool->pixels * sizeof *gpu_sums);
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
           pool->rows, pool->cols, config.cluster_size_x, config.cluster_size_y,
           config.precision == CC_PRECISION_DOUBLE ? "double" : "float",
           n_frames, (unsigned long long)stats.clusters,
           (unsigned long long)stats.frames_pedestal, streams[0], streams[1],
           streams[2], streams[3], masks != NULL ? ", masked" : "");
    if (gains != NULL)
        printf(", gain map in %s", cc_gain_unit_name(unit));
    if (config.common_mode != CC_COMMON_MODE_NONE) {
        uint64_t estimated, unestimated;
        common_mode_frames(cpu, &config, &estimated, &unestimated);
        printf(", common mode %s: %llu region-frames estimated, %llu not",
               cc_common_mode_name(config.common_mode),
               (unsigned long long)estimated, (unsigned long long)unestimated);
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
    struct pool pool = _i < 4 ? make_pool(160, 400, 930)
                              : make_pool(37, 53, 30);
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
    static const struct cc__cuda_tuning tunings[GPUS] = {{0, 0, 0, 0, 0, 0},
                                                         {9, 4, 3, 64, 96, 0},
                                                         {1, 1, 8, 128, 256, 0},
                                                         {40, 16, 1, 64, 32,
                                                          0}};
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
    static const struct cc__cuda_tuning tunings[GPUS] = {{0, 0, 0, 0, 0, 0},
                                                         {9, 4, 3, 64, 96, 0},
                                                         {1, 1, 8, 128, 256, 0},
                                                         {40, 16, 1, 64, 32,
                                                          0}};
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
    static const struct cc__cuda_tuning tunings[GPUS] = {{0, 0, 0, 0, 0, 0},
                                                         {9, 4, 3, 64, 96, 0},
                                                         {1, 1, 8, 128, 256, 0},
                                                         {40, 16, 1, 64, 32,
                                                          0}};
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

#define DEFINE_FMA_SEARCH(real, fused, root, next)                             \
    static int fma_search_##real(uint32_t seed, struct fma_pixel *pixel)       \
    {                                                                          \
        int64_t sum = 0, sum_sq = 0, n = FMA_WINDOW;                           \
        for (int k = 0; k < FMA_WINDOW; k++) {                                 \
            seed = seed * 1664525u + 1013904223u;                              \
            pixel->dark[k] = (uint16_t)(1000 - 1 + (seed >> 16) % 3);          \
            sum += pixel->dark[k];                                             \
            sum_sq += (int64_t)pixel->dark[k] * pixel->dark[k];                \
        }                                                                      \
        int64_t x0 = (2 * sum + n) / (2 * n);                                  \
        real frames = (real)n;                                                 \
        real r = (real)(sum - n * x0) / frames;                                \
        real mean_sq = (real)(sum_sq - 2 * x0 * sum + n * x0 * x0) / frames;   \
        real plain = mean_sq - r * r, contracted = fused(-r, r, mean_sq);      \
        real rms = root(plain < 0 ? 0 : plain);                                \
        real rms_fma = root(contracted < 0 ? 0 : contracted);                  \
        if (rms == rms_fma)                                                    \
            return 0;                                                          \
        pixel->value = (uint16_t)(x0 + 3);                                     \
        real v = (real)3 - r, low = rms < rms_fma ? rms : rms_fma;             \
        real high = rms < rms_fma ? rms_fma : rms;                             \
        real ns = v / high;                                                    \
        for (int step = 0; step < 64; step++)                                  \
            ns = next(ns, (real)0);                                            \
        for (int step = 0; step < 128; step++, ns = next(ns, (real)10)) {      \
            if (ns * low < v && !(ns * high < v)) {                            \
                pixel->nsigma = (double)ns;                                    \
                pixel->cluster = v > ns * rms;                                 \
                return 1;                                                      \
            }                                                                  \
        }                                                                      \
        return 0;                                                              \
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

void gpu_identity_cases(Suite *suite)
{
    TCase *full = tcase_create("full");
    tcase_add_loop_test(full, identical_full_frames, 0, 4);
    add_gpu_case(suite, full);
    TCase *odd = tcase_create("odd");
    tcase_add_loop_test(odd, identical_odd_frames, 0, 8);
    add_gpu_case(suite, odd);
    TCase *cap = tcase_create("cap");
    tcase_add_loop_test(cap, identical_under_cap, 0, 2);
    add_gpu_case(suite, cap);
    TCase *masked = tcase_create("masked");
    tcase_add_loop_test(masked, identical_with_mask, 0, 4);
    add_gpu_case(suite, masked);
    TCase *rounding = tcase_create("rounding");
    tcase_add_loop_test(rounding, noise_rounded_once, 0, 2);
    add_gpu_case(suite, rounding);
    TCase *common = tcase_create("common");
    tcase_add_loop_test(common, identical_common_mode, 0, 6);
    add_gpu_case(suite, common);
    TCase *gain = tcase_create("gain");
    tcase_add_loop_test(gain, identical_gain, 0, 8);
    add_gpu_case(suite, gain);
}
