/* SPDX-License-Identifier: BSD-3-Clause */
/* agreement.c: how two lists of clusters of the same frames agree
 * (cc_agreement_add_frame, cc_clusters_agreement). */
#include <math.h>
#include <stdlib.h>

#include "analysis.h"

/* A cluster's centre, row then column, above its index: sorting these
 * sorts by centre with no state outside the array (thread-safe, unlike a
 * comparison that reads the frame). */
static int by_key(const void *a, const void *b)
{
    uint64_t ka = *(const uint64_t *)a, kb = *(const uint64_t *)b;
    return (ka > kb) - (ka < kb);
}

static uint32_t centre_of(uint64_t key)
{
    return (uint32_t)(key >> 32);
}

static uint32_t index_of(uint64_t key)
{
    return (uint32_t)key;
}

/* The frame's clusters as keys in centre order, or NULL with message set
 * (*code: CC_ENOMEM, or CC_EINVAL when two share a centre). */
static uint64_t *centre_order(const cc_frame_clusters *frame, char name,
                              char *message, int *code)
{
    uint64_t *keys = malloc(((size_t)frame->count + 1) * sizeof *keys);
    if (keys == NULL) {
        *code = cc__message(message, CC_ENOMEM,
                            "no memory for a frame of %u clusters",
                            frame->count);
        return NULL;
    }
    for (uint32_t i = 0; i < frame->count; i++)
        keys[i] = (uint64_t)((uint32_t)frame->y[i] << 16 | frame->x[i]) << 32 |
                  i;
    qsort(keys, frame->count, sizeof *keys, by_key);
    for (uint32_t i = 1; i < frame->count; i++)
        if (centre_of(keys[i]) == centre_of(keys[i - 1])) {
            uint32_t at = index_of(keys[i]);
            *code = cc__message(message, CC_EINVAL,
                                "list %c has two clusters at column %u, row "
                                "%u of frame %llu",
                                name, frame->x[at], frame->y[at],
                                (unsigned long long)frame->frame_number);
            free(keys);
            return NULL;
        }
    return keys;
}

/* Whether a cluster's values put it between the two thresholds of its
 * centre: its largest value, or its sum over the square root of its cells,
 * within [low, high] widened by the rounding and the pedestal allowance
 * (a cell's, or all the cells' for the sum). */
