/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clustercore.h: the public interface of libclustercore, a photon cluster
 * finder for charge-integrating pixel detectors such as PSI's MÖNCH.
 *
 * The finder subtracts a running per-pixel pedestal, keeps what clears
 * nsigma * rms, and cuts an Nx x Ny cluster around each local maximum. Its
 * arithmetic and decisions are specified in docs/spec.md; every backend produces
 * the same bytes for the same frames and settings.
 *
 * Conventions: every public symbol starts with cc_. Functions that can fail
 * return an int that is CC_OK (0) or a negative CC_E* code; cc_strerror()
 * names it and cc_finder_last_error() gives the detail of a finder's most
 * recent failure. A call that fails leaves its object as it was. The
 * library keeps no global state and never prints, exits or aborts; separate
 * objects may be used from separate threads, one object from one thread at
 * a time.
 *
 * Longer than the project's 800 lines on purpose: one header is the whole
 * public interface, as a user includes it, in sections by object (finder,
 * clusters, spectrum and hit map, files, imaging, corrections, simulator).
 */
#ifndef CLUSTERCORE_H
#define CLUSTERCORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CLUSTERCORE_BUILDING) && defined(__GNUC__)
#define CC_API __attribute__((visibility("default")))
#else
#define CC_API
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* X(name, value, message): the one table behind the codes, cc_strerror()
 * and cc_error_name(). */
#define CC_ERROR_MAP(X)                                                        \
    X(EINVAL, -1, "invalid argument")                                          \
    X(ENOMEM, -2, "out of memory")                                             \
    X(ESTATE, -3, "not allowed in the finder's current state")                 \
    X(EIO, -4, "input/output error")                                           \
    X(EFORMAT, -5, "malformed or truncated file")                              \
    X(EMISMATCH, -6, "file does not match the finder's configuration")         \
    X(ENOTSUP, -7, "not supported by this build")                              \
    X(ETHREAD, -8, "could not start a worker thread")                          \
    X(EDEVICE, -9, "the GPU is not available or failed")

enum cc_error {
    CC_OK = 0,
#define CC_ERROR_ENUM(name, value, message) CC_##name = (value),
    CC_ERROR_MAP(CC_ERROR_ENUM)
#undef CC_ERROR_ENUM
};

/* A static description of a return code; never NULL. */
CC_API const char *cc_strerror(int code);
/* The symbolic name of a return code ("CC_EINVAL"); never NULL. */
CC_API const char *cc_error_name(int code);

/* Buffer size that holds any detailed error message, terminator included. */
#define CC_MESSAGE_SIZE 256

/* ------------------------------------------------------------------ */
/* Configuration                                                       */
/* ------------------------------------------------------------------ */

typedef enum cc_precision {
    /* default: the spec's centred state makes float safe */
    CC_PRECISION_FLOAT = 0,
    CC_PRECISION_DOUBLE = 1
} cc_precision;

typedef enum cc_backend {
    CC_BACKEND_AUTO = 0, /* CUDA when built and a GPU answers, else the CPU,
                            also when the GPU fails later */
    CC_BACKEND_CPU = 1,
    CC_BACKEND_CUDA = 2
} cc_backend;

/* Regions whose pixels share a per-frame offset, removed before the
 * decisions (docs/spec.md §8). Names as slsDetectorCalibration's. */
typedef enum cc_common_mode {
    CC_COMMON_MODE_NONE = 0, /* default: no correction */
    /* 25 columns x half the rows (MÖNCH03's ADCs) */
    CC_COMMON_MODE_SUPERCOLUMN = 1,
    CC_COMMON_MODE_ROW = 2, /* each row */
    CC_COMMON_MODE_HALF = 3 /* the top and the bottom half */
} cc_common_mode;

#define CC_CLUSTER_SIZE_MIN 3
#define CC_CLUSTER_SIZE_MAX 9
#define CC_FRAME_SIDE_MAX 65535u /* cluster centres are uint16 */
#define CC_PEDESTAL_FRAMES_MAX                                                 \
    16777216u /* 2^24: the window is exact in float */
#define CC_THREADS_MAX 256u
#define CC_STREAMS_MAX 8u

/* Callers allocate this struct and fill it with cc_config_init() first. */
typedef struct cc_config {
    uint32_t rows;            /* image height in pixels (no default) */
    uint32_t cols;            /* image width in pixels (no default) */
    uint32_t cluster_size_x;  /* Nx: odd, 3..9; default 3 */
    uint32_t cluster_size_y;  /* Ny: odd, 3..9; default 3 */
    double nsigma;            /* > 0; default 5 */
    uint32_t pedestal_frames; /* window N: 2..2^24; default 1000 */
    uint16_t adc_mask;        /* applied to every value first; default 0x3FFF */
    cc_precision precision;   /* default CC_PRECISION_FLOAT */
    cc_backend backend;       /* default CC_BACKEND_AUTO */
    /* CPU threads, 1..256, 0 = one per online CPU; default 1 */
    uint32_t threads;
    uint32_t max_clusters;      /* per-frame storage cap, 0 = none (default);
                                 clusters beyond it are counted, never hidden */
    uint32_t streams;           /* CUDA: chunks of a batch in flight at once,
                                 1..8; default 2. The output does not
                                 depend on it. */
    double mask_rms_factor;     /* k of the bad-pixel mask's rms rule: when
                                 the pedestal becomes ready, pixels whose
                                 rms is 0 or above k * median(rms) are
                                 masked; 0 = off (default), else >= 1 */
    cc_common_mode common_mode; /* default CC_COMMON_MODE_NONE
                                   (docs/spec.md §8) */
} cc_config;

/* Fills *config with the defaults above; rows and cols are left 0. */
CC_API void cc_config_init(cc_config *config);

/* "none", "supercolumn", "row", "half"; NULL for an unknown mode. */
CC_API const char *cc_common_mode_name(cc_common_mode mode);
/* The mode of a name above, CC_EINVAL for another (message says which
 * names there are). */
CC_API int cc_common_mode_parse(const char *name, cc_common_mode *mode,
                                char *message);
/* The number of common-mode regions of a configuration (0 for none). */
CC_API uint32_t cc_common_mode_regions(const cc_config *config);
/* Each pixel's region, rows * cols indices into cc_finder_common_mode's
 * regions (row-major), so that a region's figure can be drawn as a map;
 * CC_EINVAL for a configuration cc_config_check refuses or without
 * common mode. */
CC_API int cc_common_mode_region_map(const cc_config *config, uint32_t *region);

/* Checks a configuration. Returns CC_OK or CC_EINVAL; on failure writes a
 * sentence naming the offending field into message (CC_MESSAGE_SIZE bytes,
 * may be NULL). */
CC_API int cc_config_check(const cc_config *config, char *message);

/* ------------------------------------------------------------------ */
/* Cluster lists                                                       */
/* ------------------------------------------------------------------ */

/* The clusters of a batch of frames. Reuse one across calls: it keeps its
 * memory, so steady-state processing allocates nothing. */
typedef struct cc_clusters cc_clusters;

/* A read-only view of one frame's clusters, valid until the list changes.
 * Cluster i has centre (x[i], y[i]) = (column, row) and size_x * size_y
 * values at values + i * size_x * size_y, row-major from the top-left cell,
 * 0 outside the frame. A finder's clusters are ordered by row, then column
 * (a list made with cc_clusters_append_frame keeps the order given). */
typedef struct cc_frame_clusters {
    uint64_t frame_number;
    uint32_t count;   /* clusters stored */
    uint32_t dropped; /* clusters found beyond max_clusters, not stored */
    uint32_t size_x;
    uint32_t size_y;
    const uint16_t *x;
    const uint16_t *y;
    const int32_t *values;
} cc_frame_clusters;

CC_API int cc_clusters_new(cc_clusters **clusters);
CC_API void cc_clusters_destroy(cc_clusters *clusters);
/* Number of frames held. */
CC_API size_t cc_clusters_frame_count(const cc_clusters *clusters);
/* Total clusters stored over all frames held. */
CC_API size_t cc_clusters_total(const cc_clusters *clusters);
CC_API int cc_clusters_frame(const cc_clusters *clusters, size_t index,
                             cc_frame_clusters *frame);
