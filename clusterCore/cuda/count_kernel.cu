/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * count_kernel.cu: the spectrum and the hit map (the counting image) on
 * the GPU (docs/spec.md §4.5-§4.6), from a chunk's clusters while they
 * are still on the device, so that no host thread reads them a second
 * time. Energies are exact integer sums and a bin is the host's formula
 * (cluster_arithmetic.h, IEEE double, no FMA), so the counts are the
 * host's. Counts are uint64 on the device; the host stops the hit map's
 * at 2^32 - 1 as it adds them to its own.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define CC__HD __host__ __device__
#include "../clustercore.h"
#include "../analysis/cluster_arithmetic.h"
#include "cluster_tally.cuh"

__global__ void count_kernel(cc__tally_binning binning,
                             cc__chunk_clusters chunk,
                             unsigned long long *__restrict__ spectrum,
                             unsigned long long *__restrict__ hitmap,
                             unsigned long long *__restrict__ totals)
{
    /* totals: the spectrum's underflow and overflow, the clusters the
     * hit map's window leaves out */
    auto enter = [&](uint64_t i, const int32_t *values,
                     unsigned long long *tally) {
        if (binning.counts_spectrum) {
            int64_t bin = tally_spectrum_bin(
                &binning, cluster_energy(binning.energy, chunk.size_x,
                                         chunk.size_y, values));
            if (bin >= 0)
                atomicAdd(&spectrum[bin], 1ull);
            else
                tally[bin == CC__SPECTRUM_UNDER ? 0 : 1]++;
        }
        if (!binning.counts_hitmap)
            return;
        if (binning.windowed &&
            !integer_window_holds(binning.first, binning.end,
                                  cluster_energy(binning.window_energy,
                                                 chunk.size_x, chunk.size_y,
                                                 values))) {
            tally[2]++;
            return;
        }
        atomicAdd(&hitmap[(size_t)chunk.y[i] * binning.cols + chunk.x[i]],
                  1ull);
    };
    tally_clusters<3>(chunk, enter, totals);
}

cudaError_t cc__launch_count(const cc__tally_binning &binning,
                             const cc__chunk_clusters &chunk,
                             unsigned long long *spectrum,
                             unsigned long long *hitmap,
                             unsigned long long *totals, cudaStream_t stream)
{
    count_kernel<<<CLUSTER_TALLY_BLOCKS, CLUSTER_TALLY_THREADS, 0, stream>>>(
        binning, chunk, spectrum, hitmap, totals);
    return cudaGetLastError();
}
