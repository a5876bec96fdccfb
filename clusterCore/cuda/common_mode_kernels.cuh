/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common_mode_kernels.cuh: the common-mode estimate of docs/spec.md §8.2
 * on the GPU, written for one working precision `real`; kernels.cu
 * includes it once per precision, after frame_kernels.cuh. A frame's
 * estimate reads only that frame and the reference, so a chunk's frames
 * are estimated all at once, a block a (region, frame), before they are
 * decided. Sums are of integers, so the order the threads add them in
 * cannot change the bytes: they equal the CPU backend's.
 */

/* Block size of both kernels: a supercolumn half (25 x 200) is 20 pixels
 * a thread, a half-row 2. */
#define COMMON_MODE_THREADS 256

/* The (region, frame) of this block and the region's rectangle. */
struct common_mode_block {
    uint32_t region, frame;
    uint32_t row0, col0, width, area;
    __device__ explicit common_mode_block(const cc__regions &regions)
        : region(blockIdx.x), frame(blockIdx.y)
    {
        uint32_t row1, col1;
        cc__region_rectangle(&regions, region, &row0, &row1, &col0, &col1);
        width = col1 - col0;
        area = (row1 - row0) * width;
    }
    /* The frame pixel of the region's cell i (row by row). */
    __device__ size_t pixel(uint32_t i, uint32_t cols) const
    {
        return (size_t)(row0 + i / width) * cols + col0 + i % width;
    }
};

/* The median bin of a block's histogram of `bins` bins (the first whose
 * running count reaches half the total), as its value - CC__CENTRE_RANGE;
 * 0 for an empty histogram. Every thread of the block calls it and gets
 * the answer. */
__device__ int32_t histogram_median(const uint32_t *histogram,
                                    uint32_t *warp_sums, int32_t *answer)
{
    const uint32_t per = (CC__CENTRE_BINS + blockDim.x - 1) / blockDim.x;
    const uint32_t bin0 = min(threadIdx.x * per, (uint32_t)CC__CENTRE_BINS);
    const uint32_t bin1 = min(bin0 + per, (uint32_t)CC__CENTRE_BINS);
    uint32_t mine = 0;
    for (uint32_t b = bin0; b < bin1; b++)
        mine += histogram[b];
    uint32_t total;
    uint32_t below = block_exclusive_sum(mine, warp_sums, &total);
    if (threadIdx.x == 0)
        *answer = 0;
    __syncthreads();
    const uint32_t half = (total + 1) / 2;
    if (total > 0 && below < half && below + mine >= half)
        for (uint32_t b = bin0; b < bin1; b++) {
            below += histogram[b];
            if (below >= half) {
                *answer = (int32_t)b - CC__CENTRE_RANGE;
                break;
            }
        }
    __syncthreads();
    return *answer;
}

/* Steps 1 and 2 of docs/spec.md §8.2 for one region of one frame: the
 * centre, the median of the unmasked pixels' whole-ADU values against
 * the reference, then whether each pixel is calm (calm: a byte a pixel
 * of each frame of the chunk). A pixel's calm reads only its own
 * region's centre, so one block does both. */
