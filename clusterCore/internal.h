/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h: declarations shared by libclustercore's source files and its
 * tests. Internal symbols start with cc__ and are hidden from the shared
 * library's interface.
 */
#ifndef CLUSTERCORE_INTERNAL_H
#define CLUSTERCORE_INTERNAL_H

#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clustercore.h"

#ifndef CC__HD
#define CC__HD
#endif
#include "common_mode_regions.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libclustercore reads and writes little-endian files in host order"
#endif

#ifdef __cplusplus /* the CUDA backend's host code is CUDA C++ */
extern "C" {
#endif

/* Formats a message into a CC_MESSAGE_SIZE buffer (NULL is allowed) and
 * returns code, so that a failure is reported in one statement. */
int cc__message(char *message, int code, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Returns array grown to hold at least needed elements (array itself if
 * it already does), or NULL with array untouched. Capacities double, so a
 * run reallocates only a logarithmic number of times. */
void *cc__grow(void *array, size_t *capacity, size_t needed,
               size_t element_size);

/* The thread count that 0 (one per online CPU) or n stands for. */
unsigned cc__resolve_threads(uint32_t threads);

/* c3nsigma = sqrt(Nx * Ny) * nsigma, computed once in double as docs/spec.md says;
 * every backend rounds it to its precision (config.c). */
double cc__c3nsigma(const cc_config *config);

/* Where a batch's frames lie: back to back from `first`, or, when `each`
 * is not NULL, frame k at each[k] (an areaDetector plugin's queued
 * arrays, for instance). */
struct cc__frames {
    const uint16_t *first;
    const uint16_t *const *each;
    size_t pixels; /* of one frame */
    /* Pedestal frames (docs/spec.md §2.7): every unmasked pixel is
     * quiet and none is a centre. */
    bool pedestal_only;
};

static inline const uint16_t *cc__frame_at(const struct cc__frames *frames,
                                           size_t k)
{
    return frames->each != NULL ? frames->each[k]
                                : frames->first + k * frames->pixels;
}

/* ---- cluster lists (clusters.c) ---- */

struct cc__frame_entry {
    uint64_t number;
    size_t first;     /* index of the frame's first cluster */
    uint32_t count;   /* clusters stored */
    uint32_t dropped; /* clusters counted beyond the cap */
};

/* How a cluster list allocates its arrays. Page-locked memory lets the
 * CUDA backend write clusters into them straight from the GPU. */
struct cc__allocator {
    /* Like realloc, with the old size given; NULL leaves memory as it was. */
    void *(*resize)(void *memory, size_t old_size, size_t new_size);
    void (*release)(void *memory);
};
extern const struct cc__allocator cc__heap_allocator;
/* Page-locked and mapped into the GPU's address space (CUDA builds). */
extern const struct cc__allocator cc__pinned_allocator;

struct cc_clusters {
    const struct cc__allocator *allocator; /* for x, y and values */
    uint32_t size_x, size_y;
    struct cc__frame_entry *frames;
    size_t n_frames, frames_capacity;
    uint16_t *x, *y;
    int32_t *values; /* size_x * size_y per cluster */
    size_t n_clusters;
    size_t x_capacity, y_capacity, values_capacity; /* in elements */
};

/* CC_OK if size_x x size_y is a cluster size (odd, CC_CLUSTER_SIZE_MIN..MAX
 * a side), else CC_EINVAL with message saying so. */
int cc__cluster_size_check(uint32_t size_x, uint32_t size_y, char *message);
/* Empties the list (keeping its memory) for clusters of size_x * size_y. */
void cc__clusters_clear(cc_clusters *clusters, uint32_t size_x,
                        uint32_t size_y);
/* Frees the cluster arrays and allocates them with allocator from now on
 * (the list keeps its frames' entries only if it holds no clusters). */
void cc__clusters_set_allocator(cc_clusters *clusters,
                                const struct cc__allocator *allocator);
/* Makes room for needed clusters of the list's size. */
int cc__clusters_reserve(cc_clusters *clusters, size_t needed);
/* How many clusters of the list's size all three arrays hold now. */
size_t cc__clusters_capacity(const cc_clusters *clusters);
/* Opens a new frame; later pushes go into it. */
int cc__clusters_begin_frame(cc_clusters *clusters, uint64_t number);
/* Adds a cluster to the last frame and points *values at its size_x *
 * size_y values to fill; when the frame already holds max_clusters (0 = no
 * cap) the cluster is only counted as dropped and *values is NULL. */
int cc__clusters_push(cc_clusters *clusters, uint32_t max_clusters,
                      uint16_t x, uint16_t y, int32_t **values);
/* Appends frame src_frame of src to the last frame of dst, under the cap. */
int cc__clusters_append(cc_clusters *dst, const cc_clusters *src,
                        size_t src_frame, uint32_t max_clusters);
/* Where one list's clusters of a frame go in another. */
struct cc__placement {
    size_t at;      /* dst's index of the first */
    uint32_t count; /* those kept under the cap */
};
/* The first half of cc__clusters_append: makes room and counts, copies
 * nothing. cc__clusters_copy_placed does the copy, on any thread, once
 * every placement into dst is made (until then dst's arrays may move). */
int cc__clusters_place(cc_clusters *dst, const cc_clusters *src,
                       size_t src_frame, uint32_t max_clusters,
                       struct cc__placement *placement);
void cc__clusters_copy_placed(cc_clusters *dst, const cc_clusters *src,
                              size_t src_frame,
                              const struct cc__placement *placement);

/* ---- pedestal state (pedestal.c) ---- */

struct cc__pedestal {
    size_t pixels;
    cc_precision precision;
    cc_pedestal_state state;
    uint64_t frames_trained;
    uint32_t window;   /* N in force */
    uint64_t *sum;     /* training: sum of x per pixel */
    uint64_t *sum_sq;  /* training: sum of x^2 per pixel */
    uint16_t *baseline; /* X0 per pixel, fixed when training ends */
    void *s, *s2;       /* centred sums in the working precision */
    uint8_t *mask;      /* per pixel: CC__MASKED_BY_* bits, 0 = good */
    /* docs/spec.md §8.2: r and rms as the pedestal became READY, in the
     * working precision; the common mode is measured against them. */
    void *reference_offset, *reference_rms;
};

/* Why a pixel is masked (docs/spec.md §7.1); the backends skip a pixel
 * whose mask byte is not 0. */
enum { CC__MASKED_BY_USER = 1, CC__MASKED_BY_RMS = 2 };

size_t cc__precision_size(cc_precision precision);
int cc__pedestal_init(struct cc__pedestal *pedestal, size_t pixels,
                      cc_precision precision, uint32_t window);
void cc__pedestal_free(struct cc__pedestal *pedestal);
void cc__pedestal_reset(struct cc__pedestal *pedestal, uint32_t window);
/* Sums one dark frame; with common-mode regions (count > 0), each region's
 * shift against the frames before is taken out first (docs/spec.md §8.4),
 * using region_sums (3 * regions->count of room). */
void cc__pedestal_train(struct cc__pedestal *pedestal, const uint16_t *frame,
                        uint16_t adc_mask, const struct cc__regions *regions,
                        int64_t *region_sums);
/* Fixes X0 and converts the centred sums once to the working precision;
 * the frames trained so far become the window. Takes the reference. */
void cc__pedestal_freeze(struct cc__pedestal *pedestal);
/* Takes the common mode's reference from a READY pedestal's state. */
void cc__pedestal_take_reference(struct cc__pedestal *pedestal);
/* Moves the contents of src into dst (same size and precision). */
void cc__pedestal_swap(struct cc__pedestal *dst, struct cc__pedestal *src);

/* ---- the bad-pixel mask (mask.c) ---- */

/* Marks CC__MASKED_BY_RMS the pixels of a READY pedestal whose rms is 0 or
 * above factor times the median rms of the pixels the user did not mask;
 * clears those marks first, and sets none for factor 0 or a pedestal
 * still training. */
int cc__mask_by_rms(struct cc__pedestal *pedestal, double factor,
                    char *message);
/* Pixels masked for any reason. */
uint64_t cc__mask_count(const struct cc__pedestal *pedestal);

/* ---- the gain map (gain.c) ---- */

/* docs/spec.md §9: the map g in force and its factors k = u / g. */
struct cc__gain {
    double *map; /* rows * cols; NULL: no map */
    cc_gain_unit unit;
    void *factor; /* k in the working precision; NULL with no map */
};

/* A copy of map (NULL: no map) and its factors in precision, into *gain;
 * CC_EINVAL naming the first pixel whose g is not finite, not above 0 or
 * gives a factor adc_mask does not fit (docs/spec.md §9.1), CC_ENOMEM;
 * on failure *gain holds no map. */
int cc__gain_make(struct cc__gain *gain, const double *map, size_t pixels,
                  uint32_t cols, cc_gain_unit unit, cc_precision precision,
                  uint16_t adc_mask, char *message);
void cc__gain_free(struct cc__gain *gain);

/* ---- pedestal files (pedestal_file.c) ---- */

/* CRC-32 (IEEE 802.3, as zlib computes it) of data, continued from crc
 * (0 to start). */
uint32_t cc__crc32(uint32_t crc, const void *data, size_t size);

int cc__pedestal_save(const struct cc__pedestal *pedestal, uint32_t rows,
                      uint32_t cols, uint16_t adc_mask, const char *path,
                      char *message);
/* Loads into *loaded, which must be initialised for the same size and
 * precision; on failure *loaded is not to be used. *with_mask says whether
 * the file held a mask (version 2 on): without, loaded->mask is all 0. */
int cc__pedestal_load(struct cc__pedestal *loaded, uint32_t rows,
                      uint32_t cols, uint16_t adc_mask,
                      uint32_t max_window, const char *path,
                      bool *with_mask, char *message);

/* ---- the per-pixel arithmetic, once per precision (pixel_cpu.c) ---- */

/* One thread's scratch for the row it is deciding now. */
struct cc__worker {
    void *total; /* per column of the current row: the window sum */
    void *wmax;  /* per column of the current row: the window max */
    uint8_t *emit;
};

/* What every worker needs to know of one frame. */
struct cc__frame_job {
    const uint16_t *frame;
    uint64_t number;
    uint32_t rows, cols, half_x, half_y;
    uint16_t adc_mask;
    uint32_t max_clusters;
    uint32_t window;
    double nsigma;
    double c3nsigma; /* sqrt(Nx * Ny) * nsigma in double, as docs/spec.md says */
    const uint16_t *baseline;
    const uint8_t *pixel_mask; /* docs/spec.md §7.1, 0 = good */
    bool pedestal_only;        /* docs/spec.md §2.7 */
    const void *s_in, *s2_in; /* state left by the previous frame */
    /* The frame's common mode per region (docs/spec.md §8), in the
     * working precision; NULL when the correction is off. */
    const void *common_mode;
    /* docs/spec.md §9: each pixel's gain factor k in the working
     * precision; NULL without a gain map. */
    const void *gain;
    struct cc__regions regions;
    /* docs/spec.md §4.8: the batch's analog sums, rows * cols, which the
     * frame's values are added to; NULL when off (and for pedestal
     * frames, which the caller gives none). */
    double *analog;
    void *s_out, *s2_out;     /* state this frame leaves */
    /* The frame's pedestal-subtracted values, (rows + 2 half_y) x (cols +
     * 2 half_x), and per row max(0, v over the Nx cells around), (rows +
     * 2 half_y) x cols: padded with zeros that are never written. */
    void *v, *hmax;
};

/* What the common-mode estimate of a frame needs (docs/spec.md §8.2). */
struct cc__common_mode_job {
    const struct cc__pedestal *pedestal; /* READY, with its reference */
    struct cc__regions regions;
    uint16_t adc_mask;
    double nsigma;
};

/* A thread's scratch for the common mode of a frame. */
struct cc__common_mode_scratch {
    void *reference;      /* w = y - r_ref, a real a pixel */
    uint16_t *bins;       /* w's bin in the centre's histogram */
    uint8_t *calm;        /* a byte a pixel */
    uint8_t *calm_across; /* calm with both row neighbours, a byte a pixel */
    int32_t *centre;      /* a region's median */
    uint32_t *histogram;  /* CC__CENTRE_COPIES * CC__CENTRE_BINS, zero
                             between regions */
};
enum { CC__CENTRE_COPIES = 4 };

#define CC__DECLARE_PRECISION(real)                                          \
    /* Writes rows [row0, row1) of job->v and job->hmax. */                  \
    void cc__subtract_rows_##real(const struct cc__frame_job *job,          \
                                  uint32_t row0, uint32_t row1);            \
    /* Decides rows [row0, row1) from job->v, the rows within half_y of     \
     * them subtracted, and appends their clusters to list as one frame. */ \
    int cc__decide_rows_##real(const struct cc__frame_job *job,             \
                               struct cc__worker *worker, uint32_t row0,    \
                               uint32_t row1, cc_clusters *list);           \
    void cc__pedestal_maps_##real(const struct cc__pedestal *pedestal,      \
                                  double *mean, double *rms);               \
    void cc__pedestal_store_##real(void *s, void *s2, size_t pixel,         \
                                   int64_t centred_sum, int64_t centred_sq); \
    void cc__pedestal_reference_##real(struct cc__pedestal *pedestal);      \
    /* One frame's common mode per region into values (real) and whether   \
     * each was estimated. */                                               \
    void cc__common_mode_frame_##real(                                      \
        const struct cc__common_mode_job *job, const uint16_t *frame,       \
        struct cc__common_mode_scratch *scratch, void *values,              \
        uint8_t *estimated);
