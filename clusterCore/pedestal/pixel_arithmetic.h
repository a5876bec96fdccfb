/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pixel_arithmetic.h: the per-pixel formulas of docs/spec.md §2-§4, shared
 * by the CPU backend (C) and the CUDA backend (CUDA C++) so that both
 * round the same operations in the same order. Each operation is one IEEE
 * operation in `real`; builds must not contract a*b+c into FMA.
 *
 * No include guard and no includes: the includer defines `real` (float or
 * double) and CC__HD (empty in C, __host__ __device__ in CUDA), has
 * <stdint.h>, and may include this once per precision (CUDA does, inside
 * a namespace for each).
 */

/* r = s/N, the pixel's mean minus X0. */
static inline CC__HD real pixel_offset(real s, real n)
{
    return s / n;
}

/* rms = sqrt(max(0, s2/N - r*r)) from r; *s2_mean is s2/N. */
static inline CC__HD real pixel_rms_from_offset(real r, real s2, real n,
                                                real *s2_mean)
{
    *s2_mean = s2 / n;
    real var = *s2_mean - r * r;
    var = var < 0 ? (real)0 : var;
    return sqrt(var);
}

static inline CC__HD real pixel_rms(real s, real s2, real n, real *s2_mean)
{
    return pixel_rms_from_offset(pixel_offset(s, n), s2, n, s2_mean);
}

/* y = x - X0 after the ADC mask: an exact small integer. */
static inline CC__HD real pixel_y(uint16_t x, uint16_t adc_mask,
                                  uint16_t baseline)
{
    return (real)((int32_t)(x & adc_mask) - (int32_t)baseline);
}

/* docs/spec.md §8.3: y less the pixel's region's common mode c (0 when
 * off: then y comes back bit for bit). */
static inline CC__HD real pixel_y_corrected(real y, real common_mode)
{
    return y - common_mode;
}

/* docs/spec.md §8.2: whether a value against the reference lies within
 * +-nsigma * rms of the reference. */
static inline CC__HD int pixel_calm(real value, real rms, real nsigma)
{
    real thr = nsigma * rms;
    return !(value < -thr) & !(value > thr);
}

/* A value in units of 2^-20 ADU, truncated toward zero: the sum of such
 * integers does not depend on the order it is taken in. */
static inline CC__HD int64_t pixel_fixed(real value)
{
    return (int64_t)(value * (real)1048576);
}

/* A value's term in the analog image (§4.8): in double, truncated toward
 * zero to a multiple of 2^-16. Sums of such terms below 2^37 in
 * magnitude are exact, so they do not depend on how the frames fell into
 * batches and takes. */
static inline CC__HD double pixel_analog_term(real value)
{
    return trunc((double)value * 65536.0) * (1.0 / 65536);
}

/* The common mode of a region from the fixed-point sum of its n quiet
 * pixels' values: the mean in double, then one rounding to real. */
static inline CC__HD real common_mode_of(int64_t sum, uint64_t n)
{
    return (real)((double)sum / (double)n * (1.0 / 1048576));
}

/* v = y - r, the pedestal-subtracted value, from y and r. */
static inline CC__HD real pixel_value_from_offset(real y, real r)
{
    return y - r;
}

/* docs/spec.md §8.2: w = y - r_ref, the value against the common mode's
 * reference offset. */
static inline CC__HD real pixel_reference_value(uint16_t x, uint16_t adc_mask,
                                                uint16_t baseline, real r_ref)
{
    return pixel_value_from_offset(pixel_y(x, adc_mask, baseline), r_ref);
}

static inline CC__HD real pixel_value(uint16_t x, uint16_t adc_mask,
                                      uint16_t baseline, real s, real n)
{
    return pixel_value_from_offset(pixel_y(x, adc_mask, baseline),
                                   pixel_offset(s, n));
}

/* docs/spec.md §9.2: a value or an rms in the gain map's unit, from the
 * pixel's factor k = u / g. */
static inline CC__HD real pixel_gain_corrected(real value, real factor)
{
    return value * factor;
}

/* docs/spec.md §7.1: a masked pixel is a cell outside the frame, so its
 * value is 0 in every window sum, maximum and emitted cluster. A select,
 * not a product: 0 * v would be -0 for a negative v. */
static inline CC__HD real pixel_unless_masked(real v, uint8_t masked)
{
    return masked ? (real)0 : v;
}

enum { PIXEL_EMIT = 1, PIXEL_QUIET = 2 };

/* docs/spec.md §3 for one pixel from its value, its window's max and sum
 * and its rms: PIXEL_EMIT for a cluster centre, PIXEL_QUIET for a pixel
 * whose pedestal is updated, 0 otherwise. Branch-free, so that CPU loops
 * vectorise; since max >= value always, "not value < max" is
 * "value == max". */
static inline CC__HD int pixel_decide(real value, real max, real total,
                                      real rms, real nsigma, real c3nsigma)
{
    real thr = nsigma * rms;
    real thr3 = c3nsigma * rms;
    int considered = !(value < -thr);                   /* rule 1 */
    int test1 = max > thr;                              /* rule 2 */
    int test3 = (1 - test1) & (total > thr3);           /* rule 3 */
    int quiet = considered & (1 - test1) & (1 - test3); /* rule 4 */
    int emit = considered & (test1 | test3) & (value == max);
    return emit * PIXEL_EMIT + quiet * PIXEL_QUIET;
}

/* In a pedestal frame (docs/spec.md §2.7) every pixel is quiet and none
 * is a centre; a select rather than a branch, for the CPU's loops. */
static inline CC__HD int pixel_decide_in_frame(int flags, int pedestal_only)
{
    return pedestal_only ? PIXEL_QUIET : flags;
}

/* A masked pixel (docs/spec.md §7.1) is never a centre and never updated. */
static inline CC__HD int pixel_decide_unless_masked(int flags, uint8_t masked)
{
    return masked ? 0 : flags;
}

/* The EMA update of docs/spec.md §2, applied when quiet is 1. When it is 0
 * the state gains 0 * step = +-0, which leaves it bit for bit (the state
 * is never -0: it starts as a converted integer, and a sum is -0 only when
 * both terms are); unlike a select this form lets CPU loops vectorise. */
static inline CC__HD real pixel_next_s(real s, real value, int quiet)
{
    return s + (real)quiet * value; /* value is y - r */
}

static inline CC__HD real pixel_next_s2(real s2, real y, real s2_mean,
                                        int quiet)
{
    return s2 + (real)quiet * (y * y - s2_mean);
}

/* round_half_away(v) as int32: the conversion truncates toward zero, and
 * v minus its truncation is exact for |v| < 2^23. */
static inline CC__HD int32_t pixel_round(real v)
{
    int32_t whole = (int32_t)v;
    real fraction = v - (real)whole;
    return whole + (fraction >= (real)0.5) - (fraction <= (real)-0.5);
}
