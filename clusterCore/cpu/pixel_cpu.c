/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pixel_cpu.c: the per-pixel arithmetic and decisions of docs/spec.md §2-§4
 * on the CPU. This file is compiled twice, with CC_REAL defined as float
 * and as double; every function name ends in that type.
 *
 * Loops run along a row so that the compiler can vectorise them, and each
 * pixel's operations happen in the spec's order: vector lanes compute exactly
 * what a scalar loop would, so the output does not depend on the ISA.
 */
#include <math.h>
#include <string.h>
#include <tgmath.h>

#include "cpu.h"

#ifndef CC_REAL
#error "compile pixel_cpu.c with -DCC_REAL=float or -DCC_REAL=double"
#endif

typedef CC_REAL real;
#define CC__HD
#include "../pedestal/pixel_arithmetic.h"

#define CC__PASTE(name, type) name##_##type
#define CC__NAME(name, type) CC__PASTE(name, type)
#define PRECISION_FN(name) CC__NAME(name, CC_REAL)

/* The row loops are inlined into cc__subtract_rows and cc__decide_rows so
 * that each of their instruction-set clones (below) vectorises them at its
 * own width. */
#if defined(__GNUC__)
#define ROW_LOOP static inline __attribute__((always_inline))
#else
#define ROW_LOOP static inline
#endif

/* w = y - r_ref of every pixel of the frame (docs/spec.md §8.2), and
 * the bin of its whole-ADU value in the centre's histogram. */
static void reference_values(const struct cc__common_mode_job *job,
                             const uint16_t *restrict frame, real *restrict w,
                             uint16_t *restrict bins)
{
    const struct cc__pedestal *pedestal = job->pedestal;
    const uint16_t *restrict baseline = pedestal->baseline;
    const real *restrict offset = pedestal->reference_offset;
    const uint16_t mask = job->adc_mask;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        w[p] = pixel_reference_value(frame[p], mask, baseline[p], offset[p]);
        bins[p] = (uint16_t)cc__centre_bin(pixel_round(w[p]));
    }
}

/* The lowest bin whose running count over the copies reaches half of
 * total, from bin `from` on. */
static uint32_t median_bin(const uint32_t *histograms, uint32_t from,
                           uint64_t total)
{
    uint64_t below = 0, half = (total + 1) / 2;
    for (uint32_t bin = from; bin < CC__CENTRE_BINS; bin++) {
        for (uint32_t copy = 0; copy < CC__CENTRE_COPIES; copy++)
            below += histograms[copy * CC__CENTRE_BINS + bin];
        if (below >= half)
            return bin;
    }
    return CC__CENTRE_BINS - 1; /* not reached: the counts sum to total */
}

/* The median, in whole ADU, of the region's unmasked values against the
 * reference (bins: their bins): where the quiet pixels are looked for; 0
 * without unmasked pixels. Counted in CC__CENTRE_COPIES histograms, a
 * pixel's column choosing one, so that row neighbours of the same value
 * do not wait on each other's count. They are zero on entry; a second
 * pass over the pixels clears the bins they touched, which costs less
 * than clearing every bin. */
static int32_t region_centre(const struct cc__common_mode_job *job,
                             const uint16_t *bins, uint32_t region,
                             uint32_t *histograms)
{
    const struct cc__regions *regions = &job->regions;
    const uint8_t *masked = job->pedestal->mask;
    uint32_t row0, row1, col0, col1;
    cc__region_rectangle(regions, region, &row0, &row1, &col0, &col1);
    uint64_t unmasked = 0;
    uint32_t lowest = CC__CENTRE_BINS - 1;
    int32_t centre = 0;
    for (int pass = 0; pass < 2; pass++) { /* count, then clear */
        for (uint32_t row = row0; row < row1; row++) {
            const uint16_t *line = bins + (size_t)row * regions->cols;
            const uint8_t *line_masked = masked + (size_t)row * regions->cols;
            for (uint32_t col = col0; col < col1; col++) {
                if (line_masked[col])
                    continue;
                uint32_t bin = line[col];
                uint32_t *count =
                    &histograms[col % CC__CENTRE_COPIES * CC__CENTRE_BINS +
                                bin];
                *count = pass == 0 ? *count + 1 : 0;
                lowest = bin < lowest ? bin : lowest;
                unmasked++;
            }
        }
        if (pass == 0 && unmasked > 0)
            centre = (int32_t)median_bin(histograms, lowest, unmasked) -
                     CC__CENTRE_RANGE;
    }
    return centre;
}