CC__DECLARE_PRECISION(float)
CC__DECLARE_PRECISION(double)
#undef CC__DECLARE_PRECISION

/* ---- thread pool (thread_pool.c) ---- */

struct cc__pool;
int cc__pool_new(struct cc__pool **pool, unsigned threads);
void cc__pool_destroy(struct cc__pool *pool);
unsigned cc__pool_threads(const struct cc__pool *pool);
/* Runs task(context, t) on every thread t (0 is the caller) and returns
 * when all have returned. */
void cc__pool_run(struct cc__pool *pool, void (*task)(void *, unsigned),
                  void *context);
/* Waits within the running task until done(argument) holds, a condition
 * other threads of the task make true with sequentially consistent
 * stores followed by cc__pool_notify; false when the task was abandoned
 * instead. Spins first, then sleeps. */
bool cc__pool_wait_until(struct cc__pool *pool, bool (*done)(void *),
                         void *argument);
void cc__pool_notify(struct cc__pool *pool);
/* Ends every wait of the running task (a thread failed). */
void cc__pool_abandon(struct cc__pool *pool);

/* ---- the CPU backend (cpu_backend.c) ---- */

struct cc__cpu;
int cc__cpu_new(struct cc__cpu **cpu, const cc_config *config,
                unsigned threads, char *message);
