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

/* Threads a block of the per-region kernels, and about how many pixels
 * of a region each block takes: a region larger than that (a supercolumn
 * half, a half) is shared by several blocks, its parts, whose results
 * meet in device memory; the last block of a (region, frame) to finish
 * completes it. */
#define COMMON_MODE_THREADS 256
#define COMMON_MODE_PART_PIXELS 2048

/* The part of a region of a frame that this block takes: cells [begin,
 * end) of the region's rectangle, row by row. */
struct common_mode_part {
    uint32_t region, frame, at; /* at: frame * regions + region */
    uint32_t row0, col0, width;
    uint32_t begin, end;
    uint64_t magic; /* n / width = umul64hi(n, magic), exact for 32 bits */
    __device__ common_mode_part(const cc__regions &regions, uint32_t parts)
        : region(blockIdx.x / parts), frame(blockIdx.y)
    {
        uint32_t part = blockIdx.x % parts, row1, col1;
        at = frame * regions.count + region;
        cc__region_rectangle(&regions, region, &row0, &row1, &col0, &col1);
        width = col1 - col0;
        uint64_t area = (uint64_t)(row1 - row0) * width;
        begin = (uint32_t)(area * part / parts);
        end = (uint32_t)(area * (part + 1) / parts);
        magic = width > 1 ? UINT64_MAX / width + 1 : 0;
    }
    /* The frame row and column of the rectangle's cell i. */
    __device__ void cell(uint32_t i, uint32_t *row, uint32_t *col) const
    {
        uint32_t down = width > 1 ? (uint32_t)__umul64hi(i, magic) : i;
        *row = row0 + down;
        *col = col0 + (i - down * width);
    }
};

/* Whether this block is the last of its (region, frame)'s parts to
 * arrive (after its results are in device memory); the last one sets
 * the count back to 0 for the next chunk. Every thread calls it. */
__device__ bool last_part(uint32_t *arrivals, uint32_t parts, bool *last)
{
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        *last = atomicAdd(arrivals, 1u) == parts - 1;
        if (*last)
            *arrivals = 0;
    }
    __syncthreads();
    return *last;
}

/* The median bin of a block's histogram (the first whose running count
 * reaches half the total), as its value - CC__CENTRE_RANGE; 0 for an
 * empty histogram. Every thread of the block calls it and gets the
 * answer. */
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

/* Step 1 of docs/spec.md §8.2: each region's centre, the median of its
 * unmasked pixels' whole-ADU values against the reference, to
 * work.centre. A block histograms its part in shared memory; with
 * several parts, the parts add theirs into work.histogram (kept zero),
 * and the last takes the sum from there. */
__global__ void __launch_bounds__(COMMON_MODE_THREADS)
    common_mode_centre_kernel(cc__frame_geometry g, cc__common_mode_work work,
                              const uint16_t *__restrict__ frames,
                              const uint16_t *__restrict__ baseline,
                              const uint8_t *__restrict__ pixel_mask,
                              const real *__restrict__ reference_offset)
{
    __shared__ uint32_t histogram[CC__CENTRE_BINS];
    __shared__ uint32_t warp_sums[32];
    __shared__ int32_t answer;
    __shared__ bool last;
    const common_mode_part part(g.regions, work.parts);
    const uint16_t *frame = frames + part.frame * (size_t)g.rows * g.cols;
    for (uint32_t b = threadIdx.x; b < CC__CENTRE_BINS; b += blockDim.x)
        histogram[b] = 0;
    __syncthreads();
    for (uint32_t i = part.begin + threadIdx.x; i < part.end;
         i += blockDim.x) {
        uint32_t row, col;
        part.cell(i, &row, &col);
        size_t p = (size_t)row * g.cols + col;
        if (pixel_mask[p] != 0)
            continue;
        real w = pixel_reference_value(frame[p], g.adc_mask, baseline[p],
                                       reference_offset[p]);
        atomicAdd(&histogram[cc__centre_bin(pixel_round(w))], 1u);
    }
    __syncthreads();
    if (work.parts > 1) {
        uint32_t *sum = work.histogram + (size_t)part.at * CC__CENTRE_BINS;
        for (uint32_t b = threadIdx.x; b < CC__CENTRE_BINS; b += blockDim.x)
            if (histogram[b] != 0)
                atomicAdd(&sum[b], histogram[b]);
        if (!last_part(work.arrivals + part.at, work.parts, &last))
            return;
        /* Reads the sum and leaves it zero for the next chunk. */
        for (uint32_t b = threadIdx.x; b < CC__CENTRE_BINS; b += blockDim.x)
            histogram[b] = atomicExch(&sum[b], 0u);
        __syncthreads();
    }
    int32_t centre = histogram_median(histogram, warp_sums, &answer);
    if (threadIdx.x == 0)
        work.centre[part.at] = centre;
}

/* Step 2 of docs/spec.md §8.2: whether each pixel is calm, within
 * nsigma * rms_ref of its region's centre (masked pixels are), into
 * work.calm; a block a run of one row's columns of one frame. */
