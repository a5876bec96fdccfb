/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu_moves.c: the pedestal moved between the backends, frames in memory
 * registered with CUDA, and a list of separate frame buffers copied
 * each or in one batched copy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

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
               pair.pool.frames + (size_t)(k % POOL) * pair.pool.pixels, bytes);
    }
    for (int k = 0; k < N; k += POOL) {
        int n = N - k < POOL ? N - k : POOL;
        ck_assert_int_eq(cc_finder_process(pair.cpu, pair.pool.frames, NULL, n,
                                           pair.want),
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

void gpu_move_cases(Suite *suite)
{
    TCase *moves = tcase_create("moves");
    tcase_add_test(moves, pedestal_moves_between_backends);
    tcase_add_test(moves, registered_frames);
    tcase_add_loop_test(moves, list_of_separate_buffers, CC__COPIES_EACH,
                        CC__COPIES_BATCHED + 1);
    add_gpu_case(suite, moves);
}