/* Appends a copy of frame's clusters as the list's next frame: a list made
 * from clusters found elsewhere (another program's, a selection of a
 * finder's) for the analyses. The first frame of an empty list sets its
 * cluster size (odd, CC_CLUSTER_SIZE_MIN..MAX a side); a frame of another
 * size is refused, as are NULL arrays with clusters to copy (CC_EINVAL,
 * the list unchanged, message saying why). The order is kept as given. */
CC_API int cc_clusters_append_frame(cc_clusters *clusters,
                                    const cc_frame_clusters *frame,
                                    char *message);

/* How two lists of clusters of the same frames agree, cluster by cluster:
 * another finder's against ours (aare's), one backend's against the
 * other's. In each pair of frames clusters are matched by centre,
 * whatever their order, and their values compared; a cluster that only
 * one list holds is counted under the first cause that fits it:
 * - not_max: its centre holds less than another of its values (a finder
 *   of this library never emits one, docs/spec.md §3.3);
 * - at_threshold: its largest value, or its sum over the square root of
 *   its cells (the window test), lies between the two lists' thresholds
 *   of its centre, widened by half an ADU of rounding and
 *   pedestal_allowance ADU a cell: the two noise estimates decided apart;
 * - the rest: only - not_max - at_threshold, unexplained.
 * Index 0 counts list a, 1 list b. Start from a zeroed struct; each call
 * adds to it. */
typedef struct cc_agreement {
    uint64_t frames;
    uint64_t clusters[2];
    uint64_t same_place;        /* centres both lists hold */
    uint64_t same_values;       /* of those, every value equal */
    int64_t largest_difference; /* of one value, over same_place */
    uint64_t only[2];           /* clusters one list alone holds */
    uint64_t not_max[2];        /* of those, by cause */
    uint64_t at_threshold[2];
} cc_agreement;

/* Each list's per-pixel threshold, nsigma * rms (rows * cols values in
 * rows, e.g. from cc_finder_pedestal_maps), and how far apart, in ADU a
 * cell, the two finders' pedestals may stand. */
typedef struct cc_agreement_thresholds {
    uint32_t rows, cols;
    const double *threshold[2];
    double pedestal_allowance;
} cc_agreement_thresholds;

/* Adds one pair of frames to *agreement; thresholds may be NULL (then no
 * cluster is at a threshold). CC_EINVAL with a sentence in message when
 * the two cannot be compared (other cluster sizes, a centre outside the
 * thresholds' frame, two clusters at one centre), CC_ENOMEM; *agreement
 * is then unchanged. */
CC_API int cc_agreement_add_frame(cc_agreement *agreement,
                                  const cc_frame_clusters *a,
                                  const cc_frame_clusters *b,
                                  const cc_agreement_thresholds *thresholds,
                                  char *message);
/* The same for every frame of two lists, frame i of a with frame i of b
 * (CC_EINVAL when they hold other numbers of frames); all or nothing. */
CC_API int cc_clusters_agreement(cc_agreement *agreement, const cc_clusters *a,
                                 const cc_clusters *b,
                                 const cc_agreement_thresholds *thresholds,
                                 char *message);

/* ------------------------------------------------------------------ */
/* The finder                                                          */
/* ------------------------------------------------------------------ */

typedef struct cc_finder cc_finder;

typedef enum cc_pedestal_state {
    CC_PEDESTAL_TRAINING = 0, /* dark frames are being summed */
    CC_PEDESTAL_READY = 1     /* frames can be processed into clusters */
} cc_pedestal_state;

typedef struct cc_finder_stats {
    cc_pedestal_state state;
    uint64_t frames_trained;   /* dark frames summed since the last reset */
    uint32_t pedestal_window;  /* N in force (smaller after an early finish) */
    uint64_t frames_processed; /* frames turned into clusters since reset */
    uint64_t clusters;         /* clusters stored since reset */
    uint64_t clusters_dropped; /* clusters beyond max_clusters since reset */
    uint64_t frames_truncated; /* frames that had clusters dropped */
    uint64_t masked_pixels;    /* pixels the bad-pixel mask takes out */
    uint64_t frames_pedestal;  /* pedestal frames that updated the ready
                                  pedestal since reset (cc_finder_add_pedestal) */
} cc_finder_stats;

/* Creates a finder in the TRAINING state. On failure *finder is NULL and
 * message (CC_MESSAGE_SIZE bytes, may be NULL) says why. */
CC_API int cc_finder_new(cc_finder **finder, const cc_config *config,
                         char *message);
CC_API void cc_finder_destroy(cc_finder *finder);

/* The detail of the most recent failed call on this finder ("" if none). */
CC_API const char *cc_finder_last_error(const cc_finder *finder);

/* Which backend runs, and a sentence saying so and why (for instance why
 * CC_BACKEND_AUTO chose the CPU). */
CC_API cc_backend cc_finder_backend(const cc_finder *finder);
CC_API const char *cc_finder_backend_description(const cc_finder *finder);
/* The number of CPU threads that work on each frame. */
CC_API uint32_t cc_finder_threads(const cc_finder *finder);
/* The CPU threads a finder (or a simulator) starts are ordinary,
 * time-shared threads (SCHED_OTHER), whatever the thread that starts them;
 * the thread that calls a finder works on each frame too. This makes the
 * calling thread time-shared as well, as threads that keep CPUs busy
 * should be beside real-time ones: an EPICS IOC run as root gives its
 * threads real-time priorities, and a finder among them that cannot keep
 * up would keep the IOC's Channel Access and the processes beside it from
 * the CPUs. CC_OK, or CC_ENOTSUP where the system refuses. */
CC_API int cc_thread_share_cpus(void);

CC_API int cc_finder_get_config(const cc_finder *finder, cc_config *config);
/* Applies a new configuration. The pedestal survives changes of nsigma,
 * cluster size, max_clusters and threads; a change of rows, cols,
 * pedestal_frames, adc_mask, precision, backend or common_mode resets it. */
CC_API int cc_finder_set_config(cc_finder *finder, const cc_config *config);

CC_API int cc_finder_get_stats(const cc_finder *finder, cc_finder_stats *stats);

/* One common-mode region's figures since the last reset (docs/spec.md
 * §8): frames where it was estimated, and those where too few of its
 * pixels were quiet (its common mode was then 0), the mean and rms of the
 * estimates, and the last frame's value. */
typedef struct cc_common_mode_region {
    uint64_t frames_estimated;
    uint64_t frames_unestimated;
    double mean, rms; /* ADU, over the frames estimated */
    double last;      /* ADU, the last frame processed (0 if unestimated) */
} cc_common_mode_region;

/* Fills regions[0..n) (n = cc_common_mode_regions(config)); CC_EINVAL if
 * n is not that number. */
CC_API int cc_finder_common_mode(const cc_finder *finder,
                                 cc_common_mode_region *regions, uint32_t n);

/* Per-pixel gain (docs/spec.md §9): each pedestal-subtracted value and
 * its noise are multiplied by k = u / g before the decisions, so that
 * cluster values, energies, the spectrum and η are in the map's unit. */
typedef enum cc_gain_unit {
    CC_GAIN_RELATIVE = 0,   /* g near 1; values in ADU of a gain-1 pixel */
    CC_GAIN_ADU_PER_KEV = 1 /* g in ADU per keV; values in eV */
} cc_gain_unit;

/* "relative", "adu-per-kev"; NULL for an unknown unit. */
CC_API const char *cc_gain_unit_name(cc_gain_unit unit);
/* The unit of a name above, CC_EINVAL for another (message says which). */
CC_API int cc_gain_unit_parse(const char *name, cc_gain_unit *unit,
                              char *message);

/* Sets the gain map, rows * cols values of g in unit; NULL removes it.
 * A map with a value that is not finite, not above 0, or whose factor
 * the finder's adc_mask does not fit (docs/spec.md §9.1) is refused
 * whole with CC_EINVAL, naming the pixel; the map in force stays. The
 * map survives resets, pedestal loads and configuration changes that keep
 * rows and cols, and takes effect from the next batch. */
CC_API int cc_finder_set_gain(cc_finder *finder, const double *gain,
                              cc_gain_unit unit);
/* The same from a file: NumPy .npy (float32 or float64, shape (rows,
 * cols)) or slsDetectorCalibration's 32-bit float TIFF. */
CC_API int cc_finder_load_gain(cc_finder *finder, const char *path,
                               cc_gain_unit unit);
