/* SPDX-License-Identifier: BSD-3-Clause */
/* energy.c: the energy of one cluster, as docs/spec.md §4 defines it, and
 * the energy window of §7.2. */
#include <math.h>

#include "internal.h"

/* Sum of the 2x2 cells whose top-left cell is (row, col). */
static int64_t sum_2x2(uint32_t size_x, const int32_t *values, uint32_t row,
                       uint32_t col)
{
    const int32_t *top = values + (size_t)row * size_x + col;
    return (int64_t)top[0] + top[1] + top[size_x] + top[size_x + 1];
}

int64_t cc_cluster_energy(cc_energy energy, uint32_t size_x, uint32_t size_y,
                          const int32_t *values)
{
    if (values == NULL || size_x < CC_CLUSTER_SIZE_MIN ||
        size_y < CC_CLUSTER_SIZE_MIN)
        return 0;
    return cc__cluster_energy(energy, size_x, size_y, values);
}

int64_t cc__best_2x2(uint32_t size_x, uint32_t size_y, const int32_t *values,
                     uint32_t *row, uint32_t *col)
{
    /* Top-left, top-right, bottom-left, bottom-right: the first of the
     * largest sums wins. */
    uint32_t cx = size_x / 2, cy = size_y / 2;
    int64_t best = sum_2x2(size_x, values, cy - 1, cx - 1);
    *row = cy - 1;
    *col = cx - 1;
    for (uint32_t r = cy - 1; r <= cy; r++)
        for (uint32_t c = cx - 1; c <= cx; c++) {
            int64_t sum = sum_2x2(size_x, values, r, c);
            if (sum > best) {
                best = sum;
                *row = r;
                *col = c;
            }
        }
    return best;
}

int64_t cc__cluster_energy(cc_energy energy, uint32_t size_x, uint32_t size_y,
                           const int32_t *values)
{
    if (energy == CC_ENERGY_SUM2X2) {
        uint32_t row, col;
        return cc__best_2x2(size_x, size_y, values, &row, &col);
    }
    int64_t sum = 0;
    for (size_t i = 0; i < (size_t)size_x * size_y; i++)
        sum += values[i];
    return sum;
}

int cc_energy_window_check(const cc_energy_window *window, char *message)
{
    if (window == NULL)
        return cc__message(message, CC_EINVAL, "no energy window");
    if (window->energy != CC_ENERGY_SUM && window->energy != CC_ENERGY_SUM2X2)
        return cc__message(message, CC_EINVAL,
                           "energy window on energy %d: it is sum (0) or "
                           "sum2x2 (1)", (int)window->energy);
    if (!isfinite(window->low) || !isfinite(window->high) ||
        !(window->low < window->high))
        return cc__message(message, CC_EINVAL,
                           "energy window [%g, %g) ADU is empty or not "
                           "finite: its low edge must be below its high one",
                           window->low, window->high);
    return CC_OK;
}

int cc__window_contains(const cc_energy_window *window, uint32_t size_x,
                        uint32_t size_y, const int32_t *values)
{
    /* An int64 energy of a cluster converts to double exactly. */
    double e = (double)cc__cluster_energy(window->energy, size_x, size_y,
                                          values);
    return e >= window->low && e < window->high;
}

int cc_energy_window_contains(const cc_energy_window *window, uint32_t size_x,
                              uint32_t size_y, const int32_t *values)
{
    if (cc_energy_window_check(window, NULL) != CC_OK || values == NULL ||
        size_x < CC_CLUSTER_SIZE_MIN || size_y < CC_CLUSTER_SIZE_MIN)
        return 0;
    return cc__window_contains(window, size_x, size_y, values);
}