/* Whether each pixel is calm (docs/spec.md §8.2), then calm_across:
 * calm with the cells beside it in its row. A pixel's 3 x 3 is calm when
 * calm_across holds on its row and the rows above and below. */
static void calm_pixels(const struct cc__common_mode_job *job,
                        const real *restrict w, const int32_t *centre,
                        uint8_t *restrict calm, uint8_t *restrict across)
{
    const struct cc__pedestal *pedestal = job->pedestal;
    const struct cc__regions *regions = &job->regions;
    const real *restrict rms = pedestal->reference_rms;
    const uint8_t *restrict masked = pedestal->mask;
    const real nsigma = (real)job->nsigma;
    const size_t cols = regions->cols;
    for (uint32_t row = 0; row < regions->rows; row++) {
        size_t first = (size_t)row * cols;
        for (uint32_t x0 = 0, end; x0 < cols; x0 = end) {
            end = cc__region_run_end(regions, x0);
            real c0 = (real)centre[cc__region_of(regions, row, x0)];
            for (size_t p = first + x0; p < first + end; p++)
                calm[p] = masked[p] | pixel_calm(w[p] - c0, rms[p], nsigma);
        }
        const uint8_t *restrict line = calm + first;
        uint8_t *restrict out = across + first;
        /* The first and last columns have one row neighbour. */
        out[0] = line[0] & (cols > 1 ? line[1] : 1);
        for (size_t col = 1; col + 1 < cols; col++)
            out[col] = line[col - 1] & line[col] & line[col + 1];
        if (cols > 1)
            out[cols - 1] = line[cols - 2] & line[cols - 1];
    }
}

void PRECISION_FN(cc__common_mode_frame)(
    const struct cc__common_mode_job *job, const uint16_t *frame,
    struct cc__common_mode_scratch *scratch, void *values, uint8_t *estimated)
{
    const struct cc__regions *regions = &job->regions;
    const uint8_t *masked = job->pedestal->mask;
    real *w = scratch->reference;
    const uint8_t *across = scratch->calm_across;
    reference_values(job, frame, w, scratch->bins);
    for (uint32_t region = 0; region < regions->count; region++)
        scratch->centre[region] = region_centre(job, scratch->bins, region,
                                                scratch->histogram);
    calm_pixels(job, w, scratch->centre, scratch->calm, scratch->calm_across);
    const size_t cols = regions->cols;
    for (uint32_t region = 0; region < regions->count; region++) {
        uint32_t row0, row1, col0, col1;
        cc__region_rectangle(regions, region, &row0, &row1, &col0, &col1);
        int64_t sum = 0;
        uint64_t quiet = 0, unmasked = 0;
        for (uint32_t row = row0; row < row1; row++) {
            size_t first = (size_t)row * cols;
            const uint8_t *up = across + (row > 0 ? first - cols : first);
            const uint8_t *here = across + first;
            const uint8_t *down = across + (row + 1 < regions->rows
                                                ? first + cols
                                                : first);
            for (uint32_t col = col0; col < col1; col++) {
                int good = !masked[first + col];
                int is_quiet = good & up[col] & here[col] & down[col];
                unmasked += (uint64_t)good;
                quiet += (uint64_t)is_quiet;
                sum += is_quiet ? pixel_fixed(w[first + col]) : 0;
            }
        }
        bool enough = cc__common_mode_enough(quiet, unmasked);
        ((real *)values)[region] = enough ? common_mode_of(sum, quiet) : 0;
        estimated[region] = enough;
    }
}

/* The common mode (docs/spec.md §8) of region `region` of the job's
 * frame: 0 when the correction is off. */
static inline real region_common_mode(const struct cc__frame_job *job,
                                      uint32_t region)
{
    return job->common_mode != NULL ? ((const real *)job->common_mode)[region]
                                    : (real)0;
}

/* v = (x - X0 - c) - r of n pixels of a row that share the common mode
 * c, times each pixel's gain factor when gain is not NULL (docs/spec.md
 * §9.2), 0 where masked. Inlined with gain NULL and not, so that each
 * loop vectorises without a test per pixel. */
