/*
 * frame_kernels.cuh: the bodies of the CUDA kernels, written for one
 * working precision `real`. kernels.cu includes this once per precision,
 * inside a namespace for each, after pixel_arithmetic.h.
 */

/* Decides one tile of a frame. The block first computes v for its tile
 * and the half-window around it into shared memory (0 outside the frame,
 * as SPEC pads), then decides each of its pixels from there, summing the
 * window row by row from the top-left cell exactly as the CPU does. */
__global__ void decide_kernel(cc__frame_geometry g, uint32_t tile_rows,
                              uint32_t tile_cols,
                              const uint16_t *__restrict__ frame,
                              const uint16_t *__restrict__ baseline,
                              const real *__restrict__ s_in,
                              const real *__restrict__ s2_in,
                              real *__restrict__ s_out,
                              real *__restrict__ s2_out,
                              real *__restrict__ v_plane,
                              uint32_t *__restrict__ bitmap,
                              uint32_t *__restrict__ count)
{
    extern __shared__ unsigned char shared_bytes[];
    real *tile = reinterpret_cast<real *>(shared_bytes);
    const int rows = (int)g.rows, cols = (int)g.cols;
    const int hx = (int)g.half_x, hy = (int)g.half_y;
    const int width = (int)tile_cols + 2 * hx;
    const int height = (int)tile_rows + 2 * hy;
    const int row0 = (int)(blockIdx.y * tile_rows);
    const int col0 = (int)(blockIdx.x * tile_cols);
    const real n = (real)g.window;

    for (int i = threadIdx.x; i < width * height; i += blockDim.x) {
        int row = row0 - hy + i / width, col = col0 - hx + i % width;
        real v = 0;
        if (row >= 0 && row < rows && col >= 0 && col < cols) {
            size_t p = (size_t)row * cols + col;
            v = pixel_value(frame[p], g.adc_mask, baseline[p], s_in[p], n);
        }
        tile[i] = v;
    }
    __syncthreads();

    const real nsigma = (real)g.nsigma, c3nsigma = (real)g.c3nsigma;
    uint32_t emitted = 0;
    for (int i = threadIdx.x; i < (int)(tile_rows * tile_cols);
         i += blockDim.x) {
        int ly = i / (int)tile_cols, lx = i % (int)tile_cols;
        int row = row0 + ly, col = col0 + lx;
        if (row >= rows || col >= cols)
            continue;
        size_t p = (size_t)row * cols + col;
        /* Issued before the window loop, so that these loads' latency
         * overlaps the shared-memory arithmetic. */
        real s = s_in[p], s2 = s2_in[p];
        uint16_t x = frame[p], x0 = baseline[p];
        real total = 0, max = 0;
        for (int dy = 0; dy <= 2 * hy; dy++)
            for (int dx = 0; dx <= 2 * hx; dx++) {
                real cell = tile[(ly + dy) * width + lx + dx];
                total += cell;
                max = cell > max ? cell : max;
            }
        real value = tile[(ly + hy) * width + lx + hx];
        real s2_mean;
        real rms = pixel_rms(s, s2, n, &s2_mean);
        int flags = pixel_decide(value, max, total, rms, nsigma, c3nsigma);
        int quiet = flags / PIXEL_QUIET;
        real y = pixel_y(x, g.adc_mask, x0);
        s_out[p] = pixel_next_s(s, value, quiet);
        s2_out[p] = pixel_next_s2(s2, y, s2_mean, quiet);
        v_plane[p] = value;
        if (flags & PIXEL_EMIT) {
            atomicOr(&bitmap[p >> 5], 1u << (p & 31));
            emitted++;
        }
    }
    for (int offset = 16; offset > 0; offset /= 2)
        emitted += __shfl_down_sync(0xFFFFFFFFu, emitted, offset);
    if ((threadIdx.x & 31) == 0 && emitted != 0)
        atomicAdd(count, emitted);
}

/* Turns one frame's bitmap into clusters; gridDim.y blocks share a
 * frame, each writing one range of its clusters. Each thread owns a run
 * of bitmap words, so a block-wide scan of the threads' bit counts gives
 * every centre its rank in row-then-column order. The block then lists
 * the pixels of its clusters in shared memory, a window at a time, and
 * all its threads gather the values together: consecutive threads write
 * consecutive words of the output, so writes to host memory coalesce. */
__global__ void extract_kernel(cc__frame_geometry g, uint32_t *bitmaps,
                               const real *__restrict__ v_planes,
                               const uint32_t *__restrict__ counts,
                               uint64_t *totals, uint32_t max_clusters,
                               cc__cluster_output out, uint32_t first_frame,
                               uint32_t n_frames)
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
        uint64_t base = totals[0];
        for (uint32_t j = 0; j < f; j++)
            base += max_clusters != 0 && counts[j] > max_clusters
                        ? max_clusters
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
                totals[1] = base + stored;
        }
    }

    /* This thread's words and the rank of its first centre. */
    const size_t word0 = words * threadIdx.x / blockDim.x;
    const size_t word1 = words * (threadIdx.x + 1) / blockDim.x;
    uint32_t mine = 0;
    for (size_t w = word0; w < word1; w++)
        mine += __popc(bitmap[w]);
    uint32_t inclusive = mine;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int offset = 1; offset < 32; offset *= 2) {
        uint32_t other = __shfl_up_sync(0xFFFFFFFFu, inclusive, offset);
        if (lane >= offset)
            inclusive += other;
    }
    if (lane == 31)
        warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        int warps = (int)(blockDim.x + 31) / 32;
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
    uint32_t rank = inclusive - mine + (warp > 0 ? warp_sums[warp - 1] : 0);

    /* This block's share of the frame's stored clusters. */
    const uint64_t base = frame_base;
    const uint32_t stored = frame_stored;
    const uint32_t begin = (uint32_t)((uint64_t)stored * blockIdx.y / gridDim.y);
    const uint32_t end =
        (uint32_t)((uint64_t)stored * (blockIdx.y + 1) / gridDim.y);
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
                const int dy = (int)(cell / nx) - hy, dx = (int)(cell % nx) - hx;
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
