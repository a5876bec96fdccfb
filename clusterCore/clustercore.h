/*
 * clustercore.h: the public interface of libclustercore, a photon cluster
 * finder for charge-integrating pixel detectors such as PSI's MÖNCH.
 *
 * The finder subtracts a running per-pixel pedestal, keeps what clears
 * nsigma * rms, and cuts an Nx x Ny cluster around each local maximum. Its
 * arithmetic and decisions are specified in SPEC.md; every backend produces
 * the same bytes for the same frames and settings.
 *
 * Conventions: every public symbol starts with cc_. Functions that can fail
 * return an int that is CC_OK (0) or a negative CC_E* code; cc_strerror()
 * names it and cc_finder_last_error() gives the detail of a finder's most
 * recent failure. A call that fails leaves its object as it was. The
 * library keeps no global state and never prints, exits or aborts; separate
 * objects may be used from separate threads, one object from one thread at
 * a time.
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
#define CC_ERROR_MAP(X)                                                     \
    X(EINVAL, -1, "invalid argument")                                       \
    X(ENOMEM, -2, "out of memory")                                          \
    X(ESTATE, -3, "not allowed in the finder's current state")              \
    X(EIO, -4, "input/output error")                                        \
    X(EFORMAT, -5, "malformed or truncated file")                           \
    X(EMISMATCH, -6, "file does not match the finder's configuration")      \
    X(ENOTSUP, -7, "not supported by this build")                           \
    X(ETHREAD, -8, "could not start a worker thread")                       \
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
    CC_PRECISION_FLOAT = 0, /* default: SPEC's centred state makes float safe */
    CC_PRECISION_DOUBLE = 1
} cc_precision;

typedef enum cc_backend {
    CC_BACKEND_AUTO = 0, /* CUDA when built and a GPU answers, else the CPU,
                            also when the GPU fails later */
    CC_BACKEND_CPU = 1,
    CC_BACKEND_CUDA = 2
} cc_backend;

#define CC_CLUSTER_SIZE_MIN 3
#define CC_CLUSTER_SIZE_MAX 9
#define CC_FRAME_SIDE_MAX 65535u        /* cluster centres are uint16 */
#define CC_PEDESTAL_FRAMES_MAX 16777216u /* 2^24: the window is exact in float */
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
    uint32_t threads;         /* CPU threads, 1..256, 0 = one per online CPU; default 1 */
    uint32_t max_clusters;    /* per-frame storage cap, 0 = none (default);
                                 clusters beyond it are counted, never hidden */
    uint32_t streams;         /* CUDA: chunks of a batch in flight at once,
                                 1..8; default 2. The output does not
                                 depend on it. */
} cc_config;

/* Fills *config with the defaults above; rows and cols are left 0. */
CC_API void cc_config_init(cc_config *config);

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
 * 0 outside the frame. Clusters are ordered by row, then column. */
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

CC_API int cc_finder_get_config(const cc_finder *finder, cc_config *config);
/* Applies a new configuration. The pedestal survives changes of nsigma,
 * cluster size, max_clusters and threads; a change of rows, cols,
 * pedestal_frames, adc_mask, precision or backend resets it. */
CC_API int cc_finder_set_config(cc_finder *finder, const cc_config *config);

CC_API int cc_finder_get_stats(const cc_finder *finder, cc_finder_stats *stats);

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

/* Finds the clusters of n_frames consecutive frames and updates the
 * pedestal after each, as SPEC's frozen model says. frame_numbers (may be
 * NULL: then frames are numbered from frames_processed) labels the output.
 * On success *clusters holds exactly these frames; on failure it holds none
 * and the finder is as before the call. */
CC_API int cc_finder_process(cc_finder *finder, const uint16_t *frames,
                             const uint64_t *frame_numbers, size_t n_frames,
                             cc_clusters *clusters);

/* Per-pixel pedestal mean (X0 + s/N) and rms in ADU, rows * cols values
 * each (either pointer may be NULL). While training they are the mean and
 * rms of the frames summed so far (CC_ESTATE before the first). */
CC_API int cc_finder_pedestal_maps(cc_finder *finder, double *mean,
                                   double *rms);

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
    CC_ENERGY_SUM = 0,    /* sum of all values of the cluster */
    CC_ENERGY_SUM2X2 = 1  /* largest sum of the four 2x2 windows holding the centre */
} cc_energy;

/* Energy of one cluster of size_x * size_y values (0 for invalid sizes). */
CC_API int64_t cc_cluster_energy(cc_energy energy, uint32_t size_x,
                                 uint32_t size_y, const int32_t *values);

typedef struct cc_spectrum cc_spectrum;

/* A histogram of cluster energies: bins equal bins on [min, max); energies
 * below min and at or above max are counted as underflow and overflow.
 * Energy e falls in bin floor((e - min) / (max - min) * bins). */
CC_API int cc_spectrum_new(cc_spectrum **spectrum, cc_energy energy,
                           uint32_t bins, double min, double max);
CC_API void cc_spectrum_destroy(cc_spectrum *spectrum);
CC_API int cc_spectrum_add(cc_spectrum *spectrum, const cc_clusters *clusters);
CC_API void cc_spectrum_reset(cc_spectrum *spectrum);
CC_API uint32_t cc_spectrum_bins(const cc_spectrum *spectrum);
/* Low edge of bin i; i == bins gives the upper limit. */
CC_API double cc_spectrum_edge(const cc_spectrum *spectrum, uint32_t i);
CC_API const uint64_t *cc_spectrum_counts(const cc_spectrum *spectrum);
CC_API uint64_t cc_spectrum_underflow(const cc_spectrum *spectrum);
CC_API uint64_t cc_spectrum_overflow(const cc_spectrum *spectrum);

typedef struct cc_hitmap cc_hitmap;

/* Counts cluster centres per pixel (rows * cols uint32, row-major); a count
 * stops at UINT32_MAX rather than wrap. */
CC_API int cc_hitmap_new(cc_hitmap **hitmap, uint32_t rows, uint32_t cols);
CC_API void cc_hitmap_destroy(cc_hitmap *hitmap);
/* Fails with CC_EINVAL, adding nothing, if a centre lies outside the map. */
CC_API int cc_hitmap_add(cc_hitmap *hitmap, const cc_clusters *clusters);
CC_API void cc_hitmap_reset(cc_hitmap *hitmap);
CC_API const uint32_t *cc_hitmap_counts(const cc_hitmap *hitmap);

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

/* The library's version, "MAJOR.MINOR.PATCH". */
CC_API const char *cc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CLUSTERCORE_H */
