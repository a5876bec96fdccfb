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

/* Threads a block of the per-region kernels. A region larger than a
 * part (COMMON_MODE_PART_PIXELS for the centre kernel, whose parts merge
 * a 2,049-bin histogram; COMMON_MODE_MEAN_PART_PIXELS for the mean
 * kernel, whose parts merge two integers and so can be more, for more
 * blocks in flight) is cut into rectangles, a block each, whose results
 * meet in device memory; the last block of a (region, frame) to finish
 * completes it. A part is at most COMMON_MODE_BAND_COLUMNS wide; a mean
 * part and a cell around it are at most COMMON_MODE_TILE_CELLS, kept in
 * shared memory (9 bytes a cell in double). Both kernels run beside the
 * decisions of the chunk before: held to 32 registers a thread (8 blocks
 * a multiprocessor), two of their blocks fit in the 16,384 registers a
 * float decide block leaves (kernels.cu); the mean kernel then spills
 * 12 bytes a thread in float, 32 in double. */
#define COMMON_MODE_THREADS 256
#define COMMON_MODE_BLOCKS 8
#define COMMON_MODE_PART_PIXELS 8192
#define COMMON_MODE_MEAN_PART_PIXELS 2048
#define COMMON_MODE_BAND_COLUMNS 1024
#define COMMON_MODE_TILE_CELLS 4096
/* Rows a thread loads before it uses any, to hide the loads' latency: 1
 * gave the same throughput, 4 with 64 registers less
 * (docs/benchmarks.md, "Common mode"). */
#define COMMON_MODE_CELLS 2

/* A block's threads laid over a rectangle [row0, row1) x [col0, col1):
 * a thread keeps one column (or a few, when the rectangle is wider than
 * the block) and steps down the rows, so that its index arithmetic is an
 * add a cell and neighbouring threads read neighbouring pixels. Threads
 * past the last whole row of the block's layout take no cells. */
struct rectangle_threads {
    uint32_t row1, col1;
    uint32_t row_step, col_step;
    uint32_t row, col; /* this thread's first cell */
    __device__ rectangle_threads(uint32_t r0, uint32_t r1, uint32_t c0,
                                 uint32_t c1)
        : row1(r1), col1(c1)
    {
        uint32_t width = c1 > c0 ? c1 - c0 : 1;
        col_step = width < blockDim.x ? width : blockDim.x;
        row_step = blockDim.x / col_step;
        uint32_t down = threadIdx.x / col_step;
        col = c0 + (threadIdx.x - down * col_step);
        row = down < row_step ? r0 + down : r1;
    }
};

/* The part of a region of a frame that this block takes, from the
 * kernel's table of parts (cc__common_mode_parts). */
struct common_mode_part {
    uint32_t region, frame, at; /* at: frame * regions + region */
    uint32_t row0, row1, col0, col1;
    __device__ common_mode_part(const cc__regions &regions,
                                const cc__part_rect *__restrict__ parts)
        : frame(blockIdx.y)
    {
        const cc__part_rect rect = parts[blockIdx.x];
        region = rect.region;
        at = frame * regions.count + region;
        row0 = rect.row0, row1 = rect.row1;
        col0 = rect.col0, col1 = rect.col1;
    }
    __device__ bool empty() const
    {
        return row0 == row1 || col0 == col1;
    }
};

/* What the common-mode kernels read of a pixel of a frame. */
struct pixel_sample {
    uint32_t row, col;
    bool masked;
    real value; /* against the reference: docs/spec.md §8.2 */
    real rms;   /* rms_ref, when asked for */
};

/* Calls use(sample) for each cell the thread takes of walk, reading
 * COMMON_MODE_CELLS rows of its column at once; with RMS, sample.rms is
 * read too. */
