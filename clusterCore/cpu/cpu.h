/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cpu.h: the CPU backend (clusterCore/cpu/): the per-pixel arithmetic and
 * decisions of a frame's rows, once per precision (pixel_cpu.c), and the
 * batches run on a pool of threads (cpu_backend.c).
 */
#ifndef CLUSTERCORE_CPU_H
#define CLUSTERCORE_CPU_H

#include "../pedestal/pedestal.h"

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
    /* sqrt(Nx * Ny) * nsigma in double, as docs/spec.md says */
    double c3nsigma;
    const uint16_t *baseline;
    const uint8_t *pixel_mask; /* docs/spec.md §7.1, 0 = good */
    bool pedestal_only;        /* docs/spec.md §2.7 */
    const void *s_in, *s2_in;  /* state left by the previous frame */
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
    void *s_out, *s2_out; /* state this frame leaves */
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

#define CC__DECLARE_PRECISION(real)                                            \
    /* Writes rows [row0, row1) of job->v and job->hmax. */                    \
    void cc__subtract_rows_##real(const struct cc__frame_job *job,             \
                                  uint32_t row0, uint32_t row1);               \
    /* Decides rows [row0, row1) from job->v, the rows within half_y of     \
     * them subtracted, and appends their clusters to list as one frame. */  \
    int cc__decide_rows_##real(const struct cc__frame_job *job,                \
                               struct cc__worker *worker, uint32_t row0,       \
                               uint32_t row1, cc_clusters *list);              \
    /* One frame's common mode per region into values (real) and whether   \
     * each was estimated. */   \
    void cc__common_mode_frame_##real(const struct cc__common_mode_job *job,   \
                                      const uint16_t *frame,                   \
                                      struct cc__common_mode_scratch *scratch, \
                                      void *values, uint8_t *estimated);
CC__DECLARE_PRECISION(float)
CC__DECLARE_PRECISION(double)
#undef CC__DECLARE_PRECISION

/* ---- the CPU backend (cpu_backend.c) ---- */

struct cc__cpu;
int cc__cpu_new(struct cc__cpu **cpu, const cc_config *config, unsigned threads,
                char *message);
void cc__cpu_destroy(struct cc__cpu *cpu);
unsigned cc__cpu_threads(const struct cc__cpu *cpu);
/* Processes a batch against pedestal; commits the new state only when the
 * whole batch succeeded. gain is the factors k of docs/spec.md §9 in the
 * working precision, or NULL without a gain map; analog, when not NULL,
 * receives the batch's analog sums (docs/spec.md §4.8). */
int cc__cpu_process(struct cc__cpu *cpu, const struct cc__batch_request *batch,
                    struct cc__pedestal *pedestal, const void *gain,
                    double *analog, char *message);
/* For tests: when set, a thread calls it before each step of a block of
 * rows (step k decides frame k - 1 and subtracts frame k), so a test can
 * hold one block back and show that its neighbours wait. */
extern void (*cc__cpu_before_block)(unsigned block, size_t step);

#endif /* CLUSTERCORE_CPU_H */