void cc__cpu_destroy(struct cc__cpu *cpu);
unsigned cc__cpu_threads(const struct cc__cpu *cpu);
/* Processes a batch against pedestal; commits the new state only when the
 * whole batch succeeded. */
/* With common mode on, common_mode (n_frames * regions reals) and
 * estimated (as many bytes) receive each frame's figures. */
/* gain is the factors k of docs/spec.md §9 in the working precision, or
 * NULL without a gain map. */
int cc__cpu_process(struct cc__cpu *cpu, const cc_config *config,
                    struct cc__pedestal *pedestal,
                    const struct cc__frames *frames,
                    const uint64_t *numbers, uint64_t first_number,
                    size_t n_frames, cc_clusters *out, const void *gain,
                    void *common_mode, uint8_t *estimated, double *analog,
                    char *message);
/* For tests: when set, a thread calls it before each step of a block of
 * rows (step k decides frame k - 1 and subtracts frame k), so a test can
 * hold one block back and show that its neighbours wait. */
extern void (*cc__cpu_before_block)(unsigned block, size_t step);

/* The per-cluster formulas, shared with the CUDA backend. */
#ifndef CC__HD
#define CC__HD
#endif
#include "cluster_arithmetic.h"

struct cc_eta_calibration {
    cc_eta_calibration_info info;
    uint64_t counts[]; /* bins * bins, H[ix][iy] at ix * bins + iy */
};