ROW_LOOP void row_values(size_t n, real c, real n_window, uint16_t mask,
                         const uint16_t *restrict x,
                         const uint16_t *restrict baseline,
                         const uint8_t *restrict masked, const real *restrict s,
                         const real *restrict gain, real *restrict v)
{
    for (size_t ix = 0; ix < n; ix++) {
        real value = pixel_value_from_offset(
            pixel_y_corrected(pixel_y(x[ix], mask, baseline[ix]), c),
            pixel_offset(s[ix], n_window));
        if (gain != NULL)
            value = pixel_gain_corrected(value, gain[ix]);
        v[ix] = pixel_unless_masked(value, masked[ix]);
    }
}

/* Writes rows [row0, row1) of the frame's subtracted values (row_values)
 * and hmax, the running max(0, v) over Nx cells. Cells outside the frame
 * are 0, which is exactly the spec's "skipped in sums and maxima, 0 in
 * the emitted cluster": the padding rows and columns are never written.
 * Masked pixels are written as 0 for the same reason. A row is taken in
 * runs of columns that share a common mode c. */
ROW_LOOP void subtract_pedestal(const struct cc__frame_job *job, uint32_t row0,
                                uint32_t row1)
{
    const size_t cols = job->cols, nx = 2 * (size_t)job->half_x + 1;
    const size_t width = cols + 2 * (size_t)job->half_x;
    const real n = (real)job->window;
    const uint16_t mask = job->adc_mask;
    for (size_t row = row0; row < row1; row++) {
        size_t first = row * cols;
        const uint16_t *restrict x = job->frame + first;
        const uint16_t *restrict baseline = job->baseline + first;
        const uint8_t *restrict masked = job->pixel_mask + first;
        const real *restrict s = (const real *)job->s_in + first;
        const real *gain = job->gain;
        real *restrict v = (real *)job->v + (row + job->half_y) * width;
        real *restrict v_cols = v + job->half_x;
        for (uint32_t x0 = 0, end; x0 < cols; x0 = end) {
            end = cc__region_run_end(&job->regions, x0);
            real c = region_common_mode(job, cc__region_of(&job->regions,
                                                           (uint32_t)row, x0));
            if (gain != NULL)
                row_values(end - x0, c, n, mask, x + x0, baseline + x0,
                           masked + x0, s + x0, gain + first + x0, v_cols + x0);
            else
                row_values(end - x0, c, n, mask, x + x0, baseline + x0,
                           masked + x0, s + x0, NULL, v_cols + x0);
        }
        real *restrict hmax = (real *)job->hmax + (row + job->half_y) * cols;
        for (size_t ix = 0; ix < cols; ix++)
            hmax[ix] = 0;
        for (size_t dx = 0; dx < nx; dx++)
            for (size_t ix = 0; ix < cols; ix++)
                hmax[ix] = v[ix + dx] > hmax[ix] ? v[ix + dx] : hmax[ix];
    }
}

/* Pixels of a row whose window sums and maxima are kept in registers
 * while the window's cells are added: one store a pixel instead of one
 * per cell. */
enum { WINDOW_CHUNK = 16 };

/* Window sum (row by row from the top-left cell, as docs/spec.md orders
 * it) and window max of the n pixels of row iy from column x0. Inlined
 * with n = WINDOW_CHUNK, the loops over the chunk have a constant length
 * and vectorise with the sums in registers. */
ROW_LOOP void window_chunk(const struct cc__frame_job *job,
                           struct cc__worker *worker, size_t iy, size_t x0,
                           size_t n)
{
    const size_t cols = job->cols;
    const size_t nx = 2 * (size_t)job->half_x + 1;
    const size_t ny = 2 * (size_t)job->half_y + 1;
    const size_t width = cols + 2 * (size_t)job->half_x;
    real sum[WINDOW_CHUNK] = {0}, max[WINDOW_CHUNK] = {0};
    for (size_t dy = 0; dy < ny; dy++) {
        const real *restrict v = (const real *)job->v + (iy + dy) * width + x0;
        for (size_t dx = 0; dx < nx; dx++)
            for (size_t i = 0; i < n; i++)
                sum[i] += v[i + dx];
        const real *restrict hmax = (const real *)job->hmax + (iy + dy) * cols +
                                    x0;
        for (size_t i = 0; i < n; i++)
            max[i] = hmax[i] > max[i] ? hmax[i] : max[i];
    }
    real *restrict total = (real *)worker->total + x0;
    real *restrict wmax = (real *)worker->wmax + x0;
    for (size_t i = 0; i < n; i++) {
        total[i] = sum[i];
        wmax[i] = max[i];
    }
}

