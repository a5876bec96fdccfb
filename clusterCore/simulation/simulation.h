/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simulation.h: MÖNCH-like frames and their ground truth
 * (clusterCore/simulation/): counter-based random numbers, the truth's
 * lists.
 */
#ifndef CLUSTERCORE_SIMULATION_H
#define CLUSTERCORE_SIMULATION_H

#include "../analysis/analysis.h"

/* ---- counter-based random numbers (random.c) ---- */

/* The key of one (seed, stream, frame); cc__random_bits(key, i) is then
 * the i-th 64-bit number of that frame's stream. */
uint64_t cc__random_key(uint64_t seed, uint32_t stream, uint64_t frame);
uint64_t cc__random_bits(uint64_t key, uint64_t index);
/* Uniform in (0, 1) from 64 random bits. */
double cc__random_uniform(uint64_t bits);
/* Two independent standard normals from 64 random bits. */
void cc__random_normal_pair(uint64_t bits, double *first, double *second);
/* A Poisson draw of the given mean from the numbers of key. */
uint64_t cc__random_poisson(uint64_t key, double mean);

/* ---- ground truth (truth.c) ---- */

struct cc__truth_entry {
    uint64_t number;
    size_t first; /* index of the frame's first photon */
    uint32_t count;
};

struct cc_truth {
    struct cc__truth_entry *frames;
    size_t n_frames, frames_capacity;
    cc_photon *photons;
    size_t n_photons, photons_capacity;
};

void cc__truth_clear(cc_truth *truth);
int cc__truth_begin_frame(cc_truth *truth, uint64_t number);
int cc__truth_push(cc_truth *truth, const cc_photon *photon);

#endif /* CLUSTERCORE_SIMULATION_H */