/* The map in force into gain (rows * cols, may be NULL) and its unit
 * (may be NULL); CC_ESTATE without one. */
CC_API int cc_finder_get_gain(const cc_finder *finder, double *gain,
                              cc_gain_unit *unit);

/* Reads a gain map file as cc_finder_load_gain does, into gain (rows *
 * cols doubles), without checking its values. Truncated, malformed or
 * mis-shaped files are refused (CC_EFORMAT, CC_EMISMATCH), a TIFF by a
 * build without libtiff with CC_ENOTSUP; message says why. */
CC_API int cc_gain_map_read(const char *path, uint32_t rows, uint32_t cols,
                            double *gain, char *message);
/* Writes a bad-pixel mask (rows * cols bytes of 0 and 1) as a NumPy .npy
 * file, uint8 of shape (rows, cols), as cc_finder_load_mask reads it. */
CC_API int cc_mask_write_npy(const char *path, uint32_t rows, uint32_t cols,
                             const uint8_t *mask, char *message);
/* Writes a gain map (rows * cols doubles) as a NumPy .npy file, float64
 * of shape (rows, cols). */
CC_API int cc_gain_map_write_npy(const char *path, uint32_t rows, uint32_t cols,
                                 const double *gain, char *message);

/* Back to TRAINING with empty sums; statistics restart from zero. */
CC_API void cc_finder_reset(cc_finder *finder);

/* Sums n_frames dark frames (rows * cols uint16 each, back to back) into
 * the pedestal. The pedestal becomes READY when pedestal_frames have been
 * summed; a batch that would go past that is refused whole (CC_EINVAL). */
CC_API int cc_finder_train(cc_finder *finder, const uint16_t *frames,
                           size_t n_frames);

/* Makes the pedestal READY with the frames summed so far (at least 2),
 * which then become the window N. */
CC_API int cc_finder_finish_training(cc_finder *finder);

/* Pedestal frames (docs/spec.md §2.7): dark frames given between data,
 * as PSI's MÖNCH frame modes Pedestal and NewPedestal mark them. While
 * the pedestal trains they are summed as by cc_finder_train, and a batch
 * may take it to READY; once it is READY, each frame updates every
 * unmasked pixel as a quiet pixel (its common mode subtracted when the
 * correction is on) and gives no clusters, enters no image, spectra or
 * counts, and counts in frames_pedestal. On failure the ready pedestal
 * is as before the call; frames already summed into a training one stay
 * summed. The GPU fall-back of cc_finder_process applies. */
CC_API int cc_finder_add_pedestal(cc_finder *finder, const uint16_t *frames,
                                  size_t n_frames);
/* The same for frames that are not back to back (frames[k]: frame k). */
CC_API int cc_finder_add_pedestal_list(cc_finder *finder,
                                       const uint16_t *const *frames,
                                       size_t n_frames);

/* Finds the clusters of n_frames consecutive frames and updates the
 * pedestal after each, as the spec's frozen model says. frame_numbers (may be
 * NULL: then frames are numbered from frames_processed) labels the output.
 * On success *clusters holds exactly these frames; on failure it holds none
 * and the finder is as before the call. One exception, under
 * CC_BACKEND_AUTO, when the GPU fails (docs/cuda.md): the finder moves to
 * the CPU, which does the batch again (success; cc_finder_backend() then
 * says CC_BACKEND_CPU and cc_finder_last_error() why) or, when the GPU
 * cannot hand the pedestal back, trains again (CC_EDEVICE). */
CC_API int cc_finder_process(cc_finder *finder, const uint16_t *frames,
                             const uint64_t *frame_numbers, size_t n_frames,
                             cc_clusters *clusters);
/* The same for frames that are not back to back: frames[k] points to
 * frame k's rows * cols pixels (the NDArrays queued in an areaDetector
 * plugin, for instance). The GPU gets one copy a frame, from page-locked
 * frames directly. */
CC_API int cc_finder_process_list(cc_finder *finder,
                                  const uint16_t *const *frames,
                                  const uint64_t *frame_numbers,
                                  size_t n_frames, cc_clusters *clusters);

/* The bad-pixel mask (docs/spec.md §7.1). A masked pixel is treated as a
 * cell outside the frame: left out of every window sum and maximum, never
 * a cluster centre, never updated, 0 in emitted clusters. It is the union
 * of the user's mask, set here, and the pixels of high or zero noise
 * found by config.mask_rms_factor. The mask is part of the pedestal: it
 * is saved with it, and loading a pedestal file of version 2 brings its
 * mask back.
 *
 * cc_finder_set_mask() takes rows * cols bytes, 1 = bad, 0 = good (any
 * other value is refused); NULL clears the user's mask. It survives a
 * reset and any configuration change that keeps rows and cols. */
CC_API int cc_finder_set_mask(cc_finder *finder, const uint8_t *mask);
/* The same from a NumPy .npy file of shape (rows, cols), uint8 or bool. */
CC_API int cc_finder_load_mask(cc_finder *finder, const char *path);
/* Writes the mask in force, rows * cols bytes of 0 or 1. */
CC_API int cc_finder_get_mask(cc_finder *finder, uint8_t *mask);

/* The analog image (docs/spec.md §4.8), PSI's detector mode Analog: from
 * now on every data frame processed adds each pixel's value, as the
 * decisions see it (pedestal and common mode subtracted, in the gain's
 * unit with a gain map, 0 where masked), truncated to a multiple of 2^-16,
 * to a per-pixel sum in double; pedestal frames add nothing. The sums are
 * exact below 2^37: on both backends, in any batches and takes, the same
 * bytes. on = 0 stops and drops what was summed. The frame size cannot
 * change while it is on (cc_finder_set_config: CC_ESTATE). */
CC_API int cc_finder_set_analog(cc_finder *finder, int on);
/* Adds the sums since the last take into sums (rows * cols doubles) and
 * the frames summed into *frames, and starts again from zero. CC_ESTATE
 * when the analog image is off. */
CC_API int cc_finder_take_analog(cc_finder *finder, double *sums,
                                 uint64_t *frames);
/* Takes the analog image as cc_finder_take_analog does and writes it as a
 * NumPy .npy file, little-endian float64 of shape (rows, cols), under a
 * temporary name renamed when complete; *frames (may be NULL) gets the
 * frames summed. On failure message (CC_MESSAGE_SIZE bytes, may be NULL)
 * says why, no file is left and the sums are kept. */
CC_API int cc_finder_write_analog(cc_finder *finder, const char *path,
                                  uint64_t *frames, char *message);

typedef struct cc_interpolator cc_interpolator; /* see Imaging below */

/* Imaging while finding (docs/spec.md §7.5-§7.7). From now on every
 * processed batch adds its photons to an image that the finder keeps,
 * placed with a copy of interpolator's map, window and image size: on the
 * GPU when CUDA runs, so that the host does no work per photon. NULL
 * stops. The image starts empty: take what was imaged before first. */
CC_API int cc_finder_set_interpolator(cc_finder *finder,
                                      const cc_interpolator *interpolator);
/* Adds the photons imaged since the last take (image and statistics) into
 * into, which must make an image of the same size (CC_EMISMATCH), and
 * starts the finder's image again from empty. */
CC_API int cc_finder_take_image(cc_finder *finder, cc_interpolator *into);

/* Per-pixel pedestal mean (X0 + s/N) and rms in ADU, rows * cols values
 * each (either pointer may be NULL). While training they are the mean and
 * rms of the frames summed so far (CC_ESTATE before the first). */
CC_API int cc_finder_pedestal_maps(cc_finder *finder, double *mean,
                                   double *rms);

/* The same maps as NumPy .npy files, little-endian float64 of shape
 * (rows, cols), either path may be NULL: the noise map a report shows.
 * Each is written under a temporary name and renamed when complete; on
 * failure message (CC_MESSAGE_SIZE bytes, may be NULL) says why and
 * neither file is left. */
CC_API int cc_finder_write_pedestal_maps(cc_finder *finder,
                                         const char *mean_path,
                                         const char *rms_path, char *message);

/* Saves the pedestal (either state) to path, written under a temporary
 * name and renamed when complete. */
CC_API int cc_finder_save_pedestal(cc_finder *finder, const char *path);
/* Loads a pedestal saved by a finder of the same rows, cols, precision and
 * adc_mask; later output is then identical to the saving finder's. The
 * statistics restart from zero. */
