/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kernels.cu: the CUDA kernels, compiled once per precision, and their
 * launchers. Built with --fmad=false and IEEE division and square root, so
 * that every operation rounds as on the CPU.
 */
#include <math.h>
#include <stdint.h>

#define CC__HD __host__ __device__
#include "kernels.h"

/* In float, a decide thread gets 64 registers: a block of 768 threads then
 * leaves 16,384 of a multiprocessor's 65,536 for a block of another
 * chunk's extract or common-mode kernel beside it (at the 72 the compiler
 * chose for 3 x 3, none fitted). 64 costs no spills in float; with both
 * corrections at 4 streams it gave 3.5 % more, without them the same
 * (docs/benchmarks.md, "Common mode"). In double it would spill, and the
 * compiler's choice stands. */
namespace precision_float {
typedef float real;
#define DECIDE_BOUNDS __maxnreg__(64)
#include "../pedestal/pixel_arithmetic.h"
#include "frame_kernels.cuh"
#include "common_mode_kernels.cuh"
#undef DECIDE_BOUNDS
} // namespace precision_float

namespace precision_double {
typedef double real;
#define DECIDE_BOUNDS
#include "../pedestal/pixel_arithmetic.h"
#include "frame_kernels.cuh"
#include "common_mode_kernels.cuh"
#undef DECIDE_BOUNDS
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
    static constexpr auto &decide = precision_float::decide_kernels;
    static constexpr auto extract = precision_float::extract_kernel;
    static constexpr auto centre = precision_float::common_mode_centre_kernel;
    static constexpr auto mean = precision_float::common_mode_mean_kernel;
};
template <> struct kernels_of<double> {
    static constexpr auto &decide = precision_double::decide_kernels;
    static constexpr auto extract = precision_double::extract_kernel;
    static constexpr auto centre = precision_double::common_mode_centre_kernel;
    static constexpr auto mean = precision_double::common_mode_mean_kernel;
};

/* Threads a block each decide kernel can take (its registers bound it),
 * [double?][half_y - 1][half_x - 1], read once by cc__prepare_decide. */
static int decide_max_threads[2][4][4];

/* Whether a cluster size has a decide kernel: odd sides of 3 to 9. */
static bool decide_exists(const cc__frame_geometry &geometry)
{
    return geometry.half_x >= 1 && geometry.half_x <= 4 &&
           geometry.half_y >= 1 && geometry.half_y <= 4;
}

size_t cc__decide_shared_bytes(const cc__frame_geometry &geometry,
                               const cc__launch_shape &shape, uint32_t steps,
                               size_t real_size)
{
    /* The layout decide_kernel carves: s, s2, y, r and v (with spare
     * rows) in the working precision, then X0, the staged frames and the
     * mask. */
    size_t height = shape.tile_rows + 2 * (size_t)steps * geometry.half_y;
    size_t width = shape.tile_cols + 2 * (size_t)steps * geometry.half_x;
    size_t cells = height * width;
    return (5 * cells + (DECIDE_ROWS - 1) * width) * real_size +
           (1 + (size_t)steps) * cells * sizeof(uint16_t) +
           cells * sizeof(uint8_t);
}

