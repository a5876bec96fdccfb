/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frame_kernels.cuh: the bodies of the CUDA kernels, written for one
 * working precision `real`. kernels.cu includes this once per precision,
 * inside a namespace for each, after pixel_arithmetic.h, with
 * DECIDE_BOUNDS defined: the decide kernel's bounds in that precision.
 */

/* A warp's share of a rectangle of a block's region: the rectangle is cut
 * into units of `group` rows by 32 columns (a lane a column), dealt out
 * to the block's warps in turn. The walk steps from unit to unit without
 * dividing (a division a unit cost a fifth of the kernel's instructions).
 * next() returns false when the warp has no more; otherwise row is the
 * unit's first row and col this lane's column, which may lie past
 * col_end in the last pass. */
struct warp_units {
    int row, col, col_end;
    int row_end, group, passes;
    int row_step, pass_step; /* a walk of `warps` units */
    int pass;
    bool started;
    __device__ warp_units(int row_begin, int row_end_, int col_begin,
                          int col_end_, int rows_a_unit, int warp, int warps)
        : col_end(col_end_), row_end(row_end_), group(rows_a_unit),
          passes(col_end_ > col_begin ? (col_end_ - col_begin + 31) / 32 : 0),
          started(false)
    {
        int first = passes > 0 ? warp : 0;
        row = row_begin + (passes > 0 ? first / passes : 0) * group;
        pass = passes > 0 ? first % passes : 0;
        row_step = passes > 0 ? warps / passes * group : 0;
        pass_step = passes > 0 ? warps % passes : 0;
        col = col_begin + pass * 32 + (int)(threadIdx.x & 31);
        if (passes == 0)
            row = row_end; /* nothing to walk */
    }
    __device__ bool next()
    {
        if (started) {
            row += row_step;
            col += pass_step * 32;
            pass += pass_step;
            if (pass >= passes) {
                pass -= passes;
                col -= passes * 32;
                row += group;
            }
        }
        started = true;
        return row < row_end;
    }
};

/* Rows each thread decides at once: neighbouring rows share all but one
 * window row, so the thread reads each shared cell once for all of them. */
#define DECIDE_ROWS 4

/* Loads a thread keeps in flight while staging a launch's pixels. */
#define STAGE_LOADS 4
#define NO_PIXEL 0xFFFFFFFFu

/* The frame pixel of region cell i, or NO_PIXEL for a cell past the
 * region or outside the frame (the launcher keeps frames below 2^32 - 1
 * pixels). */
__device__ __forceinline__ uint32_t region_pixel(int i, int cells, int width,
                                                 int top, int left, int rows,
                                                 int cols)
{
    if (i >= cells)
        return NO_PIXEL;
    int row = top + i / width, col = left + i % width;
    if (row < 0 || row >= rows || col < 0 || col >= cols)
        return NO_PIXEL;
    return (uint32_t)row * (uint32_t)cols + (uint32_t)col;
}

/* Adds window row w of a thread's DECIDE_ROWS pixels (row w - q of pixel
 * q's window, for the pixels whose window has it). */
template <int HX, int HY>
__device__ __forceinline__ void window_row(const real *line, int w, real *total,
                                           real *peak)
{
#pragma unroll
    for (int dx = 0; dx <= 2 * HX; dx++) {
        real cell = line[dx];
#pragma unroll
        for (int q = 0; q < DECIDE_ROWS; q++)
            if (w - q >= 0 && w - q <= 2 * HY) {
                total[q] += cell;
                /* The spec's "larger of the two" in one instruction: the
                 * same value, as v is never NaN or -0 (y is an exact
                 * integer, so y - r is -0 only if y is). */
                peak[q] = fmax(peak[q], cell);
            }
    }
}

/* Window rows [FIRST, END), unrolled so that w is known when compiling. */
template <int HX, int HY, int FIRST, int END>
__device__ __forceinline__ void window_rows(const real *corner, int width,
                                            real *total, real *peak)
{
#pragma unroll
    for (int w = FIRST; w < END; w++)
        window_row<HX, HY>(corner + w * width, w, total, peak);
}

