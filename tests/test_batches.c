/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_batches.c: the output is a pure function of the frames and the
 * settings: the same bytes for any thread count and batch size, nothing
 * lost under a cap, and float close to double; the threads that work on
 * the frames share the CPUs.
 */
#define _GNU_SOURCE /* SCHED_BATCH */
#include <check.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"
#include "cpu/cpu.h"
#include "suites.h"
#include "clustercore.h"

struct run {
    cc_clusters *clusters; /* every frame of the run */
    double *mean, *rms;    /* pedestal maps at the end */
    cc_finder_stats stats;
};

struct setup {
    uint32_t rows, cols, size_x, size_y, threads, batch, max_clusters;
    cc_precision precision;
    uint32_t dark, frames, photons;
    /* each frame in its own allocation, by cc_finder_process_list */
    bool scattered;
};

/* Processes n back-to-back frames, or copies of them each in its own
 * allocation when scattered. */
static void process_batch(cc_finder *finder, const uint16_t *frames,
                          size_t pixels, uint32_t n, bool scattered,
                          cc_clusters *out)
{
    if (!scattered) {
        ck_assert_int_eq(cc_finder_process(finder, frames, NULL, n, out),
                         CC_OK);
        return;
    }
    uint16_t **copies = calloc(n, sizeof *copies);
    ck_assert_ptr_nonnull(copies);
    for (uint32_t i = 0; i < n; i++) {
        copies[i] = malloc(pixels * sizeof **copies);
        ck_assert_ptr_nonnull(copies[i]);
        memcpy(copies[i], frames + i * pixels, pixels * sizeof **copies);
    }
    ck_assert_int_eq(cc_finder_process_list(finder,
                                            (const uint16_t *const *)copies,
                                            NULL, n, out),
                     CC_OK);
    for (uint32_t i = 0; i < n; i++)
        free(copies[i]);
    free(copies);
}

/* Runs simulated frames through a finder made from setup. */
static struct run run_frames(const struct setup *setup)
{
    cc_config config = test_config(setup->rows, setup->cols);
    config.cluster_size_x = setup->size_x;
    config.cluster_size_y = setup->size_y;
    config.threads = setup->threads;
    config.precision = setup->precision;
    config.pedestal_frames = setup->dark;
    config.max_clusters = setup->max_clusters;
    cc_finder *finder = test_finder(&config);
    cc_simulator_config model = test_simulator_config(setup->rows, setup->cols,
                                                      1234, setup->photons);
    cc_simulator *simulator = test_simulator(&model);
    size_t pixels = (size_t)setup->rows * setup->cols;
    uint16_t *frames = malloc(pixels * setup->batch * sizeof *frames);
    ck_assert_ptr_nonnull(frames);
    for (uint32_t k = 0; k < setup->dark; k++) {
        ck_assert_int_eq(cc_simulator_dark_frames(simulator, k, 1, frames),
                         CC_OK);
        ck_assert_int_eq(cc_finder_train(finder, frames, 1), CC_OK);
    }
    struct run run = {0};
    cc_clusters *batch;
    ck_assert_int_eq(cc_clusters_new(&run.clusters), CC_OK);
    ck_assert_int_eq(cc_clusters_new(&batch), CC_OK);
    cc__clusters_clear(run.clusters, setup->size_x, setup->size_y);
    for (uint32_t k = 0; k < setup->frames; k += setup->batch) {
        uint32_t n = setup->frames - k < setup->batch ? setup->frames - k
                                                      : setup->batch;
        ck_assert_int_eq(cc_simulator_frames(simulator, setup->dark + k, n,
                                             frames, NULL),
                         CC_OK);
        process_batch(finder, frames, pixels, n, setup->scattered, batch);
        /* Gather the batch into the run's list through the public view. */
        for (uint32_t i = 0; i < n; i++) {
            cc_frame_clusters frame;
            ck_assert_int_eq(cc_clusters_frame(batch, i, &frame), CC_OK);
            ck_assert_uint_eq(frame.frame_number, k + i);
            ck_assert_int_eq(cc__clusters_begin_frame(run.clusters,
                                                      frame.frame_number),
                             CC_OK);
            ck_assert_int_eq(cc__clusters_append(run.clusters, batch, i, 0),
                             CC_OK);
        }
    }
    run.mean = malloc(pixels * sizeof *run.mean);
    run.rms = malloc(pixels * sizeof *run.rms);
    ck_assert_int_eq(cc_finder_pedestal_maps(finder, run.mean, run.rms), CC_OK);
    cc_finder_get_stats(finder, &run.stats);
    cc_clusters_destroy(batch);
    free(frames);
    cc_finder_destroy(finder);
    cc_simulator_destroy(simulator);
    return run;
}