static bool at_threshold(const int32_t *values, uint32_t cells, uint32_t x,
                         uint32_t y, const cc_agreement_thresholds *t)
{
    if (t == NULL)
        return false;
    size_t pixel = (size_t)y * t->cols + x;
    double low = fmin(t->threshold[0][pixel], t->threshold[1][pixel]);
    double high = fmax(t->threshold[0][pixel], t->threshold[1][pixel]);
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
static bool centre_not_max(const int32_t *values, uint32_t nx, uint32_t ny)
{
    int32_t centre = values[(ny / 2) * nx + nx / 2];
    for (uint32_t i = 0; i < nx * ny; i++)
        if (values[i] > centre)
            return true;
    return false;
}

/* CC_OK, or CC_EINVAL with message when the frames cannot be compared. */
static int comparable(const cc_frame_clusters *a, const cc_frame_clusters *b,
                      const cc_agreement_thresholds *thresholds, char *message)
{
    if ((a->count > 0 || b->count > 0) &&
        (a->size_x != b->size_x || a->size_y != b->size_y))
        return cc__message(message, CC_EINVAL,
                           "cluster sizes differ: %ux%u against %ux%u",
                           a->size_x, a->size_y, b->size_x, b->size_y);
    const cc_frame_clusters *sides[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        if (sides[s]->count > 0 &&
            (sides[s]->x == NULL || sides[s]->y == NULL ||
             sides[s]->values == NULL))
            return cc__message(message, CC_EINVAL,
                               "list %c's frame has clusters but no arrays",
                               'a' + s);
        for (uint32_t i = 0; thresholds != NULL && i < sides[s]->count; i++)
            if (sides[s]->x[i] >= thresholds->cols ||
                sides[s]->y[i] >= thresholds->rows)
                return cc__message(message, CC_EINVAL,
                                   "a centre (column %u, row %u) lies "
                                   "outside the %u x %u frame",
                                   sides[s]->x[i], sides[s]->y[i],
                                   thresholds->cols, thresholds->rows);
    }
    return CC_OK;
}

/* Counts a cluster that only side holds under its cause. */
static void count_one_sided(cc_agreement *sum, int side,
                            const cc_frame_clusters *frame, uint32_t index,
                            const cc_agreement_thresholds *thresholds)
{
    uint32_t cells = frame->size_x * frame->size_y;
    const int32_t *values = frame->values + (size_t)index * cells;
    sum->only[side]++;
    if (centre_not_max(values, frame->size_x, frame->size_y))
        sum->not_max[side]++;
    else if (at_threshold(values, cells, frame->x[index], frame->y[index],
                          thresholds))
        sum->at_threshold[side]++;
}

int cc_agreement_add_frame(cc_agreement *agreement, const cc_frame_clusters *a,
                           const cc_frame_clusters *b,
                           const cc_agreement_thresholds *thresholds,
                           char *message)
{
    if (agreement == NULL || a == NULL || b == NULL)
        return cc__message(message, CC_EINVAL, "no agreement or frame");
    if (thresholds != NULL &&
        (thresholds->threshold[0] == NULL || thresholds->threshold[1] == NULL))
        return cc__message(message, CC_EINVAL, "a threshold map is missing");
    int code = comparable(a, b, thresholds, message);
    if (code != CC_OK)
        return code;
    uint64_t *ka = centre_order(a, 'a', message, &code);
    uint64_t *kb = ka == NULL ? NULL : centre_order(b, 'b', message, &code);
    if (kb == NULL) {
        free(ka);
        return code;
    }
    cc_agreement sum = *agreement;
    uint32_t cells = a->count > 0 ? a->size_x * a->size_y
                                  : b->size_x * b->size_y;
    uint32_t i = 0, j = 0;
    while (i < a->count || j < b->count) {
        uint64_t ca = i < a->count ? centre_of(ka[i]) : UINT64_MAX;
        uint64_t cb = j < b->count ? centre_of(kb[j]) : UINT64_MAX;
        if (ca == cb) {
            const int32_t *va = a->values + (size_t)index_of(ka[i]) * cells;
            const int32_t *vb = b->values + (size_t)index_of(kb[j]) * cells;
            int64_t largest = 0;
            for (uint32_t c = 0; c < cells; c++) {
                int64_t d = llabs((long long)va[c] - vb[c]);
                if (d > largest)
                    largest = d;
            }
            sum.same_place++;
            sum.same_values += largest == 0;
            if (largest > sum.largest_difference)
                sum.largest_difference = largest;
            i++, j++;
        } else if (ca < cb) {
            count_one_sided(&sum, 0, a, index_of(ka[i++]), thresholds);
        } else {
            count_one_sided(&sum, 1, b, index_of(kb[j++]), thresholds);
        }
    }
    sum.frames++;
    sum.clusters[0] += a->count;
    sum.clusters[1] += b->count;
    *agreement = sum;
    free(ka);
    free(kb);
    return CC_OK;
}

int cc_clusters_agreement(cc_agreement *agreement, const cc_clusters *a,
                          const cc_clusters *b,
                          const cc_agreement_thresholds *thresholds,
                          char *message)
{
    if (agreement == NULL || a == NULL || b == NULL)
        return cc__message(message, CC_EINVAL, "no agreement or list");
    size_t frames = cc_clusters_frame_count(a);
    if (cc_clusters_frame_count(b) != frames)
        return cc__message(message, CC_EINVAL,
                           "list a holds %zu frames, list b %zu", frames,
                           cc_clusters_frame_count(b));
    cc_agreement sum = *agreement;
    for (size_t k = 0; k < frames; k++) {
        cc_frame_clusters fa, fb;
        cc_clusters_frame(a, k, &fa);
        cc_clusters_frame(b, k, &fb);
        int code = cc_agreement_add_frame(&sum, &fa, &fb, thresholds, message);
        if (code != CC_OK)
            return code;
    }
    *agreement = sum;
    return CC_OK;
}
