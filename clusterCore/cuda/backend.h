/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend.h: the CUDA backend as the finder sees it (clusterCore/cuda/,
 * when built): a device, its batches and the accumulators it keeps on the
 * GPU. The kernels' own interface is kernels.h.
 */
#ifndef CLUSTERCORE_CUDA_BACKEND_H
#define CLUSTERCORE_CUDA_BACKEND_H

#include "../pedestal/pedestal.h"

#include "../analysis/cluster_arithmetic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the CUDA backend (cuda/backend.cu, when built) ---- */

struct cc__cuda;
/* Opens the CUDA device for config. On failure description says why (for
 * CC_BACKEND_AUTO's note) and message gives the error. */
int cc__cuda_new(struct cc__cuda **cuda, const cc_config *config,
                 char *description, char *message);
void cc__cuda_destroy(struct cc__cuda *cuda);
/* Copies a pedestal that became READY on the host to the GPU. */
int cc__cuda_upload(struct cc__cuda *cuda, const struct cc__pedestal *pedestal,
                    char *message);
/* Copies the GPU's committed state into pedestal's s and s2. */
int cc__cuda_download(struct cc__cuda *cuda, struct cc__pedestal *pedestal,
                      char *message);
/* Processes a batch against the GPU's pedestal, as cc__cpu_process (its
 * gain map and analog image are the device's, set apart). */
int cc__cuda_process(struct cc__cuda *cuda,
                     const struct cc__batch_request *batch, char *message);

/* From the next batch on, multiplies values and noise by factors (the
 * working precision's k of docs/spec.md §9, copied to the GPU); NULL: no
 * gain map. On failure the map in force stays. */
int cc__cuda_set_gain(struct cc__cuda *cuda, const void *factors,
                      char *message);

/* The analog image on the GPU (docs/spec.md §4.8): on, a device sum of
 * every successful batch's data frames, starting from zero; off, none. */
int cc__cuda_set_analog(struct cc__cuda *cuda, bool on, char *message);
/* Adds the device sums into sums (rows * cols) and zeroes them. */
int cc__cuda_take_analog(struct cc__cuda *cuda, double *sums, char *message);

/* After cc__cuda_process failed under CC_BACKEND_AUTO: which frames of
 * the batch the GPU's image, spectra and counts hold (1) and which they
 * do not (0), so that the CPU, doing the batch again, enters each
 * photon once. */
void cc__cuda_frames_entered(const struct cc__cuda *cuda, size_t n_frames,
                             uint8_t *entered);

/* From now on images the photons of every batch on the GPU with map
 * (tables and window copied to the device), into an image kept there;
 * NULL stops and frees it. */
int cc__cuda_set_image(struct cc__cuda *cuda, const struct cc__image_map *map,
                       char *message);
/* Copies the GPU's image (one uint64 a bin) and statistics out and empties
 * them. */
int cc__cuda_take_image(struct cc__cuda *cuda, uint64_t *counts,
                        cc_image_stats *stats, char *message);

/* From now on enters the clusters of every batch into per-pixel spectra
 * binned as binning says (rows x cols pixels), kept on the GPU; NULL
 * stops and frees them. */
int cc__cuda_set_spectra(struct cc__cuda *cuda,
                         const struct cc__gain_binning *binning, uint32_t rows,
                         uint32_t cols, char *message);
/* Copies the GPU's spectra (one uint64 a bin of every pixel's) and their
 * photons and outside counts out and empties them. */
int cc__cuda_take_spectra(struct cc__cuda *cuda, uint64_t *counts,
                          uint64_t *photons, uint64_t *outside, char *message);

/* From now on counts the clusters of every batch into a spectrum and a
 * hit map binned as binning says (either may be left out), kept on the
 * GPU; NULL stops and frees them. */
int cc__cuda_set_counting(struct cc__cuda *cuda,
                          const struct cc__tally_binning *binning,
                          char *message);
/* Copies the GPU's counts out (the spectrum's bins, then the hit map's
 * pixels, a uint64 each) with the underflow, overflow and clusters
 * outside the window, and empties them. */
int cc__cuda_take_counting(struct cc__cuda *cuda, uint64_t *counts,
                           uint64_t totals[3], char *message);

/* How the CUDA backend issues the copies of several buffers at once (a
 * list's page-locked frames in, a chunk's cluster arrays out): a
 * cudaMemcpyAsync each, or one cudaMemcpyBatchAsync (the default;
 * docs/benchmarks.md compares them). */
enum { CC__COPIES_EACH = 1, CC__COPIES_BATCHED };

/* How the CUDA backend tiles frames and issues copies, for tests and
 * benchmarks that vary it: 0 keeps the backend's choice. */
struct cc__cuda_tuning {
    uint32_t chunk_frames, steps, tile_rows, tile_cols, threads;
    uint32_t copies; /* CC__COPIES_* */
};
int cc__cuda_tune(struct cc__cuda *cuda, const struct cc__cuda_tuning *tuning);
#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_CUDA_BACKEND_H */