__global__ void __launch_bounds__(COMMON_MODE_THREADS)
    common_mode_calm_kernel(cc__frame_geometry g,
                            const uint16_t *__restrict__ frames,
                            const uint16_t *__restrict__ baseline,
                            const uint8_t *__restrict__ pixel_mask,
                            const real *__restrict__ reference_offset,
                            const real *__restrict__ reference_rms,
                            uint8_t *__restrict__ calm)
{
    __shared__ uint32_t histogram[CC__CENTRE_BINS];
    __shared__ uint32_t warp_sums[32];
    __shared__ int32_t centre_held;
    const common_mode_block block(g.regions);
    const size_t pixels = (size_t)g.rows * g.cols;
    const uint16_t *frame = frames + block.frame * pixels;
    uint8_t *calm_plane = calm + block.frame * pixels;
    for (uint32_t b = threadIdx.x; b < CC__CENTRE_BINS; b += blockDim.x)
        histogram[b] = 0;
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < block.area; i += blockDim.x) {
        size_t p = block.pixel(i, g.cols);
        if (pixel_mask[p] != 0)
            continue;
        real w = pixel_reference_value(frame[p], g.adc_mask, baseline[p],
                                       reference_offset[p]);
        atomicAdd(&histogram[cc__centre_bin(pixel_round(w))], 1u);
    }
    __syncthreads();
    const real centre =
        (real)histogram_median(histogram, warp_sums, &centre_held);
    const real nsigma = (real)g.nsigma;
    for (uint32_t i = threadIdx.x; i < block.area; i += blockDim.x) {
        size_t p = block.pixel(i, g.cols);
        real w = pixel_reference_value(frame[p], g.adc_mask, baseline[p],
                                       reference_offset[p]);
        calm_plane[p] = pixel_mask[p] != 0 ||
                        pixel_calm(w - centre, reference_rms[p], nsigma);
    }
}

/* Steps 3 and 4 of docs/spec.md §8.2 for one region of one frame: the
 * quiet pixels (unmasked, their whole in-frame 3 x 3 calm) and the mean
 * of their values from an exact fixed-point sum, or 0 when too few are
 * quiet. Writes the value to values (the device's copy, for the decide
 * kernel) and, with whether it was estimated, to the host's mapped
 * arrays; each is indexed frame * regions + region. */
__global__ void __launch_bounds__(COMMON_MODE_THREADS)
    common_mode_mean_kernel(cc__frame_geometry g,
                            const uint16_t *__restrict__ frames,
                            const uint16_t *__restrict__ baseline,
                            const uint8_t *__restrict__ pixel_mask,
                            const real *__restrict__ reference_offset,
                            const uint8_t *__restrict__ calm,
                            real *__restrict__ values,
                            real *__restrict__ host_values,
                            uint8_t *__restrict__ host_estimated)
{
    __shared__ unsigned long long block_sum;
    __shared__ uint32_t block_quiet, block_unmasked;
    const common_mode_block block(g.regions);
    const size_t pixels = (size_t)g.rows * g.cols;
    const uint16_t *frame = frames + block.frame * pixels;
    const uint8_t *calm_plane = calm + block.frame * pixels;
    if (threadIdx.x == 0)
        block_sum = 0, block_quiet = block_unmasked = 0;
    __syncthreads();
    int64_t sum = 0;
    uint32_t quiet = 0, unmasked = 0;
    for (uint32_t i = threadIdx.x; i < block.area; i += blockDim.x) {
        uint32_t row = block.row0 + i / block.width;
        uint32_t col = block.col0 + i % block.width;
        size_t p = (size_t)row * g.cols + col;
        if (pixel_mask[p] != 0)
            continue;
        unmasked++;
        if (!cc__neighbourhood_calm(calm_plane, g.rows, g.cols, row, col))
            continue;
        quiet++;
        sum += pixel_fixed(pixel_reference_value(frame[p], g.adc_mask,
                                                 baseline[p],
                                                 reference_offset[p]));
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xFFFFFFFFu, sum, offset);
        quiet += __shfl_down_sync(0xFFFFFFFFu, quiet, offset);
        unmasked += __shfl_down_sync(0xFFFFFFFFu, unmasked, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        /* Two's complement: the unsigned sum has the signed sum's bits. */
        atomicAdd(&block_sum, (unsigned long long)sum);
        atomicAdd(&block_quiet, quiet);
        atomicAdd(&block_unmasked, unmasked);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        bool enough = cc__common_mode_enough(block_quiet, block_unmasked);
        real c = enough ? common_mode_of((int64_t)block_sum, block_quiet)
                        : (real)0;
        size_t at = (size_t)block.frame * g.regions.count + block.region;
        values[at] = c;
        host_values[at] = c;
        host_estimated[at] = enough;
    }
}
