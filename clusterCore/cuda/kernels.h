/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kernels.h: the CUDA backend's kernels and their launchers. Each launcher
 * owns its launch configuration, checks it, launches on the given stream
 * and returns the launch's cudaError_t; none synchronises.
 */
#ifndef CLUSTERCORE_CUDA_KERNELS_H
#define CLUSTERCORE_CUDA_KERNELS_H

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stdint.h>

#ifndef CC__HD
#define CC__HD __host__ __device__
#endif
#include "../base/common_mode_regions.h"

/* The thresholds and sizes every kernel of a batch shares. */
struct cc__frame_geometry {
    uint32_t rows, cols;
    uint32_t half_x, half_y;
    uint16_t adc_mask;
    uint16_t pedestal_only; /* docs/spec.md §2.7: pedestal frames */
    uint32_t window;
    double nsigma, c3nsigma; /* rounded to the working precision on device */
    cc__regions regions;     /* of the common mode; count 0 when off */
};

/* How the decide kernel tiles a frame and how many frames a launch
 * decides; any shape gives the same bytes. */
struct cc__launch_shape {
    uint32_t tile_rows, tile_cols; /* pixels decided per block */
    uint32_t threads;              /* per block, a multiple of 32 */
    uint32_t steps;                /* most frames a launch */
};

/* Shared memory a decide block needs for `steps` frames of a shape. */
size_t cc__decide_shared_bytes(const cc__frame_geometry &geometry,
                               const cc__launch_shape &shape, uint32_t steps,
                               size_t real_size);

/* Lets the decide kernels of both precisions use up to the device's
 * opt-in shared memory per block; returns that limit in *limit. */
cudaError_t cc__prepare_decide(int device, size_t *limit);

/* The most threads a decide block of this cluster size and precision can
 * have (after cc__prepare_decide); 0 for a size without a kernel. */
uint32_t cc__decide_max_threads(const cc__frame_geometry &geometry,
                                size_t real_size);

/* n_frames (1 to shape.steps) consecutive frames of docs/spec.md §2-§3,
 * §7.1 (pixel_mask: a byte a pixel, 0 = good) and §8.3 (common_mode:
 * frame k's value for region r at k * regions + r, or NULL when off):
 * reads the frames and the state s_in, writes the state after the last
 * frame to s_out, and for each frame k its v plane, its cluster centres
 * as a bitmap of rows * cols bits (which must be zero on entry) and adds
 * its number of centres to counts[k]. T is float or double. */
template <typename T>
cudaError_t cc__launch_decide(
    const cc__frame_geometry &geometry, const cc__launch_shape &shape,
    size_t shared_limit, uint32_t n_frames, const uint16_t *frames,
    const uint16_t *baseline, const uint8_t *pixel_mask, const T *s_in,
    const T *s2_in, T *s_out, T *s2_out, const T *common_mode, const T *gain,
    T *v_planes, uint32_t *bitmaps, uint32_t *counts, cudaStream_t stream);

/* How a kernel's blocks share a region: the region's rectangle cut into
 * col_bands x (parts / col_bands) rectangles, its parts, a block each. */
struct cc__part_shape {
    uint32_t parts;     /* blocks a region */
    uint32_t col_bands; /* parts side by side (parts: a multiple) */
};

/* A block's part of a region: its rectangle and its region, worked out
 * once on the host (cc__common_mode_parts), so that a block's set-up
 * reads 16 bytes instead of dividing. */
struct cc__part_rect {
    uint16_t row0, row1, col0, col1;
    uint32_t region, unused;
};

/* A chunk's device scratch for the common mode (docs/spec.md §8.2), per
 * (frame, region) at frame * regions + region; cc__common_mode_layout
 * says how the blocks of each kernel share a region. histogram, sums and
 * arrivals are kept zero between chunks (after a failed one, the caller
 * clears them). */
struct cc__common_mode_work {
    cc__part_shape centre_shape;       /* the centre kernel's parts */
    cc__part_shape mean_shape;         /* the mean kernel's, smaller */
    const cc__part_rect *centre_parts; /* device: the block of a frame */
    const cc__part_rect *mean_parts;   /* at region * parts + part */
    uint32_t tile_cells;      /* a mean part's rectangle and a cell around */
    uint32_t cells;           /* frames * regions of the largest chunk */
    int32_t *centre;          /* cells */
    uint32_t *histogram;      /* CC__CENTRE_BINS a cell; centre parts > 1 */
    unsigned long long *sums; /* 2 a cell; mean parts > 1 only */
    uint32_t *arrivals;       /* 2 a cell: parts done, of two kernels */
};

