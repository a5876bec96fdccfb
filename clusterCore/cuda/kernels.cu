/*
 * kernels.cu: the CUDA kernels, compiled once per precision, and their
 * launchers. Built with --fmad=false and IEEE division and square root, so
 * that every operation rounds as on the CPU.
 */
#include <math.h>
#include <stdint.h>

#include "kernels.h"

#define CC__HD __host__ __device__

namespace precision_float {
typedef float real;
#include "../pixel_arithmetic.h"
#include "frame_kernels.cuh"
} // namespace precision_float

namespace precision_double {
typedef double real;
#include "../pixel_arithmetic.h"
#include "frame_kernels.cuh"
} // namespace precision_double

/* Clears the bitmaps of a chunk for their next use, once every block of
 * the extract kernel has read them; the same for both precisions. */
__global__ void clear_kernel(uint32_t *bitmaps, size_t n_words)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n_words;
         i += (size_t)gridDim.x * blockDim.x)
        bitmaps[i] = 0;
}

/* Selects the kernels of one precision. */
template <typename T> struct kernels_of;
template <> struct kernels_of<float> {
    static constexpr auto decide = precision_float::decide_kernel;
    static constexpr auto extract = precision_float::extract_kernel;
};
template <> struct kernels_of<double> {
    static constexpr auto decide = precision_double::decide_kernel;
    static constexpr auto extract = precision_double::extract_kernel;
};

template <typename T>
cudaError_t cc__launch_decide(const cc__frame_geometry &geometry,
                              const cc__launch_shape &shape,
                              const uint16_t *frame, const uint16_t *baseline,
                              const T *s_in, const T *s2_in, T *s_out,
                              T *s2_out, T *v_plane, uint32_t *bitmap,
                              uint32_t *count, cudaStream_t stream)
{
    /* A tile and its half-window border must fit the default 48 KB of
     * shared memory; the backend picks shapes that do. */
    size_t shared = (size_t)(shape.tile_rows + 2 * geometry.half_y) *
                    (shape.tile_cols + 2 * geometry.half_x) * sizeof(T);
    if (shape.threads == 0 || shape.threads % 32 != 0 ||
        shape.threads > 1024 || shape.tile_rows == 0 ||
        shape.tile_cols == 0 || shared > 48 * 1024)
        return cudaErrorInvalidConfiguration;
    dim3 grid((geometry.cols + shape.tile_cols - 1) / shape.tile_cols,
              (geometry.rows + shape.tile_rows - 1) / shape.tile_rows);
    kernels_of<T>::decide<<<grid, shape.threads, shared, stream>>>(
        geometry, shape.tile_rows, shape.tile_cols, frame, baseline, s_in,
        s2_in, s_out, s2_out, v_plane, bitmap, count);
    return cudaGetLastError();
}

template <typename T>
cudaError_t cc__launch_extract(const cc__frame_geometry &geometry,
                               uint32_t n_frames, uint32_t *bitmaps,
                               const T *v_planes, const uint32_t *counts,
                               uint64_t *totals, uint32_t max_clusters,
                               const cc__cluster_output &output,
                               uint32_t first_frame, cudaStream_t stream)
{
    /* Each frame is shared by four blocks of 512 threads (a 400 x 400
     * bitmap is ten words a thread), so a chunk of 32 frames keeps 128
     * of the H200's 132 multiprocessors busy gathering values. */
    const unsigned threads = 512, blocks_per_frame = 4;
    if (n_frames == 0)
        return cudaSuccess;
    dim3 grid(n_frames, blocks_per_frame);
    kernels_of<T>::extract<<<grid, threads, 0, stream>>>(
        geometry, bitmaps, v_planes, counts, totals, max_clusters, output,
        first_frame, n_frames);
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        return error;
    size_t words = (size_t)n_frames *
                   (((size_t)geometry.rows * geometry.cols + 31) / 32);
    clear_kernel<<<(unsigned)((words + 1023) / 1024 < 264
                                          ? (words + 1023) / 1024
                                          : 264),
                           1024, 0, stream>>>(bitmaps, words);
    return cudaGetLastError();
}

#define CC__INSTANTIATE(T)                                                    \
    template cudaError_t cc__launch_decide<T>(                                \
        const cc__frame_geometry &, const cc__launch_shape &,                 \
        const uint16_t *, const uint16_t *, const T *, const T *, T *, T *,   \
        T *, uint32_t *, uint32_t *, cudaStream_t);                           \
    template cudaError_t cc__launch_extract<T>(                               \
        const cc__frame_geometry &, uint32_t, uint32_t *, const T *,          \
        const uint32_t *, uint64_t *, uint32_t, const cc__cluster_output &,   \
        uint32_t, cudaStream_t);
CC__INSTANTIATE(float)
CC__INSTANTIATE(double)