/* An empty calibration whose info is checked; NULL without memory. */
cc_eta_calibration *cc__eta_calibration_alloc(
    const cc_eta_calibration_info *info);
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

/* Adds sums and frames taken with cc_finder_take_analog back into the
 * finder's analog image, which must be on (finder.c): a write that failed
 * loses nothing. */
void cc__finder_return_analog(cc_finder *finder, const double *sums,
                              uint64_t frames);

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

/* ---- counter-based random numbers (random.c) ---- */

/* The key of one (seed, stream, frame); cc__random_bits(key, i) is then
 * the i-th 64-bit number of that frame's stream. */
uint64_t cc__random_key(uint64_t seed, uint32_t stream, uint64_t frame);
uint64_t cc__random_bits(uint64_t key, uint64_t index);
/* Uniform in (0, 1) from 64 random bits. */
double cc__random_uniform(uint64_t bits);
/* Two independent standard normals from 64 random bits. */
void cc__random_normal_pair(uint64_t bits, double *first, double *second);
/* A Poisson draw of the given mean from the numbers of key. */
uint64_t cc__random_poisson(uint64_t key, double mean);

/* ---- ground truth (truth.c) ---- */

struct cc__truth_entry {
    uint64_t number;
    size_t first; /* index of the frame's first photon */
    uint32_t count;
};