template <bool RMS, typename Use>
__device__ __forceinline__ void
for_each_sample(const rectangle_threads &walk, const cc__frame_geometry &g,
                const uint16_t *__restrict__ frame,
                const uint16_t *__restrict__ baseline,
                const uint8_t *__restrict__ pixel_mask,
                const real *__restrict__ reference_offset,
                const real *__restrict__ reference_rms, Use use)
{
    /* A frame's pixels are indexed in 32 bits (cc__launch_common_mode). */
    const uint32_t step = walk.row_step, pixel_step = step * g.cols;
    for (uint32_t first = walk.row; first < walk.row1;
         first += COMMON_MODE_CELLS * step)
        for (uint32_t col = walk.col; col < walk.col1; col += walk.col_step) {
            const uint32_t p0 = first * g.cols + col;
            uint8_t masked[COMMON_MODE_CELLS];
            uint16_t raw[COMMON_MODE_CELLS], base[COMMON_MODE_CELLS];
            real offset[COMMON_MODE_CELLS], rms[COMMON_MODE_CELLS];
            /* Rows past the walk read the first row again, unused. */
#pragma unroll
            for (int k = 0; k < COMMON_MODE_CELLS; k++) {
                uint32_t p = first + k * step < walk.row1 ? p0 + k * pixel_step
                                                          : p0;
                masked[k] = pixel_mask[p];
                raw[k] = frame[p];
                base[k] = baseline[p];
                offset[k] = reference_offset[p];
                rms[k] = RMS ? reference_rms[p] : (real)0;
            }
#pragma unroll
            for (int k = 0; k < COMMON_MODE_CELLS; k++) {
                const uint32_t row = first + k * step;
                if (row >= walk.row1)
                    break;
                use(pixel_sample{row, col, masked[k] != 0,
                                 pixel_reference_value(raw[k], g.adc_mask,
                                                       base[k], offset[k]),
                                 rms[k]});
            }
        }
}

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
__global__ void __launch_bounds__(COMMON_MODE_THREADS, COMMON_MODE_BLOCKS)
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
    const common_mode_part part(g.regions, work.centre_parts);
    const rectangle_threads walk(part.row0, part.row1, part.col0, part.col1);
    const uint16_t *frame = frames + part.frame * (size_t)g.rows * g.cols;
    for (uint32_t b = threadIdx.x; b < CC__CENTRE_BINS; b += blockDim.x)
        histogram[b] = 0;
    __syncthreads();
    for_each_sample<false>(
        walk, g, frame, baseline, pixel_mask, reference_offset, nullptr,
        [&](const pixel_sample &sample) {
            if (!sample.masked)
                atomicAdd(&histogram[cc__centre_bin(pixel_round(sample.value))],
                          1u);
        });
    __syncthreads();
    if (work.centre_shape.parts > 1) {
        uint32_t *sum = work.histogram + (size_t)part.at * CC__CENTRE_BINS;
        for (uint32_t b = threadIdx.x; b < CC__CENTRE_BINS; b += blockDim.x)
            if (histogram[b] != 0)
                atomicAdd(&sum[b], histogram[b]);
        if (!last_part(work.arrivals + part.at, work.centre_shape.parts, &last))
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

/* Step 2 of docs/spec.md §8.2: whether a pixel of a frame is calm,
 * within nsigma * rms_ref of its region's centre (masked pixels are). */
__device__ __forceinline__ bool pixel_is_calm(const cc__frame_geometry &g,
                                              const int32_t *frame_centres,
                                              const pixel_sample &sample)
{
    if (sample.masked)
        return true;
    const real centre = (real)
        frame_centres[cc__region_of(&g.regions, sample.row, sample.col)];
    return pixel_calm(sample.value - centre, sample.rms, (real)g.nsigma);
}

/* A cell of a mean part's tile: whether it is calm (masked cells are)
 * and whether it is masked. */
enum { CELL_CALM = 1, CELL_MASKED = 2 };

/* Steps 2 to 4 of docs/spec.md §8.2: the quiet pixels (unmasked, their
 * whole in-frame 3 x 3 calm) and the mean of their values from an exact
 * fixed-point sum, or 0 when too few are quiet. A block reads its part,
 * and the cell around it, once: each cell's value and state go to a tile
 * in shared memory (work.tile_cells of each), the part grown by a cell on
 * every side, whose cells outside the frame count as calm; the quiet test
 * and the sum read only the tile. Neighbours in other regions are judged
 * against their own region's centre. With several parts, the parts add
 * their integers into work.sums (kept zero) and the last completes the
 * region. The value goes to values (the device's copy, for the decide
 * kernel) and, with whether it was estimated, to the host's mapped
 * arrays; each indexed frame * regions + region. */
__global__ void __launch_bounds__(COMMON_MODE_THREADS, COMMON_MODE_BLOCKS)
    common_mode_mean_kernel(cc__frame_geometry g, cc__common_mode_work work,
                            const uint16_t *__restrict__ frames,
                            const uint16_t *__restrict__ baseline,
                            const uint8_t *__restrict__ pixel_mask,
                            const real *__restrict__ reference_offset,
                            const real *__restrict__ reference_rms,
                            real *__restrict__ values,
                            real *__restrict__ host_values,
                            uint8_t *__restrict__ host_estimated)
{
    extern __shared__ __align__(8) uint8_t tile_bytes[];
    real *tile_value = reinterpret_cast<real *>(tile_bytes);
    uint8_t *tile_state = tile_bytes + work.tile_cells * sizeof(real);
    /* The sum of the quiet pixels' values, and quiet << 32 | unmasked. */
    __shared__ unsigned long long block_sums[2];
    __shared__ bool last;
    const common_mode_part part(g.regions, work.mean_parts);
    const uint16_t *frame = frames + part.frame * (size_t)g.rows * g.cols;
    /* Frame cell (row, col) is tile cell (row + 1 - row0) * width +
     * (col + 1 - col0). */
    const uint32_t width = part.col1 - part.col0 + 2;
    const uint32_t tile_cells = (part.row1 - part.row0 + 2) * width;
    if (threadIdx.x < 2)
        block_sums[threadIdx.x] = 0;
    if (part.row0 == 0 || part.col0 == 0 || part.row1 == g.rows ||
        part.col1 == g.cols) {
        for (uint32_t t = threadIdx.x; t < tile_cells; t += blockDim.x)
            tile_state[t] = CELL_CALM;
        __syncthreads();
    }
    const int32_t *frame_centres = work.centre +
                                   (size_t)part.frame * g.regions.count;
    if (!part.empty())
        for_each_sample<true>(
            rectangle_threads(part.row0 > 0 ? part.row0 - 1 : 0,
                              min(part.row1 + 1, g.rows),
                              part.col0 > 0 ? part.col0 - 1 : 0,
                              min(part.col1 + 1, g.cols)),
            g, frame, baseline, pixel_mask, reference_offset, reference_rms,
            [&](const pixel_sample &sample) {
                uint32_t t = (sample.row + 1 - part.row0) * width +
                             (sample.col + 1 - part.col0);
                tile_value[t] = sample.value;
                tile_state[t] = (pixel_is_calm(g, frame_centres, sample)
                                     ? CELL_CALM
                                     : 0) |
                                (sample.masked ? CELL_MASKED : 0);
            });
    __syncthreads();
    int64_t sum = 0;
    uint32_t quiet = 0, unmasked = 0;
    const rectangle_threads inside(part.row0, part.row1, part.col0, part.col1);
    for (uint32_t row = inside.row; row < inside.row1; row += inside.row_step) {
        uint32_t t = (row + 1 - part.row0) * width +
                     (inside.col + 1 - part.col0);
        for (uint32_t col = inside.col; col < inside.col1;
             col += inside.col_step, t += inside.col_step) {
            const uint8_t here = tile_state[t];
            if (here & CELL_MASKED)
                continue;
            unmasked++;
            const uint8_t *above = tile_state + t - width;
            const uint8_t *below = tile_state + t + width;
            const uint8_t all_calm = above[-1] & above[0] & above[1] &
                                     tile_state[t - 1] & here &
                                     tile_state[t + 1] & below[-1] & below[0] &
                                     below[1];
            if (all_calm & CELL_CALM) {
                quiet++;
                sum += pixel_fixed(tile_value[t]);
            }
        }
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
    if (work.mean_shape.parts > 1) {
        unsigned long long *region_sums = work.sums + 2 * (size_t)part.at;
        if (threadIdx.x < 2)
            atomicAdd(&region_sums[threadIdx.x], block_sums[threadIdx.x]);
        if (!last_part(work.arrivals + work.cells + part.at,
                       work.mean_shape.parts, &last))
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