static void free_run(struct run *run)
{
    cc_clusters_destroy(run->clusters);
    free(run->mean);
    free(run->rms);
}

static void assert_same_run(const struct run *a, const struct run *b,
                            size_t pixels)
{
    const cc_clusters *ca = a->clusters, *cb = b->clusters;
    size_t cells = (size_t)ca->size_x * ca->size_y;
    ck_assert_uint_eq(ca->n_frames, cb->n_frames);
    ck_assert_uint_eq(ca->n_clusters, cb->n_clusters);
    for (size_t k = 0; k < ca->n_frames; k++) {
        ck_assert_uint_eq(ca->frames[k].count, cb->frames[k].count);
        ck_assert_uint_eq(ca->frames[k].dropped, cb->frames[k].dropped);
    }
    ck_assert_mem_eq(ca->x, cb->x, ca->n_clusters * sizeof *ca->x);
    ck_assert_mem_eq(ca->y, cb->y, ca->n_clusters * sizeof *ca->y);
    ck_assert_mem_eq(ca->values, cb->values,
                     ca->n_clusters * cells * sizeof *ca->values);
    ck_assert_mem_eq(a->mean, b->mean, pixels * sizeof *a->mean);
    ck_assert_mem_eq(a->rms, b->rms, pixels * sizeof *a->rms);
}

/* Byte-identical clusters and pedestal for 1, 2, 3, 4, 7 and 16 threads
 * (four blocks of 9 or 10 rows; with 7 and 16 threads some own none and
 * only take others' steps), batches of 1, 5 and 24 frames (in which blocks run
 * frames ahead of each other) and frames given as a list of pointers, on
 * frames whose sides are not multiples of anything, for 3x3, 9x9 and 5x3
 * clusters in both precisions. */
START_TEST(threads_and_batches_identical)
{
    static const uint32_t sizes[3][2] = {{3, 3}, {9, 9}, {5, 3}};
    struct setup setup = {.rows = 37,
                          .cols = 53,
                          .size_x = sizes[_i % 3][0],
                          .size_y = sizes[_i % 3][1],
                          .threads = 1,
                          .batch = 1,
                          .dark = 30,
                          .frames = 24,
                          .photons = 25,
                          .precision = _i < 3 ? CC_PRECISION_FLOAT
                                              : CC_PRECISION_DOUBLE};
    struct run reference = run_frames(&setup);
    ck_assert_uint_gt(reference.stats.clusters, 100);
    static const uint32_t threads[] = {2, 3, 4, 7, 16};
    static const uint32_t batches[] = {1, 5, 24};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++)
        for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
            setup.threads = threads[t];
            setup.batch = batches[b];
            struct run other = run_frames(&setup);
            assert_same_run(&reference, &other, 37 * 53);
            free_run(&other);
        }
    setup.scattered = true;
    struct run scattered = run_frames(&setup);
    assert_same_run(&reference, &scattered, 37 * 53);
    free_run(&scattered);
    free_run(&reference);
}
END_TEST

/* Many blocks, some threads owning one and some two: 13 threads cut 203
 * rows into 25 blocks of 8 or 9, so that a 9x9 window reads half of each
 * neighbour and blocks far apart may be many frames apart. */
START_TEST(many_blocks_identical)
{
    uint32_t size = _i ? 9 : 3;
    struct setup setup = {.rows = 203,
                          .cols = 41,
                          .size_x = size,
                          .size_y = size,
                          .threads = 1,
                          .batch = 24,
                          .dark = 30,
                          .frames = 48,
                          .photons = 120,
                          .precision = CC_PRECISION_FLOAT};
    struct run reference = run_frames(&setup);
    setup.threads = 13;
    struct run many = run_frames(&setup);
    assert_same_run(&reference, &many, 203 * 41);
    free_run(&many);
    free_run(&reference);
}
END_TEST

/* Holds the top block of rows back before every step. */
static void hold_top_block(unsigned block, size_t step)
{
    (void)step;
    if (block == 0)
        nanosleep(&(struct timespec){.tv_nsec = 2000000}, NULL);
}

/* A block held back before every step, so that without the wait its
 * neighbours would run through the batch on values the held block has not
 * subtracted yet: the bytes are still those of one thread. */