__global__ void common_mode_calm_kernel(cc__frame_geometry g,
                                        cc__common_mode_work work,
                                        const uint16_t *__restrict__ frames,
                                        const uint16_t *__restrict__ baseline,
                                        const uint8_t *__restrict__ pixel_mask,
                                        const real *__restrict__ reference_offset,
                                        const real *__restrict__ reference_rms)
{
    const uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t row = blockIdx.y, frame_index = blockIdx.z;
    if (col >= g.cols)
        return;
    const size_t pixels = (size_t)g.rows * g.cols;
    const size_t p = (size_t)row * g.cols + col;
    const real centre = (real)work.centre[frame_index * g.regions.count +
                                          cc__region_of(&g.regions, row, col)];
    real w = pixel_reference_value(frames[frame_index * pixels + p],
                                   g.adc_mask, baseline[p],
                                   reference_offset[p]);
    work.calm[frame_index * pixels + p] =
        pixel_mask[p] != 0 ||
        pixel_calm(w - centre, reference_rms[p], (real)g.nsigma);
}

/* docs/spec.md §8.2: whether every in-frame cell of the 3 x 3 around
 * (row, col) is calm (calm: a byte a pixel of the frame). */
__device__ __forceinline__ bool neighbourhood_calm(const uint8_t *calm,
                                                   uint32_t rows,
                                                   uint32_t cols,
                                                   uint32_t row, uint32_t col)
{
    uint32_t r0 = row > 0 ? row - 1 : 0, r1 = row + 1 < rows ? row + 1 : row;
    uint32_t c0 = col > 0 ? col - 1 : 0, c1 = col + 1 < cols ? col + 1 : col;
    for (uint32_t r = r0; r <= r1; r++)
        for (uint32_t c = c0; c <= c1; c++)
            if (!calm[(size_t)r * cols + c])
                return false;
    return true;
}

/* Steps 3 and 4 of docs/spec.md §8.2: the quiet pixels (unmasked, their
 * whole in-frame 3 x 3 calm) and the mean of their values from an exact
 * fixed-point sum, or 0 when too few are quiet. With several parts, the
 * parts add their integers into work.sums (kept zero) and the last
 * completes the region. The value goes to values (the device's copy, for
 * the decide kernel) and, with whether it was estimated, to the host's
 * mapped arrays; each indexed frame * regions + region. */
__global__ void __launch_bounds__(COMMON_MODE_THREADS)
    common_mode_mean_kernel(cc__frame_geometry g, cc__common_mode_work work,
                            const uint16_t *__restrict__ frames,
                            const uint16_t *__restrict__ baseline,
                            const uint8_t *__restrict__ pixel_mask,
                            const real *__restrict__ reference_offset,
                            real *__restrict__ values,
                            real *__restrict__ host_values,
                            uint8_t *__restrict__ host_estimated)
{
    /* The sum of the quiet pixels' values, and quiet << 32 | unmasked. */
    __shared__ unsigned long long block_sums[2];
    __shared__ bool last;
    const common_mode_part part(g.regions, work.parts);
    const size_t pixels = (size_t)g.rows * g.cols;
    const uint16_t *frame = frames + part.frame * pixels;
    const uint8_t *calm_plane = work.calm + part.frame * pixels;
    if (threadIdx.x < 2)
        block_sums[threadIdx.x] = 0;
    __syncthreads();
    int64_t sum = 0;
    uint32_t quiet = 0, unmasked = 0;
    for (uint32_t i = part.begin + threadIdx.x; i < part.end;
         i += blockDim.x) {
        uint32_t row, col;
        part.cell(i, &row, &col);
        size_t p = (size_t)row * g.cols + col;
        if (pixel_mask[p] != 0)
            continue;
        unmasked++;
        if (!neighbourhood_calm(calm_plane, g.rows, g.cols, row, col))
            continue;
        quiet++;
        sum += pixel_fixed(pixel_reference_value(frame[p], g.adc_mask,
                                                 baseline[p],
                                                 reference_offset[p]));
    }
    unsigned long long counts = (unsigned long long)quiet << 32 | unmasked;
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xFFFFFFFFu, sum, offset);
        counts += __shfl_down_sync(0xFFFFFFFFu, counts, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        /* Two's complement: the unsigned sum has the signed sum's bits. */
        atomicAdd(&block_sums[0], (unsigned long long)sum);
        atomicAdd(&block_sums[1], counts);
    }
    __syncthreads();
    if (work.parts > 1) {
        unsigned long long *region_sums = work.sums + 2 * (size_t)part.at;
        if (threadIdx.x < 2)
            atomicAdd(&region_sums[threadIdx.x], block_sums[threadIdx.x]);
        if (!last_part(work.arrivals + work.cells + part.at, work.parts,
                       &last))
            return;
        /* Reads the sums and leaves them zero for the next chunk. */
        if (threadIdx.x < 2)
            block_sums[threadIdx.x] = atomicExch(&region_sums[threadIdx.x],
                                                 0ull);
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        uint64_t n_quiet = block_sums[1] >> 32;
        uint64_t n_unmasked = block_sums[1] & 0xFFFFFFFFu;
        bool enough = cc__common_mode_enough(n_quiet, n_unmasked);
        real c = enough ? common_mode_of((int64_t)block_sums[0], n_quiet)
                        : (real)0;
        values[part.at] = c;
        host_values[part.at] = c;
        host_estimated[part.at] = enough;
    }
}
