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

/* Buffers and streams of one measurement; NULL where a direction has no
 * bytes. */
struct copies {
    void *device_in, *device_out, *host_out;
    cudaStream_t in, out;
};

static cudaError_t open_copies(struct copies *c, size_t in_bytes,
                               size_t out_bytes)
{
    cudaError_t error = cudaSuccess;
    if (in_bytes > 0) {
        error = cudaMalloc(&c->device_in, in_bytes);
        if (error == cudaSuccess)
            error = cudaStreamCreateWithFlags(&c->in, cudaStreamNonBlocking);
    }
    if (out_bytes > 0 && error == cudaSuccess) {
        error = cudaMalloc(&c->device_out, out_bytes);
        if (error == cudaSuccess)
            error = cudaHostAlloc(&c->host_out, out_bytes,
                                  cudaHostAllocDefault);
        if (error == cudaSuccess)
            error = cudaMemset(c->device_out, 0x5a, out_bytes);
        if (error == cudaSuccess)
            error = cudaStreamCreateWithFlags(&c->out, cudaStreamNonBlocking);
    }
    return error;
}

static void close_copies(struct copies *c)
{
    if (c->in != NULL)
        cudaStreamDestroy(c->in);
    if (c->out != NULL)
        cudaStreamDestroy(c->out);
    cudaFree(c->device_in);
    cudaFree(c->device_out);
    cudaFreeHost(c->host_out);
}

double copy_ceiling(const uint16_t *frames, size_t in_bytes, size_t out_bytes,
                    size_t n_frames, size_t batch, double seconds,
                    char *message, size_t message_size)
{
    struct copies c = {NULL, NULL, NULL, NULL, NULL};
    cudaError_t error = open_copies(&c, batch * in_bytes, batch * out_bytes);
    double rate = -1;
    if (error == cudaSuccess) {
        size_t done = 0;
        double start = now(), elapsed = 0;
        /* Whole passes over the frames, synchronised once a pass, as a
         * finder that copies batches back to back would see them. */
        while (error == cudaSuccess && elapsed < seconds) {
            for (size_t first = 0;
                 first + batch <= n_frames && error == cudaSuccess;
                 first += batch) {
                if (c.in != NULL)
                    error = cudaMemcpyAsync(c.device_in,
                                            (const char *)frames +
                                                first * in_bytes,
                                            batch * in_bytes,
                                            cudaMemcpyHostToDevice, c.in);
                if (c.out != NULL && error == cudaSuccess)
                    error = cudaMemcpyAsync(c.host_out, c.device_out,
                                            batch * out_bytes,
                                            cudaMemcpyDeviceToHost, c.out);
                done += batch;
            }
            if (error == cudaSuccess)
                error = cudaDeviceSynchronize();
            elapsed = now() - start;
        }
        if (error == cudaSuccess)
            rate = (double)done / elapsed;
    }
    if (error != cudaSuccess)
        snprintf(message, message_size, "CUDA: %s", cudaGetErrorString(error));
    close_copies(&c);
    return rate;
}