START_TEST(slow_block_changes_nothing)
{
    struct setup setup = {.rows = 37,
                          .cols = 53,
                          .size_x = 3,
                          .size_y = 3,
                          .threads = 1,
                          .batch = 24,
                          .dark = 30,
                          .frames = 24,
                          .photons = 25,
                          .precision = CC_PRECISION_FLOAT};
    struct run reference = run_frames(&setup);
    setup.threads = 2 + (uint32_t)_i;
    cc__cpu_before_block = hold_top_block;
    struct run held = run_frames(&setup);
    cc__cpu_before_block = NULL;
    assert_same_run(&reference, &held, 37 * 53);
    free_run(&held);
    free_run(&reference);
}
END_TEST

/* A cap stores the first clusters in order and counts the rest: stored +
 * dropped equals the uncapped count in every frame, and the stats say how
 * many frames were truncated. */
START_TEST(cap_counts_what_it_drops)
{
    struct setup setup = {.rows = 40,
                          .cols = 40,
                          .size_x = 3,
                          .size_y = 3,
                          .threads = _i ? 3 : 1,
                          .batch = 4,
                          .dark = 30,
                          .frames = 12,
                          .photons = 30,
                          .precision = CC_PRECISION_FLOAT};
    struct run full = run_frames(&setup);
    setup.max_clusters = 10;
    struct run capped = run_frames(&setup);
    const cc_clusters *f = full.clusters, *c = capped.clusters;
    uint64_t truncated = 0, dropped = 0;
    for (size_t k = 0; k < f->n_frames; k++) {
        cc_frame_clusters all, kept;
        cc_clusters_frame(f, k, &all);
        cc_clusters_frame(c, k, &kept);
        ck_assert_uint_eq(kept.count, all.count < 10 ? all.count : 10);
        ck_assert_uint_eq(kept.count + kept.dropped, all.count);
        ck_assert_mem_eq(kept.x, all.x, kept.count * sizeof *kept.x);
        ck_assert_mem_eq(kept.values, all.values,
                         kept.count * 9 * sizeof *kept.values);
        truncated += kept.dropped > 0;
        dropped += kept.dropped;
    }
    ck_assert_uint_gt(truncated, 0);
    ck_assert_uint_eq(capped.stats.frames_truncated, truncated);
    ck_assert_uint_eq(capped.stats.clusters_dropped, dropped);
    ck_assert_uint_eq(capped.stats.clusters + dropped, full.stats.clusters);
    /* The cap bounds storage, not decisions: the pedestal is the same. */
    ck_assert_mem_eq(full.rms, capped.rms, 40 * 40 * sizeof *full.rms);
    free_run(&full);
    free_run(&capped);
}
END_TEST

/* Counts clusters of a that are not in b (same frame, same centre). */
static size_t clusters_missing(const cc_clusters *a, const cc_clusters *b)
{
    size_t missing = 0;
    for (size_t k = 0; k < a->n_frames; k++) {
        cc_frame_clusters fa, fb;
        cc_clusters_frame(a, k, &fa);
        cc_clusters_frame(b, k, &fb);
        for (uint32_t i = 0; i < fa.count; i++) {
            int found = 0;
            for (uint32_t j = 0; j < fb.count && !found; j++)
                found = fa.x[i] == fb.x[j] && fa.y[i] == fb.y[j];
            missing += !found;
        }
    }
    return missing;
}

/* Float and double on a long run: they differ only where a decision sits
 * on a rounding edge. The figure is reported; the bound is 1 in 10^4. */
START_TEST(float_close_to_double)
{
    struct setup setup = {.rows = 48,
                          .cols = 48,
                          .size_x = 3,
                          .size_y = 3,
                          .threads = 2,
                          .batch = 50,
                          .dark = 200,
                          .frames = 2000,
                          .photons = 35,
                          .precision = CC_PRECISION_FLOAT};
    struct run single = run_frames(&setup);
    setup.precision = CC_PRECISION_DOUBLE;
    struct run twice = run_frames(&setup);
    size_t only_float = clusters_missing(single.clusters, twice.clusters);
    size_t only_double = clusters_missing(twice.clusters, single.clusters);
    printf("float vs double over %u frames of %ux%u: %zu float and %zu "
           "double clusters, %zu only in float, %zu only in double\n",
           setup.frames, setup.rows, setup.cols, single.clusters->n_clusters,
           twice.clusters->n_clusters, only_float, only_double);
    ck_assert_uint_gt(twice.clusters->n_clusters, 50000);
    ck_assert_uint_le(only_float + only_double,
                      twice.clusters->n_clusters / 10000);
    free_run(&single);
    free_run(&twice);
}
END_TEST

