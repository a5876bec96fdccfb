/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * analog_kernel.cu: the analog image on the GPU (docs/spec.md §4.8). A
 * chunk's v planes, written by the decide kernel (0 where masked), are
 * added pixel by pixel, frame after frame, as analog terms (multiples of
 * 2^-16, pixel_arithmetic.h), into the batch's sums, in double; a batch
 * that succeeds is then added into the image's sums. The terms are the
 * host's and their sums exact, so the sums are the host's.
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* pixel_analog_term in double: a float value converts to it exactly, so
 * one instance serves both precisions. */
namespace precision_double {
typedef double real;
#include "../pedestal/pixel_arithmetic.h"
} // namespace precision_double
using precision_double::pixel_analog_term;

enum { ANALOG_THREADS = 256 };

template <typename T>
__global__ void analog_kernel(const T *__restrict__ v_planes, uint32_t n_frames,
                              size_t pixels, double *__restrict__ sums)
{
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pixels)
        return;
    double sum = sums[p];
    for (uint32_t k = 0; k < n_frames; k++)
        sum += pixel_analog_term((double)v_planes[(size_t)k * pixels + p]);
    sums[p] = sum;
}

__global__ void fold_kernel(const double *__restrict__ batch, size_t pixels,
                            double *__restrict__ sums)
{
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < pixels)
        sums[p] += batch[p];
}

static unsigned blocks_for(size_t pixels)
{
    return (unsigned)((pixels + ANALOG_THREADS - 1) / ANALOG_THREADS);
}

template <typename T>
cudaError_t cc__launch_analog(const T *v_planes, uint32_t n_frames,
                              size_t pixels, double *batch_sums,
                              cudaStream_t stream)
{
    analog_kernel<T>
        <<<blocks_for(pixels), ANALOG_THREADS, 0, stream>>>(v_planes, n_frames,
                                                            pixels, batch_sums);
    return cudaGetLastError();
}

cudaError_t cc__launch_analog_fold(const double *batch_sums, size_t pixels,
                                   double *sums, cudaStream_t stream)
{
    fold_kernel<<<blocks_for(pixels), ANALOG_THREADS, 0, stream>>>(batch_sums,
                                                                   pixels,
                                                                   sums);
    return cudaGetLastError();
}

template cudaError_t cc__launch_analog<float>(const float *, uint32_t, size_t,
                                              double *, cudaStream_t);
template cudaError_t cc__launch_analog<double>(const double *, uint32_t, size_t,
                                               double *, cudaStream_t);
