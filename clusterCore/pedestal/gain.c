/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gain.c: the per-pixel gain map of docs/spec.md §9 and the factors
 * k = u / g the backends multiply values and noise by.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pedestal.h"

/* u of docs/spec.md §9.1: the values' unit per the map's. */
static double unit_scale(cc_gain_unit unit)
{
    return unit == CC_GAIN_ADU_PER_KEV ? 1000.0 : 1.0;
}

/* k of g in the working precision: the division in double, one rounding. */
static double factor_in(cc_precision precision, double scale, double g)
{
    return precision == CC_PRECISION_DOUBLE ? scale / g
                                            : (double)(float)(scale / g);
}

int cc__gain_make(struct cc__gain *gain, const double *map, size_t pixels,
                  uint32_t cols, cc_gain_unit unit, cc_precision precision,
                  uint16_t adc_mask, char *message)
{
    *gain = (struct cc__gain){.unit = unit};
    if (map == NULL)
        return CC_OK;
    if (cc_gain_unit_name(unit) == NULL)
        return cc__message(message, CC_EINVAL,
                           "unknown gain unit %d: relative (0) or "
                           "adu-per-kev (1)",
                           (int)unit);
    double scale = unit_scale(unit);
    /* docs/spec.md §9.1: k (adc_mask + 1) <= 2^23 keeps float's integers. */
    double k_max = 8388608.0 / ((double)adc_mask + 1.0);
    gain->map = malloc(pixels * sizeof *gain->map);
    gain->factor = malloc(pixels * cc__precision_size(precision));
    if (gain->map == NULL || gain->factor == NULL) {
        cc__gain_free(gain);
        return cc__message(message, CC_ENOMEM, "no memory for a gain map");
    }
    for (size_t p = 0; p < pixels; p++) {
        double g = map[p], k = 0;
        const char *why = NULL;
        if (!isfinite(g) || !(g > 0))
            why = "a gain must be finite and above 0";
        else if (!((k = factor_in(precision, scale, g)) <= k_max))
            why = "so small a gain would take values past the range of "
                  "exact integers";
        if (why != NULL) {
            cc__gain_free(gain);
            return cc__message(message, CC_EINVAL,
                               "gain map pixel (row %zu, col %zu) is %g%s: "
                               "%s (at least %g)",
                               p / cols, p % cols, g,
                               unit == CC_GAIN_ADU_PER_KEV ? " ADU/keV" : "",
                               why, scale / k_max);
        }
        gain->map[p] = g;
        if (precision == CC_PRECISION_DOUBLE)
            ((double *)gain->factor)[p] = k;
        else
            ((float *)gain->factor)[p] = (float)k;
    }
    return CC_OK;
}

void cc__gain_free(struct cc__gain *gain)
{
    free(gain->map);
    free(gain->factor);
    *gain = (struct cc__gain){0};
}