/* Frame numbers label the output as given, or count from frames_processed. */
START_TEST(frame_numbers_label_output)
{
    cc_config config = test_config(8, 8);
    config.pedestal_frames = 2;
    cc_finder *finder = test_finder(&config);
    uint16_t frames[3][64] = {{0}};
    ck_assert_int_eq(cc_finder_train(finder, frames[0], 2), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    uint64_t numbers[3] = {1000, 7, 1u << 31};
    ck_assert_int_eq(cc_finder_process(finder, frames[0], numbers, 3, clusters),
                     CC_OK);
    cc_frame_clusters frame;
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(cc_clusters_frame(clusters, k, &frame), CC_OK);
        ck_assert_uint_eq(frame.frame_number, numbers[k]);
    }
    ck_assert_int_eq(cc_finder_process(finder, frames[0], NULL, 2, clusters),
                     CC_OK);
    ck_assert_int_eq(cc_clusters_frame(clusters, 1, &frame), CC_OK);
    ck_assert_uint_eq(frame.frame_number, 4);
    ck_assert_int_eq(cc_finder_process(finder, frames[0], NULL, 0, clusters),
                     CC_OK);
    ck_assert_uint_eq(cc_clusters_frame_count(clusters), 0);
    ck_assert_int_eq(cc_clusters_frame(clusters, 0, &frame), CC_EINVAL);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
}
END_TEST

