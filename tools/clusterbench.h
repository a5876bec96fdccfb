/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterbench.h: what clusterbench's files share: its options, the
 * frames it works on, one configuration to measure, and the measuring
 * functions (clusterbench_runs.c: the finder's runs and the copy
 * ceiling; clusterbench_accumulators.c: what a plugin does with the
 * clusters). clusterbench.c reads the options and walks the
 * configurations.
 */
#ifndef CLUSTERBENCH_H
#define CLUSTERBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "clustercore.h"
#include "finder/finder.h" /* cc__finder_tune_cuda, for --cuda-shape */

enum input {
    INPUT_PINNED,
    INPUT_PAGEABLE,
    INPUT_REGISTERED,
    INPUT_LIST,
    INPUTS
};
extern const char *const input_names[INPUTS];

struct options {
    uint32_t rows, cols;
    uint32_t frames;  /* distinct frames cycled through */
    uint32_t photons; /* per frame */
    uint32_t repeats; /* timed runs per figure; the median is reported */
    double seconds;   /* length of one timed run */
    cc_precision precision;
    char sizes[64], threads[64], streams[64], batches[64];
    char side_by_side[64]; /* CPU: finders of one thread run at once */
    char backends[64], inputs[64];
    char copies[64];              /* how the CUDA backend issues copies */
    struct cc__cuda_tuning shape; /* zeros: the backend's own choice */
    bool accumulators;            /* also time the spectrum and the hit map */
    bool image;                   /* the finder images as it finds (--image) */
    bool flat_field;              /* ... and keeps a flat field's spectra */
    cc_common_mode common_mode;   /* --common-mode; none by default */
    double gain_spread;           /* --gain-spread; 0: no gain map */
};

/* Frames in the kinds of memory a caller may hand over. */
struct workload {
    uint16_t *dark;
    uint32_t dark_frames;
    uint16_t *frames[INPUTS]; /* by enum input; NULL until asked for */
    /* INPUT_LIST: each frame in its own page-locked buffer, as in an
     * areaDetector NDArray pool; frames[INPUT_LIST] is list[0]. */
    uint16_t **list;
    uint32_t list_frames;
    double *gain; /* the simulated gains, with --gain-spread; else NULL */
};

/* Indexed by CC__COPIES_* (0: the backend's choice). */
enum { COPIES_NAMES = 3 };
extern const char *const copies_names[COPIES_NAMES];

/* One configuration to measure. */
struct run {
    cc_backend backend;
    enum input input;
    uint32_t copies; /* CC__COPIES_*, 0: the backend's choice */
    uint32_t nx, ny, threads, streams, batch;
};

/* Seconds since an arbitrary start, for intervals. */
double now(void);
/* qsort's comparison of doubles, ascending. */
int compare_doubles(const void *a, const void *b);

/* clusterbench_runs.c */
/* Measures one configuration; prints a table row and returns the median
 * frames per second (negative on failure), and the clusters a frame in
 * *per_frame. */
double bench_one(const struct options *options, struct workload *work,
                 const struct run *run, double *per_frame);
/* --side-by-side: n finders of one thread each, each on all the frames,
 * started together: what n CPUs do with nothing shared between them, the
 * machine's own ceiling for n threads. Prints a table row and returns
 * the median of the summed frames per second (negative on failure). */
double bench_side_by_side(const struct options *options, struct workload *work,
                          const struct run *run, unsigned n);
/* With CUDA: the copy ceiling of the largest batch, from pinned frames:
 * in_bytes a frame to the GPU and out_bytes back, at once (either may be
 * 0); a table row named what. */
double measure_ceiling(const struct options *options, struct workload *work,
                       uint32_t batch, size_t in_bytes, size_t out_bytes,
                       const char *what);

/* clusterbench_accumulators.c */
/* The interpolator of --image and --accumulators: eta2 on a map of the
 * given clusters' photons in the Cu Ka window of sum2x2, 5 x 5
 * sub-pixels, as a beamline would image. */
int make_interpolator(const struct options *options,
                      const cc_clusters *clusters,
                      cc_interpolator **interpolator);
/* --accumulators: the spectrum, hit map and image of the clusters the CPU
 * backend finds in the workload's frames; one table row each. */
int bench_accumulators(const struct options *options, struct workload *work,
                       uint32_t nx, uint32_t ny);

#endif
