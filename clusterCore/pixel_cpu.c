/*
 * pixel_cpu.c: the per-pixel arithmetic and decisions of SPEC sections 2-4
 * on the CPU. This file is compiled twice, with CC_REAL defined as float
 * and as double; every function name ends in that type.
 *
 * Loops run along a row so that the compiler can vectorise them, and each
 * pixel's operations happen in SPEC's order: vector lanes compute exactly
 * what a scalar loop would, so the output does not depend on the ISA.
 */
#include <math.h>
#include <tgmath.h>

#include "internal.h"

#ifndef CC_REAL
#error "compile pixel_cpu.c with -DCC_REAL=float or -DCC_REAL=double"
#endif

typedef CC_REAL real;

#define CC__PASTE(name, type) name##_##type
#define CC__NAME(name, type) CC__PASTE(name, type)
#define PRECISION_FN(name) CC__NAME(name, CC_REAL)

void PRECISION_FN(cc__pedestal_store)(void *s, void *s2, size_t pixel,
                                      int64_t centred_sum,
                                      int64_t centred_sq)
{
    /* One correctly rounded conversion from the exact integers. */
    ((real *)s)[pixel] = (real)centred_sum;
    ((real *)s2)[pixel] = (real)centred_sq;
}

/* r = s/N and rms = sqrt(max(0, s2/N - r*r)), each operation rounded once. */
static inline real pixel_rms(real s, real s2, real n, real *r, real *s2_mean)
{
    *r = s / n;
    *s2_mean = s2 / n;
    real var = *s2_mean - *r * *r;
    var = var < 0 ? 0 : var;
    return sqrt(var);
}

void PRECISION_FN(cc__pedestal_maps)(const struct cc__pedestal *pedestal,
                                     double *mean, double *rms)
{
    const real *s = pedestal->s, *s2 = pedestal->s2;
    const real n = (real)pedestal->window;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        real r, s2_mean;
        real sigma = pixel_rms(s[p], s2[p], n, &r, &s2_mean);
        if (mean != NULL)
            mean[p] = (double)pedestal->baseline[p] + (double)r;
        if (rms != NULL)
            rms[p] = (double)sigma;
    }
}

/* Fills the worker's padded rows with v = (x - X0) - r for every frame row
 * its windows touch, and hmax with the running max(0, v) over Nx cells.
 * Padding cells are never written and stay 0, which is exactly SPEC's
 * "skipped in sums and maxima, 0 in the emitted cluster". */
static void subtract_pedestal(const struct cc__frame_job *job,
                              struct cc__worker *worker)
{
    const uint32_t cols = job->cols, nx = 2 * job->half_x + 1;
    const size_t width = cols + 2 * job->half_x;
    const uint32_t padded_rows = worker->row1 - worker->row0 + 2 * job->half_y;
    const real n = (real)job->window;
    const uint16_t mask = job->adc_mask;
    for (uint32_t j = 0; j < padded_rows; j++) {
        int64_t row = (int64_t)worker->row0 - job->half_y + j;
        if (row < 0 || row >= job->rows)
            continue;
        size_t first = (size_t)row * cols;
        const uint16_t *restrict x = job->frame + first;
        const uint16_t *restrict baseline = job->baseline + first;
        const real *restrict s = (const real *)job->s_in + first;
        real *restrict v = (real *)worker->v + j * width;
        real *restrict v_cols = v + job->half_x;
        for (uint32_t ix = 0; ix < cols; ix++)
            v_cols[ix] = (real)((int32_t)(x[ix] & mask) - (int32_t)baseline[ix]) -
                         s[ix] / n;
        real *restrict hmax = (real *)worker->hmax + (size_t)j * cols;
        for (uint32_t ix = 0; ix < cols; ix++)
            hmax[ix] = 0;
        for (uint32_t dx = 0; dx < nx; dx++)
            for (uint32_t ix = 0; ix < cols; ix++)
                hmax[ix] = v[ix + dx] > hmax[ix] ? v[ix + dx] : hmax[ix];
    }
}

/* Window sum (row by row from the top-left cell, as SPEC orders it) and
 * window max for every pixel of padded row i + half_y. */