CC_API int cc_finder_load_pedestal(cc_finder *finder, const char *path);

/* ------------------------------------------------------------------ */
/* Energies, spectrum and hit map                                      */
/* ------------------------------------------------------------------ */

typedef enum cc_energy {
    CC_ENERGY_SUM = 0, /* sum of all values of the cluster */
    /* largest sum of the four 2x2 windows holding the centre */
    CC_ENERGY_SUM2X2 = 1
} cc_energy;

/* Energy of one cluster of size_x * size_y values (0 for invalid sizes). */
CC_API int64_t cc_cluster_energy(cc_energy energy, uint32_t size_x,
                                 uint32_t size_y, const int32_t *values);

/* An energy window [low, high) ADU on one of the energies: the clusters
 * inside it are the photons that the counting image and the imaging take
 * (docs/spec.md §7.2). */
typedef struct cc_energy_window {
    cc_energy energy;
    double low, high;
} cc_energy_window;

/* CC_OK, or CC_EINVAL with a sentence in message (CC_MESSAGE_SIZE bytes,
 * may be NULL) when the window is empty or not finite, or its energy is
 * none of the above. */
CC_API int cc_energy_window_check(const cc_energy_window *window,
                                  char *message);
/* 1 when the energy of the cluster (size_x * size_y values) lies in the
 * window, else 0 (also for a window that fails the check). */
CC_API int cc_energy_window_contains(const cc_energy_window *window,
                                     uint32_t size_x, uint32_t size_y,
                                     const int32_t *values);

typedef struct cc_spectrum cc_spectrum;

/* A histogram of cluster energies: bins equal bins on [min, max); energies
 * below min and at or above max are counted as underflow and overflow.
 * Energy e falls in bin floor((e - min) / (max - min) * bins). */
CC_API int cc_spectrum_new(cc_spectrum **spectrum, cc_energy energy,
                           uint32_t bins, double min, double max);
CC_API void cc_spectrum_destroy(cc_spectrum *spectrum);
CC_API int cc_spectrum_add(cc_spectrum *spectrum, const cc_clusters *clusters);
/* The same for one frame's clusters (cc_clusters_frame): frame by frame,
 * while they are in cache for whatever else reads them. */
CC_API int cc_spectrum_add_frame(cc_spectrum *spectrum,
                                 const cc_frame_clusters *frame);
CC_API void cc_spectrum_reset(cc_spectrum *spectrum);
CC_API uint32_t cc_spectrum_bins(const cc_spectrum *spectrum);
/* Low edge of bin i; i == bins gives the upper limit. */
CC_API double cc_spectrum_edge(const cc_spectrum *spectrum, uint32_t i);
CC_API const uint64_t *cc_spectrum_counts(const cc_spectrum *spectrum);
CC_API uint64_t cc_spectrum_underflow(const cc_spectrum *spectrum);
CC_API uint64_t cc_spectrum_overflow(const cc_spectrum *spectrum);

/* A Gaussian line on a linear background fitted to a spectrum's bins
 * (docs/spec.md §4.7): where the line is (the gain) and how wide (the
 * energy resolution). */
typedef struct cc_peak {
    double position;         /* the Gaussian's mean, ADU */
    double sigma;            /* its standard deviation, ADU */
    double fwhm;             /* 2 sqrt(2 ln 2) sigma */
    double resolution;       /* fwhm / position */
    double counts;           /* the Gaussian's area: clusters in the line */
    double background;       /* the background at the position, per bin */
    double background_slope; /* per bin per ADU */
    double chi2_per_dof;     /* Neyman's chi^2 over bins - 5 */
    double low, high;        /* the range fitted, ADU */
    uint32_t bins;           /* the bins fitted: those with centres in it */
} cc_peak;

/* Fits the bins whose centres lie in [low, high), or, when low >= high,
 * in the mean +- 2 sigma of the highest bin, sigma taken from its width at
 * half height. CC_ESTATE, *peak untouched, when fewer than 6 bins are in
 * range, there is no line above the background, or the fit does not
 * converge to a line inside the range. */
CC_API int cc_spectrum_fit_peak(const cc_spectrum *spectrum, double low,
                                double high, cc_peak *peak);
/* The same fit on any histogram of equal bins: counts and centres, bins
 * (at least 2) of each, centres increasing (a sum of spectra, for one). */
CC_API int cc_fit_peak(const double *counts, const double *centres,
                       uint32_t bins, double low, double high, cc_peak *peak);

typedef struct cc_hitmap cc_hitmap;

/* Counts cluster centres per pixel (rows * cols uint32, row-major); a count
 * stops at UINT32_MAX rather than wrap. */
CC_API int cc_hitmap_new(cc_hitmap **hitmap, uint32_t rows, uint32_t cols);
CC_API void cc_hitmap_destroy(cc_hitmap *hitmap);
/* Fails with CC_EINVAL, adding nothing, if a centre lies outside the map. */
CC_API int cc_hitmap_add(cc_hitmap *hitmap, const cc_clusters *clusters);
CC_API int cc_hitmap_add_frame(cc_hitmap *hitmap,
                               const cc_frame_clusters *frame);
/* Zeroes the counts and the clusters left outside the window. */
CC_API void cc_hitmap_reset(cc_hitmap *hitmap);
CC_API const uint32_t *cc_hitmap_counts(const cc_hitmap *hitmap);
/* From now on the map counts only the clusters inside window: the
 * counting image. NULL counts every cluster again. CC_EINVAL for a window
 * that fails cc_energy_window_check, and nothing changes. */
CC_API int cc_hitmap_set_window(cc_hitmap *hitmap,
                                const cc_energy_window *window);
/* The clusters left out of the counts for lying outside the window,
 * since the last reset: nothing is dropped silently. */
CC_API uint64_t cc_hitmap_outside(const cc_hitmap *hitmap);

/* A frame's clusters into a spectrum and a hit map (either may be NULL)
 * in one pass: each cluster's energy is worked out once, for the
 * spectrum and for the hit map's window when it takes the same energy.
 * The counts are those of cc_spectrum_add_frame and cc_hitmap_add_frame;
 * CC_EINVAL, adding nothing to either, where either would fail. */
CC_API int cc_tally_frame(cc_spectrum *spectrum, cc_hitmap *hitmap,
                          const cc_frame_clusters *frame);

/* The finder counts the clusters of every frame it processes from now on
 * into a spectrum and a hit map of its own, binned as these are (copies:
 * their counts are not read; either may be NULL, not both): on the GPU
 * where it runs, while the clusters are there, so that a program that
 * publishes them does not read every cluster again. NULL, NULL stops.
 * The frame size must be the finder's (CC_EMISMATCH). */
CC_API int cc_finder_set_tally(cc_finder *finder, const cc_spectrum *spectrum,
                               const cc_hitmap *hitmap);
/* Adds what the finder counted since the last take into spectrum and
 * hitmap, which must be binned as those set (CC_EMISMATCH; NULL where
 * none was set), and empties the finder's: the counts are those of
 * cc_tally_frame on the same frames. */
CC_API int cc_finder_take_tally(cc_finder *finder, cc_spectrum *spectrum,
                                cc_hitmap *hitmap);

/* ------------------------------------------------------------------ */
/* Gain calibration from a flat field (docs/spec.md §9.3)              */
/* ------------------------------------------------------------------ */

/* Which clusters enter a pixel's spectrum, and with what. */
typedef enum cc_gain_events {
    /* Clusters whose centre holds at least `fraction` of their sum: their
     * sum, for the centre pixel. Little of another pixel's gain is in it. */
    CC_GAIN_EVENTS_SINGLE = 0,
    /* Every cluster: its sum, for the centre pixel. Its neighbours' gains
     * are in it too; a map found so and then applied converges when
     * calibrated again (iterate). */
    CC_GAIN_EVENTS_SUM = 1
} cc_gain_events;

/* Per-pixel spectra of a flat field's clusters, bins equal bins on [low,
 * high) in the clusters' unit: each pixel's line, fitted, gives its gain. */
typedef struct cc_gain_calibration cc_gain_calibration;

typedef struct cc_gain_calibration_config {
    uint32_t rows, cols;
    uint32_t bins;         /* a pixel's spectrum: 6..1000; default 40 */
    double low, high;      /* its range around the line (no default) */
    cc_gain_events events; /* default CC_GAIN_EVENTS_SINGLE */
    double fraction;       /* single events' least centre share, (0.5, 1];
                            default 0.8 */
    uint32_t min_photons;  /* fewer in a pixel's range: flagged; default 50 */
} cc_gain_calibration_config;

