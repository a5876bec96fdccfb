/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mask.c: the bad-pixel mask of docs/spec.md §7.1, kept in the pedestal:
 * the user's pixels and those the rms rule finds in a trained pedestal.
 */
#include <stdlib.h>
#include <string.h>

#include "pedestal.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cc__mask_by_rms(struct cc__pedestal *pedestal, double factor, char *message)
{
    size_t pixels = pedestal->pixels;
    for (size_t p = 0; p < pixels; p++)
        pedestal->mask[p] &= CC__MASKED_BY_USER;
    if (factor == 0 || pedestal->state != CC_PEDESTAL_READY)
        return CC_OK;
    double *rms = malloc(pixels * sizeof *rms);
    double *sorted = malloc(pixels * sizeof *sorted);
    if (rms == NULL || sorted == NULL) {
        free(rms);
        free(sorted);
        return cc__message(message, CC_ENOMEM,
                           "no memory to find the pixels of high noise");
    }
    if (pedestal->precision == CC_PRECISION_DOUBLE)
        cc__pedestal_maps_double(pedestal, NULL, rms);
    else
        cc__pedestal_maps_float(pedestal, NULL, rms);
    /* The median of the pixels the user kept: pixels known to be bad
     * would only pull it up. The lower median, so that it is one of the
     * values and needs no arithmetic (docs/spec.md §7.9). */
    size_t kept = 0;
    for (size_t p = 0; p < pixels; p++)
        if (!(pedestal->mask[p] & CC__MASKED_BY_USER))
            sorted[kept++] = rms[p];
    if (kept > 0) {
        qsort(sorted, kept, sizeof *sorted, compare_doubles);
        double limit = factor * sorted[(kept - 1) / 2];
        for (size_t p = 0; p < pixels; p++)
            if (rms[p] == 0 || rms[p] > limit)
                pedestal->mask[p] |= CC__MASKED_BY_RMS;
    }
    free(rms);
    free(sorted);
    return CC_OK;
}

uint64_t cc__mask_count(const struct cc__pedestal *pedestal)
{
    uint64_t masked = 0;
    for (size_t p = 0; p < pedestal->pixels; p++)
        masked += pedestal->mask[p] != 0;
    return masked;
}

void cc__pedestal_copy_user_mask(struct cc__pedestal *dst,
                                 const struct cc__pedestal *src)
{
    for (size_t p = 0; p < dst->pixels; p++)
        dst->mask[p] = (uint8_t)((dst->mask[p] & ~CC__MASKED_BY_USER) |
                                 (src->mask[p] & CC__MASKED_BY_USER));
}