struct cc_truth {
    struct cc__truth_entry *frames;
    size_t n_frames, frames_capacity;
    cc_photon *photons;
    size_t n_photons, photons_capacity;
};

void cc__truth_clear(cc_truth *truth);
int cc__truth_begin_frame(cc_truth *truth, uint64_t number);
int cc__truth_push(cc_truth *truth, const cc_photon *photon);

/* ---- outputs written under a temporary name (output_file.c) ---- */

struct cc__output {
    FILE *file;
    char *temporary; /* path.XXXXXX while open */
    char *path;
};

/* Creates path.XXXXXX for writing (mode 0644). */
int cc__output_open(struct cc__output *output, const char *path,
                    char *message);
/* Flushes, syncs and closes the file and renames it to its path; on
 * failure removes it. Either way the output is closed. */
int cc__output_commit(struct cc__output *output, char *message);
/* Closes and removes an output not committed; harmless when closed. */
void cc__output_abort(struct cc__output *output);
/* Writes size bytes or reports why not. */
int cc__output_write(struct cc__output *output, const void *data,
                     size_t size, char *message);

/* ---- NumPy .npy files (npy.c) ---- */

/* Writes size bytes of data as an .npy array of dtype descr (a Python
 * literal: "'<u4'" or a list of fields) and the given shape. */
int cc__npy_write(const char *path, const char *descr, int ndim,
                  const uint64_t *shape, const void *data, size_t size,
                  char *message);
/* Reads a C-ordered uint8 or bool array of shape (rows, cols). */
int cc__npy_read_bytes(const char *path, uint32_t rows, uint32_t cols,
                       uint8_t *data, char *message);
/* Reads a C-ordered little-endian float32 or float64 array of shape
 * (rows, cols) into doubles. */
int cc__npy_read_reals(const char *path, uint32_t rows, uint32_t cols,
                       double *data, char *message);

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
/* As cc__cpu_process, common_mode and estimated included. */
int cc__cuda_process(struct cc__cuda *cuda, const cc_config *config,
                     const struct cc__frames *frames, const uint64_t *numbers,
                     uint64_t first_number, size_t n_frames,
                     cc_clusters *out, void *common_mode,
                     uint8_t *estimated, char *message);

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
                         const struct cc__gain_binning *binning,
                         uint32_t rows, uint32_t cols, char *message);
/* Copies the GPU's spectra (one uint64 a bin of every pixel's) and their
 * photons and outside counts out and empties them. */
int cc__cuda_take_spectra(struct cc__cuda *cuda, uint64_t *counts,
                          uint64_t *photons, uint64_t *outside,
                          char *message);

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
/* The same for a finder: CC_ESTATE unless it runs on CUDA. */
int cc__finder_tune_cuda(cc_finder *finder,
                         const struct cc__cuda_tuning *tuning);

#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_INTERNAL_H */