cudaError_t cc__prepare_decide(int device, size_t *limit)
{
    int optin = 0;
    cudaError_t error = cudaDeviceGetAttribute(
        &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (error != cudaSuccess)
        return error;
    *limit = (size_t)optin;
    for (int hy = 0; hy < 4; hy++)
        for (int hx = 0; hx < 4; hx++) {
            const void *kernel[2] = {
                (const void *)kernels_of<float>::decide[hy][hx],
                (const void *)kernels_of<double>::decide[hy][hx]};
            for (int k = 0; k < 2; k++) {
                cudaFuncAttributes attributes;
                error = cudaFuncSetAttribute(
                    kernel[k], cudaFuncAttributeMaxDynamicSharedMemorySize,
                    optin);
                if (error == cudaSuccess)
                    error = cudaFuncGetAttributes(&attributes, kernel[k]);
                if (error != cudaSuccess)
                    return error;
                decide_max_threads[k][hy][hx] = attributes.maxThreadsPerBlock;
            }
        }
    return cudaSuccess;
}

uint32_t cc__decide_max_threads(const cc__frame_geometry &geometry,
                                size_t real_size)
{
    if (!decide_exists(geometry))
        return 0;
    return (
        uint32_t)decide_max_threads[real_size == sizeof(double)]
                                   [geometry.half_y - 1][geometry.half_x - 1];
}

template <typename T>
cudaError_t cc__launch_decide(
    const cc__frame_geometry &geometry, const cc__launch_shape &shape,
    size_t shared_limit, uint32_t n_frames, const uint16_t *frames,
    const uint16_t *baseline, const uint8_t *pixel_mask, const T *s_in,
    const T *s2_in, T *s_out, T *s2_out, const T *common_mode, const T *gain,
    T *v_planes, uint32_t *bitmaps, uint32_t *counts, cudaStream_t stream)
{
    size_t shared = cc__decide_shared_bytes(geometry, shape, n_frames,
                                            sizeof(T));
    if (shape.threads == 0 || shape.threads % 32 != 0 ||
        shape.threads > cc__decide_max_threads(geometry, sizeof(T)) ||
        shape.tile_rows == 0 || shape.tile_cols == 0 || n_frames == 0 ||
        n_frames > shape.steps || shared > shared_limit ||
        !decide_exists(geometry) ||
        (size_t)geometry.rows * geometry.cols >= UINT32_MAX)
        return cudaErrorInvalidConfiguration;
    dim3 grid((geometry.cols + shape.tile_cols - 1) / shape.tile_cols,
              (geometry.rows + shape.tile_rows - 1) / shape.tile_rows);
    kernels_of<T>::decide[geometry.half_y -
                          1][geometry.half_x -
                             1]<<<grid, shape.threads, shared, stream>>>(
        geometry, shape.tile_rows, shape.tile_cols, n_frames, frames, baseline,
        pixel_mask, s_in, s2_in, s_out, s2_out, common_mode, gain, v_planes,
        bitmaps, counts);
    return cudaGetLastError();
}

/* The parts of a height x width region for a kernel: at most
 * COMMON_MODE_BAND_COLUMNS wide, of about part_pixels each, and, with a
 * cell around them, of at most tile_limit cells where that allows a row;
 * *tile_cells is the largest part's with that cell. */
static cc__part_shape part_shape(uint32_t height, uint32_t width,
                                 uint32_t part_pixels, uint32_t tile_limit,
                                 uint32_t *tile_cells)
{
    uint32_t col_bands = (width + COMMON_MODE_BAND_COLUMNS - 1) /
                         COMMON_MODE_BAND_COLUMNS;
    uint32_t band_width = (width + col_bands - 1) / col_bands;
    uint32_t band_rows = part_pixels / band_width;
    uint32_t tile_rows = tile_limit / (band_width + 2);
    if (tile_rows > 2 && band_rows > tile_rows - 2)
        band_rows = tile_rows - 2;
    if (band_rows < 1)
        band_rows = 1;
    uint32_t row_bands = (height + band_rows - 1) / band_rows;
    *tile_cells = ((height + row_bands - 1) / row_bands + 2) * (band_width + 2);
    return cc__part_shape{col_bands * row_bands, col_bands};
}

void cc__common_mode_layout(const cc__regions &regions,
                            cc__common_mode_work *work)
{
    uint32_t height = 1, width = 1; /* the largest region's sides */
    for (uint32_t r = 0; r < regions.count; r++) {
        uint32_t row0, row1, col0, col1;
        cc__region_rectangle(&regions, r, &row0, &row1, &col0, &col1);
        height = row1 - row0 > height ? row1 - row0 : height;
        width = col1 - col0 > width ? col1 - col0 : width;
    }
    uint32_t unused;
    work->centre_shape = part_shape(height, width, COMMON_MODE_PART_PIXELS,
                                    UINT32_MAX, &unused);
    work->mean_shape = part_shape(height, width, COMMON_MODE_MEAN_PART_PIXELS,
                                  COMMON_MODE_TILE_CELLS, &work->tile_cells);
}

void cc__common_mode_parts(const cc__regions &regions,
                           const cc__part_shape &shape, cc__part_rect *parts)
{
    const uint32_t row_bands = shape.parts / shape.col_bands;
    for (uint32_t region = 0; region < regions.count; region++) {
        uint32_t r0, r1, c0, c1;
        cc__region_rectangle(&regions, region, &r0, &r1, &c0, &c1);
        for (uint32_t part = 0; part < shape.parts; part++) {
            uint32_t col_band = part % shape.col_bands;
            uint32_t row_band = part / shape.col_bands;
            cc__part_rect *rect = &parts[(size_t)region * shape.parts + part];
            rect->row0 = (uint16_t)(r0 +
                                    (uint64_t)(r1 - r0) * row_band / row_bands);
            rect->row1 = (uint16_t)(r0 + (uint64_t)(r1 - r0) * (row_band + 1) /
                                             row_bands);
            rect->col0 = (uint16_t)(c0 + (uint64_t)(c1 - c0) * col_band /
                                             shape.col_bands);
            rect->col1 = (uint16_t)(c0 + (uint64_t)(c1 - c0) * (col_band + 1) /
                                             shape.col_bands);
            rect->region = region;
            rect->unused = 0;
        }
    }
}

/* Whether a kernel's shape fits a launch over count regions. */
static bool shape_fits(const cc__part_shape &shape, uint32_t count)
{
    return shape.parts > 0 && shape.col_bands > 0 &&
           shape.parts % shape.col_bands == 0 &&
           (uint64_t)shape.parts * count <= 0x7FFFFFFFu;
}

template <typename T>
cudaError_t
cc__launch_common_mode(const cc__frame_geometry &geometry,
                       const cc__common_mode_work &work, uint32_t n_frames,
                       const uint16_t *frames, const uint16_t *baseline,
                       const uint8_t *pixel_mask, const T *reference_offset,
                       const T *reference_rms, T *values, T *host_values,
                       uint8_t *host_estimated, cudaStream_t stream)
{
    const uint32_t count = geometry.regions.count;
    if (n_frames == 0 || n_frames > 65535 || count == 0 ||
        !shape_fits(work.centre_shape, count) ||
        !shape_fits(work.mean_shape, count) ||
        work.tile_cells > COMMON_MODE_TILE_CELLS ||
        (uint64_t)n_frames * count > work.cells || geometry.rows > 65535 ||
        (size_t)geometry.rows * geometry.cols >= UINT32_MAX)
        return cudaErrorInvalidConfiguration;
    kernels_of<T>::centre<<<dim3(work.centre_shape.parts * count, n_frames),
                            COMMON_MODE_THREADS, 0, stream>>>(geometry, work,
                                                              frames, baseline,
                                                              pixel_mask,
                                                              reference_offset);
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        return error;
    /* A part's values, then its cells' states (common_mode_mean_kernel). */
    const size_t tile_bytes = (size_t)work.tile_cells * (sizeof(T) + 1);
    kernels_of<T>::mean<<<dim3(work.mean_shape.parts * count, n_frames),
                          COMMON_MODE_THREADS, tile_bytes, stream>>>(
        geometry, work, frames, baseline, pixel_mask, reference_offset,
        reference_rms, values, host_values, host_estimated);
    return cudaGetLastError();
}

template <typename T>
cudaError_t
cc__launch_extract(const cc__frame_geometry &geometry, uint32_t n_frames,
                   uint32_t *bitmaps, const T *v_planes, const uint32_t *counts,
                   uint32_t max_clusters, const cc__cluster_output &output,
                   uint32_t first_frame, cudaStream_t stream)
{
    /* Each frame is shared by four blocks of 512 threads (a 400 x 400
     * bitmap is ten words a thread); a chunk's blocks run beside the next
     * chunk's decide blocks, which leave room for one each. */
    const unsigned threads = 512, blocks_per_frame = 4;
    if (n_frames == 0)
        return cudaSuccess;
    dim3 grid(n_frames, blocks_per_frame);
    kernels_of<T>::extract<<<grid, threads, 0, stream>>>(geometry, bitmaps,
                                                         v_planes, counts,
                                                         max_clusters, output,
                                                         first_frame, n_frames);
    cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        return error;
    size_t words = (size_t)n_frames *
                   (((size_t)geometry.rows * geometry.cols + 31) / 32);
    clear_kernel<<<
        (unsigned)((words + 1023) / 1024 < 264 ? (words + 1023) / 1024 : 264),
        1024, 0, stream>>>(bitmaps, words);
    return cudaGetLastError();
}

#define CC__INSTANTIATE(T)                                                     \
    template cudaError_t cc__launch_decide<T>(                                 \
        const cc__frame_geometry &, const cc__launch_shape &, size_t,          \
        uint32_t, const uint16_t *, const uint16_t *, const uint8_t *,         \
        const T *, const T *, T *, T *, const T *, const T *, T *, uint32_t *, \
        uint32_t *, cudaStream_t);                                             \
    template cudaError_t cc__launch_common_mode<T>(                            \
        const cc__frame_geometry &, const cc__common_mode_work &, uint32_t,    \
        const uint16_t *, const uint16_t *, const uint8_t *, const T *,        \
        const T *, T *, T *, uint8_t *, cudaStream_t);                         \
    template cudaError_t cc__launch_extract<T>(const cc__frame_geometry &,     \
                                               uint32_t, uint32_t *,           \
                                               const T *, const uint32_t *,    \
                                               uint32_t,                       \
                                               const cc__cluster_output &,     \
                                               uint32_t, cudaStream_t);
CC__INSTANTIATE(float)
CC__INSTANTIATE(double)
