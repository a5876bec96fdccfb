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
        real total = 0, max = 0;
        for (int dy = 0; dy <= 2 * hy; dy++)
            for (int dx = 0; dx <= 2 * hx; dx++) {
                real cell = tile[(ly + dy) * width + lx + dx];
                total += cell;
                max = cell > max ? cell : max;
            }
        size_t p = (size_t)row * cols + col;
        real value = tile[(ly + hy) * width + lx + hx];
        real s2_mean;
        real rms = pixel_rms(s_in[p], s2_in[p], n, &s2_mean);
        int flags = pixel_decide(value, max, total, rms, nsigma, c3nsigma);
        int quiet = flags / PIXEL_QUIET;
        real y = pixel_y(frame[p], g.adc_mask, baseline[p]);
        s_out[p] = pixel_next_s(s_in[p], value, quiet);
        s2_out[p] = pixel_next_s2(s2_in[p], y, s2_mean, quiet);
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

/* Turns one frame's bitmap into clusters (one block a frame). Each thread
 * owns a run of bitmap words, so a block-wide scan of the threads' bit
 * counts gives every centre its rank in row-then-column order. Clusters
 * are staged in shared memory a window at a time and written out as one
 * contiguous run, so the writes to host memory coalesce. */
__global__ void extract_kernel(cc__frame_geometry g, uint32_t *bitmaps,
                               const real *__restrict__ v_planes,
                               const uint32_t *__restrict__ counts,
                               uint64_t *totals, uint32_t max_clusters,
                               cc__cluster_output out, uint32_t first_frame,
                               uint32_t n_frames, uint32_t window_clusters)
{
    extern __shared__ unsigned char shared_bytes[];
    __shared__ uint64_t frame_base;
    __shared__ uint32_t frame_stored;
    __shared__ uint32_t warp_sums[32];
    const uint32_t cells = (2 * g.half_x + 1) * (2 * g.half_y + 1);
    int32_t *staged_values = reinterpret_cast<int32_t *>(shared_bytes);
    uint16_t *staged_x =
        reinterpret_cast<uint16_t *>(staged_values + window_clusters * cells);
    uint16_t *staged_y = staged_x + window_clusters;

    const uint32_t f = blockIdx.x;
    const size_t pixels = (size_t)g.rows * g.cols;
    const size_t words = (pixels + 31) / 32;
    uint32_t *bitmap = bitmaps + f * words;
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
        out.stored[first_frame + f] = stored;
        out.dropped[first_frame + f] = found - stored;
        if (f == n_frames - 1)
            totals[1] = base + stored;
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

    const uint64_t base = frame_base;
    const uint32_t stored = frame_stored;
    const bool fits = base + stored <= out.capacity;
    const int hx = (int)g.half_x, hy = (int)g.half_y;
    size_t w = word0;
    uint32_t bits = w < word1 ? bitmap[w] : 0;
    for (uint32_t first = 0; first < stored; first += window_clusters) {
        uint32_t last = min(first + window_clusters, stored);
        while (rank < last && w < word1) {
            if (bits == 0) {
                if (++w < word1)
                    bits = bitmap[w];
                continue;
            }
            uint32_t bit = (uint32_t)__ffs(bits) - 1;
            bits &= bits - 1;
            size_t p = w * 32 + bit;
            int row = (int)(p / g.cols), col = (int)(p % g.cols);
            uint32_t slot = rank - first;
            staged_x[slot] = (uint16_t)col;
            staged_y[slot] = (uint16_t)row;
            int32_t *cluster = staged_values + slot * cells;
            for (int dy = -hy; dy <= hy; dy++)
                for (int dx = -hx; dx <= hx; dx++) {
                    int r = row + dy, c = col + dx;
                    bool inside = r >= 0 && r < (int)g.rows && c >= 0 &&
                                  c < (int)g.cols;
                    *cluster++ = inside
                                     ? pixel_round(v[(size_t)r * g.cols + c])
                                     : 0;
                }
            rank++;
        }
        __syncthreads();
        if (fits) {
            uint32_t n = last - first;
            uint64_t at = base + first;
            for (uint32_t i = threadIdx.x; i < n * cells; i += blockDim.x)
                out.values[at * cells + i] = staged_values[i];
            for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
                out.x[at + i] = staged_x[i];
                out.y[at + i] = staged_y[i];
            }
        }
        __syncthreads();
    }
    for (size_t word = word0; word < word1; word++)
        bitmap[word] = 0;
}
