/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal.c: the per-pixel dark level and noise of docs/spec.md §2, from
 * exact integer training sums to the centred state in working precision.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

size_t cc__precision_size(cc_precision precision)
{
    return precision == CC_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

int cc__pedestal_init(struct cc__pedestal *pedestal, size_t pixels,
                      cc_precision precision, uint32_t window)
{
    size_t real = cc__precision_size(precision);
    *pedestal = (struct cc__pedestal){.pixels = pixels,
                                      .precision = precision};
    pedestal->sum = calloc(pixels, sizeof *pedestal->sum);
    pedestal->sum_sq = calloc(pixels, sizeof *pedestal->sum_sq);
    pedestal->baseline = calloc(pixels, sizeof *pedestal->baseline);
    pedestal->s = calloc(pixels, real);
    pedestal->s2 = calloc(pixels, real);
    pedestal->mask = calloc(pixels, sizeof *pedestal->mask);
    if (pedestal->sum == NULL || pedestal->sum_sq == NULL ||
        pedestal->baseline == NULL || pedestal->s == NULL ||
        pedestal->s2 == NULL || pedestal->mask == NULL) {
        cc__pedestal_free(pedestal);
        return CC_ENOMEM;
    }
    cc__pedestal_reset(pedestal, window);
    return CC_OK;
}

void cc__pedestal_free(struct cc__pedestal *pedestal)
{
    free(pedestal->sum);
    free(pedestal->sum_sq);
    free(pedestal->baseline);
    free(pedestal->s);
    free(pedestal->s2);
    free(pedestal->mask);
    *pedestal = (struct cc__pedestal){0};
}

void cc__pedestal_reset(struct cc__pedestal *pedestal, uint32_t window)
{
    memset(pedestal->sum, 0, pedestal->pixels * sizeof *pedestal->sum);
    memset(pedestal->sum_sq, 0, pedestal->pixels * sizeof *pedestal->sum_sq);
    /* The rms rule judged the pedestal being thrown away; the user's mask
     * is a setting and stays. */
    for (size_t p = 0; p < pedestal->pixels; p++)
        pedestal->mask[p] &= CC__MASKED_BY_USER;
    pedestal->state = CC_PEDESTAL_TRAINING;
    pedestal->frames_trained = 0;
    pedestal->window = window;
}

void cc__pedestal_train(struct cc__pedestal *pedestal, const uint16_t *frame,
                        uint16_t adc_mask)
{
    uint64_t *restrict sum = pedestal->sum;
    uint64_t *restrict sum_sq = pedestal->sum_sq;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        uint64_t x = frame[p] & adc_mask;
        sum[p] += x;
        sum_sq[p] += x * x;
    }
    pedestal->frames_trained++;
}

void cc__pedestal_freeze(struct cc__pedestal *pedestal)
{
    int64_t n = (int64_t)pedestal->frames_trained;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        int64_t sum = (int64_t)pedestal->sum[p];
        int64_t sum_sq = (int64_t)pedestal->sum_sq[p];
        /* round_half_away(sum / n) for sum >= 0, in integers. */
        int64_t x0 = (2 * sum + n) / (2 * n);
        pedestal->baseline[p] = (uint16_t)x0;
        int64_t centred_sum = sum - n * x0;
        int64_t centred_sq = sum_sq - 2 * x0 * sum + n * x0 * x0;
        if (pedestal->precision == CC_PRECISION_DOUBLE)
            cc__pedestal_store_double(pedestal->s, pedestal->s2, p,
                                      centred_sum, centred_sq);
        else
            cc__pedestal_store_float(pedestal->s, pedestal->s2, p,
                                     centred_sum, centred_sq);
    }
    pedestal->window = (uint32_t)n;
    pedestal->state = CC_PEDESTAL_READY;
}

void cc__pedestal_swap(struct cc__pedestal *dst, struct cc__pedestal *src)
{
    struct cc__pedestal held = *dst;
    *dst = *src;
    *src = held;
}
