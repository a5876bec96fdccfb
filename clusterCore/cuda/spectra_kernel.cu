/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spectra_kernel.cu: a flat field's per-pixel spectra on the GPU
 * (docs/spec.md §9.3), from a chunk's clusters while they are still on
 * the device. Which bin a cluster enters is the host's formula
 * (cluster_arithmetic.h: an integer sum, one IEEE double multiply), so
 * the counts are the host's. Counts are uint64 on the device; the host
 * clips them to uint32 as it adds them to its spectra.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define CC__HD __host__ __device__
#include "../clustercore.h"
#include "../analysis/cluster_arithmetic.h"
#include "cluster_tally.cuh"

__global__ void spectra_kernel(cc__gain_binning binning, uint32_t cols,
                               cc__chunk_clusters chunk,
                               unsigned long long *__restrict__ counts,
                               unsigned long long *__restrict__ totals)
{
    /* totals: photons entered, photons outside the spectra's range */
    auto enter = [&](uint64_t i, const int32_t *values,
                     unsigned long long *tally) {
        int32_t bin = gain_event_bin(&binning, chunk.size_x, chunk.size_y,
                                     values);
        if (bin == CC__GAIN_OUTSIDE)
            tally[1]++;
        if (bin < 0)
            return;
        size_t pixel = (size_t)chunk.y[i] * cols + chunk.x[i];
        atomicAdd(&counts[pixel * binning.bins + (uint32_t)bin], 1ull);
        tally[0]++;
    };
    tally_clusters<2>(chunk, enter, totals);
}

cudaError_t cc__launch_spectra(const cc__gain_binning &binning, uint32_t cols,
                               const cc__chunk_clusters &chunk,
                               unsigned long long *counts,
                               unsigned long long *totals, cudaStream_t stream)
{
    spectra_kernel<<<CLUSTER_TALLY_BLOCKS, CLUSTER_TALLY_THREADS, 0, stream>>>(
        binning, cols, chunk, counts, totals);
    return cudaGetLastError();
}