/* What became of a pixel (the quality map). */
typedef enum cc_gain_quality {
    CC_GAIN_GOOD = 0,
    CC_GAIN_FEW_PHOTONS = 1, /* fewer than min_photons in range */
    CC_GAIN_FIT_FAILED = 2   /* no line fitted inside the range */
} cc_gain_quality;

typedef struct cc_gain_calibration_result {
    uint64_t photons; /* entered in the spectra */
    uint64_t outside; /* single or sum events outside [low, high) */
    uint64_t pixels_good, pixels_few, pixels_failed;
    double reference; /* the median line of the good pixels, in the
                               clusters' unit: the gain-1 pixel's */
    double spread;    /* rms of the good pixels' gains over their
                               mean */
} cc_gain_calibration_result;

/* Fills *config with the defaults above; rows, cols, low and high 0. */
CC_API void cc_gain_calibration_config_init(cc_gain_calibration_config *config);
CC_API int cc_gain_calibration_new(cc_gain_calibration **calibration,
                                   const cc_gain_calibration_config *config,
                                   char *message);
CC_API void cc_gain_calibration_destroy(cc_gain_calibration *calibration);
/* Enters the clusters of a list (CC_EINVAL, entering nothing, for a centre
 * outside the frame). */
CC_API int cc_gain_calibration_add(cc_gain_calibration *calibration,
                                   const cc_clusters *clusters);
/* The events entered so far and those left out of [low, high), as a
 * solve would report them: a running count for a live display. */
CC_API void cc_gain_calibration_entered(const cc_gain_calibration *calibration,
                                        uint64_t *photons, uint64_t *outside);
/* Pixel p's spectrum: bins counts. */
CC_API const uint32_t *
cc_gain_calibration_counts(const cc_gain_calibration *calibration,
                           size_t pixel);
/* Fits every pixel's line and writes its gain and quality (rows * cols
 * each; quality may be NULL). The clusters were found under prior (rows *
 * cols gains in prior_unit; NULL: none), which the new map multiplies. In
 * CC_GAIN_RELATIVE the gains are over the median good pixel's line; in
 * CC_GAIN_ADU_PER_KEV over line_energy_kev, the flat field's line. A
 * flagged pixel gets the gain of a typical pixel (1, or the median). */
CC_API int cc_gain_calibration_solve(const cc_gain_calibration *calibration,
                                     const double *prior,
                                     cc_gain_unit prior_unit, cc_gain_unit unit,
                                     double line_energy_kev, double *gain,
                                     uint8_t *quality,
                                     cc_gain_calibration_result *result,
                                     char *message);

/* A flat field's per-pixel spectra while finding (docs/spec.md §9.3).
 * From now on every processed batch enters its clusters into spectra the
 * finder keeps, binned as calibration's configuration says (its counts
 * are not copied): on the GPU when CUDA runs, so that the host does no
 * work per cluster. NULL stops. */
CC_API int
cc_finder_set_gain_calibration(cc_finder *finder,
                               const cc_gain_calibration *calibration);
/* Adds the spectra entered since the last take into into, which must have
 * the same configuration (CC_EMISMATCH), and empties the finder's. */
CC_API int cc_finder_take_gain_calibration(cc_finder *finder,
                                           cc_gain_calibration *into);

/* ------------------------------------------------------------------ */
/* Imaging: η, where in its pixel a photon landed (docs/spec.md §7)    */
/* ------------------------------------------------------------------ */

typedef enum cc_eta_function {
    /* The best 2x2 window holding the centre (as for sum2x2): the shares
     * of the centre's row and column in it, on [0, 1] (aare's eta2). */
    CC_ETA2 = 0,
    /* The same window: its right column's and bottom row's shares of its
     * sum, on [0, 1]. */
    CC_ETA2_FULL = 1,
    /* The central 3x3: (right column - left column) and (bottom row - top
     * row) over its sum, on [-0.5, 0.5]. */
    CC_ETA3 = 2
} cc_eta_function;

/* The η of one cluster. A cluster whose denominator is not positive, or
 * whose η falls outside its function's range, is uninterpolable. */
typedef struct cc_eta_value {
    double x, y;   /* ηx, ηy */
    int8_t dx, dy; /* -1 when the 2x2 window lies left of (above) the
                      centre, else 0; 0 for eta3 */
    uint8_t valid; /* 1, or 0 when uninterpolable (x and y are then 0) */
} cc_eta_value;

/* The range [*low, *high] of a function's η; CC_EINVAL for no function. */
CC_API int cc_eta_range(cc_eta_function function, double *low, double *high);
/* The η of every cluster of a list, frame after frame, into eta, which
 * holds cc_clusters_total(clusters) values. Each sum is an exact integer
 * and each quotient one IEEE-754 division, so every backend and program
 * gets the same doubles. CC_EINVAL for no function or NULL pointers. */
CC_API int cc_eta(cc_eta_function function, const cc_clusters *clusters,
                  cc_eta_value *eta);
/* The same for one frame's clusters (frame->count values). */
CC_API int cc_eta_frame(cc_eta_function function,
                        const cc_frame_clusters *frame, cc_eta_value *eta);

/* The flat-field calibration (docs/spec.md §7.4): a joint histogram
 * H[ix][iy] of (ηx, ηy), bins x bins uint64 on the function's range, of
 * the photons (the clusters in the energy window, or all) of a uniformly
 * illuminated run. Bin ix covers [low + ix w, low + (ix + 1) w), w = (high
 * - low) / bins, and η = high falls in the last bin. */
typedef struct cc_eta_calibration cc_eta_calibration;

#define CC_ETA_BINS_MAX 1000u

typedef struct cc_eta_calibration_info {
    cc_eta_function function;
    uint32_t bins;
    double low, high; /* the function's range */
    int windowed;     /* 1 when window applies, else 0 */
    cc_energy_window window;
    uint64_t photons;        /* entered in H: the sum of its counts */
    uint64_t outside;        /* clusters outside the window, left out */
    uint64_t uninterpolable; /* photons without an η, left out */
} cc_eta_calibration_info;

/* window may be NULL (every cluster is a photon); it is copied. */
CC_API int cc_eta_calibration_new(cc_eta_calibration **calibration,
                                  cc_eta_function function, uint32_t bins,
                                  const cc_energy_window *window,
                                  char *message);
CC_API void cc_eta_calibration_destroy(cc_eta_calibration *calibration);
CC_API int cc_eta_calibration_add(cc_eta_calibration *calibration,
                                  const cc_clusters *clusters);
CC_API int cc_eta_calibration_add_frame(cc_eta_calibration *calibration,
                                        const cc_frame_clusters *frame);
CC_API void cc_eta_calibration_reset(cc_eta_calibration *calibration);
/* Adds from's histogram and counts into into, as if into had seen from's
 * clusters too: how parts taken on several threads become one. They must
 * share function, bins and window (CC_EMISMATCH, nothing added). */
CC_API int cc_eta_calibration_merge(cc_eta_calibration *into,
                                    const cc_eta_calibration *from);
CC_API int cc_eta_calibration_info_get(const cc_eta_calibration *calibration,
                                       cc_eta_calibration_info *info);
/* H, bins * bins counts, H[ix][iy] at ix * bins + iy. */
CC_API const uint64_t *
cc_eta_calibration_counts(const cc_eta_calibration *calibration);
/* Saves the calibration: its function, bins, range, window, counts and H
 * (docs/spec.md §5.7), under a temporary name renamed when complete. */
CC_API int cc_eta_calibration_save(const cc_eta_calibration *calibration,
                                   const char *path, char *message);
/* A new calibration from a file that cc_eta_calibration_save wrote.
 * Truncated, overlong, corrupt or inconsistent files are refused
 * (CC_EFORMAT) with the reason. */
CC_API int cc_eta_calibration_read(cc_eta_calibration **calibration,
                                   const char *path, char *message);

/* Photon positions and the interpolated image (docs/spec.md §7.5-§7.7),
 * from the transport map of a calibration, for frames of rows x cols
 * pixels and S x S sub-pixels a pixel. */
typedef struct cc_interpolator cc_interpolator;