/* How blocks share a region of the geometry (the shapes and tile_cells
 * of work): rectangles of about 8,192 pixels for the centre kernel, whose
 * parts merge a histogram, and of about 2,048 for the mean kernel, whose
 * parts merge two integers. */
void cc__common_mode_layout(const cc__regions &regions,
                            cc__common_mode_work *work);
/* The parts of every region as shape cuts them, shape.parts * regions of
 * them, at region * shape.parts + part (host memory). */
void cc__common_mode_parts(const cc__regions &regions,
                           const cc__part_shape &shape, cc__part_rect *parts);

/* The common mode of n_frames consecutive frames against the reference
 * r_ref and rms_ref, each frame independently: frame k's value for
 * region r goes to values[k * regions + r] (device) and host_values[...]
 * (mapped host memory), whether it was estimated to host_estimated[...].
 */
template <typename T>
cudaError_t
cc__launch_common_mode(const cc__frame_geometry &geometry,
                       const cc__common_mode_work &work, uint32_t n_frames,
                       const uint16_t *frames, const uint16_t *baseline,
                       const uint8_t *pixel_mask, const T *reference_offset,
                       const T *reference_rms, T *values, T *host_values,
                       uint8_t *host_estimated, cudaStream_t stream);

/* Where extract writes a chunk's clusters: device arrays, from the
 * chunk's first cluster, and counts the host reads (page-locked, mapped). */
struct cc__cluster_output {
    uint16_t *x, *y;
    int32_t *values;
    uint64_t capacity;      /* clusters the arrays hold */
    uint32_t *stored;       /* per frame of the batch */
    uint32_t *dropped;      /* per frame of the batch */
    uint64_t *total;        /* the chunk's stored clusters */
    uint64_t *device_total; /* the same, in device memory */
};

/* Turns the bitmaps of frames [0, n_frames) of a chunk into clusters in
 * row-then-column order, at most max_clusters per frame (0 = all), and
 * writes their number to *output.total. Frames whose clusters would pass
 * output.capacity are counted but not written: the caller grows the
 * arrays and runs the batch again. Clears the bitmaps for their next use
 * (the caller clears counts). first_frame is the chunk's first frame
 * within the batch, the index into output.stored and output.dropped. */
template <typename T>
cudaError_t
cc__launch_extract(const cc__frame_geometry &geometry, uint32_t n_frames,
                   uint32_t *bitmaps, const T *v_planes, const uint32_t *counts,
                   uint32_t max_clusters, const cc__cluster_output &output,
                   uint32_t first_frame, cudaStream_t stream);

/* A chunk's clusters on the device, as the extract kernel left them:
 * *total of them (a device pointer), none written when *total > capacity
 * (the chunk is then run again). */
struct cc__chunk_clusters {
    uint32_t size_x, size_y;
    const uint16_t *x, *y;
    const int32_t *values;
    const uint64_t *total;
    uint64_t capacity;
};

/* Adds the photons of a chunk's clusters to counts, one uint64 a bin of
 * map's image, and photons, uninterpolable, clipped and outside to
 * stats[0..3]. map's tables are device pointers. */
struct cc__image_map;
cudaError_t cc__launch_image(const cc__image_map &map,
                             const cc__chunk_clusters &chunk,
                             unsigned long long *counts,
                             unsigned long long *stats, cudaStream_t stream);

/* Enters a chunk's clusters into per-pixel spectra, binning.bins uint64
 * counts a pixel of a frame cols wide, and the photons entered and those
 * outside the range to totals[0..1]. */
struct cc__gain_binning;
cudaError_t cc__launch_spectra(const cc__gain_binning &binning, uint32_t cols,
                               const cc__chunk_clusters &chunk,
                               unsigned long long *counts,
                               unsigned long long *totals, cudaStream_t stream);

/* Counts a chunk's clusters into a spectrum (binning.bins uint64 counts)
 * and a hit map (one uint64 a pixel), as binning says which, and the
 * spectrum's underflow and overflow and the clusters outside the hit
 * map's window into totals[0..2]. */
struct cc__tally_binning;
cudaError_t cc__launch_count(const cc__tally_binning &binning,
                             const cc__chunk_clusters &chunk,
                             unsigned long long *spectrum,
                             unsigned long long *hitmap,
                             unsigned long long *totals, cudaStream_t stream);

/* The analog image (docs/spec.md §4.8): n_frames v planes of pixels each
 * added, frame after frame, into batch_sums; then a successful batch's
 * sums into the image's. */
template <typename T>
cudaError_t cc__launch_analog(const T *v_planes, uint32_t n_frames,
                              size_t pixels, double *batch_sums,
                              cudaStream_t stream);
cudaError_t cc__launch_analog_fold(const double *batch_sums, size_t pixels,
                                   double *sums, cudaStream_t stream);

#endif
