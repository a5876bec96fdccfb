/* SPDX-License-Identifier: BSD-3-Clause */
/* energy.c: the energy of one cluster, as docs/spec.md §4 defines it, and
 * the energy window of §7.2, checked; the formulas themselves are in
 * cluster_arithmetic.h, which the CUDA backend shares. */
#include <math.h>

#include "analysis.h"

int64_t cc_cluster_energy(cc_energy energy, uint32_t size_x, uint32_t size_y,
                          const int32_t *values)
{
    if (values == NULL || size_x < CC_CLUSTER_SIZE_MIN ||
        size_y < CC_CLUSTER_SIZE_MIN)
        return 0;
    return cluster_energy(energy, size_x, size_y, values);
}

void cc__cluster_energies(cc_energy energy, uint32_t size_x, uint32_t size_y,
                          const int32_t *values, size_t n, int64_t *energies)
{
    const size_t cells = (size_t)size_x * size_y;
    for (size_t i = 0; i < n; i++)
        energies[i] = cluster_energy(energy, size_x, size_y,
                                     values + i * cells);
}

int cc_energy_window_check(const cc_energy_window *window, char *message)
{
    if (window == NULL)
        return cc__message(message, CC_EINVAL, "no energy window");
    if (window->energy != CC_ENERGY_SUM && window->energy != CC_ENERGY_SUM2X2)
        return cc__message(message, CC_EINVAL,
                           "energy window on energy %d: it is sum (0) or "
                           "sum2x2 (1)",
                           (int)window->energy);
    if (!isfinite(window->low) || !isfinite(window->high) ||
        !(window->low < window->high))
        return cc__message(message, CC_EINVAL,
                           "energy window [%g, %g) ADU is empty or not "
                           "finite: its low edge must be below its high one",
                           window->low, window->high);
    return CC_OK;
}

int cc_energy_window_contains(const cc_energy_window *window, uint32_t size_x,
                              uint32_t size_y, const int32_t *values)
{
    if (cc_energy_window_check(window, NULL) != CC_OK || values == NULL ||
        size_x < CC_CLUSTER_SIZE_MIN || size_y < CC_CLUSTER_SIZE_MIN)
        return 0;
    return cluster_in_window(window, size_x, size_y, values);
}
