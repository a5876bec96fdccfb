/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_accumulators.c: what the CUDA backend keeps across batches, against
 * the CPU backend's, byte for byte: the interpolated image, a flat
 * field's per-pixel spectra, the spectrum and hit map.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

static void take_image(cc_finder *finder, int g, void *images)
{
    ck_assert_int_eq(cc_finder_take_image(finder,
                                          ((cc_interpolator **)images)[g]),
                     CC_OK);
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
    cc_eta_calibration *calibration = pool_calibration(&pool, config, function,
                                                       clusters);
    char message[CC_MESSAGE_SIZE];
    cc_interpolator *want, *got[GPUS];
    ck_assert_int_eq(cc_interpolator_new(&want, calibration, &window, 400, 400,
                                         5, message),
                     CC_OK);
    for (int g = 0; g < GPUS; g++)
        ck_assert_int_eq(cc_interpolator_new(&got[g], calibration, &window, 400,
                                             400, 5, message),
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
           names[function], side, side, n_frames, (unsigned long long)a.photons,
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

static void take_spectra(cc_finder *finder, int g, void *spectra)
{
    ck_assert_int_eq(cc_finder_take_gain_calibration(
                         finder, ((cc_gain_calibration **)spectra)[g]),
                     CC_OK);
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
        ck_assert_int_eq(cc_finder_set_tally(gpu[g], want.spectrum,
                                             want.hitmap),
                         CC_OK);
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
           want.spectrum == NULL ? "off"
           : _i == 1             ? "of sum2x2"
                                 : "of sums",
           want.hitmap == NULL ? "off"
           : _i == 1           ? "of every centre"
                               : "of the window",
           side, side, n_frames, (unsigned long long)counted);
    cc_finder_destroy(cpu);
    free_tally(&want);
    cc_clusters_destroy(clusters);
    free_pool(&pool);
}
END_TEST

void gpu_accumulator_cases(Suite *suite)
{
    TCase *images = tcase_create("images");
    tcase_add_loop_test(images, identical_images, 0, 6);
    tcase_add_loop_test(images, identical_spectra, 0, 4);
    tcase_add_loop_test(images, identical_tallies, 0, 4);
    add_gpu_case(suite, images);
}
