/* SPDX-License-Identifier: BSD-3-Clause */
/* copy_ceiling.c: see copy_ceiling.h. */
#include <stdio.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "copy_ceiling.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double copy_ceiling(const uint16_t *frames, size_t frame_bytes,
                    size_t n_frames, size_t batch, double seconds,
                    char *message, size_t message_size)
{
    void *device = NULL;
    cudaStream_t stream = NULL;
    cudaError_t error = cudaMalloc(&device, batch * frame_bytes);
    if (error == cudaSuccess)
        error = cudaStreamCreate(&stream);
    double rate = -1;
    if (error == cudaSuccess) {
        size_t done = 0;
        double start = now(), elapsed = 0;
        /* Whole passes over the frames, synchronised once a pass, as a
         * finder that copies batches back to back would see them. */
        while (error == cudaSuccess && elapsed < seconds) {
            for (size_t first = 0; first + batch <= n_frames && error == cudaSuccess;
                 first += batch) {
                error = cudaMemcpyAsync(device,
                                        (const char *)frames +
                                            first * frame_bytes,
                                        batch * frame_bytes,
                                        cudaMemcpyHostToDevice, stream);
                done += batch;
            }
            if (error == cudaSuccess)
                error = cudaStreamSynchronize(stream);
            elapsed = now() - start;
        }
        if (error == cudaSuccess)
            rate = (double)done / elapsed;
    }
    if (error != cudaSuccess)
        snprintf(message, message_size, "CUDA: %s", cudaGetErrorString(error));
    if (stream != NULL)
        cudaStreamDestroy(stream);
    cudaFree(device);
    return rate;
}