/* Window sum and window max for every pixel of row iy. */
ROW_LOOP void window_sums(const struct cc__frame_job *job,
                          struct cc__worker *worker, size_t iy)
{
    size_t x0 = 0;
    for (; x0 + WINDOW_CHUNK <= job->cols; x0 += WINDOW_CHUNK)
        window_chunk(job, worker, iy, x0, WINDOW_CHUNK);
    if (x0 < job->cols)
        window_chunk(job, worker, iy, x0, job->cols - x0);
}

/* The thresholds of one frame, in working precision. */
struct thresholds {
    real n;        /* the window N */
    real nsigma;   /* rounded to P once */
    real c3nsigma; /* sqrt(Nx * Ny) * nsigma in double, then rounded to P */
    uint16_t adc_mask;
    int pedestal_only; /* docs/spec.md §2.7 */
    real common_mode;  /* of the run of columns being decided */
};

/* docs/spec.md §3 for cols pixels of a row: marks cluster centres in emit
 * and writes every pixel's next state (updated only when quiet). The
 * pointers are restrict parameters because that is where GCC trusts them
 * enough to vectorise without run-time overlap checks. */
ROW_LOOP void
decide_pixels(size_t cols, struct thresholds t, const uint16_t *restrict x,
              const uint16_t *restrict baseline, const uint8_t *restrict masked,
              const real *restrict gain, const real *restrict v,
              const real *restrict wmax, const real *restrict total,
              const real *restrict s_in, const real *restrict s2_in,
              real *restrict s_out, real *restrict s2_out,
              uint8_t *restrict emit)
{
    for (size_t ix = 0; ix < cols; ix++) {
        real s2_mean;
        real r = pixel_offset(s_in[ix], t.n);
        real rms = pixel_rms_from_offset(r, s2_in[ix], t.n, &s2_mean);
        real y = pixel_y_corrected(pixel_y(x[ix], t.adc_mask, baseline[ix]),
                                   t.common_mode);
        /* docs/spec.md §9.2: decided in the gain's unit, the pedestal
         * updated in ADU. */
        real update = v[ix];
        if (gain != NULL) {
            rms = pixel_gain_corrected(rms, gain[ix]);
            update = pixel_value_from_offset(y, r);
        }
        int flags = pixel_decide_unless_masked(
            pixel_decide_in_frame(pixel_decide(v[ix], wmax[ix], total[ix], rms,
                                               t.nsigma, t.c3nsigma),
                                  t.pedestal_only),
            masked[ix]);
        int quiet = flags / PIXEL_QUIET;
        emit[ix] = (uint8_t)(flags & PIXEL_EMIT);
        s_out[ix] = pixel_next_s(s_in[ix], update, quiet);
        s2_out[ix] = pixel_next_s2(s2_in[ix], y, s2_mean, quiet);
    }
}

/* decide_pixels on columns [x0, end) of the row whose first pixel is at
 * frame index at - x0; gain is the run's factors or NULL, each inlined
 * apart so that each loop vectorises without a test per pixel. */
ROW_LOOP void decide_run(const struct cc__frame_job *job,
                         struct cc__worker *worker, struct thresholds t,
                         const real *v, size_t at, size_t x0, size_t end,
                         const real *gain)
{
    decide_pixels(end - x0, t, job->frame + at, job->baseline + at,
                  job->pixel_mask + at, gain, v + x0, (real *)worker->wmax + x0,
                  (real *)worker->total + x0, (const real *)job->s_in + at,
                  (const real *)job->s2_in + at, (real *)job->s_out + at,
                  (real *)job->s2_out + at, worker->emit + x0);
}

