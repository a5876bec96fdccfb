/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_errors.c: bad input gets an error code and a message, no crash,
 * and leaves the objects it was given as they were.
 */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <string.h>

#include "frames.h"
#include "suites.h"

static cc_config valid_config(void)
{
    return test_config(16, 16);
}

/* Refuses config with CC_EINVAL and a message naming field. */
static void assert_refused(const cc_config *config, const char *field)
{
    char message[CC_MESSAGE_SIZE] = "";
    cc_finder *finder = (cc_finder *)&finder;
    ck_assert_int_eq(cc_finder_new(&finder, config, message), CC_EINVAL);
    ck_assert_ptr_null(finder);
    ck_assert_msg(strstr(message, field) != NULL, "'%s' lacks '%s'", message,
                  field);
}

/* Every setting out of range is refused with a message that names it. */
START_TEST(impossible_settings_refused)
{
    cc_config config = valid_config();
    config.rows = 0;
    assert_refused(&config, "frame size");
    config = valid_config();
    config.cols = 70000;
    assert_refused(&config, "frame size");
    static const uint32_t bad_sides[] = {0, 1, 2, 4, 8, 10, 11};
    for (size_t i = 0; i < sizeof bad_sides / sizeof *bad_sides; i++) {
        config = valid_config();
        config.cluster_size_x = bad_sides[i];
        assert_refused(&config, "cluster size");
        config = valid_config();
        config.cluster_size_y = bad_sides[i];
        assert_refused(&config, "cluster size");
    }
    static const double bad_nsigma[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t i = 0; i < 4; i++) {
        config = valid_config();
        config.nsigma = bad_nsigma[i];
        assert_refused(&config, "nsigma");
    }
    config = valid_config();
    config.pedestal_frames = 1;
    assert_refused(&config, "pedestal_frames");
    config.pedestal_frames = CC_PEDESTAL_FRAMES_MAX + 1;
    assert_refused(&config, "pedestal_frames");
    config = valid_config();
    config.adc_mask = 0;
    assert_refused(&config, "adc_mask");
    config = valid_config();
    config.precision = (cc_precision)5;
    assert_refused(&config, "precision");
    config = valid_config();
    config.backend = (cc_backend)9;
    assert_refused(&config, "backend");
    config = valid_config();
    config.threads = CC_THREADS_MAX + 1;
    assert_refused(&config, "threads");
    config = valid_config();
    config.streams = 0;
    assert_refused(&config, "streams");
    config.streams = CC_STREAMS_MAX + 1;
    assert_refused(&config, "streams");
    ck_assert_int_eq(cc_config_check(NULL, NULL), CC_EINVAL);
    config = valid_config();
    ck_assert_int_eq(cc_finder_new(NULL, &config, NULL), CC_EINVAL);
}
END_TEST

