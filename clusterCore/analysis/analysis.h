/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * analysis.h: what is computed from clusters (clusterCore/analysis/):
 * energies, spectra and hit maps, η calibrations and interpolated
 * images, a flat field's spectra. The per-cluster formulas, shared with
 * the CUDA backend, are cluster_arithmetic.h.
 */
#ifndef CLUSTERCORE_ANALYSIS_H
#define CLUSTERCORE_ANALYSIS_H

#include "../base/base.h"

#include "cluster_arithmetic.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cc_eta_calibration {
    cc_eta_calibration_info info;
    uint64_t counts[]; /* bins * bins, H[ix][iy] at ix * bins + iy */
};

/* An empty calibration whose info is checked; NULL without memory. */
cc_eta_calibration *
cc__eta_calibration_alloc(const cc_eta_calibration_info *info);
/* Whether info describes a calibration (function, bins, range, window):
 * CC_OK, or CC_EINVAL with the reason. */
int cc__eta_calibration_check(const cc_eta_calibration_info *info,
                              char *message);

/* An interpolator's map and geometry (interpolator.c). */
const struct cc__image_map *
cc__interpolator_map(const cc_interpolator *interpolator);
/* A new interpolator with from's map, window and geometry and an empty
 * image. */
int cc__interpolator_copy(const cc_interpolator *from, cc_interpolator **copy,
                          char *message);
/* Whether two interpolators make images of the same size. */
bool cc__interpolator_same_image(const cc_interpolator *a,
                                 const cc_interpolator *b);
/* Adds counts (counts32, or counts64 when counts32 is NULL: one a bin of
 * into's image) and stats into into, each bin stopping at UINT32_MAX. */
void cc__interpolator_absorb(cc_interpolator *into, const uint32_t *counts32,
                             const uint64_t *counts64,
                             const cc_image_stats *stats);
/* Adds from's image and statistics into into and empties from. */
void cc__interpolator_move(cc_interpolator *into, cc_interpolator *from);

/* A flat field's spectra (gain_calibration.c): its configuration and
 * binning (docs/spec.md §9.3), whether two have the same configuration,
 * a frame's clusters entered (their centres in the frame), counts (one
 * a bin of every pixel's spectrum) and totals added, and from's spectra
 * added into into's and emptied. Every count stops at UINT32_MAX. */
const cc_gain_calibration_config *
cc__gain_calibration_config(const cc_gain_calibration *calibration);
void cc__gain_calibration_binning(const cc_gain_calibration *calibration,
                                  struct cc__gain_binning *binning);
bool cc__gain_calibration_same(const cc_gain_calibration *a,
                               const cc_gain_calibration *b);
void cc__gain_calibration_add_frame(cc_gain_calibration *calibration,
                                    const cc_frame_clusters *frame);
void cc__gain_calibration_absorb(cc_gain_calibration *into,
                                 const uint64_t *counts, uint64_t photons,
                                 uint64_t outside);
void cc__gain_calibration_move(cc_gain_calibration *into,
                               cc_gain_calibration *from);

/* The size of a hit map (hitmap.c). */
void cc__hitmap_size(const cc_hitmap *hitmap, uint32_t *rows, uint32_t *cols);

/* ---- a spectrum and a hit map the finder keeps (spectrum.c, hitmap.c):
 * their binning for the GPU, an empty copy, whether two count alike, and
 * counts added (absorb: the GPU's uint64 counts; move: another's, which
 * is then emptied); hit-map counts stop at 2^32 - 1. ---- */
void cc__spectrum_binning(const cc_spectrum *spectrum,
                          struct cc__tally_binning *binning);
int cc__spectrum_copy_empty(const cc_spectrum *spectrum, cc_spectrum **copy);
bool cc__spectrum_same(const cc_spectrum *a, const cc_spectrum *b);
void cc__spectrum_absorb(cc_spectrum *into, const uint64_t *counts,
                         uint64_t underflow, uint64_t overflow);
void cc__spectrum_move(cc_spectrum *into, cc_spectrum *from);
void cc__hitmap_binning(const cc_hitmap *hitmap,
                        struct cc__tally_binning *binning);
int cc__hitmap_copy_empty(const cc_hitmap *hitmap, cc_hitmap **copy);
bool cc__hitmap_same(const cc_hitmap *a, const cc_hitmap *b);
void cc__hitmap_absorb(cc_hitmap *into, const uint64_t *counts,
                       uint64_t outside);
void cc__hitmap_move(cc_hitmap *into, cc_hitmap *from);

/* ---- one pass over a frame's clusters (energy.c, spectrum.c, hitmap.c,
 * tally.c) ---- */

/* Clusters are taken this many at a time: their energies are worked out
 * once, into a buffer on the stack, and each user reads them from it. */
#define CC__ENERGY_CHUNK 256
/* energies[i]: the energy of cluster i of n, size_x * size_y values each
 * (sizes checked by the caller). */
void cc__cluster_energies(cc_energy energy, uint32_t size_x, uint32_t size_y,
                          const int32_t *values, size_t n, int64_t *energies);
/* The energy a spectrum histograms, and n such energies counted. */
cc_energy cc__spectrum_energy(const cc_spectrum *spectrum);
void cc__spectrum_count(cc_spectrum *spectrum, const int64_t *energies,
                        size_t n);
/* Whether a hit map counts only its window's clusters, and their energy. */
bool cc__hitmap_window_energy(const cc_hitmap *hitmap, cc_energy *energy);
/* 0 when the n centres lie on the map, else CC_EINVAL. */
int cc__hitmap_check(const cc_hitmap *hitmap, const uint16_t *x,
                     const uint16_t *y, size_t n);
/* n centres counted (checked); with a window, energies[i] (of the
 * window's energy) decides whether centre i is. */
void cc__hitmap_count(cc_hitmap *hitmap, const uint16_t *x, const uint16_t *y,
                      const int64_t *energies, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_ANALYSIS_H */