ROW_LOOP void decide_row(const struct cc__frame_job *job,
                         struct cc__worker *worker, size_t iy)
{
    const size_t width = job->cols + 2 * (size_t)job->half_x;
    const size_t first = iy * job->cols;
    struct thresholds t = {.n = (real)job->window,
                           .nsigma = (real)job->nsigma,
                           .c3nsigma = (real)job->c3nsigma,
                           .adc_mask = job->adc_mask,
                           .pedestal_only = job->pedestal_only};
    const real *v = (const real *)job->v + (iy + job->half_y) * width +
                    job->half_x;
    for (uint32_t x0 = 0, end; x0 < job->cols; x0 = end) {
        end = cc__region_run_end(&job->regions, x0);
        t.common_mode = region_common_mode(job,
                                           cc__region_of(&job->regions,
                                                         (uint32_t)iy, x0));
        size_t at = first + x0;
        if (job->gain != NULL)
            decide_run(job, worker, t, v, at, x0, end,
                       (const real *)job->gain + at);
        else
            decide_run(job, worker, t, v, at, x0, end, NULL);
    }
}

/* docs/spec.md §4.8: row iy's values (0 where masked), as analog terms,
 * into the batch's analog sums, frame after frame. */
static void add_analog_row(const struct cc__frame_job *job, size_t iy)
{
    const size_t width = job->cols + 2 * (size_t)job->half_x;
    const real *v = (const real *)job->v + (iy + job->half_y) * width +
                    job->half_x;
    double *sums = job->analog + iy * job->cols;
    for (size_t ix = 0; ix < job->cols; ix++)
        sums[ix] += pixel_analog_term(v[ix]);
}

/* Copies the marked centres of row iy into list. About 1 pixel in 70 is
 * a centre, so the marks are scanned 8 at a time. */
static int emit_clusters(const struct cc__frame_job *job,
                         const struct cc__worker *worker, uint32_t iy,
                         cc_clusters *list)
{
    const size_t nx = 2 * (size_t)job->half_x + 1;
    const size_t ny = 2 * (size_t)job->half_y + 1;
    const size_t width = job->cols + 2 * (size_t)job->half_x;
    const real *v_all = job->v;
    for (size_t block = 0; block < job->cols; block += 8) {
        size_t end = block + 8 < job->cols ? block + 8 : job->cols;
        uint64_t marks = 0;
        memcpy(&marks, worker->emit + block, end - block);
        if (marks == 0)
            continue;
        for (size_t ix = block; ix < end; ix++) {
            if (!worker->emit[ix])
                continue;
            int32_t *values;
            int rc = cc__clusters_push(list, job->max_clusters, (uint16_t)ix,
                                       (uint16_t)iy, &values);
            if (rc != CC_OK)
                return rc;
            if (values == NULL)
                continue; /* beyond the cap: counted by the push */
            for (size_t dy = 0; dy < ny; dy++) {
                const real *v = v_all + (iy + dy) * width + ix;
                for (size_t dx = 0; dx < nx; dx++)
                    *values++ = pixel_round(v[dx]);
            }
        }
    }
    return CC_OK;
}

/* The entry points are built for AVX2 and for the baseline, chosen at
 * load time. AVX2 without FMA changes only the vector width: every lane
 * rounds as scalar code. ThreadSanitizer instruments the load-time
 * resolver, which then runs before the sanitizer is initialised and
 * crashes: no clones there. Clang 14 gives the dispatcher another name
 * than the function's, which callers in other files then cannot link: GCC
 * only. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    !defined(__SANITIZE_THREAD__)
#define ISA_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ISA_CLONES
#endif

ISA_CLONES void PRECISION_FN(cc__subtract_rows)(const struct cc__frame_job *job,
                                                uint32_t row0, uint32_t row1)
{
    subtract_pedestal(job, row0, row1);
}

ISA_CLONES int PRECISION_FN(cc__decide_rows)(const struct cc__frame_job *job,
                                             struct cc__worker *worker,
                                             uint32_t row0, uint32_t row1,
                                             cc_clusters *list)
{
    int rc = cc__clusters_begin_frame(list, job->number);
    for (uint32_t iy = row0; iy < row1 && rc == CC_OK; iy++) {
        window_sums(job, worker, iy);
        decide_row(job, worker, iy);
        if (job->analog != NULL)
            add_analog_row(job, iy);
        rc = emit_clusters(job, worker, iy, list);
    }
    return rc;
}