/* Decides `steps` consecutive frames of one tile, carrying the spec's frozen
 * model forward in shared memory. Frame j's decision at a pixel needs the
 * state that frame j-1 left on the pixel's window, so the block loads the
 * state of its tile and a border of `steps` half-windows, and each frame
 * decides a region one half-window narrower than the frame before: after
 * the last frame the tile itself is exact. The border is decided again
 * (the same way) by the neighbours that own it. The block stages all its
 * frames' pixels at the start, so that global memory's latency is paid
 * once a launch rather than once a frame. The half-window HX x HY is a
 * template parameter so that the window's columns and its first and last
 * rows unroll. */
template <int HX, int HY>
__global__ void DECIDE_BOUNDS decide_kernel(
    cc__frame_geometry g, uint32_t tile_rows, uint32_t tile_cols,
    uint32_t steps, const uint16_t *__restrict__ frames,
    const uint16_t *__restrict__ baseline,
    const uint8_t *__restrict__ pixel_mask, const real *__restrict__ s_in,
    const real *__restrict__ s2_in, real *__restrict__ s_out,
    real *__restrict__ s2_out, const real *__restrict__ common_mode,
    const real *__restrict__ gain, real *__restrict__ v_planes,
    uint32_t *__restrict__ bitmaps, uint32_t *__restrict__ counts)
{
    const int rows = (int)g.rows, cols = (int)g.cols;
    const int n_steps = (int)steps;
    const int height = (int)tile_rows + 2 * n_steps * HY;
    const int width = (int)tile_cols + 2 * n_steps * HX;
    const int cells = height * width;
    /* The region's first row and column in the frame. */
    const int top = (int)(blockIdx.y * tile_rows) - n_steps * HY;
    const int left = (int)(blockIdx.x * tile_cols) - n_steps * HX;
    const size_t pixels = (size_t)rows * cols;
    const size_t words = (pixels + 31) / 32;
    const real n = (real)g.window;
    const int warp = (int)(threadIdx.x / 32);
    const int warps = (int)(blockDim.x / 32);

    extern __shared__ unsigned char shared_bytes[];
    real *s = reinterpret_cast<real *>(shared_bytes);
    real *s2 = s + cells;
    real *y = s2 + cells;
    real *r_plane = y + cells; /* r = s/N of the frame being decided */
    real *v = r_plane + cells; /* DECIDE_ROWS - 1 spare rows below */
    uint16_t *x0 = reinterpret_cast<uint16_t *>(v + cells +
                                                (DECIDE_ROWS - 1) * width);
    uint16_t *staged = x0 + cells; /* steps frames of the region */
    uint8_t *masked = reinterpret_cast<uint8_t *>(staged + n_steps * cells);

    /* The region clipped to the frame. */
    const int in_row0 = max(0, -top), in_row1 = min(height, rows - top);
    const int in_col0 = max(0, -left), in_col1 = min(width, cols - left);

    for (int i = (int)threadIdx.x; i < cells + (DECIDE_ROWS - 1) * width;
         i += (int)blockDim.x)
        v[i] = 0; /* cells outside the frame count as 0 */
    /* Every load of the launch, issued STAGE_LOADS at a time a thread
     * before any is waited for. */
    for (int base = (int)threadIdx.x; base < cells;
         base += STAGE_LOADS * (int)blockDim.x) {
        uint32_t at[STAGE_LOADS];
#pragma unroll
        for (int k = 0; k < STAGE_LOADS; k++)
            at[k] = region_pixel(base + k * (int)blockDim.x, cells, width, top,
                                 left, rows, cols);
        real s_held[STAGE_LOADS], s2_held[STAGE_LOADS];
        uint16_t x0_held[STAGE_LOADS];
        uint8_t masked_held[STAGE_LOADS];
#pragma unroll
        for (int k = 0; k < STAGE_LOADS; k++)
            if (at[k] != NO_PIXEL) {
                s_held[k] = s_in[at[k]];
                s2_held[k] = s2_in[at[k]];
                x0_held[k] = baseline[at[k]];
                masked_held[k] = pixel_mask[at[k]];
            }
#pragma unroll
        for (int k = 0; k < STAGE_LOADS; k++)
            if (at[k] != NO_PIXEL) {
                int i = base + k * (int)blockDim.x;
                s[i] = s_held[k];
                s2[i] = s2_held[k];
                x0[i] = x0_held[k];
                masked[i] = masked_held[k];
            }
#pragma unroll 4
        for (int j = 0; j < n_steps; j++) {
            uint16_t x_held[STAGE_LOADS];
#pragma unroll
            for (int k = 0; k < STAGE_LOADS; k++)
                if (at[k] != NO_PIXEL)
                    x_held[k] = frames[j * pixels + at[k]];
#pragma unroll
            for (int k = 0; k < STAGE_LOADS; k++)
                if (at[k] != NO_PIXEL)
                    staged[j * cells + base + k * (int)blockDim.x] = x_held[k];
        }
    }
    __syncthreads();

    const real nsigma = (real)g.nsigma, c3nsigma = (real)g.c3nsigma;
    const int core_row0 = n_steps * HY, core_col0 = n_steps * HX;
    const int core_row1 = core_row0 + (int)tile_rows;
    const int core_col1 = core_col0 + (int)tile_cols;
    for (int j = 0; j < n_steps; j++) {
        /* v on the region frame j's decisions read. */
        warp_units values(max(in_row0, j * HY), min(in_row1, height - j * HY),
                          max(in_col0, j * HX), min(in_col1, width - j * HX), 1,
                          warp, warps);
        while (values.next()) {
            if (values.col >= values.col_end)
                continue;
            int i = values.row * width + values.col;
            uint16_t x = staged[j * cells + i];
            real r = pixel_offset(s[i], n);
            r_plane[i] = r;
            /* docs/spec.md §8.3: y less its region's common mode. */
            real c =
                common_mode != NULL
                    ? common_mode[j * g.regions.count +
                                  cc__region_of(&g.regions,
                                                (uint32_t)(top + values.row),
                                                (uint32_t)(left + values.col))]
                    : (real)0;
            y[i] = pixel_y_corrected(pixel_y(x, g.adc_mask, x0[i]), c);
            real value = pixel_value_from_offset(y[i], r);
            /* docs/spec.md §9.2: in the gain map's unit. */
            if (gain != NULL)
                value = pixel_gain_corrected(
                    value, gain[(size_t)(top + values.row) * cols +
                                (left + values.col)]);
            v[i] = pixel_unless_masked(value, masked[i]);
        }
        __syncthreads();

        /* Decisions on the region one half-window inside. */
        const int d = j + 1;
        warp_units decide(max(in_row0, d * HY), min(in_row1, height - d * HY),
                          max(in_col0, d * HX), min(in_col1, width - d * HX),
                          DECIDE_ROWS, warp, warps);
        real *v_plane = v_planes + j * pixels;
        uint32_t *bitmap = bitmaps + j * words;
        uint32_t emitted = 0;
        while (decide.next()) {
            const int row = decide.row, col = decide.col;
            if (col >= decide.col_end)
                continue;
            real total[DECIDE_ROWS], peak[DECIDE_ROWS];
#pragma unroll
            for (int q = 0; q < DECIDE_ROWS; q++)
                total[q] = peak[q] = 0;
            /* Window row w of the thread's rows is row w - q of pixel q's
             * window, so rows are added in increasing w: each total still
             * sums its window row by row from the top-left cell, as docs/spec.md
             * orders it. The first and last DECIDE_ROWS - 1 rows belong
             * to some of the pixels only and unroll (their tests vanish);
             * the rows between belong to all and stay a loop, which keeps
             * a 9 x 9 window's registers in bounds. */
            const real *corner = v + (row - HY) * width + (col - HX);
            window_rows<HX, HY, 0, DECIDE_ROWS - 1>(corner, width, total, peak);
#pragma unroll 1
            for (int w = DECIDE_ROWS - 1; w <= 2 * HY; w++)
                window_row<HX, HY>(corner + w * width, w, total, peak);
            window_rows<HX, HY,
                        (2 * HY + 1 > DECIDE_ROWS - 1 ? 2 * HY + 1
                                                      : DECIDE_ROWS - 1),
                        DECIDE_ROWS + 2 * HY>(corner, width, total, peak);
#pragma unroll
            for (int q = 0; q < DECIDE_ROWS; q++) {
                int at = row + q;
                if (at >= decide.row_end)
                    break;
                int i = at * width + col;
                real value = v[i];
                real s2_mean;
                real rms = pixel_rms_from_offset(r_plane[i], s2[i], n,
                                                 &s2_mean);
                /* docs/spec.md §9.2: decided in the gain's unit, the
                 * pedestal updated in ADU. */
                real update = value;
                if (gain != NULL) {
                    rms = pixel_gain_corrected(
                        rms, gain[(size_t)(top + at) * cols + (left + col)]);
                    update = pixel_value_from_offset(y[i], r_plane[i]);
                }
                int flags = pixel_decide_unless_masked(
                    pixel_decide_in_frame(pixel_decide(value, peak[q], total[q],
                                                       rms, nsigma, c3nsigma),
                                          g.pedestal_only),
                    masked[i]);
                int quiet = flags / PIXEL_QUIET;
                s[i] = pixel_next_s(s[i], update, quiet);
                s2[i] = pixel_next_s2(s2[i], y[i], s2_mean, quiet);
                if (at >= core_row0 && at < core_row1 && col >= core_col0 &&
                    col < core_col1) {
                    size_t p = (size_t)(top + at) * cols + (left + col);
                    v_plane[p] = value;
                    if (flags & PIXEL_EMIT) {
                        atomicOr(&bitmap[p >> 5], 1u << (p & 31));
                        emitted++;
                    }
                }
            }
        }
        for (int offset = 16; offset > 0; offset /= 2)
            emitted += __shfl_down_sync(0xFFFFFFFFu, emitted, offset);
        if ((threadIdx.x & 31) == 0 && emitted != 0)
            atomicAdd(&counts[j], emitted);
        __syncthreads();
    }

    warp_units store(max(in_row0, core_row0), min(in_row1, core_row1),
                     max(in_col0, core_col0), min(in_col1, core_col1), 1, warp,
                     warps);
    while (store.next()) {
        if (store.col >= store.col_end)
            continue;
        int i = store.row * width + store.col;
        size_t p = (size_t)(top + store.row) * cols + (left + store.col);
        s_out[p] = s[i];
        s2_out[p] = s2[i];
    }
}

