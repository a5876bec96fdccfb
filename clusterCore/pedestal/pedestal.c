/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pedestal.c: the per-pixel dark level and noise of docs/spec.md §2, from
 * exact integer training sums to the centred state in working precision.
 */
#include <stdlib.h>
#include <string.h>

#include "pedestal.h"

size_t cc__precision_size(cc_precision precision)
{
    return precision == CC_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

int cc__pedestal_init(struct cc__pedestal *pedestal, size_t pixels,
                      cc_precision precision, uint32_t window)
{
    size_t real = cc__precision_size(precision);
    *pedestal = (struct cc__pedestal){.pixels = pixels, .precision = precision};
    pedestal->sum = calloc(pixels, sizeof *pedestal->sum);
    pedestal->sum_sq = calloc(pixels, sizeof *pedestal->sum_sq);
    pedestal->baseline = calloc(pixels, sizeof *pedestal->baseline);
    pedestal->s = calloc(pixels, real);
    pedestal->s2 = calloc(pixels, real);
    pedestal->mask = calloc(pixels, sizeof *pedestal->mask);
    pedestal->reference_offset = calloc(pixels, real);
    pedestal->reference_rms = calloc(pixels, real);
    if (pedestal->sum == NULL || pedestal->sum_sq == NULL ||
        pedestal->baseline == NULL || pedestal->s == NULL ||
        pedestal->s2 == NULL || pedestal->mask == NULL ||
        pedestal->reference_offset == NULL || pedestal->reference_rms == NULL) {
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
    free(pedestal->reference_offset);
    free(pedestal->reference_rms);
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

/* round_half_away(a / b) for b > 0, in integers. */
static int64_t divide_rounded(int64_t a, int64_t b)
{
    return a >= 0 ? (2 * a + b) / (2 * b) : -((-2 * a + b) / (2 * b));
}

/* docs/spec.md §8.4: each region's shift d = m - M, in whole ADU, of the
 * frame's mean m over the region's unmasked pixels against the mean M of
 * the same pixels' sums so far; 0 on the first frame or for a region
 * without unmasked pixels. sums holds 3 * regions->count. */
static void training_shifts(const struct cc__pedestal *pedestal,
                            const uint16_t *frame, uint16_t adc_mask,
                            const struct cc__regions *regions, int64_t *sums)
{
    int64_t *frame_sum = sums, *trained_sum = sums + regions->count;
    int64_t *unmasked = sums + 2 * (size_t)regions->count;
    memset(sums, 0, 3 * (size_t)regions->count * sizeof *sums);
    for (uint32_t row = 0; row < regions->rows; row++)
        for (uint32_t col = 0; col < regions->cols; col++) {
            size_t p = (size_t)row * regions->cols + col;
            if (pedestal->mask[p])
                continue;
            uint32_t region = cc__region_of(regions, row, col);
            frame_sum[region] += frame[p] & adc_mask;
            trained_sum[region] += (int64_t)pedestal->sum[p];
            unmasked[region]++;
        }
    int64_t trained = (int64_t)pedestal->frames_trained;
    for (uint32_t region = 0; region < regions->count; region++)
        frame_sum[region] = trained == 0 || unmasked[region] == 0
                                ? 0
                                : divide_rounded(frame_sum[region],
                                                 unmasked[region]) -
                                      divide_rounded(trained_sum[region],
                                                     unmasked[region] *
                                                         trained);
}

void cc__pedestal_train(struct cc__pedestal *pedestal, const uint16_t *frame,
                        uint16_t adc_mask, const struct cc__regions *regions,
                        int64_t *region_sums)
{
    uint64_t *restrict sum = pedestal->sum;
    uint64_t *restrict sum_sq = pedestal->sum_sq;
    if (regions->count == 0) {
        for (size_t p = 0; p < pedestal->pixels; p++) {
            uint64_t x = frame[p] & adc_mask;
            sum[p] += x;
            sum_sq[p] += x * x;
        }
    } else {
        training_shifts(pedestal, frame, adc_mask, regions, region_sums);
        /* x - d may be negative: the sums are kept modulo 2^64 and read
         * as signed when frozen, which is exact while they fit. */
        for (uint32_t row = 0; row < regions->rows; row++)
            for (uint32_t col = 0; col < regions->cols; col++) {
                size_t p = (size_t)row * regions->cols + col;
                int64_t x = (int64_t)(frame[p] & adc_mask) -
                            region_sums[cc__region_of(regions, row, col)];
                sum[p] += (uint64_t)x;
                sum_sq[p] += (uint64_t)(x * x);
            }
    }
    pedestal->frames_trained++;
}

void cc__pedestal_take_reference(struct cc__pedestal *pedestal)
{
    if (pedestal->precision == CC_PRECISION_DOUBLE)
        cc__pedestal_reference_double(pedestal);
    else
        cc__pedestal_reference_float(pedestal);
}

void cc__pedestal_freeze(struct cc__pedestal *pedestal)
{
    int64_t n = (int64_t)pedestal->frames_trained;
    for (size_t p = 0; p < pedestal->pixels; p++) {
        int64_t sum = (int64_t)pedestal->sum[p];
        int64_t sum_sq = (int64_t)pedestal->sum_sq[p];
        /* X0 = round_half_away(sum / n), kept within uint16: any integer
         * centres the sums exactly. */
        int64_t x0 = divide_rounded(sum, n);
        x0 = x0 < 0 ? 0 : x0 > UINT16_MAX ? UINT16_MAX : x0;
        pedestal->baseline[p] = (uint16_t)x0;
        int64_t centred_sum = sum - n * x0;
        int64_t centred_sq = sum_sq - 2 * x0 * sum + n * x0 * x0;
        if (pedestal->precision == CC_PRECISION_DOUBLE)
            cc__pedestal_store_double(pedestal->s, pedestal->s2, p, centred_sum,
                                      centred_sq);
        else
            cc__pedestal_store_float(pedestal->s, pedestal->s2, p, centred_sum,
                                     centred_sq);
    }
    pedestal->window = (uint32_t)n;
    pedestal->state = CC_PEDESTAL_READY;
    cc__pedestal_take_reference(pedestal);
}

void cc__pedestal_swap(struct cc__pedestal *dst, struct cc__pedestal *src)
{
    struct cc__pedestal held = *dst;
    *dst = *src;
    *src = held;
}
