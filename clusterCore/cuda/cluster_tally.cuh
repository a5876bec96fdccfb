/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cluster_tally.cuh: what the kernels that accumulate across batches
 * (the image, a flat field's spectra, the spectrum and hit map) share: one thread a cluster of a
 * chunk, while the clusters are still on the device, and each warp's
 * tallies added to the totals once.
 */
#ifndef CC_CLUSTER_TALLY_CUH
#define CC_CLUSTER_TALLY_CUH

#include "kernels.h"

/* Enough threads for the clusters of a typical chunk, a few blocks a
 * multiprocessor; the grid-stride loop covers any more. */
enum { CLUSTER_TALLY_BLOCKS = 264, CLUSTER_TALLY_THREADS = 256 };

/* Calls enter(i, values, tally) for each cluster i of chunk (values: its
 * size_x * size_y values), which counts what became of it in
 * tally[0..N-1]; then adds the tallies to totals[0..N-1]. */
template <int N, typename Enter>
__device__ void tally_clusters(const cc__chunk_clusters &chunk, Enter enter,
                               unsigned long long *totals)
{
    /* A chunk whose clusters outgrew their arrays was not written; the
     * batch runs again and enters it then. */
    const uint64_t n = *chunk.total;
    if (n > chunk.capacity)
        return;
    const size_t cells = (size_t)chunk.size_x * chunk.size_y;
    unsigned long long tally[N] = {};
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x)
        enter(i, chunk.values + i * cells, tally);
    for (int k = 0; k < N; k++) {
        for (int offset = 16; offset > 0; offset /= 2)
            tally[k] += __shfl_down_sync(0xFFFFFFFFu, tally[k], offset);
        if ((threadIdx.x & 31) == 0 && tally[k] != 0)
            atomicAdd(&totals[k], tally[k]);
    }
}

#endif
