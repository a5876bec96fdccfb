/* SPDX-License-Identifier: BSD-3-Clause */
/* tally.c: a frame's clusters into a spectrum and a hit map in one pass,
 * each cluster's energy worked out once for both (the plugin's output
 * threads do this for every frame). */
#include "analysis.h"

int cc_tally_frame(cc_spectrum *spectrum, cc_hitmap *hitmap,
                   const cc_frame_clusters *frame)
{
    if (frame == NULL || (spectrum == NULL && hitmap == NULL))
        return CC_EINVAL;
    const size_t n = frame->count;
    if (n > 0 &&
        (frame->values == NULL || frame->size_x < CC_CLUSTER_SIZE_MIN ||
         frame->size_y < CC_CLUSTER_SIZE_MIN))
        return CC_EINVAL;
    if (hitmap != NULL && n > 0 &&
        (frame->x == NULL || frame->y == NULL ||
         cc__hitmap_check(hitmap, frame->x, frame->y, n) != CC_OK))
        return CC_EINVAL;
    cc_energy window_energy = CC_ENERGY_SUM;
    const bool windowed = hitmap != NULL &&
                          cc__hitmap_window_energy(hitmap, &window_energy);
    const bool shared = spectrum != NULL && windowed &&
                        cc__spectrum_energy(spectrum) == window_energy;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    int64_t energies[CC__ENERGY_CHUNK], window_energies[CC__ENERGY_CHUNK];
    for (size_t at = 0; at < n; at += CC__ENERGY_CHUNK) {
        const size_t chunk = n - at < CC__ENERGY_CHUNK ? n - at
                                                       : CC__ENERGY_CHUNK;
        const int32_t *values = frame->values + at * cells;
        if (spectrum != NULL) {
            cc__cluster_energies(cc__spectrum_energy(spectrum), frame->size_x,
                                 frame->size_y, values, chunk, energies);
            cc__spectrum_count(spectrum, energies, chunk);
        }
        if (hitmap == NULL)
            continue;
        if (windowed && !shared)
            cc__cluster_energies(window_energy, frame->size_x, frame->size_y,
                                 values, chunk, window_energies);
        cc__hitmap_count(hitmap, frame->x + at, frame->y + at,
                         shared ? energies : window_energies, chunk);
    }
    return CC_OK;
}