/* A list with a NULL frame is refused whole: nothing is processed. */
START_TEST(list_with_null_frame_refused)
{
    cc_config config = test_config(8, 8);
    config.pedestal_frames = 2;
    cc_finder *finder = test_finder(&config);
    uint16_t frame[64] = {0};
    ck_assert_int_eq(cc_finder_train(finder, frame, 1), CC_OK);
    ck_assert_int_eq(cc_finder_train(finder, frame, 1), CC_OK);
    cc_clusters *clusters;
    ck_assert_int_eq(cc_clusters_new(&clusters), CC_OK);
    const uint16_t *list[3] = {frame, NULL, frame};
    ck_assert_int_eq(cc_finder_process_list(finder, list, NULL, 3, clusters),
                     CC_EINVAL);
    ck_assert_str_eq(cc_finder_last_error(finder),
                     "frame 1 of the list is NULL");
    cc_finder_stats stats;
    cc_finder_get_stats(finder, &stats);
    ck_assert_uint_eq(stats.frames_processed, 0);
    ck_assert_int_eq(cc_finder_process_list(finder, NULL, NULL, 1, clusters),
                     CC_EINVAL);
    list[1] = frame;
    ck_assert_int_eq(cc_finder_process_list(finder, list, NULL, 3, clusters),
                     CC_OK);
    ck_assert_uint_eq(cc_clusters_frame_count(clusters), 3);
    cc_clusters_destroy(clusters);
    cc_finder_destroy(finder);
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* Lowers the soft data limit to what the process has now plus headroom
 * bytes, or restores the saved limit when restore is set. The data limit,
 * not the address space's: glibc's thread arenas reserve 64 MiB of
 * address space each and grow inside it, so that a malloc retried in
 * another arena could succeed under an address-space limit; Linux counts
 * every page made writable against the data limit (RLIMIT_DATA, since
 * 4.7), reserved or not. */
static void limit_memory(size_t headroom, int restore)
{
    static struct rlimit saved;
    if (restore) {
        ck_assert_int_eq(setrlimit(RLIMIT_DATA, &saved), 0);
        return;
    }
    ck_assert_int_eq(getrlimit(RLIMIT_DATA, &saved), 0);
    FILE *status = fopen("/proc/self/status", "r");
    ck_assert_ptr_nonnull(status);
    char line[256];
    unsigned long data_kb = 0;
    while (fgets(line, sizeof line, status) != NULL &&
           sscanf(line, "VmData: %lu kB", &data_kb) != 1)
        ;
    fclose(status);
    ck_assert_uint_gt(data_kb, 0);
    struct rlimit lowered = saved;
    lowered.rlim_cur = (rlim_t)data_kb * 1024 + headroom;
    ck_assert_int_eq(setrlimit(RLIMIT_DATA, &lowered), 0);
}

/* A batch that runs out of memory fails whole: no frame counted, the
 * pedestal as before the call, no clusters returned; with memory back,
 * the same batch gives what an untouched twin gives. The batch's last
 * frame needs 6 MB of cluster list. When grown, an earlier batch of the
 * same frames has grown the workers' own lists, so that with several
 * threads the only memory the batch asks for is the caller's list, which
 * the workers fill once all are done: then the join fails, not a worker.
 * (Not built under the address and thread sanitizers, which need the
 * address space.) */
static void check_failed_batch(uint32_t threads, bool grown)
{
    struct flat victim, twin;
    flat_open(&victim, 400, 400, 3, 3, CC_PRECISION_FLOAT, threads);
    flat_open(&twin, 400, 400, 3, 3, CC_PRECISION_FLOAT, 1);
    size_t pixels = 400 * 400;
    uint16_t *frames = malloc(3 * pixels * sizeof *frames);
    double *before = malloc(2 * pixels * sizeof *before);
    double *after = malloc(2 * pixels * sizeof *after);
    cc_clusters *out;
    ck_assert(frames && before && after);
    ck_assert_int_eq(cc_clusters_new(&out), CC_OK);
    /* Two quiet frames (v = 1 moves every mean) with a photon each, then
     * one where every pixel is an equal maximum: 160000 clusters. */
    for (size_t p = 0; p < 3 * pixels; p++)
        frames[p] = p < 2 * pixels ? BASE + 1 : BASE + 10;
    frames[1000] = frames[pixels + 5000] = BASE + 50;
    for (int pass = 0; grown && pass < 2; pass++) {
        struct flat *finder = pass == 0 ? &victim : &twin;
        ck_assert_int_eq(cc_finder_process(finder->finder, frames, NULL, 3,
                                           finder->clusters),
                         CC_OK);
    }
    ck_assert_int_eq(cc_finder_pedestal_maps(victim.finder, before,
                                             before + pixels),
                     CC_OK);
    cc_finder_stats was, stats;
    cc_finder_get_stats(victim.finder, &was);

    limit_memory(1 << 20, 0);
    int rc = cc_finder_process(victim.finder, frames, NULL, 3, out);
    limit_memory(0, 1);
    ck_assert_int_eq(rc, CC_ENOMEM);
    ck_assert_ptr_nonnull(
        strstr(cc_finder_last_error(victim.finder), "pedestal is unchanged"));
    ck_assert_uint_eq(cc_clusters_frame_count(out), 0);
    cc_finder_get_stats(victim.finder, &stats);
    ck_assert_uint_eq(stats.frames_processed, was.frames_processed);
    ck_assert_uint_eq(stats.clusters, was.clusters);
    ck_assert_int_eq(cc_finder_pedestal_maps(victim.finder, after,
                                             after + pixels),
                     CC_OK);
    ck_assert_mem_eq(after, before, 2 * pixels * sizeof *before);

    ck_assert_int_eq(cc_finder_process(victim.finder, frames, NULL, 3, out),
                     CC_OK);
    ck_assert_int_eq(cc_finder_process(twin.finder, frames, NULL, 3,
                                       twin.clusters),
                     CC_OK);
    size_t total = cc_clusters_total(twin.clusters);
    ck_assert_uint_gt(total, pixels - 100);
    ck_assert_uint_eq(cc_clusters_total(out), total);
    ck_assert_mem_eq(out->values, twin.clusters->values,
                     total * 9 * sizeof(int32_t));
    ck_assert_int_eq(cc_finder_pedestal_maps(twin.finder, before,
                                             before + pixels),
                     CC_OK);
    ck_assert_int_eq(cc_finder_pedestal_maps(victim.finder, after,
                                             after + pixels),
                     CC_OK);
    ck_assert_mem_eq(after, before, 2 * pixels * sizeof *before);
    cc_clusters_destroy(out);
    free(frames);
    free(before);
    free(after);
    flat_close(&victim);
    flat_close(&twin);
}

/* A finder of several threads made with too little memory, at every
 * point of its set-up that the limit can reach: it fails with a message
 * (out of memory, or no memory for a thread's stack) and frees what it
 * had, or it is made. glibc fills what malloc returns with a pattern
 * meanwhile, so that a part freed before it was filled in shows. */
START_TEST(new_without_memory_fails_cleanly)
{
    cc_config config = test_config(400, 400);
    config.threads = 8;
    int failures = 0;
    mallopt(M_PERTURB, 0xA5);
    for (size_t headroom = 0; headroom <= (8u << 20); headroom += 64u << 10) {
        char message[CC_MESSAGE_SIZE] = "";
        cc_finder *finder = NULL;
        limit_memory(headroom, 0);
        int rc = cc_finder_new(&finder, &config, message);
        limit_memory(0, 1);
        if (rc == CC_OK) {
            cc_finder_destroy(finder);
            continue;
        }
        ck_assert_msg(rc == CC_ENOMEM || rc == CC_ETHREAD, "rc %d: %s", rc,
                      message);
        ck_assert_ptr_null(finder);
        ck_assert_str_ne(message, "");
        failures++;
    }
    mallopt(M_PERTURB, 0);
    ck_assert_int_gt(failures, 0);
}
END_TEST

/* One thread, and four, which must all give up when one fails. */
START_TEST(failed_batch_changes_nothing)
{
    check_failed_batch(_i ? 4 : 1, false);
}
END_TEST

/* The same when the join of four workers' clusters runs out of memory. */
START_TEST(failed_join_changes_nothing)
{
    check_failed_batch(4, true);
}
END_TEST
#endif

/* The number of the process's threads, the calling one aside, that are
 * not ordinary time-shared ones. */
static int threads_not_time_shared(void)
{
    DIR *tasks = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(tasks);
    int found = 0;
    for (struct dirent *task; (task = readdir(tasks)) != NULL;) {
        pid_t id = (pid_t)atol(task->d_name);
        if (id > 0 && id != getpid() && sched_getscheduler(id) != SCHED_OTHER)
            found++;
    }
    closedir(tasks);
    return found;
}

/* A finder made by a real-time thread (as an EPICS IOC run as root makes
 * it; SCHED_BATCH where this test may not take a real-time policy, which
 * is inherited the same way) works with time-shared threads, and
 * cc_thread_share_cpus makes the caller one. */
static void *do_nothing(void *unused)
{
    return unused;
}

START_TEST(workers_share_the_cpus)
{
    /* ThreadSanitizer's runtime starts a helper thread of its own at the
     * process's first pthread_create, with the caller's policy: one
     * started and joined first keeps it out of what this test sets. */
    pthread_t first;
    ck_assert_int_eq(pthread_create(&first, NULL, do_nothing, NULL), 0);
    ck_assert_int_eq(pthread_join(first, NULL), 0);
    struct sched_param real_time = {
        .sched_priority = sched_get_priority_min(SCHED_FIFO)};
    struct sched_param batch = {0};
    if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &real_time) != 0)
        ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_BATCH,
                                               &batch),
                         0);
    ck_assert_int_ne(sched_getscheduler(0), SCHED_OTHER);
    struct flat flat;
    flat_open(&flat, 40, 40, 3, 3, CC_PRECISION_FLOAT, 3);
    ck_assert_uint_eq(cc_finder_threads(flat.finder), 3);
    flat_set(&flat, 20, 20, 300);
    ck_assert_uint_eq(flat_process(&flat).count, 1);
    ck_assert_int_eq(threads_not_time_shared(), 0);
    ck_assert_int_eq(cc_thread_share_cpus(), CC_OK);
    ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
    flat_close(&flat);
}
END_TEST

Suite *suite_batches(void)
{
    Suite *suite = suite_create("batches");
    TCase *identity = tcase_create("identity");
    tcase_set_timeout(identity, 300);
    tcase_add_loop_test(identity, threads_and_batches_identical, 0, 6);
    tcase_add_loop_test(identity, many_blocks_identical, 0, 2);
    tcase_add_loop_test(identity, slow_block_changes_nothing, 0, 2);
    tcase_add_loop_test(identity, cap_counts_what_it_drops, 0, 2);
    tcase_add_test(identity, float_close_to_double);
    tcase_add_test(identity, frame_numbers_label_output);
    tcase_add_test(identity, list_with_null_frame_refused);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    tcase_add_loop_test(identity, failed_batch_changes_nothing, 0, 2);
    tcase_add_test(identity, failed_join_changes_nothing);
    tcase_add_test(identity, new_without_memory_fails_cleanly);
#endif
    suite_add_tcase(suite, identity);
    TCase *scheduling = tcase_create("scheduling");
    tcase_add_test(scheduling, workers_share_the_cpus);
    suite_add_tcase(suite, scheduling);
    return suite;
}