#define CC_SUBPIXELS_MAX 25u

/* What became of one cluster. */
typedef enum cc_position_status {
    CC_POSITION_INTERPOLATED = 0,   /* placed by its η */
    CC_POSITION_UNINTERPOLABLE = 1, /* a photon without η: at its centre
                                       pixel's middle */
    CC_POSITION_OUTSIDE_WINDOW = 2  /* not a photon: x and y are 0 */
} cc_position_status;

typedef struct cc_position {
    double x, y; /* frame coordinates: pixel (i, j) spans [i, i+1) x [j, j+1) */
    uint8_t status; /* cc_position_status */
} cc_position;

typedef struct cc_image_stats {
    uint64_t photons;        /* imaged: interpolated + uninterpolable */
    uint64_t uninterpolable; /* of them, imaged at their centre's middle */
    uint64_t clipped;        /* of them, placed past the image's edge and
                                counted in its edge bin */
    uint64_t outside;        /* clusters outside the window, not imaged */
} cc_image_stats;

/* The map is computed from the calibration, which may change or go
 * afterwards; window (NULL: every cluster) is copied. subpixels is 1..25. */
CC_API int cc_interpolator_new(cc_interpolator **interpolator,
                               const cc_eta_calibration *calibration,
                               const cc_energy_window *window, uint32_t rows,
                               uint32_t cols, uint32_t subpixels,
                               char *message);
CC_API void cc_interpolator_destroy(cc_interpolator *interpolator);
/* The position of every cluster of one frame, frame->count values. */
CC_API int cc_interpolator_positions(const cc_interpolator *interpolator,
                                     const cc_frame_clusters *frame,
                                     cc_position *positions);
/* Adds the photons of a list (or of one frame) to the image. Fails with
 * CC_EINVAL, adding nothing, if a centre lies outside the frame. */
CC_API int cc_interpolator_add(cc_interpolator *interpolator,
                               const cc_clusters *clusters);
CC_API int cc_interpolator_add_frame(cc_interpolator *interpolator,
                                     const cc_frame_clusters *frame);
/* Zeroes the image and its statistics. */
CC_API void cc_interpolator_reset(cc_interpolator *interpolator);
/* The image: (rows * S) x (cols * S) uint32, row-major; a count stops at
 * UINT32_MAX rather than wrap. */
CC_API const uint32_t *
cc_interpolator_image(const cc_interpolator *interpolator);
CC_API int cc_interpolator_stats(const cc_interpolator *interpolator,
                                 cc_image_stats *stats);
/* The flatness of the image folded into one pixel (docs/spec.md §7.8):
 * its S x S sub-pixels summed over all pixels, then chi^2 = sum (n - m)^2
 * / m against their mean m, divided by the S * S - 1 degrees of freedom:
 * about 1 for a flat field perfectly interpolated. CC_ESTATE for S = 1 or
 * an empty image. */
CC_API int cc_interpolator_flatness(const cc_interpolator *interpolator,
                                    double *chi2_per_dof);
/* The image as a NumPy .npy file, uint32 of shape (rows * S, cols * S). */
CC_API int cc_interpolator_write_npy(const cc_interpolator *interpolator,
                                     const char *path, char *message);

/* ------------------------------------------------------------------ */
/* Page-locked host memory                                             */
/* ------------------------------------------------------------------ */

/* The CUDA backend copies frames that sit in page-locked memory straight
 * to the GPU; other frames first pass through a staging copy on the host,
 * which costs more than the GPU's work. Allocate frame buffers with
 * cc_host_alloc, or lock buffers you already have (a detector driver's
 * pool) once with cc_host_register. Without a usable GPU cc_host_alloc
 * returns ordinary memory; cc_host_free frees either kind. */
CC_API void *cc_host_alloc(size_t size);
CC_API void cc_host_free(void *memory);
/* CC_ENOTSUP without the CUDA backend, CC_EDEVICE without a usable GPU. */
CC_API int cc_host_register(void *memory, size_t size);
CC_API int cc_host_unregister(void *memory);
/* 1 when memory is page-locked (from cc_host_alloc with a usable GPU, or
 * registered), else 0: ordinary memory, or a build without CUDA. */
CC_API int cc_host_is_locked(const void *memory);

/* ------------------------------------------------------------------ */
/* Simulator                                                           */
/* ------------------------------------------------------------------ */

/* MÖNCH-like frames with ground truth. Every random number is a hash of
 * (seed, stream, frame, index), so frame k of a seed is the same whatever
 * thread, order or batch makes it, and frames can be made in parallel. */

#define CC_SIM_LINES_MAX 8

typedef enum cc_beam_profile {
    CC_BEAM_UNIFORM = 0, /* photons uniform over the sensor (default) */
    /* a Gaussian spot; photons that miss the sensor are lost */
    CC_BEAM_SPOT = 1
} cc_beam_profile;

typedef struct cc_emission_line {
    double energy_kev;
    double weight; /* relative intensity; the weights need not sum to 1 */
} cc_emission_line;

/* A mask in front of the sensor, for imaging at sub-pixel scale. Photons
 * are drawn as without it, then a photon whose true position (x, y) falls
 * on an opaque part is absorbed: it leaves no charge and is not in the
 * truth. The photons that pass are therefore exactly the photons of the
 * same seed without the mask that fall on open parts, where they were;
 * flux counts the photons before the mask. frac(v) is v - floor(v). */
typedef enum cc_sim_pattern {
    CC_PATTERN_NONE = 0,  /* flat field (default) */
    CC_PATTERN_SLITS = 1, /* vertical slits: open where
                             frac(x / pattern_period) < 0.5 */
    CC_PATTERN_GRID = 2,  /* square holes: open where
                             frac(x / pattern_period) < 0.5 and
                             frac(y / pattern_period) < 0.5 */
    CC_PATTERN_STAR = 3   /* Siemens star of pattern_spokes open sectors
                             around (spot_x, spot_y): open where
                             frac(spokes * angle / (2 pi)) < 0.5, angle
                             = atan2(y - spot_y, x - spot_x) */
} cc_sim_pattern;

/* Planted defects, at pixels drawn from the seed (distinct, uniform over
 * the frame, hot and dead apart). A dead pixel reads 0 in every frame. A
 * hot pixel is the worst case a bad-pixel mask is for, not a physical
 * model: in dark frames it reads its dark level plus Gaussian noise of
 * hot_noise rms (then rounded and clipped to 0..adc_max like any pixel),
 * so a pedestal trained on them finds an rms far above the median; in
 * every frame of cc_simulator_frames it reads adc_max, whatever its
 * photons, so its value has nothing to do with its dark statistics. With
 * the default dark level and hot_noise, adc_max is about 5.9 hot_noise
 * above the dark level, so a finder at nsigma 5 without a mask makes a
 * cluster there in every frame; a larger hot_noise or nsigma may not.
 * Photons' charge on a defective pixel is lost, like everything else the
 * pixel would read. */
typedef enum cc_sim_pixel {
    CC_PIXEL_GOOD = 0,
    CC_PIXEL_HOT = 1,
    CC_PIXEL_DEAD = 2
} cc_sim_pixel;

/* Callers allocate this struct and fill it with cc_simulator_config_init()
 * first. */
