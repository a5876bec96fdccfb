/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * agreement.h: how the clusters of a peer finder (aare's) agree with
 * ours on the same frames, cluster by cluster: centres in both, their
 * values, and the clusters only one side found, each sorted into the
 * first cause that fits it. A peer gives a frame's clusters in any order
 * (aare's GPU finder in the order its threads won an atomic counter):
 * they are matched by centre.
 */
#ifndef PEERS_AGREEMENT_H
#define PEERS_AGREEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "clustercore.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each finder's per-pixel threshold, nsigma * rms, rows * cols floats in
 * rows: what the one-sided clusters are weighed against; and how far,
 * in ADU a cell, the two finders' pedestals may stand apart (each
 * follows its own moving average). */
struct agreement_thresholds {
    uint32_t rows, cols;
    const float *ours;
    const float *peer;
    double pedestal_allowance;
};

struct agreement {
    uint64_t frames;
    uint64_t ours, peer;        /* clusters of each side */
    uint64_t same_place;        /* centres both found */
    uint64_t same_values;       /* of those, every value equal */
    int64_t largest_difference; /* of one value, over same_place */
    uint64_t only_ours, only_peer;
    /* The one-sided clusters by cause, the first that fits:
     * - not_max: the peer's centre is not the largest value of its own
     *   window (a rule of ours, docs/spec.md §3.3, that the peer lacks);
     * - at_threshold: the window's largest value, or its sum over the
     *   square root of its cells, lies between the two finders'
     *   thresholds of the centre, widened by the rounding of the values
     *   and 1 ADU of pedestal: the two noise estimates decided apart;
     * - unexplained: the rest. */
    uint64_t peer_not_max;
    uint64_t ours_at_threshold, peer_at_threshold;
    uint64_t ours_unexplained, peer_unexplained;
};

void agreement_init(struct agreement *agreement);

/* Adds one frame, whose clusters are ours (a finder's, in its order) and
 * peer (any order), of one cluster size; thresholds may be NULL (then no
 * one-sided cluster is at a threshold). Returns 0, or -1 with a sentence
 * in message (size bytes) when the two cannot be compared (sizes differ,
 * a centre outside the thresholds' frame, two clusters at one centre, no
 * memory); agreement is then unchanged. */
int agreement_add_frame(struct agreement *agreement,
                        const cc_frame_clusters *ours,
                        const cc_frame_clusters *peer,
                        const struct agreement_thresholds *thresholds,
                        char *message, size_t size);

#ifdef __cplusplus
}
#endif

#endif
