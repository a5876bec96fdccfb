/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal_real.c: the pedestal's working-precision state (docs/spec.md
 * §2): its sums stored, its mean and rms maps, the common mode's
 * reference. Compiled twice, with CC_REAL defined as float and as double;
 * every function name ends in that type.
 */
#include <math.h>
#include <tgmath.h>

#include "pedestal.h"

#ifndef CC_REAL
#error "compile pedestal_real.c with -DCC_REAL=float or -DCC_REAL=double"
#endif

typedef CC_REAL real;
#define CC__HD
#include "pixel_arithmetic.h"

#define CC__PASTE(name, type) name##_##type
#define CC__NAME(name, type) CC__PASTE(name, type)
#define PRECISION_FN(name) CC__NAME(name, CC_REAL)

void PRECISION_FN(cc__pedestal_store)(void *s, void *s2, size_t pixel,
                                      int64_t centred_sum, int64_t centred_sq)
{
    /* One correctly rounded conversion from the exact integers. */
    ((real *)s)[pixel] = (real)centred_sum;
    ((real *)s2)[pixel] = (real)centred_sq;
}

void PRECISION_FN(cc__pedestal_maps)(const struct cc__pedestal *pedestal,
                                     double *mean, double *rms)
{
    const real *s = pedestal->s, *s2 = pedestal->s2;
    const real n = (real)pedestal->window;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        real s2_mean;
        real sigma = pixel_rms(s[p], s2[p], n, &s2_mean);
        if (mean != NULL)
            mean[p] = (double)pedestal->baseline[p] + (double)(s[p] / n);
        if (rms != NULL)
            rms[p] = (double)sigma;
    }
}

void PRECISION_FN(cc__pedestal_reference)(struct cc__pedestal *pedestal)
{
    const real *s = pedestal->s, *s2 = pedestal->s2;
    real *offset = pedestal->reference_offset, *rms = pedestal->reference_rms;
    const real n = (real)pedestal->window;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        real s2_mean;
        offset[p] = pixel_offset(s[p], n);
        rms[p] = pixel_rms_from_offset(offset[p], s2[p], n, &s2_mean);
    }
}
