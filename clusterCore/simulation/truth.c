/* SPDX-License-Identifier: BSD-3-Clause */
/* truth.c: the simulator's ground truth, the photons of each frame. */
#include <stdlib.h>

#include "simulation.h"

int cc_truth_new(cc_truth **truth)
{
    if (truth == NULL)
        return CC_EINVAL;
    *truth = calloc(1, sizeof **truth);
    return *truth == NULL ? CC_ENOMEM : CC_OK;
}

void cc_truth_destroy(cc_truth *truth)
{
    if (truth == NULL)
        return;
    free(truth->frames);
    free(truth->photons);
    free(truth);
}

size_t cc_truth_frame_count(const cc_truth *truth)
{
    return truth == NULL ? 0 : truth->n_frames;
}

int cc_truth_frame(const cc_truth *truth, size_t index, cc_frame_truth *frame)
{
    if (truth == NULL || frame == NULL || index >= truth->n_frames)
        return CC_EINVAL;
    const struct cc__truth_entry *entry = &truth->frames[index];
    *frame = (cc_frame_truth){
        .frame_number = entry->number,
        .count = entry->count,
        .photons = truth->photons + entry->first,
    };
    return CC_OK;
}

void cc__truth_clear(cc_truth *truth)
{
    truth->n_frames = 0;
    truth->n_photons = 0;
}

int cc__truth_begin_frame(cc_truth *truth, uint64_t number)
{
    struct cc__truth_entry *frames = cc__grow(truth->frames,
                                              &truth->frames_capacity,
                                              truth->n_frames + 1,
                                              sizeof *frames);
    if (frames == NULL)
        return CC_ENOMEM;
    truth->frames = frames;
    frames[truth->n_frames++] =
        (struct cc__truth_entry){.number = number, .first = truth->n_photons};
    return CC_OK;
}

int cc__truth_push(cc_truth *truth, const cc_photon *photon)
{
    cc_photon *photons = cc__grow(truth->photons, &truth->photons_capacity,
                                  truth->n_photons + 1, sizeof *photons);
    if (photons == NULL)
        return CC_ENOMEM;
    truth->photons = photons;
    photons[truth->n_photons++] = *photon;
    truth->frames[truth->n_frames - 1].count++;
    return CC_OK;
}