/* The decide kernel for each half-window, [half_y - 1][half_x - 1]. */
typedef void (*decide_function)(cc__frame_geometry, uint32_t, uint32_t,
                                uint32_t, const uint16_t *, const uint16_t *,
                                const uint8_t *, const real *, const real *,
                                real *, real *, const real *, const real *,
                                real *, uint32_t *, uint32_t *);
#define DECIDE_ROW(HY)                                                         \
    {                                                                          \
        decide_kernel<1, HY>, decide_kernel<2, HY>, decide_kernel<3, HY>,      \
            decide_kernel<4, HY>                                               \
    }
static const decide_function decide_kernels[4][4] = {DECIDE_ROW(1),
                                                     DECIDE_ROW(2),
                                                     DECIDE_ROW(3),
                                                     DECIDE_ROW(4)};
#undef DECIDE_ROW

/* The sum of mine over the block's threads before this one, and the
 * block's whole sum in *total (when not NULL). Every thread of the block
 * (a multiple of 32 threads) calls it; warp_sums is 32 words of shared
 * memory. */
__device__ __forceinline__ uint32_t block_exclusive_sum(uint32_t mine,
                                                        uint32_t *warp_sums,
                                                        uint32_t *total)
{
    uint32_t inclusive = mine;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (int)(blockDim.x + 31) / 32;
    for (int offset = 1; offset < 32; offset *= 2) {
        uint32_t other = __shfl_up_sync(0xFFFFFFFFu, inclusive, offset);
        if (lane >= offset)
            inclusive += other;
    }
    if (lane == 31)
        warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        uint32_t sum = lane < warps ? warp_sums[lane] : 0;
        for (int offset = 1; offset < 32; offset *= 2) {
            uint32_t other = __shfl_up_sync(0xFFFFFFFFu, sum, offset);
            if (lane >= offset)
                sum += other;
        }
        if (lane < warps)
            warp_sums[lane] = sum; /* inclusive over warps */
    }
    __syncthreads();
    if (total != NULL)
        *total = warp_sums[warps - 1];
    return inclusive - mine + (warp > 0 ? warp_sums[warp - 1] : 0);
}

