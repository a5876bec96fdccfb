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
#include "../analysis/cluster_arithmetic.h"
#include "cluster_tally.cuh"

__global__ void image_kernel(cc__image_map map, cc__chunk_clusters chunk,
                             unsigned long long *__restrict__ counts,
                             unsigned long long *__restrict__ stats)
{
    /* stats: photons, uninterpolable, clipped, outside the window */
    auto enter = [&](uint64_t i, const int32_t *values,
                     unsigned long long *tally) {
        cc_position at = cluster_position(&map, chunk.size_x, chunk.size_y,
                                          values, chunk.x[i], chunk.y[i]);
        if (at.status == CC_POSITION_OUTSIDE_WINDOW) {
            tally[3]++;
            return;
        }
        bool cut = false;
        atomicAdd(&counts[image_bin(&map, at, &cut)], 1ull);
        tally[0]++;
        tally[1] += at.status == CC_POSITION_UNINTERPOLABLE;
        tally[2] += cut;
    };
    tally_clusters<4>(chunk, enter, stats);
}

cudaError_t cc__launch_image(const cc__image_map &map,
                             const cc__chunk_clusters &chunk,
                             unsigned long long *counts,
                             unsigned long long *stats, cudaStream_t stream)
{
    image_kernel<<<CLUSTER_TALLY_BLOCKS, CLUSTER_TALLY_THREADS, 0, stream>>>(
        map, chunk, counts, stats);
    return cudaGetLastError();
}