typedef struct cc_simulator_config {
    uint32_t rows, cols;    /* default 400 x 400 */
    uint64_t seed;          /* default 1 */
    double pedestal;        /* mean dark level, ADU; default 4655 */
    double pedestal_spread; /* pixel-to-pixel rms of the dark level; 100 */
    double noise_min;       /* each pixel's noise rms is uniform in */
    double noise_max;       /*   [noise_min, noise_max] ADU; 15, 50 */
    double flux;            /* mean photons per frame, Poisson; 2330 */
    cc_beam_profile beam;   /* default CC_BEAM_UNIFORM */
    double spot_x, spot_y;  /* spot (and star) centre (column, row), px;
                                 200, 200: the default frame's centre */
    double spot_sigma;      /* spot rms, px; 60 */
    uint32_t n_lines; /* default 2: Cu Ka 8.048 keV 87 %, Kb 8.905 keV 13 % */
    cc_emission_line lines[CC_SIM_LINES_MAX];
    double gain;             /* ADU per keV; default 100 (Cu Ka = 804.8 ADU) */
    double cloud_sigma;      /* charge cloud rms, px, 0.05..2; default 0.25 */
    uint16_t adc_max;        /* ADC full scale; default 16383 (14 bits) */
    uint32_t threads;        /* frames made in parallel, 1..256, 0 = one
                                 per online CPU; default 1 */
    cc_sim_pattern pattern;  /* default CC_PATTERN_NONE */
    double pattern_period;   /* slits and grid, px, in (0, the frame's
                                 larger side]; default 1 */
    uint32_t pattern_spokes; /* star's open sectors, 1..1000; default 36 */
    uint32_t hot_pixels;     /* defects, at most rows * cols together; */
    uint32_t dead_pixels;    /*   default 0 each */
    double hot_noise;        /* hot pixels' dark-frame rms, ADU, >= 0;
                                 default 2000 */
    cc_common_mode common_mode; /* regions sharing a per-frame offset, */
    double common_mode_rms;     /*   Gaussian of this rms, ADU (dark and
                                     data frames alike, drawn apart);
                                     default none, 0 */
    double gain_spread;         /* each pixel's gain over `gain` is 1 +
                                   gain_spread * N(0, 1), drawn once from
                                   the seed and applied to photons' charge
                                   (not to noise or common mode); 0..0.2,
                                   default 0 */
} cc_simulator_config;

/* One photon of the ground truth: where it hit (column, row in pixels,
 * the pixel (i, j) spans [i, i+1) x [j, j+1)) and its energy, from line
 * `line` of the configuration. */
typedef struct cc_photon {
    double x, y;
    double energy_kev;
    uint32_t line;
} cc_photon;

/* The photons of a batch of frames, reused across calls like cc_clusters. */
typedef struct cc_truth cc_truth;

typedef struct cc_frame_truth {
    uint64_t frame_number;
    uint32_t count;
    const cc_photon *photons;
} cc_frame_truth;

CC_API int cc_truth_new(cc_truth **truth);
CC_API void cc_truth_destroy(cc_truth *truth);
CC_API size_t cc_truth_frame_count(const cc_truth *truth);
CC_API int cc_truth_frame(const cc_truth *truth, size_t index,
                          cc_frame_truth *frame);

typedef struct cc_simulator cc_simulator;

CC_API void cc_simulator_config_init(cc_simulator_config *config);
/* Checks a configuration like cc_config_check(). */
CC_API int cc_simulator_config_check(const cc_simulator_config *config,
                                     char *message);
CC_API int cc_simulator_new(cc_simulator **simulator,
                            const cc_simulator_config *config, char *message);
CC_API void cc_simulator_destroy(cc_simulator *simulator);

/* Writes n_frames dark frames first, first + 1, ... (rows * cols uint16
 * each, back to back). Dark frame k and data frame k have independent
 * noise. */
CC_API int cc_simulator_dark_frames(cc_simulator *simulator, uint64_t first,
                                    size_t n_frames, uint16_t *frames);
/* Writes n_frames frames with photons and, when truth is not NULL, fills
 * it with exactly these frames' photons. */
CC_API int cc_simulator_frames(cc_simulator *simulator, uint64_t first,
                               size_t n_frames, uint16_t *frames,
                               cc_truth *truth);
/* The model's per-pixel dark level and noise rms in ADU (either may be
 * NULL), rows * cols values each: those of the dark frames, so 0 and 0 for
 * a dead pixel and hot_noise for a hot pixel's noise. */
CC_API int cc_simulator_maps(const cc_simulator *simulator, double *pedestal,
                             double *noise);
/* Each pixel's relative gain (1 + gain_spread * N(0, 1); all 1 without
 * a spread), rows * cols values: the truth for a gain map, in
 * CC_GAIN_RELATIVE, or times `gain` in CC_GAIN_ADU_PER_KEV. */
CC_API int cc_simulator_gain_map(const cc_simulator *simulator, double *gain);
/* The planted defects, rows * cols bytes of cc_sim_pixel (0 good, 1 hot,
 * 2 dead), the ground truth for a bad-pixel mask. */
CC_API int cc_simulator_defects(const cc_simulator *simulator, uint8_t *map);

/* ------------------------------------------------------------------ */
/* Comparison with the ground truth                                    */
/* ------------------------------------------------------------------ */

/* Scores clusters against the photons that made them. A photon is
 * isolated when no other photon lies within max(Nx, Ny) / 2 + 3 pixels
 * (Chebyshev distance between pixels) and its pixel is at least
 * max(Nx, Ny) / 2 + 1 pixels from every edge; it is found when a cluster
 * centre lies within distance 1 of its pixel. A cluster is false when no
 * photon lies within distance 2 of its centre. The energy ratio is the
 * cluster sum over the photon's energy times the gain, for isolated
 * photons of line 0 (Cu Ka by default), taking the largest sum when
 * several clusters found the photon. */
typedef struct cc_truth_score cc_truth_score;

typedef struct cc_score {
    uint64_t frames;
    uint64_t photons;
    uint64_t isolated_photons;
    uint64_t isolated_found;
    double efficiency; /* isolated_found / isolated_photons */
    uint64_t clusters;
    uint64_t false_clusters;
    double false_rate;    /* false clusters per pixel per frame */
    uint64_t line0_found; /* isolated line-0 photons in the ratio */
    double line0_ratio;   /* median cluster sum / (energy * gain) */
    double line0_spread;  /* 1.4826 x the median absolute deviation of
                                that ratio: its spread as a Gaussian's
                                sigma, robust to the odd outlier */
    /* With an interpolator: the found isolated photons inside its window,
     * and the rms error per axis of their positions and of their centre
     * pixels' middles against the truth (docs/spec.md §7.8). */
    uint64_t positioned;
    double position_rms, centre_rms;
} cc_score;

CC_API int cc_truth_score_new(cc_truth_score **score, uint32_t rows,
                              uint32_t cols, double gain);
CC_API void cc_truth_score_destroy(cc_truth_score *score);
/* Adds the frames of clusters, which must be the frames of truth, with the
 * same numbers in the same order (CC_EINVAL otherwise, adding nothing). */
CC_API int cc_truth_score_add(cc_truth_score *score,
                              const cc_clusters *clusters,
                              const cc_truth *truth);
CC_API int cc_truth_score_get(const cc_truth_score *score, cc_score *result);
/* From now on scores the positions that interpolator gives the cluster
 * that found each isolated photon; it must outlive the scoring. NULL
 * stops. */
CC_API int cc_truth_score_set_interpolator(cc_truth_score *score,
                                           const cc_interpolator *interpolator);

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/* Every function below that fails writes a sentence into message
 * (CC_MESSAGE_SIZE bytes, may be NULL). Every output is written under a
 * temporary name and renamed when complete, so a failed run never leaves a
 * file that looks complete. */

/* MÖNCH raw runs as the slsDetector receiver writes them: a master
 * NAME_master_I.json and data files NAME_dD_fF_I.raw of frames, each a
 * 112-byte header and rows * cols little-endian uint16. A run taken with
 * two UDP interfaces has two files a frame, d0 with its top half and d1
 * with its bottom half (the rows of interface 1 follow those of 0). */
#define CC_RAW_HEADER_SIZE 112
#define CC_RAW_PACKET_BYTES 6400 /* MÖNCH data bytes per UDP packet */
#define CC_RAW_INTERFACES_MAX 2

/* How a run's data files hold a frame's pixels (docs/spec.md §5.2). The
 * master file decides it; the reader delivers every layout as row-major
 * frames. The ADC-order layouts are MÖNCH frames of 400 x 400: 5000 analog
 * samples of the 32 ADCs, sample after sample, which a pixel map puts in
 * rows. */
typedef enum cc_raw_layout {
    CC_RAW_LAYOUT_ROWS = 0,         /* "Moench": today's receivers, in rows */
    CC_RAW_LAYOUT_MOENCH03_OLD = 1, /* "Moench" with 5000 analog samples:
                                       MÖNCH03's ADC order (aare's
                                       Moench03_old) */
    CC_RAW_LAYOUT_CTB_MOENCH03 = 2, /* "ChipTestBoard" with MÖNCH03 on the
                                       board (aare's Moench03Transform) */
    CC_RAW_LAYOUT_CTB_MOENCH04 = 3  /* "ChipTestBoard" with MÖNCH04 on the
                                       board (Moench04AnalogTransform) */
} cc_raw_layout;

