/*
 * kernels.h: the CUDA backend's kernels and their launchers. Each launcher
 * owns its launch configuration, checks it, launches on the given stream
 * and returns the launch's cudaError_t; none synchronises.
 */
#ifndef CLUSTERCORE_CUDA_KERNELS_H
#define CLUSTERCORE_CUDA_KERNELS_H

#include <cuda_runtime.h>
#include <stdint.h>

/* The thresholds and sizes every kernel of a batch shares. */
struct cc__frame_geometry {
    uint32_t rows, cols;
    uint32_t half_x, half_y;
    uint16_t adc_mask;
    uint32_t window;
    double nsigma, c3nsigma; /* rounded to the working precision on device */
};

/* How the decide kernel tiles a frame; any tiling gives the same bytes. */
struct cc__launch_shape {
    uint32_t tile_rows, tile_cols; /* pixels decided per block */
    uint32_t threads;              /* per block, a multiple of 32 */
};

/* One frame of SPEC sections 2-3: reads the frame and the state s_in,
 * writes the next state s_out, the frame's v plane, the cluster centres
 * as a bitmap of rows * cols bits (which must be zero on entry) and adds
 * the number of centres to *count. T is float or double. */
template <typename T>
cudaError_t cc__launch_decide(const cc__frame_geometry &geometry,
                              const cc__launch_shape &shape,
                              const uint16_t *frame, const uint16_t *baseline,
                              const T *s_in, const T *s2_in, T *s_out,
                              T *s2_out, T *v_plane, uint32_t *bitmap,
                              uint32_t *count, cudaStream_t stream);

/* Where extract writes: arrays the host reads (page-locked, mapped). */
struct cc__cluster_output {
    uint16_t *x, *y;
    int32_t *values;
    uint64_t capacity;  /* clusters the arrays hold */
    uint32_t *stored;   /* per frame of the batch */
    uint32_t *dropped;  /* per frame of the batch */
};

/* Turns the bitmaps of frames [0, n_frames) of a chunk into clusters in
 * row-then-column order, at most max_clusters per frame (0 = all),
 * appended after totals[0] clusters; writes totals[1] for the next chunk.
 * Frames whose clusters would pass output.capacity are counted but not
 * written: the caller grows the output and runs the batch again. Clears
 * the bitmaps for their next use (the caller clears counts). first_frame
 * is the chunk's first frame within the batch, the index into
 * output.stored and output.dropped. */
template <typename T>
cudaError_t cc__launch_extract(const cc__frame_geometry &geometry,
                               uint32_t n_frames, uint32_t *bitmaps,
                               const T *v_planes, const uint32_t *counts,
                               uint64_t *totals, uint32_t max_clusters,
                               const cc__cluster_output &output,
                               uint32_t first_frame, cudaStream_t stream);

#endif