static void window_sums(const struct cc__frame_job *job,
                        struct cc__worker *worker, uint32_t i)
{
    const uint32_t cols = job->cols;
    const uint32_t nx = 2 * job->half_x + 1, ny = 2 * job->half_y + 1;
    const size_t width = cols + 2 * job->half_x;
    real *restrict total = worker->total;
    real *restrict wmax = worker->wmax;
    for (uint32_t ix = 0; ix < cols; ix++)
        total[ix] = wmax[ix] = 0;
    for (uint32_t dy = 0; dy < ny; dy++) {
        const real *restrict v = (const real *)worker->v + (i + dy) * width;
        for (uint32_t dx = 0; dx < nx; dx++)
            for (uint32_t ix = 0; ix < cols; ix++)
                total[ix] += v[ix + dx];
        const real *restrict hmax =
            (const real *)worker->hmax + (size_t)(i + dy) * cols;
        for (uint32_t ix = 0; ix < cols; ix++)
            wmax[ix] = hmax[ix] > wmax[ix] ? hmax[ix] : wmax[ix];
    }
}

/* SPEC section 3 for one row: marks the cluster centres in worker->emit
 * and writes every pixel's next state (updated only when quiet). */
static void decide_row(const struct cc__frame_job *job,
                       struct cc__worker *worker, uint32_t iy)
{
    const uint32_t cols = job->cols;
    const size_t width = cols + 2 * job->half_x;
    const size_t first = (size_t)iy * cols;
    const real n = (real)job->window;
    const real nsigma = (real)job->nsigma;
    const real c3nsigma = (real)job->c3nsigma;
    const uint16_t mask = job->adc_mask;
    const uint16_t *restrict x = job->frame + first;
    const uint16_t *restrict baseline = job->baseline + first;
    const real *restrict s_in = (const real *)job->s_in + first;
    const real *restrict s2_in = (const real *)job->s2_in + first;
    real *restrict s_out = (real *)job->s_out + first;
    real *restrict s2_out = (real *)job->s2_out + first;
    const real *restrict v = (const real *)worker->v +
                             (iy - worker->row0 + job->half_y) * width +
                             job->half_x;
    const real *restrict total = worker->total;
    const real *restrict wmax = worker->wmax;
    uint8_t *restrict emit = worker->emit;
    for (uint32_t ix = 0; ix < cols; ix++) {
        real r, s2_mean;
        real rms = pixel_rms(s_in[ix], s2_in[ix], n, &r, &s2_mean);
        real thr = nsigma * rms;
        real thr3 = c3nsigma * rms;
        real value = v[ix], max = wmax[ix];
        /* Branch-free so the loop vectorises; each flag is 0 or 1. */
        int considered = !(value < -thr);        /* rule 1 */
        int test1 = max > thr;                    /* rule 2 */
        int test3 = (1 - test1) & (total[ix] > thr3); /* rule 3 */
        int quiet = considered & (1 - test1) & (1 - test3); /* rule 4 */
        int is_max = value == max;
        emit[ix] = (uint8_t)(considered & (test1 | test3) & is_max);
        /* y - r is value itself; y*y needs y alone. */
        real y = (real)((int32_t)(x[ix] & mask) - (int32_t)baseline[ix]);
        s_out[ix] = quiet ? s_in[ix] + value : s_in[ix];
        s2_out[ix] = quiet ? s2_in[ix] + (y * y - s2_mean) : s2_in[ix];
    }
}

/* Copies the marked centres of row iy into the worker's cluster list. */
static int emit_clusters(const struct cc__frame_job *job,
                         struct cc__worker *worker, uint32_t iy)
{
    const uint32_t nx = 2 * job->half_x + 1, ny = 2 * job->half_y + 1;
    const size_t width = job->cols + 2 * job->half_x;
    const uint32_t top = iy - worker->row0;
    for (uint32_t ix = 0; ix < job->cols; ix++) {
        if (!worker->emit[ix])
            continue;
        int32_t *values;
        int rc = cc__clusters_push(worker->clusters, job->max_clusters,
                                   (uint16_t)ix, (uint16_t)iy, &values);
        if (rc != CC_OK)
            return rc;
        if (values == NULL)
            continue; /* beyond the cap: counted by the push */
        for (uint32_t dy = 0; dy < ny; dy++) {
            const real *v = (const real *)worker->v + (top + dy) * width + ix;
            for (uint32_t dx = 0; dx < nx; dx++)
                *values++ = (int32_t)round(v[dx]);
        }
    }
    return CC_OK;
}

int PRECISION_FN(cc__process_rows)(const struct cc__frame_job *job,
                                   struct cc__worker *worker)
{
    subtract_pedestal(job, worker);
    int rc = cc__clusters_begin_frame(worker->clusters, job->number);
    for (uint32_t iy = worker->row0; iy < worker->row1 && rc == CC_OK; iy++) {
        window_sums(job, worker, iy - worker->row0);
        decide_row(job, worker, iy);
        rc = emit_clusters(job, worker, iy);
    }
    return rc;
}
