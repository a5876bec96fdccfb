/* SPDX-License-Identifier: BSD-3-Clause */
/* agreement.c: see agreement.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agreement.h"

void agreement_init(struct agreement *agreement)
{
    *agreement = (struct agreement){0};
}

/* The centre of cluster i as one number that sorts by row, then column. */
static uint32_t centre_key(const cc_frame_clusters *frame, uint32_t i)
{
    return (uint32_t)frame->y[i] << 16 | frame->x[i];
}

static const cc_frame_clusters *sorted_frame;

static int by_centre(const void *a, const void *b)
{
    uint32_t ka = centre_key(sorted_frame, *(const uint32_t *)a);
    uint32_t kb = centre_key(sorted_frame, *(const uint32_t *)b);
    return (ka > kb) - (ka < kb);
}

/* The indices of frame's clusters in centre order, or NULL with message
 * set when there is no memory or two clusters share a centre. */
static uint32_t *centre_order(const cc_frame_clusters *frame, const char *side,
                              char *message, size_t size)
{
    uint32_t *order = malloc(((size_t)frame->count + 1) * sizeof *order);
    if (order == NULL) {
        snprintf(message, size, "no memory for a frame of %u clusters",
                 frame->count);
        return NULL;
    }
    for (uint32_t i = 0; i < frame->count; i++)
        order[i] = i;
    sorted_frame = frame;
    qsort(order, frame->count, sizeof *order, by_centre);
    for (uint32_t i = 1; i < frame->count; i++)
        if (centre_key(frame, order[i]) == centre_key(frame, order[i - 1])) {
            snprintf(message, size,
                     "%s has two clusters at column %u, row %u of frame %llu",
                     side, frame->x[order[i]], frame->y[order[i]],
                     (unsigned long long)frame->frame_number);
            free(order);
            return NULL;
        }
    return order;
}

/* Whether a cluster's values put it between the two finders' thresholds
 * of its centre: its largest value, or its sum over the square root of
 * its cells (the window test), within [low, high] of the thresholds,
 * widened by half an ADU of rounding and the pedestal allowance a cell. */
static int at_threshold(const int32_t *values, uint32_t cells, uint32_t x,
                        uint32_t y, const struct agreement_thresholds *t)
{
    if (t == NULL)
        return 0;
    size_t pixel = (size_t)y * t->cols + x;
    double low = fmin(t->ours[pixel], t->peer[pixel]);
    double high = fmax(t->ours[pixel], t->peer[pixel]);
    int64_t largest = 0, sum = 0;
    for (uint32_t i = 0; i < cells; i++) {
        largest = values[i] > largest ? values[i] : largest;
        sum += values[i];
    }
    double slack = 0.5 + t->pedestal_allowance;
    double root = sqrt((double)cells);
    double window = (double)sum / root;
    double window_slack = slack * (double)cells / root;
    return ((double)largest >= low - slack &&
            (double)largest <= high + slack) ||
           (window >= low - window_slack && window <= high + window_slack);
}

/* Whether a cluster's centre holds less than the largest of its values. */
static int centre_not_max(const int32_t *values, uint32_t nx, uint32_t ny)
{
    int32_t centre = values[(ny / 2) * nx + nx / 2];
    for (uint32_t i = 0; i < nx * ny; i++)
        if (values[i] > centre)
            return 1;
    return 0;
}

/* Checks what would make two frames incomparable; 0 or -1 with message. */
static int comparable(const cc_frame_clusters *ours,
                      const cc_frame_clusters *peer,
                      const struct agreement_thresholds *thresholds,
                      char *message, size_t size)
{
    if ((ours->count > 0 || peer->count > 0) &&
        (ours->size_x != peer->size_x || ours->size_y != peer->size_y)) {
        snprintf(message, size, "cluster sizes differ: %ux%u against %ux%u",
                 ours->size_x, ours->size_y, peer->size_x, peer->size_y);
        return -1;
    }
    const cc_frame_clusters *sides[2] = {ours, peer};
    for (int s = 0; s < 2 && thresholds != NULL; s++)
        for (uint32_t i = 0; i < sides[s]->count; i++)
            if (sides[s]->x[i] >= thresholds->cols ||
                sides[s]->y[i] >= thresholds->rows) {
                snprintf(message, size,
                         "a centre (column %u, row %u) lies outside the "
                         "%u x %u frame",
                         sides[s]->x[i], sides[s]->y[i], thresholds->cols,
                         thresholds->rows);
                return -1;
            }
    return 0;
}

int agreement_add_frame(struct agreement *agreement,
                        const cc_frame_clusters *ours,
                        const cc_frame_clusters *peer,
                        const struct agreement_thresholds *thresholds,
                        char *message, size_t size)
{
    if (comparable(ours, peer, thresholds, message, size) != 0)
        return -1;
    uint32_t *a = centre_order(ours, "ours", message, size);
    uint32_t *b = a == NULL ? NULL
                            : centre_order(peer, "the peer", message, size);
    if (b == NULL) {
        free(a);
        return -1;
    }
    struct agreement sum = *agreement;
    uint32_t cells = (ours->count > 0 ? ours->size_x * ours->size_y
                                      : peer->size_x * peer->size_y);
    uint32_t i = 0, j = 0;
    while (i < ours->count || j < peer->count) {
        uint32_t ka = i < ours->count ? centre_key(ours, a[i]) : UINT32_MAX;
        uint32_t kb = j < peer->count ? centre_key(peer, b[j]) : UINT32_MAX;
        if (ka == kb) {
            const int32_t *va = ours->values + (size_t)a[i] * cells;
            const int32_t *vb = peer->values + (size_t)b[j] * cells;
            int64_t largest = 0;
            for (uint32_t c = 0; c < cells; c++) {
                int64_t d = llabs((long long)va[c] - vb[c]);
                largest = d > largest ? d : largest;
            }
            sum.same_place++;
            sum.same_values += largest == 0;
            if (largest > sum.largest_difference)
                sum.largest_difference = largest;
            i++, j++;
        } else if (ka < kb) {
            const int32_t *v = ours->values + (size_t)a[i] * cells;
            sum.only_ours++;
            if (at_threshold(v, cells, ours->x[a[i]], ours->y[a[i]],
                             thresholds))
                sum.ours_at_threshold++;
            else
                sum.ours_unexplained++;
            i++;
        } else {
            const int32_t *v = peer->values + (size_t)b[j] * cells;
            sum.only_peer++;
            if (centre_not_max(v, peer->size_x, peer->size_y))
                sum.peer_not_max++;
            else if (at_threshold(v, cells, peer->x[b[j]], peer->y[b[j]],
                                  thresholds))
                sum.peer_at_threshold++;
            else
                sum.peer_unexplained++;
            j++;
        }
    }
    sum.frames++;
    sum.ours += ours->count;
    sum.peer += peer->count;
    *agreement = sum;
    free(a);
    free(b);
    return 0;
}