/* Turns one frame's bitmap into clusters, appended after the clusters of
 * the chunk's earlier frames in device arrays that the host then copies
 * out (the copy engine moves them faster than a kernel writes to host
 * memory). gridDim.y blocks share a frame, each writing one range of its
 * clusters. Each thread owns a run of bitmap words, so a block-wide scan
 * of the threads' bit counts gives every centre its rank in row-then-
 * column order. The block then lists the pixels of its clusters in shared
 * memory, a window at a time, and all its threads gather the values
 * together: consecutive threads write consecutive words of the output. */
__global__ void extract_kernel(cc__frame_geometry g, uint32_t *bitmaps,
                               const real *__restrict__ v_planes,
                               const uint32_t *__restrict__ counts,
                               uint32_t max_clusters, cc__cluster_output out,
                               uint32_t first_frame, uint32_t n_frames)
{
    enum { WINDOW = 4096 };
    __shared__ uint32_t positions[WINDOW];
    __shared__ uint64_t frame_base;
    __shared__ uint32_t frame_stored;
    __shared__ uint32_t warp_sums[32];
    const uint32_t nx = 2 * g.half_x + 1;
    const uint32_t cells = nx * (2 * g.half_y + 1);

    const uint32_t f = blockIdx.x;
    const size_t pixels = (size_t)g.rows * g.cols;
    const size_t words = (pixels + 31) / 32;
    const uint32_t *bitmap = bitmaps + f * words;
    const real *v = v_planes + f * pixels;

    if (threadIdx.x == 0) {
        uint64_t base = 0;
        for (uint32_t j = 0; j < f; j++)
            base += max_clusters != 0 && counts[j] > max_clusters ? max_clusters
                                                                  : counts[j];
        uint32_t found = counts[f];
        uint32_t stored = max_clusters != 0 && found > max_clusters
                              ? max_clusters
                              : found;
        frame_base = base;
        frame_stored = stored;
        if (blockIdx.y == 0) {
            out.stored[first_frame + f] = stored;
            out.dropped[first_frame + f] = found - stored;
            if (f == n_frames - 1)
                *out.total = *out.device_total = base + stored;
        }
    }

    /* This thread's words and the rank of its first centre. */
    const size_t word0 = words * threadIdx.x / blockDim.x;
    const size_t word1 = words * (threadIdx.x + 1) / blockDim.x;
    uint32_t mine = 0;
    for (size_t w = word0; w < word1; w++)
        mine += __popc(bitmap[w]);
    uint32_t rank = block_exclusive_sum(mine, warp_sums, NULL);

    /* This block's share of the frame's stored clusters. */
    const uint64_t base = frame_base;
    const uint32_t stored = frame_stored;
    const uint32_t begin = (uint32_t)((uint64_t)stored * blockIdx.y /
                                      gridDim.y);
    const uint32_t end = (uint32_t)((uint64_t)stored * (blockIdx.y + 1) /
                                    gridDim.y);
    const bool fits = base + stored <= out.capacity;
    const int hx = (int)g.half_x, hy = (int)g.half_y;
    size_t w = word0;
    uint32_t bits = w < word1 ? bitmap[w] : 0;
    for (uint32_t first = begin; first < end; first += WINDOW) {
        uint32_t last = min(first + (uint32_t)WINDOW, end);
        while (rank < last && w < word1) {
            if (bits == 0) {
                if (++w < word1)
                    bits = bitmap[w];
                continue;
            }
            uint32_t bit = (uint32_t)__ffs(bits) - 1;
            bits &= bits - 1;
            if (rank >= first)
                positions[rank - first] = (uint32_t)(w * 32 + bit);
            rank++;
        }
        __syncthreads();
        if (fits) {
            uint32_t n = last - first;
            uint64_t at = base + first;
            for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
                out.x[at + i] = (uint16_t)(positions[i] % g.cols);
                out.y[at + i] = (uint16_t)(positions[i] / g.cols);
            }
            /* Thread t gathers cell t % cells of clusters t / cells,
             * t / cells + lanes, ...: no division in the loop, and
             * consecutive threads still write consecutive words. */
            int32_t *values = out.values + at * cells;
            const uint32_t lanes = blockDim.x / cells; /* clusters a pass */
            if (threadIdx.x < lanes * cells) {
                const uint32_t cell = threadIdx.x % cells;
                const int dy = (int)(cell / nx) - hy,
                          dx = (int)(cell % nx) - hx;
                for (uint32_t cluster = threadIdx.x / cells; cluster < n;
                     cluster += lanes) {
                    uint32_t p = positions[cluster];
                    int r = (int)(p / g.cols) + dy, c = (int)(p % g.cols) + dx;
                    bool inside = r >= 0 && r < (int)g.rows && c >= 0 &&
                                  c < (int)g.cols;
                    values[cluster * cells + cell] =
                        inside ? pixel_round(v[(size_t)r * g.cols + c]) : 0;
                }
            }
        }
        __syncthreads();
    }
}