/* NULL objects and buffers give CC_EINVAL, never a crash. */
START_TEST(null_pointers)
{
    uint16_t frame[4] = {0};
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    ck_assert_int_eq(cc_finder_train(NULL, frame, 1), CC_EINVAL);
    ck_assert_int_eq(cc_finder_process(NULL, frame, NULL, 1, clusters),
                     CC_EINVAL);
    ck_assert_int_eq(cc_finder_finish_training(NULL), CC_EINVAL);
    ck_assert_int_eq(cc_finder_get_stats(NULL, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_finder_get_config(NULL, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_finder_set_config(NULL, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_finder_pedestal_maps(NULL, NULL, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_finder_save_pedestal(NULL, "x"), CC_EINVAL);
    ck_assert_int_eq(cc_finder_load_pedestal(NULL, "x"), CC_EINVAL);
    ck_assert_int_eq(cc_clusters_new(NULL), CC_EINVAL);
    ck_assert_int_eq(cc_clusters_frame(NULL, 0, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_spectrum_add(NULL, clusters), CC_EINVAL);
    ck_assert_int_eq(cc_hitmap_add(NULL, clusters), CC_EINVAL);
    ck_assert_str_eq(cc_finder_last_error(NULL), "finder is NULL");
    cc_finder_destroy(NULL);
    cc_clusters_destroy(NULL);
    cc_spectrum_destroy(NULL);
    cc_hitmap_destroy(NULL);
    cc_finder_reset(NULL);

    struct flat flat;
    flat_open(&flat, 4, 4, 3, 3, CC_PRECISION_FLOAT, 1);
    ck_assert_int_eq(cc_finder_process(flat.finder, NULL, NULL, 1, clusters),
                     CC_EINVAL);
    ck_assert_int_eq(cc_finder_process(flat.finder, flat.frame, NULL, 1, NULL),
                     CC_EINVAL);
    ck_assert_int_eq(cc_finder_save_pedestal(flat.finder, NULL), CC_EINVAL);
    ck_assert_int_eq(cc_finder_load_pedestal(flat.finder, NULL), CC_EINVAL);
    cc_finder_stats stats;
    cc_finder_get_stats(flat.finder, &stats);
    ck_assert_uint_eq(stats.frames_processed, 0);
    flat_close(&flat);
    cc_clusters_destroy(clusters);
}
END_TEST

/* Processing before the pedestal is ready fails with CC_ESTATE, and the
 * training state is untouched. */
START_TEST(processing_before_training)
{
    cc_config config = valid_config();
    cc_finder *finder = test_finder(&config);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    uint16_t frame[256] = {0};
    ck_assert_int_eq(cc_finder_train(finder, frame, 1), CC_OK);
    ck_assert_int_eq(cc_finder_process(finder, frame, NULL, 1, clusters),
                     CC_ESTATE);
    ck_assert_ptr_nonnull(strstr(cc_finder_last_error(finder), "training"));
    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    ck_assert_uint_eq(stats.frames_trained, 1);
    ck_assert_uint_eq(stats.frames_processed, 0);
    ck_assert_int_eq(stats.state, CC_PEDESTAL_TRAINING);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
}
END_TEST

/* An invalid set_config leaves the finder's settings and pedestal. */
START_TEST(bad_set_config_changes_nothing)
{
    struct flat flat;
    flat_open(&flat, 8, 8, 3, 3, CC_PRECISION_FLOAT, 1);
    cc_config config;
    cc_finder_get_config(flat.finder, &config);
    config.cluster_size_x = 4;
    ck_assert_int_eq(cc_finder_set_config(flat.finder, &config), CC_EINVAL);
    ck_assert_ptr_nonnull(
        strstr(cc_finder_last_error(flat.finder), "cluster size"));
    cc_finder_get_config(flat.finder, &config);
    ck_assert_uint_eq(config.cluster_size_x, 3);
    flat_set(&flat, 3, 3, 10);
    ck_assert_uint_eq(flat_process(&flat).count, 1);
    flat_close(&flat);
}
END_TEST

/* Asking for CUDA where it cannot run fails with a reason (CC_ENOTSUP in
 * a build without it, CC_EDEVICE without a usable GPU, naming a missing
 * driver as such); auto then runs on the CPU and says why. Where a GPU
 * answers, both give CUDA. */
START_TEST(backend_choice_is_explained)
{
    cc_config config = valid_config();
    config.backend = CC_BACKEND_CUDA;
    char message[CC_MESSAGE_SIZE] = "";
    cc_finder *cuda = NULL;
    int rc = cc_finder_new(&cuda, &config, message);
    config.backend = CC_BACKEND_AUTO;
    config.threads = 3;
    cc_finder *automatic = test_finder(&config);
    if (rc == CC_OK) {
        ck_assert_int_eq(cc_finder_backend(cuda), CC_BACKEND_CUDA);
        ck_assert_int_eq(cc_finder_backend(automatic), CC_BACKEND_CUDA);
        ck_assert_ptr_nonnull(
            strstr(cc_finder_backend_description(automatic), "CUDA on "));
    } else {
#ifdef CC_HAVE_CUDA
        ck_assert_int_eq(rc, CC_EDEVICE);
        /* Without the driver's library the reason must name the driver,
         * not the runtime's word for it ("insufficient"). */
        void *driver = dlopen("libcuda.so.1", RTLD_LAZY);
        const char *reason =
            driver == NULL ? "no usable GPU: no NVIDIA driver is installed"
                           : "no usable GPU";
        if (driver != NULL)
            dlclose(driver);
#else
        ck_assert_int_eq(rc, CC_ENOTSUP);
        const char *reason = "no CUDA backend";
#endif
        ck_assert_ptr_nonnull(strstr(message, "CUDA"));
        ck_assert_int_eq(cc_finder_backend(automatic), CC_BACKEND_CPU);
        ck_assert_uint_eq(cc_finder_threads(automatic), 3);
        ck_assert_msg(strstr(cc_finder_backend_description(automatic),
                             reason) != NULL,
                      "'%s' does not say '%s'",
                      cc_finder_backend_description(automatic), reason);
    }
    cc_finder_destroy(cuda);
    cc_finder_destroy(automatic);
}
END_TEST

/* Page-locked memory: allocation always works (ordinary memory without a
 * GPU) and frees; registering needs the CUDA backend and a GPU. */
START_TEST(host_memory)
{
    uint16_t *frames = cc_host_alloc(1 << 20);
    ck_assert_ptr_nonnull(frames);
    frames[(1 << 19) - 1] = 7; /* writable to the end */
    int locked = cc_host_is_locked(frames);
    cc_host_free(frames);
    cc_host_free(NULL);
    ck_assert_int_eq(cc_host_is_locked(NULL), 0);
    ck_assert_int_eq(cc_host_register(NULL, 8), CC_EINVAL);
    static uint16_t pool[4096];
    ck_assert_int_eq(cc_host_is_locked(pool), 0);
    int rc = cc_host_register(pool, sizeof pool);
#ifdef CC_HAVE_CUDA
    ck_assert(rc == CC_OK || rc == CC_EDEVICE);
#else
    ck_assert_int_eq(rc, CC_ENOTSUP);
#endif
    /* Allocation is page-locked exactly where registering works. */
    ck_assert_int_eq(locked, rc == CC_OK);
    ck_assert_int_eq(cc_host_is_locked(pool), rc == CC_OK);
    if (rc == CC_OK)
        ck_assert_int_eq(cc_host_unregister(pool), CC_OK);
}
END_TEST

/* Every code has a name and a description; unknown codes say so. */
START_TEST(error_strings)
{
#define CHECK_CODE(name, value, message)                                       \
    ck_assert_str_eq(cc_strerror(CC_##name), message);                         \
    ck_assert_str_eq(cc_error_name(CC_##name), "CC_" #name);
    CC_ERROR_MAP(CHECK_CODE)
#undef CHECK_CODE
    ck_assert_str_eq(cc_error_name(CC_OK), "CC_OK");
    ck_assert_str_eq(cc_strerror(-999), "unknown error code");
    ck_assert_str_eq(cc_error_name(42), "CC_UNKNOWN");
    ck_assert_str_eq(cc_version(), PACKAGE_VERSION);
}
END_TEST

Suite *suite_errors(void)
{
    Suite *suite = suite_create("errors");
    TCase *cases = tcase_create("bad input");
    tcase_add_test(cases, impossible_settings_refused);
    tcase_add_test(cases, null_pointers);
    tcase_add_test(cases, processing_before_training);
    tcase_add_test(cases, bad_set_config_changes_nothing);
    tcase_add_test(cases, backend_choice_is_explained);
    tcase_add_test(cases, host_memory);
    tcase_add_test(cases, error_strings);
    suite_add_tcase(suite, cases);
    return suite;
}
