/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_faults.c: GPU failures planted with CC_CUDA_FAULT
 * (clusterCore/cuda/fault.h), survived or reported: under auto the CPU
 * takes over with nothing lost or counted twice; under cuda the failed
 * call leaves the finder as it was; a failed replacement of what the GPU
 * keeps keeps the one in force and leaks nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

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
        ck_assert_msg(rc == CC_OK, "batch %d: %s", b,
                      cc_finder_last_error(gpu));
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
        ck_assert_int_eq(cc_finder_take_gain_calibration(i ? gpu : cpu,
                                                         spectra[i]),
                         CC_OK);
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
    ck_assert_msg(strstr(cc_finder_last_error(gpu),
                         "pedestal lost: train it again"),
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
        ck_assert_msg(rc == CC_OK, "batch %d: %s", b,
                      cc_finder_last_error(gpu));
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
        calibration = pool_calibration(&pool,
                                       fault_config(&pool, CC_BACKEND_CPU),
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
        int rc = _i == 0   ? cc_finder_set_interpolator(finder, image[0])
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
        ck_assert_msg(rc == CC_OK, "batch %d: %s", b,
                      cc_finder_last_error(gpu));
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
    ck_assert_msg(strstr(message, "CC_CUDA_FAULT is \"copy:0\""), "%s",
                  message);
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

void gpu_fault_cases(Suite *suite)
{
    TCase *faults = tcase_create("faults");
    tcase_add_loop_test(faults, fault_auto_falls_back, 0, 2);
    tcase_add_test(faults, fault_auto_lost_retrains);
    tcase_add_loop_test(faults, fault_cuda_fails_unchanged, 0, 2);
    tcase_add_test(faults, fault_setting_refused);
    tcase_add_loop_test(faults, fault_replacement_kept, 0, 4);
    /* Their CUDA calls fail on purpose: compute-sanitizer runs them apart
     * (CK_EXCLUDE_TAGS=planted_faults). */
    tcase_set_tags(faults, "planted_faults");
    add_gpu_case(suite, faults);
}
