/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * image_kernel.cu: the interpolated image on the GPU (docs/spec.md
 * §7.5-§7.7), from a chunk's clusters while they are still on the device.
 * The per-cluster formulas are the host's (cluster_arithmetic.h), built
 * with --fmad=false and IEEE division, so every position is the host's to
 * the bit. Counts are uint64 on the device; the host clips them to uint32
 * as it adds them to its image.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define CC__HD __host__ __device__
#include "../clustercore.h"
#include "../cluster_arithmetic.h"
#include "kernels.h"

/* One thread a cluster, grid-stride; each warp adds its statistics once. */
__global__ void image_kernel(cc__image_map map, uint32_t size_x,
                             uint32_t size_y, const uint16_t *__restrict__ x,
                             const uint16_t *__restrict__ y,
                             const int32_t *__restrict__ values,
                             const uint64_t *total, uint64_t capacity,
                             unsigned long long *__restrict__ counts,
                             unsigned long long *__restrict__ stats)
{
    /* A chunk whose clusters outgrew their arrays was not written; the
     * batch runs again and images it then. */
    const uint64_t n = *total;
    if (n > capacity)
        return;
    const size_t cells = (size_t)size_x * size_y;
    unsigned long long photons = 0, uninterpolable = 0, clipped = 0,
                       outside = 0;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        cc_position at = cluster_position(&map, size_x, size_y,
                                          values + i * cells, x[i], y[i]);
        if (at.status == CC_POSITION_OUTSIDE_WINDOW) {
            outside++;
            continue;
        }
        bool cut = false;
        atomicAdd(&counts[image_bin(&map, at, &cut)], 1ull);
        photons++;
        uninterpolable += at.status == CC_POSITION_UNINTERPOLABLE;
        clipped += cut;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        photons += __shfl_down_sync(0xFFFFFFFFu, photons, offset);
        uninterpolable += __shfl_down_sync(0xFFFFFFFFu, uninterpolable, offset);
        clipped += __shfl_down_sync(0xFFFFFFFFu, clipped, offset);
        outside += __shfl_down_sync(0xFFFFFFFFu, outside, offset);
    }
    if ((threadIdx.x & 31) == 0 && photons + outside > 0) {
        atomicAdd(&stats[0], photons);
        atomicAdd(&stats[1], uninterpolable);
        atomicAdd(&stats[2], clipped);
        atomicAdd(&stats[3], outside);
    }
}

cudaError_t cc__launch_image(const cc__image_map &map, uint32_t size_x,
                             uint32_t size_y, const uint16_t *x,
                             const uint16_t *y, const int32_t *values,
                             const uint64_t *total, uint64_t capacity,
                             unsigned long long *counts,
                             unsigned long long *stats, cudaStream_t stream)
{
    /* Enough threads for the clusters of a typical chunk, a few blocks a
     * multiprocessor; the loop covers any more. */
    image_kernel<<<264, 256, 0, stream>>>(map, size_x, size_y, x, y, values,
                                          total, capacity, counts, stats);
    return cudaGetLastError();
}