/* "rows", "moench03-old", "ctb-moench03", "ctb-moench04"; NULL for a value
 * that is not a layout. */
CC_API const char *cc_raw_layout_name(cc_raw_layout layout);

/* The chip a chip test board run was taken with, which its master file
 * does not say: the caller says it (cc_raw_reader_open_chip). */
typedef enum cc_raw_chip {
    CC_RAW_CHIP_UNSAID = 0, /* a chip test board run is refused */
    CC_RAW_CHIP_MOENCH03 = 1,
    CC_RAW_CHIP_MOENCH04 = 2
} cc_raw_chip;

typedef struct cc_raw_info {
    double version;               /* "Version": 7.x or 8.x */
    uint32_t rows, cols;          /* the whole frame: "Pixels" y times the
                                     interfaces, and x */
    uint32_t interfaces;          /* "Number of UDP Interfaces": 1 or 2 */
    uint64_t image_bytes;         /* "Image Size in bytes" (v8: "Image Size"):
                                     one interface's part of a frame */
    uint64_t frames;              /* "Frames in File": frames in the run */
    uint64_t total_frames;        /* "Total Frames": frames asked for */
    uint32_t max_frames_per_file; /* "Max Frames Per File" */
    uint32_t files;               /* data files the frames are split into */
    uint32_t frame_padding;       /* "Frame Padding" */
    uint32_t packets_per_frame;   /* a complete part's packetNumber */
    cc_raw_layout layout;         /* how the data files hold the pixels */
} cc_raw_info;

typedef struct cc_raw_stats {
    uint64_t frames_read;     /* complete frames delivered */
    uint64_t frames_padded;   /* frames with missing packets, skipped */
    uint64_t files_missing;   /* data files that could not be opened */
    uint64_t files_truncated; /* data files that end inside a frame */
    /* Of the padded frames, those whose part from interface i was
     * padded (a frame padded on both counts on both). */
    uint64_t padded_by_interface[CC_RAW_INTERFACES_MAX];
} cc_raw_stats;

typedef struct cc_raw_reader cc_raw_reader;

/* Opens a run by its master file and checks that it is a MÖNCH run that
 * this reader understands (one module, one or two UDP interfaces, a
 * layout of cc_raw_layout); what it does not understand is refused with
 * CC_ENOTSUP and a sentence naming it. A chip test board run is refused:
 * open it with cc_raw_reader_open_chip. */
CC_API int cc_raw_reader_open(cc_raw_reader **reader, const char *master_path,
                              char *message);
/* The same, for a run taken with chip on a chip test board (CC_RAW_CHIP_UNSAID:
 * as cc_raw_reader_open). A "Moench" run is of MÖNCH03: naming MÖNCH04
 * for one is refused (CC_EINVAL). */
CC_API int cc_raw_reader_open_chip(cc_raw_reader **reader,
                                   const char *master_path, cc_raw_chip chip,
                                   char *message);
CC_API void cc_raw_reader_close(cc_raw_reader *reader);
CC_API int cc_raw_reader_info(const cc_raw_reader *reader, cc_raw_info *info);
CC_API int cc_raw_reader_stats(const cc_raw_reader *reader,
                               cc_raw_stats *stats);
/* Reads up to max_frames complete frames (rows * cols uint16 each, in rows
 * whatever the run's layout) and
 * their numbers from the headers (frame_numbers may be NULL); *n_read is 0
 * at the end of the run. A missing or truncated data file or a padded
 * frame does not fail the call: the reader skips what is incomplete, keeps
 * every complete frame, and queues a notice saying what it skipped. */
CC_API int cc_raw_reader_read(cc_raw_reader *reader, uint16_t *frames,
                              uint64_t *frame_numbers, size_t max_frames,
                              size_t *n_read, char *message);
/* The next queued notice (a sentence), or NULL; valid until the next call
 * on the reader. */
CC_API const char *cc_raw_reader_notice(cc_raw_reader *reader);

typedef struct cc_raw_writer cc_raw_writer;

/* Starts a run whose master file will be master_path, which must end in
 * _master_I.json; data files go beside it, max_frames_per_file frames each.
 * Nothing appears under the final names until cc_raw_writer_finish(). */
CC_API int cc_raw_writer_new(cc_raw_writer **writer, const char *master_path,
                             uint32_t rows, uint32_t cols,
                             uint32_t max_frames_per_file, char *message);
/* The same, in layout: frames are given in rows and written in the
 * layout's order, under its master file (an ADC-order layout takes frames
 * of 400 x 400 only). */
CC_API int cc_raw_writer_new_layout(cc_raw_writer **writer,
                                    const char *master_path, uint32_t rows,
                                    uint32_t cols, uint32_t max_frames_per_file,
                                    cc_raw_layout layout, char *message);
CC_API int cc_raw_writer_write(cc_raw_writer *writer, const uint16_t *frames,
                               const uint64_t *frame_numbers, size_t n_frames,
                               char *message);
/* Writes the master file (version 7.2 keys) and renames every file. */
CC_API int cc_raw_writer_finish(cc_raw_writer *writer, char *message);
/* Frees the writer; a run not finished is removed. */
CC_API void cc_raw_writer_destroy(cc_raw_writer *writer);

/* Cluster files, byte-compatible with aare's ClusterFile: per frame
 * int32 frame number, uint32 count, then count records of uint16 x,
 * uint16 y, int32 values[Nx * Ny], little-endian and packed. */
typedef struct cc_clust_writer cc_clust_writer;

CC_API int cc_clust_writer_new(cc_clust_writer **writer, const char *path,
                               char *message);
/* Appends every frame of clusters; frame numbers must fit an int32 and all
 * frames of a file must have one cluster size. */
CC_API int cc_clust_writer_write(cc_clust_writer *writer,
                                 const cc_clusters *clusters, char *message);
CC_API int cc_clust_writer_finish(cc_clust_writer *writer, char *message);
/* Frees the writer; a file not finished is removed. */
CC_API void cc_clust_writer_destroy(cc_clust_writer *writer);

typedef struct cc_clust_reader cc_clust_reader;

/* The file does not record the cluster size; the caller says it. */
CC_API int cc_clust_reader_open(cc_clust_reader **reader, const char *path,
                                uint32_t size_x, uint32_t size_y,
                                char *message);
CC_API void cc_clust_reader_close(cc_clust_reader *reader);
/* Replaces the contents of clusters with up to max_frames next frames;
 * none at the end of the file. A file that ends inside a frame fails with
 * CC_EFORMAT. */
CC_API int cc_clust_reader_read(cc_clust_reader *reader, size_t max_frames,
                                cc_clusters *clusters, char *message);

/* The spectrum as CSV: a header line "low,high,count", one line per bin,
 * then the underflow as "-inf,MIN,N" and the overflow as "MAX,inf,N";
 * with a peak (may be NULL), a last comment line "# peak: position=...
 * sigma=... fwhm=... resolution=... counts=... background=...
 * background_slope=... chi2_per_dof=... low=... high=... bins=...". */
CC_API int cc_spectrum_write_csv(const cc_spectrum *spectrum,
                                 const cc_peak *peak, const char *path,
                                 char *message);
/* The hit map as a NumPy .npy file: little-endian uint32, shape (rows, cols). */
CC_API int cc_hitmap_write_npy(const cc_hitmap *hitmap, const char *path,
                               char *message);

/* Photon lists as a NumPy .npy file of records (frame <u8, x <f8, y <f8,
 * energy <f8), one a photon, written as they come: the count in the
 * header is filled in by cc_photon_writer_finish. x and y are frame
 * coordinates (docs/spec.md §7.6), energy the cluster's in ADU. */
typedef struct cc_photon_record {
    uint64_t frame;
    double x, y;
    double energy;
} cc_photon_record;

typedef struct cc_photon_writer cc_photon_writer;

CC_API int cc_photon_writer_new(cc_photon_writer **writer, const char *path,
                                char *message);
CC_API int cc_photon_writer_write(cc_photon_writer *writer,
                                  const cc_photon_record *records, size_t n,
                                  char *message);
CC_API int cc_photon_writer_finish(cc_photon_writer *writer, char *message);
/* Frees the writer; a file not finished is removed. */
CC_API void cc_photon_writer_destroy(cc_photon_writer *writer);

/* The library's version, "MAJOR.MINOR.PATCH". */
CC_API const char *cc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_H */
